/*
 * test_finding.c - the run's finding (harness/trust/finding.h) on fixed
 * trials: the ratio of medians read from merged histograms, its bootstrap
 * CI over trials, saturated loads left out, and the degenerate cases
 * (one load, one trial, no oq, one system, no points) that must say why
 * instead of giving a number; and the caveat sentence.
 */
#include "unit.h"
#include "finding.h"
#include "hdrenc.h"
#include "result.h"
#include "hist.h"

#include <string.h>

/* One trial's class histogram as run.json keeps it: n, min, max and the
 * HdrHistogram text.  101 values spread +-20 % around med. */
static json_t *trial_class(double med)
{
	struct hist *h = hist_new();
	char e[128];
	for (int i = -50; i <= 50; i++)
		hist_record(h, (uint64_t)(med * (1 + 0.004 * i)));
	char *hdr = hdr_encode_b64(h, e, sizeof e);
	json_t *c = json_pack("{s:I,s:I,s:I,s:f,s:I,s:s}", "n", (json_int_t)h->n, "min", (json_int_t)h->min, "max",
			      (json_int_t)h->max, "sum", h->sum, "overflow", (json_int_t)0, "hdr", hdr);
	free(hdr);
	hist_free(h);
	return c;
}

/* A point of system s at load: ntr trials whose medians are med times
 * 0.95, 1.0, 1.05, ...; cls "nilext" gets the samples (and "all" too),
 * else only "all". */
static json_t *point(const char *s, double load, double med, int ntr, int sat, const char *cls)
{
	json_t *trials = json_array();
	for (int t = 0; t < ntr; t++) {
		double m = med * (1 + 0.05 * ((t % 3) - 1));
		json_t *lat = json_pack("{s:o,s:o}", "all", trial_class(m), "nilext",
					strcmp(cls, "nilext") ? json_pack("{s:i}", "n", 0) : trial_class(m));
		json_array_append_new(trials, json_pack("{s:o}", "lat_ns", lat));
	}
	json_t *lat = json_pack("{s:{s:i},s:{s:i}}", "all", "n", 101 * ntr, "nilext", "n",
				strcmp(cls, "nilext") ? 0 : 101 * ntr);
	return json_pack("{s:s,s:f,s:b,s:o,s:o,s:{s:[],s:[],s:[],s:[]},s:[]}", "system", s, "offered_ops", load,
			 "saturated", sat, "trials", trials, "lat_ns", lat, "flagged_by", "p50", "p99", "p999",
			 "achieved_ops", "checks");
}

/* oq 300 ns, deferred 800, rawrpc 1300 at nloads loads; one more load
 * where all saturate at 60 ms. */
static json_t *quickstart(int nloads, int ntr, const char *const *sys, int nsys)
{
	static const struct { const char *s; double m; } base[] = { { "oq", 300 }, { "rawrpc", 1300 }, { "deferred", 800 } };
	json_t *pts = json_array();
	for (int i = 0; i < nsys; i++) {
		double m = 0;
		for (int k = 0; k < 3; k++)
			if (!strcmp(base[k].s, sys[i]))
				m = base[k].m;
		for (int l = 0; l < nloads; l++)
			json_array_append_new(pts, point(sys[i], 20000.0 * (1 << l), m * (1 + 0.1 * l), ntr, 0, "nilext"));
		json_array_append_new(pts, point(sys[i], 1.6e6, 6e7, ntr, 1, "nilext"));
	}
	return json_pack("{s:s,s:o}", "schema", "oqbench.run/1", "points", pts);
}

static const char *const three[] = { "oq", "rawrpc", "deferred" };

static const json_t *pair(const json_t *f, const char *s)
{
	size_t i;
	const json_t *p;
	json_array_foreach(json_object_get(f, "pairs"), i, p)
		if (!strcmp(json_string_value(json_object_get(p, "system")), s))
			return p;
	return NULL;
}

static const char *text(const json_t *f)
{
	return json_string_value(json_object_get(f, "text"));
}

TEST(ratio_and_ci_below_saturation)
{
	json_t *run = quickstart(6, 5, three, 3), *f = finding_of_run(run);
	REQUIRE(f);
	CHECK(!strcmp(json_string_value(json_object_get(f, "status")), "ok"), "%s", text(f));
	CHECK(!strcmp(json_string_value(json_object_get(f, "reference")), "oq"));
	CHECK(!strcmp(json_string_value(json_object_get(f, "class")), "nilext"));
	const json_t *r = pair(f, "rawrpc"), *d = pair(f, "deferred");
	REQUIRE(r && d);
	/* the saturated load is left out */
	CHECK(json_array_size(json_object_get(r, "loads")) == 6);
	/* the same factor at every load: 1300/300 and 800/300 (values below
	 * 2048 ns are exact in the histogram, so only the +-0.4 % steps of
	 * the fixture move them) */
	CHECK_NEAR(json_real_value(json_object_get(r, "ratio")), 1300.0 / 300, 0.03);
	CHECK_NEAR(json_real_value(json_object_get(d, "ratio")), 800.0 / 300, 0.03);
	CHECK(json_is_true(json_object_get(r, "lower_at_every_load")));
	const json_t *ci = json_object_get(r, "ci95");
	double lo = json_real_value(json_array_get(ci, 0)), hi = json_real_value(json_array_get(ci, 1));
	/* the trials' medians move +-5 %: the CI holds the ratio and is no
	 * wider than that spread allows */
	CHECK(lo <= 1300.0 / 300 && hi >= 1300.0 / 300 * 0.99 && lo > 3.9 && hi < 4.8, "CI %g-%g", lo, hi);
	CHECK(json_object_get(json_array_get(json_object_get(r, "loads"), 0), "ci95") != NULL);
	CHECK(json_integer_value(json_object_get(json_object_get(f, "trials"), "min")) == 5);
	CHECK(strstr(text(f), "below saturation (6 loads), oq's nilext median is 4.3x lower than rawrpc's (95 % CI ") &&
	      strstr(text(f), " and 2.7x lower than deferred's (95 % CI "), "%s", text(f));
	CHECK(json_integer_value(json_object_get(f, "medians_used")) == 18);
	CHECK(strstr(json_string_value(json_object_get(f, "caveat")), "no self-check warned about the 18 medians") != NULL);
	/* the same run gives the same CI (fixed seed) */
	json_t *g = finding_of_run(run);
	CHECK(json_equal(json_object_get(f, "pairs"), json_object_get(g, "pairs")));
	json_decref(g);
	json_decref(f);
	json_decref(run);
}

/* The per-load median is that of the trials merged, not the median of
 * the trials' medians: trials of 1, 2 and 1000 samples. */
TEST(median_of_merged_trials)
{
	json_t *run = quickstart(2, 2, three, 2);
	json_t *p = json_array_get(json_object_get(run, "points"), 0);   /* oq at 20 K */
	json_t *tr = json_array();
	struct hist *m = hist_new();
	const uint64_t vals[3][3] = { { 100, 0, 0 }, { 5000, 6000, 0 }, { 400, 0, 0 } };
	const int cnt[3] = { 1, 2, 1000 };
	for (int t = 0; t < 3; t++) {
		struct hist *h = hist_new();
		for (int i = 0; i < cnt[t]; i++)
			hist_record(h, vals[t][i < 2 ? i : 0] + (t == 2 ? (uint64_t)i : 0));
		hist_merge(m, h);
		/* as run.json keeps a trial (harness/result/result.h) */
		json_array_append_new(tr, json_pack("{s:{s:o,s:o}}", "lat_ns", "all", result_hist_summary(h),
						    "nilext", result_hist_summary(h)));
		hist_free(h);
	}
	json_object_set_new(p, "trials", tr);
	json_t *f = finding_of_run(run);
	const json_t *l = json_array_get(json_object_get(pair(f, "rawrpc"), "loads"), 0);
	CHECK_NEAR(json_real_value(json_object_get(l, "reference_p50_ns")), (double)hist_percentile(m, 50), 0);
	hist_free(m);
	json_decref(f);
	json_decref(run);
}

TEST(one_load_gives_no_number)
{
	json_t *run = quickstart(1, 5, three, 3), *f = finding_of_run(run);
	REQUIRE(f);
	CHECK(!strcmp(json_string_value(json_object_get(f, "status")), "insufficient"));
	CHECK(json_object_get(pair(f, "rawrpc"), "ratio") == NULL);
	CHECK(strstr(text(f), "no finding with a number; oq against rawrpc: only 1 load below saturation") != NULL,
	      "%s", text(f));
	CHECK(strchr(text(f), 'x') == NULL || strstr(text(f), "x lower") == NULL, "%s", text(f));
	json_decref(f);
	json_decref(run);
}

TEST(one_trial_gives_no_number)
{
	json_t *run = quickstart(4, 1, three, 3), *f = finding_of_run(run);
	REQUIRE(f);
	CHECK(!strcmp(json_string_value(json_object_get(f, "status")), "insufficient"));
	CHECK(strstr(text(f), "a CI needs 2 per point") != NULL, "%s", text(f));
	json_decref(f);
	json_decref(run);
}

TEST(without_oq_the_lowest_is_the_reference)
{
	static const char *const two[] = { "rawrpc", "deferred" };
	json_t *run = quickstart(3, 3, two, 2), *f = finding_of_run(run);
	REQUIRE(f);
	CHECK(!strcmp(json_string_value(json_object_get(f, "reference")), "deferred"));
	CHECK(strstr(json_string_value(json_object_get(f, "reference_rule")), "oq is not in the run") != NULL);
	CHECK(strstr(text(f), "deferred's nilext median is 1.6x lower than rawrpc's") != NULL, "%s", text(f));
	json_decref(f);
	json_decref(run);
}

TEST(oq_higher_says_higher)
{
	json_t *run = quickstart(3, 3, three, 3);
	size_t i;
	json_t *p;
	/* make oq's trials 4000 ns */
	json_array_foreach(json_object_get(run, "points"), i, p)
		if (!strcmp(json_string_value(json_object_get(p, "system")), "oq") &&
		    !json_is_true(json_object_get(p, "saturated")))
		{
			json_t *q = point("oq", 1, 4000, 3, 0, "nilext");
			json_object_set(p, "trials", json_object_get(q, "trials"));
			json_decref(q);
		}
	json_t *f = finding_of_run(run);
	CHECK(strstr(text(f), "x higher than rawrpc's") != NULL, "%s", text(f));
	CHECK(json_is_false(json_object_get(pair(f, "rawrpc"), "lower_at_every_load")));
	json_decref(f);
	json_decref(run);
}

TEST(one_system_or_none)
{
	static const char *const one[] = { "oq" };
	json_t *run = quickstart(3, 3, one, 1), *f = finding_of_run(run);
	CHECK(!strcmp(json_string_value(json_object_get(f, "status")), "none"));
	CHECK(strstr(text(f), "one system") != NULL, "%s", text(f));
	json_decref(f);
	json_decref(run);
	run = json_pack("{s:s,s:[]}", "schema", "oqbench.run/1", "points");
	f = finding_of_run(run);
	CHECK(!strcmp(json_string_value(json_object_get(f, "status")), "none"));
	CHECK(strstr(text(f), "no points") != NULL, "%s", text(f));
	json_decref(f);
	json_decref(run);
	/* no points key at all */
	run = json_object();
	f = finding_of_run(run);
	CHECK(f && !strcmp(json_string_value(json_object_get(f, "status")), "none"));
	json_decref(f);
	json_decref(run);
}

TEST(without_nilext_samples_the_class_is_all)
{
	json_t *pts = json_array();
	for (int l = 0; l < 3; l++) {
		json_array_append_new(pts, point("oq", 1e4 * (l + 1), 500, 3, 0, "all"));
		json_array_append_new(pts, point("rawrpc", 1e4 * (l + 1), 1000, 3, 0, "all"));
	}
	json_t *run = json_pack("{s:o}", "points", pts), *f = finding_of_run(run);
	CHECK(!strcmp(json_string_value(json_object_get(f, "class")), "all"));
	CHECK(strstr(text(f), "oq's request median is 2.0x lower than rawrpc's") != NULL, "%s", text(f));
	json_decref(f);
	json_decref(run);
}

TEST(caveat_names_the_checks_and_why)
{
	json_t *run = quickstart(3, 3, three, 3);
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(run, "points"), i, p) {
		if (json_is_true(json_object_get(p, "saturated")) || i % 2)
			continue;
		json_array_append_new(json_object_get(json_object_get(p, "flagged_by"), "p50"), json_string("trial_agreement"));
		json_array_append_new(json_object_get(p, "checks"),
				      json_pack("{s:s,s:s,s:s}", "name", "trial_agreement", "status", "warn", "cause", "canaries"));
	}
	json_t *f = finding_of_run(run);
	const char *c = json_string_value(json_object_get(f, "caveat"));
	CHECK(json_integer_value(json_object_get(f, "medians_flagged")) == 6, "%lld",
	      (long long)json_integer_value(json_object_get(f, "medians_flagged")));
	CHECK(strstr(c, "the self-checks warned about 6 of the 9 medians used: trial_agreement at 6 (the trials' "
		      "medians disagree") && strstr(c, "at 6 of them the trials ran under different canaries"), "%s", c);
	CHECK(json_integer_value(json_object_get(json_object_get(f, "flagged_by_check"), "trial_agreement")) == 6);
	json_decref(f);
	json_decref(run);
}

/* Closed loop: no point has an offered load (null, a missing number), so
 * the points of two systems measured the same thing when their
 * outstanding requests are the same. */
TEST(closed_loop_points_pair_by_outstanding)
{
	json_t *run = quickstart(2, 3, three, 3), *p;
	size_t i;
	json_array_foreach(json_object_get(run, "points"), i, p) {
		double off = json_number_value(json_object_get(p, "offered_ops"));
		json_object_set_new(p, "offered_ops", json_null());
		json_object_set_new(p, "outstanding", json_integer((json_int_t)(off / 20000)));
	}
	json_t *f = finding_of_run(run);
	CHECK(!strcmp(json_string_value(json_object_get(f, "status")) ?: "", "ok"), "%s",
	      json_string_value(json_object_get(f, "text")));
	const json_t *r = pair(f, "rawrpc");
	REQUIRE(r);
	CHECK(json_array_size(json_object_get(r, "loads")) == 2);
	CHECK(json_integer_value(json_object_get(json_array_get(json_object_get(r, "loads"), 1), "outstanding")) == 2);
	json_decref(f);
	json_decref(run);
}

TEST(two_runs_side_by_side)
{
	json_t *a = quickstart(3, 5, three, 3), *b = quickstart(3, 5, three, 3);
	json_t *c = finding_compare(a, b);
	REQUIRE(c);
	CHECK(json_array_size(json_object_get(c, "pairs")) == 2 && json_integer_value(json_object_get(c, "moved")) == 0,
	      "%s", json_string_value(json_object_get(c, "text")));
	CHECK(strstr(json_string_value(json_object_get(c, "text")), "rawrpc/oq 4.") &&
	      strstr(json_string_value(json_object_get(c, "text")), "within each other's CI"),
	      "%s", json_string_value(json_object_get(c, "text")));
	CHECK(strstr(json_string_value(json_object_get(c, "base")), "lower than rawrpc's") != NULL);
	json_decref(c);
	/* rawrpc twice as slow in the new run: that pair moved, deferred's did not */
	json_t *p;
	size_t i;
	json_array_foreach(json_object_get(b, "points"), i, p)
		if (!strcmp(json_string_value(json_object_get(p, "system")), "rawrpc") &&
		    !json_is_true(json_object_get(p, "saturated"))) {
			json_t *t;
			size_t k;
			double load = json_number_value(json_object_get(p, "offered_ops"));
			int l = load < 30000 ? 0 : load < 50000 ? 1 : 2;
			json_array_foreach(json_object_get(p, "trials"), k, t) {
				double m = 2600 * (1 + 0.1 * l) * (1 + 0.05 * (((int)k % 3) - 1));
				json_object_set_new(json_object_get(t, "lat_ns"), "all", trial_class(m));
				json_object_set_new(json_object_get(t, "lat_ns"), "nilext", trial_class(m));
			}
		}
	c = finding_compare(a, b);
	const json_t *pr = json_array_get(json_object_get(c, "pairs"), 0);
	CHECK(json_integer_value(json_object_get(c, "moved")) == 1, "%s", json_string_value(json_object_get(c, "text")));
	CHECK(!strcmp(json_string_value(json_object_get(pr, "system")), "rawrpc") &&
	      !strcmp(json_string_value(json_object_get(pr, "verdict")), "moved") &&
	      json_number_value(json_object_get(pr, "new_ratio")) > 1.8 * json_number_value(json_object_get(pr, "base_ratio")));
	json_decref(c);
	/* a run with one system has no pair: said, not a number */
	json_t *one = quickstart(3, 5, three, 1);
	c = finding_compare(a, one);
	CHECK(json_array_size(json_object_get(c, "pairs")) == 0 &&
	      strstr(json_string_value(json_object_get(c, "text")), "cannot be set side by side"),
	      "%s", json_string_value(json_object_get(c, "text")));
	json_decref(c);
	json_decref(one);
	json_decref(a);
	json_decref(b);
}

UNIT_MAIN(closed_loop_points_pair_by_outstanding, ratio_and_ci_below_saturation, median_of_merged_trials, one_load_gives_no_number, one_trial_gives_no_number,
	  without_oq_the_lowest_is_the_reference, oq_higher_says_higher, one_system_or_none,
	  without_nilext_samples_the_class_is_all, caveat_names_the_checks_and_why,
	  two_runs_side_by_side)
