/*
 * stats.c - percentile confidence intervals from order statistics, and
 * the goodness-of-fit statistics (chi-square, Kolmogorov-Smirnov) used to
 * check generators.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int stats_pct_ci_ranks(uint64_t n, double p, double z, uint64_t *lo, uint64_t *hi)
{
	*lo = *hi = 0;
	if (n == 0 || !(p > 0 && p < 1) || !(z >= 0) || !isfinite(z))
		return -1;
	double np = (double)n * p;
	double half = z * sqrt(np * (1 - p));
	double l = floor(np - half), h = ceil(np + half) + 1;

	*lo = l < 1 ? 1 : l > (double)n ? n : (uint64_t)l;
	*hi = h < 1 ? 1 : h > (double)n ? n : (uint64_t)h;
	return 0;
}

int stats_pct_ci_bounded(uint64_t n, double p, double z)
{
	double np = (double)n * p;
	return n > 0 && ceil(np + z * sqrt(np * (1 - p))) + 1 <= (double)n;
}

void stats_hist_pct_ci(const struct hist *h, double p, double z, uint64_t *lo, uint64_t *hi)
{
	uint64_t rlo, rhi;

	*lo = *hi = 0;
	if (h->n == 0 || stats_pct_ci_ranks(h->n, p, z, &rlo, &rhi))
		return;
	*lo = hist_value_at_rank(h, rlo);
	*hi = hist_value_at_rank(h, rhi);
}

double stats_chi2(const uint64_t *obs, const double *expected, size_t k)
{
	double s = 0;

	for (size_t i = 0; i < k; i++) {
		double d = (double)obs[i] - expected[i];
		if (expected[i] > 0)
			s += d * d / expected[i];
		else if (obs[i])
			return INFINITY;
	}
	return s;
}

size_t stats_chi2_pool(uint64_t *obs, double *expected, size_t k, double min_exp)
{
	size_t out = 0;
	uint64_t o = 0;
	double e = 0;

	for (size_t i = 0; i < k; i++) {
		o += obs[i];
		e += expected[i];
		if (e >= min_exp) {
			obs[out] = o;
			expected[out] = e;
			out++;
			o = 0;
			e = 0;
		}
	}
	if (e > 0 || o > 0) {          /* a short remainder joins the last cell */
		if (out == 0) {
			obs[0] = o;
			expected[0] = e;
			return 1;
		}
		obs[out - 1] += o;
		expected[out - 1] += e;
	}
	return out;
}

double stats_chi2_crit(double df, double z)
{
	double c = 2.0 / (9.0 * df);
	double t = 1.0 - c + z * sqrt(c);

	return df * t * t * t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double stats_ks_exp(double *x, size_t n, double mean)
{
	if (n == 0 || !(mean > 0))
		return INFINITY;
	qsort(x, n, sizeof *x, cmp_double);

	double d = 0, dn = (double)n;
	for (size_t i = 0; i < n; i++) {
		double f = x[i] > 0 ? -expm1(-x[i] / mean) : 0;
		/* The empirical CDF steps from i/n to (i+1)/n at x[i]. */
		double above = (double)(i + 1) / dn - f, below = f - (double)i / dn;
		if (above > d)
			d = above;
		if (below > d)
			d = below;
	}
	double sn = sqrt(dn);
	return d * (sn + 0.12 + 0.11 / sn);
}

void stats_sort(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof *v, cmp_double);
}

double stats_median_inplace(double *v, size_t n)
{
	if (!n)
		return NAN;
	stats_sort(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double stats_median(const double *v, size_t n)
{
	double *t = n ? malloc(n * sizeof *t) : NULL, m;
	if (!t)
		return NAN;
	memcpy(t, v, n * sizeof *t);
	m = stats_median_inplace(t, n);
	free(t);
	return m;
}
