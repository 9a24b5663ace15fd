/*
 * trials.c - repeated trials, the canary, and the merged point (trials.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "devctr.h"
#include "hosttags.h"
#include "hist.h"
#include "merge.h"
#include "result.h"
#include "stats.h"
#include "run.h"
#include "runjson.h"
#include "trials.h"

static const char *const classes[] = { "all", "nilext", "non_nilext" };
#define NCLASSES 3

double trials_canary(const char *bin_dir, int cpu_a, int cpu_b, double max_ms, char *why, size_t len)
{
	char prog[4200], cpus[64], ms[32], out[4096];
	if (cpu_a < 0 || cpu_b < 0) {
		snprintf(why, len, "threads not pinned (placement none): no CPUs to measure on");
		return -1;
	}
	snprintf(prog, sizeof prog, "%s/oqb-floor", bin_dir);
	snprintf(cpus, sizeof cpus, "%d,%d", cpu_a, cpu_b);
	snprintf(ms, sizeof ms, "%g", max_ms);
	char *argv[] = { prog, "--cpus", cpus, "--max-ms", ms, "20000", NULL };
	if (run_capture(argv, out, sizeof out) != 0) {
		snprintf(why, len, "%s failed: %.200s", prog, out);
		return -1;
	}
	json_error_t je;
	json_t *j = json_loads(out, 0, &je);
	const json_t *rtt = json_object_get(j, "rtt_ns");   /* oqb-floor's own, as a summary */
	double p50 = result_num(rtt, "p50");
	json_decref(j);
	if (!(p50 > 0)) {
		snprintf(why, len, "oqb-floor printed no usable rtt_ns.p50: %.120s", out);
		return -1;
	}
	return p50;
}

static int first_cpu(const json_t *res)
{
	const json_t *c = json_array_get(json_object_get(json_object_get(res, "placement"), "cpus"), 0);
	return json_is_integer(c) ? (int)json_integer_value(c) : -1;
}

void trials_canary_cpus(const json_t *server, json_t *const *clients, size_t n, int *a, int *b)
{
	*a = first_cpu(server);
	*b = n ? first_cpu(clients[0]) : -1;
}

/* v as a JSON number, null when it is NaN (missing). */
static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static json_t *placement_of(const json_t *pj)
{
	json_t *cl = json_array();
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(pj, "clients"), i, c)
		json_array_append_new(cl, json_pack("{s:O?}", "placement", json_object_get(c, "placement")));
	return json_pack("{s:O?,s:o}", "server", json_object_get(json_object_get(pj, "server"), "placement"),
			 "clients", cl);
}

json_t *trials_entry(const json_t *pj, unsigned trial, size_t order, double canary_ns, json_t *checks)
{
	char flags[256];
	json_t *e = json_object();
	json_object_set_new(e, "trial", json_integer(trial));
	json_object_set_new(e, "order", json_integer((json_int_t)order));
	json_object_set(e, "dir", json_object_get(pj, "dir"));
	json_object_set_new(e, "achieved_ops", num_or_null(result_achieved(pj)));
	json_object_set_new(e, "saturated", result_saturation(pj) < 0 ? json_null() : json_boolean(result_saturated(pj)));
	json_object_set(e, "measured_ns", json_object_get(pj, "measured_ns"));
	for (size_t k = 0; k < MERGE_NCOUNTERS; k++)
		json_object_set(e, merge_counters[k], json_object_get(pj, merge_counters[k]));
	/* A trial keeps its histograms as the point's summaries are
	 * (result_hist_summary: the HdrHistogram encoding with the exact n,
	 * min, max, sum and overflow), its "all" as the sum of the other two
	 * (result_trial_classes); the point's are merged from them
	 * (trial_hist). */
	json_object_set_new(e, "lat_ns", result_trial_classes(result_lat(pj, NULL)));
	json_t *ht = hosttags_trial(json_object_get(pj, "host_tags"));   /* hosttags.h */
	if (ht) {
		json_object_set_new(e, "host_tags", ht);
		result_trial_compact(e);   /* the shorter of the untagged and the tagged encodings */
	}
	/* the server's service times likewise (bench/server.h) */
	const json_t *svc = result_service(pj, NULL);
	if (result_service(pj, "all")) {
		json_t *sv = json_object(), *cl = result_trial_classes(svc);
		for (int c = 0; c < NCLASSES; c++)
			if (json_object_get(cl, classes[c]))
				json_object_set(sv, classes[c], json_object_get(cl, classes[c]));
		json_decref(cl);
		json_object_set_new(e, "service_ns", sv);
	}
	if (json_object_get(pj, "convergence"))
		json_object_set(e, "convergence", json_object_get(pj, "convergence"));
	if (json_object_get(pj, "driver_s"))
		json_object_set(e, "driver_s", json_object_get(pj, "driver_s"));
	if (json_object_get(pj, "rdma_counters"))
		json_object_set(e, "rdma_counters", json_object_get(pj, "rdma_counters"));
	json_object_set_new(e, "canary_ns", canary_ns > 0 ? json_real(canary_ns) : json_null());
	json_object_set_new(e, "placement", placement_of(pj));
	json_object_set(e, "checks", checks);
	json_object_set_new(e, "flagged", json_boolean(checks_flagged(checks, flags, sizeof flags)));
	return e;
}

/* {"min","median","max","values"} of one percentile over the trials. */
static json_t *spread_of(const json_t *entries, const char *cls, const char *pct)
{
	size_t n = json_array_size(entries), i, m = 0;
	double *v = calloc(n ? n : 1, sizeof *v);
	json_t *vals = json_array(), *e;
	json_array_foreach(entries, i, e) {
		double x = result_num(result_lat(e, cls), pct);
		if (isnan(x) || !(result_num(result_lat(e, cls), "n") > 0))
			continue;
		v[m++] = x;
		json_array_append_new(vals, json_real(x));
	}
	json_t *s;
	if (m) {
		double med = stats_median_inplace(v, m);   /* sorts v */
		s = json_pack("{s:f,s:f,s:f,s:o}", "min", v[0], "median", med, "max", v[m - 1], "values", vals);
	} else {
		json_decref(vals);
		s = json_null();
	}
	free(v);
	return s;
}

/* More distinct check names than any trial has (checks.c writes 14). */
#define MAX_CHECK_ROWS 64

/*
 * Per check name: in how many trials it warned.  The point warns when it
 * warned in at least half of them (every trial's own checks stay in
 * trials[], and a minority is named in the row's note): one trial of five
 * caught by a stall of the host says the trial is off, not the point,
 * whose spread shows it.  A row that warns concerns the numbers its
 * warning trials spoke against; one that passes, what any trial vouched
 * for.  ci_p99 and ci_p999 are judged again on the point's merged
 * histogram, the one its percentiles come from.
 */
static json_t *checks_over(const json_t *entries, const struct check_conf *cc, const struct hist *merged,
			   struct hist *const *th, size_t nth, struct hist *const *ts, const struct hist *sys_merged,
			   int *flagged)
{
	json_t *out = json_array(), *e, *c;
	size_t i, k, n = json_array_size(entries);
	unsigned vouch[MAX_CHECK_ROWS], against[MAX_CHECK_ROWS];
	*flagged = 0;
	json_array_foreach(entries, i, e) {
		json_array_foreach(result_checks(e), k, c) {
			const char *name = result_check_name(c);
			int warn = result_check_warns(c);
			json_t *row = NULL, *r;
			size_t j, at = 0;
			if (!name || (cc && merged && (!strcmp(name, "ci_p99") || !strcmp(name, "ci_p999"))))
				continue;
			json_array_foreach(out, j, r)
				if (strcmp(result_check_name(r), name) == 0) {
					row = r;
					at = j;
				}
			if (!row) {
				if (json_array_size(out) >= MAX_CHECK_ROWS)
					continue;
				row = json_pack("{s:s,s:s,s:i,s:i,s:O?,s:O?}", "name", name, "status", "pass",
						"trials_warned", 0, "trials", (int)n, "threshold",
						result_check_threshold(c), "value", result_check_value(c));
				if (!row)
					continue;
				at = json_array_size(out);
				vouch[at] = against[at] = 0;
				json_array_append_new(out, row);
			}
			/* what the passing trials vouched for, and what the warning
			 * ones spoke against (one trial's tail and another's median:
			 * both) */
			if (warn) {
				against[at] |= checks_concerns(c);
				json_object_set_new(row, "trials_warned",
						    json_integer(json_integer_value(json_object_get(row, "trials_warned")) + 1));
				/* the value of a warning trial, with its threshold
				 * (stationarity's depends on which half-factor
				 * warned) and its detail */
				json_object_set(row, "value", (json_t *)result_check_value(c));
				json_object_set(row, "threshold", (json_t *)result_check_threshold(c));
				if (result_check_detail(c))
					json_object_set_new(row, "detail", json_string(result_check_detail(c)));
			} else {
				vouch[at] |= checks_concerns(c);
				if (!result_check_detail(row) && result_check_detail(c))
					json_object_set_new(row, "detail", json_string(result_check_detail(c)));
			}
		}
	}
	json_array_foreach(out, i, c) {
		long long w = json_integer_value(json_object_get(c, "trials_warned"));
		int warns = w * 2 >= (long long)n && w > 0;
		checks_set_concerns(c, warns ? against[i] : vouch[i] | against[i]);
		if (warns) {
			json_object_set_new(c, "status", json_string("warn"));
			*flagged = 1;
		} else if (w > 0) {
			char note[96];
			snprintf(note, sizeof note, "warned in %lld of %zu trials (see trials[].checks)", w, n);
			json_object_set_new(c, "note", json_string(note));
		}
	}
	if (cc && merged) {
		json_t *ci = json_array(), *r;
		checks_ci(cc, ci, merged);
		if (th && checks_trials(cc, ci, th, nth, merged, ts, sys_merged) < 0)
			json_array_append_new(ci, json_pack("{s:s,s:n,s:f,s:s,s:s,s:[ss]}", "name", "trial_agreement",
							    "value", "threshold", cc->ci_p99, "status", "warn", "detail",
							    "out of memory: not judged", "concerns", "p50", "p99"));
		json_array_foreach(ci, i, r) {
			json_object_set_new(r, "trials", json_integer((json_int_t)n));
			if (!strncmp(result_check_name(r) ?: "", "ci_", 3))
				json_object_set_new(r, "note", json_string("judged on the point's histogram merged over its trials"));
			if (result_check_warns(r))
				*flagged = 1;
			json_array_append(out, r);
		}
		json_decref(ci);
	}
	return out;
}

/* A trial's histogram of class cls of lat (result_class_hist), with
 * `what` in the error. */
static int trial_hist(struct hist *h, const json_t *lat, const char *cls, const char *what, char *err,
		      size_t errlen)
{
	char e[256];
	if (result_class_hist(h, lat, cls, e, sizeof e) < 0) {
		snprintf(err, errlen, "%s: %s", what, e);
		return -1;
	}
	return 0;
}

/*
 * The point's server.service_ns (a copy of the first trial's) merged over
 * the trials that measured it, bin-wise as lat_ns is, with every trial's
 * median beside it ("trials_p50") and how many trials went in ("trials").
 * 0, or -1 with err naming the trial.
 */
static int service_over(json_t *p, const json_t *entries, char *err, size_t errlen)
{
	/* p is this function's to change: the merged classes replace the first trial's */
	json_t *svc = (json_t *)result_service(p, NULL);
	const json_t *e;
	struct hist *sum, *one;
	size_t i, ntr = 0;
	char what[64];
	int rc = 0;

	if (!json_is_object(svc) || !result_service(p, "all"))
		return 0;
	sum = hist_new();
	one = hist_new();
	if (!sum || !one) {
		snprintf(err, errlen, "out of memory merging service times");
		rc = -1;
	}
	for (int c = 0; c < NCLASSES && rc == 0; c++) {
		json_t *p50s = json_array();
		size_t nt = 0;
		hist_reset(sum);
		json_array_foreach(entries, i, e) {
			const json_t *hj = result_service(e, classes[c]);
			if (!hj)
				continue;
			nt++;
			if (!(result_num(hj, "n") > 0)) {
				json_array_append_new(p50s, json_null());
				continue;
			}
			snprintf(what, sizeof what, "trial %zu: server.service_ns.%s", i, classes[c]);
			if (trial_hist(one, result_service(e, NULL), classes[c], what, err, errlen) < 0) {
				rc = -1;
				break;
			}
			hist_merge(sum, one);
			json_array_append_new(p50s, json_integer((json_int_t)hist_percentile(one, 50)));
		}
		if (rc == 0 && nt) {
			json_t *m = result_hist_summary(sum);
			if (m) {
				json_object_set_new(m, "trials_p50", p50s);
				p50s = NULL;
				json_object_set_new(svc, classes[c], m);
			}
		}
		json_decref(p50s);
		if (nt > ntr)
			ntr = nt;
	}
	if (rc == 0)
		json_object_set_new(svc, "trials", json_integer((json_int_t)ntr));
	hist_free(sum);
	hist_free(one);
	return rc;
}

json_t *trials_point(const json_t *pj0, const json_t *entries, const struct check_conf *cc, char *err,
		     size_t errlen)
{
	struct hist *sum[NCLASSES] = { 0 }, *one = hist_new();
	json_t *p = json_deep_copy(pj0), *e, *lat = json_object();
	size_t i, n = json_array_size(entries), nth = 0;
	/* each trial's "all" histogram, and its untagged requests' (ts), for
	 * the bootstrap of trial_agreement; ts is dropped (NULL) when a trial
	 * has none to read (a build before host tags) */
	struct hist **th = calloc(n ? n : 1, sizeof *th), **ts = calloc(n ? n : 1, sizeof *ts);
	struct hist *sys_sum = hist_new();
	int ts_ok = ts && sys_sum;
	double tot[MERGE_NCOUNTERS] = { 0 }, ach = 0, measured = 0, *can = calloc(n ? n : 1, sizeof *can);
	size_t ncan = 0, nsat = 0;
	char what[64];

	for (int c = 0; c < NCLASSES; c++)
		sum[c] = hist_new();
	if (!p || !one || !sum[0] || !sum[1] || !sum[2] || !can || !lat) {
		snprintf(err, errlen, "out of memory merging trials");
		goto fail;
	}
	json_array_foreach(entries, i, e) {
		for (int c = 0; c < NCLASSES; c++) {
			if (!(result_num(result_lat(e, classes[c]), "n") > 0))
				continue;
			snprintf(what, sizeof what, "trial %zu: lat_ns.%s", i, classes[c]);
			if (trial_hist(one, result_lat(e, NULL), classes[c], what, err, errlen) < 0)
				goto fail;
			hist_merge(sum[c], one);
			if (c == 0 && th && (th[nth] = hist_new())) {
				hist_merge(th[nth], one);
				char e2[256];
				/* the untagged requests of the same trial, at the same index */
				if (ts_ok && (ts[nth] = hist_new()) &&
				    result_trial_sys_hist(ts[nth], e, "all", e2, sizeof e2) == 0)
					hist_merge(sys_sum, ts[nth]);
				else
					ts_ok = 0;
				nth++;
			}
		}
		for (size_t k = 0; k < MERGE_NCOUNTERS; k++) {
			double v = result_num(e, merge_counters[k]);   /* the clients' counters (merge.h) */
			tot[k] += isnan(v) ? 0 : v;   /* a trial without one adds none */
		}
		if (!isnan(result_achieved(e)))
			ach += result_achieved(e);
		if (!isnan(result_measured_ns(e)))
			measured += result_measured_ns(e);
		nsat += (size_t)result_saturated(e);
		if (!isnan(result_canary_ns(e)))
			can[ncan++] = result_canary_ns(e);
	}
	for (int c = 0; c < NCLASSES; c++)
		json_object_set_new(lat, classes[c], result_hist_summary(sum[c]));
	json_object_set_new(p, "lat_ns", lat);
	lat = NULL;
	if (service_over(p, entries, err, errlen) < 0 || hosttags_over(p, entries, err, errlen) < 0)
		goto fail;
	for (size_t k = 0; k < MERGE_NCOUNTERS; k++)
		json_object_set_new(p, merge_counters[k], json_integer((json_int_t)tot[k]));
	json_object_set_new(p, "achieved_ops", json_real(n ? ach / (double)n : 0));
	json_t *ctr = devctr_over(entries);   /* the device's counters, every trial's added */
	if (ctr)
		json_object_set_new(p, "rdma_counters", ctr);
	json_object_set_new(p, "measured_ns", json_integer((json_int_t)measured));
	if (result_saturation(pj0) >= 0)
		json_object_set_new(p, "saturated", json_boolean(nsat > 0));
	json_object_set_new(p, "saturated_trials", json_integer((json_int_t)nsat));
	/* stats_median_inplace sorts can[]: from here can[0] is the lowest canary and
	 * can[ncan - 1] the highest */
	json_object_set_new(p, "canary_ns", ncan ? json_real(stats_median_inplace(can, ncan)) : json_null());
	int flagged;
	json_t *ck = checks_over(entries, cc, sum[0], th, nth, ts_ok ? ts : NULL, ts_ok ? sys_sum : NULL, &flagged), *row;
	/* trials that ran under different canaries measured different
	 * machines: say so where their disagreement is reported */
	double spread = ncan >= 2 && can[0] > 0 ? can[ncan - 1] / can[0] : 1;
	if (cc && spread > cc->canary_drift)
		json_array_foreach(ck, i, row) {
			if (strcmp(result_check_name(row) ?: "", "trial_agreement") != 0)
				continue;
			if (result_check_warns(row)) {
				char cause[300];
				snprintf(cause, sizeof cause, "the trials' canaries read %.0f to %.0f ns (%.1fx, more than "
					 "canary_drift %.2g): the machine's floor changed between trials, so they measured "
					 "different machines (docs/trust.md, \"Environment and canary\")", can[0],
					 can[ncan - 1], spread, cc->canary_drift);
				json_object_set_new(row, "cause", json_string(cause));
			}
			break;
		}
	json_object_set_new(p, "flagged_by", checks_flagged_by(ck));
	json_object_set_new(p, "checks", ck);
	json_object_set_new(p, "flagged", json_boolean(flagged));
	json_object_set_new(p, "spread", json_pack("{s:{s:o,s:o},s:{s:o,s:o},s:{s:o,s:o}}",
		"all", "p50", spread_of(entries, "all", "p50"), "p99", spread_of(entries, "all", "p99"),
		"nilext", "p50", spread_of(entries, "nilext", "p50"), "p99", spread_of(entries, "nilext", "p99"),
		"non_nilext", "p50", spread_of(entries, "non_nilext", "p50"), "p99",
		spread_of(entries, "non_nilext", "p99")));
	/* per trial, in the entries: not the first trial's at the point */
	json_object_del(p, "chunks");
	json_object_del(p, "convergence");
	json_object_del(p, "canary_note");
	json_object_set_new(p, "repeat", json_integer((json_int_t)n));
	json_object_set(p, "trials", (json_t *)entries);
	for (int c = 0; c < NCLASSES; c++)
		hist_free(sum[c]);
	hist_free(one);
	for (size_t t = 0; t < nth; t++) {
		hist_free(th[t]);
		if (ts)
			hist_free(ts[t]);
	}
	free(th);
	free(ts);
	hist_free(sys_sum);
	free(can);
	return p;
fail:
	for (int c = 0; c < NCLASSES; c++)
		hist_free(sum[c]);
	hist_free(one);
	for (size_t t = 0; t < nth; t++) {
		hist_free(th[t]);
		if (ts)
			hist_free(ts[t]);
	}
	free(th);
	free(ts);
	hist_free(sys_sum);
	free(can);
	json_decref(lat);
	json_decref(p);
	return NULL;
}

void rerun_init(struct rerun_policy *p, long long per_trial, long long budget)
{
	*p = (struct rerun_policy){ .per_trial = per_trial, .budget = budget };
}

int rerun_decide(struct rerun_policy *p, unsigned n, int disturbed, enum rerun_event *ev)
{
	*ev = RR_NONE;
	if (disturbed && !p->stopped && n < p->per_trial) {
		if (p->budget < 0 || p->used < p->budget) {
			p->used++;
			return 1;
		}
		p->stopped = RR_BUDGET_STOP;
		*ev = RR_BUDGET_STOP;
		return 0;
	}
	/* kept: calm, or disturbed after its last rerun (or with reruns off) */
	if (!p->stopped && p->per_trial > 0) {
		p->futile = disturbed ? p->futile + 1 : 0;
		if (p->futile >= 3) {
			p->stopped = RR_FUTILE_STOP;
			*ev = RR_FUTILE_STOP;
		}
	} else if (p->stopped == RR_FUTILE_STOP && !disturbed) {
		p->futile = 0;
		p->stopped = 0;
		*ev = RR_RESUME;
	}
	return 0;
}

int regime_same(double a, double b, double factor)
{
	return result_regime_same(a, b, factor);   /* the rule's one home: the finding applies it too */
}

double regime_mode(const double *v, size_t n, double factor, double tie, size_t *count)
{
	size_t best = n, bestn = 0;
	*count = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(v[i] > 0))
			continue;
		size_t c = 0;
		for (size_t j = 0; j < n; j++)
			c += v[j] > 0 && regime_same(v[i], v[j], factor);
		int better = c > bestn;
		if (!better && c == bestn && best < n) {
			/* a tie: nearer `tie` on a log scale, or the lower */
			if (tie > 0)
				better = fabs(log(v[i] / tie)) < fabs(log(v[best] / tie));
			else
				better = v[i] < v[best];
		}
		if (better) {
			best = i;
			bestn = c;
		}
	}
	if (best == n)
		return -1;
	double *in = malloc(bestn * sizeof *in), med;
	size_t m = 0;
	if (!in)
		return v[best];
	for (size_t j = 0; j < n; j++)
		if (v[j] > 0 && regime_same(v[best], v[j], factor))
			in[m++] = v[j];
	med = stats_median_inplace(in, m);
	free(in);
	*count = m;
	return med;
}

double regime_reference(const double *kept, size_t nkept, double canary, const double *run, size_t nrun,
			double factor)
{
	double tie = nrun >= 3 ? stats_median(run, nrun) : -1;
	size_t cnt;
	if (factor <= 0 || !(canary > 0))
		return -1;
	if (nkept == 0)
		return tie;
	double *v = malloc((nkept + 1) * sizeof *v);
	if (!v)
		return -1;
	memcpy(v, kept, nkept * sizeof *v);
	v[nkept] = canary;
	double ref = regime_mode(v, nkept + 1, factor, tie, &cnt);
	free(v);
	return ref;
}

double *entry_canaries(const json_t *entries, size_t *n)
{
	size_t i;
	const json_t *e;
	double *v = malloc((json_array_size(entries) ? json_array_size(entries) : 1) * sizeof *v);
	*n = 0;
	if (!v)
		return NULL;
	json_array_foreach(entries, i, e) {
		double c = result_canary_ns(e);
		if (c > 0)
			v[(*n)++] = c;
	}
	return v;
}

long regime_stray(const json_t *entries, double factor, double *ref)
{
	size_t nc, cnt, i;
	const json_t *e;
	long stray = -1;
	if (factor <= 0 || json_array_size(entries) < 3)
		return -1;
	double *v = entry_canaries(entries, &nc);
	if (!v)
		return -1;
	*ref = regime_mode(v, nc, factor, -1, &cnt);
	free(v);
	if (*ref <= 0 || cnt < 2 || 2 * cnt <= nc)
		return -1;
	json_array_foreach(entries, i, e) {
		double c = result_canary_ns(e);
		if (c > 0 && !regime_same(c, *ref, factor) && !result_regime_rerun(e)) {
			stray = (long)i;
			break;
		}
	}
	return stray;
}

/* trial_agreement judged on one regime's m trials (checks_trials: their
 * raw and untagged "all" histograms), as {status, value, threshold,
 * concerns, detail}; NULL below 3 trials, without cc, or when a histogram
 * does not read back (the regime then has no such row). */
static json_t *regime_agreement(const struct check_conf *cc, const json_t *const *in, size_t m)
{
	struct hist **raw = calloc(m ? m : 1, sizeof *raw), **sys = calloc(m ? m : 1, sizeof *sys);
	struct hist *rs = hist_new(), *ss = hist_new();
	json_t *rows = json_array(), *out = NULL;
	char e[256];
	int ok = cc && m >= 3 && raw && sys && rs && ss && rows;

	for (size_t i = 0; ok && i < m; i++) {
		raw[i] = hist_new();
		sys[i] = hist_new();
		ok = raw[i] && sys[i] && result_class_hist(raw[i], result_lat(in[i], NULL), "all", e, sizeof e) == 0 &&
		     result_trial_sys_hist(sys[i], in[i], "all", e, sizeof e) == 0;
		if (ok) {
			hist_merge(rs, raw[i]);
			hist_merge(ss, sys[i]);
		}
	}
	if (ok && checks_trials(cc, rows, raw, m, rs, sys, ss) == 0 && json_array_size(rows) == 1) {
		out = json_array_get(rows, 0);
		json_incref(out);
	}
	for (size_t i = 0; i < m && raw && sys; i++) {
		hist_free(raw[i]);
		hist_free(sys[i]);
	}
	free(raw);
	free(sys);
	hist_free(rs);
	hist_free(ss);
	json_decref(rows);
	return out;
}

/*
 * canary_regime.regimes of a mixed point: its kept trials with a canary
 * grouped by regime, the point's own (ref) first, then each time the
 * regime most of the rest share (regime_mode, a tie to the lower), each
 * with its numbers (result_regime_numbers).  A trial without a canary is
 * in none.  With cc, a regime of 3 or more trials also judges its own
 * trial_agreement (regime_agreement).  NULL when a histogram does not read back (err).
 */
static json_t *regimes_of(const json_t *entries, double ref, double factor, const struct check_conf *cc, char *err,
			  size_t errlen)
{
	size_t n = json_array_size(entries), left = 0, i;
	const json_t **in = calloc(n ? n : 1, sizeof *in), *e;
	unsigned char *done = calloc(n ? n : 1, 1);
	double *v = malloc((n ? n : 1) * sizeof *v), mode = ref;
	json_t *out = json_array();

	if (!in || !done || !v || !out) {
		snprintf(err, errlen, "out of memory grouping trials by regime");
		json_decref(out);
		out = NULL;
		left = 0;
	}
	json_array_foreach(entries, i, e) {
		if (!out)
			break;
		if (result_canary_ns(e) > 0)
			left++;
		else
			done[i] = 1;
	}
	while (left) {
		size_t m = 0, k = 0, cnt;
		json_array_foreach(entries, i, e)
			if (!done[i] && regime_same(result_canary_ns(e), mode, factor)) {
				in[m++] = e;
				done[i] = 1;
			}
		json_t *rg = m ? result_regime_numbers(in, m, err, errlen) : NULL;
		if (!rg) {
			if (!m)
				snprintf(err, errlen, "no trial in the regime of %.0f ns", mode);
			json_decref(out);
			out = NULL;
			break;
		}
		json_t *ag = regime_agreement(cc, in, m);
		if (ag)
			json_object_set_new(rg, "trial_agreement", ag);
		json_array_append_new(out, rg);
		left -= m;
		json_array_foreach(entries, i, e)
			if (!done[i])
				v[k++] = result_canary_ns(e);
		if (k)
			mode = regime_mode(v, k, factor, -1, &cnt);
	}
	free(in);
	free(done);
	free(v);
	return out;
}

json_t *regime_of_point(const json_t *entries, const json_t *discarded, double factor, double run_median,
			const struct check_conf *cc)
{
	size_t nc, cnt, i, aside = 0;
	const json_t *e;
	if (factor <= 0 || json_array_size(entries) == 0)
		return NULL;
	double *v = entry_canaries(entries, &nc);
	if (!v)
		return NULL;
	double ref = regime_mode(v, nc, factor, run_median, &cnt);
	free(v);
	if (ref <= 0)
		return NULL;
	json_array_foreach(discarded, i, e)
		aside += !strcmp(result_set_aside_reason(e) ?: "", "canary_regime");
	json_t *other = json_array();
	json_array_foreach(entries, i, e) {
		double c = result_canary_ns(e);
		json_int_t trial = result_trial_no(e);
		if (c > 0 && !regime_same(c, ref, factor))
			json_array_append_new(other, json_pack("{s:I,s:f}", "trial", trial, "canary_ns", c));
	}
	json_t *r = json_pack("{s:f,s:f,s:I,s:I,s:o,s:I,s:b}", "median_ns", ref, "factor", factor, "trials",
			      (json_int_t)cnt, "of", (json_int_t)nc, "other", other, "set_aside", (json_int_t)aside,
			      "mixed", json_array_size(other) > 0);
	if (json_array_size(other)) {
		char note[400];
		snprintf(note, sizeof note, "%zu of %zu trials ran in another canary regime than the point's %.0f ns "
			 "(canary_regime_factor %g) and were kept: the reruns (rerun_disturbed, rerun_budget) ran out "
			 "before the machine came back (%zu set aside); the trials measured two machines, and trial_agreement judges them as they are",
			 json_array_size(other), nc, ref, factor, aside);
		json_object_set_new(r, "note", json_string(note));
		char err[300];
		json_t *rgs = regimes_of(entries, ref, factor, cc, err, sizeof err);
		if (rgs)
			json_object_set_new(r, "regimes", rgs);
		else
			json_object_set_new(r, "regimes_error", json_string(err));
	}
	return r;
}

void regime_line(char *buf, size_t len, const json_t *p)
{
	const json_t *rgs = result_regimes(p), *rg;
	size_t i, o = 0;
	buf[0] = '\0';
	json_array_foreach(rgs, i, rg) {
		char p50[32] = "-", sp99[32] = "-";
		size_t nt = json_array_size(result_regime_trials(rg));
		double a = result_num(result_lat(rg, "all"), "p50"), b = result_num(result_sys_lat(rg, "all"), "p99");
		if (result_num(result_lat(rg, "all"), "n") > 0 && !isnan(a))
			fmt_ns(p50, sizeof p50, a);
		if (result_num(result_sys_lat(rg, "all"), "n") > 0 && !isnan(b))
			fmt_ns(sp99, sizeof sp99, b);
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%.0f ns (%zu%s) p50 %s sysP99 %s", i ? " | " : "regimes ",
					      result_canary_ns(rg), nt, i ? "" : nt == 1 ? " trial" : " trials", p50, sp99);
	}
}
