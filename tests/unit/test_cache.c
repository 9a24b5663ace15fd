/*
 * test_cache.c - the memcached-like `cache` back end: semantics, slab size
 * limits, LRU eviction order, memory accounting, and a randomized
 * differential test against a plain reference map.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <malloc.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "backend.h"
#include "be_cache.h"

static uint8_t outbuf[KV_MAX_VALUE];

static struct backend *open_cache_with(uint64_t mb, int prefault)
{
	struct backend_conf c = { .kind = "cache", .set.memory_mb = mb, .set.prefault = prefault };
	char err[256] = "";
	struct backend *b = cache_backend_ops.open(&c, err, sizeof err);
	if (!b)
		fprintf(stderr, "  open: %s\n", err);
	return b;
}

static struct backend *open_cache(uint64_t mb)
{
	return open_cache_with(mb, 0);
}

static struct backend_out run(struct backend *b, unsigned op, const char *key,
			      const void *val, uint32_t vlen, uint64_t aux)
{
	struct backend_req r = {
		.op = op, .key = (const uint8_t *)key, .key_len = key ? (uint32_t)strlen(key) : 0,
		.val = val, .val_len = vlen, .aux = aux,
	};
	struct backend_out o = { .status = 99, .val = outbuf, .val_cap = sizeof outbuf, .val_len = 12345 };
	cache_backend_ops.exec(b, &r, &o);
	return o;
}

static unsigned set_s(struct backend *b, const char *k, const char *v)
{
	return run(b, KV_OP_SET, k, v, (uint32_t)strlen(v), 0).status;
}

/* Gets k and compares with v (NULL: expect NOT_FOUND). 0 if it matches. */
static int get_is(struct backend *b, const char *k, const void *v, uint32_t vlen)
{
	struct backend_out o = run(b, KV_OP_GET, k, NULL, 0, 0);
	if (!v)
		return o.status == KV_NOT_FOUND && o.val_len == 0 ? 0 : -1;
	return o.status == KV_OK && o.val_len == vlen && memcmp(outbuf, v, vlen) == 0 ? 0 : -1;
}

static void check_consistent(struct backend *b, int line)
{
	char err[256];
	if (cache_check(b, err, sizeof err) != 0)
		CHECK(0, "line %d: cache_check: %s", line, err);
}
#define CONSISTENT(b) check_consistent(b, __LINE__)

TEST(basic_semantics)
{
	struct backend *b = open_cache(8);
	REQUIRE(b);
	CHECK(get_is(b, "a", NULL, 0) == 0);
	CHECK(set_s(b, "a", "hello") == KV_OK);
	CHECK(get_is(b, "a", "hello", 5) == 0);
	CHECK(set_s(b, "b", "") == KV_OK, "empty values are values");
	CHECK(get_is(b, "b", "", 0) == 0);
	CHECK(run(b, KV_OP_DEL, "a", NULL, 0, 0).status == KV_OK);
	CHECK(get_is(b, "a", NULL, 0) == 0);
	CHECK(run(b, KV_OP_DEL, "a", NULL, 0, 0).status == KV_NOT_FOUND);
	CHECK(run(b, KV_OP_NOP, NULL, NULL, 0, 0).status == KV_OK);
	struct backend_out o = run(b, KV_OP_ECHO, "x", "ping", 4, 0);
	CHECK(o.status == KV_OK && o.val_len == 4 && memcmp(outbuf, "ping", 4) == 0);
	CHECK(run(b, 77, "a", NULL, 0, 0).status == KV_ERR_OP);
	/* Keys are binary and length-delimited: "k" and "k\0" differ. */
	struct backend_req r = { .op = KV_OP_SET, .key = (const uint8_t *)"k\0", .key_len = 2,
				 .val = (const uint8_t *)"two", .val_len = 3 };
	struct backend_out o2 = { .val = outbuf, .val_cap = sizeof outbuf };
	cache_backend_ops.exec(b, &r, &o2);
	CHECK(o2.status == KV_OK);
	CHECK(set_s(b, "k", "one") == KV_OK);
	CHECK(get_is(b, "k", "one", 3) == 0);
	/* A too-small output buffer is reported, not overrun. */
	struct backend_req g = { .op = KV_OP_GET, .key = (const uint8_t *)"k", .key_len = 1 };
	uint8_t small[2] = { 0xEE, 0xEE };
	struct backend_out o3 = { .val = small, .val_cap = 2 };
	cache_backend_ops.exec(b, &g, &o3);
	CHECK(o3.status == KV_ERR_NOSPACE && o3.val_len == 3);
	CHECK(small[0] == 0xEE && small[1] == 0xEE);

	struct cache_stats st;
	cache_get_stats(b, &st);
	CHECK_EQ_U64(st.items, 3);
	CHECK_EQ_U64(st.hits, 4);
	CHECK_EQ_U64(st.misses, 2);
	CHECK_EQ_U64(st.evictions, 0);
	CONSISTENT(b);
	cache_backend_ops.close(b);
}

TEST(incr_semantics)
{
	struct backend *b = open_cache(4);
	REQUIRE(b);
	struct backend_out o = run(b, KV_OP_INCR, "n", NULL, 0, 5);
	CHECK(o.status == KV_NOT_FOUND, "incr of a missing key");
	CHECK(get_is(b, "n", NULL, 0) == 0, "incr must not create the key");
	CHECK(set_s(b, "n", "41") == KV_OK);
	o = run(b, KV_OP_INCR, "n", NULL, 0, 1);
	CHECK(o.status == KV_OK && o.val_len == 2 && memcmp(outbuf, "42", 2) == 0);
	CHECK(get_is(b, "n", "42", 2) == 0);
	o = run(b, KV_OP_INCR, "n", NULL, 0, 1000000000000ull);
	CHECK(o.status == KV_OK && get_is(b, "n", "1000000000042", 13) == 0);
	o = run(b, KV_OP_INCR, "n", NULL, 0, 0);
	CHECK(o.status == KV_OK && o.val_len == 13);
	/* Wraps at 2^64 like memcached. */
	CHECK(set_s(b, "m", "18446744073709551615") == KV_OK);
	o = run(b, KV_OP_INCR, "m", NULL, 0, 2);
	CHECK(o.status == KV_OK && get_is(b, "m", "1", 1) == 0);
	/* Not a number -> KV_ERR_OP, value untouched. */
	const char *bad[] = { "abc", "", "12a", " 12", "-1", "18446744073709551616",
			      "123456789012345678901" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK(set_s(b, "x", bad[i]) == KV_OK);
		o = run(b, KV_OP_INCR, "x", NULL, 0, 1);
		CHECK(o.status == KV_ERR_OP, "incr of \"%s\" gave status %u", bad[i], o.status);
		CHECK(get_is(b, "x", bad[i], (uint32_t)strlen(bad[i])) == 0);
	}
	/* Growing through class boundaries (many digits) keeps it consistent. */
	CHECK(set_s(b, "g", "0") == KV_OK);
	uint64_t v = 0;
	for (int i = 0; i < 60; i++) {
		uint64_t d = (uint64_t)1 << i;
		v += d;
		o = run(b, KV_OP_INCR, "g", NULL, 0, d);
		char want[24];
		int n = snprintf(want, sizeof want, "%" PRIu64, v);
		CHECK(o.status == KV_OK && o.val_len == (uint32_t)n && memcmp(outbuf, want, (size_t)n) == 0);
	}
	CONSISTENT(b);
	cache_backend_ops.close(b);
}

TEST(overwrite_with_other_sizes)
{
	struct backend *b = open_cache(8);
	REQUIRE(b);
	static uint8_t val[70000];
	for (size_t i = 0; i < sizeof val; i++)
		val[i] = (uint8_t)(i * 31 + 7);
	uint32_t sizes[] = { 10, 10, 11, 3000, 20, 65000, 64, 0, 70000, 5 };
	struct cache_stats st;
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		val[0] = (uint8_t)i;   /* each version differs */
		CHECK(run(b, KV_OP_SET, "key", val, sizes[i], 0).status == KV_OK);
		CHECK(get_is(b, "key", val, sizes[i]) == 0, "after set of %u bytes", sizes[i]);
		cache_get_stats(b, &st);
		CHECK_EQ_U64(st.items, 1);
		CHECK_EQ_U64(st.bytes, 40 + 3 + sizes[i]);
		CONSISTENT(b);
	}
	cache_backend_ops.close(b);
}

TEST(value_size_boundary)
{
	struct backend *b = open_cache(2);
	REQUIRE(b);
	uint8_t *val = malloc(KV_MAX_VALUE);
	REQUIRE(val);
	for (uint32_t i = 0; i < KV_MAX_VALUE; i++)
		val[i] = (uint8_t)(i ^ (i >> 8));
	uint32_t max = cache_max_value(4);
	CHECK_EQ_U64(max, (1u << 20) - 40 - 4);
	CHECK(run(b, KV_OP_SET, "big1", val, max, 0).status == KV_OK);
	CHECK(get_is(b, "big1", val, max) == 0);
	/* One byte more does not fit the largest class, and drops the old
	 * value rather than leaving it readable. */
	CHECK(run(b, KV_OP_SET, "big1", val, max + 1, 0).status == KV_ERR_NOSPACE);
	CHECK(get_is(b, "big1", NULL, 0) == 0);
	CHECK(run(b, KV_OP_SET, "big2", val, KV_MAX_VALUE, 0).status == KV_ERR_NOSPACE);
	/* Three maximal items in 2 pages: the first is evicted. */
	CHECK(run(b, KV_OP_SET, "big1", val, max, 0).status == KV_OK);
	CHECK(run(b, KV_OP_SET, "big2", val, max, 0).status == KV_OK);
	CHECK(run(b, KV_OP_SET, "big3", val, max, 0).status == KV_OK);
	CHECK(get_is(b, "big1", NULL, 0) == 0);
	CHECK(get_is(b, "big2", val, max) == 0);
	CHECK(get_is(b, "big3", val, max) == 0);
	struct cache_stats st;
	cache_get_stats(b, &st);
	CHECK_EQ_U64(st.evictions, 1);
	CHECK_EQ_U64(st.nospace, 2);
	CHECK(st.pages_used <= 2);
	CONSISTENT(b);
	free(val);
	cache_backend_ops.close(b);
}

static void key_of(char *k, size_t cap, int i)
{
	snprintf(k, cap, "key:%08d", i);
}

/*
 * 2 MiB of memory, 1 KiB values: fill until the first eviction, touch the
 * 100 oldest keys, then keep inserting.  Evictions must take the untouched
 * keys strictly oldest first, and the touched ones must survive.
 */
TEST(lru_eviction_order)
{
	struct backend *b = open_cache(2);
	REQUIRE(b);
	uint8_t val[1024];
	memset(val, 'v', sizeof val);
	char k[32];
	struct cache_stats st;
	int n = 0;
	for (;; n++) {
		key_of(k, sizeof k, n);
		REQUIRE(run(b, KV_OP_SET, k, val, sizeof val, 0).status == KV_OK);
		cache_get_stats(b, &st);
		if (st.evictions > 0)
			break;
	}
	/* Key 0 was the first victim; every other key so far is present. */
	int cap = n;   /* items that fit: keys 1..n */
	CHECK(cap > 1500 && cap < 2048, "%d 1 KiB items in 2 MiB", cap);
	CHECK(get_is(b, "key:00000000", NULL, 0) == 0);
	for (int i = 1; i <= 100; i++) {
		key_of(k, sizeof k, i);
		CHECK(get_is(b, k, val, sizeof val) == 0, "key %d", i);
	}
	/* Insert cap/2 more: that evicts cap/2 keys, all untouched ones. */
	int more = cap / 2;
	for (int i = 0; i < more; i++) {
		key_of(k, sizeof k, n + 1 + i);
		CHECK(run(b, KV_OP_SET, k, val, sizeof val, 0).status == KV_OK);
	}
	for (int i = 1; i <= 100; i++) {
		key_of(k, sizeof k, i);
		CHECK(get_is(b, k, val, sizeof val) == 0, "touched key %d was evicted", i);
	}
	/* Untouched keys 101 .. 100+more are gone, the next ones remain. */
	int gone = 0, kept = 0;
	for (int i = 101; i <= n; i++) {
		key_of(k, sizeof k, i);
		struct backend_out o = run(b, KV_OP_GET, k, NULL, 0, 0);
		if (i <= 100 + more)
			gone += o.status == KV_NOT_FOUND;
		else
			kept += o.status == KV_OK;
	}
	CHECK(gone == more, "%d of %d oldest untouched keys evicted", gone, more);
	CHECK(kept == n - 100 - more, "%d of %d newer keys kept", kept, n - 100 - more);
	cache_get_stats(b, &st);
	CHECK_EQ_U64(st.evictions, 1 + (uint64_t)more);
	CHECK(st.pages_used <= 2);
	CONSISTENT(b);
	cache_backend_ops.close(b);
}

/* Random sizes and keys under heavy pressure: the page count never
 * exceeds the limit, the structures stay consistent, and what is found
 * is what was last stored. */
TEST(memory_limit_under_pressure)
{
	struct backend *b = open_cache(3);
	REQUIRE(b);
	static uint8_t val[200000];
	for (size_t i = 0; i < sizeof val; i++)
		val[i] = (uint8_t)(i * 13);
	uint64_t s = 777;
	uint32_t last_len[4000];
	memset(last_len, 0xFF, sizeof last_len);
	struct cache_stats st;
	char k[32];
	for (int it = 0; it < 60000; it++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		int key = (int)((s >> 33) % 4000);
		uint32_t len = (uint32_t)((s >> 13) % 100 < 97 ? (s >> 20) % 2000 : (s >> 20) % sizeof val);
		key_of(k, sizeof k, key);
		unsigned op = (unsigned)((s >> 45) % 10);
		if (op < 6) {
			unsigned stt = run(b, KV_OP_SET, k, val, len, 0).status;
			CHECK(stt == KV_OK || stt == KV_ERR_NOSPACE);
			last_len[key] = stt == KV_OK ? len : UINT32_MAX;
		} else if (op < 9) {
			struct backend_out o = run(b, KV_OP_GET, k, NULL, 0, 0);
			if (o.status == KV_OK)
				CHECK(last_len[key] == o.val_len && memcmp(outbuf, val, o.val_len) == 0,
				      "key %d: got %u bytes, last stored %u", key, o.val_len, last_len[key]);
			else
				CHECK(o.status == KV_NOT_FOUND);
		} else {
			run(b, KV_OP_DEL, k, NULL, 0, 0);
			last_len[key] = UINT32_MAX;
		}
		cache_get_stats(b, &st);
		if (st.pages_used > st.pages_limit || st.bytes > st.pages_limit * CACHE_PAGE_SIZE) {
			CHECK(0, "over the limit: %" PRIu64 " pages, %" PRIu64 " bytes", st.pages_used, st.bytes);
			break;
		}
		if (it % 5000 == 0)
			CONSISTENT(b);
	}
	cache_get_stats(b, &st);
	CHECK(st.evictions > 1000, "only %" PRIu64 " evictions: no pressure", st.evictions);
	CHECK(st.page_moves > 0, "pages never moved between classes");
	CHECK_EQ_U64(st.pages_used, 3);
	CONSISTENT(b);
	/* The whole answer is valid JSON with the documented counters. */
	json_t *j = cache_backend_ops.stats_json(b);
	REQUIRE(j);
	CHECK(json_integer_value(json_object_get(j, "evictions")) == (json_int_t)st.evictions);
	CHECK(json_integer_value(json_object_get(j, "pages_used")) == 3);
	CHECK(json_is_array(json_object_get(j, "classes")));
	CHECK(json_integer_value(json_object_get(json_object_get(j, "ops"), "set")) > 0);
	json_decref(j);
	cache_backend_ops.close(b);
}

/* A class that never got a page can still store once memory is full: it
 * takes a page from the class holding the most. */
TEST(page_moves_to_a_starved_class)
{
	struct backend *b = open_cache(2);
	REQUIRE(b);
	uint8_t val[100000];
	memset(val, 'q', sizeof val);
	char k[32];
	for (int i = 0; i < 30000; i++) {
		key_of(k, sizeof k, i);
		CHECK(run(b, KV_OP_SET, k, val, 100, 0).status == KV_OK);
	}
	struct cache_stats st;
	cache_get_stats(b, &st);
	CHECK_EQ_U64(st.pages_used, 2);
	CHECK(st.evictions > 0);
	CHECK(run(b, KV_OP_SET, "large", val, sizeof val, 0).status == KV_OK);
	CHECK(get_is(b, "large", val, sizeof val) == 0);
	cache_get_stats(b, &st);
	CHECK_EQ_U64(st.page_moves, 1);
	CHECK_EQ_U64(st.pages_used, 2);
	/* One page of small items was given up (the one holding the LRU tail);
	 * the other page's items are all still readable. */
	int found = 0;
	for (int i = 0; i < 30000; i++) {
		key_of(k, sizeof k, i);
		found += get_is(b, k, val, 100) == 0;
	}
	CHECK_EQ_U64(st.items, (uint64_t)found + 1);
	CHECK(found > 5000 && found < 6000, "%d small items left", found);
	CONSISTENT(b);
	cache_backend_ops.close(b);
}

/* Reference map: fixed key space, value bytes or "absent". */
struct ref {
	uint8_t *v[512];
	uint32_t len[512];
};

TEST(differential_against_reference)
{
	struct backend *b = open_cache(64);
	REQUIRE(b);
	struct ref *m = calloc(1, sizeof *m);
	REQUIRE(m);
	uint64_t s = 2024;
	uint8_t val[5000];
	char k[32];
	int checked = 0;
	for (int it = 0; it < 200000; it++) {
		s ^= s << 13; s ^= s >> 7; s ^= s << 17;
		int key = (int)(s % 512);
		key_of(k, sizeof k, key);
		unsigned op = (unsigned)((s >> 20) % 100);
		if (op < 35) {                       /* set, sometimes numeric */
			uint32_t len;
			if ((s >> 40) % 4 == 0) {
				len = (uint32_t)snprintf((char *)val, sizeof val, "%" PRIu64, s >> 44);
			} else {
				len = (uint32_t)((s >> 30) % sizeof val);
				for (uint32_t i = 0; i < len; i++)
					val[i] = (uint8_t)(s >> (i % 56)) + (uint8_t)i;
			}
			REQUIRE(run(b, KV_OP_SET, k, val, len, 0).status == KV_OK);
			free(m->v[key]);
			m->v[key] = malloc(len ? len : 1);
			memcpy(m->v[key], val, len);
			m->len[key] = len;
		} else if (op < 80) {                /* get */
			struct backend_out o = run(b, KV_OP_GET, k, NULL, 0, 0);
			if (m->v[key])
				CHECK(o.status == KV_OK && o.val_len == m->len[key] &&
				      memcmp(outbuf, m->v[key], o.val_len) == 0, "get key %d", key);
			else
				CHECK(o.status == KV_NOT_FOUND, "get key %d: want NOT_FOUND", key);
			checked++;
		} else if (op < 90) {                /* del */
			unsigned st = run(b, KV_OP_DEL, k, NULL, 0, 0).status;
			CHECK(st == (m->v[key] ? KV_OK : KV_NOT_FOUND));
			free(m->v[key]);
			m->v[key] = NULL;
		} else {                             /* incr */
			uint64_t d = s >> 50;
			struct backend_out o = run(b, KV_OP_INCR, k, NULL, 0, d);
			uint64_t cur = 0;
			int numeric = m->v[key] && m->len[key] > 0 && m->len[key] <= 19;
			for (uint32_t i = 0; numeric && i < m->len[key]; i++) {
				uint8_t c = m->v[key][i];
				if (c < '0' || c > '9')
					numeric = 0;
				else
					cur = cur * 10 + (uint64_t)(c - '0');
			}
			if (!m->v[key]) {
				CHECK(o.status == KV_NOT_FOUND);
			} else if (!numeric) {
				CHECK(o.status == KV_ERR_OP, "incr of a non-number, key %d", key);
			} else {
				char want[24];
				int n = snprintf(want, sizeof want, "%" PRIu64, cur + d);
				CHECK(o.status == KV_OK && o.val_len == (uint32_t)n &&
				      memcmp(outbuf, want, (size_t)n) == 0, "incr key %d", key);
				free(m->v[key]);
				m->v[key] = malloc((size_t)n);
				memcpy(m->v[key], want, (size_t)n);
				m->len[key] = (uint32_t)n;
			}
		}
		if (it % 50000 == 0)
			CONSISTENT(b);
	}
	struct cache_stats st;
	cache_get_stats(b, &st);
	CHECK_EQ_U64(st.evictions, 0);
	uint64_t live = 0;
	for (int i = 0; i < 512; i++)
		live += m->v[i] != NULL;
	CHECK_EQ_U64(st.items, live);
	CHECK(checked > 50000);
	CONSISTENT(b);
	for (int i = 0; i < 512; i++)
		free(m->v[i]);
	free(m);
	cache_backend_ops.close(b);
}

TEST(open_limits)
{
	char err[256] = "";
	struct backend_conf c = { .kind = "cache", .set.memory_mb = (uint64_t)settings_find("server.backend", "memory_mb")->max + 1 };
	CHECK(cache_backend_ops.open(&c, err, sizeof err) == NULL);
	CHECK(strstr(err, "memory_mb") != NULL, "error names the setting: %s", err);
	c.set.memory_mb = 0;   /* default size */
	struct backend *b = cache_backend_ops.open(&c, err, sizeof err);
	REQUIRE(b);
	struct cache_stats st;
	cache_get_stats(b, &st);
	CHECK_EQ_U64(st.pages_limit, (uint64_t)settings_default_num("server.backend", "memory_mb"));
	CHECK_EQ_U64(st.pages_used, 0);
	CHECK(st.classes > 40 && st.classes < 64, "%u classes", st.classes);
	cache_backend_ops.close(b);
}

/* Prefaulting (the server's default) allocates every page at open and
 * changes nothing else: the same operations give the same answers, the
 * same evictions and the same page use as on-demand pages. */
TEST(prefaulted_pages_change_nothing_but_when_memory_is_touched)
{
	char err[256] = "";
	struct backend *lazy = open_cache_with(4, 0), *pre = open_cache_with(4, 1);
	REQUIRE(lazy && pre);
	static char val[9000];
	memset(val, 'v', sizeof val);
	uint64_t x = 7;
	unsigned differ = 0;
	for (int i = 0; i < 20000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		char key[24];
		snprintf(key, sizeof key, "k%u", (unsigned)(x >> 40) % 3000);
		uint32_t vlen = 1 + (uint32_t)(x >> 20) % sizeof val;
		unsigned op = (x >> 60) < 4 ? KV_OP_GET : KV_OP_SET;
		struct backend_out a = run(lazy, op, key, val, vlen, 0);
		uint32_t alen = a.val_len;
		struct backend_out b = run(pre, op, key, val, vlen, 0);
		if (a.status != b.status || alen != b.val_len)
			differ++;
	}
	CHECK(differ == 0, "%u of 20000 answers differ", differ);
	struct cache_stats sl, sp;
	cache_get_stats(lazy, &sl);
	cache_get_stats(pre, &sp);
	CHECK(sl.items == sp.items && sl.evictions == sp.evictions && sl.pages_used == sp.pages_used,
	      "items %" PRIu64 "/%" PRIu64 " evictions %" PRIu64 "/%" PRIu64 " pages %" PRIu64 "/%" PRIu64,
	      sl.items, sp.items, sl.evictions, sp.evictions, sl.pages_used, sp.pages_used);
	CHECK(sl.evictions > 0, "the test filled the cache (evictions %" PRIu64 ")", sl.evictions);
	CHECK(cache_check(pre, err, sizeof err) == 0, "%s", err);
	json_t *jl = cache_backend_ops.stats_json(lazy), *jp = cache_backend_ops.stats_json(pre);
	CHECK(json_integer_value(json_object_get(jl, "prefaulted_pages")) == 0);
	CHECK(json_integer_value(json_object_get(jp, "prefaulted_pages")) == 4);
	json_decref(jl);
	json_decref(jp);
	cache_backend_ops.close(lazy);
	cache_backend_ops.close(pre);
}

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Faults while opening an 8 MiB cache and then while filling it, counted
 * in a child process whose 1 MiB blocks are fresh mappings, as in a new
 * server (in this process malloc would reuse memory earlier tests faulted
 * in). */
static void fault_counts(int prefault, long *at_open, long *filling)
{
	int fd[2];
	long r[2] = { -1, -1 };
	*at_open = *filling = -1;
	if (pipe(fd) != 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		/* as in a fresh server: 1 MiB blocks are fresh mappings */
		mallopt(M_MMAP_THRESHOLD, 128 * 1024);
		static char val[1000];
		long f0 = minor_faults();
		struct backend *b = open_cache_with(8, prefault);
		long f1 = minor_faults();
		for (int i = 0; b && i < 8000; i++) {
			char key[24];
			snprintf(key, sizeof key, "key%d", i);
			run(b, KV_OP_SET, key, val, sizeof val, 0);
		}
		r[0] = b ? f1 - f0 : -1;
		r[1] = b ? minor_faults() - f1 : -1;
		_exit(write(fd[1], r, sizeof r) == (ssize_t)sizeof r ? 0 : 1);
	}
	close(fd[1]);
	if (pid > 0 && read(fd[0], r, sizeof r) == (ssize_t)sizeof r) {
		*at_open = r[0];
		*filling = r[1];
	}
	close(fd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* Prefault faults the memory in at open: 8 MiB is 2048 pages of 4 KiB,
 * so opening takes about that many faults more than a lazy open (or a
 * handful, where the kernel gives huge pages), and filling the cache
 * afterwards takes far fewer than filling a lazy one. */
TEST(prefault_faults_memory_in_at_open)
{
	long open_pre, fill_pre, open_lazy, fill_lazy;
	fault_counts(1, &open_pre, &fill_pre);
	fault_counts(0, &open_lazy, &fill_lazy);
	REQUIRE(open_pre >= 0 && open_lazy >= 0, "the child processes reported nothing");
	CHECK(fill_lazy > 1000, "a lazy cache faults while it fills: %ld", fill_lazy);
	CHECK(open_pre > open_lazy + 1000 || fill_pre * 4 < fill_lazy,
	      "faults at open %ld (lazy %ld), while filling %ld (lazy %ld)", open_pre, open_lazy, fill_pre, fill_lazy);
	CHECK(fill_pre * 4 < fill_lazy, "filling a prefaulted cache faulted %ld times, a lazy one %ld", fill_pre,
	      fill_lazy);
}

UNIT_MAIN(basic_semantics, incr_semantics, overwrite_with_other_sizes,
	  value_size_boundary, lru_eviction_order, memory_limit_under_pressure,
	  page_moves_to_a_starved_class, differential_against_reference, open_limits,
	  prefaulted_pages_change_nothing_but_when_memory_is_touched, prefault_faults_memory_in_at_open)
