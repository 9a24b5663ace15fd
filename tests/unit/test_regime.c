/*
 * test_regime.c - canary regimes (harness/run/trials.h): which canaries
 * share a floor, the regime most of a point's trials share, the reference
 * a new trial is held against, and the point's canary_regime in run.json.
 */
#include "unit.h"
#include "trials.h"

TEST(same_regime_by_factor)
{
	CHECK(regime_same(100, 104, 2));
	CHECK(regime_same(100, 199, 2));
	CHECK(!regime_same(100, 200, 2), "a factor of 2 exactly is another regime");
	CHECK(!regime_same(520, 100, 2));
	CHECK(regime_same(520, 100, 0), "factor 0: the rule is off");
	CHECK(regime_same(-1, 500, 2), "no canary: nothing to split on");
	CHECK(regime_same(100, 0, 2));
}

TEST(mode_is_the_majority_floor)
{
	/* the host's two floors, 80 % and 20 % */
	static const double v[] = { 101, 520, 98, 104, 100, 511, 99, 102, 97, 100 };
	size_t cnt;
	double m = regime_mode(v, 10, 2, -1, &cnt);
	CHECK(cnt == 8 && m == 100, "mode %g of %zu", m, cnt);
	/* the slow floor in the majority is the mode then */
	static const double w[] = { 520, 515, 100, 530 };
	m = regime_mode(w, 4, 2, -1, &cnt);
	CHECK(cnt == 3 && m == 520, "mode %g of %zu", m, cnt);
	/* a tie goes to the one nearest the tie-break, else to the lower */
	static const double t[] = { 500, 100 };
	CHECK(regime_mode(t, 2, 2, 480, &cnt) == 500 && cnt == 1);
	CHECK(regime_mode(t, 2, 2, -1, &cnt) == 100 && cnt == 1);
	/* values without a canary are left out; none at all: -1 */
	static const double u[] = { -1, 0, 300 };
	CHECK(regime_mode(u, 3, 2, -1, &cnt) == 300 && cnt == 1);
	CHECK(regime_mode(u, 2, 2, -1, &cnt) == -1 && cnt == 0);
	/* factor 0: one regime, the median of all */
	CHECK(regime_mode(v, 10, 0, -1, &cnt) == 100.5 && cnt == 10);
}

TEST(reference_for_a_new_trial)
{
	static const double run[] = { 100, 510, 102, 98, 101 };
	static const double kept[] = { 100, 104 };
	/* against the point's kept trials */
	double ref = regime_reference(kept, 2, 520, run, 5, 2);
	CHECK(ref == 102, "%g", ref);
	CHECK(regime_reference(kept, 2, 98, run, 5, 2) == 100);
	/* no kept trial yet: the run's median, once it has three canaries */
	CHECK(regime_reference(NULL, 0, 520, run, 5, 2) == 101);
	CHECK(regime_reference(NULL, 0, 520, run, 2, 2) == -1, "two canaries say too little");
	/* one kept trial on the slow floor, the new one on the run's usual
	 * floor: a tie that the run's median breaks, so the new trial stays */
	static const double slow[] = { 500 };
	ref = regime_reference(slow, 1, 100, run, 5, 2);
	CHECK(regime_same(ref, 100, 2), "%g", ref);
	/* the point's two kept trials on the slow floor outvote the run */
	static const double slow2[] = { 500, 505 };
	ref = regime_reference(slow2, 2, 100, run, 5, 2);
	CHECK(!regime_same(ref, 100, 2), "%g", ref);
	/* off, or no canary */
	CHECK(regime_reference(kept, 2, 520, run, 5, 0) == -1);
	CHECK(regime_reference(kept, 2, -1, run, 5, 2) == -1);
}

static json_t *entries_of(const double *c, size_t n, const char *reason)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_pack("{s:I,s:f}", "trial", (json_int_t)i, "canary_ns", c[i]);
		if (reason)
			json_object_set_new(e, "reason", json_string(reason));
		json_array_append_new(a, e);
	}
	return a;
}

TEST(point_regime_for_run_json)
{
	static const double one[] = { 100, 104, 98, 101 }, mix[] = { 100, 104, 515, 99 }, aside[] = { 520, 300 };
	json_t *d = entries_of(aside, 2, "canary_regime"), *dist = entries_of(aside, 1, "disturbed");
	json_array_extend(d, dist);
	json_t *e = entries_of(one, 4, NULL), *r = regime_of_point(e, d, 2, 100, NULL);
	REQUIRE(r);
	CHECK(json_number_value(json_object_get(r, "median_ns")) == 100.5);
	CHECK(json_integer_value(json_object_get(r, "trials")) == 4 && json_integer_value(json_object_get(r, "of")) == 4);
	CHECK(json_integer_value(json_object_get(r, "set_aside")) == 2, "a disturbed trial is not the regime's");
	CHECK(json_is_false(json_object_get(r, "mixed")) && !json_object_get(r, "note"));
	json_decref(r);
	json_decref(e);
	e = entries_of(mix, 4, NULL);
	r = regime_of_point(e, NULL, 2, 100, NULL);
	REQUIRE(r);
	const json_t *o = json_array_get(json_object_get(r, "other"), 0);
	CHECK(json_is_true(json_object_get(r, "mixed")) && json_integer_value(json_object_get(r, "trials")) == 3);
	CHECK(json_integer_value(json_object_get(o, "trial")) == 2 && json_number_value(json_object_get(o, "canary_ns")) == 515);
	CHECK(strstr(json_string_value(json_object_get(r, "note")) ?: "", "1 of 4 trials ran in another canary regime"),
	      "%s", json_string_value(json_object_get(r, "note")));
	json_decref(r);
	CHECK(regime_of_point(e, NULL, 0, 100, NULL) == NULL, "off");
	json_decref(e);
	json_decref(d);
	json_decref(dist);
}

TEST(stray_kept_trial)
{
	static const double first[] = { 520, 100, 104 }, two[] = { 520, 100 }, even[] = { 520, 515, 100, 99 },
			    fine[] = { 100, 104, 98 };
	double ref = 0;
	json_t *e = entries_of(first, 3, NULL);
	CHECK(regime_stray(e, 2, &ref) == 0 && ref == 102, "the first trial, once two later ones agree: ref %g", ref);
	CHECK(regime_stray(e, 0, &ref) == -1, "the rule off");
	json_object_set_new(json_array_get(e, 0), "regime_rerun", json_true());
	CHECK(regime_stray(e, 2, &ref) == -1, "a trial that already replaced a stray is never picked again");
	json_decref(e);
	e = entries_of(two, 2, NULL);
	CHECK(regime_stray(e, 2, &ref) == -1, "two trials: no majority");
	json_decref(e);
	e = entries_of(even, 4, NULL);
	CHECK(regime_stray(e, 2, &ref) == -1, "two against two: no clear majority");
	json_decref(e);
	e = entries_of(fine, 3, NULL);
	CHECK(regime_stray(e, 2, &ref) == -1, "one regime");
	json_decref(e);
}

UNIT_MAIN(same_regime_by_factor, mode_is_the_majority_floor, reference_for_a_new_trial, point_regime_for_run_json,
	  stray_kept_trial)
