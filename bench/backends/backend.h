/*
 * backend.h - the KV back ends, one interface.
 *
 * A worker owns one backend instance (its key partition) and calls it in
 * slot order, from one thread.  Backends: null (echo, optional service
 * time), cache (memcached-like, in memory), pmkv (persistent, libpmem),
 * memcached (Debian's memcached, a process the server starts, spoken to
 * over a UNIX socket), rocksdb (Debian's librocksdb, in process), plugin (a
 * user's engine in a shared object, against include/oqb_plugin.h;
 * be_plugin.h).  Register a new one in backend.c's table.
 */
#ifndef OQB_BACKEND_H
#define OQB_BACKEND_H

#include <stdint.h>
#include <stddef.h>
#include <jansson.h>
#include "kvop.h"
#include "settings.h"

struct backend_conf {
	const char *kind;        /* "null", "cache", "pmkv", "memcached", "rocksdb" */
	/*
	 * The back ends' settings as the server parsed them from its flags:
	 * one row each in lib/settings/be_*.def (type, default, bounds, help),
	 * read here by the row's field (set.memory_mb, set.write_buffer_mb,
	 * set.service_dist, ...), never copied into fields of their own.  A
	 * number left 0 or a string NULL (a test's own conf) is the back
	 * end's default.
	 */
	struct setting_vals set;
	/* what the server works out, not a setting */
	const char *path;        /* pmkv: pool file (per worker: caller appends .wN) */
	uint64_t seed;           /* for random service times */
	int worker;              /* partition index */
	unsigned workers;        /* how many partitions the server has (memcached's -m is memory_mb x workers) */
	const char *run_dir;     /* parent of its private run directory (NULL: $OQB_RUN_DIR or /dev/shm); rocksdb's too */
	/* plugin */
	const char *plugin_path;    /* the shared object */
	const char *plugin_options; /* backend.options as JSON text (NULL: "{}") */
	const char *persist_dir; /* the server's --pmem-path, or NULL */
	int durable;             /* the server runs --durable: the store must survive a crash */
};

struct backend_req {
	unsigned op;             /* enum kv_op */
	const uint8_t *key;
	uint32_t key_len;
	const uint8_t *val;
	uint32_t val_len;
	uint64_t aux;
	/* 1: the caller sends nothing that carries this request's result
	 * (a set or delete that oq committed on delivery, or deferred on its
	 * ACK), so the backend may return before its store has executed it,
	 * as long as every later request of this instance sees its effect.
	 * 0: status and value must be final on return. */
	int async;
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
	/* Optional: NULL while the instance can serve; once it cannot (the
	 * store it talks to died), why, naming the store; the server then
	 * fails.  Called from the server's main thread while workers run. */
	const char *(*fatal)(struct backend *b);
};

#define BACKEND_OPS_VERSION 1

/* The built-in back ends (be_null.c, be_cache.c); pmkv's is in be_pmkv.h. */
extern const struct backend_ops null_backend_ops;
extern const struct backend_ops cache_backend_ops;
extern const struct backend_ops memcached_backend_ops;   /* be_memcached.c */
extern const struct backend_ops rocksdb_backend_ops;     /* be_rocksdb.c */

/* Puts a result value into o: val_len = len, and the bytes if they fit in
 * val_cap; otherwise status KV_ERR_NOSPACE (val_len still says how much
 * was needed).  Shared by the backends. */
void backend_copy_out(struct backend_out *o, const uint8_t *v, uint32_t len);

/* The start of an exec that most backends share: sets status KV_OK and
 * val_len 0, answers an unknown op (KV_ERR_OP, counted in *bad_ops), counts
 * a known one in ops[op], and answers nop and echo.  Returns 1 when the
 * request is answered, 0 when the backend is to execute it. */
int backend_exec_prologue(const struct backend_req *r, struct backend_out *o, uint64_t *ops, uint64_t *bad_ops);
/* A counter value for incr: 1-20 decimal digits, at most UINT64_MAX, as
 * memcached reads one.  0, or -1 if the bytes are not such a number. */
int backend_parse_u64(const uint8_t *s, size_t len, uint64_t *out);

/* Finds a backend by name; NULL if there is none. */
const struct backend_ops *backend_find(const char *name);
/* Comma-separated list of backend names, for help and errors. */
const char *backend_names(void);

#endif
