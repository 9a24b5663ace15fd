/*
 * result_access.c - typed reads of run.json's fields (result.h): one
 * spelling of each key, one meaning of a missing number (NaN).
 */
#include "result.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double result_num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

const json_t *result_points(const json_t *run)
{
	return json_object_get(run, "points");
}

const json_t *result_lat(const json_t *o, const char *cls)
{
	const json_t *lat = json_object_get(o, "lat_ns");
	return cls ? json_object_get(lat, cls) : lat;
}

const json_t *result_service(const json_t *p, const char *cls)
{
	const json_t *srv = json_object_get(p, "server");
	/* a point keeps them under "server"; a trial, and a server's own
	 * result, at the top */
	const json_t *svc = json_object_get(json_is_object(srv) ? srv : p, "service_ns");
	return cls ? json_object_get(svc, cls) : svc;
}

const json_t *result_checks(const json_t *p)
{
	return json_object_get(p, "checks");
}

int result_saturation(const json_t *p)
{
	const json_t *v = json_object_get(p, "saturated");
	return json_is_boolean(v) ? json_is_true(v) : -1;
}

const json_t *result_spread(const json_t *p, const char *cls, const char *pct)
{
	const json_t *s = json_object_get(json_object_get(json_object_get(p, "spread"), cls), pct);
	return json_is_object(s) ? s : NULL;
}

const json_t *result_trials(const json_t *p)
{
	return json_object_get(p, "trials");
}

int result_saturated(const json_t *p)
{
	return json_is_true(json_object_get(p, "saturated"));
}

double result_offered(const json_t *p)
{
	return result_num(p, "offered_ops");
}

double result_achieved(const json_t *p)
{
	return result_num(p, "achieved_ops");
}

double result_canary_ns(const json_t *p)
{
	return result_num(p, "canary_ns");
}

double result_run_canary(const json_t *run)
{
	const json_t *pts = result_points(run), *p;
	double *v = calloc(json_array_size(pts) ? json_array_size(pts) : 1, sizeof *v), m;
	size_t i, n = 0;

	if (!v)
		return NAN;
	json_array_foreach(pts, i, p)
		if (!isnan(result_canary_ns(p)))
			v[n++] = result_canary_ns(p);
	m = stats_median_inplace(v, n);
	free(v);
	return m;
}

/* p's sweep field, JSON null when it has none (so that two points
 * without a sweep compare equal). */
static const json_t *sweep_of(const json_t *p, const char *field)
{
	const json_t *v = json_object_get(json_object_get(p, "sweep"), field);
	return v ? v : json_null();
}

const json_t *result_find_point(const json_t *points, const json_t *bp)
{
	const char *sys = json_string_value(json_object_get(bp, "system"));
	const json_t *bo = json_object_get(bp, "offered_ops");
	const json_t *bn = json_object_get(bp, "outstanding");
	size_t i;
	const json_t *p;

	json_array_foreach(points, i, p) {
		const char *s = json_string_value(json_object_get(p, "system"));
		if (!s || !sys || strcmp(s, sys) != 0)
			continue;
		if (!json_equal(sweep_of(bp, "key"), sweep_of(p, "key")) ||
		    !json_equal(sweep_of(bp, "value"), sweep_of(p, "value")))
			continue;
		if (json_is_number(bo)) {
			const json_t *o = json_object_get(p, "offered_ops");
			double a = json_number_value(bo), b = json_number_value(o);
			if (json_is_number(o) && fabs(a - b) <= 1e-9 * fmax(fabs(a), 1))
				return p;
		} else if (json_is_integer(bn)) {
			if (json_integer_value(json_object_get(p, "outstanding")) == json_integer_value(bn))
				return p;
		}
	}
	return NULL;
}
