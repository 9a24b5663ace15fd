/*
 * stattest.c - Mann-Whitney U (exact and normal, Hodges-Lehmann shift),
 * two-sample Kolmogorov-Smirnov (exact lattice paths and asymptotic),
 * Anderson-Darling against a known exponential, Holm and
 * Benjamini-Hochberg adjustments, Mann-Kendall trend.
 *
 * Contracts, sources and bounds are in stattest.h; the numbers are checked
 * against scipy in tests/unit/test_stattest.c.  Every exact distribution
 * here is computed with probabilities (terms in [0, 1] that only get added
 * and multiplied by factors in [0, 1]), never with path counts, so nothing
 * overflows and small p-values keep their relative precision.
 */
#include "stattest.h"
#include "rng.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* Two-sided normal p-value of z: 2 (1 - Phi(|z|)), capped at 1. */
static double normal_p2(double z)
{
	double p = erfc(fabs(z) / M_SQRT2);

	return p > 1 ? 1 : p;
}

/*
 * A sorted copy of x[0..n), or NULL with err when n is 0, a value is not
 * finite, or malloc fails.  fn and name say which call and which argument
 * the message is about.
 */
static double *sorted_copy(const char *fn, const char *name, const double *x, size_t n,
			   char *err, size_t errlen)
{
	if (n == 0) {
		snprintf(err, errlen, "%s: sample %s is empty; pass at least one value", fn, name);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i])) {
			snprintf(err, errlen, "%s: %s[%zu] is %g; every value must be a finite number (drop failed trials before testing)",
				 fn, name, i, x[i]);
			return NULL;
		}
	}
	double *c = malloc(n * sizeof *c);
	if (!c) {
		snprintf(err, errlen, "%s: out of memory for %zu values of %s", fn, n, name);
		return NULL;
	}
	memcpy(c, x, n * sizeof *c);
	qsort(c, n, sizeof *c, cmp_double);
	return c;
}

/* Sorted copies of both samples (sorted_copy's checks); -1 with err, nothing allocated, on failure. */
static int sorted_pair(const char *fn, const double *a, size_t na, const double *b, size_t nb,
		       double **sa, double **sb, char *err, size_t errlen)
{
	*sa = sorted_copy(fn, "a", a, na, err, errlen);
	*sb = *sa ? sorted_copy(fn, "b", b, nb, err, errlen) : NULL;
	if (*sb)
		return 0;
	free(*sa);
	*sa = NULL;
	return -1;
}

/*
 * Moves *i and *j past the next group of equal values of the sorted
 * samples sa and sb taken together; how many of each it held in *ta, *tb.
 */
static void next_tie_group(const double *sa, size_t na, size_t *i, const double *sb, size_t nb, size_t *j,
			   size_t *ta, size_t *tb)
{
	double v = *j >= nb || (*i < na && sa[*i] <= sb[*j]) ? sa[*i] : sb[*j];
	size_t i0 = *i, j0 = *j;

	while (*i < na && sa[*i] == v)
		(*i)++;
	while (*j < nb && sb[*j] == v)
		(*j)++;
	*ta = *i - i0;
	*tb = *j - j0;
}

/* ---- Mann-Whitney U ------------------------------------------------ */

/*
 * P(U <= k) for U of m a-values against n b-values, no ties.  P(i, j, u)
 * follows from which sample holds the largest of i + j values: an a (with
 * probability i / (i + j)) beats all j b-values, so
 *   P(i, j, u) = i/(i+j) P(i-1, j, u-j) + j/(i+j) P(i, j-1, u),
 * with P(0, j, 0) = P(i, 0, 0) = 1.  Only u <= k is needed.  Rows for
 * i - 1 and i, each (n + 1) x (k + 1).  -1 when memory runs out.
 */
static int mwu_exact_cdf(unsigned m, unsigned n, unsigned k, double *cdf)
{
	size_t w = (size_t)k + 1;
	double *prev = calloc((size_t)(n + 1) * w, sizeof *prev);
	double *cur = calloc((size_t)(n + 1) * w, sizeof *cur);

	if (!prev || !cur) {
		free(prev);
		free(cur);
		return -1;
	}
	for (unsigned j = 0; j <= n; j++)
		prev[j * w] = 1;                       /* i = 0: U = 0 */
	for (unsigned i = 1; i <= m; i++) {
		memset(cur, 0, w * sizeof *cur);
		cur[0] = 1;                            /* j = 0: U = 0 */
		for (unsigned j = 1; j <= n; j++) {
			double pa = (double)i / (i + j), pb = (double)j / (i + j);
			double *c = cur + j * w;
			const double *left = cur + (j - 1) * w, *up = prev + j * w;
			for (size_t u = 0; u < w; u++)
				c[u] = pb * left[u] + (u >= j ? pa * up[u - j] : 0);
		}
		double *t = prev;
		prev = cur;
		cur = t;
	}
	double s = 0;
	for (size_t u = 0; u < w; u++)
		s += prev[n * w + u];
	free(prev);
	free(cur);
	*cdf = s;
	return 0;
}

/*
 * The k-th smallest (0-based) of the differences b[j] - a[i], a and b
 * sorted.  Randomised selection keeping, per row i, the candidate columns
 * [lo[i], hi[i]): those whose difference lies strictly between the values
 * already known to be too small and too large.  Row i's differences grow
 * with j, and the first column reaching a given value moves right as i
 * grows (a[i] grows), so counting the differences below a pivot is one
 * O(na + nb) two-pointer pass.  The invariant #{d <= low} <= k < #{d <
 * high} keeps the answer among the candidates, and every round removes
 * the pivot, so the loop ends; expected O(log(na nb)) rounds.
 */
static double kth_difference(const double *a, size_t na, const double *b, size_t nb,
			     uint64_t k, size_t *lo, size_t *hi, struct rng *rng)
{
	for (size_t i = 0; i < na; i++) {
		lo[i] = 0;
		hi[i] = nb;
	}
	for (;;) {
		uint64_t cand = 0;
		for (size_t i = 0; i < na; i++)
			cand += hi[i] > lo[i] ? hi[i] - lo[i] : 0;
		uint64_t r = rng_below(rng, cand);
		size_t row = 0;
		while (hi[row] <= lo[row] || r >= hi[row] - lo[row]) {
			r -= hi[row] > lo[row] ? hi[row] - lo[row] : 0;
			row++;
		}
		double pivot = b[lo[row] + r] - a[row];

		/* below: #{d < pivot}, upto: #{d <= pivot}. */
		uint64_t below = 0, upto = 0;
		size_t jl = 0, ju = 0;
		for (size_t i = 0; i < na; i++) {
			while (jl < nb && b[jl] - a[i] < pivot)
				jl++;
			while (ju < nb && b[ju] - a[i] <= pivot)
				ju++;
			below += jl;
			upto += ju;
		}
		if (k >= below && k < upto)
			return pivot;
		int go_left = k < below;
		size_t j = 0;
		for (size_t i = 0; i < na; i++) {
			if (go_left) {          /* drop d >= pivot */
				while (j < nb && b[j] - a[i] < pivot)
					j++;
				if (j < hi[i])
					hi[i] = j;
			} else {                /* drop d <= pivot */
				while (j < nb && b[j] - a[i] <= pivot)
					j++;
				if (j > lo[i])
					lo[i] = j;
			}
		}
	}
}

/* Median of b[j] - a[i] over all pairs (a, b sorted); -1 when memory runs out. */
static int hodges_lehmann(const double *a, size_t na, const double *b, size_t nb, double *shift)
{
	size_t *lo = malloc(na * sizeof *lo), *hi = malloc(na * sizeof *hi);
	struct rng rng;

	if (!lo || !hi) {
		free(lo);
		free(hi);
		return -1;
	}
	rng_seed(&rng, 0x4c48ull ^ ((uint64_t)na << 32) ^ nb);   /* any seed gives the same answer */
	uint64_t K = (uint64_t)na * nb;
	double hi_mid = kth_difference(a, na, b, nb, K / 2, lo, hi, &rng);
	if (K % 2 == 0)
		hi_mid = (kth_difference(a, na, b, nb, K / 2 - 1, lo, hi, &rng) + hi_mid) / 2;
	*shift = hi_mid;
	free(lo);
	free(hi);
	return 0;
}

int mwu_test(const double *a, size_t na, const double *b, size_t nb, struct mwu_result *r,
	     char *err, size_t errlen)
{
	double *sa = NULL, *sb = NULL;
	int ret = -1;

	memset(r, 0, sizeof *r);
	r->p = 1;
	if (sorted_pair("mwu_test", a, na, b, nb, &sa, &sb, err, errlen))
		goto out;

	/* Mid-ranks by merging the sorted samples, one group of equal values at a time. */
	double ra = 0, ties = 0, pos = 0;
	size_t i = 0, j = 0;
	while (i < na || j < nb) {
		size_t ta, tb;
		next_tie_group(sa, na, &i, sb, nb, &j, &ta, &tb);
		double t = (double)(ta + tb);
		ra += (double)ta * (pos + (t + 1) / 2);
		ties += t * t * t - t;
		pos += t;
	}
	double mn = (double)na * (double)nb, N = (double)(na + nb);
	r->u = ra - (double)na * ((double)na + 1) / 2;

	if (ties == 0 && na <= MWU_EXACT_MAX && nb <= MWU_EXACT_MAX) {
		double lower = fmin(r->u, mn - r->u), cdf;
		if (mwu_exact_cdf((unsigned)na, (unsigned)nb, (unsigned)floor(lower + 0.5), &cdf)) {
			snprintf(err, errlen, "mwu_test: out of memory for the exact distribution (%zu x %zu)", na, nb);
			goto out;
		}
		r->p = fmin(1, 2 * cdf);
		r->exact = 1;
	} else {
		double var = mn / 12 * ((N + 1) - ties / (N * (N - 1)));
		double dev = r->u - mn / 2;
		if (var > 0 && fabs(dev) > 0.5)
			r->z = (dev - copysign(0.5, dev)) / sqrt(var);
		r->p = normal_p2(r->z);
	}
	if (hodges_lehmann(sa, na, sb, nb, &r->shift)) {
		snprintf(err, errlen, "mwu_test: out of memory for the Hodges-Lehmann shift (%zu values)", na);
		goto out;
	}
	ret = 0;
out:
	free(sa);
	free(sb);
	return ret;
}

/* C(2k, k), exact to rounding: the ways to split 2k values into k and k. */
static double central_binom(size_t k)
{
	double c = 1;
	for (size_t q = 1; q <= k; q++)
		c = c * (double)(k + q) / (double)q;
	return c;
}

/* Smallest two-sided p that mwu_test can return for n vs n values. */
static double mwu_smallest_p(unsigned n)
{
	if (n <= MWU_EXACT_MAX)
		return fmin(1, 2 / central_binom(n));
	double mn = (double)n * n, N = 2.0 * n;
	double z = (mn / 2 - 0.5) / sqrt(mn / 12 * (N + 1));
	return normal_p2(z);
}

unsigned mwu_min_n(double alpha)
{
	if (!(alpha > 0 && alpha < 1))
		return 0;
	for (unsigned n = 1; n < 1000000; n++)
		if (mwu_smallest_p(n) < alpha)
			return n;
	return 0;
}

/* ---- van Elteren, stratified ----------------------------------------- */

struct stratum {
	size_t k;          /* pairs */
	double *r;         /* 2k mid-ranks, a's first */
	double *vals;      /* every relabelling's value (exact), or NULL */
	size_t nvals;
};

/* Mid-ranks of v[0..m) into r (1-based; ties share their mean rank): a
 * value with `below` values under it and `eq` equal to it (itself
 * included) has rank below + (eq + 1) / 2.  Quadratic, and strata are a
 * handful of rounds. */
static void midranks(const double *v, size_t m, double *r)
{
	for (size_t i = 0; i < m; i++) {
		size_t below = 0, eq = 0;
		for (size_t j = 0; j < m; j++) {
			below += v[j] < v[i];
			eq += v[j] == v[i];
		}
		r[i] = (double)below + (double)(eq + 1) / 2;
	}
}

/* Every split of the stratum's 2k ranks into k (for b) and k: its value
 * (k <= 15, so the 2k positions fit a 32-bit mask). */
static int stratum_enumerate(struct stratum *st)
{
	unsigned N = (unsigned)(2 * st->k), k = (unsigned)st->k;
	st->vals = malloc((size_t)(central_binom(k) + 0.5) * sizeof *st->vals);
	if (!st->vals)
		return -1;
	st->nvals = 0;
	uint32_t mask = (1u << k) - 1, end = 1u << N;
	while (mask < end) {
		double w = 0;
		for (unsigned q = 0; q < N; q++)
			if (mask >> q & 1)
				w += st->r[q];
		st->vals[st->nvals++] = w / (N + 1);
		/* Gosper: the next mask with k bits set */
		uint32_t lo = mask & -mask, hi = mask + lo;
		mask = (((hi ^ mask) >> 2) / lo) | hi;
	}
	return 0;
}

static size_t strat_count(const struct stratum *st, unsigned s, unsigned ns, double sum, double e, double d)
{
	if (s == ns)
		return fabs(sum - e) >= d;
	size_t c = 0;
	for (size_t i = 0; i < st[s].nvals; i++)
		c += strat_count(st, s + 1, ns, sum + st[s].vals[i], e, d);
	return c;
}

int strat_rank_test(const double *a, const double *b, const unsigned *stratum, size_t n, double *p,
		    unsigned *nstrata, char *err, size_t errlen)
{
	if (!n) {
		snprintf(err, errlen, "strat_rank_test: no pairs to test; give at least one base/new pair");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!isfinite(a[i]) || !isfinite(b[i])) {
			snprintf(err, errlen, "strat_rank_test: pair %zu is not finite (%g, %g); every value must be a "
				 "finite number (drop failed trials before testing)", i, a[i], b[i]);
			return -1;
		}
	unsigned *ids = malloc(n * sizeof *ids);
	struct stratum *st = calloc(n, sizeof *st);
	double *v = malloc(2 * n * sizeof *v);
	int rc = -1;
	unsigned ns = 0;
	if (!ids || !st || !v)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		unsigned s = 0;
		while (s < ns && ids[s] != stratum[i])
			s++;
		if (s == ns)
			ids[ns++] = stratum[i];
		st[s].k++;
	}
	double e = 0, t = 0, relabel = 1;
	int exact = 1;
	for (unsigned s = 0; s < ns; s++) {
		size_t k = st[s].k, m = 0;
		for (size_t i = 0; i < n; i++)
			if (stratum[i] == ids[s])
				v[m++] = a[i];
		for (size_t i = 0; i < n; i++)
			if (stratum[i] == ids[s])
				v[m++] = b[i];
		st[s].r = malloc(2 * k * sizeof *st[s].r);
		if (!st[s].r)
			goto oom;
		midranks(v, 2 * k, st[s].r);
		double w = 0;
		for (size_t q = k; q < 2 * k; q++)
			w += st[s].r[q];
		t += w / (double)(2 * k + 1);
		e += (double)k / 2;
		relabel *= central_binom(k);
		if (k > 15)
			exact = 0;
	}
	if (relabel > STRAT_EXACT_MAX)
		exact = 0;
	double d = fabs(t - e) - 1e-9 * fmax(1, fabs(t));
	if (exact) {
		for (unsigned s = 0; s < ns; s++)
			if (stratum_enumerate(&st[s]) != 0)
				goto oom;
		*p = (double)strat_count(st, 0, ns, 0, e, d) / relabel;
	} else {
		struct rng g;
		rng_seed(&g, 0x5eed5a17u);
		size_t hits = 0, maxk = 0;
		for (unsigned s = 0; s < ns; s++)
			if (st[s].k > maxk)
				maxk = st[s].k;
		size_t *perm = malloc(2 * maxk * sizeof *perm);
		if (!perm)
			goto oom;
		for (unsigned dr = 0; dr < STRAT_MC_DRAWS; dr++) {
			double sum = 0;
			for (unsigned s = 0; s < ns; s++) {
				size_t N = 2 * st[s].k;
				for (size_t q = 0; q < N; q++)
					perm[q] = q;
				double w = 0;
				for (size_t q = 0; q < st[s].k; q++) {   /* partial Fisher-Yates */
					size_t j = q + (size_t)rng_below(&g, N - q);
					size_t tmp = perm[q];
					perm[q] = perm[j];
					perm[j] = tmp;
					w += st[s].r[perm[q]];
				}
				sum += w / (double)(N + 1);
			}
			hits += fabs(sum - e) >= d;
		}
		free(perm);
		*p = (double)(hits + 1) / (STRAT_MC_DRAWS + 1);
	}
	if (*p > 1)
		*p = 1;
	if (nstrata)
		*nstrata = ns;
	rc = 0;
oom:
	if (rc)
		snprintf(err, errlen, "strat_rank_test: out of memory for %zu pairs; free memory and run again", n);
	if (st)
		for (unsigned s = 0; s < ns; s++) {
			free(st[s].r);
			free(st[s].vals);
		}
	free(st);
	free(ids);
	free(v);
	return rc;
}

/* ---- Kolmogorov-Smirnov -------------------------------------------- */

/*
 * P(D >= dnum / (m n)) for m and n continuous values under the null: a
 * random monotone lattice path from (0, 0) to (m, n) (all C(m+n, m)
 * equally likely) leaves the band |i n - j m| < dnum.  w[j] is the
 * probability of reaching (i, j) without having left; the mass flowing
 * into a point outside the band is added to the answer and stops there.
 * From (i, j) the next value is an a with probability (m - i) / (m + n -
 * i - j).  One array of n + 1, updated row by row in place.
 */
static double ks_exact_p(size_t m, size_t n, int64_t dnum, double *w)
{
	double out = 0;

	if (dnum <= 0)
		return 1;
	for (size_t i = 0; i <= m; i++) {
		for (size_t j = 0; j <= n; j++) {
			double in;
			if (i == 0 && j == 0) {
				w[0] = 1;
				continue;
			}
			in = 0;
			if (i > 0)    /* a-step from (i-1, j): w[j] still holds row i-1 */
				in += w[j] * (double)(m - i + 1) / (double)(m + n - i + 1 - j);
			if (j > 0)    /* b-step from (i, j-1): w[j-1] already holds row i */
				in += w[j - 1] * (double)(n - j + 1) / (double)(m + n - i - j + 1);
			int64_t gap = (int64_t)i * (int64_t)n - (int64_t)j * (int64_t)m;
			if (gap >= dnum || -gap >= dnum) {
				out += in;
				w[j] = 0;
			} else {
				w[j] = in;
			}
		}
	}
	return out > 1 ? 1 : out;
}

/*
 * Upper tail of the Kolmogorov distribution, Q(x) = P(K > x) =
 * 2 sum_{k>=1} (-1)^(k-1) exp(-2 k^2 x^2); below x = 1.18 that series
 * converges slowly, so use the equivalent theta form 1 - sqrt(2 pi) / x
 * sum_{k>=1} exp(-(2k-1)^2 pi^2 / (8 x^2)) there.  Both to 1e-16 in a
 * handful of terms.
 */
static double kolmogorov_q(double x)
{
	double s = 0;

	if (!(x > 0))
		return 1;
	if (x < 1.18) {
		double t = -M_PI * M_PI / (8 * x * x);
		for (int k = 1; k < 20; k++) {
			double term = exp((2.0 * k - 1) * (2.0 * k - 1) * t);
			s += term;
			if (term <= 1e-17 * s)
				break;
		}
		s = 1 - sqrt(2 * M_PI) / x * s;
	} else {
		double sign = 1;
		for (int k = 1; k < 100; k++) {
			double term = exp(-2.0 * k * k * x * x);
			s += sign * term;
			sign = -sign;
			if (term <= 1e-17 * s)
				break;
		}
		s *= 2;
	}
	return s < 0 ? 0 : s > 1 ? 1 : s;
}

int ks2_test(const double *a, size_t na, const double *b, size_t nb, double *d, double *p,
	     char *err, size_t errlen)
{
	double *sa = NULL, *sb = NULL, *w = NULL;
	int ret = -1;

	*d = 0;
	*p = 1;
	if (sorted_pair("ks2_test", a, na, b, nb, &sa, &sb, err, errlen))
		goto out;
	if (na > INT32_MAX || nb > INT32_MAX) {
		snprintf(err, errlen, "ks2_test: samples of %zu and %zu values; at most 2^31 - 1 each", na, nb);
		goto out;
	}

	/* D in units of 1 / (na nb): |i nb - j na| after each group of equal values. */
	int64_t dnum = 0;
	size_t i = 0, j = 0;
	while (i < na || j < nb) {
		size_t ta, tb;
		next_tie_group(sa, na, &i, sb, nb, &j, &ta, &tb);
		int64_t gap = (int64_t)i * (int64_t)nb - (int64_t)j * (int64_t)na;
		if (gap < 0)
			gap = -gap;
		if (gap > dnum)
			dnum = gap;
	}
	double mn = (double)na * (double)nb;
	*d = (double)dnum / mn;

	if (mn <= KS_EXACT_MAX_CELLS) {
		w = malloc((nb + 1) * sizeof *w);
		if (!w) {
			snprintf(err, errlen, "ks2_test: out of memory for the exact distribution");
			goto out;
		}
		*p = ks_exact_p(na, nb, dnum, w);
	} else {
		double en = mn / (double)(na + nb), se = sqrt(en);
		*p = kolmogorov_q((se + 0.12 + 0.11 / se) * *d);
	}
	ret = 0;
out:
	free(sa);
	free(sb);
	free(w);
	return ret;
}

/* ---- Anderson-Darling, exponential with a known mean --------------- */

/*
 * Marsaglia & Marsaglia (2004): adinf(z), their quick approximation of
 * the limiting CDF P(A^2 < z), and errfix(n, x), the finite-n correction
 * added to x = adinf(z).  The coefficients are the paper's.  ad_upper
 * returns 1 - adinf(z) without cancellation for large z.
 */
static double ad_adinf(double z)
{
	if (!(z > 0))
		return 0;
	if (z < 2)
		return exp(-1.2337141 / z) / sqrt(z) *
		       (2.00012 + (.247105 - (.0649821 - (.0347962 - (.0116720 - .00168691 * z) * z) * z) * z) * z);
	return exp(-exp(1.0776 - (2.30695 - (.43424 - (.082433 - (.008056 - .0003146 * z) * z) * z) * z) * z));
}

static double ad_upper(double z)
{
	if (z < 2)
		return 1 - ad_adinf(z);
	return -expm1(-exp(1.0776 - (2.30695 - (.43424 - (.082433 - (.008056 - .0003146 * z) * z) * z) * z) * z));
}

static double ad_errfix(double n, double x)
{
	double c = .01265 + .1757 / n, t;

	if (x < c) {
		double v = x / c;
		t = sqrt(v) * (1 - v) * (49 * v - 102);
		return t * (.0037 / (n * n * n) + .00078 / (n * n) + .00006 / n);
	}
	if (x < .8) {
		double v = (x - c) / (.8 - c);
		t = -.00022633 + (6.54034 - (14.6538 - (14.458 - (8.259 - 1.91864 * v) * v) * v) * v) * v;
		return t * (.04213 / n + .01365 / (n * n));
	}
	t = -130.2137 + (745.2337 - (1705.091 - (1950.646 - (1116.360 - 255.7844 * x) * x) * x) * x) * x;
	return t / n;
}

int ad_exp_test(const double *x, size_t n, double mean, double *a2, double *p,
		char *err, size_t errlen)
{
	*a2 = 0;
	*p = 1;
	if (!(mean > 0) || !isfinite(mean)) {
		snprintf(err, errlen, "ad_exp_test: mean %g must be a positive finite number (the configured mean inter-arrival time)",
			 mean);
		return -1;
	}
	double *s = sorted_copy("ad_exp_test", "x", x, n, err, errlen);
	if (!s)
		return -1;
	if (s[0] <= 0) {
		/* F(x) = 0 at or below 0: ln F = -inf, the fit is impossible. */
		*a2 = INFINITY;
		*p = 0;
		free(s);
		return 0;
	}
	double sum = 0, dn = (double)n;
	for (size_t i = 0; i < n; i++) {
		double ln_f = log(-expm1(-s[i] / mean));          /* ln F(x_(i+1)) */
		double ln_sf = -s[n - 1 - i] / mean;               /* ln(1 - F(x_(n-i))) */
		sum += (2.0 * (double)i + 1) * (ln_f + ln_sf);
	}
	free(s);
	*a2 = -dn - sum / dn;
	double cdf = ad_adinf(*a2);
	double q = ad_upper(*a2) - ad_errfix(dn, cdf);
	*p = q < 0 ? 0 : q > 1 ? 1 : q;
	return 0;
}

/* ---- multiple comparisons ------------------------------------------ */

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *x, const void *y)
{
	const struct pidx *a = x, *b = y;

	if (a->p != b->p)
		return (a->p > b->p) - (a->p < b->p);
	return (a->i > b->i) - (a->i < b->i);
}

/* p sorted ascending with their positions (NaN as 1); NULL (adj all 1) when memory runs out. */
static struct pidx *sort_p(const double *p, size_t m, double *adj)
{
	struct pidx *s = malloc(m * sizeof *s);

	if (!s) {
		for (size_t i = 0; i < m; i++)
			adj[i] = 1;
		return NULL;
	}
	for (size_t i = 0; i < m; i++) {
		s[i].p = isnan(p[i]) ? 1 : p[i];
		s[i].i = i;
	}
	qsort(s, m, sizeof *s, cmp_pidx);
	return s;
}

void holm_adjust(const double *p, size_t m, double *adj)
{
	struct pidx *s;
	double run = 0;

	if (m == 0 || !(s = sort_p(p, m, adj)))
		return;
	for (size_t k = 0; k < m; k++) {
		double v = fmin(1, (double)(m - k) * s[k].p);
		if (v > run)
			run = v;
		adj[s[k].i] = run;
	}
	free(s);
}

void bh_adjust(const double *p, size_t m, double *adj)
{
	struct pidx *s;
	double run = 1;

	if (m == 0 || !(s = sort_p(p, m, adj)))
		return;
	for (size_t k = m; k-- > 0;) {
		double v = fmin(1, fmax(s[k].p, (double)m * s[k].p / (double)(k + 1)));
		if (v < run)
			run = v;
		adj[s[k].i] = run;
	}
	free(s);
}

/* ---- Mann-Kendall -------------------------------------------------- */

int mk_trend_test(const double *x, size_t n, double *s, double *z, double *p,
		  char *err, size_t errlen)
{
	*s = 0;
	*z = 0;
	*p = 1;
	if (n < 2) {
		snprintf(err, errlen, "mk_trend_test: %zu value(s) in the series; a trend needs at least 2", n);
		return -1;
	}
	double *c = sorted_copy("mk_trend_test", "x", x, n, err, errlen);
	if (!c)
		return -1;
	double dn = (double)n, ties = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && c[j] == c[i])
			j++;
		double t = (double)(j - i);
		ties += t * (t - 1) * (2 * t + 5);
		i = j;
	}
	free(c);

	int64_t S = 0;
	for (size_t i = 0; i + 1 < n; i++)
		for (size_t j = i + 1; j < n; j++)
			S += (x[j] > x[i]) - (x[j] < x[i]);
	double var = (dn * (dn - 1) * (2 * dn + 5) - ties) / 18;
	*s = (double)S;
	if (S != 0 && var > 0)
		*z = ((double)S - (S > 0 ? 1 : -1)) / sqrt(var);
	*p = normal_p2(*z);
	return 0;
}
