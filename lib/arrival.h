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

/* Poisson at ops_per_sec (> 0), schedule starting at start_ns. */
void arrival_init_poisson(struct arrival *a, uint64_t start_ns, double ops_per_sec,
			  uint64_t seed);
void arrival_init_closed(struct arrival *a, unsigned outstanding, uint64_t seed);

/* Poisson: intended time of the next request; advances the schedule. */
uint64_t arrival_next(struct arrival *a);

/* Peek at the next intended time without advancing. */
static inline uint64_t arrival_peek(const struct arrival *a) { return (uint64_t)a->next_ns; }

/* One exponential draw with mean mean_ns (for service times too). */
double arrival_exp_draw(struct rng *r, double mean_ns);

#endif
