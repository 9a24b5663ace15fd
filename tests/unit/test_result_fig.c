/*
 * test_result_fig.c - harness/result/result_fig.c, the reads verdict/ and
 * figures/ make of run.json: a number the run does not have is NaN (never
 * 0: a closed-loop point's offered load, a run without a knee, a config
 * without the setting), a string NULL and a flag false; a value that is
 * there reads back as written, whatever JSON number type holds it; a
 * point without a sweep has index -1 and value JSON null, so two such
 * points are at the same sweep value; and the history's testbed keeps the
 * transport's device and never its counters.
 */
#include "unit.h"
#include "result.h"

#include <math.h>
#include <string.h>

static json_t *parse(const char *s)
{
	json_error_t e;
	json_t *j = json_loads(s, 0, &e);
	if (!j)
		fprintf(stderr, "  bad test JSON: %s\n", e.text);
	return j;
}

TEST(missing_numbers_are_nan)
{
	json_t *run = parse("{\"config\": {\"clients\": {\"threads\": 2}}, \"points\": ["
			    "{\"system\": \"oq\", \"lat_ns\": {\"all\": {\"p50\": 10}}},"
			    "{\"system\": \"oq\", \"outstanding\": 0, \"workload\": {\"value_size\": 0}}]}");
	REQUIRE(run);
	const json_t *p = json_array_get(result_points(run), 0), *q = json_array_get(result_points(run), 1);

	CHECK(isnan(result_outstanding(p)), "an open-loop point has no requests in flight: NaN, not 0");
	CHECK(result_outstanding(q) == 0, "a written 0 is 0");
	CHECK(isnan(result_value_size(p)) && result_value_size(q) == 0);
	CHECK(isnan(result_n(result_lat(p, "all"))), "a summary without n: NaN");
	CHECK(isnan(result_n(result_lat(p, "nilext"))), "no such class: NaN");
	CHECK(isnan(result_service_every(p)));
	CHECK(isnan(result_setting_num(run, "clients.processes")), "a setting the config leaves out: NaN");
	CHECK(result_setting_num(run, "clients.threads") == 2);
	CHECK(isnan(result_cpus_online(run)));
	CHECK(isnan(result_knee_ops(run, NULL)) && isnan(result_knee_confirm(run)), "no knee: NaN");
	double past = 0, sat = 0;
	result_knee_past(run, &past, &sat);
	CHECK(isnan(past) && isnan(sat));
	CHECK(result_repeat(p) == -1 && !result_flagged(p) && !result_durable(p));
	CHECK(!result_device(p) && !result_transport_name(run) && !result_error_message(run));
	struct result_lincheck lc;
	CHECK(result_lincheck(p, &lc) == -1 && !lc.verdict, "a point not checked has no verdict");
	struct result_ident id;
	result_ident(run, &id);
	CHECK(!id.name && !id.run_id && id.git_dirty == -1);
	double sent = result_sent(p), unsent = result_unsent(p), unans = result_unanswered(p);
	CHECK(isnan(sent) && isnan(unsent) && isnan(unans), "counts not recorded: NaN");
	/* none of the above on a NULL run or point either */
	CHECK(isnan(result_outstanding(NULL)) && isnan(result_setting_num(NULL, "clients.threads")) &&
	      !result_config(NULL) && result_sweep_index(NULL) == -1);
	json_decref(run);
}

TEST(present_values_read_back)
{
	json_t *run = parse("{\"name\": \"r\", \"git_dirty\": false, \"error\": {\"message\": \"why\"},"
			    "\"knee\": {\"found_by\": \"search\", \"ops\": 5000.0, \"search\": {\"confirm\": 2},"
			    "  \"past_knee\": {\"points\": 3, \"saturated\": 1}},"
			    "\"config\": {\"sweep\": {\"key\": \"verbs.recv_mode\", \"values\": [\"srq\"]}},"
			    "\"points\": [{\"system\": \"oq\", \"outstanding\": 4.0, \"flagged\": true, \"durable\": true,"
			    "  \"repeat\": 3, \"sweep\": {\"key\": \"verbs.recv_mode\", \"value\": \"srq\", \"index\": 2},"
			    "  \"server\": {\"transport\": {\"device\": \"rxe0\"}, \"service_ns\": {\"sample_every\": 8}},"
			    "  \"check\": {\"verdict\": \"violation\", \"ops\": 90, \"keys_violation\": 2},"
			    "  \"lat_ns\": {\"all\": {\"n\": 7, \"p50_ci\": [1, 2]}}}]}");
	REQUIRE(run);
	const json_t *p = json_array_get(result_points(run), 0);
	const char *by = NULL;
	double past, sat;

	CHECK(result_outstanding(p) == 4 && result_flagged(p) && result_durable(p) && result_repeat(p) == 3);
	CHECK(result_sweep_index(p) == 2 && !strcmp(result_sweep_key(p), "verbs.recv_mode"));
	CHECK(json_is_string(result_sweep_value(p)) && result_has_sweep(p));
	CHECK(!strcmp(result_device(p), "rxe0") && result_service_every(p) == 8);
	CHECK(result_n(result_lat(p, "all")) == 7 && json_array_size(result_ci(result_lat(p, "all"), "p50")) == 2);
	CHECK(!result_ci(result_lat(p, "all"), "p99"));
	struct result_lincheck lc;
	CHECK(result_lincheck(p, &lc) == 0 && !strcmp(lc.verdict, "violation") && lc.ops == 90 &&
	      lc.keys_violation == 2);
	CHECK(result_knee_ops(run, &by) == 5000 && by && !strcmp(by, "search"));
	CHECK(result_knee_confirm(run) == 2);
	result_knee_past(run, &past, &sat);
	CHECK(past == 3 && sat == 1);
	CHECK(!strcmp(result_setting_str(run, "sweep.key"), "verbs.recv_mode"));
	CHECK(json_array_size(result_setting(run, "sweep.values")) == 1);
	CHECK(!strcmp(result_error_message(run), "why"));
	struct result_ident id;
	result_ident(run, &id);
	CHECK(!strcmp(id.name, "r") && id.git_dirty == 0);
	json_decref(run);
}

TEST(points_without_sweep_share_one_value)
{
	json_t *a = parse("{\"system\": \"oq\"}"), *b = parse("{\"system\": \"oq\", \"sweep\": 3}");
	REQUIRE(a && b);
	CHECK(!result_has_sweep(a) && !result_has_sweep(b), "a sweep that is not an object is none");
	CHECK(json_is_null(result_sweep_value(a)) && json_equal(result_sweep_value(a), result_sweep_value(b)));
	CHECK(result_sweep_index(a) == -1 && !result_sweep_key(a));
	json_decref(a);
	json_decref(b);
}

TEST(testbed_keeps_devices_not_counters)
{
	json_t *run = parse("{\"hosts\": {\"server\": \"s\"}, \"environment\": {\"cpus_online\": 2},"
			    "\"config\": {\"server\": {\"cpus\": [1]}},"
			    "\"transport\": {\"name\": \"verbs\", \"device\": \"rxe0\", \"counters\": {\"x\": 1}}}");
	REQUIRE(run);
	json_t *t = result_testbed(run);
	REQUIRE(t);
	const json_t *tr = json_object_get(t, "transport");
	CHECK(json_object_get(tr, "device") && !json_object_get(tr, "counters"), "counters change run to run");
	CHECK(json_is_array(json_object_get(t, "server_cpus")));
	CHECK(!strcmp(json_string_value(json_object_get(t, "client_cpus")), "auto"), "no clients.cpus: auto");
	CHECK(json_is_null(json_object_get(t, "verbs_device")) && json_is_null(json_object_get(t, "clients")));
	CHECK(json_integer_value(json_object_get(t, "cpus")) == 2);
	json_decref(t);
	json_decref(run);
}

UNIT_MAIN(missing_numbers_are_nan, present_values_read_back, points_without_sweep_share_one_value,
	  testbed_keeps_devices_not_counters)
