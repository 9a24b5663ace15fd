/*
 * test_stats.c - the order-statistic percentile CI (the ranks the formula
 * in stats.h gives, clamping, reading it from a histogram, and its
 * coverage against the exact binomial coverage), and the chi-square and
 * Kolmogorov-Smirnov helpers.
 */
#include "unit.h"
#include "stats.h"
#include "rng.h"

#include <math.h>
#include <stdint.h>

TEST(ci_ranks_follow_the_formula)
{
	uint64_t lo, hi;
	/* floor(9900 - 1.96 sqrt(99)) = floor(9880.50), ceil(9919.50) + 1 = 9921. */
	CHECK(stats_pct_ci_ranks(10000, 0.99, STATS_Z95, &lo, &hi) == 0);
	CHECK_EQ_U64(lo, 9880);
	CHECK_EQ_U64(hi, 9921);
	CHECK(stats_pct_ci_ranks(10000, 0.99, 1.96, &lo, &hi) == 0);
	CHECK_EQ_U64(lo, 9880);
	CHECK_EQ_U64(hi, 9921);
	/* floor(990 - 6.17) = 983, ceil(996.17) + 1 = 998. */
	CHECK(stats_pct_ci_ranks(1000, 0.99, STATS_Z95, &lo, &hi) == 0);
	CHECK_EQ_U64(lo, 983);
	CHECK_EQ_U64(hi, 998);
	/* Median of 100: 50 -+ 9.8 -> 40 and 61. */
	CHECK(stats_pct_ci_ranks(100, 0.5, STATS_Z95, &lo, &hi) == 0);
	CHECK_EQ_U64(lo, 40);
	CHECK_EQ_U64(hi, 61);
	/* p99.9 of 100,000: 99900 -+ 19.59 -> 99880 and 99921. */
	CHECK(stats_pct_ci_ranks(100000, 0.999, STATS_Z95, &lo, &hi) == 0);
	CHECK_EQ_U64(lo, 99880);
	CHECK_EQ_U64(hi, 99921);
	/* z = 0 collapses to the point estimate's neighbourhood. */
	CHECK(stats_pct_ci_ranks(1000, 0.5, 0, &lo, &hi) == 0);
	CHECK_EQ_U64(lo, 500);
	CHECK_EQ_U64(hi, 501);
}

TEST(ci_ranks_clamp_at_small_n)
{
	uint64_t lo, hi;
	/* n = 10: 9.9 -+ 0.62 -> 9 and 12, clamped to 10. */
	CHECK(stats_pct_ci_ranks(10, 0.99, STATS_Z95, &lo, &hi) == 0);
	CHECK_EQ_U64(lo, 9);
	CHECK_EQ_U64(hi, 10);
	CHECK(stats_pct_ci_ranks(1, 0.99, STATS_Z95, &lo, &hi) == 0);
	CHECK_EQ_U64(lo, 1);
	CHECK_EQ_U64(hi, 1);
	CHECK(stats_pct_ci_ranks(5, 0.01, STATS_Z95, &lo, &hi) == 0);
	CHECK_EQ_U64(lo, 1);
	CHECK(hi >= 1 && hi <= 5);
	CHECK(stats_pct_ci_ranks(0, 0.99, STATS_Z95, &lo, &hi) == -1);
	CHECK(lo == 0 && hi == 0);
	CHECK(stats_pct_ci_ranks(100, 0, STATS_Z95, &lo, &hi) == -1);
	CHECK(stats_pct_ci_ranks(100, 1, STATS_Z95, &lo, &hi) == -1);
	CHECK(stats_pct_ci_ranks(100, NAN, STATS_Z95, &lo, &hi) == -1);
	CHECK(stats_pct_ci_ranks(100, 0.5, -1, &lo, &hi) == -1);
}

TEST(ci_bounded_only_when_upper_rank_fits)
{
	/* P99 of 1,000: 990 + 6.17 -> rank 998 <= 1000, bounded */
	CHECK(stats_pct_ci_bounded(1000, 0.99, STATS_Z95));
	/* P99.9 of 1,000: 999 + 1.96 -> 1002 > 1000, open at the top */
	CHECK(!stats_pct_ci_bounded(1000, 0.999, STATS_Z95));
	/* P99 of 300: 297 + 3.38 -> 302 > 300 */
	CHECK(!stats_pct_ci_bounded(300, 0.99, STATS_Z95));
	CHECK(stats_pct_ci_bounded(100000, 0.999, STATS_Z95));
	CHECK(!stats_pct_ci_bounded(0, 0.5, STATS_Z95));
}

TEST(ci_from_histogram)
{
	struct hist *h = hist_new();
	uint64_t lo, hi;
	REQUIRE(h);
	stats_hist_pct_ci(h, 0.99, STATS_Z95, &lo, &hi);
	CHECK(lo == 0 && hi == 0);
	/* 0..999 once each: all exact, so the CI is values 982..997. */
	for (uint64_t v = 0; v < 1000; v++)
		hist_record(h, v);
	stats_hist_pct_ci(h, 0.99, STATS_Z95, &lo, &hi);
	CHECK_EQ_U64(lo, 982);
	CHECK_EQ_U64(hi, 997);
	stats_hist_pct_ci(h, 1.5, STATS_Z95, &lo, &hi);
	CHECK(lo == 0 && hi == 0);
	/* 1..10000 (ns): ranks 9880..9921 are values 9880..9921 within 1/2048. */
	hist_reset(h);
	for (uint64_t v = 1; v <= 10000; v++)
		hist_record(h, v);
	stats_hist_pct_ci(h, 0.99, STATS_Z95, &lo, &hi);
	CHECK(fabs((double)lo - 9880) <= 9880 / 2048.0, "lo %llu", (unsigned long long)lo);
	CHECK(fabs((double)hi - 9921) <= 9921 / 2048.0, "hi %llu", (unsigned long long)hi);
	hist_free(h);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* P(lo <= B <= hi - 1) for B ~ Binomial(n, p): the CI's exact coverage. */
static double binomial_coverage(uint64_t n, double p, uint64_t lo, uint64_t hi)
{
	double s = 0;
	for (uint64_t b = lo; b < hi; b++)
		s += exp(lgamma(n + 1.0) - lgamma(b + 1.0) - lgamma(n - b + 1.0)
			 + b * log(p) + (n - b) * log1p(-p));
	return s;
}

TEST(ci_coverage_simulation)
{
	/*
	 * For a continuous law, X_(lo) <= q <= X_(hi) exactly when the count
	 * B of samples below q is in [lo, hi - 1], so the simulated coverage
	 * must match the binomial sum.
	 */
	enum { N = 1000, TRIALS = 2000 };
	static double x[N];
	uint64_t lo, hi, hit = 0;
	struct rng r;
	REQUIRE(stats_pct_ci_ranks(N, 0.99, STATS_Z95, &lo, &hi) == 0);
	rng_seed(&r, 77);
	for (int t = 0; t < TRIALS; t++) {
		for (int i = 0; i < N; i++)
			x[i] = rng_double(&r);          /* true p99 is 0.99 */
		qsort(x, N, sizeof x[0], cmp_double);
		hit += x[lo - 1] <= 0.99 && 0.99 <= x[hi - 1];
	}
	double cov = binomial_coverage(N, 0.99, lo, hi), sim = (double)hit / TRIALS;
	CHECK(cov >= 0.95, "exact coverage %.4f below 95 %%", cov);
	CHECK_NEAR(sim, cov, 4 * sqrt(cov * (1 - cov) / TRIALS));
}

TEST(chi_square_helpers)
{
	/* Wilson-Hilferty against tabulated points: 0.1 % at df 9 and 99, 5 % at df 1 (the worst case). */
	CHECK(fabs(stats_chi2_crit(9, STATS_Z999) / 27.877 - 1) < 0.01, "%g", stats_chi2_crit(9, STATS_Z999));
	CHECK(fabs(stats_chi2_crit(99, STATS_Z999) / 148.23 - 1) < 0.005, "%g", stats_chi2_crit(99, STATS_Z999));
	CHECK(fabs(stats_chi2_crit(1, 1.6448536) / 3.841 - 1) < 0.05, "%g", stats_chi2_crit(1, 1.6448536));

	uint64_t obs[] = { 10, 20, 30, 1, 0, 2 };
	double expv[] = { 10, 25, 25, 0.5, 0.5, 2 };
	CHECK_NEAR(stats_chi2(obs, expv, 3), 0 + 1.0 + 1.0, 1e-12);
	uint64_t zero_obs[] = { 1 };
	double zero_exp[] = { 0 };
	CHECK(isinf(stats_chi2(zero_obs, zero_exp, 1)));
	/* Pooling to >= 5: {10}, {20}, {30}, then 1+0+2 = 3 expected joins the last cell. */
	size_t k = stats_chi2_pool(obs, expv, 6, 5);
	CHECK_EQ_U64(k, 3);
	CHECK_EQ_U64(obs[2], 33);
	CHECK_NEAR(expv[2], 28, 1e-12);
	uint64_t o1[] = { 1, 1 };
	double e1[] = { 1, 1 };
	CHECK_EQ_U64(stats_chi2_pool(o1, e1, 2, 5), 1);
	CHECK_NEAR(e1[0], 2, 0);
}

TEST(ks_exponential_statistic)
{
	/* Exact quantiles of the law give D = 1/(2n) at most: far below any critical value. */
	enum { N = 1000 };
	static double x[N];
	for (int i = 0; i < N; i++)
		x[N - 1 - i] = -500.0 * log1p(-(i + 0.5) / N);
	double t = stats_ks_exp(x, N, 500);
	CHECK(t < 0.1, "T = %g", t);
	CHECK(x[0] <= x[1], "sorted in place");
	/* The same points against twice the mean are rejected. */
	CHECK(stats_ks_exp(x, N, 1000) > STATS_KS_CRIT_1PCT);
	CHECK(isinf(stats_ks_exp(x, 0, 500)));
	CHECK(isinf(stats_ks_exp(x, N, 0)));
}

/* The one median helper: middle value, mean of the two middle ones for
 * even n, NaN (a missing number) for none; stats_median leaves v alone. */
TEST(median_helper)
{
	double odd[] = { 9, 1, 5 }, even[] = { 8, 2, 4, 6 }, one[] = { 7 };
	CHECK(isnan(stats_median(odd, 0)) && isnan(stats_median_inplace(odd, 0)));
	CHECK_NEAR(stats_median(odd, 3), 5, 0);
	CHECK(odd[0] == 9 && odd[1] == 1 && odd[2] == 5, "stats_median reordered its input");
	CHECK_NEAR(stats_median(even, 4), 5, 0);
	CHECK_NEAR(stats_median(one, 1), 7, 0);
	CHECK_NEAR(stats_median_inplace(even, 4), 5, 0);
	CHECK(even[0] == 2 && even[3] == 8, "stats_median_inplace leaves v sorted");
}

UNIT_MAIN(ci_ranks_follow_the_formula, ci_ranks_clamp_at_small_n, ci_bounded_only_when_upper_rank_fits, ci_from_histogram,
	  ci_coverage_simulation, chi_square_helpers, ks_exponential_statistic, median_helper)
