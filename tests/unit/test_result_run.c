/*
 * test_result_run.c - the reads run/ and trust/ make of run.json
 * (harness/result/result_run.c): a number a point, trial, knee or finding
 * does not have reads as NaN (never 0, which is a count the run made), a
 * string or object it does not have as NULL, an index or trial number as
 * -1; a number of the wrong type is missing too.  And the rule's users
 * conclude the same: a check row without concerns concerns every number,
 * the finding pairs closed-loop points (no offered load on either side)
 * by their outstanding requests.
 */
#include "unit.h"
#include "checks.h"
#include "finding.h"
#include "result.h"

#include <string.h>

TEST(missing_number_is_nan)
{
	json_t *empty = json_object();
	json_t *wrong = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "sent", "5", "unanswered", "0", "unsent",
				  "1", "errors", "x", "ring_full_waits", "2", "measured_ns", "9", "outstanding", "4",
				  "ratio", "1.5", "trial", "3");
	const json_t *objs[] = { empty, wrong, NULL };
	double lo = 1, hi = 1;

	for (const json_t *const *o = objs; *o; o++) {
		const json_t *p = *o;
		CHECK(isnan(result_sent(p)) && isnan(result_unanswered(p)) && isnan(result_unsent(p)));
		CHECK(isnan(result_errors(p)) && isnan(result_ring_full_waits(p)) && isnan(result_measured_ns(p)) &&
		      isnan(result_full_wait_ns(p)));
		CHECK(isnan(result_outstanding(p)) && isnan(result_rnr_naks(p, 1)) && isnan(result_rnr_naks(p, 0)));
		CHECK(isnan(result_regime_set_aside(p)) && result_regime_mixed(p) == -1);
		CHECK(isnan(result_host_count(p, RESULT_TAGGED, "all")) && isnan(result_pair_ratio(p)));
		CHECK(result_sweep_index(p) == -1 && result_trial_no(p) == -1 && json_is_null(result_sweep_value(p)));
		CHECK(result_pct_ci(p, "p99", &lo, &hi) == -1 && isnan(lo) && isnan(hi));
		lo = hi = 1;
		CHECK(result_pair_ci(p, &lo, &hi) == -1 && isnan(lo) && isnan(hi));
		CHECK(!result_check_name(p) && !result_check_warns(p) && !result_check_detail(p) &&
		      !result_check_concerns(p) && !result_check_cause(p));
		CHECK(!result_config(p) && !result_run_id(p) && !result_knee_json(p) && !result_knee_found_by(p) &&
		      !result_knee_loads(p));
		CHECK(!result_rdma_counters(p) && !result_rdma_side(p, 0) && !result_host_stalls(p) &&
		      !result_host_len(p) && result_host_stalls_complete(p));
		CHECK(!result_finding_pairs(p) && !result_finding_pair(p, "oq") && !result_pair_system(p));
	}
	json_decref(empty);
	json_decref(wrong);
}

/* Zero is a count, not a missing one: it reads as 0. */
TEST(zero_is_a_number)
{
	json_t *p = json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:{s:i,s:s},s:{s:i,s:i},s:i,"
			      "s:{s:{s:i},s:o},s:{s:b,s:i},s:{s:[f,f]}}",
			      "sent", 0, "unanswered", 0, "unsent", 0, "errors", 0, "ring_full_waits", 0,
			      "measured_ns", 0, "outstanding", 0, "sweep", "index", 0, "value", "a",
			      "rdma_counters", "rnr_naks_sent", 0, "rnr_naks_received", 0, "trial", 0,
			      "host_tags", "tagged", "all", 0, "stall_ns", json_pack("{s:b}", "complete", 0),
			      "canary_regime", "mixed", 0, "set_aside", 0, "all", "p99_ci", 0.0, 0.0);
	double lo, hi;

	CHECK(result_sent(p) == 0 && result_unanswered(p) == 0 && result_unsent(p) == 0 && result_errors(p) == 0);
	CHECK(result_ring_full_waits(p) == 0 && result_measured_ns(p) == 0 && result_outstanding(p) == 0);
	CHECK(result_rnr_naks(p, 1) == 0 && result_rnr_naks(p, 0) == 0);
	CHECK(result_sweep_index(p) == 0 && !strcmp(json_string_value(result_sweep_value(p)), "a"));
	CHECK(result_trial_no(p) == 0 && result_host_count(p, RESULT_TAGGED, "all") == 0);
	CHECK(isnan(result_host_count(p, RESULT_UNATTRIBUTED, "all")));
	CHECK(!result_host_stalls_complete(p));
	CHECK(result_regime_mixed(p) == 0 && result_regime_set_aside(p) == 0);
	CHECK(result_pct_ci(json_object_get(p, "all"), "p99", &lo, &hi) == 0 && lo == 0 && hi == 0);
	json_decref(p);
}

/* A check row: its fields, and one without "concerns" concerns every
 * number (checks_concerns); a row of another name is not found. */
TEST(check_row_fields)
{
	json_t *checks = json_pack("[{s:s,s:s,s:f,s:n,s:s},{s:s,s:s,s:[s]}]", "name", "stalls", "status", "warn",
				   "value", 0.5, "threshold", "detail", "the host stalled", "name", "placement",
				   "status", "pass", "concerns", "p99");
	const json_t *st = result_check_row(checks, "stalls"), *pl = result_check_row(checks, "placement");

	REQUIRE(st && pl);
	CHECK(result_check_warns(st) && !result_check_warns(pl));
	CHECK(!strcmp(result_check_detail(st), "the host stalled") && !result_check_detail(pl));
	CHECK(json_is_null(result_check_threshold(st)) && json_number_value(result_check_value(st)) == 0.5);
	CHECK(checks_concerns(st) == CHECK_ALL && checks_concerns(pl) == CHECK_P99);
	CHECK(!result_check_row(checks, "unsent"));
	json_decref(checks);
}

/* The run's knee, config and id; the finding's pairs. */
TEST(run_knee_and_finding)
{
	json_t *run = json_pack("{s:s,s:{s:i},s:{s:s,s:f,s:[f,f]}}", "run_id", "r1", "config", "seed", 1, "knee",
				"found_by", "search", "ops", 1000.0, "loads_ops", 500.0, 1000.0);
	json_t *f = json_pack("{s:s,s:s,s:s,s:[{s:s,s:s,s:f,s:[f,f],s:[{},{}]},{s:s,s:s,s:s}]}", "status", "ok",
			      "reference", "oq", "text", "t", "pairs", "system", "rawrpc", "status", "ok", "ratio",
			      4.0, "ci95", 3.5, 4.5, "loads", "system", "deferred", "status", "insufficient", "reason",
			      "why");
	double lo, hi;

	CHECK(!strcmp(result_run_id(run), "r1") && result_config(run) && !strcmp(result_knee_found_by(run), "search"));
	CHECK(json_array_size(result_knee_loads(run)) == 2 && result_knee_json(run));
	CHECK(!strcmp(result_finding_status(f), "ok") && !strcmp(result_finding_reference(f), "oq"));
	const json_t *r = result_finding_pair(f, "rawrpc"), *d = result_finding_pair(f, "deferred");
	REQUIRE(r && d);
	CHECK(result_pair_ratio(r) == 4 && result_pair_ci(r, &lo, &hi) == 0 && lo == 3.5 && hi == 4.5);
	CHECK(result_pair_nloads(r) == 2 && !strcmp(result_pair_status(d), "insufficient"));
	CHECK(isnan(result_pair_ratio(d)) && result_pair_ci(d, &lo, &hi) == -1 && !strcmp(result_pair_reason(d), "why"));
	json_decref(run);
	json_decref(f);
}

UNIT_MAIN(missing_number_is_nan, zero_is_a_number, check_row_fields, run_knee_and_finding)
