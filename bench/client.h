/*
 * client.h - the load generator: client threads that send requests on an
 * open-loop Poisson schedule (or closed loop), and measure each request's
 * latency from its intended send time to its commit, as the system's commit
 * rule defines the commit (system.h).
 */
#ifndef OQB_CLIENT_H
#define OQB_CLIENT_H

#include <stdint.h>
#include <jansson.h>
#include "idle.h"
#include "gen.h"
#include "system.h"
#include "transport.h"
#include "arrival.h"
#include "history_rec.h"
#include "cpus.h"

struct client_conf {
	const struct system_def *sys;
	const struct transport_ops *tp;
	const char *endpoint;
	unsigned threads;
	const json_t *workload;      /* the config's workload object */
	const struct gen_ops *gen;
	const char *config_dir;
	enum arrival_kind arrival;
	double rate;                 /* poisson: offered ops/s of this process */
	unsigned outstanding;        /* closed loop: per thread */
	unsigned max_outstanding;    /* per thread, power of two */
	uint64_t warmup_ns, duration_ns, drain_ns;
	uint64_t seed;
	unsigned rank, nprocesses;
	int durable;
	int delegation;              /* verbs: threads share QPs */
	unsigned connect_timeout_ms; /* verbs: 0 = transport default */
	struct idle_conf idle;       /* what an idle thread does (lib/idle.h); zero: spin */
	struct hrec_conf history;    /* record histories; history.dir NULL: off */
	const struct cpu_plan *cpus; /* thread i runs on cpus->cpu[i]; NULL or n = 0: unpinned */
	uint64_t probe_ns;           /* a probe per thread CPU wakes this often (lib/probe.h); 0: none */
	int manual;                  /* no threads and no load phase: the caller drives
					thread 0 with client_step_issue/poll (oqb-icount) */
};

struct client;

/* The partition of a key: FNV-1a(key) % workers (paper §5.1), the same for
 * every client and tool, so a key always lands on the same worker. */
unsigned client_route(const char *key, unsigned len, unsigned workers);

/* Connects every thread, opens generators, runs the load phase; returns
 * when all threads are ready to start.  NULL + err on failure. */
struct client *client_prepare(const struct client_conf *c, char *err, size_t errlen);

/* Runs the measured period starting start_in_ns from now; blocks until all
 * threads have finished and drained.  0, or -1 with err (a thread failed). */
int client_run(struct client *cl, uint64_t start_in_ns, char *err, size_t errlen);

/* The result object ("oqbench.client/1"). */
json_t *client_result(struct client *cl);

void client_destroy(struct client *cl);

/* Manual clients only (oqb-icount): thread 0's send path for one request
 * due at t_int (generate, encode, post; 1 sent, 0 busy or the pending
 * table is full, -1 failed) and its receive path (poll, match, record;
 * the number of events handled).  Every commit is recorded. */
int client_step_issue(struct client *cl, uint64_t t_int);
int client_step_poll(struct client *cl);

#endif
