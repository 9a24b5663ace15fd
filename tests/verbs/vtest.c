/*
 * vtest.c - verbs transport checks that need a real RDMA device (run inside
 * the Soft-RoCE VM by tests/verbs/guest-suite.sh; built on the host by
 * tests/verbs/run-verbs.sh against build/default/liboqb.a).
 *
 *   vtest hwack ADDR PORT MODE
 *       Hardware-ACK semantics (paper §4 Rule 1, §5.1): with a ring of two
 *       receive slots, two SENDs complete (DELIVERED) before the server CPU
 *       does anything; a third SEND finds no receive WQE and must not
 *       complete (RNR, retried forever) until the server releases a slot;
 *       it then lands in ticket 2, the reposted WQE.
 *   vtest order ADDR PORT MODE THREADS OPS [deleg]
 *       Many client threads (one QP each to a single worker, or shared QPs
 *       with "deleg") issue oq nilext SETs and GETs.  The server loop here
 *       executes in slot order with the project's executor and logs every
 *       request.  Checks: slots run 0..n-1 without gaps; each client's
 *       requests execute in its sending order; read-your-writes; every SET
 *       that committed (DELIVERED) before a GET was sent executed before
 *       that GET (the linearizability argument of §4, Case 3); and replaying
 *       the log single-threaded reproduces every GET's returned value.
 *   vtest crash ADDR PORT PMEM_PATH
 *       Durable recovery (§5.3): a forked server with its ring in a pmem
 *       file executes only the first 15 of 40 durable requests (one a GET)
 *       and is killed with SIGKILL after all of them committed (their READs
 *       completed).  A new server on the same file must replay exactly the
 *       committed, unexecuted nilext requests, in ticket order, before it
 *       accepts clients; a third open finds nothing left to replay.
 *
 * Prints "ok NAME" / "not ok NAME: why" lines; exits 0 only if all passed.
 */
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "exec.h"
#include "tp_verbs.h"
#include "wire.h"

static int failed;

static void ok(const char *name) { printf("ok %s\n", name); fflush(stdout); }
static void notok(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notok(const char *name, const char *fmt, ...)
{
	va_list ap;
	printf("not ok %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failed = 1;
}

static const struct transport_ops *tp = &tp_verbs_ops;

static uint32_t encode(uint8_t *buf, unsigned op, unsigned flags, uint32_t client, uint64_t seq,
		       const char *key, const void *val, uint32_t val_len)
{
	struct wire_req h = {
		.op = (uint8_t)op, .flags = (uint16_t)flags, .key_len = (uint16_t)strlen(key),
		.val_len = val_len, .client_id = client, .worker = 0, .seq = seq,
	};
	return wire_encode_req(buf, 4096, &h, key, val);
}

/* Events seen while waiting for another one, per thread (a poll returns
 * a batch, and the one waited for need not come first). */
#define STASH_MAX 256
struct stash { uint64_t seq[STASH_MAX]; uint64_t val[STASH_MAX]; uint8_t kind[STASH_MAX]; unsigned n; };
static __thread struct stash st;

/* An event's 8-byte value (a GET's), else 0. */
static uint64_t ev_val(const struct tp_event *e)
{
	uint64_t v = 0;
	if (e->val_len == 8)
		memcpy(&v, e->val, 8);
	return v;
}

/* Keeps e for a later wait_event (dropped when the stash is full). */
static void stash_put(const struct tp_event *e)
{
	if (st.n == STASH_MAX)
		return;
	st.seq[st.n] = e->seq, st.kind[st.n] = e->kind, st.val[st.n] = ev_val(e);
	st.n++;
}

/* Removes stash entry i (the last one takes its place). */
static void stash_drop(unsigned i)
{
	st.n--;
	st.seq[i] = st.seq[st.n], st.kind[i] = st.kind[st.n], st.val[i] = st.val[st.n];
}

/* Each thread's events by their tp_event.t_done: stamped and unstamped
 * per kind (enum tp_event_kind; 0 holds any other), and stamped wrongly
 * (later than the clock read after the poll that returned the event, or,
 * for the event waited for, before its request's post began, where each
 * wait follows its own post: check_post).  t_post: when the last post()
 * or post_many() began. */
#define STAMP_KINDS 4   /* enum tp_event_kind's values, 0 for any other */
struct stamps { unsigned long stamped[STAMP_KINDS], unstamped[STAMP_KINDS], bad; uint64_t t_post; int check_post; };
static __thread struct stamps sp;

static void count_stamp(const struct tp_event *e, uint64_t after_poll, int waited_for)
{
	unsigned k = e->kind < STAMP_KINDS ? e->kind : 0;
	if (!e->t_done) {
		sp.unstamped[k]++;
		return;
	}
	sp.stamped[k]++;
	if (e->t_done > after_poll || (sp.check_post && waited_for && e->t_done < sp.t_post))
		sp.bad++;
}

/* Polls c until an event of kind for seq arrives or ms pass; 1 if seen. */
static int wait_event(struct tp_client *c, unsigned kind, uint64_t seq, unsigned ms, uint64_t *val)
{
	/* callers wait for their newest request: older leftovers (e.g. the
	 * DELIVERED of a GET, which commits on its response) are stale */
	for (unsigned i = 0; i < st.n; )
		if (st.seq[i] + 4 < seq)
			stash_drop(i);
		else
			i++;
	for (unsigned i = 0; i < st.n; i++)
		if (st.kind[i] == kind && st.seq[i] == seq) {
			if (val)
				*val = st.val[i];
			stash_drop(i);
			return 1;
		}
	uint64_t end = clock_ns() + (uint64_t)ms * 1000000;
	struct tp_event ev[16];
	int found = 0;
	while (!found && clock_ns() < end) {
		int n = tp->cli_poll(c, ev, 16);
		uint64_t after = clock_ns();
		for (int i = 0; i < n; i++) {
			int hit = !found && ev[i].kind == kind && ev[i].seq == seq;
			count_stamp(&ev[i], after, hit);
			if (hit) {
				if (val)
					*val = ev_val(&ev[i]);
				found = 1;
			} else {
				stash_put(&ev[i]);
			}
		}
		if (!n)
			sched_yield();
	}
	return found;
}

/* One poll while waiting for room to send: its events are kept for
 * wait_event. */
static void poll_stash(struct tp_client *c)
{
	struct tp_event ev[16];
	int n = tp->cli_poll(c, ev, 16);
	uint64_t after = clock_ns();
	for (int i = 0; i < n; i++) {
		count_stamp(&ev[i], after, 0);
		stash_put(&ev[i]);
	}
}

/* cli_post, retried while the transport says busy (1); 0 or -1. */
static int post(struct tp_client *c, const void *req, uint32_t len, uint64_t seq, char *err, size_t errlen)
{
	sp.t_post = clock_ns();
	uint64_t end = sp.t_post + 20000000000ull;
	for (;;) {
		int r = tp->cli_post(c, 0, req, len, seq, err, errlen);
		if (r != 1)
			return r;
		if (clock_ns() > end) {
			snprintf(err, errlen, "transport busy for 20 s");
			return -1;
		}
		poll_stash(c);
	}
}

/* cli_post_many of r[0..n) to worker 0, the rest posted again while the
 * transport says busy; 0 or -1. */
static int post_many(struct tp_client *c, const struct tp_req *r, int n, char *err, size_t errlen)
{
	sp.t_post = clock_ns();
	uint64_t end = sp.t_post + 20000000000ull;
	int done = 0;
	while (done < n) {
		int k = tp->cli_post_many(c, 0, r + done, n - done, err, errlen);
		if (k < 0)
			return -1;
		done += k;
		if (done == n)
			break;
		if (clock_ns() > end) {
			snprintf(err, errlen, "transport busy for 20 s");
			return -1;
		}
		poll_stash(c);
	}
	return 0;
}

static struct tp_server *open_server(const char *addr, unsigned port, const char *sys, const char *mode,
				     unsigned slots, char *err, size_t errlen)
{
	struct tp_srv_conf sc = {
		.workers = 1, .ring_slots = slots, .slot_size = 4096, .system = sys,
		.addr = addr, .port = port, .gid_index = -1, .recv_mode = mode, .min_rnr_timer = 1,
	};
	return tp->srv_open(&sc, err, errlen);
}

static struct tp_client *open_client(const char *addr, unsigned port, const char *sys, unsigned thread,
				     int deleg, char *err, size_t errlen)
{
	char ep[128];
	snprintf(ep, sizeof ep, "verbs:%s:%u", addr, port);
	struct tp_cli_conf cc = {
		.endpoint = ep, .system = sys, .thread = thread, .max_outstanding = 64,
		.delegation = deleg, .connect_timeout_ms = 20000,
	};
	return tp->cli_open(&cc, err, errlen);
}

/* A server of system sys with one worker, and one client thread (no
 * delegation) connected to it: the client, *s its server; NULL (reported
 * under test name what) if either cannot be opened. */
static struct tp_client *open_pair(const char *what, const char *addr, unsigned port, const char *sys,
				   const char *mode, unsigned slots, struct tp_server **s)
{
	char err[512];
	*s = open_server(addr, port, sys, mode, slots, err, sizeof err);
	if (!*s) {
		notok(what, "server: %s", err);
		return NULL;
	}
	struct tp_client *c = open_client(addr, port, sys, 0, 0, err, sizeof err);
	if (!c) {
		notok(what, "client: %s", err);
		tp->srv_close(*s);
	}
	return c;
}

/* Polls worker 0 of s for up to ms: the arrivals (at most max) of the
 * first poll that finds any, else 0. */
static int poll_arrivals(struct tp_server *s, struct tp_arrival *a, int max, unsigned ms)
{
	int got = 0;
	for (uint64_t end = clock_ns() + (uint64_t)ms * 1000000; !got && clock_ns() < end; )
		got = tp->srv_poll(s, 0, a, max);
	return got;
}

static int cmd_hwack(const char *addr, unsigned port, const char *mode)
{
	char err[512], name[128];
	uint8_t buf[4096];
	struct tp_server *s;
	struct tp_client *c = open_pair("hwack: open", addr, port, "oq", mode, 2, &s);
	if (!c)
		return 1;
	uint32_t id = tp->cli_id(c);
	uint64_t v = 0x1111;
	for (uint64_t seq = 1; seq <= 3; seq++) {
		uint32_t len = encode(buf, KV_OP_SET, KV_F_NILEXT, id, seq, "k", &v, 8);
		if (post(c, buf, len, seq, err, sizeof err) != 0) {
			notok("hwack: post", "%s", err);
			goto out;
		}
		if (seq == 2) {
			/* Both slots are taken by the NIC alone: the server CPU
			 * has not polled anything yet. */
			int d1 = wait_event(c, TP_EV_DELIVERED, 1, 10000, NULL);
			int d2 = wait_event(c, TP_EV_DELIVERED, 2, 10000, NULL);
			snprintf(name, sizeof name, "hwack %s: two SENDs complete with no server CPU involved", mode);
			if (d1 && d2) ok(name); else notok(name, "DELIVERED seq1=%d seq2=%d within 10 s", d1, d2);
		}
	}
	/* No receive WQE left: the third SEND is RNR-NAKed and must not
	 * complete; 300 ms is hundreds of RNR retries at min_rnr_timer 1. */
	snprintf(name, sizeof name, "hwack %s: no DELIVERED while no receive buffer is posted (300 ms)", mode);
	if (!wait_event(c, TP_EV_DELIVERED, 3, 300, NULL))
		ok(name);
	else
		notok(name, "the SEND completed although the SRQ was empty (Rule 1 violated)");
	struct tp_arrival a[8];
	int got = 0;
	uint64_t slots[8];
	for (uint64_t end = clock_ns() + 5000000000ull; got < 2 && clock_ns() < end; ) {
		int n = tp->srv_poll(s, 0, a, 8);
		for (int i = 0; i < n; i++)
			slots[got++] = a[i].slot;
	}
	snprintf(name, sizeof name, "hwack %s: arrivals are tickets 0 and 1", mode);
	if (got == 2 && ((slots[0] == 0 && slots[1] == 1) || (slots[0] == 1 && slots[1] == 0)))
		ok(name);
	else
		notok(name, "got %d arrivals (first slots %" PRIu64 ", %" PRIu64 ")", got, got > 0 ? slots[0] : 0,
		      got > 1 ? slots[1] : 0);
	size_t avail;
	const void *req = tp->srv_req(s, 0, 0, &avail);
	struct wire_req h;
	const char *why = NULL;
	snprintf(name, sizeof name, "hwack %s: slot 0 holds seq 1, intact", mode);
	if (req && wire_check(req, avail, &h, &why) == 0 && h.seq == 1 && h.client_id == id)
		ok(name);
	else
		notok(name, "%s", why ? why : "no request / wrong seq");
	/* Release slot 0: ticket 2 is posted; the retried SEND lands there. */
	uint64_t t0 = clock_ns();
	tp->srv_release(s, 0, 0);
	tp->srv_flush(s, 0);
	int d3 = wait_event(c, TP_EV_DELIVERED, 3, 10000, NULL);
	snprintf(name, sizeof name, "hwack %s: the SEND completes once a buffer is posted", mode);
	if (d3) {
		ok(name);
		printf("  (completed %.2f ms after the repost)\n", (double)(clock_ns() - t0) / 1e6);
	} else {
		notok(name, "no DELIVERED within 10 s after the repost");
	}
	got = poll_arrivals(s, a, 8, 5000);
	req = got ? tp->srv_req(s, 0, a[0].slot, &avail) : NULL;
	snprintf(name, sizeof name, "hwack %s: the third request took ticket 2", mode);
	if (got == 1 && a[0].slot == 2 && req && wire_check(req, avail, &h, NULL) == 0 && h.seq == 3)
		ok(name);
	else
		notok(name, "got %d arrival(s), slot %" PRIu64, got, got ? a[0].slot : 0);
	json_t *cs = tp->cli_stats(c);
	snprintf(name, sizeof name, "hwack %s: client QP has rnr_retry 7 (infinite)", mode);
	if (json_integer_value(json_object_get(cs, "rnr_retry")) == 7)
		ok(name);
	else
		notok(name, "rnr_retry = %" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(cs, "rnr_retry")));
	json_decref(cs);
out:
	tp->cli_close(c);
	tp->srv_close(s);
	return failed;
}

/* --------------------------------------------------------------- stamps */

/*
 * Under rawrpc a request commits on its response, and its send completion
 * (DELIVERED) commits nothing: without delegation every response carries
 * the time of the CQ poll that found it, after its post and no later than
 * the poll's return, and no DELIVERED is stamped (owner_poll reads no
 * clock for them).  One thread plays both sides: post, serve, wait.
 */
#define ST_REQS 20
static int cmd_stamps(const char *addr, unsigned port)
{
	char err[512], name[128];
	uint8_t buf[4096];
	struct tp_server *s;
	struct tp_client *c = open_pair("stamps rawrpc: open", addr, port, "rawrpc", "srq", 16, &s);
	if (!c)
		return 1;
	uint32_t id = tp->cli_id(c);
	uint64_t v = 7;
	int answered = 0;
	sp.check_post = 1;
	for (uint64_t seq = 1; seq <= ST_REQS; seq++) {
		uint32_t len = encode(buf, KV_OP_SET, KV_F_NILEXT, id, seq, "k", &v, 8);
		if (post(c, buf, len, seq, err, sizeof err) != 0) {
			notok("stamps rawrpc: post", "%s", err);
			goto out;
		}
		struct tp_arrival a;
		int got = poll_arrivals(s, &a, 1, 5000);
		size_t avail;
		const void *req = got ? tp->srv_req(s, 0, a.slot, &avail) : NULL;
		struct wire_req h;
		if (!req || wire_check(req, avail, &h, NULL) != 0 || h.seq != seq) {
			notok("stamps rawrpc: serve", "request %" PRIu64 " did not arrive intact within 5 s", seq);
			goto out;
		}
		struct wire_resp r = {
			.seq = h.seq, .status = KV_OK, .kind = WIRE_RESP, .op = h.op, .client_id = h.client_id,
		};
		if (tp->srv_reply(s, 0, h.client_id, &r, NULL) != 0) {
			notok("stamps rawrpc: serve", "the reply to request %" PRIu64 " failed", seq);
			goto out;
		}
		tp->srv_release(s, 0, a.slot);
		tp->srv_flush(s, 0);
		answered += wait_event(c, TP_EV_RESP, seq, 10000, NULL);
	}
	/* the last send completions may still be in the CQ */
	for (uint64_t end = clock_ns() + 200000000ull; sp.unstamped[TP_EV_DELIVERED] < ST_REQS && clock_ns() < end; )
		poll_stash(c);
	snprintf(name, sizeof name, "stamps rawrpc: every response carries its CQ poll's time");
	if (answered == ST_REQS && sp.stamped[TP_EV_RESP] == ST_REQS && !sp.unstamped[TP_EV_RESP] && !sp.bad)
		ok(name);
	else
		notok(name, "%d of %d answered; responses %lu stamped, %lu unstamped; %lu stamped outside their post "
		      "and poll", answered, ST_REQS, sp.stamped[TP_EV_RESP], sp.unstamped[TP_EV_RESP], sp.bad);
	snprintf(name, sizeof name, "stamps rawrpc: no send completion is stamped (none commits a request)");
	if (sp.unstamped[TP_EV_DELIVERED] == ST_REQS && !sp.stamped[TP_EV_DELIVERED])
		ok(name);
	else
		notok(name, "of %d send completions %lu stamped, %lu unstamped", ST_REQS, sp.stamped[TP_EV_DELIVERED],
		      sp.unstamped[TP_EV_DELIVERED]);
out:
	tp->cli_close(c);
	tp->srv_close(s);
	return failed;
}

/* ---------------------------------------------------------------- order */

#define MAXT 64
struct logent { uint64_t slot, seq, val; uint32_t client; uint8_t op, key; };
struct getrec { uint64_t seq, val, snap[MAXT]; uint32_t client; int found; };

static struct {
	const char *addr;
	unsigned port, threads, ops;
	int deleg;
	struct tp_server *s;
	_Atomic int stop;
	struct logent *log;
	size_t nlog, caplog;
	uint64_t out_of_order;
	_Atomic uint64_t committed[MAXT];   /* largest i of SET(shared, (t,i)) committed by t */
	struct getrec *gets[MAXT];
	size_t ngets[MAXT];
	uint32_t ids[MAXT];
	int64_t not_inline[MAXT];          /* requests a client sent from its send buffer */
	uint32_t big_len[MAXT];            /* the value of its every fifth round's long SET (0: none) */
	struct stamps sp[MAXT];            /* its events' t_done */
	char err[MAXT][640];
	int bad[MAXT];
	_Atomic unsigned ready;
} O;

static int key_index(const uint8_t *k, unsigned len)
{
	if (len == 6 && !memcmp(k, "shared", 6))
		return MAXT;
	if (len == 4 && k[0] == 'k')
		return (k[1] - '0') * 100 + (k[2] - '0') * 10 + (k[3] - '0');
	return -1;
}

static void *server_loop(void *arg)
{
	(void)arg;
	struct exec x;
	uint64_t map[MAXT + 1];
	uint8_t has[MAXT + 1];
	memset(has, 0, sizeof has);
	exec_init(&x, 0, 64);
	struct tp_arrival a[64];
	uint64_t maxseen = 0;
	while (!atomic_load(&O.stop)) {
		int n = tp->srv_poll(O.s, 0, a, 64);
		for (int i = 0; i < n; i++) {
			/* CQ order vs slot order: an arrival below one already
			 * seen came out of order (Rule 2's reason to exist) */
			if (a[i].slot < maxseen)
				O.out_of_order++;
			else
				maxseen = a[i].slot;
			exec_arrive(&x, a[i].slot);
		}
		uint64_t slot;
		while ((slot = exec_next(&x)) != EXEC_NONE) {
			size_t avail;
			const void *req = tp->srv_req(O.s, 0, slot, &avail);
			struct wire_req h;
			if (req && wire_check(req, avail, &h, NULL) == 0) {
				int k = key_index(wire_key(req), h.key_len);
				struct logent e = { .slot = slot, .seq = h.seq, .client = h.client_id, .op = h.op,
						    .key = (uint8_t)(k < 0 ? 255 : k) };
				if (k >= 0 && h.op == KV_OP_SET && h.val_len == 8) {
					memcpy(&map[k], wire_val(req, h.key_len), 8);
					has[k] = 1;
					e.val = map[k];
				} else if (k >= 0 && h.op == KV_OP_GET) {
					struct wire_resp r = { .seq = h.seq, .kind = WIRE_RESP, .op = h.op,
							       .client_id = h.client_id,
							       .status = has[k] ? KV_OK : KV_NOT_FOUND,
							       .val_len = has[k] ? 8 : 0 };
					e.val = has[k] ? map[k] : 0;
					tp->srv_reply(O.s, 0, h.client_id, &r, &map[k]);
				}
				if (O.nlog == O.caplog) {
					O.caplog = O.caplog ? 2 * O.caplog : 4096;
					O.log = realloc(O.log, O.caplog * sizeof *O.log);
				}
				O.log[O.nlog++] = e;
			}
			tp->srv_release(O.s, 0, slot);
		}
		tp->srv_flush(O.s, 0);
	}
	exec_free(&x);
	return NULL;
}

static void *client_thread(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	char err[512] = "no commit within 20 s", key[8];
	uint8_t buf[4096];
	struct tp_client *c = open_client(O.addr, O.port, "oq", t, O.deleg, err, sizeof err);
	atomic_fetch_add(&O.ready, 1);
	if (!c) {
		snprintf(O.err[t], sizeof O.err[t], "open: %.500s", err);
		O.bad[t] = 1;
		return NULL;
	}
	uint32_t id = tp->cli_id(c);
	O.ids[t] = id;
	O.gets[t] = calloc(O.ops, sizeof *O.gets[t]);
	/* a value one byte longer than the QP takes inline (rxe grants more
	 * than the 256 B asked for), if the request still fits a slot */
	json_t *js = tp->cli_stats(c);
	uint32_t bigv = (uint32_t)json_integer_value(json_object_get(js, "max_inline")) + 1;
	json_decref(js);
	static const uint8_t big[4096];
	if (bigv + 64 > sizeof big)
		bigv = 0;
	O.big_len[t] = bigv;
	while (atomic_load(&O.ready) < O.threads)
		usleep(1000);
	snprintf(key, sizeof key, "k%03u", t);
	sp.check_post = 1;
	uint64_t seq = 0;
	for (uint64_t i = 1; i <= O.ops && !O.bad[t]; i++) {
		/* own key: SET then (every other round) GET must read it back */
		uint64_t v = (uint64_t)t << 32 | i;
		uint32_t len;
		if (i % 5 == 0 && bigv) {
			/* a request too long to go inline: without delegation it
			 * takes the general path, between requests that go
			 * straight to the QP (vb_post_direct), and its commit still
			 * comes in order */
			char bkey[8];
			snprintf(bkey, sizeof bkey, "b%03u", t);
			len = encode(buf, KV_OP_SET, KV_F_NILEXT, id, ++seq, bkey, big, bigv);
			if (post(c, buf, len, seq, err, sizeof err) || !wait_event(c, TP_EV_DELIVERED, seq, 20000, NULL)) {
				snprintf(O.err[t], sizeof O.err[t], "SET of %u B, seq %" PRIu64 ": %.500s", bigv, seq, err);
				O.bad[t] = 1;
				break;
			}
		}
		len = encode(buf, KV_OP_SET, KV_F_NILEXT, id, ++seq, key, &v, 8);
		if (i % 3 == 0) {
			/* every third round the two SETs go in one cli_post_many
			 * (one chain of WRs): the checks below hold for them too */
			uint8_t buf2[4096];
			uint32_t len2 = encode(buf2, KV_OP_SET, KV_F_NILEXT, id, seq + 1, "shared", &v, 8);
			struct tp_req r[2] = { { .buf = buf, .len = len, .seq = seq },
					       { .buf = buf2, .len = len2, .seq = seq + 1 } };
			seq++;
			if (post_many(c, r, 2, err, sizeof err) || !wait_event(c, TP_EV_DELIVERED, seq - 1, 20000, NULL) ||
			    !wait_event(c, TP_EV_DELIVERED, seq, 20000, NULL)) {
				snprintf(O.err[t], sizeof O.err[t], "SET own and shared as a batch, seq %" PRIu64
					 ": %.500s", seq - 1, err);
				O.bad[t] = 1;
				break;
			}
			goto committed;
		}
		if (post(c, buf, len, seq, err, sizeof err) || !wait_event(c, TP_EV_DELIVERED, seq, 20000, NULL)) {
			snprintf(O.err[t], sizeof O.err[t], "SET own seq %" PRIu64 ": %.500s", seq, err);
			O.bad[t] = 1;
			break;
		}
		len = encode(buf, KV_OP_SET, KV_F_NILEXT, id, ++seq, "shared", &v, 8);
		if (post(c, buf, len, seq, err, sizeof err) || !wait_event(c, TP_EV_DELIVERED, seq, 20000, NULL)) {
			snprintf(O.err[t], sizeof O.err[t], "SET shared seq %" PRIu64 ": no commit", seq);
			O.bad[t] = 1;
			break;
		}
committed:
		atomic_store(&O.committed[t], i);   /* committed on the hardware ACK */
		if (i % 2)
			continue;
		struct getrec *g = &O.gets[t][O.ngets[t]];
		g->client = id;
		len = encode(buf, KV_OP_GET, 0, id, ++seq, key, NULL, 0);
		uint64_t got = 0;
		if (post(c, buf, len, seq, err, sizeof err) || !wait_event(c, TP_EV_RESP, seq, 20000, &got)) {
			snprintf(O.err[t], sizeof O.err[t], "GET own seq %" PRIu64 ": no response", seq);
			O.bad[t] = 1;
			break;
		}
		if (got != v) {
			snprintf(O.err[t], sizeof O.err[t], "read-your-writes: GET %s after committed SET %" PRIu64
				 " returned %" PRIu64, key, v, got);
			O.bad[t] = 1;
			break;
		}
		/* shared key: remember what had committed before sending */
		for (unsigned u = 0; u < O.threads; u++)
			g->snap[u] = atomic_load(&O.committed[u]);
		len = encode(buf, KV_OP_GET, 0, id, ++seq, "shared", NULL, 0);
		g->seq = seq;
		if (post(c, buf, len, seq, err, sizeof err) || !wait_event(c, TP_EV_RESP, seq, 20000, &g->val)) {
			snprintf(O.err[t], sizeof O.err[t], "GET shared seq %" PRIu64 ": no response", seq);
			O.bad[t] = 1;
			break;
		}
		O.ngets[t]++;
	}
	/* let late DELIVERED events drain before closing */
	struct tp_event ev[16];
	for (int k = 0; k < 10; k++)
		tp->cli_poll(c, ev, 16);
	js = tp->cli_stats(c);
	json_t *qt = json_object_get(js, "qp_totals");
	O.not_inline[t] = (int64_t)json_integer_value(json_object_get(qt, "sends")) -
			  (int64_t)json_integer_value(json_object_get(qt, "inline_sends"));
	json_decref(js);
	O.sp[t] = sp;
	tp->cli_close(c);
	return NULL;
}

static int cmd_order(const char *addr, unsigned port, const char *mode, unsigned threads, unsigned ops, int deleg)
{
	char err[512], name[160];
	const char *tag = deleg ? " (delegation)" : "";
	if (threads < 1 || threads > MAXT)
		threads = 8;
	O.addr = addr;
	O.port = port;
	O.threads = threads;
	O.ops = ops;
	O.deleg = deleg;
	O.s = open_server(addr, port, "oq", mode, 64, err, sizeof err);
	if (!O.s) {
		notok("order: server", "%s", err);
		return 1;
	}
	pthread_t srv_th, ct[MAXT];
	pthread_create(&srv_th, NULL, server_loop, NULL);
	for (unsigned t = 0; t < threads; t++)
		pthread_create(&ct[t], NULL, client_thread, (void *)(uintptr_t)t);
	for (unsigned t = 0; t < threads; t++)
		pthread_join(ct[t], NULL);
	json_t *ss = tp->srv_stats(O.s);
	atomic_store(&O.stop, 1);
	pthread_join(srv_th, NULL);
	int peak = (int)json_integer_value(json_object_get(ss, "qps_peak"));
	json_decref(ss);
	tp->srv_close(O.s);

	int cerr = 0;
	for (unsigned t = 0; t < threads; t++)
		if (O.bad[t]) {
			snprintf(name, sizeof name, "order %s%s: client thread %u", mode, tag, t);
			notok(name, "%s", O.err[t]);
			cerr = 1;
		}
	snprintf(name, sizeof name, "order %s%s: %u threads x %u rounds, read-your-writes", mode, tag, threads, ops);
	if (!cerr)
		ok(name);
	/* slots 0..n-1 in order, per-client FIFO */
	int gap = 0, fifo = 0;
	uint64_t lastseq[MAXT] = { 0 };
	for (size_t i = 0; i < O.nlog; i++) {
		if (O.log[i].slot != i)
			gap = 1;
		for (unsigned t = 0; t < threads; t++)
			if (O.ids[t] == O.log[i].client) {
				if (O.log[i].seq <= lastseq[t])
					fifo = 1;
				lastseq[t] = O.log[i].seq;
			}
	}
	snprintf(name, sizeof name, "order %s%s: %zu requests executed in slot order 0..n-1", mode, tag, O.nlog);
	if (!gap && O.nlog > 0) ok(name); else notok(name, "gap or reorder in the executed slots");
	snprintf(name, sizeof name, "order %s%s: each client's requests execute in its sending order", mode, tag);
	if (!fifo) ok(name); else notok(name, "a client's seqs executed out of order");
	/* Case 3: committed SETs precede the GET; replay reproduces values */
	int lin = 0, rep = 0;
	uint64_t shared = 0, nget = 0;
	for (size_t i = 0; i < O.nlog; i++) {
		const struct logent *e = &O.log[i];
		if (e->key == MAXT && e->op == KV_OP_SET)
			shared = e->val;
		if (e->key != MAXT || e->op != KV_OP_GET)
			continue;
		for (unsigned t = 0; t < threads; t++) {
			if (O.ids[t] != e->client)
				continue;
			for (size_t gi = 0; gi < O.ngets[t]; gi++) {
				const struct getrec *g = &O.gets[t][gi];
				if (g->seq != e->seq)
					continue;
				nget++;
				if (g->val != shared)
					rep = 1;
				for (unsigned u = 0; u < threads; u++) {
					if (!g->snap[u])
						continue;
					uint64_t want = (uint64_t)u << 32 | g->snap[u];
					int before = 0;
					for (size_t j = 0; j < i && !before; j++)
						before = O.log[j].key == MAXT && O.log[j].op == KV_OP_SET &&
							 O.log[j].val == want;
					if (!before)
						lin = 1;
				}
			}
		}
	}
	snprintf(name, sizeof name, "order %s%s: SETs committed before a GET executed before it (%" PRIu64 " GETs)",
		 mode, tag, nget);
	if (!lin && nget) ok(name); else notok(name, "a committed SET executed after a later GET (linearizability)");
	snprintf(name, sizeof name, "order %s%s: single-threaded replay of the log matches every GET", mode, tag);
	if (!rep && nget) ok(name); else notok(name, "a GET returned a value the slot-order replay does not give");
	printf("  (%" PRIu64 " arrivals came in CQ order below an earlier slot and were reordered by the executor; peak QPs %d)\n",
	       O.out_of_order, peak);
	/* the long SETs of every fifth round cannot go inline */
	int64_t least = INT64_MAX;
	uint32_t nobig = 0;
	for (unsigned t = 0; t < threads; t++) {
		if (O.not_inline[t] < least)
			least = O.not_inline[t];
		nobig += !O.big_len[t];
	}
	snprintf(name, sizeof name, "order %s%s: each client sent its %u requests too long to go inline from its send "
		 "buffer", mode, tag, ops / 5);
	if (nobig)
		printf("skip %s: the device takes %u B inline, more than a slot holds\n", name, O.big_len[0]);
	else if (!cerr && least >= (int64_t)(ops / 5)) ok(name);
	else notok(name, "fewest such sends %" PRId64 " (values of %u B)", least, O.big_len[0]);
	/* Without delegation the thread that polls the CQ is the one that
	 * waits: its events carry the poll's time (tp_event.t_done), which
	 * ends their latency; with delegation none may, since the hand-off
	 * from the QP's owner belongs to the latency. */
	unsigned long stamped = 0, unstamped = 0, badst = 0;
	for (unsigned t = 0; t < threads; t++) {
		for (unsigned k = 0; k < STAMP_KINDS; k++) {
			stamped += O.sp[t].stamped[k];
			unstamped += O.sp[t].unstamped[k];
		}
		badst += O.sp[t].bad;
	}
	snprintf(name, sizeof name, "order %s%s: %s", mode, tag, deleg ? "no event carries a CQ poll's time" :
		 "every event carries its CQ poll's time, after its post and before the poll returned");
	if (!cerr && badst == 0 && (deleg ? !stamped && unstamped : stamped && !unstamped)) ok(name);
	else notok(name, "%lu stamped, %lu unstamped, %lu stamped outside their post and poll", stamped, unstamped,
		   badst);
	snprintf(name, sizeof name, "order %s%s: server saw %s QPs", mode, tag, deleg ? "1 (shared)" : "one per thread");
	if (peak == (deleg ? 1 : (int)threads)) ok(name); else notok(name, "peak QPs %d", peak);
	return failed;
}

/* ---------------------------------------------------------------- crash */

#define CR_SLOTS 64
#define CR_SENT 40
#define CR_EXEC 15
#define CR_GET 20

static uint64_t rec_seq[CR_SLOTS];
static unsigned nrec;

static void rec_cb(void *arg, unsigned w, const void *req, const struct wire_req *h)
{
	(void)arg; (void)w; (void)req;
	if (nrec < CR_SLOTS)
		rec_seq[nrec] = h->seq;
	nrec++;
}

static int read_line(int fd, char *buf, size_t len, int ms)
{
	size_t o = 0;
	while (o + 1 < len) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, ms) <= 0)
			break;
		if (read(fd, buf + o, 1) != 1)
			break;
		if (buf[o++] == '\n')
			break;
	}
	buf[o] = 0;
	return (int)o;
}

static struct tp_server *open_durable(const char *addr, unsigned port, const char *path, int with_cb,
				      char *err, size_t errlen)
{
	struct tp_srv_conf sc = {
		.workers = 1, .ring_slots = CR_SLOTS, .slot_size = 256, .system = "oq", .durable = 1,
		.pmem_path = path, .addr = addr, .port = port, .gid_index = -1, .recv_mode = "slot_ring",
		.min_rnr_timer = 1, .recover_exec = with_cb ? rec_cb : NULL,
	};
	return tp->srv_open(&sc, err, errlen);
}

/* The server that dies: executes the first CR_EXEC requests, then idles. */
static void crash_child(const char *addr, unsigned port, const char *path, int fd)
{
	char err[512], line[600];
	struct tp_server *s = open_durable(addr, port, path, 0, err, sizeof err);
	if (!s) {
		snprintf(line, sizeof line, "fail %.500s\n", err);
		(void)!write(fd, line, strlen(line));
		_exit(1);
	}
	(void)!write(fd, "ready\n", 6);
	struct exec x;
	exec_init(&x, 0, CR_SLOTS);
	struct tp_arrival a[64];
	unsigned done = 0;
	for (;;) {
		int n = tp->srv_poll(s, 0, a, 64);
		for (int i = 0; i < n; i++)
			exec_arrive(&x, a[i].slot);
		uint64_t slot;
		while (done < CR_EXEC && (slot = exec_next(&x)) != EXEC_NONE) {
			tp->srv_release(s, 0, slot);
			if (++done == CR_EXEC) {
				tp->srv_flush(s, 0);
				(void)!write(fd, "done\n", 5);
			}
		}
		tp->srv_flush(s, 0);
		sched_yield();
	}
}

static int cmd_crash(const char *addr, unsigned port, const char *path)
{
	char err[512], line[600], ep[128];
	uint8_t buf[4096];
	int pfd[2];
	if (mkdir(path, 0700) != 0 && errno != EEXIST) {
		notok("crash: pmem directory", "%s: %s", path, strerror(errno));
		return 1;
	}
	if (pipe(pfd) != 0) {
		notok("crash: pipe", "%s", strerror(errno));
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		crash_child(addr, port, path, pfd[1]);
	}
	close(pfd[1]);
	read_line(pfd[0], line, sizeof line, 30000);
	if (strncmp(line, "ready", 5) != 0) {
		notok("crash: durable server start", "%s", line[0] ? line : "no answer within 30 s");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	snprintf(ep, sizeof ep, "verbs:%s:%u", addr, port);
	struct tp_cli_conf cc = { .endpoint = ep, .system = "oq", .max_outstanding = 64, .durable = 1,
				  .connect_timeout_ms = 20000 };
	struct tp_client *c = tp->cli_open(&cc, err, sizeof err);
	if (!c) {
		notok("crash: client", "%s", err);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return 1;
	}
	uint32_t id = tp->cli_id(c);
	int seen[CR_SENT + 1] = { 0 }, nseen = 0;
	for (uint64_t seq = 1; seq <= CR_SENT; seq++) {
		uint64_t v = seq;
		uint32_t len = seq == CR_GET ? encode(buf, KV_OP_GET, 0, id, seq, "k", NULL, 0)
			: encode(buf, KV_OP_SET, KV_F_NILEXT | WIRE_F_DURABLE, id, seq, "k", &v, 8);
		if (post(c, buf, len, seq, err, sizeof err) != 0) {
			notok("crash: post", "%s", err);
			break;
		}
	}
	struct tp_event ev[16];
	for (uint64_t end = clock_ns() + 20000000000ull; nseen < CR_SENT && clock_ns() < end; ) {
		int n = tp->cli_poll(c, ev, 16);
		for (int i = 0; i < n; i++)
			if (ev[i].kind == TP_EV_DELIVERED && ev[i].seq >= 1 && ev[i].seq <= CR_SENT && !seen[ev[i].seq]) {
				seen[ev[i].seq] = 1;
				nseen++;
			}
	}
	json_t *cs = tp->cli_stats(c);
	int reads = (int)json_integer_value(json_object_get(json_object_get(cs, "qp_totals"), "durable_reads"));
	json_decref(cs);
	if (nseen == CR_SENT && reads == CR_SENT - 1)
		ok("crash: 40 requests committed, 39 of them by a durable READ, before the crash");
	else
		notok("crash: commits before the crash", "%d of %d DELIVERED, %d durable READs", nseen, CR_SENT, reads);
	read_line(pfd[0], line, sizeof line, 20000);
	if (strncmp(line, "done", 4) != 0)
		notok("crash: the dying server executed its share", "%s", line[0] ? line : "no answer within 20 s");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(pfd[0]);
	tp->cli_close(c);

	nrec = 0;
	struct tp_server *s = open_durable(addr, port + 1, path, 1, err, sizeof err);
	if (!s) {
		notok("crash: restart on the ring file", "%s", err);
		return 1;
	}
	int order_ok = nrec == CR_SENT - CR_EXEC - 1;
	for (unsigned i = 0, want = CR_EXEC + 1; order_ok && i < nrec; i++, want++) {
		if (want == CR_GET)
			want++;
		order_ok = rec_seq[i] == want;
	}
	json_t *ss = tp->srv_stats(s);
	json_t *rec = json_object_get(json_array_get(json_object_get(ss, "workers"), 0), "recovery");
	int skipped_get = (int)json_integer_value(json_object_get(rec, "skipped_non_nilext"));
	json_decref(ss);
	if (order_ok && skipped_get == 1)
		ok("crash: restart replays exactly the 24 committed, unexecuted SETs, in order, and skips the GET");
	else
		notok("crash: replay", "%u re-executed (want %d, seqs %d..%d without %d), first %" PRIu64
		      ", skipped non-nilext %d", nrec, CR_SENT - CR_EXEC - 1, CR_EXEC + 1, CR_SENT, CR_GET,
		      nrec ? rec_seq[0] : 0, skipped_get);
	tp->srv_close(s);
	nrec = 0;
	s = open_durable(addr, port + 2, path, 1, err, sizeof err);
	if (s && nrec == 0)
		ok("crash: after the replay and a clean stop, nothing is replayed again");
	else
		notok("crash: second restart", "%s", s ? "requests replayed twice" : err);
	if (s)
		tp->srv_close(s);
	return failed;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 5 && !strcmp(argv[1], "hwack"))
		return cmd_hwack(argv[2], (unsigned)atoi(argv[3]), argv[4]);
	if (argc >= 7 && !strcmp(argv[1], "order"))
		return cmd_order(argv[2], (unsigned)atoi(argv[3]), argv[4], (unsigned)atoi(argv[5]),
				 (unsigned)atoi(argv[6]), argc > 7 && !strcmp(argv[7], "deleg"));
	if (argc >= 4 && !strcmp(argv[1], "stamps"))
		return cmd_stamps(argv[2], (unsigned)atoi(argv[3]));
	if (argc >= 5 && !strcmp(argv[1], "crash"))
		return cmd_crash(argv[2], (unsigned)atoi(argv[3]), argv[4]);
	fprintf(stderr, "usage: vtest hwack ADDR PORT MODE | vtest order ADDR PORT MODE THREADS OPS [deleg] | "
		"vtest stamps ADDR PORT | vtest crash ADDR PORT PMEM_PATH\n");
	return 2;
}
