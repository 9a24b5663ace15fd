/*
 * test_verdict.c - `oqb compare`'s judgement (harness/verdict/compare.h)
 * on runs built here, request by request, so every case knows the truth:
 *
 *   A/A pairs of one generator, with trial-to-trial noise well beyond the
 *   tolerance, never report a regression or an improvement (the Holm
 *   correction at 1 % over every point and metric), while the same pairs
 *   judged with no correction do: the family-wise rate is the code's work;
 *   a planted change of the untagged requests' p50 and of their P99 is
 *   found; a change only in the requests host stalls tagged is no system
 *   regression (the raw tail would call it one) but its tagged share is
 *   reported; and trials on two floors of the machine (canary regimes)
 *   make no verdict; and `oqb ab`'s sequential design (ab_seq.h): the
 *   looks never spend more than alpha, a metric decided at a look keeps
 *   that verdict and its round count whatever later looks say, and one
 *   never decided says so.
 */
#include "unit.h"
#include "ab_seq.h"
#include "compare.h"
#include "hdrenc.h"
#include "hist.h"
#include "result.h"
#include "rng.h"

#include <math.h>
#include <string.h>

/* How one trial of one side is made. */
struct shape {
	double med_ns;     /* the untagged requests' median */
	double tail_mul;   /* the slowest 3 % of untagged requests are this much slower */
	double tagged;     /* share of requests a host stall tagged (they wait 2 ms more) */
	double noise;      /* each trial's median moves by up to +-noise (uniform) */
	double canary;     /* the trial's canary_ns */
};

static json_t *summary(const struct hist *h)
{
	return result_hist_summary(h);
}

/* Normal deviate (Box-Muller). */
static double gauss(struct rng *r)
{
	double u = rng_double(r), v = rng_double(r);
	return sqrt(-2 * log(u + 1e-300)) * cos(2 * M_PI * v);
}

/* One trial: 2,000 requests, all nilext; lat_ns of all of them, and
 * host_tags.sys_lat_ns of the untagged ones. */
static json_t *trial(struct rng *r, const struct shape *s, long round)
{
	struct hist *all = hist_new(), *sys = hist_new(), *none = hist_new();
	double med = s->med_ns * (1 + s->noise * (2 * rng_double(r) - 1));
	long tagged = 0;
	for (int i = 0; i < 2000; i++) {
		double v = med * exp(0.25 * gauss(r));
		if (rng_double(r) < 0.03)
			v *= 4 * s->tail_mul;
		if (rng_double(r) < s->tagged) {
			v += 2e6;
			tagged++;
		} else {
			hist_record(sys, (uint64_t)v);
		}
		hist_record(all, (uint64_t)v);
	}
	json_t *t = json_pack("{s:{s:o,s:o,s:o}, s:{s:{s:o,s:o,s:o}, s:{s:I,s:I,s:i}}, s:f, s:f, s:b}",
			      "lat_ns", "all", summary(all), "nilext", summary(all), "non_nilext", summary(none),
			      "host_tags", "sys_lat_ns", "all", summary(sys), "nilext", summary(sys), "non_nilext",
			      summary(none), "tagged", "all", (json_int_t)tagged, "nilext", (json_int_t)tagged,
			      "non_nilext", 0, "achieved_ops", 10000.0, "canary_ns", s->canary, "saturated", 0);
	if (round > 0)
		json_object_set_new(t, "round", json_integer(round));
	hist_free(all);
	hist_free(sys);
	hist_free(none);
	return t;
}

/* A run of npts points of ntr trials each, trial k of shape sh[k % nsh]. */
static json_t *run(uint64_t seed, int npts, int ntr, const struct shape *sh, int nsh)
{
	struct rng r;
	json_t *pts = json_array();
	rng_seed(&r, seed);
	for (int p = 0; p < npts; p++) {
		json_t *trials = json_array();
		for (int k = 0; k < ntr; k++)
			json_array_append_new(trials, trial(&r, &sh[k % nsh], 0));
		json_array_append_new(pts, json_pack("{s:s, s:f, s:o, s:f, s:b, s:{}}", "system", "oq", "offered_ops",
						     10000.0 * (p + 1), "trials", trials, "canary_ns", 150.0,
						     "saturated", 0, "checks"));
	}
	return json_pack("{s:s, s:s, s:o}", "schema", RESULT_SCHEMA, "status", "ok", "points", pts);
}

static const struct compare_params defaults = {
	.tolerance_pct = 5, .tolerance_p99_pct = 25, .tolerance_tagged_pp = 1, .alpha = 0.01,
	.canary_drift = 1.5, .correction = 1,
};

static long long sum_of(const json_t *doc, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(doc, "summary"), key));
}

static const char *metric_verdict(const json_t *doc, size_t pt, const char *m)
{
	return json_string_value(json_object_get(json_object_get(json_array_get(json_object_get(doc, "points"), pt),
								 m), "verdict"));
}

TEST(aa_pairs_report_no_change)
{
	/* noise +-30 % per trial: beyond the tolerance often, so only the
	 * tests (and their correction) keep an A/A pair from a verdict */
	struct shape s = { .med_ns = 20000, .tail_mul = 1, .tagged = 0.01, .noise = 0.3, .canary = 150 };
	int false_holm = 0, false_none = 0, moved = 0;
	for (uint64_t k = 0; k < 30; k++) {
		json_t *a = run(100 + 2 * k, 3, 8, &s, 1), *b = run(101 + 2 * k, 3, 8, &s, 1);
		json_t *doc = compare_eval(a, b, &defaults, "new");
		REQUIRE(doc);
		false_holm += sum_of(doc, "regressions") + sum_of(doc, "improvements") > 0;
		moved += sum_of(doc, "inconclusive") > 0;
		CHECK(strstr(json_string_value(json_object_get(json_object_get(doc, "summary"), "false_verdict_rate")),
			     "family-wise false-verdict rate at most 1 %"));
		CHECK(!strcmp(json_string_value(json_object_get(json_object_get(doc, "summary"), "tail")), "system"));
		json_decref(doc);
		struct compare_params none = defaults;
		none.correction = 2;
		none.alpha = 0.05;
		doc = compare_eval(a, b, &none, "new");
		false_none += sum_of(doc, "regressions") + sum_of(doc, "improvements") > 0;
		json_decref(doc);
		json_decref(a);
		json_decref(b);
	}
	CHECK(false_holm == 0, "%d of 30 A/A pairs reported a change", false_holm);
	CHECK(moved > 0, "no A/A pair moved beyond the tolerance: the case tests nothing");
	CHECK(false_none > 0, "uncorrected at 5 %%, no A/A pair reported a change: the case cannot tell");
}

TEST(planted_system_p50_found)
{
	struct shape b = { .med_ns = 20000, .tail_mul = 1, .tagged = 0.01, .noise = 0.05, .canary = 150 };
	struct shape n = b;
	n.med_ns *= 1.3;
	json_t *x = run(7, 2, 10, &b, 1), *y = run(8, 2, 10, &n, 1);
	json_t *doc = compare_eval(x, y, &defaults, "new");
	REQUIRE(doc);
	CHECK(sum_of(doc, "regressions") == 2, "%lld", sum_of(doc, "regressions"));
	CHECK(!strcmp(metric_verdict(doc, 0, "p50"), "regression"), "%s", metric_verdict(doc, 0, "p50"));
	json_decref(doc);
	doc = compare_eval(y, x, &defaults, "new");
	CHECK(sum_of(doc, "improvements") == 2, "%lld", sum_of(doc, "improvements"));
	json_decref(doc);
	json_decref(x);
	json_decref(y);
}

TEST(planted_system_p99_found)
{
	struct shape b = { .med_ns = 20000, .tail_mul = 1, .tagged = 0.01, .noise = 0.05, .canary = 150 };
	struct shape n = b;
	n.tail_mul = 2.5;
	json_t *x = run(9, 2, 10, &b, 1), *y = run(10, 2, 10, &n, 1);
	json_t *doc = compare_eval(x, y, &defaults, "new");
	REQUIRE(doc);
	CHECK(sum_of(doc, "regressions") == 2, "%lld", sum_of(doc, "regressions"));
	CHECK(!strcmp(metric_verdict(doc, 0, "p99"), "regression"), "%s", metric_verdict(doc, 0, "p99"));
	CHECK(!strcmp(metric_verdict(doc, 0, "p50"), "same"), "%s", metric_verdict(doc, 0, "p50"));
	json_decref(doc);
	json_decref(x);
	json_decref(y);
}

TEST(host_tail_only_is_no_system_regression)
{
	/* NEW's requests met host stalls 6x as often: its raw P99 is set by
	 * them (2 ms), its untagged requests are the same */
	struct shape b = { .med_ns = 20000, .tail_mul = 1, .tagged = 0.005, .noise = 0.05, .canary = 150 };
	struct shape n = b;
	n.tagged = 0.03;
	json_t *x = run(11, 2, 10, &b, 1), *y = run(12, 2, 10, &n, 1);
	json_t *doc = compare_eval(x, y, &defaults, "new");
	REQUIRE(doc);
	CHECK(sum_of(doc, "regressions") == 0 && sum_of(doc, "improvements") == 0, "%lld %lld",
	      sum_of(doc, "regressions"), sum_of(doc, "improvements"));
	CHECK(sum_of(doc, "host_exposure_changes") == 2, "%lld", sum_of(doc, "host_exposure_changes"));
	CHECK(!strcmp(metric_verdict(doc, 0, "tagged_frac"), "regression"), "%s", metric_verdict(doc, 0, "tagged_frac"));
	const json_t *pt = json_array_get(json_object_get(doc, "points"), 0);
	CHECK(!strcmp(json_string_value(json_object_get(pt, "host_exposure")), "more"));
	CHECK(strstr(json_string_value(json_object_get(pt, "detail")), "more exposed to the host's stalls"));
	double raw_new = json_real_value(json_object_get(json_object_get(pt, "p99"), "raw_new"));
	double sys_new = json_real_value(json_object_get(json_object_get(pt, "p99"), "new"));
	CHECK(raw_new > 1e6 && sys_new < 3e5, "raw %g system %g", raw_new, sys_new);
	json_decref(doc);
	/* every request of NEW tagged: its system tail is empty, which is
	 * undecided (never "same"), and says why */
	struct shape every = b;
	every.tagged = 1;
	json_t *e = run(17, 2, 10, &every, 1);
	doc = compare_eval(x, e, &defaults, "new");
	REQUIRE(doc);
	CHECK(!strcmp(metric_verdict(doc, 0, "p50"), "inconclusive"), "%s", metric_verdict(doc, 0, "p50"));
	CHECK(strstr(json_string_value(json_object_get(json_array_get(json_object_get(doc, "points"), 0), "detail")),
		     "tagged every request of the new side"));
	json_decref(doc);
	json_decref(e);
	/* judged on the raw tail, the host's stalls read as a regression */
	struct compare_params raw = defaults;
	raw.tail_raw = 1;
	doc = compare_eval(x, y, &raw, "new");
	CHECK(sum_of(doc, "regressions") == 2, "raw: %lld", sum_of(doc, "regressions"));
	json_decref(doc);
	json_decref(x);
	json_decref(y);
}

TEST(regime_mixed_trials_make_no_verdict)
{
	/* the machine's floor: 150 ns, everything as BASE; 500 ns, every
	 * latency 3x.  BASE ran 8 of 12 trials on the low floor, NEW 4 */
	struct shape lo = { .med_ns = 20000, .tail_mul = 1, .tagged = 0.01, .noise = 0.05, .canary = 150 };
	struct shape hi = lo;
	hi.med_ns *= 3;
	hi.canary = 500;
	struct shape bs[3] = { lo, lo, hi }, ns[3] = { lo, hi, hi };
	json_t *x = run(13, 2, 12, bs, 3), *y = run(14, 2, 12, ns, 3);
	json_t *doc = compare_eval(x, y, &defaults, "new");
	REQUIRE(doc);
	CHECK(sum_of(doc, "regressions") == 0 && sum_of(doc, "improvements") == 0, "%lld %lld",
	      sum_of(doc, "regressions"), sum_of(doc, "improvements"));
	CHECK(sum_of(doc, "trials_off_regime") == 24, "%lld", sum_of(doc, "trials_off_regime"));
	json_decref(doc);
	/* BASE all on the low floor, NEW all on the high one: no trial
	 * shares a floor with one of the other side */
	json_t *w = run(16, 2, 12, &lo, 1), *z = run(15, 2, 12, &hi, 1);
	doc = compare_eval(w, z, &defaults, "new");
	CHECK(sum_of(doc, "regressions") == 0 && sum_of(doc, "improvements") == 0, "%lld %lld",
	      sum_of(doc, "regressions"), sum_of(doc, "improvements"));
	CHECK(sum_of(doc, "inconclusive") == 2, "%lld", sum_of(doc, "inconclusive"));
	json_decref(doc);
	json_decref(x);
	json_decref(y);
	json_decref(w);
	json_decref(z);
}

/* A look's comparison of one point: the verdicts of p50, p99 and
 * achieved_ops (compare_eval's row shape, as ab_seq reads it). */
static json_t *look(const char *p50, const char *p99, const char *ops, const char *verdict)
{
	return json_pack("{s:[{s:s, s:s, s:s, s:s, s:{s:s, s:f}, s:{s:s, s:f}, s:{s:s, s:f}}], s:{s:I}, s:[]}",
			 "points", "system", "oq", "load", "5000", "verdict", verdict, "detail", "the look's",
			 "p50", "verdict", p50, "base", 1.0, "p99", "verdict", p99, "base", 2.0, "achieved_ops",
			 "verdict", ops, "base", 3.0, "summary", "regressions", (json_int_t)0, "table");
}

static const char *row_str(const json_t *doc, const char *m, const char *key)
{
	const json_t *row = json_array_get(json_object_get(doc, "points"), 0);
	return json_string_value(m ? json_object_get(json_object_get(row, m), key) : json_object_get(row, key));
}

static long long rounds_of(const json_t *doc, const char *m)
{
	const json_t *row = json_array_get(json_object_get(doc, "points"), 0);
	const json_t *r = json_object_get(json_object_get(row, m), "rounds_needed");
	return json_is_integer(r) ? json_integer_value(r) : -1;
}

TEST(sequential_spends_at_most_alpha)
{
	struct ab_seq s;
	double total = 0;
	REQUIRE(ab_seq_init(&s, 0.05, 10) == 0);
	for (unsigned r = 5; r <= 14; r++) {   /* past the budget: nothing more to spend */
		double a = ab_seq_alpha(&s, r);
		CHECK(a >= 0);
		total += a;
	}
	CHECK(total <= 0.05 + 1e-12, "%g", total);
	CHECK_NEAR(total, 0.05, 1e-12);
	CHECK_NEAR(ab_spend(0.05, 0.5), 0.05 * log(1 + (M_E - 1) * 0.5), 1e-15);
	CHECK(ab_spend(0.05, 0) == 0 && ab_spend(0.05, 2) == 0.05);
	ab_seq_free(&s);
}

TEST(sequential_decided_metric_stays_decided)
{
	struct ab_seq s;
	REQUIRE(ab_seq_init(&s, 0.05, 10) == 0);
	json_t *d1 = look("same", "inconclusive", "same", "inconclusive");
	json_t *d2 = look("regression", "regression", "improvement", "regression");
	ab_seq_alpha(&s, 5);
	CHECK(ab_seq_look(&s, d1, 5) == 1);
	ab_seq_alpha(&s, 6);
	CHECK(ab_seq_look(&s, d2, 6) == 0);
	ab_seq_final(&s, d2);
	/* p50 and throughput were decided at round 5: the later look's
	 * words do not move them */
	CHECK(!strcmp(row_str(d2, "p50", "verdict"), "same"));
	CHECK(rounds_of(d2, "p50") == 5 && rounds_of(d2, "achieved_ops") == 5);
	CHECK(!strcmp(row_str(d2, "p99", "verdict"), "regression") && rounds_of(d2, "p99") == 6);
	CHECK(!strcmp(row_str(d2, NULL, "verdict"), "regression"));
	const json_t *sum = json_object_get(d2, "summary");
	CHECK(json_integer_value(json_object_get(sum, "regressions")) == 1);
	CHECK(json_integer_value(json_object_get(sum, "improvements")) == 0);
	CHECK(json_array_size(json_object_get(json_object_get(sum, "sequential"), "looks")) == 2);
	CHECK(strstr(json_string_value(json_array_get(json_object_get(d2, "table"), 0)),
		     "p50 same after 5, p99 regression after 6, achieved_ops same after 5"),
	      "%s", json_string_value(json_array_get(json_object_get(d2, "table"), 0)));
	json_decref(d1);
	json_decref(d2);
	ab_seq_free(&s);
}

TEST(sequential_undecided_says_so)
{
	struct ab_seq s;
	REQUIRE(ab_seq_init(&s, 0.05, 6) == 0);
	json_t *d = look("same", "inconclusive", "same", "inconclusive");
	ab_seq_alpha(&s, 6);
	CHECK(ab_seq_look(&s, d, 6) == 1);
	ab_seq_final(&s, d);
	CHECK(rounds_of(d, "p99") == -1 && rounds_of(d, "p50") == 6);
	CHECK(json_is_false(json_object_get(json_object_get(json_array_get(json_object_get(d, "points"), 0), "p99"),
					    "decided")));
	CHECK(!strcmp(row_str(d, NULL, "verdict"), "inconclusive"));
	CHECK(json_integer_value(json_object_get(json_object_get(d, "summary"), "inconclusive")) == 1);
	json_decref(d);
	ab_seq_free(&s);
}

UNIT_MAIN(aa_pairs_report_no_change, planted_system_p50_found, planted_system_p99_found,
	  host_tail_only_is_no_system_regression, regime_mixed_trials_make_no_verdict,
	  sequential_spends_at_most_alpha, sequential_decided_metric_stays_decided, sequential_undecided_says_so)
