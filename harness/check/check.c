/*
 * check.c - the per-key linearizability checker (check.h): the model, the
 * unique-value fast path and the memoized Wing & Gong search.
 *
 * Soundness rules this file keeps:
 *  - a key is reported OK only when a linearization was found (search) or
 *    the Gibbons-Korach conditions hold (fast path), never on a budget
 *    overrun, which is UNKNOWN;
 *  - ops that never committed have return time infinity (their t_ret is
 *    all ones) and unchecked output, so they may take effect at any later
 *    time, and a never-committed write that nobody read may be dropped;
 *  - times are shifted by one internally so that the virtual initial write
 *    (the key is absent) sits strictly before every real op.
 * tests/unit/test_check.c compares both algorithms with a brute-force
 * enumeration on thousands of random histories, both linearizable and not.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bits.h"
#include "check.h"
#include "kvop.h"

#define T_INF UINT64_MAX

const char *check_verdict_name(enum check_verdict v)
{
	return v == CHECK_OK ? "ok" : v == CHECK_VIOLATION ? "violation" : "unknown";
}

static uint64_t tag_id(uint32_t client, uint64_t seq)
{
	return mix64(mix64(seq) ^ ((uint64_t)client * 0x9e3779b97f4a7c15ull));
}

uint64_t check_written_id(const struct history_op *o)
{
	return o->wkind == HV_TAG ? tag_id(o->client, o->seq) : o->arg;
}

uint64_t check_returned_id(const struct history_op *o)
{
	return o->rkind == HV_TAG ? tag_id(o->rclient, o->rseq) : o->rval;
}

int check_digest_differs(int hasd, uint64_t written, const struct history_op *get)
{
	return hasd && get->rkind == HV_TAG && (get->dflags & HISTORY_D_READ) && get->rval != written;
}

int check_is_state_op(const struct history_op *o)
{
	return o->op == KV_OP_GET || o->op == KV_OP_SET || o->op == KV_OP_DEL || o->op == KV_OP_INCR;
}

static int unchecked(const struct history_op *o)
{
	return o->status == HISTORY_ST_UNKNOWN || o->status == HISTORY_ST_UNSEEN;
}

int check_step(const struct history_op *o, struct check_state *s)
{
	int nc = unchecked(o);
	switch (o->op) {
	case KV_OP_SET:
		if (nc || o->status == KV_OK) {
			s->present = 1;
			s->kind = o->wkind;
			s->v = check_written_id(o);
			s->hasd = o->wkind == HV_TAG && (o->dflags & HISTORY_D_WRITTEN);
			s->d = s->hasd ? o->arg : 0;
		} else if (o->status == KV_ERR_NOSPACE) {
			s->present = 0;
		}
		return 1;
	case KV_OP_GET:
		if (nc || (o->status != KV_OK && o->status != KV_NOT_FOUND))
			return 1;
		if (!s->present)
			return o->status == KV_NOT_FOUND;
		return o->status == KV_OK && o->rkind == s->kind && check_returned_id(o) == s->v &&
		       !check_digest_differs(s->hasd, s->d, o);
	case KV_OP_DEL:
		if (!nc && o->status == KV_OK && !s->present)
			return 0;
		if (!nc && o->status == KV_NOT_FOUND && s->present)
			return 0;
		if (nc || o->status == KV_OK || o->status == KV_NOT_FOUND)
			s->present = 0;
		return 1;
	case KV_OP_INCR:
		if (!s->present)
			return nc || o->status == KV_NOT_FOUND;
		if (s->kind != HV_NUM)
			return nc || o->status == KV_ERR_OP || o->status == KV_ERR_BAD;
		if (!nc && (o->status != KV_OK || o->rkind != HV_NUM || o->rval != s->v + o->arg))
			return 0;
		s->v += o->arg;
		return 1;
	default:
		return 1;
	}
}

/* ---- per-key working copy ---- */

struct kop {
	uint64_t inv, ret;           /* shifted by +1; ret T_INF: unknown */
	const struct history_op *h;
	long src;                    /* index in the caller's array */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- unique-value fast path ---- */

static int fast_eligible(const struct kop *k, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct history_op *o = k[i].h;
		if (o->op == KV_OP_SET) {
			if (o->wkind != HV_TAG || (!unchecked(o) && o->status != KV_OK))
				return 0;
		} else if (o->op == KV_OP_GET) {
			if (unchecked(o))
				continue;
			if (o->status == KV_OK ? o->rkind != HV_TAG : o->status != KV_NOT_FOUND)
				return 0;
		} else {
			return 0;
		}
	}
	return 1;
}

struct cluster {
	uint64_t lo, hi;             /* min return, max invoke of its members */
	long w;                      /* the write (kop index), -1 = initial */
	long lo_op, hi_op;           /* members giving lo and hi */
	int used;                    /* has a read, or the write committed */
};

struct wmap { uint64_t id; long idx; };

static int cl_cmp(const void *a, const void *b)
{
	const struct cluster *x = *(const struct cluster *const *)a, *y = *(const struct cluster *const *)b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static long wmap_find(const struct wmap *m, size_t cap, uint64_t id)
{
	for (size_t i = mix64(id) & (cap - 1);; i = (i + 1) & (cap - 1)) {
		if (m[i].idx < 0)
			return -1;
		if (m[i].id == id)
			return m[i].idx;
	}
}

static void violation(struct check_key_result *r, const struct kop *k, long bad, long other,
		      const char *why)
{
	r->verdict = CHECK_VIOLATION;
	r->bad = bad >= 0 ? k[bad].src : -1;
	r->other = other >= 0 ? k[other].src : -1;
	snprintf(r->why, sizeof r->why, "%s", why);
}

static void member(struct cluster *c, const struct kop *k, long i)
{
	if (k[i].ret < c->lo) {
		c->lo = k[i].ret;
		c->lo_op = i;
	}
	if (k[i].inv > c->hi || c->hi_op < 0) {
		c->hi = k[i].inv;
		c->hi_op = i;
	}
}

/* Returns 0 (verdict in r), 1 if not eligible after all (a repeated tag),
 * -1 out of memory. */
static int fast_check(const struct kop *k, size_t n, struct check_key_result *r)
{
	size_t nw = 0, cap = 16;
	for (size_t i = 0; i < n; i++)
		nw += k[i].h->op == KV_OP_SET;
	while (cap < 2 * nw + 2)
		cap <<= 1;
	struct wmap *m = malloc(cap * sizeof *m);
	struct cluster *cl = calloc(nw + 1, sizeof *cl);
	struct cluster **fw = malloc((nw + 1) * sizeof *fw), **bw = malloc((nw + 1) * sizeof *bw);
	long *ci = malloc(n * sizeof *ci);
	int rc = -1;
	if (!m || !cl || !fw || !bw || !ci)
		goto out;
	r->peak_bytes = cap * sizeof *m + (nw + 1) * (sizeof *cl + 2 * sizeof *fw) + n * sizeof *ci;
	for (size_t i = 0; i < cap; i++)
		m[i].idx = -1;
	/* cluster 0: the virtual initial write, before everything */
	cl[0].lo = 0;
	cl[0].hi = 0;
	cl[0].w = -1;
	cl[0].lo_op = cl[0].hi_op = -1;
	size_t c = 1;
	for (size_t i = 0; i < n; i++) {
		if (k[i].h->op != KV_OP_SET)
			continue;
		uint64_t id = check_written_id(k[i].h);
		if (wmap_find(m, cap, id) >= 0) {
			rc = 1;   /* two writes of one tag: not unique */
			goto out;
		}
		size_t j = mix64(id) & (cap - 1);
		while (m[j].idx >= 0)
			j = (j + 1) & (cap - 1);
		m[j].id = id;
		m[j].idx = (long)c;
		ci[i] = (long)c;
		cl[c].w = (long)i;
		cl[c].lo = T_INF;
		cl[c].hi_op = -1;
		cl[c].lo_op = -1;
		member(&cl[c], k, (long)i);
		cl[c].used = k[i].ret != T_INF;
		c++;
	}
	for (size_t i = 0; i < n; i++) {
		const struct history_op *o = k[i].h;
		if (o->op != KV_OP_GET || unchecked(o))
			continue;
		long x = 0;
		if (o->status == KV_OK) {
			x = wmap_find(m, cap, check_returned_id(o));
			if (x < 0) {
				violation(r, k, (long)i, -1, "the get returned a value that no set of this key wrote");
				rc = 0;
				goto out;
			}
			long w = cl[x].w;
			const struct history_op *wo = k[w].h;
			if (check_digest_differs(wo->wkind == HV_TAG && (wo->dflags & HISTORY_D_WRITTEN),
						 wo->arg, o)) {
				violation(r, k, (long)i, w, "the get returned this set's tag on other bytes "
					  "(their digests differ): a torn or corrupt value that no set wrote");
				rc = 0;
				goto out;
			}
			if (k[i].ret < k[w].inv) {
				violation(r, k, (long)i, w, "the get returned before the set it read was invoked");
				rc = 0;
				goto out;
			}
		}
		member(&cl[x], k, (long)i);
		cl[x].used = 1;
	}
	size_t nf = 0, nb = 0;
	for (size_t i = 0; i < c; i++) {
		if (i > 0 && !cl[i].used)
			continue;   /* an unread write that never committed: it may never have happened */
		if (i == 0 && cl[0].hi_op < 0)
			continue;   /* nobody read the initial state */
		if (cl[i].lo < cl[i].hi)
			fw[nf++] = &cl[i];
		else
			bw[nb++] = &cl[i];
	}
	qsort(fw, nf, sizeof *fw, cl_cmp);
	/* no two forward zones overlap */
	const struct cluster *top = NULL;
	for (size_t i = 0; i < nf; i++) {
		if (top && fw[i]->lo < top->hi) {
			violation(r, k, fw[i]->lo_op, top->hi_op >= 0 ? top->hi_op : top->lo_op,
				  "two writes' read intervals overlap: their values cannot be ordered");
			rc = 0;
			goto out;
		}
		if (!top || fw[i]->hi > top->hi)
			top = fw[i];
	}
	/* no backward zone inside a forward zone */
	for (size_t i = 0; i < nb; i++) {
		size_t lo = 0, hi = nf;     /* first forward zone with lo >= bw.hi */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (fw[mid]->lo < bw[i]->hi)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo > 0 && bw[i]->lo < fw[lo - 1]->hi) {
			const struct cluster *f = fw[lo - 1];
			long b = bw[i]->w >= 0 ? bw[i]->w : bw[i]->hi_op;
			violation(r, k, b, f->hi_op >= 0 ? f->hi_op : f->lo_op,
				  "an operation falls inside the interval in which another write's value "
				  "was being read");
			rc = 0;
			goto out;
		}
	}
	r->verdict = CHECK_OK;
	rc = 0;
out:
	free(m);
	free(cl);
	free(fw);
	free(bw);
	free(ci);
	return rc;
}

/* ---- general search: Wing & Gong with Lowe's memoization ---- */

struct ev {
	uint64_t t;
	int is_ret;
	long op;                     /* kop index */
	struct ev *prev, *next, *match;
};

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	/* closed intervals: a call at t overlaps a return at t */
	if (x->is_ret != y->is_ret)
		return x->is_ret - y->is_ret;
	return x->op < y->op ? -1 : x->op > y->op;
}

struct cache {
	uint64_t *slots;             /* per slot: hash, present|kind|hasd, v, d, then words */
	size_t cap, used, words, stride;
	size_t bytes;
};

static uint64_t state_word(const struct check_state *s)
{
	return (uint64_t)s->hasd << 16 | (uint64_t)s->present << 8 | s->kind;
}

static uint64_t state_hash(const uint64_t *bits, size_t words, const struct check_state *s)
{
	uint64_t h = 0x12345 ^ state_word(s);
	for (size_t i = 0; i < words; i++)
		h = mix64(h ^ bits[i]);
	return mix64(h ^ s->v ^ mix64(s->d)) | 1;   /* 0 marks an empty slot */
}

static int cache_grow(struct cache *c, size_t max_bytes)
{
	size_t ncap = c->cap ? c->cap * 2 : 1024;
	size_t bytes = ncap * c->stride * 8;
	if (max_bytes && bytes > max_bytes)
		return 1;
	uint64_t *ns = calloc(ncap, c->stride * 8);
	if (!ns)
		return -1;
	for (size_t i = 0; i < c->cap; i++) {
		uint64_t *e = c->slots + i * c->stride;
		if (!e[0])
			continue;
		size_t j = e[0] & (ncap - 1);
		while (ns[j * c->stride])
			j = (j + 1) & (ncap - 1);
		memcpy(ns + j * c->stride, e, c->stride * 8);
	}
	free(c->slots);
	c->slots = ns;
	c->cap = ncap;
	c->bytes = bytes;
	return 0;
}

/* 1 inserted, 0 already there, -1 out of memory, 2 over budget */
static int cache_insert(struct cache *c, const uint64_t *bits, const struct check_state *s,
			size_t max_bytes)
{
	if ((c->used + 1) * 2 > c->cap) {
		int g = cache_grow(c, max_bytes);
		if (g)
			return g < 0 ? -1 : 2;
	}
	uint64_t h = state_hash(bits, c->words, s);
	uint64_t sv = state_word(s);
	for (size_t j = h & (c->cap - 1);; j = (j + 1) & (c->cap - 1)) {
		uint64_t *e = c->slots + j * c->stride;
		if (!e[0]) {
			e[0] = h;
			e[1] = sv;
			e[2] = s->v;
			e[3] = s->d;
			memcpy(e + 4, bits, c->words * 8);
			c->used++;
			return 1;
		}
		if (e[0] == h && e[1] == sv && e[2] == s->v && e[3] == s->d &&
		    !memcmp(e + 4, bits, c->words * 8))
			return 0;
	}
}

struct frame { struct ev *call; struct check_state s; };

static void lift(struct ev *e)
{
	e->prev->next = e->next;
	if (e->next)
		e->next->prev = e->prev;
	struct ev *m = e->match;
	m->prev->next = m->next;
	if (m->next)
		m->next->prev = m->prev;
}

static void unlift(struct ev *e)
{
	struct ev *m = e->match;
	m->prev->next = m;
	if (m->next)
		m->next->prev = m;
	e->prev->next = e;
	if (e->next)
		e->next->prev = e;
}

static int search(const struct kop *k, size_t n, const struct check_budget *b,
		  struct check_key_result *r, uint64_t t_start)
{
	struct ev *evs = malloc((2 * n + 1) * sizeof *evs);
	struct frame *stack = malloc((n + 1) * sizeof *stack);
	size_t words = (n + 63) / 64;
	uint64_t *bits = calloc(words ? words : 1, 8);
	struct cache c = { .words = words, .stride = 4 + words };
	int rc = -1;
	if (!evs || !stack || !bits)
		goto out;
	struct ev *head = &evs[2 * n];
	for (size_t i = 0; i < n; i++) {
		evs[2 * i] = (struct ev){ .t = k[i].inv, .is_ret = 0, .op = (long)i };
		evs[2 * i + 1] = (struct ev){ .t = k[i].ret, .is_ret = 1, .op = (long)i };
	}
	qsort(evs, 2 * n, sizeof *evs, ev_cmp);
	{
		/* match calls with returns after sorting */
		long *pos = malloc(n * sizeof *pos);
		if (!pos)
			goto out;
		for (size_t i = 0; i < 2 * n; i++)
			if (!evs[i].is_ret)
				pos[evs[i].op] = (long)i;
		for (size_t i = 0; i < 2 * n; i++)
			if (evs[i].is_ret) {
				evs[pos[evs[i].op]].match = &evs[i];
				evs[i].match = &evs[pos[evs[i].op]];
			}
		free(pos);
	}
	head->prev = NULL;
	head->next = n ? &evs[0] : NULL;
	for (size_t i = 0; i < 2 * n; i++) {
		evs[i].prev = i ? &evs[i - 1] : head;
		evs[i].next = i + 1 < 2 * n ? &evs[i + 1] : NULL;
	}
	struct check_state s = { 0 };
	size_t depth = 0, best = 0;
	long best_bad = -1;
	uint64_t iter = 0;
	struct ev *e = head->next;
	while (head->next) {
		if ((++iter & 4095) == 0 && b->time_s > 0 &&
		    (double)(now_ns() - t_start) / 1e9 > b->time_s) {
			r->verdict = CHECK_UNKNOWN;
			snprintf(r->why, sizeof r->why, "time budget of %g s used up after %zu of %zu ops "
				 "placed (raise the budget, or use fewer clients per key)", b->time_s, best, n);
			rc = 0;
			goto out;
		}
		if (!e->is_ret) {
			struct check_state s2 = s;
			if (check_step(k[e->op].h, &s2)) {
				bits[e->op >> 6] |= 1ull << (e->op & 63);
				int ins = cache_insert(&c, bits, &s2, b->mem_bytes);
				if (ins < 0)
					goto out;
				if (ins == 2) {
					r->verdict = CHECK_UNKNOWN;
					snprintf(r->why, sizeof r->why, "memory budget of %zu MB used up after "
						 "%zu of %zu ops placed (raise it, or use fewer clients per key)",
						 b->mem_bytes >> 20, best, n);
					rc = 0;
					goto out;
				}
				if (ins == 1) {
					stack[depth].call = e;
					stack[depth].s = s;
					depth++;
					s = s2;
					lift(e);
					e = head->next;
					continue;
				}
				bits[e->op >> 6] &= ~(1ull << (e->op & 63));
			}
			e = e->next;
		} else {
			if (depth >= best && (best_bad < 0 || depth > best)) {
				best = depth;
				best_bad = e->op;
			}
			if (!depth) {
				/* the op whose return this is could not be placed, in
				 * the deepest prefix explored */
				violation(r, k, best_bad, depth ? -1 : -1,
					  "no order of the operations explains what was returned: this "
					  "operation cannot be placed after the longest linearizable prefix");
				rc = 0;
				goto out;
			}
			depth--;
			struct ev *ce = stack[depth].call;
			s = stack[depth].s;
			bits[ce->op >> 6] &= ~(1ull << (ce->op & 63));
			unlift(ce);
			e = ce->next;
		}
	}
	r->verdict = CHECK_OK;
	rc = 0;
out:
	r->peak_bytes = c.bytes + (2 * n + 1) * sizeof *evs + (n + 1) * sizeof *stack;
	free(evs);
	free(stack);
	free(bits);
	free(c.slots);
	return rc;
}

int check_key(const struct history_op *ops, size_t n, const struct check_budget *b,
	      struct check_key_result *r)
{
	uint64_t t0 = now_ns();
	memset(r, 0, sizeof *r);
	r->bad = r->other = -1;
	struct kop *k = malloc((n ? n : 1) * sizeof *k);
	if (!k) {
		r->verdict = CHECK_UNKNOWN;
		snprintf(r->why, sizeof r->why, "out of memory for %zu ops", n);
		return -1;
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (!check_is_state_op(&ops[i]))
			continue;
		/* a get that never committed says nothing: drop it */
		if (ops[i].op == KV_OP_GET && ops[i].t_ret == HISTORY_T_UNKNOWN)
			continue;
		k[m].inv = ops[i].t_inv + 1;
		k[m].ret = ops[i].t_ret == HISTORY_T_UNKNOWN ? T_INF :
			   ops[i].t_ret >= T_INF - 1 ? T_INF - 1 : ops[i].t_ret + 1;
		k[m].h = &ops[i];
		k[m].src = (long)i;
		m++;
	}
	r->nops = m;
	int rc = 1;
	if (!b->no_fast && fast_eligible(k, m)) {
		rc = fast_check(k, m, r);
		r->fast = rc == 0;
	}
	if (rc == 1)
		rc = search(k, m, b, r, t0);
	if (rc < 0) {
		r->verdict = CHECK_UNKNOWN;
		snprintf(r->why, sizeof r->why, "out of memory while checking %zu ops", m);
	}
	r->secs = (double)(now_ns() - t0) / 1e9;
	free(k);
	return rc < 0 ? -1 : 0;
}
