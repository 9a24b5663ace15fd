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
 * connecting after CANARY_CONNECT_S. */
#define CANARY_MAX_MS    200
#define CANARY_CONNECT_S 10

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

#endif
