/*
 * zipf.h - YCSB's Zipfian generator (Gray et al., SIGMOD'94), exact to
 * YCSB's ZipfianGenerator / ScrambledZipfianGenerator.
 *
 * Items are ranks 0..n-1, rank 0 the most popular, P(rank i) proportional
 * to 1/(i+1)^theta.  theta = 0 is uniform.  Gray's closed form divides by
 * (1 - theta) and is only approximate for the first ranks (ranks 2..9 come
 * out up to ~10 % too often at theta 0.99), so for theta == 1 (and, when
 * asked, small n) the generator uses an exact CDF table with binary search
 * instead (exact_table_max below).  Gray's formula is still what YCSB
 * draws, and it works for theta > 1 too (alpha and eta change sign
 * together), so it is the default.
 *
 * zeta(n, theta) is summed directly up to n = 4096 and by Euler-Maclaurin
 * above (first 1023 terms summed, the rest as integral + end corrections up
 * to the third derivative): the remainder is below 2.2e-4 theta (theta+1)
 * (theta+2) (theta+3) 1024^-(theta+4), under 1e-16 relative for every
 * theta, so zipf_init is instant even for n = 10^10.
 */
#ifndef OQB_ZIPF_H
#define OQB_ZIPF_H

#include <stddef.h>
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
	uint32_t *guide;     /* with cdf: guide[k] = first i with cdf[i] > k / 2^guide_bits;
				guide[2^guide_bits] = n - 1 */
	unsigned guide_bits;
	uint64_t items;      /* zipf_scrambled_next's modulus: n, or the item
				count given to zipf_init_ycsb_scrambled */
};

/*
 * Sets up a generator over n >= 1 items.  exact_table_max: use the exact
 * CDF table (8 bytes per item) when n <= min(exact_table_max,
 * ZIPF_TABLE_LIMIT); theta == 1 always uses it and then needs
 * n <= ZIPF_TABLE_LIMIT.  Pass 0 for YCSB's behaviour.  Returns 0, or -1
 * with a message in err (n = 0, theta negative or not finite, theta == 1
 * with too many items, out of memory).
 */
#define ZIPF_TABLE_LIMIT (1ull << 26)
int zipf_init(struct zipf *z, uint64_t n, double theta, uint64_t exact_table_max,
	      char *err, size_t errlen);

/*
 * Exactly YCSB's ScrambledZipfianGenerator(0, items - 1, theta): the rank
 * is drawn by Gray's formula over YCSB's fixed 10^10 + 1 items (its
 * ITEM_COUNT; zetan is YCSB's precomputed 26.46902820178302 for theta
 * 0.99) and zipf_scrambled_next maps it to fnv1a64_u64(rank) % items.  The
 * hottest item therefore gets about 1/26.5 of the draws at theta 0.99,
 * whatever the item count.  zipf_next on such a generator returns ranks
 * over 10^10 + 1 items.  Returns 0 or -1 with a message in err.
 */
#define ZIPF_YCSB_ITEM_COUNT 10000000000ull
#define ZIPF_YCSB_ZETAN_099  26.46902820178302
int zipf_init_ycsb_scrambled(struct zipf *z, uint64_t items, double theta,
			     char *err, size_t errlen);

/* Frees the table; z can be zipf_init'ed again.  Safe on a zeroed struct. */
void zipf_free(struct zipf *z);

/* Next rank in [0, n): Gray's formula (clamped to n - 1) or the table. */
uint64_t zipf_next(const struct zipf *z, struct rng *r);

/* Exact probability of rank i (0-based): (i+1)^-theta / zetan; 0 for i >= n. */
double zipf_pmf(const struct zipf *z, uint64_t i);

/* zeta(n, theta) = sum_{i=1..n} i^-theta (0 for n = 0; see above). */
double zipf_zeta(uint64_t n, double theta);

/*
 * YCSB's Utils.fnvhash64: FNV-1a 64 over the 8 bytes of v, low byte first,
 * then the absolute value of the result read as signed.  The one hash
 * whose absolute value does not fit (INT64_MIN) is returned as 2^63, its
 * true magnitude; Java would return it negative.
 */
uint64_t fnv1a64_u64(uint64_t v);

/*
 * YCSB's ScrambledZipfianGenerator: a Zipfian rank from zipf_next,
 * scattered by fnv1a64_u64(rank) % items so that popular items are not
 * adjacent.  After zipf_init (items = n) it keeps the popularity of
 * zipf_next up to hash collisions but not the order; after
 * zipf_init_ycsb_scrambled it is YCSB's generator bit for bit.
 */
uint64_t zipf_scrambled_next(const struct zipf *z, struct rng *r);

#endif
