/*
 * stattest.h - the hypothesis tests behind oqbench's verdicts: two-sample
 * tests on trials (Mann-Whitney U with the Hodges-Lehmann shift,
 * Kolmogorov-Smirnov), a goodness-of-fit test of inter-arrival times
 * against the configured exponential law (Anderson-Darling), corrections
 * for testing many points at once (Holm, Benjamini-Hochberg), and a trend
 * test for stationarity (Mann-Kendall).
 *
 * What each guarantees, and what shows it (tests/unit/test_stattest.c):
 * - Statistics and p-values match scipy 1.10 (Debian bookworm's
 *   python3-scipy) on fixed samples, with and without ties: to 1e-9
 *   relative where scipy computes the same quantity (MWU, KS, Mann-Kendall,
 *   every statistic), and AD's p within 0.0015 of scipy's Monte Carlo
 *   p-value (10^6 samples) at n = 5 and within 0.001 of Stephens'
 *   published percentage points at large n.  The test names the scipy
 *   call beside each constant.
 * - The tests keep their level: MWU on identical distributions rejects at
 *   alpha = 0.05 in 2-8 % of 2000 seeded 10-vs-10 trials (the exact test is
 *   discrete, so its size is about 4.3 %); AD at p > 0.01 accepts Poisson
 *   inter-arrivals drawn with arrival_exp_draw in at least 94 of 100 seeds.
 * - They have power where it matters: MWU rejects a 20 % shift of 10-vs-10
 *   lognormal samples (sigma 0.1) in at least 80 % of seeds; AD rejects a
 *   constant-rate schedule and a mean 20 % off at n = 2000 in every seed.
 *
 * Conventions: every test returns 0, or -1 with a message in err when a
 * sample is empty or holds a value that is not a finite number (NaN and
 * infinities would make ranks and sums meaningless).  p-values are
 * two-sided and lie in [0, 1].  Nothing here allocates more than
 * O(na + nb) memory, except the exact distributions, whose bounds are
 * stated below.
 */
#ifndef OQB_STATTEST_H
#define OQB_STATTEST_H

#include <stddef.h>

/*
 * Sample sizes up to which mwu_test uses the exact null distribution of U
 * (when there are no ties): two rows of at most 51 x 1251 probabilities
 * (1 MB) and about 3 million multiply-adds, a few milliseconds.
 */
#define MWU_EXACT_MAX 50
/* ks2_test is exact when na * nb <= KS_EXACT_MAX_CELLS (one pass over that many lattice points). */
#define KS_EXACT_MAX_CELLS 1000000.0

struct mwu_result {
	double u;        /* U statistic of sample a */
	double z;        /* normal approximation z (0 when exact) */
	double p;        /* two-sided p-value */
	double shift;    /* Hodges-Lehmann estimate of (b - a): median of all pairwise b_j - a_i */
	int exact;       /* 1 when p comes from the exact null distribution */
};

/*
 * Two-sided Mann-Whitney U test of a vs b.  u = R_a - na (na + 1) / 2,
 * where R_a is the sum of a's mid-ranks in the pooled sample (so u counts
 * the pairs with a_i > b_j, ties counting one half).
 *
 * Exact: when there are no ties and na, nb <= MWU_EXACT_MAX, p = 2 P(U <=
 * min(u, na nb - u)) under the null, capped at 1, from the recurrence on
 * which sample holds the largest value (all terms positive, so small
 * p-values keep their relative precision); z = 0.
 *
 * Otherwise the normal approximation: mean na nb / 2, variance
 * na nb / 12 (N + 1 - sum(t^3 - t) / (N (N - 1))) over tie groups of size
 * t, z = (u - mean -+ 0.5) / sd with the continuity correction taken
 * towards the mean (z is signed: positive when a tends to be larger), and
 * p = erfc(|z| / sqrt 2).  This is scipy.stats.mannwhitneyu(a, b,
 * method='asymptotic').  When every value is the same, z = 0 and p = 1.
 *
 * shift is the Hodges-Lehmann estimate: the median of the na nb
 * differences b_j - a_i (the mean of the two middle ones when na nb is
 * even), found by randomised selection over the sorted samples in
 * O((na + nb) log(na nb)) expected time and O(na + nb) memory, so large
 * samples need no na x nb matrix.  Swapping a and b negates shift, turns
 * u into na nb - u and keeps p.
 *
 * 0, or -1 with err when na or nb is 0, a value is not finite, or memory
 * runs out.
 */
int mwu_test(const double *a, size_t na, const double *b, size_t nb, struct mwu_result *r,
	     char *err, size_t errlen);

/*
 * Van Elteren's stratified rank-sum test for paired rounds, exact.  Pair i
 * holds a[i] (base) and b[i] (new), measured back to back in stratum
 * stratum[i] (any unsigned ids).  Within a stratum of k pairs the 2k
 * values get mid-ranks; W_s is the rank sum of its b values, and the
 * statistic is T = sum over strata of W_s / (2 k_s + 1) (van Elteren's
 * weights, which make a small stratum count as much per value as a large
 * one).  Under the null every split of a stratum's 2k values into k and k
 * is equally likely, independently per stratum; p is two-sided,
 * P(|T - E T| >= |t - E T|), from all those relabellings when there are at
 * most STRAT_EXACT_MAX of them (and every stratum has at most 15 pairs),
 * else from STRAT_MC_DRAWS seeded random ones ((hits + 1) / (draws + 1)).
 * With one stratum it is the exact Mann-Whitney test, ties included.
 * Strata let rounds taken on two different machines (a VM whose canary
 * jumps between floors) testify each against its own kind.
 * *nstrata (may be NULL) gets the number of strata.  0, or -1 with err
 * when n is 0, a value is not finite, or memory runs out.
 */
#define STRAT_EXACT_MAX 4000000.0
#define STRAT_MC_DRAWS 200000
int strat_rank_test(const double *a, const double *b, const unsigned *stratum, size_t n, double *p,
		    unsigned *nstrata, char *err, size_t errlen);

/*
 * The smallest n such that mwu_test on two samples of n values each can
 * return p < alpha at all (completely separated samples): 2 / C(2n, n)
 * while n <= MWU_EXACT_MAX, the normal approximation's smallest p above.
 * 4 for alpha = 0.05, 5 for 0.01, 7 for 0.002 (asv's threshold).  With
 * fewer trials a "no difference" verdict says nothing.  0 when alpha is
 * not in (0, 1) or no n below 10^6 reaches it.
 */
unsigned mwu_min_n(double alpha);

/*
 * Two-sample Kolmogorov-Smirnov test: d = sup |F_a - F_b| over the pooled
 * values (ties handled by comparing after each group of equal values), and
 * the two-sided p = P(D >= d) under the null.
 *
 * Exact when na nb <= KS_EXACT_MAX_CELLS: the probability that a random
 * lattice path from (0, 0) to (na, nb) leaves the band |i/na - j/nb| < d,
 * summed over first exits (positive terms only; the band test uses the
 * integers |i nb - j na|, so no rounding decides a boundary case).  This
 * is scipy.stats.ks_2samp(a, b, method='exact').  With ties the exact
 * null distribution of the continuous case is still used, as scipy does;
 * the test is then conservative.
 *
 * Otherwise asymptotic: with en = na nb / (na + nb), p = Q_KS((sqrt(en) +
 * 0.12 + 0.11 / sqrt(en)) d), Q_KS the Kolmogorov distribution's upper
 * tail (Stephens 1970's effective-n correction, as in Numerical Recipes'
 * kstwo).
 *
 * 0, or -1 with err when a sample is empty, a value is not finite, or
 * memory runs out.
 */
int ks2_test(const double *a, size_t na, const double *b, size_t nb, double *d, double *p,
	     char *err, size_t errlen);

/*
 * Anderson-Darling test of x[0..n) against the exponential law with the
 * given mean, fully specified (the configured rate, not one fitted to x):
 *   A^2 = -n - (1/n) sum_i (2i - 1) [ln F(x_(i)) + ln(1 - F(x_(n+1-i)))]
 * with F(x) = 1 - exp(-x / mean), computed as log(-expm1(-x/mean)) and
 * -x/mean so that neither tail loses precision.  This is the statistic of
 * scipy.stats.goodness_of_fit(scipy.stats.expon, x, known_params={'loc':
 * 0, 'scale': mean}, statistic='ad').
 *
 * p = 1 - AD_n(A^2), with AD_n from G. Marsaglia and J. Marsaglia,
 * "Evaluating the Anderson-Darling distribution", Journal of Statistical
 * Software 9(2), 2004: their quick approximation adinf(z) of the limiting
 * distribution (absolute error below 2e-6) plus their errfix(n, x)
 * correction for finite n.  Valid for any n >= 1 because the fully
 * specified case's null distribution does not depend on the law tested.
 * p below about 6e-4 / n is not resolved: there the correction's residual
 * (its polynomial is -0.0006 rather than 0 at x = 1) outweighs the tail,
 * so a clear misfit reports p of that order (3e-7 at n = 2000) or 0.
 *
 * x needs no particular order (a sorted copy is made).  A value <= 0 has
 * F = 0, so A^2 = +inf and p = 0: inter-arrival times rounded to whole
 * nanoseconds can hold zeros, so pass continuous draws or midpoints.
 * 0, or -1 with err when n is 0, mean is not a positive finite number, a
 * value is NaN, or memory runs out.
 */
int ad_exp_test(const double *x, size_t n, double mean, double *a2, double *p,
		char *err, size_t errlen);

/*
 * Holm-Bonferroni step-down adjusted p-values: with p sorted ascending,
 * adj_(k) = max_{j <= k} min(1, (m - j + 1) p_(j)), written back in the
 * input order.  adj[i] >= p[i], monotone in p, capped at 1; rejecting
 * adj[i] < alpha controls the family-wise error rate at alpha under any
 * dependence.  NaN counts as 1.  Should memory run out, every adj is 1
 * (nothing is claimed significant).
 */
void holm_adjust(const double *p, size_t m, double *adj);

/*
 * Benjamini-Hochberg adjusted p-values (q-values): with p sorted
 * ascending, adj_(k) = min_{j >= k} min(1, m p_(j) / j).  Rejecting
 * adj[i] < q controls the false discovery rate at q for independent or
 * positively dependent tests.  NaN and out of memory as for holm_adjust.
 */
void bh_adjust(const double *p, size_t m, double *adj);

/*
 * Mann-Kendall trend test on x[0..n) in series order: S = sum_{i<j}
 * sign(x_j - x_i), Var S = [n(n-1)(2n+5) - sum t(t-1)(2t+5)] / 18 over
 * tie groups, z = (S - sign(S)) / sqrt(Var S) (continuity correction; 0
 * when S = 0), two-sided p = erfc(|z| / sqrt 2).  O(n^2) time; meant for
 * tens to thousands of per-chunk medians.  S / sqrt(Var S) is the z of
 * scipy.stats.kendalltau(x, range(n), method='asymptotic').
 * 0, or -1 with err when n < 2, a value is not finite, or memory runs out.
 */
int mk_trend_test(const double *x, size_t n, double *s, double *z, double *p,
		  char *err, size_t errlen);

#endif
