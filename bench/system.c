/*
 * system.c - the table of systems (see system.h).  Adding a system is one
 * row here; the server and client read the row, not the name.
 */
#include <stdio.h>
#include <string.h>
#include "system.h"
#include "wire.h"

static const struct system_def systems[] = {
	{ "oq",       COMMIT_DELIVERY, "Ordered Queue: nilext commits on the transport ACK", NULL, NULL },
	{ "rawrpc",   COMMIT_RESPONSE, "RPC: every request commits on its response after execution", NULL, NULL },
	{ "deferred", COMMIT_ACK,      "DeferredExec: nilext commits on a software ACK sent at dequeue", NULL, NULL },
	/* eRPC (Kalia et al., NSDI'19) as the paper's outside baseline: an RPC
	 * library, so every request commits on its response, as in rawrpc;
	 * it runs over transport erpc only (docs/erpc.md). */
	{ "erpc",     COMMIT_RESPONSE, "eRPC: every request commits on its eRPC response after execution", NULL, NULL },
	/* The one-sided design the paper's §2.2/§3 argue against: each client
	 * thread RDMA-WRITEs into a ring of its own on the server and a nilext
	 * request commits on the WRITE's completion (one round trip); the
	 * worker polls the rings, so nothing orders clients
	 * (bench/transports/verbs/vb_write1.c). */
	{ "write1",   COMMIT_DELIVERY, "per-client RDMA WRITE rings: nilext commits on the WRITE's completion",
	  "verbs", SYSTEM_NOT_LINEARIZABLE },
	/* The same WRITE behind a sequencer: an RDMA fetch-and-add on the
	 * worker's log tail (the server NIC orders clients), then the WRITE
	 * and a fetch-and-add on the slot's state word: two round trips, run
	 * in slot order (bench/transports/verbs/vb_seqwrite.c). */
	{ "seqwrite", COMMIT_DELIVERY, "RDMA fetch-and-add on the log tail, then WRITE: nilext commits on the "
	  "state word's fetch-and-add after the WRITE", "verbs", NULL },
};

const char *const system_name_list[] = { "oq", "rawrpc", "deferred", "erpc", "write1", "seqwrite", NULL };

const struct system_def *system_find(const char *name)
{
	for (size_t i = 0; i < sizeof systems / sizeof systems[0]; i++)
		if (strcmp(systems[i].name, name) == 0)
			return &systems[i];
	return NULL;
}

const char *system_names(void)
{
	return "oq, rawrpc, deferred, erpc, write1, seqwrite";
}

int system_check_transport(const struct system_def *s, const char *tp, char *err, size_t errlen)
{
	if (!s->transport || !tp || strcmp(s->transport, tp) == 0)
		return 0;
	snprintf(err, errlen, "system %s runs only over transport %s: its requests are RDMA WRITEs into server "
		 "memory, a one-sided path transport %s does not have (on shm, oq's own transport already claims "
		 "a slot with fetch-and-add and publishes it, which is the one-sided design without its round "
		 "trips); use transport %s", s->name, s->transport, tp, s->transport);
	return -1;
}

enum commit_on system_commit_rule(const struct system_def *s, unsigned wire_flags)
{
	/* Non-idempotent requests are software-controlled even if nilext
	 * (§5.3): execute, persist ReqToExecute, then respond. */
	if ((wire_flags & KV_F_NILEXT) && !(wire_flags & KV_F_NONIDEMP))
		return s->nilext_commit;
	return COMMIT_RESPONSE;
}
