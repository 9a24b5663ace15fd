/*
 * oqb_pmkv_main.c - bin/oqb-pmkv: inspect a pmkv pool file, or measure what
 * a put and a get cost on this machine.
 *
 *   oqb-pmkv check FILE   open FILE (running recovery, as a restarted server
 *                         would), print what was found as JSON, close it.
 *                         Exit 0: intact; 1: damaged entries were dropped;
 *                         2: cannot be opened (the message says why).
 *   oqb-pmkv bench FILE   N puts then N gets of random keys (fixed seed) on
 *                         FILE (created if missing), print mean costs as
 *                         JSON.  On a regular file the persist column is
 *                         msync; on a DAX mount it is cache-line flushes.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "be_pmkv.h"
#include "clock.h"
#include "opts.h"
#include "wire.h"

struct pm_opts {
	uint64_t ops;
	uint64_t keys;
	uint64_t key_bytes;
	uint64_t value_bytes;
	uint64_t pool_mb;
	uint64_t seed;
};

static const struct opt pm_tab[] = {
	{ "ops", OPT_U64, offsetof(struct pm_opts, ops), "20000", 1, 1e9, NULL,
	  "bench: puts (and then gets) to time" },
	{ "keys", OPT_U64, offsetof(struct pm_opts, keys), "1000", 1, 1e8, NULL,
	  "bench: distinct keys (puts overwrite them)" },
	{ "key-bytes", OPT_U64, offsetof(struct pm_opts, key_bytes), "23", 8, 250, NULL,
	  "bench: key length" },
	{ "value-bytes", OPT_U64, offsetof(struct pm_opts, value_bytes), "91", 0, KV_MAX_VALUE, NULL,
	  "bench: value length (91 B is the paper's object size)" },
	{ "pool-mb", OPT_U64, offsetof(struct pm_opts, pool_mb), "64", 1, 131072, NULL,
	  "size of a pool that has to be created (MiB)" },
	{ "seed", OPT_U64, offsetof(struct pm_opts, seed), "1", 0, 0, NULL, "bench: key choice seed" },
	{ NULL, .help = "commands: check FILE | bench FILE (pmkv pool files)" },
};

static json_t *info_json(const char *file, const struct pmkv_info *in)
{
	return json_pack("{s:s, s:s, s:b, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "file", file, "persist", in->is_pmem ? "pmem_persist" : "pmem_msync",
			 "was_clean", in->was_clean, "created", in->created,
			 "opens", (json_int_t)in->opens, "open_ns", (json_int_t)in->open_ns,
			 "dropped_at_open", (json_int_t)in->dropped,
			 "pool_bytes", (json_int_t)in->pool_bytes,
			 "heap_bytes", (json_int_t)in->heap_bytes,
			 "index_slots", (json_int_t)in->index_slots,
			 "keys", (json_int_t)in->live, "tombstones", (json_int_t)in->tombs,
			 "used_bytes", (json_int_t)in->used_bytes,
			 "free_bytes", (json_int_t)in->free_bytes,
			 "free_extents", (json_int_t)in->free_extents);
}

static void print_json(json_t *j)
{
	if (!j)
		return;
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(j);
}

static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int cmd_bench(struct pmkv *pk, const char *file, const struct pm_opts *o)
{
	uint8_t *val = malloc(o->value_bytes + 1), *got = malloc(o->value_bytes + 1);
	char key[256];
	uint64_t s = o->seed, t0, put_ns, get_ns, persist_ns, persists;
	struct pmkv_info a, b;
	uint32_t n;
	int rc = 0;

	if (!val || !got) {
		fprintf(stderr, "oqb-pmkv: out of memory for %" PRIu64 "-byte values\n", o->value_bytes);
		free(val);
		free(got);
		return 2;
	}
	memset(val, 'v', o->value_bytes + 1);
	pmkv_info(pk, &a);
	t0 = clock_ns();
	for (uint64_t i = 0; i < o->ops; i++) {
		snprintf(key, sizeof key, "%0*" PRIu64, (int)o->key_bytes, next_rand(&s) % o->keys);
		unsigned st = pmkv_put(pk, key, (uint32_t)o->key_bytes, val, (uint32_t)o->value_bytes);
		if (st != KV_OK) {
			fprintf(stderr, "oqb-pmkv: %s: put %" PRIu64 " failed (status %u: pool full?); "
				"use a larger --pool-mb or fewer --keys\n", file, i, st);
			rc = 2;
			goto out;
		}
	}
	put_ns = clock_ns() - t0;
	pmkv_info(pk, &b);
	persist_ns = b.persist_ns - a.persist_ns;
	persists = b.persists - a.persists;
	s = o->seed;
	t0 = clock_ns();
	for (uint64_t i = 0; i < o->ops; i++) {
		snprintf(key, sizeof key, "%0*" PRIu64, (int)o->key_bytes, next_rand(&s) % o->keys);
		pmkv_get(pk, key, (uint32_t)o->key_bytes, got, (uint32_t)o->value_bytes + 1, &n);
	}
	get_ns = clock_ns() - t0;
	print_json(json_pack("{s:s, s:s, s:I, s:I, s:I, s:f, s:f, s:f, s:f}",
			     "file", file, "persist", b.is_pmem ? "pmem_persist" : "pmem_msync",
			     "ops", (json_int_t)o->ops, "key_bytes", (json_int_t)o->key_bytes,
			     "value_bytes", (json_int_t)o->value_bytes,
			     "put_ns_mean", (double)put_ns / (double)o->ops,
			     "put_persist_ns_mean", (double)persist_ns / (double)o->ops,
			     "persists_per_put", (double)persists / (double)o->ops,
			     "get_ns_mean", (double)get_ns / (double)o->ops));
out:
	free(val);
	free(got);
	return rc;
}

int main(int argc, char **argv)
{
	struct pm_opts o;
	char err[512];
	int npos = 0;

	int r = opts_parse(pm_tab, &o, argc, argv, &npos, err, sizeof err);
	if (r == 1)
		return 0;
	if (r != 0) {
		fprintf(stderr, "oqb-pmkv: %s\n", err);
		return 2;
	}
	if (npos != 2 || (strcmp(argv[1], "check") != 0 && strcmp(argv[1], "bench") != 0)) {
		fprintf(stderr, "oqb-pmkv: expected `check FILE` or `bench FILE`; see --help\n");
		return 2;
	}
	const char *file = argv[2];
	int check = strcmp(argv[1], "check") == 0;
	if (check && access(file, F_OK) != 0) {   /* check never creates a pool */
		fprintf(stderr, "oqb-pmkv: %s: %s\n", file, strerror(errno));
		return 2;
	}
	struct pmkv *pk = pmkv_open(file, o.pool_mb << 20, err, sizeof err);
	if (!pk) {
		fprintf(stderr, "oqb-pmkv: %s\n", err);
		return 2;
	}
	struct pmkv_info in;
	pmkv_info(pk, &in);
	int rc = 0;
	if (check) {
		print_json(info_json(file, &in));
		rc = in.dropped ? 1 : 0;
	} else {
		rc = cmd_bench(pk, file, &o);
	}
	pmkv_close(pk);
	return rc;
}
