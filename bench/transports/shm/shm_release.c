/*
 * shm_release.c - a slot handed to the next lap once the worker executed
 * it: ReqToExecute persisted after execution (durable), the request header
 * invalidated and SRQTail extended before the slot is FREE(t+N) again, and
 * `released` published once per batch at flush.  The protocol:
 * shm_internal.h; the folder's map: README.md.
 */
#include <stdatomic.h>
#include <string.h>

#include "shm_internal.h"

void shm_srv_executed(struct tp_server *s, unsigned wi, uint64_t slot)
{
	struct srv_worker *w = &s->w[wi];
	if (!s->c.durable)
		return;
	/* §5.3 ①②③: executed, now ReqToExecute moves past it, then respond. */
	w->ring->req_to_execute = slot + 1;
	persist(&w->ring->req_to_execute, 8, w->is_pmem);
}

static __attribute__((noinline)) void release_durable(struct tp_server *s, struct srv_worker *w,
							     uint64_t slot, _Atomic uint64_t *st)
{
	const uint64_t n = s->c.ring_slots;
	/* "Repost the buffer": invalidate the old request first, so a later
	 * recovery can never take it for a new one, then extend SRQTail over
	 * the ticket that may now land here. */
	uint8_t *d = w->data + (slot & (n - 1)) * (size_t)s->c.slot_size;
	memset(d, 0, 16);
	persist(d, 16, w->is_pmem);
	cover_ticket(s, w, slot + n);
	atomic_store_explicit(st, ST(slot + n, ST_FREE), memory_order_release);
	persist(st, 8, w->is_pmem);
}

void shm_srv_release(struct tp_server *s, unsigned wi, uint64_t slot)
{
	struct srv_worker *w = &s->w[wi];
	const uint64_t n = s->c.ring_slots;
	_Atomic uint64_t *st = &w->state[(slot & (n - 1)) * ST_STRIDE];
	/* Only a slot we executed is handed to the next lap here; a voided
	 * slot was already recycled (or retired) by the void CAS. */
	w->released = slot + 1;
	if (atomic_load_explicit(st, memory_order_relaxed) != ST(slot, ST_PUB))
		return;
	if (s->c.durable)
		release_durable(s, w, slot, st);
	else
		atomic_store_explicit(st, ST(slot + n, ST_FREE), memory_order_release);
}

/* Replies are visible once written.  What flush publishes is `released`,
 * once per batch rather than per slot: clients read it only when their
 * cached value says the ring is full, and a value that lags by a batch
 * only makes them say busy a little longer, never overwrite a slot (the
 * slot state decides that). */
void shm_srv_flush(struct tp_server *s, unsigned wi)
{
	struct srv_worker *w = &s->w[wi];
	if (atomic_load_explicit(&w->ring->released, memory_order_relaxed) != w->released)
		atomic_store_explicit(&w->ring->released, w->released, memory_order_release);
}
