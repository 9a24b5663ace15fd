/*
 * result_trust.c - typed reads of what run.json says about trusting a
 * point (result.h, the block "result_trust.c"): its checks and flagged_by,
 * the run's finding, a point's host_tags (the untagged requests' summary,
 * the tagged and unattributed fractions, which raw percentiles the host
 * set) and the server's workers.  One spelling of each key; a missing
 * number is NaN (result_num).
 */
#include "result.h"

#include <math.h>
#include <string.h>

const json_t *result_flagged_by(const json_t *p)
{
	const json_t *fb = json_object_get(p, "flagged_by");
	return json_is_object(fb) ? fb : NULL;
}

const json_t *result_flagged_for(const json_t *p, const char *q)
{
	const json_t *fb = result_flagged_by(p), *by = json_object_get(fb, q);
	if (!by && fb && !strcmp(q, "sys_p99"))
		by = json_object_get(fb, "p99");   /* a point from before the system's P99 was judged apart */
	return json_is_array(by) ? by : NULL;
}

const json_t *result_finding(const json_t *run)
{
	const json_t *f = json_object_get(run, "finding");
	return json_is_object(f) ? f : NULL;
}

const json_t *result_host_tags(const json_t *p)
{
	const json_t *ht = json_object_get(p, "host_tags");
	return json_is_object(ht) ? ht : NULL;
}

const json_t *result_sys_lat(const json_t *p, const char *cls)
{
	const json_t *sl = json_object_get(result_host_tags(p), "sys_lat_ns");
	return cls ? json_object_get(sl, cls) : sl;
}

double result_tagged_frac(const json_t *p, const char *cls)
{
	const json_t *ht = result_host_tags(p);
	double f = result_num(json_object_get(ht, "tagged_frac"), cls);
	if (!isnan(f))
		return f;
	/* a trial keeps the count, not the fraction */
	double n = result_num(result_lat(p, cls), "n");
	double k = result_num(json_object_get(ht, "tagged"), cls);
	return ht && n > 0 && k >= 0 ? k / n : NAN;
}

double result_unattributed_frac(const json_t *p, const char *cls)
{
	return result_num(json_object_get(result_host_tags(p), "unattributed_frac"), cls);
}

int result_set_by_host(const json_t *p, const char *pct)
{
	return json_is_true(json_object_get(json_object_get(result_host_tags(p), "set_by_host"), pct));
}

double result_server_workers(const json_t *p)
{
	return result_num(json_object_get(p, "server"), "workers");
}
