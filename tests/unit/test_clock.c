/*
 * test_clock.c - the monotonic clock never goes back, and the waits never
 * return before their deadline.  No upper bounds on lateness: the machine
 * is shared and such bounds would be flaky.
 */
#include "unit.h"
#include "clock.h"

#include <stdint.h>

TEST(clock_ns_is_monotonic)
{
	uint64_t prev = clock_ns();
	CHECK(prev > 0);
	for (int i = 0; i < 200000; i++) {
		uint64_t now = clock_ns();
		REQUIRE(now >= prev, "clock went back from %llu to %llu",
			(unsigned long long)prev, (unsigned long long)now);
		prev = now;
	}
}

TEST(wall_clock_is_plausible)
{
	uint64_t w = clock_wall_ns();
	/* After 2020-01-01 and before 2100-01-01. */
	CHECK(w > 1577836800ull * 1000000000ull, "wall clock %llu", (unsigned long long)w);
	CHECK(w < 4102444800ull * 1000000000ull, "wall clock %llu", (unsigned long long)w);
}

TEST(spin_until_reaches_the_deadline)
{
	for (int i = 0; i < 20; i++) {
		uint64_t deadline = clock_ns() + 5000 * (uint64_t)i;
		uint64_t seen = clock_spin_until(deadline);
		CHECK(seen >= deadline);
		CHECK(clock_ns() >= deadline);
	}
	/* A deadline in the past returns at once with the current time. */
	uint64_t t0 = clock_ns();
	CHECK(clock_spin_until(t0 / 2) >= t0);
}

TEST(sleep_until_never_returns_early)
{
	/* Below, at and above the 50 us spin tail, up to 10 ms. */
	static const uint64_t wait_ns[] = { 0, 1000, 30000, 50000, 60000, 200000, 2000000, 10000000 };
	for (size_t i = 0; i < sizeof wait_ns / sizeof wait_ns[0]; i++) {
		for (int rep = 0; rep < 3; rep++) {
			uint64_t deadline = clock_ns() + wait_ns[i];
			clock_sleep_until(deadline);
			uint64_t now = clock_ns();
			CHECK(now >= deadline, "wait %llu ns returned %llu ns early",
			      (unsigned long long)wait_ns[i], (unsigned long long)(deadline - now));
		}
	}
	uint64_t t0 = clock_ns();
	clock_sleep_until(t0 / 2);   /* past: returns without sleeping */
	CHECK(clock_ns() >= t0);
}

UNIT_MAIN(clock_ns_is_monotonic, wall_clock_is_plausible, spin_until_reaches_the_deadline,
	  sleep_until_never_returns_early)
