/*
 * transport.h - how requests travel, one interface for every transport.
 *
 * Batch-shaped like fio's engines: post many, flush once, poll up to N.
 * Transports are registered in transport.c's table (shm now; verbs where
 * rdma-core is present).
 *
 * Server side, per worker w (one thread each):
 *   srv_poll()     reports arrivals: receive slots that now hold a request
 *                  (or were voided), in whatever order the transport sees
 *                  them (CQ order on verbs).  The worker feeds them to the
 *                  in-order executor (exec.h), which releases slot order.
 *   srv_req()      the bytes of an arrived slot (NULL for a voided slot).
 *   srv_release()  gives the slot back (reposts the receive buffer).
 *   srv_reply()    queues a response or software ACK to a client;
 *   srv_flush()    sends what was queued.
 * Client side, per client thread (one tp_client each):
 *   cli_post()     sends one encoded request to worker w.
 *   cli_post_many() sends several to one worker, in order (optional: where
 *                  it is NULL, the client calls cli_post for each).
 *   cli_flush()    pushes posted requests out (no-op where post sends).
 *   cli_poll()     returns events: DELIVERED (the transport's delivery ACK:
 *                  slot publish on shm, the signaled SEND's completion on
 *                  verbs), ACK and RESP (software, from the server); -1
 *                  when the connection broke and no event is left (verbs).
 */
#ifndef OQB_TRANSPORT_H
#define OQB_TRANSPORT_H

#include <stdint.h>
#include <stddef.h>
#include <jansson.h>
#include "wire.h"

#define TRANSPORT_OPS_VERSION 1

struct tp_srv_conf {
	unsigned workers;
	unsigned ring_slots;     /* receive slots per worker (power of two) */
	unsigned slot_size;      /* bytes per slot (multiple of WIRE_ALIGN) */
	const char *run_dir;     /* shm: parent of the private run directory */
	const char *system;      /* recorded in the endpoint for clients to check */
	uint64_t void_timeout_ns;/* shm: claimed-but-unpublished slot timeout */
	int durable;             /* receive rings on a persistent mapping */
	const char *pmem_path;   /* durable: directory for the ring files */
	/* durable: called by srv_open for each request the recovery scan of a
	 * ring left by a crashed server re-executes, in ring order, before any
	 * client can connect (recovery.h). */
	void (*recover_exec)(void *arg, unsigned worker, const void *req, const struct wire_req *h);
	void *recover_arg;
	/* verbs */
	const char *addr, *device;
	unsigned port, ib_port;
	int gid_index;
	const char *recv_mode;
	unsigned min_rnr_timer;
	int xrc;                 /* verbs: XRC QPs (refused where the device lacks XRC) */
};

struct tp_cli_conf {
	const char *endpoint;    /* what the server reported */
	const char *system;
	unsigned thread;         /* index of this thread in its process */
	unsigned max_outstanding;/* bound on requests in flight (sizes mailboxes) */
	int durable;
	/* verbs */
	int delegation;          /* one QP per process per worker, shared by threads */
	unsigned connect_timeout_ms; /* bound on connection set-up; 0 = default */
};

struct tp_arrival {
	uint64_t slot;
	int voided;              /* the slot was claimed but never published */
};

enum tp_event_kind { TP_EV_DELIVERED = 1, TP_EV_ACK = 2, TP_EV_RESP = 3 };

struct tp_event {
	uint64_t seq;
	uint32_t status;
	uint32_t val_len;
	uint8_t kind;            /* enum tp_event_kind */
	uint8_t op;
	uint16_t worker;
	uint8_t mark;            /* the worker's stall tag on its reply (wire.h WIRE_S_*), else 0 */
	const uint8_t *val;      /* valid until the next cli_poll */
	/* clock_ns() when the transport found the event (a completion's CQ
	 * poll), for a transport whose cli_poll does work after that which
	 * is the harness's, not the system's; 0: the caller's clock read
	 * after cli_poll returns is the event's time.  Only the thread that
	 * waits on the request may stamp it (never an owner reaping for
	 * other threads: their hand-off is part of their latency). */
	uint64_t t_done;
};

/* One request for cli_post_many. */
struct tp_req {
	const void *buf;
	uint32_t len;
	uint64_t seq;
};

struct tp_server;
struct tp_client;

struct transport_ops {
	const char *name;
	int version;
	/* What this build of the transport has, as JSON for run.json and the
	 * driver (bench/buildinfo.h): the library it links and its build, the
	 * optional hardware paths compiled in.  NULL: nothing beyond its name. */
	json_t *(*build)(void);

	struct tp_server *(*srv_open)(const struct tp_srv_conf *c, char *err, size_t errlen);
	const char *(*srv_endpoint)(struct tp_server *s);
	/* Called once the worker threads run: waits until each can serve
	 * (a transport whose workers set up on their own threads), or returns
	 * -1 with the cause.  May be NULL (ready when srv_open returned). */
	int (*srv_ready)(struct tp_server *s, char *err, size_t errlen);
	int (*srv_poll)(struct tp_server *s, unsigned w, struct tp_arrival *a, int max);
	const void *(*srv_req)(struct tp_server *s, unsigned w, uint64_t slot, size_t *avail);
	/* The request in slot has been executed (or skipped): durable
	 * transports persist ReqToExecute past it here, before any response
	 * (§5.3: execute, update ReqToExecute, respond).  May be NULL. */
	void (*srv_executed)(struct tp_server *s, unsigned w, uint64_t slot);
	/* Durable mode, before a software ACK commits the request in slot
	 * (deferred's nilext commit): makes the request's bytes persistent,
	 * so the ACK never promises more than the ring holds (§5.3).  NULL
	 * where an arrival is persistent already (shm: the client persisted
	 * its request before publishing it). */
	void (*srv_persist_req)(struct tp_server *s, unsigned w, uint64_t slot);
	void (*srv_release)(struct tp_server *s, unsigned w, uint64_t slot);
	int (*srv_reply)(struct tp_server *s, unsigned w, uint32_t client_id,
			 const struct wire_resp *r, const void *val);
	void (*srv_flush)(struct tp_server *s, unsigned w);
	json_t *(*srv_stats)(struct tp_server *s);
	void (*srv_close)(struct tp_server *s);

	struct tp_client *(*cli_open)(const struct tp_cli_conf *c, char *err, size_t errlen);
	uint32_t (*cli_id)(struct tp_client *c);
	unsigned (*cli_workers)(struct tp_client *c);
	/* 0: sent.  1: busy (the receive ring is full; nothing was sent and
	 * no place in the queue was taken): poll, then post it again.  -1:
	 * error, with err set (e.g. request larger than a slot). */
	int (*cli_post)(struct tp_client *c, unsigned w, const void *req, uint32_t len,
			uint64_t seq, char *err, size_t errlen);
	/* Sends r[0..n) to worker w in that order, as n cli_post calls would,
	 * but cheaper.  Returns how many were sent, from the first: n, fewer
	 * (the rest found the ring full: poll, then post them again), 0 (busy,
	 * nothing sent), or -1 with err when not even the first was sent.
	 * May be NULL. */
	int (*cli_post_many)(struct tp_client *c, unsigned w, const struct tp_req *r, int n,
			     char *err, size_t errlen);
	void (*cli_flush)(struct tp_client *c);
	int (*cli_poll)(struct tp_client *c, struct tp_event *ev, int max);
	json_t *(*cli_stats)(struct tp_client *c);
	void (*cli_close)(struct tp_client *c);
};

const struct transport_ops *transport_find(const char *name);
const char *transport_names(void);
/* What to do when transport `name` is not in this build ("" if nothing). */
const char *transport_hint(const char *name);
extern const char *const transport_name_list[];

#endif
