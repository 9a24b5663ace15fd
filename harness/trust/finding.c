/*
 * finding.c - the run's result in one sentence (finding.h).
 */
#include "finding.h"
#include "result.h"
#include "hist.h"
#include "rng.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXSYS 16
#define MAXCOND 256

/* One point, reduced to what a resampled median needs: the union of its
 * trials' non-empty counters and each trial's cumulative count over it. */
struct fpt {
	const json_t *p;
	size_t sys, cond;
	int usable;              /* not saturated, samples in the class */
	size_t nt, nu;           /* trials with samples; counters in the union */
	unsigned *idx;           /* [nu] */
	uint64_t *cum;           /* [nt * nu] */
	uint64_t *tn, *tmin, *tmax;
	long *tno;               /* [nt] each trial's number (its round), -1 without */
	double *can;             /* [nt] each trial's canary (ns), NaN without */
	double factor;           /* its canary_regime's factor, 0 without (no split) */
	double median;           /* all trials merged (ns) */
};

/*
 * The rounds of one load that pair the reference's trials (a) with the
 * other system's (b): trials of the same number ran in the same round
 * (run.c runs every point once a round).  A round is kept when its two
 * trials ran in one canary regime (result_regime_same); one whose two
 * sides ran on different floors is left out (off_regime), as is a trial
 * whose round the other side has no trial of (unpaired).  A run.json
 * whose trials have no numbers is not paired: each side's trials count
 * on their own, as before rounds were paired (paired 0).
 */
struct rounds {
	int paired;
	size_t n, off_regime, unpaired;
	size_t *ia, *ib;         /* [n] the kept rounds' trials in a and in b */
};

/* Two numbers of run.json alike: equal, or both missing (NaN). */
static int same_num(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* A trial's (or point's) histogram of class cls of lat (result.h). */
static int class_hist(struct hist *h, const json_t *lat, const char *cls)
{
	char e[256];
	return result_class_hist(h, lat, cls, e, sizeof e);
}

/* The median of trials taken mult[t] times each, merged: what
 * hist_percentile(merged, 50) would read. */
static double pt_median(const struct fpt *f, const unsigned *mult)
{
	uint64_t n = 0, lo = UINT64_MAX, hi = 0;
	for (size_t t = 0; t < f->nt; t++)
		if (mult[t]) {
			n += mult[t] * f->tn[t];
			lo = f->tmin[t] < lo ? f->tmin[t] : lo;
			hi = f->tmax[t] > hi ? f->tmax[t] : hi;
		}
	if (!n)
		return NAN;
	uint64_t k = hist_rank(n, 50);
	if (k == 1)
		return (double)lo;
	if (k == n)
		return (double)hi;
	size_t a = 0, b = f->nu - 1;
	while (a < b) {
		size_t m = (a + b) / 2;
		uint64_t c = 0;
		for (size_t t = 0; t < f->nt; t++)
			c += mult[t] * f->cum[t * f->nu + m];
		if (c >= k)
			b = m;
		else
			a = m + 1;
	}
	uint64_t v = hist_index_mid(f->idx[a]);
	return (double)(v < lo ? lo : v > hi ? hi : v);
}

/* Reads point p's trials of class cls.  0, or -1 (out of memory or a
 * histogram that cannot be read: the point is then not usable). */
static int pt_load(struct fpt *f, const char *cls)
{
	const json_t *trials = result_trials(f->p), *t;
	size_t nt = json_array_size(trials), i, k = 0;
	struct hist **h = calloc(nt ? nt : 1, sizeof *h);
	unsigned char *seen = calloc(HIST_NCOUNTS, 1);
	int rc = -1;

	if (!h || !seen)
		goto out;
	if (!nt) {     /* a run.json from before trials: the point is its one trial */
		char e[256];
		if (result_num(result_lat(f->p, cls), "n") > 0 && (h[0] = hist_new()) &&
		    result_point_hist(h[0], f->p, "lat_ns", cls, e, sizeof e) == 0)
			k = 1;
	}
	json_array_foreach(trials, i, t) {
		const json_t *c = result_lat(t, cls);
		if (!(result_num(c, "n") > 0))
			continue;
		if (!(h[k] = hist_new()))
			goto out;
		if (class_hist(h[k], result_lat(t, NULL), cls) < 0 || !h[k]->n)
			goto out;
		k++;
	}
	f->nt = k;
	for (i = 0; i < k; i++)
		for (unsigned j = 0; j < HIST_NCOUNTS; j++)
			if (h[i]->counts[j] && !seen[j]) {
				seen[j] = 1;
				f->nu++;
			}
	if (!k || !f->nu) {
		rc = 0;
		f->nt = 0;
		goto out;
	}
	f->idx = malloc(f->nu * sizeof *f->idx);
	f->cum = malloc(k * f->nu * sizeof *f->cum);
	f->tn = malloc(k * sizeof *f->tn);
	f->tmin = malloc(k * sizeof *f->tmin);
	f->tmax = malloc(k * sizeof *f->tmax);
	f->tno = malloc(k * sizeof *f->tno);
	f->can = malloc(k * sizeof *f->can);
	if (!f->idx || !f->cum || !f->tn || !f->tmin || !f->tmax || !f->tno || !f->can)
		goto out;
	/* the number and canary of each trial loaded, in the order loaded */
	for (i = 0; i < k; i++) {
		f->tno[i] = -1;
		f->can[i] = NAN;
	}
	size_t at = 0;
	json_array_foreach(trials, i, t) {
		if (!(result_num(result_lat(t, cls), "n") > 0) || at >= k)
			continue;
		f->tno[at] = result_trial_no(t);
		f->can[at++] = result_canary_ns(t);
	}
	double fac = result_regime_factor(f->p);
	f->factor = fac > 0 ? fac : 0;
	for (unsigned j = 0, u = 0; j < HIST_NCOUNTS; j++)
		if (seen[j])
			f->idx[u++] = j;
	for (i = 0; i < k; i++) {
		uint64_t c = 0;
		for (size_t u = 0; u < f->nu; u++) {
			c += h[i]->counts[f->idx[u]];
			f->cum[i * f->nu + u] = c;
		}
		f->tn[i] = h[i]->n;
		f->tmin[i] = h[i]->min;
		f->tmax[i] = h[i]->max;
	}
	unsigned ones[64];
	unsigned *all = k <= 64 ? ones : malloc(k * sizeof *all);
	if (!all)
		goto out;
	for (i = 0; i < k; i++)
		all[i] = 1;
	f->median = pt_median(f, all);
	if (all != ones)
		free(all);
	rc = 0;
out:
	for (i = 0; h && i < (nt ? nt : 1); i++)
		hist_free(h[i]);
	free(h);
	free(seen);
	if (rc < 0)
		f->nt = 0;
	return rc;
}

static void pt_free(struct fpt *f)
{
	free(f->tno);
	free(f->can);
	free(f->idx);
	free(f->cum);
	free(f->tn);
	free(f->tmin);
	free(f->tmax);
}

/* The rounds pairing a's trials with b's (struct rounds).  0, or -1 out
 * of memory. */
static int rounds_of(struct rounds *r, const struct fpt *a, const struct fpt *b)
{
	size_t ta, tb;
	double factor = a->factor > b->factor ? a->factor : b->factor;
	memset(r, 0, sizeof *r);
	for (ta = 0; ta < a->nt; ta++)
		if (a->tno[ta] < 0)
			return 0;
	for (tb = 0; tb < b->nt; tb++)
		if (b->tno[tb] < 0)
			return 0;
	r->paired = 1;
	r->ia = malloc((a->nt ? a->nt : 1) * sizeof *r->ia);
	r->ib = malloc((a->nt ? a->nt : 1) * sizeof *r->ib);
	if (!r->ia || !r->ib)
		return -1;
	for (ta = 0; ta < a->nt; ta++) {
		for (tb = 0; tb < b->nt && b->tno[tb] != a->tno[ta]; tb++)
			;
		if (tb == b->nt)
			r->unpaired++;
		else if (!result_regime_same(a->can[ta], b->can[tb], factor))
			r->off_regime++;
		else {
			r->ia[r->n] = ta;
			r->ib[r->n++] = tb;
		}
	}
	for (tb = 0; tb < b->nt; tb++) {
		for (ta = 0; ta < a->nt && a->tno[ta] != b->tno[tb]; ta++)
			;
		r->unpaired += ta == a->nt;
	}
	return 0;
}

/* How many trials of f a load uses: its kept rounds, or all its trials
 * when unpaired (side 0: the reference's). */
static size_t rounds_used(const struct rounds *r, const struct fpt *f)
{
	return r->paired ? r->n : f->nt;
}

/* The medians of the two sides of a load over the trials it uses, each
 * trial taken mult times (a resample), or once (mult NULL). */
static void rounds_medians(const struct rounds *r, const struct fpt *a, const struct fpt *b, struct rng *rg,
			   double m[2])
{
	unsigned la[64] = { 0 }, lb[64] = { 0 };
	unsigned *ma = a->nt <= 64 ? la : calloc(a->nt, sizeof *ma), *mb = b->nt <= 64 ? lb : calloc(b->nt, sizeof *mb);
	m[0] = m[1] = NAN;
	if (ma && mb) {
		if (r->paired) {
			/* whole rounds, so both sides take the same ones */
			for (size_t k = 0; k < r->n; k++) {
				size_t q = rg ? rng_below(rg, r->n) : k;
				ma[r->ia[q]]++;
				mb[r->ib[q]]++;
			}
		} else {
			for (size_t t = 0; t < a->nt; t++)
				ma[rg ? rng_below(rg, a->nt) : t]++;
			for (size_t t = 0; t < b->nt; t++)
				mb[rg ? rng_below(rg, b->nt) : t]++;
		}
		m[0] = pt_median(a, ma);
		m[1] = pt_median(b, mb);
	}
	if (ma != la)
		free(ma);
	if (mb != lb)
		free(mb);
}

/* A point's condition: its sweep index, offered load and outstanding count. */
static int same_cond(const json_t *a, const json_t *b)
{
	return same_num(result_offered(a), result_offered(b)) && same_num(result_outstanding(a), result_outstanding(b)) &&
	       result_sweep_index(a) == result_sweep_index(b);
}

static json_t *cond_json(const json_t *p)
{
	json_t *c = json_object();
	if (result_offered(p) > 0)
		json_object_set_new(c, "offered_ops", json_real(result_offered(p)));
	if (result_outstanding(p) > 0)
		json_object_set_new(c, "outstanding", json_integer((json_int_t)result_outstanding(p)));
	const json_t *sv = result_sweep_value(p);
	if (sv && !json_is_null(sv))
		json_object_set(c, "sweep", (json_t *)sv);
	return c;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* "3.9" below 10, "12" above. */
static void fmt_x(char *b, size_t n, double v)
{
	snprintf(b, n, v < 10 ? "%.1f" : "%.0f", v);
}

/* Why a check warns about a median, in a few words. */
static const char *check_why(const char *name)
{
	static const struct { const char *n, *why; } t[] = {
		{ "trial_agreement", "the trials' medians disagree by more than trials_p50 allows" },
		{ "schedule_lag", "the client fell behind its send schedule" },
		{ "arrival_fit", "the arrivals did not fit the Poisson law" },
		{ "stationarity", "latency drifted within a trial" },
		{ "interference", "a spinning thread lost its CPU to another process" },
		{ "stalls", "the host stalled the threads" },
		{ "canary_drift", "the machine's floor moved during the run" },
		{ "placement", "threads shared a CPU" },
		{ "saturation", "the point saturated" },
		{ "unsent", "the client could not send every scheduled request" },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(t[i].n, name))
			return t[i].why;
	return "see the point's checks in run.json";
}

/* The caveat: which medians used a check warned about, and why. */
static void caveat(json_t *fd, struct fpt *pts, size_t npts, const unsigned char *used)
{
	const char *names[32];
	size_t cnt[32] = { 0 }, nn = 0, nused = 0, nflag = 0, ncause = 0, i, j;
	char buf[2048];
	size_t o = 0;
	json_t *by = json_object();

	for (i = 0; i < npts; i++) {
		if (!used[i])
			continue;
		nused++;
		const json_t *fb = result_flagged_for(pts[i].p, "p50"), *nm, *row;
		if (json_array_size(fb))
			nflag++;
		json_array_foreach(fb, j, nm) {
			const char *s = json_string_value(nm);
			size_t k;
			for (k = 0; k < nn && strcmp(names[k], s); k++)
				;
			if (k == nn && nn < 32)
				names[nn++] = s;
			if (k < 32)
				cnt[k]++;
		}
		json_array_foreach(result_checks(pts[i].p), j, row)
			if (!strcmp(result_check_name(row) ?: "", "trial_agreement") && result_check_cause(row) &&
			    json_array_size(fb))
				ncause++;
	}
	for (i = 0; i < nn; i++)
		json_object_set_new(by, names[i], json_integer((json_int_t)cnt[i]));
	json_object_set_new(fd, "medians_used", json_integer((json_int_t)nused));
	json_object_set_new(fd, "medians_flagged", json_integer((json_int_t)nflag));
	json_object_set_new(fd, "flagged_by_check", by);
	if (!nused) {
		snprintf(buf, sizeof buf, "no median was compared, so no self-check applies");
	} else if (!nflag) {
		snprintf(buf, sizeof buf, "no self-check warned about the %zu medians used", nused);
	} else {
		o = (size_t)snprintf(buf, sizeof buf, "the self-checks warned about %zu of the %zu medians used: ", nflag, nused);
		for (i = 0; i < nn && o < sizeof buf; i++) {
			o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s at %zu (%s", i ? "; " : "", names[i], cnt[i],
					      check_why(names[i]));
			if (!strcmp(names[i], "trial_agreement") && ncause && o < sizeof buf)
				o += (size_t)snprintf(buf + o, sizeof buf - o, "; at %zu of them the trials ran under "
						      "different canaries: the machine's floor changed between trials", ncause);
			if (o < sizeof buf)
				o += (size_t)snprintf(buf + o, sizeof buf - o, ")");
		}
		if (o < sizeof buf)
			snprintf(buf + o, sizeof buf - o, "; the CI comes from those trials, so it carries their spread");
	}
	json_object_set_new(fd, "caveat", json_string(buf));
}

json_t *finding_of_run(const json_t *run)
{
	const json_t *points = result_points(run), *p;
	size_t np = json_array_size(points), nsys = 0, ncond = 0, i, j;
	const char *sys[MAXSYS];
	const json_t *cond[MAXCOND];
	struct fpt *pts = calloc(np ? np : 1, sizeof *pts);
	unsigned char *used = calloc(np ? np : 1, 1);
	json_t *fd = json_object(), *pairs = json_array();
	const char *cls = "nilext";
	char text[4096];
	struct rounds *rd = NULL;

	if (!pts || !used || !fd || !pairs) {
		free(pts);
		free(used);
		json_decref(fd);
		json_decref(pairs);
		return NULL;
	}
	json_object_set_new(fd, "statistic", json_string("p50"));
	/* the nilext median where every point below saturation has one */
	json_array_foreach(points, i, p)
		if (!result_saturated(p) && result_num(result_lat(p, "all"), "n") > 0 &&
		    !(result_num(result_lat(p, "nilext"), "n") > 0))
			cls = "all";
	json_object_set_new(fd, "class", json_string(cls));
	json_array_foreach(points, i, p) {
		const char *s = result_system(p);
		struct fpt *f = &pts[i];
		f->p = p;
		if (!s)
			continue;
		for (j = 0; j < nsys && strcmp(sys[j], s); j++)
			;
		if (j == nsys && nsys < MAXSYS)
			sys[nsys++] = s;
		f->sys = j;
		for (j = 0; j < ncond && !same_cond(cond[j], p); j++)
			;
		if (j == ncond && ncond < MAXCOND)
			cond[ncond++] = p;
		f->cond = j;
		if (f->sys >= MAXSYS || f->cond >= MAXCOND || result_saturated(p))
			continue;
		pt_load(f, cls);
		f->usable = f->nt > 0 && f->median > 0;
	}
	/* the reference: oq, else the lowest median at the most loads */
	size_t ref = nsys, wins[MAXSYS] = { 0 };
	for (j = 0; j < nsys; j++)
		if (!strcmp(sys[j], "oq"))
			ref = j;
	if (ref == nsys) {
		for (size_t c = 0; c < ncond; c++) {
			size_t best = np;
			for (i = 0; i < np; i++)
				if (pts[i].usable && pts[i].cond == c && (best == np || pts[i].median < pts[best].median))
					best = i;
			if (best < np)
				wins[pts[best].sys]++;
		}
		for (j = 0; j < nsys; j++)
			if (ref == nsys || wins[j] > wins[ref])
				ref = j;
	}
	if (nsys < 2 || ref == nsys) {
		json_object_set_new(fd, "status", json_string("none"));
		snprintf(text, sizeof text, "no finding: the run %s", !np ? "has no points" :
			 "measured one system, so there is nothing to compare it with");
		json_object_set_new(fd, "text", json_string(text));
		json_object_set_new(fd, "pairs", pairs);
		caveat(fd, pts, np, used);
		goto out;
	}
	json_object_set_new(fd, "reference", json_string(sys[ref]));
	json_object_set_new(fd, "reference_rule", json_string(!strcmp(sys[ref], "oq") ? "oq, the system of the paper's claim" :
							  "oq is not in the run: the system whose median is the lowest at the most loads"));
	json_object_set_new(fd, "method", json_string(
		"per load, the ratio of the two points' medians over the rounds in which both sides ran in one canary "
		"regime (a trial's number is its round; each side's trials of those rounds, their histograms merged), "
		"other / reference, at the loads where neither point saturated; over the loads, their geometric mean; "
		"95 % CI: percentile bootstrap over trials paired by round (a load's kept rounds resampled with "
		"replacement, both sides' trials of a round together, merged, the medians read again; fixed seed); "
		"trials without a number are resampled per point"));
	json_object_set_new(fd, "resamples", json_integer(FINDING_RESAMPLES));
	json_object_set_new(fd, "confidence_pct", json_integer(95));

	/* the pairs' loads: where both points are usable */
	size_t pidx[MAXSYS][MAXCOND][2], pn[MAXSYS] = { 0 }, tmin = SIZE_MAX, tmax = 0;
	size_t off_regime[MAXSYS] = { 0 }, unpaired[MAXSYS] = { 0 }, loads_out[MAXSYS] = { 0 };
	int pok[MAXSYS] = { 0 }, nok = 0;
	/* [j * MAXCOND + c]: the rounds of pair j's load c */
	rd = calloc((size_t)MAXSYS * MAXCOND, sizeof *rd);
	if (!rd) {
		json_object_set_new(fd, "status", json_string("none"));
		json_object_set_new(fd, "text", json_string("no finding: out of memory"));
		json_object_set_new(fd, "pairs", pairs);
		goto out;
	}
	for (j = 0; j < nsys; j++) {
		if (j == ref)
			continue;
		size_t ftmin = SIZE_MAX;
		for (size_t c = 0; c < ncond; c++) {
			size_t a = np, b = np;
			for (i = 0; i < np; i++) {
				if (!pts[i].usable || pts[i].cond != c)
					continue;
				if (pts[i].sys == ref)
					a = i;
				else if (pts[i].sys == j)
					b = i;
			}
			if (a == np || b == np)
				continue;
			struct rounds *rr = &rd[j * MAXCOND + pn[j]];
			if (rounds_of(rr, &pts[a], &pts[b]) < 0) {
				free(rr->ia);
				free(rr->ib);
				memset(rr, 0, sizeof *rr);
				continue;
			}
			off_regime[j] += rr->off_regime;
			unpaired[j] += rr->unpaired;
			/* rounds left out leave the load too few to tell: it goes
			 * (a load with one round of one trial each stays, and the
			 * rule below says why it gives no CI) */
			if (rr->paired && rr->n < 2 && (rr->off_regime || rr->unpaired)) {
				loads_out[j]++;
				free(rr->ia);
				free(rr->ib);
				memset(rr, 0, sizeof *rr);
				continue;
			}
			pidx[j][pn[j]][0] = a;
			pidx[j][pn[j]++][1] = b;
			size_t ua = rounds_used(rr, &pts[a]), ub = rounds_used(rr, &pts[b]);
			ftmin = ua < ftmin ? ua : ftmin;
			ftmin = ub < ftmin ? ub : ftmin;
		}
		pok[j] = pn[j] >= 2 && ftmin >= 2;
		nok += pok[j];
		for (size_t c = 0; c < pn[j]; c++)
			for (int s = 0; s < 2; s++) {
				used[pidx[j][c][s]] = 1;
				size_t nt = rounds_used(&rd[j * MAXCOND + c], &pts[pidx[j][c][s]]);
				tmin = nt < tmin ? nt : tmin;
				tmax = nt > tmax ? nt : tmax;
			}
	}
	json_object_set_new(fd, "trials", tmax ? json_pack("{s:I,s:I}", "min", (json_int_t)tmin, "max", (json_int_t)tmax) :
			    json_null());

	/* the bootstrap: one resampled median per point used, shared by the pairs */
	struct rng rg;
	for (j = 0; j < nsys; j++) {
		if (j == ref)
			continue;
		json_t *pr = json_object(), *loads = json_array();
		double lsum = 0;
		int every = 1;
		json_object_set_new(pr, "system", json_string(sys[j]));
		int paired = 0;
		for (size_t c = 0; c < pn[j]; c++) {
			const struct fpt *a = &pts[pidx[j][c][0]], *b = &pts[pidx[j][c][1]];
			const struct rounds *rr = &rd[j * MAXCOND + c];
			double m[2];
			rounds_medians(rr, a, b, NULL, m);
			double r = m[1] / m[0];
			lsum += log(r);
			every &= r > 1;
			json_t *l = cond_json(a->p);
			json_object_set_new(l, "ratio", json_real(r));
			json_object_set_new(l, "reference_p50_ns", json_real(m[0]));
			json_object_set_new(l, "p50_ns", json_real(m[1]));
			json_object_set_new(l, "trials", json_pack("[II]", (json_int_t)rounds_used(rr, a),
								   (json_int_t)rounds_used(rr, b)));
			if (rr->paired) {
				paired = 1;
				json_object_set_new(l, "rounds", json_integer((json_int_t)rr->n));
				json_object_set_new(l, "rounds_left_out", json_integer((json_int_t)rr->off_regime));
				json_object_set_new(l, "trials_unpaired", json_integer((json_int_t)rr->unpaired));
			}
			json_array_append_new(loads, l);
		}
		json_object_set_new(pr, "loads", loads);
		if (pn[j] || loads_out[j])   /* how its loads' trials were paired, when it compared any */
			json_object_set_new(pr, "pairing", json_string(paired || loads_out[j] ? "rounds" : "trials"));
		json_object_set_new(pr, "rounds_left_out", json_integer((json_int_t)off_regime[j]));
		json_object_set_new(pr, "trials_unpaired", json_integer((json_int_t)unpaired[j]));
		json_object_set_new(pr, "loads_left_out", json_integer((json_int_t)loads_out[j]));
		if (!pok[j]) {
			json_object_set_new(pr, "status", json_string("insufficient"));
			if (pn[j] < 2 && loads_out[j])
				snprintf(text, sizeof text, "only %zu load below saturation with 2 rounds whose two sides ran "
					 "on one canary floor; a ratio needs 2 (%zu round(s) left out, their sides on different "
					 "floors, and %zu trial(s) without a partner in their round)", pn[j], off_regime[j],
					 unpaired[j]);
			else if (!pn[j])
				snprintf(text, sizeof text, "no load below saturation where both have samples");
			else
				snprintf(text, sizeof text, pn[j] < 2 ? "only %zu load below saturation where both have "
					 "samples; a ratio needs 2" : "only 1 trial at some of its %zu loads; a CI needs 2 per "
					 "point", pn[j]);
			json_object_set_new(pr, "reason", json_string(text));
			json_array_append_new(pairs, pr);
			continue;
		}
		/* [0]: the pair's geometric mean, [1 + c]: load c's ratio */
		double *bs = malloc((size_t)FINDING_RESAMPLES * (pn[j] + 1) * sizeof *bs);
		if (!bs) {
			json_decref(pr);
			continue;
		}
		/* same seed per pair: a pair's CI does not depend on the others */
		rng_seed(&rg, 0x66696e64696e67ull /* "finding" */ + j);
		size_t nb = 0;
		for (size_t k = 0; k < FINDING_RESAMPLES; k++) {
			double s = 0;
			int bad = 0;
			for (size_t c = 0; c < pn[j]; c++) {
				double m[2];
				rounds_medians(&rd[j * MAXCOND + c], &pts[pidx[j][c][0]], &pts[pidx[j][c][1]], &rg, m);
				if (!(m[0] > 0) || !(m[1] > 0)) {
					bad = 1;
					break;
				}
				bs[(c + 1) * FINDING_RESAMPLES + nb] = m[1] / m[0];
				s += log(m[1] / m[0]);
			}
			if (bad)
				continue;
			bs[nb++] = exp(s / (double)pn[j]);
		}
		double ratio = exp(lsum / (double)pn[j]);
		json_object_set_new(pr, "status", json_string(nb ? "ok" : "insufficient"));
		json_object_set_new(pr, "ratio", json_real(ratio));
		json_object_set_new(pr, "lower_at_every_load", json_boolean(every));
		if (nb) {
			size_t lo = nb / 40, hi = nb - 1 - nb / 40;
			for (size_t c = 0; c <= pn[j]; c++) {
				double *v = bs + c * FINDING_RESAMPLES;
				qsort(v, nb, sizeof *v, cmp_dbl);
				json_t *ci = json_pack("[ff]", v[lo], v[hi]);
				if (!c)
					json_object_set_new(pr, "ci95", ci);
				else
					json_object_set_new(json_array_get(loads, c - 1), "ci95", ci);
			}
		}
		free(bs);
		json_array_append_new(pairs, pr);
	}
	json_object_set_new(fd, "pairs", pairs);
	nok = 0;
	json_array_foreach(pairs, i, p)
		nok += !strcmp(result_pair_status(p) ?: "", "ok");

	/* the sentence: the pairs with a ratio, then why the others have none */
	size_t o = 0, same = SIZE_MAX;
	int mixed = 0, first = 1;
	json_t *pr;
	json_array_foreach(pairs, i, pr) {
		if (strcmp(result_pair_status(pr) ?: "", "ok"))
			continue;
		size_t n = result_pair_nloads(pr);
		mixed |= same != SIZE_MAX && same != n;
		same = n;
	}
	if (!nok)
		o = (size_t)snprintf(text, sizeof text, "no finding with a number");
	else if (!mixed)
		o = (size_t)snprintf(text, sizeof text, "below saturation (%zu loads), ", same);
	if (nok)
		o += (size_t)snprintf(text + o, sizeof text - o, "%s's %s median", sys[ref],
				      !strcmp(cls, "nilext") ? "nilext" : "request");
	json_array_foreach(pairs, i, pr) {
		const char *other = result_pair_system(pr);
		double r = result_pair_ratio(pr), l, h;
		if (o >= sizeof text || strcmp(result_pair_status(pr) ?: "", "ok") || result_pair_ci(pr, &l, &h) < 0)
			continue;
		char rs[32], ls[32], hs[32];
		int lower = r >= 1;
		fmt_x(rs, sizeof rs, lower ? r : 1 / r);
		fmt_x(ls, sizeof ls, lower ? l : 1 / h);
		fmt_x(hs, sizeof hs, lower ? h : 1 / l);
		o += (size_t)snprintf(text + o, sizeof text - o, "%s %sx %s than %s's", first ? " is" : " and", rs,
				      lower ? "lower" : "higher", other);
		if (mixed && o < sizeof text)
			o += (size_t)snprintf(text + o, sizeof text - o, " over %zu loads below saturation",
					      result_pair_nloads(pr));
		double left = result_pair_left_out(pr);
		char lo[128] = "";
		if (left > 0)
			snprintf(lo, sizeof lo, "; %.0f round(s) left out, their two sides on different canary floors", left);
		if (o < sizeof text)
			o += (size_t)snprintf(text + o, sizeof text - o, " (95 %% CI %s-%s%s%s)", ls, hs,
					      l <= 1 && h >= 1 ? ": the trials do not tell them apart" : "", lo);
		first = 0;
	}
	json_array_foreach(pairs, i, pr) {
		if (o >= sizeof text || !strcmp(result_pair_status(pr) ?: "", "ok"))
			continue;
		const char *why = result_pair_reason(pr);
		o += (size_t)snprintf(text + o, sizeof text - o, "; %s against %s: %s", sys[ref], result_pair_system(pr),
				      why ? why : "no resample held samples");
	}
	json_object_set_new(fd, "status", json_string(nok ? "ok" : "insufficient"));
	json_object_set_new(fd, "text", json_string(text));
	caveat(fd, pts, np, used);
out:
	for (i = 0; rd && i < (size_t)MAXSYS * MAXCOND; i++) {
		free(rd[i].ia);
		free(rd[i].ib);
	}
	free(rd);
	for (i = 0; i < np; i++)
		pt_free(&pts[i]);
	free(pts);
	free(used);
	return fd;
}

json_t *finding_of(const json_t *run)
{
	const json_t *f = result_finding(run);
	return f && result_finding_status(f) ? json_incref((json_t *)f) : finding_of_run(run);
}

json_t *finding_compare(const json_t *base, const json_t *nw)
{
	json_t *fb = finding_of(base), *fn = finding_of(nw);
	json_t *out = json_object(), *pairs = json_array();
	const json_t *pb;
	size_t i, nmoved = 0;
	char text[1024];
	size_t o = 0;
	const char *rb = result_finding_reference(fb);
	const char *rn = result_finding_reference(fn);

	json_object_set_new(out, "base", json_string(result_finding_text(fb, NULL) ?: "none"));
	json_object_set_new(out, "new", json_string(result_finding_text(fn, NULL) ?: "none"));
	text[0] = '\0';
	if (rb && rn && !strcmp(rb, rn))
		json_array_foreach(result_finding_pairs(fb), i, pb) {
			const char *sys = result_pair_system(pb);
			const json_t *pn = result_finding_pair(fn, sys);
			double bl, bh, nl, nh;
			if (!sys || !pn || result_pair_ci(pb, &bl, &bh) < 0 || result_pair_ci(pn, &nl, &nh) < 0)
				continue;
			double br = result_pair_ratio(pb), nr = result_pair_ratio(pn);
			/* apart when the two 95 % CIs do not overlap: a conservative
			 * test (two overlapping CIs can still differ), stated as such */
			int apart = bh < nl || nh < bl;
			nmoved += apart;
			json_array_append_new(pairs, json_pack("{s:s,s:f,s:[ff],s:f,s:[ff],s:s}", "system", sys,
							       "base_ratio", br, "base_ci95", bl, bh, "new_ratio", nr,
							       "new_ci95", nl, nh, "verdict", apart ? "moved" : "same"));
			if (o < sizeof text)
				o += (size_t)snprintf(text + o, sizeof text - o, "%s%s/%s %.2f (%.2f-%.2f) -> %.2f (%.2f-%.2f)%s",
						      o ? "; " : "", sys, rb, br, bl, bh, nr, nl, nh,
						      apart ? ": moved, the CIs do not overlap" : ": within each other's CI");
		}
	json_object_set_new(out, "pairs", pairs);
	json_object_set_new(out, "moved", json_integer((json_int_t)nmoved));
	if (!json_array_size(pairs))
		snprintf(text, sizeof text, "the two findings cannot be set side by side (%s)",
			 !rb || !rn ? "one run has no finding with a number" : strcmp(rb, rn) ?
			 "they name different reference systems" : "no system has a CI in both");
	json_object_set_new(out, "text", json_string(text));
	json_object_set_new(out, "how", json_string("each other system's median over the reference's, as each run's "
						    "finding gives it; moved when the two 95 % CIs do not overlap"));
	json_decref(fb);
	json_decref(fn);
	return out;
}
