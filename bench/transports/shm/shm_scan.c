/*
 * shm_scan.c - the worker's scan of its ring (srv_poll): published slots
 * reported as arrivals in the order they are found, claimed slots watched,
 * abandoned claims voided after void_timeout (FREE(t) -> FREE(t+N)) or
 * retired after 4 x void_timeout (WRITING(t) -> QUARANTINED(t)), retired
 * slots whose writer gave up made free again.  Rule 2 is not here: the
 * executor (exec.h) runs the arrivals in ticket order.  The protocol:
 * shm_internal.h; the folder's map: README.md.
 */
#include <stdatomic.h>

#include "clock.h"

#include "shm_internal.h"

/* Slots seen claimed earlier: published now, or timed out?  Adds their
 * arrivals to a[k..max); returns the new k.  Off the common path: it runs
 * only while some claim is outstanding. */
static __attribute__((noinline)) int poll_pending(struct tp_server *s, struct srv_worker *w,
						  struct tp_arrival *a, int k, int max, uint64_t *nowp)
{
	const uint64_t n = s->c.ring_slots, mask = n - 1;
	uint64_t now = *nowp;
	for (unsigned i = 0; i < w->npend && k < max; ) {
		uint64_t t = w->pend[i];
		uint64_t v = atomic_load_explicit(&w->state[(t & mask) * ST_STRIDE], memory_order_acquire);
		int done = 0;
		if (v == ST(t, ST_PUB)) {
			a[k].slot = t; a[k].voided = 0; k++;
			done = 1;
		} else {
			if (!now)
				now = clock_ns();
			uint64_t waited = now - w->pend_since[i];
			uint64_t expect = v;
			if (v == ST(t, ST_FREE) && waited > s->c.void_timeout_ns) {
				cover_ticket(s, w, t + n);
				if (atomic_compare_exchange_strong(&w->state[(t & mask) * ST_STRIDE], &expect, ST(t + n, ST_FREE))) {
					a[k].slot = t; a[k].voided = 1; k++;
					w->voided++;
					done = 1;
				}
			} else if (v == ST(t, ST_WRITE) && waited > 4 * s->c.void_timeout_ns) {
				if (atomic_compare_exchange_strong(&w->state[(t & mask) * ST_STRIDE], &expect, ST(t, ST_QUAR))) {
					a[k].slot = t; a[k].voided = 1; k++;
					w->voided++;
					w->quarantined++;
					done = 1;
				}
			}
		}
		if (done)
			w->pend[i] = w->pend[--w->npend], w->pend_since[i] = w->pend_since[w->npend];
		else
			i++;
	}
	*nowp = now;
	return k;
}

int shm_srv_poll(struct tp_server *s, unsigned wi, struct tp_arrival *a, int max)
{
	struct srv_worker *w = &s->w[wi];
	const uint64_t mask = s->c.ring_slots - 1;
	int k = 0;
	uint64_t now = 0;

	if (w->npend)
		k = poll_pending(s, w, a, k, max, &now);

	/* New tickets.  The state word says what a ticket's slot holds; the
	 * shared `tail` (which every client increments) is read only when a
	 * slot looks untouched, to tell "claimed but not yet marked" from "not
	 * claimed", so the worker does not bounce the tail's cache line. */
	while (k < max) {
		uint64_t t = w->scan;
		uint64_t v = atomic_load_explicit(&w->state[(t & mask) * ST_STRIDE], memory_order_acquire);
		if (v == ST(t, ST_PUB)) {
			a[k].slot = t; a[k].voided = 0; k++;
		} else if (v == ST(t, ST_WRITE)) {
			if (!now)
				now = clock_ns();
			w->pend[w->npend] = t;
			w->pend_since[w->npend] = now;
			w->npend++;
		} else if ((v & ST_GONE) && (v & 3) == ST_QUAR) {
			/* retired by an earlier lap whose writer has since given
			 * up: free again from this ticket on.  A client that
			 * found it retired took another ticket; then this one is
			 * voided like any claimed-and-abandoned ticket. */
			cover_ticket(s, w, t);
			atomic_compare_exchange_strong(&w->state[(t & mask) * ST_STRIDE], &v, ST(t, ST_FREE));
			continue;   /* look again: FREE(t), or what a client made of it */
		} else if (v == ST(t, ST_FREE) || ((v & 3) == ST_QUAR && (v >> 2) < t)) {
			if (w->tail_seen <= t) {
				if ((++w->frontier_polls & 255) != 0)
					break;
				w->tail_seen = atomic_load_explicit(&w->ring->tail, memory_order_acquire);
				if (w->tail_seen <= t)
					break;   /* nothing claimed here yet */
			}
			if (v == ST(t, ST_FREE)) {
				/* claimed, not yet marked WRITING */
				if (!now)
					now = clock_ns();
				w->pend[w->npend] = t;
				w->pend_since[w->npend] = now;
				w->npend++;
			} else {
				/* retired slot from an earlier lap: skip this ticket */
				a[k].slot = t; a[k].voided = 1; k++;
				w->voided++;
			}
		} else {
			break;   /* the previous lap of this slot is not released yet */
		}
		w->scan++;
	}
	w->arrivals += (uint64_t)k;
	return k;
}

const void *shm_srv_req(struct tp_server *s, unsigned wi, uint64_t slot, size_t *avail)
{
	struct srv_worker *w = &s->w[wi];
	*avail = s->c.slot_size;
	return w->data + (slot & (s->c.ring_slots - 1)) * (size_t)s->c.slot_size;
}
