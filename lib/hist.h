/*
 * hist.h - log-linear latency histogram (HdrHistogram's layout).
 *
 * Values are unsigned 64-bit (nanoseconds in oqbench).  The range is split
 * into power-of-two buckets, each divided into linear sub-buckets; each
 * sub-bucket is one counter.  Values below HIST_SUB (2048) get a counter
 * each and are exact.  A value v >= 2048 with 2^m <= v < 2^(m+1) shares a
 * counter of width w = 2^(m - HIST_SUB_BITS + 1) whose lowest value is at
 * least 1024 w.  Reads report the midpoint low + w/2 of the counter
 * (clamped to the exact [min, max]), so the reported value differs from
 * the true one by at most w/2 <= v/2048: relative error <= 1/2048
 * (0.049 %, better than 3 significant digits), exact below 2048.  The
 * bound is reached at v = 2^m.  Values above HIST_MAX (2^40 - 1 ns, about
 * 18.3 minutes) are clamped to HIST_MAX and counted in `overflow`.
 *
 * Recording is O(1): one clz, a shift, an add; no allocation, no lock.  A
 * histogram belongs to one thread; merge them afterwards (never average
 * percentiles).
 */
#ifndef OQB_HIST_H
#define OQB_HIST_H

#include <stdint.h>
#include <stddef.h>
#include <jansson.h>

#define HIST_SUB_BITS 11
#define HIST_SUB      (1u << HIST_SUB_BITS)          /* 2048 sub-buckets */
#define HIST_HALF     (HIST_SUB / 2)
#define HIST_MAX_BITS 40                             /* 2^40 ns ~ 1100 s */
#define HIST_MAX      ((1ull << HIST_MAX_BITS) - 1)
#define HIST_NBUCKETS (HIST_MAX_BITS - HIST_SUB_BITS + 1)
#define HIST_NCOUNTS  ((HIST_NBUCKETS + 1) * HIST_HALF)

struct hist {
	uint64_t n;          /* values recorded */
	uint64_t min, max;   /* exact extremes (min = UINT64_MAX when empty) */
	double   sum;        /* sum, for the mean: exact while below 2^53 (104 days of ns) */
	uint64_t overflow;   /* values clamped to HIST_MAX */
	uint64_t counts[HIST_NCOUNTS];
};

/* Allocates an empty histogram (about 250 KiB; NULL on failure). */
struct hist *hist_new(void);
/* Frees h (NULL is fine). */
void hist_free(struct hist *h);
/* Empties h: all counts 0, min = UINT64_MAX, max = 0. */
void hist_reset(struct hist *h);

/*
 * Index of the counter that holds v (v <= HIST_MAX): v itself below 2048;
 * above, the bucket number shift >= 1 (v >> shift is in [1024, 2048))
 * places v at (shift + 1) * 1024 + (v >> shift) - 1024, so buckets follow
 * each other with no gap and HIST_MAX lands on HIST_NCOUNTS - 1.  (The
 * branch-free form clz(v | 2047) measured about 20 % slower here on
 * oqb-microbench's value mix; for real latencies the branch is predictable.)
 */
static inline unsigned hist_index(uint64_t v)
{
	if (v < HIST_SUB)
		return (unsigned)v;
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);       /* >= HIST_SUB_BITS */
	unsigned shift = msb - (HIST_SUB_BITS - 1);              /* bucket number >= 1 */
	return (shift << (HIST_SUB_BITS - 1)) + (unsigned)(v >> shift);
}

/* Records one value: O(1), no allocation, no lock (one histogram per thread). */
static inline void hist_record(struct hist *h, uint64_t v)
{
	if (__builtin_expect(v > HIST_MAX, 0)) {
		v = HIST_MAX;
		h->overflow++;
	}
	h->counts[hist_index(v)]++;
	h->n++;
	h->sum += (double)v;
	if (v < h->min) h->min = v;
	if (v > h->max) h->max = v;
}

/*
 * Lowest value that maps to counter i, the width of its range (1 below
 * 2048, else a power of two), and the midpoint low + width/2 that reads
 * report.  i >= HIST_NCOUNTS is treated as the last counter.
 */
uint64_t hist_index_low(unsigned i);
uint64_t hist_index_width(unsigned i);
uint64_t hist_index_mid(unsigned i);

/* dst += src: the same as having recorded both streams into dst. */
void hist_merge(struct hist *dst, const struct hist *src);
/* Takes src, a part of what dst recorded, out of dst, bin by bin (the
 * untagged requests are all of them less the tagged).  n, sum and the
 * bins are exact; min and max become the bounds of the lowest and highest
 * bins left, within dst's own extremes. */
void hist_subtract(struct hist *dst, const struct hist *src);
/* 1 when every bin of part holds at most what whole's does (part can be
 * taken out of whole with hist_subtract and leave no bin short), else 0. */
int hist_is_part(const struct hist *whole, const struct hist *part);

/*
 * Rank (1-based) of the p-th percentile among n values: ceil(p/100 * n),
 * clamped to [1, n]; 0 when n == 0.  p <= 0 (or NaN) gives 1, p >= 100
 * gives n.  A relative 1e-14 is dropped before rounding up because p/100
 * is rarely exact in binary (99.9 / 100 * 1000 = 999.0000000000001).
 */
uint64_t hist_rank(uint64_t n, double p);

/*
 * Value at percentile p (0 < p <= 100): the counter that holds the
 * hist_rank(n, p)-th smallest value, reported as its midpoint clamped to
 * [min, max] (error bound above).  0 when empty.
 */
uint64_t hist_percentile(const struct hist *h, double p);

/*
 * The k-th smallest recorded value (1-based, clamped to [1, n]), as above;
 * ranks 1 and n return the exact min and max.
 */
uint64_t hist_value_at_rank(const struct hist *h, uint64_t k);

/* sum / n, 0 when empty. */
double hist_mean(const struct hist *h);

/*
 * JSON: {"n":..,"min":..,"max":..,"sum":..,"overflow":..,
 *        "bins":[[index,count],...]}  (non-empty counters only, by index).
 * min is written as 0 when n == 0.  sum is an integer whenever it is
 * integral (always, for recorded values), so no float formatting is
 * involved.  hist_to_json returns a new reference, NULL on allocation
 * failure.  hist_from_json reads that back bit-exact and checks it
 * (types, index range, no duplicate index, counts summing to n, min and
 * max inside the first and last bins); it returns 0, or -1 with a message
 * naming the bad field in err and h left empty.
 */
json_t *hist_to_json(const struct hist *h);
int hist_from_json(struct hist *h, const json_t *j, char *err, size_t errlen);

#endif
