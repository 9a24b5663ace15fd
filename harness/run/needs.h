/*
 * needs.h - what a run's processes need from each host's limits, from the
 * config: open files, locked (registered) memory and QPs per process, by
 * lib/proclimits.h's formulas.  `oqb run --dry-run` prints it per host;
 * `oqb doctor` checks it against each host's limits; procargs.c passes the
 * server the connections it will get.
 */
#ifndef OQB_NEEDS_H
#define OQB_NEEDS_H

#include <stdio.h>

#include "proclimits.h"
#include "runconf.h"

/* The QPs the run's clients open to its server (the largest over the
 * sweep's variants): processes x threads x workers, or processes x
 * workers with delegation. */
unsigned long long needs_server_conns(const struct runconf *rc);

/* What one host needs: its processes, and the most any one of them needs
 * (the limits are per process), the largest over systems and variants. */
struct host_need {
	const char *host;
	unsigned servers, clients;      /* processes started there */
	struct lim_need server, client; /* per process; zero without one */
	long long qps;                  /* QPs of all its processes */
	int delegation;
};

/* The hosts of the run (server first, then each distinct client host),
 * at most cap of them; returns how many. */
size_t needs_hosts(const struct runconf *rc, struct host_need *out, size_t cap);

/* One line per host: "needs on HOST: ...". */
void needs_print(FILE *f, const struct runconf *rc);

#endif
