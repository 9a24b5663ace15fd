/*
 * result_match.c - which points of two runs measured the same thing
 * (result.h): a knee-searching run's points as fractions of its knee,
 * and the part of a config that decides what is measured.
 */
#include "result.h"

#include <math.h>
#include <string.h>

double result_knee(const json_t *run, double *lo, double *hi)
{
	const json_t *k = json_object_get(run, "knee");
	const json_t *br = json_object_get(k, "bracket_ops");
	const char *by = json_string_value(json_object_get(k, "found_by"));
	double ops = result_num(k, "ops");

	if (lo)
		*lo = NAN;
	if (hi)
		*hi = NAN;
	if (!by || strcmp(by, "search") != 0 || !(ops > 0))
		return NAN;
	if (lo)
		*lo = json_is_number(json_array_get(br, 0)) ? json_number_value(json_array_get(br, 0)) : ops;
	if (hi)
		*hi = json_is_number(json_array_get(br, 1)) ? json_number_value(json_array_get(br, 1)) : INFINITY;
	return ops;
}

double result_knee_fraction(const json_t *run, const json_t *p)
{
	const json_t *k = json_object_get(run, "knee");
	const json_t *fr = json_object_get(k, "fractions"), *l;
	double knee = result_knee(run, NULL, NULL), off = result_num(p, "offered_ops");
	size_t i;

	if (isnan(knee) || !(off > 0))
		return NAN;
	json_array_foreach(json_object_get(k, "loads_ops"), i, l)
		if (json_is_number(l) && json_number_value(l) == off && json_is_number(json_array_get(fr, i)))
			return json_number_value(json_array_get(fr, i));
	return off / knee;
}

int result_fraction_same(double a, double b)
{
	return isfinite(a) && isfinite(b) && fabs(a - b) <= RESULT_FRACTION_TOL * fmax(fabs(a), fabs(b));
}

void result_whole_reals(json_t *v)
{
	const char *k;
	json_t *c;
	size_t i;
	void *tmp;

	if (json_is_object(v)) {
		json_object_foreach_safe(v, tmp, k, c) {
			double d = json_real_value(c);
			if (json_is_real(c) && d == floor(d) && fabs(d) < 9e15)
				json_object_set_new(v, k, json_integer((json_int_t)d));
			else
				result_whole_reals(c);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, c) {
			double d = json_real_value(c);
			if (json_is_real(c) && d == floor(d) && fabs(d) < 9e15)
				json_array_set_new(v, i, json_integer((json_int_t)d));
			else
				result_whole_reals(c);
		}
	}
}

json_t *result_config_measured(const json_t *config, int drop_loads)
{
	static const char *const drop[] = { "name", "description", "seed", "repeat", "canary", "checks",
					    "check", "timeouts", "hosts", NULL };
	static const char *const drop_in[][2] = { { "server", "cpus" }, { "clients", "cpus" },
						  { "verbs", "addr" }, { "verbs", "port" },
						  { "verbs", "device" }, { "arrival", "loads_ops" } };
	size_t nin = sizeof drop_in / sizeof *drop_in - (drop_loads ? 0 : 1);
	json_t *c = json_deep_copy(config);

	if (!c)
		return NULL;
	for (size_t i = 0; drop[i]; i++)
		json_object_del(c, drop[i]);
	for (size_t i = 0; i < nin; i++)
		json_object_del(json_object_get(c, drop_in[i][0]), drop_in[i][1]);
	result_whole_reals(c);
	return c;
}
