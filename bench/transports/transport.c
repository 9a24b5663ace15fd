/*
 * transport.c - the transport table.  Registered explicitly here (Redis's
 * connTypeInitialize), so `grep` finds every transport in one place.
 */
#include <string.h>
#include "transport.h"

extern const struct transport_ops tp_shm_ops;
#if OQB_HAVE_VERBS_TRANSPORT
extern const struct transport_ops tp_verbs_ops;
#endif
#if OQB_HAVE_ERPC
extern const struct transport_ops tp_erpc_ops;   /* make ERPC_DIR=... (docs/erpc.md) */
#endif

static const struct transport_ops *const transports[] = {
	&tp_shm_ops,
#if OQB_HAVE_VERBS_TRANSPORT
	&tp_verbs_ops,
#endif
#if OQB_HAVE_ERPC
	&tp_erpc_ops,
#endif
};

const char *const transport_name_list[] = { "shm", "verbs", "erpc", NULL };

const struct transport_ops *transport_find(const char *name)
{
	for (size_t i = 0; i < sizeof transports / sizeof transports[0]; i++)
		if (strcmp(transports[i]->name, name) == 0)
			return transports[i];
	return NULL;
}

const char *transport_names(void)
{
#if OQB_HAVE_VERBS_TRANSPORT && OQB_HAVE_ERPC
	return "shm, verbs, erpc";
#elif OQB_HAVE_VERBS_TRANSPORT
	return "shm, verbs";
#else
	return "shm";
#endif
}

const char *transport_hint(const char *name)
{
	if (strcmp(name, "verbs") == 0)
		return "; install libibverbs-dev and librdmacm-dev and rebuild";
	if (strcmp(name, "erpc") == 0)
		return "; eRPC is built separately: rebuild with make ERPC_DIR=/path/to/erpc (docs/erpc.md)";
	return "";
}
