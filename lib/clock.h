/*
 * clock.h - monotonic nanoseconds.
 *
 * clock_ns() reads CLOCK_MONOTONIC through the vDSO (no system call); the
 * cost on this machine is printed by bin/oqb-microbench.  All latencies in
 * oqbench are differences of clock_ns() values taken on one host.
 */
#ifndef OQB_CLOCK_H
#define OQB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wall-clock (CLOCK_REALTIME) nanoseconds, for timestamps in results only. */
uint64_t clock_wall_ns(void);

/*
 * Busy-waits (with the CPU's pause hint) until clock_ns() >= deadline;
 * returns the first clock_ns() value at or past the deadline.
 */
uint64_t clock_spin_until(uint64_t deadline);

/*
 * Waits until clock_ns() >= deadline without burning the CPU for long:
 * clock_nanosleep (absolute, CLOCK_MONOTONIC) until CLOCK_SPIN_TAIL_NS
 * before the deadline, then spins the rest, so the kernel's wake-up
 * latency is absorbed by the spin.  Never returns early; it can return
 * late when the sleep itself overshoots by more than the tail (timer
 * slack, a busy machine).  Returns at once if deadline is past.
 */
#define CLOCK_SPIN_TAIL_NS 50000ull
void clock_sleep_until(uint64_t deadline);

#endif
