/*
 * shm_cli.c - the shm client: it joins a server through server.map (its
 * system, geometry and generation checked), maps the rings and makes its
 * mailbox; it posts by Rule 1 (a ticket from fetch_add on the ring's tail,
 * the slot claimed FREE -> WRITING, the request written, then published
 * WRITING -> PUBLISHED: for oq the commit), waits and counts while the
 * ring is full, takes a new ticket when its claim was voided, and reads
 * responses from its mailbox.  The protocol: shm_internal.h; the folder's
 * map: README.md.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <libpmem.h>

#include "bits.h"
#include "clock.h"
#include "fault.h"
#include "tp_shm.h"

#include "shm_internal.h"

/* Asks for the cache line at p in a writable state, without waiting. */
static inline void prefetch_for_write(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

#define CLI_EVQ 4096   /* DELIVERED events not yet polled (power of two) */

struct tp_client {
	struct tp_cli_conf c;
	struct shm_hdr *hdr;
	unsigned workers, slots, slot_size;
	size_t ring_size;
	struct ring_hdr *ring[SHM_MAX_WORKERS];
	_Atomic uint64_t *state[SHM_MAX_WORKERS];
	uint8_t *data[SHM_MAX_WORKERS];
	struct mbox_hdr *mbox;
	uint32_t id;                       /* generation << ID_BITS | number */
	uint64_t gen;
	int durable, is_pmem;
	char dir[512];
	/* DELIVERED events produced by post, handed out by poll */
	struct tp_event evq[CLI_EVQ];
	uint64_t evq_head, evq_tail;
	uint64_t mtail[SHM_MAX_WORKERS];   /* consumed, not yet released */
	uint8_t busy[SHM_MAX_WORKERS];      /* last post found the ring full */
	uint64_t released_seen[SHM_MAX_WORKERS]; /* last value read of ring->released */
	uint64_t busy_checks;
	struct fault_deferq *fdq;          /* test-only: ack-before-alloc (fault.h) */
	/* counters */
	uint64_t posts, ring_full_waits, ring_full_ns, retries_voided, retries_quarantined;
};

struct tp_client *shm_cli_open(const struct tp_cli_conf *cc, char *err, size_t errlen)
{
	struct tp_client *c = calloc(1, sizeof *c);
	char p[600];
	if (!c) {
		snprintf(err, errlen, "shm: out of memory");
		return NULL;
	}
	if (fault_init("client", err, errlen) != 0) {
		free(c);
		return NULL;
	}
	c->c = *cc;
	snprintf(c->dir, sizeof c->dir, "%s", cc->endpoint ? cc->endpoint : "");
	snprintf(p, sizeof p, "%s/server.map", c->dir);
	c->hdr = map_file(p, sizeof(struct shm_hdr), 0, err, errlen);
	if (!c->hdr) {
		size_t l = strlen(err);
		snprintf(err + l, errlen - l, " (is an oqb-server with --transport shm running, and is "
			 "--server its run directory?)");
		goto fail;
	}
	if (c->hdr->magic != SHM_MAGIC || c->hdr->version != SHM_VERSION) {
		snprintf(err, errlen, "%s: not an oqbench shm server of version %d (magic/version mismatch)",
			 p, SHM_VERSION);
		goto fail;
	}
	if (cc->system && strcmp(cc->system, c->hdr->system) != 0) {
		snprintf(err, errlen, "server at %s runs system '%s' but this client was started with "
			 "--system %s; use the same system on both", c->dir, c->hdr->system, cc->system);
		goto fail;
	}
	if (atomic_load(&c->hdr->stopping)) {
		snprintf(err, errlen, "server at %s is stopping", c->dir);
		goto fail;
	}
	c->workers = c->hdr->workers;
	c->slots = c->hdr->ring_slots;
	c->slot_size = c->hdr->slot_size;
	c->ring_size = ring_map_size(c->slots, c->slot_size);
	c->gen = c->hdr->generation;
	c->durable = (int)c->hdr->durable;
	if (cc->durable && !c->durable) {
		snprintf(err, errlen, "the client asked for durable commits but the server at %s is not "
			 "durable; start it with --durable --pmem-path DIR", c->dir);
		goto fail;
	}
	for (unsigned i = 0; i < c->workers; i++) {
		snprintf(p, sizeof p, "%s/ring-%u", c->dir, i);
		void *b;
		if (c->durable) {
			size_t mapped = 0;
			b = pmem_map_file(p, 0, 0, 0600, &mapped, &c->is_pmem);
			if (b && mapped < c->ring_size) {
				pmem_unmap(b, mapped);
				b = NULL;
			}
			if (!b)
				snprintf(err, errlen, "%s: cannot map the durable ring: %s", p, pmem_errormsg());
		} else {
			b = map_file(p, c->ring_size, 0, err, errlen);
		}
		if (!b)
			goto fail;
		c->ring[i] = b;
		c->state[i] = (_Atomic uint64_t *)((uint8_t *)b + c->ring[i]->state_off);
		c->data[i] = (uint8_t *)b + c->ring[i]->data_off;
	}
	uint32_t num = atomic_fetch_add(&c->hdr->next_client_id, 1);
	if (num >= SHM_MAX_CLIENTS) {
		snprintf(err, errlen, "shm: more than %d clients connected to %s over the server's life; "
			 "restart the server", SHM_MAX_CLIENTS - 1, c->dir);
		goto fail;
	}
	c->id = ((uint32_t)c->gen << ID_BITS) | num;
	snprintf(p, sizeof p, "%s/mbox-%u", c->dir, num);
	c->mbox = map_file(p, mbox_map_size(c->workers), 1, err, errlen);
	if (!c->mbox)
		goto fail;
	c->mbox->workers = c->workers;
	c->mbox->cap = MBOX_CAP;
	c->mbox->client_pid = (uint32_t)getpid();
	c->mbox->client_id = c->id;
	atomic_thread_fence(memory_order_release);
	c->mbox->magic = SHM_MAGIC;
	return c;
fail:
	shm_cli_close(c);
	return NULL;
}

uint32_t shm_cli_id(struct tp_client *c) { return c->id; }
unsigned shm_cli_workers(struct tp_client *c) { return c->workers; }

/* Most request lines a prefetch asks for: beyond a few, the hardware's
 * own prefetcher follows the copy anyway. */
#define PREFETCH_LINES_MAX 4u

static unsigned request_lines(uint32_t len)
{
	unsigned l = (len + CL - 1) / CL;
	return l < PREFETCH_LINES_MAX ? l : PREFETCH_LINES_MAX;
}

/* Starts moving the first `lines` lines of ticket t's request slot here,
 * writable.  Only a hint: it changes no value. */
static inline void prefetch_slot(struct tp_client *c, unsigned wi, uint64_t t, unsigned lines)
{
	const uint8_t *d = c->data[wi] + (t & (c->slots - 1)) * (size_t)c->slot_size;
	for (unsigned i = 0; i < lines; i++)
		prefetch_for_write(d + i * CL);
}

static int server_gone(struct tp_client *c)
{
	if (atomic_load_explicit(&c->hdr->stopping, memory_order_relaxed))
		return 1;
	return kill((pid_t)c->hdr->server_pid, 0) != 0 && errno == ESRCH;
}

/* claim_ticket when its first CAS failed: the slot is not FREE(t) yet
 * (ring full), or never will be (void).  Off the common path. */
static __attribute__((noinline)) int claim_wait(struct tp_client *c, unsigned wi, uint64_t t,
						 char *err, size_t errlen)
{
	_Atomic uint64_t *st = &c->state[wi][(t & (c->slots - 1)) * ST_STRIDE];
	uint64_t v, full_since = 0, spins = 0;
	int r = 0;
	for (;;) {
		v = atomic_load_explicit(st, memory_order_acquire);
		if (v == ST(t, ST_FREE)) {
			if (atomic_compare_exchange_weak_explicit(st, &v, ST(t, ST_WRITE),
					memory_order_acquire, memory_order_relaxed)) {
				r = 1;
				break;
			}
			continue;
		}
		if ((v >> 2) < t && (v & 3) != ST_QUAR) {
			/* The slot's previous lap is not executed yet: ring full. */
			if (!full_since) {
				full_since = clock_ns();
				c->ring_full_waits++;
			}
			cpu_relax();
			if ((++spins & 0xfff) == 0) {
				if (server_gone(c) || c->ring[wi]->generation != c->gen) {
					snprintf(err, errlen, "server at %s is gone or restarted (pid %u); "
						 "reconnect", c->dir, c->hdr->server_pid);
					r = -1;
					break;
				}
				sched_yield();
			}
			continue;
		}
		break;   /* voided under us, or a retired slot: new ticket */
	}
	if (full_since)
		c->ring_full_ns += clock_ns() - full_since;
	if (r == 0)
		c->retries_quarantined++;
	return r;
}

/*
 * Claims the slot of ticket t, already taken on worker wi's ring (FREE ->
 * WRITING), waiting while the slot still holds an older lap (the ring is
 * full).  Returns 1 claimed, 0 the ticket is void (voided under us, or it
 * landed on a retired slot: take a new one), -1 with err (the server is
 * gone or restarted).
 */
static inline int claim_ticket(struct tp_client *c, unsigned wi, uint64_t t, char *err, size_t errlen)
{
	_Atomic uint64_t *st = &c->state[wi][(t & (c->slots - 1)) * ST_STRIDE];
	/* The usual case first, as a CAS without a load before it: a load
	 * would fetch the line shared and the CAS fetch it again to write it. */
	uint64_t v = ST(t, ST_FREE);
	if (atomic_compare_exchange_strong_explicit(st, &v, ST(t, ST_WRITE),
			memory_order_acquire, memory_order_relaxed))
		return 1;
	return claim_wait(c, wi, t, err, errlen);
}

/*
 * Takes a ticket on worker wi's ring and claims its slot (FREE -> WRITING)
 * for a request of len bytes (0 if not known yet: only a prefetch hint).
 * Waits while the ring is full.  Returns 0 with *ticket set, or -1 with err
 * (the server is gone).
 */
int shm_cli_claim(struct tp_client *c, unsigned wi, uint32_t len, uint64_t *ticket, char *err,
		  size_t errlen)
{
	for (;;) {
		if (c->ring[wi]->generation != c->gen) {
			snprintf(err, errlen, "server at %s restarted; reconnect", c->dir);
			return -1;
		}
		/* Rule 1: the ticket is the request's place in the queue. */
		uint64_t t = atomic_fetch_add_explicit(&c->ring[wi]->tail, 1, memory_order_relaxed);
		/* The slot's request lines move to us while the claim's CAS
		 * waits for the state line, not after it. */
		prefetch_slot(c, wi, t, request_lines(len));
		int r = claim_ticket(c, wi, t, err, errlen);
		if (r > 0) {
			*ticket = t;
			return 0;
		}
		if (r < 0)
			return -1;
		/* void: a new ticket */
	}
}

/* claim-stall-ms (fault.h): every 64th nilext write of the process
 * sleeps between its claim and its write, like a writer thread preempted
 * on a loaded host; it fired when the server restarted meanwhile (the
 * write then goes to the old ring). */
static __attribute__((noinline)) void claim_stall(struct tp_client *c, unsigned wi, const void *req,
						   uint32_t len)
{
	static _Atomic uint64_t writes;
	struct wire_req h;
	if (wire_check(req, len, &h, NULL) != 0 || !(h.flags & KV_F_NILEXT) ||
	    (atomic_fetch_add_explicit(&writes, 1, memory_order_relaxed) + 1) % 64)
		return;
	struct timespec ts = { (time_t)(fault_claim_stall_ms / 1000), (long)(fault_claim_stall_ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	if (c->ring[wi]->generation != c->gen)
		fault_fired(FAULT_CLAIM_STALL);
}

/*
 * Writes len bytes into the claimed slot of ticket t and publishes it.
 * Returns 1 if published (committed for oq), 0 if the worker voided the
 * claim meanwhile (not committed: take a new ticket).
 */
int shm_cli_publish(struct tp_client *c, unsigned wi, uint64_t t, const void *req, uint32_t len)
{
	const uint64_t mask = c->slots - 1;
	_Atomic uint64_t *st = &c->state[wi][(t & mask) * ST_STRIDE];
	uint8_t *d = c->data[wi] + (t & mask) * (size_t)c->slot_size;
	if (fault_on(FAULT_CLAIM_STALL))
		claim_stall(c, wi, req, len);
	memcpy(d, req, len);
	if (c->durable)
		persist(d, len, c->is_pmem);       /* the request is in PM ... */
	uint64_t expect = ST(t, ST_WRITE);
	if (!atomic_compare_exchange_strong_explicit(st, &expect, ST(t, ST_PUB),
			memory_order_release, memory_order_relaxed)) {
		/* Quarantined while we wrote: we are done writing, so the slot
		 * may be reused (ST_GONE, shm_internal.h).  Release: our writes into
		 * the slot come before the next lap's. */
		if (expect == ST(t, ST_QUAR))
			atomic_compare_exchange_strong_explicit(st, &expect, ST(t, ST_QUAR) | ST_GONE,
				memory_order_release, memory_order_relaxed);
		c->retries_voided++;
		return 0;
	}
	if (c->durable)
		persist(st, 8, c->is_pmem);        /* ... and so is its place in the queue */
	return 1;
}

/*
 * Checks that up to n requests may be posted to worker wi now.  Returns how
 * many (1..n), 0 when the ring is full (busy: nothing taken), or -1 with
 * err.  Says "busy" before a ticket is taken, so the caller can keep
 * draining its mailbox (the server may be waiting for that) and come back:
 * a ticket, once taken, must be filled.
 */
static inline __attribute__((always_inline)) int post_room(struct tp_client *c, unsigned wi, int n, char *err, size_t errlen)
{
	if (wi >= c->workers) {
		snprintf(err, errlen, "shm: worker %u does not exist (server has %u)", wi, c->workers);
		return -1;
	}
	if (c->evq_head - c->evq_tail + (uint64_t)n > CLI_EVQ) {
		if (c->evq_head - c->evq_tail >= CLI_EVQ) {
			snprintf(err, errlen, "shm: %d deliveries not yet polled; poll before posting more",
				 CLI_EVQ);
			return -1;
		}
		n = (int)(CLI_EVQ - (c->evq_head - c->evq_tail));
	}
	if (c->ring[wi]->generation != c->gen) {
		snprintf(err, errlen, "server at %s restarted (generation %llu, this client joined %llu); "
			 "reconnect", c->dir, (unsigned long long)c->ring[wi]->generation,
			 (unsigned long long)c->gen);
		return -1;
	}
	/* `released` is written by the worker on its own cache line, once per
	 * batch (shm_srv_flush); polling the slot state here instead would
	 * steal the very line the worker must read and write next, and slow
	 * it down.  It only grows and may lag, so a value that says "room" is
	 * right, and the line is read again only when the cached value says
	 * there is too little. */
	uint64_t tail = atomic_load_explicit(&c->ring[wi]->tail, memory_order_relaxed);
	if (tail - c->released_seen[wi] + (uint64_t)n > c->slots)
		c->released_seen[wi] = atomic_load_explicit(&c->ring[wi]->released, memory_order_acquire);
	uint64_t used = tail - c->released_seen[wi];
	if (used >= c->slots) {
		for (int i = 0; i < 32; i++)
			cpu_relax();   /* and do not hammer even that line */
		if (!c->busy[wi]) {
			c->busy[wi] = 1;
			c->ring_full_waits++;
		}
		if ((++c->busy_checks & 1023) == 0 && server_gone(c)) {
			snprintf(err, errlen, "server at %s is gone (pid %u)", c->dir, c->hdr->server_pid);
			return -1;
		}
		return 0;
	}
	c->busy[wi] = 0;
	return used + (uint64_t)n > c->slots ? (int)(c->slots - used) : n;
}

static void delivered(struct tp_client *c, unsigned wi, uint64_t seq)
{
	/* Published: for oq this is the commit (the hardware-ACK analogue). */
	c->posts++;
	c->evq[c->evq_head++ & (CLI_EVQ - 1)] = (struct tp_event){
		.seq = seq, .kind = TP_EV_DELIVERED, .worker = (uint16_t)wi,
	};
}

/* One request into worker wi's ring: a ticket, the slot claimed, the
 * request written and published.  A publish the worker refused (it gave up
 * on a slow writer) committed nothing, so the request takes a new ticket.
 * 0, or -1 with err (the server went away, or the request is too large). */
static inline int claim_publish(struct tp_client *c, unsigned wi, const void *req, uint32_t len,
				char *err, size_t errlen)
{
	for (;;) {
		uint64_t t;
		if (shm_cli_claim(c, wi, len, &t, err, errlen) != 0)
			return -1;
		if (shm_cli_publish(c, wi, t, req, len))
			return 0;
	}
}

/* The ack-before-alloc fault's late allocation (fault.h): a request it
 * reported delivered earlier now takes its place in the queue. */
static int replay_deferred(void *arg, unsigned w, const void *req, uint32_t len)
{
	char err[256];
	return claim_publish(arg, w, req, len, err, sizeof err);
}

int shm_cli_post(struct tp_client *c, unsigned wi, const void *req, uint32_t len,
			uint64_t seq, char *err, size_t errlen)
{
	if (len > c->slot_size) {
		snprintf(err, errlen, "request of %u B does not fit a %u B receive slot; start the server "
			 "with a larger --slot-size", len, c->slot_size);
		return -1;
	}
	int room = post_room(c, wi, 1, err, errlen);
	if (room <= 0)
		return room < 0 ? -1 : 1;
	/* test-only (fault.h): report the commit now, take the ticket later */
	if (fault_on(FAULT_ACK_BEFORE_ALLOC) && fault_defer(&c->fdq, wi, req, len) == 0) {
		delivered(c, wi, seq);
		return 0;
	}
	if (claim_publish(c, wi, req, len, err, errlen) != 0)
		return -1;
	delivered(c, wi, seq);
	return 0;
}

/*
 * Posts n requests to worker wi, in their order, as n cli_post calls would,
 * but takes their tickets with one fetch-and-add and starts moving all
 * their slots' lines here before the first claim, so that the line
 * transfers overlap instead of following one another.  (One client thread
 * on oq/null keeps up with 5 Mops/s offered with it, and not without:
 * docs/architecture.md.)  Rule 1 holds for each request: its ticket comes from
 * the fetch-and-add, and its commit (the publish) after its slot's claim.
 * A ticket that turns out void goes to nobody: the next request takes the
 * next ticket, and what is left over at the end takes new tickets one at a
 * time, so the order stays the order given (or is left unsent, and counted
 * so, when the ring has no room for it).
 */
#define POST_MANY_MAX 64

/* cli_post_many's answer for r[0..n) sent one cli_post at a time. */
static int post_each(struct tp_client *c, unsigned wi, const struct tp_req *r, int n, char *err,
		     size_t errlen)
{
	int k = 0;
	for (; k < n; k++) {
		int x = shm_cli_post(c, wi, r[k].buf, r[k].len, r[k].seq, err, errlen);
		if (x < 0)
			return k ? k : -1;
		if (x == 1)
			break;   /* busy */
	}
	return k;
}

int shm_cli_post_many(struct tp_client *c, unsigned wi, const struct tp_req *r, int n,
			     char *err, size_t errlen)
{
	if (n <= 0)
		return 0;
	if (n > POST_MANY_MAX)
		n = POST_MANY_MAX;
	for (int i = 0; i < n; i++)
		if (r[i].len > c->slot_size) {
			n = i ? i : 1;   /* send those before it; it fails on its own */
			break;
		}
	if (n == 1 || fault_on(FAULT_ACK_BEFORE_ALLOC))
		return post_each(c, wi, r, n, err, errlen);
	int room = post_room(c, wi, n, err, errlen);
	if (room <= 0)
		return room;
	n = room;
	const uint64_t mask = c->slots - 1;
	uint64_t t0 = atomic_fetch_add_explicit(&c->ring[wi]->tail, (uint64_t)n, memory_order_relaxed);
	for (int i = 0; i < n; i++) {
		prefetch_for_write(&c->state[wi][((t0 + i) & mask) * ST_STRIDE]);
		prefetch_slot(c, wi, t0 + i, request_lines(r[i].len));
	}
	int j = 0;
	for (int i = 0; i < n; i++) {
		int x = claim_ticket(c, wi, t0 + i, err, errlen);
		if (x < 0)
			return j ? j : -1;   /* the rest is never sent; the worker voids their tickets */
		if (x > 0 && shm_cli_publish(c, wi, t0 + i, r[j].buf, r[j].len)) {
			delivered(c, wi, r[j].seq);
			j++;
		}
	}
	if (j == n)
		return n;
	/* in place of void tickets, one at a time (or the rest when there is
	 * room) */
	int k = post_each(c, wi, r + j, n - j, err, errlen);
	return k < 0 ? (j ? j : -1) : j + k;
}

void shm_cli_flush(struct tp_client *c)
{
	(void)c;
}

int shm_cli_poll(struct tp_client *c, struct tp_event *ev, int max)
{
	int k = 0;
	struct mbox_ring *rings = (struct mbox_ring *)(c->mbox + 1);
	uint8_t *data0 = (uint8_t *)(rings + c->workers);

	if (c->fdq)
		fault_defer_flush(c->fdq, 0, replay_deferred, c);
	/* Release what the previous poll handed out. */
	for (unsigned w = 0; w < c->workers; w++)
		if (c->mtail[w] != atomic_load_explicit(&rings[w].tail, memory_order_relaxed))
			atomic_store_explicit(&rings[w].tail, c->mtail[w], memory_order_release);

	while (c->evq_tail < c->evq_head && k < max)   /* DELIVERED, oldest first */
		ev[k++] = c->evq[c->evq_tail++ & (CLI_EVQ - 1)];
	for (unsigned w = 0; w < c->workers && k < max; w++) {
		uint8_t *data = data0 + (size_t)w * MBOX_CAP;
		uint64_t t = c->mtail[w];
		while (k < max) {
			uint64_t pos = t & (MBOX_CAP - 1);
			/* 0: nothing yet (the worker zeroes the word after each record) */
			uint64_t len = atomic_load_explicit((_Atomic uint64_t *)(data + pos), memory_order_acquire);
			if (!len)
				break;
			if (len == MBOX_WRAP) {
				t += MBOX_CAP - pos;
				continue;
			}
			struct wire_resp r;
			wire_decode_resp(data + pos + 8, &r);
			struct tp_event *e = &ev[k++];
			e->seq = r.seq;
			e->status = r.status;
			e->mark = r.mark;
			e->val_len = r.val_len;
			e->kind = r.kind == WIRE_ACK ? TP_EV_ACK : TP_EV_RESP;
			e->op = r.op;
			e->worker = (uint16_t)w;
			e->val = data + pos + 8 + WIRE_RESP_HDR;
			e->t_done = 0;
			t += len;
		}
		c->mtail[w] = t;
	}
	return k;
}

json_t *shm_cli_stats(struct tp_client *c)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I}",
			 "posts", (json_int_t)c->posts,
			 "ring_full_waits", (json_int_t)c->ring_full_waits,
			 "ring_full_ns", (json_int_t)c->ring_full_ns,
			 "retries_voided", (json_int_t)c->retries_voided,
			 "retries_quarantined", (json_int_t)c->retries_quarantined);
}

void shm_cli_close(struct tp_client *c)
{
	if (!c)
		return;
	if (c->fdq) {
		fault_defer_flush(c->fdq, 1, replay_deferred, c);
		fault_defer_free(c->fdq);
	}
	if (c->mbox) {
		char p[600];
		snprintf(p, sizeof p, "%s/mbox-%u", c->dir, c->id & ID_MASK);
		/* the server may still hold a mapping; unlinking is still safe */
		unlink(p);
		munmap(c->mbox, mbox_map_size(c->workers));
	}
	for (unsigned i = 0; i < c->workers; i++)
		if (c->ring[i]) {
			if (c->durable)
				pmem_unmap(c->ring[i], c->ring_size);
			else
				munmap(c->ring[i], c->ring_size);
		}
	if (c->hdr)
		munmap(c->hdr, sizeof(struct shm_hdr));
	free(c);
}
