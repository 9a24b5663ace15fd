/*
 * compare.h - `oqb compare BASE.json NEW.json`: the regression gate.
 *
 * Points are matched by system, offered load (closed loop: outstanding)
 * and sweep value; two runs that both searched their knees by fraction
 * of each run's knee instead, and their knees are compared with their
 * searches' brackets (compare_match.h).  Per point three metrics are judged: the median over
 * trials of p50 and of p99 (class "all"), and of achieved throughput.
 *
 * With at least two trials on both sides (config `repeat`), each metric is
 * tested with the two-sided Mann-Whitney U test on the trials' values, the
 * two-sample Kolmogorov-Smirnov test reported beside it, and all p-values
 * of the comparison are corrected together (Benjamini-Hochberg by default,
 * or Holm).  A metric is
 *   same          when the change is within the tolerance (significant or not;
 *                 p99 has its own, wider one: a tail percentile of short
 *                 trials moves more between identical runs than a median);
 *   regression /  when it is worse / better by more than the tolerance AND
 *   improvement   significant after the correction;
 *   inconclusive  when it moved by more than the tolerance but is not
 *                 significant (the row says about how many trials would
 *                 decide it), when the runs' canaries say the machine
 *                 changed between them (trials with a "round" on both
 *                 sides are paired by round instead, and a round whose
 *                 canaries differ is left out), or when the point on the side that
 *                 reads worse was disturbed by the host by its own checks
 *                 (interference for p50 and throughput; stalls,
 *                 interference or stationarity for p99) -- unless that
 *                 side saturated (or left over 5 % of its requests unsent
 *                 or unanswered) in most of its trials and the other side
 *                 in none: its own overload then made the checks warn, and
 *                 it is the worse one.
 * Runs with one trial cannot tell run-to-run noise from a change (within-
 * run CIs say nothing about it): a move beyond the tolerance is then
 * inconclusive, never a regression.  A point only one run has is
 * "unmatched", never a regression (the runs planned different points).
 */
#ifndef OQB_COMPARE_H
#define OQB_COMPARE_H

#include <jansson.h>

#include "exitcodes.h"
#include "opts.h"

struct compare_params {
	double tolerance_pct;    /* a p50 or throughput change within it is "same" */
	double tolerance_p99_pct; /* the same for p99, the noisiest metric */
	double tolerance_tagged_pp; /* the tagged share: percentage points */
	double alpha;            /* after the correction */
	double canary_drift;     /* canaries further apart: inconclusive */
	int correction;          /* 0 Benjamini-Hochberg, 1 Holm, 2 none */
	int tail_raw;            /* judge every request's percentiles, not the untagged ones' */
};

/*
 * Compares two loaded runs.  Returns {"points": [per BASE point: system,
 * load, verdict (same | regression | improvement | inconclusive |
 * unmatched, then one unmatched row per NEW point no BASE point took,
 * with side "base" or "new"), detail, under knee matching fraction,
 * offered_ops_base and offered_ops_new, and per metric base/new (medians over trials),
 * change_pct (the median of all new/base trial ratios, minus 1, in %),
 * mwu_p (the test's p)/p_adjusted/ks_d/ks_p/trials/verdict/why/test (which
 * test: Mann-Whitney U, or van Elteren's stratified test when paired
 * rounds ran on more than one floor, with strata), and with trials paired
 * by round rounds {paired, left_out}], "summary": {points, regressions,
 * improvements, inconclusive, tolerance_pct, alpha, correction, tests,
 * how, notes[], rounds_left_out, matched_by (knee_fraction | load),
 * matched, unmatched, knee (knee_compare's, or null; its verdict counts
 * in regressions, improvements or inconclusive)}, "table": [the text
 * rows]}, or NULL when out of memory.
 * new_name names NEW in "unmatched" rows.
 */
json_t *compare_eval(const json_t *base, const json_t *nw, const struct compare_params *p, const char *new_name);

/*
 * Reading compare_eval's document, so its spelling lives in compare.c:
 * its rows ("points", one per BASE point, then the unmatched NEW ones),
 * its summary, and one metric of a row (COMPARE_P50, COMPARE_P99,
 * COMPARE_OPS, COMPARE_TAGGED; NULL for an unmatched row) with its name.
 */
enum { COMPARE_P50, COMPARE_P99, COMPARE_OPS, COMPARE_TAGGED, COMPARE_NMETRIC };
json_t *compare_rows(const json_t *doc);
json_t *compare_summary(const json_t *doc);
json_t *compare_row_metric(const json_t *row, int metric);
const char *compare_metric_name(int metric);

/* The `oqb compare` command (exit statuses from lib/exitcodes.h: 0 no
 * regression and nothing undecided, 1 a regression, 2 bad input, 3 no
 * regression but some change could not be decided, or no point matched)
 * and its table. */
int compare_main(int argc, char **argv);
extern const struct opts_cmd compare_cmd;

#endif
