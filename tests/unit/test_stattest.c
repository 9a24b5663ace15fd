/*
 * test_stattest.c - lib/stattest: each test against reference values
 * from scipy 1.10.1 (Debian bookworm's python3-scipy; the call that gave
 * each constant is named beside it), known answers with ties, symmetry
 * (swapping the samples), Holm and Benjamini-Hochberg against hand-worked
 * examples, and seeded controls: the tests keep their level on data from
 * the null and reject the departures oqbench cares about (a 20 % shift of
 * trial medians, a constant-rate or 20 %-off arrival schedule).
 *
 * The seeded controls are deterministic (fixed seeds); their bounds were
 * chosen to hold with overwhelming probability for any seeds, so a change
 * of RNG does not turn them flaky.
 */
#include "unit.h"
#include "stattest.h"
#include "arrival.h"
#include "rng.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* |a - b| <= rel |b| (or <= rel when b is 0). */
#define CHECK_REL(a, b, rel) CHECK_NEAR(a, b, (rel) * (fabs((double)(b)) > 0 ? fabs((double)(b)) : 1))

/* The samples the scipy constants below were computed on. */
static const double SMALL_A[] = { 12.1, 15.3, 11.8, 14.2, 13.9, 16.4, 12.7 };
static const double SMALL_B[] = { 14.8, 17.2, 16.1, 15.9, 18.3, 13.5, 17.7, 16.8 };
static const double TIES_A[] = { 1, 2, 2, 3, 3, 3, 4, 5 };
static const double TIES_B[] = { 2, 3, 4, 4, 5, 5, 6, 7, 7 };
#define N_OF(x) (sizeof(x) / sizeof((x)[0]))

/* a_i = base + 10 sin(1.7 i) + 0.01 i and b_j = base + 10 cos(1.3 j) + 0.01 j (python's math.sin/cos). */
static void wave(double *a, size_t na, double abase, double *b, size_t nb, double bbase)
{
	for (size_t i = 0; i < na; i++)
		a[i] = abase + 10 * sin(1.7 * (double)i) + 0.01 * (double)i;
	for (size_t j = 0; j < nb; j++)
		b[j] = bbase + 10 * cos(1.3 * (double)j) + 0.01 * (double)j;
}

/* Standard normal draw (Box-Muller; one of the pair is enough here). */
static double normal(struct rng *r)
{
	double u = 1 - rng_double(r), v = rng_double(r);

	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static char err[256];

/* ---- Mann-Whitney -------------------------------------------------- */

TEST(mwu_exact_matches_scipy)
{
	struct mwu_result r;

	/* scipy.stats.mannwhitneyu(SMALL_A, SMALL_B, alternative='two-sided', method='exact'):
	 * U = 8, p = 0.020512820512820513 (= 2 * 66 / 6435).  numpy.median of
	 * numpy.subtract.outer(b, a): 2.6500000000000012. */
	REQUIRE(mwu_test(SMALL_A, N_OF(SMALL_A), SMALL_B, N_OF(SMALL_B), &r, err, sizeof err) == 0, "%s", err);
	CHECK(r.exact == 1);
	CHECK_EQ_U64(r.u, 8);
	CHECK_REL(r.p, 0.020512820512820513, 1e-12);
	CHECK(r.z == 0);
	CHECK_REL(r.shift, 2.6500000000000012, 1e-12);

	/* wave(40, base 100; 45, base 101): method='exact' gives U = 796,
	 * p = 0.36402561968980252; HL shift 1.0709660742944322. */
	double a[40], b[45];
	wave(a, 40, 100, b, 45, 101);
	REQUIRE(mwu_test(a, 40, b, 45, &r, err, sizeof err) == 0, "%s", err);
	CHECK(r.exact == 1);
	CHECK_EQ_U64(r.u, 796);
	CHECK_REL(r.p, 0.36402561968980252, 1e-10);
	CHECK_REL(r.shift, 1.0709660742944322, 1e-12);

	/* Hand-worked: 3 vs 3 completely separated, p = 2 / C(6, 3) = 0.1. */
	const double lo3[] = { 1, 2, 3 }, hi3[] = { 4, 5, 6 };
	REQUIRE(mwu_test(lo3, 3, hi3, 3, &r, err, sizeof err) == 0, "%s", err);
	CHECK_EQ_U64(r.u, 0);
	CHECK_REL(r.p, 0.1, 1e-14);
	CHECK_REL(r.shift, 3, 1e-14);    /* differences 1,2,2,3,3,3,4,4,5: median 3 */
}

TEST(mwu_ties_known_answer)
{
	struct mwu_result r;

	/*
	 * By hand: pooled mid-ranks 1:1, 2:3 (x3), 3:6.5 (x4), 4:10 (x3), 5:13
	 * (x3), 6:15, 7:16.5 (x2); R_a = 1 + 3 + 3 + 3 * 6.5 + 10 + 13 = 49.5,
	 * U = 49.5 - 36 = 13.5.  scipy.stats.mannwhitneyu(TIES_A, TIES_B,
	 * alternative='two-sided', method='asymptotic', use_continuity=True):
	 * U = 13.5, p = 0.031758957148063711.  HL: median of b - a is 2.
	 */
	REQUIRE(mwu_test(TIES_A, N_OF(TIES_A), TIES_B, N_OF(TIES_B), &r, err, sizeof err) == 0, "%s", err);
	CHECK(r.exact == 0, "ties must use the normal approximation");
	CHECK_NEAR(r.u, 13.5, 1e-12);
	CHECK_REL(r.p, 0.031758957148063711, 1e-10);
	CHECK(r.z < 0, "a tends to be smaller, z = %g", r.z);
	CHECK_NEAR(r.shift, 2, 1e-12);

	/* All values equal: nothing to rank, p = 1. */
	const double same[] = { 5, 5, 5, 5 };
	REQUIRE(mwu_test(same, 4, same, 3, &r, err, sizeof err) == 0, "%s", err);
	CHECK(r.p == 1 && r.z == 0 && r.shift == 0, "p %g z %g shift %g", r.p, r.z, r.shift);
	CHECK_NEAR(r.u, 6, 1e-12);
}

TEST(mwu_normal_approximation_matches_scipy)
{
	struct mwu_result r;
	double a[60], b[70];

	/* wave(60, base 100; 70, base 103), above MWU_EXACT_MAX: scipy method='asymptotic':
	 * U = 1518, p = 0.0066137994155370822; HL 3.1791907431838666. */
	wave(a, 60, 100, b, 70, 103);
	REQUIRE(mwu_test(a, 60, b, 70, &r, err, sizeof err) == 0, "%s", err);
	CHECK(r.exact == 0);
	CHECK_EQ_U64(r.u, 1518);
	CHECK_REL(r.p, 0.0066137994155370822, 1e-10);
	CHECK_REL(r.shift, 3.1791907431838666, 1e-12);
	/* z by hand: (1518 - 2100 + 0.5) / sqrt(60 * 70 * 131 / 12). */
	CHECK_REL(r.z, (1518 - 2100 + 0.5) / sqrt(60.0 * 70 * 131 / 12), 1e-12);
}

TEST(mwu_swap_symmetry)
{
	struct mwu_result ab, ba;

	/* scipy on (SMALL_B, SMALL_A): U = 48 = 56 - 8, the same p; HL -2.65. */
	REQUIRE(mwu_test(SMALL_B, N_OF(SMALL_B), SMALL_A, N_OF(SMALL_A), &ba, err, sizeof err) == 0, "%s", err);
	CHECK_EQ_U64(ba.u, 48);
	CHECK_REL(ba.p, 0.020512820512820513, 1e-12);
	CHECK_REL(ba.shift, -2.6500000000000012, 1e-12);

	/* Random samples with ties, exact and normal paths alike. */
	struct rng rng;
	rng_seed(&rng, 11);
	for (int round = 0; round < 40; round++) {
		double a[80], b[80];
		size_t na = 1 + rng_below(&rng, 79), nb = 1 + rng_below(&rng, 79);
		int coarse = round % 2;     /* odd rounds: few distinct values, many ties */
		for (size_t i = 0; i < na; i++)
			a[i] = coarse ? (double)rng_below(&rng, 6) : rng_double(&rng);
		for (size_t j = 0; j < nb; j++)
			b[j] = coarse ? (double)rng_below(&rng, 6) + 1 : rng_double(&rng) + 0.1;
		REQUIRE(mwu_test(a, na, b, nb, &ab, err, sizeof err) == 0, "%s", err);
		REQUIRE(mwu_test(b, nb, a, na, &ba, err, sizeof err) == 0, "%s", err);
		CHECK_NEAR(ab.u + ba.u, (double)na * (double)nb, 1e-9);
		CHECK_REL(ab.p, ba.p, 1e-12);
		CHECK(ab.exact == ba.exact);
		CHECK_NEAR(ab.z, -ba.z, 1e-12);
		CHECK_NEAR(ab.shift, -ba.shift, 1e-12);
		CHECK(ab.p >= 0 && ab.p <= 1);
	}
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

TEST(mwu_shift_is_median_of_differences)
{
	static double diffs[70 * 70];
	struct rng rng;
	struct mwu_result r;

	rng_seed(&rng, 5);
	for (int round = 0; round < 60; round++) {
		double a[70], b[70];
		size_t na = 1 + rng_below(&rng, 69), nb = 1 + rng_below(&rng, 69), k = 0;
		for (size_t i = 0; i < na; i++)
			a[i] = round % 3 ? rng_double(&rng) * 10 : (double)rng_below(&rng, 4);
		for (size_t j = 0; j < nb; j++)
			b[j] = round % 3 ? rng_double(&rng) * 12 : (double)rng_below(&rng, 5);
		for (size_t i = 0; i < na; i++)
			for (size_t j = 0; j < nb; j++)
				diffs[k++] = b[j] - a[i];
		qsort(diffs, k, sizeof diffs[0], cmp_dbl);
		double med = k % 2 ? diffs[k / 2] : (diffs[k / 2 - 1] + diffs[k / 2]) / 2;
		REQUIRE(mwu_test(a, na, b, nb, &r, err, sizeof err) == 0, "%s", err);
		CHECK(r.shift == med, "round %d (%zu x %zu): shift %.17g, brute force %.17g", round, na, nb, r.shift, med);
	}
}

TEST(mwu_min_n_is_attainable)
{
	/* 2 / C(2n, n): n = 4 gives 2/70 = 0.029 (n = 3: 0.1); 5 gives 0.0079; 7 gives 0.00058 (6: 0.0022). */
	CHECK_EQ_U64(mwu_min_n(0.05), 4);
	CHECK_EQ_U64(mwu_min_n(0.01), 5);
	CHECK_EQ_U64(mwu_min_n(0.002), 7);
	CHECK_EQ_U64(mwu_min_n(0.5), 2);
	CHECK_EQ_U64(mwu_min_n(0), 0);
	CHECK_EQ_U64(mwu_min_n(1), 0);
	CHECK_EQ_U64(mwu_min_n(NAN), 0);
	/* Beyond the exact range the normal approximation decides: consistent with mwu_test. */
	const double alphas[] = { 0.1, 0.05, 0.01, 0.002, 1e-6, 1e-12, 1e-25, 1e-40 };
	for (size_t k = 0; k < N_OF(alphas); k++) {
		unsigned n = mwu_min_n(alphas[k]);
		REQUIRE(n >= 2 && n <= 400, "alpha %g: n = %u", alphas[k], n);
		double a[400], b[400];
		struct mwu_result r;
		for (unsigned i = 0; i < n; i++) {
			a[i] = i;
			b[i] = 1000 + i;
		}
		REQUIRE(mwu_test(a, n, b, n, &r, err, sizeof err) == 0, "%s", err);
		CHECK(r.p < alphas[k], "alpha %g, n %u: p %g", alphas[k], n, r.p);
		REQUIRE(mwu_test(a, n - 1, b, n - 1, &r, err, sizeof err) == 0, "%s", err);
		CHECK(r.p >= alphas[k], "alpha %g, n - 1 = %u: p %g", alphas[k], n - 1, r.p);
	}
}

/* Lognormal-ish trial medians: 100 exp(N(0, 0.1^2)) times factor. */
static void trials(struct rng *rng, double *x, size_t n, double factor)
{
	for (size_t i = 0; i < n; i++)
		x[i] = 100 * factor * exp(0.1 * normal(rng));
}

TEST(mwu_power_on_20pct_shift)
{
	struct rng rng;
	struct mwu_result r;
	int rejected = 0;
	const int seeds = 200;

	/* Effect ln 1.2 / 0.1 = 1.8 sd: power at alpha 0.05 with 10 vs 10 is about 0.96. */
	for (int s = 0; s < seeds; s++) {
		double a[10], b[10];
		rng_seed(&rng, 1000 + s);
		trials(&rng, a, 10, 1.0);
		trials(&rng, b, 10, 1.2);
		REQUIRE(mwu_test(a, 10, b, 10, &r, err, sizeof err) == 0, "%s", err);
		rejected += r.p < 0.05;
		CHECK(r.shift > 0, "seed %d: shift %g", s, r.shift);
	}
	CHECK(rejected >= seeds * 8 / 10, "rejected %d of %d", rejected, seeds);
}

TEST(mwu_false_positive_rate)
{
	struct rng rng;
	struct mwu_result r;
	int rejected = 0, rejected_big = 0;
	const int seeds = 2000, seeds_big = 400;

	/* Exact test, 10 vs 10: size P(p < 0.05) = 0.043 (discrete); sd of the count is about 9. */
	for (int s = 0; s < seeds; s++) {
		double a[10], b[10];
		rng_seed(&rng, 5000 + s);
		trials(&rng, a, 10, 1.0);
		trials(&rng, b, 10, 1.0);
		REQUIRE(mwu_test(a, 10, b, 10, &r, err, sizeof err) == 0, "%s", err);
		rejected += r.p < 0.05;
	}
	CHECK(rejected >= seeds * 2 / 100 && rejected <= seeds * 8 / 100, "rejected %d of %d", rejected, seeds);

	/* Normal approximation, 60 vs 60: about 5 %; sd of the count about 4.4. */
	for (int s = 0; s < seeds_big; s++) {
		double a[60], b[60];
		rng_seed(&rng, 9000 + s);
		trials(&rng, a, 60, 1.0);
		trials(&rng, b, 60, 1.0);
		REQUIRE(mwu_test(a, 60, b, 60, &r, err, sizeof err) == 0, "%s", err);
		CHECK(r.exact == 0);
		rejected_big += r.p < 0.05;
	}
	CHECK(rejected_big >= 4 && rejected_big <= 40, "rejected %d of %d", rejected_big, seeds_big);
}

TEST(mwu_refuses_bad_input)
{
	struct mwu_result r;
	const double a[] = { 1, NAN, 3 }, b[] = { 1, 2, INFINITY };

	err[0] = 0;
	CHECK(mwu_test(a, 0, SMALL_B, 3, &r, err, sizeof err) == -1);
	CHECK(strstr(err, "sample a is empty"), "%s", err);
	CHECK(mwu_test(SMALL_A, 3, b, 0, &r, err, sizeof err) == -1);
	CHECK(strstr(err, "sample b is empty"), "%s", err);
	CHECK(mwu_test(a, 3, SMALL_B, 3, &r, err, sizeof err) == -1);
	CHECK(strstr(err, "a[1]") && strstr(err, "finite"), "%s", err);
	CHECK(mwu_test(SMALL_A, 3, b, 3, &r, err, sizeof err) == -1);
	CHECK(strstr(err, "b[2]"), "%s", err);
	CHECK(r.p == 1);
}

/* ---- van Elteren, stratified ---------------------------------------- */

TEST(strat_one_stratum_is_exact_mwu)
{
	/* one stratum, no ties: the same split distribution as the exact U test */
	const double a[] = { 12.1, 15.3, 11.8, 14.2, 13.9, 16.4 }, b[] = { 14.8, 17.2, 16.1, 15.9, 18.3, 13.5 };
	const unsigned s[] = { 7, 7, 7, 7, 7, 7 };
	struct mwu_result r;
	double p;
	unsigned ns = 0;
	REQUIRE(strat_rank_test(a, b, s, 6, &p, &ns, err, sizeof err) == 0, "%s", err);
	REQUIRE(mwu_test(a, 6, b, 6, &r, err, sizeof err) == 0, "%s", err);
	CHECK(r.exact == 1);
	CHECK_REL(p, r.p, 1e-12);
	CHECK(ns == 1, "strata %u", ns);
}

TEST(strat_ties_share_mid_ranks)
{
	/* a = {1, 2}, b = {2, 3}: ranks 1, 2.5, 2.5, 4, so W_b / 5 = 1.3 against
	 * E = 1; of the 6 splits, {1,2.5}x2, {1,4}, {2.5,2.5}, {2.5,4}x2, four lie
	 * 0.3 from E: p = 2/3.  Ranks 2 and 3 for the tie would give 1/3. */
	const double a[] = { 1, 2 }, b[] = { 2, 3 };
	const unsigned s[] = { 0, 0 };
	double p;
	REQUIRE(strat_rank_test(a, b, s, 2, &p, NULL, err, sizeof err) == 0, "%s", err);
	CHECK_REL(p, 2.0 / 3, 1e-12);
}

TEST(strat_hand_worked_two_strata)
{
	/* Strata of 5 and 4 pairs, every new value above every base value in
	 * its stratum: only the most extreme split of each stratum reaches
	 * |T - E T|, at either end, so p = 2 / (C(10,5) C(8,4)) = 2 / 17640.
	 * The second stratum runs five times slower: pooled, the samples
	 * overlap and the plain U test cannot see the shift. */
	const double a[] = { 300, 310, 305, 295, 302, 1500, 1520, 1490, 1510 };
	const double b[] = { 450, 460, 455, 448, 452, 2250, 2260, 2240, 2255 };
	const unsigned s[] = { 0, 0, 0, 0, 0, 1, 1, 1, 1 };
	struct mwu_result r;
	double p;
	unsigned ns = 0;
	REQUIRE(strat_rank_test(a, b, s, 9, &p, &ns, err, sizeof err) == 0, "%s", err);
	CHECK_REL(p, 2.0 / 17640, 1e-9);
	CHECK(ns == 2, "strata %u", ns);
	REQUIRE(mwu_test(a, 9, b, 9, &r, err, sizeof err) == 0, "%s", err);
	CHECK(r.p > 0.05, "pooled U test p %g", r.p);
	/* swapping the sides keeps p; ties inside a stratum are mid-ranked */
	double p2;
	REQUIRE(strat_rank_test(b, a, s, 9, &p2, NULL, err, sizeof err) == 0, "%s", err);
	CHECK_REL(p2, p, 1e-12);
	const double c[] = { 1, 1, 1, 1, 1, 5, 5, 5, 5 };
	REQUIRE(strat_rank_test(c, c, s, 9, &p2, NULL, err, sizeof err) == 0, "%s", err);
	CHECK(p2 == 1, "all tied: p %g", p2);
}

TEST(strat_false_positive_rate_and_power)
{
	/* Two strata of 5 pairs, the second 5x slower, 2 % noise: with no
	 * change it rejects at most about alpha; with +10 % in every pair it
	 * finds it nearly always. */
	struct rng rng;
	int fp = 0, found = 0;
	const int seeds = 400;
	unsigned s[10];
	for (int i = 0; i < 10; i++)
		s[i] = i >= 5;
	for (int k = 0; k < seeds; k++) {
		double a[10], b[10], c[10], p;
		rng_seed(&rng, 7000 + k);
		for (int i = 0; i < 10; i++) {
			double f = s[i] ? 500 : 100;
			a[i] = f * (1 + 0.02 * normal(&rng));
			b[i] = f * (1 + 0.02 * normal(&rng));
			c[i] = f * 1.1 * (1 + 0.02 * normal(&rng));
		}
		REQUIRE(strat_rank_test(a, b, s, 10, &p, NULL, err, sizeof err) == 0, "%s", err);
		fp += p < 0.05;
		REQUIRE(strat_rank_test(a, c, s, 10, &p, NULL, err, sizeof err) == 0, "%s", err);
		found += p < 0.01;
	}
	CHECK(fp <= seeds * 7 / 100, "false positives %d of %d", fp, seeds);
	CHECK(fp >= seeds / 100, "false positives %d of %d (a test that never rejects?)", fp, seeds);
	CHECK(found >= seeds * 95 / 100, "found %d of %d", found, seeds);
}

TEST(strat_sampled_when_too_many_splits)
{
	/* 16 pairs in one stratum: C(32,16) splits, so they are sampled; a
	 * complete separation is then as rare as the draws can show, and no
	 * change at all is far from significant */
	double a[16], b[16], p;
	unsigned s[16] = { 0 };
	for (int i = 0; i < 16; i++) {
		a[i] = 100 + i;
		b[i] = 200 + i;
	}
	REQUIRE(strat_rank_test(a, b, s, 16, &p, NULL, err, sizeof err) == 0, "%s", err);
	CHECK_REL(p, 1.0 / (STRAT_MC_DRAWS + 1), 1e-9);
	REQUIRE(strat_rank_test(a, a, s, 16, &p, NULL, err, sizeof err) == 0, "%s", err);
	CHECK(p > 0.9, "p %g", p);
}

TEST(strat_refuses_bad_input)
{
	const double a[] = { 1, NAN }, b[] = { 2, 3 };
	const unsigned s[] = { 0, 0 };
	double p;
	err[0] = 0;
	CHECK(strat_rank_test(a, b, s, 0, &p, NULL, err, sizeof err) == -1);
	CHECK(strstr(err, "no pairs"), "%s", err);
	CHECK(strat_rank_test(a, b, s, 2, &p, NULL, err, sizeof err) == -1);
	CHECK(strstr(err, "pair 1") && strstr(err, "finite"), "%s", err);
}

/* ---- Kolmogorov-Smirnov -------------------------------------------- */

TEST(ks_exact_matches_scipy)
{
	double d, p;

	/* scipy.stats.ks_2samp(SMALL_A, SMALL_B, method='exact'): D = 0.6071428571428571 (= 34/56),
	 * p = 0.08702408702408701. */
	REQUIRE(ks2_test(SMALL_A, N_OF(SMALL_A), SMALL_B, N_OF(SMALL_B), &d, &p, err, sizeof err) == 0, "%s", err);
	CHECK_REL(d, 34.0 / 56, 1e-15);
	CHECK_REL(p, 0.08702408702408701, 1e-12);

	/* With ties, ks_2samp(TIES_A, TIES_B, method='exact'): D = 0.52777777777777779 (= 38/72,
	 * after the group at 3: 6/8 - 2/9), p = 0.14232825997531878. */
	REQUIRE(ks2_test(TIES_A, N_OF(TIES_A), TIES_B, N_OF(TIES_B), &d, &p, err, sizeof err) == 0, "%s", err);
	CHECK_REL(d, 38.0 / 72, 1e-15);
	CHECK_REL(p, 0.14232825997531878, 1e-12);

	/* wave(60, base 100; 70, base 103), method='exact': D = 0.25, p = 0.028931631385438195. */
	double a[60], b[70];
	wave(a, 60, 100, b, 70, 103);
	REQUIRE(ks2_test(a, 60, b, 70, &d, &p, err, sizeof err) == 0, "%s", err);
	CHECK_REL(d, 0.25, 1e-15);
	CHECK_REL(p, 0.028931631385438195, 1e-10);

	/* Swapping keeps D and p. */
	double d2, p2;
	REQUIRE(ks2_test(b, 70, a, 60, &d2, &p2, err, sizeof err) == 0, "%s", err);
	CHECK(d2 == d);
	CHECK_REL(p2, p, 1e-12);

	/* Controls: identical samples give D = 0, p = 1; separated 3 vs 3 give D = 1,
	 * p = 2 / C(6, 3) = 0.1 (only the two extreme paths reach the corners). */
	REQUIRE(ks2_test(a, 60, a, 60, &d, &p, err, sizeof err) == 0, "%s", err);
	CHECK(d == 0 && p == 1, "D %g p %g", d, p);
	const double lo3[] = { 1, 2, 3 }, hi3[] = { 4, 5, 6 };
	REQUIRE(ks2_test(lo3, 3, hi3, 3, &d, &p, err, sizeof err) == 0, "%s", err);
	CHECK(d == 1);
	CHECK_REL(p, 0.1, 1e-14);
}

TEST(ks_asymptotic_matches_kolmogorov)
{
	static double a[1200], b[1000];
	double d, p;

	/*
	 * wave(1200, base 100; 1000, base 100.5): na nb = 1.2e6 > KS_EXACT_MAX_CELLS.
	 * scipy.stats.ks_2samp: D = 0.034666666666666665 (exact p there: 0.5168);
	 * lambda = (sqrt(en) + 0.12 + 0.11 / sqrt(en)) D = 0.81396217910653945 with
	 * en = 1200 * 1000 / 2200, scipy.special.kolmogorov(lambda) = 0.52160211165112136.
	 */
	wave(a, 1200, 100, b, 1000, 100.5);
	REQUIRE(ks2_test(a, 1200, b, 1000, &d, &p, err, sizeof err) == 0, "%s", err);
	CHECK_REL(d, 0.034666666666666665, 1e-14);
	CHECK_REL(p, 0.52160211165112136, 1e-9);
	CHECK(fabs(p - 0.5168) < 0.01, "asymptotic p %g vs scipy's exact 0.5168", p);

	/* b shifted up by k/2: scipy D and scipy.special.kolmogorov(lambda) for k = 1, 3, 4
	 * (lambda 0.442, 1.421, 1.882: both branches of Q). */
	const struct { int k; double d, p; } sh[] = {
		{ 1, 0.018833333333333369, 0.98968569250295579 },
		{ 3, 0.060499999999999998, 0.035344393031804089 },
		{ 4, 0.080166666666666608, 0.0016734539073460983 },
	};
	for (size_t c = 0; c < N_OF(sh); c++) {
		double shifted[1000];
		for (int j = 0; j < 1000; j++)
			shifted[j] = b[j] + sh[c].k * 0.5;
		REQUIRE(ks2_test(a, 1200, shifted, 1000, &d, &p, err, sizeof err) == 0, "%s", err);
		CHECK_REL(d, sh[c].d, 1e-12);
		CHECK_REL(p, sh[c].p, 1e-9);
	}
}

TEST(ks_refuses_bad_input)
{
	double d, p;
	const double bad[] = { 1, NAN };

	CHECK(ks2_test(SMALL_A, 0, SMALL_B, 3, &d, &p, err, sizeof err) == -1);
	CHECK(strstr(err, "ks2_test") && strstr(err, "empty"), "%s", err);
	CHECK(ks2_test(SMALL_A, 3, bad, 2, &d, &p, err, sizeof err) == -1);
	CHECK(strstr(err, "b[1]"), "%s", err);
}

/* ---- Anderson-Darling ---------------------------------------------- */

static const double AD_X[] = { 0.7, 1.9, 2.3, 3.1, 3.3, 4.2, 5.0, 5.8, 6.1, 6.9, 7.7, 8.4, 9.0,
			       9.9, 11.2, 12.0, 13.3, 14.1, 15.8, 17.6, 19.9, 22.4, 26.0, 31.5, 40.2 };

TEST(ad_matches_scipy)
{
	double a2, p;

	/*
	 * scipy.stats.goodness_of_fit(scipy.stats.expon, AD_X, known_params={'loc': 0,
	 * 'scale': mean}, statistic='ad', n_mc_samples=200000): the statistic, and a
	 * Monte Carlo p-value (standard error <= 0.0011) that Marsaglia's p must match
	 * within 0.006:
	 *   mean 10: A^2 = 1.1289279101181613, p_mc = 0.295884
	 *   mean  6: A^2 = 7.9748152157900662, p_mc = 0.000105
	 *   mean 14: A^2 = 0.40602424057068731, p_mc = 0.841191
	 */
	const double means[] = { 10, 6, 14 };
	const double want_a2[] = { 1.1289279101181613, 7.9748152157900662, 0.40602424057068731 };
	const double want_p[] = { 0.295884, 0.000105, 0.841191 };
	for (int k = 0; k < 3; k++) {
		REQUIRE(ad_exp_test(AD_X, N_OF(AD_X), means[k], &a2, &p, err, sizeof err) == 0, "%s", err);
		CHECK_REL(a2, want_a2[k], 1e-12);
		CHECK_NEAR(p, want_p[k], 0.006);
	}

	/* x_i = -5 ln(1 - frac(0.6180339887498949 i)), i = 1..200 (very evenly spread):
	 * scale 5: A^2 = 0.021662749263441583 (p_mc = 1.000000);
	 * scale 4.5: A^2 = 1.0922468477795064, p_mc = 0.311638. */
	double x[200];
	for (int i = 1; i <= 200; i++)
		x[i - 1] = -log(1 - fmod(i * 0.6180339887498949, 1.0)) * 5.0;
	REQUIRE(ad_exp_test(x, 200, 5.0, &a2, &p, err, sizeof err) == 0, "%s", err);
	CHECK_REL(a2, 0.021662749263441583, 1e-9);
	CHECK(p > 0.999, "p %g", p);
	REQUIRE(ad_exp_test(x, 200, 4.5, &a2, &p, err, sizeof err) == 0, "%s", err);
	CHECK_REL(a2, 1.0922468477795064, 1e-11);
	CHECK_NEAR(p, 0.311638, 0.006);
}

TEST(ad_finite_n_correction_matches_scipy)
{
	/*
	 * n = 5, where Marsaglia's errfix moves p by up to 0.007:
	 * scipy.stats.goodness_of_fit(scipy.stats.expon, x, known_params={'loc': 0,
	 * 'scale': 1}, statistic='ad', n_mc_samples=1000000): Monte Carlo standard
	 * error <= 0.0005, so p must agree within 0.0015 (without the correction
	 * the last two miss by 0.0026 and 0.0064).
	 */
	const double x[4][5] = {
		{ 0.3, 0.9, 1.4, 2.2, 3.9 },        /* A^2 = 1.3675219057357744, p_mc = 0.210647 */
		{ 0.05, 0.2, 0.35, 0.6, 0.8 },      /* A^2 = 1.276642198845952,  p_mc = 0.238519 */
		{ 0.9, 1.1, 1.3, 1.6, 2.0 },        /* A^2 = 2.0628832982967467, p_mc = 0.087434 */
		{ 0.1, 0.5, 1.0, 1.8, 6.0 },        /* A^2 = 0.90618160364762979, p_mc = 0.404009 */
	};
	const double a2w[4] = { 1.3675219057357744, 1.276642198845952, 2.0628832982967467, 0.90618160364762979 };
	const double pw[4] = { 0.210647, 0.238519, 0.087434, 0.404009 };
	for (int k = 0; k < 4; k++) {
		double a2, p;
		REQUIRE(ad_exp_test(x[k], 5, 1.0, &a2, &p, err, sizeof err) == 0, "%s", err);
		CHECK_REL(a2, a2w[k], 1e-12);
		CHECK_NEAR(p, pw[k], 0.0015);
	}
}

TEST(ad_pvalue_matches_published_percentage_points)
{
	/*
	 * The fully specified case's upper percentage points for large n
	 * (Stephens, "EDF statistics for goodness of fit and some comparisons",
	 * JASA 69 (1974), Table 1, case 0): 1.933 at 10 %, 2.492 at 5 %, 3.070
	 * at 2.5 %, 3.857 at 1 %.  A sample with a chosen A^2: the exponential
	 * quantiles at (i + 1/2)/n (A^2 near 0), stretched by a scale found by
	 * bisection; n = 10^4 makes the finite-n correction negligible.
	 */
	const double pts[] = { 1.933, 2.492, 3.070, 3.857 }, want[] = { 0.10, 0.05, 0.025, 0.01 };
	static double x[10000];
	const size_t n = N_OF(x);
	for (int k = 0; k < 4; k++) {
		double lo = 1, hi = 1.5, a2 = 0, p = 1;
		for (int it = 0; it < 60; it++) {
			double mid = (lo + hi) / 2;
			for (size_t i = 0; i < n; i++)
				x[i] = -mid * log1p(-((double)i + 0.5) / (double)n);
			REQUIRE(ad_exp_test(x, n, 1.0, &a2, &p, err, sizeof err) == 0, "%s", err);
			if (a2 < pts[k])
				lo = mid;
			else
				hi = mid;
		}
		CHECK_REL(a2, pts[k], 1e-6);
		CHECK_NEAR(p, want[k], 0.001);
	}
}

TEST(ad_accepts_poisson_interarrivals)
{
	struct rng rng;
	static double x[2000];
	int accepted = 0;
	const int seeds = 100;

	/*
	 * Under the null p is uniform: P(p <= 0.01) = 0.01, so fewer than 94 of
	 * 100 accepted has probability about 1e-4 (binomial tail).
	 */
	for (int s = 0; s < seeds; s++) {
		double a2, p;
		rng_seed(&rng, 77 + s);
		for (int i = 0; i < 2000; i++)
			x[i] = arrival_exp_draw(&rng, 10000);   /* 100 kops/s: 10 us mean */
		REQUIRE(ad_exp_test(x, 2000, 10000, &a2, &p, err, sizeof err) == 0, "%s", err);
		accepted += p > 0.01;
	}
	CHECK(accepted >= 94, "accepted %d of %d", accepted, seeds);
}

TEST(ad_rejects_wrong_schedules)
{
	struct rng rng;
	static double x[2000];
	double a2, p;

	/* Constant rate: every gap is the mean; F = 1 - 1/e for all, A^2 ~ 2000 * 0.43. */
	for (int i = 0; i < 2000; i++)
		x[i] = 10000;
	REQUIRE(ad_exp_test(x, 2000, 10000, &a2, &p, err, sizeof err) == 0, "%s", err);
	CHECK(a2 > 100 && p < 1e-6, "A^2 %g p %g", a2, p);

	/* Exponential gaps whose mean is 20 % off the configured one, both ways. */
	for (int s = 0; s < 20; s++) {
		const double factor = s % 2 ? 1.2 : 0.8;
		rng_seed(&rng, 300 + s);
		for (int i = 0; i < 2000; i++)
			x[i] = arrival_exp_draw(&rng, 10000 * factor);
		REQUIRE(ad_exp_test(x, 2000, 10000, &a2, &p, err, sizeof err) == 0, "%s", err);
		CHECK(p < 1e-3, "seed %d, mean x %.1f: A^2 %g p %g", s, factor, a2, p);
	}

	/* Poisson schedule from lib/arrival at the right rate: gaps of the intended times. */
	struct arrival arr;
	arrival_init_poisson(&arr, 0, 1e5, 42);
	double prev = arr.next_ns;
	for (int i = 0; i < 2000; i++) {
		(void)arrival_next(&arr);
		x[i] = arr.next_ns - prev;
		prev = arr.next_ns;
	}
	REQUIRE(ad_exp_test(x, 2000, 10000, &a2, &p, err, sizeof err) == 0, "%s", err);
	CHECK(p > 0.001, "arrival.c schedule: A^2 %g p %g", a2, p);
}

TEST(ad_edge_cases)
{
	double a2, p;
	const double with_zero[] = { 3, 0, 5 }, with_nan[] = { 1, NAN };

	CHECK(ad_exp_test(AD_X, 0, 10, &a2, &p, err, sizeof err) == -1);
	CHECK(strstr(err, "empty"), "%s", err);
	CHECK(ad_exp_test(AD_X, 5, 0, &a2, &p, err, sizeof err) == -1);
	CHECK(strstr(err, "mean") && strstr(err, "positive"), "%s", err);
	CHECK(ad_exp_test(AD_X, 5, INFINITY, &a2, &p, err, sizeof err) == -1);
	CHECK(ad_exp_test(with_nan, 2, 1, &a2, &p, err, sizeof err) == -1);
	CHECK(strstr(err, "x[1]"), "%s", err);
	/* A zero gap is impossible under a continuous exponential: A^2 = inf, p = 0. */
	REQUIRE(ad_exp_test(with_zero, 3, 4, &a2, &p, err, sizeof err) == 0, "%s", err);
	CHECK(isinf(a2) && p == 0, "A^2 %g p %g", a2, p);
	/* n = 1 works: A^2 = -1 - ln u - ln(1 - u), u = F(x); at u = 1/2 that is 2 ln 2 - 1. */
	const double one[] = { log(2.0) };
	REQUIRE(ad_exp_test(one, 1, 1, &a2, &p, err, sizeof err) == 0, "%s", err);
	CHECK_REL(a2, 2 * log(2.0) - 1, 1e-12);
	CHECK(p > 0.5 && p <= 1, "p %g", p);
}

/* ---- Holm and Benjamini-Hochberg ----------------------------------- */

/* adjust(p[0..m)) must give want[0..m). */
static void check_adjusted(void (*adjust)(const double *, size_t, double *), const double *p,
			   const double *want, size_t m)
{
	double adj[8];

	adjust(p, m, adj);
	for (size_t i = 0; i < m; i++)
		CHECK(fabs(adj[i] - want[i]) <= 1e-15 || (isnan(want[i]) && isnan(adj[i])),
		      "adj[%zu] = %.17g, want %.17g", i, adj[i], want[i]);
}

TEST(holm_hand_worked)
{
	/*
	 * p = (0.01, 0.04, 0.03, 0.005), m = 4.  Sorted: 0.005, 0.01, 0.03, 0.04
	 * times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04; running max: 0.02, 0.03,
	 * 0.06, 0.06.  Back in input order: 0.03, 0.06, 0.06, 0.02.
	 */
	const double p[] = { 0.01, 0.04, 0.03, 0.005 }, want[] = { 0.03, 0.06, 0.06, 0.02 };
	check_adjusted(holm_adjust, p, want, 4);

	/* Cap at 1: (0.5, 0.2, 0.9) -> sorted 0.2, 0.5, 0.9 x 3, 2, 1 = 0.6, 1.0, 0.9 -> 0.6, 1, 1. */
	const double q[] = { 0.5, 0.2, 0.9 }, wq[] = { 1, 0.6, 1 };
	check_adjusted(holm_adjust, q, wq, 3);

	/* Ties and NaN (= 1): (0.01, 0.01, NaN) -> 0.03, 0.03, 1. */
	const double t[] = { 0.01, 0.01, NAN }, wt[] = { 0.03, 0.03, 1 };
	check_adjusted(holm_adjust, t, wt, 3);
	/* One test: unchanged. */
	check_adjusted(holm_adjust, p, p, 1);
	check_adjusted(bh_adjust, p, p, 1);
}

TEST(bh_hand_worked)
{
	/*
	 * p = (0.01, 0.04, 0.03, 0.005): sorted 0.005, 0.01, 0.03, 0.04 times
	 * 4/1, 4/2, 4/3, 4/4: 0.02, 0.02, 0.04, 0.04; running min from the top:
	 * 0.02, 0.02, 0.04, 0.04.  Input order: 0.02, 0.04, 0.04, 0.02.
	 */
	const double p[] = { 0.01, 0.04, 0.03, 0.005 }, want[] = { 0.02, 0.04, 0.04, 0.02 };
	check_adjusted(bh_adjust, p, want, 4);

	/* (0.5, 0.2, 0.9): 0.6, 0.75, 0.9, already monotone -> input order 0.75, 0.6, 0.9. */
	const double q[] = { 0.5, 0.2, 0.9 }, wq[] = { 0.75, 0.6, 0.9 };
	check_adjusted(bh_adjust, q, wq, 3);

	/* A large p early does not hide later small ones: (0.001, 0.9, 0.002, 0.003) ->
	 * sorted x 4/k: 0.004, 0.004, 0.004, 0.9 -> 0.004, 0.9, 0.004, 0.004. */
	const double r[] = { 0.001, 0.9, 0.002, 0.003 }, wr[] = { 0.004, 0.9, 0.004, 0.004 };
	check_adjusted(bh_adjust, r, wr, 4);
	/* Ties and NaN: (0.01, 0.01, NaN) -> 3/2 x 0.01 for both, 1. */
	const double t[] = { 0.01, 0.01, NAN }, wt[] = { 0.015, 0.015, 1 };
	check_adjusted(bh_adjust, t, wt, 3);
}

TEST(adjustments_keep_their_properties)
{
	struct rng rng;
	double p[50], holm[50], bh[50];

	rng_seed(&rng, 21);
	for (int round = 0; round < 50; round++) {
		size_t m = 1 + rng_below(&rng, 50);
		for (size_t i = 0; i < m; i++)
			p[i] = rng_double(&rng) * (round % 2 ? 0.05 : 1);
		holm_adjust(p, m, holm);
		bh_adjust(p, m, bh);
		for (size_t i = 0; i < m; i++) {
			CHECK(holm[i] >= p[i] && holm[i] <= 1);
			CHECK(bh[i] >= p[i] && bh[i] <= 1, "m %zu i %zu p %.17g bh %.17g", m, i, p[i], bh[i]);
			CHECK(bh[i] <= holm[i] + 1e-15, "BH is never stricter than Holm");
			CHECK(holm[i] <= fmin(1, (double)m * p[i]) + 1e-15, "Holm is never stricter than Bonferroni");
			for (size_t j = 0; j < m; j++) {
				if (p[i] < p[j]) {
					CHECK(holm[i] <= holm[j]);
					CHECK(bh[i] <= bh[j]);
				}
			}
		}
	}
}

/* ---- Mann-Kendall -------------------------------------------------- */

TEST(mk_matches_scipy)
{
	/*
	 * S by hand (sum of signs); z_scipy = S / sqrt(Var S) is the z of
	 * scipy.stats.kendalltau(x, range(n), method='asymptotic') (recovered from
	 * its p with scipy.stats.norm.isf(p / 2)); ours carries the continuity
	 * correction, z = z_scipy (|S| - 1) / |S|, p = 2 scipy.stats.norm.sf(|z|).
	 */
	const double up[] = { 5, 3, 4, 4, 6, 7, 6, 8, 9, 8, 10, 9 };
	const double flat[] = { 3.1, 2.7, 3.5, 2.9, 3.3, 3.0, 3.4, 2.8, 3.2, 3.1 };
	const double down[] = { 10.0, 9.5, 9.7, 9.1, 8.8, 8.9, 8.2, 8.0, 7.7, 7.9, 7.1, 6.8, 6.9, 6.2, 6.0 };
	struct {
		const double *x;
		size_t n;
		double s, z, p;
	} c[] = {
		{ up, N_OF(up), 50, 3.3921069818562377, 0.00069357353990706888 },
		{ flat, N_OF(flat), 2, 0.089802651013387427, 0.92844404150059101 },
		{ down, N_OF(down), -97, -4.7507679293317775, 2.0264559448340846e-06 },
	};
	for (size_t k = 0; k < N_OF(c); k++) {
		double s, z, p;
		REQUIRE(mk_trend_test(c[k].x, c[k].n, &s, &z, &p, err, sizeof err) == 0, "%s", err);
		CHECK(s == c[k].s, "case %zu: S %g", k, s);
		CHECK_REL(z, c[k].z, 1e-9);
		CHECK_REL(p, c[k].p, 1e-8);
	}
}

TEST(mk_controls)
{
	double s, z, p;
	struct rng rng;
	const double constant[] = { 4, 4, 4, 4, 4 };

	/* No variation at all: S = 0, p = 1. */
	REQUIRE(mk_trend_test(constant, 5, &s, &z, &p, err, sizeof err) == 0, "%s", err);
	CHECK(s == 0 && z == 0 && p == 1);
	/* Two values: S = 1, Var = 1, z = 0 after the correction. */
	const double two[] = { 1, 2 };
	REQUIRE(mk_trend_test(two, 2, &s, &z, &p, err, sizeof err) == 0, "%s", err);
	CHECK(s == 1 && z == 0 && p == 1);
	CHECK(mk_trend_test(two, 1, &s, &z, &p, err, sizeof err) == -1);
	CHECK(strstr(err, "at least 2"), "%s", err);
	const double bad[] = { 1, INFINITY, 2 };
	CHECK(mk_trend_test(bad, 3, &s, &z, &p, err, sizeof err) == -1);
	CHECK(strstr(err, "x[1]"), "%s", err);

	/* Stationary noise: about 5 % rejections at 0.05 (sd of the count about 4.4 of 400);
	 * a drift of 1 % per chunk (noise 2 %) over 30 chunks: nearly always found. */
	int fp = 0, found = 0;
	for (int seed = 0; seed < 400; seed++) {
		double x[30], y[30];
		rng_seed(&rng, 700 + seed);
		for (int i = 0; i < 30; i++) {
			x[i] = 100 * (1 + 0.02 * normal(&rng));
			y[i] = 100 * (1 + 0.01 * i + 0.02 * normal(&rng));
		}
		REQUIRE(mk_trend_test(x, 30, &s, &z, &p, err, sizeof err) == 0, "%s", err);
		fp += p < 0.05;
		REQUIRE(mk_trend_test(y, 30, &s, &z, &p, err, sizeof err) == 0, "%s", err);
		found += p < 0.05 && s > 0;
	}
	CHECK(fp >= 4 && fp <= 40, "false positives %d of 400", fp);
	CHECK(found >= 390, "trend found in %d of 400", found);
}

UNIT_MAIN(mwu_exact_matches_scipy, mwu_ties_known_answer, mwu_normal_approximation_matches_scipy,
	  mwu_swap_symmetry, mwu_shift_is_median_of_differences, mwu_min_n_is_attainable,
	  mwu_power_on_20pct_shift, mwu_false_positive_rate, mwu_refuses_bad_input,
	  strat_one_stratum_is_exact_mwu, strat_ties_share_mid_ranks, strat_hand_worked_two_strata, strat_false_positive_rate_and_power,
	  strat_sampled_when_too_many_splits, strat_refuses_bad_input,
	  ks_exact_matches_scipy, ks_asymptotic_matches_kolmogorov, ks_refuses_bad_input,
	  ad_matches_scipy, ad_finite_n_correction_matches_scipy, ad_pvalue_matches_published_percentage_points,
	  ad_accepts_poisson_interarrivals, ad_rejects_wrong_schedules, ad_edge_cases,
	  holm_hand_worked, bh_hand_worked, adjustments_keep_their_properties,
	  mk_matches_scipy, mk_controls)
