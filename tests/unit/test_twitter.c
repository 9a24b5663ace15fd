/*
 * test_twitter.c - the `twitter` generator: Table 1's op mix and sizes per
 * cluster, key popularity against the Zipf pmf (Gray's formula, exact
 * table, alpha 1 and alpha > 1), the rank -> key bijection, custom models,
 * determinism and config errors.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "unit.h"
#include "gen.h"
#include "twitter.h"
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
	g = gen_twitter_ops.open(j, c, err, errlen);
	json_decref(j);
	return g;
}

static const struct gen_ctx ctx1 = { .seed = 11, .nprocesses = 1, .nthreads = 1 };

TEST(table1_mix_and_sizes)
{
	static const struct { int cl; double set; unsigned ks, vs; double alpha; } t1[] = {
		{ 12, 0.80, 44, 1030, 0.3048 },
		{ 19, 0.25, 42, 101, 0.735 },
		{ 27, 0.15, 66, 8, 1.065 },
		{ 31, 0.94, 41, 15, 0 },
	};
	const uint64_t N = 100000;

	for (size_t i = 0; i < sizeof t1 / sizeof t1[0]; i++) {
		char spec[64], err[512];
		struct gen_op op;
		uint64_t sets = 0;
		struct twitter_model m;
		struct gen *g;
		json_t *d;

		REQUIRE(twitter_cluster(t1[i].cl, 0, &m) == 0);
		CHECK(m.ratio[TW_SET] == t1[i].set && m.key_size == t1[i].ks &&
		      m.value_size == t1[i].vs && m.alpha == t1[i].alpha && m.keys == 1000000);
		snprintf(spec, sizeof spec, "{\"kind\":\"twitter\",\"cluster\":%d}", t1[i].cl);
		g = open_spec(spec, &ctx1, err, sizeof err);
		REQUIRE(g, "%s", err);
		for (uint64_t k = 0; k < N; k++) {
			REQUIRE(gen_twitter_ops.next(g, &op) == 0);
			CHECK(op.op == KV_OP_SET || op.op == KV_OP_GET);
			CHECK(op.key_len == t1[i].ks);
			if (op.op == KV_OP_SET) {
				sets++;
				CHECK(op.val_len == t1[i].vs && op.flags == KV_F_NILEXT);
			} else {
				CHECK(op.val_len == 0 && op.flags == 0);
			}
		}
		CHECK_NEAR((double)sets / N, t1[i].set, 0.007);
		d = gen_twitter_ops.describe(g);
		CHECK(json_integer_value(json_object_get(d, "key_size")) == t1[i].ks);
		CHECK(json_real_value(json_object_get(d, "alpha")) == t1[i].alpha);
		json_decref(d);
		gen_twitter_ops.close(g);
	}
	{
		struct twitter_model m;
		CHECK(twitter_cluster(13, 0, &m) == -1);
	}
}

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Draws N keys of a model with `keys` keys and Zipf alpha and compares the
 * counts of the `top` most frequent keys with N * pmf(rank) (5 sigma, plus
 * rel_tol of the expectation for Gray's approximation).
 */
static void popularity(uint64_t keys, double alpha, uint64_t N, int top, double rel_tol)
{
	struct twitter_model m = { .key_size = 16, .value_size = 1, .alpha = alpha, .keys = keys };
	struct twitter_sampler s;
	struct rng r;
	struct zipf z;
	char err[256];
	uint64_t *cnt = calloc(keys, sizeof *cnt);

	REQUIRE(cnt);
	m.ratio[TW_GET] = 1;
	REQUIRE(twitter_sampler_init(&s, &m, err, sizeof err) == 0, "%s", err);
	REQUIRE(zipf_init(&z, keys, alpha, 1 << 20, err, sizeof err) == 0, "%s", err);
	rng_seed(&r, 5);
	for (uint64_t i = 0; i < N; i++) {
		enum twitter_kind k;
		uint64_t key;
		twitter_sampler_next(&s, &r, &k, &key);
		REQUIRE(key < keys);
		cnt[key]++;
	}
	qsort(cnt, keys, sizeof *cnt, cmp_desc);
	for (int i = 0; i < top; i++) {
		double e = (double)N * zipf_pmf(&z, (uint64_t)i);
		CHECK_NEAR((double)cnt[i], e, 5 * sqrt(e) + rel_tol * e + 2);
	}
	zipf_free(&z);
	twitter_sampler_free(&s);
	free(cnt);
}

TEST(popularity_follows_pmf)
{
	popularity(1000, 1.065, 300000, 8, 0);        /* exact table, alpha > 1 */
	popularity(1000, 1.0, 300000, 8, 0);          /* alpha 1: always exact */
	popularity(1000, 0.735, 300000, 5, 0);
	/* The default million keys: still an exact (shared) table. */
	popularity(1000000, 1.065, 300000, 8, 0);
	popularity(1000000, 0.3048, 300000, 1, 0);
	/* Gray's formula above TWITTER_EXACT_MAX: ranks 0 and 1 are exact,
	 * ranks 2..9 come out up to ~20 % high at alpha 1.065. */
	popularity(TWITTER_EXACT_MAX + 1, 1.065, 300000, 2, 0);
	popularity(TWITTER_EXACT_MAX + 1, 1.065, 300000, 8, 0.25);
}

TEST(every_key_is_reachable)
{
	/* alpha 0: uniform over the keys; the bijection leaves none out. */
	struct twitter_model m = { .key_size = 8, .value_size = 1, .alpha = 0, .keys = 97 };
	struct twitter_sampler s;
	struct rng r;
	char err[256];
	int seen[97] = { 0 }, all = 1;

	m.ratio[TW_SET] = 1;
	REQUIRE(twitter_sampler_init(&s, &m, err, sizeof err) == 0, "%s", err);
	rng_seed(&r, 9);
	for (int i = 0; i < 5000; i++) {
		enum twitter_kind k;
		uint64_t key;
		twitter_sampler_next(&s, &r, &k, &key);
		CHECK(k == TW_SET);
		seen[key]++;
	}
	for (int i = 0; i < 97; i++)
		all &= seen[i] > 0;
	CHECK(all);
	twitter_sampler_free(&s);

	/* The bijection with skew: 100 keys, alpha 0.5, all reached. */
	m.alpha = 0.5;
	m.keys = 100;
	REQUIRE(twitter_sampler_init(&s, &m, err, sizeof err) == 0, "%s", err);
	{
		int seen2[100] = { 0 };
		all = 1;
		for (int i = 0; i < 20000; i++) {
			enum twitter_kind k;
			uint64_t key;
			twitter_sampler_next(&s, &r, &k, &key);
			seen2[key]++;
		}
		for (int i = 0; i < 100; i++)
			all &= seen2[i] > 0;
		CHECK(all);
	}
	twitter_sampler_free(&s);
}

TEST(custom_cluster)
{
	char err[512];
	struct gen_op op;
	uint64_t n[KV_OP_MAX_] = { 0 };
	struct gen *g = open_spec("{\"kind\":\"twitter\",\"cluster\":{\"set_ratio\":0.5,\"del_ratio\":0.1,"
				  "\"key_size\":20,\"value_size\":300,\"alpha\":0.9,\"keys\":5000}}",
				  &ctx1, err, sizeof err);

	REQUIRE(g, "%s", err);
	for (int i = 0; i < 100000; i++) {
		REQUIRE(gen_twitter_ops.next(g, &op) == 0);
		n[op.op]++;
		CHECK(op.key_len == 20);
		CHECK(strtoull(op.key + 1, NULL, 10) < 5000);
	}
	CHECK_NEAR(n[KV_OP_SET] / 1e5, 0.5, 0.008);
	CHECK_NEAR(n[KV_OP_DEL] / 1e5, 0.1, 0.005);
	CHECK_NEAR(n[KV_OP_GET] / 1e5, 0.4, 0.008);
	gen_twitter_ops.close(g);
}

TEST(deterministic)
{
	char err[512];
	struct gen_op a, b;
	struct gen *g1 = open_spec("{\"kind\":\"twitter\",\"cluster\":19}", &ctx1, err, sizeof err);
	struct gen *g2 = open_spec("{\"kind\":\"twitter\",\"cluster\":19}", &ctx1, err, sizeof err);
	int same = 1;

	REQUIRE(g1 && g2, "%s", err);
	for (int i = 0; i < 1000; i++) {
		gen_twitter_ops.next(g1, &a);
		gen_twitter_ops.next(g2, &b);
		same &= a.op == b.op && strcmp(a.key, b.key) == 0;
	}
	CHECK(same);
	gen_twitter_ops.close(g1);
	gen_twitter_ops.close(g2);
}

TEST(config_errors)
{
	char err[512];

	CHECK(open_spec("{\"kind\":\"twitter\",\"cluster\":13}", &ctx1, err, sizeof err) == NULL);
	CHECK(strstr(err, "12, 19, 27 or 31") != NULL, "%s", err);
	CHECK(open_spec("{\"kind\":\"twitter\"}", &ctx1, err, sizeof err) == NULL);
	CHECK(strstr(err, "cluster") != NULL, "%s", err);
	CHECK(open_spec("{\"kind\":\"twitter\",\"cluster\":\"12\"}", &ctx1, err, sizeof err) == NULL);
	CHECK(strstr(err, "cluster") != NULL, "%s", err);
	CHECK(open_spec("{\"kind\":\"twitter\",\"clustr\":12}", &ctx1, err, sizeof err) == NULL);
	CHECK(strstr(err, "\"cluster\"") != NULL, "%s", err);
	CHECK(open_spec("{\"kind\":\"twitter\",\"cluster\":{\"set_ratio\":0.5,\"key_size\":20,"
			"\"value_size\":1,\"alpha\":0.5,\"alfa\":1}}", &ctx1, err, sizeof err) == NULL);
	CHECK(strstr(err, "\"alpha\"") != NULL, "%s", err);
	CHECK(open_spec("{\"kind\":\"twitter\",\"cluster\":{\"set_ratio\":0.5,\"key_size\":3,"
			"\"value_size\":1,\"alpha\":0.5}}", &ctx1, err, sizeof err) == NULL);
	CHECK(strstr(err, "key_size") != NULL, "%s", err);
	CHECK(open_spec("{\"kind\":\"twitter\",\"cluster\":{\"set_ratio\":0.5,\"value_size\":1,"
			"\"alpha\":0.5}}", &ctx1, err, sizeof err) == NULL);
	CHECK(strstr(err, "key_size") != NULL, "%s", err);
}

UNIT_MAIN(table1_mix_and_sizes, popularity_follows_pmf, every_key_is_reachable, custom_cluster,
	  deterministic, config_errors)
