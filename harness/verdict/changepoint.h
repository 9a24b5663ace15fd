/*
 * changepoint.h - deterministic change-point detection over a per-run
 * series (one value per commit): E-Divisive means with a t-test in place
 * of the permutation test, in the windowed split-then-merge form of
 * Hunter / Apache Otava (Fleming et al., ICPE 2023), plus a minimum
 * segment length.  `oqb history detect` (harness/verdict/perfhist.c) runs it on
 * every (config, testbed, point, metric) series.
 *
 * The algorithm, written here from the published description:
 *
 *  1. Split.  The series is cut into windows of `window` runs that slide
 *     by window / 2 (a window starts at the last change point it found
 *     when that is further on).  Inside a window, E-Divisive bisects: for
 *     every interval [s, e) between the change points found so far it
 *     finds the split tau and inner end kappa (s < tau < kappa <= e)
 *     that maximise the energy statistic
 *        Q = m n / (m + n) * (2/(m n) sum|X-Y| - sum|X-X'|/C(m,2) - sum|Y-Y'|/C(n,2))
 *     of X = x[s, tau) and Y = x[tau, kappa) (Szekely-Rizzo energy
 *     distance, alpha = 1, Matteson & James 2014), takes the interval
 *     whose best Q is largest and tests x[s, tau) against x[tau, e) with
 *     a two-sided t-test.  Accepted at p <= 10 x pvalue (the "weak"
 *     first-pass level, as Otava), it becomes a change point and the
 *     bisection goes on; the first rejection ends the window.
 *  2. Merge.  Over the union of the windows' points, each point is
 *     re-tested between its neighbours (whole segments of the series);
 *     repeatedly the weakest is removed and its neighbours re-tested,
 *     until every point has p <= pvalue and a change of at least
 *     min_change.
 *  3. Minimum segment.  No segment between two change points, or
 *     between one and an end of the series, is shorter than min_segment
 *     runs: the search never proposes such a split, and the merge first
 *     removes the weaker of two points the windows put too close.
 *
 * Differences from Otava, and why:
 *  - The default test is Welch's (unequal variances), not Student's
 *    pooled test.  A single outlier run inflates only its own short
 *    segment's variance; the pooled test spreads that variance over both
 *    sides and calls a large spike two change points even with a minimum
 *    segment of 5, while Welch's t for a segment holding one spike is
 *    about 1 whatever the spike's size.  CP_STUDENT keeps Otava's test.
 *  - Variances are sample variances (n - 1); Otava hands numpy's
 *    population deviations to its pooled test, which makes its p slightly
 *    smaller on short segments.
 *  - Ties in Q go to the smallest tau, then the smallest kappa, so the
 *    result is a pure function of the series and the parameters.
 *
 *  4. Placement.  Each surviving point moves to the least-squares split of
 *     its segment (the largest m n / (m + n) (mean_X - mean_Y)^2): the
 *     energy statistic detects well but places a step a run or two off
 *     more often than least squares does.
 *
 * What shows it (tests/unit/test_changepoint.c, fixed seeds): on 100 runs
 * with a +10 % step at run 60 the defaults name run 60 +- 1 and nothing
 * else in at least 19 of 20 series at 3 % lognormal noise and 17 of 20
 * at 4 % (even least squares misplaces such a step by 2 runs in about 8 %
 * of series there); on 100 pure-noise series they name nothing in at
 * least 99; single-run spikes of 1.3x to 5x, two outlier runs and a 1 %
 * step are never named; two steps are both named; the t-test's p matches
 * the closed forms of df = 1 and 2 and a scipy value.
 *
 * The default p is 0.0001, not Otava's 0.001: the split step searches
 * every position, so a point's p is the smallest of many; measured here
 * on 300 pure-noise series of 100 runs at 4 % noise, p 0.001 named a
 * change in 12 (4 %), p 0.0001 in none, and a history holds one series
 * per point and metric.  A +10 % step at 4 % noise has p near 1e-15.
 *
 * Cost: a window of w runs takes O(w^2) memory and O(w^2) per split
 * (prefix sums of the distance matrix); window is capped at CP_MAX_WINDOW.
 */
#ifndef OQB_CHANGEPOINT_H
#define OQB_CHANGEPOINT_H

#include <stddef.h>

#define CP_MAX_WINDOW 2048

enum cp_test { CP_WELCH, CP_STUDENT };

struct cp_params {
	size_t window;        /* runs per window (default 50, Otava's); 0 = the whole series */
	double pvalue;        /* final significance level (default 0.0001; Otava's is 0.001) */
	size_t min_segment;   /* fewest runs between change points (default 5, >= 2) */
	double min_change;    /* least relative change |after/before - 1| kept (default 0) */
	int direction;        /* +1: higher is worse (latency), -1: lower is worse (throughput) */
	enum cp_test test;    /* CP_WELCH (default) or CP_STUDENT (Otava's) */
};

struct cp_change {
	size_t index;         /* the first run after the change */
	double mean_before;   /* mean of the segment before it */
	double mean_after;    /* mean of the segment from index to the next change */
	double change_pct;    /* (mean_after / mean_before - 1) * 100 */
	double t, p;          /* the t statistic (after minus before) and its two-sided p */
	int worse;            /* 1 when the change goes the metric's bad way */
};

/* The defaults above; direction +1. */
void cp_params_default(struct cp_params *p);

/*
 * Two-sided p of Student's t distribution with df degrees of freedom (df
 * need not be whole): I_{df/(df+t^2)}(df/2, 1/2), the regularised
 * incomplete beta function by its continued fraction.  1 for t = 0, 0 for
 * an infinite t; NaN for df <= 0 or a NaN t.
 */
double cp_t_pvalue(double t, double df);

/*
 * t-test of b against a (t > 0 when b's mean is higher): Welch's or
 * Student's pooled.  Each sample needs 2 values (Student: 3 in all).
 * When both samples have no spread, t is 0 (p 1) for equal means and
 * +-infinity (p 0) otherwise.  Returns 0, or -1 when a sample is too small.
 */
int cp_ttest(const double *a, size_t na, const double *b, size_t nb, enum cp_test test,
	     double *t, double *p);

/*
 * Change points of x[0..n).  On success *out holds *nout changes in index
 * order (malloc'd, free() it; NULL when none) and 0 is returned; -1 with
 * err when a parameter is out of range (pvalue not in (0, 1), min_segment
 * < 2, window below 2 x min_segment or above CP_MAX_WINDOW), a value is
 * not finite, or memory runs out.  A series shorter than 2 x min_segment
 * has no change point.
 */
int cp_detect(const double *x, size_t n, const struct cp_params *p, struct cp_change **out,
	      size_t *nout, char *err, size_t errlen);

#endif
