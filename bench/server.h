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
};

struct server;

/* Opens the transport and the backends and starts the workers. */
struct server *server_start(const struct server_conf *c, char *err, size_t errlen);
const char *server_endpoint(struct server *s);
/* One pass of worker wi's loop in the caller's thread (manual servers
 * only): poll, execute in slot order, reply, flush.  1 if it did work. */
int server_step(struct server *s, unsigned wi);
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
