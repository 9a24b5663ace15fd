/*
 * test_arrival.c - the Poisson schedule: mean gap, exponential shape
 * (Kolmogorov-Smirnov at a fixed seed, with constant, uniform and
 * wrong-mean sequences as controls that must fail the same test), the
 * absolute timeline that a late caller cannot shift, and closed loop.
 */
#include "unit.h"
#include "arrival.h"
#include "clock.h"
#include "stats.h"

#include <stdint.h>

enum { NGAP = 200000 };
static double gaps[NGAP];

TEST(mean_gap_matches_rate)
{
	struct arrival a;
	arrival_init_poisson(&a, 1000000, 1e6, 1);   /* 1 Mops/s: 1000 ns mean */
	CHECK_NEAR(a.mean_ia_ns, 1000, 1e-9);
	uint64_t first = arrival_next(&a), prev = first;
	CHECK(first >= 1000000);
	for (int i = 0; i < NGAP; i++) {
		uint64_t t = arrival_next(&a);
		REQUIRE(t >= prev);
		prev = t;
	}
	/* Mean of NGAP exponential gaps: standard error mean / sqrt(NGAP); allow 5. */
	double mean = (double)(prev - first) / NGAP;
	CHECK_NEAR(mean, 1000, 5 * 1000 / sqrt(NGAP));
}

/* The test every sequence below goes through: KS against Exp(mean) at 1 %. */
static int looks_exponential(double *x, size_t n, double mean, double *t)
{
	*t = stats_ks_exp(x, n, mean);
	return *t < STATS_KS_CRIT_1PCT;
}

TEST(gaps_are_exponential)
{
	struct arrival a;
	double t;
	/* Gaps as doubles (next_ns differences), so rounding to ns does not blur the law. */
	arrival_init_poisson(&a, 0, 250000, 2);           /* 4 us mean */
	for (int i = 0; i < NGAP; i++) {
		double before = a.next_ns;
		arrival_next(&a);
		gaps[i] = a.next_ns - before;
	}
	CHECK(looks_exponential(gaps, NGAP, 4000, &t), "Poisson gaps rejected: T = %.3f", t);

	/* Controls: the same test must reject these. */
	for (int i = 0; i < NGAP; i++)
		gaps[i] = 4000;
	CHECK(!looks_exponential(gaps, NGAP, 4000, &t), "constant gaps accepted: T = %.3f", t);
	struct rng r;
	rng_seed(&r, 3);
	for (int i = 0; i < NGAP; i++)
		gaps[i] = 8000 * rng_double(&r);                /* uniform, same mean */
	CHECK(!looks_exponential(gaps, NGAP, 4000, &t), "uniform gaps accepted: T = %.3f", t);
	for (int i = 0; i < NGAP; i++)
		gaps[i] = arrival_exp_draw(&r, 4200);         /* exponential, 5 % off */
	CHECK(!looks_exponential(gaps, NGAP, 4000, &t), "wrong-mean gaps accepted: T = %.3f", t);
}

TEST(schedule_is_absolute)
{
	struct arrival a, late;
	struct rng r;
	const uint64_t start = 5000000000ull;
	arrival_init_poisson(&a, start, 100000, 9);
	arrival_init_poisson(&late, start, 100000, 9);
	/* The schedule is start + a running sum of draws from the seeded rng. */
	rng_seed(&r, 9);
	double t = (double)start + arrival_exp_draw(&r, 10000);
	for (int i = 0; i < 1000; i++) {
		CHECK_EQ_U64(arrival_peek(&a), (uint64_t)t);
		REQUIRE(arrival_next(&a) == (uint64_t)t, "step %d", i);
		t += arrival_exp_draw(&r, 10000);
	}
	/* A caller that is late (here: really sleeps) gets the same times. */
	arrival_init_poisson(&a, start, 100000, 9);
	for (int i = 0; i < 20; i++) {
		if (i % 5 == 0)
			clock_sleep_until(clock_ns() + 100000);
		REQUIRE(arrival_next(&late) == arrival_next(&a));
	}
}

TEST(bad_rate_never_fires)
{
	static const double rates[] = { 0, -5, NAN, INFINITY };
	for (size_t i = 0; i < 4; i++) {
		struct arrival a;
		arrival_init_poisson(&a, 1000, rates[i], 1);
		CHECK_EQ_U64(arrival_peek(&a), UINT64_MAX);
		CHECK_EQ_U64(arrival_next(&a), UINT64_MAX);
		CHECK_EQ_U64(arrival_next(&a), UINT64_MAX);
	}
}

TEST(closed_loop_sends_now)
{
	struct arrival a;
	arrival_init_closed(&a, 8, 4);
	CHECK_EQ_U64(a.outstanding, 8);
	CHECK(a.kind == ARRIVAL_CLOSED);
	CHECK_EQ_U64(arrival_peek(&a), 0);
	uint64_t t0 = clock_ns(), t = arrival_next(&a), t1 = clock_ns();
	CHECK(t0 <= t && t <= t1);
}

TEST(exp_draw_is_finite)
{
	struct rng r;
	rng_seed(&r, 8);
	double mx = 0;
	for (int i = 0; i < 1000000; i++) {
		double d = arrival_exp_draw(&r, 1.0);
		REQUIRE(d >= 0 && isfinite(d));
		if (d > mx)
			mx = d;
	}
	CHECK(mx < 45, "largest draw %g means", mx);   /* 7.7 + -log1p(-(1 - 2^-53)) = 44.4 */
}

/* The draws' tail, where the ziggurat takes its separate path (beyond its
 * edge R = 7.697) and far beyond: P(X > x) = e^-x.  A tail drawn wrong
 * (say R plus nothing, or a second R) moves these counts by tens of
 * standard deviations; so does a strip table off by one. */
TEST(exp_draw_tail_and_body_follow_the_law)
{
	enum { N = 4000000 };
	const double at[] = { 0.05, 0.5, 1, 2, 4, 7.69711747013104972, 9, 12 };
	uint64_t over[8] = { 0 };
	struct rng r;
	rng_seed(&r, 21);
	double sum = 0;
	for (int i = 0; i < N; i++) {
		double d = arrival_exp_draw(&r, 1.0);
		sum += d;
		for (int k = 0; k < 8; k++)
			over[k] += d > at[k];
	}
	CHECK_NEAR(sum / N, 1.0, 5 / sqrt((double)N));
	for (int k = 0; k < 8; k++) {
		double p = exp(-at[k]), want = p * N, sd = sqrt(N * p * (1 - p));
		CHECK(fabs((double)over[k] - want) < 5 * sd + 1, "P(X > %g): %llu draws, expected %.1f (sd %.1f)",
		      at[k], (unsigned long long)over[k], want, sd);
	}
}

UNIT_MAIN(mean_gap_matches_rate, gaps_are_exponential, schedule_is_absolute, bad_rate_never_fires,
	  closed_loop_sends_now, exp_draw_is_finite, exp_draw_tail_and_body_follow_the_law)
