/*
 * result_csv.c - summary.csv: run.json's points as a table a spreadsheet
 * opens (result.h: result_csv_write).
 *
 * One row per entry of "points" (one system at one load, and one sweep
 * value), in run.json's order; the numbers are the point's, merged over
 * its trials, in the units their names end with.  A number a point does
 * not have (no samples, closed loop's offered load, a run from before the
 * field) is an empty field, never 0.  Lists (the checks that warned) are
 * separated by spaces, so no field needs quoting except free text; those
 * are quoted as RFC 4180 says.  docs/driver.md lists the columns.
 */
#include "result.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const result_csv_columns[] = {
	"index", "system", "sweep_key", "sweep_value", "offered_ops", "outstanding", "achieved_ops",
	"saturated", "trials", "n", "mean_ns",
	"p50_ns", "p50_ci_lo_ns", "p50_ci_hi_ns", "p99_ns", "p99_ci_lo_ns", "p99_ci_hi_ns",
	"p999_ns", "p999_ci_lo_ns", "p999_ci_hi_ns",
	"p50_trials_min_ns", "p50_trials_max_ns", "p99_trials_min_ns", "p99_trials_max_ns",
	"nilext_p50_ns", "nilext_p99_ns", "non_nilext_p50_ns", "non_nilext_p99_ns", "service_p50_ns",
	"unanswered", "errors", "ring_full_waits",
	"flagged", "flagged_p50", "flagged_p99", "flagged_p999", "warned_checks",
	"canary_ns", "canary_mixed", "placement_shared",
	"transport", "backend", "workers", "client_processes", "client_threads",
	"workload", "put_ratio", "key_size", "value_size",
	"regimes", "regime_p50_ns", "regime_sys_p99_ns",
	NULL,
};

/* A field with the separator before it (none before the first). */
struct row {
	FILE *f;
	int first;
};

static void sep(struct row *r)
{
	if (!r->first)
		fputc(',', r->f);
	r->first = 0;
}

static void text(struct row *r, const char *s)
{
	sep(r);
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, r->f);
		return;
	}
	fputc('"', r->f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', r->f);
		fputc(*s, r->f);
	}
	fputc('"', r->f);
}

/* A JSON value as a field: numbers as they are (integers exact, reals to
 * 10 significant digits), booleans as true/false, strings as text;
 * null, missing or anything else empty. */
static void value(struct row *r, const json_t *v)
{
	char buf[64];
	if (json_is_integer(v)) {
		sep(r);
		fprintf(r->f, "%lld", (long long)json_integer_value(v));
	} else if (json_is_real(v) && isfinite(json_real_value(v))) {
		sep(r);
		snprintf(buf, sizeof buf, "%.10g", json_real_value(v));
		fputs(buf, r->f);
	} else if (json_is_boolean(v)) {
		text(r, json_is_true(v) ? "true" : "false");
	} else if (json_is_string(v)) {
		text(r, json_string_value(v));
	} else {
		sep(r);
	}
}

static const json_t *at(const json_t *o, const char *a, const char *b)
{
	return json_object_get(json_object_get(o, a), b);
}

/* The space-separated strings of an array (NULL: not an array). */
static void words(struct row *r, const json_t *arr, char *buf, size_t cap)
{
	size_t i, len = 0;
	const json_t *w;
	if (!json_is_array(arr)) {
		text(r, NULL);
		return;
	}
	buf[0] = '\0';
	json_array_foreach(arr, i, w) {
		const char *s = json_string_value(w);
		if (s && len + strlen(s) + 2 < cap)
			len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? " " : "", s);
	}
	text(r, buf);
}

/* A number as a field, empty when it is NaN (missing). */
static void number(struct row *r, double v)
{
	json_t *j = isnan(v) ? NULL : json_real(v);
	value(r, j);
	json_decref(j);
}

/* regimes (how many the point's kept trials ran in: 1 unmixed, empty
 * without canary_regime), and the point's own (majority) regime's median
 * and untagged P99, empty unless the trials mixed regimes. */
static void regime_fields(struct row *r, const json_t *p)
{
	const json_t *rgs = result_regimes(p), *own = json_array_get(rgs, 0);
	int mixed = result_regime_mixed(p);
	if (rgs)
		number(r, (double)json_array_size(rgs));
	else
		number(r, mixed == 0 ? 1 : NAN);
	const json_t *all = result_lat(own, "all"), *sys = result_sys_lat(own, "all");
	number(r, result_n(all) > 0 ? result_num(all, "p50") : NAN);
	number(r, result_n(sys) > 0 ? result_num(sys, "p99") : NAN);
}

static void point_row(FILE *f, const json_t *run, const json_t *p)
{
	struct row r = { f, 1 };
	const json_t *all = at(p, "lat_ns", "all"), *cfg = json_object_get(run, "config");
	const json_t *ck, *wl = json_object_get(p, "workload");
	const json_t *pl = json_object_get(json_array_get(json_object_get(p, "trials"), 0), "placement");
	char buf[1024];
	size_t i, len = 0;
	int shared = 0, placed = 0;
	int n = json_integer_value(json_object_get(all, "n")) > 0;

	value(&r, json_object_get(p, "index"));
	value(&r, json_object_get(p, "system"));
	value(&r, at(p, "sweep", "key"));
	value(&r, at(p, "sweep", "value"));
	value(&r, json_object_get(p, "offered_ops"));
	value(&r, json_object_get(p, "outstanding"));
	value(&r, json_object_get(p, "achieved_ops"));
	value(&r, json_object_get(p, "saturated"));
	value(&r, json_object_get(p, "repeat"));
	value(&r, json_object_get(all, "n"));
	/* with no samples every latency is meaningless (written as 0) */
	static const char *const lat[] = { "mean", "p50", "p50_ci", "p99", "p99_ci", "p999", "p999_ci" };
	for (i = 0; i < sizeof lat / sizeof *lat; i++) {
		const json_t *v = json_object_get(all, lat[i]);
		if (json_is_array(v)) {
			value(&r, n ? json_array_get(v, 0) : NULL);
			value(&r, n ? json_array_get(v, 1) : NULL);
		} else {
			value(&r, n ? v : NULL);
		}
	}
	static const char *const spread[] = { "p50", "p99" };
	for (i = 0; i < 2; i++) {
		const json_t *s = json_object_get(at(p, "spread", "all"), spread[i]);
		value(&r, n ? json_object_get(s, "min") : NULL);
		value(&r, n ? json_object_get(s, "max") : NULL);
	}
	static const char *const cls[] = { "nilext", "non_nilext" };
	for (i = 0; i < 2; i++) {
		const json_t *c = at(p, "lat_ns", cls[i]);
		int has = json_integer_value(json_object_get(c, "n")) > 0;
		value(&r, has ? json_object_get(c, "p50") : NULL);
		value(&r, has ? json_object_get(c, "p99") : NULL);
	}
	const json_t *svc = at(json_object_get(p, "server"), "service_ns", "all");
	value(&r, json_integer_value(json_object_get(svc, "n")) > 0 ? json_object_get(svc, "p50") : NULL);
	value(&r, json_object_get(p, "unanswered"));
	value(&r, json_object_get(p, "errors"));
	value(&r, json_object_get(p, "ring_full_waits"));
	value(&r, json_object_get(p, "flagged"));
	words(&r, at(p, "flagged_by", "p50"), buf, sizeof buf);
	words(&r, at(p, "flagged_by", "p99"), buf, sizeof buf);
	words(&r, at(p, "flagged_by", "p999"), buf, sizeof buf);
	buf[0] = '\0';
	json_array_foreach(json_object_get(p, "checks"), i, ck) {
		const char *name = json_string_value(json_object_get(ck, "name"));
		const char *st = json_string_value(json_object_get(ck, "status"));
		if (name && st && !strcmp(st, "warn") && len + strlen(name) + 2 < sizeof buf)
			len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? " " : "", name);
	}
	text(&r, json_is_array(json_object_get(p, "checks")) ? buf : NULL);
	value(&r, json_object_get(p, "canary_ns"));
	value(&r, at(p, "canary_regime", "mixed"));
	if (pl) {
		const json_t *c;
		placed = json_is_boolean(at(pl, "server", "shared"));
		shared = json_is_true(at(pl, "server", "shared"));
		json_array_foreach(json_object_get(pl, "clients"), i, c) {
			placed |= json_is_boolean(at(c, "placement", "shared"));
			shared |= json_is_true(at(c, "placement", "shared"));
		}
	}
	text(&r, placed ? (shared ? "true" : "false") : NULL);
	value(&r, at(run, "transport", "name"));
	value(&r, json_object_get(at(cfg, "server", "backend"), "kind"));
	value(&r, at(cfg, "server", "workers"));
	value(&r, at(cfg, "clients", "processes"));
	value(&r, at(cfg, "clients", "threads"));
	value(&r, json_object_get(wl, "kind"));
	value(&r, json_object_get(wl, "put_ratio"));
	value(&r, json_object_get(wl, "key_size"));
	value(&r, json_object_get(wl, "value_size"));
	regime_fields(&r, p);
	fputs("\r\n", f);
}

int result_csv_write(const json_t *run, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	const json_t *p;
	size_t i;

	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; result_csv_columns[i]; i++)
		fprintf(f, "%s%s", i ? "," : "", result_csv_columns[i]);
	fputs("\r\n", f);
	json_array_foreach(json_object_get(run, "points"), i, p)
		point_row(f, run, p);
	if (fclose(f) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
