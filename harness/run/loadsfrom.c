/*
 * loadsfrom.c - `oqb run --loads-from BASE`: BASE's loads as this run's
 * fixed list, after checking that BASE ran the same experiment
 * (loadsfrom.h).
 */
#include "loadsfrom.h"
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* base's loads into a JSON array: knee.loads_ops when it has them (the
 * plan, whole even when the run stopped early), else its points'
 * offered loads, each once, ascending.  NULL when there is none. */
static json_t *base_loads(const json_t *base)
{
	const json_t *kl = result_knee_loads(base), *p;
	size_t i, n = 0, np = json_array_size(result_points(base));
	json_t *out = json_array();
	double *v = calloc(np + json_array_size(kl) + 1, sizeof *v);

	if (!out || !v) {
		free(v);
		json_decref(out);
		return NULL;
	}
	json_array_foreach(kl, i, p)
		if (json_is_number(p) && json_number_value(p) > 0)
			v[n++] = json_number_value(p);
	if (!n)
		json_array_foreach(result_points(base), i, p)
			if (result_offered(p) > 0)
				v[n++] = result_offered(p);
	qsort(v, n, sizeof *v, cmp_dbl);
	for (i = 0; i < n; i++)
		if (!i || v[i] != v[i - 1])   /* whole loads as integers: the list reads as typed */
			json_array_append_new(out, v[i] == floor(v[i]) && v[i] < 9e15 ? json_integer((json_int_t)v[i])
										  : json_real(v[i]));
	free(v);
	if (!json_array_size(out)) {
		json_decref(out);
		return NULL;
	}
	return out;
}

json_t *loadsfrom_read(const char *path, const char *const *sets, size_t nsets, char **set, char *err,
		       size_t errlen)
{
	char file[4200];
	struct stat st;
	json_t *base, *loads;

	*set = NULL;
	for (size_t i = 0; i < nsets; i++)
		if (strncmp(sets[i], "arrival.loads_ops", 17) == 0) {
			snprintf(err, errlen, "--loads-from %s and --set %s both set the loads; give one of them",
				 path, sets[i]);
			return NULL;
		}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(file, sizeof file, "%s/run.json", path);
	else
		snprintf(file, sizeof file, "%s", path);
	base = result_load(file, err, errlen);
	if (!base) {
		size_t l = strlen(err);
		if (l + 16 < errlen) {   /* name the option first */
			memmove(err + 14, err, l + 1);
			memcpy(err, "--loads-from: ", 14);
		}
		return NULL;
	}
	if (!json_array_size(result_points(base))) {
		snprintf(err, errlen, "--loads-from %s: the base run has no points (it stopped before its first "
			 "point, or its knee search failed), so it has no loads to take; give a run that "
			 "finished (oqb run prints its run.json)", file);
		json_decref(base);
		return NULL;
	}
	loads = base_loads(base);
	if (!loads) {
		snprintf(err, errlen, "--loads-from %s: no point of the base run has an offered load (a closed-loop "
			 "run?); --loads-from takes the loads of an open-loop (poisson) run", file);
		json_decref(base);
		return NULL;
	}
	char *txt = json_dumps(loads, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(loads);
	size_t len = txt ? strlen(txt) + sizeof "arrival.loads_ops=" : 0;
	*set = txt ? malloc(len) : NULL;
	if (!*set) {
		free(txt);
		json_decref(base);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(*set, len, "arrival.loads_ops=%s", txt);
	free(txt);
	return base;
}

/* The first key where a and b differ, as "workload.value_size", into
 * path (which holds the prefix so far); 1 when one differs. */
static int first_diff(const json_t *a, const json_t *b, char *path, size_t len)
{
	const char *k;
	const json_t *v;
	size_t l = strlen(path);

	if (json_equal(a, b))
		return 0;
	if (!json_is_object(a) || !json_is_object(b))
		return 1;
	json_object_foreach((json_t *)a, k, v) {
		snprintf(path + l, len - l, "%s%s", l ? "." : "", k);
		if (first_diff(v, json_object_get(b, k), path, len))
			return 1;
	}
	json_object_foreach((json_t *)b, k, v) {
		snprintf(path + l, len - l, "%s%s", l ? "." : "", k);
		if (!json_object_get(a, k))
			return 1;
	}
	path[l] = '\0';
	return 1;
}

/* The value at a dotted path, compact, or "(not set)". */
static void value_at(const json_t *o, const char *path, char *buf, size_t len)
{
	char key[256];
	const char *p = path;
	while (o && *p) {
		size_t n = strcspn(p, ".");
		snprintf(key, sizeof key, "%.*s", (int)n, p);
		o = json_object_get(o, key);
		p += n + (p[n] == '.');
	}
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(6)) : NULL;
	snprintf(buf, len, "%.80s%s", s ? s : "(not set)", s && strlen(s) > 80 ? "..." : "");
	free(s);
}

int loadsfrom_check(const json_t *base, const json_t *config, const char *path, const char *cfgpath, char *err,
		    size_t errlen)
{
	json_t *a = result_config_measured(result_config(base), 1);
	json_t *b = result_config_measured(config, 1);
	char key[512] = "", va[100], vb[100];
	int rc = 0;

	if (!a || !b) {
		snprintf(err, errlen, "--loads-from %s: the base run.json has no config; give a run.json that oqb run "
			 "wrote", path);
		rc = -1;
	} else {
		if (first_diff(a, b, key, sizeof key)) {
			value_at(a, key, va, sizeof va);
			value_at(b, key, vb, sizeof vb);
			snprintf(err, errlen, "--loads-from %s: the base ran another experiment: %s is %s there and %s in "
				 "%s (after --set); loads of another shape mean nothing here, so give a base run of "
				 "this config, or --set %s to match it", path, key[0] ? key : "the config", va, vb,
				 cfgpath, key[0] ? key : "KEY");
			rc = -1;
		}
	}
	json_decref(a);
	json_decref(b);
	return rc;
}

json_t *loadsfrom_json(const json_t *base, const char *path)
{
	double lo, hi, knee = result_knee(base, &lo, &hi);
	json_t *loads = base_loads(base);
	return json_pack("{s:s, s:s?, s:s?, s:o, s:o, s:o}", "path", path, "run_id", result_run_id(base),
			 "found_by", result_knee_found_by(base), "knee_ops",
			 isfinite(knee) ? json_real(knee) : json_null(), "bracket_ops",
			 isfinite(knee) ? json_pack("[f, o]", lo, isfinite(hi) ? json_real(hi) : json_null())
					: json_null(),
			 "loads_ops", loads ? loads : json_null());
}
