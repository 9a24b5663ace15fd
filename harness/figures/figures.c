/*
 * figures.c - `oqb figures`: the paper's figures from the runs of one
 * reproduction, the claims report, and the fidelity check (figures.h).
 *
 * What it owns.  It reads every RUNS/ * /run.json (and one level deeper),
 * sorts each run into the figure it reproduces by what the run measured,
 * not by its name:
 *   Figs 7/8   workload.kind twitter, one panel per cluster 12/19/27/31
 *              (a run on the cache backend is preferred; clusters 12 and
 *              31 on memcached go to the faithfulness figure, figfaith.c);
 *   Figs 9/10  workload.kind ycsb, one panel per put ratio 1/0.5/0.05/0
 *              (a run whose oq points are durable is preferred: the
 *              paper's JuneBerry-D);
 *   Fig 6      workload.kind echo: throughput vs requests in flight, one
 *              panel per (64 B | 1 KB) x (volatile | durable);
 *   Fig 11     a sweep of workload.value_size on another workload;
 *   Fig 2      RUNS/tgap-cdf.dat (written by `oqb tgap --cdf`);
 *   One-sided  a run with seqwrite or write1 among its systems (issue 52,
 *              figonesided.c; taken before any other figure).
 * Of several runs for one panel the newest (created_utc) is drawn; the
 * report lists the others.  A panel without a run says "not run".
 *
 * Peak.  The knee when run.json has one (`knee.ops`, from the automatic
 * form of arrival.loads_ops); else the highest offered load at which no
 * system's point is flagged; else (every load had a flagged point, as on a
 * busy 2-core VM) the highest load at which no system is saturated; else
 * the lowest load.  The report names the basis per run.  "At 80 % of
 * peak" is the offered load nearest to 0.8 x peak (log distance).  The
 * clean load of a claim is the highest load at which neither number it
 * compares is flagged and neither point saturated (figclean.h); the claims
 * table shows all three, and OUT/claims.json has the same rows.
 *
 * Guarantees.  Every text that reaches index.html goes through
 * fg_html_escape(); the page loads nothing from the network and runs no
 * script (tests/integration/report-browser.sh loads it in headless
 * Chromium and checks every image's natural size, the table and the
 * console; report-width.sh checks that it fits a 1,400-pixel window).  The fidelity check's definitions are in docs/figures.md and
 * figclaims.c's fg_check_qualitative(); tests/integration/figures-check.sh
 * runs it on the committed fixtures in tests/figures/ (one set holds, one
 * fails).
 *
 * Files, by concern (figures_internal.h is what they share):
 *   figures.c    the command, its options and the report (index.html)
 *   figruns.c    reading the runs, sorting them into panels, the peak
 *   figdraw.c    the figures: data and parameter files for plot/ *.gp
 *   figclaims.c  the claims table (and claims.json) and the fidelity check
 *   figclean.c   the clean load of a claim (figclean.h)
 *   figfaith.c   the cache against memcached (the faithfulness figure)
 *   figonesided.c  seqwrite and write1 beside oq: the figure labelled with
 *                the checker's verdicts, and the one-sided claim rows
 */
#include "figures.h"
#include "figures_internal.h"
#include "finding.h"
#include "opts.h"
#include "plotcmd.h"
#include "result.h"
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

const struct opts_cmd figures_cmd = {
	"oqb figures", fig_tab, OQB_EXITS_BASE | OQB_EXITS(OQB_EXIT_FAIL) | OQB_EXITS(OQB_EXIT_ERROR),
};

/* Writes s to f with &, <, >, " and ' escaped. */
void fg_html_escape(FILE *f, const char *s)
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

/* ---------------------------------------------------------------- report */

/* The page fits a 1,400-pixel-wide window: the body is at most 1,300 px,
 * the claims table has a fixed layout of that width, and long text
 * (caveats, the checks that warned, run directories) wraps inside its cell
 * (tests/integration/report-width.sh measures it in headless Chromium). */
static const char *const css =
	"body{font-family:sans-serif;margin:1.5em;max-width:1300px;color:#222}"
	"table{border-collapse:collapse;margin:1em 0;font-size:90%}"
	"th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top;overflow-wrap:anywhere}"
	"th{background:#f0f0f0}td.num{text-align:right}td.na{color:#999}"
	"tr.notrun{color:#777}.load,.machine{color:#666;font-size:90%}.caveat{color:#a40;font-size:85%}"
	"#claims{table-layout:fixed;width:100%}#onesided{table-layout:fixed;width:100%}#onesided .caveat{display:block}"
	"#claims .caveat,#claims .checks,#claims .where,#claims .why,#claims .machine,#claims .mech,#claims .trend"
	"{display:block;text-align:left}#claims .mech,#claims .trend{color:#555;font-size:85%}"
	"td.verdict span.standin{background:#fff3d6}tr.standin{color:#555}"
	"#claims .checks{color:#666;font-size:80%}#claims .where{color:#444;font-size:85%}"
	"#claims .why{color:#a40;font-size:85%}#claims td.noclean{color:#a40}"
	"col.c-claim{width:22%}col.c-paper{width:6%}col.c-peak{width:11%}col.c-80{width:14%}"
	"col.c-clean{width:17%}col.c-holds{width:8%}col.c-run{width:22%}"
	"td.verdict span.yes{background:#e6f4e6}td.verdict span.no{background:#f8e0e0}td.verdict span.na{color:#999}"
	"img{max-width:100%;border:1px solid #ddd;margin:.5em 0}figure{margin:1em 0}"
	"#check tr.fails td:nth-child(2){background:#f8e0e0}#check tr.holds td:nth-child(2){background:#e6f4e6}";

static void fig_html(FILE *f, const char *file, const char *caption)
{
	fputs("<figure><img src=\"", f);
	fg_html_escape(f, file);
	fputs("\" alt=\"", f);
	fg_html_escape(f, caption);
	fputs("\"><figcaption>", f);
	fg_html_escape(f, caption);
	fputs("</figcaption></figure>\n", f);
}

/* OUT/claims.json: the claims table's rows (docs/figures.md) and the
 * one-sided claim rows (figonesided.c; none: no key); takes cj and os. */
static int write_claims_json(json_t *cj, json_t *os, const struct fg_claims_count *n, const char *claims_path,
			     const char *out, char *err, size_t errlen)
{
	char path[PATH_MAX + 32];
	json_t *doc = json_pack("{s:s,s:s,s:{s:i,s:i,s:i,s:i,s:i,s:i},s:o}", "schema", "oqbench.claims-report/1",
				"paper_claims", claims_path ? claims_path : "docs/paper-claims.json", "summary",
				"claims", n->rows, "measured", n->judged, "hold_at_peak", n->held, "clean",
				n->clean, "hold_at_clean", n->clean_held, "stand_in", n->stand_in, "claims", cj);
	int rc = 0;

	if (doc && os)
		json_object_set_new(doc, "onesided", os);
	else
		json_decref(os);
	snprintf(path, sizeof path, "%s/claims.json", out);
	if (!doc || json_dump_file(doc, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, doc ? strerror(errno) : "out of memory");
		rc = -1;
	}
	json_decref(doc);
	return rc;
}

static int write_report(const struct fctx *x, const json_t *claims, const char *claims_path, const char *out,
			int have_tgap, char *err, size_t errlen)
{
	char path[PATH_MAX + 32], cerr[512];
	FILE *f;
	struct fg_claims_count n = { 0 };
	json_t *cj = json_array(), *os;

	snprintf(path, sizeof path, "%s/index.html", out);
	if (!(f = fg_open_w(path, err, errlen)))
		return -1;
	fprintf(f, "<!DOCTYPE html>\n<html lang=en><head><meta charset=\"utf-8\">\n<title>oqbench: the paper's "
		"figures and claims</title>\n<style>%s</style></head>\n<body>\n", css);
	fputs("<h1>Reproducing <i>Achieving Wire-Latency Storage Systems by Exploiting Hardware ACKs</i> "
	      "(NSDI'25)</h1>\n<p>Written by <code>oqb figures</code>. The paper's numbers come from one data "
	      "file (", f);
	fg_html_escape(f, claims_path ? claims_path : "docs/paper-claims.json");
	fputs("), each with its section and figure. Change = OQ's value relative to the baseline (negative: "
	      "OQ lower). Peak = the knee when the run found one, else as the run table says. A change marked "
	      "<span class=caveat>saturated</span> compares a point whose offered load exceeded what that "
	      "system sustained: its latency is a queue that grew for the whole window, so the percentage "
	      "grows with the run's length and says little about the system; one marked "
	      "<span class=caveat>flagged</span> had a self-check warn about the number compared (run.json's "
	      "<code>flagged_by</code> says which). The clean load is the highest load at which neither "
	      "number compared is flagged and neither point saturated: the one comparison no check warned "
	      "about, or, where there is none, why (claims.json in this directory has every row). A direction "
	      "that holds on this machine says nothing about the paper's magnitudes: a 2-core VM on shared "
	      "memory is not a 100 Gbit/s RDMA testbed.</p>\n", f);

	fputs("<h2>Claims</h2>\n", f);
	fg_claims_table(f, x, claims, cj, &n);
	fprintf(f, "<p id=claims-summary>%d claims; %d measured here, of which %d hold in direction at peak; "
		"%d have a clean comparison, of which %d hold there; %d measured on a stand-in for the paper's "
		"mechanism (trend only, not counted).</p>\n", n.rows, n.judged, n.held, n.clean, n.clean_held,
		n.stand_in);
	os = fg_onesided_html(f, x, claims);
	if (write_claims_json(cj, os, &n, claims_path, out, err, errlen) < 0) {
		fclose(f);
		return -1;
	}

	fputs("<h2>Fidelity check (<code>oqb figures --check</code>)</h2>\n<table id=check><thead><tr><th>claim"
	      "</th><th>verdict</th><th>measured</th></tr></thead><tbody>\n", f);
	if (fg_check_qualitative(x, NULL, f, cerr, sizeof cerr) < 0) {
		fputs("<tr class=notrun><td>all</td><td>not judged</td><td>", f);
		fg_html_escape(f, cerr);
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

	fg_faith_html(f, x);

	fputs("<h2>Runs</h2>\n<table id=runs><thead><tr><th>run</th><th>directory</th><th>figure</th>"
	      "<th>backend</th><th>machine and transport</th><th>created (UTC)</th><th>commit</th><th>peak</th>"
	      "</tr></thead><tbody>\n", f);
	for (size_t i = 0; i < x->nruns; i++) {
		const struct frun *r = &x->runs[i];
		static const char *const fig[] = { "none", "7/8", "9/10", "6", "11", "one-sided" };
		char pk[32];
		fputs("<tr><td>", f);
		fg_html_escape(f, r->name);
		const char *st = result_status(r->run);
		if (st && strcmp(st, "ok") != 0) {
			/* a run that stopped early still draws the points it has */
			fputs(" <span class=machine>(status ", f);
			fg_html_escape(f, st);
			fputs(": ", f);
			fg_html_escape(f, result_error_message(r->run) ? result_error_message(r->run) :
					  "no error recorded");
			fputs(")</span>", f);
		}
		fputs("</td><td>", f);
		fg_html_escape(f, r->dir);
		fprintf(f, "</td><td>%s%s%s</td><td>", fig[r->fig], r->faith ? ", faithfulness" : "",
			r->drawn || r->fig == FIG_NONE ? "" :
			" (not drawn: another run of this panel is, durable, on the cache or newer)");
		fg_html_escape(f, r->backend);
		fputs("</td><td>", f);
		fg_html_escape(f, r->machine);
		fputs("</td><td>", f);
		fg_html_escape(f, r->created);
		fputs("</td><td>", f);
		fg_html_escape(f, r->commit);
		fputs("</td><td>", f);
		if (r->fig == FIG_78 || r->fig == FIG_910) {
			fg_fmt_ops(pk, sizeof pk, r->peak);
			fg_html_escape(f, pk);
			fputs(": ", f);
			fg_html_escape(f, r->basis);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	/* each run's result in its own words (run.json's finding; computed
	 * from the trials for a run.json from before it) */
	fputs("<h2>Findings</h2>\n<ul id=findings>\n", f);
	for (size_t i = 0; i < x->nruns; i++) {
		const struct frun *r = &x->runs[i];
		json_t *fd = finding_of(r->run);
		const char *caveat, *text = result_finding_text(fd, &caveat);
		fputs("<li><b>", f);
		fg_html_escape(f, r->name);
		fputs("</b>: ", f);
		fg_html_escape(f, text ? text : "no finding");
		if (caveat) {
			fputs(" <span class=machine>(", f);
			fg_html_escape(f, caveat);
			fputs(")</span>", f);
		}
		fputs("</li>\n", f);
		json_decref(fd);
	}
	fputs("</ul>\n</body></html>\n", f);
	if (fg_close_w(f, path, err, errlen) < 0)
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
	int r, rc = OQB_EXIT_USAGE, have_tgap = 0;
	json_t *claims = NULL;
	json_error_t je;

	memset(&o, 0, sizeof o);
	r = opts_command(&figures_cmd, &o, argc, argv);
	if (r != OPTS_GO)
		return r;
	memset(&x, 0, sizeof x);
	x.runs = calloc(FG_MAXRUNS, sizeof *x.runs);
	if (!x.runs) {
		fprintf(stderr, "oqb figures: out of memory\n");
		return OQB_EXIT_ERROR;
	}
	if (!o.runs)
		o.runs = "results";
	if (fg_load_tree(&x, o.runs, 2, err, sizeof err) < 0) {
		fprintf(stderr, "oqb figures: %s\n", err);
		goto out;
	}
	if (x.nruns == 0) {
		fprintf(stderr, "oqb figures: no run.json under %s (nor one or two levels below); give the "
			"directory of a reproduction's runs with --runs DIR (make figures writes one)\n", o.runs);
		goto out;
	}
	fg_pick_panels(&x);
	if (o.check) {
		r = fg_check_qualitative(&x, stdout, NULL, err, sizeof err);
		if (r < 0)
			fprintf(stderr, "oqb figures --check: %s\n", err);
		else
			printf("check: %d of 6 qualitative claims fail\n", r);
		rc = r < 0 ? OQB_EXIT_USAGE : r > 0 ? OQB_EXIT_FAIL : OQB_EXIT_OK;
		goto out;
	}
	rc = OQB_EXIT_ERROR;
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
		rc = OQB_EXIT_USAGE;
		goto out;
	}
	claims = json_load_file(claims_path, 0, &je);
	if (!claims || !json_is_array(json_object_get(claims, "claims"))) {
		fprintf(stderr, "oqb figures: %s:%d: %s; expected an object with a \"claims\" array "
			"(docs/paper-claims.json)\n", claims_path, claims ? 1 : je.line,
			claims ? "no claims array" : je.text);
		rc = OQB_EXIT_USAGE;
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
		if (fg_draw_lt(plotdir, outdir, "fig7", x.panel78, t78, 2, "Fig 7: median latency vs throughput "
			    "(Twitter clusters; the cache backend where a run has it)", err, sizeof err) < 0 ||
		    fg_draw_lt(plotdir, outdir, "fig8", x.panel78, t78, 3, "Fig 8: P99 latency vs throughput "
			    "(Twitter clusters; the cache backend where a run has it)", err, sizeof err) < 0 ||
		    fg_draw_faith(&x, plotdir, outdir, err, sizeof err) < 0 ||
		    fg_draw_lt(plotdir, outdir, "fig9", x.panel910, fg_put_titles, 2, "Fig 9: median latency vs "
			    "throughput (YCSB-like, pmkv where durable)", err, sizeof err) < 0 ||
		    fg_draw_lt(plotdir, outdir, "fig10", x.panel910, fg_put_titles, 3, "Fig 10: P99 latency vs "
			    "throughput (YCSB-like, pmkv where durable)", err, sizeof err) < 0 ||
		    fg_draw_fig6(&x, plotdir, outdir, err, sizeof err) < 0 ||
		    fg_draw_fig11(&x, plotdir, outdir, err, sizeof err) < 0 ||
		    fg_draw_fig2(o.tgap ? o.tgap : tgap, plotdir, outdir, &have_tgap, err, sizeof err) < 0 ||
		    fg_draw_onesided(&x, plotdir, outdir, err, sizeof err) < 0 ||
		    write_report(&x, claims, o.claims, outdir, have_tgap, err, sizeof err) < 0) {
			fprintf(stderr, "oqb figures: %s\n", err);
			goto out;
		}
	}
	rc = OQB_EXIT_OK;
out:
	for (size_t i = 0; i < x.nruns; i++)
		json_decref(x.runs[i].run);
	free(x.runs);
	json_decref(claims);
	return rc;
}
