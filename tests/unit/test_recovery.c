/*
 * test_recovery.c - the §5.3 recovery scan on hand-built rings: torn,
 * misaligned and checksum-failing entries, non-nilext and non-idempotent
 * requests, an empty ring, and a corrupt range.
 */
#include "unit.h"
#include "recovery.h"

#define SLOTS 16
#define SLOT  256

struct seen {
	int n;
	uint64_t seq[64];
};

static void record(void *arg, const void *req, const struct wire_req *h)
{
	struct seen *s = arg;
	(void)req;
	if (s->n < 64)
		s->seq[s->n++] = h->seq;
}

static uint32_t put(uint8_t *at, size_t cap, unsigned op, unsigned flags, uint64_t seq)
{
	struct wire_req h = { .op = (uint8_t)op, .flags = (uint16_t)flags, .key_len = 3,
			      .val_len = 20, .client_id = 1, .seq = seq };
	return wire_encode_req(at, cap, &h, "key", NULL);
}

#define NIL KV_F_NILEXT

TEST(empty_ring_executes_nothing)
{
	static uint8_t ring[SLOTS * SLOT];
	memset(ring, 0, sizeof ring);
	struct recovery_report r = { 0 };
	struct seen s = { 0 };
	CHECK(recovery_scan_ring(ring, SLOTS, SLOT, 100, 100 + SLOTS, record, &s, &r) == 0);
	CHECK_EQ_U64(r.scanned, SLOTS);
	CHECK_EQ_U64(r.valid, 0);
	CHECK_EQ_U64(r.skipped_invalid, SLOTS);
	CHECK(s.n == 0);
	/* and an empty range */
	struct recovery_report r2 = { 0 };
	CHECK(recovery_scan_ring(ring, SLOTS, SLOT, 5, 5, record, &s, &r2) == 0 && r2.scanned == 0);
}

TEST(ring_rules)
{
	static uint8_t ring[SLOTS * SLOT];
	memset(ring, 0xa5, sizeof ring);              /* garbage everywhere */
	uint64_t from = 35;                            /* ReqToExecute, wraps the ring */
#define AT(t) (ring + ((t) % SLOTS) * SLOT)
	/* t=35: non-idempotent incr at ReqToExecute (maybe executed): skip */
	put(AT(35), SLOT, KV_OP_INCR, NIL | KV_F_NONIDEMP, 1);
	/* t=36: idempotent set: re-execute */
	put(AT(36), SLOT, KV_OP_SET, NIL, 2);
	/* t=37: torn: the tail of the request never made it */
	uint32_t l = put(AT(37), SLOT, KV_OP_SET, NIL, 3);
	memset(AT(37) + 52, 0, l - 52);   /* value bytes and padding lost */
	/* t=38: get: never committed, skip */
	put(AT(38), SLOT, KV_OP_GET, 0, 4);
	/* t=39: checksum failure (one flipped bit) */
	put(AT(39), SLOT, KV_OP_SET, NIL, 5);
	AT(39)[60] ^= 1;
	/* t=40: delete: re-execute */
	put(AT(40), SLOT, KV_OP_DEL, NIL, 6);
	/* t=41: a released slot: invalidated header (stale request behind it) */
	put(AT(41), SLOT, KV_OP_SET, NIL, 7);
	memset(AT(41), 0, 16);
	/* t=42: set again, the last */
	put(AT(42), SLOT, KV_OP_SET, NIL, 8);
	struct recovery_report r = { 0 };
	struct seen s = { 0 };
	CHECK(recovery_scan_ring(ring, SLOTS, SLOT, from, 43, record, &s, &r) == 0);
	CHECK_EQ_U64(r.scanned, 8);
	CHECK_EQ_U64(r.valid, 5);
	CHECK_EQ_U64(r.reexecuted, 3);
	CHECK_EQ_U64(r.skipped_invalid, 3);
	CHECK_EQ_U64(r.skipped_non_nilext, 1);
	CHECK_EQ_U64(r.skipped_nonidempotent, 1);
	REQUIRE(s.n == 3);
	CHECK(s.seq[0] == 2 && s.seq[1] == 6 && s.seq[2] == 8, "order %llu %llu %llu",
	      (unsigned long long)s.seq[0], (unsigned long long)s.seq[1], (unsigned long long)s.seq[2]);
#undef AT
}

TEST(corrupt_range_is_refused)
{
	static uint8_t ring[SLOTS * SLOT];
	struct recovery_report r = { 0 };
	CHECK(recovery_scan_ring(ring, SLOTS, SLOT, 10, 10 + SLOTS + 1, NULL, NULL, &r) == -1);
	CHECK(recovery_scan_ring(ring, SLOTS, SLOT, 10, 9, NULL, NULL, &r) == -1);
	CHECK(r.scanned == 0);
}

static int lap_is(void *arg, uint64_t t)
{
	return t == *(const uint64_t *)arg;
}

/* With a per-ticket check the range may span two laps (a slot freed by a
 * void is free a lap ahead of ReqToExecute); each slot then belongs to at
 * most one of its two tickets, and a longer range is still refused. */
TEST(checked_range_spans_two_laps)
{
	static uint8_t ring[SLOTS * SLOT];
	memset(ring, 0, sizeof ring);
	uint64_t mine = 10 + SLOTS + 1;   /* slot 11 % SLOTS, second lap */
	put(ring + (mine % SLOTS) * SLOT, SLOT, KV_OP_SET, NIL, 7);
	struct recovery_report r = { 0 };
	struct seen s = { 0 };
	CHECK(recovery_scan_ring_checked(ring, SLOTS, SLOT, 10, 10 + 2 * SLOTS, lap_is, &mine, record, &s,
					 &r) == 0);
	CHECK(s.n == 1 && s.seq[0] == 7, "executed %d", s.n);
	CHECK_EQ_U64(r.scanned, 2 * SLOTS);
	CHECK(recovery_scan_ring_checked(ring, SLOTS, SLOT, 10, 11 + 2 * SLOTS, lap_is, &mine, record, &s,
					 &r) == -1);
	CHECK(recovery_scan_ring(ring, SLOTS, SLOT, 10, 10 + 2 * SLOTS, record, &s, &r) == -1,
	      "without the check, two laps would execute each slot twice");
}

/* Multi-packet buffer: requests at 64 B-aligned offsets, one misaligned. */
TEST(region_scan_skips_misaligned_and_torn)
{
	static uint8_t buf[4096];
	memset(buf, 0, sizeof buf);
	size_t off = 0;
	off += put(buf + off, sizeof buf - off, KV_OP_SET, NIL, 1);   /* 128 B */
	off += put(buf + off, sizeof buf - off, KV_OP_GET, 0, 2);
	/* a request written at a misaligned position (+32): never accepted */
	uint8_t tmp[256];
	uint32_t l = put(tmp, sizeof tmp, KV_OP_SET, NIL, 3);
	memcpy(buf + off + 32, tmp, l);
	off += 256;
	/* torn one, then a good one right after its aligned slot */
	l = put(buf + off, sizeof buf - off, KV_OP_SET, NIL, 4);
	buf[off + l - 1] ^= 0xff;
	off += l;
	off += put(buf + off, sizeof buf - off, KV_OP_SET, NIL, 5);
	struct recovery_report r = { 0 };
	struct seen s = { 0 };
	recovery_scan_region(buf, sizeof buf, record, &s, &r);
	REQUIRE(s.n == 2, "executed %d", s.n);
	CHECK(s.seq[0] == 1 && s.seq[1] == 5);
	CHECK_EQ_U64(r.valid, 3);
	CHECK_EQ_U64(r.skipped_non_nilext, 1);
	CHECK(r.skipped_invalid > 0);
	json_t *j = recovery_report_json(&r);
	CHECK(json_integer_value(json_object_get(j, "reexecuted")) == 2);
	json_decref(j);
}

UNIT_MAIN(empty_ring_executes_nothing, ring_rules, corrupt_range_is_refused, checked_range_spans_two_laps,
	  region_scan_skips_misaligned_and_torn)
