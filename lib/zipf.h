/*
 * zipf.h - YCSB's Zipfian generator (Gray et al., SIGMOD'94), exact to
 * YCSB's ZipfianGenerator / ScrambledZipfianGenerator.
 *
 * Items are ranks 0..n-1, rank 0 the most popular, P(rank i) proportional
 * to 1/(i+1)^theta.  theta = 0 is uniform.  Gray's closed form divides by
 * (1 - theta) and is only approximate for the first ranks, so for
 * theta == 1 (and, optionally, small n) the generator uses an exact CDF
 * table with binary search instead (`exact` below).
 */
#ifndef OQB_ZIPF_H
#define OQB_ZIPF_H

#include <stdint.h>
#include "rng.h"

struct zipf {
	uint64_t n;          /* item count */
	double theta;
	double zetan;        /* sum_{i=1..n} i^-theta */
	double zeta2theta;   /* zeta(2, theta) */
	double alpha;        /* 1 / (1 - theta) */
	double eta;
	double half_pow_theta; /* 0.5^theta */
	double *cdf;         /* exact table (n entries) or NULL */
};

/*
 * Sets up a generator over n >= 1 items.  exact_table_max: use the exact
 * CDF table when n <= exact_table_max (theta == 1 always uses it; it then
 * needs n <= ZIPF_TABLE_LIMIT).  Returns 0, or -1 with a message in err.
 */
#define ZIPF_TABLE_LIMIT (1ull << 26)
int zipf_init(struct zipf *z, uint64_t n, double theta, uint64_t exact_table_max,
	      char *err, size_t errlen);
void zipf_free(struct zipf *z);

/* Next rank in [0, n). */
uint64_t zipf_next(const struct zipf *z, struct rng *r);

/* Exact probability of rank i (0-based). */
double zipf_pmf(const struct zipf *z, uint64_t i);

/* zeta(n, theta) = sum_{i=1..n} i^-theta. */
double zipf_zeta(uint64_t n, double theta);

/* YCSB's Utils.fnvhash64: FNV-1a 64 over the 8 bytes of v, low byte first,
 * then the absolute value of the signed result. */
uint64_t fnv1a64_u64(uint64_t v);

/*
 * YCSB's ScrambledZipfianGenerator: a Zipfian rank over the item count,
 * scattered by fnv1a64_u64(rank) % n so that popular items are not
 * adjacent.  It keeps the popularity of zipf_next but not the order.
 */
uint64_t zipf_scrambled_next(const struct zipf *z, struct rng *r);

#endif
