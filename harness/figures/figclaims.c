/*
 * figclaims.c - the paper's claims beside what the runs measured, and the
 * fidelity check of the qualitative claims (figures.c is the map;
 * definitions in docs/figures.md).
 */
#include "figures_internal.h"

#include <math.h>
#include <string.h>

/* The run of a claim's workload ("cluster12", "ycsb-put50", ...), or NULL. */
static struct frun *claim_run(const struct fctx *x, const char *wl)
{
	for (int k = 0; k < 4; k++) {
		char name[32];
		snprintf(name, sizeof name, "cluster%d", fg_clusters[k]);
		if (!strcmp(wl, name))
			return x->panel78[k];
		if (!strcmp(wl, fg_put_names[k]))
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
	const struct fsys *a = fg_sys_of(r, "oq"), *b = fg_sys_of(r, vs);
	const struct fpt *pa = a ? fg_pt_at(a, load) : NULL, *pb = b ? fg_pt_at(b, load) : NULL;
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
	const char *wl = fg_jstr(c, "workload", ""), *metric = fg_jstr(c, "metric", "p50"), *vs = fg_jstr(c, "vs", "");
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
				 fg_clusters[best]);
		return;
	}
	m->run = claim_run(x, wl);
	if (!m->run) {
		snprintf(m->why, sizeof m->why, "not run (no %s run)", wl);
		return;
	}
	if (!fg_sys_of(m->run, vs) || !fg_sys_of(m->run, "oq")) {
		snprintf(m->why, sizeof m->why, "not run (%s has no %s points)", m->run->name,
			 fg_sys_of(m->run, "oq") ? vs : "oq");
		return;
	}
	m->peak = change_at(m->run, metric, vs, m->run->peak, m->cav_peak, sizeof m->cav_peak);
	m->p80 = change_at(m->run, metric, vs, m->run->load80, m->cav_p80, sizeof m->cav_p80);
	fg_fmt_ops(a, sizeof a, m->run->peak);
	fg_fmt_ops(b, sizeof b, m->run->load80);
	snprintf(m->where, sizeof m->where, "%s%s: peak %s offered, 80 %% = %s", m->run->name,
		 m->run->durable ? " (oq durable)" : "", a, b);
}

/* Fig 11 (value size) and Fig 6 (ablation) throughput ratios. */
static void measure_throughput(const struct fctx *x, const json_t *c, struct measured *m)
{
	double vsz = fg_jnum(c, "value_size");
	const char *ratio = fg_jstr(c, "ratio", NULL);

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
				double a = fg_sweep_peak(m->run->run, "oq", (long long)w, NULL);
				double b = fg_sweep_peak(m->run->run, fg_jstr(c, "vs", "rawrpc"), (long long)w, NULL);
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
		const char *key = fg_jstr(json_object_get(json_object_get(run->run, "config"), "sweep"), "key", "");
		size_t i;
		json_t *p;
		json_array_foreach(json_object_get(run->run, "points"), i, p) {
			const json_t *v = json_object_get(json_object_get(p, "sweep"), "value");
			int pd = json_is_true(json_object_get(p, "durable"));
			double a = fg_jnum(p, "achieved_ops"), *slot = NULL;
			if (fg_jnum(json_object_get(p, "workload"), "value_size") != vsz)
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
		fg_html_escape(f, caveat);
		fputs("</span></td>", f);
	} else
		fprintf(f, "<td class=num>%+.1f %%</td>", v);
}

/* The claims table; counts rows and how many hold at peak. */
void fg_claims_table(FILE *f, const struct fctx *x, const json_t *claims, int *rows, int *held, int *judged)
{
	size_t i;
	json_t *c;

	fputs("<table id=claims>\n<thead><tr><th>Figure (§)</th><th>Workload</th><th>Paper says</th>"
	      "<th>Paper</th><th>Here at peak</th><th>Here at 80 % of peak</th><th>Direction holds "
	      "(peak / 80 %)</th><th>Run, machine and transport</th></tr></thead>\n<tbody>\n", f);
	json_array_foreach(json_object_get(claims, "claims"), i, c) {
		struct measured m = { .peak = NAN, .p80 = NAN };
		const char *dir = fg_jstr(c, "direction", "lower");
		const char *h1, *h2;

		if (!strcmp(fg_jstr(c, "metric", ""), "throughput"))
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
		fg_html_escape(f, fg_jstr(c, "figure", "?"));
		fputs(" (§", f);
		fg_html_escape(f, fg_jstr(c, "section", "?"));
		fputs(")</td><td>", f);
		fg_html_escape(f, fg_jstr(c, "workload", "?"));
		fputs("</td><td>", f);
		fg_html_escape(f, fg_jstr(c, "text", ""));
		fputs(" <span class=load>[load: ", f);
		fg_html_escape(f, fg_jstr(c, "load", "?"));
		fputs("]</span></td>", f);
		if (json_is_number(json_object_get(c, "change_pct")))
			fprintf(f, "<td class=num>%+.1f %%</td>", fg_jnum(c, "change_pct"));
		else
			fprintf(f, "<td>%s</td>", !strcmp(dir, "lower") ? "lower" : "higher");
		pct_cell(f, m.peak, m.cav_peak);
		pct_cell(f, m.p80, m.cav_p80);
		fprintf(f, "<td>%s / %s</td><td>", h1, h2);
		if (isnan(m.peak)) {
			fg_html_escape(f, m.why[0] ? m.why : "not measured");
		} else {
			fg_html_escape(f, m.where);
			if (m.run) {
				fputs("<br><span class=machine>", f);
				fg_html_escape(f, m.run->machine);
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
int fg_check_qualitative(const struct fctx *x, FILE *out, FILE *html, char *err, size_t errlen)
{
	int failed = 0;

	for (int k = 0; k < 4; k++) {
		const struct frun *r = x->panel78[k];
		const struct fsys *oq, *raw, *def;
		char name[64], detail[512], l80[32];
		int ok;

		if (fg_clusters[k] != 12 && fg_clusters[k] != 31)
			continue;
		if (!r) {
			snprintf(err, errlen, "no run of Twitter cluster %d among the runs; run "
				 "configs/fig7-8-cluster%d.json (make figures) first", fg_clusters[k], fg_clusters[k]);
			return -1;
		}
		oq = fg_sys_of(r, "oq");
		raw = fg_sys_of(r, "rawrpc");
		def = fg_sys_of(r, "deferred");
		if (!oq || !raw || !def) {
			snprintf(err, errlen, "%s/run.json: cluster %d needs oq, rawrpc and deferred points; "
				 "it has %s%s%s", r->dir, fg_clusters[k], oq ? "oq " : "", raw ? "rawrpc " : "",
				 def ? "deferred" : "");
			return -1;
		}
		const struct fpt *a = fg_pt_at(oq, r->load80), *b = fg_pt_at(def, r->load80), *c = fg_pt_at(raw, r->load80);
		fg_fmt_ops(l80, sizeof l80, r->load80);
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
				const struct fpt *rp = fg_pt_at(raw, r->peak);
				double g = rp && raw->n && raw->pt[0].p50 > 0 ? rp->p50 / raw->pt[0].p50 : NAN;
				double fl = lo > 0 && isfinite(lo) ? hi / lo : NAN;
				ok = !isnan(fl) && !isnan(g) && fl <= FLAT_FACTOR && g >= GROW_FACTOR;
				snprintf(detail, sizeof detail, "up to peak: oq median max/min = %.2f (flat: <= %.1f), "
					 "rawrpc median at peak / at lowest load = %.2f (grows: >= %.1f)", fl,
					 FLAT_FACTOR, g, GROW_FACTOR);
			}
			static const char *const what[3] = { "order-oq<deferred<rawrpc", "oq-2x-below-rawrpc",
							      "oq-flat-rawrpc-grows" };
			snprintf(name, sizeof name, "cluster%d-%s", fg_clusters[k], what[claim]);
			failed += !ok;
			if (out)
				fprintf(out, "%s %s: %s\n", ok ? "PASS" : "FAIL", name, detail);
			if (html) {
				fprintf(html, "<tr class=%s><td>", ok ? "holds" : "fails");
				fg_html_escape(html, name);
				fprintf(html, "</td><td>%s</td><td>", ok ? "holds" : "fails");
				fg_html_escape(html, detail);
				fputs("</td></tr>\n", html);
			}
		}
	}
	return failed;
}
