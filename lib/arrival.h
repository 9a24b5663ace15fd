/*
 * arrival.h - when a client thread sends its next request.
 *
 * Open loop (Poisson): an absolute schedule.  Each call adds an exponential
 * inter-arrival to the previous intended time (next += -log1p(-U)/lambda)
 * and never resets it to "now", so a slow sender shows up as latency
 * measured from the intended time instead of silently lowering the load.
 *
 * Closed loop: a fixed number of requests outstanding per thread; a new one
 * is sent when one completes, and its intended time is the completion time.
 *
 * Times are doubles so fractions of a nanosecond carry over between draws;
 * at CLOCK_MONOTONIC values below 2^53 ns (104 days of uptime) a double
 * holds every nanosecond exactly.
 */
#ifndef OQB_ARRIVAL_H
#define OQB_ARRIVAL_H

#include <stdint.h>
#include "rng.h"

enum arrival_kind { ARRIVAL_POISSON = 0, ARRIVAL_CLOSED = 1 };

struct arrival {
	enum arrival_kind kind;
	double next_ns;        /* intended time of the next send (absolute, ns) */
	double mean_ia_ns;     /* 1/lambda in ns (Poisson) */
	unsigned outstanding;  /* closed loop: requests kept in flight */
	struct rng rng;
};

/*
 * Poisson at ops_per_sec (> 0), schedule starting at start_ns: the first
 * request is one exponential gap after start_ns (so threads that share a
 * start time do not all fire at once).  Callers validate the rate; a rate
 * that is not a positive finite number gives a schedule that never fires
 * (arrival_next returns UINT64_MAX) rather than a flood.
 */
void arrival_init_poisson(struct arrival *a, uint64_t start_ns, double ops_per_sec,
			  uint64_t seed);

/* Closed loop with `outstanding` requests in flight (the caller keeps them). */
void arrival_init_closed(struct arrival *a, unsigned outstanding, uint64_t seed);

/*
 * Poisson: the intended time of the next request, then the schedule moves
 * on by one exponential gap from that intended time, however late the
 * caller is.  Closed loop: clock_ns(), i.e. "now".
 */
uint64_t arrival_next(struct arrival *a);

/* Peek at the next intended time without advancing (0 in closed loop). */
static inline uint64_t arrival_peek(const struct arrival *a)
{
	return a->next_ns < 0x1p64 ? (uint64_t)a->next_ns : UINT64_MAX;
}

/*
 * One exponential draw with mean mean_ns (for service times too), by the
 * ziggurat method: exact in law, finite (at most about 44.4 means: the
 * ziggurat's edge 7.7 plus 36.7, the most an inversion draw gives) and
 * never negative.
 */
double arrival_exp_draw(struct rng *r, double mean_ns);

#endif
