/*
 * checks.h - the self-checks on every measured point (docs/trust.md).
 *
 * A point's percentiles are only as good as the conditions it ran under.
 * Each check reads what the processes reported (the clients' "trust"
 * object: schedule lag, inter-send gaps, the two halves of the window,
 * involuntary context switches and host steal; the server's per-worker
 * switches; the canary beside the point) and says pass or warn, with the
 * value and the threshold it was held to:
 *
 *   schedule_lag   share of requests posted later than lag_ns after their
 *                  intended time (a client that cannot keep its schedule
 *                  hides latency: coordinated omission); worst lag beside
 *   arrival_fit    Anderson-Darling test of each client thread's gaps
 *                  between intended send times against the configured
 *                  exponential (the sends' distance from those times is
 *                  schedule_lag's); the smallest p, Bonferroni-corrected
 *                  over threads
 *   ci_p99/ci_p999 relative width of the order-statistic 95 % CI
 *   stationarity   the window's halves: p50 and p99 differ by more than a
 *                  factor AND their CIs do not overlap
 *   interference   the least share of its CPU any spinning thread got
 *                  (user + system time over wall time; involuntary context
 *                  switches beside it), and host CPU steal
 *   canary_drift   this point's canary against the run's median canary
 *   saturation, unanswered, unsent, errors   as the point reports them
 *
 * A warning flags the point: `oqb run` prints it on the progress line,
 * plots draw the point hollow, `oqb run --strict` fails the run.
 *
 * Every row also says which of the point's numbers it speaks for
 * ("concerns": "p50", "p99", "p999", "achieved_ops"), and a warning makes
 * only those unreliable: a P99 whose trials disagree says nothing against
 * a median they agree on, and a thread that stood still 1 % of the window
 * moves the tail, not the median.  What describes the load or the machine
 * itself (schedule_lag, arrival_fit, interference, placement,
 * canary_drift, saturation and the counts) concerns every number;
 * ci_p99 the P99 and ci_p999 the P99.9; stalls the tails; trial_agreement
 * and stationarity the parts that warned (stationarity's p50 part says
 * the system changed, so every latency).  checks_flagged_by() sums the
 * warnings up per number.
 */
#ifndef OQB_CHECKS_H
#define OQB_CHECKS_H

#include <jansson.h>
#include "conf.h"

struct check_conf {
	double lag_ns;          /* a send this late counts as lagging */
	double lag_share;       /* warn above this share of lagging sends */
	double arrival_p;       /* warn below this (corrected) p-value */
	double ci_p99;          /* warn above this relative CI width */
	double ci_p999;
	double halves_p50;      /* warn above this ratio between halves ... */
	double halves_p99;      /* ... when the halves' CIs do not overlap */
	double steal;           /* warn above this share of host CPU time stolen */
	double cpu_share;       /* warn when a spinning thread got less of its CPU */
	double stall_share;     /* warn when a spinning thread stood still longer than this share of the window */
	double canary_drift;    /* warn when the canary is off the median by more than this factor */
	double trials_p50;      /* warn above this relative width of the trials' p50 CI */
	double trials_p99;      /* ... and of their P99 CI */
};

/* The defaults (docs/trust.md says why each is what it is). */
void checks_defaults(struct check_conf *c);

/* Reads the config's "checks" object (NULL: defaults); unknown keys were
 * already refused by the schema. */
void checks_from_json(struct check_conf *c, const json_t *obj);

/*
 * The checks of one measured point (one trial): an array of
 * {"name","value","threshold","status":"pass"|"warn","detail","concerns"}.
 * pj is the merged point, clients the processes' results, server the
 * server's, canary_ns this trial's canary p50 (<= 0: none) and
 * canary_median the run's so far (<= 0: none).
 */
json_t *checks_point(const struct check_conf *c, const json_t *pj, json_t *const *clients,
		     size_t nclients, const json_t *server, double canary_ns, double canary_median);

struct hist;
/* The ci_p99 and ci_p999 checks of histogram h, appended to out (used on a
 * point's histogram merged over its trials). */
void checks_ci(const struct check_conf *c, json_t *out, const struct hist *h);

/* The trial_agreement check of a point measured in n trials (their "all"
 * histograms; merged, their bin-wise sum): a bootstrap over whole trials
 * (resampled with replacement, merged, 200 times, fixed seed) gives the
 * 95 % CI of the merged p99 and p50; their widths relative to the merged
 * values are judged against trials_p99 and trials_p50.  Samples within a
 * trial are not independent (a stall of the host delays a run of them),
 * so checks_ci's order-statistic CI alone is too narrow; the trials are
 * the independent replicates.  sys[0..n) (a NULL entry: no untagged
 * request in that trial) and sys_merged, the trials' histograms of the
 * requests no host stall tagged, judge the system's P99 the same way, so
 * that trials whose raw P99s disagree for the host stalls they caught do
 * not flag the system's; sys NULL (a build before host tags): the raw
 * P99 speaks for it.  Nothing is appended below 3 trials.  Returns -1
 * when out of memory. */
int checks_trials(const struct check_conf *c, json_t *out, struct hist *const *trials, size_t n,
		  const struct hist *merged, struct hist *const *sys, const struct hist *sys_merged);

/* 1 for the checks that say the machine, not the system, was measured
 * (interference, stalls): a trial they flag is rerun (run.c) and a knee
 * probe they flag proves nothing (knee.c). */
int checks_is_disturbance(const char *name);

/* Whether any check in the array warns; names of the warnings into buf
 * ("stationarity,interference"; whole names only: one that does not fit
 * ends the list). */
int checks_flagged(const json_t *checks, char *buf, size_t len);
/* The same, counting only the checks named in names[] (NULL-terminated;
 * NULL: every check). */
int checks_warned(const json_t *checks, const char *const *names, char *buf, size_t len);

/* The numbers a check row speaks for, as bits of its "concerns". */
enum {
	CHECK_P50 = 1,
	CHECK_P99 = 2,
	CHECK_P999 = 4,
	CHECK_TPUT = 8,
	CHECK_SYS99 = 16,     /* the system's P99: of the untagged requests (host_tags) */
	CHECK_LAT = CHECK_P50 | CHECK_P99 | CHECK_P999 | CHECK_SYS99,
	CHECK_ALL = CHECK_LAT | CHECK_TPUT,
};

/* A row's "concerns" as bits; a row without them (run.json files from
 * before they existed) concerns every number. */
unsigned checks_concerns(const json_t *row);
/* Sets row's "concerns" to the numbers in bits. */
void checks_set_concerns(json_t *row, unsigned bits);

/*
 * Per number of a point, the checks that warned about it:
 * {"p50": [names], "p99": [...], "p999": [...], "achieved_ops": [...],
 * "sys_p99": [...]} (sys_p99: the P99 of the requests no host stall
 * touched, host_tags.sys_lat_ns)
 * (an empty array: nothing warned about that number).  A point is
 * `flagged` when any of them is non-empty.
 */
json_t *checks_flagged_by(const json_t *checks);

/* Whether a check warned about point p's number q ("p50", "p99",
 * "sys_p99", ...), with their names into buf ("a,b"); a point from before
 * flagged_by: any warning, as checks_flagged; one from before sys_p99:
 * its p99's. */
int checks_point_flagged(const json_t *p, const char *q, char *buf, size_t len);

/* The schema of the config's "checks" object. */
extern const struct conf_key checks_schema[];

#endif
