/*
 * test_zipf.c - YCSB's Zipfian generator: argument errors, zeta (direct
 * and Euler-Maclaurin, and YCSB's own constant), the exact-table path
 * against the pmf, Gray's path against the distribution Gray's inverse
 * formula defines (derived here from n and theta alone), negative controls
 * showing both chi-square tests fail on wrong maths, and FNV scrambling
 * against keys printed by YCSB.
 */
#include "unit.h"
#include "zipf.h"
#include "stats.h"

#include <stdint.h>

#define N_ITEMS 1000

/* The six thetas the workloads use: uniform, Twitter 12/19/27, YCSB, and 1. */
static const double thetas[] = { 0, 0.3048, 0.735, 0.99, 1.0, 1.065 };
#define NTHETA (sizeof thetas / sizeof thetas[0])

TEST(init_rejects_bad_arguments)
{
	struct zipf z;
	char err[256];
	CHECK(zipf_init(&z, 0, 0.99, 0, err, sizeof err) == -1);
	CHECK(strstr(err, "n must be at least 1") != NULL, "%s", err);
	CHECK(zipf_init(&z, 100, -0.5, 0, err, sizeof err) == -1);
	CHECK(strstr(err, "theta") != NULL && strstr(err, "-0.5") != NULL, "%s", err);
	CHECK(zipf_init(&z, 100, NAN, 0, err, sizeof err) == -1);
	CHECK(zipf_init(&z, 100, INFINITY, 0, err, sizeof err) == -1);
	/* theta == 1 must take the table, which has a size limit. */
	CHECK(zipf_init(&z, ZIPF_TABLE_LIMIT + 1, 1.0, 0, err, sizeof err) == -1);
	CHECK(strstr(err, "theta = 1") != NULL, "%s", err);
	CHECK(z.cdf == NULL);
	zipf_free(&z);   /* safe after a failed init */
	CHECK(zipf_init_ycsb_scrambled(&z, 0, 0.99, err, sizeof err) == -1);
	CHECK(zipf_init_ycsb_scrambled(&z, 10, 1.0, err, sizeof err) == -1);
	/* Huge n without a table is fine for theta != 1: zeta is not a 10^10-term loop. */
	CHECK(zipf_init(&z, 10000000000ull, 0.99, 0, err, sizeof err) == 0, "%s", err);
	CHECK(z.cdf == NULL);
	zipf_free(&z);
}

static long double zeta_ref(uint64_t n, double theta)
{
	long double s = 0;
	for (uint64_t i = n; i >= 1; i--)   /* smallest terms first */
		s += powl((long double)i, -(long double)theta);
	return s;
}

TEST(zeta_direct_and_euler_maclaurin)
{
	static const double th[] = { 0, 0.3048, 0.735, 0.99, 1.0, 1.065, 2.0 };
	CHECK(zipf_zeta(0, 0.5) == 0);
	CHECK(zipf_zeta(1, 0.5) == 1);
	CHECK_NEAR(zipf_zeta(2, 1.0), 1.5, 1e-15);
	CHECK_NEAR(zipf_zeta(4096, 0), 4096, 0);
	CHECK_NEAR(zipf_zeta(1000000007ull, 0), 1000000007.0, 0);
	for (size_t t = 0; t < sizeof th / sizeof th[0]; t++) {
		static const uint64_t ns[] = { 100, 4096, 4097, 100003 };
		for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
			double want = (double)zeta_ref(ns[k], th[t]), got = zipf_zeta(ns[k], th[t]);
			CHECK(fabs(got - want) <= 1e-14 * want, "theta %g n %llu: %.17g vs %.17g",
			      th[t], (unsigned long long)ns[k], got, want);
		}
	}
	/* theta just below 1: expm1 avoids the cancellation in (n^(1-t) - m^(1-t))/(1-t). */
	double a = zipf_zeta(1000000, 1.0 - 1e-9), b = zipf_zeta(1000000, 1.0);
	CHECK(fabs(a - b) < 1e-6 * b && a > b, "%.17g vs %.17g", a, b);
	/* YCSB's precomputed zeta(10^10, 0.99), summed in Java doubles. */
	double y = zipf_zeta(10000000000ull, 0.99);
	CHECK(fabs(y - ZIPF_YCSB_ZETAN_099) <= 1e-10 * y, "%.17g vs YCSB %.17g", y, ZIPF_YCSB_ZETAN_099);
}

TEST(pmf_sums_to_one)
{
	for (size_t t = 0; t < NTHETA; t++) {
		struct zipf z;
		char err[256];
		REQUIRE(zipf_init(&z, N_ITEMS, thetas[t], 0, err, sizeof err) == 0, "%s", err);
		long double s = 0;
		for (uint64_t i = 0; i < N_ITEMS; i++)
			s += zipf_pmf(&z, i);
		CHECK_NEAR((double)s, 1.0, 1e-12);
		CHECK(zipf_pmf(&z, N_ITEMS) == 0);
		CHECK(zipf_pmf(&z, 0) > zipf_pmf(&z, 1) || thetas[t] == 0);
		zipf_free(&z);
	}
}

/* Draws `draws` ranks from z into obs (N_ITEMS cells); fails on a rank >= n. */
static int histogram_ranks(const struct zipf *z, uint64_t seed, int draws, uint64_t *obs)
{
	struct rng r;
	rng_seed(&r, seed);
	memset(obs, 0, N_ITEMS * sizeof *obs);
	for (int i = 0; i < draws; i++) {
		uint64_t k = zipf_next(z, &r);
		if (k >= N_ITEMS)
			return -1;
		obs[k]++;
	}
	return 0;
}

/* Chi-square of obs against draws * prob, cells pooled to >= 20 expected; 1 if it passes at 0.1 %. */
static int fits(const uint64_t *obs_in, const double *prob, int draws, double *chi, double *crit)
{
	uint64_t obs[N_ITEMS];
	double expv[N_ITEMS];
	for (int i = 0; i < N_ITEMS; i++) {
		obs[i] = obs_in[i];
		expv[i] = prob[i] * draws;
	}
	size_t k = stats_chi2_pool(obs, expv, N_ITEMS, 20);
	*chi = stats_chi2(obs, expv, k);
	*crit = stats_chi2_crit((double)k - 1, STATS_Z999);
	return *chi < *crit;
}

TEST(exact_table_matches_pmf)
{
	enum { DRAWS = 400000 };
	uint64_t obs[N_ITEMS];
	double prob[N_ITEMS], chi, crit;
	for (size_t t = 0; t < NTHETA; t++) {
		struct zipf z;
		char err[256];
		REQUIRE(zipf_init(&z, N_ITEMS, thetas[t], N_ITEMS, err, sizeof err) == 0, "%s", err);
		REQUIRE(z.cdf != NULL, "theta %g: no table", thetas[t]);
		/* The reference pmf is recomputed here, not read from z. */
		long double zl = zeta_ref(N_ITEMS, thetas[t]);
		for (int i = 0; i < N_ITEMS; i++)
			prob[i] = (double)(powl(i + 1, -(long double)thetas[t]) / zl);
		REQUIRE(histogram_ranks(&z, 100 + t, DRAWS, obs) == 0);
		CHECK(fits(obs, prob, DRAWS, &chi, &crit), "theta %g: chi-square %.1f >= %.1f", thetas[t], chi, crit);
		zipf_free(&z);
	}
	/* theta == 1 takes the table even when not asked. */
	struct zipf z;
	char err[256];
	REQUIRE(zipf_init(&z, N_ITEMS, 1.0, 0, err, sizeof err) == 0, "%s", err);
	CHECK(z.cdf != NULL);
	zipf_free(&z);
	zipf_free(&z);   /* twice is fine */
}

/*
 * The distribution Gray's algorithm defines, from its inverse: u < 1/zetan
 * gives rank 0, u < (1 + 0.5^theta)/zetan rank 1, and above that rank k
 * for u in [U(k), U(k+1)) with U(k) = 1 - (1 - (k/n)^(1-theta)) / eta
 * (the same for theta > 1, where alpha and eta are both negative).  Only n
 * and theta are taken as input, so wrong constants in zipf.c show up.
 */
static void gray_probs(double theta, double *p)
{
	double n = N_ITEMS;
	double zetan = (double)zeta_ref(N_ITEMS, theta);
	double z2 = 1 + pow(2, -theta);
	double eta = (1 - pow(2 / n, 1 - theta)) / (1 - z2 / zetan);
	double cut = (1 + pow(0.5, theta)) / zetan;
	for (int k = 0; k < N_ITEMS; k++) {
		double lo = k == 0 ? (theta < 1 ? 1 - 1 / eta : -INFINITY)
			: 1 - (1 - pow(k / n, 1 - theta)) / eta;
		double hi = k + 1 == N_ITEMS ? 1 : 1 - (1 - pow((k + 1) / n, 1 - theta)) / eta;
		if (lo < cut)
			lo = cut;
		p[k] = hi > lo ? hi - lo : 0;
	}
	p[0] += 1 / zetan;
	p[1] += pow(0.5, theta) / zetan;
}

TEST(gray_path_matches_its_own_distribution)
{
	enum { DRAWS = 1000000 };
	static uint64_t obs[N_ITEMS];
	double prob[N_ITEMS], chi, crit;
	for (size_t t = 0; t < NTHETA; t++) {
		if (thetas[t] == 1)
			continue;   /* no closed form at 1 */
		struct zipf z;
		char err[256];
		REQUIRE(zipf_init(&z, N_ITEMS, thetas[t], 0, err, sizeof err) == 0, "%s", err);
		REQUIRE(z.cdf == NULL);
		gray_probs(thetas[t], prob);
		double total = 0;
		for (int i = 0; i < N_ITEMS; i++)
			total += prob[i];
		CHECK_NEAR(total, 1.0, 1e-9);
		REQUIRE(histogram_ranks(&z, 200 + t, DRAWS, obs) == 0);
		CHECK(fits(obs, prob, DRAWS, &chi, &crit), "theta %g: chi-square %.1f >= %.1f", thetas[t], chi, crit);
		if (thetas[t] == 0) {   /* Gray's formula at theta 0 is the uniform law */
			for (int i = 0; i < N_ITEMS; i++)
				REQUIRE(fabs(prob[i] - 1.0 / N_ITEMS) < 1e-12, "rank %d: %.17g", i, prob[i]);
		}
		zipf_free(&z);
	}
}

TEST(wrong_maths_fails_the_same_tests)
{
	enum { DRAWS = 1000000 };
	static uint64_t obs[N_ITEMS];
	double prob[N_ITEMS], chi, crit;
	struct zipf z, bad;
	char err[256];

	/* 1 % off in eta, or alpha taken as 1 - theta instead of 1/(1 - theta). */
	REQUIRE(zipf_init(&z, N_ITEMS, 0.99, 0, err, sizeof err) == 0, "%s", err);
	gray_probs(0.99, prob);
	bad = z;
	bad.eta *= 1.01;
	REQUIRE(histogram_ranks(&bad, 300, DRAWS, obs) == 0);
	CHECK(!fits(obs, prob, DRAWS, &chi, &crit), "eta * 1.01 passed: %.1f < %.1f", chi, crit);
	REQUIRE(zipf_init(&z, N_ITEMS, 0.735, 0, err, sizeof err) == 0, "%s", err);
	gray_probs(0.735, prob);
	bad = z;
	bad.alpha = 1 - z.theta;
	REQUIRE(histogram_ranks(&bad, 301, DRAWS, obs) == 0);
	CHECK(!fits(obs, prob, DRAWS, &chi, &crit), "alpha = 1 - theta passed: %.1f < %.1f", chi, crit);

	/*
	 * Gray's draws against the exact pmf must fail too: at n = 1000 and
	 * theta 0.99 rank 2 comes out 17 % too often, falling to 1.5 % at
	 * rank 9 and staying within 4 % after (the reason for the table).
	 */
	REQUIRE(zipf_init(&z, N_ITEMS, 0.99, 0, err, sizeof err) == 0, "%s", err);
	long double zl = zeta_ref(N_ITEMS, 0.99);
	for (int i = 0; i < N_ITEMS; i++)
		prob[i] = (double)(powl(i + 1, -0.99L) / zl);
	REQUIRE(histogram_ranks(&z, 302, DRAWS, obs) == 0);
	CHECK(!fits(obs, prob, DRAWS, &chi, &crit), "Gray vs exact pmf passed: %.1f < %.1f", chi, crit);
	double g[N_ITEMS];
	gray_probs(0.99, g);
	CHECK(g[0] == prob[0] || fabs(g[0] / prob[0] - 1) < 1e-9, "rank 0 is exact in Gray's method");
	CHECK(g[2] > prob[2] * 1.15, "rank 2: Gray %.5f, pmf %.5f", g[2], prob[2]);
	for (int i = 2; i < 10; i++)
		CHECK(g[i] > prob[i] * 1.01 && g[i] < prob[i] * 1.2, "rank %d: Gray %.5f, pmf %.5f", i, g[i], prob[i]);
	for (int i = 10; i < N_ITEMS; i++)
		REQUIRE(fabs(g[i] / prob[i] - 1) < 0.05, "rank %d: Gray %.5f, pmf %.5f", i, g[i], prob[i]);
}

TEST(small_n_and_large_theta)
{
	struct zipf z;
	struct rng r;
	char err[256];
	rng_seed(&r, 5);
	REQUIRE(zipf_init(&z, 1, 0.99, 0, err, sizeof err) == 0, "%s", err);
	for (int i = 0; i < 1000; i++)
		REQUIRE(zipf_next(&z, &r) == 0);
	REQUIRE(zipf_init(&z, 2, 0.99, 0, err, sizeof err) == 0, "%s", err);
	CHECK(isfinite(z.eta));
	uint64_t ones = 0;
	for (int i = 0; i < 100000; i++) {
		uint64_t k = zipf_next(&z, &r);
		REQUIRE(k < 2);
		ones += k;
	}
	/* P(1) = 0.5^0.99 / (1 + 0.5^0.99); 5 standard errors. */
	double p1 = pow(0.5, 0.99) / (1 + pow(0.5, 0.99));
	CHECK_NEAR(ones / 1e5, p1, 5 * sqrt(p1 * (1 - p1) / 1e5));
	REQUIRE(zipf_init(&z, 1, 1.0, 0, err, sizeof err) == 0, "%s", err);
	CHECK(zipf_next(&z, &r) == 0);
	zipf_free(&z);
	/* Steep thetas on Gray's path stay in range and finite. */
	static const double steep[] = { 1.5, 2.0, 3.0, 10.0 };
	for (size_t t = 0; t < 4; t++) {
		REQUIRE(zipf_init(&z, 1000000, steep[t], 0, err, sizeof err) == 0, "theta %g: %s", steep[t], err);
		CHECK(isfinite(z.eta) && isfinite(z.alpha));
		for (int i = 0; i < 100000; i++)
			REQUIRE(zipf_next(&z, &r) < 1000000);
	}
	/* So steep that zetan rounds to zeta(2): Gray's eta would divide by zero. */
	CHECK(zipf_init(&z, 1000, 200.0, 0, err, sizeof err) == -1);
	CHECK(strstr(err, "exact_table_max") != NULL, "%s", err);
	REQUIRE(zipf_init(&z, 1000, 200.0, 1000, err, sizeof err) == 0, "%s", err);
	CHECK(zipf_next(&z, &r) < 2);
	zipf_free(&z);
}

TEST(fnv_hash_matches_ycsb)
{
	/* YCSB's load phase inserts user6284781860667377211, user8517097267634966620, ... */
	CHECK_EQ_U64(fnv1a64_u64(0), 6284781860667377211ull);
	CHECK_EQ_U64(fnv1a64_u64(1), 8517097267634966620ull);
	CHECK_EQ_U64(fnv1a64_u64(2), 1820151046732198393ull);
	/* Raw hashes of 4 and 5 are positive as signed; 0..3 negative (negated above). */
	CHECK_EQ_U64(fnv1a64_u64(4), 0x2cdcdc0dfc5d1141ull);
	CHECK_EQ_U64(fnv1a64_u64(5), 0x0de21504f16dc720ull);
	CHECK_EQ_U64(fnv1a64_u64(UINT64_MAX), 8289690350564177859ull);
	for (uint64_t v = 0; v < 100000; v++)
		REQUIRE(fnv1a64_u64(v) <= (1ull << 63));
}

TEST(scrambled_keeps_popularity)
{
	enum { DRAWS = 400000 };
	static uint64_t obs[N_ITEMS];
	double prob[N_ITEMS] = { 0 }, chi, crit;
	struct zipf z;
	struct rng r;
	char err[256];

	/* Table path, so each item's probability is the pmf summed over the ranks hashed to it. */
	REQUIRE(zipf_init(&z, N_ITEMS, 0.99, N_ITEMS, err, sizeof err) == 0, "%s", err);
	for (uint64_t k = 0; k < N_ITEMS; k++)
		prob[fnv1a64_u64(k) % N_ITEMS] += zipf_pmf(&z, k);
	rng_seed(&r, 400);
	memset(obs, 0, sizeof obs);
	for (int i = 0; i < DRAWS; i++) {
		uint64_t item = zipf_scrambled_next(&z, &r);
		REQUIRE(item < N_ITEMS);
		obs[item]++;
	}
	CHECK(fits(obs, prob, DRAWS, &chi, &crit), "chi-square %.1f >= %.1f", chi, crit);
	zipf_free(&z);

	/* YCSB's own: ranks over 10^10 + 1 items with the precomputed zetan. */
	REQUIRE(zipf_init_ycsb_scrambled(&z, N_ITEMS, 0.99, err, sizeof err) == 0, "%s", err);
	CHECK_EQ_U64(z.n, 10000000001ull);
	CHECK(z.zetan == ZIPF_YCSB_ZETAN_099);
	CHECK_EQ_U64(z.items, N_ITEMS);
	uint64_t r0 = 0, r1 = 0, hot = 0;
	for (int i = 0; i < DRAWS; i++) {
		uint64_t k = zipf_next(&z, &r);
		r0 += k == 0;
		r1 += k == 1;
		hot += zipf_scrambled_next(&z, &r) == fnv1a64_u64(0) % N_ITEMS;
	}
	double p0 = 1 / ZIPF_YCSB_ZETAN_099, p1 = pow(0.5, 0.99) / ZIPF_YCSB_ZETAN_099;
	CHECK_NEAR(r0 / (double)DRAWS, p0, 5 * sqrt(p0 / DRAWS));
	CHECK_NEAR(r1 / (double)DRAWS, p1, 5 * sqrt(p1 / DRAWS));
	/* The hottest item gets rank 0 plus whatever else hashes there. */
	CHECK(hot / (double)DRAWS > p0 - 5 * sqrt(p0 / DRAWS), "hot item share %.4f", hot / (double)DRAWS);
	zipf_free(&z);
	REQUIRE(zipf_init_ycsb_scrambled(&z, 5, 0.5, err, sizeof err) == 0, "%s", err);
	CHECK(z.zetan != ZIPF_YCSB_ZETAN_099 && z.zetan > 1);
	for (int i = 0; i < 10000; i++)
		REQUIRE(zipf_scrambled_next(&z, &r) < 5);
	zipf_free(&z);
}

/* The table path returns exactly the first rank whose cumulative
 * probability exceeds u (the inverse CDF), found here by a linear scan
 * from the same u: for table sizes odd and even, 1 and 2, and tables with
 * runs of equal values (theta 0 over few items; a large theta, where the
 * tail rounds to 1). */
TEST(table_draw_is_the_inverse_cdf)
{
	const uint64_t ns[] = { 1, 2, 3, 7, 64, 1000, 1023 };
	const double th[] = { 0, 0.99, 40 };
	for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
		for (size_t b = 0; b < sizeof th / sizeof th[0]; b++) {
			struct zipf z;
			char err[256];
			REQUIRE(zipf_init(&z, ns[a], th[b], ns[a], err, sizeof err) == 0, "%s", err);
			REQUIRE(z.cdf != NULL);
			struct rng r, copy;
			rng_seed(&r, 77 + a * 10 + b);
			int bad = 0;
			for (int i = 0; i < 20000; i++) {
				copy = r;
				double u = rng_double(&copy);
				uint64_t want = 0;
				while (want + 1 < z.n && !(u < z.cdf[want]))
					want++;
				uint64_t got = zipf_next(&z, &r);
				if (got != want && bad++ < 3)
					CHECK(0, "n %llu theta %g u %.17g: rank %llu, inverse CDF %llu",
					      (unsigned long long)z.n, th[b], u, (unsigned long long)got,
					      (unsigned long long)want);
			}
			CHECK(bad == 0, "n %llu theta %g: %d draws off the inverse CDF",
			      (unsigned long long)z.n, th[b], bad);
			zipf_free(&z);
		}
}

UNIT_MAIN(init_rejects_bad_arguments, zeta_direct_and_euler_maclaurin, pmf_sums_to_one,
	  exact_table_matches_pmf, gray_path_matches_its_own_distribution,
	  wrong_maths_fails_the_same_tests, small_n_and_large_theta, fnv_hash_matches_ycsb,
	  scrambled_keeps_popularity, table_draw_is_the_inverse_cdf)
