/*
 * ltscale.h - the axes of a latency-vs-throughput panel (`oqb plot`'s
 * latency-throughput.gp, `oqb figures`' fig-latency.gp).
 *
 * What it guarantees, and why:
 * - The latency axis is always logarithmic.  Below saturation the three
 *   systems' medians differ by a few times at a fraction of a microsecond,
 *   and a saturated point's latency is a queue that grew for the whole
 *   trial (tens of milliseconds): only a log axis shows both.
 * - The range comes from the points below saturation (their values and
 *   the trials' range around them), padded, so a saturated point never
 *   squeezes the rest onto one line.  A saturated point above that range
 *   is drawn in a band at the top (sat_y) with its own marker; the
 *   scripts say so in the legend.  A saturated point inside the range is
 *   drawn where it is, with the same marker.  Only when no point is below
 *   saturation do the saturated ones set the range.
 * - Tick labels at 1-2-5 steps when the range spans at most 3 decades (a
 *   0.3 us against a 1.3 us median can be read off), else at decades.
 * - The throughput axis turns logarithmic when the achieved rates span
 *   more than LTS_XLOG_SPAN (a geometric load sweep such as 20 K to
 *   1.6 M ops/s, whose light loads would otherwise sit on top of each
 *   other at the left edge).
 * tests/unit/test_ltscale.c checks these on fixed rows, and
 * tests/integration/plot-scale.sh that `oqb plot` uses them.
 */
#ifndef OQB_LTSCALE_H
#define OQB_LTSCALE_H

#include <stddef.h>
#include <stdio.h>

#define LTS_XLOG_SPAN 20.0

/* One point of a panel: achieved ops/s, the latency drawn and the trials'
 * range around it (ns; lo, hi <= 0: none), and whether it saturated. */
struct lts_row {
	double achieved, val, lo, hi;
	int saturated;
};

struct lts_axes {
	/* latency axis, us */
	int ylog;                   /* always 1 when some value is positive */
	double ylo, yhi;            /* the range */
	double ydata_hi;            /* top of the unsaturated points' part */
	double sat_y;               /* where saturated points above it are drawn; 0: no band */
	size_t used, nsat, nsat_above;  /* unsaturated points that set the range, saturated ones, of them above */
	char ytics[512];            /* gnuplot tic list ("0.1" 0.1, "0.2" 0.2, ...), or "" */
	/* throughput axis, in xunit */
	int xlog;
	double xscale;              /* ops/s per unit: 1e3 or 1e6 */
	char xunit[16];
	double xlo, xhi;            /* only with xlog */
	char xtics[512];
};

/* The axes for rows[0..n) (see above).  n == 0 gives a 1-10 us log axis. */
void lts_axes_of(const struct lts_row *rows, size_t n, struct lts_axes *a);

/*
 * Writes the axes as gnuplot assignments, each name followed by sfx:
 * ylog, ylo, yhi, ydhi, ysat, ytics, xlog, xs, xunit, xlo, xhi, xtics
 * (strings quoted), with a comment saying where the range came from.  A
 * script draws a saturated point whose value is above ydhi at ysat.
 */
void lts_write_gp(FILE *f, const char *sfx, const struct lts_axes *a);

#endif
