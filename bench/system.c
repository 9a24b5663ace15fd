/*
 * system.c - the table of systems (see system.h).  Adding a system is one
 * row here; the server and client read the row, not the name.
 */
#include <string.h>
#include "system.h"
#include "wire.h"

static const struct system_def systems[] = {
	{ "oq",       COMMIT_DELIVERY, "Ordered Queue: nilext commits on the transport ACK" },
	{ "rawrpc",   COMMIT_RESPONSE, "RPC: every request commits on its response after execution" },
	{ "deferred", COMMIT_ACK,      "DeferredExec: nilext commits on a software ACK sent at dequeue" },
	/* eRPC (Kalia et al., NSDI'19) as the paper's outside baseline: an RPC
	 * library, so every request commits on its response, as in rawrpc;
	 * it runs over transport erpc only (docs/erpc.md). */
	{ "erpc",     COMMIT_RESPONSE, "eRPC: every request commits on its eRPC response after execution" },
};

const char *const system_name_list[] = { "oq", "rawrpc", "deferred", "erpc", NULL };

const struct system_def *system_find(const char *name)
{
	for (size_t i = 0; i < sizeof systems / sizeof systems[0]; i++)
		if (strcmp(systems[i].name, name) == 0)
			return &systems[i];
	return NULL;
}

const char *system_names(void)
{
	return "oq, rawrpc, deferred, erpc";
}

enum commit_on system_commit_rule(const struct system_def *s, unsigned wire_flags)
{
	/* Non-idempotent requests are software-controlled even if nilext
	 * (§5.3): execute, persist ReqToExecute, then respond. */
	if ((wire_flags & KV_F_NILEXT) && !(wire_flags & KV_F_NONIDEMP))
		return s->nilext_commit;
	return COMMIT_RESPONSE;
}
