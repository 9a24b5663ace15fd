/*
 * tp_shm.h - the two halves of a shm send, exposed for tests that need to
 * publish out of order or die between claim and publish.  Normal code uses
 * tp_shm_ops.cli_post, which is claim + publish.
 */
#ifndef OQB_TP_SHM_H
#define OQB_TP_SHM_H

#include <stdint.h>
#include <stddef.h>
#include "transport.h"

extern const struct transport_ops tp_shm_ops;

int shm_cli_claim(struct tp_client *c, unsigned wi, uint32_t len, uint64_t *ticket, char *err,
		  size_t errlen);
int shm_cli_publish(struct tp_client *c, unsigned wi, uint64_t t, const void *req, uint32_t len);

#endif
