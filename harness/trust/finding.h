/*
 * finding.h - the run's result in one sentence, computed from its trials:
 * run.json's top-level "finding", the demo's last result line.
 *
 *   below saturation (6 loads), oq's nilext median is 3.9x lower than
 *   rawrpc's (95 % CI 3.5-4.3) and 2.4x lower than deferred's (95 % CI
 *   2.1-2.6)
 *
 * What it computes, and why:
 * - The reference is oq when the run has it (the paper's claim is about
 *   oq), else the system whose median is the lowest at the most loads.
 *   Every other system is compared with it.
 * - The number is the median of the nilext requests (the ones oq commits
 *   on the delivery ACK), or of all requests when some point has no
 *   nilext ones.  A point's median is read from its trials' histograms
 *   merged, never from averaged percentiles.
 * - A pair is compared at the loads where neither of the two points
 *   saturated and both have samples (a saturated point's latency is a
 *   queue that grew for the whole trial).  Per load the ratio is
 *   other / reference; the pair's ratio is their geometric mean over the
 *   loads (a ratio of 4 and one of 1/4 average to 1).
 * - Like with like: a trial's number is its round, so per load the two
 *   points' trials of one number ran side by side; a round is kept when
 *   its two trials ran in one canary regime (result_regime_same with the
 *   points' canary_regime.factor), and left out, counted, when they did
 *   not (the host changed floor mid-round), as is a trial whose round the
 *   other side lacks.  A load left with fewer than 2 rounds that way goes.
 *   The medians are read over the kept rounds' trials merged.  A run.json
 *   whose trials have no numbers is not paired (every trial counts).
 * - Its 95 % CI is a percentile bootstrap over rounds: a load's kept
 *   rounds are resampled with replacement, both sides' trials of a round
 *   together, merged, and the medians read again (unpaired: each point's
 *   trials on their own); FINDING_RESAMPLES times, with a fixed seed, so
 *   the same run.json gives the same CI.  Samples within a trial are not
 *   independent (a host stall delays a run of them); the rounds are, so
 *   their spread is what the CI carries.  The same is done per load.
 * - Fewer than 2 such loads, or fewer than 2 trials at a point used, give
 *   no ratio: the pair says why instead, and so does the text.
 * - "caveat" says which of the medians used a self-check warned about
 *   (flagged_by.p50), by check, and why, in one sentence.
 * tests/unit/test_finding.c checks the numbers and the degenerate cases
 * on fixed trials, tests/unit/test_regimes.c the pairing by round,
 * tests/integration/finding.sh that `oqb run` writes it.
 */
#ifndef OQB_FINDING_H
#define OQB_FINDING_H

#include <jansson.h>

#define FINDING_RESAMPLES 2000

/*
 * The "finding" object of a run.json (its points, with trials[] as `oqb
 * run` writes them): {"status": "ok" | "insufficient" | "none", "text",
 * "caveat", "reference", "reference_rule", "class", "statistic", "method",
 * "resamples", "confidence_pct", "trials": {"min", "max"}, "pairs": [...],
 * "medians_used", "medians_flagged", "flagged_by_check"} (docs/trust.md,
 * "The finding").  Never NULL unless memory runs out; a run it cannot
 * judge gets status "none" or "insufficient" and a text that says why.
 */
json_t *finding_of_run(const json_t *run);

/* run's "finding" as `oqb run` wrote it (a reference taken), or computed
 * from its trials for a run.json written before it. */
json_t *finding_of(const json_t *run);

/*
 * Two runs' findings side by side (oqb compare): {"base", "new" (their
 * texts), "pairs": [{"system", "base_ratio", "base_ci95", "new_ratio",
 * "new_ci95", "verdict": "moved" | "same"}], "moved", "text", "how"}.
 * A run.json without "finding" has it computed from its trials.  A pair
 * "moved" when its two 95 % CIs do not overlap.  Never NULL unless memory
 * runs out.
 */
json_t *finding_compare(const json_t *base, const json_t *nw);

#endif
