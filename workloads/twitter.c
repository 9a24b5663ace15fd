/*
 * twitter.c - the `twitter` generator: Twitter cache cluster models.
 *
 *   {"kind":"twitter","cluster":12}
 *   {"kind":"twitter","cluster":{"set_ratio":0.5,"key_size":40,
 *    "value_size":200,"alpha":0.9,"keys":100000}}
 *
 * The four clusters of the paper's Table 1 (numbers from the public trace
 * statistics, twitter/cache-trace stat/2020Mar.md): set ratio, mean key
 * size, mean value size and Zipf alpha.  Sizes are fixed at the means
 * because no distribution is published.  Key popularity is Zipf(alpha)
 * over `keys` keys (default 1,000,000), drawn from an exact CDF table shared
 * by the process's threads (see twitter.h); alpha 0 is uniform.  The rank -> key mapping is a bijection (rank * m mod keys,
 * m coprime with keys), so `keys` is exactly the number of distinct keys,
 * unlike YCSB's hash-modulo scrambling, and it is the same in every thread,
 * so all threads agree on which keys are hot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <pthread.h>

#include "twitter.h"
#include "conf.h"

static const char *const tw_kind_names[TW_NKIND] = { "get", "set", "setx", "delete", "incr" };

const char *twitter_kind_name(enum twitter_kind k)
{
	return (unsigned)k < TW_NKIND ? tw_kind_names[k] : "?";
}

/* Table 1 of the paper; TTLs are the clusters' common write TTLs. */
static const struct {
	int cluster;
	double set_ratio;
	unsigned key_size;
	uint32_t value_size;
	double alpha;
	unsigned ttl;
} tw_clusters[] = {
	{ 12, 0.80, 44, 1030, 0.3048, 300 },
	{ 19, 0.25, 42, 101, 0.735, 25200 },
	{ 27, 0.15, 66, 8, 1.065, 3600 },
	{ 31, 0.94, 41, 15, 0.0, 60 },
};

int twitter_cluster(int cluster, uint64_t keys, struct twitter_model *m)
{
	for (size_t i = 0; i < sizeof tw_clusters / sizeof tw_clusters[0]; i++) {
		if (tw_clusters[i].cluster != cluster)
			continue;
		memset(m, 0, sizeof *m);
		m->ratio[TW_SET] = tw_clusters[i].set_ratio;
		m->ratio[TW_GET] = 1 - tw_clusters[i].set_ratio;
		m->key_size = tw_clusters[i].key_size;
		m->value_size = tw_clusters[i].value_size;
		m->alpha = tw_clusters[i].alpha;
		m->keys = keys ? keys : TWITTER_DEFAULT_KEYS;
		m->ttl = tw_clusters[i].ttl;
		return 0;
	}
	return -1;
}

static uint64_t tw_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/*
 * Process-wide cache of Zipf generators by (keys, alpha): the exact tables
 * are large (8 MB for a million keys) and read-only once built, so client
 * threads share one.  Reference-counted; the last release frees it.
 */
struct tw_zentry {
	struct tw_zentry *next;
	uint64_t n;
	double theta;
	unsigned refs;
	struct zipf z;
};
static struct tw_zentry *tw_zcache;
static pthread_mutex_t tw_zlock = PTHREAD_MUTEX_INITIALIZER;

static const struct zipf *tw_zipf_get(uint64_t n, double theta, char *err, size_t errlen)
{
	struct tw_zentry *e;

	pthread_mutex_lock(&tw_zlock);
	for (e = tw_zcache; e; e = e->next)
		if (e->n == n && e->theta == theta)
			break;
	if (!e) {
		e = calloc(1, sizeof *e);
		if (!e) {
			snprintf(err, errlen, "out of memory");
		} else if (zipf_init(&e->z, n, theta, TWITTER_EXACT_MAX, err, errlen) < 0) {
			free(e);
			e = NULL;
		} else {
			e->n = n;
			e->theta = theta;
			e->next = tw_zcache;
			tw_zcache = e;
		}
	}
	if (e)
		e->refs++;
	pthread_mutex_unlock(&tw_zlock);
	return e ? &e->z : NULL;
}

static void tw_zipf_put(const struct zipf *z)
{
	struct tw_zentry **pp, *e;

	pthread_mutex_lock(&tw_zlock);
	for (pp = &tw_zcache; (e = *pp); pp = &e->next) {
		if (&e->z != z)
			continue;
		if (--e->refs == 0) {
			*pp = e->next;
			zipf_free(&e->z);
			free(e);
		}
		break;
	}
	pthread_mutex_unlock(&tw_zlock);
}

int twitter_sampler_init(struct twitter_sampler *s, const struct twitter_model *m,
			 char *err, size_t errlen)
{
	double sum = 0;

	memset(s, 0, sizeof *s);
	for (int k = 0; k < TW_NKIND; k++) {
		if (m->ratio[k] < 0) {
			snprintf(err, errlen, "%s ratio %g is negative", tw_kind_names[k], m->ratio[k]);
			return -1;
		}
		sum += m->ratio[k];
	}
	if (sum <= 0) {
		snprintf(err, errlen, "the op mix is empty (all ratios 0)");
		return -1;
	}
	if (m->keys == 0) {
		snprintf(err, errlen, "keys is 0; a model needs at least one key");
		return -1;
	}
	if (m->key_size < gen_key_min_size(m->keys) || m->key_size > KV_MAX_KEY) {
		snprintf(err, errlen, "key_size %u cannot hold %" PRIu64 " distinct keys; "
			 "use %u..%u bytes or fewer keys", m->key_size, m->keys,
			 gen_key_min_size(m->keys), KV_MAX_KEY);
		return -1;
	}
	if (m->value_size > KV_MAX_VALUE) {
		snprintf(err, errlen, "value_size %u exceeds the %u-byte limit",
			 m->value_size, KV_MAX_VALUE);
		return -1;
	}
	s->m = *m;
	for (int k = 0; k < TW_NKIND; k++) {
		s->m.ratio[k] = m->ratio[k] / sum;
		s->cum[k] = (k ? s->cum[k - 1] : 0) + s->m.ratio[k];
	}
	s->cum[TW_NKIND - 1] = 1.0;
	if (m->alpha > 0) {
		s->z = tw_zipf_get(m->keys, m->alpha, err, errlen);
		if (!s->z)
			return -1;
	}
	/* A fixed odd-looking multiplier, nudged until it is coprime with keys. */
	s->mul = m->keys > 1 ? 0x9E3779B97F4A7C15ull % m->keys : 0;
	if (s->mul == 0)
		s->mul = 1;
	while (m->keys > 1 && tw_gcd(s->mul, m->keys) != 1)
		s->mul = s->mul + 1 < m->keys ? s->mul + 1 : 1;
	return 0;
}

void twitter_sampler_next(const struct twitter_sampler *s, struct rng *r,
			  enum twitter_kind *kind, uint64_t *keynum)
{
	double u = rng_double(r);
	int k = 0;
	uint64_t rank;

	while (k < TW_NKIND - 1 && u >= s->cum[k])
		k++;
	*kind = (enum twitter_kind)k;
	rank = s->z ? zipf_next(s->z, r) : rng_below(r, s->m.keys);
	*keynum = (uint64_t)(((unsigned __int128)rank * s->mul) % s->m.keys);
}

void twitter_sampler_free(struct twitter_sampler *s)
{
	if (s->z)
		tw_zipf_put(s->z);
	s->z = NULL;
}

/* ------------------------------------------------------------ generator */

struct gen_twitter {
	struct twitter_sampler s;
	struct rng r;
	char source[160];
	uint64_t count[TW_NKIND];
};

struct gen *twitter_open_model(const struct twitter_model *m, const char *source,
			       const struct gen_ctx *c, char *err, size_t errlen)
{
	struct gen_twitter *g = calloc(1, sizeof *g);
	char why[200];

	if (!g) {
		snprintf(err, errlen, "%s: out of memory", gen_where(c));
		return NULL;
	}
	if (twitter_sampler_init(&g->s, m, why, sizeof why) < 0) {
		snprintf(err, errlen, "%s: %s: %s", gen_where(c), source, why);
		free(g);
		return NULL;
	}
	snprintf(g->source, sizeof g->source, "%s", source);
	gen_seed(&g->r, c, 3);
	return (struct gen *)g;
}

static const struct conf_key tw_custom_schema[] = {
	{ "set_ratio", CONF_NUM, 1, 0, 1, NULL, NULL, "share of set requests" },
	{ "del_ratio", CONF_NUM, 0, 0, 1, NULL, NULL, "share of delete requests (default 0)" },
	{ "key_size", CONF_INT, 1, 1, KV_MAX_KEY, NULL, NULL, "key length in bytes" },
	{ "value_size", CONF_INT, 1, 0, KV_MAX_VALUE, NULL, NULL, "value length in bytes" },
	{ "alpha", CONF_NUM, 1, 0, 10, NULL, NULL, "Zipf alpha of key popularity (0 = uniform)" },
	{ "keys", CONF_INT, 0, 1, 1e15, NULL, NULL, "distinct keys (default 1000000)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

static const struct conf_key tw_schema[] = {
	{ "kind", CONF_STR, 1, 0, -1, NULL, NULL, "\"twitter\"" },
	{ "cluster", CONF_ANY, 1, 0, -1, NULL, NULL, "12, 19, 27, 31, or a custom model object" },
	{ "keys", CONF_INT, 0, 1, 1e15, NULL, NULL, "distinct keys (default 1000000)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

static struct gen *tw_open(const json_t *spec, const struct gen_ctx *c, char *err, size_t errlen)
{
	const json_t *cl;
	struct twitter_model m;
	char source[64], where[256];
	uint64_t keys;

	if (gen_check(spec, tw_schema, c, err, errlen) < 0)
		return NULL;
	keys = (uint64_t)conf_int(spec, "keys", (long long)TWITTER_DEFAULT_KEYS);
	cl = json_object_get(spec, "cluster");
	if (json_is_integer(cl)) {
		if (twitter_cluster((int)json_integer_value(cl), keys, &m) < 0) {
			snprintf(err, errlen, "%s.cluster: %lld is not a modelled cluster; use 12, 19, "
				 "27 or 31, or an object {\"set_ratio\",\"key_size\",\"value_size\","
				 "\"alpha\",\"keys\"}", gen_where(c), (long long)json_integer_value(cl));
			return NULL;
		}
		snprintf(source, sizeof source, "cluster %lld", (long long)json_integer_value(cl));
	} else if (json_is_object(cl)) {
		snprintf(where, sizeof where, "%s.cluster", gen_where(c));
		if (conf_check(cl, tw_custom_schema, where, err, errlen) < 0)
			return NULL;
		memset(&m, 0, sizeof m);
		m.ratio[TW_SET] = conf_num(cl, "set_ratio", 0);
		m.ratio[TW_DEL] = conf_num(cl, "del_ratio", 0);
		if (m.ratio[TW_SET] + m.ratio[TW_DEL] > 1 + 1e-9) {
			snprintf(err, errlen, "%s: set_ratio %g + del_ratio %g exceed 1; lower one",
				 where, m.ratio[TW_SET], m.ratio[TW_DEL]);
			return NULL;
		}
		m.ratio[TW_GET] = 1 - m.ratio[TW_SET] - m.ratio[TW_DEL];
		if (m.ratio[TW_GET] < 0)
			m.ratio[TW_GET] = 0;
		m.key_size = (unsigned)conf_int(cl, "key_size", 16);
		m.value_size = (uint32_t)conf_int(cl, "value_size", 64);
		m.alpha = conf_num(cl, "alpha", 0);
		m.keys = (uint64_t)conf_int(cl, "keys", (long long)keys);
		snprintf(source, sizeof source, "custom");
	} else {
		snprintf(err, errlen, "%s.cluster: expected 12, 19, 27, 31 or a model object, got %s",
			 gen_where(c), cl ? "another type" : "nothing");
		return NULL;
	}
	return twitter_open_model(&m, source, c, err, errlen);
}

static int tw_next(struct gen *gg, struct gen_op *op)
{
	struct gen_twitter *g = (struct gen_twitter *)gg;
	enum twitter_kind k;
	uint64_t keynum;

	twitter_sampler_next(&g->s, &g->r, &k, &keynum);
	g->count[k]++;
	op->aux = 0;
	op->val_len = 0;
	switch (k) {
	case TW_GET:
		op->op = KV_OP_GET;
		break;
	case TW_SET:
	case TW_SETX:
		op->op = KV_OP_SET;
		op->val_len = g->s.m.value_size;
		break;
	case TW_DEL:
		op->op = KV_OP_DEL;
		break;
	default:
		op->op = KV_OP_INCR;
		op->aux = 1;
		break;
	}
	/* setx is a SET whose reply externalizes (add/cas/...): no nilext. */
	op->flags = k == TW_SETX ? 0 : gen_op_flags(op->op);
	gen_key_fixed(op, keynum, g->s.m.key_size);
	return 0;
}

static json_t *tw_describe(struct gen *gg)
{
	struct gen_twitter *g = (struct gen_twitter *)gg;
	json_t *d = json_object(), *mix = json_object(), *n = json_object();

	for (int k = 0; k < TW_NKIND; k++) {
		json_object_set_new(mix, tw_kind_names[k], json_real(g->s.m.ratio[k]));
		json_object_set_new(n, tw_kind_names[k], json_integer((json_int_t)g->count[k]));
	}
	json_object_set_new(d, "kind", json_string("twitter"));
	json_object_set_new(d, "source", json_string(g->source));
	json_object_set_new(d, "mix", mix);
	json_object_set_new(d, "key_size", json_integer(g->s.m.key_size));
	json_object_set_new(d, "value_size", json_integer(g->s.m.value_size));
	json_object_set_new(d, "alpha", json_real(g->s.m.alpha));
	json_object_set_new(d, "keys", json_integer((json_int_t)g->s.m.keys));
	json_object_set_new(d, "sizes", json_string("fixed at the published means"));
	json_object_set_new(d, "ops", n);
	return d;
}

static void tw_close(struct gen *gg)
{
	struct gen_twitter *g = (struct gen_twitter *)gg;

	if (!g)
		return;
	twitter_sampler_free(&g->s);
	free(g);
}

const struct gen_ops gen_twitter_ops = {
	.name = "twitter",
	.version = GEN_OPS_VERSION,
	.open = tw_open,
	.next = tw_next,
	.load = NULL,
	.describe = tw_describe,
	.close = tw_close,
	.error = NULL,
};
