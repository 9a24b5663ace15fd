/*
 * rng.c - seeding for the xoshiro256** generator in rng.h.
 *
 * Every thread seeds its own generator from the run seed and its identity,
 * so runs are reproducible and threads never share state.
 */
#include "bits.h"
#include "rng.h"

uint64_t splitmix64(uint64_t *x)
{
	*x += 0x9e3779b97f4a7c15ull;
	return mix64(*x);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

void rng_seed_multi(struct rng *r, uint64_t a, uint64_t b, uint64_t c)
{
	/*
	 * Chain the inputs through the mixer (not a plain xor, which would
	 * make (a, b) and (b, a) collide); the odd constants keep zeros from
	 * cancelling out.
	 */
	uint64_t h = mix64(a + 0x9e3779b97f4a7c15ull);
	h = mix64(h ^ (b + 0xd1b54a32d192ed03ull));
	h = mix64(h ^ (c + 0x8cb92ba72f3d8dd7ull));
	rng_seed(r, h);
}
