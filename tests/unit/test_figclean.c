/*
 * test_figclean.c - the clean load of a claim (harness/figures/figclean.h):
 * the highest load at which neither number compared is flagged and
 * neither point saturated, its fraction of the peak, and the reason when
 * there is none, on fixed points shaped like a knee search's 7 fractions.
 */
#include "unit.h"
#include "figclean.h"

#define KNEE 100000.0

static const double fr[7] = { 0.1, 0.5, 0.8, 0.9, 1.0, 1.1, 1.25 };

/* A system's 7 points: value base + 100 x index ns; saturated from the
 * index sat_from on (7: never); flagged (by warns) from flag_from on. */
static void series(struct fc_point *p, double base, int sat_from, int flag_from, const char *warns)
{
	for (int i = 0; i < 7; i++)
		p[i] = (struct fc_point){ fr[i] * KNEE, base + 100 * i, i >= sat_from, i >= flag_from,
					  i >= flag_from ? warns : "" };
}

TEST(clean_load_below_the_knee)
{
	/* the small host: both saturated from the knee, oq flagged from 80 %
	 * (its client fell behind), rawrpc clean below the knee */
	struct fc_point a[7], b[7];
	struct fc_result r;
	series(a, 300, 4, 2, "schedule_lag,arrival_fit");
	series(b, 1300, 4, 7, "");
	fc_clean_load(a, 7, b, 7, "oq", "rawrpc", KNEE, &r);
	REQUIRE(r.found, "why: %s", r.why);
	CHECK_NEAR(r.load, 50000, 0);
	CHECK_NEAR(r.frac, 0.5, 1e-12);
	CHECK_NEAR(r.a, 400, 0);
	CHECK_NEAR(r.b, 1400, 0);
	CHECK_NEAR(r.change, 100.0 * (400.0 / 1400 - 1), 1e-9);
	CHECK(r.nloads == 7 && r.nclean == 2, "nloads %zu nclean %zu", r.nloads, r.nclean);
	CHECK(r.why[0] == '\0', "why: %s", r.why);
}

TEST(the_highest_clean_load_wins_even_above_the_knee)
{
	/* neither saturates before 1.25 x: 1.1 x the knee is the clean load */
	struct fc_point a[7], b[7];
	struct fc_result r;
	series(a, 300, 6, 7, "");
	series(b, 1300, 7, 7, "");
	fc_clean_load(a, 7, b, 7, "oq", "deferred", KNEE, &r);
	REQUIRE(r.found);
	CHECK_NEAR(r.load, 110000, 1e-6);
	CHECK_NEAR(r.frac, 1.1, 1e-12);
	/* without a peak the load is named, its fraction is not */
	fc_clean_load(a, 7, b, 7, "oq", "deferred", NAN, &r);
	CHECK(r.found && isnan(r.frac), "frac %g", r.frac);
}

TEST(none_when_both_are_flagged_everywhere)
{
	struct fc_point a[7], b[7];
	struct fc_result r;
	series(a, 300, 7, 0, "schedule_lag");
	series(b, 1300, 7, 0, "trial_agreement,placement");
	fc_clean_load(a, 7, b, 7, "oq", "rawrpc", KNEE, &r);
	CHECK(!r.found && isnan(r.load) && isnan(r.change) && r.nclean == 0);
	CHECK(!strcmp(r.why, "no load where both are clean (of 7 loads): oq flagged by schedule_lag at every load; "
		      "rawrpc flagged by trial_agreement, placement at every load"), "why: %s", r.why);
	/* the same checks on both: said once */
	series(b, 1300, 7, 0, "schedule_lag");
	fc_clean_load(a, 7, b, 7, "oq", "rawrpc", KNEE, &r);
	CHECK(!strcmp(r.why, "no load where both are clean (of 7 loads): both flagged by schedule_lag at every load"),
	      "why: %s", r.why);
}

TEST(none_when_one_is_flagged_everywhere)
{
	/* rawrpc clean below the knee, oq's client behind at every load */
	struct fc_point a[7], b[7];
	struct fc_result r;
	series(a, 300, 7, 0, "schedule_lag");
	series(b, 1300, 4, 7, "");
	fc_clean_load(a, 7, b, 7, "oq", "rawrpc", KNEE, &r);
	CHECK(!r.found);
	CHECK(!strcmp(r.why, "no load where both are clean (of 7 loads): oq flagged by schedule_lag at every load; "
		      "rawrpc clean at 4 of 7 loads (saturated at 3)"), "why: %s", r.why);
	/* rawrpc clean everywhere: only oq is named */
	series(b, 1300, 7, 7, "");
	fc_clean_load(a, 7, b, 7, "oq", "rawrpc", KNEE, &r);
	CHECK(!strcmp(r.why, "no load where both are clean (of 7 loads): oq flagged by schedule_lag at every load"),
	      "why: %s", r.why);
}

TEST(none_when_only_saturated_points_exist)
{
	struct fc_point a[7], b[7];
	struct fc_result r;
	series(a, 300, 0, 7, "");
	series(b, 1300, 0, 7, "");
	fc_clean_load(a, 7, b, 7, "oq", "rawrpc", KNEE, &r);
	CHECK(!r.found && r.nloads == 7);
	CHECK(!strcmp(r.why, "no load where both are clean (of 7 loads): both saturated at every load"), "why: %s",
	      r.why);
	/* a saturated point that is also flagged reads as saturated */
	series(a, 300, 0, 0, "stationarity");
	fc_clean_load(a, 7, b, 7, "oq", "rawrpc", KNEE, &r);
	CHECK(!strcmp(r.why, "no load where both are clean (of 7 loads): both saturated at every load"), "why: %s",
	      r.why);
}

TEST(mixed_reasons_are_counted)
{
	/* oq saturated from the knee and flagged below it; rawrpc flagged
	 * at 80 % and 90 %, saturated from the knee */
	struct fc_point a[7], b[7];
	struct fc_result r;
	series(a, 300, 4, 0, "schedule_lag");
	series(b, 1300, 4, 2, "trial_agreement");
	fc_clean_load(a, 7, b, 7, "oq", "rawrpc", KNEE, &r);
	CHECK(!r.found);
	CHECK(!strcmp(r.why, "no load where both are clean (of 7 loads): oq saturated at 3 loads and flagged by "
		      "schedule_lag at the other 4; rawrpc clean at 2 of 7 loads (saturated at 3, flagged by "
		      "trial_agreement at 2)"), "why: %s", r.why);
}

TEST(only_loads_where_both_have_a_number_count)
{
	/* unsorted; the baseline has no point at 90 %, a median of 0 at 80 %
	 * (nothing to divide by) and one at 30 Kops/s that oq lacks */
	struct fc_point a[4] = {
		{ 90000, 500, 0, 0, "" }, { 10000, 300, 0, 0, "" }, { 80000, 450, 0, 0, "" }, { 50000, 400, 0, 0, "" },
	};
	struct fc_point b[4] = {
		{ 50000, 2000, 0, 0, "" }, { 80000, 0, 0, 0, "" }, { 10000, 1000, 0, 0, "" }, { 30000, 1500, 0, 0, "" },
	};
	struct fc_result r;
	fc_clean_load(a, 4, b, 4, "oq", "rawrpc", KNEE, &r);
	REQUIRE(r.found);
	CHECK_NEAR(r.load, 50000, 0);
	CHECK_NEAR(r.change, -80, 1e-9);
	CHECK(r.nloads == 2 && r.nclean == 2, "nloads %zu nclean %zu", r.nloads, r.nclean);
	/* no common load at all */
	fc_clean_load(a, 1, b + 3, 1, "oq", "erpc", KNEE, &r);
	CHECK(!r.found && r.nloads == 0);
	CHECK(!strcmp(r.why, "no load where both oq and erpc have a number"), "why: %s", r.why);
	fc_clean_load(NULL, 0, b, 4, "oq", "rawrpc", KNEE, &r);
	CHECK(!r.found && r.nloads == 0);
}

TEST(check_lists_are_spaced_and_merged)
{
	char buf[64];
	struct fc_point a[3] = { { 1, 1, 0, 1, "b,a" }, { 2, 1, 0, 1, "a,c" }, { 3, 1, 0, 1, NULL } };
	struct fc_point b[3] = { { 1, 1, 0, 0, "" }, { 2, 1, 0, 0, "" }, { 3, 1, 0, 0, "" } };
	struct fc_result r;

	fc_list_spaced(buf, sizeof buf, "schedule_lag,arrival_fit");
	CHECK(!strcmp(buf, "schedule_lag, arrival_fit"), "%s", buf);
	fc_list_spaced(buf, 8, "abc,defgh");
	CHECK(!strcmp(buf, "abc, de"), "%s", buf);
	fc_list_spaced(buf, sizeof buf, NULL);
	CHECK(buf[0] == '\0');
	/* each check once, in the order first seen; an unnamed flag adds none */
	fc_clean_load(a, 3, b, 3, "oq", "rawrpc", 2, &r);
	CHECK(!strcmp(r.why, "no load where both are clean (of 3 loads): oq flagged by b, a, c at every load"),
	      "why: %s", r.why);
}

/* Like with like: which floors of two points a claim compares. */
TEST(regimes_pair_like_with_like)
{
	/* oq's trials on two floors: 3 at 540 ns (judged), 2 at 140 ns (too
	 * few to judge); rawrpc on one floor */
	struct fc_regime mixed[2] = { { 540, 3, 1 }, { 140, 2, 0 } };
	struct fc_regime slow[1] = { { 550, 5, 1 } }, fast[1] = { { 150, 5, 1 } };
	int ia, ib;

	CHECK(fc_pair_regimes(mixed, 2, slow, 1, 2.0, &ia, &ib) == 0 && ia == 0 && ib == 0, "%d %d", ia, ib);
	/* the floor they share is the one oq has too few trials on: none */
	CHECK(fc_pair_regimes(mixed, 2, fast, 1, 2.0, &ia, &ib) == -1 && ia == -1 && ib == -1);
	/* both mixed: the shared floor whose smaller side holds the most,
	 * though the other floor holds more trials in all (4 and 4 against
	 * 8 and 3) */
	struct fc_regime m2[2] = { { 150, 8, 1 }, { 545, 4, 1 } }, m8[2] = { { 145, 3, 1 }, { 555, 4, 1 } };
	CHECK(fc_pair_regimes(m2, 2, m8, 2, 2.0, &ia, &ib) == 0 && ia == 1 && ib == 1, "%d %d", ia, ib);
	struct fc_regime m3[2] = { { 555, 4, 1 }, { 145, 3, 1 } };
	/* equal smaller sides: more trials in all wins */
	struct fc_regime m4[2] = { { 150, 3, 1 }, { 545, 3, 1 } };
	CHECK(fc_pair_regimes(m4, 2, m3, 2, 2.0, &ia, &ib) == 0 && ia == 1 && ib == 0, "%d %d", ia, ib);
	/* a full tie: the first */
	struct fc_regime m7[2] = { { 150, 4, 1 }, { 545, 3, 1 } };
	CHECK(fc_pair_regimes(m7, 2, m3, 2, 2.0, &ia, &ib) == 0 && ia == 0 && ib == 1, "%d %d", ia, ib);
	struct fc_regime m5[2] = { { 150, 3, 1 }, { 545, 3, 1 } }, m6[2] = { { 555, 3, 1 }, { 145, 4, 1 } };
	CHECK(fc_pair_regimes(m5, 2, m6, 2, 2.0, &ia, &ib) == 0 && ia == 0 && ib == 1, "%d %d", ia, ib);
	/* the factor decides what one floor is */
	CHECK(fc_pair_regimes(mixed, 1, fast, 1, 5.0, &ia, &ib) == 0 && ia == 0 && ib == 0);
	CHECK(fc_pair_regimes(mixed, 1, fast, 1, 3.0, &ia, &ib) == -1);
	CHECK(fc_pair_regimes(mixed, 0, slow, 1, 2.0, &ia, &ib) == -1);
}

TEST(a_check_is_dropped_from_a_list)
{
	char buf[64];

	fc_list_without(buf, sizeof buf, "trial_agreement,stalls", "trial_agreement");
	CHECK(!strcmp(buf, "stalls"), "%s", buf);
	fc_list_without(buf, sizeof buf, "ci_p99,trial_agreement,stalls", "trial_agreement");
	CHECK(!strcmp(buf, "ci_p99,stalls"), "%s", buf);
	fc_list_without(buf, sizeof buf, "trial_agreement", "trial_agreement");
	CHECK(buf[0] == '\0', "%s", buf);
	fc_list_without(buf, sizeof buf, "trial_agreement_x,a", "trial_agreement");
	CHECK(!strcmp(buf, "trial_agreement_x,a"), "a name is dropped whole: %s", buf);
	fc_list_without(buf, sizeof buf, NULL, "trial_agreement");
	CHECK(buf[0] == '\0');
}

UNIT_MAIN(clean_load_below_the_knee, the_highest_clean_load_wins_even_above_the_knee,
	  none_when_both_are_flagged_everywhere, none_when_one_is_flagged_everywhere,
	  none_when_only_saturated_points_exist, mixed_reasons_are_counted, only_loads_where_both_have_a_number_count,
	  check_lists_are_spaced_and_merged, regimes_pair_like_with_like, a_check_is_dropped_from_a_list)
