/*
 * figonesided.c - the one-sided designs the paper argues against, beside
 * oq (issue 52; docs/systems.md, docs/figures.md "One-sided writes"):
 * the figure, the checker's verdicts and the claim rows (figures.c is the
 * map).
 *
 * The run.  The newest run with seqwrite or write1 among its systems
 * (configs/onesided-verbs.json, make figures-onesided: oq, seqwrite,
 * write1 and rawrpc on one config, every point's history checked).
 *
 * The figure (onesided.svg, plot/fig-onesided.gp): median and P99 latency
 * against achieved throughput, one line per system, each titled with the
 * checker's verdict over the histories of the points drawn:
 *   "linearizable"          every point checked, verdict ok;
 *   "N violations found"    N = the keys with a violation, summed over
 *                           the points (run.json point.check.keys_violation);
 *   "no violation found, K undecided" / "not checked at K points" /
 *   "not run"               otherwise: never "linearizable" without a
 *                           verdict of ok at every point.
 *
 * The claim rows (docs/paper-claims.json, "onesided_claims"): per system,
 * the nilext commit's median relative to oq's, both taken at the run's
 * lowest load (offered ops/s, or requests in flight per client thread in
 * a closed-loop run: the least queueing; one run, so the ratio compares
 * like with like), against the claim's range ("about two round trips":
 * seqwrite 1.6-2.5x), and the verdict against the claim's linearizable
 * (write1: false, so it holds only when violations were found).  A row
 * holds when both parts hold (a "no" names the part that failed); a ratio taken from a saturated or flagged
 * point says so.  Nothing here is fixed in the code: the ranges and the
 * expected verdicts come from the claims file, the numbers from the run.
 */
#include "figures_internal.h"
#include "ltscale.h"
#include "result.h"
#include "checks.h"

#include <math.h>
#include <string.h>

/* What one system's points of the run say. */
struct os_sys {
	char name[48];
	int points;              /* points of sweep index 0 with latency samples */
	int checked, ok, unknown; /* points with a check verdict; ok; unknown or error */
	long long viol_keys;     /* keys with a violation, summed over the points */
	int viol_points;         /* points with a violation */
	long long ops;           /* operations checked */
	double low_load;         /* the run's lowest offered load, and there: */
	double nil50;            /* the nilext median, ns (NAN: none) */
	int low_sat, low_flag;
	char low_warn[64];
};

/* A closed-loop run: its loads are requests in flight per client thread. */
static int closed_loop(const struct frun *r)
{
	const char *kind = result_setting_str(r->run, "arrival.kind");
	return kind && !strcmp(kind, "closed");
}

static double lowest_load(const json_t *run)
{
	double low = NAN;
	size_t i;
	json_t *p;

	json_array_foreach(result_points(run), i, p) {
		double l = fg_pt_load(p);
		if (fg_pt_sweep(p) == 0 &&
		    isfinite(l) && (isnan(low) || l < low))
			low = l;
	}
	return low;
}

/* Fills s for system name from the run's points. */
static void os_collect(const struct frun *r, const char *name, struct os_sys *s)
{
	size_t i;
	json_t *p;

	memset(s, 0, sizeof *s);
	snprintf(s->name, sizeof s->name, "%s", name);
	s->low_load = lowest_load(r->run);
	s->nil50 = NAN;
	json_array_foreach(result_points(r->run), i, p) {
		struct result_lincheck ck;
		const char *v = result_lincheck(p, &ck) == 0 ? ck.verdict : NULL;

		if (!fg_pt_is(p, name) || fg_pt_sweep(p) != 0)
			continue;
		s->points++;
		if (v) {
			s->checked++;
			s->ops += ck.ops;
			if (!strcmp(v, "ok"))
				s->ok++;
			else if (!strcmp(v, "violation")) {
				s->viol_points++;
				s->viol_keys += ck.keys_violation;
			} else
				s->unknown++;
		}
		if (fg_pt_load(p) == s->low_load) {
			const json_t *nil = result_lat(p, "nilext");
			if (result_n(nil) > 0)
				s->nil50 = result_num(nil, "p50");
			s->low_sat = result_saturated(p);
			s->low_flag = checks_point_flagged(p, "p50", s->low_warn, sizeof s->low_warn);
		}
	}
}

/* The verdict in words, for the legend and the table. */
static void os_verdict(const struct os_sys *s, char *buf, size_t len)
{
	if (s->points == 0)
		snprintf(buf, len, "not run");
	else if (s->viol_keys > 0)
		snprintf(buf, len, "%lld violation%s found", s->viol_keys, s->viol_keys == 1 ? "" : "s");
	else if (s->checked == 0)
		snprintf(buf, len, "not checked (no history)");
	else if (s->checked < s->points)
		snprintf(buf, len, "no violation found, not checked at %d of %d points", s->points - s->checked,
			 s->points);
	else if (s->unknown > 0)
		snprintf(buf, len, "no violation found, %d point%s undecided", s->unknown, s->unknown == 1 ? "" : "s");
	else
		snprintf(buf, len, "linearizable");
}

/* Whether the server used a Soft-RoCE device (rxe*, the kernel's rdma_rxe
 * driver, which runs RDMA, atomics included, in software): a point's
 * server.transport.device. */
static int on_softroce(const struct frun *r)
{
	size_t i;
	json_t *p;

	json_array_foreach(result_points(r->run), i, p) {
		const char *d = result_device(p);
		if (d && !strncmp(d, "rxe", 3))
			return 1;
	}
	return 0;
}

int fg_draw_onesided(const struct fctx *x, const char *plotdir, const char *out, char *err, size_t errlen)
{
	char params[PATH_MAX + 64], data[PATH_MAX + 64], svg[PATH_MAX + 64], script[PATH_MAX + 64], names[1024];
	const struct frun *r = x->onesided;
	struct lts_axes ax;
	FILE *f;

	if (!r || !r->nsys)
		return 0;
	snprintf(params, sizeof params, "%s/onesided.gp-params", out);
	snprintf(svg, sizeof svg, "%s/onesided.svg", out);
	snprintf(data, sizeof data, "%s/onesided.dat", out);
	if (fg_write_lt_panel(r, data, names, sizeof names, err, errlen) < 0 || !(f = fg_open_w(params, err, errlen)))
		return -1;
	fputs("# written by oqb figures for plot/fig-onesided.gp\nout = ", f);
	fg_gp_quote(f, svg);
	fputs("\ndata = ", f);
	fg_gp_quote(f, data);
	fputs("\nfigtitle = ", f);
	{
		char t[512];
		snprintf(t, sizeof t, "One-sided writes beside OQ: %s, %s, %s%s", r->name, r->transport, r->backend,
			 on_softroce(r) ? " (Soft-RoCE: RDMA and its atomics run in software)" : "");
		fg_gp_quote(f, t);
	}
	fprintf(f, "\nnsys = %zu\n", r->nsys);
	for (size_t j = 0; j < r->nsys; j++) {
		struct os_sys s;
		char v[128], t[200];
		os_collect(r, r->sys[j].name, &s);
		os_verdict(&s, v, sizeof v);
		snprintf(t, sizeof t, "%s: %s", r->sys[j].name, v);
		fprintf(f, "title%zu = ", j + 1);
		fg_gp_quote(f, t);
		fputc('\n', f);
	}
	fg_panel_axes(r, 2, &ax);
	lts_write_gp(f, "1", &ax);
	fg_panel_axes(r, 3, &ax);
	lts_write_gp(f, "2", &ax);
	if (fg_close_w(f, params, err, errlen) < 0)
		return -1;
	snprintf(script, sizeof script, "%s/fig-onesided.gp", plotdir);
	return fg_gnuplot_run(script, params, NULL, NULL, err, errlen);
}

/* One claim row, judged; appended to the table and returned as JSON. */
static json_t *os_claim(FILE *f, const struct frun *r, const json_t *c, const struct os_sys *oq)
{
	const char *sys = fg_jstr(c, "system", "?");
	const json_t *rng = json_object_get(c, "ratio");
	double lo = json_number_value(json_array_get(rng, 0)), hi = json_number_value(json_array_get(rng, 1));
	int want_lin = json_is_true(json_object_get(c, "linearizable"));
	struct os_sys s;
	char verdict[128], cav[160] = "";
	double ratio = NAN;
	const char *rh, *lh, *all;

	os_collect(r, sys, &s);
	os_verdict(&s, verdict, sizeof verdict);
	if (s.points && oq->points && isfinite(s.nil50) && isfinite(oq->nil50) && oq->nil50 > 0)
		ratio = s.nil50 / oq->nil50;
	if (s.low_sat || oq->low_sat)
		snprintf(cav, sizeof cav, "%s saturated", s.low_sat ? sys : "oq");
	else if (s.low_flag || oq->low_flag)
		snprintf(cav, sizeof cav, "%s flagged (%s)", s.low_flag ? sys : "oq", s.low_flag ? s.low_warn : oq->low_warn);
	rh = !isfinite(ratio) ? "not measured" : (ratio >= lo - 1e-9 && ratio <= hi + 1e-9) ? "yes" : "no";
	if (!s.points || s.checked == 0)
		lh = "not measured";
	else if (want_lin)
		lh = (s.ok == s.points) ? "yes" : s.viol_keys > 0 ? "no" : "not decided";
	else
		lh = s.viol_keys > 0 ? "yes" : "no";
	all = (!strcmp(rh, "yes") && !strcmp(lh, "yes")) ? "yes" :
	      (!strcmp(rh, "no") || !strcmp(lh, "no")) ? "no" : "not measured";

	fputs("<tr><td>", f);
	fg_html_escape(f, fg_jstr(c, "text", ""));
	fputs(" <span class=load>(§", f);
	fg_html_escape(f, fg_jstr(c, "section", "?"));
	fputs(")</span></td><td>", f);
	fg_html_escape(f, sys);
	fputs("</td><td class=num>", f);
	if (isfinite(s.nil50))
		fprintf(f, "%.1f µs", s.nil50 / 1000.0);
	else
		fputs("none", f);
	fputs("</td><td class=num>", f);
	if (isfinite(ratio))
		fprintf(f, "%.2f x", ratio);
	else
		fputs("not measured", f);
	if (cav[0]) {
		fputs("<span class=caveat>", f);
		fg_html_escape(f, cav);
		fputs("</span>", f);
	}
	if (lo == hi)
		fprintf(f, "</td><td class=num>%.2g x (the unit)", lo);
	else
		fprintf(f, "</td><td class=num>%.2g-%.2g x", lo, hi);
	fputs("</td><td>", f);
	fg_html_escape(f, verdict);
	fprintf(f, "</td><td>%s</td><td class=verdict><span class=%s>%s</span>%s</td></tr>\n",
		want_lin ? "linearizable" : "violations found", !strcmp(all, "yes") ? "yes" : !strcmp(all, "no") ?
		"no" : "na", all, strcmp(all, "no") ? "" : !strcmp(rh, "no") && !strcmp(lh, "no") ?
		"<span class=caveat>ratio and verdict</span>" : !strcmp(rh, "no") ? "<span class=caveat>the ratio</span>" :
		"<span class=caveat>the verdict</span>");

	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:[f,f],s:b,s:s,s:I,s:I,s:s,s:s,s:s}", "id", fg_jstr(c, "id", "?"),
			      "system", sys, "text", fg_jstr(c, "text", ""), "run", r->dir, "ratio_range", lo, hi,
			      "linearizable_expected", want_lin, "verdict", verdict, "violations",
			      (json_int_t)s.viol_keys, "ops_checked", (json_int_t)s.ops, "ratio_holds", rh,
			      "verdict_holds", lh, "holds", all);
	if (o) {
		json_object_set_new(o, closed_loop(r) ? "outstanding" : "load_ops", json_real(s.low_load));
		json_object_set_new(o, "commit_p50_ns", isfinite(s.nil50) ? json_real(s.nil50) : json_null());
		json_object_set_new(o, "oq_commit_p50_ns", isfinite(oq->nil50) ? json_real(oq->nil50) : json_null());
		json_object_set_new(o, "ratio", isfinite(ratio) ? json_real(ratio) : json_null());
		if (cav[0])
			json_object_set_new(o, "caveat", json_string(cav));
	}
	return o;
}

json_t *fg_onesided_html(FILE *f, const struct fctx *x, const json_t *claims)
{
	const struct frun *r = x->onesided;
	const json_t *oc = json_object_get(claims, "onesided_claims");
	struct os_sys oq;
	json_t *rows, *c;
	size_t i;
	char load[64];

	fputs("<h2 id=onesided-h>One-sided writes beside OQ (issue 52)</h2>\n", f);
	if (!r || !r->nsys) {
		fputs("<p id=onesided>Not run: no run with seqwrite or write1 among its systems (make "
		      "figures-onesided runs configs/onesided-verbs.json in the Soft-RoCE VM).</p>\n", f);
		return NULL;
	}
	fputs("<figure><img src=\"onesided.svg\" alt=\"one-sided writes: latency against throughput\"><figcaption>"
	      "Median (left) and P99 (right) latency against achieved throughput, all requests, for the "
	      "systems of run <b>", f);
	fg_html_escape(f, r->name);
	fputs("</b>; each line is titled with <code>oqb check</code>'s verdict over the histories recorded at "
	      "its points (the violations are keys with one, summed over the points). ", f);
	if (on_softroce(r))
		fputs("<b>Measured on Soft-RoCE</b> (the rdma_rxe driver), where RDMA, atomics included, runs in "
		      "software in the kernel: the shape, not hardware latencies; an atomic costs more than a WRITE "
		      "there than on a NIC. ", f);
	fputs("</figcaption></figure>\n", f);

	os_collect(r, "oq", &oq);
	if (closed_loop(r))
		snprintf(load, sizeof load, "%.0f in flight per client thread (closed loop)", oq.low_load);
	else
		fg_fmt_ops(load, sizeof load, oq.low_load);
	fputs("<table id=onesided><colgroup><col style=\"width:32%\"><col style=\"width:8%\"><col style=\"width:9%\">"
	      "<col style=\"width:16%\"><col style=\"width:8%\"><col style=\"width:12%\"><col style=\"width:9%\">"
	      "<col style=\"width:6%\"></colgroup>\n", f);
	fputs("<thead><tr><th>claim</th><th>system</th><th>nilext commit p50</th>"
	      "<th>/ oq</th><th>expected</th><th>checker's verdict</th><th>expected</th><th>holds</th>"
	      "</tr></thead><tbody>\n", f);
	rows = json_array();
	json_array_foreach(oc, i, c)
		json_array_append_new(rows, os_claim(f, r, c, &oq));
	if (!json_array_size(oc))
		fputs("<tr class=notrun><td colspan=8>the claims file has no onesided_claims</td></tr>\n", f);
	fputs("</tbody></table>\n<p class=load>Commit medians of the nilext class (set, delete) at the run's "
	      "lowest load, ", f);
	fg_html_escape(f, load);
	fputs(", where queueing is least; the ratios come from this one run. Ranges and the verdicts "
	      "expected are in the claims file (onesided_claims).</p>\n", f);
	return rows;
}
