/*
 * compare.c - diff two run.json files and gate on regressions (compare.h).
 *
 * Output: one table row per BASE point, then one machine-readable line
 *   compare: N points, N regressions, N improvements, N inconclusive, tolerance X%, ...
 * (counts are points; a point with any regressed metric is one regression,
 * one with an inconclusive metric and no regression is inconclusive).
 */
#include "compare.h"
#include "compare_match.h"
#include "finding.h"
#include "checks.h"
#include "merge.h"
#include "opts.h"
#include "run.h"
#include "result.h"
#include "stats.h"
#include "stattest.h"
#include "trials.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cmp_opts {
	const char *base, *new_;
	double tolerance, tolerance_p99, tolerance_tagged, alpha, canary_drift;
	int json;
	int correction;
	int tail;
};

static const char *const tails[] = { "system", "raw", NULL };

static const char *const corrections[] = { "bh", "holm", "none", NULL };

#define O(f) offsetof(struct cmp_opts, f)
static const struct opt cmp_tab[] = {
	{ "BASE", OPT_ARG, O(base), NULL, 0, 0, NULL, "the reference run: its run.json or its directory" },
	{ "NEW", OPT_ARG, O(new_), NULL, 0, 0, NULL, "the run to judge against BASE: its run.json or its directory" },
	{ "tolerance", OPT_DBL, O(tolerance), "5", 0, 1000, NULL,
	  "percent p50 or throughput may move before the move can count (and only when significant)" },
	{ "tolerance-p99", OPT_DBL, O(tolerance_p99), "25", 0, 1000, NULL,
	  "the same for p99 (docs/trust.md: why it is wider)" },
	{ "tolerance-tagged", OPT_DBL, O(tolerance_tagged), "1", 0, 100, NULL,
	  "percentage points the share of requests tagged by host stalls may move before the move can count" },
	{ "tail", OPT_ENUM, O(tail), "system", 0, 0, tails,
	  "which percentiles are judged: system (the requests no host stall tagged, host_tags.sys_lat_ns; "
	  "the raw ones are shown beside) or raw (every request, lat_ns)" },
	{ "alpha", OPT_DBL, O(alpha), "0.01", 1e-9, 0.5, NULL,
	  "the comparison's false-verdict rate: with holm, the chance that an A/A pair reports any "
	  "regression or improvement at all, over every point and metric" },
	{ "correction", OPT_ENUM, O(correction), "holm", 0, 0, corrections,
	  "correction for testing many points and metrics at once: holm (family-wise error rate, "
	  "docs/trust.md), bh (Benjamini-Hochberg false discovery rate), none" },
	{ "canary-drift", OPT_DBL, O(canary_drift), "1.5", 1, 1000, NULL,
	  "when the runs' median canaries differ by more than this factor, changes are inconclusive; trials "
	  "paired by round (oqb ab) leave out a round whose two canaries differ so" },
	{ "json", OPT_BOOL, O(json), NULL, 0, 0, NULL, "print the comparison as JSON instead of a table" },
	{ NULL, .help = "compare two runs, point by point, from their trials (docs/driver.md)" },
};
#undef O

const struct opts_cmd compare_cmd = {
	"oqb compare", cmp_tab,
	OQB_EXITS_BASE | OQB_EXITS(OQB_EXIT_FAIL) | OQB_EXITS(OQB_EXIT_INCONCLUSIVE),
};

static const char *const verdict_name[] = { "same", "regression", "improvement", "inconclusive" };

#define MAX_TRIALS 1000

/* The metrics of a point: the first three decide its verdict; the fourth,
 * the share of requests host stalls tagged, is reported beside it. */
enum { M_P50 = COMPARE_P50, M_P99 = COMPARE_P99, M_OPS = COMPARE_OPS, M_TAGGED = COMPARE_TAGGED,
       NMETRIC = COMPARE_NMETRIC };
static const char *const mnames[NMETRIC] = { "p50", "p99", "achieved_ops", "tagged_frac" };

/* the keys this file reads back from its own document (compare's JSON,
 * not run.json: result.h reads that) */
#define DOC_ROWS "points"
#define SUMMARY_FINDING "finding"
#define SUMMARY_POINTS "points"

json_t *compare_rows(const json_t *doc)
{
	return json_object_get(doc, DOC_ROWS);
}

json_t *compare_summary(const json_t *doc)
{
	return json_object_get(doc, "summary");
}

json_t *compare_row_metric(const json_t *row, int metric)
{
	return metric >= 0 && metric < NMETRIC ? json_object_get(row, mnames[metric]) : NULL;
}

const char *compare_metric_name(int metric)
{
	return metric >= 0 && metric < NMETRIC ? mnames[metric] : "?";
}
#define NO_TRIAL ((size_t)-1)   /* a point without trials stands for one */

/* One metric of one matched point pair. */
struct metric {
	const char *name;
	int lower_is_better;
	int absolute;                          /* change is new - base (a share), not a ratio */
	int sys;                               /* a percentile of the untagged requests */
	double b[MAX_TRIALS], n[MAX_TRIALS];   /* the trials' values */
	size_t ib[MAX_TRIALS], in[MAX_TRIALS]; /* and which trials they are */
	size_t nb, nn;
	double base, new_;                     /* latency: the used trials' merged percentile;
						* else the median over them */
	double raw_base, raw_new;              /* sys: the same of every request (NAN: not sys) */
	int all_tagged;                        /* sys: a side has requests, but none untagged */
	double change;                         /* (new - base) / base */
	double p, p_adj, ks_d, ks_p;           /* NAN when not tested */
	size_t test;                           /* index into the run's p-values */
	unsigned strata;                       /* floors the kept rounds ran on (1, or 0: test failed) */
	int own_overload;                      /* judged on the worse side's own overload (judge) */
	enum verdict v;
	char why[480];
};

struct pair {
	const json_t *bp, *np;
	char load[64];
	struct metric m[NMETRIC];
	int sys;                               /* both sides' trials carry host_tags, and the system tail is judged */
	unsigned char *keep[2];                /* unpaired: the trials in the shared canary regime (NULL: all) */
	size_t off_regime[2];                  /* and those left out, base and new */
	double regime_ns;                      /* the regime's canary, when some were left out */
	int paired;                            /* trials matched by round (oqb ab) */
	size_t unmatched;                      /* paired: rounds left out */
	size_t nkept, *kb, *kn;                /* paired: the kept rounds' trial indices */
	double *kc;                            /* and their canaries (NAN: none) */
	size_t over[2], of[2];                 /* base, new: trials that did not keep up, of all */
};


/*
 * The change of new against base: the median of every new/base ratio of
 * trial values, minus 1 (the Hodges-Lehmann estimate on a log scale, the
 * shift that goes with the rank-sum test).  It uses every pair of trials
 * where the ratio of medians uses the two middle ones, so it moves less
 * between identical runs.  With sid (paired rounds on several floors),
 * only pairs of trials of one stratum count.  NAN when no base value is
 * positive.
 */
static double hl_change(const double *b, size_t nb, const double *n, size_t nn, const unsigned *sid)
{
	double *r = nb && nn ? malloc(nb * nn * sizeof *r) : NULL;
	size_t k = 0;
	if (!r)
		return nb && nn && stats_median(b, nb) > 0 ? stats_median(n, nn) / stats_median(b, nb) - 1 : NAN;
	for (size_t i = 0; i < nb; i++)
		for (size_t j = 0; j < nn; j++)
			if (b[i] > 0 && (!sid || sid[i] == sid[j]))
				r[k++] = n[j] / b[i];
	double c = stats_median_inplace(r, k) - 1;
	free(r);
	return c;
}

/* The same for a share: the median of every new - base difference of
 * trial values (Hodges-Lehmann), within a stratum with sid.  NAN when
 * there is no pair. */
static double hl_diff(const double *b, size_t nb, const double *n, size_t nn, const unsigned *sid)
{
	double *r = malloc(nb * nn * sizeof *r + 1);
	size_t k = 0;
	if (!r)
		return stats_median(n, nn) - stats_median(b, nb);
	for (size_t i = 0; i < nb; i++)
		for (size_t j = 0; j < nn; j++)
			if (!sid || sid[i] == sid[j])
				r[k++] = n[j] - b[i];
	double c = k ? stats_median_inplace(r, k) : NAN;
	free(r);
	return c;
}

static double metric_pct(const char *metric)
{
	return strcmp(metric, "p50") == 0 ? 50 : strcmp(metric, "p99") == 0 ? 99 : NAN;
}

/* One metric of a trial (or of a point without trials): its p50 or p99
 * (of the untagged requests with sys, else of all), achieved_ops, or its
 * tagged share; NAN when it holds no samples or the value is missing. */
static double metric_value(const json_t *t, const char *metric, int sys)
{
	if (strcmp(metric, "achieved_ops") == 0)
		return result_achieved(t);
	if (strcmp(metric, "tagged_frac") == 0)
		return result_tagged_frac(t, "all");
	return result_trial_pct(t, sys, metric_pct(metric));
}

/*
 * The trials' values of one metric of a point (trials with no samples
 * left out, as are those keep says are off the shared canary regime), and
 * their indices in idx.  A run.json from before trials existed counts as
 * one trial with the point's values (index NO_TRIAL).
 */
static size_t trial_values(const json_t *p, const char *metric, int sys, const unsigned char *keep, double *out,
			   size_t *idx)
{
	const json_t *trials = result_trials(p), *t;
	size_t i, n = 0;

	if (!json_array_size(trials)) {
		double v = metric_value(p, metric, sys);
		if (!isnan(v)) {
			idx[n] = NO_TRIAL;
			out[n++] = v;
		}
		return n;
	}
	json_array_foreach(trials, i, t) {
		double v = metric_value(t, metric, sys);
		if (n < MAX_TRIALS && !isnan(v) && (!keep || keep[i])) {
			idx[n] = i;
			out[n++] = v;
		}
	}
	return n;
}

/*
 * Percentile pct of the histogram of trials idx[0..n) of p merged (their
 * untagged requests' with sys): bins summed, never percentiles averaged.
 * NAN when a histogram cannot be read or holds nothing.
 */
static double merged_pct(const json_t *p, const size_t *idx, size_t n, int sys, double pct)
{
	if (n == 1 && idx[0] == NO_TRIAL)
		return result_trial_pct(p, sys, pct);
	struct hist *h = hist_new(), *one = hist_new();
	char e[256];
	double v = NAN;
	int bad = !h || !one || !n;
	for (size_t i = 0; i < n && !bad; i++) {
		bad = result_trial_hist(one, json_array_get(result_trials(p), idx[i]), sys, e, sizeof e) < 0;
		if (!bad)
			hist_merge(h, one);
	}
	if (!bad && h->n)
		v = (double)hist_percentile(h, pct);
	hist_free(h);
	hist_free(one);
	return v;
}

/* Whether p's trials (or p itself, without trials) all carry host_tags. */
static int tagged_all(const json_t *p)
{
	const json_t *trials = result_trials(p), *t;
	size_t i;
	if (!json_array_size(trials))
		return result_host_tags(p) != NULL;
	json_array_foreach(trials, i, t)
		if (!result_host_tags(t))
			return 0;
	return 1;
}

/*
 * Unpaired trials by canary regime (trials.h): when the two sides'
 * trials of a point ran on more than one floor of the machine (canaries
 * drift or more apart), only those on the floor most of them share are
 * compared, on both sides; the rest are left out (pr->keep, off_regime).
 * A floor flip then costs trials, never makes a verdict.  -1 when out of
 * memory.
 */
static int regime_filter(struct pair *pr, double drift)
{
	const json_t *pt[2] = { pr->bp, pr->np }, *t;
	size_t nt[2] = { json_array_size(result_trials(pr->bp)), json_array_size(result_trials(pr->np)) };
	size_t i, n = 0, cnt;
	double *v = calloc(nt[0] + nt[1] + 1, sizeof *v);
	if (!v)
		return -1;
	for (int s = 0; s < 2; s++)
		json_array_foreach(result_trials(pt[s]), i, t)
			if (result_canary_ns(t) > 0)
				v[n++] = result_canary_ns(t);
	double mode = n ? regime_mode(v, n, drift, -1, &cnt) : -1;
	free(v);
	if (!n || cnt == n)
		return 0;
	pr->regime_ns = mode;
	for (int s = 0; s < 2; s++) {
		if (!(pr->keep[s] = calloc(nt[s] + 1, 1)))
			return -1;
		json_array_foreach(result_trials(pt[s]), i, t) {
			double c = result_canary_ns(t);
			pr->keep[s][i] = !(c > 0) || regime_same(c, mode, drift);
			pr->off_regime[s] += !pr->keep[s][i];
		}
	}
	return 0;
}

/* The |z| whose two-sided normal p-value is p (bisection on erfc). */
static double z_of_p(double p)
{
	double lo = 0, hi = 40;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;
		if (erfc(mid / sqrt(2)) > p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* Trials per side that would make a change of this size significant:
 * z grows with the square root of the trials (normal approximation of the
 * rank-sum test), and never fewer than the test needs at all. */
static unsigned trials_needed(size_t n, double p, double alpha)
{
	unsigned floor_n = mwu_min_n(alpha);
	if (!(p > 0 && p < 1))
		return floor_n;
	double z = z_of_p(p), zn = z_of_p(alpha);
	double need = (double)n * (zn / z) * (zn / z);
	unsigned k = need > 1e6 ? 1000000u : (unsigned)ceil(need);
	return k > floor_n ? k : floor_n;
}

static long round_of(const json_t *t)
{
	return result_round(t);
}

/*
 * Trials paired by round (`oqb ab` runs both sides in every round, one
 * right after the other, in a random order): the two sides of a round ran
 * on the same machine only when their canaries agree.  A round whose sides'
 * canaries differ by more than drift is left out on both sides, as is a
 * trial with no partner; the test then compares like with like, and the
 * runs' median canaries are not needed.  Pairing applies when every trial
 * on both sides carries a round; it sets pr->paired, the kept rounds (kb, kn, kc)
 * and the rounds left out (unmatched).  Returns -1 when out of memory.
 */
static int pair_rounds(struct pair *pr, double drift)
{
	const json_t *tb = result_trials(pr->bp), *tn = result_trials(pr->np), *t, *u;
	size_t i, j, nb = json_array_size(tb), nn = json_array_size(tn);

	if (!nb || !nn)
		return 0;
	json_array_foreach(tb, i, t)
		if (round_of(t) < 0)
			return 0;
	json_array_foreach(tn, j, u)
		if (round_of(u) < 0)
			return 0;
	unsigned char *used = calloc(nn, 1);   /* NEW's trials already paired */
	pr->kb = calloc(nb, sizeof *pr->kb);
	pr->kn = calloc(nb, sizeof *pr->kn);
	pr->kc = calloc(nb, sizeof *pr->kc);
	if (!used || !pr->kb || !pr->kn || !pr->kc) {
		free(used);
		return -1;
	}
	pr->paired = 1;
	json_array_foreach(tb, i, t) {
		json_array_foreach(tn, j, u) {
			if (round_of(u) != round_of(t) || used[j])
				continue;
			double cb = result_canary_ns(t), cn = result_canary_ns(u);
			used[j] = 1;
			if (cb > 0 && cn > 0 && fmax(cb / cn, cn / cb) > drift) {
				pr->unmatched++;
			} else {
				pr->kb[pr->nkept] = i;
				pr->kn[pr->nkept] = j;
				pr->kc[pr->nkept++] = cb > 0 && cn > 0 ? fmax(cb, cn) : NAN;
			}
			break;
		}
	}
	free(used);
	return 0;
}

static void pair_free(struct pair *pr)
{
	free(pr->kb);
	free(pr->kn);
	free(pr->kc);
	free(pr->keep[0]);
	free(pr->keep[1]);
}

struct by_canary {
	double c;
	size_t i;
};

static int cmp_canary(const void *x, const void *y)
{
	double a = ((const struct by_canary *)x)->c, b = ((const struct by_canary *)y)->c;
	return (a > b) - (a < b);
}

/*
 * The floors paired rounds ran on: the rounds sorted by canary, a new
 * stratum where a canary exceeds the one before by more than drift.
 * Fills sid[0..n) and returns the strata; 1 when a round has no canary.
 */
static unsigned strata_of(const double *kc, size_t n, double drift, unsigned *sid)
{
	struct by_canary o[MAX_TRIALS];
	unsigned ns = 1;
	for (size_t i = 0; i < n; i++) {
		if (isnan(kc[i]))
			return 1;
		o[i] = (struct by_canary){ kc[i], i };
	}
	qsort(o, n, sizeof *o, cmp_canary);
	sid[o[0].i] = 0;
	for (size_t i = 1; i < n; i++) {
		ns += o[i].c > o[i - 1].c * drift;
		sid[o[i].i] = ns - 1;
	}
	return ns;
}

/* One metric: collect trials, test, and fill everything but the verdict. */
static void measure(struct metric *m, const struct pair *pr, const char *name, int lib, double drift)
{
	int sys = pr->sys && !isnan(metric_pct(name));
	const json_t *bp = pr->bp, *np = pr->np;
	double kc[MAX_TRIALS];
	char e[128];
	memset(m, 0, sizeof *m);
	m->name = name;
	m->lower_is_better = lib;
	m->absolute = strcmp(name, "tagged_frac") == 0;
	m->sys = sys;
	if (pr->paired) {
		/* the kept rounds in pairs: a round whose trial on either side
		 * has no value for this metric is left out on both */
		const json_t *tb = result_trials(bp), *tn = result_trials(np);
		for (size_t i = 0; i < pr->nkept && m->nb < MAX_TRIALS; i++) {
			double x = metric_value(json_array_get(tb, pr->kb[i]), name, sys);
			double y = metric_value(json_array_get(tn, pr->kn[i]), name, sys);
			if (isnan(x) || isnan(y))
				continue;
			kc[m->nb] = pr->kc[i];
			m->ib[m->nb] = pr->kb[i];
			m->in[m->nn] = pr->kn[i];
			m->b[m->nb++] = x;
			m->n[m->nn++] = y;
		}
	} else {
		m->nb = trial_values(bp, name, sys, pr->keep[0], m->b, m->ib);
		m->nn = trial_values(np, name, sys, pr->keep[1], m->n, m->in);
	}
	m->raw_base = m->raw_new = NAN;
	if (sys && (!m->nb || !m->nn)) {
		double rv[MAX_TRIALS];
		size_t ri[MAX_TRIALS];
		m->all_tagged = trial_values(m->nb ? np : bp, name, 0, pr->keep[m->nb ? 1 : 0], rv, ri) > 0;
	}
	if (!isnan(metric_pct(name))) {
		double q = metric_pct(name);
		m->base = merged_pct(bp, m->ib, m->nb, sys, q);
		m->new_ = merged_pct(np, m->in, m->nn, sys, q);
		if (sys) {
			m->raw_base = merged_pct(bp, m->ib, m->nb, 0, q);
			m->raw_new = merged_pct(np, m->in, m->nn, 0, q);
		}
		/* trials that keep only their numbers (no histogram to merge):
		 * the median over them */
		if (isnan(m->base))
			m->base = stats_median(m->b, m->nb);
		if (isnan(m->new_))
			m->new_ = stats_median(m->n, m->nn);
	} else {
		m->base = stats_median(m->b, m->nb);
		m->new_ = stats_median(m->n, m->nn);
	}
	m->p = m->p_adj = m->ks_d = m->ks_p = NAN;
	/* Paired rounds on more than one floor: each round is tested against
	 * the rounds of its own floor (van Elteren), and the change comes from
	 * pairs of trials of one floor; otherwise the plain test over all. */
	unsigned sid[MAX_TRIALS];
	m->strata = pr->paired && m->nb >= 2 ? strata_of(kc, m->nb, drift, sid) : 1;
	int strat = m->strata > 1;
	if (m->absolute)   /* a share: the median of new - base differences */
		m->change = m->nb && m->nn ? hl_diff(m->b, m->nb, m->n, m->nn, strat ? sid : NULL) : NAN;
	else
		m->change = stats_median(m->b, m->nb) > 0 ? hl_change(m->b, m->nb, m->n, m->nn, strat ? sid : NULL)
							  : NAN;
	if (m->nb >= 2 && m->nn >= 2) {
		struct mwu_result r;
		if (strat && strat_rank_test(m->b, m->n, sid, m->nb, &m->p, NULL, e, sizeof e) != 0)
			m->strata = 0;   /* out of memory: untested, so undecided */
		if (!strat && mwu_test(m->b, m->nb, m->n, m->nn, &r, e, sizeof e) == 0)
			m->p = r.p;
		ks2_test(m->b, m->nb, m->n, m->nn, &m->ks_d, &m->ks_p, e, sizeof e);
	}
}

/*
 * Whether one trial (or a point without trials) did not keep up with its
 * load: it saturated (achieved below MERGE_SATURATED of offered), or it
 * left more of its requests unsent or unanswered than that share (closed
 * loop, where nothing is offered and `saturated` is null).  Not the
 * unsent check's own limit: at a few thousand ops/s it allows no unsent
 * request at all, and one request the client was late to send when the
 * window closed says the host was busy, not that the server fell behind.
 */
static int overloaded(const json_t *t)
{
	double sent = result_sent(t), unsent = result_unsent(t), unans = result_unanswered(t);
	double lost = (isnan(unsent) ? 0 : unsent) + (isnan(unans) ? 0 : unans);
	double sched = (isnan(sent) ? 0 : sent) + (isnan(unsent) ? 0 : unsent);
	return result_saturated(t) ||
	       (sched > 0 && lost > (1 - MERGE_SATURATED) * sched);
}

/* Counts, per side, the point's trials that did not keep up (every trial
 * the point holds, rounds left out by the pairing too: a round the host
 * overloaded is evidence against calling the overload a side's own). */
static void count_overload(struct pair *pr)
{
	const json_t *pt[2] = { pr->bp, pr->np }, *t;
	size_t i;
	for (int s = 0; s < 2; s++) {
		const json_t *trials = result_trials(pt[s]);
		pr->over[s] = pr->of[s] = 0;
		if (!json_array_size(trials)) {
			pr->of[s] = 1;
			pr->over[s] = (size_t)overloaded(pt[s]);
			continue;
		}
		json_array_foreach(trials, i, t) {
			pr->of[s]++;
			pr->over[s] += (size_t)overloaded(t);
		}
	}
}

/* Whether side s (0 base, 1 new) did not keep up in most of its trials
 * and the other side in none: then the overload is that side's own. */
static int own_overload(const struct pair *pr, int s)
{
	return pr->over[s] * 2 > pr->of[s] && pr->over[!s] == 0;
}

/* "NEW saturated (or left over 5% of its requests unsent or unanswered)
 * in 9 of 10 trials, BASE in none" into buf. */
static void overload_note(char *buf, size_t len, const struct pair *pr, int s)
{
	snprintf(buf, len, "%s saturated (or left over %.0f%% of its requests unsent or unanswered) in %zu of %zu "
		 "trials, %s in none", s ? "NEW" : "BASE", (1 - MERGE_SATURATED) * 100, pr->over[s], pr->of[s],
		 s ? "BASE" : "NEW");
}

/*
 * The checks that say the host disturbed a point, per metric: CPU taken
 * from a spinning thread slows every request (interference); a thread that
 * stood still, or a window whose halves disagree, moves the tail.
 */
static const char *const dist_p50[] = { "interference", NULL };
static const char *const dist_p99[] = { "stalls", "interference", "stationarity", NULL };
static const char *const dist_none[] = { NULL };

/*
 * The verdict of one metric (compare.h): a change counts only when it is
 * larger than the tolerance AND significant after the correction; a change
 * larger than the tolerance that is not significant is inconclusive, with
 * the trials that would decide it; single-trial runs cannot tell noise
 * from change at all.  A side whose point its own checks call disturbed
 * (dist[]) cannot testify that it is the worse one: that move may be the
 * host's (in the noise gate here, a base run whose P99s the host had
 * stalled read as "improvements" of 61-96 %).  Except when that side
 * consistently did not keep up with its load (own_overload: saturated, or
 * over 5 % of its requests left unsent or unanswered, in most of its
 * trials and in none of the other side's): a server too slow for the load keeps its own spinning
 * threads busy and makes them look disturbed, so a NEW that saturates
 * would otherwise never be a regression.  That side is then the worse
 * one, and the why says so.  An overload the host caused does not pass:
 * it lands on both sides' rounds, or on a few of one side's, and then the
 * disturbance holds the verdict back as before.
 */
static void judge(struct metric *m, const struct pair *pr, double tol, double alpha, double drift,
		  const char *env_note, const char *const *dist)
{
	const json_t *bp = pr->bp, *np = pr->np;
	int worse = m->lower_is_better ? m->change > 0 : m->change < 0;
	char by[32];
	if (m->absolute)
		snprintf(by, sizeof by, "%.2f pp", fabs(m->change) * 100);
	else
		snprintf(by, sizeof by, "%.0f%%", fabs(m->change) * 100);
	m->v = SAME;
	if (pr->paired && pr->unmatched && !pr->nkept) {
		m->v = UNDECIDED;
		snprintf(m->why, sizeof m->why, "in all %zu rounds the two sides' canaries differ by more than x%g, "
			 "so no round compares like with like; run more rounds (if it stays so, the change itself "
			 "may move the canary)", pr->unmatched, drift);
		return;
	}
	if (isnan(m->change) && (pr->off_regime[0] || pr->off_regime[1]) && (m->nb || m->nn)) {
		m->v = UNDECIDED;
		snprintf(m->why, sizeof m->why, "no trial of one side ran on the canary regime the other's did "
			 "(%zu base and %zu new trial(s) off the %.0f ns floor left out): the machine changed, not "
			 "necessarily the code; run both again", pr->off_regime[0], pr->off_regime[1], pr->regime_ns);
		return;
	}
	if (isnan(m->change) && m->all_tagged) {
		m->v = UNDECIDED;
		snprintf(m->why, sizeof m->why, "host stalls tagged every request of the %s side's trials, so its "
			 "system tail holds nothing to judge (the raw tail is beside; --tail raw judges it)",
			 m->nb ? "new" : "base");
		return;
	}
	if (isnan(m->change)) {
		snprintf(m->why, sizeof m->why, "no samples on one side");
		m->v = m->nb || m->nn ? UNDECIDED : SAME;
		return;
	}
	if (fabs(m->change) <= tol)
		return;
	if (m->strata == 0) {
		m->v = UNDECIDED;
		snprintf(m->why, sizeof m->why, "%s by %s, but the stratified test ran out of memory; run the "
			 "comparison again where more memory is free", worse ? "worse" : "better", by);
		return;
	}
	if (isnan(m->p)) {
		m->v = UNDECIDED;
		snprintf(m->why, sizeof m->why, "%s by %s, but with %zu and %zu trial(s) run-to-run noise "
			 "cannot be told from a change; run both with repeat >= %u", worse ? "worse" : "better",
			 by, m->nb, m->nn, mwu_min_n(alpha));
		return;
	}
	if (m->p_adj >= alpha) {
		m->v = UNDECIDED;
		if (m->p >= 0.5)
			snprintf(m->why, sizeof m->why, "%s by %s in the medians, but the trials overlap (p %.3g): "
				 "run-to-run noise this large hides any change of this size; more trials would "
				 "hardly decide it", worse ? "worse" : "better", by, m->p);
		else
			snprintf(m->why, sizeof m->why, "%s by %s but not significant (p %.3g, corrected %.3g); "
				 "about %u trials per side would decide it", worse ? "worse" : "better",
				 by, m->p, m->p_adj,
				 trials_needed(m->nb < m->nn ? m->nb : m->nn, m->p, alpha / 4));
		return;
	}
	if (env_note) {
		m->v = UNDECIDED;
		snprintf(m->why, sizeof m->why, "%s by %s (p %.3g), but %s", worse ? "worse" : "better",
			 by, m->p_adj, env_note);
		return;
	}
	char names[160], note[200];
	int disturbed = checks_warned(result_checks(worse ? np : bp), dist, names, sizeof names);
	if (own_overload(pr, worse)) {
		overload_note(note, sizeof note, pr, worse);
		m->v = worse ? WORSE : BETTER;
		m->own_overload = 1;
		snprintf(m->why, sizeof m->why, "%s by %s (p %.3g); %s%s%s%s", worse ? "worse" : "better",
			 by, m->p_adj, note, disturbed ? ": its own overload, not the host, "
			 "made its checks warn (" : "", disturbed ? names : "", disturbed ? ")" : "");
		return;
	}
	if (disturbed) {
		m->v = UNDECIDED;
		snprintf(m->why, sizeof m->why, "%s by %s (p %.3g), but the %s run's point, the %s one, was "
			 "disturbed by the host (its checks warned: %s), which may be all the difference; run it again",
			 worse ? "worse" : "better", by, m->p_adj, worse ? "new" : "base",
			 m->lower_is_better ? "slower" : "lower", names);
		return;
	}
	m->v = worse ? WORSE : BETTER;
}

static void fmt_metric(char *buf, size_t len, const struct metric *m, int is_lat)
{
	char a[32], b[32], p[32] = "";

	if (m->absolute) {
		snprintf(a, sizeof a, "%.2f%%", m->base * 100);
		snprintf(b, sizeof b, "%.2f%%", m->new_ * 100);
	} else if (is_lat) {
		fmt_ns(a, sizeof a, m->base);
		fmt_ns(b, sizeof b, m->new_);
		if (isnan(m->base))
			snprintf(a, sizeof a, "-");
		if (isnan(m->new_))
			snprintf(b, sizeof b, "-");
	} else {
		snprintf(a, sizeof a, "%.0f", m->base);
		snprintf(b, sizeof b, "%.0f", m->new_);
	}
	if (!isnan(m->p_adj))
		snprintf(p, sizeof p, " q%.2g", m->p_adj);
	if (isnan(m->base) && m->absolute)
		snprintf(buf, len, "-");
	else if (isnan(m->new_))
		snprintf(buf, len, "%s -> ?", a);
	else if (m->absolute)
		snprintf(buf, len, "%s -> %s (%+.2fpp%s)%s", a, b, isnan(m->change) ? 0 : m->change * 100, p,
			 m->v == WORSE ? " !" : m->v == BETTER ? " +" : m->v == UNDECIDED ? " ?" : "");
	else
		snprintf(buf, len, "%s -> %s (%+.1f%%%s)%s", a, b, isnan(m->change) ? 0 : m->change * 100, p,
			 m->v == WORSE ? " !" : m->v == BETTER ? " +" : m->v == UNDECIDED ? " ?" : "");
}

/* Adjusted p-values in place (corrections[]: bh, holm, none). */
static void adjust(double *p, size_t m, int how)
{
	double *adj;
	if (!m || how == 2 || !(adj = malloc(m * sizeof *adj)))
		return;
	if (how == 0)
		bh_adjust(p, m, adj);
	else
		holm_adjust(p, m, adj);
	memcpy(p, adj, m * sizeof *adj);
	free(adj);
}

json_t *compare_eval(const json_t *base, const json_t *nw, const struct compare_params *o, const char *new_name)
{
	char env[300] = "", line[2000];
	size_t i, npoints = 0, nreg = 0, nimp = 0, nund = 0, ntests = 0, npairs = 0, npaired = 0, left_out = 0;
	size_t nunmatched = 0, nmatched = 0, nsys = 0, nexposed = 0, off_regime = 0;
	int oom = 0;
	struct pair *pairs = NULL;
	double *pv = NULL;
	unsigned char *taken = NULL;   /* NEW's points already matched */
	json_t *bp, *out = json_array(), *table = json_array(), *knee = NULL;
	enum match_by by = match_mode(base, nw);

	double tol[NMETRIC] = { o->tolerance_pct / 100, o->tolerance_p99_pct / 100, o->tolerance_pct / 100,
				o->tolerance_tagged_pp / 100 };
	double cb = result_run_canary(base), cn = result_run_canary(nw);
	if (!isnan(cb) && !isnan(cn) && fmax(cb / cn, cn / cb) > o->canary_drift)
		snprintf(env, sizeof env, "the machines' canaries differ (%.0f ns vs %.0f ns: more than x%g), so the "
			 "environment changed between the runs", cb, cn, o->canary_drift);

	/* Match, measure and test every point, then correct all p-values at once. */
	size_t nbase = json_array_size(result_points(base));
	pairs = calloc(nbase ? nbase : 1, sizeof *pairs);
	pv = calloc(NMETRIC * (nbase ? nbase : 1), sizeof *pv);
	taken = calloc(json_array_size(result_points(nw)) + 1, 1);
	if (!pairs || !pv || !taken || !out || !table) {
		free(pairs);
		free(pv);
		free(taken);
		json_decref(out);
		json_decref(table);
		return NULL;
	}
	json_array_foreach(result_points(base), i, bp) {
		struct pair *pr = &pairs[npairs++];
		pr->bp = bp;
		long j = match_point(base, nw, bp, by, taken);
		pr->np = j < 0 ? NULL : json_array_get(result_points(nw), (size_t)j);
		match_load_text(pr->load, sizeof pr->load, base, bp, by);
		if (!pr->np)
			continue;
		taken[j] = 1;
		nmatched++;
		if (pair_rounds(pr, o->canary_drift) < 0 || (!pr->paired && regime_filter(pr, o->canary_drift) < 0)) {
			oom = 1;
			break;
		}
		npaired += (size_t)pr->paired;
		left_out += pr->unmatched;
		off_regime += pr->off_regime[0] + pr->off_regime[1];
		pr->sys = !o->tail_raw && tagged_all(pr->bp) && tagged_all(pr->np);
		nsys += (size_t)pr->sys;
		count_overload(pr);
		for (int k = 0; k < NMETRIC; k++) {
			measure(&pr->m[k], pr, mnames[k], k != M_OPS, o->canary_drift);
			if (!isnan(pr->m[k].p)) {
				pr->m[k].test = ntests;
				pv[ntests++] = pr->m[k].p;
			}
		}
	}
	if (oom) {
		for (i = 0; i < npairs; i++)
			pair_free(&pairs[i]);
		free(pairs);
		free(pv);
		free(taken);
		json_decref(out);
		json_decref(table);
		return NULL;
	}
	adjust(pv, ntests, o->correction);

	snprintf(line, sizeof line, "%-9s %12s  %-34s %-34s %-26s %-27s %-30s %s", "system", "load",
		 o->tail_raw ? "p50 (raw)" : "p50 (system)", o->tail_raw ? "p99 (raw)" : "p99 (system)", "achieved ops/s",
		 "tagged by host stalls", o->tail_raw ? "" : "raw p50 / p99", "verdict");
	json_array_append_new(table, json_string(line));
	for (i = 0; i < npairs; i++) {
		struct pair *pr = &pairs[i];
		const char *sys = result_system(pr->bp);
		char c[NMETRIC][160], raw[160] = "", verdict[1000] = "";
		int worse = 0, better = 0, und = 0;

		npoints++;
		if (!pr->np) {
			/* the runs planned different points: nothing to judge, not a regression */
			char why[300];
			nunmatched++;
			if (by == MATCH_KNEE)
				snprintf(why, sizeof why, "unmatched: %s has no point of %s at %s (of its own knee)",
					 new_name, sys ? sys : "?", pr->load);
			else
				snprintf(why, sizeof why, "unmatched: missing in %s (no point of %s at load %s)",
					 new_name, sys ? sys : "?", pr->load);
			json_array_append_new(out, json_pack("{s:s?, s:s, s:s, s:s, s:s}", "system", sys, "load",
							     pr->load, "verdict", "unmatched", "side", "base",
							     "detail", why));
			snprintf(line, sizeof line, "%-9s %12s  %s", sys ? sys : "?", pr->load, why);
			json_array_append_new(table, json_string(line));
			continue;
		}
		for (int k = 0; k < NMETRIC; k++) {
			struct metric *m = &pr->m[k];
			if (!isnan(m->p))
				m->p_adj = pv[m->test];
			judge(m, pr, tol[k], o->alpha, o->canary_drift, env[0] && !pr->paired ? env : NULL,
			      k == M_P99 ? dist_p99 : k == M_TAGGED ? dist_none : dist_p50);
			if (k == M_TAGGED)   /* reported beside, never the point's verdict */
				continue;
			worse |= m->v == WORSE;
			better |= m->v == BETTER;
			und |= m->v == UNDECIDED;
		}
		for (int pass = 0; pass < 3; pass++)
			for (int k = 0; k < M_TAGGED; k++) {
				const struct metric *m = &pr->m[k];
				enum verdict want = pass == 0 ? WORSE : pass == 1 ? BETTER : UNDECIDED;
				if (m->v != want || (pass == 1 && worse) || (pass == 2 && (worse || better)))
					continue;
				size_t l = strlen(verdict);
				snprintf(verdict + l, sizeof verdict - l, "%s%s %s%s%s", l ? "; " :
					 pass == 0 ? "REGRESSION: " : pass == 1 ? "improved: " : "inconclusive: ",
					 m->name, pass == 0 ? "worse" : pass == 1 ? "better" : "",
					 pass == 2 ? "(" : "", pass == 2 ? m->why : "");
				if (pass == 2)
					snprintf(verdict + strlen(verdict), sizeof verdict - strlen(verdict), ")");
			}
		/* a verdict that stands on one side's own overload says so once */
		for (int k = 0; k < 3 && (worse || better); k++)
			if (pr->m[k].own_overload && pr->m[k].v == (worse ? WORSE : BETTER)) {
				char note[200];
				size_t l = strlen(verdict);
				overload_note(note, sizeof note, pr, worse);
				snprintf(verdict + l, sizeof verdict - l, " (%s)", note);
				break;
			}
		if (!verdict[0])
			snprintf(verdict, sizeof verdict, "same");
		const struct metric *tg = &pr->m[M_TAGGED];
		const char *exposure = isnan(tg->base) ? "unknown" : tg->v == WORSE ? "more" : tg->v == BETTER ? "less" :
				       tg->v == UNDECIDED ? "inconclusive" : "same";
		if (tg->v == WORSE || tg->v == BETTER) {
			size_t l = strlen(verdict);
			snprintf(verdict + l, sizeof verdict - l, "; host stalls tagged %s requests (%.2f%% -> %.2f%%): "
				 "NEW's requests are %s exposed to the host's stalls", tg->v == WORSE ? "more" : "fewer",
				 tg->base * 100, tg->new_ * 100, tg->v == WORSE ? "more" : "less");
			nexposed++;
		}
		nreg += (size_t)worse;
		nimp += (size_t)(better && !worse);
		nund += (size_t)(und && !worse && !better);
		json_t *row = json_pack("{s:s?, s:s, s:s, s:s, s:s, s:s}", "system", sys, "load", pr->load, "verdict",
					worse ? "regression" : better ? "improvement" : und ? "inconclusive" : "same",
					"detail", verdict, "tail", pr->sys ? "system" : "raw", "host_exposure", exposure);
		if (pr->off_regime[0] || pr->off_regime[1])
			json_object_set_new(row, "regime", json_pack("{s:f, s:I, s:I}", "canary_ns", pr->regime_ns,
								     "left_out_base", (json_int_t)pr->off_regime[0],
								     "left_out_new", (json_int_t)pr->off_regime[1]));
		for (int k = 0; k < NMETRIC; k++) {
			const struct metric *m = &pr->m[k];
			json_t *mj = json_pack("{s:f, s:f, s:i, s:i, s:s}", "base", isnan(m->base) ? 0.0 : m->base,
					       "new", isnan(m->new_) ? 0.0 : m->new_, "trials_base", (int)m->nb,
					       "trials_new", (int)m->nn, "verdict", verdict_name[m->v]);
			json_object_set_new(mj, "change_pct", isnan(m->change) ? json_null() : json_real(m->change * 100));
			json_object_set_new(mj, "mwu_p", isnan(m->p) ? json_null() : json_real(m->p));
			json_object_set_new(mj, "p_adjusted", isnan(m->p_adj) ? json_null() : json_real(m->p_adj));
			json_object_set_new(mj, "ks_d", isnan(m->ks_d) ? json_null() : json_real(m->ks_d));
			json_object_set_new(mj, "ks_p", isnan(m->ks_p) ? json_null() : json_real(m->ks_p));
			json_object_set_new(mj, "test", json_string(isnan(m->p) ? "none" : m->strata > 1 ?
				"van Elteren (strata by canary)" : "Mann-Whitney U"));
			if (m->strata > 1)
				json_object_set_new(mj, "strata", json_integer(m->strata));
			if (k == M_P50 || k == M_P99)
				json_object_set_new(mj, "tail", json_string(m->sys ? "system" : "raw"));
			if (m->sys) {
				json_object_set_new(mj, "raw_base", isnan(m->raw_base) ? json_null() : json_real(m->raw_base));
				json_object_set_new(mj, "raw_new", isnan(m->raw_new) ? json_null() : json_real(m->raw_new));
			}
			if (m->why[0])
				json_object_set_new(mj, "why", json_string(m->why));
			json_object_set_new(row, m->name, mj);
		}
		if (by == MATCH_KNEE) {
			json_object_set_new(row, "fraction", json_real(result_knee_fraction(base, pr->bp)));
			json_object_set_new(row, "offered_ops_base", json_real(result_offered(pr->bp)));
			json_object_set_new(row, "offered_ops_new", json_real(result_offered(pr->np)));
		}
		if (pr->paired) {
			/* which rounds the test stands on (oqb ab: never a round it set aside) */
			json_t *used = json_array();
			for (size_t k = 0; k < pr->nkept; k++)
				json_array_append_new(used, json_integer(round_of(json_array_get(result_trials(pr->bp),
												  pr->kb[k]))));
			json_object_set_new(row, "rounds", json_pack("{s:I, s:I, s:o}", "paired",
								     (json_int_t)(pr->nkept + pr->unmatched), "left_out",
								     (json_int_t)pr->unmatched, "used", used));
		}
		json_array_append_new(out, row);
		fmt_metric(c[0], sizeof c[0], &pr->m[M_P50], 1);
		fmt_metric(c[1], sizeof c[1], &pr->m[M_P99], 1);
		fmt_metric(c[2], sizeof c[2], &pr->m[M_OPS], 0);
		fmt_metric(c[3], sizeof c[3], &pr->m[M_TAGGED], 0);
		if (pr->sys) {
			char r[4][32];
			fmt_ns(r[0], sizeof r[0], pr->m[M_P50].raw_base);
			fmt_ns(r[1], sizeof r[1], pr->m[M_P50].raw_new);
			fmt_ns(r[2], sizeof r[2], pr->m[M_P99].raw_base);
			fmt_ns(r[3], sizeof r[3], pr->m[M_P99].raw_new);
			for (int k = 0; k < 4; k++)
				if (!strcmp(r[k], "nans"))
					snprintf(r[k], sizeof r[k], "-");
			snprintf(raw, sizeof raw, "%s->%s / %s->%s", r[0], r[1], r[2], r[3]);
		} else if (!o->tail_raw) {
			snprintf(raw, sizeof raw, "(no host_tags: raw judged)");
		}
		snprintf(line, sizeof line, "%-9s %12s  %-34s %-34s %-26s %-27s %-30s %s", sys ? sys : "?", pr->load, c[0],
			 c[1], c[2], c[3], raw, verdict);
		json_array_append_new(table, json_string(line));
	}
	/* NEW's points no BASE point matched: listed, never judged */
	json_array_foreach(result_points(nw), i, bp) {
		const char *sys = result_system(bp);
		char load[64], why[300];
		if (taken[i])
			continue;
		nunmatched++;
		match_load_text(load, sizeof load, nw, bp, by);
		snprintf(why, sizeof why, "unmatched: only in %s (BASE has no point of %s at %s%s)", new_name,
			 sys ? sys : "?", load, by == MATCH_KNEE ? " of its own knee" : "");
		json_array_append_new(out, json_pack("{s:s?, s:s, s:s, s:s, s:s}", "system", sys, "load", load,
						     "verdict", "unmatched", "side", "new", "detail", why));
		snprintf(line, sizeof line, "%-9s %12s  %s", sys ? sys : "?", load, why);
		json_array_append_new(table, json_string(line));
	}
	/* the knees, when both runs searched theirs */
	if (by == MATCH_KNEE) {
		enum verdict kv;
		knee = knee_compare(base, nw, o->tolerance_pct, env[0] ? env : NULL, &kv, line, sizeof line);
		if (knee)
			json_array_append_new(table, json_string(line));
		nreg += kv == WORSE;
		nimp += kv == BETTER;
		nund += kv == UNDECIDED;
	}
	char how[200], rate[400];
	snprintf(how, sizeof how, "alpha %g after %s over %zu tests", o->alpha,
		 o->correction == 0 ? "Benjamini-Hochberg" : o->correction == 1 ? "Holm" : "no correction", ntests);
	if (o->correction == 1)
		snprintf(rate, sizeof rate, "family-wise false-verdict rate at most %g %%: the chance that two runs of "
			 "one build report any regression or improvement, over all %zu tests (points x metrics), "
			 "Holm-corrected", o->alpha * 100, ntests);
	else if (o->correction == 0)
		snprintf(rate, sizeof rate, "false discovery rate at most %g %% (Benjamini-Hochberg over %zu tests): "
			 "NOT a family-wise rate; an A/A pair can report a change (--correction holm bounds that)",
			 o->alpha * 100, ntests);
	else
		snprintf(rate, sizeof rate, "no correction: each of the %zu tests alone has a false-verdict rate of "
			 "%g %%, the comparison as a whole far more", ntests, o->alpha * 100);
	json_t *doc = json_pack("{s:o, s:{s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:s, s:I, s:s}, s:o}", "points", out,
				"summary", "points", (json_int_t)npoints, "regressions", (json_int_t)nreg,
				"improvements", (json_int_t)nimp, "inconclusive", (json_int_t)nund,
				"tolerance_pct", o->tolerance_pct, "tolerance_p99_pct", o->tolerance_p99_pct, "alpha", o->alpha, "correction",
				corrections[o->correction], "tests", (json_int_t)ntests, "how", how, "table", table);
	json_t *notes = json_array();
	if (env[0] && npaired < npairs)
		json_array_append_new(notes, json_string(env));
	if (npaired) {
		snprintf(line, sizeof line, "trials are paired by round: %zu point-round(s) whose two sides' canaries "
			 "differ by more than x%g (the machine changed within the round) were left out on both sides",
			 left_out, o->canary_drift);
		json_array_append_new(notes, json_string(line));
	}
	int kb = isfinite(result_knee(base, NULL, NULL)), kn = isfinite(result_knee(nw, NULL, NULL));
	if (by == MATCH_KNEE) {
		json_array_append_new(notes, json_string("both runs searched their knees: points are matched by "
			"fraction of each run's own knee, and the knees are compared with their searches' brackets"));
	} else if (kb != kn) {
		snprintf(line, sizeof line, "%s searched its knee and %s ran fixed loads: points are matched on exact "
			 "offered load, and there is no knee to compare (for a fixed-load gate, freeze NEW's loads "
			 "from BASE: oqb run CONFIG --loads-from BASE_RUN_DIR)", kb ? "BASE" : "NEW", kb ? "NEW" : "BASE");
		json_array_append_new(notes, json_string(line));
	}
	json_array_append_new(notes, json_string(rate));
	if (!o->tail_raw && nmatched && nsys < nmatched) {
		snprintf(line, sizeof line, "%zu of %zu matched point(s) lack host_tags on a side (runs from before "
			 "requests were tagged): their raw percentiles are judged", nmatched - nsys, nmatched);
		json_array_append_new(notes, json_string(line));
	}
	if (off_regime) {
		snprintf(line, sizeof line, "%zu trial(s) ran on another floor of the machine (canary regime, x%g) than "
			 "most of their point's and were left out on their side: a floor flip costs trials, never "
			 "makes a verdict", off_regime, o->canary_drift);
		json_array_append_new(notes, json_string(line));
	}
	if (nbase && !nmatched) {
		snprintf(line, sizeof line, "no point of BASE has a partner in NEW, so nothing was judged: the runs "
			 "planned different points (another config, or loads of their own); run NEW with "
			 "--loads-from BASE_RUN_DIR, or both with the same config");
		json_array_append_new(notes, json_string(line));
	} else if (!ntests) {
		snprintf(line, sizeof line, "every point has a single trial on one side at least: run-to-run noise "
			 "cannot be told from a change, so nothing is called a regression or an improvement; set "
			 "repeat (>= %u) in both runs' configs", mwu_min_n(o->alpha));
		json_array_append_new(notes, json_string(line));
	}
	json_t *sm = compare_summary(doc);
	json_object_set_new(sm, "notes", notes);
	json_object_set_new(sm, "finding", finding_compare(base, nw));
	json_object_set_new(sm, "rounds_left_out", json_integer((json_int_t)left_out));
	json_object_set_new(sm, "false_verdict_rate", json_string(rate));
	json_object_set_new(sm, "tail", json_string(o->tail_raw ? "raw" : "system"));
	json_object_set_new(sm, "points_system_tail", json_integer((json_int_t)nsys));
	json_object_set_new(sm, "host_exposure_changes", json_integer((json_int_t)nexposed));
	json_object_set_new(sm, "trials_off_regime", json_integer((json_int_t)off_regime));
	json_object_set_new(sm, "tolerance_tagged_pp", json_real(o->tolerance_tagged_pp));
	json_object_set_new(sm, "matched_by",
			    json_string(by == MATCH_KNEE ? "knee_fraction" : "load"));
	json_object_set_new(sm, "matched", json_integer((json_int_t)nmatched));
	json_object_set_new(sm, "unmatched", json_integer((json_int_t)nunmatched));
	json_object_set_new(sm, "knee", knee ? knee : json_null());
	for (i = 0; i < npairs; i++)
		pair_free(&pairs[i]);
	free(pairs);
	free(pv);
	free(taken);
	return doc;
}

int compare_main(int argc, char **argv)
{
	struct cmp_opts o;
	char err[1024];
	int r, rc = OQB_EXIT_ERROR;
	json_t *base = NULL, *nw = NULL, *doc = NULL;

	r = opts_command(&compare_cmd, &o, argc, argv);
	if (r != OPTS_GO)
		return r;
	base = result_load(o.base, err, sizeof err);
	if (!base) {
		fprintf(stderr, "oqb compare: %s\n", err);
		return OQB_EXIT_USAGE;
	}
	nw = result_load(o.new_, err, sizeof err);
	if (!nw) {
		fprintf(stderr, "oqb compare: %s\n", err);
		json_decref(base);
		return OQB_EXIT_USAGE;
	}
	for (int k = 1; k <= 2; k++) {
		const char *st = result_status(k == 1 ? base : nw);
		if (st && strcmp(st, "ok") != 0)
			fprintf(stderr, "oqb compare: warning: %s has status \"%s\" (an incomplete run)\n",
				(k == 1 ? o.base : o.new_), st);
	}
	struct compare_params cp = { .tolerance_pct = o.tolerance, .tolerance_p99_pct = o.tolerance_p99,
				     .tolerance_tagged_pp = o.tolerance_tagged, .alpha = o.alpha,
				     .canary_drift = o.canary_drift, .correction = o.correction, .tail_raw = o.tail == 1 };
	doc = compare_eval(base, nw, &cp, o.new_);
	if (!doc) {
		fprintf(stderr, "oqb compare: out of memory\n");
		goto done;
	}
	json_t *sum = compare_summary(doc), *v;
	const json_t *f = json_object_get(sum, SUMMARY_FINDING);
	size_t i;
	if (o.json) {
		json_t *j = json_pack("{s:s, s:s, s:O, s:O}", "base", o.base, "new", o.new_, "points",
				      compare_rows(doc), "summary", sum);
		json_dumpf(j, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(j);
	} else {
		json_array_foreach(json_object_get(doc, "table"), i, v)
			printf("%s\n", json_string_value(v));
	}
	json_array_foreach(json_object_get(sum, "notes"), i, v)
		fprintf(o.json ? stderr : stdout, "note: %s\n", json_string_value(v));
	{
		fprintf(o.json ? stderr : stdout, "finding, base: %s\nfinding, new:  %s\nfinding, compared: %s\n",
			json_string_value(json_object_get(f, "base")), json_string_value(json_object_get(f, "new")),
			json_string_value(json_object_get(f, "text")));
	}
	/* With --json, stdout stays pure JSON; the summary line goes to stderr. */
	long long nreg = json_integer_value(json_object_get(sum, "regressions"));
	long long nund = json_integer_value(json_object_get(sum, "inconclusive"));
	long long npts = json_integer_value(json_object_get(sum, SUMMARY_POINTS));
	long long nmatch = json_integer_value(json_object_get(sum, "matched"));
	long long nunm = json_integer_value(json_object_get(sum, "unmatched"));
	const json_t *knee = json_object_get(sum, "knee");
	char tail[160] = "";
	if (json_is_object(knee) || nunm)
		snprintf(tail, sizeof tail, "; matched by %s, %lld unmatched%s%s",
			 json_is_object(knee) ? "fraction of knee" : "load", nunm, json_is_object(knee) ? ", knee " : "",
			 json_is_object(knee) ? json_string_value(json_object_get(knee, "verdict")) : "");
	fprintf(o.json ? stderr : stdout,
		"compare: %lld points, %lld regressions, %lld improvements, %lld inconclusive, tolerance %g%% (p99 %g%%), %s, "
		"%s tail, %lld host-exposure change(s)%s\n",
		npts, nreg, json_integer_value(json_object_get(sum, "improvements")), nund, o.tolerance,
		o.tolerance_p99, json_string_value(json_object_get(sum, "how")), o.tail == 1 ? "raw" : "system",
		json_integer_value(json_object_get(sum, "host_exposure_changes")), tail);
	/* a comparison that matched no point decided nothing (its note says why) */
	rc = nreg ? OQB_EXIT_FAIL : nund || (npts && !nmatch) ? OQB_EXIT_INCONCLUSIVE : OQB_EXIT_OK;
done:
	json_decref(doc);
	json_decref(base);
	json_decref(nw);
	return rc;
}
