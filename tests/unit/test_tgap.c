/*
 * test_tgap.c - T_gap analysis on a hand-made trace whose answer was worked
 * out by hand, the max-gap and nilext-ops options, out-of-order lines, the
 * per-client window, many clients, and the file front end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "tgap.h"
#include "trace.h"

/*
 * ts, key, ksz, vsz, client, op, ttl.  By hand (max gap 2 s; nilext = set,
 * delete):
 *   c1: set@0, set@0, get@2 -> two gaps of 2 s (within); delete@3, incr@6
 *       -> gap 3 s (not within)
 *   c2: set@1, get@5 -> 4 s (not within); get@7, cas@8: nothing pending
 *   c3: set@6, never followed -> no T_gap
 *   c4: add@9 (not nilext), set@9, gets@10 -> 1 s (within)
 *   c5: set@11, get@11 -> 0 s (within)
 * requests 15, nilext 7, non-nilext 8, gaps 6, within 4, no_next 1,
 * clients 5: 4/15 of all requests, 4/7 of the nilext ones.
 */
static const char hand[] =
	"0,a,1,1,1,set,60\n"
	"0,b,1,1,1,set,60\n"
	"1,c,1,1,2,set,60\n"
	"2,a,1,1,1,get,0\n"
	"3,d,1,1,1,delete,0\n"
	"5,c,1,1,2,get,0\n"
	"6,d,1,1,1,incr,0\n"
	"6,e,1,1,3,set,60\n"
	"7,f,1,1,2,get,0\n"
	"8,g,1,1,2,cas,0\n"
	"9,h,1,1,4,add,60\n"
	"9,h,1,1,4,set,60\n"
	"10,h,1,1,4,gets,0\n"
	"11,x,1,1,5,set,60\n"
	"11,y,1,1,5,get,0\n";

static char path[600];

static const char *hand_file(void)
{
	const char *base = getenv("TMPDIR");
	FILE *f;

	if (path[0])
		return path;
	snprintf(path, sizeof path, "%s/oqb-tgap-test-%d.csv", base && *base ? base : P_tmpdir, (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return NULL;
	fputs(hand, f);
	fclose(f);
	return path;
}

TEST(hand_made_trace)
{
	struct tgap_opts o;
	struct tgap_result r;
	char err[512];
	const char *p = hand_file();

	REQUIRE(p);
	tgap_opts_default(&o);
	REQUIRE(tgap_file(p, &o, &r, err, sizeof err) == 0, "%s", err);
	CHECK_EQ_U64(r.requests, 15);
	CHECK_EQ_U64(r.nilext, 7);
	CHECK_EQ_U64(r.non_nilext, 8);
	CHECK_EQ_U64(r.gaps, 6);
	CHECK_EQ_U64(r.within, 4);
	CHECK_EQ_U64(r.no_next, 1);
	CHECK_EQ_U64(r.clients, 5);
	CHECK_EQ_U64(r.out_of_order, 0);
	CHECK_NEAR(r.frac_all, 4.0 / 15, 1e-12);
	CHECK_NEAR(r.frac_nilext, 4.0 / 7, 1e-12);
}

TEST(max_gap_and_nilext_ops)
{
	struct tgap_opts o;
	struct tgap_result r;
	char err[512];
	const char *p = hand_file();

	REQUIRE(p);
	tgap_opts_default(&o);
	o.max_gap = 3;      /* adds c1's delete@3 -> incr@6 */
	REQUIRE(tgap_file(p, &o, &r, err, sizeof err) == 0, "%s", err);
	CHECK_EQ_U64(r.within, 5);
	o.max_gap = 4;      /* and c2's set@1 -> get@5 */
	REQUIRE(tgap_file(p, &o, &r, err, sizeof err) == 0, "%s", err);
	CHECK_EQ_U64(r.within, 6);
	o.max_gap = 0;      /* only c5's same-second pair */
	REQUIRE(tgap_file(p, &o, &r, err, sizeof err) == 0, "%s", err);
	CHECK_EQ_U64(r.within, 1);

	/* add counted as nilext too: c4 has add@9 and set@9 pending at 10. */
	tgap_opts_default(&o);
	REQUIRE(tgap_parse_ops("set,delete,add", &o.nilext_mask, err, sizeof err) == 0, "%s", err);
	REQUIRE(tgap_file(p, &o, &r, err, sizeof err) == 0, "%s", err);
	CHECK_EQ_U64(r.nilext, 8);
	CHECK_EQ_U64(r.non_nilext, 7);
	CHECK_EQ_U64(r.gaps, 7);
	CHECK_EQ_U64(r.within, 5);
	CHECK(tgap_parse_ops("set,put", &o.nilext_mask, err, sizeof err) == -1);
	CHECK(strstr(err, "\"put\"") != NULL, "%s", err);

	/* only the first 4 requests: c1's two sets are within, c2 has no next */
	tgap_opts_default(&o);
	o.limit = 4;
	REQUIRE(tgap_file(p, &o, &r, err, sizeof err) == 0, "%s", err);
	CHECK_EQ_U64(r.requests, 4);
	CHECK_EQ_U64(r.within, 2);
	CHECK_EQ_U64(r.no_next, 1);
	unlink(p);
}

TEST(window_and_out_of_order)
{
	struct tgap_opts o;
	struct tgap_result r;
	struct tgap *s;

	tgap_opts_default(&o);
	s = tgap_new(&o);
	REQUIRE(s);
	/* Client 1: set@0, set@20 (the window moves on), get@21: 2 gaps, 1 within. */
	tgap_add(s, 1, 0, 1);
	tgap_add(s, 1, 20, 1);
	tgap_add(s, 1, 21, 0);
	/* Client 2: set@5 then a get stamped @4: negative gap, within, out of order. */
	tgap_add(s, 2, 5, 1);
	tgap_add(s, 2, 4, 0);
	/* Client 3: set@100, set@102, set@103, get@105: only 103 is within 2 s. */
	tgap_add(s, 3, 100, 1);
	tgap_add(s, 3, 102, 1);
	tgap_add(s, 3, 103, 1);
	tgap_add(s, 3, 105, 0);
	tgap_result(s, &r);
	CHECK_EQ_U64(r.gaps, 6);
	CHECK_EQ_U64(r.within, 3);
	CHECK_EQ_U64(r.out_of_order, 1);
	CHECK_EQ_U64(r.no_next, 0);
	tgap_free(s);
}

TEST(many_clients)
{
	struct tgap_opts o;
	struct tgap_result r;
	struct tgap *s;

	tgap_opts_default(&o);
	s = tgap_new(&o);
	REQUIRE(s);
	/* 50000 clients, each set@i then get@i+1 (within) or get@i+5 (not). */
	for (uint64_t c = 0; c < 50000; c++)
		REQUIRE(tgap_add(s, c * 2654435761u, c, 1) == 0);
	for (uint64_t c = 0; c < 50000; c++)
		REQUIRE(tgap_add(s, c * 2654435761u, c + (c % 2 ? 5 : 1), 0) == 0);
	tgap_result(s, &r);
	CHECK_EQ_U64(r.clients, 50000);
	CHECK_EQ_U64(r.gaps, 50000);
	CHECK_EQ_U64(r.within, 25000);
	tgap_free(s);
}

TEST(bad_trace_is_an_error)
{
	struct tgap_opts o;
	struct tgap_result r;
	char err[512];

	tgap_opts_default(&o);
	CHECK(tgap_file("no/such/trace.csv", &o, &r, err, sizeof err) == -1);
	CHECK(strstr(err, "no/such/trace.csv") != NULL, "%s", err);
}

UNIT_MAIN(hand_made_trace, max_gap_and_nilext_ops, window_and_out_of_order, many_clients,
	  bad_trace_is_an_error)
