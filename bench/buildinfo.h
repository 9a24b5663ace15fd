/*
 * buildinfo.h - what this build of oqbench has, for the driver.
 *
 * The driver (harness/) never includes a transport header: it learns what
 * the binaries it starts can do from here, and talks to them only through
 * the control channel.  Everything here is read from the transport table
 * (transport.c), so no transport is named in this module.
 */
#ifndef OQB_BUILDINFO_H
#define OQB_BUILDINFO_H

#include <jansson.h>

/* Whether transport `name` ("shm", "verbs", "erpc") is built in. */
int buildinfo_has_transport(const char *name);

/* Transport `name`'s build description from the transport table (for
 * erpc: the eRPC build it links; for verbs: its receive modes, MP SRQ and
 * XRC), or null JSON when it is not built or has none.  New reference. */
json_t *buildinfo_transport(const char *name);

#endif
