/*
 * test_rng.c - splitmix64 and xoshiro256** against published reference
 * outputs, seeding, and the uniformity of rng_double and rng_below
 * (chi-square at fixed seeds, with a biased generator as the control that
 * shows the test can fail).
 */
#include "unit.h"
#include "rng.h"
#include "stats.h"

#include <stdint.h>

TEST(splitmix64_reference_outputs)
{
	/* Vigna's splitmix64.c; seed 0 and seed 1234567 (Rosetta Code's vector). */
	uint64_t x = 0;
	CHECK_EQ_U64(splitmix64(&x), 0xE220A8397B1DCDAFull);
	CHECK_EQ_U64(splitmix64(&x), 0x6E789E6AA1B965F4ull);
	CHECK_EQ_U64(splitmix64(&x), 0x06C45D188009454Full);
	x = 1234567;
	static const uint64_t want[] = { 6457827717110365317ull, 3203168211198807973ull,
		9817491932198370423ull, 4593380528125082431ull, 16408922859458223821ull };
	for (size_t i = 0; i < 5; i++)
		CHECK_EQ_U64(splitmix64(&x), want[i]);
}

TEST(xoshiro256ss_reference_outputs)
{
	struct rng r = { { 1, 2, 3, 4 } };
	static const uint64_t want[] = { 11520, 0, 1509978240, 1215971899390074240ull };
	for (size_t i = 0; i < 4; i++)
		CHECK_EQ_U64(rng_next(&r), want[i]);
}

TEST(seeding_is_splitmix_and_reproducible)
{
	struct rng a, b;
	uint64_t x = 0;
	rng_seed(&a, 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ_U64(a.s[i], splitmix64(&x));
	rng_seed(&a, 99);
	rng_seed(&b, 99);
	for (int i = 0; i < 1000; i++)
		REQUIRE(rng_next(&a) == rng_next(&b));

	/* rng_seed_multi: reproducible, and order and value of each input matter. */
	static const uint64_t t[][3] = { { 1, 2, 3 }, { 1, 3, 2 }, { 2, 1, 3 }, { 0, 0, 0 },
		{ 0, 0, 1 }, { 1, 0, 0 }, { 1, 2, 4 } };
	uint64_t first[7];
	for (int i = 0; i < 7; i++) {
		rng_seed_multi(&a, t[i][0], t[i][1], t[i][2]);
		rng_seed_multi(&b, t[i][0], t[i][1], t[i][2]);
		first[i] = rng_next(&a);
		CHECK_EQ_U64(first[i], rng_next(&b));
		CHECK(a.s[0] | a.s[1] | a.s[2] | a.s[3]);
	}
	for (int i = 0; i < 7; i++)
		for (int j = i + 1; j < 7; j++)
			CHECK(first[i] != first[j], "tuples %d and %d give the same stream", i, j);
}

TEST(rng_double_is_in_unit_interval_and_uniform)
{
	enum { N = 1000000, K = 64 };
	struct rng r;
	uint64_t obs[K] = { 0 };
	double expv[K], sum = 0;
	rng_seed(&r, 3);
	for (int i = 0; i < N; i++) {
		double u = rng_double(&r);
		REQUIRE(u >= 0 && u < 1, "u = %.17g", u);
		obs[(int)(u * K)]++;
		sum += u;
	}
	for (int k = 0; k < K; k++)
		expv[k] = (double)N / K;
	double chi = stats_chi2(obs, expv, K), crit = stats_chi2_crit(K - 1, STATS_Z999);
	CHECK(chi < crit, "chi-square %.1f >= %.1f", chi, crit);
	/* Mean within 5 standard errors of 1/2 (sd of U is 1/sqrt(12)). */
	CHECK_NEAR(sum / N, 0.5, 5 / sqrt(12.0 * N));
	/* The largest output is 1 - 2^-53, still below 1. */
	CHECK((double)(UINT64_MAX >> 11) * 0x1.0p-53 < 1.0);
}

/* Chi-square of n draws of below(n) reduced to k equal cells; 1 if it passes. */
static int uniform_cells(struct rng *r, uint64_t range, unsigned k, int naive, double *chi)
{
	enum { N = 600000 };
	uint64_t obs[16] = { 0 };
	double expv[16];
	uint64_t cell = range / k;   /* range is a multiple of k below */
	for (int i = 0; i < N; i++) {
		uint64_t v = naive ? rng_next(r) % range : rng_below(r, range);
		if (v >= range)
			return 0;
		obs[v / cell]++;
	}
	for (unsigned c = 0; c < k; c++)
		expv[c] = (double)N / k;
	*chi = stats_chi2(obs, expv, k);
	return *chi < stats_chi2_crit(k - 1, STATS_Z999);
}

TEST(rng_below_is_uniform)
{
	struct rng r;
	double chi;
	rng_seed(&r, 11);
	CHECK(uniform_cells(&r, 10, 10, 0, &chi), "n = 10: chi-square %.1f", chi);
	CHECK(uniform_cells(&r, 7, 7, 0, &chi), "n = 7: chi-square %.1f", chi);
	CHECK(uniform_cells(&r, 1000000, 10, 0, &chi), "n = 10^6: chi-square %.1f", chi);
	/* 3 * 2^62: a plain modulo maps 1/2 of the outputs to the first third. */
	uint64_t big = 3ull << 62;
	CHECK(uniform_cells(&r, big, 3, 0, &chi), "n = 3*2^62: chi-square %.1f", chi);
	/* The control: the same test must reject the biased modulo. */
	CHECK(!uniform_cells(&r, big, 3, 1, &chi), "biased modulo passed: chi-square %.1f", chi);
	for (int i = 0; i < 1000; i++)
		REQUIRE(rng_below(&r, 1) == 0);
	for (int i = 0; i < 1000; i++)
		REQUIRE(rng_below(&r, UINT64_MAX) < UINT64_MAX);
}

UNIT_MAIN(splitmix64_reference_outputs, xoshiro256ss_reference_outputs,
	  seeding_is_splitmix_and_reproducible, rng_double_is_in_unit_interval_and_uniform,
	  rng_below_is_uniform)
