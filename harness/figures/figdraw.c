/*
 * figdraw.c - the figures of `oqb figures`: gnuplot parameter files and
 * data for plot/fig-latency.gp and plot/fig-throughput.gp (figures.c is
 * the map).
 */
#include "figures_internal.h"
#include "ltscale.h"
#include "result.h"
#include "runjson.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A string as a gnuplot single-quoted literal: ' doubled, newlines dropped. */
void fg_gp_quote(FILE *f, const char *s)
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
void fg_legend_word(char *buf, size_t len, const char *s)
{
	snprintf(buf, len, "%s", s);
	for (char *c = buf; *c; c++)
		if (*c == ' ' || *c == '\t' || *c == '"' || *c == '\'')
			*c = '_';
}

int fg_gnuplot_run(const char *script, const char *arg1, const char *arg2, const char *arg3,
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

FILE *fg_open_w(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	if (!f)
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
	return f;
}

int fg_close_w(FILE *f, const char *path, char *err, size_t errlen)
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
 * p50_flagged p99_flagged saturated (the layout of `oqb plot`'s data).
 * names gets the systems, blank-separated.
 */
int fg_write_lt_panel(const struct frun *r, const char *path, char *names, size_t nlen, char *err, size_t errlen)
{
	FILE *f = fg_open_w(path, err, errlen);
	size_t j, i;

	if (!f)
		return -1;
	names[0] = '\0';
	fprintf(f, "# oqb figures: %s (%s); achieved p50 p99 offered flagged p50_min p50_max p99_min p99_max "
		"p50_flagged p99_flagged saturated\n", r->name, r->dir);
	for (j = 0; j < r->nsys; j++) {
		char w[64];
		fprintf(f, "%s# system %s\n", j ? "\n\n" : "", r->sys[j].name);
		for (i = 0; i < r->sys[j].n; i++) {
			const struct fpt *t = &r->sys[j].pt[i];
			fprintf(f, "%.1f %.0f %.0f %.1f %d %.0f %.0f %.0f %.0f %d %d %d\n", t->achieved, t->p50, t->p99,
				t->offered, t->flagged, t->lo50, t->hi50, t->lo99, t->hi99, t->flag_q[0], t->flag_q[1],
				t->saturated);
		}
		fg_legend_word(w, sizeof w, r->sys[j].name);
		snprintf(names + strlen(names), nlen - strlen(names), "%s%s", j ? " " : "", w);
	}
	return fg_close_w(f, path, err, errlen);
}

/* The axes of one panel of metric col (2 = p50, 3 = p99), ltscale.h. */
void fg_panel_axes(const struct frun *r, int col, struct lts_axes *a)
{
	struct lts_row rows[FG_MAXSYS * FG_MAXPT];
	size_t n = 0;
	for (size_t j = 0; j < r->nsys; j++)
		for (size_t i = 0; i < r->sys[j].n; i++) {
			const struct fpt *t = &r->sys[j].pt[i];
			rows[n++] = col == 2 ? (struct lts_row){ t->achieved, t->p50, t->lo50, t->hi50, t->saturated } :
				    (struct lts_row){ t->achieved, t->p99, t->lo99, t->hi99, t->saturated };
		}
	lts_axes_of(rows, n, a);
}

/* Achieved throughput of oq (else the first system) at the run's peak. */
static double peak_achieved(const struct frun *r)
{
	const struct fsys *s = fg_sys_of(r, "oq");
	const struct fpt *t;

	if (!s && r->nsys)
		s = &r->sys[0];
	t = s ? fg_pt_at(s, r->peak) : NULL;
	return t ? t->achieved : 0;
}

/* Figs 7/8 or 9/10: four panels of one metric (2 = p50, 3 = p99). */
int fg_draw_lt(const char *plotdir, const char *out, const char *stem, struct frun *const panels[4],
		   const char *const titles[4], int col, const char *title, char *err, size_t errlen)
{
	char params[PATH_MAX + 64], data[PATH_MAX + 64], svg[PATH_MAX + 64], script[PATH_MAX + 64];
	char names[1024];
	FILE *f;

	snprintf(params, sizeof params, "%s/%s.gp-params", out, stem);
	snprintf(svg, sizeof svg, "%s/%s.svg", out, stem);
	if (!(f = fg_open_w(params, err, errlen)))
		return -1;
	fprintf(f, "# written by oqb figures for plot/fig-latency.gp\nout = ");
	fg_gp_quote(f, svg);
	fprintf(f, "\nfigtitle = ");
	fg_gp_quote(f, title);
	fprintf(f, "\ncol = %d\nylabel = '%s latency (µs)'\n", col, col == 2 ? "Median" : "P99");
	for (int k = 0; k < 4; k++) {
		char pt[512];
		names[0] = '\0';
		snprintf(data, sizeof data, "%s/%s-%d.dat", out, stem, k + 1);
		if (panels[k] && panels[k]->nsys) {
			if (fg_write_lt_panel(panels[k], data, names, sizeof names, err, errlen) < 0) {
				fclose(f);
				return -1;
			}
			snprintf(pt, sizeof pt, "%s: %s%s, %s, %s", titles[k], panels[k]->name,
				 panels[k]->durable ? " (oq durable)" : "", panels[k]->transport, panels[k]->backend);
		} else {
			snprintf(pt, sizeof pt, "%s", titles[k]);
		}
		fprintf(f, "data%d = ", k + 1);
		fg_gp_quote(f, data);
		fprintf(f, "\nptitle%d = ", k + 1);
		fg_gp_quote(f, pt);
		fprintf(f, "\nnames%d = ", k + 1);
		fg_gp_quote(f, names);
		fprintf(f, "\npeak%d = %.1f\n", k + 1, panels[k] && panels[k]->nsys ? peak_achieved(panels[k]) : 0.0);
		struct lts_axes ax;
		char sfx[12];
		if (panels[k] && panels[k]->nsys)
			fg_panel_axes(panels[k], col, &ax);
		else
			lts_axes_of(NULL, 0, &ax);
		snprintf(sfx, sizeof sfx, "%d", k + 1);
		lts_write_gp(f, sfx, &ax);
	}
	if (fg_close_w(f, params, err, errlen) < 0)
		return -1;
	snprintf(script, sizeof script, "%s/fig-latency.gp", plotdir);
	return fg_gnuplot_run(script, params, NULL, NULL, err, errlen);
}

struct tseries *fg_series_get(struct tseries *s, size_t *n, size_t cap, const char *name)
{
	size_t i;
	for (i = 0; i < *n && strcmp(s[i].name, name) != 0; i++)
		;
	if (i == *n) {
		if (*n == cap)
			return NULL;
		memset(&s[i], 0, sizeof s[i]);
		fg_legend_word(s[i].name, sizeof s[i].name, name);
		(*n)++;
	}
	return s[i].n < FG_MAXPT ? &s[i] : NULL;
}

int fg_write_series(const char *path, struct tseries *s, size_t n, char *names, size_t nlen,
			char *err, size_t errlen)
{
	FILE *f = fg_open_w(path, err, errlen);
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
	return fg_close_w(f, path, err, errlen);
}

/* The label of a Fig 6 line: system, transport and the ablation settings. */
static void fig6_label(const struct frun *r, const json_t *p, char *buf, size_t len)
{
	const char *key = result_sweep_key(p) ? result_sweep_key(p) : "";
	const char *mode = result_setting_str(r->run, "verbs.recv_mode");
	int deleg = json_is_true(result_setting(r->run, "clients.delegation"));
	const json_t *v = result_sweep_value(p);
	const char *sys = result_system(p) ? result_system(p) : "?";

	if (!mode)
		mode = "srq";
	if (!strcmp(key, "verbs.recv_mode") && json_is_string(v))
		mode = json_string_value(v);
	if (!strcmp(key, "clients.delegation"))
		deleg = json_is_true(v);
	if (strcmp(r->transport, "verbs") != 0)
		snprintf(buf, len, "%s/%s-ring(MP_stand-in)", sys, r->transport);
	else
		snprintf(buf, len, "%s/%s%s", sys,
			 !strcmp(mode, "slot_ring") ? "slot_ring(MP_stand-in)" : mode, deleg ? "+delegation" : "");
}

/* Fig 6: throughput vs requests in flight, (64 B | 1 KB) x (volatile | durable). */
int fg_draw_fig6(const struct fctx *x, const char *plotdir, const char *out, char *err, size_t errlen)
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
		double procs = result_setting_num(run->run, "clients.processes");
		double thr = result_setting_num(run->run, "clients.threads");
		size_t i;
		json_t *p;

		if (isnan(procs))
			procs = 1;
		if (isnan(thr))
			thr = 1;

		json_array_foreach(result_points(run->run), i, p) {
			double vs = result_value_size(p);
			double outst = result_outstanding(p);
			const char *skey = result_sweep_key(p);
			int k = (vs > 512 ? 1 : 0) + (result_durable(p) ? 2 : 0);
			struct tseries *t;

			if (skey && !strcmp(skey, "clients.processes"))
				procs = json_is_number(result_sweep_value(p)) ? json_number_value(result_sweep_value(p)) : NAN;
			if (isnan(outst))
				outst = 1;
			fig6_label(run, p, label, sizeof label);
			t = fg_series_get(s + 16 * k, &ns[k], 16, label);
			if (!t)
				continue;
			t->x[t->n] = procs * thr * outst;
			/* 64 B: Mops/s; 1 KB: Gbit/s of payload, as the paper's panels */
			t->y[t->n] = (k & 1) ? result_achieved(p) * vs * 8 / 1e9 : result_achieved(p) / 1e6;
			t->flagged[t->n++] = result_flagged(p);
		}
	}
	snprintf(params, sizeof params, "%s/fig6.gp-params", out);
	snprintf(svg, sizeof svg, "%s/fig6.svg", out);
	if (!(f = fg_open_w(params, err, errlen)))
		goto out;
	fprintf(f, "out = ");
	fg_gp_quote(f, svg);
	fprintf(f, "\nfigtitle = 'Fig 6: throughput vs requests in flight (client machines x 24 threads x 1 "
		"on the paper''s testbed)'\nrows = 2\ncols = 2\nnpanel = 4\n");
	for (int k = 0; k < 4; k++) {
		snprintf(data, sizeof data, "%s/fig6-%d.dat", out, k + 1);
		if (fg_write_series(data, s + 16 * k, ns[k], names, sizeof names, err, errlen) < 0) {
			fclose(f);
			goto out;
		}
		fprintf(f, "data%d = ", k + 1);
		fg_gp_quote(f, data);
		fprintf(f, "\nptitle%d = '%s'\nnames%d = ", k + 1, ptitles[k], k + 1);
		fg_gp_quote(f, names);
		fprintf(f, "\nxlabel%d = 'Requests in flight'\nylabel%d = '%s'\nlogx%d = 1\n", k + 1, k + 1,
			(k & 1) ? "Bandwidth (Gbit/s)" : "Throughput (Mops/s)", k + 1);
	}
	if (fg_close_w(f, params, err, errlen) < 0)
		goto out;
	snprintf(script, sizeof script, "%s/fig-throughput.gp", plotdir);
	rc = fg_gnuplot_run(script, params, NULL, NULL, err, errlen);
out:
	free(s);
	return rc;
}

/* Fig 11: peak throughput vs value size, one line per system. */
int fg_draw_fig11(const struct fctx *x, const char *plotdir, const char *out, char *err, size_t errlen)
{
	struct tseries s[FG_MAXSYS];
	size_t ns = 0;
	char params[PATH_MAX + 64], data[PATH_MAX + 64], svg[PATH_MAX + 64], script[PATH_MAX + 64];
	char names[1024], title[256];
	FILE *f;

	if (x->fig11) {
		const json_t *run = x->fig11->run;
		const json_t *vals = result_setting(run, "sweep.values");
		size_t i, w;
		json_t *p;

		json_array_foreach(result_points(run), i, p) {
			const char *sys = result_system(p) ? result_system(p) : "?";
			char label[96];
			snprintf(label, sizeof label, "%s%s", sys, result_durable(p) ? "-D(durable)" : "");
			if (!fg_series_get(s, &ns, FG_MAXSYS, label))
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
				double y = fg_sweep_peak(run, sys, (long long)w, &fl);
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
	if (fg_write_series(data, s, ns, names, sizeof names, err, errlen) < 0 || !(f = fg_open_w(params, err, errlen)))
		return -1;
	snprintf(title, sizeof title, "Fig 11%s%s%s", x->fig11 ? ": " : "", x->fig11 ? x->fig11->name : "",
		 x->fig11 ? "" : " (not run)");
	fprintf(f, "out = ");
	fg_gp_quote(f, svg);
	fprintf(f, "\nfigtitle = ");
	fg_gp_quote(f, title);
	fprintf(f, "\nrows = 1\ncols = 1\nnpanel = 1\ndata1 = ");
	fg_gp_quote(f, data);
	fprintf(f, "\nptitle1 = 'Throughput vs value size, 50 %% put'\nnames1 = ");
	fg_gp_quote(f, names);
	fprintf(f, "\nxlabel1 = 'Value size (bytes)'\nylabel1 = 'Peak throughput (Mops/s)'\nlogx1 = 1\n");
	if (fg_close_w(f, params, err, errlen) < 0)
		return -1;
	snprintf(script, sizeof script, "%s/fig-throughput.gp", plotdir);
	return fg_gnuplot_run(script, params, NULL, NULL, err, errlen);
}

/* Fig 2 from the CDF data of `oqb tgap --cdf`, or a "not run" panel. */
int fg_draw_fig2(const char *tgap, const char *plotdir, const char *out, int *have, char *err, size_t errlen)
{
	char svg[PATH_MAX + 64], script[PATH_MAX + 64], params[PATH_MAX + 64];
	FILE *f;

	snprintf(svg, sizeof svg, "%s/fig2.svg", out);
	*have = tgap && access(tgap, R_OK) == 0;
	if (*have) {
		snprintf(script, sizeof script, "%s/tgap-cdf.gp", plotdir);
		return fg_gnuplot_run(script, tgap, svg, "the sample traces", err, errlen);
	}
	snprintf(params, sizeof params, "%s/fig2.gp-params", out);
	if (!(f = fg_open_w(params, err, errlen)))
		return -1;
	fprintf(f, "out = ");
	fg_gp_quote(f, svg);
	fprintf(f, "\nfigtitle = 'Fig 2: T_gap CDF'\nrows = 1\ncols = 1\nnpanel = 1\ndata1 = ''\n"
		"ptitle1 = 'no T_gap data (oqb tgap --cdf RUNS/tgap-cdf.dat TRACE...)'\nnames1 = ''\n"
		"xlabel1 = ''\nylabel1 = ''\nlogx1 = 0\n");
	if (fg_close_w(f, params, err, errlen) < 0)
		return -1;
	snprintf(script, sizeof script, "%s/fig-throughput.gp", plotdir);
	return fg_gnuplot_run(script, params, NULL, NULL, err, errlen);
}
