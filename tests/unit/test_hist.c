/*
 * test_hist.c - the histogram's layout, its error bound against exact
 * order statistics on several distributions, merge, overflow, and the
 * JSON round trip and its error messages.
 */
#include "unit.h"
#include "hist.h"
#include "rng.h"

#include <stdint.h>

#define NDRAW 200000

/* The bound stated in hist.h: exact below 2048, else |got - v| <= v / 2048. */
static int within_bound(uint64_t got, uint64_t v)
{
	if (v < HIST_SUB)
		return got == v;
	uint64_t d = got > v ? got - v : v - got;
	return (unsigned __int128)d * 2048 <= v;
}

TEST(index_layout_is_contiguous)
{
	CHECK_EQ_U64(hist_index_low(0), 0);
	CHECK_EQ_U64(hist_index(HIST_MAX), HIST_NCOUNTS - 1);
	CHECK_EQ_U64(hist_index_low(HIST_NCOUNTS - 1) + hist_index_width(HIST_NCOUNTS - 1) - 1, HIST_MAX);
	for (unsigned i = 0; i < HIST_NCOUNTS; i++) {
		uint64_t lo = hist_index_low(i), w = hist_index_width(i);
		REQUIRE(hist_index(lo) == i, "low end of counter %u maps to %u", i, hist_index(lo));
		REQUIRE(hist_index(lo + w - 1) == i, "high end of counter %u maps elsewhere", i);
		if (i + 1 < HIST_NCOUNTS)
			REQUIRE(hist_index_low(i + 1) == lo + w, "gap or overlap after counter %u", i);
		REQUIRE(within_bound(hist_index_mid(i), lo), "midpoint of %u too far from its low end", i);
	}
	/* Out-of-range indexes read as the last counter rather than shifting past 63. */
	CHECK_EQ_U64(hist_index_low(HIST_NCOUNTS + 5), hist_index_low(HIST_NCOUNTS - 1));
}

TEST(random_values_land_in_their_counter)
{
	struct rng r;
	rng_seed(&r, 7);
	for (int k = 0; k < 1000000; k++) {
		/* Spread over all magnitudes: a random bit length, then random bits. */
		unsigned bits = (unsigned)rng_below(&r, HIST_MAX_BITS + 1);
		uint64_t v = bits ? rng_next(&r) >> (64 - bits) : 0;
		unsigned i = hist_index(v);
		REQUIRE(i < HIST_NCOUNTS);
		REQUIRE(hist_index_low(i) <= v && v < hist_index_low(i) + hist_index_width(i),
			"v = %llu, counter %u", (unsigned long long)v, i);
		REQUIRE(within_bound(hist_index_mid(i), v), "v = %llu", (unsigned long long)v);
	}
}

TEST(bound_is_reached_at_powers_of_two)
{
	/* 2048 shares a counter of width 2 with 2049; the midpoint is 2049. */
	CHECK_EQ_U64(hist_index_mid(hist_index(2048)), 2049);
	CHECK(within_bound(2049, 2048));
	CHECK(!within_bound(2050, 2048));
}

TEST(empty_and_small_values_are_exact)
{
	struct hist *h = hist_new();
	REQUIRE(h);
	CHECK_EQ_U64(h->n, 0);
	CHECK_EQ_U64(h->min, UINT64_MAX);
	CHECK_EQ_U64(hist_percentile(h, 50), 0);
	CHECK_EQ_U64(hist_value_at_rank(h, 1), 0);
	CHECK(hist_mean(h) == 0);
	for (uint64_t v = 1; v <= 100; v++)
		hist_record(h, v);
	CHECK_EQ_U64(h->n, 100);
	CHECK_EQ_U64(h->min, 1);
	CHECK_EQ_U64(h->max, 100);
	CHECK_EQ_U64(hist_percentile(h, 50), 50);
	CHECK_EQ_U64(hist_percentile(h, 99), 99);
	CHECK_EQ_U64(hist_percentile(h, 99.5), 100);
	CHECK_EQ_U64(hist_percentile(h, 100), 100);
	CHECK_EQ_U64(hist_percentile(h, 0.001), 1);
	CHECK_EQ_U64(hist_value_at_rank(h, 0), 1);     /* clamped to rank 1 */
	CHECK_EQ_U64(hist_value_at_rank(h, 1000), 100);
	CHECK_NEAR(hist_mean(h), 50.5, 0);
	hist_reset(h);
	CHECK_EQ_U64(h->n, 0);
	CHECK_EQ_U64(h->min, UINT64_MAX);
	hist_free(h);
	hist_free(NULL);
}

TEST(rank_rounds_up_without_float_noise)
{
	CHECK_EQ_U64(hist_rank(0, 50), 0);
	CHECK_EQ_U64(hist_rank(1000, 99.9), 999);
	CHECK_EQ_U64(hist_rank(100000, 99.99), 99990);
	CHECK_EQ_U64(hist_rank(100000, 99.999), 99999);
	CHECK_EQ_U64(hist_rank(3, 50), 2);
	CHECK_EQ_U64(hist_rank(10, 0), 1);
	CHECK_EQ_U64(hist_rank(10, -5), 1);
	CHECK_EQ_U64(hist_rank(10, NAN), 1);
	CHECK_EQ_U64(hist_rank(10, 100), 10);
	CHECK_EQ_U64(hist_rank(10, 250), 10);
	CHECK_EQ_U64(hist_rank(7, 1), 1);
	CHECK_EQ_U64(hist_rank(1000, 99.91), 1000);
}

/* ---- percentiles against an exact sorted array ---------------------- */

static double normal(struct rng *r)
{
	/* Box-Muller; 1 - U keeps the log finite. */
	double u1 = 1.0 - rng_double(r), u2 = rng_double(r);
	return sqrt(-2.0 * log(u1)) * cos(2 * M_PI * u2);
}

static uint64_t to_ns(double x)
{
	if (!(x > 0))
		return 0;
	if (x >= 0x1p63)
		return UINT64_MAX;
	return (uint64_t)x;
}

enum dist { UNIFORM, EXPONENTIAL, LOGNORMAL, PARETO, BIMODAL, NDIST };
static const char *const dist_name[NDIST] = { "uniform", "exponential", "lognormal", "pareto", "bimodal" };

static uint64_t draw(enum dist d, struct rng *r)
{
	switch (d) {
	case UNIFORM: return rng_below(r, 1000001);                          /* 0..1 ms, many exact values */
	case EXPONENTIAL: return to_ns(-log1p(-rng_double(r)) * 100000);     /* mean 100 us */
	case LOGNORMAL: return to_ns(exp(log(50000) + 1.0 * normal(r)));     /* median 50 us */
	case PARETO: return to_ns(1000 * pow(1.0 - rng_double(r), -1 / 1.1)); /* alpha 1.1, from 1 us */
	case BIMODAL:
		if (rng_below(r, 10) == 0)
			return to_ns(500000 + 20000 * normal(r));
		return to_ns(20000 + 1000 * normal(r));
	default: return 0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

TEST(percentiles_within_stated_bound)
{
	/* Percentiles as num/den so the exact rank ceil(num n / den) is integer maths. */
	static const uint64_t pct[][2] = {
		{ 1, 2 }, { 9, 10 }, { 99, 100 }, { 999, 1000 }, { 9999, 10000 }, { 1, 1000 }, { 1, 1 },
	};
	uint64_t *v = malloc(NDRAW * sizeof *v);
	struct hist *h = hist_new();
	REQUIRE(v && h);

	for (int d = 0; d < NDIST; d++) {
		struct rng r;
		double exact_sum = 0;
		rng_seed(&r, 1000 + (uint64_t)d);
		hist_reset(h);
		for (size_t i = 0; i < NDRAW; i++) {
			uint64_t x = draw((enum dist)d, &r);
			hist_record(h, x);
			v[i] = x > HIST_MAX ? HIST_MAX : x;
			exact_sum += (double)v[i];
		}
		qsort(v, NDRAW, sizeof *v, cmp_u64);
		CHECK_EQ_U64(h->n, NDRAW);
		CHECK(h->min == v[0], "%s: min %llu, exact %llu", dist_name[d],
		      (unsigned long long)h->min, (unsigned long long)v[0]);
		CHECK(h->max == v[NDRAW - 1], "%s: max", dist_name[d]);
		CHECK_EQ_U64(hist_percentile(h, 100), v[NDRAW - 1]);
		CHECK_EQ_U64(hist_value_at_rank(h, 1), v[0]);
		CHECK(fabs(hist_mean(h) - exact_sum / NDRAW) <= 1e-9 * hist_mean(h), "%s: mean", dist_name[d]);
		for (size_t k = 0; k < sizeof pct / sizeof pct[0]; k++) {
			uint64_t num = pct[k][0], den = pct[k][1];
			uint64_t rank = (num * NDRAW + den - 1) / den;
			double p = 100.0 * (double)num / (double)den;
			CHECK_EQ_U64(hist_rank(NDRAW, p), rank);
			uint64_t exact = v[rank - 1], got = hist_percentile(h, p);
			CHECK(within_bound(got, exact), "%s p%g: histogram %llu, exact %llu",
			      dist_name[d], p, (unsigned long long)got, (unsigned long long)exact);
		}
		/* Every rank, not just the usual percentiles. */
		for (uint64_t k = 1; k <= NDRAW; k += 997)
			REQUIRE(within_bound(hist_value_at_rank(h, k), v[k - 1]), "%s rank %llu",
				dist_name[d], (unsigned long long)k);
	}
	hist_free(h);
	free(v);
}

TEST(merge_equals_recording_everything_once)
{
	struct hist *a = hist_new(), *b = hist_new(), *all = hist_new(), *e = hist_new();
	struct rng r;
	REQUIRE(a && b && all && e);
	rng_seed(&r, 42);
	for (int i = 0; i < 100000; i++) {
		uint64_t x = draw((enum dist)(i % NDIST), &r);
		hist_record(i % 3 ? a : b, x);
		hist_record(all, x);
	}
	hist_record(b, HIST_MAX + 10);      /* overflow counts merge too */
	hist_record(all, HIST_MAX + 10);
	hist_merge(a, b);
	CHECK(memcmp(a, all, sizeof *a) == 0, "merged histogram differs from the single one");
	hist_merge(e, all);                 /* into an empty one: a copy */
	CHECK(memcmp(e, all, sizeof *e) == 0);
	hist_reset(b);
	hist_merge(all, b);                 /* merging an empty one changes nothing */
	CHECK(memcmp(e, all, sizeof *e) == 0);
	hist_free(a);
	hist_free(b);
	hist_free(all);
	hist_free(e);
}

TEST(overflow_is_clamped_and_counted)
{
	struct hist *h = hist_new();
	REQUIRE(h);
	hist_record(h, HIST_MAX);
	hist_record(h, HIST_MAX + 1);
	hist_record(h, UINT64_MAX);
	CHECK_EQ_U64(h->n, 3);
	CHECK_EQ_U64(h->overflow, 2);
	CHECK_EQ_U64(h->max, HIST_MAX);
	CHECK_EQ_U64(h->counts[HIST_NCOUNTS - 1], 3);
	CHECK_EQ_U64(hist_percentile(h, 100), HIST_MAX);
	CHECK_EQ_U64(hist_percentile(h, 1), HIST_MAX);
	CHECK(h->sum == 3.0 * (double)HIST_MAX);
	hist_free(h);
}

/* ---- JSON ---------------------------------------------------------- */

/* to_json, dump with the given flags, parse, from_json; 0 if identical. */
static int round_trip(const struct hist *h, size_t flags)
{
	struct hist *back = hist_new();
	char err[256] = "";
	json_t *j = hist_to_json(h);
	char *s = j ? json_dumps(j, flags) : NULL;
	json_t *j2 = s ? json_loads(s, 0, NULL) : NULL;
	int rc = -1;

	if (back && j2 && hist_from_json(back, j2, err, sizeof err) == 0)
		rc = memcmp(back, h, sizeof *h) ? -1 : 0;
	if (err[0])
		fprintf(stderr, "  from_json: %s\n", err);
	free(s);
	json_decref(j);
	json_decref(j2);
	hist_free(back);
	return rc;
}

TEST(json_round_trip_is_bit_exact)
{
	struct hist *h = hist_new();
	struct rng r;
	REQUIRE(h);
	CHECK(round_trip(h, 0) == 0, "empty histogram");
	rng_seed(&r, 9);
	for (int i = 0; i < 50000; i++)
		hist_record(h, draw((enum dist)(i % NDIST), &r));
	hist_record(h, UINT64_MAX);
	CHECK(round_trip(h, 0) == 0, "random histogram");
	/* The sum is an integer, so a caller's low real precision cannot round it. */
	CHECK(round_trip(h, JSON_COMPACT | JSON_REAL_PRECISION(3)) == 0, "low precision dump");
	/* A non-integral sum (not from hist_record) still survives as a real. */
	h->sum += 0.1;
	CHECK(round_trip(h, 0) == 0, "real sum");

	json_t *j = hist_to_json(h);
	REQUIRE(j);
	CHECK(json_is_array(json_object_get(j, "bins")));
	CHECK(json_integer_value(json_object_get(j, "n")) == (json_int_t)h->n);
	json_decref(j);
	hist_free(h);
}

TEST(json_errors_name_the_field)
{
	/* Built from values 5, 5, 3000: counters 5 and 2524. */
	static const char *const good =
		"{\"n\":3,\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":[[5,2],[2524,1]]}";
	static const struct { const char *json, *want; } bad[] = {
		{ "[1,2]", "expected an object" },
		{ "{\"n\":\"3\",\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":[[5,2],[2524,1]]}", "\"n\" must be a non-negative integer, not a string" },
		{ "{\"n\":-3,\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":[[5,2],[2524,1]]}", "\"n\"" },
		{ "{\"n\":3.0,\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":[[5,2],[2524,1]]}", "\"n\" must be a non-negative integer, not a real" },
		{ "{\"n\":3,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":[[5,2],[2524,1]]}", "missing field \"min\"" },
		{ "{\"n\":3,\"min\":5,\"max\":3000,\"sum\":\"x\",\"overflow\":0,\"bins\":[[5,2],[2524,1]]}", "\"sum\"" },
		{ "{\"n\":3,\"min\":5,\"max\":3000,\"sum\":-1,\"overflow\":0,\"bins\":[[5,2],[2524,1]]}", "\"sum\"" },
		{ "{\"n\":3,\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":0}", "missing field \"bins\"" },
		{ "{\"n\":3,\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":{}}", "\"bins\" must be an array" },
		{ "{\"n\":3,\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":[[5,2],[2524]]}", "bins[1]" },
		{ "{\"n\":3,\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":[[5,2],\"x\"]}", "bins[1]" },
		{ "{\"n\":3,\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":[[5,2],[99999,1]]}", "bins[1] index 99999 is out of range" },
		{ "{\"n\":3,\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":[[-1,2],[2524,1]]}", "bins[0] index -1 is out of range" },
		{ "{\"n\":3,\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":[[5,-2],[2524,1]]}", "bins[0] count -2" },
		{ "{\"n\":3,\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":[[5,2],[5,1]]}", "bins[1] repeats index 5" },
		{ "{\"n\":4,\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":[[5,2],[2524,1]]}", "counts sum to 3 but field \"n\" is 4" },
		{ "{\"n\":3,\"min\":7,\"max\":3000,\"sum\":3010,\"overflow\":0,\"bins\":[[5,2],[2524,1]]}", "field \"min\"" },
		{ "{\"n\":3,\"min\":5,\"max\":3100,\"sum\":3010,\"overflow\":0,\"bins\":[[5,2],[2524,1]]}", "field \"max\"" },
		{ "{\"n\":3,\"min\":5,\"max\":3000,\"sum\":3010,\"overflow\":1,\"bins\":[[5,2],[2524,1]]}", "field \"overflow\"" },
		{ "{\"n\":0,\"min\":5,\"max\":0,\"sum\":0,\"overflow\":0,\"bins\":[]}", "empty histogram" },
	};
	struct hist *h = hist_new();
	char err[512];
	REQUIRE(h);

	json_t *j = json_loads(good, 0, NULL);
	REQUIRE(j);
	CHECK(hist_from_json(h, j, err, sizeof err) == 0, "%s", err);
	CHECK_EQ_U64(h->n, 3);
	CHECK_EQ_U64(hist_percentile(h, 50), 5);
	CHECK_EQ_U64(hist_percentile(h, 100), 3000);
	json_decref(j);

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		j = json_loads(bad[i].json, 0, NULL);
		REQUIRE(j, "case %zu does not parse", i);
		err[0] = 0;
		CHECK(hist_from_json(h, j, err, sizeof err) == -1, "case %zu accepted", i);
		CHECK(strstr(err, bad[i].want) != NULL, "case %zu: message \"%s\" lacks \"%s\"", i, err, bad[i].want);
		CHECK(h->n == 0 && h->min == UINT64_MAX, "case %zu: histogram not left empty", i);
		json_decref(j);
	}
	CHECK(hist_from_json(h, NULL, err, sizeof err) == -1);
	CHECK(strstr(err, "expected an object") != NULL, "%s", err);
	CHECK(hist_from_json(NULL, NULL, err, sizeof err) == -1);
	hist_free(h);
}

TEST(is_part_bin_by_bin)
{
	/* a part fits in every bin; one value more in any bin, or in a bin the
	 * whole lacks, is not a part */
	struct hist *w = hist_new(), *p = hist_new();
	REQUIRE(w && p);
	for (uint64_t v = 100; v < 5000; v += 7)
		hist_record(w, v);
	for (uint64_t v = 100; v < 5000; v += 70)
		hist_record(p, v);
	CHECK(hist_is_part(w, p) == 1, "a subset of the values is a part");
	CHECK(hist_is_part(w, w) == 1, "the whole is a part of itself");
	hist_record(p, 100);   /* twice in a bin the whole holds once */
	CHECK(hist_is_part(w, p) == 0, "a bin over the whole's count");
	hist_reset(p);
	hist_record(p, 9000000);
	CHECK(hist_is_part(w, p) == 0, "a bin the whole does not hold");
	hist_free(w);
	hist_free(p);
}

UNIT_MAIN(index_layout_is_contiguous, random_values_land_in_their_counter,
	  bound_is_reached_at_powers_of_two, empty_and_small_values_are_exact,
	  rank_rounds_up_without_float_noise, percentiles_within_stated_bound,
	  merge_equals_recording_everything_once, overflow_is_clamped_and_counted,
	  json_round_trip_is_bit_exact, json_errors_name_the_field, is_part_bin_by_bin)
