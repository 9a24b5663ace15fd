/*
 * test_gen.c - the generator registry, nil-externality flags and the `kv`
 * generator: op mix, key format, key popularity against the Zipf pmf,
 * load-phase split, determinism and config errors; the `echo` generator.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "unit.h"
#include "gen.h"
#include "zipf.h"

static json_t *js(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j)
		fprintf(stderr, "  bad test JSON %s: %s\n", text, e.text);
	return j;
}

static struct gen *open_spec(const char *text, const struct gen_ctx *c, const struct gen_ops **ops,
			     char *err, size_t errlen)
{
	json_t *j = js(text);
	struct gen *g = NULL;

	*ops = gen_lookup(j, NULL, err, errlen);
	if (*ops)
		g = (*ops)->open(j, c, err, errlen);
	json_decref(j);
	return g;
}

static const struct gen_ctx ctx1 = { .seed = 42, .nprocesses = 1, .nthreads = 1 };

TEST(registry_finds_every_kind)
{
	char err[512];
	json_t *j;

	CHECK(gen_find("kv") == &gen_kv_ops);
	CHECK(gen_find("ycsb") == &gen_ycsb_ops);
	CHECK(gen_find("twitter") == &gen_twitter_ops);
	CHECK(gen_find("trace") == &gen_trace_ops);
	CHECK(gen_find("echo") == &gen_echo_ops);
	CHECK(gen_find("nope") == NULL);
	CHECK(gen_find(NULL) == NULL);
	CHECK(strstr(gen_names(), "ycsb") != NULL);
	CHECK(gen_kv_ops.version == GEN_OPS_VERSION);

	j = js("{\"kind\":\"twiter\"}");
	CHECK(gen_lookup(j, "cfg.json: workload", err, sizeof err) == NULL);
	CHECK(strstr(err, "did you mean \"twitter\"") != NULL, "%s", err);
	CHECK(strstr(err, "cfg.json: workload.kind") != NULL, "%s", err);
	json_decref(j);
	j = js("{\"put_ratio\":1}");
	CHECK(gen_lookup(j, NULL, err, sizeof err) == NULL);
	CHECK(strstr(err, "kind") != NULL, "%s", err);
	json_decref(j);
}

TEST(nilext_flags)
{
	CHECK(gen_op_flags(KV_OP_SET) == KV_F_NILEXT);
	CHECK(gen_op_flags(KV_OP_DEL) == KV_F_NILEXT);
	CHECK(gen_op_flags(KV_OP_GET) == 0);
	CHECK(gen_op_flags(KV_OP_INCR) == KV_F_NONIDEMP);
	CHECK(gen_op_flags(KV_OP_ECHO) == 0);
}

TEST(kv_op_mix_and_sizes)
{
	const struct gen_ops *o;
	char err[512];
	struct gen_op op;
	uint64_t n[KV_OP_MAX_] = { 0 }, N = 200000;
	struct gen *g = open_spec("{\"kind\":\"kv\",\"put_ratio\":0.8,\"del_ratio\":0.05,\"key_size\":44,"
				  "\"value_size\":1030,\"keys\":100000,\"zipf\":0.3048}", &ctx1, &o, err, sizeof err);

	REQUIRE(g, "%s", err);
	for (uint64_t i = 0; i < N; i++) {
		REQUIRE(o->next(g, &op) == 0);
		REQUIRE(op.op < KV_OP_MAX_);
		n[op.op]++;
		CHECK(op.key_len == 44);
		CHECK(strlen(op.key) == 44);
		CHECK(op.key[0] == 'k' && strspn(op.key + 1, "0123456789") == 43, "%s", op.key);
		CHECK(op.val_len == (op.op == KV_OP_SET ? 1030u : 0u));
		CHECK(op.flags == gen_op_flags(op.op));
	}
	/* 5 sigma of a binomial share at N = 200000 is under 0.005. */
	CHECK_NEAR((double)n[KV_OP_SET] / N, 0.80, 0.005);
	CHECK_NEAR((double)n[KV_OP_DEL] / N, 0.05, 0.003);
	CHECK_NEAR((double)n[KV_OP_GET] / N, 0.15, 0.005);
	o->close(g);
}

TEST(kv_defaults)
{
	const struct gen_ops *o;
	char err[512];
	struct gen_op op;
	struct gen *g = open_spec("{\"kind\":\"kv\"}", &ctx1, &o, err, sizeof err);
	json_t *d;

	REQUIRE(g, "%s", err);
	REQUIRE(o->next(g, &op) == 0);
	CHECK(op.key_len == 16);
	d = o->describe(g);
	CHECK(json_real_value(json_object_get(d, "put_ratio")) == 0.5);
	CHECK(json_integer_value(json_object_get(d, "value_size")) == 64);
	CHECK(json_integer_value(json_object_get(d, "keys")) == 100000);
	CHECK(json_real_value(json_object_get(d, "zipf")) == 0.99);
	json_decref(d);
	o->close(g);
}

/*
 * Popularity: with keys <= 65536 the generator draws exact Zipf ranks and
 * maps rank r to key fnv1a64_u64(r) % keys (YCSB's scrambling), so the
 * expected share of key j is the pmf summed over the ranks mapped to j.
 * The five most popular keys must match within 5 sigma.
 */
static void kv_popularity(double theta)
{
	const uint64_t K = 1000, N = 300000;
	const struct gen_ops *o;
	char err[512], spec[256];
	struct gen_op op;
	struct zipf z;
	double *expect = calloc(K, sizeof *expect);
	uint64_t *cnt = calloc(K, sizeof *cnt);
	struct gen *g;

	REQUIRE(expect && cnt);
	snprintf(spec, sizeof spec, "{\"kind\":\"kv\",\"keys\":%llu,\"zipf\":%g,\"put_ratio\":0}",
		 (unsigned long long)K, theta);
	g = open_spec(spec, &ctx1, &o, err, sizeof err);
	REQUIRE(g, "%s", err);
	REQUIRE(zipf_init(&z, K, theta, K, err, sizeof err) == 0, "%s", err);
	for (uint64_t r = 0; r < K; r++)
		expect[fnv1a64_u64(r) % K] += zipf_pmf(&z, r);
	for (uint64_t i = 0; i < N; i++) {
		REQUIRE(o->next(g, &op) == 0);
		cnt[strtoull(op.key + 1, NULL, 10)]++;
	}
	for (int top = 0; top < 5; top++) {
		uint64_t best = 0;
		for (uint64_t j = 1; j < K; j++)
			if (expect[j] > expect[best])
				best = j;
		double p = expect[best], sd = sqrt(p * (1 - p) / N);
		CHECK_NEAR((double)cnt[best] / N, p, 5 * sd + 1e-4);
		expect[best] = -1;
	}
	zipf_free(&z);
	o->close(g);
	free(expect);
	free(cnt);
}

TEST(kv_popularity_follows_pmf)
{
	kv_popularity(0.99);
	kv_popularity(0.5);
	kv_popularity(1.2);
}

TEST(kv_deterministic_per_seed_and_thread)
{
	const struct gen_ops *o;
	char err[512];
	struct gen_op a, b;
	struct gen_ctx c2 = ctx1;
	const char *spec = "{\"kind\":\"kv\",\"put_ratio\":0.3}";
	struct gen *g1 = open_spec(spec, &ctx1, &o, err, sizeof err);
	struct gen *g2 = open_spec(spec, &ctx1, &o, err, sizeof err);
	struct gen *g3;
	int same = 1, differ = 0;

	REQUIRE(g1 && g2, "%s", err);
	c2.nthreads = 2;
	c2.thread = 1;
	g3 = open_spec(spec, &c2, &o, err, sizeof err);
	REQUIRE(g3, "%s", err);
	for (int i = 0; i < 1000; i++) {
		o->next(g1, &a);
		o->next(g2, &b);
		same &= a.op == b.op && strcmp(a.key, b.key) == 0;
		o->next(g3, &b);
		differ |= strcmp(a.key, b.key) != 0;
	}
	CHECK(same);
	CHECK(differ);
	o->close(g1);
	o->close(g2);
	o->close(g3);
}

TEST(kv_load_splits_keys_between_threads)
{
	const uint64_t K = 1003;
	uint8_t *seen = calloc(K, 1);
	const struct gen_ops *o;
	char err[512];
	struct gen_op op;
	uint64_t total = 0;

	REQUIRE(seen);
	for (unsigned p = 0; p < 2; p++)
		for (unsigned t = 0; t < 3; t++) {
			struct gen_ctx c = { .seed = 1, .process = p, .nprocesses = 2, .thread = t, .nthreads = 3 };
			struct gen *g = open_spec("{\"kind\":\"kv\",\"keys\":1003}", &c, &o, err, sizeof err);
			REQUIRE(g, "%s", err);
			for (uint64_t i = 0; o->load(g, i, &op) == 0; i++) {
				uint64_t k = strtoull(op.key + 1, NULL, 10);
				REQUIRE(k < K);
				CHECK(!seen[k], "key %llu loaded twice", (unsigned long long)k);
				seen[k] = 1;
				CHECK(op.op == KV_OP_SET && op.val_len == 64);
				total++;
			}
			o->close(g);
		}
	CHECK(total == K);
	free(seen);
}

TEST(kv_config_errors)
{
	const struct gen_ops *o;
	char err[512];

	CHECK(open_spec("{\"kind\":\"kv\",\"put_rato\":0.5}", &ctx1, &o, err, sizeof err) == NULL);
	CHECK(strstr(err, "put_ratio") != NULL, "%s", err);
	CHECK(open_spec("{\"kind\":\"kv\",\"key_size\":3,\"keys\":100000}", &ctx1, &o, err, sizeof err) == NULL);
	CHECK(strstr(err, "key_size") != NULL && strstr(err, ">= 6") != NULL, "%s", err);
	CHECK(open_spec("{\"kind\":\"kv\",\"put_ratio\":0.7,\"del_ratio\":0.5}", &ctx1, &o, err, sizeof err) == NULL);
	CHECK(strstr(err, "del_ratio") != NULL, "%s", err);
	CHECK(open_spec("{\"kind\":\"kv\",\"put_ratio\":1.5}", &ctx1, &o, err, sizeof err) == NULL);
	CHECK(strstr(err, "put_ratio") != NULL, "%s", err);
}

TEST(key_helpers)
{
	struct gen_op op;

	CHECK(gen_key_min_size(1) == 2);
	CHECK(gen_key_min_size(10) == 2);
	CHECK(gen_key_min_size(11) == 3);
	CHECK(gen_key_min_size(100000) == 6);
	gen_key_fixed(&op, 42, 6);
	CHECK(strcmp(op.key, "k00042") == 0, "%s", op.key);
	CHECK(op.key_len == 6);
	gen_key_fixed(&op, 7, 2);
	CHECK(strcmp(op.key, "k7") == 0, "%s", op.key);

	/* Every size against snprintf's zero padding, numbers of every digit
	 * count; a number too long for the key keeps its low digits. */
	const uint64_t nums[] = { 0, 1, 9, 10, 99, 100, 4711, 99999999, 100000000, 123456789012ull,
				  UINT64_MAX };
	for (unsigned ks = 1; ks <= 40; ks++)
		for (size_t j = 0; j < sizeof nums / sizeof nums[0]; j++) {
			char full[64], want[64];
			int n = snprintf(full, sizeof full, "%0*llu", (int)ks - 1, (unsigned long long)nums[j]);
			snprintf(want, sizeof want, "k%s", ks > 1 ? full + n - (ks - 1) : "");
			memset(op.key, 'x', sizeof op.key);
			gen_key_fixed(&op, nums[j], ks);
			CHECK(strcmp(op.key, want) == 0 && op.key_len == ks, "size %u, %llu: '%s', want '%s'",
			      ks, (unsigned long long)nums[j], op.key, want);
		}
	gen_key_fixed(&op, 5, KV_MAX_KEY + 10);   /* clamped to the largest key */
	CHECK(op.key_len == KV_MAX_KEY && op.key[KV_MAX_KEY - 1] == '5' && op.key[1] == '0');
}

/* echo: every op an ECHO of value_size bytes, never nilext, keys spread
 * evenly (they pick the worker), nothing to load, bad keys refused. */
TEST(echo_ops_sizes_and_spread)
{
	const struct gen_ops *o;
	char err[512];
	struct gen_op op;
	uint64_t hits[16] = { 0 }, N = 64000;
	struct gen *g = open_spec("{\"kind\":\"echo\",\"value_size\":1024,\"keys\":16}", &ctx1, &o,
				  err, sizeof err);
	json_t *d;

	REQUIRE(g, "%s", err);
	CHECK(o->load == NULL);
	for (uint64_t i = 0; i < N; i++) {
		REQUIRE(o->next(g, &op) == 0);
		CHECK(op.op == KV_OP_ECHO);
		CHECK(op.val_len == 1024);
		CHECK(op.flags == 0, "echo returns data: never nilext");
		CHECK(op.key_len == 8 && strlen(op.key) == 8, "%s", op.key);
		unsigned k = (unsigned)strtoul(op.key + 1, NULL, 10);
		REQUIRE(k < 16, "%s", op.key);
		hits[k]++;
	}
	/* Uniform: each key 1/16, 5 sigma of 4000 counts is about 310. */
	for (int k = 0; k < 16; k++)
		CHECK(hits[k] > 3690 && hits[k] < 4310, "key %d: %llu", k, (unsigned long long)hits[k]);
	d = o->describe(g);
	CHECK(json_integer_value(json_object_get(json_object_get(d, "ops"), "echo")) == (json_int_t)N);
	CHECK(json_integer_value(json_object_get(d, "value_size")) == 1024);
	json_decref(d);
	o->close(g);

	g = open_spec("{\"kind\":\"echo\",\"value_size\":64,\"put_ratio\":1}", &ctx1, &o, err, sizeof err);
	CHECK(g == NULL && strstr(err, "put_ratio") != NULL, "%s", err);
	g = open_spec("{\"kind\":\"echo\",\"key_size\":2,\"keys\":1000}", &ctx1, &o, err, sizeof err);
	CHECK(g == NULL && strstr(err, "key_size >= 4") != NULL, "%s", err);
}

UNIT_MAIN(registry_finds_every_kind, nilext_flags, kv_op_mix_and_sizes, kv_defaults,
	  kv_popularity_follows_pmf, kv_deterministic_per_seed_and_thread,
	  kv_load_splits_keys_between_threads, kv_config_errors, key_helpers,
	  echo_ops_sizes_and_spread)
