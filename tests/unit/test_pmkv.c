/*
 * test_pmkv.c - the pmkv persistent KV (bench/be_pmkv.c): semantics, reopen,
 * space accounting under churn (no leaks, free space coalesces), pool-full
 * handling, SIGKILL at random instants (every completed op survives, and
 * nothing else but the one op in flight), corrupted pools (open and get
 * never crash and never return a wrong value), and the backend interface.
 *
 * Pools go to $TMPDIR, else a tmpfs when there is one: with msync on a
 * disk-backed file a put costs a few hundred microseconds, which would make
 * the churn tests slow without testing anything more (kill -9 is the crash
 * that can be tested here, and for it the page cache is the durable image).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "be_pmkv.h"
#include "clock.h"
#include "wire.h"

static char g_dir[512];

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int make_dir(void)
{
	const char *base = getenv("TMPDIR");
	if (!base || !*base)
		base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(g_dir, sizeof g_dir, "%s/oqb-pmkv.XXXXXX", base);
	return mkdtemp(g_dir) ? 0 : -1;
}

static void remove_dir(void)
{
	DIR *d = opendir(g_dir);
	struct dirent *e;
	char p[1024];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(g_dir);
}

/* A path in this run's temporary directory (made on first use, removed
 * at exit). */
static void pool_path(char *buf, size_t n, const char *name)
{
	if (!g_dir[0]) {
		if (make_dir() != 0) {
			fprintf(stderr, "cannot make a temporary directory: %s\n", strerror(errno));
			exit(1);
		}
		atexit(remove_dir);
	}
	snprintf(buf, n, "%s/%s", g_dir, name);
}

static unsigned put_s(struct pmkv *pk, const char *k, const char *v)
{
	return pmkv_put(pk, k, (uint32_t)strlen(k), v, (uint32_t)strlen(v));
}

/* 1 if key k holds exactly the string v. */
static int has(struct pmkv *pk, const char *k, const char *v)
{
	char buf[4096];
	uint32_t n;
	if (pmkv_get(pk, k, (uint32_t)strlen(k), buf, sizeof buf, &n) != KV_OK)
		return 0;
	return n == strlen(v) && memcmp(buf, v, n) == 0;
}

/* A value that can be recognised from its bytes alone: the first 8 bytes
 * are `seq`, the rest a pattern of seq; its length is a function of seq. */
static uint32_t pat_len(uint64_t seq, uint32_t maxlen)
{
	uint64_t s = seq;
	return 8 + (uint32_t)(rng_next(&s) % (maxlen - 7));
}

static void pat_fill(uint8_t *v, uint64_t seq, uint32_t len)
{
	memcpy(v, &seq, 8);
	for (uint32_t i = 8; i < len; i++)
		v[i] = (uint8_t)(seq * 131 + i * 7);
}

/* Returns the seq of a valid pattern value, or UINT64_MAX if it is not one. */
static uint64_t pat_check(const uint8_t *v, uint32_t len, uint32_t maxlen)
{
	uint64_t seq;
	if (len < 8)
		return UINT64_MAX;
	memcpy(&seq, v, 8);
	if (len != pat_len(seq, maxlen))
		return UINT64_MAX;
	for (uint32_t i = 8; i < len; i++)
		if (v[i] != (uint8_t)(seq * 131 + i * 7))
			return UINT64_MAX;
	return seq;
}

TEST(basic_semantics)
{
	char p[600], err[512], buf[64];
	uint32_t n;
	pool_path(p, sizeof p, "basic");
	struct pmkv *pk = pmkv_open(p, 1 << 20, err, sizeof err);
	REQUIRE(pk, "%s", err);
	struct pmkv_info in;
	pmkv_info(pk, &in);
	CHECK(in.created == 1 && in.was_clean == 1 && in.live == 0);
	CHECK_EQ_U64(in.free_bytes, in.heap_bytes);
	CHECK_EQ_U64(in.free_extents, 1);

	CHECK(pmkv_get(pk, "a", 1, buf, sizeof buf, &n) == KV_NOT_FOUND);
	CHECK(put_s(pk, "a", "one") == KV_OK);
	CHECK(has(pk, "a", "one"));
	CHECK(put_s(pk, "a", "a much longer value than before, over 64 bytes in total......") == KV_OK);
	CHECK(has(pk, "a", "a much longer value than before, over 64 bytes in total......"));
	CHECK(put_s(pk, "a", "x") == KV_OK);
	CHECK(has(pk, "a", "x"));
	CHECK(put_s(pk, "b", "two") == KV_OK);
	pmkv_info(pk, &in);
	CHECK_EQ_U64(in.live, 2);
	CHECK_EQ_U64(in.used_bytes, pmkv_record_bytes(1, 1) + pmkv_record_bytes(1, 3));
	CHECK_EQ_U64(in.used_bytes + in.free_bytes, in.heap_bytes);

	CHECK(pmkv_del(pk, "a", 1) == KV_OK);
	CHECK(pmkv_del(pk, "a", 1) == KV_NOT_FOUND);
	CHECK(pmkv_get(pk, "a", 1, buf, sizeof buf, &n) == KV_NOT_FOUND);
	CHECK(has(pk, "b", "two"));

	/* binary keys and values, empty key and empty value */
	const uint8_t bk[5] = { 0, 1, 0, 255, 0 }, bv[3] = { 0, 0, 7 };
	CHECK(pmkv_put(pk, bk, 5, bv, 3) == KV_OK);
	CHECK(pmkv_get(pk, bk, 4, buf, sizeof buf, &n) == KV_NOT_FOUND);
	CHECK(pmkv_get(pk, bk, 5, buf, sizeof buf, &n) == KV_OK && n == 3 && memcmp(buf, bv, 3) == 0);
	CHECK(pmkv_put(pk, "", 0, "empty-key", 9) == KV_OK);
	CHECK(pmkv_put(pk, "e", 1, NULL, 0) == KV_OK);
	CHECK(pmkv_get(pk, "", 0, buf, sizeof buf, &n) == KV_OK && n == 9);
	CHECK(pmkv_get(pk, "e", 1, buf, sizeof buf, &n) == KV_OK && n == 0);

	/* too small a buffer: the needed length, nothing copied */
	memset(buf, '#', sizeof buf);
	CHECK(pmkv_get(pk, "b", 1, buf, 2, &n) == KV_ERR_NOSPACE && n == 3 && buf[0] == '#');

	/* incr: decimal ASCII, wraps at 2^64, rejects non-numbers */
	CHECK(pmkv_incr(pk, "ctr", 3, 1, buf, sizeof buf, &n) == KV_NOT_FOUND);
	CHECK(put_s(pk, "ctr", "41") == KV_OK);
	CHECK(pmkv_incr(pk, "ctr", 3, 1, buf, sizeof buf, &n) == KV_OK && n == 2 && memcmp(buf, "42", 2) == 0);
	CHECK(has(pk, "ctr", "42"));
	CHECK(put_s(pk, "ctr", "18446744073709551615") == KV_OK);
	CHECK(pmkv_incr(pk, "ctr", 3, 2, buf, sizeof buf, &n) == KV_OK && n == 1 && buf[0] == '1');
	CHECK(put_s(pk, "ctr", "9") == KV_OK);
	CHECK(pmkv_incr(pk, "ctr", 3, 5, buf, 1, &n) == KV_ERR_NOSPACE && n == 2);
	CHECK(has(pk, "ctr", "9"), "a refused incr must not change the value");
	CHECK(pmkv_incr(pk, "b", 1, 1, buf, sizeof buf, &n) == KV_ERR_BAD);
	CHECK(put_s(pk, "big", "99999999999999999999999") == KV_OK);
	CHECK(pmkv_incr(pk, "big", 3, 1, buf, sizeof buf, &n) == KV_ERR_BAD);

	/* the largest key works; a longer one is refused */
	static uint8_t longkey[PMKV_MAX_KEY + 1];
	memset(longkey, 'k', sizeof longkey);
	CHECK(pmkv_put(pk, longkey, PMKV_MAX_KEY, "v", 1) == KV_OK);
	CHECK(pmkv_get(pk, longkey, PMKV_MAX_KEY, buf, sizeof buf, &n) == KV_OK && n == 1);
	CHECK(pmkv_put(pk, longkey, PMKV_MAX_KEY + 1, "v", 1) == KV_ERR_BAD);
	pmkv_close(pk);
}

TEST(reopen_keeps_everything)
{
	char p[600], err[512], k[32];
	uint8_t v[700], g[700];
	uint32_t n;
	pool_path(p, sizeof p, "reopen");
	struct pmkv *pk = pmkv_open(p, 4 << 20, err, sizeof err);
	REQUIRE(pk, "%s", err);
	for (uint64_t i = 0; i < 3000; i++) {
		snprintf(k, sizeof k, "key:%llu", (unsigned long long)i);
		uint32_t len = pat_len(i, sizeof v);
		pat_fill(v, i, len);
		REQUIRE(pmkv_put(pk, k, (uint32_t)strlen(k), v, len) == KV_OK, "put %s", k);
	}
	for (uint64_t i = 0; i < 3000; i += 3) {   /* some deletes, some overwrites */
		snprintf(k, sizeof k, "key:%llu", (unsigned long long)i);
		CHECK(pmkv_del(pk, k, (uint32_t)strlen(k)) == KV_OK);
		snprintf(k, sizeof k, "key:%llu", (unsigned long long)i + 1);
		uint32_t len = pat_len(i + 100000, sizeof v);
		pat_fill(v, i + 100000, len);
		CHECK(pmkv_put(pk, k, (uint32_t)strlen(k), v, len) == KV_OK);
	}
	struct pmkv_info a, b;
	pmkv_info(pk, &a);
	pmkv_close(pk);

	pk = pmkv_open(p, 0, err, sizeof err);
	REQUIRE(pk, "%s", err);
	pmkv_info(pk, &b);
	CHECK(b.was_clean == 1 && b.created == 0 && b.dropped == 0);
	CHECK_EQ_U64(b.opens, 2);
	CHECK_EQ_U64(b.live, a.live);
	CHECK_EQ_U64(b.tombs, a.tombs);
	CHECK_EQ_U64(b.used_bytes, a.used_bytes);
	CHECK_EQ_U64(b.free_bytes, a.free_bytes);
	CHECK_EQ_U64(b.free_extents, a.free_extents);
	int bad = 0;
	for (uint64_t i = 0; i < 3000; i++) {
		snprintf(k, sizeof k, "key:%llu", (unsigned long long)i);
		unsigned st = pmkv_get(pk, k, (uint32_t)strlen(k), g, sizeof g, &n);
		uint64_t want = i % 3 == 0 ? UINT64_MAX : i % 3 == 1 ? i - 1 + 100000 : i;
		if (want == UINT64_MAX)
			bad += st != KV_NOT_FOUND;
		else
			bad += st != KV_OK || pat_check(g, n, sizeof v) != want;
	}
	CHECK(bad == 0, "%d keys wrong after reopen", bad);
	pmkv_close(pk);
}

TEST(no_leak_under_churn)
{
	char p[600], err[512], k[32];
	static uint8_t v[4096], g[4096];
	uint32_t n;
	pool_path(p, sizeof p, "churn");
	struct pmkv *pk = pmkv_open(p, 1 << 20, err, sizeof err);
	REQUIRE(pk, "%s", err);
	struct pmkv_info in;
	pmkv_info(pk, &in);
	const uint64_t heap = in.heap_bytes;

	/* fill with small records, delete all, refill with large ones */
	unsigned small = 0, large = 0;
	memset(v, 'v', sizeof v);
	for (;; small++) {
		snprintf(k, sizeof k, "s%07u", small);
		if (pmkv_put(pk, k, 8, v, 20) != KV_OK)
			break;
	}
	CHECK(small > 1000, "only %u small records fit", small);
	for (unsigned i = 0; i < small; i++) {
		snprintf(k, sizeof k, "s%07u", i);
		CHECK(pmkv_del(pk, k, 8) == KV_OK);
	}
	pmkv_info(pk, &in);
	CHECK(in.live == 0 && in.used_bytes == 0 && in.tombs == 0);
	CHECK_EQ_U64(in.free_bytes, heap);
	CHECK_EQ_U64(in.free_extents, 1);
	for (;; large++) {
		snprintf(k, sizeof k, "L%07u", large);
		if (pmkv_put(pk, k, 8, v, 3000) != KV_OK)
			break;
	}
	pmkv_info(pk, &in);
	CHECK_EQ_U64(in.used_bytes, large * pmkv_record_bytes(8, 3000));
	CHECK(in.free_bytes < pmkv_record_bytes(8, 3000), "free %llu after filling",
	      (unsigned long long)in.free_bytes);
	for (unsigned i = 0; i < large; i++) {
		snprintf(k, sizeof k, "L%07u", i);
		CHECK(pmkv_del(pk, k, 8) == KV_OK);
	}

	/* random overwrites and deletes of 100 keys, sizes 8..2000 */
	enum { NK = 100 };
	uint64_t model[NK], s = 42;
	for (int i = 0; i < NK; i++)
		model[i] = UINT64_MAX;
	for (uint64_t op = 0; op < 20000; op++) {
		uint64_t r = rng_next(&s);
		unsigned key = (unsigned)(r % NK);
		snprintf(k, sizeof k, "c%03u", key);
		if ((r >> 32) % 10 == 0) {
			unsigned st = pmkv_del(pk, k, 4);
			CHECK(st == (model[key] == UINT64_MAX ? KV_NOT_FOUND : KV_OK));
			model[key] = UINT64_MAX;
		} else {
			uint32_t len = pat_len(op, 2000);
			pat_fill(v, op, len);
			REQUIRE(pmkv_put(pk, k, 4, v, len) == KV_OK, "put %llu", (unsigned long long)op);
			model[key] = op;
		}
	}
	uint64_t want_used = 0, live = 0;
	int bad = 0;
	for (int i = 0; i < NK; i++) {
		snprintf(k, sizeof k, "c%03d", i);
		unsigned st = pmkv_get(pk, k, 4, g, sizeof g, &n);
		if (model[i] == UINT64_MAX) {
			bad += st != KV_NOT_FOUND;
		} else {
			bad += st != KV_OK || pat_check(g, n, 2000) != model[i];
			want_used += pmkv_record_bytes(4, pat_len(model[i], 2000));
			live++;
		}
	}
	CHECK(bad == 0, "%d keys wrong after churn", bad);
	struct pmkv_info a, b;
	pmkv_info(pk, &a);
	CHECK_EQ_U64(a.live, live);
	CHECK_EQ_U64(a.used_bytes, want_used);
	CHECK_EQ_U64(a.used_bytes + a.free_bytes, heap);
	pmkv_close(pk);

	/* open rebuilds the same free space (extents were maximal already) */
	pk = pmkv_open(p, 0, err, sizeof err);
	REQUIRE(pk, "%s", err);
	pmkv_info(pk, &b);
	CHECK_EQ_U64(b.used_bytes, a.used_bytes);
	CHECK_EQ_U64(b.free_bytes, a.free_bytes);
	CHECK_EQ_U64(b.free_extents, a.free_extents);
	for (int i = 0; i < NK; i++) {
		snprintf(k, sizeof k, "c%03d", i);
		pmkv_del(pk, k, 4);
	}
	pmkv_info(pk, &b);
	CHECK(b.live == 0 && b.used_bytes == 0 && b.tombs == 0);
	CHECK_EQ_U64(b.free_extents, 1);
	pmkv_close(pk);
}

TEST(pool_full)
{
	char p[600], err[512], k[32], g[2048];
	static uint8_t v[300 * 1024];
	uint32_t n;
	pool_path(p, sizeof p, "full");
	struct pmkv *pk = pmkv_open(p, 256 * 1024, err, sizeof err);
	REQUIRE(pk, "%s", err);
	memset(v, 'f', sizeof v);
	unsigned cnt = 0;
	unsigned st;
	for (;; cnt++) {
		snprintf(k, sizeof k, "k%05u", cnt);
		if ((st = pmkv_put(pk, k, 6, v, 1000)) != KV_OK)
			break;
	}
	CHECK(st == KV_ERR_NOSPACE, "status %u", st);
	CHECK(cnt > 100, "only %u values of 1000 B in 256 KiB", cnt);
	struct pmkv_info a, b;
	pmkv_info(pk, &a);
	/* more refused puts change nothing */
	CHECK(pmkv_put(pk, "another", 7, v, 1000) == KV_ERR_NOSPACE);
	CHECK(pmkv_put(pk, "huge", 4, v, sizeof v) == KV_ERR_NOSPACE);
	st = pmkv_put(pk, "k00000", 6, v, 1500);
	CHECK(st == KV_ERR_NOSPACE, "a bigger overwrite cannot fit: status %u", st);
	CHECK(pmkv_get(pk, "k00000", 6, g, sizeof g, &n) == KV_OK && n == 1000,
	      "a refused overwrite keeps the old value");
	pmkv_info(pk, &b);
	CHECK(a.live == b.live && a.used_bytes == b.used_bytes && a.free_bytes == b.free_bytes);
	for (unsigned i = 0; i < cnt; i++) {
		snprintf(k, sizeof k, "k%05u", i);
		CHECK(pmkv_get(pk, k, 6, g, sizeof g, &n) == KV_OK && n == 1000);
	}
	/* room again after a delete */
	CHECK(pmkv_del(pk, "k00001", 6) == KV_OK);
	CHECK(pmkv_put(pk, "another", 7, v, 1000) == KV_OK);
	pmkv_close(pk);

	/* the index fills before the heap with tiny records */
	pool_path(p, sizeof p, "full-index");
	pk = pmkv_open(p, 256 * 1024, err, sizeof err);
	REQUIRE(pk, "%s", err);
	pmkv_info(pk, &a);
	for (cnt = 0;; cnt++) {
		snprintf(k, sizeof k, "i%05u", cnt);
		if ((st = pmkv_put(pk, k, 6, "x", 1)) != KV_OK)
			break;
	}
	CHECK(st == KV_ERR_NOSPACE);
	CHECK_EQ_U64(cnt, a.index_slots - a.index_slots / 8);
	CHECK(pmkv_put(pk, "i00000", 6, "y", 1) == KV_OK, "overwrites still work with a full index");
	CHECK(pmkv_del(pk, "i00002", 6) == KV_OK);
	CHECK(pmkv_put(pk, "new", 3, "z", 1) == KV_OK);
	pmkv_close(pk);
}

/* ---- crash test ------------------------------------------------------- */

enum { CR_KEYS = 48, CR_MAXV = 600 };

/* Op j of the crash workload: its key, and whether it deletes. */
static unsigned cr_key(uint64_t j)
{
	uint64_t s = j ^ 0x5555;
	return (unsigned)(rng_next(&s) % CR_KEYS);
}

static int cr_is_del(uint64_t j)
{
	uint64_t s = j ^ 0xaaaa;
	return rng_next(&s) % 6 == 0;
}

/* Child: runs ops start, start+1, ... and writes each completed op's number
 * to fd.  Never returns. */
static void cr_worker(const char *p, uint64_t start, int fd)
{
	char err[512], k[16];
	uint8_t v[CR_MAXV];
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct pmkv *pk = pmkv_open(p, 0, err, sizeof err);
	if (!pk) {
		fprintf(stderr, "crash worker: %s\n", err);
		_exit(2);
	}
	for (uint64_t j = start; j < start + 10000000; j++) {
		snprintf(k, sizeof k, "ck%02u", cr_key(j));
		unsigned st;
		if (cr_is_del(j)) {
			st = pmkv_del(pk, k, 4);
			if (st == KV_NOT_FOUND)
				st = KV_OK;
		} else {
			uint32_t len = pat_len(j, CR_MAXV);
			pat_fill(v, j, len);
			st = pmkv_put(pk, k, 4, v, len);
		}
		if (st != KV_OK)
			_exit(3);
		if (write(fd, &j, 8) != 8)
			_exit(4);
	}
	_exit(0);
}

struct cr_obs {
	uint64_t seq[CR_KEYS];      /* UINT64_MAX: absent; UINT64_MAX-1: bad value */
	uint64_t live, used, dropped, was_clean, tombs;
};

/* Child: opens the pool (recovery), reads every key, sends what it saw,
 * and exits without closing, so the next open is again after a crash. */
static void cr_observe(const char *p, int fd)
{
	char err[512], k[16];
	uint8_t v[CR_MAXV];
	uint32_t n;
	struct cr_obs o;
	struct pmkv_info in;
	memset(&o, 0, sizeof o);
	struct pmkv *pk = pmkv_open(p, 0, err, sizeof err);
	if (!pk) {
		fprintf(stderr, "crash observer: %s\n", err);
		_exit(2);
	}
	for (unsigned i = 0; i < CR_KEYS; i++) {
		snprintf(k, sizeof k, "ck%02u", i);
		unsigned st = pmkv_get(pk, k, 4, v, sizeof v, &n);
		if (st == KV_NOT_FOUND)
			o.seq[i] = UINT64_MAX;
		else if (st != KV_OK)
			o.seq[i] = UINT64_MAX - 1;
		else {
			uint64_t s = pat_check(v, n, CR_MAXV);
			o.seq[i] = s == UINT64_MAX ? UINT64_MAX - 1 : s;
		}
	}
	pmkv_info(pk, &in);
	o.live = in.live;
	o.used = in.used_bytes;
	o.dropped = in.dropped;
	o.was_clean = (uint64_t)in.was_clean;
	o.tombs = in.tombs;
	if (write(fd, &o, sizeof o) != (ssize_t)sizeof o)
		_exit(4);
	_exit(0);
}

/* Reads 8-byte op numbers from fd until EOF, or until `deadline` if it is
 * not 0; returns the last one seen, or `last` if none came.  Each number
 * is one 8-byte write, which a pipe keeps whole, and reads ask for a
 * multiple of 8 bytes, so no number is ever split. */
static uint64_t drain_last(int fd, uint64_t last, uint64_t deadline)
{
	uint64_t buf[512];
	for (;;) {
		if (deadline) {
			uint64_t now = clock_ns();
			if (now >= deadline)
				return last;
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			if (poll(&pfd, 1, (int)((deadline - now) / 1000000) + 1) <= 0)
				continue;
		}
		ssize_t r = read(fd, buf, sizeof buf);
		if (r <= 0)
			return last;
		if (r >= 8)
			last = buf[r / 8 - 1];
	}
}

TEST(crash_sigkill)
{
	char p[600], err[512];
	pool_path(p, sizeof p, "crash");
	struct pmkv *pk = pmkv_open(p, 2 << 20, err, sizeof err);
	REQUIRE(pk, "%s", err);
	pmkv_close(pk);

	uint64_t model[CR_KEYS], s = 7, next = 0, total_ops = 0;
	for (int i = 0; i < CR_KEYS; i++)
		model[i] = UINT64_MAX;
	int mid_op = 0;
	const int rounds = 100;
	for (int round = 0; round < rounds; round++) {
		int fds[2];
		REQUIRE(pipe(fds) == 0);
		uint64_t start = next;
		pid_t pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			cr_worker(p, start, fds[1]);
		}
		close(fds[1]);
		/* kill at a random instant 0..20 ms after the fork */
		uint64_t delay = rng_next(&s) % 20000000ull;
		uint64_t last = drain_last(fds[0], UINT64_MAX, clock_ns() + delay);
		kill(pid, SIGKILL);
		int status;
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status), "worker exited by itself (status %d)", status);
		uint64_t l2 = drain_last(fds[0], UINT64_MAX, 0);
		if (l2 != UINT64_MAX)
			last = l2;
		close(fds[0]);

		/* J = last completed op; the model after ops start..J */
		uint64_t J = last == UINT64_MAX ? start - 1 : last;
		if (last != UINT64_MAX) {
			REQUIRE(last >= start);
			for (uint64_t j = start; j <= J; j++)
				model[cr_key(j)] = cr_is_del(j) ? UINT64_MAX : j;
			total_ops += J - start + 1;
		}

		REQUIRE(pipe(fds) == 0);
		pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			close(fds[0]);
			cr_observe(p, fds[1]);
		}
		close(fds[1]);
		struct cr_obs o;
		ssize_t got = read(fds[0], &o, sizeof o);
		close(fds[0]);
		waitpid(pid, &status, 0);
		REQUIRE(got == (ssize_t)sizeof o, "observer failed (status %d)", status);

		/* Every key as after op J, except that op J+1 (in flight, or
		 * done but not yet reported) may have happened. */
		uint64_t f = J + 1;
		unsigned fk = cr_key(f);
		uint64_t falt = cr_is_del(f) ? UINT64_MAX : f;
		uint64_t used = 0, live = 0;
		for (unsigned i = 0; i < CR_KEYS; i++) {
			uint64_t seen = o.seq[i];
			int okv = seen == model[i] || (i == fk && seen == falt);
			CHECK(okv, "round %d key %u: saw %lld, completed-state %lld, in-flight op %llu",
			      round, i, (long long)seen, (long long)model[i], (unsigned long long)f);
			if (i == fk && seen == falt && seen != model[i])
				mid_op++;
			if (okv)
				model[i] = seen;     /* adopt what the pool holds */
			if (model[i] != UINT64_MAX) {
				live++;
				used += pmkv_record_bytes(4, pat_len(model[i], CR_MAXV));
			}
		}
		CHECK_EQ_U64(o.dropped, 0);
		/* The pool was last closed cleanly before round 0; a worker
		 * killed before it even opened the pool (no op reported, and
		 * slow to start under a sanitizer) leaves it so.  Every later
		 * open is ended by a kill or an observer's _exit. */
		CHECK(o.was_clean == 0 || (round == 0 && last == UINT64_MAX),
		      "round %d: the pool says it was closed cleanly after a kill (last op %lld)", round,
		      (long long)(last == UINT64_MAX ? -1 : (long long)last));
		CHECK_EQ_U64(o.live, live);
		CHECK_EQ_U64(o.used, used);
		if (unit_failed_)
			return;
		next = J + 2;
	}
	fprintf(stderr, "  crash: %d rounds, %llu completed ops, in-flight op visible %d times\n",
		rounds, (unsigned long long)total_ops, mid_op);
	CHECK(total_ops > 100, "the workers got almost nothing done");
}

/* ---- corruption ------------------------------------------------------- */

static int file_rw(const char *p, uint64_t off, void *buf, size_t n, int wr)
{
	int fd = open(p, O_RDWR);
	if (fd < 0)
		return -1;
	ssize_t r = wr ? pwrite(fd, buf, n, (off_t)off) : pread(fd, buf, n, (off_t)off);
	close(fd);
	return r == (ssize_t)n ? 0 : -1;
}

static void ck_key(char *k, size_t n, int i)
{
	snprintf(k, n, "corrupt-key-%03d", i);
}

TEST(corrupted_pool)
{
	char p[600], err[512], k[32];
	uint8_t v[512], g[512];
	uint32_t n;
	enum { NKEY = 100 };
	pool_path(p, sizeof p, "corrupt");
	struct pmkv *pk = pmkv_open(p, 1 << 20, err, sizeof err);
	REQUIRE(pk, "%s", err);
	for (int i = 0; i < NKEY; i++) {
		ck_key(k, sizeof k, i);
		uint32_t len = pat_len((uint64_t)i, sizeof v);
		pat_fill(v, (uint64_t)i, len);
		REQUIRE(pmkv_put(pk, k, (uint32_t)strlen(k), v, len) == KV_OK);
	}
	uint64_t so[6], ro[6];
	for (int i = 1; i <= 5; i++) {
		ck_key(k, sizeof k, i);
		REQUIRE(pmkv_locate(pk, k, (uint32_t)strlen(k), &so[i], &ro[i]) == 0);
	}
	struct pmkv_info in;
	pmkv_info(pk, &in);
	pmkv_close(pk);

	/* 1: a value byte; 2: slot -> unaligned offset; 3: slot -> key 4's
	 * record; 4: untouched; 5: record magic.  Plus a slot beyond the end
	 * written over key 2's and garbage in the free heap. */
	uint8_t byte;
	REQUIRE(file_rw(p, ro[1] + 32 + 20, &byte, 1, 0) == 0);
	byte ^= 0x40;
	REQUIRE(file_rw(p, ro[1] + 32 + 20, &byte, 1, 1) == 0);
	uint64_t sv;
	REQUIRE(file_rw(p, so[2], &sv, 8, 0) == 0);
	uint64_t bogus = (sv & ~((1ull << 48) - 1)) | 12345;
	REQUIRE(file_rw(p, so[2], &bogus, 8, 1) == 0);
	uint64_t sv4;
	REQUIRE(file_rw(p, so[4], &sv4, 8, 0) == 0);
	REQUIRE(file_rw(p, so[3], &sv4, 8, 1) == 0);
	uint32_t junk = 0xdeadbeef;
	REQUIRE(file_rw(p, ro[5] + 8, &junk, 4, 1) == 0);
	uint8_t garbage[4096];
	uint64_t gs = 99;
	for (size_t i = 0; i < sizeof garbage; i++)
		garbage[i] = (uint8_t)rng_next(&gs);
	REQUIRE(file_rw(p, in.pool_bytes - sizeof garbage, garbage, sizeof garbage, 1) == 0);

	pk = pmkv_open(p, 0, err, sizeof err);
	REQUIRE(pk, "%s", err);
	pmkv_info(pk, &in);
	CHECK_EQ_U64(in.dropped, 4);
	CHECK_EQ_U64(in.live, NKEY - 4);
	for (int i = 0; i < NKEY; i++) {
		ck_key(k, sizeof k, i);
		unsigned st = pmkv_get(pk, k, (uint32_t)strlen(k), g, sizeof g, &n);
		if (i == 1 || i == 2 || i == 3 || i == 5)
			CHECK(st == KV_NOT_FOUND, "key %d: status %u", i, st);
		else
			CHECK(st == KV_OK && pat_check(g, n, sizeof v) == (uint64_t)i, "key %d", i);
	}
	/* the store keeps working, and the repair is durable */
	for (int i = 1; i <= 5; i++) {
		ck_key(k, sizeof k, i);
		uint32_t len = pat_len((uint64_t)i, sizeof v);
		pat_fill(v, (uint64_t)i, len);
		CHECK(pmkv_put(pk, k, (uint32_t)strlen(k), v, len) == KV_OK);
	}
	pmkv_close(pk);
	pk = pmkv_open(p, 0, err, sizeof err);
	REQUIRE(pk, "%s", err);
	pmkv_info(pk, &in);
	CHECK(in.dropped == 0 && in.live == NKEY);
	pmkv_close(pk);

	/* random byte damage anywhere: open fails with a message or works, and
	 * a get returns the right value or nothing, never a wrong one */
	static uint8_t pristine[1 << 20];
	REQUIRE(file_rw(p, 0, pristine, in.pool_bytes, 0) == 0);
	static uint8_t img[1 << 20];
	uint64_t rs = 2024;
	int opened = 0, refused = 0, wrong = 0;
	for (int round = 0; round < 40; round++) {
		memcpy(img, pristine, in.pool_bytes);
		int flips = 1 + (int)(rng_next(&rs) % 64);
		for (int f = 0; f < flips; f++) {
			/* aim at the index and the used heap mostly */
			uint64_t r = rng_next(&rs), off;
			if (round % 8 == 0)
				off = r % in.pool_bytes;
			else if (r & 1)
				off = 4096 + (r >> 1) % (in.index_slots * 8);
			else
				off = 4096 + in.index_slots * 8 + (r >> 1) % (64 * 1024);
			img[off] ^= (uint8_t)(1u << ((r >> 40) & 7));
		}
		REQUIRE(file_rw(p, 0, img, in.pool_bytes, 1) == 0);
		err[0] = 0;
		pk = pmkv_open(p, 0, err, sizeof err);
		if (!pk) {
			refused++;
			CHECK(strstr(err, p) != NULL, "message does not name the file: %s", err);
			continue;
		}
		opened++;
		for (int i = 0; i < NKEY; i++) {
			ck_key(k, sizeof k, i);
			unsigned st = pmkv_get(pk, k, (uint32_t)strlen(k), g, sizeof g, &n);
			if (st == KV_OK && pat_check(g, n, sizeof v) != (uint64_t)i)
				wrong++;
			else if (st != KV_OK && st != KV_NOT_FOUND)
				wrong++;
		}
		CHECK(put_s(pk, "after-damage", "still works") == KV_OK);
		CHECK(has(pk, "after-damage", "still works"));
		pmkv_close(pk);
	}
	CHECK(wrong == 0, "%d wrong values returned from damaged pools", wrong);
	CHECK(opened > 20, "only %d of 40 damaged pools opened", opened);
}

TEST(bad_files_and_locking)
{
	char p[600], q[600], err[512];
	pool_path(p, sizeof p, "lockme");
	struct pmkv *pk = pmkv_open(p, 1 << 20, err, sizeof err);
	REQUIRE(pk, "%s", err);
	err[0] = 0;
	struct pmkv *pk2 = pmkv_open(p, 1 << 20, err, sizeof err);
	CHECK(pk2 == NULL && strstr(err, "in use") && strstr(err, p), "%s", err);
	pmkv_close(pk2);
	pmkv_close(pk);
	pk = pmkv_open(p, 1 << 20, err, sizeof err);
	CHECK(pk != NULL, "reopen after close: %s", err);
	pmkv_close(pk);

	/* header damage: refused with a message naming the file */
	uint8_t b = 0;
	REQUIRE(file_rw(p, 20, &b, 1, 0) == 0);
	b ^= 1;
	REQUIRE(file_rw(p, 20, &b, 1, 1) == 0);
	pk = pmkv_open(p, 0, err, sizeof err);
	CHECK(pk == NULL && strstr(err, "corrupt") && strstr(err, p), "%s", err);
	pmkv_close(pk);
	b ^= 1;
	REQUIRE(file_rw(p, 20, &b, 1, 1) == 0);
	REQUIRE(truncate(p, 512 * 1024) == 0);
	pk = pmkv_open(p, 0, err, sizeof err);
	CHECK(pk == NULL && strstr(err, "truncated"), "%s", err);
	pmkv_close(pk);

	/* not a pool at all, too short, a directory, a missing directory */
	pool_path(q, sizeof q, "junk");
	int fd = open(q, O_CREAT | O_WRONLY, 0600);
	REQUIRE(fd >= 0);
	char junk[20000];
	memset(junk, 'x', sizeof junk);
	CHECK(write(fd, junk, sizeof junk) == (ssize_t)sizeof junk);
	close(fd);
	pk = pmkv_open(q, 0, err, sizeof err);
	CHECK(pk == NULL && strstr(err, "not a pmkv pool"), "%s", err);
	REQUIRE(truncate(q, 100) == 0);
	pk = pmkv_open(q, 0, err, sizeof err);
	CHECK(pk == NULL && strstr(err, "not a pmkv pool"), "%s", err);
	pool_path(q, sizeof q, "");
	pk = pmkv_open(q, 0, err, sizeof err);
	CHECK(pk == NULL && err[0], "%s", err);
	pool_path(q, sizeof q, "no-such-dir/pool");
	pk = pmkv_open(q, 1 << 20, err, sizeof err);
	CHECK(pk == NULL && strstr(err, "no-such-dir"), "%s", err);
	pool_path(q, sizeof q, "tiny");
	pk = pmkv_open(q, 1000, err, sizeof err);
	CHECK(pk == NULL && strstr(err, "out of range"), "%s", err);
	pk = pmkv_open("", 1 << 20, err, sizeof err);
	CHECK(pk == NULL && err[0]);
}

TEST(backend_interface)
{
	char p[600], f[640], err[512];
	static uint8_t vbuf[KV_MAX_VALUE];
	const struct backend_ops *ops = &pmkv_backend_ops;
	CHECK(strcmp(ops->name, "pmkv") == 0 && ops->version == BACKEND_OPS_VERSION);

	pool_path(p, sizeof p, "be");
	struct backend_conf c = { .kind = "pmkv", .path = p, .set.pool_mb = 1, .worker = 3 };
	struct backend *b = ops->open(&c, err, sizeof err);
	REQUIRE(b, "%s", err);
	snprintf(f, sizeof f, "%s.w3", p);
	CHECK(access(f, R_OK | W_OK) == 0, "per-worker file %s", f);

	struct backend_req r = { .op = KV_OP_SET, .key = (const uint8_t *)"k", .key_len = 1,
				 .val = (const uint8_t *)"10", .val_len = 2 };
	struct backend_out o = { .val = vbuf, .val_cap = sizeof vbuf };
	ops->exec(b, &r, &o);
	CHECK(o.status == KV_OK);
	r.op = KV_OP_GET;
	ops->exec(b, &r, &o);
	CHECK(o.status == KV_OK && o.val_len == 2 && memcmp(vbuf, "10", 2) == 0);
	r.op = KV_OP_INCR;
	r.aux = 5;
	ops->exec(b, &r, &o);
	CHECK(o.status == KV_OK && o.val_len == 2 && memcmp(vbuf, "15", 2) == 0);
	r.op = KV_OP_ECHO;
	r.val = (const uint8_t *)"echo";
	r.val_len = 4;
	ops->exec(b, &r, &o);
	CHECK(o.status == KV_OK && o.val_len == 4 && memcmp(vbuf, "echo", 4) == 0);
	r.op = KV_OP_DEL;
	ops->exec(b, &r, &o);
	CHECK(o.status == KV_OK && o.val_len == 0);
	r.op = KV_OP_GET;
	ops->exec(b, &r, &o);
	CHECK(o.status == KV_NOT_FOUND && o.val_len == 0);
	r.op = 77;
	ops->exec(b, &r, &o);
	CHECK(o.status == KV_ERR_OP);

	json_t *js = ops->stats_json(b);
	REQUIRE(js);
	const char *mode = json_string_value(json_object_get(js, "persist"));
	CHECK(mode && (strcmp(mode, "pmem_msync") == 0 || strcmp(mode, "pmem_persist") == 0));
	CHECK(json_integer_value(json_object_get(js, "sets")) == 1);
	CHECK(json_integer_value(json_object_get(js, "get_misses")) == 1);
	CHECK(json_integer_value(json_object_get(js, "keys")) == 0);
	CHECK(json_integer_value(json_object_get(js, "persists")) > 0);
	CHECK(json_is_true(json_object_get(js, "created")));
	json_decref(js);
	ops->close(b);

	b = ops->open(&c, err, sizeof err);
	REQUIRE(b, "%s", err);
	js = ops->stats_json(b);
	CHECK(json_is_true(json_object_get(js, "was_clean")) && json_is_false(json_object_get(js, "created")));
	json_decref(js);
	ops->close(b);

	c.path = NULL;
	CHECK(ops->open(&c, err, sizeof err) == NULL && strstr(err, "path"), "%s", err);
	c.path = p;
	c.set.pool_mb = 1ull << 40;
	CHECK(ops->open(&c, err, sizeof err) == NULL && strstr(err, "pool_mb"), "%s", err);
	/* the row's bound is the pool's: one past it is refused by the
	 * config check and by the back end alike, and a pool of the row's
	 * largest size fits the 32-bit block numbers */
	const struct setting *row = settings_find("server.backend", "pool_mb");
	REQUIRE(row);
	CHECK_EQ_U64((uint64_t)row->max << 20, PMKV_MAX_POOL_BYTES);
	c.set.pool_mb = (uint64_t)row->max + 1;
	CHECK(ops->open(&c, err, sizeof err) == NULL && strstr(err, "pool_mb") && strstr(err, "131072"), "%s", err);
}

UNIT_MAIN(basic_semantics, reopen_keeps_everything, no_leak_under_churn, pool_full,
	  crash_sigkill, corrupted_pool, bad_files_and_locking, backend_interface)
