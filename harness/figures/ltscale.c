/*
 * ltscale.c - the axes of a latency-vs-throughput panel (ltscale.h).
 */
#include "ltscale.h"

#include <math.h>
#include <string.h>

/* The largest 1, 2 or 5 times a power of ten <= v (v > 0). */
static double snap_down(double v)
{
	double p = pow(10, floor(log10(v))), m = v / p;
	return (m >= 5 ? 5 : m >= 2 ? 2 : 1) * p;
}

/* The smallest 1, 2 or 5 times a power of ten >= v (v > 0). */
static double snap_up(double v)
{
	double p = pow(10, floor(log10(v))), m = v / p;
	if (m <= 1 * (1 + 1e-12))
		return p;
	return (m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* A tic's label: as %g below 1,000 (0.2, 5, 500), else the whole number
 * with thousands separators (2,000, 1,000,000), never gnuplot's 1e+06. */
static void tic_label(char *buf, size_t len, double v)
{
	if (v < 1000) {
		snprintf(buf, len, "%.6g", v);
		return;
	}
	char digits[32];
	int n = snprintf(digits, sizeof digits, "%.0f", v), k = 0;
	for (int i = 0; i < n && (size_t)k + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = digits[i];
	}
	buf[k] = '\0';
}

/* ("a" a, "b" b, ...): the 1-2-5 steps in [lo, hi], or only the decades
 * when the range spans more than 3 of them, each with its label
 * (tic_label); "" when none fits. */
static void tics(char *buf, size_t len, double lo, double hi)
{
	int steps = log10(hi / lo) <= 3;
	size_t k = 0;
	buf[0] = '\0';
	for (double d = pow(10, floor(log10(lo))); d <= hi * (1 + 1e-9); d *= 10) {
		static const double m[3] = { 1, 2, 5 };
		for (int i = 0; i < (steps ? 3 : 1); i++) {
			double v = d * m[i];
			if (v < lo * (1 - 1e-9) || v > hi * (1 + 1e-9))
				continue;
			char lab[40];
			tic_label(lab, sizeof lab, v);
			int w = snprintf(buf + k, len - k, "%s\"%s\" %.6g", k ? ", " : "(", lab, v);
			if (w < 0 || (size_t)w >= len - k - 2) {
				buf[k] = '\0';
				break;
			}
			k += (size_t)w;
		}
	}
	if (k)
		snprintf(buf + k, len - k, ")");
}

void lts_axes_of(const struct lts_row *rows, size_t n, struct lts_axes *a)
{
	double vmin = INFINITY, vmax = 0, xmin = INFINITY, xmax = 0, satmax = 0;
	size_t i;

	memset(a, 0, sizeof *a);
	a->ylog = 1;
	for (i = 0; i < n; i++) {
		const struct lts_row *r = &rows[i];
		if (r->achieved > 0) {
			xmin = fmin(xmin, r->achieved);
			xmax = fmax(xmax, r->achieved);
		}
		if (!(r->val > 0))
			continue;
		if (r->saturated) {
			a->nsat++;
			satmax = fmax(satmax, r->val / 1e3);
			continue;
		}
		a->used++;
		vmin = fmin(vmin, (r->lo > 0 ? fmin(r->lo, r->val) : r->val) / 1e3);
		vmax = fmax(vmax, (r->hi > 0 ? fmax(r->hi, r->val) : r->val) / 1e3);
	}
	/* no point below saturation: the saturated ones are all there is */
	if (!a->used)
		for (i = 0; i < n; i++)
			if (rows[i].val > 0) {
				vmin = fmin(vmin, rows[i].val / 1e3);
				vmax = fmax(vmax, rows[i].val / 1e3);
			}
	if (!(vmax > 0)) {
		vmin = 1;
		vmax = 10;
	}
	a->ylo = snap_down(vmin / 1.25);
	a->ydata_hi = snap_up(vmax * 1.25);
	a->yhi = a->ydata_hi;
	if (a->used && satmax > a->ydata_hi) {
		for (i = 0; i < n; i++)
			a->nsat_above += rows[i].saturated && rows[i].val / 1e3 > a->ydata_hi;
		a->sat_y = a->ydata_hi * 2;
		a->yhi = snap_up(a->sat_y * 1.6);
	}
	tics(a->ytics, sizeof a->ytics, a->ylo, a->yhi);

	a->xscale = xmax >= 1e6 ? 1e6 : 1e3;
	snprintf(a->xunit, sizeof a->xunit, "%s", xmax >= 1e6 ? "Mops/s" : "Kops/s");
	if (xmax > 0 && xmax > LTS_XLOG_SPAN * xmin) {
		a->xlog = 1;
		a->xlo = snap_down(xmin / 1.25 / a->xscale);
		a->xhi = snap_up(xmax * 1.25 / a->xscale);
		tics(a->xtics, sizeof a->xtics, a->xlo, a->xhi);
	}
}

void lts_write_gp(FILE *f, const char *sfx, const struct lts_axes *a)
{
	fprintf(f, "# latency axis%s: log y from %zu point(s) below saturation (their values and trials' "
		"range); %zu saturated, %zu of them above the range, drawn at ysat\n", sfx, a->used, a->nsat,
		a->nsat_above);
	fprintf(f, "ylog%s = %d\nylo%s = %.6g\nyhi%s = %.6g\nydhi%s = %.6g\nysat%s = %.6g\nytics%s = '%s'\n",
		sfx, a->ylog, sfx, a->ylo, sfx, a->yhi, sfx, a->ydata_hi, sfx, a->sat_y, sfx, a->ytics);
	fprintf(f, "xlog%s = %d\nxs%s = %.6g\nxunit%s = '%s'\nxlo%s = %.6g\nxhi%s = %.6g\nxtics%s = '%s'\n",
		sfx, a->xlog, sfx, a->xscale, sfx, a->xunit, sfx, a->xlo, sfx, a->xhi, sfx, a->xtics);
}
