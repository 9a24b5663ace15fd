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

/* Describes the worker rings in a shm server's directory (counters and
 * slot states around the frontier) into out, for a check that found the
 * server not executing.  Read-only; works on a live or a dead server's
 * files.  0, or -1 if out was too small (the text is cut). */
int shm_describe_rings(const char *dir, char *out, size_t cap);

#endif
