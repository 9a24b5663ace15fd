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

/*
 * This build's id: 16 hex digits, a hash of every source, header and
 * compiler flag (the Makefile's BUILD_ID), the same in every binary of one
 * build.  Stored after the marker "oqb-build-id:" so that a copy of a
 * binary shows which build it is (`oqb-server --build-id`).
 */
const char *buildinfo_id(void);

#endif
