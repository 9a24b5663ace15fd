/*
 * test_ycsb.c - the `ycsb` generator: core workloads A-F proportions,
 * read-modify-write pairs, key names, YCSB's scrambled zipfian popularity,
 * the latest distribution, disjoint inserts and loads across threads,
 * determinism and config errors.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <jansson.h>

#include "unit.h"
#include "gen.h"
#include "zipf.h"

static struct gen *open_spec(const char *text, const struct gen_ctx *c, char *err, size_t errlen)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	struct gen *g;

	if (!j) {
		snprintf(err, errlen, "bad test JSON: %s", e.text);
		return NULL;
	}
	g = gen_ycsb_ops.open(j, c, err, errlen);
	json_decref(j);
	return g;
}

static const struct gen_ctx ctx1 = { .seed = 7, .nprocesses = 1, .nthreads = 1 };

static void key_of(char *buf, size_t cap, uint64_t keynum)
{
	snprintf(buf, cap, "user%" PRIu64, fnv1a64_u64(keynum));
}

static double share(json_t *d, const char *kind)
{
	json_t *ops = json_object_get(d, "ops");
	double n = 0;
	const char *k;
	json_t *v;

	json_object_foreach(ops, k, v)
		n += (double)json_integer_value(v);
	return (double)json_integer_value(json_object_get(ops, kind)) / n;
}

TEST(core_workload_proportions)
{
	static const struct {
		const char *w;
		double read, update, insert, scan, rmw;
		const char *dist;
	} want[] = {
		{ "a", 0.50, 0.50, 0, 0, 0, "zipfian" },
		{ "b", 0.95, 0.05, 0, 0, 0, "zipfian" },
		{ "c", 1.00, 0, 0, 0, 0, "zipfian" },
		{ "d", 0.95, 0, 0.05, 0, 0, "latest" },
		{ "e", 0, 0, 0.05, 0.95, 0, "zipfian" },
		{ "F", 0.50, 0, 0, 0, 0.50, "zipfian" },
	};
	const uint64_t N = 100000;

	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char spec[128], err[512];
		struct gen_op op;
		uint64_t nget = 0, nset = 0;
		struct gen *g;
		json_t *d;

		snprintf(spec, sizeof spec, "{\"kind\":\"ycsb\",\"workload\":\"%s\"}", want[i].w);
		g = open_spec(spec, &ctx1, err, sizeof err);
		REQUIRE(g, "%s", err);
		for (uint64_t k = 0; k < N; k++) {
			REQUIRE(gen_ycsb_ops.next(g, &op) == 0);
			nget += op.op == KV_OP_GET;
			nset += op.op == KV_OP_SET;
			CHECK(op.flags == gen_op_flags(op.op));
		}
		d = gen_ycsb_ops.describe(g);
		/* 0.007 is over 5 sigma of any share at N = 100000 requests. */
		CHECK_NEAR(share(d, "read"), want[i].read, 0.007);
		CHECK_NEAR(share(d, "update"), want[i].update, 0.007);
		CHECK_NEAR(share(d, "insert"), want[i].insert, 0.007);
		CHECK_NEAR(share(d, "scan"), want[i].scan, 0.007);
		CHECK_NEAR(share(d, "rmw"), want[i].rmw, 0.007);
		CHECK(strcmp(json_string_value(json_object_get(d, "request_distribution")), want[i].dist) == 0,
		      "workload %s", want[i].w);
		/* Wire ops: scans are GETs; an RMW is a GET and a SET. */
		CHECK(nget + nset == N);
		CHECK_NEAR((double)nset / N, (want[i].update + want[i].insert + want[i].rmw) /
			   (1 + want[i].rmw), 0.007);
		json_decref(d);
		gen_ycsb_ops.close(g);
	}
}

TEST(rmw_is_get_then_set_of_the_same_key)
{
	char err[512], last[KV_MAX_KEY + 1] = "";
	struct gen_op op;
	unsigned last_op = 0;
	struct gen *g = open_spec("{\"kind\":\"ycsb\",\"rmw_proportion\":1}", &ctx1, err, sizeof err);

	REQUIRE(g, "%s", err);
	for (int i = 0; i < 2000; i++) {
		REQUIRE(gen_ycsb_ops.next(g, &op) == 0);
		if (i % 2 == 0) {
			CHECK(op.op == KV_OP_GET);
		} else {
			CHECK(op.op == KV_OP_SET && last_op == KV_OP_GET);
			CHECK(strcmp(op.key, last) == 0);
		}
		last_op = op.op;
		memcpy(last, op.key, op.key_len + 1u);
	}
	gen_ycsb_ops.close(g);
}

TEST(keys_and_values)
{
	char err[512], want[32];
	struct gen_op op;
	struct gen *g = open_spec("{\"kind\":\"ycsb\",\"put_ratio\":1,\"field_count\":10,\"record_count\":50}",
				  &ctx1, err, sizeof err);

	REQUIRE(g, "%s", err);
	REQUIRE(gen_ycsb_ops.next(g, &op) == 0);
	CHECK(op.op == KV_OP_SET && op.val_len == 1000);
	CHECK(strncmp(op.key, "user", 4) == 0 && strspn(op.key + 4, "0123456789") == op.key_len - 4u,
	      "%s", op.key);
	CHECK(op.key_len <= 23);
	REQUIRE(gen_ycsb_ops.load(g, 3, &op) == 0);
	key_of(want, sizeof want, 3);
	CHECK(strcmp(op.key, want) == 0, "%s vs %s", op.key, want);
	CHECK(gen_ycsb_ops.load(g, 50, &op) == 1);
	gen_ycsb_ops.close(g);

	/* The paper's PMemKV objects: 91 B values. */
	g = open_spec("{\"kind\":\"ycsb\",\"put_ratio\":0.5,\"value_size\":91,\"zipf\":0.99}",
		      &ctx1, err, sizeof err);
	REQUIRE(g, "%s", err);
	for (int i = 0; i < 100; i++) {
		REQUIRE(gen_ycsb_ops.next(g, &op) == 0);
		CHECK(op.val_len == (op.op == KV_OP_SET ? 91u : 0u));
	}
	gen_ycsb_ops.close(g);
}

/*
 * YCSB's scrambled zipfian draws a rank over 10^10 items, so the hottest
 * key gets 1/zeta(10^10, 0.99) = 1/26.469 of the requests whatever the
 * record count (plus what other ranks hash onto the same key).
 */
TEST(zipfian_hottest_key_share)
{
	char err[512], hot[32];
	struct gen_op op;
	const uint64_t N = 200000;
	uint64_t hits = 0;
	struct gen *g = open_spec("{\"kind\":\"ycsb\",\"workload\":\"c\",\"record_count\":100000}",
				  &ctx1, err, sizeof err);

	REQUIRE(g, "%s", err);
	key_of(hot, sizeof hot, fnv1a64_u64(0) % 100000);
	for (uint64_t i = 0; i < N; i++) {
		REQUIRE(gen_ycsb_ops.next(g, &op) == 0);
		hits += strcmp(op.key, hot) == 0;
	}
	/* p = 0.0378, sd at N = 200000 is 0.00043 */
	CHECK_NEAR((double)hits / N, 1 / ZIPF_YCSB_ZETAN_099, 0.0025);
	gen_ycsb_ops.close(g);
}

/*
 * Latest: a read picks newest - rank, rank Zipfian over the keys so far,
 * so the newest key gets 1/zeta(n, 0.99) of the reads with n the current
 * key count.  Tracks n from the inserts it sees (one thread).
 */
TEST(latest_reads_follow_the_newest_insert)
{
	char err[512], newest[32];
	struct gen_op op;
	const uint64_t R = 1000;
	uint64_t inserted = 0, reads = 0, hits = 0;
	double expect = 0, p_newest = 1 / zipf_zeta(R, 0.99);
	struct gen *g = open_spec("{\"kind\":\"ycsb\",\"workload\":\"d\",\"record_count\":1000}",
				  &ctx1, err, sizeof err);

	REQUIRE(g, "%s", err);
	key_of(newest, sizeof newest, R - 1);
	for (int i = 0; i < 100000; i++) {
		REQUIRE(gen_ycsb_ops.next(g, &op) == 0);
		if (op.op == KV_OP_SET) {
			char want[32];
			key_of(want, sizeof want, R + inserted);
			CHECK(strcmp(op.key, want) == 0, "insert %s, expected %s", op.key, want);
			inserted++;
			memcpy(newest, want, sizeof want);
			p_newest = 1 / zipf_zeta(R + inserted, 0.99);
			continue;
		}
		reads++;
		hits += strcmp(op.key, newest) == 0;
		expect += p_newest;
	}
	CHECK(inserted > 4000 && inserted < 6000);
	CHECK(reads > 90000);
	CHECK_NEAR((double)hits, expect, 5 * sqrt(expect) + 1);
	gen_ycsb_ops.close(g);
}

TEST(threads_insert_and_load_disjoint_keys)
{
	const uint64_t R = 100;
	char err[512];
	struct gen_op op;
	/* 2 processes x 2 threads: thread g of 4 inserts R + g + 4k. */
	for (unsigned p = 0; p < 2; p++)
		for (unsigned t = 0; t < 2; t++) {
			struct gen_ctx c = { .seed = 3, .process = p, .nprocesses = 2, .thread = t, .nthreads = 2 };
			struct gen *g = open_spec("{\"kind\":\"ycsb\",\"insert_proportion\":1,\"record_count\":100}",
						  &c, err, sizeof err);
			uint64_t gi = p * 2 + t, n = 0;
			REQUIRE(g, "%s", err);
			for (uint64_t k = 0; k < 50; k++) {
				char want[32];
				REQUIRE(gen_ycsb_ops.next(g, &op) == 0);
				key_of(want, sizeof want, R + gi + 4 * k);
				CHECK(op.op == KV_OP_SET && strcmp(op.key, want) == 0);
			}
			for (uint64_t i = 0; gen_ycsb_ops.load(g, i, &op) == 0; i++) {
				char want[32];
				key_of(want, sizeof want, gi + 4 * i);
				CHECK(strcmp(op.key, want) == 0);
				n++;
			}
			CHECK(n == 25);
			gen_ycsb_ops.close(g);
		}
}

TEST(uniform_reads_only_existing_keys)
{
	char err[512];
	struct gen_op op;
	struct gen *g = open_spec("{\"kind\":\"ycsb\",\"read_proportion\":1,\"record_count\":10,"
				  "\"request_distribution\":\"uniform\"}", &ctx1, err, sizeof err);
	int seen[10] = { 0 };

	REQUIRE(g, "%s", err);
	for (int i = 0; i < 1000; i++) {
		int found = 0;
		REQUIRE(gen_ycsb_ops.next(g, &op) == 0);
		for (int k = 0; k < 10; k++) {
			char want[32];
			key_of(want, sizeof want, (uint64_t)k);
			if (strcmp(want, op.key) == 0) {
				seen[k]++;
				found = 1;
			}
		}
		CHECK(found);
	}
	for (int k = 0; k < 10; k++)
		CHECK(seen[k] > 60 && seen[k] < 140, "key %d read %d times", k, seen[k]);
	gen_ycsb_ops.close(g);
}

TEST(deterministic)
{
	char err[512];
	struct gen_op a, b;
	const char *spec = "{\"kind\":\"ycsb\",\"workload\":\"a\"}";
	struct gen *g1 = open_spec(spec, &ctx1, err, sizeof err);
	struct gen *g2 = open_spec(spec, &ctx1, err, sizeof err);
	int same = 1;

	REQUIRE(g1 && g2, "%s", err);
	for (int i = 0; i < 1000; i++) {
		gen_ycsb_ops.next(g1, &a);
		gen_ycsb_ops.next(g2, &b);
		same &= a.op == b.op && strcmp(a.key, b.key) == 0;
	}
	CHECK(same);
	gen_ycsb_ops.close(g1);
	gen_ycsb_ops.close(g2);
}

TEST(config_errors)
{
	char err[512];

	CHECK(open_spec("{\"kind\":\"ycsb\",\"put_ratio\":0.5,\"read_proportion\":0.5}", &ctx1, err, sizeof err) == NULL);
	CHECK(strstr(err, "put_ratio") != NULL, "%s", err);
	CHECK(open_spec("{\"kind\":\"ycsb\",\"read_proportion\":0}", &ctx1, err, sizeof err) == NULL);
	CHECK(strstr(err, "proportion") != NULL, "%s", err);
	CHECK(open_spec("{\"kind\":\"ycsb\",\"reqest_distribution\":\"latest\"}", &ctx1, err, sizeof err) == NULL);
	CHECK(strstr(err, "request_distribution") != NULL, "%s", err);
	CHECK(open_spec("{\"kind\":\"ycsb\",\"workload\":\"g\"}", &ctx1, err, sizeof err) == NULL);
	CHECK(strstr(err, "workload") != NULL, "%s", err);
	CHECK(open_spec("{\"kind\":\"ycsb\",\"field_count\":1000,\"field_length\":100000}", &ctx1, err, sizeof err) == NULL);
	CHECK(strstr(err, "value_size") != NULL, "%s", err);
}

UNIT_MAIN(core_workload_proportions, rmw_is_get_then_set_of_the_same_key, keys_and_values,
	  zipfian_hottest_key_share, latest_reads_follow_the_newest_insert,
	  threads_insert_and_load_disjoint_keys, uniform_reads_only_existing_keys, deterministic,
	  config_errors)
