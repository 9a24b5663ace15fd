/*
 * compare.h - `oqb compare BASE.json NEW.json`: the regression gate.
 *
 * Points are matched by system and offered load (closed loop: by
 * outstanding).  A metric counts as a regression only when it is worse by
 * more than the tolerance AND the two confidence intervals do not overlap,
 * so run-to-run noise does not fail a CI job:
 *   p99: worse than (1 + tol) x base and new p99_ci[0] > base p99_ci[1];
 *   p50: the same with 95 % CIs computed from the bins (lib/stats);
 *   achieved throughput: below (1 - tol) x base (a sum of counts, no CI).
 * Improvements are the mirror image.  A point of BASE missing from NEW is
 * a regression.
 */
#ifndef OQB_COMPARE_H
#define OQB_COMPARE_H

/* The `oqb compare` command.  Exit status: 0 no regression, 1 regressions,
 * 2 usage or input error. */
int compare_main(int argc, char **argv);

#endif
