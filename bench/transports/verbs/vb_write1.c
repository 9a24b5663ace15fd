/*
 * vb_write1.c - system write1: per-client WRITE rings, one round trip, no
 * order across clients.  NOT LINEARIZABLE BY DESIGN: it is the design the
 * paper's §2.2/§3 argue against, measured beside OQ so the checker can
 * show why.
 *
 * Protocol.
 *   Server, per worker, one registered region (IBV_ACCESS_REMOTE_WRITE |
 *   REMOTE_READ):
 *
 *     off 0      u64 head[VB_W1_RINGS]   entries of ring r the worker has
 *                                        executed (only the worker's CPU
 *                                        stores it; clients READ it)
 *     off 4096   ring r at 4096 + r * K * slot_size, K = VB_W1_SLOTS
 *                slots of slot_size bytes, each entry at the slot's end
 *                (vb_os_entry): the request, u32 len, and last the
 *                u64 marker = the entry's ticket + 1
 *
 *   A connection (one client thread's QP to one worker; delegation is
 *   refused) is given a free ring by the connection-manager thread, which
 *   zeroes it, and the accept data (README.md) carries the ring's address,
 *   rkey, K and the address of its head word.
 *
 *   Client: its n-th request to the worker goes to slot n % K as one RDMA
 *   WRITE of the entry, the marker n + 1 in its last 8 bytes; it may
 *   write entry n only when n < head + K, with head a cached value of the
 *   ring's head word, refreshed by an 8-byte RDMA READ when the ring looks
 *   full (a wait, counted per episode in onesided_full_waits, as
 *   ring_full_waits counts RNR).  A nilext request commits on the WRITE's
 *   completion: the RC ACK says the bytes are placed in server memory, and
 *   no server CPU was involved.  Gets and non-idempotent requests commit
 *   on the worker's software reply, as in every system.
 *
 *   Worker: scans the live rings in turn, each scan starting after the
 *   ring that last gave an entry (so no ring starves another when the
 *   worker lags); ring r's next entry has arrived when the
 *   marker of slot seen % K reads seen + 1.  That test relies on the NIC
 *   writing a WRITE's bytes in increasing address order (PCIe posted-write
 *   ordering: vendor practice, not a guarantee of the RDMA specification;
 *   seed 004, Jasny et al.), so the marker, the WRITE's last bytes, lands
 *   after the request and its length; the marker is the ticket, so a slot's stale entry
 *   from K tickets ago never passes.  An arrived entry gets the worker's
 *   next ticket in discovery order, which is the order the executor runs
 *   (exec.h); at most ring_slots entries are between discovery and
 *   release.  Release stores the ring's new head (an aligned 8-byte
 *   store, read whole by one 8-byte RDMA READ: one PCIe read of one cache
 *   line in practice; only this one word is ever read remotely).
 *
 * Why it is not linearizable: client A's set commits on its WRITE's ACK,
 * before the worker saw it; client B's get, started after that commit,
 * can be found first (another ring, or the worker lagging) and return the
 * old value.  tests/verbs/guest-onesided.sh makes the worker lag
 * (server-delay fault) and scripts that pair; `oqb check` counts the
 * violations.
 *
 * Rings of closed connections: the CM thread marks the ring W1_CLOSING
 * after moving the QP to its error state (nothing more lands); the worker
 * still discovers and executes what landed before (each was committed)
 * and frees the ring once every discovered entry is released.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"
#include "vb_internal.h"

static inline uint8_t *w1_slot(const struct tp_server *s, const struct vb_worker *w, unsigned r, uint64_t pos)
{
	return w->w1_mem + VB_HDR_BYTES + ((size_t)r * VB_W1_SLOTS + pos) * s->c.slot_size;
}

int vb_w1_init(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen)
{
	const size_t ss = s->c.slot_size;
	w->w1_len = VB_HDR_BYTES + (size_t)VB_W1_RINGS * VB_W1_SLOTS * ss;
	w->w1_mem = mmap(NULL, w->w1_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->w1_mem == MAP_FAILED) {
		w->w1_mem = NULL;
		snprintf(err, errlen, "worker %u: cannot map %zu B for the write1 rings: %s; use a smaller --slot-size",
			 w->idx, w->w1_len, strerror(errno));
		return -1;
	}
	w->w1_mr = vb_reg_or_explain(s, w->w1_mem, w->w1_len,
				     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
				     "the write1 rings", w->idx, err, errlen);
	w->w1 = calloc(VB_W1_RINGS, sizeof *w->w1);
	w->w1_ring = calloc(s->c.ring_slots, sizeof *w->w1_ring);
	w->w1_pos = calloc(s->c.ring_slots, sizeof *w->w1_pos);
	if (!w->w1_mr)
		return -1;
	if (!w->w1 || !w->w1_ring || !w->w1_pos) {
		snprintf(err, errlen, "verbs: out of memory");
		return -1;
	}
	return 0;
}

void vb_w1_free(struct vb_worker *w)
{
	vb_dereg_mr(w->w1_mr);
	if (w->w1_mem)
		munmap(w->w1_mem, w->w1_len);
	free(w->w1);
	free(w->w1_ring);
	free(w->w1_pos);
}

/* CM thread: a free ring of worker w for a new connection, zeroed, or -1. */
int vb_w1_take(struct tp_server *s, struct vb_worker *w)
{
	for (unsigned r = 0; r < VB_W1_RINGS; r++) {
		struct vb_w1ring *R = &w->w1[r];
		if (atomic_load_explicit(&R->state, memory_order_acquire) != W1_FREE)
			continue;
		for (unsigned k = 0; k < VB_W1_SLOTS; k++)
			memset(w1_slot(s, w, r, k) + s->c.slot_size - 8, 0, 8);
		((uint64_t *)w->w1_mem)[r] = 0;
		R->seen = R->consumed = 0;
		atomic_store_explicit(&R->state, W1_LIVE, memory_order_release);
		return (int)r;
	}
	return -1;
}

/* CM thread: the connection that owned ring r closed (its QP is in the
 * error state: nothing more lands). */
void vb_w1_close(struct vb_worker *w, int r)
{
	if (r >= 0 && r < VB_W1_RINGS)
		atomic_store_explicit(&w->w1[r].state, W1_CLOSING, memory_order_release);
}

/* The accept data's write1 fields (README.md: offsets 72..95). */
void vb_w1_accept(struct tp_server *s, struct vb_worker *w, int r, uint8_t *acc)
{
	put64(acc + 72, (uint64_t)(uintptr_t)w1_slot(s, w, (unsigned)r, 0));
	put32(acc + 80, w->w1_mr->rkey);
	put32(acc + 84, VB_W1_SLOTS);
	put64(acc + 88, (uint64_t)(uintptr_t)((uint64_t *)w->w1_mem + r));
}

int vb_w1_poll(struct tp_server *s, unsigned wi, struct tp_arrival *a, int max)
{
	struct vb_worker *w = &s->w[wi];
	const uint64_t mask = s->mask, slots = s->c.ring_slots;
	unsigned last = w->w1_rr;
	int n = 0;
	for (unsigned k = 0; k < VB_W1_RINGS && n < max; k++) {
		unsigned r = (w->w1_rr + k) % VB_W1_RINGS;
		struct vb_w1ring *R = &w->w1[r];
		int st = atomic_load_explicit(&R->state, memory_order_acquire);
		if (st == W1_FREE)
			continue;
		while (n < max && w->w1_next - w->w1_released < slots) {
			const uint8_t *p = w1_slot(s, w, r, R->seen % VB_W1_SLOTS) + s->c.slot_size - 8;
			/* the marker is the WRITE's last 8 bytes (file top) */
			uint64_t m = __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
			if (m != R->seen + 1)
				break;
			uint64_t t = w->w1_next++;
			w->w1_ring[t & mask] = (uint16_t)r;
			w->w1_pos[t & mask] = (uint32_t)(R->seen % VB_W1_SLOTS);
			R->seen++;
			last = r;
			a[n].slot = t;
			a[n].voided = 0;
			n++;
			w->arrivals++;
		}
		if (st == W1_CLOSING && R->seen == R->consumed)
			atomic_store_explicit(&R->state, W1_FREE, memory_order_release);
	}
	/* the next scan starts after the ring that last gave an entry: with
	 * room for one entry a poll (a lagging worker) every live ring takes
	 * its turn, where a start advancing by one of 64 rings would let the
	 * lowest live ring win 63 polls of 64 and starve the others */
	w->w1_rr = (last + 1) % VB_W1_RINGS;
	return n;
}

const void *vb_w1_req(struct tp_server *s, unsigned wi, uint64_t slot, size_t *avail)
{
	struct vb_worker *w = &s->w[wi];
	return vb_os_req(w1_slot(s, w, w->w1_ring[slot & s->mask], w->w1_pos[slot & s->mask]), s->c.slot_size,
			 avail);
}

void vb_w1_release(struct tp_server *s, unsigned wi, uint64_t slot)
{
	struct vb_worker *w = &s->w[wi];
	unsigned r = w->w1_ring[slot & s->mask];
	struct vb_w1ring *R = &w->w1[r];
	R->consumed++;
	/* the entry's slot may be written again once clients read this */
	__atomic_store_n((uint64_t *)w->w1_mem + r, R->consumed, __ATOMIC_RELEASE);
	w->w1_released = slot + 1;
}

/* ------------------------------------------------------------------ */
/* client                                                              */

/*
 * A one-sided entry (write1 and seqwrite) in a slot of slot_size bytes
 * ends at the slot's end, so one WRITE of only the entry's bytes carries
 * it and its marker is at a fixed place:
 *
 *   [slot_size - 16 - pad8(len), +len)   the request
 *   [slot_size - 16, +4)                 u32 len
 *   [slot_size - 8, +8)                  u64 marker = ticket + 1, written last
 *
 * vb_os_entry moves the request (at buf, len bytes, where the lane put it;
 * unless shaped) into that shape in buf and fills wr (unsignaled, linked to nothing) with
 * the WRITE of it to the slot at raddr.  Writing the whole slot instead
 * would carry slot_size bytes (2 KiB by default) for a 100-byte request,
 * and a second WRITE for the marker a second packet.
 */
static size_t os_off(unsigned slot_size, uint32_t len)
{
	return slot_size - 16 - (((size_t)len + 7) & ~(size_t)7);
}

void vb_os_entry(struct vb_group *g, struct vb_cqp *q, struct vb_lane *L, uint8_t *buf, uint32_t len,
		 int shaped, uint64_t raddr, uint64_t marker, struct ibv_send_wr *wr, struct ibv_sge *sg)
{
	size_t off = os_off(g->slot_size, len);
	if (!shaped)   /* a seqwrite retry has it in place already */
		memmove(buf + off, buf, len);
	put32(buf + g->slot_size - 16, len);
	put32(buf + g->slot_size - 12, 0);
	memcpy(buf + g->slot_size - 8, &marker, 8);
	sg->addr = (uintptr_t)(buf + off);
	sg->length = (uint32_t)(g->slot_size - off);
	sg->lkey = L->mr->lkey;
	memset(wr, 0, sizeof *wr);
	wr->sg_list = sg;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_RDMA_WRITE;
	wr->send_flags = sg->length <= q->max_inline ? IBV_SEND_INLINE : 0;
	wr->wr.rdma.remote_addr = raddr + off;
	wr->wr.rdma.rkey = q->os_rkey;
}

/* Worker: the request of an arrived entry in slot (vb_os_entry), or the
 * slot with *avail 0 when its length is impossible. */
const void *vb_os_req(const uint8_t *slot, unsigned slot_size, size_t *avail)
{
	uint32_t len = get32(slot + slot_size - 16);
	if (len < WIRE_HDR_SIZE || len > slot_size - 16) {
		*avail = 0;
		return slot;
	}
	*avail = len;
	return slot + os_off(slot_size, len);
}

/*
 * Owner: the WRITE of the lane's request n (len bytes at buf) into q's
 * ring (vb_os_entry: 1), or 0 when the ring has no room by the cached
 * head; then wr may hold a READ of the head word (*rd_used; one at a
 * time, signaled, tag VB_TAG_HEAD) and the wait is counted per episode.
 */
int vb_w1_fill(struct vb_group *g, struct vb_cqp *q, struct vb_lane *L, uint64_t n, uint8_t *buf, uint32_t len,
	       struct ibv_send_wr *wr, struct ibv_sge *sg, int *rd_used)
{
	*rd_used = 0;
	if (n >= q->os_head + q->os_k) {
		q->os_full_waits += !q->os_waiting;
		q->os_waiting = 1;
		if (!q->os_hread && q->sq_used < q->sq_depth) {
			uint8_t *dst = L->sbuf + (size_t)g->workers * g->depth * g->slot_size + (size_t)q->w * 64;
			sg->addr = (uintptr_t)dst;
			sg->length = 8;
			sg->lkey = L->mr->lkey;
			memset(wr, 0, sizeof *wr);
			wr->sg_list = sg;
			wr->num_sge = 1;
			wr->opcode = IBV_WR_RDMA_READ;
			wr->send_flags = IBV_SEND_SIGNALED;
			wr->wr_id = (uint64_t)VB_TAG_HEAD | (uint64_t)q->w << 16 | 1ull << 32;
			wr->wr.rdma.remote_addr = q->os_head_addr;
			wr->wr.rdma.rkey = q->os_rkey;
			q->os_hread = 1;
			q->os_head_reads++;
			*rd_used = 1;
		}
		return 0;
	}
	q->os_waiting = 0;
	vb_os_entry(g, q, L, buf, len, 0, q->os_addr + (n % q->os_k) * g->slot_size, n + 1, wr, sg);
	return 1;
}

/* Owner: the head READ of q completed; its value is in L's READ target.
 * (Also seqwrite's, whose head counts the log's tickets.) */
void vb_w1_head_done(struct vb_group *g, struct vb_cqp *q)
{
	struct vb_lane *L = atomic_load_explicit(&g->lanes[0], memory_order_acquire);
	q->os_hread = 0;
	if (!L)
		return;
	uint64_t h;
	memcpy(&h, L->sbuf + (size_t)g->workers * g->depth * g->slot_size + (size_t)q->w * 64, 8);
	/* a head beyond what this lane wrote would be a torn or foreign
	 * value: keep the old one */
	if (h > q->os_head && (g->os != VB_OS_WRITE1 || h <= L->q[q->w].posted))
		q->os_head = h;
	q->sq_full = 1;   /* so the next combine posts what waited for room */
	if (g->os == VB_OS_SEQWRITE)
		vb_sw_room(g, q);
}
