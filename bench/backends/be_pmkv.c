/*
 * be_pmkv.c - pmkv: a persistent, crash-consistent hash KV on libpmem.
 *
 * The `pmkv` backend of the paper's §6.4 experiments (pmemkv's cmap engine
 * is the model; pmemkv itself is discontinued and not packaged).  One pool
 * file per worker, mapped with pmem_map_file().
 *
 * Layout of a pool (all offsets from the start of the file, host-endian):
 *
 *   [0, 4096)          header: magic, version, geometry (pool, index and
 *                      heap offsets and sizes) with its own checksum, and on
 *                      a separate cache line the clean-shutdown flag and an
 *                      open counter.
 *   [4096, heap_off)   index: a power-of-two array of 8-byte slots, linear
 *                      probing.  A slot is 0 (empty), 1 (tombstone), or
 *                      tag<<48 | offset, where offset is a record's file
 *                      offset (a multiple of 64) and tag the top 16 bits of
 *                      the key's hash, so most probes never touch a record.
 *   [heap_off, end)    heap of 64-byte blocks.  A record is a 32-byte header
 *                      {csum, magic, key_len, flags, val_len, epoch}, the
 *                      key, the value, padded to whole blocks.  csum covers
 *                      everything after itself up to the end of the value.
 *
 * Only the index is the truth.  A record belongs to the store if and only if
 * an index slot points to it; every other heap byte is free.  Free space is
 * volatile state: an allocation bitmap in DRAM plus segregated free lists
 * (exact classes of 1..64 blocks, power-of-two classes above) whose links
 * live in the free blocks themselves and are never flushed.  Open rebuilds
 * both from the index.  Neighbouring free extents are merged at once, so
 * fill / delete / refill with other sizes does not fragment the heap.
 *
 * The consistency argument, step by step.  "persist(x)" below is one
 * ordering point: on real PM (pmem_is_pmem() true) pmem_flush() of the
 * cache lines of x then pmem_drain() (the fence); on anything else
 * pmem_msync() of the pages of x, which returns after they reach the file.
 * Only the bytes written are flushed, rounded out to cache lines (pages for
 * msync); there is no other flush and no other fence.
 *
 *   put(k, v):  1. allocate free blocks R (a DRAM operation: R is not
 *                  reachable from the index, so nothing durable changes);
 *               2. write R's header, key, value and checksum;
 *               3. persist(R)                    -- ordering point 1;
 *               4. store tag|R into k's slot S with one aligned 8-byte
 *                  store (failure-atomic on x86-64 and on PM);
 *               5. persist(S)                    -- ordering point 2;
 *               6. only now hand k's old record to the allocator.
 *   delete(k):  store 0 or 1 into S, persist(S), then free the record.
 *
 *   (a) A slot always points to a complete record: the slot is the only
 *       pointer, it changes in one 8-byte store, and that store is issued
 *       after ordering point 1 has made all of R durable.  A crash anywhere
 *       before step 4 leaves S pointing at the old record (or empty); R is
 *       unreachable, and open returns its blocks to the free space.  A torn
 *       R (its checksum fails) can therefore never be reachable; open still
 *       verifies every reachable record and drops any that fails (that can
 *       only be media or outside corruption).
 *   (b) An old record is reused only after the new slot value is durable
 *       (step 6 after step 5), so a durable slot never points to blocks that
 *       were overwritten.
 *   (c) A put (or delete) that returned is durable: ordering point 2
 *       completed before the return.
 *   (d) Tombstones keep linear-probe chains intact.  A delete writes 0
 *       instead of 1 when the next slot is empty; after persisting that it
 *       may turn the tombstones just before it into 0 as well: no key's
 *       chain passes through a run of tombstones that ends in an empty
 *       slot, so those stores are safe in any order.
 *
 * What "durable" means depends on the mapping:
 *   - Real PM (DAX): ordering points are cache-line flushes and a fence,
 *     so a returned put survives a process kill, an OS crash and power
 *     loss (with eADR the flushes are redundant but harmless).
 *   - A regular file (page cache): every store to the shared mapping is in
 *     the kernel's page cache the moment it is made, so against kill -9 of
 *     the process (what the crash tests do) all of (a)-(d) hold even
 *     without msync.  pmem_msync() adds durability against an OS crash or
 *     power loss: both ordering points wait for the write-back, so the
 *     record reaches the file before the slot that points to it.  The cost
 *     is two msync calls per put (a few hundred microseconds on a disk,
 *     well under a microsecond on tmpfs, where it protects nothing more).
 *   - PMEM_IS_PMEM_FORCE=1 makes libpmem treat any mapping as PM: puts then
 *     cost cache flushes only, and hold against kill -9 but not OS crash.
 *
 * Which of the two is used is in stats_json as "persist".  Pool files are
 * host-endian and locked with flock() while open; the lock dies with the
 * process, so a server started after a kill -9 reopens the pool directly.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libpmem.h>

#include "be_pmkv.h"
#include "clock.h"
#include "kvop.h"

#define PK_MAGIC        "OQBPMKV"          /* 8 bytes with the NUL */
#define PK_VERSION      1u
#define PK_HDR_BYTES    4096u
#define PK_BLOCK        64u
#define PK_REC_HDR      32u
#define PK_REC_MAGIC    0x52564b50u        /* "PKVR" */
#define PK_FREE_MAGIC   0x45455246u        /* "FREE", volatile meaning only */
#define PK_EMPTY        0ull
#define PK_TOMB         1ull
#define PK_OFF_MASK     ((1ull << 48) - 1)
#define PK_NIL          UINT32_MAX
#define PK_EXACT        64u                /* exact size classes, in blocks */
#define PK_NCLASS       (PK_EXACT + 32u)
#define PK_CSUM_SEED    0x6f71622d706d6b76ull
#define PK_HASH_SEED    0x9c1f6e3d2b5a4788ull

struct pk_hdr {
	char magic[8];
	uint32_t version;
	uint32_t hdr_bytes;
	uint64_t pool_bytes;
	uint64_t index_off;
	uint64_t index_slots;
	uint64_t heap_off;
	uint64_t heap_bytes;
	uint64_t hash_seed;
	uint64_t geom_csum;              /* over every field above */
	_Alignas(64) uint64_t clean;     /* 1 after an orderly close */
	uint64_t opens;
};

struct pk_rec {
	uint64_t csum;
	uint32_t magic;
	uint16_t key_len;
	uint16_t flags;
	uint32_t val_len;
	uint32_t reserved;
	uint64_t epoch;                  /* put counter, for inspection */
};

/* Header of a free extent, written into its first block (never flushed).
 * The extent's length is repeated in the last 4 bytes of its last block. */
struct pk_free {
	uint32_t magic;
	uint32_t len;                    /* blocks */
	uint32_t prev, next;             /* block numbers, PK_NIL ends */
};

_Static_assert(sizeof(struct pk_hdr) <= PK_HDR_BYTES, "header too big");
_Static_assert(sizeof(struct pk_rec) == PK_REC_HDR, "record header size");
_Static_assert(sizeof(struct pk_free) <= PK_BLOCK - 4, "free header size");

struct pmkv {
	char *file;
	int fd;                          /* holds the flock */
	uint8_t *base;
	size_t mapped;
	int is_pmem;
	struct pk_hdr *hdr;
	uint64_t *slots;
	uint64_t mask;                   /* index_slots - 1 */
	uint64_t max_live;               /* keeps probe chains short */
	uint64_t heap_off;
	uint8_t *heap;
	uint32_t nblocks;
	uint64_t *bitmap;                /* 1 = block belongs to a live record */
	uint32_t heads[PK_NCLASS];
	uint64_t nonempty[(PK_NCLASS + 63) / 64];
	uint64_t epoch;
	struct pmkv_info st;
};

/* ---- hashing ---------------------------------------------------------- */

static inline uint64_t pk_rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t pk_fmix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static inline uint64_t pk_word(uint64_t w)
{
	w *= 0x87c37b91114253d5ull;
	w = pk_rotl(w, 31);
	return w * 0x4cf5ad432745937full;
}

/* 64-bit hash of n bytes; used both for key hashes and record checksums
 * (with different seeds).  Part of the pool format: changing it needs a
 * new PK_VERSION. */
static uint64_t pk_hash(const void *p, size_t n, uint64_t seed)
{
	const uint8_t *b = p;
	uint64_t h = seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ull);

	for (; n >= 8; n -= 8, b += 8) {
		uint64_t w;
		memcpy(&w, b, 8);
		h ^= pk_word(w);
		h = pk_rotl(h, 27) * 5 + 0x52dce729;
	}
	if (n) {
		uint64_t w = 0;
		memcpy(&w, b, n);
		h ^= pk_word(w);
	}
	return pk_fmix(h);
}

static uint64_t pk_hdr_csum(const struct pk_hdr *h)
{
	return pk_hash(h, offsetof(struct pk_hdr, geom_csum), PK_CSUM_SEED);
}

static uint64_t pk_rec_csum(const struct pk_rec *r)
{
	return pk_hash((const uint8_t *)r + 8, PK_REC_HDR - 8 + (size_t)r->key_len + r->val_len,
		       PK_CSUM_SEED);
}

/* ---- persistence ------------------------------------------------------ */

/* One ordering point over [addr, addr+len): see the header comment.
 * Returns 0, or -1 if msync failed (counted in persist_errors). */
static int pk_persist(struct pmkv *pk, const void *addr, size_t len)
{
	uint64_t t0 = clock_ns();
	int rc = 0;

	if (pk->is_pmem) {
		uintptr_t a = (uintptr_t)addr & ~(uintptr_t)63;
		uintptr_t e = ((uintptr_t)addr + len + 63) & ~(uintptr_t)63;
		pmem_flush((const void *)a, e - a);
		pmem_drain();
	} else if (pmem_msync(addr, len) != 0) {
		pk->st.persist_errors++;
		rc = -1;
	}
	pk->st.persists++;
	pk->st.persist_ns += clock_ns() - t0;
	return rc;
}

static void pk_store_slot(struct pmkv *pk, uint64_t i, uint64_t v)
{
	__atomic_store_n(&pk->slots[i], v, __ATOMIC_RELEASE);
}

/* ---- allocation bitmap ------------------------------------------------ */

static inline int bm_test(const uint64_t *bm, uint32_t i)
{
	return (bm[i >> 6] >> (i & 63)) & 1;
}

static void bm_set_range(uint64_t *bm, uint32_t s, uint32_t n, int on)
{
	for (uint32_t i = s; i < s + n;) {
		if ((i & 63) == 0 && s + n - i >= 64) {
			bm[i >> 6] = on ? ~0ull : 0;
			i += 64;
			continue;
		}
		if (on)
			bm[i >> 6] |= 1ull << (i & 63);
		else
			bm[i >> 6] &= ~(1ull << (i & 63));
		i++;
	}
}

static int bm_any(const uint64_t *bm, uint32_t s, uint32_t n)
{
	for (uint32_t i = s; i < s + n; i++)
		if (bm_test(bm, i))
			return 1;
	return 0;
}

/* First block >= i whose bit equals `val`, or `end`. */
static uint32_t bm_find(const uint64_t *bm, uint32_t i, uint32_t end, int val)
{
	while (i < end) {
		uint64_t w = bm[i >> 6];
		if (!val)
			w = ~w;
		w >>= (i & 63);
		if (w) {
			uint32_t r = i + (uint32_t)__builtin_ctzll(w);
			return r < end ? r : end;
		}
		i = (i | 63) + 1;
	}
	return end;
}

/* ---- free space ------------------------------------------------------- */

static unsigned pk_class(uint32_t n)
{
	if (n <= PK_EXACT)
		return n - 1;
	return PK_EXACT + (unsigned)(63 - __builtin_clzll(n)) - 6;
}

static inline struct pk_free *pk_fh(struct pmkv *pk, uint32_t b)
{
	return (struct pk_free *)(pk->heap + (uint64_t)b * PK_BLOCK);
}

static inline uint32_t *pk_footer(struct pmkv *pk, uint32_t last)
{
	return (uint32_t *)(pk->heap + (uint64_t)last * PK_BLOCK + PK_BLOCK - 4);
}

static void pk_list_add(struct pmkv *pk, uint32_t b, uint32_t len)
{
	unsigned c = pk_class(len);
	struct pk_free *f = pk_fh(pk, b);

	f->magic = PK_FREE_MAGIC;
	f->len = len;
	f->prev = PK_NIL;
	f->next = pk->heads[c];
	if (f->next != PK_NIL)
		pk_fh(pk, f->next)->prev = b;
	pk->heads[c] = b;
	pk->nonempty[c >> 6] |= 1ull << (c & 63);
	*pk_footer(pk, b + len - 1) = len;
	pk->st.free_bytes += (uint64_t)len * PK_BLOCK;
	pk->st.free_extents++;
}

static void pk_list_del(struct pmkv *pk, uint32_t b)
{
	struct pk_free *f = pk_fh(pk, b);
	unsigned c = pk_class(f->len);

	if (f->prev != PK_NIL)
		pk_fh(pk, f->prev)->next = f->next;
	else
		pk->heads[c] = f->next;
	if (f->next != PK_NIL)
		pk_fh(pk, f->next)->prev = f->prev;
	if (pk->heads[c] == PK_NIL)
		pk->nonempty[c >> 6] &= ~(1ull << (c & 63));
	f->magic = 0;
	pk->st.free_bytes -= (uint64_t)f->len * PK_BLOCK;
	pk->st.free_extents--;
}

/* First non-empty class >= c, or PK_NCLASS. */
static unsigned pk_next_class(const struct pmkv *pk, unsigned c)
{
	while (c < PK_NCLASS) {
		uint64_t w = pk->nonempty[c >> 6] >> (c & 63);
		if (w)
			return c + (unsigned)__builtin_ctzll(w);
		c = (c | 63) + 1;
	}
	return PK_NCLASS;
}

/* Takes n blocks from the front of free extent b; the rest stays free. */
static uint32_t pk_take(struct pmkv *pk, uint32_t b, uint32_t n)
{
	uint32_t len = pk_fh(pk, b)->len;

	pk_list_del(pk, b);
	bm_set_range(pk->bitmap, b, n, 1);
	if (len > n)
		pk_list_add(pk, b + n, len - n);
	return b;
}

/* Segregated fit: the smallest class that can hold n blocks.  Returns the
 * first block, or PK_NIL if no free extent is large enough. */
static uint32_t pk_alloc(struct pmkv *pk, uint32_t n)
{
	unsigned c = pk_class(n);

	if (c >= PK_EXACT) {     /* a range class: its extents may be shorter */
		for (uint32_t b = pk->heads[c]; b != PK_NIL; b = pk_fh(pk, b)->next)
			if (pk_fh(pk, b)->len >= n)
				return pk_take(pk, b, n);
		c++;
	}
	c = pk_next_class(pk, c);
	if (c == PK_NCLASS)
		return PK_NIL;
	return pk_take(pk, pk->heads[c], n);
}

/* Returns blocks [b, b+n) to the free space, merged with free neighbours
 * (free extents are always maximal runs of clear bitmap bits). */
static void pk_free_blocks(struct pmkv *pk, uint32_t b, uint32_t n)
{
	bm_set_range(pk->bitmap, b, n, 0);
	if (b > 0 && !bm_test(pk->bitmap, b - 1)) {
		uint32_t l = *pk_footer(pk, b - 1);
		if (l >= 1 && l <= b && pk_fh(pk, b - l)->magic == PK_FREE_MAGIC &&
		    pk_fh(pk, b - l)->len == l) {
			pk_list_del(pk, b - l);
			b -= l;
			n += l;
		}
	}
	if (b + n < pk->nblocks && !bm_test(pk->bitmap, b + n)) {
		struct pk_free *f = pk_fh(pk, b + n);
		if (f->magic == PK_FREE_MAGIC) {
			uint32_t l = f->len;
			pk_list_del(pk, b + n);
			n += l;
		}
	}
	pk_list_add(pk, b, n);
}

/* ---- records and the index -------------------------------------------- */

static inline uint64_t pk_blocks_for(uint64_t key_len, uint64_t val_len)
{
	return (PK_REC_HDR + key_len + val_len + PK_BLOCK - 1) / PK_BLOCK;
}

uint64_t pmkv_record_bytes(uint32_t key_len, uint32_t val_len)
{
	return pk_blocks_for(key_len, val_len) * PK_BLOCK;
}

static inline struct pk_rec *pk_rec_at(struct pmkv *pk, uint64_t slotval)
{
	return (struct pk_rec *)(pk->base + (slotval & PK_OFF_MASK));
}

static inline uint32_t pk_rec_block(struct pmkv *pk, uint64_t slotval)
{
	return (uint32_t)(((slotval & PK_OFF_MASK) - pk->heap_off) / PK_BLOCK);
}

static inline uint64_t pk_key_hash(struct pmkv *pk, const void *key, uint32_t key_len)
{
	return pk_hash(key, key_len, pk->hdr->hash_seed);
}

static inline int pk_key_eq(const struct pk_rec *r, const void *key, uint32_t key_len)
{
	return r->key_len == key_len && memcmp((const uint8_t *)(r + 1), key, key_len) == 0;
}

/*
 * Looks key up.  Returns its slot, or -1 if absent; then *ins is where a
 * new entry would go (the first tombstone on the chain, else the empty
 * slot that ends it; -1 if the index has neither).
 */
static int64_t pk_find(struct pmkv *pk, const void *key, uint32_t key_len, uint64_t h,
		       int64_t *ins)
{
	uint64_t i = h & pk->mask, tag = h >> 48;
	int64_t tomb = -1;

	for (uint64_t probe = 0; probe <= pk->mask; probe++, i = (i + 1) & pk->mask) {
		uint64_t v = pk->slots[i];
		if (v == PK_EMPTY) {
			*ins = tomb >= 0 ? tomb : (int64_t)i;
			return -1;
		}
		if (v == PK_TOMB) {
			if (tomb < 0)
				tomb = (int64_t)i;
			continue;
		}
		if ((v >> 48) == tag && pk_key_eq(pk_rec_at(pk, v), key, key_len))
			return (int64_t)i;
	}
	*ins = tomb;
	return -1;
}

/* Checks that slot value v names a whole, intact record of this pool whose
 * key hashes to the tag in v.  Reads only inside the heap. */
static int pk_rec_ok(struct pmkv *pk, uint64_t v)
{
	uint64_t off = v & PK_OFF_MASK, end = pk->heap_off + (uint64_t)pk->nblocks * PK_BLOCK;

	if (off < pk->heap_off || off >= end || (off - pk->heap_off) % PK_BLOCK != 0 ||
	    off + PK_REC_HDR > end)
		return 0;
	const struct pk_rec *r = (const struct pk_rec *)(pk->base + off);
	if (r->magic != PK_REC_MAGIC || off + PK_REC_HDR + (uint64_t)r->key_len + r->val_len > end)
		return 0;
	if (pk_rec_csum(r) != r->csum)
		return 0;
	return (pk_key_hash(pk, r + 1, r->key_len) >> 48) == (v >> 48);
}

/* ---- recovery --------------------------------------------------------- */

/* Is the entry at slot i reachable by a lookup of its own key (no empty
 * slot between its home and i) and the first entry for that key? */
static int pk_reachable(struct pmkv *pk, uint64_t i)
{
	uint64_t v = pk->slots[i];
	const struct pk_rec *r = pk_rec_at(pk, v);
	uint64_t h = pk_key_hash(pk, r + 1, r->key_len);

	for (uint64_t j = h & pk->mask; j != i; j = (j + 1) & pk->mask) {
		uint64_t w = pk->slots[j];
		if (w == PK_EMPTY)
			return 0;
		if (w != PK_TOMB && (w >> 48) == (v >> 48) &&
		    pk_key_eq(pk_rec_at(pk, w), r + 1, r->key_len))
			return 0;
	}
	return 1;
}

/* Turns the run of tombstones just before empty slot e into empty slots
 * (not persisted).  Returns how many were cleared. */
static uint64_t pk_clear_tombs_before(struct pmkv *pk, uint64_t e)
{
	uint64_t n = 0, j = (e - 1) & pk->mask;

	while (j != e && pk->slots[j] == PK_TOMB) {
		pk_store_slot(pk, j, PK_EMPTY);
		n++;
		j = (j - 1) & pk->mask;
	}
	return n;
}

/* Persists the n slots before slot e (the run pk_clear_tombs_before made). */
static void pk_persist_run_before(struct pmkv *pk, uint64_t e, uint64_t n)
{
	if (n == 0)
		return;
	if (n <= e) {
		pk_persist(pk, &pk->slots[e - n], n * 8);
	} else {
		if (e > 0)
			pk_persist(pk, &pk->slots[0], e * 8);
		pk_persist(pk, &pk->slots[pk->mask + 1 - (n - e)], (n - e) * 8);
	}
}

/*
 * Rebuilds the volatile state from the index: drops entries that fail the
 * record checks, are unreachable, duplicate an earlier key or overlap an
 * earlier record (all impossible without outside corruption), clears
 * tombstone runs that end in an empty slot, then makes every heap block not
 * held by a live record free.
 */
static void pk_recover(struct pmkv *pk)
{
	uint64_t nslots = pk->mask + 1;
	int changed = 0;

	/* Pass 1: record checks.  Dropped entries become tombstones, not
	 * empty slots, so chains through them stay intact. */
	for (uint64_t i = 0; i < nslots; i++) {
		uint64_t v = pk->slots[i];
		if (v == PK_EMPTY || v == PK_TOMB)
			continue;
		if (!pk_rec_ok(pk, v)) {
			pk_store_slot(pk, i, PK_TOMB);
			pk->st.dropped++;
			changed = 1;
		}
	}
	/* Pass 2: reachability, duplicates, overlaps; claim the blocks. */
	for (uint64_t i = 0; i < nslots; i++) {
		uint64_t v = pk->slots[i];
		if (v == PK_EMPTY || v == PK_TOMB)
			continue;
		const struct pk_rec *r = pk_rec_at(pk, v);
		uint32_t b = pk_rec_block(pk, v);
		uint32_t n = (uint32_t)pk_blocks_for(r->key_len, r->val_len);
		if (!pk_reachable(pk, i) || bm_any(pk->bitmap, b, n)) {
			pk_store_slot(pk, i, PK_TOMB);
			pk->st.dropped++;
			changed = 1;
			continue;
		}
		bm_set_range(pk->bitmap, b, n, 1);
		pk->st.live++;
		pk->st.used_bytes += (uint64_t)n * PK_BLOCK;
		if (r->epoch > pk->epoch)
			pk->epoch = r->epoch;
	}
	/* The drops must be durable before tombstone runs are shortened: a
	 * dropped entry must not be revived by a later crash. */
	if (changed)
		pk_persist(pk, pk->slots, nslots * 8);
	changed = 0;
	for (uint64_t e = 0; e < nslots; e++)
		if (pk->slots[e] == PK_EMPTY && pk_clear_tombs_before(pk, e))
			changed = 1;
	if (changed)
		pk_persist(pk, pk->slots, nslots * 8);
	for (uint64_t i = 0; i < nslots; i++)
		if (pk->slots[i] == PK_TOMB)
			pk->st.tombs++;
	/* Free space = the gaps between live records. */
	for (uint32_t b = bm_find(pk->bitmap, 0, pk->nblocks, 0); b < pk->nblocks;) {
		uint32_t e = bm_find(pk->bitmap, b, pk->nblocks, 1);
		pk_list_add(pk, b, e - b);
		b = bm_find(pk->bitmap, e, pk->nblocks, 0);
	}
}

/* ---- open / create / close -------------------------------------------- */

static uint64_t pk_pow2_floor(uint64_t x)
{
	return x ? 1ull << (63 - __builtin_clzll(x)) : 0;
}

/* Writes a fresh pool into file.tmp and renames it into place, so a crash
 * while creating never leaves a half-made pool under the real name. */
static int pk_create(const char *file, uint64_t bytes, char *err, size_t errlen)
{
	size_t tlen = strlen(file) + 5;
	char *tmp = malloc(tlen);
	size_t mapped = 0;
	int is_pmem = 0, rc = -1;

	if (!tmp) {
		snprintf(err, errlen, "%s: out of memory", file);
		return -1;
	}
	snprintf(tmp, tlen, "%s.tmp", file);
	bytes &= ~(uint64_t)4095;
	if (bytes < PMKV_MIN_POOL_BYTES || bytes > PMKV_MAX_POOL_BYTES) {
		snprintf(err, errlen, "%s: pool size %llu bytes is out of range; use %u KiB to %llu GiB",
			 file, (unsigned long long)bytes, PMKV_MIN_POOL_BYTES / 1024,
			 (unsigned long long)(PMKV_MAX_POOL_BYTES >> 30));
		goto out;
	}
	unlink(tmp);    /* left over from a crash during an earlier create */
	uint8_t *base = pmem_map_file(tmp, bytes, PMEM_FILE_CREATE | PMEM_FILE_EXCL, 0600,
				      &mapped, &is_pmem);
	if (!base) {
		snprintf(err, errlen, "%s: cannot create pool of %llu MiB: %s; check that the "
			 "directory exists, is writable and has room", tmp,
			 (unsigned long long)(bytes >> 20), pmem_errormsg());
		goto out;
	}
	/* Index: about one slot per 128 heap bytes; the file is zero-filled,
	 * so every slot starts empty. */
	struct pk_hdr *h = (struct pk_hdr *)base;
	uint64_t slots = pk_pow2_floor(bytes / 128);
	memcpy(h->magic, PK_MAGIC, sizeof h->magic);
	h->version = PK_VERSION;
	h->hdr_bytes = PK_HDR_BYTES;
	h->pool_bytes = bytes;
	h->index_off = PK_HDR_BYTES;
	h->index_slots = slots;
	h->heap_off = (PK_HDR_BYTES + slots * 8 + 4095) & ~(uint64_t)4095;
	h->heap_bytes = (bytes - h->heap_off) & ~(uint64_t)(PK_BLOCK - 1);
	h->hash_seed = PK_HASH_SEED;
	h->geom_csum = pk_hdr_csum(h);
	h->clean = 1;
	h->opens = 0;
	if (is_pmem)
		pmem_persist(h, sizeof *h);
	else if (pmem_msync(h, sizeof *h) != 0) {
		snprintf(err, errlen, "%s: msync failed: %s", tmp, strerror(errno));
		pmem_unmap(base, mapped);
		goto out;
	}
	pmem_unmap(base, mapped);
	int fd = open(tmp, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0 || rename(tmp, file) != 0) {
		snprintf(err, errlen, "%s: cannot finish creating the pool: %s", file, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	/* Make the rename itself durable. */
	char *slash = strrchr(file, '/');
	char *dir = slash ? strndup(file, slash == file ? 1 : (size_t)(slash - file)) : strdup(".");
	int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(dir);
	rc = 0;
out:
	free(tmp);
	return rc;
}

/* Validates the header against the mapped size.  0 or -1 with a message. */
static int pk_check_hdr(const struct pk_hdr *h, size_t mapped, const char *file,
			char *err, size_t errlen)
{
	const char *fix = "remove it or choose another pool path";

	if (memcmp(h->magic, PK_MAGIC, sizeof h->magic) != 0) {
		snprintf(err, errlen, "%s: not a pmkv pool (bad magic); %s", file, fix);
		return -1;
	}
	if (h->version != PK_VERSION) {
		snprintf(err, errlen, "%s: pmkv pool format version %u, this build reads version %u; %s",
			 file, h->version, PK_VERSION, fix);
		return -1;
	}
	if (h->geom_csum != pk_hdr_csum(h)) {
		snprintf(err, errlen, "%s: pool header is corrupt (checksum mismatch); %s", file, fix);
		return -1;
	}
	int ok = h->hdr_bytes == PK_HDR_BYTES && h->pool_bytes == mapped &&
		 h->index_off == PK_HDR_BYTES && h->index_slots >= 1 &&
		 (h->index_slots & (h->index_slots - 1)) == 0 &&
		 h->index_slots <= (mapped - PK_HDR_BYTES) / 8 &&
		 h->heap_off >= PK_HDR_BYTES + h->index_slots * 8 && h->heap_off % PK_BLOCK == 0 &&
		 h->heap_off <= mapped && h->heap_bytes <= mapped - h->heap_off &&
		 h->heap_bytes % PK_BLOCK == 0 && h->heap_bytes / PK_BLOCK < PK_NIL &&
		 h->heap_bytes >= PK_BLOCK;
	if (!ok) {
		snprintf(err, errlen, "%s: pool geometry does not match the file (%zu bytes; header says "
			 "%llu); was the file truncated or copied partly? %s", file, mapped,
			 (unsigned long long)h->pool_bytes, fix);
		return -1;
	}
	return 0;
}

struct pmkv *pmkv_open(const char *file, uint64_t pool_bytes, char *err, size_t errlen)
{
	uint64_t t0 = clock_ns();
	struct pmkv *pk;
	int created = 0;

	if (!file || !*file) {
		snprintf(err, errlen, "pmkv: no pool file given; set the backend's pool path");
		return NULL;
	}
	pk = calloc(1, sizeof *pk);
	if (!pk || !(pk->file = strdup(file))) {
		snprintf(err, errlen, "%s: out of memory", file);
		free(pk);
		return NULL;
	}
	pk->fd = open(file, O_RDWR | O_CLOEXEC);
	if (pk->fd < 0 && errno == ENOENT) {
		if (pk_create(file, pool_bytes, err, errlen) != 0)
			goto fail;
		created = 1;
		pk->fd = open(file, O_RDWR | O_CLOEXEC);
	}
	if (pk->fd < 0) {
		snprintf(err, errlen, "%s: cannot open pool: %s", file, strerror(errno));
		goto fail;
	}
	if (flock(pk->fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK)
			snprintf(err, errlen, "%s: pool is in use by another process (or handle); stop "
				 "it or use another pool path", file);
		else
			snprintf(err, errlen, "%s: cannot lock pool: %s", file, strerror(errno));
		goto fail;
	}
	struct stat sb;
	if (fstat(pk->fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < (off_t)PK_HDR_BYTES * 2) {
		snprintf(err, errlen, "%s: not a pmkv pool (not a regular file of at least %u bytes); "
			 "remove it or choose another pool path", file, PK_HDR_BYTES * 2);
		goto fail;
	}
	pk->base = pmem_map_file(file, 0, 0, 0, &pk->mapped, NULL);
	if (!pk->base) {
		snprintf(err, errlen, "%s: cannot map pool: %s", file, pmem_errormsg());
		goto fail;
	}
	pk->is_pmem = pmem_is_pmem(pk->base, pk->mapped);
	pk->hdr = (struct pk_hdr *)pk->base;
	if (pk_check_hdr(pk->hdr, pk->mapped, file, err, errlen) != 0)
		goto fail;

	pk->slots = (uint64_t *)(pk->base + pk->hdr->index_off);
	pk->mask = pk->hdr->index_slots - 1;
	pk->max_live = pk->hdr->index_slots - pk->hdr->index_slots / 8;
	pk->heap_off = pk->hdr->heap_off;
	pk->heap = pk->base + pk->heap_off;
	pk->nblocks = (uint32_t)(pk->hdr->heap_bytes / PK_BLOCK);
	pk->bitmap = calloc((pk->nblocks + 63) / 64, 8);
	if (!pk->bitmap) {
		snprintf(err, errlen, "%s: out of memory for the allocation bitmap", file);
		goto fail;
	}
	for (unsigned c = 0; c < PK_NCLASS; c++)
		pk->heads[c] = PK_NIL;

	pk->st.was_clean = pk->hdr->clean == 1;
	pk->st.created = created;
	/* Unclean from here until close: a crash during recovery is a crash. */
	__atomic_store_n(&pk->hdr->clean, 0, __ATOMIC_RELEASE);
	pk->hdr->opens++;
	pk_persist(pk, &pk->hdr->clean, 16);
	pk_recover(pk);
	pk->st.opens = pk->hdr->opens;
	pk->st.open_ns = clock_ns() - t0;
	return pk;
fail:
	if (pk->base)
		pmem_unmap(pk->base, pk->mapped);
	if (pk->fd >= 0)
		close(pk->fd);
	free(pk->bitmap);
	free(pk->file);
	free(pk);
	return NULL;
}

void pmkv_close(struct pmkv *pk)
{
	if (!pk)
		return;
	__atomic_store_n(&pk->hdr->clean, 1, __ATOMIC_RELEASE);
	pk_persist(pk, &pk->hdr->clean, 8);
	pmem_unmap(pk->base, pk->mapped);
	close(pk->fd);
	free(pk->bitmap);
	free(pk->file);
	free(pk);
}

/* ---- operations ------------------------------------------------------- */

unsigned pmkv_put(struct pmkv *pk, const void *key, uint32_t key_len,
		  const void *val, uint32_t val_len)
{
	if (key_len > PMKV_MAX_KEY || (key_len && !key) || (val_len && !val))
		return KV_ERR_BAD;
	uint64_t nb = pk_blocks_for(key_len, val_len);
	if (nb > pk->nblocks)
		return KV_ERR_NOSPACE;
	uint64_t h = pk_key_hash(pk, key, key_len);
	int64_t ins, idx = pk_find(pk, key, key_len, h, &ins);
	if (idx < 0 && (pk->st.live >= pk->max_live || ins < 0))
		return KV_ERR_NOSPACE;
	uint32_t b = pk_alloc(pk, (uint32_t)nb);
	if (b == PK_NIL)
		return KV_ERR_NOSPACE;

	uint64_t off = pk->heap_off + (uint64_t)b * PK_BLOCK;
	struct pk_rec *r = (struct pk_rec *)(pk->base + off);
	r->magic = PK_REC_MAGIC;
	r->key_len = (uint16_t)key_len;
	r->flags = 0;
	r->val_len = val_len;
	r->reserved = 0;
	r->epoch = ++pk->epoch;
	if (key_len)
		memcpy(r + 1, key, key_len);
	if (val_len)
		memcpy((uint8_t *)(r + 1) + key_len, val, val_len);
	r->csum = pk_rec_csum(r);
	if (pk_persist(pk, r, PK_REC_HDR + (size_t)key_len + val_len) != 0) {
		pk_free_blocks(pk, b, (uint32_t)nb);      /* never became reachable */
		return KV_ERR_NOSPACE;
	}

	uint64_t s = (uint64_t)(idx >= 0 ? idx : ins), old = pk->slots[s];
	pk_store_slot(pk, s, (h >> 48) << 48 | off);
	pk_persist(pk, &pk->slots[s], 8);
	pk->st.used_bytes += nb * PK_BLOCK;
	if (idx >= 0) {
		const struct pk_rec *o = pk_rec_at(pk, old);
		uint32_t on = (uint32_t)pk_blocks_for(o->key_len, o->val_len);
		pk_free_blocks(pk, pk_rec_block(pk, old), on);
		pk->st.used_bytes -= (uint64_t)on * PK_BLOCK;
	} else {
		pk->st.live++;
		if (old == PK_TOMB)
			pk->st.tombs--;
	}
	return KV_OK;
}

unsigned pmkv_get(struct pmkv *pk, const void *key, uint32_t key_len,
		  void *buf, uint32_t cap, uint32_t *val_len)
{
	int64_t ins, idx;

	*val_len = 0;
	if (key_len > PMKV_MAX_KEY || (key_len && !key))
		return KV_NOT_FOUND;
	idx = pk_find(pk, key, key_len, pk_key_hash(pk, key, key_len), &ins);
	if (idx < 0)
		return KV_NOT_FOUND;
	const struct pk_rec *r = pk_rec_at(pk, pk->slots[idx]);
	*val_len = r->val_len;
	if (r->val_len > cap || (r->val_len && !buf))
		return KV_ERR_NOSPACE;
	memcpy(buf, (const uint8_t *)(r + 1) + r->key_len, r->val_len);
	return KV_OK;
}

unsigned pmkv_del(struct pmkv *pk, const void *key, uint32_t key_len)
{
	int64_t ins, idx;

	if (key_len > PMKV_MAX_KEY || (key_len && !key))
		return KV_NOT_FOUND;
	idx = pk_find(pk, key, key_len, pk_key_hash(pk, key, key_len), &ins);
	if (idx < 0)
		return KV_NOT_FOUND;
	uint64_t i = (uint64_t)idx, old = pk->slots[i];
	const struct pk_rec *o = pk_rec_at(pk, old);
	uint32_t on = (uint32_t)pk_blocks_for(o->key_len, o->val_len);
	uint32_t ob = pk_rec_block(pk, old);

	if (pk->slots[(i + 1) & pk->mask] == PK_EMPTY) {
		pk_store_slot(pk, i, PK_EMPTY);
		pk_persist(pk, &pk->slots[i], 8);
		/* Slot i is durably empty now: the tombstones before it lead
		 * nowhere (header comment, (d)). */
		uint64_t n = pk_clear_tombs_before(pk, i);
		pk_persist_run_before(pk, i, n);
		pk->st.tombs -= n;
	} else {
		pk_store_slot(pk, i, PK_TOMB);
		pk_persist(pk, &pk->slots[i], 8);
		pk->st.tombs++;
	}
	pk_free_blocks(pk, ob, on);
	pk->st.live--;
	pk->st.used_bytes -= (uint64_t)on * PK_BLOCK;
	return KV_OK;
}

unsigned pmkv_incr(struct pmkv *pk, const void *key, uint32_t key_len, uint64_t delta,
		   void *buf, uint32_t cap, uint32_t *val_len)
{
	char num[24];
	uint32_t n;
	uint64_t x = 0;
	unsigned st;

	*val_len = 0;
	st = pmkv_get(pk, key, key_len, num, 20, &n);
	if (st == KV_NOT_FOUND)
		return st;
	if (st != KV_OK || n == 0)
		return KV_ERR_BAD;      /* longer than any uint64_t, or empty */
	for (uint32_t i = 0; i < n; i++) {
		if (num[i] < '0' || num[i] > '9')
			return KV_ERR_BAD;
		uint64_t d = (uint64_t)(num[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return KV_ERR_BAD;
		x = x * 10 + d;
	}
	x += delta;
	n = (uint32_t)snprintf(num, sizeof num, "%llu", (unsigned long long)x);
	*val_len = n;
	if (!buf || n > cap)
		return KV_ERR_NOSPACE;  /* checked first: nothing changes */
	st = pmkv_put(pk, key, key_len, num, n);
	if (st != KV_OK) {
		*val_len = 0;
		return st;
	}
	memcpy(buf, num, n);
	return KV_OK;
}

void pmkv_info(struct pmkv *pk, struct pmkv_info *info)
{
	*info = pk->st;
	info->is_pmem = pk->is_pmem;
	info->pool_bytes = pk->hdr->pool_bytes;
	info->index_slots = pk->hdr->index_slots;
	info->heap_bytes = (uint64_t)pk->nblocks * PK_BLOCK;
}

int pmkv_locate(struct pmkv *pk, const void *key, uint32_t key_len,
		uint64_t *slot_off, uint64_t *rec_off)
{
	int64_t ins, idx;

	if (key_len > PMKV_MAX_KEY)
		return -1;
	idx = pk_find(pk, key, key_len, pk_key_hash(pk, key, key_len), &ins);
	if (idx < 0)
		return -1;
	*slot_off = pk->hdr->index_off + (uint64_t)idx * 8;
	*rec_off = pk->slots[idx] & PK_OFF_MASK;
	return 0;
}

/* ---- the backend ------------------------------------------------------ */

struct backend {
	struct pmkv *pk;
	uint64_t ops[KV_OP_MAX_];
	uint64_t hits, misses, nospace, bad, unsupported;
	uint64_t put_ns;                 /* time inside successful sets (set_ns) */
};

static struct backend *pmkv_be_open(const struct backend_conf *c, char *err, size_t errlen)
{
	uint64_t mb = c->set.pool_mb ? c->set.pool_mb : (uint64_t)settings_default_num("server.backend", "pool_mb");
	char why[200];
	char *file = NULL;
	struct backend *b;

	if (!c->path || !*c->path) {
		snprintf(err, errlen, "pmkv needs a pool path prefix (oqb-server --pmem-path PATH); "
			 "each worker uses the file PATH.w<worker>");
		return NULL;
	}
	if (settings_check_num("server.backend", "pool_mb", (double)mb, why, sizeof why) < 0) {
		snprintf(err, errlen, "pmkv: %s; set server.backend.pool_mb (--pool-mb) within it", why);
		return NULL;
	}
	if (asprintf(&file, "%s.w%d", c->path, c->worker) < 0) {
		snprintf(err, errlen, "pmkv: out of memory");
		return NULL;
	}
	b = calloc(1, sizeof *b);
	if (!b) {
		snprintf(err, errlen, "pmkv: out of memory");
		free(file);
		return NULL;
	}
	b->pk = pmkv_open(file, mb << 20, err, errlen);
	free(file);
	if (!b->pk) {
		free(b);
		return NULL;
	}
	return b;
}

static void pmkv_be_exec(struct backend *b, const struct backend_req *r, struct backend_out *o)
{
	unsigned st;

	o->val_len = 0;
	if (r->op < KV_OP_MAX_)
		b->ops[r->op]++;
	switch (r->op) {
	case KV_OP_GET:
		st = pmkv_get(b->pk, r->key, r->key_len, o->val, o->val_cap, &o->val_len);
		if (st == KV_OK)
			b->hits++;
		else if (st == KV_NOT_FOUND)
			b->misses++;
		break;
	case KV_OP_SET: {
		uint64_t t0 = clock_ns();
		st = pmkv_put(b->pk, r->key, r->key_len, r->val, r->val_len);
		if (st == KV_OK)
			b->put_ns += clock_ns() - t0;
		break;
	}
	case KV_OP_DEL:
		st = pmkv_del(b->pk, r->key, r->key_len);
		break;
	case KV_OP_INCR:
		st = pmkv_incr(b->pk, r->key, r->key_len, r->aux, o->val, o->val_cap, &o->val_len);
		break;
	case KV_OP_ECHO:
		if (r->val_len <= o->val_cap && o->val) {
			if (r->val_len)
				memcpy(o->val, r->val, r->val_len);
			o->val_len = r->val_len;
			st = KV_OK;
		} else {
			o->val_len = r->val_len;
			st = KV_ERR_NOSPACE;
		}
		break;
	case KV_OP_NOP:
		st = KV_OK;
		break;
	default:
		st = KV_ERR_OP;
		b->unsupported++;
		break;
	}
	if (st == KV_ERR_NOSPACE)
		b->nospace++;
	else if (st == KV_ERR_BAD)
		b->bad++;
	o->status = st;
}

static void pk_json_u64(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

/* Counters and pool state; "persist" says which persistence primitive the
 * numbers were measured with. */
static json_t *pmkv_be_stats(struct backend *b)
{
	struct pmkv_info in;
	json_t *o = json_object();

	if (!o)
		return NULL;
	pmkv_info(b->pk, &in);
	json_object_set_new(o, "persist", json_string(in.is_pmem ? "pmem_persist" : "pmem_msync"));
	json_object_set_new(o, "file", json_string(b->pk->file));
	json_object_set_new(o, "was_clean", json_boolean(in.was_clean));
	json_object_set_new(o, "created", json_boolean(in.created));
	pk_json_u64(o, "opens", in.opens);
	pk_json_u64(o, "open_ns", in.open_ns);
	pk_json_u64(o, "dropped_at_open", in.dropped);
	pk_json_u64(o, "pool_bytes", in.pool_bytes);
	pk_json_u64(o, "heap_bytes", in.heap_bytes);
	pk_json_u64(o, "index_slots", in.index_slots);
	pk_json_u64(o, "keys", in.live);
	pk_json_u64(o, "tombstones", in.tombs);
	pk_json_u64(o, "used_bytes", in.used_bytes);
	pk_json_u64(o, "free_bytes", in.free_bytes);
	pk_json_u64(o, "free_extents", in.free_extents);
	pk_json_u64(o, "gets", b->ops[KV_OP_GET]);
	pk_json_u64(o, "get_hits", b->hits);
	pk_json_u64(o, "get_misses", b->misses);
	pk_json_u64(o, "sets", b->ops[KV_OP_SET]);
	pk_json_u64(o, "set_ns", b->put_ns);
	pk_json_u64(o, "dels", b->ops[KV_OP_DEL]);
	pk_json_u64(o, "incrs", b->ops[KV_OP_INCR]);
	pk_json_u64(o, "nospace", b->nospace);
	pk_json_u64(o, "bad", b->bad);
	pk_json_u64(o, "unsupported", b->unsupported);
	pk_json_u64(o, "persists", in.persists);
	pk_json_u64(o, "persist_ns", in.persist_ns);
	pk_json_u64(o, "persist_errors", in.persist_errors);
	return o;
}

static void pmkv_be_close(struct backend *b)
{
	if (!b)
		return;
	pmkv_close(b->pk);
	free(b);
}

const struct backend_ops pmkv_backend_ops = {
	.name = "pmkv",
	.version = BACKEND_OPS_VERSION,
	.open = pmkv_be_open,
	.exec = pmkv_be_exec,
	.stats_json = pmkv_be_stats,
	.close = pmkv_be_close,
};
