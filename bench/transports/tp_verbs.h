/*
 * tp_verbs.h - the verbs transport (RDMA RC over rdma-core), and the device
 * listing behind `oqb-server --list-devices`.
 *
 * Built only where libibverbs and librdmacm headers exist (the Makefile
 * builds bench/transports/verbs/ and defines OQB_HAVE_VERBS_TRANSPORT
 * then).  See verbs/README.md for the protocol and which file holds what,
 * and docs/verbs.md for how to run it.
 */
#ifndef OQB_TP_VERBS_H
#define OQB_TP_VERBS_H

#include <stdio.h>
#include <stddef.h>
#include "transport.h"

extern const struct transport_ops tp_verbs_ops;

/*
 * Prints every RDMA device on this host to out: name, node GUID, ports
 * (state, active MTU, link layer), GIDs with their type and index, and the
 * capabilities the verbs transport depends on (max_srq, max_srq_wr, XRC,
 * max_qp, max_qp_wr, and the largest inline size a QP accepts).  Returns
 * the number of devices listed (0 prints a hint on how to get one), or -1
 * with err set when the verbs library cannot list devices at all.
 */
int tp_verbs_list_devices(FILE *out, char *err, size_t errlen);

#endif
