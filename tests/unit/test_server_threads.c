/*
 * test_server_threads.c - which thread calls a worker's backend instance
 * (bench/server.c, the rule docs/plugins.md promises plugins): open, a
 * crashed server's replay, the requests, stats (while the worker runs and
 * after it stopped) and close all run on that worker's own thread, one
 * thread per worker and never the thread that started the server; a
 * failed open on one worker closes the others' instances on their own
 * threads and returns the error; a manual server calls everything on the
 * caller's thread.
 *
 * A recording backend notes gettid() at every call; a stub transport
 * replays two requests per worker from srv_open (as a durable transport
 * does after a crash) and delivers three more per worker through srv_poll.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "unit.h"
#include "server.h"
#include "system.h"
#include "wire.h"

#define WORKERS 3
#define REPLAYS 2     /* per worker, from srv_open */
#define REQS    3     /* per worker, through srv_poll */
#define SLOTS   8
#define SLOTSZ  256

enum { C_OPEN, C_EXEC, C_STATS, C_CLOSE, C_N };
static const char *const call_name[C_N] = { "open", "exec", "stats", "close" };

/* What the recording backend saw, per worker: the thread of the first call
 * of each kind, how many calls of each kind, and how many came from
 * another thread than that worker's open. */
static struct {
	int tid[C_N];
	int n[C_N];
	int off_thread;
} seen[WORKERS];
static int fail_open_worker = -1;   /* this worker's open fails */

struct backend {
	int worker;
};

static void note(int w, int kind)
{
	int t = (int)gettid();
	if (!seen[w].n[kind]++)
		seen[w].tid[kind] = t;
	if (kind != C_OPEN && t != seen[w].tid[C_OPEN])
		seen[w].off_thread++;
}

static struct backend *rec_open(const struct backend_conf *c, char *err, size_t errlen)
{
	note(c->worker, C_OPEN);
	if (c->worker == fail_open_worker) {
		snprintf(err, errlen, "refused on purpose");
		return NULL;
	}
	struct backend *b = calloc(1, sizeof *b);
	if (b)
		b->worker = c->worker;
	return b;
}

static void rec_exec(struct backend *b, const struct backend_req *r, struct backend_out *o)
{
	(void)r;
	note(b->worker, C_EXEC);
	o->status = KV_OK;
	o->val_len = 0;
}

static json_t *rec_stats(struct backend *b)
{
	note(b->worker, C_STATS);
	return json_pack("{s:i}", "worker", b->worker);
}

static void rec_close(struct backend *b)
{
	note(b->worker, C_CLOSE);
	free(b);
}

static const struct backend_ops rec_ops = {
	.name = "rec", .version = BACKEND_OPS_VERSION, .open = rec_open, .exec = rec_exec,
	.stats_json = rec_stats, .close = rec_close,
};

/* ---- a stub transport: REQS requests per worker, delivered once ---- */
struct tp_server {
	uint8_t ring[WORKERS][SLOTS][SLOTSZ];
	int polled[WORKERS];
	_Atomic int released[WORKERS];
};

static uint32_t put(uint8_t *at, unsigned w, uint64_t seq)
{
	struct wire_req h = { .op = KV_OP_SET, .flags = KV_F_NILEXT, .key_len = 3, .val_len = 8,
			      .client_id = 1, .worker = w, .seq = seq };
	return wire_encode_req(at, SLOTSZ, &h, "key", NULL);
}

static struct tp_server *stub_open(const struct tp_srv_conf *c, char *err, size_t errlen)
{
	struct tp_server *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (unsigned w = 0; w < c->workers; w++) {
		for (unsigned i = 0; i < REQS; i++)
			put(s->ring[w][i], w, i + 1);
		/* what a durable transport replays from a crashed server's ring */
		for (unsigned i = 0; i < REPLAYS; i++) {
			uint8_t buf[SLOTSZ];
			struct wire_req h;
			put(buf, w, 100 + i);
			wire_decode_req(buf, &h);
			c->recover_exec(c->recover_arg, w, buf, &h);
		}
	}
	return s;
}

static const char *stub_endpoint(struct tp_server *s)
{
	(void)s;
	return "stub";
}

static int stub_poll(struct tp_server *s, unsigned w, struct tp_arrival *a, int max)
{
	if (s->polled[w] || max < REQS)
		return 0;
	s->polled[w] = 1;
	for (int i = 0; i < REQS; i++)
		a[i] = (struct tp_arrival){ .slot = (uint64_t)i, .voided = 0 };
	return REQS;
}

static const void *stub_req(struct tp_server *s, unsigned w, uint64_t slot, size_t *avail)
{
	*avail = SLOTSZ;
	return s->ring[w][slot % SLOTS];
}

static void stub_release(struct tp_server *s, unsigned w, uint64_t slot)
{
	(void)slot;
	atomic_fetch_add(&s->released[w], 1);
}

static int stub_reply(struct tp_server *s, unsigned w, uint32_t client_id, const struct wire_resp *r,
		      const void *val)
{
	(void)s; (void)w; (void)client_id; (void)r; (void)val;
	return 0;
}

static void stub_flush(struct tp_server *s, unsigned w)
{
	(void)s; (void)w;
}

static json_t *stub_stats(struct tp_server *s)
{
	(void)s;
	return json_object();
}

static void stub_close(struct tp_server *s)
{
	free(s);
}

static const struct transport_ops stub_ops = {
	.name = "stub", .version = TRANSPORT_OPS_VERSION, .srv_open = stub_open, .srv_endpoint = stub_endpoint,
	.srv_poll = stub_poll, .srv_req = stub_req, .srv_release = stub_release, .srv_reply = stub_reply,
	.srv_flush = stub_flush, .srv_stats = stub_stats, .srv_close = stub_close,
};

static struct server *start(int manual, char *err, size_t errlen)
{
	struct server_conf c;
	memset(&c, 0, sizeof c);
	memset(seen, 0, sizeof seen);
	c.sys = system_find("oq");
	c.tp = &stub_ops;
	c.be = &rec_ops;
	c.tpc.workers = WORKERS;
	c.tpc.ring_slots = SLOTS;
	c.tpc.slot_size = SLOTSZ;
	c.tpc.system = "oq";
	c.bc.kind = "rec";
	c.manual = manual;
	return server_start(&c, err, errlen);
}

static json_int_t worker_int(json_t *st, unsigned w, const char *key)
{
	return json_integer_value(json_object_get(json_array_get(json_object_get(st, "per_worker"), w), key));
}

TEST(every_call_on_the_workers_own_thread)
{
	char err[512];
	struct server *s = start(0, err, sizeof err);
	REQUIRE(s, "%s", err);
	/* stats while the workers run: each waits for its worker's thread */
	int done = 0;
	for (int i = 0; i < 5000 && !done; i++) {
		json_t *st = server_stats(s);
		done = 1;
		for (unsigned w = 0; w < WORKERS; w++)
			done &= worker_int(st, w, "executed") == REQS;
		json_decref(st);
		if (!done)
			usleep(1000);
	}
	CHECK(done, "the workers did not execute their %d requests within 5 s", REQS);
	server_stop(s);
	json_t *st = server_stats(s);
	int tids[WORKERS];
	for (unsigned w = 0; w < WORKERS; w++)
		tids[w] = (int)worker_int(st, w, "tid");
	CHECK(worker_int(st, 0, "recovered") == REPLAYS);
	json_decref(st);
	server_destroy(s);

	int me = (int)gettid();
	for (unsigned w = 0; w < WORKERS; w++) {
		CHECK(seen[w].n[C_OPEN] == 1 && seen[w].n[C_CLOSE] == 1, "worker %u: %d opens, %d closes", w,
		      seen[w].n[C_OPEN], seen[w].n[C_CLOSE]);
		CHECK(seen[w].n[C_EXEC] == REPLAYS + REQS, "worker %u: %d execs", w, seen[w].n[C_EXEC]);
		CHECK(seen[w].n[C_STATS] >= 2, "worker %u: %d stats calls", w, seen[w].n[C_STATS]);
		CHECK(tids[w] > 0 && tids[w] != me, "worker %u: thread %d (the test's is %d)", w, tids[w], me);
		for (int k = 0; k < C_N; k++)
			CHECK(seen[w].tid[k] == tids[w], "worker %u: %s on thread %d, not the worker's %d", w,
			      call_name[k], seen[w].tid[k], tids[w]);
		CHECK(seen[w].off_thread == 0, "worker %u: %d calls off the open's thread", w, seen[w].off_thread);
		for (unsigned v = 0; v < w; v++)
			CHECK(tids[v] != tids[w], "workers %u and %u share thread %d", v, w, tids[w]);
	}
}

TEST(failed_open_closes_the_others_on_their_threads)
{
	char err[512] = "";
	fail_open_worker = 1;
	struct server *s = start(0, err, sizeof err);
	fail_open_worker = -1;
	CHECK(!s && strstr(err, "backend rec (worker 1): refused on purpose"), "%s", err);
	if (s)
		server_destroy(s);
	CHECK(seen[0].n[C_OPEN] == 1 && seen[0].n[C_CLOSE] == 1, "worker 0: %d opens, %d closes",
	      seen[0].n[C_OPEN], seen[0].n[C_CLOSE]);
	CHECK(seen[0].tid[C_CLOSE] == seen[0].tid[C_OPEN] && seen[0].tid[C_OPEN] != (int)gettid());
	CHECK(seen[1].n[C_OPEN] == 1 && seen[1].n[C_CLOSE] == 0, "the failed instance is not closed");
	CHECK(seen[2].n[C_OPEN] == 0, "nothing opens after the failure");
	CHECK(seen[0].n[C_EXEC] == 0, "nothing executes on a server that failed to start");
}

TEST(manual_server_calls_on_the_callers_thread)
{
	char err[512];
	struct server *s = start(1, err, sizeof err);
	REQUIRE(s, "%s", err);
	for (unsigned w = 0; w < WORKERS; w++)
		CHECK(server_step(s, w) > 0);
	server_stop(s);
	json_t *st = server_stats(s);
	CHECK(json_is_null(json_object_get(json_array_get(json_object_get(st, "per_worker"), 0), "tid")));
	json_decref(st);
	server_destroy(s);
	int me = (int)gettid();
	for (unsigned w = 0; w < WORKERS; w++) {
		for (int k = 0; k < C_N; k++)
			CHECK(seen[w].tid[k] == me, "worker %u: %s on thread %d, not the caller's %d", w, call_name[k],
			      seen[w].tid[k], me);
		CHECK(seen[w].n[C_EXEC] == REPLAYS + REQS);
	}
}

UNIT_MAIN(every_call_on_the_workers_own_thread, failed_open_closes_the_others_on_their_threads,
	  manual_server_calls_on_the_callers_thread)
