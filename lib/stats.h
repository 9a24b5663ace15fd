/*
 * stats.h - statistics on merged histograms.
 *
 * Percentile confidence interval from order statistics (distribution-free):
 * for the p-quantile of n samples, the ranks
 *   lo = floor(n p - z sqrt(n p (1-p))),  hi = ceil(n p + z sqrt(n p (1-p))) + 1
 * (z = 1.96 for 95 %) bracket the true quantile; for p = 0.99, n = 10,000
 * that is ranks 9880 to 9921, for n = 1,000 ranks 983 to 998 (Lancet's
 * rule; the +1 makes it slightly conservative).  Ranks are clamped to
 * [1, n].
 *
 * Also the goodness-of-fit checks the tests and the harness's self-checks
 * use: Pearson's chi-square with pooling of sparse cells, and
 * Kolmogorov-Smirnov against an exponential law (Poisson inter-arrivals).
 */
#ifndef OQB_STATS_H
#define OQB_STATS_H

#include <stdint.h>
#include "hist.h"

#include <stddef.h>

#define STATS_Z95 1.959963984540054    /* two-sided 95 % */
#define STATS_Z999 3.090232306167813   /* one-sided 0.1 % upper tail */

/*
 * Order-statistic ranks (1-based) of the CI for the p-quantile (p in
 * (0, 1)) of n samples with normal quantile z >= 0.  Returns 0, or -1
 * (and 0/0) if n == 0 or p or z is out of range.
 */
int stats_pct_ci_ranks(uint64_t n, double p, double z, uint64_t *lo, uint64_t *hi);

/*
 * Whether that CI's upper rank lies within the n samples.  When it does
 * not, the ranks above were clamped to n and nothing bounds the quantile
 * from above, however narrow [x(lo), x(n)] looks (1,000 samples put the
 * P99.9's CI at the largest one).  0 for n == 0.
 */
int stats_pct_ci_bounded(uint64_t n, double p, double z);

/*
 * The CI as values read from a histogram (p in (0,1)): the values at the
 * ranks above, with the histogram's error bound.  0/0 when empty or when
 * p is out of range.
 */
void stats_hist_pct_ci(const struct hist *h, double p, double z, uint64_t *lo, uint64_t *hi);

/*
 * Pearson's chi-square statistic sum (obs - exp)^2 / exp over k cells
 * (expected counts, not probabilities; cells with exp <= 0 must have
 * obs == 0 or the result is infinite).
 */
double stats_chi2(const uint64_t *obs, const double *expected, size_t k);

/*
 * Merges neighbouring cells in place until every cell expects at least
 * min_exp (the last cell joins its neighbour if it falls short), so the
 * chi-square approximation holds.  Returns the new cell count.
 */
size_t stats_chi2_pool(uint64_t *obs, double *expected, size_t k, double min_exp);

/*
 * Upper critical value of chi-square with df degrees of freedom at the
 * one-sided normal quantile z (Wilson-Hilferty; within 1 % of the exact
 * value for df >= 5, e.g. 28.06 vs 27.88 for df = 9 at z = STATS_Z999).
 */
double stats_chi2_crit(double df, double z);

/*
 * Kolmogorov-Smirnov test of x[0..n-1] (sorted in place) against the
 * exponential law with the given mean (fully specified, not fitted).
 * Returns Stephens' modified statistic D (sqrt(n) + 0.12 + 0.11/sqrt(n)),
 * to compare with STATS_KS_CRIT_*: above it, the sample is not
 * exponential at that level.  Returns INFINITY if n == 0 or mean <= 0.
 */
#define STATS_KS_CRIT_5PCT 1.358
#define STATS_KS_CRIT_1PCT 1.628
double stats_ks_exp(double *x, size_t n, double mean);

/*
 * Medians of a few numbers (trials, canaries, ratios): the one helper
 * the driver uses, so that "the median" is one thing everywhere.
 * stats_sort sorts v ascending.  stats_median_inplace sorts v and
 * returns its middle value, the mean of the two middle ones when n is
 * even, and NaN when n is 0 (a missing number, never 0); afterwards v[0]
 * is the lowest and v[n - 1] the highest.  stats_median does the same
 * without reordering v (NaN also when out of memory).
 */
void stats_sort(double *v, size_t n);
double stats_median_inplace(double *v, size_t n);
double stats_median(const double *v, size_t n);

#endif
