/*
 * be_pmkv.h - a persistent, crash-consistent hash KV store on libpmem.
 *
 * This is the `pmkv` backend (modelled on pmemkv's cmap engine) and, for
 * tests and tools, a direct API on one pool file.  The backend opens
 * conf->path + ".w<worker>"; the API below takes the exact file name.
 * The layout and the consistency argument are in be_pmkv.c's header
 * comment and in docs/durability.md.
 *
 * One pool is used by one thread at a time (a worker owns its partition);
 * a second open of the same file, from this or another process, is refused
 * while the first holds it.
 */
#ifndef OQB_BE_PMKV_H
#define OQB_BE_PMKV_H

#include <stdint.h>
#include <stddef.h>
#include "backend.h"

#define PMKV_MIN_POOL_BYTES  (64u * 1024)
#define PMKV_MAX_POOL_BYTES  (128ull << 30)   /* block numbers are 32-bit; pool_mb's row max (test_pmkv) */
#define PMKV_MAX_KEY         UINT16_MAX

extern const struct backend_ops pmkv_backend_ops;

struct pmkv;

/* What open found and what the pool holds now (see pmkv_info). */
struct pmkv_info {
	int is_pmem;             /* 1: pmem_persist (real PM); 0: pmem_msync */
	int was_clean;           /* previous user closed the pool in order */
	int created;             /* this open created the file */
	uint64_t opens;          /* times the pool has been opened */
	uint64_t pool_bytes;
	uint64_t index_slots;
	uint64_t heap_bytes;
	uint64_t live;           /* keys (= records reachable from the index) */
	uint64_t tombs;          /* deleted-slot markers left in the index */
	uint64_t used_bytes;     /* heap bytes held by live records */
	uint64_t free_bytes;     /* heap bytes in free extents */
	uint64_t free_extents;   /* number of free extents (1 = unfragmented) */
	uint64_t dropped;        /* index entries dropped by this open's checks */
	uint64_t open_ns;        /* time spent opening and recovering */
	uint64_t persists;       /* ordering points (flush + fence / msync) */
	uint64_t persist_ns;     /* time spent in them */
	uint64_t persist_errors; /* failed msync calls */
};

/*
 * Opens the pool in `file`, creating it with `pool_bytes` bytes (rounded
 * down to 4 KiB) if it does not exist.  An existing pool keeps its own size.
 * Recovery runs on every open: index entries are checked (bounds, checksum,
 * reachability) and bad ones dropped, then the free space is rebuilt.
 * Returns the handle, or NULL with a message naming the file in err.
 */
struct pmkv *pmkv_open(const char *file, uint64_t pool_bytes, char *err, size_t errlen);

/* Marks the pool cleanly shut down, unmaps it and releases it.  NULL is ok. */
void pmkv_close(struct pmkv *pk);

/*
 * Stores key -> val.  When it returns KV_OK the pair is durable (see
 * be_pmkv.c for what that means on PM and on a regular file; an msync that
 * fails with an I/O error is counted in persist_errors).  Returns
 * KV_ERR_NOSPACE if the heap or the index is full (nothing changes),
 * KV_ERR_BAD if a length is out of range.
 */
unsigned pmkv_put(struct pmkv *pk, const void *key, uint32_t key_len,
		  const void *val, uint32_t val_len);

/*
 * Copies the value of key into buf (capacity cap) and sets *val_len.
 * Returns KV_OK, KV_NOT_FOUND, or KV_ERR_NOSPACE if cap is too small
 * (then *val_len is the size needed and buf is untouched).
 */
unsigned pmkv_get(struct pmkv *pk, const void *key, uint32_t key_len,
		  void *buf, uint32_t cap, uint32_t *val_len);

/* Removes key durably.  Returns KV_OK or KV_NOT_FOUND. */
unsigned pmkv_del(struct pmkv *pk, const void *key, uint32_t key_len);

/*
 * Adds delta to a value stored as an unsigned decimal number (wrapping at
 * 2^64, as memcached does) and stores the result out of place.  The new
 * number, in decimal ASCII, goes to buf and its length to *val_len.
 * Returns KV_OK, KV_NOT_FOUND, KV_ERR_BAD (the value is not a number)
 * or KV_ERR_NOSPACE (pool full, or cap too small: then nothing changes
 * and *val_len is the length needed).
 */
unsigned pmkv_incr(struct pmkv *pk, const void *key, uint32_t key_len, uint64_t delta,
		   void *buf, uint32_t cap, uint32_t *val_len);

/* Fills *info.  Counts are exact (kept incrementally). */
void pmkv_info(struct pmkv *pk, struct pmkv_info *info);

/*
 * For tests and tools: the file offsets of key's index slot and record.
 * Returns 0, or -1 if the key is absent.
 */
int pmkv_locate(struct pmkv *pk, const void *key, uint32_t key_len,
		uint64_t *slot_off, uint64_t *rec_off);

/* Heap bytes a record with these lengths occupies (header + key + value,
 * rounded up to a 64-byte block). */
uint64_t pmkv_record_bytes(uint32_t key_len, uint32_t val_len);

#endif
