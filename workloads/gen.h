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
#include "wire.h"

struct gen_op {
	unsigned op;                 /* enum wire_op */
	uint16_t key_len;
	uint32_t val_len;
	uint64_t aux;                /* incr delta, ... */
	char key[WIRE_MAX_KEY + 1];
};

struct gen_ctx {
	uint64_t seed;               /* run seed */
	unsigned process, nprocesses;/* client process rank and count */
	unsigned thread, nthreads;   /* thread within the process */
	const char *config_dir;      /* for relative paths (traces) */
};

struct gen;

struct gen_ops {
	const char *name;            /* value of workload.kind */
	int version;                 /* GEN_OPS_VERSION */
	/* Checks the spec (unknown keys are errors) and opens an instance. */
	struct gen *(*open)(const json_t *spec, const struct gen_ctx *c, char *err, size_t errlen);
	/* Next operation: 0, or 1 when a finite source (trace) is exhausted. */
	int (*next)(struct gen *g, struct gen_op *op);
	/* Load phase: the i-th record to insert before measuring; 1 when done
	 * (NULL: nothing to load).  Each thread loads its share. */
	int (*load)(struct gen *g, uint64_t i, struct gen_op *op);
	/* Description for results (resolved parameters), or NULL. */
	json_t *(*describe)(struct gen *g);
	void (*close)(struct gen *g);
};

#define GEN_OPS_VERSION 1

const struct gen_ops *gen_find(const char *kind);
const char *gen_names(void);

/*
 * Nil-externality of an op (paper §3): set and delete do not externalize
 * and may commit on delivery; get, incr (and cas) do.  Returns WIRE_F_*
 * flags for the request header.
 */
unsigned gen_op_flags(unsigned op);

#endif
