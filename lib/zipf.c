/*
 * zipf.c - YCSB's Zipfian generator (Gray et al., SIGMOD'94), an exact
 * CDF-table variant, zeta by Euler-Maclaurin, and YCSB's FNV scrambling.
 *
 * The formulas follow YCSB's ZipfianGenerator so that oqbench draws the
 * same distribution YCSB does; where YCSB would divide by zero (theta == 1,
 * n <= 2) this file uses the table or never reaches the formula.
 */
#include "zipf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZETA_DIRECT_MAX 4096u   /* up to here zeta is summed term by term */
#define ZETA_EM_FROM    1024u   /* above it, terms 1..1023 plus a tail from here */

/* sum_{i=from..to} i^-theta, accumulated in long double. */
static long double zeta_direct(uint64_t from, uint64_t to, double theta)
{
	long double s = 0;

	if (theta == 0)
		return (long double)(to - from + 1);
	for (uint64_t i = from; i <= to; i++)
		s += theta == 1 ? 1.0L / (long double)i : (long double)pow((double)i, -theta);
	return s;
}

/*
 * sum_{i=m..n} i^-theta by Euler-Maclaurin: the integral, the end-point
 * average, and the B2 and B4 derivative corrections.  The error bound is
 * in zipf.h.
 */
static double zeta_tail_em(uint64_t m, uint64_t n, double theta)
{
	double dm = (double)m, dn = (double)n;
	double lr = log(dn / dm);
	/*
	 * (n^(1-t) - m^(1-t)) / (1-t) written with expm1 so theta near 1
	 * loses no digits to cancellation; theta == 1 is its limit ln(n/m).
	 */
	double integral = theta == 1 ? lr
		: pow(dm, 1 - theta) * expm1((1 - theta) * lr) / (1 - theta);
	double fm = pow(dm, -theta), fn = pow(dn, -theta);
	double d1m = -theta * fm / dm, d1n = -theta * fn / dn;
	double c3 = -theta * (theta + 1) * (theta + 2);
	double d3m = c3 * fm / (dm * dm * dm), d3n = c3 * fn / (dn * dn * dn);

	return integral + (fm + fn) / 2 + (d1n - d1m) / 12 - (d3n - d3m) / 720;
}

double zipf_zeta(uint64_t n, double theta)
{
	if (n <= ZETA_DIRECT_MAX)
		return n ? (double)zeta_direct(1, n, theta) : 0.0;
	if (theta == 0)
		return (double)n;
	return (double)(zeta_direct(1, ZETA_EM_FROM - 1, theta)
			+ (long double)zeta_tail_em(ZETA_EM_FROM, n, theta));
}

/*
 * Gray's constants from n, theta and zetan.  eta is needed only when the
 * closed form can be reached, i.e. n > 2 (with n <= 2 every draw has
 * u * zetan < 1 + 0.5^theta); there 1 - zeta2theta / zetan > 0.
 */
static void gray_constants(struct zipf *z)
{
	z->zeta2theta = 1.0 + pow(2.0, -z->theta);
	z->half_pow_theta = pow(0.5, z->theta);
	z->alpha = z->theta == 1 ? 0 : 1.0 / (1.0 - z->theta);
	z->eta = 0;
	if (z->n > 2 && z->theta != 1)
		z->eta = (1.0 - pow(2.0 / (double)z->n, 1.0 - z->theta))
			/ (1.0 - z->zeta2theta / z->zetan);
}

/* Fills z->cdf and z->zetan from the exact pmf; -1 if out of memory. */
static int build_table(struct zipf *z, char *err, size_t errlen)
{
	long double cum = 0;

	/* The guide (Chen and Asau's index table): 2^bits buckets of u, at
	 * least two per item up to 2^20, each pointing at the first entry
	 * that can answer for it.  A power of two keeps u * 2^bits exact. */
	unsigned bits = 1;
	while (bits < 20 && (1ull << bits) < 2 * z->n)
		bits++;
	uint64_t g = 1ull << bits;
	z->cdf = malloc(z->n * sizeof *z->cdf);
	z->guide = malloc((g + 1) * sizeof *z->guide);
	if (!z->cdf || !z->guide) {
		free(z->cdf);
		free(z->guide);
		z->cdf = NULL;
		z->guide = NULL;
		snprintf(err, errlen, "zipf: cannot allocate the exact CDF table and its index for n = %llu items "
			 "(%.0f MiB); use fewer items (keys)", (unsigned long long)z->n,
			 ((double)z->n * sizeof *z->cdf + (double)(g + 1) * sizeof *z->guide) / 1048576.0);
		return -1;
	}
	for (uint64_t i = 0; i < z->n; i++) {
		double x = (double)(i + 1);
		cum += z->theta == 1 ? 1.0L / x : z->theta == 0 ? 1.0L : (long double)pow(x, -z->theta);
		z->cdf[i] = (double)cum;   /* unnormalised for now */
	}
	for (uint64_t i = 0; i < z->n; i++)
		z->cdf[i] = (double)((long double)z->cdf[i] / cum);
	z->cdf[z->n - 1] = 1.0;        /* u < 1 always finds an entry */
	z->zetan = (double)cum;

	z->guide_bits = bits;
	uint64_t i = 0;
	for (uint64_t k = 0; k < g; k++) {
		double edge = (double)k / (double)g;
		while (i + 1 < z->n && !(z->cdf[i] > edge))
			i++;
		z->guide[k] = (uint32_t)i;
	}
	z->guide[g] = (uint32_t)(z->n - 1);
	return 0;
}

/* zipf_init with a given zetan (0 = compute it); table only if use_table. */
static int init_common(struct zipf *z, uint64_t n, double theta, int use_table,
		       double zetan, char *err, size_t errlen)
{
	memset(z, 0, sizeof *z);
	if (n == 0) {
		snprintf(err, errlen, "zipf: the item count n must be at least 1 (got 0)");
		return -1;
	}
	if (!(theta >= 0) || !isfinite(theta)) {
		snprintf(err, errlen, "zipf: theta must be a finite number >= 0 (got %g); 0 is uniform, YCSB uses 0.99", theta);
		return -1;
	}
	z->n = n;
	z->items = n;
	z->theta = theta;
	if (theta == 1)
		use_table = 1;
	if (use_table) {
		if (n > ZIPF_TABLE_LIMIT) {
			snprintf(err, errlen, "zipf: theta = 1 needs the exact CDF table, which allows at most %llu items (got n = %llu); "
				 "use theta 0.99 or 1.01, or fewer items",
				 (unsigned long long)ZIPF_TABLE_LIMIT, (unsigned long long)n);
			return -1;
		}
		if (build_table(z, err, errlen))
			return -1;
	} else {
		z->zetan = zetan > 0 ? zetan : zipf_zeta(n, theta);
	}
	gray_constants(z);
	if (!z->cdf && !isfinite(z->eta)) {
		/* zetan rounded to zeta(2): theta is so large that ranks >= 2 never occur. */
		snprintf(err, errlen, "zipf: theta = %g is too large for Gray's formula with n = %llu items; "
			 "pass exact_table_max >= n to use the exact table",
			 theta, (unsigned long long)n);
		return -1;
	}
	return 0;
}

int zipf_init(struct zipf *z, uint64_t n, double theta, uint64_t exact_table_max,
	      char *err, size_t errlen)
{
	int table = n <= exact_table_max && n <= ZIPF_TABLE_LIMIT;

	return init_common(z, n, theta, table, 0, err, errlen);
}

int zipf_init_ycsb_scrambled(struct zipf *z, uint64_t items, double theta,
			     char *err, size_t errlen)
{
	/* YCSB: new ZipfianGenerator(0, ITEM_COUNT, theta[, ZETAN]), so ITEM_COUNT + 1 items. */
	double zetan = theta == 0.99 ? ZIPF_YCSB_ZETAN_099 : 0;

	if (items == 0) {
		memset(z, 0, sizeof *z);
		snprintf(err, errlen, "zipf: the scrambled item count must be at least 1 (got 0)");
		return -1;
	}
	if (theta == 1) {
		memset(z, 0, sizeof *z);
		snprintf(err, errlen, "zipf: YCSB's scrambled generator cannot use theta = 1 (it divides by 1 - theta); "
			 "use 0.99 or 1.01");
		return -1;
	}
	if (init_common(z, ZIPF_YCSB_ITEM_COUNT + 1, theta, 0, zetan, err, errlen))
		return -1;
	z->items = items;
	return 0;
}

void zipf_free(struct zipf *z)
{
	free(z->cdf);
	free(z->guide);
	z->cdf = NULL;
	z->guide = NULL;
}

/*
 * Smallest i with u < cdf[i] (cdf[n-1] == 1 > u bounds it).  u's bucket k
 * in the guide narrows it to [guide[k], guide[k+1]]: since u >= k / 2^bits,
 * no entry before guide[k] exceeds u, and cdf[guide[k+1]] > (k+1) / 2^bits
 * > u.  With two buckets per item that range is a few entries, so the
 * search is one or two loads, where a binary search over the whole table
 * was a chain of ten, each waiting for the last and most mispredicted (on
 * a client's hot path, whose own ring traffic keeps the table out of L1).
 */
static uint64_t table_search(const struct zipf *z, double u)
{
	uint64_t k = (uint64_t)(u * (double)(1ull << z->guide_bits));
	uint64_t lo = z->guide[k], hi = z->guide[k + 1];

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (u < z->cdf[mid])
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

uint64_t zipf_next(const struct zipf *z, struct rng *r)
{
	double u = rng_double(r);

	if (z->cdf)
		return table_search(z, u);
	double uz = u * z->zetan;
	if (uz < 1.0)
		return 0;
	if (uz < 1.0 + z->half_pow_theta)
		return 1;
	double x = (double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha);
	/* Java's (long) cast gives 0 for NaN; u close to 1 can round x up to n. */
	if (!(x > 0))
		return 0;
	if (x >= (double)z->n)
		return z->n - 1;
	return (uint64_t)x;
}

double zipf_pmf(const struct zipf *z, uint64_t i)
{
	if (i >= z->n)
		return 0;
	return pow((double)(i + 1), -z->theta) / z->zetan;
}

uint64_t fnv1a64_u64(uint64_t v)
{
	uint64_t h = 0xCBF29CE484222325ull;

	for (int i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 1099511628211ull;
	}
	/* |h| as signed; for INT64_MIN, -h wraps to 2^63, its true magnitude. */
	return (h >> 63) ? 0 - h : h;
}

uint64_t zipf_scrambled_next(const struct zipf *z, struct rng *r)
{
	return fnv1a64_u64(zipf_next(z, r)) % z->items;
}
