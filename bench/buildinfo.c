/*
 * buildinfo.c - what this build has (buildinfo.h), from the transport table.
 */
#include "buildinfo.h"
#include "transport.h"

int buildinfo_has_transport(const char *name)
{
	return transport_find(name) != NULL;
}

json_t *buildinfo_erpc(void)
{
#if OQB_HAVE_ERPC
	return tp_erpc_build_json();
#else
	return json_null();
#endif
}
