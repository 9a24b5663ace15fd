/*
 * figfaith.c - how faithful the cache imitation is: the project's
 * Memcached-like `cache` against Debian's `memcached` on the workloads of
 * Figs 7/8 (figures.c is the map; docs/figures.md, "Faithfulness").
 *
 * What it owns.  For Twitter clusters 12 and 31 it pairs the run drawn in
 * Figs 7/8 when its backend is the cache (panel78) with the newest run of
 * the same cluster on memcached (mc78), and draws faithful.svg through
 * plot/fig-faithful.gp: one row per cluster, three panels (median latency,
 * P99 latency, and the server's per-request service time, each against
 * achieved throughput), one line per system and backend, the colour the
 * system's, solid for the cache and dashed for memcached.  Bars are the
 * trials' range for latencies and the median's 95 % CI for service times;
 * a point is hollow when a self-check warned about the number drawn
 * (latency) or when that CI is wider than +-10 % of the median (service
 * time).  A row without both runs says "not run" and which is missing.
 * The report's table gives, per cluster and backend at 80 % of the run's
 * own knee, the median latencies, oq/rawrpc, and the service times with
 * their CIs and sample sizes, each with its caveats (saturated, flagged).
 *
 * Each run finds its own knee (the loads are fractions of it), so the two
 * backends are compared at the same fraction of what each sustained, not
 * at the same offered load; the figure shows both against achieved
 * throughput.
 */
#include "figures_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const int faith_slots[2] = { 0, 3 };   /* clusters 12 and 31 */
#define FAITH_CI_WIDE 0.10                      /* service median CI half-width drawn hollow */

int fg_faith_pair(const struct fctx *x, int k, const struct frun **cache, const struct frun **mc)
{
	const struct frun *c = x->panel78[k];
	*cache = c && !strcmp(c->backend, "cache") && c->nsys ? c : NULL;
	*mc = x->mc78[k] && x->mc78[k]->nsys ? x->mc78[k] : NULL;
	return *cache && *mc;
}

/* Which line style a system gets: its colour in every panel. */
static int sys_style(const char *name)
{
	static const char *const order[] = { "oq", "rawrpc", "deferred", "erpc" };
	for (int i = 0; i < 4; i++)
		if (!strcmp(name, order[i]))
			return i + 1;
	return 5;
}

/* One panel's data: a block per (system, backend), columns
 * x_kops y_us flagged y_lo_us y_hi_us, in offered-load order.  what: 0
 * median, 1 P99, 2 service median.  Writes the series' names and line
 * styles (the system's colour, + 10 dashed for memcached) blank-separated.
 * -1 with err. */
static int write_panel(const char *path, const struct frun *const runs[2], int what, char *names, char *styles,
		       size_t len, char *err, size_t errlen)
{
	FILE *f = fg_open_w(path, err, errlen);
	int b = 0;

	if (!f)
		return -1;
	names[0] = styles[0] = '\0';
	fprintf(f, "# oqb figures, faithfulness: achieved_kops %s flagged lo hi, one block per system/backend\n",
		what == 0 ? "p50_us" : what == 1 ? "p99_us" : "service_p50_us");
	for (size_t j = 0; j < runs[0]->nsys + runs[1]->nsys; j++) {
		const struct frun *r = runs[j < runs[0]->nsys ? 0 : 1];
		const struct fsys *s = &r->sys[j < runs[0]->nsys ? j : j - runs[0]->nsys];
		char label[96], w[96];
		int rows = 0;
		for (size_t i = 0; i < s->n; i++) {
			const struct fpt *t = &s->pt[i];
			double y = what == 0 ? t->p50 : what == 1 ? t->p99 : t->svc50;
			double lo = what == 0 ? t->lo50 : what == 1 ? t->lo99 : t->svc50_lo;
			double hi = what == 0 ? t->hi50 : what == 1 ? t->hi99 : t->svc50_hi;
			int fl = what < 2 ? t->flag_q[what] :
				 !(hi - lo <= 2 * FAITH_CI_WIDE * y);   /* NAN bounds: hollow */
			if (!isfinite(y) || !isfinite(t->achieved))
				continue;
			if (!rows++)
				fprintf(f, "%s# series %s/%s\n", b ? "\n\n" : "", s->name, r->backend);
			fprintf(f, "%.4f %.4f %d %.4f %.4f\n", t->achieved / 1e3, y / 1e3, fl,
				(isfinite(lo) ? lo : y) / 1e3, (isfinite(hi) ? hi : y) / 1e3);
		}
		if (!rows)
			continue;
		snprintf(label, sizeof label, "%s/%s", s->name, r->backend);
		fg_legend_word(w, sizeof w, label);
		snprintf(names + strlen(names), len - strlen(names), "%s%s", b ? " " : "", w);
		snprintf(styles + strlen(styles), len - strlen(styles), "%s%d", b ? " " : "",
			 sys_style(s->name) + (strcmp(r->backend, "memcached") ? 0 : 10));
		b++;
	}
	return fg_close_w(f, path, err, errlen);
}

int fg_draw_faith(const struct fctx *x, const char *plotdir, const char *out, char *err, size_t errlen)
{
	static const char *const what[3] = { "median latency", "P99 latency", "service time, median" };
	static const char *const ylab[3] = { "Median latency (µs)", "P99 latency (µs)", "Service time (µs)" };
	char params[PATH_MAX + 64], data[PATH_MAX + 64], svg[PATH_MAX + 64], script[PATH_MAX + 64];
	char names[1024], styles[256], title[512];
	FILE *f;

	snprintf(params, sizeof params, "%s/faithful.gp-params", out);
	snprintf(svg, sizeof svg, "%s/faithful.svg", out);
	if (!(f = fg_open_w(params, err, errlen)))
		return -1;
	fprintf(f, "# written by oqb figures for plot/fig-faithful.gp\nout = ");
	fg_gp_quote(f, svg);
	fprintf(f, "\nfigtitle = 'Faithfulness: the cache (solid) against memcached (dashed), same workload, "
		"loads as fractions of each run''s knee'\n");
	for (int row = 0; row < 2; row++) {
		int k = faith_slots[row];
		const struct frun *c, *m;
		int have = fg_faith_pair(x, k, &c, &m);
		const struct frun *runs[2] = { c, m };
		for (int col = 0; col < 3; col++) {
			int p = row * 3 + col + 1;
			names[0] = styles[0] = '\0';
			snprintf(data, sizeof data, "%s/faithful-%d.dat", out, p);
			if (have && write_panel(data, runs, col, names, styles, sizeof styles, err, errlen) < 0) {
				fclose(f);
				return -1;
			}
			if (have)
				snprintf(title, sizeof title, "Cluster-%d: %s (%s)", fg_clusters[k], what[col], c->transport);
			else
				snprintf(title, sizeof title, "Cluster-%d: %s: not run (no run on %s%s%s)", fg_clusters[k],
					 what[col], c ? "" : "the cache", !c && !m ? " nor " : "", m ? "" : "memcached");
			fprintf(f, "data%d = ", p);
			fg_gp_quote(f, have ? data : "");
			fprintf(f, "\nptitle%d = ", p);
			fg_gp_quote(f, title);
			fprintf(f, "\nnames%d = ", p);
			fg_gp_quote(f, names);
			fprintf(f, "\nstyles%d = '%s'\nylabel%d = '%s'\n", p, styles, p, ylab[col]);
		}
	}
	if (fg_close_w(f, params, err, errlen) < 0)
		return -1;
	snprintf(script, sizeof script, "%s/fig-faithful.gp", plotdir);
	return fg_gnuplot_run(script, params, NULL, NULL, err, errlen);
}

/* ---------------------------------------------------------------- report */

static void us_cell(FILE *f, double ns)
{
	if (isfinite(ns))
		fprintf(f, "%.2f", ns / 1e3);
	else
		fputs("—", f);
}

/* What a reader must know about a latency median at 80 %: saturated, or
 * a self-check that warned about it. */
static void lat_note(FILE *f, const char *sys, const struct fpt *t)
{
	if (!t)
		return;
	if (t->saturated) {
		fputs("<br><span class=caveat>", f);
		fg_html_escape(f, sys);
		fputs(" saturated</span>", f);
	} else if (t->flag_q[0]) {
		fputs("<br><span class=caveat>", f);
		fg_html_escape(f, sys);
		fputs(" flagged (", f);
		fg_html_escape(f, t->warns_q[0][0] ? t->warns_q[0] : "?");
		fputs(")</span>", f);
	}
}

/* The service time of one system's point: median [95 % CI], P99, the
 * classes' medians, and how many requests were timed. */
static void svc_cell(FILE *f, const char *sys, const struct fpt *t)
{
	fputs("<b>", f);
	fg_html_escape(f, sys);
	fputs("</b> ", f);
	if (!t) {
		fputs("no point with latency samples at this load", f);
		return;
	}
	if (!(t->svc_n > 0)) {
		fputs("not measured (a run from before service times, server.service_sample 0, or no "
		      "request timed in the window)", f);
		return;
	}
	fprintf(f, "%.3f µs [%.3f, %.3f], P99 %.2f µs; sets and deletes %.3f, others %.3f; n %.0f (1 in %d",
		t->svc50 / 1e3, t->svc50_lo / 1e3, t->svc50_hi / 1e3, t->svc99 / 1e3, t->svc_nil50 / 1e3,
		t->svc_non50 / 1e3, t->svc_n, t->svc_every);
	if (t->trials > 1)
		fprintf(f, ", %d trials", t->trials);
	fputs(")", f);
	if (t->svc50_hi - t->svc50_lo > 2 * FAITH_CI_WIDE * t->svc50)
		fputs(" <span class=caveat>CI wider than ±10 %</span>", f);
}

/* One row: a run of one cluster on one backend, at 80 % of its knee. */
static double faith_row(FILE *f, const struct frun *r, int k)
{
	const struct fsys *oq = fg_sys_of(r, "oq"), *raw = fg_sys_of(r, "rawrpc"), *def = fg_sys_of(r, "deferred");
	const struct fpt *a = oq ? fg_pt_at(oq, r->load80) : NULL, *b = raw ? fg_pt_at(raw, r->load80) : NULL;
	const struct fpt *d = def ? fg_pt_at(def, r->load80) : NULL;
	double ratio = a && b && b->p50 > 0 ? a->p50 / b->p50 : NAN;
	char pk[32], l80[32];

	fg_fmt_ops(pk, sizeof pk, r->peak);
	fg_fmt_ops(l80, sizeof l80, r->load80);
	fprintf(f, "<tr><td>%d</td><td>", fg_clusters[k]);
	fg_html_escape(f, r->backend);
	fputs("</td><td>", f);
	fg_html_escape(f, r->name);
	fputs("<br><span class=machine>", f);
	fg_html_escape(f, r->dir);
	fputs("; ", f);
	fg_html_escape(f, r->machine);
	fputs("</span></td><td>", f);
	fg_html_escape(f, pk);
	fputs(": ", f);
	fg_html_escape(f, r->basis);
	fputs("</td><td class=num>", f);
	fg_html_escape(f, l80);
	fputs("</td><td class=num>", f);
	us_cell(f, a ? a->p50 : NAN);
	fputs(" / ", f);
	us_cell(f, d ? d->p50 : NAN);
	fputs(" / ", f);
	us_cell(f, b ? b->p50 : NAN);
	lat_note(f, "oq", a);
	lat_note(f, "deferred", d);
	lat_note(f, "rawrpc", b);
	fputs("</td><td class=num>", f);
	if (isfinite(ratio))
		fprintf(f, "%.3f", ratio);
	else
		fputs("—", f);
	fputs("</td><td>", f);
	svc_cell(f, "oq", a);
	fputs("<br>", f);
	svc_cell(f, "deferred", d);
	fputs("<br>", f);
	svc_cell(f, "rawrpc", b);
	fputs("</td></tr>\n", f);
	return ratio;
}

void fg_faith_html(FILE *f, const struct fctx *x)
{
	fputs("<h2 id=faithfulness>Faithfulness: the cache against memcached</h2>\n<p>The same Twitter-cluster "
	      "workloads (Figs 7/8) on the project's Memcached-like <code>cache</code> and on Debian's "
	      "<code>memcached</code> (<code>make figures</code> runs both; docs/figures.md). Each run finds its "
	      "own knee, so the backends are compared at the same fraction of what each sustained. Service time "
	      "is the backend's time per request in the server worker, from the clock read just before and just "
	      "after the backend call: no queueing, no reply (docs/driver.md, \"Service time\"; for memcached it "
	      "is the worker's side: a quiet set that oq or deferred already committed returns once written, "
	      "while a get, and every request under rawrpc, waits for memcached's answer). It is merged over "
	      "the trials, with the median's 95 % order-statistic CI.</p>\n", f);
	fputs("<figure><img src=\"faithful.svg\" alt=\"Faithfulness: cache against memcached\"><figcaption>"
	      "Faithfulness: median and P99 latency and the median service time per request vs achieved "
	      "throughput, clusters 12 and 31; solid: cache, dashed: memcached; hollow: a self-check warned "
	      "(latency) or the median's CI is wider than ±10 % (service time)</figcaption></figure>\n", f);
	fputs("<table id=faith><thead><tr><th>Cluster</th><th>Backend</th><th>Run and machine</th><th>Peak</th>"
	      "<th>80 % of the knee</th><th>Median latency at 80 %, µs: oq / deferred / rawrpc</th>"
	      "<th>oq / rawrpc median</th><th>Service time per request at 80 % (median [95 % CI])</th>"
	      "</tr></thead><tbody>\n", f);
	for (int row = 0; row < 2; row++) {
		int k = faith_slots[row];
		const struct frun *c, *m;
		if (!fg_faith_pair(x, k, &c, &m)) {
			fprintf(f, "<tr class=notrun><td>%d</td><td colspan=7>not run: %s%s%s (make figures runs "
				"fig7-8-cluster%d.json on both)</td></tr>\n", fg_clusters[k], c ? "" : "no run on the cache",
				!c && !m ? ", " : "", m ? "" : "no run on memcached", fg_clusters[k]);
			continue;
		}
		double rc = faith_row(f, c, k), rm = faith_row(f, m, k);
		fprintf(f, "<tr class=summary><td>%d</td><td colspan=7>oq / rawrpc median at 80 %% of the knee: "
			"cache ", fg_clusters[k]);
		if (isfinite(rc))
			fprintf(f, "%.3f", rc);
		else
			fputs("—", f);
		fputs(", memcached ", f);
		if (isfinite(rm))
			fprintf(f, "%.3f", rm);
		else
			fputs("—", f);
		if (isfinite(rc) && isfinite(rm) && rc > 0)
			fprintf(f, " (memcached / cache %.2f)", rm / rc);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}
