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

/* Busy-wait until clock_ns() >= deadline; returns the time it saw. */
uint64_t clock_spin_until(uint64_t deadline);

/* Sleep (not spin) until deadline, for waits longer than a few 10s of us. */
void clock_sleep_until(uint64_t deadline);

#endif
