/*
 * procargs.h - the command lines the driver starts processes with.
 *
 * Placement (docs/trust.md): the server's workers take the first CPUs of
 * its host; clients take them from the last one down, client process
 * `rank` after the threads of the lower ranks on its host, and a client
 * on the server's host is told how many the server took (--cpu-reserved)
 * so that it can say when they meet.  Trial t of a point runs with seed + 1000003 t.
 */
#ifndef OQB_PROCARGS_H
#define OQB_PROCARGS_H

#include "runconf.h"

/* argv of the server of point pt (free with launch_argv_free), or NULL when
 * out of memory.  bin: the directory of the binaries on the hosts. */
char **procargs_server(const char *bin, const struct runconf *rc, const struct point *pt, const char *ctl_hp,
		       const char *pmem);

/* argv of client process `rank`; out: its --out file, or NULL. */
char **procargs_client(const char *bin, const struct runconf *rc, const struct point *pt, const char *ctl_hp,
		       const char *endpoint, unsigned rank, const char *out);

/* argv of the verbs canary (oqb-vfloor): the echoer on the server's
 * verbs.addr when ping_endpoint is NULL, else the pinger of that
 * endpoint; cpu: where its polling thread goes (-1: unpinned). */
char **procargs_vfloor(const char *bin, const struct runconf *rc, const char *ctl_hp, const char *ping_endpoint,
		       int cpu);

#endif
