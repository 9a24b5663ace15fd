/*
 * figures_internal.h - what the files of `oqb figures` share (figures.c
 * is the map): the runs sorted into figures, and the helpers that read
 * run.json, write gnuplot parameters and HTML.  Nothing outside
 * harness/figures/ includes it.
 */
#ifndef OQB_FIGURES_INTERNAL_H
#define OQB_FIGURES_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

#include "figclean.h"

#define FG_MAXRUNS 128
#define FG_MAXSYS 8
#define FG_MAXPT 64
#define FG_MAXREG 4     /* canary regimes kept per point (a host has two or three floors) */

enum { FIG_NONE, FIG_78, FIG_910, FIG_6, FIG_11, FIG_ONESIDED };

static const int fg_clusters[4] = { 12, 19, 27, 31 };
static const double fg_put_ratios[4] = { 1.0, 0.5, 0.05, 0.0 };
static const char *const fg_put_names[4] = { "ycsb-put100", "ycsb-put50", "ycsb-put5", "ycsb-put0" };
static const char *const fg_put_titles[4] = { "(a) write-only, 100 % put", "(b) write-intensive, 50 % put",
					   "(c) read-intensive, 5 % put", "(d) read-only, 0 % put" };

struct fpt {
	double offered, achieved, p50, p99, lo50, hi50, lo99, hi99;
	double sys99;     /* the system's P99 (host_tags.sys_lat_ns), NAN without */
	int flagged, saturated;
	/* [0] p50, [1] p99, [2] the system's P99: whether a check warned
	 * about that number, and which, "a,b" (checks_point_flagged) */
	int flag_q[3];
	char warns_q[3][64];
	/* the server's service time per request (server.service_ns, merged
	 * over the point's trials; bench/server.h): requests timed, one in
	 * svc_every, the median with its 95 % CI, the P99, and the medians of
	 * the nilext (set, delete) and other requests; NAN without one */
	double svc_n, svc50, svc50_lo, svc50_hi, svc99, svc_nil50, svc_non50;
	int svc_every, trials;
	/* like with like (figclean.h): the point's canary and regime factor,
	 * and when its trials ran on two floors its numbers per floor, each
	 * with whether its own trial_agreement warned about p50, P99 and the
	 * system's P99 (nreg 0: one floor, compared as it stands) */
	double canary, factor;
	size_t nreg;
	struct freg {
		struct fc_regime r;
		double p50, p99, sys99;
		int agree_q[3];
	} reg[FG_MAXREG];
};

struct fsys {
	char name[48];
	size_t n;
	struct fpt pt[FG_MAXPT];
};

struct frun {
	char dir[PATH_MAX];
	char name[128], transport[32], created[40], machine[256], commit[16];
	char backend[32];        /* config.server.backend.kind, "?" when absent */
	json_t *run;
	int fig, slot, durable, drawn;
	int faith;               /* drawn in the faithfulness figure (figfaith.c) */
	size_t nsys;
	struct fsys sys[FG_MAXSYS];
	double peak, load80;
	char basis[200];
};

struct fctx {
	struct frun *runs;
	size_t nruns;
	struct frun *panel78[4], *panel910[4], *fig11, *fig6[4];
	/* Figs 7/8 runs on memcached, for the faithfulness figure beside the
	 * cache's in panel78 (figfaith.c) */
	struct frun *mc78[4];
	size_t nfig6;
	/* the newest run with seqwrite or write1 among its systems
	 * (figonesided.c) */
	struct frun *onesided;
};

struct tseries {
	char name[96];
	size_t n;
	double x[FG_MAXPT], y[FG_MAXPT];
	int flagged[FG_MAXPT];
};

/* ---- figruns.c: the runs, sorted into figures ---- */
/* o[k] of the paper's claims (docs/paper-claims.json; run.json is read through result.h) */
const char *fg_jstr(const json_t *o, const char *k, const char *dflt);
double fg_jnum(const json_t *o, const char *k);   /* NAN when absent */
void fg_fmt_ops(char *buf, size_t len, double ops);
/* A point's load: offered ops/s, or requests in flight per client thread
 * for a closed-loop point (no offered_ops); NAN when neither. */
double fg_pt_load(const json_t *p);
/* A point's place in its run's sweep: its sweep index, 0 in a run
 * without a sweep (its one value). */
long long fg_pt_sweep(const json_t *p);
/* Whether point p ran system sys. */
int fg_pt_is(const json_t *p, const char *sys);
const struct fpt *fg_pt_at(const struct fsys *s, double load);
const struct fsys *fg_sys_of(const struct frun *r, const char *name);
/* Peak achieved throughput of system sys at sweep index w of a run (NAN: none). */
double fg_sweep_peak(const json_t *run, const char *sys, long long w, int *flagged);
/* Loads DIR/run.json, DIR/ * /run.json and DIR/ * / * /run.json, in name order. */
int fg_load_tree(struct fctx *x, const char *dir, int depth, char *err, size_t errlen);
/* Chooses the run drawn in each panel. */
void fg_pick_panels(struct fctx *x);

/* ---- figdraw.c: gnuplot parameters and the figures ---- */
void fg_gp_quote(FILE *f, const char *s);
void fg_legend_word(char *buf, size_t len, const char *s);
FILE *fg_open_w(const char *path, char *err, size_t errlen);
int fg_close_w(FILE *f, const char *path, char *err, size_t errlen);
int fg_gnuplot_run(const char *script, const char *arg1, const char *arg2, const char *arg3, char *err,
		   size_t errlen);
struct tseries *fg_series_get(struct tseries *s, size_t *n, size_t cap, const char *name);
int fg_write_series(const char *path, struct tseries *s, size_t n, char *names, size_t nlen, char *err,
		    size_t errlen);
/* One panel's data as `oqb plot` writes it (a block per system); names
 * gets the systems, blank-separated. */
int fg_write_lt_panel(const struct frun *r, const char *path, char *names, size_t nlen, char *err, size_t errlen);
struct lts_axes;
/* The axes of one panel of metric col (2 = p50, 3 = p99), ltscale.h. */
void fg_panel_axes(const struct frun *r, int col, struct lts_axes *a);
int fg_draw_lt(const char *plotdir, const char *out, const char *stem, struct frun *const panels[4],
	       const char *const titles[4], int col, const char *title, char *err, size_t errlen);
int fg_draw_fig6(const struct fctx *x, const char *plotdir, const char *out, char *err, size_t errlen);
int fg_draw_fig11(const struct fctx *x, const char *plotdir, const char *out, char *err, size_t errlen);
int fg_draw_fig2(const char *tgap, const char *plotdir, const char *out, int *have, char *err, size_t errlen);

/* ---- figclaims.c: the claims table and the fidelity check ---- */
struct fg_claims_count {
	int rows;        /* claims in the table */
	int judged;      /* measured here (a number at peak) */
	int held;        /* of them, whose direction holds at peak */
	int clean;       /* of them, with a clean comparison (figclean.h) */
	int clean_held;  /* of those, whose direction holds there */
	int stand_in;    /* measured on a stand-in for the claim's mechanism: trend only, not counted above */
};
/* Writes the claims table to f and, when out is an array, one object per
 * claim to it (claims.json); adds to n. */
void fg_claims_table(FILE *f, const struct fctx *x, const json_t *claims, json_t *out, struct fg_claims_count *n);
int fg_check_qualitative(const struct fctx *x, FILE *out, FILE *html, char *err, size_t errlen);

/* ---- figfaith.c: the cache against memcached ---- */
/* The cluster 12 and 31 runs on the cache (panel78) and on memcached
 * (mc78) of slot k, or NULL where one is missing. */
int fg_faith_pair(const struct fctx *x, int k, const struct frun **cache, const struct frun **mc);
int fg_draw_faith(const struct fctx *x, const char *plotdir, const char *out, char *err, size_t errlen);
void fg_faith_html(FILE *f, const struct fctx *x);

/* ---- figonesided.c: the one-sided designs beside oq (issue 52) ---- */
/* OUT/onesided.svg through plot/fig-onesided.gp (nothing without a run). */
int fg_draw_onesided(const struct fctx *x, const char *plotdir, const char *out, char *err, size_t errlen);
/* The report's section: the figure, the verdicts and the claim rows;
 * returns the same rows for claims.json (NULL without a run). */
json_t *fg_onesided_html(FILE *f, const struct fctx *x, const json_t *claims);

/* ---- figures.c ---- */
/* Writes s to f with &, <, >, " and ' escaped. */
void fg_html_escape(FILE *f, const char *s);

#endif
