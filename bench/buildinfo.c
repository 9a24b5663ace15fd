/*
 * buildinfo.c - what this build has (buildinfo.h), from the transport table.
 */
#include "buildinfo.h"
#include "transport.h"

int buildinfo_has_transport(const char *name)
{
	return transport_find(name) != NULL;
}

json_t *buildinfo_transport(const char *name)
{
	const struct transport_ops *t = transport_find(name);
	json_t *b = t && t->build ? t->build() : NULL;
	return b ? b : json_null();
}
