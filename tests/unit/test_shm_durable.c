/*
 * test_shm_durable.c - the durable shm transport across a kill -9 of the
 * server, for cases the crash tester reaches only by chance: a commit
 * published into a slot that the worker gave back without executing
 * anything in it (a retired slot whose writer gave up) must be replayed by
 * the next server.
 *
 * The server runs in a child process (a second server on the same
 * directory in this process would be refused by its lock), so that it can
 * be stopped and killed like a crashed one.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "clock.h"
#include "rmtree.h"
#include "server.h"
#include "tp_shm.h"
#include "wire.h"

#define SLOTS 4u

static int fill_conf(struct server_conf *c, const char *dir)
{
	memset(c, 0, sizeof *c);
	c->sys = system_find("oq");
	c->tp = &tp_shm_ops;
	c->be = backend_find("cache");
	c->tpc.workers = 1;
	c->tpc.ring_slots = SLOTS;
	c->tpc.slot_size = 512;
	c->tpc.system = "oq";
	c->tpc.durable = 1;
	c->tpc.pmem_path = dir;
	c->tpc.void_timeout_ns = 2000000ull;   /* 2 ms */
	c->bc.kind = "cache";
	c->bc.set.memory_mb = 16;
	return c->sys && c->be;
}

/* A durable server in a child process; its pid once it is ready, or -1. */
static pid_t spawn_server(const char *dir)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		struct server_conf c;
		char err[512];
		if (!fill_conf(&c, dir))
			_exit(2);
		struct server *s = server_start(&c, err, sizeof err);
		if (!s) {
			fprintf(stderr, "server_start: %s\n", err);
			_exit(3);
		}
		char ok = 1;
		if (write(p[1], &ok, 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	close(p[1]);
	char ok = 0;
	ssize_t n = pid > 0 ? read(p[0], &ok, 1) : -1;
	close(p[0]);
	if (n != 1) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return -1;
	}
	return pid;
}

static void crash(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static struct tp_client *connect_dur(const char *dir)
{
	char err[512];
	struct tp_cli_conf cc = { .endpoint = dir, .system = "oq", .max_outstanding = 64, .durable = 1 };
	struct tp_client *c = tp_shm_ops.cli_open(&cc, err, sizeof err);
	if (!c)
		fprintf(stderr, "cli_open: %s\n", err);
	return c;
}

static uint32_t enc(uint8_t *buf, struct tp_client *c, unsigned op, uint64_t seq, const char *key,
		    const char *val)
{
	struct wire_req h = {
		.op = (uint8_t)op, .flags = (op == KV_OP_SET ? KV_F_NILEXT | WIRE_F_DURABLE : 0),
		.key_len = (uint16_t)strlen(key), .val_len = val ? (uint32_t)strlen(val) : 0,
		.client_id = tp_shm_ops.cli_id(c), .worker = 0, .seq = seq,
	};
	return wire_encode_req(buf, 4096, &h, key, val);
}

/* get key: 0 with its value in val, 1 not found, -1 no answer. */
static int get(struct tp_client *c, uint64_t seq, const char *key, char *val, size_t cap)
{
	uint8_t buf[4096];
	char err[256];
	uint32_t len = enc(buf, c, KV_OP_GET, seq, key, NULL);
	uint64_t end = clock_ns() + 5000000000ull;
	int pr;
	while ((pr = tp_shm_ops.cli_post(c, 0, buf, len, seq, err, sizeof err)) == 1 && clock_ns() < end)
		usleep(100);
	if (pr != 0)
		return -1;
	struct tp_event ev[16];
	while (clock_ns() < end) {
		int n = tp_shm_ops.cli_poll(c, ev, 16);
		for (int i = 0; i < n; i++)
			if (ev[i].seq == seq && ev[i].kind == TP_EV_RESP) {
				if (ev[i].status != KV_OK)
					return 1;
				size_t l = ev[i].val_len < cap - 1 ? ev[i].val_len : cap - 1;
				memcpy(val, ev[i].val, l);
				val[l] = 0;
				return 0;
			}
	}
	return -1;
}

/* A durable server on rings in a new test directory in $TMPDIR (or /tmp):
 * its pid, or -1. */
static pid_t server_in_new_dir(char *dir, size_t dcap, char *ring, size_t rcap)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, dcap, "%s/oqb-test-durable-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	snprintf(ring, rcap, "%s/rings", dir);
	return spawn_server(ring);
}

/* Polls the rings' description until it contains what; 0 if it never did
 * within 4 s (state holds the last description). */
static int wait_state(const char *ring, const char *what, char *state, size_t cap)
{
	for (int i = 0; i < 4000; i++) {
		shm_describe_rings(ring, state, cap);
		if (strstr(state, what))
			return 1;
		usleep(1000);
	}
	return 0;
}

/*
 * A slot the worker gave back without executing anything in it: ticket 0
 * is claimed and written too slowly, so the worker retires its slot
 * (QUARANTINED); the writer then gives up (GONE), and when the worker's
 * scan comes round to ticket 0 + SLOTS it makes the slot free for that
 * ticket.  Tickets 1-3 are claimed and never published, so nothing is
 * executed and released meanwhile.  Ticket 4 is then published into the
 * recycled slot -- committed, since oq commits on the publish -- and the
 * server is killed before it executes it.  The next server must replay
 * it.  Before the fix, the replay window ended at SRQTail, which only the
 * release of an executed slot moved, so this commit was lost.
 */
TEST(commit_in_a_slot_recycled_without_execution_survives_a_crash)
{
	char dir[512], ring[600];
	pid_t pid = server_in_new_dir(dir, sizeof dir, ring, sizeof ring);
	REQUIRE(pid > 0, "the durable server did not start in %s", dir);
	struct tp_client *c = connect_dur(ring);
	REQUIRE(c);
	uint64_t t;
	char err[256], state[2048];
	uint8_t buf[4096];
	REQUIRE(shm_cli_claim(c, 0, 0, &t, err, sizeof err) == 0 && t == 0, "claim: %s", err);
	/* retired after 4 x 2 ms of writing */
	REQUIRE(wait_state(ring, "released 1,", state, sizeof state), "ticket 0 was not retired: %s", state);
	uint32_t len = enc(buf, c, KV_OP_SET, 1, "late", "x");
	CHECK(shm_cli_publish(c, 0, 0, buf, len) == 0, "a publish into a retired slot was accepted");
	for (unsigned i = 1; i < SLOTS; i++)
		REQUIRE(shm_cli_claim(c, 0, 0, &t, err, sizeof err) == 0 && t == i, "claim %u: %s", i, err);
	/* the scan passes 1-3 (claimed) and frees slot 0 for ticket 4 */
	REQUIRE(wait_state(ring, " 4..4 FREE(own)", state, sizeof state), "slot 0 was not freed for ticket 4: %s",
		state);
	kill(pid, SIGSTOP);
	len = enc(buf, c, KV_OP_SET, 4, "k4", "v4");
	REQUIRE(tp_shm_ops.cli_post(c, 0, buf, len, 4, err, sizeof err) == 0, "set k4 was not committed: %s", err);
	shm_describe_rings(ring, state, sizeof state);
	REQUIRE(strstr(state, " 4:PUB(4)"), "k4 did not take ticket 4: %s", state);
	tp_shm_ops.cli_close(c);
	crash(pid);

	pid = spawn_server(ring);
	REQUIRE(pid > 0, "the server did not restart on its rings");
	c = connect_dur(ring);
	REQUIRE(c);
	char got[64] = "";
	int r = get(c, 100, "k4", got, sizeof got);
	CHECK(r == 0 && strcmp(got, "v4") == 0, "the committed set k4=v4 read back as '%s' (%s); the rings "
	      "before the crash: %s", got, r < 0 ? "no answer" : r ? "not found" : "wrong value", state);
	tp_shm_ops.cli_close(c);
	crash(pid);
	rm_tree(dir);
}

/*
 * A client stalled between its claim and its write, across a restart (a
 * preempted thread on a loaded host): client A claims ticket 0 and the
 * server dies before A writes; the next server recovers and takes new
 * clients; B commits a set into ticket 0 of the new queue; only then does
 * A wake and write its request.  A's write must not reach B's slot.
 * Before the fix the new server reset the old ring file in place, so A's
 * mapping was the new ring: A's bytes replaced B's committed set (lost), or
 * tore it (never answered: the crash tester's "no response for get").
 */
TEST(a_writer_stalled_across_a_restart_cannot_touch_the_new_queue)
{
	char dir[512], ring[600];
	pid_t pid = server_in_new_dir(dir, sizeof dir, ring, sizeof ring);
	REQUIRE(pid > 0, "the durable server did not start in %s", dir);
	struct tp_client *a = connect_dur(ring);
	REQUIRE(a);
	kill(pid, SIGSTOP);   /* so that it cannot void A's claim */
	uint64_t t;
	char err[256], state[2048];
	uint8_t buf[4096];
	REQUIRE(shm_cli_claim(a, 0, 0, &t, err, sizeof err) == 0 && t == 0, "claim: %s", err);
	crash(pid);

	pid = spawn_server(ring);
	REQUIRE(pid > 0, "the server did not restart on its rings");
	struct tp_client *b = connect_dur(ring);
	REQUIRE(b);
	kill(pid, SIGSTOP);   /* B's set stays committed and unexecuted while A writes */
	uint32_t len = enc(buf, b, KV_OP_SET, 1, "kb", "committed");
	REQUIRE(tp_shm_ops.cli_post(b, 0, buf, len, 1, err, sizeof err) == 0, "set kb was not committed: %s", err);
	shm_describe_rings(ring, state, sizeof state);
	REQUIRE(strstr(state, " 0:PUB(0)"), "kb did not take ticket 0 of the new queue: %s", state);
	len = enc(buf, a, KV_OP_SET, 7, "stale-writer-key", "stale-writer-value-of-another-generation");
	CHECK(shm_cli_publish(a, 0, 0, buf, len) == 0, "the stalled writer's publish was accepted after a restart");
	CHECK(shm_cli_claim(a, 0, 0, &t, err, sizeof err) < 0 && strstr(err, "restarted"),
	      "the stalled writer was not told that the server restarted (%s)", err);
	kill(pid, SIGCONT);
	char got[64] = "";
	int r = get(b, 2, "kb", got, sizeof got);
	CHECK(r == 0 && strcmp(got, "committed") == 0, "the committed set kb read back as '%s' (%s): the stalled "
	      "writer's bytes reached the new queue", got, r < 0 ? "no answer" : r ? "not found" : "wrong value");
	r = get(b, 3, "stale-writer-key", got, sizeof got);
	CHECK(r == 1, "the stalled writer's uncommitted set was executed (%s)", r < 0 ? "no answer" : got);
	tp_shm_ops.cli_close(a);
	tp_shm_ops.cli_close(b);
	crash(pid);
	rm_tree(dir);
}

UNIT_MAIN(commit_in_a_slot_recycled_without_execution_survives_a_crash,
	  a_writer_stalled_across_a_restart_cannot_touch_the_new_queue)
