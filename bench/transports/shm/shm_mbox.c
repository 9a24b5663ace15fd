/*
 * shm_mbox.c - the worker's side of a client's mailbox: the mapping found
 * by client id (and refused for another generation's), records written so
 * that a client only ever reads a whole record or 0, the wait for room
 * bounded (a reply to a dead or 1 s late client is dropped and counted).
 * The client's side is shm_cli_poll (shm_cli.c).  The protocol:
 * shm_internal.h; the folder's map: README.md.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "clock.h"

#include "shm_internal.h"

static struct mbox_hdr *srv_mbox(struct tp_server *s, struct srv_worker *w, uint32_t full_id)
{
	uint32_t id = full_id & ID_MASK;
	if ((full_id >> ID_BITS) != (uint32_t)s->generation) {
		w->stale_generation++;   /* a client of the server before a restart */
		return NULL;
	}
	if (id == 0 || id >= SHM_MAX_CLIENTS)
		return NULL;
	if (w->mbox[id])
		return w->mbox[id];
	char p[600], err[256];
	snprintf(p, sizeof p, "%s/mbox-%u", s->dir, id);
	struct mbox_hdr *m = map_file(p, mbox_map_size(s->c.workers), 0, err, sizeof err);
	if (!m)
		return NULL;
	if (m->magic != SHM_MAGIC || m->workers != s->c.workers || m->client_id != full_id) {
		munmap(m, mbox_map_size(s->c.workers));
		return NULL;
	}
	w->mbox[id] = m;
	if (id + 1 > w->mbox_max)
		w->mbox_max = id + 1;
	return m;
}

/* Until the client's tail leaves `need` bytes free at head: 0, or -1 (the
 * reply is dropped) for a client that is gone or 1 s behind. */
static __attribute__((noinline)) int mbox_wait_room(struct srv_worker *w, struct mbox_hdr *m,
						     struct mbox_ring *mr, uint64_t head, uint64_t need)
{
	uint64_t waited_since = 0;
	for (;;) {
		mr->tail_seen = atomic_load_explicit(&mr->tail, memory_order_acquire);
		if (MBOX_CAP - (head - mr->tail_seen) >= need)
			return 0;
		/* Mailbox full: the client is slow or gone.  Wait a while for a
		 * live client; drop the reply for a dead one. */
		uint64_t now = clock_ns();
		if (!waited_since) {
			waited_since = now;
			w->reply_full_waits++;
		}
		if ((kill((pid_t)m->client_pid, 0) != 0 && errno == ESRCH) ||
		    now - waited_since > 1000000000ull) {
			w->reply_drops++;
			return -1;
		}
		sched_yield();
	}
}

/*
 * Mailbox record: an 8-byte header word (the record's length in bytes, a
 * multiple of 8, or MBOX_WRAP: continue at offset 0), the response header,
 * the value.  There is no head for the client to poll: the worker writes
 * the record, zeroes the header word that follows it, and only then stores
 * the record's own header (release), so the word a client reads next is
 * always either a complete record's header or 0.  The client needs one
 * line per response (the record), not the record and a head.  The worker
 * reads the client's `tail` only when its cached copy says the mailbox
 * may be full.
 */
int shm_srv_reply(struct tp_server *s, unsigned wi, uint32_t client_id,
			 const struct wire_resp *r, const void *val)
{
	struct srv_worker *w = &s->w[wi];
	struct mbox_hdr *m = w->last_mbox;
	if (client_id != w->last_id || !m) {
		m = srv_mbox(s, w, client_id);
		if (!m) {
			w->unknown_client++;
			return -1;
		}
		w->last_id = client_id;
		w->last_mbox = m;
	}
	struct mbox_ring *mr = (struct mbox_ring *)(m + 1) + wi;
	uint8_t *data = (uint8_t *)((struct mbox_ring *)(m + 1) + m->workers) + (size_t)wi * MBOX_CAP;
	uint32_t len = (uint32_t)(8 + WIRE_RESP_HDR + r->val_len + 7) & ~7u;
	if (len > MBOX_CAP / 2) {
		w->reply_drops++;
		return -1;
	}
	uint64_t head = atomic_load_explicit(&mr->head, memory_order_relaxed);
	uint64_t pos = head & (MBOX_CAP - 1);
	/* the record, the zeroed header after it, and the skipped end of the
	 * buffer if it does not fit before the wrap */
	uint64_t need = len + 8 + ((MBOX_CAP - pos < len + 8) ? MBOX_CAP - pos : 0);
	if (MBOX_CAP - (head - mr->tail_seen) < need && mbox_wait_room(w, m, mr, head, need) != 0)
		return -1;
	_Atomic uint64_t *wrap = NULL;
	if (MBOX_CAP - pos < len + 8) {
		wrap = (_Atomic uint64_t *)(data + pos);
		head += MBOX_CAP - pos;
		pos = 0;
	}
	wire_encode_resp(data + pos + 8, r);
	if (r->val_len)
		memcpy(data + pos + 8 + WIRE_RESP_HDR, val, r->val_len);
	atomic_store_explicit((_Atomic uint64_t *)(data + pos + len), 0, memory_order_relaxed);
	if (wrap) {
		/* the record at 0 first, then the marker that leads to it */
		atomic_store_explicit((_Atomic uint64_t *)(data + pos), len, memory_order_relaxed);
		atomic_store_explicit(wrap, MBOX_WRAP, memory_order_release);
	} else {
		atomic_store_explicit((_Atomic uint64_t *)(data + pos), len, memory_order_release);
	}
	atomic_store_explicit(&mr->head, head + len, memory_order_relaxed);
	w->replies++;
	return 0;
}
