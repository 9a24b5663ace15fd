/*
 * test_exec.c - the in-order executor: whatever order arrivals are reported
 * in, slots execute exactly in slot order, and only once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "exec.h"

static uint64_t te_state;
static uint64_t te_next(void)
{
	uint64_t z = (te_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A state update that depends on order: replaying the same operations in
 * another order gives another digest. */
static uint64_t apply(uint64_t state, uint64_t op)
{
	return (state ^ op) * 0x100000001B3ull + 0x9E37u;
}

static uint64_t op_of(uint64_t slot)
{
	return slot * 0xD6E8FEB86659FD93ull ^ (slot >> 7);
}

TEST(init_rejects_bad_windows)
{
	struct exec x;
	CHECK(exec_init(&x, 0, 0) == -1);
	CHECK(exec_init(&x, 0, 3) == -1);
	CHECK(exec_init(&x, 0, 100) == -1);
	CHECK(exec_init(&x, 0, UINT64_MAX) == -1);
	exec_free(&x);   /* harmless after a failed init */
	for (uint64_t w = 1; w <= 4096; w <<= 1) {
		REQUIRE(exec_init(&x, 0, w) == 0, "window %llu", (unsigned long long)w);
		exec_free(&x);
	}
}

TEST(in_order_arrivals)
{
	struct exec x;
	REQUIRE(exec_init(&x, 0, 64) == 0);
	CHECK(exec_next(&x) == EXEC_NONE, "nothing arrived yet");
	for (uint64_t s = 0; s < 1000; s++) {
		REQUIRE(exec_arrive(&x, s) == 0);
		CHECK_EQ_U64(exec_next(&x), s);
		CHECK(exec_next(&x) == EXEC_NONE);
	}
	CHECK_EQ_U64(x.idx, 1000);
	CHECK_EQ_U64(x.arrived, 1000);
	CHECK_EQ_U64(x.executed, 1000);
	CHECK_EQ_U64(x.out_of_order, 0);
	CHECK_EQ_U64(x.rejected, 0);
	exec_free(&x);
}

TEST(figure3_example)
{
	/* Paper Fig 3(b): b0, b1 executed, idx = 2; ce3 arrives first, then
	 * ce4 (for b2) releases b2, b3, b4 in order. */
	struct exec x;
	REQUIRE(exec_init(&x, 0, 8) == 0);
	CHECK(exec_arrive(&x, 0) == 0 && exec_arrive(&x, 1) == 0);
	CHECK_EQ_U64(exec_next(&x), 0);
	CHECK_EQ_U64(exec_next(&x), 1);
	CHECK(exec_arrive(&x, 3) == 0);
	CHECK(exec_arrive(&x, 4) == 0);
	CHECK(exec_next(&x) == EXEC_NONE, "b2 has not arrived");
	CHECK(exec_arrive(&x, 2) == 0);
	CHECK_EQ_U64(exec_next(&x), 2);
	CHECK_EQ_U64(exec_next(&x), 3);
	CHECK_EQ_U64(exec_next(&x), 4);
	CHECK(exec_next(&x) == EXEC_NONE);
	/* 1 (arrived before 0 ran), 3 and 4 were not at idx on arrival. */
	CHECK_EQ_U64(x.out_of_order, 3);
	exec_free(&x);
}

/*
 * Slots are handed out in order (a ring of `window` slots: a slot is only
 * issued once the slot `window` below it has executed), arrive in random
 * order, and are drained after every arrival.  The executed sequence must
 * be 0,1,2,... and the order-sensitive digest must equal a single-threaded
 * replay in slot order.
 */
static int run_random(uint64_t seed, uint64_t first, uint64_t window, uint64_t total)
{
	struct exec x;
	if (exec_init(&x, first, window) != 0)
		return -1;
	te_state = seed;
	uint64_t *pending = malloc(window * sizeof *pending);
	uint64_t npending = 0, issued = 0, expect = first, digest = 7, replay = 7;
	int bad = 0;

	while (expect < first + total) {
		/* Issue as many as the window allows (randomly fewer). */
		uint64_t room = (x.idx + window) - (first + issued);
		uint64_t want = room ? te_next() % (room + 1) : 0;
		if (npending == 0 && want == 0 && room)
			want = 1;
		for (uint64_t i = 0; i < want && issued < total; i++)
			pending[npending++] = first + issued++;
		if (npending == 0)
			break;
		/* One random in-flight slot arrives. */
		uint64_t k = te_next() % npending;
		uint64_t slot = pending[k];
		pending[k] = pending[--npending];
		if (exec_arrive(&x, slot) != 0)
			bad++;
		for (uint64_t s; (s = exec_next(&x)) != EXEC_NONE;) {
			if (s != expect)
				bad++;
			digest = apply(digest, op_of(s));
			expect++;
		}
	}
	for (uint64_t s = first; s < first + total; s++)
		replay = apply(replay, op_of(s));
	if (digest != replay || expect != first + total || x.executed != total ||
	    x.arrived != total || x.rejected != 0)
		bad++;
	free(pending);
	exec_free(&x);
	return bad;
}

TEST(random_permutations_execute_in_slot_order)
{
	for (uint64_t seed = 1; seed <= 300; seed++) {
		uint64_t window = 1ull << (seed % 9);   /* 1 .. 256 */
		int bad = run_random(seed, 0, window, 3000);
		CHECK(bad == 0, "seed %llu window %llu: %d errors",
		      (unsigned long long)seed, (unsigned long long)window, bad);
	}
}

TEST(wraps_around_many_times)
{
	/* 200000 slots through a 64-slot window: >3000 wraps. */
	CHECK(run_random(42, 0, 64, 200000) == 0);
	/* At very large ticket numbers too. */
	CHECK(run_random(43, (1ull << 63) - 5000, 128, 20000) == 0);
}

TEST(nonzero_first_slot)
{
	struct exec x;
	uint64_t f = 1000000007;
	REQUIRE(exec_init(&x, f, 256) == 0);
	CHECK_EQ_U64(x.idx, f);
	CHECK(exec_arrive(&x, 5) == -1, "slot before the first one");
	CHECK(exec_arrive(&x, f + 1) == 0);
	CHECK(exec_next(&x) == EXEC_NONE);
	CHECK(exec_arrive(&x, f) == 0);
	CHECK_EQ_U64(exec_next(&x), f);
	CHECK_EQ_U64(exec_next(&x), f + 1);
	CHECK(exec_next(&x) == EXEC_NONE);
	CHECK(run_random(7, f, 256, 5000) == 0);
	exec_free(&x);
}

TEST(duplicates_and_out_of_window_rejected)
{
	struct exec x;
	REQUIRE(exec_init(&x, 0, 16) == 0);
	CHECK(exec_arrive(&x, 3) == 0);
	CHECK(exec_arrive(&x, 3) == -1, "duplicate before execution");
	CHECK(exec_arrive(&x, 16) == -1, "idx + window is outside");
	CHECK(exec_arrive(&x, 15) == 0, "idx + window - 1 is inside");
	CHECK(exec_arrive(&x, UINT64_MAX - 1) == -1);
	CHECK(exec_arrive(&x, 0) == 0);
	CHECK_EQ_U64(exec_next(&x), 0);
	CHECK(exec_arrive(&x, 0) == -1, "duplicate after execution");
	CHECK(exec_arrive(&x, 16) == 0, "the window slid by one");
	CHECK(exec_arrive(&x, 17) == -1);
	CHECK_EQ_U64(x.rejected, 5);
	CHECK_EQ_U64(x.arrived, 4);
	/* A rejected arrival left no trace: slot 1 is still missing. */
	CHECK(exec_next(&x) == EXEC_NONE);
	for (uint64_t s = 1; s < 16; s++)
		if (s != 3 && s != 15)
			CHECK(exec_arrive(&x, s) == 0);
	for (uint64_t s = 1; s <= 16; s++)
		CHECK_EQ_U64(exec_next(&x), s);
	CHECK(exec_next(&x) == EXEC_NONE);
	exec_free(&x);
}

TEST(skip_voided_slots)
{
	struct exec x;
	REQUIRE(exec_init(&x, 10, 8) == 0);
	CHECK(exec_arrive(&x, 11) == 0);
	CHECK(exec_arrive(&x, 12) == 0);
	CHECK(exec_next(&x) == EXEC_NONE);
	CHECK(exec_skip(&x) == 0, "slot 10 never arrived: voided");
	CHECK_EQ_U64(exec_next(&x), 11);
	CHECK(exec_skip(&x) == -1, "slot 12 has arrived: cannot skip it");
	CHECK_EQ_U64(x.idx, 12);
	CHECK_EQ_U64(exec_next(&x), 12);
	CHECK(exec_arrive(&x, 10) == -1, "a skipped slot cannot arrive later");
	/* Skipping frees window room like executing does. */
	for (int i = 0; i < 8; i++)
		CHECK(exec_skip(&x) == 0);
	CHECK_EQ_U64(x.idx, 21);
	CHECK(exec_arrive(&x, 28) == 0);
	CHECK(exec_arrive(&x, 29) == -1);
	CHECK_EQ_U64(x.skipped, 9);
	CHECK_EQ_U64(x.executed, 2);
	exec_free(&x);
}

TEST(statistics)
{
	struct exec x;
	REQUIRE(exec_init(&x, 0, 32) == 0);
	/* 0..9 arrive in reverse: all but slot 0 are out of order. */
	for (int s = 9; s >= 0; s--)
		CHECK(exec_arrive(&x, (uint64_t)s) == 0);
	CHECK_EQ_U64(x.arrived, 10);
	CHECK_EQ_U64(x.out_of_order, 9);
	CHECK_EQ_U64(x.executed, 0);
	int n = 0;
	while (exec_next(&x) != EXEC_NONE)
		n++;
	CHECK(n == 10);
	CHECK_EQ_U64(x.executed, 10);
	CHECK(exec_arrive(&x, 3) == -1);
	CHECK_EQ_U64(x.rejected, 1);
	CHECK(exec_skip(&x) == 0);
	CHECK_EQ_U64(x.skipped, 1);
	exec_free(&x);
}

/* The worker's fast path (bench/server.c: worker_step): take the arrival
 * that is idx at once, else mark it, and drain after each take.  Over
 * random permutations it executes exactly what exec_arrive + exec_next
 * would, in slot order; exec_take refuses every slot but idx and changes
 * nothing then. */
TEST(take_at_idx_matches_arrive_and_next)
{
	enum { N = 256, W = 64 };
	for (int round = 0; round < 200; round++) {
		struct exec x;
		REQUIRE(exec_init(&x, 5, W) == 0);
		uint64_t perm[N], order[N];
		unsigned done = 0;
		/* arrivals stay inside the window: shuffle blocks of W */
		for (unsigned i = 0; i < N; i++)
			perm[i] = 5 + i;
		for (unsigned b = 0; b < N; b += W)
			for (unsigned i = W - 1; i > 0; i--) {
				unsigned j = (unsigned)(te_next() % (i + 1));
				uint64_t t = perm[b + i];
				perm[b + i] = perm[b + j];
				perm[b + j] = t;
			}
		int bad = 0;
		for (unsigned i = 0; i < N; i++) {
			uint64_t before = x.idx;
			if (exec_take(&x, perm[i])) {
				bad |= perm[i] != before;
				order[done++] = perm[i];
				while (exec_ready(&x))
					order[done++] = exec_next(&x);
			} else {
				bad |= x.idx != before || perm[i] == before;
				bad |= exec_arrive(&x, perm[i]) != 0;
				bad |= exec_ready(&x);   /* idx's bit is never set between takes */
			}
		}
		CHECK(!bad && done == N, "round %d: %u executed, bad %d", round, done, bad);
		for (unsigned i = 0; i < done; i++)
			bad |= order[i] != 5 + i;
		CHECK(!bad, "round %d: not in slot order", round);
		CHECK(x.arrived == N && x.executed == N && x.idx == 5 + N);
		exec_free(&x);
		if (bad)
			break;
	}
	/* negative control: a take of anything but idx is refused */
	struct exec x;
	REQUIRE(exec_init(&x, 0, 8) == 0);
	CHECK(exec_take(&x, 1) == 0 && x.idx == 0 && x.executed == 0);
	CHECK(exec_take(&x, 0) == 1 && x.idx == 1);
	CHECK(exec_take(&x, 0) == 0, "slot 0 taken twice");
	exec_free(&x);
}

UNIT_MAIN(init_rejects_bad_windows, in_order_arrivals, figure3_example,
	  random_permutations_execute_in_slot_order, wraps_around_many_times,
	  nonzero_first_slot, duplicates_and_out_of_window_rejected,
	  skip_voided_slots, statistics, take_at_idx_matches_arrive_and_next)
