/*
 * test_shm.c - the shm transport and the server together, in one process:
 * out-of-order publication executes in ticket order, read-your-writes
 * across threads and workers (Case 3 of the OQ proof), a client that dies
 * between claim and publish does not stall the worker, malformed
 * requests are rejected without stopping the server, the mailbox (records
 * without a head, version 2) wraps without losing, repeating or inventing
 * a response, and a full ring says busy and recovers.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "clock.h"
#include "server.h"
#include "tp_shm.h"
#include "wire.h"

/* manual: no worker threads; the test runs server_step itself */
static struct server *start_server(const char *system, const char *backend, unsigned workers,
				   uint64_t void_ms, uint64_t service_ns, int manual)
{
	char err[512];
	struct server_conf c;
	memset(&c, 0, sizeof c);
	c.manual = manual;
	c.sys = system_find(system);
	c.tp = &tp_shm_ops;
	c.be = backend_find(backend);
	c.tpc.workers = workers;
	c.tpc.ring_slots = 64;
	c.tpc.slot_size = 2048;
	c.tpc.system = system;
	c.tpc.void_timeout_ns = void_ms * 1000000ull;
	c.bc.kind = backend;
	c.bc.set.memory_mb = 16;
	c.bc.set.service_ns = service_ns;
	struct server *s = server_start(&c, err, sizeof err);
	if (!s)
		fprintf(stderr, "server_start: %s\n", err);
	return s;
}

static struct server *start(const char *system, const char *backend, unsigned workers,
			    uint64_t void_ms, uint64_t service_ns)
{
	return start_server(system, backend, workers, void_ms, service_ns, 0);
}

static struct tp_client *connect_to(struct server *s, const char *system)
{
	char err[512];
	struct tp_cli_conf cc = { .endpoint = server_endpoint(s), .system = system, .max_outstanding = 64 };
	struct tp_client *c = tp_shm_ops.cli_open(&cc, err, sizeof err);
	if (!c)
		fprintf(stderr, "cli_open: %s\n", err);
	return c;
}

static uint32_t enc(uint8_t *buf, struct tp_client *c, unsigned op, unsigned worker, uint64_t seq,
		    const char *key, const char *val)
{
	struct wire_req h = {
		.op = (uint8_t)op, .flags = (op == KV_OP_SET || op == KV_OP_DEL) ? KV_F_NILEXT : 0,
		.key_len = (uint16_t)strlen(key), .val_len = val ? (uint32_t)strlen(val) : 0,
		.client_id = tp_shm_ops.cli_id(c), .worker = worker, .seq = seq,
	};
	return wire_encode_req(buf, 4096, &h, key, val);
}

/* Waits for an event of `kind` for seq; copies a response value. */
static int wait_event(struct tp_client *c, uint64_t seq, unsigned kind, char *val, size_t cap,
		      uint32_t *status, uint64_t timeout_ms)
{
	uint64_t end = clock_ns() + timeout_ms * 1000000ull;
	struct tp_event ev[16];
	while (clock_ns() < end) {
		int n = tp_shm_ops.cli_poll(c, ev, 16);
		for (int i = 0; i < n; i++)
			if (ev[i].seq == seq && ev[i].kind == kind) {
				if (val) {
					size_t l = ev[i].val_len < cap - 1 ? ev[i].val_len : cap - 1;
					memcpy(val, ev[i].val, l);
					val[l] = 0;
				}
				if (status)
					*status = ev[i].status;
				return 0;
			}
	}
	return -1;
}

static json_int_t worker_stat(struct server *s, unsigned w, const char *key)
{
	json_t *j = server_stats(s);
	json_int_t v = json_integer_value(json_object_get(json_array_get(json_object_get(j, "per_worker"), w), key));
	json_decref(j);
	return v;
}

/* Waits (up to 5 s) until worker 0's transport has reported n arrivals. */
static int wait_arrivals(struct server *s, json_int_t n)
{
	for (int i = 0; i < 5000; i++) {
		json_t *j = server_stats(s);
		json_int_t a = json_integer_value(json_object_get(json_array_get(
			json_object_get(json_object_get(j, "transport"), "workers"), 0), "arrivals"));
		json_decref(j);
		if (a >= n)
			return 1;
		usleep(1000);
	}
	return 0;
}

/* Publish tickets 2,1,0 in reverse: the server must execute 0,1,2.  With
 * sets then a get per key, a wrong order would return the wrong value. */
TEST(out_of_order_publish_executes_in_ticket_order)
{
	struct server *s = start("rawrpc", "cache", 1, 1000, 0);
	REQUIRE(s);
	struct tp_client *c = connect_to(s, "rawrpc");
	REQUIRE(c);
	uint8_t b[3][4096];
	uint32_t l[3];
	uint64_t t[3];
	char err[256];
	l[0] = enc(b[0], c, KV_OP_SET, 0, 1, "k", "first");
	l[1] = enc(b[1], c, KV_OP_SET, 0, 2, "k", "second");
	l[2] = enc(b[2], c, KV_OP_GET, 0, 3, "k", NULL);
	for (int i = 0; i < 3; i++)
		REQUIRE(shm_cli_claim(c, 0, l[i], &t[i], err, sizeof err) == 0, "%s", err);
	CHECK(t[0] + 1 == t[1] && t[1] + 1 == t[2]);
	/* get first, then the second set, then the first set; each time wait
	 * until the worker has seen the arrival, so the order is certain */
	CHECK(shm_cli_publish(c, 0, t[2], b[2], l[2]) == 1);
	CHECK(wait_arrivals(s, 1), "worker never saw ticket 2");
	CHECK(shm_cli_publish(c, 0, t[1], b[1], l[1]) == 1);
	CHECK(wait_arrivals(s, 2), "worker never saw ticket 1");
	CHECK(shm_cli_publish(c, 0, t[0], b[0], l[0]) == 1);
	char val[64];
	uint32_t st = 99;
	CHECK(wait_event(c, 3, TP_EV_RESP, val, sizeof val, &st, 2000) == 0);
	CHECK(st == KV_OK && strcmp(val, "second") == 0, "get returned status %u value '%s'", st, val);
	server_stop(s);
	CHECK(worker_stat(s, 0, "out_of_order_arrivals") >= 1);
	tp_shm_ops.cli_close(c);
	server_destroy(s);
}

struct ryw_arg {
	struct server *s;
	const char *system;
	int id, rounds, bad, late;
};

static void *ryw_thread(void *p)
{
	struct ryw_arg *a = p;
	struct tp_client *c = connect_to(a->s, a->system);
	uint8_t buf[4096];
	char err[256], key[32], val[32], got[64];
	if (!c) {
		a->bad = -1;
		return NULL;
	}
	unsigned workers = tp_shm_ops.cli_workers(c);
	uint64_t seq = 0;
	for (int i = 0; i < a->rounds; i++) {
		snprintf(key, sizeof key, "t%d-k%d", a->id, i % 7);
		snprintf(val, sizeof val, "v%d", i);
		unsigned w = (unsigned)(i + a->id) % workers;   /* any fixed partition per key would do */
		w = (unsigned)((i % 7) + a->id) % workers;
		uint32_t len = enc(buf, c, KV_OP_SET, w, ++seq, key, val);
		if (tp_shm_ops.cli_post(c, w, buf, len, seq, err, sizeof err) != 0 ||
		    wait_event(c, seq, TP_EV_DELIVERED, NULL, 0, NULL, 10000) != 0) {
			a->late++;
			continue;
		}
		/* committed (oq: on delivery); the get must see it */
		len = enc(buf, c, KV_OP_GET, w, ++seq, key, NULL);
		uint32_t st = 99;
		if (tp_shm_ops.cli_post(c, w, buf, len, seq, err, sizeof err) != 0 ||
		    wait_event(c, seq, TP_EV_RESP, got, sizeof got, &st, 10000) != 0)
			a->late++;   /* no answer in 10 s (a loaded machine), not a stale read */
		else if (st != KV_OK || strcmp(got, val) != 0)
			a->bad++;
	}
	tp_shm_ops.cli_close(c);
	return NULL;
}

TEST(read_your_writes_across_threads_and_workers)
{
	struct server *s = start("oq", "cache", 3, 1000, 0);
	REQUIRE(s);
	pthread_t th[4];
	struct ryw_arg a[4];
	for (int i = 0; i < 4; i++) {
		a[i] = (struct ryw_arg){ .s = s, .system = "oq", .id = i, .rounds = 300 };
		pthread_create(&th[i], NULL, ryw_thread, &a[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK(a[i].bad == 0, "thread %d: %d reads did not see the committed write", i, a[i].bad);
		CHECK(a[i].late == 0, "thread %d: %d requests unanswered in 10 s", i, a[i].late);
	}
	server_stop(s);
	json_t *j = server_stats(s);
	CHECK(json_integer_value(json_object_get(j, "executed")) == 4 * 300 * 2);
	json_decref(j);
	server_destroy(s);
}

/* A client that claims a slot and dies must not stall the worker; a later
 * request is served once the claim is voided. */
TEST(client_killed_mid_claim_does_not_stall)
{
	struct server *s = start("rawrpc", "null", 1, 30, 0);
	REQUIRE(s);
	pid_t pid = fork();
	if (pid == 0) {
		struct tp_client *c = connect_to(s, "rawrpc");
		uint64_t t;
		char err[64];
		if (c && shm_cli_claim(c, 0, 0, &t, err, sizeof err) == 0)
			kill(getpid(), SIGKILL);   /* dies holding the claim */
		_exit(1);
	}
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child did not die holding a claim");
	struct tp_client *c = connect_to(s, "rawrpc");
	REQUIRE(c);
	uint8_t buf[4096];
	char err[256];
	uint32_t len = enc(buf, c, KV_OP_ECHO, 0, 1, "k", "hello");
	uint64_t t0 = clock_ns();
	REQUIRE(tp_shm_ops.cli_post(c, 0, buf, len, 1, err, sizeof err) == 0, "%s", err);
	char got[64];
	CHECK(wait_event(c, 1, TP_EV_RESP, got, sizeof got, NULL, 3000) == 0, "no response after a dead claim");
	uint64_t waited = clock_ns() - t0;
	CHECK(waited >= 30000000ull, "answered in %llu ns, before the void timeout", (unsigned long long)waited);
	server_stop(s);
	CHECK(worker_stat(s, 0, "voided") == 1);
	tp_shm_ops.cli_close(c);
	server_destroy(s);
}

/* A late publisher whose claim was voided learns it was not committed. */
TEST(late_publish_after_void_is_refused)
{
	struct server *s = start("rawrpc", "null", 1, 10, 0);
	REQUIRE(s);
	struct tp_client *c = connect_to(s, "rawrpc");
	REQUIRE(c);
	uint8_t buf[4096];
	char err[256];
	uint64_t t;
	REQUIRE(shm_cli_claim(c, 0, 0, &t, err, sizeof err) == 0);
	usleep(200000);   /* the worker voids the stalled claim */
	uint32_t len = enc(buf, c, KV_OP_ECHO, 0, 7, "k", "late");
	CHECK(shm_cli_publish(c, 0, t, buf, len) == 0, "publish after void must fail");
	/* normal post still works */
	REQUIRE(tp_shm_ops.cli_post(c, 0, buf, len, 7, err, sizeof err) == 0);
	CHECK(wait_event(c, 7, TP_EV_RESP, NULL, 0, NULL, 2000) == 0);
	server_stop(s);
	tp_shm_ops.cli_close(c);
	server_destroy(s);
}

/* Corrupt and oversized requests are rejected, never executed or
 * answered, and the server keeps serving. */
TEST(bad_checksum_and_oversized_rejected)
{
	struct server *s = start("rawrpc", "cache", 1, 1000, 0);
	REQUIRE(s);
	struct tp_client *c = connect_to(s, "rawrpc");
	REQUIRE(c);
	uint8_t buf[4096];
	char err[256];
	uint64_t t;
	/* 1: flipped bit in the value -> checksum mismatch */
	uint32_t len = enc(buf, c, KV_OP_SET, 0, 1, "k", "poison");
	buf[len - 20] ^= 0x10;
	REQUIRE(shm_cli_claim(c, 0, len, &t, err, sizeof err) == 0);
	CHECK(shm_cli_publish(c, 0, t, buf, len) == 1);
	/* 2: size field claims more than the slot holds */
	len = enc(buf, c, KV_OP_SET, 0, 2, "k", "big");
	buf[8] = 0xff; buf[9] = 0xff; buf[10] = 0xff; buf[11] = 0x0f;
	REQUIRE(shm_cli_claim(c, 0, len, &t, err, sizeof err) == 0);
	CHECK(shm_cli_publish(c, 0, t, buf, len) == 1);
	/* 3: garbage */
	for (int i = 0; i < 128; i++)
		buf[i] = (uint8_t)(i * 37 + 11);
	REQUIRE(shm_cli_claim(c, 0, 0, &t, err, sizeof err) == 0);
	CHECK(shm_cli_publish(c, 0, t, buf, 128) == 1);
	/* then a good get: the poisoned set must not have been executed */
	len = enc(buf, c, KV_OP_GET, 0, 4, "k", NULL);
	REQUIRE(tp_shm_ops.cli_post(c, 0, buf, len, 4, err, sizeof err) == 0);
	uint32_t st = 99;
	CHECK(wait_event(c, 4, TP_EV_RESP, NULL, 0, &st, 2000) == 0);
	CHECK(st == KV_NOT_FOUND, "get after rejected sets: status %u, expected not found", st);
	/* no response was sent for any of the bad ones */
	struct tp_event ev[8];
	usleep(20000);
	CHECK(tp_shm_ops.cli_poll(c, ev, 8) == 0);
	server_stop(s);
	CHECK(worker_stat(s, 0, "rejected") == 3);
	CHECK(worker_stat(s, 0, "executed") == 1);
	tp_shm_ops.cli_close(c);
	server_destroy(s);
}

/* Commit rules: what each system sends for a nilext set. */
TEST(commit_rules_per_system)
{
	const char *sys[3] = { "oq", "rawrpc", "deferred" };
	const int want_ack[3] = { 0, 0, 1 }, want_resp[3] = { 0, 1, 0 };
	for (int i = 0; i < 3; i++) {
		struct server *s = start(sys[i], "null", 1, 1000, 0);
		REQUIRE(s);
		struct tp_client *c = connect_to(s, sys[i]);
		REQUIRE(c);
		uint8_t buf[4096];
		char err[256];
		uint32_t len = enc(buf, c, KV_OP_SET, 0, 1, "k", "v");
		REQUIRE(tp_shm_ops.cli_post(c, 0, buf, len, 1, err, sizeof err) == 0);
		len = enc(buf, c, KV_OP_GET, 0, 2, "k", NULL);
		REQUIRE(tp_shm_ops.cli_post(c, 0, buf, len, 2, err, sizeof err) == 0);
		int acks = 0, resps = 0, deliv = 0, get_resp = 0;
		/* until the get is answered (it executes after the set), then a
		 * little longer to catch anything extra */
		uint64_t end = clock_ns() + 5000000000ull;
		struct tp_event ev[16];
		while (clock_ns() < end) {
			if (get_resp && end > clock_ns() + 50000000ull)
				end = clock_ns() + 50000000ull;
			int n = tp_shm_ops.cli_poll(c, ev, 16);
			for (int k = 0; k < n; k++) {
				if (ev[k].kind == TP_EV_DELIVERED) deliv++;
				if (ev[k].seq == 1 && ev[k].kind == TP_EV_ACK) acks++;
				if (ev[k].seq == 1 && ev[k].kind == TP_EV_RESP) resps++;
				if (ev[k].seq == 2 && ev[k].kind == TP_EV_RESP) get_resp++;
			}
		}
		CHECK(deliv == 2, "%s: %d deliveries", sys[i], deliv);
		CHECK(acks == want_ack[i], "%s: %d ACKs for the set", sys[i], acks);
		CHECK(resps == want_resp[i], "%s: %d responses for the set", sys[i], resps);
		CHECK(get_resp == 1, "%s: get answered %d times", sys[i], get_resp);
		server_stop(s);
		tp_shm_ops.cli_close(c);
		server_destroy(s);
	}
}

/* Posts n echo requests of vlen-byte values (content from seq), at most
 * `window` outstanding, retrying on busy; checks every response arrives
 * once, in order (one worker answers in ticket order), with its own value.
 * Returns the number of busy posts, or -1 after a failed check. */
static long echo_stream(struct tp_client *c, uint64_t n, unsigned vlen, unsigned window)
{
	static uint8_t buf[4096];
	char val[2048], err[256];
	struct tp_event ev[64];
	uint64_t posted = 0, answered = 0;
	long busy = 0;
	uint64_t end = clock_ns() + 60000000000ull;
	while (answered < n && clock_ns() < end) {
		while (posted < n && posted - answered < window) {
			uint64_t seq = posted + 1;
			for (unsigned i = 0; i < vlen; i++)
				val[i] = (char)('a' + (seq * 7 + i) % 26);
			val[vlen] = 0;
			uint32_t len = enc(buf, c, KV_OP_ECHO, 0, seq, "k", val);
			int r = tp_shm_ops.cli_post(c, 0, buf, len, seq, err, sizeof err);
			if (r == 1) {
				busy++;
				break;
			}
			if (r != 0) {
				CHECK(0, "post %llu: %s", (unsigned long long)seq, err);
				return -1;
			}
			posted++;
		}
		int k = tp_shm_ops.cli_poll(c, ev, 64);
		for (int i = 0; i < k; i++) {
			if (ev[i].kind != TP_EV_RESP)
				continue;
			uint64_t want = answered + 1;
			if (ev[i].seq != want || ev[i].val_len != vlen) {
				CHECK(0, "response %llu: seq %llu, %u B (expected seq %llu, %u B)",
				      (unsigned long long)answered, (unsigned long long)ev[i].seq,
				      ev[i].val_len, (unsigned long long)want, vlen);
				return -1;
			}
			for (unsigned b = 0; b < vlen; b++)
				if (ev[i].val[b] != (uint8_t)('a' + (want * 7 + b) % 26)) {
					CHECK(0, "response %llu: byte %u differs", (unsigned long long)want, b);
					return -1;
				}
			answered++;
		}
	}
	CHECK(answered == n, "%llu of %llu answered in 60 s", (unsigned long long)answered,
	      (unsigned long long)n);
	usleep(20000);
	int extra = 0, k;
	while ((k = tp_shm_ops.cli_poll(c, ev, 64)) > 0)
		for (int i = 0; i < k; i++)
			extra += ev[i].kind == TP_EV_RESP;
	CHECK(extra == 0, "%d responses after the last one", extra);
	return answered == n && extra == 0 ? busy : -1;
}

/* 40,000 responses of 1,040 B records are 2.5 laps of a 16 MiB mailbox:
 * every wrap must lead the client to the next record, and bytes of an
 * older lap must never be read as a record (the worker zeroes the word
 * after each record before it publishes the record). */
TEST(mailbox_wraps_without_phantom_records)
{
	struct server *s = start("rawrpc", "null", 1, 1000, 0);
	REQUIRE(s);
	struct tp_client *c = connect_to(s, "rawrpc");
	REQUIRE(c);
	CHECK(echo_stream(c, 40000, 1000, 32) >= 0);
	server_stop(s);
	CHECK(worker_stat(s, 0, "responses_sent") == 40000);
	tp_shm_ops.cli_close(c);
	server_destroy(s);
}

/* With a 100 us service time a 64-slot ring fills: posts say busy (no
 * ticket taken), and once the worker releases slots (published at its
 * flush) they go through; nothing is lost or repeated. */
TEST(full_ring_says_busy_then_recovers)
{
	struct server *s = start("rawrpc", "null", 1, 1000, 100000);
	REQUIRE(s);
	struct tp_client *c = connect_to(s, "rawrpc");
	REQUIRE(c);
	long busy = echo_stream(c, 300, 16, 300);
	CHECK(busy > 0, "the ring never said busy (%ld): the test did not fill it", busy);
	server_stop(s);
	CHECK(worker_stat(s, 0, "executed") == 300);
	tp_shm_ops.cli_close(c);
	server_destroy(s);
}

static json_int_t transport_stat(struct server *s, const char *key)
{
	json_t *j = server_stats(s);
	json_int_t v = json_integer_value(json_object_get(json_array_get(
		json_object_get(json_object_get(j, "transport"), "workers"), 0), key));
	json_decref(j);
	return v;
}

/*
 * Claims ticket 0 (an echo encoded into buf, *len bytes) and never
 * publishes it; steps the manual worker until it quarantines the slot, at
 * most 5 s.  Returns the claim's result: 0 and *t == 0 expected.
 */
static int stall_ticket0(struct server *s, struct tp_client *c, uint8_t *buf, uint32_t *len, uint64_t *t,
			 char *err, size_t errlen)
{
	*len = enc(buf, c, KV_OP_ECHO, 0, 1, "k", "stalled");
	int r = shm_cli_claim(c, 0, *len, t, err, errlen);
	for (int i = 0; r == 0 && i < 5000 && transport_stat(s, "quarantined") == 0; i++) {
		server_step(s, 0);
		usleep(1000);
	}
	return r;
}

/*
 * Ticket 0's writer stalls past 4 x void_timeout: the worker quarantines
 * slot 0.  If the writer then tries to publish (it is alive, only slow),
 * its failed publish hands the slot back, and the next lap (ticket 64 of
 * a 64-slot ring) is claimable again; if it never comes back (it died),
 * ticket 64 is skipped and the client gets 65.  Before the hand-back every
 * quarantined slot stayed retired until a restart: slow durable writers
 * (a persist longer than 4 x void_timeout on a loaded disk) retired one
 * slot after another until the crash test's ring stayed full.  The worker
 * runs by hand (server_step), so the order of events is fixed.
 */
static void lap_after_quarantine(int writer_gives_up, json_int_t *quarantined, uint64_t *next)
{
	struct server *s = start_server("rawrpc", "null", 1, 1, 0, 1);
	REQUIRE(s);
	struct tp_client *c = connect_to(s, "rawrpc");
	REQUIRE(c);
	uint8_t buf[4096];
	char err[256];
	uint64_t t;
	uint32_t len;
	REQUIRE(stall_ticket0(s, c, buf, &len, &t, err, sizeof err) == 0 && t == 0, "%s", err);
	*quarantined = transport_stat(s, "quarantined");
	if (writer_gives_up)
		CHECK(shm_cli_publish(c, 0, t, buf, len) == 0, "a publish after quarantine must fail");
	/* tickets 1..63, published and executed in order */
	for (uint64_t want = 1; want < 64; want++) {
		len = enc(buf, c, KV_OP_ECHO, 0, want + 1, "k", "v");
		REQUIRE(shm_cli_claim(c, 0, len, &t, err, sizeof err) == 0 && t == want, "ticket %llu, want %llu",
			(unsigned long long)t, (unsigned long long)want);
		REQUIRE(shm_cli_publish(c, 0, t, buf, len) == 1);
	}
	while (server_step(s, 0) > 0)
		;
	server_step(s, 0);   /* the scan looks at ticket 64 */
	REQUIRE(shm_cli_claim(c, 0, 0, &t, err, sizeof err) == 0, "%s", err);
	/* the ring still works: this ticket is executed and answered */
	len = enc(buf, c, KV_OP_ECHO, 0, 100, "k", "after");
	REQUIRE(shm_cli_publish(c, 0, t, buf, len) == 1);
	for (int i = 0; i < 1024; i++)   /* the worker reads the shared tail every 256th pass */
		server_step(s, 0);
	struct tp_event ev[16];
	int n, answered = 0;
	while ((n = tp_shm_ops.cli_poll(c, ev, 16)) > 0)
		for (int i = 0; i < n; i++)
			answered += ev[i].kind == TP_EV_RESP && ev[i].seq == 100;
	CHECK(answered == 1, "the request after the quarantine was answered %d times", answered);
	tp_shm_ops.cli_close(c);
	server_destroy(s);
	*next = t;
}

TEST(quarantined_slot_returns_when_its_writer_gives_up)
{
	json_int_t q = 0;
	uint64_t t = UINT64_MAX;
	lap_after_quarantine(1, &q, &t);
	CHECK(q == 1, "the stalled writer was not quarantined (%lld)", (long long)q);
	CHECK(t == 64, "slot 0 stayed retired after its writer gave up: the next claim got ticket %llu, not 64",
	      (unsigned long long)t);
	/* control: a writer that never comes back keeps its slot retired */
	q = 0;
	t = UINT64_MAX;
	lap_after_quarantine(0, &q, &t);
	CHECK(q == 1);
	CHECK(t == 65, "a slot whose writer may still write was reused: ticket %llu", (unsigned long long)t);
}

/* Posts r[0..n) with cli_post_many until all are sent, stepping the
 * (manual) worker while the ring is full; returns the batch calls' first
 * result, or -1 after a failed post. */
static int post_many_all(struct server *s, struct tp_client *c, const struct tp_req *r, int n)
{
	char err[256];
	int first = -2, done = 0;
	for (int tries = 0; done < n && tries < 100000; tries++) {
		int x = tp_shm_ops.cli_post_many(c, 0, r + done, n - done, err, sizeof err);
		if (x < 0) {
			CHECK(0, "post_many: %s", err);
			return -1;
		}
		if (first == -2)
			first = x;
		done += x;
		if (done < n)
			server_step(s, 0);
	}
	CHECK(done == n, "only %d of %d requests were sent", done, n);
	return first;
}

/*
 * cli_post_many keeps the order it was given.  Slot 0 is retired (its
 * writer stalled past the quarantine and never came back), so ticket 64
 * of a batch of four sets to one key is void: the sets must take tickets
 * 65-68, in order, and a get after them must see the last.  Then a batch
 * larger than the ring's room sends what fits, says how many, and the rest
 * goes once the worker has made room; every echo is answered once, in
 * order.
 */
TEST(post_many_keeps_order_past_void_tickets_and_a_full_ring)
{
	struct server *s = start_server("rawrpc", "cache", 1, 1, 0, 1);
	REQUIRE(s);
	struct tp_client *c = connect_to(s, "rawrpc");
	REQUIRE(c);
	static uint8_t buf[80][256];
	char err[256];
	uint64_t t;
	uint32_t len;
	REQUIRE(stall_ticket0(s, c, buf[0], &len, &t, err, sizeof err) == 0 && t == 0, "%s", err);
	REQUIRE(transport_stat(s, "quarantined") == 1, "slot 0 was not retired");
	/* tickets 1..63, as one batch (the ring's room is 63: slot 0 is
	 * claimed), executed in order */
	struct tp_req r[80];
	for (int i = 0; i < 63; i++) {
		len = enc(buf[i], c, KV_OP_ECHO, 0, 2 + (uint64_t)i, "e", "v");
		r[i] = (struct tp_req){ .buf = buf[i], .len = len, .seq = 2 + (uint64_t)i };
	}
	CHECK(post_many_all(s, c, r, 63) == 63);
	while (server_step(s, 0) > 0)
		;
	server_step(s, 0);
	const char *vals[4] = { "a", "b", "c", "d" };
	for (int i = 0; i < 4; i++) {
		len = enc(buf[i], c, KV_OP_SET, 0, 100 + (uint64_t)i, "k", vals[i]);
		r[i] = (struct tp_req){ .buf = buf[i], .len = len, .seq = 100 + (uint64_t)i };
	}
	json_t *st0 = tp_shm_ops.cli_stats(c);
	json_int_t q0 = json_integer_value(json_object_get(st0, "retries_quarantined"));
	json_decref(st0);
	CHECK(post_many_all(s, c, r, 4) == 4);
	json_t *st1 = tp_shm_ops.cli_stats(c);
	json_int_t q1 = json_integer_value(json_object_get(st1, "retries_quarantined"));
	json_decref(st1);
	CHECK(q1 == q0 + 1, "the batch met %lld void tickets, expected 1", (long long)(q1 - q0));
	len = enc(buf[4], c, KV_OP_GET, 0, 104, "k", NULL);
	REQUIRE(tp_shm_ops.cli_post(c, 0, buf[4], len, 104, err, sizeof err) == 0, "%s", err);
	/* deliveries in the order posted, and the get sees the last set */
	uint64_t next_deliv = 2;
	int got_get = 0;
	char val[64] = "";
	for (int i = 0; i < 20000 && !got_get; i++) {
		server_step(s, 0);
		struct tp_event ev[64];
		int n = tp_shm_ops.cli_poll(c, ev, 64);
		for (int k = 0; k < n; k++) {
			if (ev[k].kind == TP_EV_DELIVERED) {
				CHECK(ev[k].seq == next_deliv, "delivered seq %llu, expected %llu",
				      (unsigned long long)ev[k].seq, (unsigned long long)next_deliv);
				next_deliv = next_deliv == 64 ? 100 : next_deliv + 1;
			}
			if (ev[k].kind == TP_EV_RESP && ev[k].seq == 104) {
				size_t l = ev[k].val_len < sizeof val - 1 ? ev[k].val_len : sizeof val - 1;
				memcpy(val, ev[k].val, l);
				val[l] = 0;
				got_get = 1;
			}
		}
	}
	CHECK(got_get && strcmp(val, "d") == 0, "the get after the batch returned '%s', expected 'd'", val);

	/* a batch of 80 echoes: 64 fit, then the rest once the worker ran */
	while (server_step(s, 0) > 0)
		;
	struct tp_event ev[64];
	while (tp_shm_ops.cli_poll(c, ev, 64) > 0)
		;
	for (int i = 0; i < 80; i++) {
		len = enc(buf[i], c, KV_OP_ECHO, 0, 200 + (uint64_t)i, "e", "w");
		r[i] = (struct tp_req){ .buf = buf[i], .len = len, .seq = 200 + (uint64_t)i };
	}
	int x = tp_shm_ops.cli_post_many(c, 0, r, 64, err, sizeof err);
	CHECK(x > 0 && x <= 64, "the first batch sent %d", x);
	int y = tp_shm_ops.cli_post_many(c, 0, r + x, 80 - x, err, sizeof err);
	CHECK(y == 0, "a batch into a full ring sent %d, expected 0 (busy)", y);
	CHECK(post_many_all(s, c, r + x, 80 - x) >= 0);
	uint64_t next_resp = 200;
	for (int i = 0; i < 20000 && next_resp < 280; i++) {
		server_step(s, 0);
		int n = tp_shm_ops.cli_poll(c, ev, 64);
		for (int k = 0; k < n; k++)
			if (ev[k].kind == TP_EV_RESP) {
				CHECK(ev[k].seq == next_resp, "response seq %llu, expected %llu",
				      (unsigned long long)ev[k].seq, (unsigned long long)next_resp);
				next_resp = ev[k].seq + 1;
			}
	}
	CHECK(next_resp == 280, "answered up to seq %llu of 279", (unsigned long long)next_resp - 1);
	tp_shm_ops.cli_close(c);
	server_destroy(s);
}

UNIT_MAIN(out_of_order_publish_executes_in_ticket_order, read_your_writes_across_threads_and_workers,
	  client_killed_mid_claim_does_not_stall, late_publish_after_void_is_refused,
	  bad_checksum_and_oversized_rejected, commit_rules_per_system,
	  mailbox_wraps_without_phantom_records, full_ring_says_busy_then_recovers,
	  quarantined_slot_returns_when_its_writer_gives_up,
	  post_many_keeps_order_past_void_tickets_and_a_full_ring)
