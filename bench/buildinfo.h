/*
 * buildinfo.h - what this build of oqbench has, for the driver.
 *
 * The driver (harness/) never includes a transport header: it learns what
 * the binaries it starts can do from here, and talks to them only through
 * the control channel.
 */
#ifndef OQB_BUILDINFO_H
#define OQB_BUILDINFO_H

#include <jansson.h>

/* Whether transport `name` ("shm", "verbs", "erpc") is built in. */
int buildinfo_has_transport(const char *name);

/* The eRPC build the erpc transport links (commit, transport, MTU,
 * flags), or null JSON without it. */
json_t *buildinfo_erpc(void);

#endif
