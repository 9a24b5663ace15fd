/*
 * result.h - run.json, the result of one `oqb run`: the one module that
 * reads and writes it (harness/result/README.md).
 *
 * Versions.  "oqbench.run/5" (written now) keeps each histogram once, as
 * HdrHistogram's compressed interchange text ("hdr", lib/hdrenc.h) beside
 * the exact n, min, max, sum and overflow: every counter, so every
 * percentile and the bins, comes back from it bit for bit
 * (result_hist).  Where a histogram is the sum of others it keeps its
 * numbers and not the text: a trial's "all" (its other two classes), a
 * point's latencies of each class (its kept trials', result_point_hist);
 * a trial set aside (discarded_trials) keeps only its numbers.  The
 * server's service times and the host stalls' lengths are the other way
 * round: the point keeps their text (merged over its kept trials, its
 * "all" the sum of its classes) and a kept trial their numbers.  A kept
 * trial stores nothing its histograms give back or its point holds
 * (result_trial_stored; result_trial_full gives it back).  A trial's
 * untagged requests are a part of its latencies, and may be stored as
 * that part ("lat_part", result_trial_sys_hist).  "oqbench.run/4" stored
 * them as the tagged requests' own text ("tagged_hdr") instead (a /4
 * reader cannot read "lat_part", so the version moved).
 * "oqbench.run/3" kept the service times and stall lengths in the trials
 * and not at the point (a /3 reader cannot read a /4 point's, so the
 * version moved); a reader of an older /3 file finds the trials' numbers
 * in place, and result_trial_full leaves what is there.  "oqbench.run/2"
 * kept the point's text too, and "oqbench.run/1" kept a histogram up to
 * three times: oqbench's [index, count] "bins", "ranges_ns" and "hdr".
 * All still open (result_hist reads bins), and nothing else differs
 * between them, so every reader takes any of them.
 *
 * The file is compact (one line, no indentation) unless pretty is asked
 * for, and beside it summary.csv holds one row per point (result_csv.c).
 */
#ifndef OQB_RESULT_H
#define OQB_RESULT_H

#include <stddef.h>
#include <jansson.h>
#include "hist.h"

#define RESULT_SCHEMA    "oqbench.run/5"
#define RESULT_SCHEMA_V4 "oqbench.run/4"
#define RESULT_SCHEMA_V3 "oqbench.run/3"
#define RESULT_SCHEMA_V2 "oqbench.run/2"
#define RESULT_SCHEMA_V1 "oqbench.run/1"

/* The name of the per-point table written beside run.json. */
#define RESULT_CSV "summary.csv"

/*
 * Loads a run.json of either version and checks its shape: an object, a
 * known schema, a "points" array whose entries are objects naming their
 * system.  Returns it, or NULL with err naming the file and the fix.
 */
json_t *result_load(const char *path, char *err, size_t errlen);

/* 5, 4, 3, 2 or 1 for "oqbench.run/5", "/4", "/3", "/2" or "/1"; 0 for anything else. */
int result_version(const json_t *run);

/*
 * Writes run to DIR/run.json atomically (a temporary file, then rename),
 * compact, or indented by one space with pretty; then DIR/summary.csv
 * (result_csv_write) the same way.  Returns 0, or -1 with err.
 */
int result_write(const json_t *run, const char *dir, int pretty, char *err, size_t errlen);

/*
 * The run.json summary of a histogram: {n, min, max, sum, overflow, mean,
 * p50, p99, p999, p50_ci, p99_ci, p999_ci, hdr}.  The CIs are 95 %
 * order-statistic intervals (lib/stats.h); min is 0 when n is 0.  NULL
 * on allocation failure.
 */
json_t *result_hist_summary(const struct hist *h);

/*
 * Reads a histogram back out of such a summary: from "hdr" with the
 * exact n (checked against the encoding), min, max, sum and overflow, or
 * from "bins" (an oqbench.run/1 file, or a process's result).  0, or -1
 * with err saying what is wrong and h left empty.
 */
int result_hist(struct hist *h, const json_t *summary, char *err, size_t errlen);

/*
 * A trial's classes ("all", "nilext", "non_nilext", as lat_ns and
 * server.service_ns hold them) stored once: a copy of lat in which "all"
 * has no "hdr" when its histogram is exactly the sum of the other two
 * (every request is of one class, so it always is; a copy that would not
 * be keeps its "hdr").  A trial's "all" is a fifth of run.json's
 * histograms, and this is the one place that decides it.  NULL on
 * allocation failure.
 */
json_t *result_trial_classes(const json_t *lat);

/*
 * The histogram of class cls of such an object (a point's or a trial's
 * lat_ns or service_ns): result_hist of lat[cls], or for an "all"
 * without "hdr" the sum of "nilext" and "non_nilext", checked against its
 * n.  0, or -1 with err.
 */
int result_class_hist(struct hist *h, const json_t *lat, const char *cls, char *err, size_t errlen);

/*
 * A point's histogram: class cls ("all", "nilext", "non_nilext") of field
 * "lat_ns", "service_ns" (server.service_ns) or "sys_lat_ns" (the untagged
 * requests', host_tags.sys_lat_ns: harness/run/hosttags.h), or field
 * "host_len_ns" (host_tags.host_len_ns, the host stalls' lengths; cls is
 * then not used).  Its own "hdr" or "bins" when it keeps them (older
 * files, a point without trials, and from oqbench.run/4 on its service
 * times and stall lengths, "all" its classes summed), else its kept
 * trials' histograms of that class merged (result_class_hist each),
 * checked against the point's n, min and max.  0, or -1 with err.
 */
int result_point_hist(struct hist *h, const json_t *p, const char *field, const char *cls, char *err,
		      size_t errlen);

/*
 * What run.json stores of point p (as harness/run/trials.c builds it):
 * drops the "hdr" of each of its latency summaries that is exactly its
 * trials' merged, counter for counter (one that is not keeps it), for
 * lat_ns and sys_lat_ns; for service_ns and host_len_ns, when each of
 * its summaries is exactly that, keeps them (service_ns's "all" without
 * "hdr", its classes summed) and its trials keep their numbers only
 * (else as for the latencies); its "trials" become copies as
 * result_trial_stored keeps them (the array p held is not changed); and
 * its server.per_worker[].stalls.events (the first trial's, which its
 * directory's server-N.json keeps) go.
 */
void result_point_compact(json_t *p);

/*
 * What run.json stores of a kept trial t of a point whose check rows are
 * point_checks: a copy without what it gives back or the point holds.
 * Each histogram summary whose histogram reads back (result_class_hist,
 * result_trial_sys_hist, result_hist) drops "mean" and the CIs, which
 * result_hist_summary recomputes from it exactly; a check row drops its
 * "concerns" and its "threshold" when they are the point's row's of that
 * name, and its "detail" when it passed (the point's row keeps one).  NULL on
 * allocation failure.
 */
json_t *result_trial_stored(const json_t *t, const json_t *point_checks);

/*
 * A stored trial t of point p as the run held it: a copy with each
 * summary's mean and CIs recomputed from its histogram and each check
 * row's concerns and threshold from p's row of that name.  A passing row's detail does
 * not come back (the point's row has one), nor the service times' and
 * stall lengths' encodings and CIs its point keeps for it (their mean
 * does: sum / n).  NULL on allocation failure.
 */
json_t *result_trial_full(const json_t *p, const json_t *t);

/*
 * A trial's untagged requests of class cls (its host_tags.sys_lat_ns):
 * their own encoding ("hdr"), their counts as a part of its lat_ns of
 * that class ("lat_part", lib/hdrenc.h), or (oqbench.run/4) that lat_ns
 * less the tagged ones' own encoding ("tagged_hdr"), counter by counter,
 * with the exact n, min, max, sum and overflow of the summary; "all" is
 * the other two together.  0, or -1 with err.
 */
int result_trial_sys_hist(struct hist *h, const json_t *t, const char *cls, char *err, size_t errlen);

/*
 * What run.json stores of trial t's untagged requests: per class, the
 * shorter of their own encoding and their part of lat_ns (which
 * result_trial_sys_hist reads back), checked by reading it back.
 */
void result_trial_compact(json_t *t);

/*
 * What run.json stores of a trial set aside (discarded_trials, never
 * merged): its numbers, checks and reason, not its histograms' encodings
 * (host_tags' included); a check row that passed keeps no "detail".
 * Changes t in place.
 */
void result_trial_set_aside(json_t *t);

/*
 * Typed access, so that a key's spelling and a missing number's meaning
 * live here.  A missing number is NaN, never 0, in every reader.
 *
 * result_num: o[key] as a double, NaN when missing or not a number.
 * result_points: run's points array (NULL-safe: json_array_size of it is
 * 0 when there is none).
 * result_canary_ns: a point's or a trial's canary_ns, NaN when missing.
 * result_run_canary: the median (lib/stats.h) of the run's points'
 * canaries, NaN when none has one.
 * result_find_point: the point of points that measured what p measured
 * (same system, sweep key and value, and offered load, or outstanding
 * requests for closed loop), or NULL.
 */
double result_num(const json_t *o, const char *key);
const json_t *result_points(const json_t *run);

/*
 * A point's fields by what they are, not by their spelling in the file.
 * result_lat: the summary of class cls ("all", "nilext", "non_nilext") of
 * a point's or a trial's lat_ns, NULL when it has none (cls NULL: the
 * lat_ns object itself, as result_class_hist takes it).
 * result_service: the same of a point's server.service_ns, or of a
 * trial's (or a server's result's) own service_ns (cls NULL: the
 * service_ns object itself, with its sample_every and window).
 * result_spread: a point's spread of percentile pct ("p50", "p99") of
 * class cls over its trials ({min, median, max, values}), or NULL.
 * result_trials: a point's kept trials (json_array_size 0 when none).
 * result_saturated: whether the point (or trial) saturated.
 * result_saturation: the same, or -1 when it was not judged (null: closed
 * loop; or missing).
 * result_checks: a point's or a trial's check rows (harness/trust/checks.h;
 * json_array_size 0 when none).
 * result_offered: its offered load in ops/s, NaN for closed loop.
 * result_achieved: its achieved ops/s, NaN when missing.
 */
const json_t *result_lat(const json_t *o, const char *cls);
const json_t *result_service(const json_t *p, const char *cls);
const json_t *result_spread(const json_t *p, const char *cls, const char *pct);
const json_t *result_trials(const json_t *p);
int result_saturated(const json_t *p);
int result_saturation(const json_t *p);
const json_t *result_checks(const json_t *p);
double result_offered(const json_t *p);
double result_achieved(const json_t *p);
double result_canary_ns(const json_t *p);
double result_run_canary(const json_t *run);
const json_t *result_find_point(const json_t *points, const json_t *p);

/* An exact count of summary s: s[key] as a non-negative integer into
 * *out, 0; -1 with err naming the key when it is missing or not one. */
int result_exact(const json_t *s, const char *key, uint64_t *out, char *err, size_t errlen);

/* Whole-valued reals in v become integers, recursively, so that 5000.0
 * and 5000 compare and hash alike (result_config_measured, the history's
 * fingerprints). */
void result_whole_reals(json_t *v);

/*
 * Which points of two runs measured the same thing (result_match.c).
 *
 * A run whose loads came from a knee search (run.json "knee", found_by
 * "search", harness/run/knee.h) swept fractions of its own knee, so two
 * such runs share no offered load: their points are matched by fraction
 * of each run's knee instead.  A point's fraction is the one whose entry
 * of knee.loads_ops is its offered load (exact: the sweep planned it so);
 * a load not in that list is offered / knee.  Two fractions are the same
 * when they differ by at most RESULT_FRACTION_TOL of the larger: the
 * search rounds fraction x knee down to three significant digits
 * (knee_round), which moves a load by under 1 %, so a fraction read back
 * from a rounded load is that close to the planned one.
 *
 * result_knee: the knee (knee.ops) of a run that searched for it, with
 * the bracket its search ended in (lo, and hi; hi is +infinity when no
 * probe failed, a capped search); NaN for a run of fixed loads, an old
 * run without "knee", or a search that failed.  lo and hi may be NULL.
 * result_knee_fraction: p's offered load as a fraction of run's knee, NaN
 * when run did not search or p has no offered load.
 * result_fraction_same: whether two fractions match (above).
 * result_config_measured: a copy of a config (run.json "config") without
 * the keys that do not change what is measured (name, description, seed,
 * repeat, canary, checks, check, timeouts, hosts) nor those that
 * describe the testbed (server.cpus, clients.cpus, verbs.addr,
 * verbs.port, verbs.device); with drop_loads also without
 * arrival.loads_ops; whole-valued reals become integers (5000.0 is
 * 5000).  The history's config fingerprint hashes it, and
 * `oqb run --loads-from` checks a base's shape with it.  NULL on
 * allocation failure.
 */
#define RESULT_FRACTION_TOL 0.01
double result_knee(const json_t *run, double *lo, double *hi);
double result_knee_fraction(const json_t *run, const json_t *p);
int result_fraction_same(double a, double b);
json_t *result_config_measured(const json_t *config, int drop_loads);

/*
 * The per-point table: a header line, then one row per entry of
 * run["points"] (one system at one load), comma-separated, quoted where
 * a field needs it (RFC 4180).  A number the point does not have is an
 * empty field.  The columns are documented in docs/driver.md
 * ("summary.csv") and listed by result_csv_columns.  0, or -1 with err.
 */
int result_csv_write(const json_t *run, const char *path, char *err, size_t errlen);

/* The column names, in order, NULL-terminated. */
extern const char *const result_csv_columns[];

/*
 * result_trust.c: what run.json says about trusting a point.
 * (result_checks, a point's or trial's check rows: above.)
 * result_flagged_by: a point's flagged_by object ({p50: [names], ...}),
 * NULL for a point from before it.
 * result_flagged_for: its flagged_by list of number q ("p50", "p99",
 * "sys_p99", ...), NULL when it has none (a flagged_by from before
 * "sys_p99": its "p99" list for it).
 * result_finding: the run's finding object, or NULL.
 * result_host_tags: a point's (or trial's) host_tags, NULL without.
 * result_sys_lat: its untagged requests' summary of class cls (cls NULL:
 * the sys_lat_ns object), NULL without.
 * result_tagged_frac, result_unattributed_frac: the requests of class cls
 * a host (an unattributed) stall touched, as a fraction (its tagged_frac,
 * or for tagged a trial's host_tags.tagged over lat_ns's n); NaN without
 * host_tags or requests.
 * result_set_by_host: whether the raw percentile pct ("p50", "p99",
 * "p999") was set by the host (more than half above it tagged).
 * result_server_workers: the server's worker count, NaN without.
 */
const json_t *result_flagged_by(const json_t *p);
const json_t *result_flagged_for(const json_t *p, const char *q);
const json_t *result_finding(const json_t *run);
const json_t *result_host_tags(const json_t *p);
const json_t *result_sys_lat(const json_t *p, const char *cls);
double result_tagged_frac(const json_t *p, const char *cls);
double result_unattributed_frac(const json_t *p, const char *cls);
int result_set_by_host(const json_t *p, const char *pct);
double result_server_workers(const json_t *p);

/*
 * result_verdict.c: what verdict/ reads of a run (oqb compare, oqb ab).
 *
 * result_system: a point's system name, NULL when it has none.
 * result_status: a run's status ("ok", or why it is incomplete), or NULL.
 * result_round: a trial's round (oqb ab's, 1-based), -1 when it has none.
 * result_trial_hist: a trial's histogram of class "all", of every request
 * (sys 0: lat_ns) or of the untagged ones (sys 1: host_tags.sys_lat_ns,
 * result_trial_sys_hist); 0, or -1 with err (a trial without host_tags
 * when sys is asked for).
 * result_trial_pct: percentile pct (50, 99, 99.9) of that histogram, NaN
 * when the trial has no such histogram or no request.
 * (result_checks above; result_host_tags and result_tagged_frac in
 * result_trust.c's block.)
 */
const char *result_system(const json_t *p);
const char *result_status(const json_t *run);
long result_round(const json_t *t);
int result_trial_hist(struct hist *h, const json_t *t, int sys, char *err, size_t errlen);
double result_trial_pct(const json_t *t, int sys, double pct);

/*
 * result_fig.c: what verdict/ and figures/ read of a run beyond the
 * numbers above.  A missing number is NaN, a missing string NULL, a
 * missing flag false.
 *
 * The run: result_config, its config object (NULL without);
 * result_setting, the config's value of a setting by its dotted name
 * ("sweep.key", "clients.threads": lib/conf.h's conf_path), NULL when not
 * set, and _str and _num of it; result_ident, who ran it and when;
 * result_error_message, why it stopped (its error.message); its
 * transport's name, the driver's host, the CPU model and count;
 * result_testbed, a new object of what the run says of its testbed (hosts,
 * CPUs, kernel, the transport's device details, the config's CPUs and
 * verbs device: the history's testbed fingerprint hashes it); its knee
 * (result_knee_ops: knee.ops whatever found it, with found_by; its
 * search's points past the knee and those of them saturated; the search's
 * confirm); result_finding_text, a finding's text and caveat (a finding
 * from run.json or trust/finding.h's finding_of).
 *
 * A point: its sweep (result_sweep the object, NULL without; its key; its
 * value, JSON null without, so two points without a sweep compare equal;
 * its index, -1 without); its requests in flight per client thread
 * (closed loop; NaN for open); whether it was flagged (by any self-check)
 * or durable; its trial count (repeat, -1 without); its workload's value
 * size; its server's device (server.transport.device); result_lincheck,
 * its `oqb check` verdict ("check": true), 0 with c filled, -1 (verdict
 * NULL) when it was not checked.  Its requests sent, not sent and not
 * answered are result_run.c's (result_sent, result_unsent,
 * result_unanswered).
 *
 * A histogram's summary: result_n its request count, result_ci its
 * percentile pct's ("p50", "p99") CI array (NULL without);
 * result_service_every, a point's service-time sampling (1 in N).
 */
struct result_ident {
	const char *run_id, *name, *created_utc, *git_commit, *config_path;
	int git_dirty;   /* 0 or 1, -1 when not recorded */
};
struct result_lincheck {
	const char *verdict;   /* "ok", "violation", "unknown" */
	long long ops, keys_violation;
};
const json_t *result_config(const json_t *run);
const json_t *result_setting(const json_t *run, const char *name);
const char *result_setting_str(const json_t *run, const char *name);
double result_setting_num(const json_t *run, const char *name);
void result_ident(const json_t *run, struct result_ident *id);
const char *result_error_message(const json_t *run);
const char *result_transport_name(const json_t *run);
const char *result_driver_host(const json_t *run);
const char *result_cpu_model(const json_t *run);
double result_cpus_online(const json_t *run);
json_t *result_testbed(const json_t *run);
double result_knee_ops(const json_t *run, const char **found_by);
void result_knee_past(const json_t *run, double *points, double *saturated);
double result_knee_confirm(const json_t *run);
const char *result_finding_text(const json_t *finding, const char **caveat);
int result_has_sweep(const json_t *p);
const json_t *result_sweep(const json_t *p);
const char *result_sweep_key(const json_t *p);
const json_t *result_sweep_value(const json_t *p);
long long result_sweep_index(const json_t *p);
double result_outstanding(const json_t *p);
int result_flagged(const json_t *p);
int result_durable(const json_t *p);
long result_repeat(const json_t *p);
double result_value_size(const json_t *p);
const char *result_device(const json_t *p);
int result_lincheck(const json_t *p, struct result_lincheck *c);
double result_n(const json_t *s);
const json_t *result_ci(const json_t *s, const char *pct);
double result_service_every(const json_t *p);

/*
 * result_anew.c: run (a loaded "oqbench.run/3", "/4" or "/5") changed in place
 * to what the current writer stores of the same run: each point's trials
 * back to what the run held, its summaries' encodings back from them,
 * then result_point_compact and result_trial_set_aside; its schema the
 * current one.  What the earlier writer dropped stays dropped.  For
 * measuring the writer on a kept run and for tests
 * (tests/unit/test_result_anew.c --anew).  0, or -1 with err (an older
 * version, or a histogram that does not read back).
 */
int result_store_anew(json_t *run, char *err, size_t errlen);

/*
 * result_run.c: what run/ and trust/ read of a run (result.h's rule: a
 * missing number is NaN, a missing string, object or array NULL).
 *
 * A check row (harness/trust/checks.h): result_check_name, its status
 * "warn" (result_check_warns), result_check_detail, result_check_concerns
 * (the array, NULL when the row has none: it then concerns every number),
 * result_check_cause (trial_agreement's note on the canaries),
 * result_check_value and result_check_threshold (as stored: a number or
 * null, NULL when missing); result_check_row: the row of that name in
 * checks, or NULL.
 * A point's or trial's counts: result_sent, result_unanswered,
 * result_unsent, result_errors, result_ring_full_waits (shm's clients'
 * waits for a full ring) and result_full_wait_ns (their time waiting),
 * result_measured_ns (result_outstanding, result_sweep_index and
 * result_sweep_value are result_fig.c's: a sweep's value is JSON null
 * without one, so two points without one compare equal).
 * result_rdma_counters: its device counters (harness/run/devctr.h), NULL
 * without; result_rnr_naks: their RNR NAKs sent (sent 1) or received;
 * result_rdma_side: the server's (client 0) or the clients' counters (an
 * object, or a string saying why there are none), result_rdma_derived:
 * that side's derived totals, result_rdma_shared: shared_device (true,
 * false or null); each NULL without.
 * Its host_tags (result_host_tags): result_host_count, the requests of
 * class cls tagged by a host stall, touched by an unattributed one, or
 * delayed behind a worker's stall (NaN without); result_host_stalls: the
 * stall time by evidence (stall_ns), NULL without;
 * result_host_stalls_complete: 0 when a thread's stall log overflowed;
 * result_host_len: the host stalls' lengths (a summary), NULL without.
 * result_backend_library: the library of backend its server's first
 * worker reported (version and assertions, NULL when not said); 0, or -1
 * when there is none.
 * result_regime_mixed: whether a point's trials ran in several canary
 * regimes, -1 when it has no canary_regime; result_regime_set_aside: how
 * many trials it set aside for that, NaN without.
 * A trial: result_trial_no (its number, -1 without), result_regime_rerun
 * (it reran for the canary regime), result_set_aside_reason (a discarded
 * trial's reason, NULL without).
 * result_pct_ci: the 95 % CI of percentile pct ("p50", "p99", "p999") of
 * summary s into lo and hi; 0, or -1 (both NaN) when it has none.
 * A run: result_config (its config echo, NULL without), result_run_id,
 * result_knee_json (its knee object, NULL without; writable, for the run
 * that builds it), result_knee_found_by, result_knee_loads (knee.loads_ops,
 * NULL without).
 * A finding (result_finding, or trust/finding.h's finding_of):
 * result_finding_status, result_finding_reference, result_finding_text,
 * result_finding_pairs; result_finding_pair: the pair of system sys, or
 * NULL.  A pair: result_pair_system, result_pair_ratio, result_pair_ci
 * (its 95 % CI; 0, or -1 with both NaN), result_pair_nloads (its loads),
 * result_pair_status ("ok", or "insufficient"), result_pair_reason (why
 * it has no ratio).
 */
const char *result_check_name(const json_t *row);
int result_check_warns(const json_t *row);
const char *result_check_detail(const json_t *row);
const json_t *result_check_concerns(const json_t *row);
const char *result_check_cause(const json_t *row);
const json_t *result_check_value(const json_t *row);
const json_t *result_check_threshold(const json_t *row);
const json_t *result_check_row(const json_t *checks, const char *name);
double result_sent(const json_t *p);
double result_unanswered(const json_t *p);
double result_unsent(const json_t *p);
double result_errors(const json_t *p);
double result_ring_full_waits(const json_t *p);
double result_full_wait_ns(const json_t *p);
double result_measured_ns(const json_t *p);
const json_t *result_rdma_counters(const json_t *p);
double result_rnr_naks(const json_t *p, int sent);
const json_t *result_rdma_side(const json_t *p, int client);
const json_t *result_rdma_derived(const json_t *p, int client);
const json_t *result_rdma_shared(const json_t *p);
enum result_tag_count { RESULT_TAGGED, RESULT_UNATTRIBUTED, RESULT_WORKER };
double result_host_count(const json_t *p, enum result_tag_count which, const char *cls);
const json_t *result_host_stalls(const json_t *p);
int result_host_stalls_complete(const json_t *p);
const json_t *result_host_len(const json_t *p);
int result_backend_library(const json_t *p, const char *backend, const char **version, const char **assertions);
int result_regime_mixed(const json_t *p);
double result_regime_set_aside(const json_t *p);
long result_trial_no(const json_t *t);
int result_regime_rerun(const json_t *t);
const char *result_set_aside_reason(const json_t *t);
int result_pct_ci(const json_t *s, const char *pct, double *lo, double *hi);
const char *result_run_id(const json_t *run);
json_t *result_knee_json(const json_t *run);
const char *result_knee_found_by(const json_t *run);
const json_t *result_knee_loads(const json_t *run);
const char *result_finding_status(const json_t *f);
const char *result_finding_reference(const json_t *f);
const json_t *result_finding_pairs(const json_t *f);
const json_t *result_finding_pair(const json_t *f, const char *sys);
const char *result_pair_system(const json_t *pr);
double result_pair_ratio(const json_t *pr);
int result_pair_ci(const json_t *pr, double *lo, double *hi);
size_t result_pair_nloads(const json_t *pr);
const char *result_pair_status(const json_t *pr);
const char *result_pair_reason(const json_t *pr);

/*
 * result_regime.c: a point's numbers per canary regime (docs/trust.md,
 * "Canary regimes").
 *
 * result_regime_same: whether canaries a and b (ns) are in one regime:
 * neither is factor times the other or more; factor <= 0, or a canary
 * <= 0 (none measured), never splits (harness/run/trials.h's
 * regime_same is this rule).
 * result_regime_numbers: the regime object of kept trials t[0..n) (run.json
 * trials[] entries) for canary_regime.regimes: {canary_ns (the median of
 * their canaries), trials (their numbers), lat_ns {all, nilext,
 * non_nilext: n, p50, p99, p999, p50_ci, p99_ci}, host_tags {sys_lat_ns
 * {CLS: n, p50, p99}, tagged_frac {CLS}} (when every trial has
 * host_tags), achieved_ops (their sum / n)}, every histogram the trials'
 * merged counter by counter.  Read it with result_canary_ns, result_lat,
 * result_sys_lat, result_tagged_frac and result_achieved.  NULL with err.
 * result_regimes: a point's canary_regime.regimes (its own regime first),
 * NULL when it has none (an unmixed point).
 * result_regime_trials: a regime object's trial numbers (an array), NULL
 * without.
 * result_regime_factor: a point's canary_regime.factor, NaN without.
 * result_regime_agreement: a regime object's own trial_agreement row (a
 * regime of 3 or more trials has one), NULL without.
 * result_regime_canary: a point's canary_regime.median_ns (the canary its
 * trials are judged against), else its canary_ns; NaN without.
 * result_pair_left_out: a finding pair's rounds left out because its two
 * sides ran in different canary regimes (trust/finding.h), NaN without.
 */
int result_regime_same(double a, double b, double factor);
json_t *result_regime_numbers(const json_t *const *t, size_t n, char *err, size_t errlen);
const json_t *result_regimes(const json_t *p);
const json_t *result_regime_trials(const json_t *rg);
double result_regime_factor(const json_t *p);
const json_t *result_regime_agreement(const json_t *rg);
double result_regime_canary(const json_t *p);
double result_pair_left_out(const json_t *pr);

#endif
