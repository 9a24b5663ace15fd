/*
 * twitter.h - request models of Twitter's cache clusters (Yang et al.,
 * OSDI'20; the JuneBerry paper's Table 1), shared by the `twitter`
 * generator, the trace generator's model mode and bin/oqb-tracegen.
 *
 * A model is an op mix, one key size, one value size, a Zipf alpha of key
 * popularity and a key count.  The published statistics give sizes as
 * means only, so every key of a model has the same length and every write
 * the same value size.
 */
#ifndef OQB_TWITTER_H
#define OQB_TWITTER_H

#include <stdint.h>
#include "gen.h"
#include "rng.h"
#include "zipf.h"

/* What a model request is, before it becomes a wire op. */
enum twitter_kind {
	TW_GET,      /* get/gets: GET */
	TW_SET,      /* set: SET, nilext */
	TW_SETX,     /* add/replace/cas/append/prepend: SET whose reply externalizes */
	TW_DEL,      /* delete: DEL, nilext */
	TW_INCR,     /* incr/decr: INCR */
	TW_NKIND
};

struct twitter_model {
	double ratio[TW_NKIND];   /* op mix; sums to 1 */
	unsigned key_size;        /* bytes */
	uint32_t value_size;      /* bytes, of every write */
	double alpha;             /* Zipf alpha; 0 = uniform */
	uint64_t keys;            /* distinct keys */
	unsigned ttl;             /* TTL of writes in seconds (traces only) */
};

#define TWITTER_DEFAULT_KEYS 1000000ull

/*
 * The model of a cluster of Table 1 (12, 19, 27, 31) with `keys` keys.
 * Returns 0, or -1 if the cluster is not one of them.
 */
int twitter_cluster(int cluster, uint64_t keys, struct twitter_model *m);

/*
 * Sampler: op kinds and key numbers of a model, from a caller's rng.  Key
 * ranks come from an exact Zipf CDF table for up to TWITTER_EXACT_MAX keys
 * (Gray's formula draws ranks 2..9 up to ~20 % too often at alpha 1.065),
 * shared read-only by every sampler of the process with the same keys and
 * alpha (8 bytes per key once, not per thread); above that, Gray's formula.
 */
#define TWITTER_EXACT_MAX (1ull << 22)

struct twitter_sampler {
	struct twitter_model m;
	double cum[TW_NKIND];
	const struct zipf *z;     /* shared; NULL for alpha 0 (uniform) */
	uint64_t mul;             /* rank -> key number bijection: rank*mul % keys */
};

/* Checks the model and sets up the sampler.  Returns 0, or -1 with err. */
int twitter_sampler_init(struct twitter_sampler *s, const struct twitter_model *m,
			 char *err, size_t errlen);
/* Draws one request: its kind and key number in [0, keys). */
void twitter_sampler_next(const struct twitter_sampler *s, struct rng *r,
			  enum twitter_kind *kind, uint64_t *keynum);
void twitter_sampler_free(struct twitter_sampler *s);

/*
 * Opens a `twitter` generator instance on a ready model.  `source` says
 * where the model came from (for describe()).  Returns NULL with err.
 */
struct gen *twitter_open_model(const struct twitter_model *m, const char *source,
			       const struct gen_ctx *c, char *err, size_t errlen);

/* Name of a kind ("get", "set", "setx", "delete", "incr"). */
const char *twitter_kind_name(enum twitter_kind k);

#endif
