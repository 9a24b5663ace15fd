/*
 * test_knee.c - the knee search (harness/run/knee.h) against systems whose
 * capacity is known: the knee lands inside the bracket the search states,
 * the slowest system is named, the probe count stays within
 * knee_max_probes, the downward ramp and max_ops cap work, confirm probes
 * ride out a flaky probe (and without them the knee drops: the negative
 * control), a probe that cannot run stops the search; the verdict of one
 * probe from a point and its checks; the automatic form's parsing, its
 * defaults and its refusals naming the field; run.json's knee.
 */
#include "unit.h"
#include "knee.h"
#include "runconf.h"

#include <jansson.h>
#include <unistd.h>

/* Fake systems: each sustains loads up to its capacity. */
struct fake {
	const char *names[3];
	double cap[3];
	int flaky;          /* every first probe of a (system, load) fails */
	double last_load[3];
	int fail_at;        /* probe number that cannot run (0: none) */
	int calls;
};

static int fake_probe(void *ctx, const char *system, double offered, struct knee_probe *out, char *err,
		      size_t errlen)
{
	struct fake *f = ctx;
	int i = 0;

	while (i < 2 && strcmp(f->names[i], system))
		i++;
	if (++f->calls == f->fail_at) {
		snprintf(err, errlen, "probe %d could not start", f->calls);
		return -1;
	}
	out->achieved_ops = offered <= f->cap[i] ? offered : f->cap[i];
	out->saturated = offered > f->cap[i];
	if (f->flaky && f->last_load[i] != offered)
		out->saturated = 1;   /* a stall of the host on the first try */
	f->last_load[i] = offered;
	snprintf(out->reason, sizeof out->reason, "fake");
	return 0;
}

static struct knee_conf conf(double start, double factor, double max, int refine, int confirm)
{
	struct knee_conf kc = { .on = 1, .nfractions = 2, .fractions = { 0.5, 1.1 }, .start_ops = start,
				.factor = factor, .max_ops = max, .probe_s = 0.1, .refine = refine,
				.confirm = confirm };
	return kc;
}

static const char *const sys2[] = { "oq", "rawrpc" };

/* With factor 2 and refine 3 the knee is within x2^(1/8) below capacity. */
static int near_below(double ops, double cap)
{
	return ops <= cap && ops >= cap / pow(2, 1.0 / 8) * 0.99;
}

TEST(search_finds_slowest_knee)
{
	struct fake f = { .names = { "oq", "rawrpc" }, .cap = { 310000, 151000 } };
	struct knee_conf kc = conf(20000, 2, 1e8, 3, 0);
	struct knee_result res;
	char err[256];

	REQUIRE(knee_search(&kc, sys2, 2, fake_probe, &f, NULL, &res, err, sizeof err) == 0, "%s", err);
	CHECK(near_below(res.ops, 151000), "knee %g", res.ops);
	CHECK(res.slowest && strcmp(res.slowest, "rawrpc") == 0);
	CHECK(!res.capped);
	CHECK(res.hi > 151000 && res.hi / res.lo <= pow(2, 1.0 / 8) * 1.01, "bracket %g %g", res.lo, res.hi);
	CHECK(res.nprobes <= knee_max_probes(&kc, 2), "%zu probes", res.nprobes);
	/* every probe is recorded with its system and load */
	for (size_t i = 0; i < res.nprobes; i++)
		CHECK(res.probes[i].system && res.probes[i].offered_ops >= 20000);
	/* more refinement narrows the bracket */
	struct knee_result r2;
	kc.refine = 6;
	REQUIRE(knee_search(&kc, sys2, 2, fake_probe, &f, NULL, &r2, err, sizeof err) == 0, "%s", err);
	CHECK(r2.hi / r2.lo < res.hi / res.lo && r2.ops <= 151000 && r2.ops >= res.ops);
	knee_result_free(&res);
	knee_result_free(&r2);
}

TEST(search_caps_and_goes_down)
{
	struct fake f = { .names = { "oq", "rawrpc" }, .cap = { 1e12, 1e12 } };
	struct knee_conf kc = conf(20000, 2, 1e6, 3, 0);
	struct knee_result res;
	char err[256];

	REQUIRE(knee_search(&kc, sys2, 2, fake_probe, &f, NULL, &res, err, sizeof err) == 0, "%s", err);
	CHECK(res.capped && res.ops == 1e6 && res.slowest == NULL && res.hi == 0);
	knee_result_free(&res);

	/* start_ops past the knee: the ramp goes down */
	f.cap[0] = 5000;
	kc = conf(1e6, 2, 1e8, 3, 0);
	REQUIRE(knee_search(&kc, sys2, 2, fake_probe, &f, NULL, &res, err, sizeof err) == 0, "%s", err);
	CHECK(near_below(res.ops, 5000), "knee %g", res.ops);
	CHECK(res.slowest && strcmp(res.slowest, "oq") == 0);
	knee_result_free(&res);

	/* nothing sustained at all: refused with the lowest load tried */
	f.cap[0] = 0.5;
	REQUIRE(knee_search(&kc, sys2, 2, fake_probe, &f, NULL, &res, err, sizeof err) < 0);
	CHECK(strstr(err, "even") && strstr(err, "start_ops"), "%s", err);
	CHECK(res.nprobes == KNEE_MAX_DOWN + 1, "%zu", res.nprobes);
	knee_result_free(&res);
}

TEST(confirm_rides_out_flaky_probes)
{
	struct fake f = { .names = { "oq", "rawrpc" }, .cap = { 200000, 400000 }, .flaky = 1 };
	struct knee_conf kc = conf(20000, 2, 1e8, 3, 1);
	struct knee_result res;
	char err[256];

	REQUIRE(knee_search(&kc, sys2, 2, fake_probe, &f, NULL, &res, err, sizeof err) == 0, "%s", err);
	CHECK(near_below(res.ops, 200000), "knee %g", res.ops);
	CHECK(res.nprobes <= knee_max_probes(&kc, 2));
	knee_result_free(&res);
	/* negative control: without confirm the first failure ends the ramp */
	struct fake g = { .names = { "oq", "rawrpc" }, .cap = { 200000, 400000 }, .flaky = 1 };
	kc.confirm = 0;
	REQUIRE(knee_search(&kc, sys2, 2, fake_probe, &g, NULL, &res, err, sizeof err) < 0 || res.ops < 100000);
	knee_result_free(&res);
}

TEST(probe_failure_stops_search)
{
	struct fake f = { .names = { "oq", "rawrpc" }, .cap = { 1e6, 1e6 }, .fail_at = 3 };
	struct knee_conf kc = conf(20000, 2, 1e8, 3, 0);
	struct knee_result res;
	char err[256];

	CHECK(knee_search(&kc, sys2, 2, fake_probe, &f, NULL, &res, err, sizeof err) < 0);
	CHECK(strstr(err, "probe 3 could not start") != NULL, "%s", err);
	CHECK(res.nprobes == 2, "%zu", res.nprobes);
	knee_result_free(&res);
}

TEST(progress_line_per_probe)
{
	struct fake f = { .names = { "oq", "rawrpc" }, .cap = { 30000, 1e6 } };
	struct knee_conf kc = conf(20000, 2, 1e8, 1, 0);
	struct knee_result res;
	char err[256], buf[4096] = "";
	FILE *m = fmemopen(buf, sizeof buf - 1, "w");

	REQUIRE(m);
	REQUIRE(knee_search(&kc, sys2, 2, fake_probe, &f, m, &res, err, sizeof err) == 0, "%s", err);
	fclose(m);
	CHECK(strstr(buf, "knee: oq 40000 ops/s: saturated (fake)\n") != NULL, "%s", buf);
	CHECK(strstr(buf, "knee: rawrpc 20000 ops/s: sustained (fake)\n") != NULL, "%s", buf);
	size_t lines = 0;
	for (const char *p = buf; *p; p++)
		lines += *p == '\n';
	CHECK(lines == res.nprobes, "%zu lines, %zu probes", lines, res.nprobes);
	knee_result_free(&res);
}

static json_t *check_row(const char *name, const char *status)
{
	return json_pack("{s:s, s:s}", "name", name, "status", status);
}

TEST(verdict_from_point_and_checks)
{
	struct knee_probe p = { .system = "oq", .offered_ops = 100000 };
	json_t *pj = json_pack("{s:f, s:b}", "achieved_ops", 71000.0, "saturated", 1);
	json_t *checks = json_pack("[o]", check_row("schedule_lag", "pass"));

	knee_verdict(pj, checks, &p);
	CHECK(p.saturated && strcmp(p.reason, "achieved 71 %") == 0, "%s", p.reason);
	json_decref(pj);
	/* achieved fine, but the client fell behind (how many unsent make
	 * the check warn: test_checks) */
	pj = json_pack("{s:f, s:b}", "achieved_ops", 99000.0, "saturated", 0);
	json_array_append_new(checks, check_row("unsent", "warn"));
	knee_verdict(pj, checks, &p);
	CHECK(p.saturated && strstr(p.reason, "unsent warned"), "%s", p.reason);
	/* ... unless its threads lost their CPUs: then achieved decides */
	json_array_append_new(checks, check_row("interference", "warn"));
	knee_verdict(pj, checks, &p);
	CHECK(!p.saturated && strstr(p.reason, "not counted"), "%s", p.reason);
	json_decref(checks);
	/* other warnings do not make a load unsustained */
	checks = json_pack("[o, o]", check_row("ci_p99", "warn"), check_row("stationarity", "warn"));
	knee_verdict(pj, checks, &p);
	CHECK(!p.saturated && strcmp(p.reason, "achieved 99 %") == 0, "%s", p.reason);
	json_decref(checks);
	json_decref(pj);
}

/* A load not sustained while the server's one worker was busy 7 % of the
 * time (70 Kops/s x 1 us service) is the generator's; at 700 Kops/s x
 * 1 us (70 %) the system's.  knee_json says whose the knee was. */
TEST(a_knee_the_generator_set_is_labelled_so)
{
	struct knee_probe p[2] = { { .system = "oq", .offered_ops = 100000 }, { .system = "oq", .offered_ops = 1000000 } };
	json_t *checks = json_pack("[o]", check_row("schedule_lag", "warn"));
	json_t *idle = json_pack("{s:f, s:b, s:{s:i, s:{s:{s:f}}}}", "achieved_ops", 70000.0, "saturated", 1, "server",
				 "workers", 1, "service_ns", "all", "p50", 1000.0);
	json_t *busy = json_pack("{s:f, s:b, s:{s:i, s:{s:{s:f}}}}", "achieved_ops", 700000.0, "saturated", 1, "server",
				 "workers", 1, "service_ns", "all", "p50", 1000.0);
	knee_verdict(idle, checks, &p[0]);
	CHECK(p[0].saturated && p[0].by_generator && strstr(p[0].reason, "the generator's"), "%s", p[0].reason);
	knee_verdict(busy, checks, &p[1]);
	CHECK(p[1].saturated && !p[1].by_generator && !strstr(p[1].reason, "generator"), "%s", p[1].reason);
	/* the estimate reads the backend's time only: clients that waited for
	 * ring room over 1 % of the window say the server had none */
	struct knee_probe q = { .system = "oq", .offered_ops = 100000 };
	json_object_set_new(idle, "full_wait_ns", json_real(20e6));
	json_object_set_new(idle, "measured_ns", json_real(600e6));
	knee_verdict(idle, checks, &q);
	CHECK(q.saturated && !q.by_generator && !strstr(q.reason, "generator"), "%s", q.reason);
	json_object_set_new(idle, "full_wait_ns", json_real(1e6));   /* 0.17 %: room enough */
	knee_verdict(idle, checks, &q);
	CHECK(q.saturated && q.by_generator, "%s", q.reason);

	struct knee_conf kc;
	char err[256];
	json_t *v = json_pack("{s:b}", "auto", 1);
	REQUIRE(knee_conf_parse(v, "t.json: arrival", &kc, err, sizeof err) == 0);
	struct knee_result res = { .ops = 50000, .lo = 50000, .hi = 100000, .slowest = "oq", .probes = &p[0], .nprobes = 1 };
	json_t *k = knee_json(&kc, &res, NULL);
	CHECK(!strcmp(json_string_value(json_object_get(k, "set_by")) ?: "", "generator"));
	CHECK(json_is_true(json_object_get(json_array_get(json_object_get(k, "probes"), 0), "by_generator")));
	json_decref(k);
	res.hi = 1000000;
	res.probes = &p[1];
	k = knee_json(&kc, &res, NULL);
	CHECK(!strcmp(json_string_value(json_object_get(k, "set_by")) ?: "", "system"));
	json_decref(k);
	json_decref(v);
	json_decref(checks);
	json_decref(idle);
	json_decref(busy);
}

static int parse(const char *text, struct knee_conf *kc, char *err, size_t errlen)
{
	json_t *v = json_loads(text, 0, NULL);
	int r;

	if (!v) {
		snprintf(err, errlen, "bad test JSON");
		return -2;
	}
	r = knee_conf_parse(v, "x.json: arrival", kc, err, errlen);
	json_decref(v);
	return r;
}

TEST(parse_defaults_and_values)
{
	struct knee_conf kc;
	char err[512];

	REQUIRE(parse("{\"auto\": true}", &kc, err, sizeof err) == 0, "%s", err);
	CHECK(kc.on && kc.nfractions == 9 && kc.fractions[0] == 0.1 && kc.fractions[8] == 1.25);
	CHECK(kc.start_ops == 20000 && kc.factor == 2 && kc.max_ops == 1e8 && kc.probe_s == 0.3);
	CHECK(kc.warmup_s == 0.2 && kc.refine == 3 && kc.confirm == 1);
	REQUIRE(parse("{\"auto\": true, \"fractions\": [0.5, 1, 1.2], \"search\": {\"start_ops\": 1000, "
		      "\"factor\": 4, \"max_ops\": 1e6, \"probe_s\": 0.5, \"warmup_s\": 0, \"refine\": 5, "
		      "\"confirm\": 0}}", &kc, err, sizeof err) == 0, "%s", err);
	CHECK(kc.nfractions == 3 && kc.fractions[2] == 1.2 && kc.start_ops == 1000 && kc.factor == 4);
	CHECK(kc.max_ops == 1e6 && kc.probe_s == 0.5 && kc.warmup_s == 0 && kc.refine == 5 && kc.confirm == 0);
}

/* The form is refused, and the message has every word. */
static void refused(const char *text, const char *w1, const char *w2)
{
	struct knee_conf kc;
	char err[512] = "";

	CHECK(parse(text, &kc, err, sizeof err) == -1, "accepted: %s", text);
	CHECK(strstr(err, w1) != NULL, "%s lacks %s", err, w1);
	CHECK(!w2 || strstr(err, w2) != NULL, "%s lacks %s", err, w2);
	CHECK(strncmp(err, "x.json: ", 8) == 0, "%s", err);
}

TEST(parse_refusals_name_the_field)
{
	refused("{\"auto\": true, \"fractions\": [-0.1, 1]}", "arrival.loads_ops.fractions[0]", "out of range");
	refused("{\"auto\": true, \"fractions\": []}", "arrival.loads_ops.fractions", "empty");
	refused("{\"auto\": true, \"fractions\": [0.5, 0.5]}", "fractions[1]", "increasing");
	refused("{\"auto\": true, \"fractons\": [0.5]}", "arrival.loads_ops.fractons", "did you mean \"fractions\"");
	refused("{\"auto\": true, \"search\": {\"probes_s\": 1}}", "arrival.loads_ops.search.probes_s", "probe_s");
	refused("{\"auto\": false}", "arrival.loads_ops.auto", "list");
	refused("{\"fractions\": [1]}", "arrival.loads_ops.auto", "missing");
	refused("{\"auto\": true, \"search\": {\"start_ops\": 5000, \"max_ops\": 1000}}", "search.max_ops", "start_ops");
	refused("{\"auto\": true, \"search\": {\"factor\": 1}}", "search.factor", "out of range");
	refused("{\"auto\": true, \"search\": {\"refine\": 2.5}}", "search.refine", "integer");
}

TEST(rounding_and_loads)
{
	struct knee_conf kc = conf(1, 2, 10, 0, 0);

	CHECK(knee_round(143872) == 143000);
	CHECK(knee_round(999.9) == 999);
	CHECK(knee_round(12) == 12);
	kc.nfractions = 4;
	kc.fractions[0] = 0.1;
	kc.fractions[1] = 0.7;
	kc.fractions[2] = 1.1;
	kc.fractions[3] = 1e-9;
	double loads[4];
	knee_loads(&kc, 143000, loads);
	CHECK_NEAR(loads[0], 14300, 1e-6);
	CHECK_NEAR(loads[1], 100000, 1e-6);
	CHECK_NEAR(loads[2], 157000, 1e-6);
	CHECK(loads[3] == 1);   /* never below 1 ops/s */
}

TEST(run_json_shapes)
{
	struct fake f = { .names = { "oq", "rawrpc" }, .cap = { 60000, 1e6 } };
	struct knee_conf kc = conf(20000, 2, 1e8, 2, 0);
	struct knee_result res;
	char err[256];
	double loads[2];

	REQUIRE(knee_search(&kc, sys2, 2, fake_probe, &f, NULL, &res, err, sizeof err) == 0, "%s", err);
	knee_loads(&kc, res.ops, loads);
	json_t *k = knee_json(&kc, &res, loads);
	static const char *const keys[] = { "ops", "found_by", "probes", "fractions", "slowest_system",
					    "search", "elapsed_s", "loads_ops", NULL };
	for (size_t i = 0; keys[i]; i++)
		CHECK(json_object_get(k, keys[i]) != NULL, "no %s", keys[i]);
	CHECK(strcmp(json_string_value(json_object_get(k, "found_by")), "search") == 0);
	CHECK(json_number_value(json_object_get(k, "ops")) == res.ops);
	CHECK(json_array_size(json_object_get(k, "probes")) == res.nprobes);
	const json_t *p0 = json_array_get(json_object_get(k, "probes"), 0);
	CHECK(json_is_string(json_object_get(p0, "system")) && json_is_number(json_object_get(p0, "offered_ops")) &&
	      json_is_number(json_object_get(p0, "achieved_ops")) && json_is_boolean(json_object_get(p0, "saturated")) &&
	      json_is_string(json_object_get(p0, "reason")));
	CHECK(json_number_value(json_array_get(json_object_get(k, "loads_ops"), 1)) > res.ops);
	json_decref(k);
	knee_result_free(&res);

	k = knee_json_fixed(loads, 2);
	for (size_t i = 0; keys[i]; i++)
		CHECK(json_object_get(k, keys[i]) != NULL, "fixed: no %s", keys[i]);
	CHECK(strcmp(json_string_value(json_object_get(k, "found_by")), "fixed") == 0);
	CHECK(json_is_null(json_object_get(k, "ops")) && json_array_size(json_object_get(k, "probes")) == 0);
	json_decref(k);
}

static json_t *pt(double offered, int saturated)
{
	return json_pack("{s:f, s:b}", "offered_ops", offered, "saturated", saturated);
}

/* A run of a knee search with points pts (taken): what knee_after_sweep
 * reads and adds to. */
static json_t *run_of(json_t *knee, json_t *pts)
{
	return json_pack("{s:O, s:o}", "knee", knee, "points", pts);
}

TEST(after_sweep_says_whether_past_knee_saturated)
{
	json_t *knee = json_pack("{s:s, s:f, s:[f, f, f]}", "found_by", "search", "ops", 1000.0, "loads_ops", 500.0,
				 1000.0, 1250.0);
	json_t *run = run_of(knee, json_pack("[o, o, o, o]", pt(500, 0), pt(1000, 0), pt(1250, 1), pt(1250, 1)));
	const json_t *pk;

	knee_after_sweep(run, NULL);
	pk = json_object_get(knee, "past_knee");
	CHECK(json_integer_value(json_object_get(pk, "loads")) == 1);
	CHECK(json_integer_value(json_object_get(pk, "points")) == 2);
	CHECK(json_integer_value(json_object_get(pk, "saturated")) == 2);
	CHECK(json_object_get(pk, "note") == NULL);
	json_decref(run);
	/* a knee found low: the loads past it held */
	run = run_of(knee, json_pack("[o, o, o]", pt(500, 0), pt(1250, 1), pt(1250, 0)));
	knee_after_sweep(run, NULL);
	pk = json_object_get(knee, "past_knee");
	CHECK(json_integer_value(json_object_get(pk, "saturated")) == 1);
	CHECK(strstr(json_string_value(json_object_get(pk, "note")) ?: "", "1 of 2 points past the knee"));
	json_decref(run);
	/* saturated below the knee: the host got busier */
	run = run_of(knee, json_pack("[o, o]", pt(500, 1), pt(1250, 1)));
	knee_after_sweep(run, NULL);
	CHECK(strstr(json_string_value(json_object_get(json_object_get(knee, "past_knee"), "note")) ?: "",
		     "below the knee were saturated"));
	json_decref(run);
	/* a search that found no knee (ops null) adds nothing */
	json_object_set_new(knee, "ops", json_null());
	json_object_del(knee, "past_knee");
	run = run_of(knee, json_pack("[o]", pt(500, 1)));
	knee_after_sweep(run, NULL);
	CHECK(json_object_get(knee, "past_knee") == NULL);
	json_decref(run);
	json_decref(knee);
}

/* The config: the automatic form stands its fractions in as loads; a
 * sweep beside it is refused. */
TEST(runconf_auto_form)
{
	static const char *cfg =
		"{\"name\":\"t\",\"transport\":\"shm\",\"systems\":[\"oq\",\"rawrpc\"],"
		"\"server\":{\"backend\":{\"kind\":\"cache\",\"memory_mb\":16}},"
		"\"workload\":{\"kind\":\"kv\",\"value_size\":64,\"keys\":100},"
		"\"arrival\":{\"kind\":\"poisson\",\"loads_ops\":{\"auto\":true,\"fractions\":[0.5,1,1.2]}}}";
	const char *dir = getenv("TMPDIR");
	char path[512], err[1024];
	struct runconf rc;
	int fd;

	snprintf(path, sizeof path, "%s/oqb_knee_XXXXXX", dir && *dir ? dir : P_tmpdir);
	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, cfg, strlen(cfg)) == (ssize_t)strlen(cfg));
	close(fd);
	REQUIRE(runconf_load(path, &rc, err, sizeof err) == 0, "%s", err);
	CHECK(rc.knee.on && rc.nloads == 3 && rc.loads[2] == 1.2 && rc.knee_ops == 0);
	runconf_free(&rc);
	const char *sweep[] = { "sweep={\"key\":\"workload.value_size\",\"values\":[64,128]}" };
	CHECK(runconf_load_sets(path, sweep, 1, &rc, err, sizeof err) < 0);
	CHECK(strstr(err, "arrival.loads_ops") && strstr(err, "workload.value_size"), "%s", err);
	/* the list form keeps its element-wise messages */
	const char *bad[] = { "arrival.loads_ops=[1000, \"fast\"]" };
	CHECK(runconf_load_sets(path, bad, 1, &rc, err, sizeof err) < 0);
	CHECK(strstr(err, "arrival.loads_ops[1]") && strstr(err, "fast"), "%s", err);
	const char *neg[] = { "arrival.loads_ops={\"auto\":true,\"fractions\":[-1]}" };
	CHECK(runconf_load_sets(path, neg, 1, &rc, err, sizeof err) < 0);
	CHECK(strstr(err, "arrival.loads_ops.fractions[0]"), "%s", err);
	unlink(path);
}

UNIT_MAIN(search_finds_slowest_knee, search_caps_and_goes_down, confirm_rides_out_flaky_probes,
	  probe_failure_stops_search, progress_line_per_probe, verdict_from_point_and_checks, a_knee_the_generator_set_is_labelled_so,
	  parse_defaults_and_values, parse_refusals_name_the_field, rounding_and_loads, run_json_shapes,
	  after_sweep_says_whether_past_knee_saturated, runconf_auto_form)
