/*
 * session.h - one synchronous key-value session over any transport: the
 * public client interface for tools that are not load generators (the
 * crash tester, correctness checks, scripts).
 *
 * A session is one client of one server, used from one thread.  Each call
 * sends one request and waits for its commit as the system defines it
 * (system.h): an oq nilext put returns once the transport's delivery ACK is
 * seen, a rawrpc put once the response is, a get always once the response
 * is.  It routes a key to its worker with client_route, like the load
 * generator, so it sees the same partitions.
 *
 * The transport stays private to bench/: callers name it ("shm", "verbs")
 * and never see its ops table or events.
 *
 * Return values of the request calls:
 *    0  committed (put, del) or answered (get): *status holds the status
 *    1  not sent: the receive queue stayed full until the deadline; nothing
 *       took a place in the queue, so the request is not pending
 *   -1  failed, with err set: the request may or may not have taken effect
 *       (connection lost, no commit by the deadline).  The session is
 *       broken; close it and open a new one.
 */
#ifndef OQB_SESSION_H
#define OQB_SESSION_H

#include <stdint.h>
#include <stddef.h>

struct kv_session_conf {
	const char *transport;       /* "shm" (default when NULL), "verbs" */
	const char *endpoint;        /* what the server printed after "ready: endpoint" */
	const char *system;          /* "oq", "rawrpc", "deferred" */
	int durable;                 /* a durable server; oq puts carry WIRE_F_DURABLE */
	unsigned connect_timeout_ms; /* verbs: 0 = the transport's default */
	/* verbs: client-side delegation (§5.2.2): the sessions of a process
	 * share one QP per server worker, each session a lane of it.  Every
	 * delegated session of a process must name the same server, each
	 * with its own `thread` (0 .. 1023, unique among the open ones). */
	int delegation;
	unsigned thread;
};

struct kv_session;

/* Connects; NULL with err set (unknown transport or system, no server). */
struct kv_session *kvs_open(const struct kv_session_conf *c, char *err, size_t errlen);

/* The server's worker count (keys are partitioned over them). */
unsigned kvs_workers(const struct kv_session *s);

/* The worker that owns a key (client_route over kvs_workers). */
unsigned kvs_route(const struct kv_session *s, const char *key, unsigned key_len);

/* set key = val, a nilext write; waits for its commit until deadline_ns
 * (clock_ns time).  Returns as described above. */
int kvs_put(struct kv_session *s, const char *key, unsigned key_len, const void *val,
	    uint32_t val_len, uint64_t deadline_ns, char *err, size_t errlen);

/* Reads key.  On 0, *status is the server's status (KV_OK, KV_NOT_FOUND,
 * ...); the value is copied into val up to cap bytes and *val_len is its
 * full length.  val may be NULL when cap is 0. */
int kvs_get(struct kv_session *s, const char *key, unsigned key_len, void *val, uint32_t cap,
	    uint32_t *val_len, uint32_t *status, uint64_t deadline_ns, char *err, size_t errlen);

void kvs_close(struct kv_session *s);

/* For a caller that found the server not executing: what the transport
 * can tell from outside about the server at c->endpoint (on shm, each
 * worker ring's counters and slot states; tp_shm.h), into out.  Returns 0,
 * or -1 with out saying why nothing can be told (no such transport, or it
 * cannot be read from outside). */
int kvs_describe_server(const struct kv_session_conf *c, char *out, size_t cap);

#endif
