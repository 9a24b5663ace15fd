/*
 * gen.h - operation generators: what a client thread sends.
 *
 * Generators and arrival processes (lib/arrival.h) are independent axes: a
 * generator decides the op, key and value size of the next request, the
 * arrival process decides when it is sent.  Each client thread opens its own
 * generator instance from the config's `workload` object, with its own seed,
 * so threads never share state.  Register generators in gen.c's table.
 */
#ifndef OQB_GEN_H
#define OQB_GEN_H

#include <stdint.h>
#include <stddef.h>
#include <jansson.h>
#include "kvop.h"

struct gen_op {
	unsigned op;                 /* enum kv_op */
	uint16_t key_len;
	uint32_t val_len;
	uint64_t aux;                /* incr delta, ... */
	/* KV_F_* flags to send.  Every generator fills it, normally with
	 * gen_op_flags(op); a trace `cas` is a SET *without* KV_F_NILEXT
	 * because its reply externalizes, so clients must send op->flags
	 * rather than recompute gen_op_flags(op->op). */
	unsigned flags;
	char key[KV_MAX_KEY + 1];
};

struct gen_ctx {
	uint64_t seed;               /* run seed */
	unsigned process, nprocesses;/* client process rank and count */
	unsigned thread, nthreads;   /* thread within the process */
	const char *config_dir;      /* for relative paths (traces) */
	/* Prefix of error messages about the spec, e.g. "configs/x.json:
	 * workload"; NULL means "workload". */
	const char *where;
};

struct gen;

struct gen_ops {
	const char *name;            /* value of workload.kind */
	int version;                 /* GEN_OPS_VERSION */
	/* Checks the spec (unknown keys are errors) and opens an instance. */
	struct gen *(*open)(const json_t *spec, const struct gen_ctx *c, char *err, size_t errlen);
	/* Next operation: 0, or 1 when a finite source (trace) is exhausted,
	 * or -1 on an error found while running (a malformed trace line, a
	 * read error); the message is then in error(g). */
	int (*next)(struct gen *g, struct gen_op *op);
	/* Load phase: the i-th record to insert before measuring; 1 when done
	 * (NULL: nothing to load).  Each thread loads its share. */
	int (*load)(struct gen *g, uint64_t i, struct gen_op *op);
	/* Description for results (resolved parameters), or NULL. */
	json_t *(*describe)(struct gen *g);
	void (*close)(struct gen *g);
	/* Message of the last -1 from next() or load(), or NULL (may be NULL). */
	const char *(*error)(struct gen *g);
};

#define GEN_OPS_VERSION 1

/* The registered generator named kind, or NULL. */
const struct gen_ops *gen_find(const char *kind);
/* "kv, ycsb, twitter, trace, echo": the valid kinds, for messages and docs. */
const char *gen_names(void);

/*
 * The generator for a config's workload object: reads its "kind" (required)
 * and finds it.  Returns NULL with a message in err naming the bad kind, the
 * nearest valid one and the list of kinds.  `where` prefixes the message
 * (NULL: "workload").
 */
const struct gen_ops *gen_lookup(const json_t *spec, const char *where, char *err,
				 size_t errlen);

/* The generators in gen.c's table (each in its own file). */
extern const struct gen_ops gen_kv_ops;
extern const struct gen_ops gen_ycsb_ops;
extern const struct gen_ops gen_twitter_ops;
extern const struct gen_ops gen_trace_ops;
extern const struct gen_ops gen_echo_ops;

/*
 * Nil-externality of an op (paper §3): set and delete do not externalize
 * and may commit on delivery; get, incr (and cas) do.  Returns KV_F_*
 * flags for the request header.
 */
unsigned gen_op_flags(unsigned op);

/* ---- helpers shared by the generator implementations ---- */

struct rng;
struct conf_key;

/*
 * Seeds r for one generator instance from (run seed, process, thread, salt):
 * deterministic for a given seed, distinct per thread, and independent of
 * the arrival process's stream (which uses the same seed without the salt).
 */
void gen_seed(struct rng *r, const struct gen_ctx *c, uint64_t salt);

/* conf_check of spec against schema with c->where (or "workload") as prefix. */
int gen_check(const json_t *spec, const struct conf_key *schema, const struct gen_ctx *c,
	      char *err, size_t errlen);

/* c->where, or "workload". */
const char *gen_where(const struct gen_ctx *c);

/* Global thread index (process * nthreads + thread) and thread count. */
uint64_t gen_thread_index(const struct gen_ctx *c);
uint64_t gen_thread_count(const struct gen_ctx *c);

/*
 * Writes the fixed-size key of item number num into op->key: "k" then num in
 * decimal, zero-padded on the left to key_size bytes.  gen_key_min_size(n)
 * is the smallest key_size that keeps items 0..n-1 distinct.
 */
void gen_key_fixed(struct gen_op *op, uint64_t num, unsigned key_size);
unsigned gen_key_min_size(uint64_t nitems);

#endif
