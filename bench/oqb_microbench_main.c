/*
 * oqb-microbench - the cost of the measurement core on this machine, in ns
 * per call: hist_record, clock_ns, zipf_next (Gray's formula and the exact
 * table), zipf_scrambled_next, arrival_next, rng_next.  Not a test: it
 * prints numbers and asserts nothing.
 *
 * Each benchmark runs --reps times and the median is reported (with the
 * fastest), so one preempted repetition on a shared machine does not move
 * the result.  Every result feeds a sink that is printed, so the compiler
 * cannot drop the loops.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrival.h"
#include "clock.h"
#include "hist.h"
#include "opts.h"
#include "rng.h"
#include "zipf.h"

struct mb_opts {
	double scale;
	int reps;
	int json;
	uint64_t seed;
};

static const struct opt mb_tab[] = {
	{ "scale", OPT_DBL, offsetof(struct mb_opts, scale), "1", 0.001, 1000, NULL,
	  "multiply every benchmark's call count (1: a few seconds in all)" },
	{ "reps", OPT_INT, offsetof(struct mb_opts, reps), "5", 1, 101, NULL,
	  "repetitions per benchmark; the median is reported" },
	{ "json", OPT_BOOL, offsetof(struct mb_opts, json), "false", 0, 0, NULL,
	  "print one JSON object instead of a table" },
	{ "seed", OPT_U64, offsetof(struct mb_opts, seed), "1", 0, 1.8e19, NULL,
	  "random seed" },
	{ NULL, 0, 0, NULL, 0, 0, NULL,
	  "ns per call of the histogram, clock, Zipf, arrival and rng primitives" },
};

/* Shared state of the benchmarks (set up once, outside the timed loops). */
struct mb_ctx {
	struct hist *h;
	uint64_t *vals;          /* VALS pregenerated latencies for hist_record */
	struct zipf zgray, ztable;
	struct arrival arr;
	struct rng rng;
	uint64_t sink;
};

#define VALS 4096            /* 32 KiB: stays in L1/L2 beside the counters */

typedef void (*bench_fn)(struct mb_ctx *c, uint64_t iters);

static void b_hist_record(struct mb_ctx *c, uint64_t iters)
{
	for (uint64_t i = 0; i < iters; i++)
		hist_record(c->h, c->vals[i & (VALS - 1)]);
	c->sink += c->h->n;
}

static void b_clock_ns(struct mb_ctx *c, uint64_t iters)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < iters; i++)
		s += clock_ns();
	c->sink += s;
}

static void b_zipf_gray(struct mb_ctx *c, uint64_t iters)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < iters; i++)
		s += zipf_next(&c->zgray, &c->rng);
	c->sink += s;
}

static void b_zipf_table(struct mb_ctx *c, uint64_t iters)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < iters; i++)
		s += zipf_next(&c->ztable, &c->rng);
	c->sink += s;
}

static void b_zipf_scrambled(struct mb_ctx *c, uint64_t iters)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < iters; i++)
		s += zipf_scrambled_next(&c->zgray, &c->rng);
	c->sink += s;
}

static void b_arrival_next(struct mb_ctx *c, uint64_t iters)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < iters; i++)
		s += arrival_next(&c->arr);
	c->sink += s;
}

static void b_rng_next(struct mb_ctx *c, uint64_t iters)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < iters; i++)
		s ^= rng_next(&c->rng);
	c->sink += s;
}

static const struct {
	const char *name;
	bench_fn fn;
	double calls;            /* per repetition at --scale 1 */
	const char *what;
} benches[] = {
	{ "hist_record", b_hist_record, 2e7, "random latencies 100 ns..100 ms, hot loop" },
	{ "clock_ns", b_clock_ns, 2e6, "CLOCK_MONOTONIC via the vDSO" },
	{ "zipf_next", b_zipf_gray, 2e6, "Gray's formula, theta 0.99, n = 10^6" },
	{ "zipf_next_table", b_zipf_table, 5e5, "exact CDF table, theta 0.99, n = 10^6" },
	{ "zipf_scrambled_next", b_zipf_scrambled, 2e6, "Gray + FNV-1a, theta 0.99, n = 10^6" },
	{ "arrival_next", b_arrival_next, 3e6, "Poisson schedule, 1 Mops/s" },
	{ "rng_next", b_rng_next, 2e7, "xoshiro256**" },
};
#define NBENCH (sizeof benches / sizeof benches[0])

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sets up the generators and the value array; -1 with a message in err. */
static int ctx_init(struct mb_ctx *c, uint64_t seed, char *err, size_t errlen)
{
	memset(c, 0, sizeof *c);
	rng_seed(&c->rng, seed);
	c->h = hist_new();
	c->vals = malloc(VALS * sizeof *c->vals);
	if (!c->h || !c->vals) {
		snprintf(err, errlen, "out of memory for the histogram");
		return -1;
	}
	/* Log-uniform over 100 ns .. 100 ms: every bucket in that span is hit. */
	for (int i = 0; i < VALS; i++)
		c->vals[i] = (uint64_t)exp(log(100.0) + rng_double(&c->rng) * log(1e6));
	if (zipf_init(&c->zgray, 1000000, 0.99, 0, err, errlen) ||
	    zipf_init(&c->ztable, 1000000, 0.99, 1000000, err, errlen))
		return -1;
	arrival_init_poisson(&c->arr, clock_ns(), 1e6, seed);
	return 0;
}

static void ctx_free(struct mb_ctx *c)
{
	zipf_free(&c->zgray);
	zipf_free(&c->ztable);
	hist_free(c->h);
	free(c->vals);
}

int main(int argc, char **argv)
{
	struct mb_opts o;
	struct mb_ctx c;
	char err[512];
	double med[NBENCH], best[NBENCH];

	int r = opts_parse(mb_tab, &o, argc, argv, NULL, err, sizeof err);
	if (r == 1)
		return 0;
	if (r < 0) {
		fprintf(stderr, "oqb-microbench: %s\n", err);
		return 2;
	}
	if (ctx_init(&c, o.seed, err, sizeof err)) {
		fprintf(stderr, "oqb-microbench: %s\n", err);
		ctx_free(&c);
		return 1;
	}
	double *t = malloc((size_t)o.reps * sizeof *t);
	if (!t) {
		fprintf(stderr, "oqb-microbench: out of memory\n");
		ctx_free(&c);
		return 1;
	}
	for (size_t b = 0; b < NBENCH; b++) {
		uint64_t iters = (uint64_t)fmax(1000, benches[b].calls * o.scale);
		benches[b].fn(&c, iters / 10);   /* warm caches and the branch predictor */
		for (int k = 0; k < o.reps; k++) {
			uint64_t t0 = clock_ns();
			benches[b].fn(&c, iters);
			t[k] = (double)(clock_ns() - t0) / (double)iters;
		}
		qsort(t, (size_t)o.reps, sizeof *t, cmp_double);
		med[b] = t[o.reps / 2];
		best[b] = t[0];
	}
	free(t);

	if (o.json) {
		printf("{\"unit\":\"ns_per_call\",\"reps\":%d,\"scale\":%g,\"results\":{", o.reps, o.scale);
		for (size_t b = 0; b < NBENCH; b++)
			printf("%s\"%s\":{\"median_ns\":%.3f,\"min_ns\":%.3f}", b ? "," : "",
			       benches[b].name, med[b], best[b]);
		printf("},\"sink\":%llu}\n", (unsigned long long)c.sink);
	} else {
		printf("%-20s %10s %10s  %s\n", "benchmark", "median", "min", "(ns per call)");
		for (size_t b = 0; b < NBENCH; b++)
			printf("%-20s %10.2f %10.2f  %s\n", benches[b].name, med[b], best[b], benches[b].what);
		printf("(sink %llu; %d repetitions each)\n", (unsigned long long)c.sink, o.reps);
	}
	ctx_free(&c);
	return 0;
}
