/*
 * result_verdict.c - the reads verdict/ (oqb compare, oqb ab, oqb
 * history) makes of run.json: a point's name and checks, a trial's round,
 * its percentiles of either tail (all requests, or the untagged ones: the
 * system's) and its tagged fraction (result.h, the last block).
 */
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *result_system(const json_t *p)
{
	return json_string_value(json_object_get(p, "system"));
}

const char *result_status(const json_t *run)
{
	return json_string_value(json_object_get(run, "status"));
}

long result_round(const json_t *t)
{
	const json_t *r = json_object_get(t, "round");
	return json_is_integer(r) && json_integer_value(r) > 0 ? (long)json_integer_value(r) : -1;
}

int result_trial_hist(struct hist *h, const json_t *t, int sys, char *err, size_t errlen)
{
	if (sys) {
		if (!result_host_tags(t)) {
			snprintf(err, errlen, "no host_tags (a run from before requests were tagged)");
			hist_reset(h);
			return -1;
		}
		return result_trial_sys_hist(h, t, "all", err, errlen);
	}
	return result_class_hist(h, result_lat(t, NULL), "all", err, errlen);
}

double result_trial_pct(const json_t *t, int sys, double pct)
{
	if (!sys) {
		/* the raw tail's numbers are in the summary: nothing to decode */
		const json_t *s = result_lat(t, "all");
		const char *key = pct == 50 ? "p50" : pct == 99 ? "p99" : pct == 99.9 ? "p999" : NULL;
		if (key && result_num(s, "n") > 0)
			return result_num(s, key);
		if (key)
			return NAN;
	}
	struct hist *h = hist_new();
	char e[256];
	double v = NAN;
	if (h && result_trial_hist(h, t, sys, e, sizeof e) == 0 && h->n > 0)
		v = (double)hist_percentile(h, pct);
	hist_free(h);
	return v;
}
