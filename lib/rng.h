/*
 * rng.h - xoshiro256** seeded by splitmix64.
 *
 * Fast, seedable, and reproducible per thread: every thread owns its own
 * struct rng, seeded from (run seed, role, rank, thread) with rng_seed_multi,
 * so a run with the same seed draws the same numbers.
 */
#ifndef OQB_RNG_H
#define OQB_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

/* splitmix64 step: advances *x and returns the next output. */
uint64_t splitmix64(uint64_t *x);

/*
 * State = the first four splitmix64 outputs from x = seed (never all zero:
 * splitmix64's output is a bijection of distinct counter values).
 */
void rng_seed(struct rng *r, uint64_t seed);

/*
 * Seed from several integers (e.g. run seed, process rank, thread index):
 * they are hashed together with splitmix64's mixer, so neighbouring
 * tuples give unrelated streams.  Not the same stream as rng_seed(a).
 */
void rng_seed_multi(struct rng *r, uint64_t a, uint64_t b, uint64_t c);

static inline uint64_t rng_rotl_(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* Next 64 random bits (xoshiro256**, Blackman & Vigna). */
static inline uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rng_rotl_(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl_(s[3], 45);
	return out;
}

/* Uniform double in [0, 1), 53 random bits. */
static inline double rng_double(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n) (Lemire's multiply-shift, n > 0). */
static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

#endif
