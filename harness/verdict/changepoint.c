/*
 * changepoint.c - E-Divisive with a t-test, windowed and merged as in
 * Hunter / Otava, with a minimum segment length.  The contract, the
 * algorithm and what tests it are in changepoint.h.
 */
#include "changepoint.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cp_params_default(struct cp_params *p)
{
	p->window = 50;
	p->pvalue = 0.0001;
	p->min_segment = 5;
	p->min_change = 0;
	p->direction = 1;
	p->test = CP_WELCH;
}

/* Continued fraction of the incomplete beta function (modified Lentz). */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 300; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + aa * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + aa / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + aa * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1 + aa / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-15)
			break;
	}
	return h;
}

/* Regularised incomplete beta I_x(a, b), 0 <= x <= 1. */
static double inc_beta(double a, double b, double x)
{
	double lf;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	lf = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lf) * beta_cf(a, b, x) / a;
	return 1 - exp(lf) * beta_cf(b, a, 1 - x) / b;
}

double cp_t_pvalue(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return 0;
	if (t == 0)
		return 1;
	return inc_beta(df / 2, 0.5, df / (df + t * t));
}

static void mean_var(const double *v, size_t n, double *mean, double *var)
{
	double m = 0, s = 0;

	for (size_t i = 0; i < n; i++)
		m += v[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	*mean = m;
	*var = n > 1 ? s / (double)(n - 1) : 0;
}

int cp_ttest(const double *a, size_t na, const double *b, size_t nb, enum cp_test test,
	     double *t, double *p)
{
	double ma, va, mb, vb, se2, df;

	if (na < 1 || nb < 1 || (test == CP_WELCH && (na < 2 || nb < 2)) || na + nb < 3)
		return -1;
	mean_var(a, na, &ma, &va);
	mean_var(b, nb, &mb, &vb);
	if (test == CP_WELCH) {
		double qa = va / (double)na, qb = vb / (double)nb;
		se2 = qa + qb;
		df = se2 * se2 / (qa * qa / (double)(na - 1) + qb * qb / (double)(nb - 1));
	} else {
		df = (double)(na + nb - 2);
		se2 = ((double)(na - 1) * va + (double)(nb - 1) * vb) / df *
		      (1 / (double)na + 1 / (double)nb);
	}
	if (!(se2 > 0)) {
		*t = mb == ma ? 0 : (mb > ma ? INFINITY : -INFINITY);
		*p = mb == ma ? 1 : 0;
		return 0;
	}
	*t = (mb - ma) / sqrt(se2);
	*p = cp_t_pvalue(*t, df);
	return 0;
}

/*
 * One window x[a, b): the 2-D prefix sums of |x_i - x_j| give any block
 * sum in O(1).  P[(i)(w+1) + j] = sum over r < i, c < j.
 */
struct win {
	const double *x;
	size_t a, w;
	double *P;
};

static double block(const struct win *W, size_t r0, size_t r1, size_t c0, size_t c1)
{
	size_t s = W->w + 1;
	r0 -= W->a, r1 -= W->a, c0 -= W->a, c1 -= W->a;
	return W->P[r1 * s + c1] - W->P[r0 * s + c1] - W->P[r1 * s + c0] + W->P[r0 * s + c0];
}

/* The best split of [s, e) with both parts >= L: tau and its Q; 0 or -1 (none). */
static int best_split(const struct win *W, size_t s, size_t e, size_t L, size_t *tau, double *q)
{
	int found = 0;

	for (size_t t = s + L; t + L <= e; t++) {
		double m = (double)(t - s), wx = block(W, s, t, s, t) / 2;
		double ex = m > 1 ? wx / (m * (m - 1) / 2) : 0;
		for (size_t k = t + L; k <= e; k++) {
			double n = (double)(k - t);
			double bxy = block(W, s, t, t, k), wy = block(W, t, k, t, k) / 2;
			double ey = n > 1 ? wy / (n * (n - 1) / 2) : 0;
			double v = m * n / (m + n) * (2 * bxy / (m * n) - ex - ey);
			if (!found || v > *q) {
				*q = v;
				*tau = t;
				found = 1;
			}
		}
	}
	return found ? 0 : -1;
}

/* Insert v into the sorted set pts[0..*n) unless present. */
static void set_add(size_t *pts, size_t *n, size_t v)
{
	size_t i = 0;

	while (i < *n && pts[i] < v)
		i++;
	if (i < *n && pts[i] == v)
		return;
	memmove(pts + i + 1, pts + i, (*n - i) * sizeof *pts);
	pts[i] = v;
	(*n)++;
}

/*
 * E-Divisive inside x[a, b): adds the accepted splits to the global set.
 * Returns the largest index it accepted (0 when none).
 */
static size_t split_window(struct win *W, size_t b, const struct cp_params *p, double plevel,
			   size_t *all, size_t *nall, size_t *loc)
{
	const double *x = W->x;
	size_t a = W->a, nloc = 0, last = 0, w = b - a, s1 = w + 1;

	for (size_t i = 0; i <= w; i++)
		W->P[i] = W->P[i * s1] = 0;
	for (size_t i = 1; i <= w; i++)
		for (size_t j = 1; j <= w; j++)
			W->P[i * s1 + j] = W->P[(i - 1) * s1 + j] + W->P[i * s1 + j - 1] -
					   W->P[(i - 1) * s1 + j - 1] + fabs(x[a + i - 1] - x[a + j - 1]);
	for (;;) {
		size_t best_t = 0, best_s = 0, best_e = 0;
		double best_q = 0;
		int have = 0;

		for (size_t k = 0; k <= nloc; k++) {
			size_t s = k ? loc[k - 1] : a, e = k < nloc ? loc[k] : b, t;
			double q;
			if (e - s < 2 * p->min_segment || best_split(W, s, e, p->min_segment, &t, &q) < 0)
				continue;
			if (!have || q > best_q) {
				best_q = q, best_t = t, best_s = s, best_e = e;
				have = 1;
			}
		}
		if (!have)
			break;
		double tt, pv;
		if (cp_ttest(x + best_s, best_t - best_s, x + best_t, best_e - best_t, p->test, &tt, &pv) < 0 ||
		    !(pv <= plevel))
			break;
		set_add(loc, &nloc, best_t);
		set_add(all, nall, best_t);
		if (best_t > last)
			last = best_t;
	}
	return last;
}

/*
 * Statistics of point i of pts[0..n) against its neighbouring segments;
 * returns 1 when one of them is shorter than min_segment.
 */
static int point_stats(const double *x, size_t nx, const size_t *pts, size_t n, size_t i,
			const struct cp_params *p, struct cp_change *c)
{
	size_t s = i ? pts[i - 1] : 0, t = pts[i], e = i + 1 < n ? pts[i + 1] : nx, d;
	double v;

	memset(c, 0, sizeof *c);
	c->index = t;
	mean_var(x + s, t - s, &c->mean_before, &v);
	mean_var(x + t, e - t, &c->mean_after, &v);
	c->change_pct = c->mean_before != 0 ? (c->mean_after / c->mean_before - 1) * 100 : NAN;
	if (cp_ttest(x + s, t - s, x + t, e - t, p->test, &c->t, &c->p) < 0)
		c->t = 0, c->p = 1;
	d = t - s < e - t ? t - s : e - t;
	c->worse = (c->mean_after > c->mean_before) == (p->direction > 0) &&
		   c->mean_after != c->mean_before;
	return d < p->min_segment;
}

/*
 * The split of x[s, e) with both parts >= L that maximises the between-
 * segment sum of squares m n / (m + n) (mean_X - mean_Y)^2: the least-
 * squares position of a single shift in the mean, which the energy
 * statistic's argmax (chosen for detection, not for placement) misses by
 * a run or two more often.  Ties keep the current position t0.
 */
static size_t refine(const double *x, size_t s, size_t t0, size_t e, size_t L)
{
	double tot = 0, left = 0, best = -1;
	size_t bt = t0;

	for (size_t i = s; i < e; i++)
		tot += x[i];
	for (size_t t = s + 1; t + L <= e; t++) {
		left += x[t - 1];
		if (t < s + L)
			continue;
		double m = (double)(t - s), k = (double)(e - t);
		double d = left / m - (tot - left) / k, v = m * k / (m + k) * d * d;
		if (v > best || (v == best && t == t0))
			best = v, bt = t;
	}
	return bt;
}

int cp_detect(const double *x, size_t n, const struct cp_params *p, struct cp_change **out,
	      size_t *nout, char *err, size_t errlen)
{
	size_t w, *all = NULL, *loc = NULL, nall = 0;
	struct cp_change *cs = NULL;
	struct win W = { .x = x };
	double weak;

	*out = NULL;
	*nout = 0;
	if (!(p->pvalue > 0 && p->pvalue < 1)) {
		snprintf(err, errlen, "pvalue %g is out of range; expected a number in (0, 1), e.g. 0.001",
			 p->pvalue);
		return -1;
	}
	if (p->min_segment < 2) {
		snprintf(err, errlen, "min_segment %zu is too small; expected at least 2 runs", p->min_segment);
		return -1;
	}
	w = p->window ? p->window : n;
	if (w > CP_MAX_WINDOW || (p->window && w < 2 * p->min_segment)) {
		snprintf(err, errlen, "window %zu is out of range; expected 2 x min_segment (%zu) to %d runs%s",
			 w, 2 * p->min_segment, CP_MAX_WINDOW, p->window ? "" : " (window 0 means the whole series)");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i])) {
			snprintf(err, errlen, "value %zu of the series is %g; every value must be a finite number",
				 i, x[i]);
			return -1;
		}
	if (n < 2 * p->min_segment)
		return 0;
	if (w > n)
		w = n;
	/* Otava's first-pass level: 10 x p below 0.05, 2 x p below 0.5. */
	weak = p->pvalue < 0.05 ? 10 * p->pvalue : p->pvalue < 0.5 ? 2 * p->pvalue : p->pvalue;
	all = malloc(n * sizeof *all);
	loc = malloc(n * sizeof *loc);
	W.P = malloc((w + 1) * (w + 1) * sizeof *W.P);
	if (!all || !loc || !W.P)
		goto nomem;

	/* 1. Split: sliding windows, each bisected by E-Divisive. */
	for (size_t start = 0;;) {
		size_t end = start + w < n ? start + w : n, last;
		W.a = start;
		W.w = end - start;
		last = split_window(&W, end, p, weak, all, &nall, loc);
		if (end == n)
			break;
		start = last > start + w / 2 ? last : start + w / 2;
		if (start + 2 * p->min_segment > n)
			break;
	}

	/* 2. Merge: drop the weakest until every point holds. */
	cs = malloc((nall ? nall : 1) * sizeof *cs);
	if (!cs)
		goto nomem;
	while (nall) {
		size_t worst = 0, small = 0, shortw = SIZE_MAX;
		for (size_t i = 0; i < nall; i++) {
			int sh = point_stats(x, n, all, nall, i, p, &cs[i]);
			if (cs[i].p > cs[worst].p)
				worst = i;
			if (fabs(cs[i].change_pct) < fabs(cs[small].change_pct))
				small = i;
			if (sh && (shortw == SIZE_MAX || cs[i].p > cs[shortw].p))
				shortw = i;
		}
		if (shortw != SIZE_MAX) {
			worst = shortw;   /* the weaker of two points too close together */
		} else if (!(cs[worst].p <= p->pvalue)) {
			/* too weak */
		} else if (p->min_change > 0 && !(fabs(cs[small].change_pct) >= p->min_change * 100)) {
			worst = small;
		} else {
			break;
		}
		memmove(all + worst, all + worst + 1, (nall - worst - 1) * sizeof *all);
		nall--;
	}
	/* 3. Place each point where it best splits its segment. */
	for (size_t i = 0; i < nall; i++) {
		all[i] = refine(x, i ? all[i - 1] : 0, all[i], i + 1 < nall ? all[i + 1] : n, p->min_segment);
	}
	for (size_t i = 0; i < nall; i++)
		point_stats(x, n, all, nall, i, p, &cs[i]);
	free(all);
	free(loc);
	free(W.P);
	if (!nall) {
		free(cs);
		return 0;
	}
	*out = cs;
	*nout = nall;
	return 0;
nomem:
	free(all);
	free(loc);
	free(W.P);
	free(cs);
	snprintf(err, errlen, "out of memory for a series of %zu runs (window %zu)", n, w);
	return -1;
}
