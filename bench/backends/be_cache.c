/*
 * be_cache.c - the `cache` back end: a Memcached-like in-memory cache.
 *
 * Built the way memcached is, so that its costs (hashing, slab allocation,
 * LRU upkeep, eviction) are what the server pays per request:
 *
 *  - Items live in chunks of slab classes whose sizes grow by a factor of
 *    1.25 from 64 B to 1 MiB (rounded up to 8 B for alignment).  An item is
 *    a 40-byte header, the key and the value, and takes the smallest chunk
 *    it fits; so the largest value is 1 MiB - 40 - key_len
 *    (cache_max_value).
 *  - Memory comes in 1 MiB pages, given to classes on demand until
 *    memory_mb pages are out.  With prefault (the server's default) all
 *    of them, and the hash table, are allocated and written at open, so
 *    that no request pays for the kernel faulting in and zeroing fresh
 *    memory.  Without it pages are allocated lazily, as memcached does by
 *    default: an idle instance costs little, but a run that starts empty
 *    times the fill.  Measured on this project's VM with the cluster-12
 *    figure (1.3 KB values, most sets new keys): carving each fresh page
 *    faulted in its 256 small pages and held the worker 0.41-0.49 ms,
 *    once per 762 sets; the worker stood still 4.5 % of the window at
 *    108 Kops/s and 19 % at 540 Kops/s, and oq's P99 read 61-367 us.
 *    Prefaulted: 0.3 % and 9.9 us.
 *  - Each class keeps a doubly-linked LRU list (head = most recently used).
 *    When a class has no free chunk and no page is left, its LRU tail is
 *    evicted.  A class that has no items to evict at all (it never got a
 *    page, or lost it) takes a whole page from the class holding the most
 *    pages, evicting that page's items: a crude form of memcached's slab
 *    rebalancing that keeps a new value size from failing forever once
 *    memory is full.
 *  - One hash table with chaining and a fixed power-of-two bucket count
 *    sized from memory_mb (one bucket per 256 B of memory), so it never
 *    has to be resized during a run.
 *
 * Semantics follow memcached's: set replaces; a set that cannot be stored
 * (too large, or no room) also drops the old value, so a failed update
 * never leaves a stale one readable; incr treats the value as a decimal
 * unsigned 64-bit number, wraps around on overflow, answers NOT_FOUND for
 * a missing key and KV_ERR_OP for a non-numeric value.  No expiry (TTLs
 * are not part of the wire format).
 *
 * One instance per worker, used from one thread: no locks.
 */
#include <inttypes.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "clock.h"
#include "be_cache.h"
#include "wire.h"     /* wire_csum: a fast, well-mixed 64-bit key hash */

#define MAX_CLASSES   64
#define ITEM_LINKED   0x1u

struct item {
	struct item *hnext;      /* hash chain */
	struct item *prev, *next;  /* LRU; `next` also links the free list */
	uint64_t hash;
	uint32_t vlen;
	uint16_t klen;
	uint8_t cls;
	uint8_t flags;
	uint8_t data[];          /* key, then value */
};

#define ITEM_HDR  ((uint32_t)offsetof(struct item, data))

struct slabclass {
	uint32_t size;           /* chunk size */
	uint32_t perpage;        /* chunks per page */
	struct item *free;       /* free chunks */
	uint64_t nfree;
	struct item *head, *tail;  /* LRU */
	uint64_t items;
	uint64_t pages;
	uint64_t evictions;
};

struct page {
	uint8_t *mem;
	int cls;
};

struct backend {
	struct slabclass cls[MAX_CLASSES];
	unsigned ncls;
	struct page *pages;      /* pages_limit entries, pages_used filled */
	uint64_t pages_used, pages_limit;
	struct item **buckets;
	uint64_t mask;           /* bucket count - 1 */
	uint64_t items, bytes;
	uint64_t evictions, hits, misses, page_moves, nospace;
	uint64_t ops[KV_OP_MAX_];
	uint64_t bad_ops;
	uint8_t *arena;          /* prefault: the mapping all pages are carved from */
	size_t arena_len;
	uint64_t prefault_ns;    /* how long mapping and faulting it in took */
};

/* ---- sizes ---- */

uint32_t cache_max_value(uint32_t key_len)
{
	if (key_len > CACHE_PAGE_SIZE - ITEM_HDR)
		return 0;
	return CACHE_PAGE_SIZE - ITEM_HDR - key_len;
}

static void init_classes(struct backend *b)
{
	uint32_t size = CACHE_MIN_CHUNK;
	unsigned n = 0;

	while (size < CACHE_PAGE_SIZE && n < MAX_CLASSES - 1) {
		b->cls[n].size = size;
		b->cls[n].perpage = CACHE_PAGE_SIZE / size;
		n++;
		uint32_t next = (uint32_t)((double)size * 1.25);
		next = (next + 7) & ~7u;
		size = next > size ? next : size + 8;
	}
	b->cls[n].size = CACHE_PAGE_SIZE;
	b->cls[n].perpage = 1;
	b->ncls = n + 1;
}

/* Smallest class whose chunks hold `total` bytes, or -1. */
static int class_for(const struct backend *b, uint32_t total)
{
	unsigned lo = 0, hi = b->ncls;

	if (total > CACHE_PAGE_SIZE)
		return -1;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (b->cls[mid].size < total)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int)lo;
}

/* ---- hash table ---- */

static inline uint64_t key_hash(const uint8_t *key, uint32_t klen)
{
	return wire_csum(key, klen);
}

/* Address of the link that points at the item with this key (the link
 * holds NULL if there is none), so removal needs no second walk. */
static struct item **find_link(struct backend *b, const uint8_t *key, uint32_t klen,
			       uint64_t h)
{
	struct item **link = &b->buckets[h & b->mask];

	for (struct item *it; (it = *link) != NULL; link = &it->hnext)
		if (it->hash == h && it->klen == klen && memcmp(it->data, key, klen) == 0)
			break;
	return link;
}

/* ---- LRU ---- */

static void lru_push_head(struct slabclass *c, struct item *it)
{
	it->prev = NULL;
	it->next = c->head;
	if (c->head)
		c->head->prev = it;
	else
		c->tail = it;
	c->head = it;
}

static void lru_remove(struct slabclass *c, struct item *it)
{
	if (it->prev)
		it->prev->next = it->next;
	else
		c->head = it->next;
	if (it->next)
		it->next->prev = it->prev;
	else
		c->tail = it->prev;
	it->prev = it->next = NULL;
}

static void lru_bump(struct slabclass *c, struct item *it)
{
	if (c->head != it) {
		lru_remove(c, it);
		lru_push_head(c, it);
	}
}

/* ---- items and chunks ---- */

static inline uint32_t item_total(const struct item *it)
{
	return ITEM_HDR + it->klen + it->vlen;
}

static void chunk_free(struct backend *b, struct item *it)
{
	struct slabclass *c = &b->cls[it->cls];

	it->flags = 0;
	it->prev = NULL;
	it->next = c->free;
	c->free = it;
	c->nfree++;
}

/* Removes a live item from the hash table, its LRU and the counters; the
 * chunk is the caller's (free it or reuse it). */
static void item_unlink(struct backend *b, struct item *it)
{
	struct item **link = find_link(b, it->data, it->klen, it->hash);
	struct slabclass *c = &b->cls[it->cls];

	if (*link == it)
		*link = it->hnext;
	it->hnext = NULL;
	lru_remove(c, it);
	c->items--;
	b->items--;
	b->bytes -= item_total(it);
	it->flags = 0;
}

static void item_link(struct backend *b, struct item *it, struct item **link)
{
	struct slabclass *c = &b->cls[it->cls];

	it->hnext = *link;
	*link = it;
	it->flags = ITEM_LINKED;
	lru_push_head(c, it);
	c->items++;
	b->items++;
	b->bytes += item_total(it);
}

static void carve_page(struct backend *b, struct page *pg, int ci)
{
	struct slabclass *c = &b->cls[ci];

	pg->cls = ci;
	c->pages++;
	/* Pushed from the end so chunks are handed out in address order. */
	for (uint32_t i = c->perpage; i-- > 0;) {
		struct item *it = (struct item *)(pg->mem + (size_t)i * c->size);
		it->cls = (uint8_t)ci;
		chunk_free(b, it);
	}
}

static struct page *page_of(struct backend *b, const void *p)
{
	const uint8_t *q = p;

	for (uint64_t i = 0; i < b->pages_used; i++)
		if (q >= b->pages[i].mem && q < b->pages[i].mem + CACHE_PAGE_SIZE)
			return &b->pages[i];
	return NULL;
}

/*
 * Moves one page from the class with the most pages (other than ci) to
 * ci, evicting the items on it.  Prefers the page holding that class's LRU
 * tail, which holds its least recently used data.  Returns 0 or -1 if no
 * other class has a page.
 */
static int steal_page(struct backend *b, int ci)
{
	int vi = -1;

	for (unsigned i = 0; i < b->ncls; i++)
		if ((int)i != ci && b->cls[i].pages > 0 &&
		    (vi < 0 || b->cls[i].pages > b->cls[vi].pages))
			vi = (int)i;
	if (vi < 0)
		return -1;
	struct slabclass *v = &b->cls[vi];
	struct page *pg = NULL;
	if (v->tail)
		pg = page_of(b, v->tail);
	for (uint64_t i = 0; !pg && i < b->pages_used; i++)
		if (b->pages[i].cls == vi)
			pg = &b->pages[i];
	if (!pg)
		return -1;

	for (uint32_t i = 0; i < v->perpage; i++) {
		struct item *it = (struct item *)(pg->mem + (size_t)i * v->size);
		if (it->flags & ITEM_LINKED) {
			item_unlink(b, it);
			v->evictions++;
			b->evictions++;
		}
	}
	/* Drop this page's chunks from the victim's free list. */
	struct item **link = &v->free;
	while (*link) {
		struct item *it = *link;
		if ((uint8_t *)it >= pg->mem && (uint8_t *)it < pg->mem + CACHE_PAGE_SIZE) {
			*link = it->next;
			v->nfree--;
		} else {
			link = &it->next;
		}
	}
	v->pages--;
	b->page_moves++;
	carve_page(b, pg, ci);
	return 0;
}

/* A chunk of class ci for a new item, or NULL if no room can be made. */
static struct item *chunk_alloc(struct backend *b, int ci)
{
	struct slabclass *c = &b->cls[ci];

	if (!c->free && b->pages_used < b->pages_limit) {
		struct page *pg = &b->pages[b->pages_used];
		if (!pg->mem)        /* prefaulted pages are there already */
			pg->mem = malloc(CACHE_PAGE_SIZE);
		if (pg->mem) {
			b->pages_used++;
			carve_page(b, pg, ci);
		}
	}
	if (!c->free && c->tail) {
		struct item *victim = c->tail;
		item_unlink(b, victim);
		c->evictions++;
		b->evictions++;
		chunk_free(b, victim);
	}
	if (!c->free && steal_page(b, ci) != 0)
		return NULL;
	struct item *it = c->free;
	c->free = it->next;
	c->nfree--;
	it->next = NULL;
	return it;
}

/* ---- operations ---- */


/* Stores key -> val.  Returns a wire status. */
static unsigned store(struct backend *b, const uint8_t *key, uint32_t klen,
		      const uint8_t *val, uint32_t vlen)
{
	uint64_t h = key_hash(key, klen);
	struct item **link = find_link(b, key, klen, h);
	struct item *old = *link;
	int ci = klen > UINT16_MAX ? -1 : class_for(b, ITEM_HDR + klen + vlen);

	if (old && (int)old->cls == ci) {
		/* Same chunk size: overwrite in place, no allocation. */
		b->bytes -= old->vlen;
		b->bytes += vlen;
		memmove(old->data + klen, val, vlen);
		old->vlen = vlen;
		lru_bump(&b->cls[ci], old);
		return KV_OK;
	}
	if (old) {
		item_unlink(b, old);
		chunk_free(b, old);
	}
	if (ci < 0) {
		b->nospace++;
		return KV_ERR_NOSPACE;
	}
	struct item *it = chunk_alloc(b, ci);
	if (!it) {
		b->nospace++;
		return KV_ERR_NOSPACE;
	}
	it->hash = h;
	it->klen = (uint16_t)klen;
	it->vlen = vlen;
	it->cls = (uint8_t)ci;
	memcpy(it->data, key, klen);
	memcpy(it->data + klen, val, vlen);
	/* Allocation may have evicted items from this very chain. */
	item_link(b, it, find_link(b, key, klen, h));
	return KV_OK;
}

static void cache_exec(struct backend *b, const struct backend_req *r, struct backend_out *o)
{
	o->status = KV_OK;
	o->val_len = 0;
	if (r->op >= KV_OP_MAX_) {
		b->bad_ops++;
		o->status = KV_ERR_OP;
		return;
	}
	b->ops[r->op]++;

	switch (r->op) {
	case KV_OP_NOP:
		return;
	case KV_OP_ECHO:
		backend_copy_out(o, r->val, r->val_len);
		return;
	case KV_OP_SET:
		o->status = store(b, r->key, r->key_len, r->val, r->val_len);
		return;
	default:
		break;
	}

	uint64_t h = key_hash(r->key, r->key_len);
	struct item **link = find_link(b, r->key, r->key_len, h);
	struct item *it = *link;
	if (!it) {
		if (r->op == KV_OP_GET)
			b->misses++;
		o->status = KV_NOT_FOUND;
		return;
	}
	switch (r->op) {
	case KV_OP_GET:
		b->hits++;
		lru_bump(&b->cls[it->cls], it);
		backend_copy_out(o, it->data + it->klen, it->vlen);
		break;
	case KV_OP_DEL:
		item_unlink(b, it);
		chunk_free(b, it);
		break;
	case KV_OP_INCR: {
		uint64_t v;
		if (backend_parse_u64(it->data + it->klen, it->vlen, &v) != 0) {
			o->status = KV_ERR_OP;
			break;
		}
		char num[24];
		int n = snprintf(num, sizeof num, "%" PRIu64, v + r->aux);
		o->status = store(b, r->key, r->key_len, (const uint8_t *)num, (uint32_t)n);
		if (o->status == KV_OK)
			backend_copy_out(o, (const uint8_t *)num, (uint32_t)n);
		break;
	}
	default:
		b->bad_ops++;
		o->status = KV_ERR_OP;
		break;
	}
}

/* ---- life cycle ---- */

static void cache_close(struct backend *b);

/* Faults in every page of [p, p+len) by writing a zero into each (volatile:
 * stores of zeros to memory that reads as zero could otherwise be dropped). */
static void touch(void *p, size_t len)
{
	volatile uint8_t *v = p;
	for (size_t o = 0; o < len; o += 4096)
		v[o] = 0;
	if (len)
		v[len - 1] = 0;
}

static struct backend *cache_open(const struct backend_conf *c, char *err, size_t errlen)
{
	uint64_t mb = c->set.memory_mb ? c->set.memory_mb
				       : (uint64_t)settings_default_num("server.backend", "memory_mb");
	char why[200];

	if (settings_check_num("server.backend", "memory_mb", (double)mb, why, sizeof why) < 0) {
		snprintf(err, errlen, "cache backend: %s; set server.backend.memory_mb within it", why);
		return NULL;
	}
	struct backend *b = calloc(1, sizeof *b);
	if (!b)
		goto oom;
	init_classes(b);
	b->pages_limit = mb;
	b->pages = calloc(mb, sizeof *b->pages);
	uint64_t nb = 1024;
	while (nb < (mb << 20) / 256 && nb < (1ull << 26))
		nb <<= 1;
	b->buckets = calloc(nb, sizeof *b->buckets);
	if (!b->pages || !b->buckets)
		goto oom;
	b->mask = nb - 1;
	if (c->set.prefault) {
		/* One mapping for all pages, asked for in huge pages where the
		 * kernel gives them (transparent huge pages in "madvise" mode,
		 * as on Debian), as memcached's -L does: fewer faults now and
		 * fewer TLB misses later.  On this project's VM the kernel
		 * gives them: 128 MiB took 15-21 ms in huge pages and 51-54 ms
		 * in small ones, though 3 of 8 tries in huge pages took
		 * 97-398 ms (the host backing fresh memory, as far as we can
		 * tell; no compaction was counted).  Either way it is paid
		 * before the server says it is ready.  touch() writes one byte
		 * per small page, which is all faulting in needs. */
		uint64_t t0 = clock_ns();
		const size_t huge = 2u << 20, len = (size_t)mb << 20;
		b->arena_len = len + huge;
		void *m = mmap(NULL, b->arena_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			b->arena_len = 0;
			snprintf(err, errlen, "cache backend: cannot map %" PRIu64 " MiB to pre-fault; lower "
				 "server.backend.memory_mb, or set server.backend.prefault false", mb);
			cache_close(b);
			return NULL;
		}
		b->arena = m;
		uint8_t *base = (uint8_t *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
		(void)madvise(base, len, MADV_HUGEPAGE);   /* a hint; without it, small pages */
		touch(base, len);
		touch(b->buckets, nb * sizeof *b->buckets);
		for (uint64_t i = 0; i < mb; i++)
			b->pages[i].mem = base + (i << 20);
		b->prefault_ns = clock_ns() - t0;
	}
	return b;
oom:
	snprintf(err, errlen, "cache backend: out of memory setting up %" PRIu64
		 " MiB of pages; lower server.backend.memory_mb", mb);
	if (b) {
		free(b->pages);
		free(b->buckets);
		free(b);
	}
	return NULL;
}

static void cache_close(struct backend *b)
{
	if (!b)
		return;
	if (b->arena)
		munmap(b->arena, b->arena_len);
	else
		for (uint64_t i = 0; i < b->pages_used; i++)
			free(b->pages[i].mem);
	free(b->pages);
	free(b->buckets);
	free(b);
}

/* ---- statistics ---- */

void cache_get_stats(struct backend *b, struct cache_stats *st)
{
	st->items = b->items;
	st->bytes = b->bytes;
	st->evictions = b->evictions;
	st->hits = b->hits;
	st->misses = b->misses;
	st->pages_used = b->pages_used;
	st->pages_limit = b->pages_limit;
	st->page_moves = b->page_moves;
	st->nospace = b->nospace;
	st->classes = b->ncls;
}

static json_t *cache_stats_json(struct backend *b)
{
	json_t *ops = json_object();
	for (unsigned i = 0; i < KV_OP_MAX_; i++)
		json_object_set_new(ops, kv_op_name(i), json_integer((json_int_t)b->ops[i]));
	json_object_set_new(ops, "unsupported", json_integer((json_int_t)b->bad_ops));

	json_t *classes = json_array();
	for (unsigned i = 0; i < b->ncls; i++) {
		const struct slabclass *c = &b->cls[i];
		if (c->pages == 0 && c->items == 0 && c->evictions == 0)
			continue;
		json_array_append_new(classes, json_pack("{s:i, s:I, s:I, s:I, s:I, s:I}",
			"class", (int)i,
			"chunk_bytes", (json_int_t)c->size,
			"pages", (json_int_t)c->pages,
			"items", (json_int_t)c->items,
			"free_chunks", (json_int_t)c->nfree,
			"evictions", (json_int_t)c->evictions));
	}
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}",
		"backend", "cache",
		"memory_limit_bytes", (json_int_t)(b->pages_limit * CACHE_PAGE_SIZE),
		"page_bytes", (json_int_t)CACHE_PAGE_SIZE,
		"pages_used", (json_int_t)b->pages_used,
		"pages_limit", (json_int_t)b->pages_limit,
		"items", (json_int_t)b->items,
		"bytes", (json_int_t)b->bytes,
		"evictions", (json_int_t)b->evictions,
		"hits", (json_int_t)b->hits,
		"misses", (json_int_t)b->misses,
		"page_moves", (json_int_t)b->page_moves,
		"nospace", (json_int_t)b->nospace,
		"hash_buckets", (json_int_t)(b->mask + 1),
		"prefaulted_pages", (json_int_t)(b->arena ? b->pages_limit : 0),
		"prefault_ms", (json_int_t)(b->prefault_ns / 1000000),
		"ops", ops,
		"classes", classes);
}

/* ---- consistency check (tests) ---- */

#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

int cache_check(struct backend *b, char *err, size_t errlen)
{
	uint64_t items = 0, bytes = 0, pages = 0;

	if (b->pages_used > b->pages_limit)
		FAIL("pages_used %" PRIu64 " > limit %" PRIu64, b->pages_used, b->pages_limit);
	for (unsigned i = 0; i < b->ncls; i++) {
		const struct slabclass *c = &b->cls[i];
		uint64_t n = 0, nf = 0;
		const struct item *prev = NULL;
		for (const struct item *it = c->head; it; prev = it, it = it->next) {
			if (it->prev != prev)
				FAIL("class %u: broken LRU back link", i);
			if (it->cls != i || !(it->flags & ITEM_LINKED))
				FAIL("class %u: LRU holds an item of class %u flags %u", i, it->cls, it->flags);
			if (item_total(it) > c->size || (i > 0 && item_total(it) <= b->cls[i - 1].size))
				FAIL("class %u: item of %u bytes in the wrong class", i, item_total(it));
			if (*find_link(b, it->data, it->klen, it->hash) != it)
				FAIL("class %u: LRU item missing from the hash table", i);
			if (++n > c->items)
				break;
		}
		if (prev != c->tail)
			FAIL("class %u: tail pointer is off", i);
		if (n != c->items)
			FAIL("class %u: LRU has %" PRIu64 " items, counter %" PRIu64, i, n, c->items);
		for (const struct item *it = c->free; it; it = it->next) {
			if (it->flags != 0 || it->cls != i)
				FAIL("class %u: bad chunk on free list", i);
			if (++nf > c->nfree)
				break;
		}
		if (nf != c->nfree)
			FAIL("class %u: free list has %" PRIu64 ", counter %" PRIu64, i, nf, c->nfree);
		if (c->items + c->nfree != c->pages * c->perpage)
			FAIL("class %u: %" PRIu64 " items + %" PRIu64 " free != %" PRIu64 " pages x %u",
			     i, c->items, c->nfree, c->pages, c->perpage);
		items += c->items;
		pages += c->pages;
	}
	if (pages != b->pages_used)
		FAIL("classes own %" PRIu64 " pages, %" PRIu64 " in use", pages, b->pages_used);
	uint64_t chained = 0;
	for (uint64_t i = 0; i <= b->mask; i++) {
		for (const struct item *it = b->buckets[i]; it; it = it->hnext) {
			if ((it->hash & b->mask) != i)
				FAIL("item in the wrong bucket");
			if (it->hash != key_hash(it->data, it->klen))
				FAIL("stored hash does not match the key");
			bytes += item_total(it);
			if (++chained > items)
				FAIL("hash table holds more items than the LRU lists");
		}
	}
	if (chained != items || items != b->items)
		FAIL("hash has %" PRIu64 " items, LRUs %" PRIu64 ", counter %" PRIu64,
		     chained, items, b->items);
	if (bytes != b->bytes)
		FAIL("items add up to %" PRIu64 " bytes, counter %" PRIu64, bytes, b->bytes);
	return 0;
}

const struct backend_ops cache_backend_ops = {
	.name = "cache",
	.version = BACKEND_OPS_VERSION,
	.open = cache_open,
	.exec = cache_exec,
	.stats_json = cache_stats_json,
	.close = cache_close,
};
