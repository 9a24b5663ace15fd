/*
 * vb_seqwrite_cli.c - system seqwrite, the client's side (the protocol is
 * at the top of vb_seqwrite.c).  Done by the QP's owner, which for
 * seqwrite is always the lane itself (delegation is refused).
 *
 * Per request slot of the lane's ring to worker w, a stage:
 *   SW_TAIL   FAA(tail, 1) posted, signaled (tag VB_TAG_SW, kind 0)
 *   SW_ROOM   ticket known, waiting for t < head + L (a head READ posted)
 *   SW_STATE  the entry's WRITE (unsignaled, vb_os_entry) and
 *             FAA(state[p], 1) (signaled, kind 1)
 * The state FAA's old value decides: 4g -- committed, DELIVERED (a nilext
 * request's commit); 4g + 2 -- the worker gave the slot up first: not
 * committed, back to SW_TAIL with a new ticket (counted in seqwrite_retries).
 * A request's slot is reused only after it committed, in order (done).
 * Every wait is bounded by the owner's watchdog (vb_combine).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "fault.h"
#include "vb_internal.h"

enum { SW_IDLE = 0, SW_TAIL = 1, SW_ROOM = 2, SW_STATE = 3 };

static inline uint8_t *res_word(struct vb_group *g, struct vb_lane *L, unsigned w, unsigned slot)
{
	return L->sbuf + (size_t)g->workers * g->depth * g->slot_size + (size_t)g->workers * 64 +
	       ((size_t)w * g->depth + slot) * 8;
}

static void atomic_wr(struct ibv_send_wr *wr, struct ibv_sge *sg, struct vb_lane *L, uint8_t *res, uint64_t raddr,
		      uint32_t rkey, uint64_t tag)
{
	sg->addr = (uintptr_t)res;
	sg->length = 8;
	sg->lkey = L->mr->lkey;
	memset(wr, 0, sizeof *wr);
	wr->wr_id = tag;
	wr->sg_list = sg;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->wr.atomic.remote_addr = raddr;
	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.compare_add = 1;
}

/* send_tag() of a seqwrite WR: lane field VB_TAG_SW, the WRs it frees,
 * kind (0 tail, 1 state) and request slot in the top 16 bits. */
static uint64_t sw_tag(unsigned w, unsigned nwr, unsigned kind, unsigned slot)
{
	return (uint64_t)VB_TAG_SW | (uint64_t)w << 16 | (uint64_t)nwr << 32 | (uint64_t)(kind << 15 | slot) << 48;
}

static int post(struct vb_group *g, struct vb_cqp *q, struct ibv_send_wr *wr, unsigned nwr)
{
	struct ibv_send_wr *bad = NULL;
	int e = ibv_post_send(q->qp, wr, &bad);
	if (e) {
		vb_group_break(g, "posting a seqwrite request to worker %u of %s failed: %s (the connection broke?)",
			       q->w, g->endpoint, strerror(e));
		return -1;
	}
	q->post_calls++;
	q->sq_used += nwr;
	q->signaled++;
	return 0;
}

static int post_tail(struct vb_group *g, struct vb_cqp *q, struct vb_lane *L, unsigned slot)
{
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	atomic_wr(&wr, &sg, L, res_word(g, L, q->w, slot), q->os_addr + VB_SW_TAIL_OFF(q->w), q->os_rkey,
		  sw_tag(q->w, 1, 0, slot));
	if (post(g, q, &wr, 1) != 0)
		return -1;
	q->sw_stage[slot] = SW_TAIL;
	return 0;
}

/* The request in slot has ticket t: its WRITE and state FAA, or a wait for
 * room (1). */
static int post_write(struct vb_group *g, struct vb_cqp *q, struct vb_lane *L, unsigned slot)
{
	uint64_t t = q->sw_tick[slot], L_ = q->os_k;
	if (t >= q->os_head + L_) {
		q->sw_stage[slot] = SW_ROOM;
		q->os_full_waits += !q->os_waiting;
		q->os_waiting = 1;
		if (!q->os_hread && q->sq_used < q->sq_depth) {
			uint8_t *dst = L->sbuf + (size_t)g->workers * g->depth * g->slot_size + (size_t)q->w * 64;
			struct ibv_sge sg = { .addr = (uintptr_t)dst, .length = 8, .lkey = L->mr->lkey };
			struct ibv_send_wr rd;
			memset(&rd, 0, sizeof rd);
			rd.sg_list = &sg;
			rd.num_sge = 1;
			rd.opcode = IBV_WR_RDMA_READ;
			rd.send_flags = IBV_SEND_SIGNALED;
			rd.wr_id = (uint64_t)VB_TAG_HEAD | (uint64_t)q->w << 16 | 1ull << 32;
			rd.wr.rdma.remote_addr = q->os_addr + VB_SW_HEAD_OFF(q->w);
			rd.wr.rdma.rkey = q->os_rkey;
			if (post(g, q, &rd, 1) != 0)
				return -1;
			q->os_hread = 1;
			q->os_head_reads++;
		}
		return 1;
	}
	q->os_waiting = 0;
	struct vb_lq *lq = &L->q[q->w];
	uint8_t *buf = L->sbuf + ((size_t)q->w * g->depth + slot) * g->slot_size;
	uint64_t p = t % L_;
	/* test-only: a thread stopped between its FAA and its WRITE
	 * (fault.h claim-stall-ms), as SIGSTOP or a preempted host would */
	if (fault_claim_stall_ms && ++q->sw_commits % 64 == 0) {
		struct timespec ts = { (time_t)(fault_claim_stall_ms / 1000),
				       (long)(fault_claim_stall_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		fault_fired(FAULT_CLAIM_STALL);
	}
	/* the entry's WRITE (vb_os_entry), then the state word's FAA */
	struct ibv_sge sg[2];
	struct ibv_send_wr wr[2];
	vb_os_entry(g, q, L, buf, lq->mlen[slot], q->sw_fin[slot] & 2,
		    q->os_addr + q->os_slots_off + p * g->slot_size, t + 1, wr, sg);
	wr[0].next = &wr[1];
	atomic_wr(&wr[1], &sg[1], L, res_word(g, L, q->w, slot), q->os_addr + VB_SW_STATES_OFF + p * 8, q->os_rkey,
		  sw_tag(q->w, 2, 1, slot));
	q->sw_fin[slot] |= 2;
	if (post(g, q, wr, 2) != 0)
		return -1;
	q->sends++;
	q->sw_stage[slot] = SW_STATE;
	return 0;
}

/* Owner: FAAs for the lane's written requests (at most VB_SW_INFLIGHT in
 * flight).  Returns the requests started, or -1. */
int vb_sw_post_new(struct vb_group *g, struct vb_cqp *q, struct vb_lane *L)
{
	struct vb_lq *lq = &L->q[q->w];
	uint64_t head = atomic_load_explicit(&lq->head, memory_order_acquire);
	int n = 0;
	while (lq->posted < head && lq->posted - lq->done < VB_SW_INFLIGHT && q->sq_used + 4 <= q->sq_depth) {
		unsigned slot = (unsigned)(lq->posted & (g->depth - 1));
		if (post_tail(g, q, L, slot) != 0)
			return -1;
		lq->posted++;
		n++;
	}
	q->sq_full = lq->posted < head;
	return n;
}

/* Owner: a seqwrite completion (tag VB_TAG_SW) of QP q, at time t. */
void vb_sw_done(struct vb_group *g, struct vb_cqp *q, const struct ibv_wc *wc, uint64_t t)
{
	struct vb_lane *L = atomic_load_explicit(&g->lanes[0], memory_order_acquire);
	unsigned top = (unsigned)(wc->wr_id >> 48), kind = top >> 15, slot = top & 0x7fffu;
	if (!L || slot >= g->depth)
		return;
	struct vb_lq *lq = &L->q[q->w];
	uint64_t v;
	memcpy(&v, res_word(g, L, q->w, slot), 8);
	if (kind == 0) {
		q->sw_tick[slot] = v;
		post_write(g, q, L, slot);
		return;
	}
	uint64_t g4 = 4 * (q->sw_tick[slot] / q->os_k);
	if (v == g4 + 2) {
		/* the worker gave this slot up first: not committed; a new ticket */
		q->sw_retries++;
		post_tail(g, q, L, slot);
		return;
	}
	if (v != g4) {
		vb_group_break(g, "worker %u of %s: the state word of ticket %llu read %llu, expected %llu or %llu: "
			       "the log is corrupt or another program writes it", q->w, g->endpoint,
			       (unsigned long long)q->sw_tick[slot], (unsigned long long)v, (unsigned long long)g4,
			       (unsigned long long)(g4 + 2));
		return;
	}
	q->send_completions++;
	q->sw_stage[slot] = SW_IDLE;
	struct vb_ev e = { .seq = lq->mseq[slot], .kind = TP_EV_DELIVERED, .buf = VB_NOBUF, .t = t };
	if (vb_push_ev(L, q->w, &e) != 0)
		q->overflow++;
	/* slots are reused in order: done moves over committed ones */
	q->sw_fin[slot] = 1;
	while (lq->done < lq->posted && (q->sw_fin[lq->done & (g->depth - 1)] & 1)) {
		q->sw_fin[lq->done & (g->depth - 1)] = 0;
		lq->done++;
	}
	atomic_store_explicit(&lq->done_pub, lq->done, memory_order_release);
}

/* Owner: the head READ completed (vb_w1_head_done): the requests waiting
 * for room go, in ticket order. */
void vb_sw_room(struct vb_group *g, struct vb_cqp *q)
{
	struct vb_lane *L = atomic_load_explicit(&g->lanes[0], memory_order_acquire);
	if (!L)
		return;
	for (;;) {
		unsigned best = UINT32_MAX;
		for (unsigned k = 0; k < g->depth; k++)
			if (q->sw_stage[k] == SW_ROOM && (best == UINT32_MAX || q->sw_tick[k] < q->sw_tick[best]))
				best = k;
		if (best == UINT32_MAX || post_write(g, q, L, best) != 0)
			return;
	}
}
