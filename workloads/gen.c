/*
 * gen.c - the generator registry, the nil-externality table, helpers shared
 * by the generators, and the simplest generator, `kv`.
 *
 * kv: {"kind":"kv","put_ratio":0.8,"key_size":44,"value_size":1030,
 *      "keys":100000,"zipf":0.3048,"del_ratio":0}
 * Each request is a SET with probability put_ratio, a DEL with probability
 * del_ratio, else a GET.  Keys are YCSB-scrambled Zipfian ranks over `keys`
 * items, written as fixed-size strings ("k000…042"), so every request of a
 * run has the same key length and the popularity of a key does not depend
 * on its number.  The load phase writes every key once, each thread its
 * share.
 *
 * echo: {"kind":"echo","value_size":64,"key_size":8,"keys":1024}
 * Every request is an ECHO of value_size bytes, which the server sends
 * back (the microbenchmark of the paper's Fig 6).  It returns data, so it
 * is never nilext.  The key only routes it: uniform over `keys` keys, so
 * requests spread over the server workers like the paper's "randomly
 * chosen remote worker thread".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

#include "gen.h"
#include "conf.h"
#include "rng.h"
#include "zipf.h"

static const struct gen_ops *const gen_table[] = {
	&gen_kv_ops,
	&gen_ycsb_ops,
	&gen_twitter_ops,
	&gen_trace_ops,
	&gen_echo_ops,
};
#define GEN_TABLE_LEN (sizeof gen_table / sizeof gen_table[0])

const struct gen_ops *gen_find(const char *kind)
{
	if (!kind)
		return NULL;
	for (size_t i = 0; i < GEN_TABLE_LEN; i++)
		if (strcmp(gen_table[i]->name, kind) == 0)
			return gen_table[i];
	return NULL;
}

const char *gen_names(void)
{
	return "kv, ycsb, twitter, trace, echo";
}

const char *gen_where(const struct gen_ctx *c)
{
	return c && c->where ? c->where : "workload";
}

const struct gen_ops *gen_lookup(const json_t *spec, const char *where, char *err,
				 size_t errlen)
{
	const char *names[GEN_TABLE_LEN];
	const json_t *k;
	const struct gen_ops *ops;
	const char *near;

	if (!where)
		where = "workload";
	if (!json_is_object(spec)) {
		snprintf(err, errlen, "%s: expected an object such as {\"kind\":\"ycsb\"}", where);
		return NULL;
	}
	k = json_object_get(spec, "kind");
	if (!k) {
		snprintf(err, errlen, "%s.kind: missing; set it to one of %s", where, gen_names());
		return NULL;
	}
	if (!json_is_string(k)) {
		snprintf(err, errlen, "%s.kind: expected a string, one of %s", where, gen_names());
		return NULL;
	}
	ops = gen_find(json_string_value(k));
	if (ops)
		return ops;
	for (size_t i = 0; i < GEN_TABLE_LEN; i++)
		names[i] = gen_table[i]->name;
	near = conf_nearest(json_string_value(k), names, GEN_TABLE_LEN);
	if (near)
		snprintf(err, errlen, "%s.kind: unknown generator \"%s\"; did you mean \"%s\"? (kinds: %s)",
			 where, json_string_value(k), near, gen_names());
	else
		snprintf(err, errlen, "%s.kind: unknown generator \"%s\"; use one of %s",
			 where, json_string_value(k), gen_names());
	return NULL;
}

/*
 * Only set and delete are nilext (paper §3, and the Memcached/RocksDB
 * examples it cites): their reply is an acknowledgement, so they may commit
 * on delivery.  incr returns the new value and is not idempotent, so it
 * externalizes and must be software-controlled (§5.3).  ECHO and GET return
 * data.
 */
unsigned gen_op_flags(unsigned op)
{
	switch (op) {
	case KV_OP_SET:
	case KV_OP_DEL:
		return KV_F_NILEXT;
	case KV_OP_INCR:
		return KV_F_NONIDEMP;
	default:
		return 0;
	}
}

void gen_seed(struct rng *r, const struct gen_ctx *c, uint64_t salt)
{
	rng_seed_multi(r, c->seed, ((uint64_t)c->process << 32) | c->thread,
		       0x67656e0000000000ull ^ salt);   /* "gen" */
}

int gen_check(const json_t *spec, const struct conf_key *schema, const struct gen_ctx *c,
	      char *err, size_t errlen)
{
	return conf_check(spec, schema, gen_where(c), err, errlen);
}

uint64_t gen_thread_index(const struct gen_ctx *c)
{
	unsigned nt = c->nthreads ? c->nthreads : 1;
	return (uint64_t)c->process * nt + (c->thread < nt ? c->thread : 0);
}

uint64_t gen_thread_count(const struct gen_ctx *c)
{
	return (uint64_t)(c->nprocesses ? c->nprocesses : 1) * (c->nthreads ? c->nthreads : 1);
}

unsigned gen_key_min_size(uint64_t nitems)
{
	uint64_t v = nitems ? nitems - 1 : 0;
	unsigned d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d + 1;
}

void gen_key_fixed(struct gen_op *op, uint64_t num, unsigned key_size)
{
	/* Decimal by hand, in place: this runs once per request on the
	 * client's hot path, where snprintf, or even a digit buffer moved into
	 * place by library calls, costs more than the rest of the key.  The
	 * padding goes in eight bytes at a time (the last store may overlap
	 * the one before), then the digits over its end from the right, two
	 * at a time.  A number with more digits than fit keeps its low digits
	 * (callers reject sizes that small). */
	static const char zeros[8] = { '0', '0', '0', '0', '0', '0', '0', '0' };
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	unsigned ks = key_size > KV_MAX_KEY ? KV_MAX_KEY : key_size;
	char *k = op->key;

	if (ks == 0)
		ks = 1;
	k[0] = 'k';
	if (ks >= 9) {
		for (unsigned i = 1; i + 8 <= ks; i += 8)
			memcpy(k + i, zeros, 8);
		memcpy(k + ks - 8, zeros, 8);
	} else {
		for (unsigned i = 1; i < ks; i++)
			k[i] = '0';
	}
	unsigned i = ks;
	while (i > 1 && num) {
		if (num >= 10 && i > 2) {
			i -= 2;
			memcpy(k + i, pairs + 2 * (num % 100), 2);
			num /= 100;
		} else {
			k[--i] = (char)('0' + num % 10);
			num /= 10;
		}
	}
	k[ks] = '\0';
	op->key_len = (uint16_t)ks;
}

/* ---------------------------------------------------------------- kv */

struct gen_kv {
	double put_ratio, del_ratio;
	unsigned key_size;
	uint32_t value_size;
	uint64_t keys;
	double theta;
	struct zipf z;
	struct rng r;
	uint64_t first, stride;   /* load-phase share of this thread */
	uint64_t n_get, n_set, n_del;
};

static const struct conf_key kv_schema[] = {
	{ "kind", CONF_STR, 1, 0, -1, NULL, NULL, "\"kv\"" },
	{ "put_ratio", CONF_NUM, 0, 0, 1, NULL, NULL, "probability of a SET (default 0.5)" },
	{ "del_ratio", CONF_NUM, 0, 0, 1, NULL, NULL, "probability of a DEL (default 0)" },
	{ "key_size", CONF_INT, 0, 1, KV_MAX_KEY, NULL, NULL, "key length in bytes (default 16)" },
	{ "value_size", CONF_INT, 0, 0, KV_MAX_VALUE, NULL, NULL, "value length in bytes (default 64)" },
	{ "keys", CONF_INT, 0, 1, 1e15, NULL, NULL, "number of distinct keys (default 100000)" },
	{ "zipf", CONF_NUM, 0, 0, 10, NULL, NULL, "Zipf theta of key popularity, 0 = uniform (default 0.99)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

/* Keys up to this many items get an exact CDF table (8 bytes per key). */
#define KV_EXACT_MAX 65536

static struct gen *kv_open(const json_t *spec, const struct gen_ctx *c, char *err, size_t errlen)
{
	struct gen_kv *g;
	unsigned minks;

	if (gen_check(spec, kv_schema, c, err, errlen) < 0)
		return NULL;
	g = calloc(1, sizeof *g);
	if (!g) {
		snprintf(err, errlen, "%s: out of memory", gen_where(c));
		return NULL;
	}
	g->put_ratio = conf_num(spec, "put_ratio", 0.5);
	g->del_ratio = conf_num(spec, "del_ratio", 0);
	g->key_size = (unsigned)conf_int(spec, "key_size", 16);
	g->value_size = (uint32_t)conf_int(spec, "value_size", 64);
	g->keys = (uint64_t)conf_int(spec, "keys", 100000);
	g->theta = conf_num(spec, "zipf", 0.99);
	if (g->put_ratio + g->del_ratio > 1.0 + 1e-9) {
		snprintf(err, errlen, "%s: put_ratio %g + del_ratio %g exceed 1; lower one of them",
			 gen_where(c), g->put_ratio, g->del_ratio);
		free(g);
		return NULL;
	}
	minks = gen_key_min_size(g->keys);
	if (g->key_size < minks) {
		snprintf(err, errlen, "%s.key_size: %u bytes cannot hold %" PRIu64
			 " distinct keys; use key_size >= %u or fewer keys",
			 gen_where(c), g->key_size, g->keys, minks);
		free(g);
		return NULL;
	}
	if (zipf_init(&g->z, g->keys, g->theta, KV_EXACT_MAX, err, errlen) < 0) {
		free(g);
		return NULL;
	}
	gen_seed(&g->r, c, 1);
	g->first = gen_thread_index(c);
	g->stride = gen_thread_count(c);
	return (struct gen *)g;
}

static int kv_next(struct gen *gg, struct gen_op *op)
{
	struct gen_kv *g = (struct gen_kv *)gg;
	double u = rng_double(&g->r);
	uint64_t k;

	if (u < g->put_ratio) {
		op->op = KV_OP_SET;
		op->val_len = g->value_size;
		g->n_set++;
	} else if (u < g->put_ratio + g->del_ratio) {
		op->op = KV_OP_DEL;
		op->val_len = 0;
		g->n_del++;
	} else {
		op->op = KV_OP_GET;
		op->val_len = 0;
		g->n_get++;
	}
	k = g->theta == 0 ? rng_below(&g->r, g->keys) : zipf_scrambled_next(&g->z, &g->r);
	gen_key_fixed(op, k, g->key_size);
	op->aux = 0;
	op->flags = gen_op_flags(op->op);
	return 0;
}

/* Load phase: thread g of N inserts items g, g+N, g+2N, ... */
static int kv_load(struct gen *gg, uint64_t i, struct gen_op *op)
{
	struct gen_kv *g = (struct gen_kv *)gg;
	uint64_t k = g->first + i * g->stride;

	if (i >= g->keys || k >= g->keys)
		return 1;
	op->op = KV_OP_SET;
	op->val_len = g->value_size;
	op->aux = 0;
	op->flags = gen_op_flags(op->op);
	gen_key_fixed(op, k, g->key_size);
	return 0;
}

static json_t *kv_describe(struct gen *gg)
{
	struct gen_kv *g = (struct gen_kv *)gg;

	return json_pack("{s:s, s:f, s:f, s:i, s:i, s:I, s:f, s:{s:I, s:I, s:I}}",
			 "kind", "kv", "put_ratio", g->put_ratio, "del_ratio", g->del_ratio,
			 "key_size", (int)g->key_size, "value_size", (int)g->value_size,
			 "keys", (json_int_t)g->keys, "zipf", g->theta,
			 "ops", "get", (json_int_t)g->n_get, "set", (json_int_t)g->n_set,
			 "del", (json_int_t)g->n_del);
}

static void kv_close(struct gen *gg)
{
	struct gen_kv *g = (struct gen_kv *)gg;

	if (!g)
		return;
	zipf_free(&g->z);
	free(g);
}

const struct gen_ops gen_kv_ops = {
	.name = "kv",
	.version = GEN_OPS_VERSION,
	.open = kv_open,
	.next = kv_next,
	.load = kv_load,
	.describe = kv_describe,
	.close = kv_close,
	.error = NULL,
};

/* -------------------------------------------------------------- echo */

struct gen_echo {
	unsigned key_size;
	uint32_t value_size;
	uint64_t keys;
	struct rng r;
	uint64_t n_echo;
};

static const struct conf_key echo_schema[] = {
	{ "kind", CONF_STR, 1, 0, -1, NULL, NULL, "\"echo\"" },
	{ "value_size", CONF_INT, 0, 0, KV_MAX_VALUE, NULL, NULL, "bytes carried each way (default 64)" },
	{ "key_size", CONF_INT, 0, 1, KV_MAX_KEY, NULL, NULL, "key length in bytes (default 8)" },
	{ "keys", CONF_INT, 0, 1, 1e15, NULL, NULL, "distinct keys, uniform; they spread requests over workers (default 1024)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

static struct gen *echo_open(const json_t *spec, const struct gen_ctx *c, char *err, size_t errlen)
{
	struct gen_echo *g;
	unsigned minks;

	if (gen_check(spec, echo_schema, c, err, errlen) < 0)
		return NULL;
	g = calloc(1, sizeof *g);
	if (!g) {
		snprintf(err, errlen, "%s: out of memory", gen_where(c));
		return NULL;
	}
	g->value_size = (uint32_t)conf_int(spec, "value_size", 64);
	g->key_size = (unsigned)conf_int(spec, "key_size", 8);
	g->keys = (uint64_t)conf_int(spec, "keys", 1024);
	minks = gen_key_min_size(g->keys);
	if (g->key_size < minks) {
		snprintf(err, errlen, "%s.key_size: %u bytes cannot hold %" PRIu64
			 " distinct keys; use key_size >= %u or fewer keys",
			 gen_where(c), g->key_size, g->keys, minks);
		free(g);
		return NULL;
	}
	gen_seed(&g->r, c, 5);
	return (struct gen *)g;
}

static int echo_next(struct gen *gg, struct gen_op *op)
{
	struct gen_echo *g = (struct gen_echo *)gg;

	op->op = KV_OP_ECHO;
	op->val_len = g->value_size;
	op->aux = 0;
	op->flags = gen_op_flags(op->op);
	gen_key_fixed(op, rng_below(&g->r, g->keys), g->key_size);
	g->n_echo++;
	return 0;
}

static json_t *echo_describe(struct gen *gg)
{
	struct gen_echo *g = (struct gen_echo *)gg;

	return json_pack("{s:s, s:i, s:i, s:I, s:{s:I}}", "kind", "echo",
			 "value_size", (int)g->value_size, "key_size", (int)g->key_size,
			 "keys", (json_int_t)g->keys, "ops", "echo", (json_int_t)g->n_echo);
}

static void echo_close(struct gen *gg)
{
	free(gg);
}

const struct gen_ops gen_echo_ops = {
	.name = "echo",
	.version = GEN_OPS_VERSION,
	.open = echo_open,
	.next = echo_next,
	.load = NULL,
	.describe = echo_describe,
	.close = echo_close,
	.error = NULL,
};
