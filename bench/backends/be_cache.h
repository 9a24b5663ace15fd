/*
 * be_cache.h - the `cache` back end: a Memcached-like in-memory cache.
 *
 * The backend itself is cache_backend_ops (declared in backend.h).  This
 * header adds what tests and tools need to look inside one instance: the
 * size limit of an item, plain counters, and a consistency checker.
 */
#ifndef OQB_BE_CACHE_H
#define OQB_BE_CACHE_H

#include <stdint.h>
#include <stddef.h>
#include "backend.h"

#define CACHE_PAGE_SIZE      (1u << 20)   /* slab page, and the largest item */
#define CACHE_MIN_CHUNK      64u
/* memory_mb's default (when 0) and bounds are its row's (lib/settings/be_cache.def) */

struct cache_stats {
	uint64_t items;          /* live items */
	uint64_t bytes;          /* header + key + value of live items */
	uint64_t evictions;      /* items dropped to make room */
	uint64_t hits, misses;   /* get only */
	uint64_t pages_used;     /* 1 MiB pages carved so far */
	uint64_t pages_limit;    /* memory_mb */
	uint64_t page_moves;     /* pages taken from another class */
	uint64_t nospace;        /* sets refused: too large, or no room at all */
	unsigned classes;        /* number of slab classes */
};

/* Largest value that can be stored under a key of key_len bytes. */
uint32_t cache_max_value(uint32_t key_len);

/* Counters of a cache backend instance (b must come from cache_backend_ops). */
void cache_get_stats(struct backend *b, struct cache_stats *st);

/*
 * Walks every structure of the instance (hash chains, LRU lists, free
 * lists, pages) and checks they agree with each other and with the
 * counters.  Returns 0, or -1 with what is wrong in err.  O(items); for
 * tests.
 */
int cache_check(struct backend *b, char *err, size_t errlen);

#endif
