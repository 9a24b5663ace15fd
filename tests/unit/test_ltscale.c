/*
 * test_ltscale.c - the axes of a latency-vs-throughput panel
 * (harness/figures/ltscale.h): log latency whose range the points below
 * saturation set, saturated points in a band above it, 1-2-5 ticks, and a
 * log throughput axis for a wide load sweep.
 */
#include "unit.h"
#include "ltscale.h"

/* The quickstart's shape: 0.3, 0.8 and 1.3 us medians at 6 loads, and a
 * 60 ms median for each system at 1.6 Mops/s (saturated). */
static size_t quickstart(struct lts_row *r)
{
	static const double base[3] = { 300, 1300, 800 };
	static const double loads[7] = { 2e4, 5e4, 1e5, 2e5, 4e5, 8e5, 1.6e6 };
	size_t n = 0;
	for (int s = 0; s < 3; s++)
		for (int l = 0; l < 7; l++) {
			int sat = l == 6;
			double v = sat ? 6e7 : base[s] * (1 + 0.05 * l);
			r[n++] = (struct lts_row){ sat ? 9e5 : loads[l], v, v * 0.9, v * 1.1, sat };
		}
	return n;
}

TEST(saturated_points_do_not_set_the_range)
{
	struct lts_row r[21];
	struct lts_axes a;
	lts_axes_of(r, quickstart(r), &a);
	CHECK(a.ylog == 1);
	CHECK(a.used == 18 && a.nsat == 3 && a.nsat_above == 3, "used %zu nsat %zu above %zu", a.used, a.nsat,
	      a.nsat_above);
	/* every value below saturation and its bar is inside; 60,000 us is not */
	CHECK(a.ylo > 0 && a.ylo <= 0.27, "ylo %g", a.ylo);
	CHECK(a.ydata_hi >= 1.3 * 1.25 * 1.1 && a.ydata_hi <= 5, "ydata_hi %g", a.ydata_hi);
	CHECK(a.sat_y > a.ydata_hi && a.yhi >= a.sat_y && a.yhi < 100, "sat_y %g yhi %g", a.sat_y, a.yhi);
	/* 1-2-5 steps: 0.3 and 1.3 us can be read off */
	CHECK(strstr(a.ytics, "\"0.2\" 0.2, \"0.5\" 0.5, \"1\" 1, \"2\" 2") != NULL, "ytics %s", a.ytics);
	/* 20 K to 1.6 M ops/s: log throughput, in Kops/s */
	CHECK(a.xlog == 1 && a.xscale == 1e3 && strcmp(a.xunit, "Kops/s") == 0, "xlog %d %s", a.xlog, a.xunit);
	CHECK(a.xlo <= 20 && a.xhi >= 900, "x %g-%g", a.xlo, a.xhi);
}

TEST(saturated_point_inside_the_range_stays_there)
{
	struct lts_row r[3] = {
		{ 1e5, 1000, 0, 0, 0 }, { 2e5, 5000, 0, 0, 0 }, { 3e5, 3000, 0, 0, 1 },
	};
	struct lts_axes a;
	lts_axes_of(r, 3, &a);
	CHECK(a.nsat == 1 && a.nsat_above == 0 && a.sat_y == 0, "above %zu sat_y %g", a.nsat_above, a.sat_y);
	CHECK(a.ylo <= 1 && a.yhi >= 5, "%g-%g", a.ylo, a.yhi);
	/* a 3x load range: linear throughput */
	CHECK(a.xlog == 0);
}

TEST(all_saturated_sets_the_range_itself)
{
	struct lts_row r[2] = { { 1e4, 4e5, 0, 0, 1 }, { 2e4, 4e8, 0, 0, 1 } };
	struct lts_axes a;
	lts_axes_of(r, 2, &a);
	CHECK(a.used == 0 && a.sat_y == 0);
	CHECK(a.ylo <= 400 && a.yhi >= 400000, "%g-%g", a.ylo, a.yhi);
	/* more than 3 decades: ticks at decades only */
	CHECK(strstr(a.ytics, "\" 2") == NULL && strstr(a.ytics, "\"1,000\" 1000") != NULL, "ytics %s", a.ytics);
	/* labels with thousands separators, never gnuplot's 1e+06 */
	struct lts_row big[2] = { { 1e4, 2e5, 0, 0, 1 }, { 2e4, 2e9, 0, 0, 1 } };
	lts_axes_of(big, 2, &a);
	CHECK(strstr(a.ytics, "\"100,000\" 100000, \"1,000,000\" 1e+06") != NULL && strstr(a.ytics, "\"1e+") == NULL,
	      "ytics %s", a.ytics);
}

TEST(empty_and_megaops)
{
	struct lts_axes a;
	lts_axes_of(NULL, 0, &a);
	CHECK(a.ylog == 1 && a.ylo > 0 && a.yhi > a.ylo);
	struct lts_row r[2] = { { 1e6, 500, 0, 0, 0 }, { 3e6, 700, 0, 0, 0 } };
	lts_axes_of(r, 2, &a);
	CHECK(a.xscale == 1e6 && strcmp(a.xunit, "Mops/s") == 0);
}

UNIT_MAIN(saturated_points_do_not_set_the_range, saturated_point_inside_the_range_stays_there,
	  all_saturated_sets_the_range_itself, empty_and_megaops)
