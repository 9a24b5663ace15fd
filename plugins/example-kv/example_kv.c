/*
 * example_kv.c - the example storage-engine plugin: an in-memory hash
 * table with get, set, del and incr, built against include/oqb_plugin.h
 * alone, as a storage-system author would build theirs (docs/plugins.md).
 *
 * Build it out of the tree with
 *     cc -std=c11 -O2 -fPIC -shared -I OQBENCH/include \
 *        -o example-kv.so example_kv.c -ljansson
 * and run it with
 *     "backend": { "kind": "plugin", "path": "example-kv.so",
 *                  "options": { "buckets": 4096, "max_bytes": 67108864 } }
 *
 * One instance per worker, each its own table (no globals, so no locks:
 * the server calls an instance from its worker's thread only).  The
 * example checks that rule, as an engine that keeps per-thread state
 * would rely on it: it notes the thread that opened the instance, counts
 * the calls that come from any other (its stats say so: open_tid,
 * calls_off_open_thread), and complains on stderr if close does.  Each
 * item is one allocation holding key and value; buckets are chains, and
 * the table never grows (choose `buckets` near the number of keys).
 * `max_bytes` bounds the bytes of keys and values: a set beyond it is
 * answered OQB_NOSPACE and the key's old value is kept.  Nothing is
 * durable, so the plugin declares OQB_CAP_INCR but not OQB_CAP_DURABLE.
 * Options are parsed with jansson; a plugin may use any library it links.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE          /* gettid(), for the thread check's report */
#endif
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "oqb_plugin.h"

#define EX_NAME           "example-kv"
#define EX_MAX_KEY        250u
#define EX_MAX_VALUE      (1u << 20)
#define EX_DEF_BUCKETS    4096u
#define EX_MAX_BUCKETS    (1u << 24)
#define EX_DEF_MAX_BYTES  (64ull << 20)

struct item {
	struct item *next;
	uint64_t hash;
	uint32_t klen, vlen;
	uint8_t data[];              /* key, then value */
};

struct table {
	struct item **bucket;
	uint32_t mask;
	uint64_t max_bytes, bytes, keys;
	uint64_t gets, sets, dels, incrs, nospace;
	pthread_t owner;             /* the thread that opened the instance */
	long owner_tid;
	uint32_t worker;
	uint64_t off_thread;         /* calls from another thread than owner */
};

/* Counts a call that does not come from the thread that opened t. */
static void on_thread(struct table *t)
{
	if (!pthread_equal(pthread_self(), t->owner))
		t->off_thread++;
}

/* FNV-1a: short, and good enough for a chained table. */
static uint64_t hash_key(const uint8_t *k, uint32_t n)
{
	uint64_t h = 14695981039346656037ull;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ k[i]) * 1099511628211ull;
	return h;
}

static struct item **find(struct table *t, const uint8_t *k, uint32_t n, uint64_t h)
{
	struct item **link = &t->bucket[h & t->mask];
	for (; *link; link = &(*link)->next)
		if ((*link)->hash == h && (*link)->klen == n && memcmp((*link)->data, k, n) == 0)
			return link;
	return link;
}

/* Reads an unsigned integer option between lo and hi; 0 if absent. */
static int opt_u64(json_t *o, const char *name, uint64_t lo, uint64_t hi, uint64_t *v, char *err, size_t errlen)
{
	json_t *j = json_object_get(o, name);
	if (!j)
		return 0;
	if (!json_is_integer(j) || json_integer_value(j) < 0 || (uint64_t)json_integer_value(j) < lo ||
	    (uint64_t)json_integer_value(j) > hi) {
		snprintf(err, errlen, EX_NAME ": option %s: expected an integer from %" PRIu64 " to %" PRIu64,
			 name, lo, hi);
		return -1;
	}
	*v = (uint64_t)json_integer_value(j);
	return 0;
}

static void *ex_open(const struct oqb_plugin_conf *c, char *err, size_t errlen)
{
	json_error_t je;
	json_t *o = json_loads(c->options_json, 0, &je);
	uint64_t buckets = EX_DEF_BUCKETS, max_bytes = EX_DEF_MAX_BYTES;
	const char *key;
	json_t *val;

	if (!o || !json_is_object(o)) {
		snprintf(err, errlen, EX_NAME ": options: expected a JSON object, e.g. {\"buckets\": 4096}%s%s",
			 o ? "" : ": ", o ? "" : je.text);
		json_decref(o);
		return NULL;
	}
	json_object_foreach(o, key, val) {
		if (strcmp(key, "buckets") != 0 && strcmp(key, "max_bytes") != 0) {
			snprintf(err, errlen, EX_NAME ": unknown option \"%s\"; it takes buckets (a power of two) "
				 "and max_bytes (per worker)", key);
			json_decref(o);
			return NULL;
		}
	}
	if (opt_u64(o, "buckets", 16, EX_MAX_BUCKETS, &buckets, err, errlen) != 0 ||
	    opt_u64(o, "max_bytes", 1024, 1ull << 40, &max_bytes, err, errlen) != 0) {
		json_decref(o);
		return NULL;
	}
	json_decref(o);
	if (buckets & (buckets - 1)) {
		snprintf(err, errlen, EX_NAME ": option buckets: %" PRIu64 " is not a power of two", buckets);
		return NULL;
	}
	struct table *t = calloc(1, sizeof *t);
	if (t)
		t->bucket = calloc(buckets, sizeof *t->bucket);
	if (!t || !t->bucket) {
		snprintf(err, errlen, EX_NAME " (worker %" PRIu32 "): out of memory for %" PRIu64 " buckets",
			 c->worker, buckets);
		free(t);
		return NULL;
	}
	t->mask = (uint32_t)(buckets - 1);
	t->max_bytes = max_bytes;
	t->owner = pthread_self();
	t->owner_tid = (long)gettid();
	t->worker = c->worker;
	return t;
}

static void ex_close(void *inst)
{
	struct table *t = inst;
	if (!pthread_equal(pthread_self(), t->owner))
		fprintf(stderr, EX_NAME " (worker %" PRIu32 "): close on thread %ld, not on thread %ld that opened "
			"it\n", t->worker, (long)gettid(), t->owner_tid);
	for (uint64_t i = 0; i <= t->mask; i++)
		for (struct item *it = t->bucket[i], *next; it; it = next) {
			next = it->next;
			free(it);
		}
	free(t->bucket);
	free(t);
}

static int ex_get(void *inst, const uint8_t *key, uint32_t klen, uint8_t *val, uint32_t cap, uint32_t *vlen)
{
	struct table *t = inst;
	struct item *it = *find(t, key, klen, hash_key(key, klen));

	on_thread(t);
	t->gets++;
	if (!it)
		return OQB_NOT_FOUND;
	*vlen = it->vlen;
	if (it->vlen > cap)
		return OQB_NOSPACE;
	memcpy(val, it->data + klen, it->vlen);
	return OQB_OK;
}

/* Puts (key, val) in place of *link's item (or at the end of the chain). */
static int store(struct table *t, struct item **link, uint64_t h, const uint8_t *key, uint32_t klen,
		 const uint8_t *val, uint32_t vlen)
{
	struct item *old = *link;
	uint64_t freed = old ? old->klen + old->vlen : 0;

	if (t->bytes - freed + klen + vlen > t->max_bytes) {
		t->nospace++;
		return OQB_NOSPACE;
	}
	struct item *it = malloc(sizeof *it + klen + vlen);
	if (!it) {
		t->nospace++;
		return OQB_NOSPACE;
	}
	it->next = old ? old->next : NULL;
	it->hash = h;
	it->klen = klen;
	it->vlen = vlen;
	memcpy(it->data, key, klen);
	if (vlen)
		memcpy(it->data + klen, val, vlen);
	*link = it;
	t->bytes = t->bytes - freed + klen + vlen;
	if (old)
		free(old);
	else
		t->keys++;
	return OQB_OK;
}

static int ex_set(void *inst, const uint8_t *key, uint32_t klen, const uint8_t *val, uint32_t vlen)
{
	struct table *t = inst;
	uint64_t h = hash_key(key, klen);

	on_thread(t);
	t->sets++;
	return store(t, find(t, key, klen, h), h, key, klen, val, vlen);
}

static int ex_del(void *inst, const uint8_t *key, uint32_t klen)
{
	struct table *t = inst;
	struct item **link = find(t, key, klen, hash_key(key, klen));
	struct item *it = *link;

	on_thread(t);
	t->dels++;
	if (!it)
		return OQB_NOT_FOUND;
	*link = it->next;
	t->bytes -= it->klen + it->vlen;
	t->keys--;
	free(it);
	return OQB_OK;
}

static int ex_incr(void *inst, const uint8_t *key, uint32_t klen, uint64_t delta, uint64_t *result)
{
	struct table *t = inst;
	uint64_t h = hash_key(key, klen), v = 0;
	struct item **link = find(t, key, klen, h);
	struct item *it = *link;

	on_thread(t);
	t->incrs++;
	if (!it)
		return OQB_NOT_FOUND;
	if (it->vlen == 0 || it->vlen > 20)
		return OQB_ERROR;
	for (uint32_t i = 0; i < it->vlen; i++) {
		uint8_t c = it->data[klen + i];
		if (c < '0' || c > '9' || v > (UINT64_MAX - (c - '0')) / 10)
			return OQB_ERROR;   /* not a number (or above 2^64 - 1) */
		v = v * 10 + (c - '0');
	}
	char num[24];
	int n = snprintf(num, sizeof num, "%" PRIu64, v + delta);
	int st = store(t, link, h, key, klen, (const uint8_t *)num, (uint32_t)n);
	if (st == OQB_OK)
		*result = v + delta;
	return st;
}

static size_t ex_stats(void *inst, char *buf, size_t cap)
{
	struct table *t = inst;
	on_thread(t);
	int n = snprintf(buf, cap, "{\"keys\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"buckets\": %" PRIu64 ", "
			 "\"gets\": %" PRIu64 ", \"sets\": %" PRIu64 ", \"dels\": %" PRIu64 ", \"incrs\": %" PRIu64
			 ", \"nospace\": %" PRIu64 ", \"open_tid\": %ld, \"calls_off_open_thread\": %" PRIu64 "}",
			 t->keys, t->bytes, (uint64_t)t->mask + 1, t->gets, t->sets, t->dels, t->incrs, t->nospace,
			 t->owner_tid, t->off_thread);
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

static const struct oqb_plugin example_kv = {
	.abi_version = OQB_PLUGIN_ABI_VERSION,
	.struct_size = sizeof(struct oqb_plugin),
	.name = EX_NAME,
	.version = "1.0",
	.caps = OQB_CAP_INCR,
	.max_key = EX_MAX_KEY,
	.max_value = EX_MAX_VALUE,
	.open = ex_open,
	.close = ex_close,
	.get = ex_get,
	.set = ex_set,
	.del = ex_del,
	.incr = ex_incr,
	.stats = ex_stats,
};

const struct oqb_plugin *oqb_plugin_entry(void)
{
	return &example_kv;
}
