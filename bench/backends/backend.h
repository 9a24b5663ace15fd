/*
 * backend.h - the KV back ends, one interface.
 *
 * A worker owns one backend instance (its key partition) and calls it in
 * slot order, from one thread.  Backends: null (echo, optional service
 * time), cache (memcached-like, in memory), pmkv (persistent, libpmem).
 * Register a new one in backend.c's table.
 */
#ifndef OQB_BACKEND_H
#define OQB_BACKEND_H

#include <stdint.h>
#include <stddef.h>
#include <jansson.h>
#include "kvop.h"

struct backend_conf {
	const char *kind;        /* "null", "cache", "pmkv" */
	/* null */
	uint64_t service_ns;     /* mean service time; 0 = return at once */
	int service_exp;         /* 1: exponential with that mean; 0: fixed */
	/* cache */
	uint64_t memory_mb;      /* memory limit for items */
	int prefault;            /* allocate and touch all memory_mb pages at open */
	/* pmkv */
	const char *path;        /* pool file (per worker: caller appends .wN) */
	uint64_t pool_mb;
	uint64_t seed;           /* for random service times */
	int worker;              /* partition index */
};

struct backend_req {
	unsigned op;             /* enum kv_op */
	const uint8_t *key;
	uint32_t key_len;
	const uint8_t *val;
	uint32_t val_len;
	uint64_t aux;
};

/*
 * exec always sets status and val_len.  get, echo and incr copy their value
 * into val (val_cap bytes); incr's value is the new count in decimal ASCII,
 * as memcached returns it.  A value that does not fit in val_cap (or val ==
 * NULL) is not copied: status is KV_ERR_NOSPACE and val_len the length
 * that was needed.  A val_cap of KV_MAX_VALUE always suffices.
 */
struct backend_out {
	unsigned status;         /* enum kv_status */
	uint8_t *val;            /* filled by get/echo/incr: buffer of val_cap */
	uint32_t val_cap;
	uint32_t val_len;
};

struct backend;

struct backend_ops {
	const char *name;
	int version;             /* BACKEND_OPS_VERSION */
	/* Creates an instance; NULL with a message in err on failure. */
	struct backend *(*open)(const struct backend_conf *c, char *err, size_t errlen);
	/* Executes one request; never fails the process. */
	void (*exec)(struct backend *b, const struct backend_req *r, struct backend_out *o);
	/* Counters for results, as a jansson object (may be NULL). */
	json_t *(*stats_json)(struct backend *b);
	void (*close)(struct backend *b);
};

#define BACKEND_OPS_VERSION 1

/* The built-in back ends (be_null.c, be_cache.c); pmkv's is in be_pmkv.h. */
extern const struct backend_ops null_backend_ops;
extern const struct backend_ops cache_backend_ops;

/* Puts a result value into o: val_len = len, and the bytes if they fit in
 * val_cap; otherwise status KV_ERR_NOSPACE (val_len still says how much
 * was needed).  Shared by the backends. */
void backend_copy_out(struct backend_out *o, const uint8_t *v, uint32_t len);

/* Finds a backend by name; NULL if there is none. */
const struct backend_ops *backend_find(const char *name);
/* Comma-separated list of backend names, for help and errors. */
const char *backend_names(void);

#endif
