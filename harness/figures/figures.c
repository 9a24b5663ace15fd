/*
 * figures.c - `oqb figures`: the paper's figures from the runs of one
 * reproduction, the claims report, and the fidelity check (figures.h).
 *
 * What it owns.  It reads every RUNS/ * /run.json (and one level deeper),
 * sorts each run into the figure it reproduces by what the run measured,
 * not by its name:
 *   Figs 7/8   workload.kind twitter, one panel per cluster 12/19/27/31;
 *   Figs 9/10  workload.kind ycsb, one panel per put ratio 1/0.5/0.05/0
 *              (a run whose oq points are durable is preferred: the
 *              paper's JuneBerry-D);
 *   Fig 6      workload.kind echo: throughput vs requests in flight, one
 *              panel per (64 B | 1 KB) x (volatile | durable);
 *   Fig 11     a sweep of workload.value_size on another workload;
 *   Fig 2      RUNS/tgap-cdf.dat (written by `oqb tgap --cdf`).
 * Of several runs for one panel the newest (created_utc) is drawn; the
 * report lists the others.  A panel without a run says "not run".
 *
 * Peak.  The knee when run.json has one (`knee.ops`, from the automatic
 * form of arrival.loads_ops); else the highest offered load at which no
 * system's point is flagged; else (every load had a flagged point, as on a
 * busy 2-core VM) the highest load at which no system is saturated; else
 * the lowest load.  The report names the basis per run.  "At 80 % of
 * peak" is the offered load nearest to 0.8 x peak (log distance).
 *
 * Guarantees.  Every text that reaches index.html goes through
 * html_escape(); the page loads nothing from the network and runs no
 * script (tests/integration/report-browser.sh loads it in headless
 * Chromium and checks every image's natural size, the table and the
 * console).  The fidelity check's definitions are in docs/figures.md and
 * check_qualitative() below; tests/integration/figures-check.sh runs it
 * on the committed fixtures in tests/figures/ (one set holds, one fails).
 */
#include "checks.h"
#include "figures.h"
#include "opts.h"
#include "plotcmd.h"
#include "run.h"
#include "runjson.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FG_MAXRUNS 128
#define FG_MAXSYS 8
#define FG_MAXPT 64

enum { FIG_NONE, FIG_78, FIG_910, FIG_6, FIG_11 };

static const int clusters[4] = { 12, 19, 27, 31 };
static const double put_ratios[4] = { 1.0, 0.5, 0.05, 0.0 };
static const char *const put_names[4] = { "ycsb-put100", "ycsb-put50", "ycsb-put5", "ycsb-put0" };
static const char *const put_titles[4] = { "(a) write-only, 100 % put", "(b) write-intensive, 50 % put",
					   "(c) read-intensive, 5 % put", "(d) read-only, 0 % put" };

struct fpt {
	double offered, achieved, p50, p99, lo50, hi50, lo99, hi99;
	int flagged, saturated;
	/* [0] p50, [1] p99: whether a check warned about that number, and
	 * which, "a,b" (checks_point_flagged) */
	int flag_q[2];
	char warns_q[2][64];
};

struct fsys {
	char name[48];
	size_t n;
	struct fpt pt[FG_MAXPT];
};

struct frun {
	char dir[PATH_MAX];
	char name[128], transport[32], created[40], machine[256], commit[16];
	json_t *run;
	int fig, slot, durable, drawn;
	size_t nsys;
	struct fsys sys[FG_MAXSYS];
	double peak, load80;
	char basis[200];
};

struct fctx {
	struct frun *runs;
	size_t nruns;
	struct frun *panel78[4], *panel910[4], *fig11, *fig6[4];
	size_t nfig6;
};

struct fig_opts {
	const char *runs, *out, *claims, *tgap;
	int check;
};

#define O(f) offsetof(struct fig_opts, f)
static const struct opt fig_tab[] = {
	{ "runs", OPT_STR, O(runs), NULL, 0, 0, NULL,
	  "directory holding the runs (each DIR/NAME/run.json; default: results)" },
	{ "out", OPT_STR, O(out), NULL, 0, 0, NULL, "report directory (default: RUNS/report)" },
	{ "claims", OPT_STR, O(claims), NULL, 0, 0, NULL,
	  "the paper's numbers (default: docs/paper-claims.json of this checkout)" },
	{ "tgap", OPT_STR, O(tgap), NULL, 0, 0, NULL,
	  "T_gap CDF data for Fig 2 (default: RUNS/tgap-cdf.dat, from oqb tgap --cdf)" },
	{ "check", OPT_BOOL, O(check), NULL, 0, 0, NULL,
	  "only judge the qualitative claims (docs/figures.md); exit 1 when one fails" },
	{ NULL, .help = "draw the paper's figures (2, 6-11) from the runs of a reproduction and write "
	  "OUT/index.html with the paper's claims beside what the runs measured" },
};
#undef O

/* ---------------------------------------------------------------- helpers */

static const char *jstr(const json_t *o, const char *k, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : dflt;
}

static double jnum(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Writes s to f with &, <, >, " and ' escaped. */
static void html_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* A string as a gnuplot single-quoted literal: ' doubled, newlines dropped. */
static void gp_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; s && *s; s++) {
		if (*s == '\'')
			fputs("''", f);
		else if (*s != '\n' && *s != '\r')
			fputc(*s, f);
	}
	fputc('\'', f);
}

/* A legend word: no blanks (gnuplot's word() splits on them). */
static void legend_word(char *buf, size_t len, const char *s)
{
	snprintf(buf, len, "%s", s);
	for (char *c = buf; *c; c++)
		if (*c == ' ' || *c == '\t' || *c == '"' || *c == '\'')
			*c = '_';
}

static void fmt_ops(char *buf, size_t len, double ops)
{
	if (!isfinite(ops))
		snprintf(buf, len, "?");
	else if (ops >= 1e6)
		snprintf(buf, len, "%.2f Mops/s", ops / 1e6);
	else
		snprintf(buf, len, "%.0f Kops/s", ops / 1e3);
}

/* ---------------------------------------------------------------- runs */

static int oq_durable(const json_t *run)
{
	size_t i;
	json_t *p;

	json_array_foreach(json_object_get(run, "points"), i, p)
		if (!strcmp(jstr(p, "system", ""), "oq") && json_is_true(json_object_get(p, "durable")))
			return 1;
	return 0;
}

static int cmp_pt(const void *a, const void *b)
{
	double x = ((const struct fpt *)a)->offered, y = ((const struct fpt *)b)->offered;
	return x < y ? -1 : x > y;
}

static int sys_rank(const char *name)
{
	static const char *const order[] = { "oq", "rawrpc", "deferred", "erpc" };
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, order[i]))
			return i;
	return 4;
}

static int cmp_sys(const void *a, const void *b)
{
	const struct fsys *x = a, *y = b;
	int d = sys_rank(x->name) - sys_rank(y->name);
	return d ? d : strcmp(x->name, y->name);
}

/* The latency points of an open-loop run, per system, sorted by offered load. */
static void collect_points(struct frun *r)
{
	size_t i, j;
	json_t *p;

	json_array_foreach(json_object_get(r->run, "points"), i, p) {
		const char *s = jstr(p, "system", NULL);
		const json_t *all = json_object_get(json_object_get(p, "lat_ns"), "all");
		const json_t *sp = json_object_get(json_object_get(p, "spread"), "all");
		struct fpt *t;

		if (!s || json_integer_value(json_object_get(all, "n")) <= 0 ||
		    json_integer_value(json_object_get(json_object_get(p, "sweep"), "index")) != 0)
			continue;
		for (j = 0; j < r->nsys && strcmp(r->sys[j].name, s) != 0; j++)
			;
		if (j == r->nsys) {
			if (r->nsys == FG_MAXSYS)
				continue;
			snprintf(r->sys[r->nsys++].name, sizeof r->sys[0].name, "%s", s);
		}
		if (r->sys[j].n == FG_MAXPT)
			continue;
		t = &r->sys[j].pt[r->sys[j].n++];
		t->offered = jnum(p, "offered_ops");
		t->achieved = jnum(p, "achieved_ops");
		t->p50 = jnum(all, "p50");
		t->p99 = jnum(all, "p99");
		t->lo50 = sp ? jnum(json_object_get(sp, "p50"), "min") : t->p50;
		t->hi50 = sp ? jnum(json_object_get(sp, "p50"), "max") : t->p50;
		t->lo99 = sp ? jnum(json_object_get(sp, "p99"), "min") : t->p99;
		t->hi99 = sp ? jnum(json_object_get(sp, "p99"), "max") : t->p99;
		t->flagged = json_is_true(json_object_get(p, "flagged"));
		t->saturated = json_is_true(json_object_get(p, "saturated"));
		for (int q = 0; q < 2; q++)
			t->flag_q[q] = checks_point_flagged(p, q ? "p99" : "p50", t->warns_q[q], sizeof t->warns_q[q]);
	}
	for (j = 0; j < r->nsys; j++)
		qsort(r->sys[j].pt, r->sys[j].n, sizeof r->sys[j].pt[0], cmp_pt);
	/* one colour per system in every panel: a fixed order of systems */
	qsort(r->sys, r->nsys, sizeof r->sys[0], cmp_sys);
}

static const struct fpt *pt_at(const struct fsys *s, double load)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->pt[i].offered == load)
			return &s->pt[i];
	return NULL;
}

static const struct fsys *sys_of(const struct frun *r, const char *name)
{
	for (size_t j = 0; j < r->nsys; j++)
		if (!strcmp(r->sys[j].name, name))
			return &r->sys[j];
	return NULL;
}

/* Offered loads of the run (union over systems), ascending; returns the count. */
static size_t run_loads(const struct frun *r, double *loads, size_t cap)
{
	size_t n = 0, i, j, k;

	for (j = 0; j < r->nsys; j++)
		for (i = 0; i < r->sys[j].n; i++) {
			double l = r->sys[j].pt[i].offered;
			for (k = 0; k < n && loads[k] != l; k++)
				;
			if (k == n && n < cap)
				loads[n++] = l;
		}
	for (i = 1; i < n; i++)
		for (k = i; k > 0 && loads[k - 1] > loads[k]; k--) {
			double t = loads[k];
			loads[k] = loads[k - 1];
			loads[k - 1] = t;
		}
	return n;
}

/* The offered load of the run nearest to want (log distance, ties low). */
static double nearest_load(const struct frun *r, double want)
{
	double loads[FG_MAXPT * FG_MAXSYS], best = NAN, bd = INFINITY;
	size_t n = run_loads(r, loads, sizeof loads / sizeof loads[0]);

	for (size_t i = 0; i < n; i++) {
		double d = fabs(log(loads[i] / want));
		if (d < bd - 1e-12) {
			bd = d;
			best = loads[i];
		}
	}
	return best;
}

/* Peak and 80 % of peak of an open-loop run, with the basis in words. */
static void find_peak(struct frun *r)
{
	const json_t *knee = json_object_get(r->run, "knee");
	double loads[FG_MAXPT * FG_MAXSYS];
	size_t n = run_loads(r, loads, sizeof loads / sizeof loads[0]), i, j;
	int pass;

	r->peak = NAN;
	if (json_is_number(json_object_get(knee, "ops")) && jnum(knee, "ops") > 0 &&
	    strcmp(jstr(knee, "found_by", ""), "fixed") != 0) {
		r->peak = nearest_load(r, jnum(knee, "ops"));
		snprintf(r->basis, sizeof r->basis, "knee %.0f ops/s (%s)%s", jnum(knee, "ops"),
			 jstr(knee, "found_by", "run.json knee"),
			 fabs(r->peak - jnum(knee, "ops")) > 0.01 * r->peak ?
			 "; the nearest load with latency samples" : "");
	}
	for (pass = 0; pass < 2 && isnan(r->peak); pass++) {
		for (i = n; i-- > 0 && isnan(r->peak);) {
			int bad = 0;
			for (j = 0; j < r->nsys; j++) {
				const struct fpt *t = pt_at(&r->sys[j], loads[i]);
				if (t && (t->saturated || (pass == 0 && t->flagged)))
					bad = 1;
			}
			if (!bad)
				r->peak = loads[i];
		}
		if (!isnan(r->peak))
			snprintf(r->basis, sizeof r->basis, "%s",
				 pass == 0 ? "no knee in run.json: highest load with no point flagged" :
				 "no knee in run.json and every load had a flagged point: highest load "
				 "at which no system saturated");
	}
	if (isnan(r->peak) && n) {
		r->peak = loads[0];
		snprintf(r->basis, sizeof r->basis, "every load saturated: the lowest load");
	}
	/* 80 % of the knee itself, not of the load standing in for it */
	r->load80 = isnan(r->peak) ? NAN : nearest_load(r, 0.8 * (strncmp(r->basis, "knee", 4) ? r->peak :
								  jnum(knee, "ops")));
}

static void classify(struct frun *r)
{
	const json_t *cf = json_object_get(r->run, "config");
	const json_t *wl = json_object_get(cf, "workload");
	const char *kind = jstr(wl, "kind", "");
	const char *skey = jstr(json_object_get(cf, "sweep"), "key", "");
	const json_t *env = json_object_get(r->run, "environment");

	snprintf(r->name, sizeof r->name, "%s", jstr(r->run, "name", "?"));
	snprintf(r->transport, sizeof r->transport, "%s",
		 jstr(json_object_get(r->run, "transport"), "name", jstr(cf, "transport", "?")));
	snprintf(r->created, sizeof r->created, "%s", jstr(r->run, "created_utc", ""));
	snprintf(r->commit, sizeof r->commit, "%.10s", jstr(r->run, "git_commit", "?"));
	snprintf(r->machine, sizeof r->machine, "%s on %s (%s, %.0f CPUs)", r->transport,
		 jstr(json_object_get(r->run, "hosts"), "driver", "?"), jstr(env, "cpu_model", "CPU unknown"),
		 jnum(env, "cpus_online"));
	r->durable = oq_durable(r->run);
	r->slot = -1;
	if (!strcmp(kind, "echo")) {
		r->fig = FIG_6;
	} else if (!strcmp(skey, "workload.value_size")) {
		r->fig = FIG_11;
	} else if (!strcmp(kind, "twitter")) {
		for (int k = 0; k < 4; k++)
			if (json_integer_value(json_object_get(wl, "cluster")) == clusters[k])
				r->slot = k;
		r->fig = r->slot >= 0 ? FIG_78 : FIG_NONE;
	} else if (!strcmp(kind, "ycsb")) {
		for (int k = 0; k < 4; k++)
			if (fabs(jnum(wl, "put_ratio") - put_ratios[k]) < 1e-9)
				r->slot = k;
		r->fig = r->slot >= 0 ? FIG_910 : FIG_NONE;
	}
	if (r->fig == FIG_78 || r->fig == FIG_910) {
		collect_points(r);
		find_peak(r);
	}
}

/* Is run a better choice than cur for a panel (one with points, durable first for 9/10, then newer)? */
static int better(const struct frun *a, const struct frun *cur)
{
	if (!cur)
		return 1;
	if ((a->nsys > 0) != (cur->nsys > 0))
		return a->nsys > 0;
	if (a->fig == FIG_910 && a->durable != cur->durable)
		return a->durable;
	return strcmp(a->created, cur->created) > 0;
}

static int load_one(struct fctx *x, const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	struct frun *r;

	snprintf(path, sizeof path, "%s/run.json", dir);
	if (access(path, R_OK) != 0)
		return 0;
	if (x->nruns == FG_MAXRUNS) {
		snprintf(err, errlen, "more than %d runs under the runs directory; give a directory with "
			 "one reproduction's runs", FG_MAXRUNS);
		return -1;
	}
	r = &x->runs[x->nruns];
	memset(r, 0, sizeof *r);
	r->run = runjson_load(path, err, errlen);
	if (!r->run)
		return -1;
	snprintf(r->dir, sizeof r->dir, "%s", dir);
	x->nruns++;
	classify(r);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads DIR/run.json, DIR/ * /run.json and DIR/ * / * /run.json, in name order. */
static int load_tree(struct fctx *x, const char *dir, int depth, char *err, size_t errlen)
{
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (load_one(x, dir, err, errlen) < 0)
		return -1;
	if (depth == 0 || !(d = opendir(dir)))
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **t = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
			if (!t)
				break;
			names = t;
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_name);
	for (size_t i = 0; i < n; i++) {
		char sub[PATH_MAX];
		struct stat st;
		if (rc == 0 && names[i] && (size_t)snprintf(sub, sizeof sub, "%s/%s", dir, names[i]) < sizeof sub &&
		    stat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			rc = load_tree(x, sub, depth - 1, err, errlen);
		free(names[i]);
	}
	free(names);
	return rc;
}

static void pick_panels(struct fctx *x)
{
	for (size_t i = 0; i < x->nruns; i++) {
		struct frun *r = &x->runs[i];
		if (r->fig == FIG_78 && better(r, x->panel78[r->slot]))
			x->panel78[r->slot] = r;
		else if (r->fig == FIG_910 && better(r, x->panel910[r->slot]))
			x->panel910[r->slot] = r;
		else if (r->fig == FIG_11 && better(r, x->fig11))
			x->fig11 = r;
		else if (r->fig == FIG_6 && x->nfig6 < 4)
			x->fig6[x->nfig6++] = r;
	}
	for (int k = 0; k < 4; k++) {
		if (x->panel78[k])
			x->panel78[k]->drawn = 1;
		if (x->panel910[k])
			x->panel910[k]->drawn = 1;
	}
	if (x->fig11)
		x->fig11->drawn = 1;
	for (size_t k = 0; k < x->nfig6; k++)
		x->fig6[k]->drawn = 1;
}

/* ---------------------------------------------------------------- figures */

static int gnuplot_run(const char *script, const char *arg1, const char *arg2, const char *arg3,
		       char *err, size_t errlen)
{
	char msg[512];
	char *argv[] = { "gnuplot", "-c", (char *)script, (char *)arg1, (char *)arg2, (char *)arg3, NULL };

	if (!arg2)
		argv[4] = NULL;
	else if (!arg3)
		argv[5] = NULL;
	if (run_capture(argv, msg, sizeof msg) < 0) {
		snprintf(err, errlen, "gnuplot -c %.1000s %.1000s failed (is gnuplot installed? make deps; "
			 "run that command by hand to see its error)", script, arg1);
		return -1;
	}
	return 0;
}

static FILE *open_w(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	if (!f)
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
	return f;
}

static int close_w(FILE *f, const char *path, char *err, size_t errlen)
{
	if (fclose(f) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * One latency-vs-throughput panel's data: a block per system, columns
 * achieved p50 p99 offered flagged p50_min p50_max p99_min p99_max
 * p50_flagged p99_flagged (the layout of `oqb plot`'s data).  names gets
 * the systems, blank-separated.
 */
static int write_lt_panel(const struct frun *r, const char *path, char *names, size_t nlen,
			  char *err, size_t errlen)
{
	FILE *f = open_w(path, err, errlen);
	size_t j, i;

	if (!f)
		return -1;
	names[0] = '\0';
	fprintf(f, "# oqb figures: %s (%s); achieved p50 p99 offered flagged p50_min p50_max p99_min p99_max "
		"p50_flagged p99_flagged\n", r->name, r->dir);
	for (j = 0; j < r->nsys; j++) {
		char w[64];
		fprintf(f, "%s# system %s\n", j ? "\n\n" : "", r->sys[j].name);
		for (i = 0; i < r->sys[j].n; i++) {
			const struct fpt *t = &r->sys[j].pt[i];
			fprintf(f, "%.1f %.0f %.0f %.1f %d %.0f %.0f %.0f %.0f %d %d\n", t->achieved, t->p50, t->p99,
				t->offered, t->flagged, t->lo50, t->hi50, t->lo99, t->hi99, t->flag_q[0], t->flag_q[1]);
		}
		legend_word(w, sizeof w, r->sys[j].name);
		snprintf(names + strlen(names), nlen - strlen(names), "%s%s", j ? " " : "", w);
	}
	return close_w(f, path, err, errlen);
}

/* Achieved throughput of oq (else the first system) at the run's peak. */
static double peak_achieved(const struct frun *r)
{
	const struct fsys *s = sys_of(r, "oq");
	const struct fpt *t;

	if (!s && r->nsys)
		s = &r->sys[0];
	t = s ? pt_at(s, r->peak) : NULL;
	return t ? t->achieved : 0;
}

/* Figs 7/8 or 9/10: four panels of one metric (2 = p50, 3 = p99). */
static int draw_lt(const char *plotdir, const char *out, const char *stem, struct frun *const panels[4],
		   const char *const titles[4], int col, const char *title, char *err, size_t errlen)
{
	char params[PATH_MAX + 64], data[PATH_MAX + 64], svg[PATH_MAX + 64], script[PATH_MAX + 64];
	char names[1024];
	FILE *f;

	snprintf(params, sizeof params, "%s/%s.gp-params", out, stem);
	snprintf(svg, sizeof svg, "%s/%s.svg", out, stem);
	if (!(f = open_w(params, err, errlen)))
		return -1;
	fprintf(f, "# written by oqb figures for plot/fig-latency.gp\nout = ");
	gp_quote(f, svg);
	fprintf(f, "\nfigtitle = ");
	gp_quote(f, title);
	fprintf(f, "\ncol = %d\nylabel = '%s latency (µs)'\n", col, col == 2 ? "Median" : "P99");
	for (int k = 0; k < 4; k++) {
		char pt[512];
		names[0] = '\0';
		snprintf(data, sizeof data, "%s/%s-%d.dat", out, stem, k + 1);
		if (panels[k] && panels[k]->nsys) {
			if (write_lt_panel(panels[k], data, names, sizeof names, err, errlen) < 0) {
				fclose(f);
				return -1;
			}
			snprintf(pt, sizeof pt, "%s: %s%s, %s", titles[k], panels[k]->name,
				 panels[k]->durable ? " (oq durable)" : "", panels[k]->transport);
		} else {
			snprintf(pt, sizeof pt, "%s", titles[k]);
		}
		fprintf(f, "data%d = ", k + 1);
		gp_quote(f, data);
		fprintf(f, "\nptitle%d = ", k + 1);
		gp_quote(f, pt);
		fprintf(f, "\nnames%d = ", k + 1);
		gp_quote(f, names);
		fprintf(f, "\npeak%d = %.1f\n", k + 1, panels[k] && panels[k]->nsys ? peak_achieved(panels[k]) : 0.0);
	}
	if (close_w(f, params, err, errlen) < 0)
		return -1;
	snprintf(script, sizeof script, "%s/fig-latency.gp", plotdir);
	return gnuplot_run(script, params, NULL, NULL, err, errlen);
}

struct tseries {
	char name[96];
	size_t n;
	double x[FG_MAXPT], y[FG_MAXPT];
	int flagged[FG_MAXPT];
};

static struct tseries *series_get(struct tseries *s, size_t *n, size_t cap, const char *name)
{
	size_t i;
	for (i = 0; i < *n && strcmp(s[i].name, name) != 0; i++)
		;
	if (i == *n) {
		if (*n == cap)
			return NULL;
		memset(&s[i], 0, sizeof s[i]);
		legend_word(s[i].name, sizeof s[i].name, name);
		(*n)++;
	}
	return s[i].n < FG_MAXPT ? &s[i] : NULL;
}

static int write_series(const char *path, struct tseries *s, size_t n, char *names, size_t nlen,
			char *err, size_t errlen)
{
	FILE *f = open_w(path, err, errlen);
	size_t b = 0;

	if (!f)
		return -1;
	names[0] = '\0';
	fprintf(f, "# oqb figures: x y flagged, one block per series\n");
	for (size_t j = 0; j < n; j++) {
		if (!s[j].n)
			continue;
		/* sort by x */
		for (size_t i = 1; i < s[j].n; i++)
			for (size_t k = i; k > 0 && s[j].x[k - 1] > s[j].x[k]; k--) {
				double tx = s[j].x[k], ty = s[j].y[k];
				int tf = s[j].flagged[k];
				s[j].x[k] = s[j].x[k - 1];
				s[j].y[k] = s[j].y[k - 1];
				s[j].flagged[k] = s[j].flagged[k - 1];
				s[j].x[k - 1] = tx;
				s[j].y[k - 1] = ty;
				s[j].flagged[k - 1] = tf;
			}
		fprintf(f, "%s# series %s\n", b ? "\n\n" : "", s[j].name);
		for (size_t i = 0; i < s[j].n; i++)
			fprintf(f, "%.10g %.10g %d\n", s[j].x[i], s[j].y[i], s[j].flagged[i]);
		snprintf(names + strlen(names), nlen - strlen(names), "%s%s", b ? " " : "", s[j].name);
		b++;
	}
	return close_w(f, path, err, errlen);
}

/* The label of a Fig 6 line: system, transport and the ablation settings. */
static void fig6_label(const struct frun *r, const json_t *p, char *buf, size_t len)
{
	const json_t *cf = json_object_get(r->run, "config");
	const json_t *sw = json_object_get(p, "sweep");
	const char *key = jstr(sw, "key", "");
	const char *mode = jstr(json_object_get(cf, "verbs"), "recv_mode", "srq");
	int deleg = json_is_true(json_object_get(json_object_get(cf, "clients"), "delegation"));
	const json_t *v = json_object_get(sw, "value");

	if (!strcmp(key, "verbs.recv_mode") && json_is_string(v))
		mode = json_string_value(v);
	if (!strcmp(key, "clients.delegation"))
		deleg = json_is_true(v);
	if (strcmp(r->transport, "verbs") != 0)
		snprintf(buf, len, "%s/%s-ring(MP_stand-in)", jstr(p, "system", "?"), r->transport);
	else
		snprintf(buf, len, "%s/%s%s", jstr(p, "system", "?"),
			 !strcmp(mode, "slot_ring") ? "slot_ring(MP_stand-in)" : mode, deleg ? "+delegation" : "");
}

/* Fig 6: throughput vs requests in flight, (64 B | 1 KB) x (volatile | durable). */
static int draw_fig6(const struct fctx *x, const char *plotdir, const char *out, char *err, size_t errlen)
{
	static const char *const ptitles[4] = { "(a) 64 B requests", "(b) 1 KB requests",
						"(c) 64 B requests, durable", "(d) 1 KB requests, durable" };
	struct tseries *s = calloc(4 * 16, sizeof *s);
	size_t ns[4] = { 0 };
	char params[PATH_MAX + 64], data[PATH_MAX + 64], svg[PATH_MAX + 64], script[PATH_MAX + 64];
	char names[2048], label[160];
	FILE *f;
	int rc = -1;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t r = 0; r < x->nfig6; r++) {
		const struct frun *run = x->fig6[r];
		const json_t *cl = json_object_get(json_object_get(run->run, "config"), "clients");
		double procs = json_is_number(json_object_get(cl, "processes")) ? jnum(cl, "processes") : 1;
		double thr = json_is_number(json_object_get(cl, "threads")) ? jnum(cl, "threads") : 1;
		size_t i;
		json_t *p;

		json_array_foreach(json_object_get(run->run, "points"), i, p) {
			double vs = jnum(json_object_get(p, "workload"), "value_size");
			double outst = jnum(p, "outstanding");
			const json_t *sw = json_object_get(p, "sweep");
			int k = (vs > 512 ? 1 : 0) + (json_is_true(json_object_get(p, "durable")) ? 2 : 0);
			struct tseries *t;

			if (!strcmp(jstr(sw, "key", ""), "clients.processes"))
				procs = jnum(sw, "value");
			if (isnan(outst))
				outst = 1;
			fig6_label(run, p, label, sizeof label);
			t = series_get(s + 16 * k, &ns[k], 16, label);
			if (!t)
				continue;
			t->x[t->n] = procs * thr * outst;
			/* 64 B: Mops/s; 1 KB: Gbit/s of payload, as the paper's panels */
			t->y[t->n] = (k & 1) ? jnum(p, "achieved_ops") * vs * 8 / 1e9 : jnum(p, "achieved_ops") / 1e6;
			t->flagged[t->n++] = json_is_true(json_object_get(p, "flagged"));
		}
	}
	snprintf(params, sizeof params, "%s/fig6.gp-params", out);
	snprintf(svg, sizeof svg, "%s/fig6.svg", out);
	if (!(f = open_w(params, err, errlen)))
		goto out;
	fprintf(f, "out = ");
	gp_quote(f, svg);
	fprintf(f, "\nfigtitle = 'Fig 6: throughput vs requests in flight (client machines x 24 threads x 1 "
		"on the paper''s testbed)'\nrows = 2\ncols = 2\nnpanel = 4\n");
	for (int k = 0; k < 4; k++) {
		snprintf(data, sizeof data, "%s/fig6-%d.dat", out, k + 1);
		if (write_series(data, s + 16 * k, ns[k], names, sizeof names, err, errlen) < 0) {
			fclose(f);
			goto out;
		}
		fprintf(f, "data%d = ", k + 1);
		gp_quote(f, data);
		fprintf(f, "\nptitle%d = '%s'\nnames%d = ", k + 1, ptitles[k], k + 1);
		gp_quote(f, names);
		fprintf(f, "\nxlabel%d = 'Requests in flight'\nylabel%d = '%s'\nlogx%d = 1\n", k + 1, k + 1,
			(k & 1) ? "Bandwidth (Gbit/s)" : "Throughput (Mops/s)", k + 1);
	}
	if (close_w(f, params, err, errlen) < 0)
		goto out;
	snprintf(script, sizeof script, "%s/fig-throughput.gp", plotdir);
	rc = gnuplot_run(script, params, NULL, NULL, err, errlen);
out:
	free(s);
	return rc;
}

/* Peak achieved throughput of system sys at sweep index w of a run (NAN: none). */
static double sweep_peak(const json_t *run, const char *sys, long long w, int *flagged)
{
	double best = NAN;
	size_t i;
	json_t *p;

	json_array_foreach(json_object_get(run, "points"), i, p) {
		if (strcmp(jstr(p, "system", ""), sys) != 0 ||
		    json_integer_value(json_object_get(json_object_get(p, "sweep"), "index")) != w)
			continue;
		if (isnan(best) || jnum(p, "achieved_ops") > best) {
			best = jnum(p, "achieved_ops");
			if (flagged)
				*flagged = json_is_true(json_object_get(p, "flagged"));
		}
	}
	return best;
}

/* Fig 11: peak throughput vs value size, one line per system. */
static int draw_fig11(const struct fctx *x, const char *plotdir, const char *out, char *err, size_t errlen)
{
	struct tseries s[FG_MAXSYS];
	size_t ns = 0;
	char params[PATH_MAX + 64], data[PATH_MAX + 64], svg[PATH_MAX + 64], script[PATH_MAX + 64];
	char names[1024], title[256];
	FILE *f;

	if (x->fig11) {
		const json_t *run = x->fig11->run;
		const json_t *vals = json_object_get(json_object_get(json_object_get(run, "config"), "sweep"),
						     "values");
		size_t i, w;
		json_t *p;

		json_array_foreach(json_object_get(run, "points"), i, p) {
			const char *sys = jstr(p, "system", "?");
			char label[96];
			snprintf(label, sizeof label, "%s%s", sys,
				 json_is_true(json_object_get(p, "durable")) ? "-D(durable)" : "");
			if (!series_get(s, &ns, FG_MAXSYS, label))
				continue;
		}
		for (size_t j = 0; j < ns; j++) {
			char sys[96];
			snprintf(sys, sizeof sys, "%.95s", s[j].name);
			char *dash = strstr(sys, "-D(durable)");
			if (dash)
				*dash = '\0';
			for (w = 0; w < json_array_size(vals) && s[j].n < FG_MAXPT; w++) {
				int fl = 0;
				double y = sweep_peak(run, sys, (long long)w, &fl);
				if (isnan(y))
					continue;
				s[j].x[s[j].n] = json_number_value(json_array_get(vals, w));
				s[j].y[s[j].n] = y / 1e6;
				s[j].flagged[s[j].n++] = fl;
			}
		}
	}
	snprintf(params, sizeof params, "%s/fig11.gp-params", out);
	snprintf(svg, sizeof svg, "%s/fig11.svg", out);
	snprintf(data, sizeof data, "%s/fig11-1.dat", out);
	if (write_series(data, s, ns, names, sizeof names, err, errlen) < 0 || !(f = open_w(params, err, errlen)))
		return -1;
	snprintf(title, sizeof title, "Fig 11%s%s%s", x->fig11 ? ": " : "", x->fig11 ? x->fig11->name : "",
		 x->fig11 ? "" : " (not run)");
	fprintf(f, "out = ");
	gp_quote(f, svg);
	fprintf(f, "\nfigtitle = ");
	gp_quote(f, title);
	fprintf(f, "\nrows = 1\ncols = 1\nnpanel = 1\ndata1 = ");
	gp_quote(f, data);
	fprintf(f, "\nptitle1 = 'Throughput vs value size, 50 %% put'\nnames1 = ");
	gp_quote(f, names);
	fprintf(f, "\nxlabel1 = 'Value size (bytes)'\nylabel1 = 'Peak throughput (Mops/s)'\nlogx1 = 1\n");
	if (close_w(f, params, err, errlen) < 0)
		return -1;
	snprintf(script, sizeof script, "%s/fig-throughput.gp", plotdir);
	return gnuplot_run(script, params, NULL, NULL, err, errlen);
}

/* Fig 2 from the CDF data of `oqb tgap --cdf`, or a "not run" panel. */
static int draw_fig2(const char *tgap, const char *plotdir, const char *out, int *have, char *err, size_t errlen)
{
	char svg[PATH_MAX + 64], script[PATH_MAX + 64], params[PATH_MAX + 64];
	FILE *f;

	snprintf(svg, sizeof svg, "%s/fig2.svg", out);
	*have = tgap && access(tgap, R_OK) == 0;
	if (*have) {
		snprintf(script, sizeof script, "%s/tgap-cdf.gp", plotdir);
		return gnuplot_run(script, tgap, svg, "the sample traces", err, errlen);
	}
	snprintf(params, sizeof params, "%s/fig2.gp-params", out);
	if (!(f = open_w(params, err, errlen)))
		return -1;
	fprintf(f, "out = ");
	gp_quote(f, svg);
	fprintf(f, "\nfigtitle = 'Fig 2: T_gap CDF'\nrows = 1\ncols = 1\nnpanel = 1\ndata1 = ''\n"
		"ptitle1 = 'no T_gap data (oqb tgap --cdf RUNS/tgap-cdf.dat TRACE...)'\nnames1 = ''\n"
		"xlabel1 = ''\nylabel1 = ''\nlogx1 = 0\n");
	if (close_w(f, params, err, errlen) < 0)
		return -1;
	snprintf(script, sizeof script, "%s/fig-throughput.gp", plotdir);
	return gnuplot_run(script, params, NULL, NULL, err, errlen);
}

/* ---------------------------------------------------------------- claims */

/* The run of a claim's workload ("cluster12", "ycsb-put50", ...), or NULL. */
static struct frun *claim_run(const struct fctx *x, const char *wl)
{
	for (int k = 0; k < 4; k++) {
		char name[32];
		snprintf(name, sizeof name, "cluster%d", clusters[k]);
		if (!strcmp(wl, name))
			return x->panel78[k];
		if (!strcmp(wl, put_names[k]))
			return x->panel910[k];
	}
	return NULL;
}

/*
 * What a reader must know about the two points a change in their number q
 * (0 p50, 1 p99) was taken from: "" when both are clean; else which
 * system was saturated (its latency is a queue that grew for the whole
 * window, so the change describes the run's length as much as the
 * systems) or had a self-check warn about that number.
 */
static void pair_caveat(char *buf, size_t len, const char *vs, const struct fpt *pa, const struct fpt *pb, int q)
{
	const char *wa = pa->warns_q[q], *wb = pb->warns_q[q];
	if (pa->saturated && pb->saturated)
		snprintf(buf, len, "both saturated");
	else if (pa->saturated || pb->saturated)
		snprintf(buf, len, "%s saturated", pa->saturated ? "oq" : vs);
	else if (pa->flag_q[q] && pb->flag_q[q])
		snprintf(buf, len, "both flagged (oq: %s; %s: %s)", wa[0] ? wa : "?", vs, wb[0] ? wb : "?");
	else if (pa->flag_q[q] || pb->flag_q[q]) {
		const char *w = pa->flag_q[q] ? wa : wb;
		snprintf(buf, len, "%s flagged%s%s%s", pa->flag_q[q] ? "oq" : vs, w[0] ? " (" : "", w, w[0] ? ")" : "");
	} else
		buf[0] = '\0';
}

/* OQ's metric relative to vs at load, in percent; NAN when a point is
 * missing.  caveat (len bytes) gets pair_caveat's text. */
static double change_at(const struct frun *r, const char *metric, const char *vs, double load, char *caveat,
			size_t len)
{
	const struct fsys *a = sys_of(r, "oq"), *b = sys_of(r, vs);
	const struct fpt *pa = a ? pt_at(a, load) : NULL, *pb = b ? pt_at(b, load) : NULL;
	int p99 = !strcmp(metric, "p99");

	caveat[0] = '\0';
	if (!pa || !pb)
		return NAN;
	double va = p99 ? pa->p99 : pa->p50, vb = p99 ? pb->p99 : pb->p50;
	if (!(vb > 0))
		return NAN;
	pair_caveat(caveat, len, vs, pa, pb, p99);
	return 100.0 * (va / vb - 1);
}

struct measured {
	double peak, p80;       /* change in percent; NAN: not measured */
	char cav_peak[192], cav_p80[192];   /* pair_caveat of each, "" if none */
	char where[256];        /* which run, loads, machine */
	char why[256];          /* when not measured */
	const struct frun *run;
};

/* Latency claims: at the run's peak and at 80 % of it; any-cluster: the best cluster. */
static void measure_latency(const struct fctx *x, const json_t *c, struct measured *m)
{
	const char *wl = jstr(c, "workload", ""), *metric = jstr(c, "metric", "p50"), *vs = jstr(c, "vs", "");
	char a[32], b[32];

	if (!strcmp(wl, "any-cluster")) {
		int best = -1;
		for (int k = 0; k < 4; k++) {
			const struct frun *r = x->panel78[k];
			char cav[192];
			double v = r ? change_at(r, metric, vs, r->peak, cav, sizeof cav) : NAN;
			if (!isnan(v) && (best < 0 || v < m->peak)) {
				best = k;
				m->peak = v;
				m->run = r;
				snprintf(m->cav_peak, sizeof m->cav_peak, "%s", cav);
			}
		}
		for (int k = 0; k < 4; k++) {
			const struct frun *r = x->panel78[k];
			char cav[192];
			double v = r ? change_at(r, metric, vs, r->load80, cav, sizeof cav) : NAN;
			if (!isnan(v) && (isnan(m->p80) || v < m->p80)) {
				m->p80 = v;
				snprintf(m->cav_p80, sizeof m->cav_p80, "%s", cav);
			}
		}
		if (best < 0)
			snprintf(m->why, sizeof m->why, "no cluster run with oq and %s", vs);
		else
			snprintf(m->where, sizeof m->where, "best of the cluster runs (at peak: cluster %d)",
				 clusters[best]);
		return;
	}
	m->run = claim_run(x, wl);
	if (!m->run) {
		snprintf(m->why, sizeof m->why, "not run (no %s run)", wl);
		return;
	}
	if (!sys_of(m->run, vs) || !sys_of(m->run, "oq")) {
		snprintf(m->why, sizeof m->why, "not run (%s has no %s points)", m->run->name,
			 sys_of(m->run, "oq") ? vs : "oq");
		return;
	}
	m->peak = change_at(m->run, metric, vs, m->run->peak, m->cav_peak, sizeof m->cav_peak);
	m->p80 = change_at(m->run, metric, vs, m->run->load80, m->cav_p80, sizeof m->cav_p80);
	fmt_ops(a, sizeof a, m->run->peak);
	fmt_ops(b, sizeof b, m->run->load80);
	snprintf(m->where, sizeof m->where, "%s%s: peak %s offered, 80 %% = %s", m->run->name,
		 m->run->durable ? " (oq durable)" : "", a, b);
}

/* Fig 11 (value size) and Fig 6 (ablation) throughput ratios. */
static void measure_throughput(const struct fctx *x, const json_t *c, struct measured *m)
{
	double vsz = jnum(c, "value_size");
	const char *ratio = jstr(c, "ratio", NULL);

	if (!ratio) {
		const json_t *vals;
		m->run = x->fig11;
		if (!m->run) {
			snprintf(m->why, sizeof m->why, "not run (no value-size sweep)");
			return;
		}
		vals = json_object_get(json_object_get(json_object_get(m->run->run, "config"), "sweep"), "values");
		for (size_t w = 0; w < json_array_size(vals); w++)
			if (json_number_value(json_array_get(vals, w)) == vsz) {
				double a = sweep_peak(m->run->run, "oq", (long long)w, NULL);
				double b = sweep_peak(m->run->run, jstr(c, "vs", "rawrpc"), (long long)w, NULL);
				m->peak = b > 0 ? 100.0 * (a / b - 1) : NAN;
			}
		snprintf(m->where, sizeof m->where, "%s: peak throughput at %.0f B", m->run->name, vsz);
		if (isnan(m->peak))
			snprintf(m->why, sizeof m->why, "not run (%s has no %.0f B point of both systems)",
				 m->run->name, vsz);
		return;
	}
	/* Fig 6: the best throughput of each setting at this size and durability. */
	int dur = json_is_true(json_object_get(c, "durable"));
	double on = NAN, off = NAN;
	for (size_t r = 0; r < x->nfig6; r++) {
		const struct frun *run = x->fig6[r];
		const char *key = jstr(json_object_get(json_object_get(run->run, "config"), "sweep"), "key", "");
		size_t i;
		json_t *p;
		json_array_foreach(json_object_get(run->run, "points"), i, p) {
			const json_t *v = json_object_get(json_object_get(p, "sweep"), "value");
			int pd = json_is_true(json_object_get(p, "durable"));
			double a = jnum(p, "achieved_ops"), *slot = NULL;
			if (jnum(json_object_get(p, "workload"), "value_size") != vsz)
				continue;
			if (!strcmp(ratio, "durability"))
				slot = pd ? &on : &off;
			else if (pd != dur)
				continue;
			else if (!strcmp(ratio, "mp") && !strcmp(key, "verbs.recv_mode") && json_is_string(v))
				slot = strcmp(json_string_value(v), "srq") ? &on : &off;
			else if (!strcmp(ratio, "delegation") && !strcmp(key, "clients.delegation"))
				slot = json_is_true(v) ? &on : &off;
			if (slot && (isnan(*slot) || a > *slot)) {
				*slot = a;
				m->run = run;
			}
		}
	}
	if (isnan(on) || isnan(off) || off <= 0) {
		snprintf(m->why, sizeof m->why, "%s",
			 !strcmp(ratio, "durability") ? "not run (needs fig6-echo and fig6-echo-durable)" :
			 !strcmp(ratio, "mp") ? "not run (needs transport verbs with a verbs.recv_mode sweep "
			 "srq vs slot_ring or mp; shm has no SRQ)" :
			 "not run (needs transport verbs with a clients.delegation sweep; shm has no QPs)");
		m->run = NULL;
		return;
	}
	m->peak = 100.0 * (on / off - 1);
	snprintf(m->where, sizeof m->where, "best throughput of each setting at %.0f B (%.0f vs %.0f ops/s)",
		 vsz, on, off);
}

static const char *holds(double v, const char *direction)
{
	if (isnan(v))
		return "n/a";
	return (!strcmp(direction, "lower") ? v < 0 : v > 0) ? "yes" : "no";
}

static void pct_cell(FILE *f, double v, const char *caveat)
{
	if (isnan(v))
		fputs("<td class=na>—</td>", f);
	else if (caveat && *caveat) {
		fprintf(f, "<td class=num>%+.1f %%<br><span class=caveat>", v);
		html_escape(f, caveat);
		fputs("</span></td>", f);
	} else
		fprintf(f, "<td class=num>%+.1f %%</td>", v);
}

/* The claims table; counts rows and how many hold at peak. */
static void claims_table(FILE *f, const struct fctx *x, const json_t *claims, int *rows, int *held, int *judged)
{
	size_t i;
	json_t *c;

	fputs("<table id=claims>\n<thead><tr><th>Figure (§)</th><th>Workload</th><th>Paper says</th>"
	      "<th>Paper</th><th>Here at peak</th><th>Here at 80 % of peak</th><th>Direction holds "
	      "(peak / 80 %)</th><th>Run, machine and transport</th></tr></thead>\n<tbody>\n", f);
	json_array_foreach(json_object_get(claims, "claims"), i, c) {
		struct measured m = { .peak = NAN, .p80 = NAN };
		const char *dir = jstr(c, "direction", "lower");
		const char *h1, *h2;

		if (!strcmp(jstr(c, "metric", ""), "throughput"))
			measure_throughput(x, c, &m);
		else
			measure_latency(x, c, &m);
		h1 = holds(m.peak, dir);
		h2 = holds(m.p80, dir);
		(*rows)++;
		if (!isnan(m.peak)) {
			(*judged)++;
			*held += !strcmp(h1, "yes");
		}
		fprintf(f, "<tr class=\"%s\"><td>", isnan(m.peak) ? "notrun" : !strcmp(h1, "yes") ? "holds" : "fails");
		html_escape(f, jstr(c, "figure", "?"));
		fputs(" (§", f);
		html_escape(f, jstr(c, "section", "?"));
		fputs(")</td><td>", f);
		html_escape(f, jstr(c, "workload", "?"));
		fputs("</td><td>", f);
		html_escape(f, jstr(c, "text", ""));
		fputs(" <span class=load>[load: ", f);
		html_escape(f, jstr(c, "load", "?"));
		fputs("]</span></td>", f);
		if (json_is_number(json_object_get(c, "change_pct")))
			fprintf(f, "<td class=num>%+.1f %%</td>", jnum(c, "change_pct"));
		else
			fprintf(f, "<td>%s</td>", !strcmp(dir, "lower") ? "lower" : "higher");
		pct_cell(f, m.peak, m.cav_peak);
		pct_cell(f, m.p80, m.cav_p80);
		fprintf(f, "<td>%s / %s</td><td>", h1, h2);
		if (isnan(m.peak)) {
			html_escape(f, m.why[0] ? m.why : "not measured");
		} else {
			html_escape(f, m.where);
			if (m.run) {
				fputs("<br><span class=machine>", f);
				html_escape(f, m.run->machine);
				fputs("</span>", f);
			}
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody>\n</table>\n", f);
}

/* ---------------------------------------------------------------- the check */

#define FLAT_FACTOR 2.0
#define GROW_FACTOR 2.0

/*
 * The qualitative claims of docs/figures.md on clusters 12 and 31.
 * Writes one line per claim ("PASS name: detail" / "FAIL ...") to out and
 * the same as table rows to html (either may be NULL).  Returns the number
 * of failed claims, or -1 when a run the check needs is missing (why in err).
 */
static int check_qualitative(const struct fctx *x, FILE *out, FILE *html, char *err, size_t errlen)
{
	int failed = 0;

	for (int k = 0; k < 4; k++) {
		const struct frun *r = x->panel78[k];
		const struct fsys *oq, *raw, *def;
		char name[64], detail[512], l80[32];
		int ok;

		if (clusters[k] != 12 && clusters[k] != 31)
			continue;
		if (!r) {
			snprintf(err, errlen, "no run of Twitter cluster %d among the runs; run "
				 "configs/fig7-8-cluster%d.json (make figures) first", clusters[k], clusters[k]);
			return -1;
		}
		oq = sys_of(r, "oq");
		raw = sys_of(r, "rawrpc");
		def = sys_of(r, "deferred");
		if (!oq || !raw || !def) {
			snprintf(err, errlen, "%s/run.json: cluster %d needs oq, rawrpc and deferred points; "
				 "it has %s%s%s", r->dir, clusters[k], oq ? "oq " : "", raw ? "rawrpc " : "",
				 def ? "deferred" : "");
			return -1;
		}
		const struct fpt *a = pt_at(oq, r->load80), *b = pt_at(def, r->load80), *c = pt_at(raw, r->load80);
		fmt_ops(l80, sizeof l80, r->load80);
		for (int claim = 0; claim < 3; claim++) {
			if (claim < 2 && (!a || !b || !c)) {
				ok = 0;
				snprintf(detail, sizeof detail, "a system has no point at %s", l80);
			} else if (claim == 0) {
				ok = a->p50 < b->p50 && b->p50 < c->p50;
				snprintf(detail, sizeof detail, "at 80 %% of peak (%s): oq %.1f us, deferred %.1f us, "
					 "rawrpc %.1f us", l80, a->p50 / 1e3, b->p50 / 1e3, c->p50 / 1e3);
			} else if (claim == 1) {
				ok = c->p50 >= 2 * a->p50;
				snprintf(detail, sizeof detail, "at 80 %% of peak (%s): rawrpc/oq median = %.2f "
					 "(needs >= 2)", l80, a->p50 > 0 ? c->p50 / a->p50 : INFINITY);
			} else {
				/* flat: oq's max/min median over the loads up to peak <= 2;
				 * grows: rawrpc's median at peak >= 2 x at its lowest load */
				double lo = INFINITY, hi = 0;
				for (size_t i = 0; i < oq->n && oq->pt[i].offered <= r->peak; i++) {
					lo = fmin(lo, oq->pt[i].p50);
					hi = fmax(hi, oq->pt[i].p50);
				}
				const struct fpt *rp = pt_at(raw, r->peak);
				double g = rp && raw->n && raw->pt[0].p50 > 0 ? rp->p50 / raw->pt[0].p50 : NAN;
				double fl = lo > 0 && isfinite(lo) ? hi / lo : NAN;
				ok = !isnan(fl) && !isnan(g) && fl <= FLAT_FACTOR && g >= GROW_FACTOR;
				snprintf(detail, sizeof detail, "up to peak: oq median max/min = %.2f (flat: <= %.1f), "
					 "rawrpc median at peak / at lowest load = %.2f (grows: >= %.1f)", fl,
					 FLAT_FACTOR, g, GROW_FACTOR);
			}
			static const char *const what[3] = { "order-oq<deferred<rawrpc", "oq-2x-below-rawrpc",
							      "oq-flat-rawrpc-grows" };
			snprintf(name, sizeof name, "cluster%d-%s", clusters[k], what[claim]);
			failed += !ok;
			if (out)
				fprintf(out, "%s %s: %s\n", ok ? "PASS" : "FAIL", name, detail);
			if (html) {
				fprintf(html, "<tr class=%s><td>", ok ? "holds" : "fails");
				html_escape(html, name);
				fprintf(html, "</td><td>%s</td><td>", ok ? "holds" : "fails");
				html_escape(html, detail);
				fputs("</td></tr>\n", html);
			}
		}
	}
	return failed;
}

/* ---------------------------------------------------------------- report */

static const char *const css =
	"body{font-family:sans-serif;margin:1.5em;max-width:1300px;color:#222}"
	"table{border-collapse:collapse;margin:1em 0;font-size:90%}"
	"th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}"
	"th{background:#f0f0f0}td.num{text-align:right;white-space:nowrap}td.na{color:#999}"
	"tr.holds td:nth-child(7){background:#e6f4e6}tr.fails td:nth-child(7){background:#f8e0e0}"
	"tr.notrun{color:#777}.load,.machine{color:#666;font-size:90%}.caveat{color:#a40;font-size:85%}"
	"img{max-width:100%;border:1px solid #ddd;margin:.5em 0}figure{margin:1em 0}"
	"#check tr.fails td:nth-child(2){background:#f8e0e0}#check tr.holds td:nth-child(2){background:#e6f4e6}";

static void fig_html(FILE *f, const char *file, const char *caption)
{
	fputs("<figure><img src=\"", f);
	html_escape(f, file);
	fputs("\" alt=\"", f);
	html_escape(f, caption);
	fputs("\"><figcaption>", f);
	html_escape(f, caption);
	fputs("</figcaption></figure>\n", f);
}

static int write_report(const struct fctx *x, const json_t *claims, const char *claims_path, const char *out,
			int have_tgap, char *err, size_t errlen)
{
	char path[PATH_MAX + 32], cerr[512];
	FILE *f;
	int rows = 0, held = 0, judged = 0;

	snprintf(path, sizeof path, "%s/index.html", out);
	if (!(f = open_w(path, err, errlen)))
		return -1;
	fprintf(f, "<!DOCTYPE html>\n<html lang=en><head><meta charset=\"utf-8\">\n<title>oqbench: the paper's "
		"figures and claims</title>\n<style>%s</style></head>\n<body>\n", css);
	fputs("<h1>Reproducing <i>Achieving Wire-Latency Storage Systems by Exploiting Hardware ACKs</i> "
	      "(NSDI'25)</h1>\n<p>Written by <code>oqb figures</code>. The paper's numbers come from one data "
	      "file (", f);
	html_escape(f, claims_path ? claims_path : "docs/paper-claims.json");
	fputs("), each with its section and figure. Change = OQ's value relative to the baseline (negative: "
	      "OQ lower). Peak = the knee when the run found one, else as the run table says. A change marked "
	      "<span class=caveat>saturated</span> compares a point whose offered load exceeded what that "
	      "system sustained: its latency is a queue that grew for the whole window, so the percentage "
	      "grows with the run's length and says little about the system; one marked "
	      "<span class=caveat>flagged</span> had a self-check warn about the number compared (run.json's "
	      "<code>flagged_by</code> says which). A direction "
	      "that holds on this machine says nothing about the paper's magnitudes: a 2-core VM on shared "
	      "memory is not a 100 Gbit/s RDMA testbed.</p>\n", f);

	fputs("<h2>Claims</h2>\n", f);
	claims_table(f, x, claims, &rows, &held, &judged);
	fprintf(f, "<p id=claims-summary>%d claims; %d measured here, of which %d hold in direction at peak.</p>\n",
		rows, judged, held);

	fputs("<h2>Fidelity check (<code>oqb figures --check</code>)</h2>\n<table id=check><thead><tr><th>claim"
	      "</th><th>verdict</th><th>measured</th></tr></thead><tbody>\n", f);
	if (check_qualitative(x, NULL, f, cerr, sizeof cerr) < 0) {
		fputs("<tr class=notrun><td>all</td><td>not judged</td><td>", f);
		html_escape(f, cerr);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);

	fputs("<h2>Figures</h2>\n", f);
	fig_html(f, "fig7.svg", "Fig 7: median latency vs throughput, Twitter clusters 12, 19, 27, 31 "
		 "(hollow: a self-check warned about the number drawn; bars: the trials' range; dashed: the peak)");
	fig_html(f, "fig8.svg", "Fig 8: P99 latency vs throughput, Twitter clusters 12, 19, 27, 31");
	fig_html(f, "fig9.svg", "Fig 9: median latency vs throughput, YCSB-like put ratios (oq durable = "
		 "JuneBerry-D where the run has it)");
	fig_html(f, "fig10.svg", "Fig 10: P99 latency vs throughput, YCSB-like put ratios");
	fig_html(f, "fig6.svg", "Fig 6: throughput vs requests in flight. Stand-ins: on shm the x axis is "
		 "requests in flight of one client thread, not client machines; the shm ring (contiguous "
		 "slots claimed in order) stands in for the multi-packet SRQ; delegation and the MP on/off "
		 "ablation need transport verbs (slot_ring is the portable MP stand-in there)");
	fig_html(f, "fig11.svg", "Fig 11: peak throughput vs value size, 50 % put, pmkv backend "
		 "(oq durable = JuneBerry-D)");
	fig_html(f, "fig2.svg", have_tgap ? "Fig 2: CDF over the traces of the share of requests with T_gap "
		 "in [0, 2 s] (the sample traces in traces/, not the paper's 54 clusters)" :
		 "Fig 2: not run (no T_gap data)");

	fputs("<h2>Runs</h2>\n<table id=runs><thead><tr><th>run</th><th>directory</th><th>figure</th>"
	      "<th>machine and transport</th><th>created (UTC)</th><th>commit</th><th>peak</th></tr></thead>"
	      "<tbody>\n", f);
	for (size_t i = 0; i < x->nruns; i++) {
		const struct frun *r = &x->runs[i];
		static const char *const fig[] = { "none", "7/8", "9/10", "6", "11" };
		char pk[32];
		fputs("<tr><td>", f);
		html_escape(f, r->name);
		if (strcmp(jstr(r->run, "status", "ok"), "ok") != 0) {
			/* a run that stopped early still draws the points it has */
			fputs(" <span class=machine>(status ", f);
			html_escape(f, jstr(r->run, "status", "?"));
			fputs(": ", f);
			html_escape(f, jstr(json_object_get(r->run, "error"), "message",
					    jstr(r->run, "error", "no error recorded")));
			fputs(")</span>", f);
		}
		fputs("</td><td>", f);
		html_escape(f, r->dir);
		fprintf(f, "</td><td>%s%s</td><td>", fig[r->fig], r->drawn || r->fig == FIG_NONE ? "" :
			" (not drawn: another run of this panel is, durable or newer)");
		html_escape(f, r->machine);
		fputs("</td><td>", f);
		html_escape(f, r->created);
		fputs("</td><td>", f);
		html_escape(f, r->commit);
		fputs("</td><td>", f);
		if (r->fig == FIG_78 || r->fig == FIG_910) {
			fmt_ops(pk, sizeof pk, r->peak);
			html_escape(f, pk);
			fputs(": ", f);
			html_escape(f, r->basis);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n</body></html>\n", f);
	if (close_w(f, path, err, errlen) < 0)
		return -1;
	printf("%s\n", path);
	return 0;
}

/* ---------------------------------------------------------------- main */

static int find_claims(const char *plotdir, char *out, size_t cap)
{
	snprintf(out, cap, "%s/../docs/paper-claims.json", plotdir);
	return access(out, R_OK) == 0 ? 0 : -1;
}

int figures_main(int argc, char **argv)
{
	struct fig_opts o;
	struct fctx x;
	char err[8192], plotdir[PATH_MAX], outdir[PATH_MAX], claims_path[PATH_MAX + 64], tgap[PATH_MAX + 32];
	int npos = 0, r, rc = 2, have_tgap = 0;
	json_t *claims = NULL;
	json_error_t je;

	memset(&o, 0, sizeof o);
	r = opts_parse(fig_tab, &o, argc, argv, &npos, err, sizeof err);
	if (r == 1)
		return 0;
	if (r < 0 || npos != 0) {
		fprintf(stderr, "oqb figures: %s\nusage: oqb figures [--runs DIR] [--out DIR] [--check]\n",
			r < 0 ? err : "takes no positional arguments; give the runs with --runs DIR");
		return 2;
	}
	memset(&x, 0, sizeof x);
	x.runs = calloc(FG_MAXRUNS, sizeof *x.runs);
	if (!x.runs) {
		fprintf(stderr, "oqb figures: out of memory\n");
		return 2;
	}
	if (!o.runs)
		o.runs = "results";
	if (load_tree(&x, o.runs, 2, err, sizeof err) < 0) {
		fprintf(stderr, "oqb figures: %s\n", err);
		goto out;
	}
	if (x.nruns == 0) {
		fprintf(stderr, "oqb figures: no run.json under %s (nor one or two levels below); give the "
			"directory of a reproduction's runs with --runs DIR (make figures writes one)\n", o.runs);
		goto out;
	}
	pick_panels(&x);
	if (o.check) {
		r = check_qualitative(&x, stdout, NULL, err, sizeof err);
		if (r < 0)
			fprintf(stderr, "oqb figures --check: %s\n", err);
		else
			printf("check: %d of 6 qualitative claims fail\n", r);
		rc = r < 0 ? 2 : r > 0;
		goto out;
	}
	rc = 1;
	if (plot_find_dir(plotdir, sizeof plotdir) < 0) {
		fprintf(stderr, "oqb figures: cannot find plot/ next to %s or above it; set OQB_PLOT_DIR to "
			"oqbench's plot/ directory\n", self_bin_dir());
		goto out;
	}
	if (o.claims)
		snprintf(claims_path, sizeof claims_path, "%s", o.claims);
	else if (find_claims(plotdir, claims_path, sizeof claims_path) < 0) {
		fprintf(stderr, "oqb figures: cannot read %s; give the paper's numbers with --claims FILE "
			"(docs/paper-claims.json of oqbench)\n", claims_path);
		goto out;
	}
	claims = json_load_file(claims_path, 0, &je);
	if (!claims || !json_is_array(json_object_get(claims, "claims"))) {
		fprintf(stderr, "oqb figures: %s:%d: %s; expected an object with a \"claims\" array "
			"(docs/paper-claims.json)\n", claims_path, claims ? 1 : je.line,
			claims ? "no claims array" : je.text);
		goto out;
	}
	snprintf(outdir, sizeof outdir, "%s", o.out ? o.out : o.runs);
	if (!o.out)
		snprintf(outdir + strlen(outdir), sizeof outdir - strlen(outdir), "/report");
	if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "oqb figures: cannot create %s: %s\n", outdir, strerror(errno));
		goto out;
	}
	snprintf(tgap, sizeof tgap, "%s/tgap-cdf.dat", o.runs);
	{
		const char *const t78[4] = { "(a) Cluster-12", "(b) Cluster-19", "(c) Cluster-27", "(d) Cluster-31" };
		if (draw_lt(plotdir, outdir, "fig7", x.panel78, t78, 2, "Fig 7: median latency vs throughput "
			    "(Twitter clusters, cache backend)", err, sizeof err) < 0 ||
		    draw_lt(plotdir, outdir, "fig8", x.panel78, t78, 3, "Fig 8: P99 latency vs throughput "
			    "(Twitter clusters, cache backend)", err, sizeof err) < 0 ||
		    draw_lt(plotdir, outdir, "fig9", x.panel910, put_titles, 2, "Fig 9: median latency vs "
			    "throughput (YCSB-like, pmkv where durable)", err, sizeof err) < 0 ||
		    draw_lt(plotdir, outdir, "fig10", x.panel910, put_titles, 3, "Fig 10: P99 latency vs "
			    "throughput (YCSB-like, pmkv where durable)", err, sizeof err) < 0 ||
		    draw_fig6(&x, plotdir, outdir, err, sizeof err) < 0 ||
		    draw_fig11(&x, plotdir, outdir, err, sizeof err) < 0 ||
		    draw_fig2(o.tgap ? o.tgap : tgap, plotdir, outdir, &have_tgap, err, sizeof err) < 0 ||
		    write_report(&x, claims, o.claims, outdir, have_tgap, err, sizeof err) < 0) {
			fprintf(stderr, "oqb figures: %s\n", err);
			goto out;
		}
	}
	rc = 0;
out:
	for (size_t i = 0; i < x.nruns; i++)
		json_decref(x.runs[i].run);
	free(x.runs);
	json_decref(claims);
	return rc;
}
