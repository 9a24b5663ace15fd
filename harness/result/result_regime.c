/*
 * result_regime.c - a point's numbers per canary regime (result.h, the
 * block "result_regime.c"; docs/trust.md, "Canary regimes").
 *
 * A host with several floors (the canary reads about 140 ns for minutes,
 * then about 550 ns) gives a point whose kept trials ran on two machines
 * when the reruns ran out.  Its merged numbers mix them; so run.json's
 * canary_regime of such a point also holds "regimes": per regime, the
 * trials in it and their numbers, from their histograms merged counter by
 * counter (never averaged percentiles).  A regime object is shaped as a
 * point is for the readers it shares with one: canary_ns, lat_ns.CLS
 * (result_lat), host_tags.sys_lat_ns.CLS and host_tags.tagged_frac.CLS
 * (result_sys_lat, result_tagged_frac) and achieved_ops (result_achieved).
 * The rule for which canaries share a regime lives here too, so that the
 * finding (trust/) and the run (run/trials.c) apply the same one.
 */
#include "result.h"
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const cls[] = { "all", "nilext", "non_nilext" };
#define NCLS 3

int result_regime_same(double a, double b, double factor)
{
	if (factor <= 0 || !(a > 0) || !(b > 0))
		return 1;
	return a < b * factor && b < a * factor;
}

/* Only the keys of summary s named in keys (a new object; s is freed). */
static json_t *keep_keys(json_t *s, const char *const *keys, size_t nk)
{
	json_t *o = json_object();
	for (size_t k = 0; o && s && k < nk; k++) {
		json_t *v = json_object_get(s, keys[k]);
		if (v)
			json_object_set(o, keys[k], v);
	}
	json_decref(s);
	return o;
}

/* The class summaries of the trials' histograms of one kind merged: sys 0
 * their lat_ns, sys 1 their untagged requests (host_tags.sys_lat_ns).
 * A new object {all, nilext, non_nilext}, or NULL with err. */
static json_t *merged(const json_t *const *t, size_t n, int sys, char *err, size_t errlen)
{
	static const char *const lat_keys[] = { "n", "p50", "p99", "p999", "p50_ci", "p99_ci" };
	static const char *const sys_keys[] = { "n", "p50", "p99" };
	struct hist *sum = hist_new(), *one = hist_new();
	json_t *out = json_object();
	char e[256];
	int rc = sum && one && out ? 0 : -1;

	if (rc < 0)
		snprintf(err, errlen, "out of memory merging a regime's trials");
	for (int c = 0; c < NCLS && rc == 0; c++) {
		hist_reset(sum);
		for (size_t i = 0; i < n && rc == 0; i++) {
			if (!(result_num(result_lat(t[i], cls[c]), "n") > 0))
				continue;   /* no request of this class: nothing to add */
			int r = sys ? result_trial_sys_hist(one, t[i], cls[c], e, sizeof e)
				    : result_class_hist(one, result_lat(t[i], NULL), cls[c], e, sizeof e);
			if (r < 0) {
				snprintf(err, errlen, "trial %ld: %s.%s: %s", result_trial_no(t[i]),
					 sys ? "host_tags.sys_lat_ns" : "lat_ns", cls[c], e);
				rc = -1;
			} else {
				hist_merge(sum, one);
			}
		}
		if (rc == 0)
			json_object_set_new(out, cls[c], sys ? keep_keys(result_hist_summary(sum), sys_keys, 3)
							     : keep_keys(result_hist_summary(sum), lat_keys, 6));
	}
	hist_free(sum);
	hist_free(one);
	if (rc < 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

json_t *result_regime_numbers(const json_t *const *t, size_t n, char *err, size_t errlen)
{
	double *can = malloc((n ? n : 1) * sizeof *can), ach = 0;
	json_t *nos = json_array(), *lat = NULL, *sys = NULL, *r = NULL;
	size_t nc = 0, nt = 0, ntags = 0;

	if (!can || !nos) {
		snprintf(err, errlen, "out of memory merging a regime's trials");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		double c = result_canary_ns(t[i]), a = result_achieved(t[i]);
		if (c > 0)
			can[nc++] = c;
		/* a point's achieved_ops is the sum over its trials / their
		 * count (trials.c), a trial without one adding none: likewise */
		ach += isnan(a) ? 0 : a;
		json_array_append_new(nos, json_integer(result_trial_no(t[i])));
		ntags += result_host_tags(t[i]) != NULL;
		nt++;
	}
	if (!(lat = merged(t, n, 0, err, errlen)))
		goto out;
	/* the untagged requests only when every trial has them (as the
	 * point's host_tags: hosttags_over) */
	if (n && ntags == n && !(sys = merged(t, n, 1, err, errlen)))
		goto out;
	r = json_pack("{s:o,s:O,s:O,s:o}", "canary_ns", nc ? json_real(stats_median_inplace(can, nc)) : json_null(),
		      "trials", nos, "lat_ns", lat, "achieved_ops", json_real(nt ? ach / (double)nt : 0));
	if (r && sys) {
		json_t *tf = json_object();
		for (int c = 0; c < NCLS; c++) {
			double k = 0, m = result_num(result_lat(r, cls[c]), "n");
			for (size_t i = 0; i < n; i++) {
				double v = result_host_count(t[i], RESULT_TAGGED, cls[c]);
				k += isnan(v) ? 0 : v;
			}
			json_object_set_new(tf, cls[c], json_real(m > 0 ? k / m : 0));
		}
		json_object_set_new(r, "host_tags", json_pack("{s:O,s:o}", "sys_lat_ns", sys, "tagged_frac", tf));
	}
	if (!r)
		snprintf(err, errlen, "out of memory merging a regime's trials");
out:
	free(can);
	json_decref(nos);
	json_decref(lat);
	json_decref(sys);
	return r;
}

const json_t *result_regimes(const json_t *p)
{
	const json_t *rg = json_object_get(json_object_get(p, "canary_regime"), "regimes");
	return json_is_array(rg) && json_array_size(rg) ? rg : NULL;
}

const json_t *result_regime_trials(const json_t *rg)
{
	const json_t *t = json_object_get(rg, "trials");
	return json_is_array(t) ? t : NULL;
}

double result_regime_factor(const json_t *p)
{
	return result_num(json_object_get(p, "canary_regime"), "factor");
}

const json_t *result_regime_agreement(const json_t *rg)
{
	const json_t *a = json_object_get(rg, "trial_agreement");
	return json_is_object(a) ? a : NULL;
}

double result_regime_canary(const json_t *p)
{
	double c = result_num(json_object_get(p, "canary_regime"), "median_ns");
	return c > 0 ? c : result_canary_ns(p);
}

double result_pair_left_out(const json_t *pr)
{
	return result_num(pr, "rounds_left_out");
}
