/*
 * compare.c - diff two run.json files and gate on regressions (compare.h).
 *
 * Output: one table row per BASE point, then one machine-readable line
 *   compare: N points, N regressions, N improvements, tolerance X%
 * (counts are points; a point with any regressed metric is one regression).
 */
#include "compare.h"
#include "merge.h"
#include "opts.h"
#include "run.h"
#include "runjson.h"
#include "stats.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cmp_opts {
	double tolerance;
	int json;
};

#define O(f) offsetof(struct cmp_opts, f)
static const struct opt cmp_tab[] = {
	{ "tolerance", OPT_DBL, O(tolerance), "5", 0, 1000, NULL,
	  "percent a metric may worsen before it counts (and only beyond the CIs)" },
	{ "json", OPT_BOOL, O(json), NULL, 0, 0, NULL, "print the comparison as JSON instead of a table" },
	{ NULL, .help = "compare two run.json files; exit 1 on regressions" },
};
#undef O

enum verdict { SAME, WORSE, BETTER };

struct metric {
	const char *name;
	double base, new_;
	double base_lo, base_hi, new_lo, new_hi;   /* CIs; NAN when none */
	int lower_is_better;
	enum verdict v;
};

/* A point's sweep key or value (run.json "sweep"), JSON null without one. */
static json_t *sweep_of(const json_t *p, const char *field)
{
	json_t *v = json_object_get(json_object_get(p, "sweep"), field);
	return v ? v : json_null();
}

static const json_t *find_point(const json_t *points, const json_t *bp)
{
	const char *sys = json_string_value(json_object_get(bp, "system"));
	const json_t *bo = json_object_get(bp, "offered_ops");
	const json_t *bn = json_object_get(bp, "outstanding");
	size_t i;
	json_t *p;

	json_array_foreach(points, i, p) {
		const char *s = json_string_value(json_object_get(p, "system"));
		if (!s || !sys || strcmp(s, sys) != 0)
			continue;
		/* Runs with a sweep: the swept key and value must match too. */
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

static double getn(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void ci_of(const json_t *summary, const char *key, double *lo, double *hi)
{
	const json_t *c = json_object_get(summary, key);

	*lo = *hi = NAN;
	if (json_array_size(c) == 2) {
		*lo = json_number_value(json_array_get(c, 0));
		*hi = json_number_value(json_array_get(c, 1));
	}
}

/* The 95 % CI of the median from the summary's bins (NAN if no bins). */
static void p50_ci(const json_t *summary, double *lo, double *hi)
{
	struct hist *h = hist_new();
	char err[256];
	uint64_t l, u;

	*lo = *hi = NAN;
	if (!h)
		return;
	if (merge_hist_from(h, summary, "bins", err, sizeof err) == 0 && h->n > 0) {
		stats_hist_pct_ci(h, 0.5, STATS_Z95, &l, &u);
		*lo = (double)l;
		*hi = (double)u;
	}
	hist_free(h);
}

static void judge(struct metric *m, double tol)
{
	int have_ci = !isnan(m->base_lo) && !isnan(m->new_lo);

	m->v = SAME;
	if (isnan(m->base) || isnan(m->new_))
		return;
	if (m->lower_is_better) {
		if (m->new_ > m->base * (1 + tol) && (!have_ci || m->new_lo > m->base_hi))
			m->v = WORSE;
		else if (m->new_ < m->base * (1 - tol) && (!have_ci || m->new_hi < m->base_lo))
			m->v = BETTER;
	} else {
		if (m->new_ < m->base * (1 - tol))
			m->v = WORSE;
		else if (m->new_ > m->base * (1 + tol))
			m->v = BETTER;
	}
}

static void fmt_metric(char *buf, size_t len, const struct metric *m, int is_lat)
{
	char a[32], b[32];
	double d = m->base != 0 ? (m->new_ - m->base) / m->base * 100 : 0;

	if (is_lat) {
		fmt_ns(a, sizeof a, m->base);
		fmt_ns(b, sizeof b, m->new_);
	} else {
		snprintf(a, sizeof a, "%.0f", m->base);
		snprintf(b, sizeof b, "%.0f", m->new_);
	}
	if (isnan(m->new_))
		snprintf(buf, len, "%s -> ?", a);
	else
		snprintf(buf, len, "%s -> %s (%+.1f%%)%s", a, b, d,
			 m->v == WORSE ? " !" : m->v == BETTER ? " +" : "");
}

int compare_main(int argc, char **argv)
{
	struct cmp_opts o;
	char err[1024];
	int npos = 0, r;
	json_t *base = NULL, *nw = NULL, *out = NULL;
	size_t i, npoints = 0, nreg = 0, nimp = 0;
	json_t *bp;

	r = opts_parse(cmp_tab, &o, argc, argv, &npos, err, sizeof err);
	if (r == 1)
		return 0;
	if (r < 0 || npos != 2) {
		fprintf(stderr, "oqb compare: %s\nusage: oqb compare BASE.json NEW.json [--tolerance PCT] [--json]\n",
			r < 0 ? err : "expected two run.json files");
		return 2;
	}
	base = runjson_load(argv[1], err, sizeof err);
	if (!base) {
		fprintf(stderr, "oqb compare: %s\n", err);
		return 2;
	}
	nw = runjson_load(argv[2], err, sizeof err);
	if (!nw) {
		fprintf(stderr, "oqb compare: %s\n", err);
		json_decref(base);
		return 2;
	}
	for (int k = 1; k <= 2; k++) {
		const char *st = json_string_value(json_object_get(k == 1 ? base : nw, "status"));
		if (st && strcmp(st, "ok") != 0)
			fprintf(stderr, "oqb compare: warning: %s has status \"%s\" (an incomplete run)\n",
				argv[k], st);
	}
	double tol = o.tolerance / 100;
	out = json_array();
	if (!o.json)
		printf("%-9s %12s  %-30s %-30s %-32s %s\n", "system", "load", "p50", "p99",
		       "achieved ops/s", "verdict");

	json_array_foreach(json_object_get(base, "points"), i, bp) {
		const json_t *np = find_point(json_object_get(nw, "points"), bp);
		const char *sys = json_string_value(json_object_get(bp, "system"));
		char load[64], c1[128], c2[128], c3[128], verdict[128] = "";
		struct metric m[3];
		int worse = 0, better = 0;

		npoints++;
		if (json_is_number(json_object_get(bp, "offered_ops")))
			snprintf(load, sizeof load, "%.0f", getn(bp, "offered_ops"));
		else
			snprintf(load, sizeof load, "closed/%.0f", getn(bp, "outstanding"));
		if (json_object_get(bp, "sweep")) {
			char *v = json_dumps(sweep_of(bp, "value"), JSON_COMPACT | JSON_ENCODE_ANY);
			size_t l = strlen(load);
			snprintf(load + l, sizeof load - l, "@%.20s", v ? v : "?");
			free(v);
		}
		if (!np) {
			nreg++;
			if (o.json)
				json_array_append_new(out, json_pack("{s:s?, s:s, s:s}", "system", sys,
								     "load", load, "verdict", "missing"));
			else
				printf("%-9s %12s  missing in %s\n", sys ? sys : "?", load, argv[2]);
			continue;
		}
		const json_t *ba = json_object_get(json_object_get(bp, "lat_ns"), "all");
		const json_t *na = json_object_get(json_object_get(np, "lat_ns"), "all");
		memset(m, 0, sizeof m);
		m[0] = (struct metric){ .name = "p50", .base = getn(ba, "p50"), .new_ = getn(na, "p50"),
					.lower_is_better = 1 };
		p50_ci(ba, &m[0].base_lo, &m[0].base_hi);
		p50_ci(na, &m[0].new_lo, &m[0].new_hi);
		m[1] = (struct metric){ .name = "p99", .base = getn(ba, "p99"), .new_ = getn(na, "p99"),
					.lower_is_better = 1 };
		ci_of(ba, "p99_ci", &m[1].base_lo, &m[1].base_hi);
		ci_of(na, "p99_ci", &m[1].new_lo, &m[1].new_hi);
		m[2] = (struct metric){ .name = "achieved_ops", .base = getn(bp, "achieved_ops"),
					.new_ = getn(np, "achieved_ops"), .base_lo = NAN, .base_hi = NAN,
					.new_lo = NAN, .new_hi = NAN };
		for (int k = 0; k < 3; k++) {
			judge(&m[k], tol);
			if (m[k].v == WORSE) {
				worse = 1;
				snprintf(verdict + strlen(verdict), sizeof verdict - strlen(verdict), "%s%s worse",
					 verdict[0] ? ", " : "REGRESSION: ", m[k].name);
			}
		}
		for (int k = 0; k < 3 && !worse; k++) {
			if (m[k].v == BETTER) {
				better = 1;
				snprintf(verdict + strlen(verdict), sizeof verdict - strlen(verdict), "%s%s better",
					 verdict[0] ? ", " : "improved: ", m[k].name);
			}
		}
		if (!verdict[0])
			snprintf(verdict, sizeof verdict, "ok");
		nreg += (size_t)worse;
		nimp += (size_t)better;
		if (o.json) {
			json_t *row = json_pack("{s:s?, s:s, s:s}", "system", sys, "load", load, "verdict",
						worse ? "regression" : better ? "improvement" : "ok");
			for (int k = 0; k < 3; k++)
				json_object_set_new(row, m[k].name,
						    json_pack("{s:f, s:f, s:s}", "base", m[k].base, "new",
							      isnan(m[k].new_) ? 0.0 : m[k].new_, "change",
							      m[k].v == WORSE ? "worse" : m[k].v == BETTER ? "better" : "same"));
			json_array_append_new(out, row);
		} else {
			fmt_metric(c1, sizeof c1, &m[0], 1);
			fmt_metric(c2, sizeof c2, &m[1], 1);
			fmt_metric(c3, sizeof c3, &m[2], 0);
			printf("%-9s %12s  %-30s %-30s %-32s %s\n", sys ? sys : "?", load, c1, c2, c3, verdict);
		}
	}
	if (o.json) {
		json_t *doc = json_pack("{s:s, s:s, s:o, s:{s:I, s:I, s:I, s:f}}", "base", argv[1], "new",
					argv[2], "points", out, "summary", "points", (json_int_t)npoints,
					"regressions", (json_int_t)nreg, "improvements", (json_int_t)nimp,
					"tolerance_pct", o.tolerance);
		out = NULL;
		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
	}
	/* With --json, stdout stays pure JSON; the summary line goes to stderr. */
	fprintf(o.json ? stderr : stdout,
		"compare: %zu points, %zu regressions, %zu improvements, tolerance %g%%\n", npoints, nreg,
		nimp, o.tolerance);
	json_decref(out);
	json_decref(base);
	json_decref(nw);
	return nreg ? 1 : 0;
}
