/*
 * crashtest.c - crash injection for the durable OQ path (paper §5.3).
 *
 * It runs bin/oqb-server --system oq --durable --backend pmkv (or rocksdb,
 * with its write-ahead log on) on shm or verbs, and
 * client threads in this process that write per-key increasing sequence
 * numbers (each thread owns its keys, so "increasing" is well defined) and
 * log every put that committed: for oq on shm, a put commits when its
 * publish succeeds after the request was persisted (the READ-after-SEND
 * analogue); for oq on verbs, when the RDMA READ that follows its SEND on
 * the same QP completes (the server's receive ring is a libpmem-mapped
 * file); for deferred, when the server's software ACK arrives, which the
 * server sends only once the request is persistent in its ring.  On verbs
 * the client threads may share one QP per worker (delegation, §5.2.2).
 * A killer sends SIGKILL to the server at random instants; the server is
 * restarted, recovers its rings, and the clients reconnect and go on.  At
 * the end every key is read back through the server: the sequence number
 * read must be at least the last committed one.  Anything less is a lost
 * commit.
 *
 * Config (JSON; unknown keys are errors):
 *   {"name":"crash","crashes":50,"workers":2,"threads":2,"keys_per_thread":64,
 *    "value_size":32,"kill_after_ms":[5,80],"ring_slots":256,"pool_mb":16,
 *    "seed":1,"dir":"/dev/shm/..."(optional),"restart_timeout_s":30,
 *    "backend":"pmkv"|"rocksdb","rocksdb_sync":false,
 *    "transport":"shm"|"verbs","system":"oq"|"deferred","delegation":false,
 *    "verbs":{"addr":"198.18.0.1","port":7470,"recv_mode":"srq","device":...},
 *    "stall_ms":[1,10],"put_timeout_ms":20,"server_idle_nap_us":0,"pause_wait_ms":10000}
 * Output: a JSON report on stdout and in --out FILE (default
 * results/NAME-STAMP/crashtest.json), progress on stderr.  The server's
 * log (stderr of every start) is kept beside the report, FILE's name with
 * .server.log for .json, and the report's "server_log" names it.
 * Exit status: 0 when every crash was survived and nothing was lost.
 *
 * Files: the rings and pools live in the config's "dir", which is the
 * user's and is left as it is, or in a directory of the tester's own,
 * BASE/oqb-crash-PID-XXXXXX (lib/rundir.h: BASE is the shared-memory
 * folder), removed at the end, whether the test passed or not.  A tester
 * killed before its end cannot remove it: its lock is then free, and the
 * next crash test removes it.  The server it runs is started with a
 * parent-death signal (SIGKILL), so it never outlives the tester.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "conf.h"
#include "crashtest.h"
#include "settings.h"
#include "kvop.h"
#include "rundir.h"
#include "rng.h"
#include "session.h"

struct ct_conf {
	const char *name;
	int crashes, workers, threads, keys, value_size, ring_slots, pool_mb;
	double kill_min_ms, kill_max_ms, restart_timeout_s;
	uint64_t seed;
	const char *dir;
	const char *backend;          /* pmkv or rocksdb */
	int rocksdb_sync;
	const char *transport;        /* shm or verbs */
	const char *system;           /* oq or deferred */
	int delegation;               /* verbs: threads share one QP per worker */
	const char *addr, *recv_mode, *device;   /* verbs */
	int port;
	double stall_min_ms, stall_max_ms, put_timeout_ms, idle_nap_us, pause_wait_ms;
};

struct ct_thread {
	struct ct_run *run;
	unsigned idx;
	pthread_t th;
	uint64_t *sent, *committed;   /* per key: last sent / last committed seq */
	uint64_t commits, failures, reconnects;
	struct rng rng;
};

struct ct_run {
	struct ct_conf c;
	char server_bin[PATH_MAX];
	char dir[PATH_MAX];
	char log[PATH_MAX];           /* the server's log, beside the report */
	pid_t pid;
	char endpoint[PATH_MAX];
	_Atomic int stop;
	_Atomic int pause;            /* writers hold still while keys are checked */
	_Atomic int paused;
	struct ct_thread *t;
	char state[8192];             /* the server's rings when a check failed */
	int starts;                   /* server starts so far */
	int hold_spot, hold_start;    /* OQB_CRASHTEST_HOLD (below) */
};

static const char *const ct_backends[] = { "pmkv", "rocksdb", NULL };
static const char *const ct_transports[] = { "shm", "verbs", NULL };
static const char *const ct_systems[] = { "oq", "deferred", NULL };
static const char *const ct_recv_modes[] = { "srq", "slot_ring", NULL };

static const struct conf_key ct_verbs_schema[] = {
	{ "addr", CONF_STR, 0, 0, 0, NULL, NULL, "address the server listens on, which picks the RDMA device "
	  "(in the Soft-RoCE VM: $RXE_IP)" },
	{ "port", CONF_INT, 0, 1, 65535, NULL, NULL, "rdma_cm port (default 7470)" },
	{ "recv_mode", CONF_STR, 0, 0, 0, ct_recv_modes, NULL, "receive buffers: srq (default) or slot_ring" },
	{ "device", CONF_STR, 0, 0, 0, NULL, NULL, "RDMA device (default: the one that owns addr)" },
	{ NULL },
};

/* Bounds 0, 0 below: the key is a server setting, its bounds and rule
 * are its row's (lib/settings/), filled in by ct_schema_rows. */
static struct conf_key ct_schema[] = {
	{ "name", CONF_STR, 0, 0, 0, NULL, NULL, "name of this crash test" },
	{ "crashes", CONF_INT, 0, 1, 1e7, NULL, NULL, "how many times to kill the server" },
	{ "workers", CONF_INT, 0, 0, 0, NULL, NULL, "server workers" },
	{ "threads", CONF_INT, 0, 1, 64, NULL, NULL, "client threads" },
	{ "keys_per_thread", CONF_INT, 0, 1, 1e6, NULL, NULL, "keys each thread writes" },
	{ "value_size", CONF_INT, 0, 24, 4096, NULL, NULL, "bytes per value (>= 24)" },
	{ "kill_after_ms", CONF_ARR_NUM, 0, 0.1, 1e6, NULL, NULL, "[min, max] ms between restart and kill" },
	{ "ring_slots", CONF_INT, 0, 0, 0, NULL, NULL, "receive slots per worker" },
	{ "pool_mb", CONF_INT, 0, 0, 0, NULL, NULL, "pmkv pool per worker (MiB)" },
	{ "seed", CONF_INT, 0, 0, 9e18, NULL, NULL, "random seed" },
	{ "dir", CONF_STR, 0, 0, 0, NULL, NULL, "directory for rings and pools (default: a new one)" },
	{ "restart_timeout_s", CONF_NUM, 0, 1, 3600, NULL, NULL, "how long a restart may take" },
	{ "backend", CONF_STR, 0, 0, 0, ct_backends, NULL, "the durable store: pmkv (default) or rocksdb (its "
	  "write-ahead log on)" },
	{ "rocksdb_sync", CONF_BOOL, 0, 0, 0, NULL, NULL, "rocksdb: fdatasync its log per write (default false)" },
	{ "transport", CONF_STR, 0, 0, 0, ct_transports, NULL, "shm (default) or verbs (needs an RDMA device: "
	  "run it in the Soft-RoCE VM, tests/verbs/run-crash.sh)" },
	{ "system", CONF_STR, 0, 0, 0, ct_systems, NULL, "oq (default: a put commits on the transport's ACK) or "
	  "deferred (on the server's software ACK, sent once the request is persistent)" },
	{ "delegation", CONF_BOOL, 0, 0, 0, NULL, NULL, "verbs: the client threads share one QP per server worker "
	  "(default false)" },
	{ "verbs", CONF_OBJ, 0, 0, 0, NULL, ct_verbs_schema, "transport verbs: addr (required), port, recv_mode, "
	  "device" },
	{ "stall_ms", CONF_ARR_NUM, 0, 0.001, 1e5, NULL, NULL, "[min, max] ms the server is stopped (SIGSTOP) "
	  "before half of the kills (default [1, 10])" },
	{ "put_timeout_ms", CONF_NUM, 0, 1, 1e6, NULL, NULL, "how long a put waits for its commit before the "
	  "client gives up on it and reconnects (default 20 on shm, 2000 on verbs)" },
	{ "pause_wait_ms", CONF_NUM, 0, 0, 1e6, NULL, NULL, "how long the tester waits, after a kill, for "
	  "its writers to finish the request each is in before it restarts the server (default 10000); "
	  "a writer still in one then runs on across the restart, as a client of a real server does" },
	{ "server_idle_nap_us", CONF_NUM, 0, 0, 1e6, NULL, NULL, "idle server workers nap this long (oqb-server "
	  "--idle-nap-us; default 0: they spin), for a machine with fewer CPUs than threads" },
	{ NULL },
};

/* The crash config's keys that are the server's settings, and their rows. */
static const struct {
	const char *key, *section, *row;
} ct_rows[] = {
	{ "workers", "server", "workers" },
	{ "ring_slots", "server", "ring_slots" },
	{ "pool_mb", "server.backend", "pool_mb" },
};
#define CT_NROWS (sizeof ct_rows / sizeof ct_rows[0])

/* ct_schema's bounds of those keys from their rows (once). */
static void ct_schema_rows(void)
{
	for (size_t i = 0; i < CT_NROWS; i++) {
		const struct setting *s = settings_find(ct_rows[i].section, ct_rows[i].row);
		for (struct conf_key *k = ct_schema; s && k->name; k++)
			if (!strcmp(k->name, ct_rows[i].key)) {
				k->min = s->min;
				k->max = s->max;
			}
	}
}

/* The rows' rules (ring_slots a power of two) on j's values of those keys.
 * 0, or -1 with err naming the file and the key. */
static int ct_check_rows(const json_t *j, const char *cfg, char *err, size_t errlen)
{
	char why[512];
	for (size_t i = 0; i < CT_NROWS; i++) {
		const json_t *v = json_object_get(j, ct_rows[i].key);
		if (v && settings_check_num(ct_rows[i].section, ct_rows[i].row, json_number_value(v), why,
					    sizeof why) < 0) {
			snprintf(err, errlen, "%s: %s", cfg, why);
			return -1;
		}
	}
	return 0;
}

/*
 * Test hook, for tests/integration/crashtest-killed.sh: a tester killed at
 * any point of its cycle leaves no server.  OQB_CRASHTEST_HOLD=SPOT:N holds
 * the tester at its Nth server start (1: the first) at SPOT, after one line
 * on stderr, "oqb crashtest: held at SPOT, start N, child PID", until the
 * tester dies (at most 60 s), so that a kill lands there every time:
 *   child   the new child, right after fork: its parent-death signal not
 *           yet set (it must see the tester gone and exit by itself)
 *   armed   the child after its signal is set and the tester checked,
 *           before exec (the signal must end it)
 *   parent  the tester, right after fork, before it notes the child's PID
 * Off unless set; a malformed value is an error.
 */
enum { HOLD_OFF, HOLD_CHILD, HOLD_ARMED, HOLD_PARENT };
static const char *const hold_spots[] = { "", "child", "armed", "parent" };

static int hold_parse(struct ct_run *r)
{
	const char *e = getenv("OQB_CRASHTEST_HOLD");
	char spot[16];
	int n, used = 0;
	if (!e || !*e)
		return 0;
	if (sscanf(e, "%15[a-z]:%d%n", spot, &n, &used) == 2 && !e[used] && n >= 1)
		for (int i = HOLD_CHILD; i <= HOLD_PARENT; i++)
			if (!strcmp(spot, hold_spots[i])) {
				r->hold_spot = i;
				r->hold_start = n;
				return 0;
			}
	fprintf(stderr, "oqb crashtest: OQB_CRASHTEST_HOLD=%s: expected SPOT:N, SPOT child, armed or parent and "
		"N >= 1 (a test hook; unset it for a real run)\n", e);
	return -1;
}

/* the hook's line, with write(2) only: it is said in a child of a
 * threaded process, between fork and exec */
static void hold_say(int spot, int start, pid_t child)
{
	char buf[96];
	size_t n = 0;
	const char *parts[] = { "oqb crashtest: held at ", hold_spots[spot], ", start ", NULL, ", child ", NULL };
	long nums[] = { 0, 0, 0, start, 0, child };
	for (int i = 0; i < 6; i++) {
		if (parts[i]) {
			for (const char *c = parts[i]; *c && n < sizeof buf - 1; c++)
				buf[n++] = *c;
			continue;
		}
		char d[24];
		int k = 0;
		long v = nums[i];
		do
			d[k++] = (char)('0' + v % 10);
		while ((v /= 10) && k < 23);
		while (k && n < sizeof buf - 1)
			buf[n++] = d[--k];
	}
	buf[n++] = '\n';
	ssize_t w = write(2, buf, n);
	(void)w;
}

/* holds the caller while `parent` is alive (in the tester itself: until it
 * is killed), at most 60 s */
static void hold(pid_t parent)
{
	for (int i = 0; i < 60000 && getppid() == parent; i++)
		usleep(1000);
}

/* Starts the server and waits for its "ready" line; 0 or -1 + err. */
static int start_server(struct ct_run *r, char *err, size_t errlen)
{
	int pfd[2];
	char slots[16], workers[16], pool[16], port[16], nap[32];
	if (pipe(pfd) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	snprintf(slots, sizeof slots, "%d", r->c.ring_slots);
	snprintf(workers, sizeof workers, "%d", r->c.workers);
	snprintf(pool, sizeof pool, "%d", r->c.pool_mb);
	snprintf(port, sizeof port, "%d", r->c.port);
	snprintf(nap, sizeof nap, "%g", r->c.idle_nap_us);
	int verbs = !strcmp(r->c.transport, "verbs");
	/* each option and its value; one without a value (NULL) is left out */
	const char *const opt[][2] = {
		{ "--system", r->c.system }, { "--transport", r->c.transport }, { "--backend", r->c.backend },
		{ "--pmem-path", r->dir }, { "--workers", workers }, { "--ring-slots", slots }, { "--pool-mb", pool },
		{ "--rocksdb-sync", r->c.rocksdb_sync ? "1" : "0" },
		{ "--idle-nap-us", r->c.idle_nap_us > 0 ? nap : NULL },
		{ "--addr", verbs ? r->c.addr : NULL }, { "--port", verbs ? port : NULL },
		{ "--recv-mode", verbs ? r->c.recv_mode : NULL }, { "--device", verbs ? r->c.device : NULL },
	};
	char *argv[3 + 2 * sizeof opt / sizeof opt[0]];
	int a = 0;
	argv[a++] = r->server_bin;
	argv[a++] = "--durable";
	for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++)
		if (opt[i][1]) {
			argv[a++] = (char *)opt[i][0];
			argv[a++] = (char *)opt[i][1];
		}
	argv[a] = NULL;
	pid_t parent = getpid();
	int held = ++r->starts == r->hold_start ? r->hold_spot : HOLD_OFF;
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if (held == HOLD_CHILD) {
			hold_say(held, r->starts, getpid());
			hold(parent);
		}
		/* never outlive the tester (a tester killed by SIGKILL cannot
		 * stop its server); and it may have died before this line, so
		 * its PID is checked after the signal is set, not before.  The
		 * signal comes when the thread that forked ends: start_server
		 * runs in the tester's main thread only. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		if (held == HOLD_ARMED) {
			hold_say(held, r->starts, getpid());
			hold(parent);
		}
		int lfd = open(r->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		dup2(pfd[1], 1);
		if (lfd >= 0)
			dup2(lfd, 2);
		close(pfd[0]);
		execv(r->server_bin, argv);
		fprintf(stderr, "exec %s: %s\n", r->server_bin, strerror(errno));
		_exit(127);
	}
	if (held == HOLD_PARENT) {
		hold_say(held, r->starts, pid);
		hold(getppid());
	}
	close(pfd[1]);
	r->pid = pid;
	char buf[PATH_MAX + 64];
	size_t n = 0;
	uint64_t deadline = clock_ns() + (uint64_t)(r->c.restart_timeout_s * 1e9);
	int rc = -1;
	for (;;) {
		int ms = (int)((deadline - clock_ns()) / 1000000);
		if ((int64_t)(deadline - clock_ns()) <= 0) {
			snprintf(err, errlen, "server did not become ready within %.0f s (log: %.700s)",
				 r->c.restart_timeout_s, r->log);
			break;
		}
		struct pollfd p = { pfd[0], POLLIN, 0 };
		if (poll(&p, 1, ms) <= 0)
			continue;
		ssize_t k = read(pfd[0], buf + n, sizeof buf - 1 - n);
		if (k <= 0) {
			snprintf(err, errlen, "server exited during start-up (log: %.700s)", r->log);
			break;
		}
		n += (size_t)k;
		buf[n] = 0;
		char *nl = strchr(buf, '\n');
		if (nl) {
			*nl = 0;
			if (sscanf(buf, "ready: endpoint %4095s", r->endpoint) == 1)
				rc = 0;
			else
				snprintf(err, errlen, "unexpected server output: %.700s", buf);
			break;
		}
	}
	close(pfd[0]);
	if (rc != 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		r->pid = 0;
	}
	return rc;
}

/* A session to the server as it is now; thread is the session's lane when
 * the threads delegate (writers 0 .. threads-1, the checker `threads`). */
static struct kv_session *connect_client(struct ct_run *r, unsigned thread)
{
	char err[512];
	struct kv_session_conf sc = { .transport = r->c.transport, .endpoint = r->endpoint,
				      .system = r->c.system, .durable = 1, .delegation = r->c.delegation,
				      .thread = thread };
	return kvs_open(&sc, err, sizeof err);
}

static void key_name(char *k, size_t cap, unsigned thread, unsigned i)
{
	snprintf(k, cap, "ct%u-key%05u", thread, i);
}

static void *writer(void *arg)
{
	struct ct_thread *t = arg;
	struct ct_run *r = t->run;
	struct kv_session *c = NULL;
	char key[64], val[4200], err[512];

	while (!atomic_load(&r->stop)) {
		if (atomic_load(&r->pause)) {
			kvs_close(c);
			c = NULL;
			atomic_fetch_add(&r->paused, 1);
			while (atomic_load(&r->pause) && !atomic_load(&r->stop))
				usleep(200);
			atomic_fetch_sub(&r->paused, 1);
			continue;
		}
		if (!c) {
			c = connect_client(r, t->idx);
			if (!c) {
				usleep(1000);   /* server restarting */
				continue;
			}
			t->reconnects++;
		}
		unsigned i = (unsigned)rng_below(&t->rng, (uint64_t)r->c.keys);
		uint64_t seq = t->sent[i] + 1;
		t->sent[i] = seq;
		key_name(key, sizeof key, t->idx, i);
		memset(val, 'v', (size_t)r->c.value_size);
		snprintf(val, sizeof val, "%020llu", (unsigned long long)seq);
		val[20] = '-';
		val[r->c.value_size] = 0;
		/* A full ring is retried in short rounds so that a pause or the
		 * end of the test is noticed while the server is down. */
		int pr;
		do
			pr = kvs_put(c, key, (unsigned)strlen(key), val, (uint32_t)r->c.value_size,
				     clock_ns() + (uint64_t)(r->c.put_timeout_ms * 1e6), err, sizeof err);
		while (pr == 1 && !atomic_load(&r->pause) && !atomic_load(&r->stop));
		if (pr == 1) {
			t->sent[i] = seq - 1;   /* never sent */
			continue;
		}
		if (pr == 0) {
			t->committed[i] = seq;   /* the commit log */
			t->commits++;
		} else {
			t->failures++;
			kvs_close(c);
			c = NULL;
		}
	}
	kvs_close(c);
	return NULL;
}

/* A check found the server not executing: its rings as they are now, held
 * still (SIGSTOP) while they are read, into r->state and on stderr. */
static void describe_server(struct ct_run *r)
{
	struct kv_session_conf sc = { .transport = r->c.transport, .endpoint = r->endpoint,
				      .system = r->c.system, .durable = 1 };
	if (r->pid)
		kill(r->pid, SIGSTOP);
	kvs_describe_server(&sc, r->state, sizeof r->state);
	if (r->pid)
		kill(r->pid, SIGCONT);
	fprintf(stderr, "oqb crashtest: the server's rings when the check failed: %s\n", r->state);
}

/* Reads every key back; returns the number of lost commits. */
static uint64_t verify(struct ct_run *r, uint64_t *checked, uint64_t *lost_keys, json_t *examples,
		       char *err, size_t errlen)
{
	struct kv_session *c = NULL;
	for (int tries = 0; !c && tries < 2000; tries++)
		if (!(c = connect_client(r, (unsigned)r->c.threads)))
			usleep(5000);
	if (!c) {
		snprintf(err, errlen, "cannot connect to the server for the final check");
		return UINT64_MAX;
	}
	char key[64], e[256];
	uint64_t lost = 0;
	for (int th = 0; th < r->c.threads; th++) {
		struct ct_thread *t = &r->t[th];
		for (int i = 0; i < r->c.keys; i++) {
			if (!t->committed[i])
				continue;
			key_name(key, sizeof key, (unsigned)th, (unsigned)i);
			char num[24] = "";
			uint32_t status = 0, vlen = 0;
			/* one deadline for the whole get: a ring that stays full
			 * (the server stopped executing) ends the check with an
			 * error instead of retrying forever */
			uint64_t until = clock_ns() + 10000000000ull;
			int pr = kvs_get(c, key, (unsigned)strlen(key), num, 20, &vlen, &status, until, e, sizeof e);
			while (pr == 1 && clock_ns() < until)
				pr = kvs_get(c, key, (unsigned)strlen(key), num, 20, &vlen, &status, until, e, sizeof e);
			if (pr == 1)
				snprintf(e, sizeof e, "the server's queue stayed full for 10 s: it accepts no request, so it "
					 "stopped executing (its log and the ring's state say where)");
			if (pr != 0) {
				snprintf(err, errlen, "final check of %s: %s", key, e);
				describe_server(r);
				kvs_close(c);
				return UINT64_MAX;
			}
			uint64_t got = vlen >= 20 ? strtoull(num, NULL, 10) : 0;
			(*checked)++;
			if (status != KV_OK || got < t->committed[i]) {
				lost += t->committed[i] - (status == KV_OK ? got : 0);
				(*lost_keys)++;
				if (json_array_size(examples) < 10)
					json_array_append_new(examples, json_pack("{s:s,s:I,s:I,s:s}", "key", key,
						"committed", (json_int_t)t->committed[i], "read", (json_int_t)got,
						"status", kv_status_name(status)));
			}
		}
	}
	kvs_close(c);
	return lost;
}

static uint64_t commit_count(struct ct_run *r)
{
	uint64_t n = 0;
	for (int i = 0; i < r->c.threads; i++)
		n += r->t[i].commits;   /* racy read, for progress only */
	return n;
}

/* key's [min, max] in j (ms), or [dlo, dhi] without it (a one-number list
 * keeps dhi); -1, said on stderr with the fix, when max < min. */
static int ms_range(const json_t *j, const char *key, double dlo, double dhi, double *lo, double *hi, const char *cfg)
{
	const json_t *a = json_object_get(j, key);
	*lo = a ? json_number_value(json_array_get(a, 0)) : dlo;
	*hi = a && json_array_size(a) > 1 ? json_number_value(json_array_get(a, 1)) : dhi;
	if (*hi >= *lo)
		return 0;
	fprintf(stderr, "oqb crashtest: %s: %s must be [min, max] with min <= max (it is [%g, %g])\n", cfg, key,
		*lo, *hi);
	return -1;
}

struct ct_cli {
	const char *config, *out;
	int crashes;
};

#define O(f) offsetof(struct ct_cli, f)
static const struct opt ct_tab[] = {
	{ "CONFIG", OPT_ARG, O(config), NULL, 0, 0, NULL, "the crash test's config (configs/crash*.json)" },
	{ "out", OPT_STR, O(out), NULL, 0, 0, NULL,
	  "the report's file (default: results/NAME-UTCSTAMP/crashtest.json)" },
	{ "crashes", OPT_INT, O(crashes), "0", 0, 1000000, NULL, "crashes to inject (0: the config's \"crashes\")" },
	{ NULL, .help = "kill a durable oq or deferred server (CONFIG's system; transport shm, or verbs; pmkv, "
	  "or rocksdb with CONFIG's backend) CONFIG's crashes times under a write-heavy load and check that "
	  "every committed put survived (docs/durability.md)" },
};
#undef O

const struct opts_cmd crashtest_cmd = {
	"oqb crashtest", ct_tab, OQB_EXITS_BASE | OQB_EXITS(OQB_EXIT_FAIL) | OQB_EXITS(OQB_EXIT_ERROR),
};

static int find_server(char *out, size_t cap)
{
	const char *e = getenv("OQB_BIN");
	char self[PATH_MAX];
	if (e && *e) {
		snprintf(out, cap, "%s/oqb-server", e);
		return access(out, X_OK);
	}
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	snprintf(out, cap, "%s/oqb-server", dirname(self));
	return access(out, X_OK);
}

/*
 * Where the report and the server's log go: out (--out FILE) or, without
 * it, results/NAME-STAMP/crashtest.json (made here); the log beside the
 * report, its name with .server.log for .json.  Creates the log empty, so
 * a place it cannot be written is refused before anything runs.  0, or -1
 * with a message on stderr.
 */
static int report_paths(struct ct_run *r, const char **out, char *outbuf, size_t cap)
{
	if (!*out) {
		char name[128], stamp[32];
		time_t now = time(NULL);
		struct tm tm;
		size_t i;
		snprintf(name, sizeof name, "%s", r->c.name);
		for (i = 0; name[i]; i++)
			if (name[i] == '/')
				name[i] = '_';
		gmtime_r(&now, &tm);
		strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
		if ((mkdir("results", 0755) != 0 && errno != EEXIST) ||
		    (size_t)snprintf(outbuf, cap, "results/%s-%s", name, stamp) >= cap ||
		    (mkdir(outbuf, 0755) != 0 && errno != EEXIST)) {
			fprintf(stderr, "oqb crashtest: cannot create the results directory %s: %s; run it where "
				"results/ can be made, or give --out FILE\n", outbuf, strerror(errno));
			return -1;
		}
		strncat(outbuf, "/crashtest.json", cap - strlen(outbuf) - 1);
		*out = outbuf;
	}
	size_t n = strlen(*out);
	if (n > 5 && strcmp(*out + n - 5, ".json") == 0)
		n -= 5;
	if (n + sizeof ".server.log" > sizeof r->log) {
		fprintf(stderr, "oqb crashtest: --out %s: name too long\n", *out);
		return -1;
	}
	snprintf(r->log, sizeof r->log, "%.*s.server.log", (int)n, *out);
	int fd = open(r->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "oqb crashtest: cannot write the server's log %s (beside the report): %s; "
			"give --out FILE in a writable directory\n", r->log, strerror(errno));
		return -1;
	}
	close(fd);
	/* the report names it absolutely: it is read from anywhere */
	char abs[PATH_MAX];
	if (realpath(r->log, abs) && strlen(abs) < sizeof r->log)
		memcpy(r->log, abs, strlen(abs) + 1);
	return 0;
}

int crashtest_main(int argc, char **argv)
{
	struct ct_cli cli;
	int own_dir = 0, lock_fd = -1;
	char err[1024], outbuf[PATH_MAX - 32];
	int pr = opts_command(&crashtest_cmd, &cli, argc, argv);
	if (pr != OPTS_GO)
		return pr;
	const char *cfg = cli.config, *out = cli.out;
	int crashes_override = cli.crashes;
	json_t *j = NULL;
	ct_schema_rows();
	if (conf_load_file(cfg, &j, err, sizeof err) != 0 || conf_check(j, ct_schema, cfg, err, sizeof err) != 0 ||
	    ct_check_rows(j, cfg, err, sizeof err) != 0) {
		fprintf(stderr, "oqb crashtest: %s\n", err);
		json_decref(j);
		return OQB_EXIT_USAGE;
	}
	struct ct_run *r = calloc(1, sizeof *r);
	r->c.name = conf_str(j, "name", "crashtest");
	r->c.crashes = crashes_override > 0 ? crashes_override : (int)conf_int(j, "crashes", 50);
	r->c.workers = (int)conf_int(j, "workers", 2);
	r->c.threads = (int)conf_int(j, "threads", 2);
	r->c.keys = (int)conf_int(j, "keys_per_thread", 64);
	r->c.value_size = (int)conf_int(j, "value_size", 32);
	r->c.ring_slots = (int)conf_int(j, "ring_slots", 256);
	r->c.pool_mb = (int)conf_int(j, "pool_mb", 16);
	r->c.seed = (uint64_t)conf_int(j, "seed", 1);
	r->c.restart_timeout_s = conf_num(j, "restart_timeout_s", 30);
	r->c.dir = conf_str(j, "dir", NULL);
	r->c.backend = conf_str(j, "backend", "pmkv");
	r->c.rocksdb_sync = conf_bool(j, "rocksdb_sync", 0);
	r->c.transport = conf_str(j, "transport", "shm");
	r->c.system = conf_str(j, "system", "oq");
	r->c.delegation = conf_bool(j, "delegation", 0);
	const json_t *vj = json_object_get(j, "verbs");
	r->c.addr = vj ? conf_str(vj, "addr", NULL) : NULL;
	r->c.port = vj ? (int)conf_int(vj, "port", 7470) : 7470;
	r->c.recv_mode = vj ? conf_str(vj, "recv_mode", "srq") : "srq";
	r->c.device = vj ? conf_str(vj, "device", NULL) : NULL;
	int verbs = !strcmp(r->c.transport, "verbs");
	r->c.put_timeout_ms = conf_num(j, "put_timeout_ms", verbs ? 2000 : 20);
	r->c.idle_nap_us = conf_num(j, "server_idle_nap_us", 0);
	r->c.pause_wait_ms = conf_num(j, "pause_wait_ms", 10000);
	int rc = OQB_EXIT_USAGE;
	if (ms_range(j, "kill_after_ms", 5, 80, &r->c.kill_min_ms, &r->c.kill_max_ms, cfg) < 0 ||
	    ms_range(j, "stall_ms", 1, 10, &r->c.stall_min_ms, &r->c.stall_max_ms, cfg) < 0)
		goto out;
	if (r->c.rocksdb_sync && strcmp(r->c.backend, "rocksdb") != 0) {
		fprintf(stderr, "oqb crashtest: %s: rocksdb_sync is for backend \"rocksdb\" (this test runs \"%s\"); "
			"remove it or set \"backend\": \"rocksdb\"\n", cfg, r->c.backend);
		goto out;
	}
	if (r->c.ring_slots & (r->c.ring_slots - 1)) {
		fprintf(stderr, "oqb crashtest: %s: ring_slots %d is not a power of two; use 256, say\n", cfg,
			r->c.ring_slots);
		goto out;
	}
	if (verbs && !r->c.addr) {
		fprintf(stderr, "oqb crashtest: %s: transport \"verbs\" needs verbs.addr, the address of the RDMA "
			"device the server listens on (in the Soft-RoCE VM: $RXE_IP), e.g. "
			"\"verbs\": {\"addr\": \"198.18.0.1\"}\n", cfg);
		goto out;
	}
	if (!verbs && (vj || r->c.delegation)) {
		fprintf(stderr, "oqb crashtest: %s: %s is for transport \"verbs\" (this test runs \"%s\"); add "
			"\"transport\": \"verbs\" or remove it\n", cfg, vj ? "\"verbs\"" : "delegation", r->c.transport);
		goto out;
	}
	if (r->c.delegation && r->c.threads + 1 > 1024) {
		fprintf(stderr, "oqb crashtest: %s: delegation shares QPs among at most 1024 sessions per process; "
			"threads %d (plus the checker's) is too many\n", cfg, r->c.threads);
		goto out;
	}
	if (hold_parse(r) != 0)
		goto out;
	rc = OQB_EXIT_ERROR;   /* the config is good: what fails from here is not the input */
	if (find_server(r->server_bin, sizeof r->server_bin) != 0) {
		fprintf(stderr, "oqb crashtest: cannot find oqb-server next to this binary or in $OQB_BIN; "
			"run `make` first\n");
		goto out;
	}
	if (report_paths(r, &out, outbuf, sizeof outbuf) != 0)
		goto out;
	if (r->c.dir) {
		snprintf(r->dir, sizeof r->dir, "%s", r->c.dir);
	} else {
		/* first the directories of testers killed before their end */
		const char *base = rundir_base(NULL);
		rundir_reap(base, "crash", 0);
		if (rundir_create(base, "crash", r->dir, sizeof r->dir, &lock_fd, err, sizeof err) != 0) {
			fprintf(stderr, "oqb crashtest: %s\n", err);
			goto out;
		}
		own_dir = 1;
	}

	uint64_t t0 = clock_ns();
	if (start_server(r, err, sizeof err) != 0) {
		fprintf(stderr, "oqb crashtest: %s\n", err);
		goto out;
	}
	r->t = calloc((size_t)r->c.threads, sizeof *r->t);
	for (int i = 0; i < r->c.threads; i++) {
		struct ct_thread *t = &r->t[i];
		t->run = r;
		t->idx = (unsigned)i;
		t->sent = calloc((size_t)r->c.keys, sizeof *t->sent);
		t->committed = calloc((size_t)r->c.keys, sizeof *t->committed);
		rng_seed_multi(&t->rng, r->c.seed, 0xc4a5, (uint64_t)i);
		pthread_create(&t->th, NULL, writer, t);
	}
	struct rng krng;
	rng_seed_multi(&krng, r->c.seed, 0x6b11, 0);
	int survived = 0, stalled = 0, busy_restarts = 0;
	/* where the time goes, per phase of a crash cycle (summed) */
	enum { PH_LOAD, PH_STOP, PH_RESTART, PH_CHECK, PH_N };
	uint64_t ph[PH_N] = { 0 }, p_load = clock_ns();
	uint64_t checked = 0, lost_keys = 0, lost = 0;
	json_t *examples = json_array();
	for (int k = 0; k < r->c.crashes && lost != UINT64_MAX; k++) {
		double ms = r->c.kill_min_ms + rng_double(&krng) * (r->c.kill_max_ms - r->c.kill_min_ms);
		usleep((useconds_t)(ms * 1000));
		/* Half of the crashes come after a stall of the server, so the
		 * ring holds committed, unexecuted requests when it dies. */
		if (rng_below(&krng, 2)) {
			uint64_t lo = (uint64_t)(r->c.stall_min_ms * 1000), hi = (uint64_t)(r->c.stall_max_ms * 1000);
			kill(r->pid, SIGSTOP);
			usleep((useconds_t)(lo + (hi > lo ? rng_below(&krng, hi - lo) : 0)));
			stalled++;
		}
		atomic_store(&r->pause, 1);
		uint64_t p0 = clock_ns();
		ph[PH_LOAD] += p0 - p_load;
		kill(r->pid, SIGKILL);
		int st;
		waitpid(r->pid, &st, 0);
		r->pid = 0;
		uint64_t pw_end = clock_ns() + (uint64_t)(r->c.pause_wait_ms * 1e6);
		while (atomic_load(&r->paused) < r->c.threads && clock_ns() < pw_end)
			usleep(500);
		if (atomic_load(&r->paused) < r->c.threads)
			busy_restarts++;   /* a writer runs on across this restart */
		uint64_t p1 = clock_ns();
		ph[PH_STOP] += p1 - p0;
		int started = start_server(r, err, sizeof err);
		uint64_t p2 = clock_ns();
		ph[PH_RESTART] += p2 - p1;
		if (started != 0) {
			fprintf(stderr, "oqb crashtest: restart after crash %d: %s\n", k + 1, err);
			break;
		}
		survived++;
		/* Every committed put must have survived this crash. */
		uint64_t l = verify(r, &checked, &lost_keys, examples, err, sizeof err);
		if (l == UINT64_MAX) {
			/* the test has failed; crashing on would only bury the cause */
			fprintf(stderr, "oqb crashtest: after crash %d: %s\n", k + 1, err);
			lost = UINT64_MAX;
			atomic_store(&r->pause, 0);
			break;
		}
		lost += l;
		p_load = clock_ns();
		ph[PH_CHECK] += p_load - p2;
		atomic_store(&r->pause, 0);
		if ((k + 1) % 10 == 0 || k + 1 == r->c.crashes)
			fprintf(stderr, "[crashtest] %d/%d crashes survived, %llu commits, %llu lost, %.1f s\n",
				k + 1, r->c.crashes, (unsigned long long)commit_count(r),
				(unsigned long long)(lost == UINT64_MAX ? 0 : lost), (clock_ns() - t0) / 1e9);
	}
	usleep(20000);
	atomic_store(&r->stop, 1);
	uint64_t commits = 0, reconnects = 0, failures = 0;
	for (int i = 0; i < r->c.threads; i++) {
		pthread_join(r->t[i].th, NULL);
		commits += r->t[i].commits;
		reconnects += r->t[i].reconnects;
		failures += r->t[i].failures;
	}
	if (r->pid && lost != UINT64_MAX) {
		uint64_t l = verify(r, &checked, &lost_keys, examples, err, sizeof err);
		lost = l == UINT64_MAX ? l : lost + l;
	}
	if (lost == UINT64_MAX)
		fprintf(stderr, "oqb crashtest: %s\n", r->pid ? err : "no server to verify against");
	json_t *rep = json_pack("{s:s,s:s,s:s,s:s,s:s,s:b,s:i,s:i,s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:o,s:s}",
		"schema", "oqbench.crashtest/1", "name", r->c.name, "backend", r->c.backend,
		"transport", r->c.transport, "system", r->c.system, "delegation", r->c.delegation,
		"crashes_requested", r->c.crashes, "crashes_survived", survived, "crashes_after_stall", stalled,
		"commits", (json_int_t)commits, "keys_checked", (json_int_t)checked,
		"commits_lost", (json_int_t)(lost == UINT64_MAX ? -1 : (json_int_t)lost),
		"keys_with_loss", (json_int_t)lost_keys, "reconnects", (json_int_t)reconnects,
		"failed_sends", (json_int_t)failures, "seconds", (clock_ns() - t0) / 1e9,
		"loss_examples", examples, "server_log", r->log);
	json_object_set_new(rep, "phase_seconds", json_pack("{s:f,s:f,s:f,s:f,s:s}", "load", ph[PH_LOAD] / 1e9,
		"writers_stop", ph[PH_STOP] / 1e9, "restart", ph[PH_RESTART] / 1e9, "check", ph[PH_CHECK] / 1e9,
		"definition", "summed over the crashes: load (writers running, from a check's end to the kill, "
		"stall included), writers_stop (the kill until every writer has let go of the server), restart "
		"(until the new server is ready), check (every key read back)"));
	json_object_set_new(rep, "restarts_with_writers_busy", json_integer(busy_restarts));
	if (r->state[0])
		json_object_set_new(rep, "server_state_at_failure", json_string(r->state));
	int wrote = json_dump_file(rep, out, JSON_INDENT(2));
	json_dumpf(rep, stdout, JSON_INDENT(2));
	putchar('\n');
	fprintf(stderr, "crashtest: %d crashes survived, %llu commits, %llu key checks, %lld lost\n",
		survived, (unsigned long long)commits, (unsigned long long)checked,
		lost == UINT64_MAX ? -1LL : (long long)lost);
	json_decref(rep);
	rc = (survived == r->c.crashes && lost == 0) ? OQB_EXIT_OK : OQB_EXIT_FAIL;
	if (wrote != 0) {
		fprintf(stderr, "oqb crashtest: cannot write the report %s (it is on stdout above)\n", out);
		rc = OQB_EXIT_ERROR;
	}
	fprintf(stderr, "crashtest: report %s, server log %s\n", out, r->log);
	if (rc && own_dir)
		fprintf(stderr, "crashtest: the rings and pools go with the tester's directory %s; set \"dir\" "
			"in the config to keep them\n", r->dir);
	else if (rc)
		fprintf(stderr, "crashtest: the rings and pools are in %s\n", r->dir);
out:
	if (r->pid) {
		kill(r->pid, SIGTERM);
		waitpid(r->pid, NULL, 0);
	}
	/* the tester's own directory (rundir.h): rings, pools or DBs, lock
	 * and map, whatever the server left, pass or fail; never the
	 * config's "dir" */
	if (own_dir)
		rundir_remove(r->dir, lock_fd);

	if (r->t)
		for (int i = 0; i < r->c.threads; i++) {
			free(r->t[i].sent);
			free(r->t[i].committed);
		}
	free(r->t);
	free(r);
	json_decref(j);
	return rc;
}
