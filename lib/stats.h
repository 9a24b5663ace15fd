/*
 * stats.h - statistics on merged histograms.
 *
 * Percentile confidence interval from order statistics (distribution-free):
 * for the p-quantile of n samples, the ranks
 *   lo = floor(n p - z sqrt(n p (1-p))),  hi = ceil(n p + z sqrt(n p (1-p))) + 1
 * (z = 1.96 for 95 %) bracket the true quantile; for p = 0.99, n = 10,000
 * that is ranks 9880 to 9921.  Ranks are clamped to [1, n].
 */
#ifndef OQB_STATS_H
#define OQB_STATS_H

#include <stdint.h>
#include "hist.h"

#define STATS_Z95 1.959963984540054

/* Order-statistic ranks (1-based) of the CI; returns -1 if n == 0. */
int stats_pct_ci_ranks(uint64_t n, double p, double z, uint64_t *lo, uint64_t *hi);

/* The CI as values read from a histogram (p in (0,1)); 0/0 when empty. */
void stats_hist_pct_ci(const struct hist *h, double p, double z, uint64_t *lo, uint64_t *hi);

#endif
