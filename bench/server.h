/*
 * server.h - the server: one worker thread per receive ring, each with its
 * own in-order executor and backend instance (an exclusive key partition,
 * paper §5.1 "Scaling to multiple CPU cores").
 */
#ifndef OQB_SERVER_H
#define OQB_SERVER_H

#include <jansson.h>
#include "idle.h"
#include "backend.h"
#include "cpus.h"
#include "system.h"
#include "transport.h"

struct server_conf {
	const struct system_def *sys;
	const struct transport_ops *tp;
	const struct backend_ops *be;
	struct tp_srv_conf tpc;
	struct backend_conf bc;
	const struct cpu_plan *cpus;   /* worker i runs on cpus->cpu[i]; NULL or n = 0: unpinned */
	struct idle_conf idle;         /* what an idle worker does (lib/idle.h); zero: spin */
	int manual;                    /* no worker threads: the caller runs server_step
					  (the single-threaded instruction-count driver) */
	unsigned service_sample;       /* time the backend call of one request in this many
					  on average (1: every one; 0: none); see below */
	uint64_t probe_ns;             /* a probe per worker CPU wakes this often (lib/probe.h); 0: none */
	int window_from_go;            /* record no service time until server_window
					  (a driver's server: not the clients' load phase) */
};

/*
 * Service time: how long the backend takes per request, in the server.
 * A worker reads the clock just before it hands a request to the backend
 * (backend_ops.exec) and just after the call returns, and records the
 * difference in its histogram of the request's class (nilext or not).
 * Included: the backend's own work for the request and anything it waits
 * for inside the call (memcached: encoding, the socket writes, room in
 * its pipeline, and for a request whose result is sent back, the round
 * trip to memcached and its execution there; a quiet set or delete that
 * nobody waits for (backend_req.async) returns once it is written, so
 * memcached's execution of it is not in its time).  Not included: the
 * time the request waited in the ring for its turn, the request check,
 * the ACK and the response, durable bookkeeping and test-only faults
 * (fault.h's server-delay-ns is spent before the clock starts).
 * The clock costs about as much as a small request (bin/oqb-microbench),
 * so by default one request in SERVER_SERVICE_SAMPLE is timed, chosen at
 * random gaps (uniform on 1 .. 2N-1, so no pattern of the workload lines
 * up with them); the others cost a decrement and a branch.  Only requests
 * whose clock started inside the measured window (server_window) count:
 * under the driver, the clients' load phase before GO and their warm-up
 * and drain are left out.
 */
#define SERVER_SERVICE_SAMPLE 16
#define SERVER_SERVICE_SAMPLE_STR "16"   /* the same, for option tables */

struct server;

/* Opens the transport and the backends and starts the workers. */
struct server *server_start(const struct server_conf *c, char *err, size_t errlen);
const char *server_endpoint(struct server *s);
/* One pass of worker wi's loop in the caller's thread (manual servers
 * only): poll, execute in slot order, reply, flush.  1 if it did work. */
int server_step(struct server *s, unsigned wi);
/* The measured window in clock_ns() time, [from, to): service times of
 * requests started outside it are not recorded.  Until it is set every
 * request counts (a server run by hand), or none (window_from_go).  Set
 * it before the requests it concerns arrive; any thread. */
void server_window(struct server *s, uint64_t from, uint64_t to);
/* Asks the workers to finish and joins them. */
void server_stop(struct server *s);
/* 0 while every backend instance can serve; -1 once one cannot (its
 * store died), with why in msg[cap].  Call from the main thread every
 * few hundred ms: that is how the death of an external store (memcached)
 * fails the point instead of leaving it to time out. */
int server_fatal(struct server *s, char *msg, size_t cap);
/* Counters (call after server_stop for final numbers). */
json_t *server_stats(struct server *s);
/* Stops if needed, closes the transport (removing shm files), frees. */
void server_destroy(struct server *s);

#endif
