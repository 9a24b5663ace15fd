/*
 * test_stall.c - the stall meter (lib/stall.h) and the stalls self-check
 * (harness/trust/checks.c): gaps over the threshold count whole and only inside
 * the counted span, a pass's slack is honoured, the kept events are the
 * last ones, a server's stalls count only where they overlap the client's
 * window, and the check warns above stall_share and passes below it.
 */
#include "unit.h"
#include "checks.h"
#include "stall.h"

#include <string.h>

TEST(gaps_over_threshold_count_whole)
{
	struct stall_meter m;
	stall_init(&m, 20000, 1000000, 1000000, 0);
	uint64_t t = 1000000;
	for (int i = 0; i < 100; i++)
		stall_tick(&m, t += 500, 0);          /* busy passes: no stall */
	CHECK_EQ_U64(m.count, 0);
	CHECK(stall_tick(&m, t += 20000, 0) == 0);    /* at the threshold: not over it */
	CHECK_EQ_U64(m.count, 0);
	/* a tick says when a gap ended at it (the worker then takes its
	 * pass's empty poll for one made before the gap: no R yet) */
	CHECK(stall_tick(&m, t += 2000000, 0) == 1);  /* a 2 ms stall */
	CHECK(stall_tick(&m, t += 30000, 0) == 1);    /* a 30 us one */
	CHECK(stall_tick(&m, t += 500, 0) == 0);
	CHECK_EQ_U64(m.count, 2);
	CHECK_EQ_U64(m.total_ns, 2030000);
	CHECK_EQ_U64(m.max_ns, 2000000);
	CHECK_EQ_U64(m.ev[1].len_ns, 30000);
	CHECK(m.ev[1].wall_end_ns > 0);
}

TEST(slack_covers_a_busy_pass_and_span_bounds)
{
	struct stall_meter m;
	stall_init(&m, 20000, 900000, 1000000, 2000000);
	/* the first gap began before the span: only its part inside counts */
	stall_tick(&m, 1100000, 0);
	CHECK_EQ_U64(m.total_ns, 100000);
	/* a pass that ran 10 requests may take 10 x 10 us more */
	stall_tick(&m, 1100000 + 110000, 100000);
	CHECK_EQ_U64(m.count, 1);
	stall_tick(&m, 1210000 + 130000, 100000);
	CHECK_EQ_U64(m.count, 2);
	CHECK_EQ_U64(m.total_ns, 230000);
	/* after the span's end nothing counts */
	stall_tick(&m, 5000000, 0);
	CHECK_EQ_U64(m.count, 2);
}

TEST(events_keep_the_last_ones)
{
	struct stall_meter m;
	stall_init(&m, 10, 1, 0, 0);
	uint64_t t = 1;
	for (int i = 1; i <= STALL_EVENTS + 10; i++)
		stall_tick(&m, t += 100 + (uint64_t)i, 0);
	CHECK_EQ_U64(m.count, STALL_EVENTS + 10);
	json_t *j = stall_json(&m);
	REQUIRE(j);
	const json_t *ev = json_object_get(j, "events");
	CHECK(json_array_size(ev) == STALL_EVENTS, "%zu events kept", json_array_size(ev));
	CHECK(json_integer_value(json_object_get(j, "events_dropped")) == 10);
	/* oldest first: the first kept is event 11 (length 111) */
	CHECK(json_integer_value(json_array_get(json_array_get(ev, 0), 1)) == 111);
	CHECK(json_integer_value(json_array_get(json_array_get(ev, STALL_EVENTS - 1), 1)) == 100 + STALL_EVENTS + 10);
	json_decref(j);
}

TEST(overlap_clips_to_the_window)
{
	struct stall_event ev[3] = {
		{ .wall_end_ns = 1500, .len_ns = 1000 },   /* 500..1500: 500 inside [1000, 3000) */
		{ .wall_end_ns = 2200, .len_ns = 100 },    /* inside: 100 */
		{ .wall_end_ns = 9000, .len_ns = 1000 },   /* outside */
	};
	CHECK_EQ_U64(stall_overlap(ev, 3, 1000, 3000), 600);
	CHECK_EQ_U64(stall_overlap(ev, 3, 5000, 6000), 0);
}

/* A point's client and server JSON as the check reads them: the client
 * stood still client_ns of a 1 s window, the worker stood still worker_ns
 * inside it and 5 ms outside it. */
static const json_t *stalls_row(json_t *out, uint64_t client_ns, uint64_t worker_ns, double limit)
{
	const json_int_t w0 = 1000000000000, w1 = w0 + 1000000000;
	json_t *cl = json_pack("{s:{s:I,s:[II],s:[{s:I,s:I,s:[]}]}}", "trust", "window_ns", (json_int_t)1000000000,
			       "window_wall_ns", w0, w1, "stalls", "total_ns", (json_int_t)client_ns, "max_ns",
			       (json_int_t)client_ns, "events");
	json_t *sv = json_pack("{s:[{s:{s:I,s:I,s:[[II],[II]]}}]}", "per_worker", "stalls", "total_ns",
			       (json_int_t)(worker_ns + 5000000), "max_ns", (json_int_t)5000000, "events",
			       w0 - 1000000, (json_int_t)5000000, w0 + 500000000, (json_int_t)worker_ns);
	json_t *pj = json_object();
	struct check_conf c;
	checks_defaults(&c);
	if (limit > 0)
		c.stall_share = limit;
	json_t *got = checks_point(&c, pj, &cl, 1, sv, 0, 0);
	json_decref(cl);
	json_decref(sv);
	json_decref(pj);
	size_t i;
	json_t *r;
	json_array_foreach(got, i, r)
		if (!strcmp(json_string_value(json_object_get(r, "name")) ?: "", "stalls")) {
			json_array_append(out, r);
			break;
		}
	json_decref(got);
	return json_array_get(out, json_array_size(out) - 1);
}

static int warns(const json_t *r)
{
	return r && !strcmp(json_string_value(json_object_get(r, "status")) ?: "", "warn");
}

TEST(stalls_check_warns_only_above_its_limit)
{
	json_t *out = json_array();
	struct check_conf c;
	checks_defaults(&c);
	CHECK(c.stall_share == 0.008, "default stall_share %g", c.stall_share);
	/* calm: 100 us of a 1 s window on each side (0.01 %) */
	const json_t *r = stalls_row(out, 100000, 100000, 0);
	CHECK(r && !warns(r), "calm point warned");
	/* the worker's 5 ms stall before the window does not count */
	CHECK(r && json_number_value(json_object_get(r, "value")) < 0.0002, "value %g",
	      json_number_value(json_object_get(r, "value")));
	/* 7 ms of a 1 s window (0.7 %) is under the 0.8 % limit; 9 ms is over it */
	r = stalls_row(out, 7000000, 0, 0);
	CHECK(r && !warns(r), "7 ms warned");
	r = stalls_row(out, 9000000, 0, 0);
	CHECK(warns(r), "a 9 ms client stall passed");
	CHECK(r && strstr(json_string_value(json_object_get(r, "detail")) ?: "", "client 0 thread 0"));
	/* the same on the worker, inside the window */
	r = stalls_row(out, 0, 9000000, 0);
	CHECK(warns(r), "a 9 ms worker stall passed");
	CHECK(r && strstr(json_string_value(json_object_get(r, "detail")) ?: "", "server worker 0"));
	/* and the limit comes from the config */
	r = stalls_row(out, 9000000, 0, 0.01);
	CHECK(r && !warns(r), "a 0.9 %% stall warned under a 1 %% limit");
	r = stalls_row(out, 3000000, 0, 0.002);
	CHECK(warns(r), "a 0.3 %% stall passed under a 0.2 %% limit");
	json_decref(out);
}

UNIT_MAIN(gaps_over_threshold_count_whole, slack_covers_a_busy_pass_and_span_bounds, events_keep_the_last_ones,
	  overlap_clips_to_the_window, stalls_check_warns_only_above_its_limit)
