/*
 * clock.c - wall-clock time and waiting for a monotonic deadline.
 *
 * clock_ns() itself is inline in clock.h.  The waits here are what an
 * open-loop sender uses to hit its schedule: spin for short gaps, sleep
 * then spin for long ones.
 */
#include "bits.h"
#include "clock.h"

#include <errno.h>

uint64_t clock_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}


uint64_t clock_spin_until(uint64_t deadline)
{
	uint64_t now;

	while ((now = clock_ns()) < deadline)
		cpu_relax();
	return now;
}

void clock_sleep_until(uint64_t deadline)
{
	uint64_t now = clock_ns();

	if (now >= deadline)
		return;
	if (deadline - now > CLOCK_SPIN_TAIL_NS) {
		uint64_t wake = deadline - CLOCK_SPIN_TAIL_NS;
		struct timespec ts = {
			.tv_sec = (time_t)(wake / 1000000000ull),
			.tv_nsec = (long)(wake % 1000000000ull),
		};
		/* Absolute time: a signal restarts the same wait, no drift. */
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	clock_spin_until(deadline);
}
