/*
 * stall.h - a spinning thread's own record of the time it did not run.
 *
 * A thread that spins reads the clock on every pass of its loop.  When two
 * reads are further apart than one pass can take (threshold, default
 * STALL_THRESHOLD_NS), the thread was not running in between: the guest
 * kernel gave its CPU to another task, an interrupt ran long, or (what the
 * thread's own CPU time cannot show) the hypervisor descheduled the vCPU.
 * The guest counts a descheduled vCPU's time as the thread's CPU time when
 * the host reports no steal, so the interference check cannot see those
 * stalls in getrusage; this meter can, because it measures time passing,
 * not time charged.  The threshold is above the timer tick: on the
 * development VM every 4 ms tick took a spinning thread's CPU for about
 * 22 us, a steady tax that says nothing about one trial against another.
 *
 * Cost: one compare and one store per pass; a stall (rare) calls
 * stall_note().  Events keep their end in wall-clock time (CLOCK_REALTIME)
 * so the driver can intersect a server's stalls with a client's measured
 * window across processes (and, NTP permitting, across hosts).  The last
 * STALL_EVENTS events are kept; the totals count all of them.
 * tests/unit/test_stall.c checks the accounting.
 */
#ifndef OQB_STALL_H
#define OQB_STALL_H

#include <stdint.h>

#include <jansson.h>

#define STALL_THRESHOLD_NS 50000ull
#define STALL_EVENTS 256

struct stall_event {
	uint64_t wall_end_ns;     /* CLOCK_REALTIME when the thread ran again */
	uint64_t len_ns;          /* the gap between its two clock reads */
};

struct stall_meter {
	uint64_t prev;            /* monotonic time of the last pass */
	uint64_t threshold_ns;
	uint64_t from, to;        /* only gaps ending in [from, to) count */
	uint64_t total_ns, count, max_ns;
	uint64_t nev;             /* events noted; ev[] keeps the last STALL_EVENTS */
	struct stall_event ev[STALL_EVENTS];
};

/* Starts a meter whose loop began at start and counts the gaps that end in
 * [from, to) (monotonic ns; to 0: no end; threshold 0: the default). */
void stall_init(struct stall_meter *m, uint64_t threshold_ns, uint64_t start, uint64_t from, uint64_t to);
void stall_note(struct stall_meter *m, uint64_t now, uint64_t slack_ns);

/*
 * One pass of the loop, with the clock it read (monotonic ns).  slack_ns:
 * how long the previous pass may have taken for its work (a worker that ran
 * a batch of requests); it is added to the threshold, and not subtracted
 * from a stall, so a stall counts whole or not at all.
 */
static inline void stall_tick(struct stall_meter *m, uint64_t now, uint64_t slack_ns)
{
	if (now - m->prev > m->threshold_ns + slack_ns)
		stall_note(m, now, slack_ns);
	m->prev = now;
}

/* {"threshold_ns", "total_ns", "count", "max_ns", "events": [[wall end,
 * length], ...] (the kept ones, oldest first), "events_dropped"}. */
json_t *stall_json(const struct stall_meter *m);

/* Total of the kept events' parts that fall inside [from, to) (wall ns). */
uint64_t stall_overlap(const struct stall_event *ev, unsigned n, uint64_t from, uint64_t to);

#endif
