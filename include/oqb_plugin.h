/*
 * oqb_plugin.h - the oqbench storage-engine plugin ABI, version 1.
 *
 * The one header a storage-system author compiles against to run their own
 * engine under oqbench's systems (oq, rawrpc, deferred, erpc) with
 *     "backend": { "kind": "plugin", "path": "engine.so", "options": {...} }
 * Plain C, no other header of the project, no jansson: options arrive as
 * JSON text.  Build a plugin out of the tree with
 *     cc -std=c11 -O2 -fPIC -shared -I OQBENCH/include -o engine.so engine.c
 * docs/plugins.md has the rules in full; the short form:
 *
 * Entry.  The .so exports `oqb_plugin_entry`, a function returning a
 * pointer to a static `struct oqb_plugin` whose first two members are
 * OQB_PLUGIN_ABI_VERSION and sizeof(struct oqb_plugin).  The server
 * compares both with its own before it calls anything else, and refuses
 * the plugin by name and version if either differs.  Those two members
 * stay first in every future version.
 *
 * Instances and threads.  The server opens one instance per worker; a
 * worker's requests go to its instance only, in its receive-slot order,
 * and every key a client sends to that worker belongs to that instance
 * alone (keys are partitioned by hash over workers).  Every call on an
 * instance comes from its worker's own thread: open, in durable mode the
 * replay of a crashed server's requests, the requests, stats and close;
 * never two at once, each after the previous one.  So an engine may keep
 * per-thread state (thread-local storage, a thread-bound handle).  open
 * runs while the thread may use every CPU of the worker's NUMA node, so
 * its memory lands there and threads or processes it starts inherit that
 * set; the thread then pins itself to the worker's CPU for the requests.
 * Different instances run at the same time on different threads: state
 * shared between them (globals) needs the plugin's own locking.  (Servers
 * before this rule opened and closed instances on another thread, with the
 * same happens-after order; a plugin that keeps no per-thread state runs
 * the same under both, which is why the ABI version did not change.)
 *
 * Memory.  key and val point into the server's buffers, valid only during
 * the call: copy what you keep.  get writes its value into the caller's
 * buffer `val` of `cap` bytes; nothing the plugin allocates crosses the
 * ABI, and nothing the server passes is the plugin's to free.
 *
 * Statuses.  Every operation returns an enum oqb_status; anything other
 * than OQB_OK is the request's answer (a client sees it), never a reason
 * for the server to stop.  Calls must not block indefinitely.
 */
#ifndef OQB_PLUGIN_H
#define OQB_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Raised on every incompatible change of this header; the server runs
 * only plugins built for its own version. */
#define OQB_PLUGIN_ABI_VERSION 1

/* The symbol the server looks up with dlsym. */
#define OQB_PLUGIN_ENTRY_SYMBOL "oqb_plugin_entry"

/* What an operation returns.  The numbers are oqbench's status codes on
 * the wire, except OQB_ERROR, which clients see as an unsupported op. */
enum oqb_status {
	OQB_OK = 0,
	OQB_NOT_FOUND = 1,    /* get, del, incr: no such key */
	OQB_BAD = 2,          /* the engine cannot take this key */
	OQB_NOSPACE = 3,      /* full, or a value larger than allowed or than cap */
	OQB_UNSUPPORTED = 4,  /* the engine does not do this operation */
	OQB_ERROR = 5         /* anything else: the engine failed this request */
};

/* Capabilities, in struct oqb_plugin.caps. */
#define OQB_CAP_DURABLE 0x1u  /* a write that returned OQB_OK survives a crash of
				 the process (the server's durable mode needs it) */
#define OQB_CAP_INCR    0x2u  /* incr is implemented (the pointer is set) */

/* What the server tells an instance when it opens it. */
struct oqb_plugin_conf {
	uint32_t struct_size;     /* sizeof(struct oqb_plugin_conf) of the server */
	uint32_t worker;          /* this instance's worker, 0 .. workers-1 */
	uint32_t workers;         /* instances this server opens */
	int durable;              /* 1: the server runs durable (writes must persist
				     before they return) */
	uint64_t seed;            /* the run's seed, for engines that draw numbers */
	const char *options_json; /* backend.options as JSON text; "{}" if absent */
	const char *path;         /* the .so as configured, for messages */
};

struct oqb_plugin {
	uint32_t abi_version;     /* OQB_PLUGIN_ABI_VERSION; stays first */
	uint32_t struct_size;     /* sizeof(struct oqb_plugin); stays second */
	const char *name;         /* the engine's name, for messages and results */
	const char *version;      /* the engine's own version text, for results */
	uint32_t caps;            /* OQB_CAP_* */
	uint32_t max_key;         /* longest key in bytes; 0: oqbench's limit (250) */
	uint32_t max_value;       /* longest value in bytes; 0: oqbench's limit (1 MiB) */

	/* Opens an instance.  On failure returns NULL and writes why into
	 * err (errlen bytes, NUL-terminated), e.g. which option is wrong and
	 * what it takes: the server shows it to the user as it is. */
	void *(*open)(const struct oqb_plugin_conf *conf, char *err, size_t errlen);
	/* Releases an instance (durable engines: a clean shutdown). */
	void (*close)(void *inst);

	/* get: copies the value into val and sets *val_len.  A value longer
	 * than cap is not copied: OQB_NOSPACE with *val_len the length it
	 * needs.  OQB_NOT_FOUND for an absent key. */
	int (*get)(void *inst, const uint8_t *key, uint32_t key_len,
		   uint8_t *val, uint32_t cap, uint32_t *val_len);
	/* set: stores val under key, replacing any value. */
	int (*set)(void *inst, const uint8_t *key, uint32_t key_len,
		   const uint8_t *val, uint32_t val_len);
	/* del: removes key; OQB_NOT_FOUND if it was absent. */
	int (*del)(void *inst, const uint8_t *key, uint32_t key_len);
	/* incr: the value is an unsigned decimal number; adds delta (modulo
	 * 2^64), stores the sum in decimal, and returns it in *result.
	 * OQB_NOT_FOUND for an absent key; OQB_ERROR for a value that is not
	 * a number (then nothing changes).  NULL without OQB_CAP_INCR. */
	int (*incr)(void *inst, const uint8_t *key, uint32_t key_len,
		    uint64_t delta, uint64_t *result);

	/* Optional (may be NULL): the instance's counters as the text of one
	 * JSON object, written into buf (cap bytes, NUL-terminated); returns
	 * the length written.  Recorded in the results beside the server's. */
	size_t (*stats)(void *inst, char *buf, size_t cap);
};

/* The entry point every plugin exports (OQB_PLUGIN_ENTRY_SYMBOL). */
const struct oqb_plugin *oqb_plugin_entry(void);

#ifdef __cplusplus
}
#endif

#endif
