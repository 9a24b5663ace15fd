/*
 * trials.h - repeated trials of a point, the canary beside each, and the
 * point that run.json shows for them.
 *
 * With `repeat: N` every point runs N times, in rounds: each round runs
 * every point once, in an order shuffled by the config's seed (randomised
 * multiple interleaved trials, Abedi & Brecht, ICPE'17), so a slow drift of
 * the machine spreads over all systems and loads instead of landing on
 * one.  Each trial keeps its own histograms and self-checks.  The point is
 * the bin-wise sum of its trials' histograms (percentiles are read from
 * the sum, never averaged), with the spread between the trials' p50 and
 * p99 beside it: the run-to-run variation that within-run CIs cannot show.
 */
#ifndef OQB_TRIALS_H
#define OQB_TRIALS_H

#include <stddef.h>
#include <jansson.h>

/* A canary's budget after each trial: its rounds stop after CANARY_MAX_MS
 * (oqb-floor on shm, oqb-vfloor on verbs), and the verbs pinger gives up
 * connecting after the run's timeouts.connect_s, as its clients do. */
#define CANARY_MAX_MS    200

/*
 * The machine's floor beside a trial: bin/oqb-floor's cache-line ping-pong
 * between CPUs a and b (the CPUs of server worker 0 and client thread 0),
 * capped at max_ms.  Returns its p50 in ns, or -1 with why set.
 */
double trials_canary(const char *bin_dir, int cpu_a, int cpu_b, double max_ms, char *why, size_t len);

/* The CPUs of server worker 0 and client 0's thread 0 from their results
 * ("placement"), or -1 where unpinned or unknown. */
void trials_canary_cpus(const json_t *server, json_t *const *clients, size_t n, int *a, int *b);

/*
 * One trial's entry for run.json from the point object of that trial (as
 * merge_point made it): its histograms, counters, canary, checks (a new
 * reference is taken), where its threads ran, and its order in the run.
 */
json_t *trials_entry(const json_t *pj, unsigned trial, size_t order, double canary_ns, json_t *checks);

/*
 * The point as run.json shows it, from the point object of its first trial
 * (pj0, for the fields every trial shares) and the entries of all trials
 * run so far.  A check warns at the point when it warned in at least half
 * of the trials; ci_p99 and ci_p999 are judged on the merged histogram
 * with cc's thresholds (cc NULL: as the trials said).  NULL with err when
 * a histogram cannot be read.
 */
struct check_conf;
json_t *trials_point(const json_t *pj0, const json_t *entries, const struct check_conf *cc, char *err,
		     size_t errlen);

/*
 * Which disturbed trials are run again (run.c).  A trial whose checks say
 * the host disturbed it is rerun, up to per_trial times.  Reruns stop
 *   - for good when the run's budget is spent (budget >= 0 reruns), and
 *   - when three trials in a row were kept still disturbed after all
 *     their reruns (the disturbance looks permanent); they resume at the
 *     first trial that comes back calm, since then it was not.
 */
enum rerun_event { RR_NONE, RR_FUTILE_STOP, RR_BUDGET_STOP, RR_RESUME };
struct rerun_policy {
	long long per_trial, budget, used;
	int futile, stopped;          /* stopped: 0, RR_FUTILE_STOP or RR_BUDGET_STOP */
};
void rerun_init(struct rerun_policy *p, long long per_trial, long long budget);
/* Trial run number n (0 the first) was disturbed or not: 1 to run it again,
 * 0 to keep it.  *ev says whether this decision stopped or resumed reruns. */
int rerun_decide(struct rerun_policy *p, unsigned n, int disturbed, enum rerun_event *ev);

/*
 * Canary regimes: one machine condition per point.
 *
 * A host can have several floors that it switches between (this project's
 * 2-vCPU VM: a canary of about 100 ns in some 80 % of trials and about
 * 500 ns in the rest, in stretches of 0.1 s to a minute, by where the
 * hypervisor runs the two vCPUs).  Every latency follows the floor, so
 * trials of one point under two floors measured two machines.  Two
 * canaries are in one regime when neither is `factor` times the other or
 * more (canary_regime_factor, default 2: the floors seen differ 5x, while
 * one floor's canaries spread by some 10 %, so any factor between about
 * 1.3 and 4 splits them the same way; 2 is the middle on a log scale).
 * factor <= 0, or a canary <= 0 (none measured), never splits.
 */
#define CANARY_REGIME_FACTOR 2.0
int regime_same(double a, double b, double factor);

/*
 * The regime most of v[0..n) share: for each v[i], the values in its
 * regime; the v[i] whose regime holds the most wins, a tie going to the
 * one nearest `tie` on a log scale (tie <= 0: the lowest, the floor
 * itself).  Returns the median of the winning values (the regime's
 * canary) and puts their count in *count; -1 when no value is > 0.
 */
double regime_mode(const double *v, size_t n, double factor, double tie, size_t *count);

/*
 * The canary a new trial of a point is held against (run.c): with no kept
 * trial of the point yet, the run's median canary so far when it has 3 or
 * more (the machine's usual floor; fewer say too little), else none (-1:
 * keep the trial); otherwise the regime most of the point's kept canaries
 * and the new one share, a tie going to the run's median (if it has 3),
 * else to the lowest.
 */
double regime_reference(const double *kept, size_t nkept, double canary, const double *run, size_t nrun,
			double factor);

/* The canaries (> 0) of a point's trials (run.json trials[] entries), in
 * their order, in a new array (free it), their count in *n; NULL when out
 * of memory. */
double *entry_canaries(const json_t *entries, size_t *n);

/*
 * A kept trial that the point's later trials show to be on another floor:
 * the index in entries of the first kept trial whose canary is out of the
 * regime a clear majority of the kept canaries share (at least 2 of them,
 * and more than half), or -1 when there is none.  It catches what
 * regime_reference cannot: a point's first trial judged before the run had
 * 3 canaries, or against a run median of the rarer floor.  The reference
 * canary goes to *ref.  An entry marked "regime_rerun" (run.c: it already
 * replaced a stray) is never picked again, so each trial is set aside
 * this way at most once.
 */
long regime_stray(const json_t *entries, double factor, double *ref);

/*
 * points[].canary_regime for run.json: the regime of the point's kept
 * trials (entries), its canary, how many trials share it, the canaries
 * of those that do not, how many trials were set aside for their regime
 * (discarded entries whose "reason" is "canary_regime"), and whether the
 * kept trials still mix regimes (then a note says so).  run_median is the
 * run's median canary (tie-break), or <= 0.  A mixed point also gets
 * "regimes": per regime among its kept trials (the point's own first,
 * then by their number of trials), its trials and their numbers merged
 * (result.h: result_regime_numbers), and with cc and 3 or more trials
 * its own trial_agreement row (checks_trials on its trials alone: do
 * the trials of one floor agree?); an unmixed one none.  NULL when no
 * kept trial has a canary or the rule is off (factor <= 0).
 */
json_t *regime_of_point(const json_t *entries, const json_t *discarded, double factor, double run_median,
			const struct check_conf *cc);

/*
 * A mixed point's regimes in one line for people, into buf ("" when it
 * has none): "regimes 140 ns (3 trials) p50 1.10us sysP99 40.0us | 520 ns
 * (2) p50 1.90us sysP99 61.0us", each regime's median and its untagged
 * requests' P99 ("-" without).
 */
void regime_line(char *buf, size_t len, const json_t *p);

#endif
