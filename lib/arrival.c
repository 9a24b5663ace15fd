/*
 * arrival.c - open-loop Poisson schedules and the closed-loop mode.
 *
 * The Poisson schedule is absolute: each intended time is the previous
 * intended time plus an exponential gap, never "now" plus a gap, so a
 * sender that falls behind shows up as latency (measured from the
 * intended time) instead of quietly lowering the offered load.
 */
#include "arrival.h"
#include "clock.h"

#include <math.h>
#include <string.h>

double arrival_exp_draw(struct rng *r, double mean_ns)
{
	/* log1p(-U) with U < 1 is finite; -log(U) would be infinite at U = 0. */
	return -log1p(-rng_double(r)) * mean_ns;
}

void arrival_init_poisson(struct arrival *a, uint64_t start_ns, double ops_per_sec,
			  uint64_t seed)
{
	memset(a, 0, sizeof *a);
	a->kind = ARRIVAL_POISSON;
	rng_seed(&a->rng, seed);
	if (!(ops_per_sec > 0) || !isfinite(ops_per_sec)) {
		a->mean_ia_ns = INFINITY;
		a->next_ns = INFINITY;
		return;
	}
	a->mean_ia_ns = 1e9 / ops_per_sec;
	a->next_ns = (double)start_ns + arrival_exp_draw(&a->rng, a->mean_ia_ns);
}

void arrival_init_closed(struct arrival *a, unsigned outstanding, uint64_t seed)
{
	memset(a, 0, sizeof *a);
	a->kind = ARRIVAL_CLOSED;
	a->outstanding = outstanding;
	rng_seed(&a->rng, seed);
}

uint64_t arrival_next(struct arrival *a)
{
	if (a->kind == ARRIVAL_CLOSED)
		return clock_ns();
	uint64_t t = arrival_peek(a);
	if (isfinite(a->next_ns))
		a->next_ns += arrival_exp_draw(&a->rng, a->mean_ia_ns);
	return t;
}
