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

/*
 * Exponential draws by Marsaglia and Tsang's ziggurat (J. Stat. Softw. 5(8),
 * 2000): 256 strips of equal area V under e^-x, the bottom one with the
 * tail beyond R folded in.  A draw picks a strip and a point across it; it
 * is under the curve without a look at e^-x about 99 % of the time, which
 * makes it several times cheaper than a logarithm per draw.  That is on a
 * client's hot path: one draw per request at millions a second.  The law
 * is exact, not approximated: the rest is decided against e^-x itself, and
 * the tail is R plus an exponential draw by inversion (memorylessness).
 */
#define ZIG_N 256
#define ZIG_R 7.69711747013104972
#define ZIG_V 0.0039496598225815571993

static double zig_x[ZIG_N + 1];   /* strip i spans [0, x[i]) ... */
static double zig_f[ZIG_N + 1];   /* ... and heights f(x[i]) .. f(x[i+1]) */

/* Built when the program loads, so that a draw does not ask whether they
 * are built yet. */
static void __attribute__((constructor)) zig_init(void)
{
	zig_x[0] = ZIG_V / exp(-ZIG_R);   /* the bottom strip with the tail's area */
	zig_x[1] = ZIG_R;
	for (int i = 1; i < ZIG_N - 1; i++)
		zig_x[i + 1] = -log(ZIG_V / zig_x[i] + exp(-zig_x[i]));
	zig_x[ZIG_N] = 0;
	for (int i = 0; i <= ZIG_N; i++)
		zig_f[i] = exp(-zig_x[i]);
}

double arrival_exp_draw(struct rng *r, double mean_ns)
{
	for (;;) {
		uint64_t b = rng_next(r);
		unsigned i = (unsigned)(b & (ZIG_N - 1));
		double x = (double)(b >> 11) * 0x1.0p-53 * zig_x[i];
		if (x < zig_x[i + 1])
			return x * mean_ns;                  /* inside the strip's core */
		if (i == 0)   /* the tail: R plus Exp(1) by inversion (log1p(-U), U < 1, is finite) */
			return (ZIG_R - log1p(-rng_double(r))) * mean_ns;
		if (zig_f[i] + rng_double(r) * (zig_f[i + 1] - zig_f[i]) < exp(-x))
			return x * mean_ns;                  /* the wedge, under the curve */
	}
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
