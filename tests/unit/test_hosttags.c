/*
 * test_hosttags.c - whose a stall was and which requests it tagged
 * (lib/stall.h, lib/probe.h, harness/run/hosttags.h): a gap the probe's
 * late wake-up covers is the host's and tags the requests whose window
 * meets [start, R]; one the probe woke on time through, or one the thread
 * blocked in, is the system's and tags nothing; one with no evidence is
 * unattributed, never the host's; the worker marks what it sends inside
 * the interval only; the untagged histogram is all less the tagged, bin
 * for bin; a percentile is set by the host when most above it are tagged.
 * The probe here is a stand-in: records written with probe_record, as
 * the probe thread writes them, so the cases are exact on any machine.
 */
#include "unit.h"
#include "hist.h"
#include "hdrenc.h"
#include "hosttags.h"
#include "result.h"
#include "probe.h"
#include "stall.h"

#include <stdlib.h>
#include <string.h>

#define MS 1000000ull

/* A meter from t0 with the stand-in probe pc and no kernel evidence (the
 * test thread's own run-queue delay is the machine's, not the case's). */
static void meter(struct stall_meter *m, struct probe_cpu *pc, uint64_t t0)
{
	stall_init(m, 50000, t0, t0, 0);
	m->probe = pc;
}

TEST(classify_rule)
{
	/* the host's when run-queue delay or late wake-ups cover half */
	CHECK_EQ_U64(stall_classify(1000, 500, 0, 0, 0, 0), STALL_HOST);
	CHECK_EQ_U64(stall_classify(1000, 0, 600, 0, 1, 0), STALL_HOST);
	CHECK_EQ_U64(stall_classify(1000, 400, 0, 1, 0, 0), STALL_SYS);     /* it blocked */
	CHECK_EQ_U64(stall_classify(1000, 0, 0, 0, 1, 0), STALL_SYS);       /* the CPU was there */
	CHECK_EQ_U64(stall_classify(1000, 100, 100, 0, 0, 0), STALL_UNATT); /* no evidence either way */
	/* its own work filled half of it or more: the system's on the
	 * thread's own word, unless outside evidence says the host's */
	CHECK_EQ_U64(stall_classify(1000, 0, 0, 0, 0, 500), STALL_SYS);
	CHECK_EQ_U64(stall_classify(1000, 0, 0, 0, 0, 499), STALL_UNATT);
	CHECK_EQ_U64(stall_classify(1000, 0, 600, 0, 0, 1000), STALL_HOST);
}

TEST(host_stall_tags_its_interval_to_R)
{
	struct probe_cpu *pc = calloc(1, sizeof *pc);
	REQUIRE(pc);
	struct stall_meter m;
	uint64_t t = 100 * MS;
	meter(&m, pc, t);
	/* on-time wake-ups every ms, then the CPU away 5 ms: one late wake */
	for (uint64_t k = 1; k <= 3; k++)
		probe_record(pc, t - 4 * MS + k * MS, t - 4 * MS + k * MS + 2000);
	stall_tick(&m, t += 10000, 0);
	CHECK_EQ_U64(stall_mark_now(&m), 0);
	uint64_t s0 = t;
	probe_record(pc, s0 + MS, s0 + 5 * MS);          /* due 1 ms in, woke at the end */
	stall_tick(&m, t = s0 + 5 * MS, 0);              /* the thread runs again */
	CHECK_EQ_U64(m.count, 1);
	CHECK_EQ_U64(m.cls_count[STALL_HOST], 1);
	CHECK_EQ_U64(m.probe_ns, 4 * MS);
	REQUIRE(m.host_len && m.host_len->n == 1);
	/* backlog: the worker marks what it sends until its first idle pass */
	CHECK_EQ_U64(stall_mark_now(&m), STALL_TAG_HOST);
	CHECK_EQ_U64(stall_tag(&m, s0 - 3 * MS), STALL_TAG_HOST);   /* sent before, committed after */
	stall_tick(&m, t += 20000, 0);
	CHECK_EQ_U64(stall_mark_now(&m), STALL_TAG_HOST);
	uint64_t R = t + 30000;
	stall_idle(&m, R);
	CHECK_EQ_U64(stall_mark_now(&m), 0);
	CHECK_EQ_U64(m.ev[0].backlog_ns, R - (s0 + 5 * MS));
	/* a request intended at R or before met the interval; one after, not */
	CHECK_EQ_U64(stall_tag(&m, R), STALL_TAG_HOST);
	CHECK_EQ_U64(stall_tag(&m, R + 1), 0);
	CHECK_EQ_U64(stall_tag(&m, s0 + MS), STALL_TAG_HOST);
	json_t *w = stall_window_json(&m, 0, UINT64_MAX);
	CHECK(json_integer_value(json_object_get(w, "host_ns")) == (json_int_t)(5 * MS - 10000 + 10000),
	      "host_ns %lld", (long long)json_integer_value(json_object_get(w, "host_ns")));
	json_decref(w);
	stall_free(&m);
	free(pc);
}

TEST(host_lateness_outlives_a_short_gap_after_it)
{
	/* A send intended inside a host stall was late for the host, even
	 * when a short gap of another class came during the catch-up (a
	 * hog's burst ends and the thread loses its CPU again for 120 us):
	 * the host's interval and its bound are the latest host stall's,
	 * not the latest gap's.  A send intended before the stall began, or
	 * made after its end plus its length again, is the client's own. */
	struct probe_cpu *pc = calloc(1, sizeof *pc);
	REQUIRE(pc);
	struct stall_meter m;
	uint64_t t = 100 * MS;
	meter(&m, pc, t);
	stall_tick(&m, t += 10000, 0);
	uint64_t s0 = t;
	probe_record(pc, s0 + MS, s0 + 5 * MS);
	stall_tick(&m, t = s0 + 5 * MS, 0);             /* the host's 5 ms */
	CHECK_EQ_U64(m.cls_count[STALL_HOST], 1);
	CHECK_EQ_U64(m.host_from, s0);
	CHECK(stall_late_by_host(&m, s0 + 2 * MS, t), "a send intended inside the host stall");
	stall_tick(&m, t += 120000, 0);                  /* no evidence: unattributed */
	CHECK_EQ_U64(m.cls_count[STALL_UNATT], 1);
	CHECK(stall_late_by_host(&m, s0 + 2 * MS, t), "a short unattributed gap ended the host's lateness");
	/* due in the pass the stall interrupted: within the threshold */
	CHECK(stall_late_by_host(&m, s0 - 40000, t), "a send due just before the stall began");
	/* behind before the stall: its own */
	CHECK(!stall_late_by_host(&m, s0 - 100000, t), "a send intended well before the stall");
	CHECK(stall_late_by_host(&m, s0 + 2 * MS, s0 + 10 * MS), "made at the stall's end plus its length");
	CHECK(!stall_late_by_host(&m, s0 + 2 * MS, s0 + 10 * MS + 1), "made after that: still behind, its own");
	/* a second host stall in the same interval keeps its start */
	probe_record(pc, t + 100000, t + 2 * MS);
	stall_tick(&m, t += 2 * MS, 0);
	CHECK_EQ_U64(m.cls_count[STALL_HOST], 2);
	CHECK_EQ_U64(m.host_from, s0);
	CHECK(stall_late_by_host(&m, s0 + 2 * MS, t + MS), "the first stall's send after the second");
	uint64_t R = t + 1000;
	stall_idle(&m, R);
	CHECK(!stall_late_by_host(&m, R + 1000, R + 2000), "after R");
	/* the next host stall opens a new interval */
	uint64_t s1 = R + 10 * MS;
	stall_tick(&m, t = s1, 0);                       /* an unattributed gap up to s1 */
	probe_record(pc, s1 + MS, s1 + 3 * MS);
	stall_tick(&m, t = s1 + 3 * MS, 0);
	CHECK_EQ_U64(m.host_from, s1);
	CHECK(!stall_late_by_host(&m, s0 + 2 * MS, t), "an old send is not the new interval's");
	stall_free(&m);
	free(pc);
}

TEST(own_delay_and_no_evidence_are_not_the_hosts)
{
	struct probe_cpu *pc = calloc(1, sizeof *pc);
	REQUIRE(pc);
	struct stall_meter m;
	uint64_t t = 100 * MS;
	meter(&m, pc, t);
	/* a 1 ms busy delay of its own: the probe woke on time inside it */
	probe_record(pc, t + MS / 2, t + MS / 2 + 3000);
	stall_tick(&m, t += MS, 0);
	CHECK_EQ_U64(m.cls_count[STALL_SYS], 1);
	CHECK_EQ_U64(stall_mark_now(&m), 0);
	CHECK_EQ_U64(stall_tag(&m, t - 2 * MS), 0);
	/* a gap with no wake-up in it and no kernel word: unattributed, its
	 * requests counted apart and never the host's */
	stall_tick(&m, t += 300000, 0);
	CHECK_EQ_U64(m.cls_count[STALL_UNATT], 1);
	CHECK_EQ_U64(m.cls_count[STALL_HOST], 0);
	CHECK_EQ_U64(stall_mark_now(&m), STALL_TAG_UNATT);
	CHECK_EQ_U64(stall_tag(&m, t - 100000), STALL_TAG_UNATT);
	stall_idle(&m, t + 1000);
	CHECK_EQ_U64(stall_tag(&m, t + 2000), 0);
	/* a 200 us pass of its own work (a slow backend call, a busy delay)
	 * with no wake-up in it: the system's on the worker's own clock */
	stall_tick(&m, t += 5000, 0);
	stall_own(&m, t + 200000);
	stall_tick(&m, t += 201000, 10000);
	CHECK_EQ_U64(m.cls_count[STALL_SYS], 2);
	CHECK_EQ_U64(m.cls_count[STALL_UNATT], 1);
	CHECK(m.ev[2].own == 1, "own %u", m.ev[2].own);
	/* its work ended early in a long gap: no more than unattributed */
	stall_own(&m, t + 20000);
	stall_tick(&m, t += 300000, 10000);
	CHECK_EQ_U64(m.cls_count[STALL_UNATT], 2);
	/* an end from before the pass's clock read says nothing of this gap */
	stall_tick(&m, t += 300000, 0);
	CHECK_EQ_U64(m.cls_count[STALL_UNATT], 3);
	CHECK_EQ_U64(m.cls_count[STALL_SYS], 2);
	CHECK(m.host_len == NULL, "a host histogram without a host stall");
	stall_free(&m);
	free(pc);
}

TEST(untagged_is_all_less_tagged)
{
	struct hist *all = hist_new(), *tag = hist_new();
	REQUIRE(all && tag);
	for (uint64_t v = 1000; v < 2000; v++)
		hist_record(all, v);                      /* the system's: 1-2 us */
	for (int i = 0; i < 20; i++) {
		hist_record(all, 5 * MS + (uint64_t)i);   /* 20 stalled by the host */
		hist_record(tag, 5 * MS + (uint64_t)i);
	}
	struct hist *sys = hist_new();
	REQUIRE(sys);
	hist_merge(sys, all);
	hist_subtract(sys, tag);
	CHECK_EQ_U64(sys->n, 1000);
	CHECK(sys->max < 2100 && sys->min >= 1000, "min %llu max %llu", (unsigned long long)sys->min,
	      (unsigned long long)sys->max);
	CHECK(hist_percentile(sys, 99) < 2100, "system P99 %llu", (unsigned long long)hist_percentile(sys, 99));
	/* raw P99 is the host's (20 of 1020 above ~P98), the median is not */
	CHECK(hosttags_set_by_host(all, sys, 99) == 1, "P99 not set by the host");
	CHECK(hosttags_set_by_host(all, sys, 50) == 0, "p50 set by the host");
	/* with nothing tagged nothing is the host's */
	CHECK(hosttags_set_by_host(all, all, 99) == 0, "untagged P99 set by the host");
	hist_free(all);
	hist_free(tag);
	hist_free(sys);
}

/* A trial as run.json keeps it: lat_ns's and host_tags.sys_lat_ns's
 * classes, "all" as a count only (harness/run/trials.c). */
static json_t *trial_of(const struct hist *l1, const struct hist *l2, const struct hist *s1, const struct hist *s2)
{
	return json_pack("{s:{s:o,s:o,s:{s:I}},s:{s:{s:o,s:o,s:{s:I}}}}", "lat_ns", "nilext", result_hist_summary(l1),
			 "non_nilext", result_hist_summary(l2), "all", "n", (json_int_t)(l1->n + l2->n), "host_tags",
			 "sys_lat_ns", "nilext", result_hist_summary(s1), "non_nilext", result_hist_summary(s2), "all",
			 "n", (json_int_t)(s1->n + s2->n));
}

static int same_counts(const struct hist *a, const struct hist *b)
{
	return a->n == b->n && a->min == b->min && a->max == b->max && a->sum == b->sum &&
	       !memcmp(a->counts, b->counts, sizeof a->counts);
}

TEST(trial_keeps_the_shorter_of_untagged_and_their_part)
{
	/* nilext: 20 of 2,000 tagged (a calm trial), non_nilext: all but 20
	 * tagged (a busy one); each class keeps the smaller encoding and
	 * reads back the same untagged counters, n, min, max and sum */
	struct hist *l1 = hist_new(), *l2 = hist_new(), *s1 = hist_new(), *s2 = hist_new(), *h = hist_new();
	REQUIRE(l1 && l2 && s1 && s2 && h);
	for (uint64_t i = 0; i < 2000; i++) {
		uint64_t v = 1000 + i * 37 % 50000;
		hist_record(l1, v);
		if (i % 100)
			hist_record(s1, v);
		hist_record(l2, v + 3 * MS);
		if (i % 100 == 0)
			hist_record(s2, v + 3 * MS);
	}
	json_t *t = trial_of(l1, l2, s1, s2);
	REQUIRE(t);
	result_trial_compact(t);
	const json_t *sl = json_object_get(json_object_get(t, "host_tags"), "sys_lat_ns");
	char err[512];
	/* each class keeps one text, the shorter of the untagged requests'
	 * own and their part of lat_ns; the calm class its part */
	const struct hist *lat[2] = { l1, l2 }, *sys[2] = { s1, s2 };
	int parts = 0;
	for (int c = 0; c < 2; c++) {
		const char *cls = c ? "non_nilext" : "nilext";
		const json_t *s = json_object_get(sl, cls);
		char *own = hdr_encode_b64(sys[c], err, sizeof err), *part = hdr_part_encode_b64(lat[c], sys[c], err, sizeof err);
		REQUIRE(own && part, "%s", err);
		const char *want = strlen(part) < strlen(own) ? "lat_part" : "hdr";
		CHECK(json_object_get(s, want) && !json_object_get(s, strcmp(want, "hdr") ? "hdr" : "lat_part") &&
		      !json_object_get(s, "tagged_hdr"), "%s keeps %s (own %zu, part %zu)", cls, want, strlen(own), strlen(part));
		parts += !strcmp(want, "lat_part");
		free(own);
		free(part);
	}
	CHECK(json_object_get(json_object_get(sl, "nilext"), "lat_part") && parts >= 1, "the calm class keeps its part");
	CHECK(result_trial_sys_hist(h, t, "nilext", err, sizeof err) == 0 && same_counts(h, s1), "nilext: %s", err);
	CHECK(result_trial_sys_hist(h, t, "non_nilext", err, sizeof err) == 0 && same_counts(h, s2), "non_nilext: %s",
	      err);
	CHECK(result_trial_sys_hist(h, t, "all", err, sizeof err) == 0 && h->n == s1->n + s2->n, "all: %s", err);
	/* a part written against another lat_ns is refused, named */
	json_t *nil = json_object_get(sl, "nilext");
	json_t *keep = json_deep_copy(json_object_get(nil, "lat_part"));
	char *enc = hdr_part_encode_b64(l2, s2, err, sizeof err);
	REQUIRE(enc && keep, "%s", err);
	json_object_set_new(nil, "lat_part", json_string(enc));
	CHECK(result_trial_sys_hist(h, t, "nilext", err, sizeof err) < 0 && strstr(err, "lat_part") &&
	      strstr(err, "damaged"), "%s", err);
	free(enc);
	/* oqbench.run/4 kept the tagged requests' own text: lat_ns less it */
	struct hist *tagged = hist_new(), *bad = hist_new();
	REQUIRE(tagged && bad);
	hist_merge(tagged, l1);
	hist_subtract(tagged, s1);
	enc = hdr_encode_b64(tagged, err, sizeof err);
	REQUIRE(enc);
	json_object_del(nil, "lat_part");
	json_object_set_new(nil, "tagged_hdr", json_string(enc));
	free(enc);
	CHECK(result_trial_sys_hist(h, t, "nilext", err, sizeof err) == 0 && same_counts(h, s1), "/4 nilext: %s", err);
	/* a tagged encoding that is not a part of lat_ns is refused, named */
	hist_record(bad, 9 * MS);
	enc = hdr_encode_b64(bad, err, sizeof err);
	REQUIRE(enc);
	json_object_set_new(nil, "tagged_hdr", json_string(enc));
	CHECK(result_trial_sys_hist(h, t, "nilext", err, sizeof err) < 0 && strstr(err, "damaged"), "%s", err);
	free(enc);
	json_object_del(nil, "tagged_hdr");
	json_object_set(nil, "lat_part", keep);
	json_decref(keep);
	/* a trial set aside keeps none */
	result_trial_set_aside(t);
	CHECK(!json_object_get(nil, "lat_part") && !json_object_get(nil, "tagged_hdr") && !json_object_get(nil, "hdr") &&
	      !json_object_get(json_object_get(sl, "non_nilext"), "hdr") &&
	      !json_object_get(json_object_get(sl, "non_nilext"), "lat_part"), "a trial set aside keeps an encoding");
	hist_free(tagged);
	json_decref(t);
	hist_free(bad);
	hist_free(l1);
	hist_free(l2);
	hist_free(s1);
	hist_free(s2);
	hist_free(h);
}

/* The probe's budget (probe.h): within it the period stays; above it the
 * period doubles, up to its cap, and never past it. */
TEST(probe_keeps_to_its_budget)
{
	uint64_t ms = 1000000;
	CHECK_EQ_U64(probe_budget_step(ms, 19 * 64 * 1000ull, 64 * ms), ms);        /* 19 us a wake-up: 1.9 % */
	CHECK_EQ_U64(probe_budget_step(ms, 2 * 64 * ms / 100, 64 * ms), ms);        /* exactly the budget */
	CHECK_EQ_U64(probe_budget_step(ms, 480 * 64 * 1000ull, 64 * ms), 2 * ms);   /* TCG's 480 us: 48 % */
	CHECK_EQ_U64(probe_budget_step(64 * ms, 64 * ms, 64 * ms), PROBE_MAX_PERIOD_NS);
	CHECK_EQ_U64(probe_budget_step(PROBE_MAX_PERIOD_NS, 64 * ms, 64 * ms), PROBE_MAX_PERIOD_NS);
	CHECK_EQ_U64(probe_budget_step(ms, 5 * ms, 0), ms);                          /* no time passed: no judgement */
	/* a probe that costs half its CPU reaches the budget in a few looks */
	uint64_t per = ms;
	unsigned looks = 0;
	while (looks < 20) {
		uint64_t next = probe_budget_step(per, 64 * 480000ull, 64 * per);
		if (next == per)
			break;
		per = next;
		looks++;
	}
	CHECK(480000ull * 100 <= per * PROBE_BUDGET_PCT);
	CHECK(looks == 5);   /* 1 ms -> 32 ms: 480 us is 1.5 % of 32 ms */
}

UNIT_MAIN(classify_rule, host_stall_tags_its_interval_to_R, host_lateness_outlives_a_short_gap_after_it,
	  own_delay_and_no_evidence_are_not_the_hosts,
	  untagged_is_all_less_tagged, trial_keeps_the_shorter_of_untagged_and_their_part, probe_keeps_to_its_budget)
