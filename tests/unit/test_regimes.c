/*
 * test_regimes.c - a point's numbers per canary regime and the finding's
 * rounds paired like with like (issue 50, deliverable 3; docs/trust.md,
 * "Canary regimes" and "The finding").
 *
 * Synthetic trial entries as `oqb run` keeps them (trial number, canary,
 * lat_ns and host_tags.sys_lat_ns per class with their encodings, tagged
 * counts, achieved_ops) on two or three floors:
 * - regime_of_point gives a mixed point "regimes": the right trials in
 *   each, the point's own regime first and then by size, each one's n and
 *   percentiles those of its trials' histograms merged here by hand, its
 *   untagged P99, tagged fraction and achieved_ops; an unmixed point gets
 *   none;
 * - the finding pairs trials of one round and leaves out rounds whose two
 *   sides ran on different floors, saying how many: its per-load medians
 *   are those of the kept rounds' trials merged by hand.
 */
#include "unit.h"
#include "checks.h"
#include "finding.h"
#include "hist.h"
#include "result.h"
#include "trials.h"

/* 200 values around med (+-20 %), every 10th of them tagged: the
 * untagged ones go to sys as well. */
static void fill(struct hist *h, struct hist *sys, double med, uint64_t *tagged)
{
	for (int i = 0; i < 200; i++) {
		uint64_t v = (uint64_t)(med * (0.8 + 0.002 * i));
		hist_record(h, v);
		if (i % 10 == 3)
			(*tagged)++;
		else
			hist_record(sys, v);
	}
}

/* One trial entry: trial number no, canary can, nilext median med and
 * non-nilext 2 x med, achieved ach. */
static json_t *entry(long no, double can, double med, double ach)
{
	struct hist *h[3], *s[3];
	uint64_t tg[3] = { 0 };
	for (int c = 0; c < 3; c++) {
		h[c] = hist_new();
		s[c] = hist_new();
	}
	fill(h[1], s[1], med, &tg[1]);
	fill(h[2], s[2], 2 * med, &tg[2]);
	hist_merge(h[0], h[1]);
	hist_merge(h[0], h[2]);
	hist_merge(s[0], s[1]);
	hist_merge(s[0], s[2]);
	tg[0] = tg[1] + tg[2];
	json_t *e = json_pack("{s:I,s:f,s:f,s:{s:o,s:o,s:o},s:{s:{s:o,s:o,s:o},s:{s:I,s:I,s:I}}}", "trial",
			      (json_int_t)no, "canary_ns", can, "achieved_ops", ach, "lat_ns", "all",
			      result_hist_summary(h[0]), "nilext", result_hist_summary(h[1]), "non_nilext",
			      result_hist_summary(h[2]), "host_tags", "sys_lat_ns", "all", result_hist_summary(s[0]),
			      "nilext", result_hist_summary(s[1]), "non_nilext", result_hist_summary(s[2]), "tagged",
			      "all", (json_int_t)tg[0], "nilext", (json_int_t)tg[1], "non_nilext", (json_int_t)tg[2]);
	for (int c = 0; c < 3; c++) {
		hist_free(h[c]);
		hist_free(s[c]);
	}
	return e;
}

/* The entries of es listed in idx (-1 ends it), class cls merged by hand:
 * lat_ns (sys 0) or the untagged requests (sys 1). */
static void by_hand(struct hist *sum, const json_t *es, const int *idx, const char *cls, int sys)
{
	struct hist *one = hist_new();
	char e[256];
	hist_reset(sum);
	for (; *idx >= 0; idx++) {
		const json_t *t = json_array_get(es, (size_t)*idx);
		int rc = sys ? result_trial_sys_hist(one, t, cls, e, sizeof e)
			     : result_class_hist(one, result_lat(t, NULL), cls, e, sizeof e);
		CHECK(rc == 0, "%s", e);
		hist_merge(sum, one);
	}
	hist_free(one);
}

/* regime rg's trials are exactly want (-1 ended). */
static int trials_are(const json_t *rg, const int *want)
{
	const json_t *t = result_regime_trials(rg);
	size_t n = 0;
	for (; want[n] >= 0; n++)
		if (json_integer_value(json_array_get(t, n)) != want[n])
			return 0;
	return json_array_size(t) == n;
}

TEST(mixed_point_gets_its_regimes)
{
	/* trials 0, 1, 3 on the 100 ns floor, 2 and 4 on the 520 ns one;
	 * the slow floor's trials are slower, as on the VM */
	json_t *es = json_array();
	json_array_append_new(es, entry(0, 100, 1000, 2000));
	json_array_append_new(es, entry(1, 104, 1100, 1990));
	json_array_append_new(es, entry(2, 520, 3000, 1800));
	json_array_append_new(es, entry(3, 98, 1050, 2010));
	json_array_append_new(es, entry(4, 515, 3300, 1700));
	json_t *r = regime_of_point(es, NULL, 2, 101, NULL);
	REQUIRE(r && json_is_true(json_object_get(r, "mixed")));
	json_t *p = json_pack("{s:o}", "canary_regime", r);
	const json_t *rgs = result_regimes(p);
	REQUIRE(json_array_size(rgs) == 2, "%zu regimes", json_array_size(rgs));
	const json_t *a = json_array_get(rgs, 0), *b = json_array_get(rgs, 1);
	static const int ia[] = { 0, 1, 3, -1 }, ib[] = { 2, 4, -1 };
	CHECK(trials_are(a, ia) && trials_are(b, ib), "membership");
	CHECK(result_canary_ns(a) == 100 && result_canary_ns(b) == 517.5, "%g %g", result_canary_ns(a),
	      result_canary_ns(b));
	CHECK_NEAR(result_achieved(a), (2000 + 1990 + 2010) / 3.0, 1e-9);
	CHECK_NEAR(result_achieved(b), (1800 + 1700) / 2.0, 1e-9);
	/* each class's numbers are those of the regime's trials merged */
	static const char *const cls[] = { "all", "nilext", "non_nilext" };
	struct hist *h = hist_new();
	for (int c = 0; c < 3; c++) {
		for (int g = 0; g < 2; g++) {
			const json_t *rg = g ? b : a;
			by_hand(h, es, g ? ib : ia, cls[c], 0);
			const json_t *s = result_lat(rg, cls[c]);
			CHECK(result_n(s) == (double)h->n, "%s n %g vs %llu", cls[c], result_n(s), (unsigned long long)h->n);
			CHECK(result_num(s, "p50") == (double)hist_percentile(h, 50), "%s p50", cls[c]);
			CHECK(result_num(s, "p99") == (double)hist_percentile(h, 99), "%s p99", cls[c]);
			CHECK(json_array_size(result_ci(s, "p50")) == 2 && json_array_size(result_ci(s, "p99")) == 2);
			CHECK(!json_object_get(s, "hdr"), "no encoding: its trials hold it");
			uint64_t n = h->n;
			by_hand(h, es, g ? ib : ia, cls[c], 1);
			const json_t *sy = result_sys_lat(rg, cls[c]);
			CHECK(result_n(sy) == (double)h->n && result_num(sy, "p99") == (double)hist_percentile(h, 99),
			      "%s untagged", cls[c]);
			CHECK_NEAR(result_tagged_frac(rg, cls[c]), (double)(n - h->n) / (double)n, 1e-12);
		}
	}
	/* the regimes really differ: nobody reads one machine's numbers as the other's */
	CHECK(result_num(result_lat(b, "all"), "p50") > 2 * result_num(result_lat(a, "all"), "p50"));
	char line[512];
	regime_line(line, sizeof line, p);
	CHECK(strstr(line, "regimes 100 ns (3 trials) p50 ") && strstr(line, " | 518 ns (2) p50 "), "%s", line);
	hist_free(h);
	json_decref(p);
	json_decref(es);
}

TEST(regimes_ordered_by_size_own_first)
{
	/* three floors, 3 : 1 : 2 trials; the second is the largest of the rest */
	json_t *es = json_array();
	static const double can[] = { 100, 2000, 520, 101, 515, 99 };
	for (int t = 0; t < 6; t++)
		json_array_append_new(es, entry(t, can[t], 1000, 1000));
	json_t *p = json_pack("{s:o}", "canary_regime", regime_of_point(es, NULL, 2, 100, NULL));
	const json_t *rgs = result_regimes(p);
	static const int i0[] = { 0, 3, 5, -1 }, i1[] = { 2, 4, -1 }, i2[] = { 1, -1 };
	REQUIRE(json_array_size(rgs) == 3);
	CHECK(trials_are(json_array_get(rgs, 0), i0) && trials_are(json_array_get(rgs, 1), i1) &&
	      trials_are(json_array_get(rgs, 2), i2));
	json_decref(p);
	/* a tie broken toward the run's median: the point's own regime (the
	 * slow floor here) comes first */
	json_array_clear(es);
	json_array_append_new(es, entry(0, 100, 1000, 1000));
	json_array_append_new(es, entry(1, 520, 1000, 1000));
	p = json_pack("{s:o}", "canary_regime", regime_of_point(es, NULL, 2, 500, NULL));
	rgs = result_regimes(p);
	REQUIRE(json_array_size(rgs) == 2);
	CHECK(result_canary_ns(json_array_get(rgs, 0)) == 520 && result_canary_ns(json_array_get(rgs, 1)) == 100);
	json_decref(p);
	json_decref(es);
}

TEST(unmixed_point_has_no_regimes)
{
	json_t *es = json_array();
	for (int t = 0; t < 4; t++)
		json_array_append_new(es, entry(t, 100 + t, 1000, 1000));
	json_t *r = regime_of_point(es, NULL, 2, 100, NULL);
	REQUIRE(r);
	CHECK(json_is_false(json_object_get(r, "mixed")) && !json_object_get(r, "regimes"));
	json_t *p = json_pack("{s:o}", "canary_regime", r);
	CHECK(result_regimes(p) == NULL);
	char line[64];
	regime_line(line, sizeof line, p);
	CHECK(line[0] == '\0');
	json_decref(p);
	json_decref(es);
}

/* A point of system s at load with trials (number, canary, median). */
static json_t *fpoint(const char *s, double load, const double (*tr)[3], int n)
{
	json_t *ts = json_array();
	for (int t = 0; t < n; t++)
		json_array_append_new(ts, entry((long)tr[t][0], tr[t][1], tr[t][2], 1000));
	return json_pack("{s:s,s:f,s:b,s:o,s:{s:{s:i},s:{s:i}},s:{s:f}}", "system", s, "offered_ops", load,
			 "saturated", 0, "trials", ts, "lat_ns", "all", "n", 400 * n, "nilext", "n", 200 * n,
			 "canary_regime", "factor", 2.0);
}

/* The median of class nilext of point p's trials listed in idx, merged. */
static double kept_median(const json_t *p, const int *idx)
{
	struct hist *h = hist_new();
	by_hand(h, result_trials(p), idx, "nilext", 0);
	double m = (double)hist_percentile(h, 50);
	hist_free(h);
	return m;
}

TEST(a_regime_of_three_trials_judges_its_own_agreement)
{
	/* the 100 ns floor's three trials agree with each other (p50s within
	 * 10 %), so its own trial_agreement passes, where the point's, over
	 * both floors (p50s 1.0-3.3 us), warns; the 520 ns floor's two
	 * trials are too few to judge */
	json_t *es = json_array();
	json_array_append_new(es, entry(0, 100, 1000, 2000));
	json_array_append_new(es, entry(1, 104, 1020, 1990));
	json_array_append_new(es, entry(2, 520, 3000, 1800));
	json_array_append_new(es, entry(3, 98, 1010, 2010));
	json_array_append_new(es, entry(4, 515, 3300, 1700));
	struct check_conf cc;
	checks_defaults(&cc);
	json_t *r = regime_of_point(es, NULL, 2, 101, &cc);
	REQUIRE(r);
	json_t *p = json_pack("{s:o}", "canary_regime", r);
	const json_t *rgs = result_regimes(p);
	REQUIRE(json_array_size(rgs) == 2, "%zu regimes", json_array_size(rgs));
	const json_t *a = json_object_get(json_array_get(rgs, 0), "trial_agreement");
	REQUIRE(a, "the 3-trial regime has its row");
	CHECK(!strcmp(json_string_value(json_object_get(a, "status")) ?: "", "pass"), "%s",
	      json_string_value(json_object_get(a, "detail")));
	CHECK(!json_object_get(json_array_get(rgs, 1), "trial_agreement"), "2 trials: not judged");
	/* the same trials over both floors disagree on the median */
	struct hist *t[5], *m = hist_new();
	char e[256];
	json_t *rows = json_array();
	for (size_t i = 0; i < 5; i++) {
		t[i] = hist_new();
		CHECK(result_class_hist(t[i], result_lat(json_array_get(es, i), NULL), "all", e, sizeof e) == 0, "%s", e);
		hist_merge(m, t[i]);
	}
	CHECK(checks_trials(&cc, rows, t, 5, m, NULL, NULL) == 0 && json_array_size(rows) == 1);
	CHECK(!strcmp(json_string_value(json_object_get(json_array_get(rows, 0), "status")) ?: "", "warn"),
	      "the mixed trials must disagree for the test to mean anything");
	for (size_t i = 0; i < 5; i++)
		hist_free(t[i]);
	hist_free(m);
	json_decref(rows);
	json_decref(p);
	json_decref(es);
}

TEST(finding_pairs_rounds_like_with_like)
{
	/* four rounds at two loads.  Round 3: oq ran on the slow floor and
	 * rawrpc on the fast one (the floor flipped mid-round): left out.
	 * Round 2: both on the slow floor, both slower: kept, a like pair. */
	static const double oq[4][3] = { { 0, 100, 1000 }, { 1, 102, 1020 }, { 2, 520, 3000 }, { 3, 515, 3100 } };
	static const double rr[4][3] = { { 0, 101, 4000 }, { 1, 99, 4100 }, { 2, 530, 12000 }, { 3, 100, 4050 } };
	json_t *pts = json_array();
	for (int l = 0; l < 2; l++) {
		json_array_append_new(pts, fpoint("oq", 1000.0 * (l + 1), oq, 4));
		json_array_append_new(pts, fpoint("rawrpc", 1000.0 * (l + 1), rr, 4));
	}
	json_t *run = json_pack("{s:s,s:o}", "schema", "oqbench.run/4", "points", pts);
	json_t *f = finding_of_run(run);
	const json_t *pr = result_finding_pair(f, "rawrpc");
	REQUIRE(pr, "%s", result_finding_text(f, NULL));
	CHECK(!strcmp(result_pair_status(pr) ?: "", "ok"), "%s", result_finding_text(f, NULL));
	CHECK(result_pair_left_out(pr) == 2, "one round left out at each of 2 loads: %g", result_pair_left_out(pr));
	static const int kept[] = { 0, 1, 2, -1 };
	double want = kept_median(json_array_get(pts, 1), kept) / kept_median(json_array_get(pts, 0), kept);
	CHECK_NEAR(result_pair_ratio(pr), want, want * 1e-9);
	/* all four rounds would have given another ratio: the pairing matters */
	static const int all4[] = { 0, 1, 2, 3, -1 };
	double mixed = kept_median(json_array_get(pts, 1), all4) / kept_median(json_array_get(pts, 0), all4);
	CHECK(fabs(mixed - want) > 0.05 * want, "%g vs %g", mixed, want);
	CHECK(strstr(result_finding_text(f, NULL), "1 round(s) left out") == NULL &&
	      strstr(result_finding_text(f, NULL), "2 round(s) left out, their two sides on different canary floors"),
	      "%s", result_finding_text(f, NULL));
	json_decref(f);

	/* three rounds left out at one load leave it one: that load goes, and
	 * with one load left the pair says why it has no number */
	json_t *p1 = json_array_get(pts, 1);
	size_t i;
	json_t *t;
	json_array_foreach(result_trials(p1), i, t)
		if (i >= 1)
			json_object_set_new(t, "canary_ns", json_real(2000));
	f = finding_of_run(run);
	pr = result_finding_pair(f, "rawrpc");
	CHECK(pr && !strcmp(result_pair_status(pr) ?: "", "insufficient") &&
	      strstr(result_pair_reason(pr) ?: "", "on one canary floor"), "%s", result_finding_text(f, NULL));
	json_decref(f);
	json_decref(run);
}

UNIT_MAIN(mixed_point_gets_its_regimes, regimes_ordered_by_size_own_first, unmixed_point_has_no_regimes,
	  a_regime_of_three_trials_judges_its_own_agreement, finding_pairs_rounds_like_with_like)
