/*
 * hist.h - log-linear latency histogram (HdrHistogram's layout).
 *
 * Values are unsigned 64-bit (nanoseconds in oqbench).  The range is split
 * into power-of-two buckets, each divided into HIST_SUB linear sub-buckets.
 * Values below HIST_SUB are recorded exactly.  A value v >= HIST_SUB falls
 * in a sub-bucket of width 2^(floor(log2 v) - HIST_SUB_BITS + 1), so the
 * representative value reported for it differs from v by less than
 * 1 / 2^(HIST_SUB_BITS - 1) of v  (HIST_SUB_BITS = 11: relative error below
 * 1/1024 < 0.1 %, i.e. better than 3 significant digits).  Values above
 * HIST_MAX are clamped to HIST_MAX and counted in `overflow`.
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
	double   sum;        /* exact sum, for the mean */
	uint64_t overflow;   /* values clamped to HIST_MAX */
	uint64_t counts[HIST_NCOUNTS];
};

/* Allocates an empty histogram (calloc; NULL on failure). */
struct hist *hist_new(void);
void hist_free(struct hist *h);
void hist_reset(struct hist *h);

/* Index of the counter that holds v (v <= HIST_MAX). */
static inline unsigned hist_index(uint64_t v)
{
	if (v < HIST_SUB)
		return (unsigned)v;
	unsigned msb = 63u - (unsigned)__builtin_clzll(v);       /* >= HIST_SUB_BITS */
	unsigned shift = msb - (HIST_SUB_BITS - 1);              /* bucket number >= 1 */
	return (shift << (HIST_SUB_BITS - 1)) + (unsigned)(v >> shift);
}

static inline void hist_record(struct hist *h, uint64_t v)
{
	if (v > HIST_MAX) {
		v = HIST_MAX;
		h->overflow++;
	}
	h->counts[hist_index(v)]++;
	h->n++;
	h->sum += (double)v;
	if (v < h->min) h->min = v;
	if (v > h->max) h->max = v;
}

/* Lowest value that maps to counter i, and the width of its range. */
uint64_t hist_index_low(unsigned i);
uint64_t hist_index_width(unsigned i);

/* dst += src. */
void hist_merge(struct hist *dst, const struct hist *src);

/*
 * Value at percentile p (0 < p <= 100): the smallest recorded value's
 * counter range that holds the ceil(p/100 * n)-th smallest value, reported
 * as the midpoint of that range, clamped to [min, max].  0 when empty.
 */
uint64_t hist_percentile(const struct hist *h, double p);

/* Value of the k-th smallest recorded value (1-based), as above. */
uint64_t hist_value_at_rank(const struct hist *h, uint64_t k);

double hist_mean(const struct hist *h);

/*
 * JSON: {"n":..,"min":..,"max":..,"sum":..,"overflow":..,
 *        "bins":[[index,count],...]}  (non-empty counters only).
 * hist_from_json reads that back bit-exact; on error it returns -1 and
 * writes a message naming the bad field into err.
 */
json_t *hist_to_json(const struct hist *h);
int hist_from_json(struct hist *h, const json_t *j, char *err, size_t errlen);

#endif
