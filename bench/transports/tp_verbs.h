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

#include <jansson.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
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

/* The RDMA devices as JSON, for `oqb-server --host-facts` (oqb doctor):
 * [{name, numa_node, ports: [{port, state, active_mtu, link_layer,
 * gids: [{index, gid, type, netdev}]}]}].  New reference. */
json_t *tp_verbs_devices_json(void);

/*
 * The verbs canary (verbs/vb_canary.c, run by oqb-vfloor): a raw RC SEND
 * ping-pong between two hosts' RDMA devices, nothing of a system in its
 * path; `oqb run` measures it beside every trial on transport verbs.
 */
struct hist;
struct vb_canary_conf {
	unsigned size;          /* bytes per message, 1..4096 */
	long rounds, warmup;    /* rounds recorded, after warmup unrecorded ones */
	double max_ms;          /* stop recording this long after connecting (0: no bound) */
	double connect_s;       /* give up connecting after this long */
};
struct vb_canary_info {
	char device[64];        /* the local device the connection used */
	int inline_send;        /* the SENDs went inline */
	long rounds;            /* rounds recorded */
	uint64_t took_ns;       /* from the first round to the last */
};
struct vb_canary_stats {
	unsigned long long echoed, pingers, refused, dropped;
	char last_error[256];   /* why the last pinger was refused or dropped */
};
struct vb_canary_srv;

/* Connects to the echoer at endpoint ("verbs:ADDR:PORT") and records each
 * round's round-trip time (ns) into h.  0, or -1 with err set. */
int vb_canary_ping(const char *endpoint, const struct vb_canary_conf *c, struct hist *h, struct vb_canary_info *info,
		   char *err, size_t errlen);
/* Listens on addr:port (port 0: any free one); endpoint gets the
 * "verbs:ADDR:PORT" pingers connect to.  NULL with err set. */
struct vb_canary_srv *vb_canary_listen(const char *addr, unsigned port, char *endpoint, size_t eplen, char *err,
				       size_t errlen);
/* Echoes for one pinger at a time until *stop is set or max_s pass (0:
 * no bound).  0, or -1 with err set when the CM channel broke. */
int vb_canary_serve(struct vb_canary_srv *s, volatile int *stop, double max_s, struct vb_canary_stats *st, char *err,
		    size_t errlen);
void vb_canary_close(struct vb_canary_srv *s);

#endif
