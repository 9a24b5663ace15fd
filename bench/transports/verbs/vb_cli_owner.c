/*
 * vb_cli_owner.c - the client's data path on one QP, done by whichever
 * thread holds the QP's lock (flat combining, §5.2.2): post every lane's
 * written requests, reap send completions and responses, and route them
 * to the lanes; and the watchdogs that turn a stuck QP or a closed server
 * into an error.  Without delegation a client has one lane and is always
 * the owner; the code path is the same, without the lock, and a request
 * that can leave at once skips the lane's send buffer (vb_post_direct).
 *
 * Guarantees:
 *  - A plain request's TP_EV_DELIVERED -- oq's commit for a nilext
 *    request (Rule 1: the RC ACK comes only after a receive WQE was
 *    taken) -- comes from a signaled completion at or after its SEND on
 *    the same QP.  Only the last WR of each lane's run in a posted chain
 *    is signaled: an RC send queue completes its WRs in posting order,
 *    and a WR completes only once the responder ACKed it (a SEND) or
 *    answered it (a READ), so a successful completion of WR k implies
 *    that every earlier WR of that QP was ACKed too.  The signaled WR's
 *    wr_id counts the WRs and requests it stands for, and the owner
 *    hands the lane one DELIVERED per request, in order.  With one
 *    request in flight every SEND is signaled (a run of one).  On an
 *    error the group breaks, so nothing relies on a count after it.
 *  - Durable mode (§5.3): a request marked WIRE_F_DURABLE is posted
 *    unsignaled and followed on the same QP by a signaled 8-byte RDMA READ
 *    of the worker's ring header; the READ's completion, which cannot
 *    overtake the SEND's placement, replaces the SEND's as DELIVERED.
 *  - A failed send completion commits nothing: the group breaks and its
 *    requests stay uncommitted (unknown in a history).  Only the
 *    test-only fault commit-on-error (fault.h) delivers them.
 *  - A lane sees its events in QP completion order, per worker.
 *  - A QP with requests in flight and no completion for VB_STALL_NS, a
 *    failed completion, or a server that disconnects (noticed within
 *    VB_CM_CHECK_NS) breaks the group with a message every later call
 *    returns.
 * Shown by the verbs suite: `vtest hwack` and `vtest order`, delegation on
 * and off, the durable cases, and the "server killed under load" case.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "fault.h"
#include "log.h"
#include "vb_internal.h"

/* Marks g broken (once) with the message every later call returns. */
void vb_group_break(struct vb_group *g, const char *fmt, ...)
{
	int was = atomic_exchange(&g->broken, 1);
	if (was)
		return;
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&g->err_mu);
	vsnprintf(g->err, sizeof g->err, fmt, ap);
	pthread_mutex_unlock(&g->err_mu);
	va_end(ap);
	log_msg(LOG_ERR, "%s", g->err);
}

void vb_group_err(struct vb_group *g, char *err, size_t errlen)
{
	pthread_mutex_lock(&g->err_mu);
	snprintf(err, errlen, "%s", g->err);
	pthread_mutex_unlock(&g->err_mu);
}

static void break_wc(struct vb_group *g, const struct vb_cqp *q, const struct ibv_wc *wc)
{
	const char *why;
	switch (wc->status) {
	case IBV_WC_RETRY_EXC_ERR:
		why = "transport retries exhausted: the server stopped answering (it crashed or the network is down)";
		break;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		why = "RNR retries exhausted: the server posted no receive buffer in time";
		break;
	case IBV_WC_WR_FLUSH_ERR:
		why = "flushed: the connection was already broken or closed";
		break;
	case IBV_WC_REM_INV_REQ_ERR:
		why = "the server refused the request (larger than its receive slot?)";
		break;
	case IBV_WC_REM_ACCESS_ERR:
		why = "the server refused the durable READ (wrong region or rkey)";
		break;
	default:
		why = "see the verbs status";
		break;
	}
	vb_group_break(g, "request to worker %u of %s failed: %s: %s (vendor error 0x%x)", q->w, g->endpoint,
		    ibv_wc_status_str(wc->status), why, wc->vendor_err);
}

/* Posts n response buffers back to the client SRQ. */
void vb_repost_bufs(struct vb_group *g, const uint32_t *bi, unsigned n)
{
	struct ibv_recv_wr wr[VB_RECV_CHAIN];
	struct ibv_sge sg[VB_RECV_CHAIN];
	while (n) {
		unsigned k = n < VB_RECV_CHAIN ? n : VB_RECV_CHAIN;
		for (unsigned i = 0; i < k; i++) {
			sg[i].addr = (uintptr_t)(g->rbuf + (size_t)bi[i] * g->slot_size);
			sg[i].length = g->slot_size;
			sg[i].lkey = g->rmr->lkey;
			wr[i].wr_id = bi[i];
		}
		int e = vb_post_recv_chain(g->srq, wr, sg, k);
		if (e) {
			vb_group_break(g, "cannot repost response buffers on %s: %s", g->endpoint, strerror(e));
			return;
		}
		bi += k;
		n -= k;
	}
}

/* Hands an event to lane L (owner side); -1 if its ring is full. */
int vb_push_ev(struct vb_lane *L, unsigned w, const struct vb_ev *e)
{
	struct vb_lq *lq = &L->q[w];
	uint64_t h = atomic_load_explicit(&lq->ev_head, memory_order_relaxed);
	if (h - atomic_load_explicit(&lq->ev_tail, memory_order_acquire) >= L->evcap)
		return -1;
	lq->ev[h & (L->evcap - 1)] = *e;
	atomic_store_explicit(&lq->ev_head, h + 1, memory_order_release);
	return 0;
}

/* A send WR's wr_id: lane | worker << 16 | WRs it completes << 32 |
 * requests it delivers << 48 (both 0 for an unsignaled WR). */
static uint64_t send_tag(unsigned lane, unsigned w, unsigned wrs, unsigned reqs)
{
	return (uint64_t)lane | (uint64_t)w << 16 | (uint64_t)wrs << 32 | (uint64_t)reqs << 48;
}

/* The time of a CQ poll that returned n completions, for their events'
 * tp_event.t_done, when that CQ's events are stamped, else 0.  Responses
 * are stamped without delegation (with it, another lane's hand-off from
 * the owner is part of its latency), send completions only where they
 * commit a request as well (g->stamp_sends). */
static inline uint64_t poll_stamp(int on, int n)
{
	return on && n > 0 ? clock_ns() : 0;
}

/* Owner: reaps send completions (DELIVERED) and responses of QP q. */
static int owner_poll(struct vb_group *g, struct vb_cqp *q)
{
	struct ibv_wc wc[32];
	const unsigned D = g->depth;
	int did = 0;
	q->polls++;
	/* Nothing in flight on a QP of its own: no send completion can come
	 * (an XRC send CQ serves every worker's QP, so it is always read). */
	int n = q->shared || q->sq_used ? ibv_poll_cq(q->scq, 32, wc) : 0;
	/* The poll that found a completion ends its latency; the decoding
	 * and hand-off below are the harness's. */
	uint64_t t = poll_stamp(g->stamp_sends, n);
	for (int i = 0; i < n; i++) {
		/* send_tag().  With XRC one CQ serves every worker's requests
		 * (all under one lock). */
		unsigned li = (unsigned)(wc[i].wr_id & 0xffffu), nwr = (unsigned)(wc[i].wr_id >> 32) & 0xffffu;
		unsigned wq = (unsigned)(wc[i].wr_id >> 16) & 0xffffu, nreq = (unsigned)(wc[i].wr_id >> 48);
		struct vb_cqp *qq = wq < g->workers ? &g->q[wq] : q;
		qq->sq_used -= nwr <= qq->sq_used ? nwr : qq->sq_used;
		if (li == VB_TAG_SW) {
			/* a seqwrite atomic (vb_seqwrite_cli.c) */
			if (wc[i].status != IBV_WC_SUCCESS)
				break_wc(g, qq, &wc[i]);
			else
				vb_sw_done(g, qq, &wc[i], t);
			continue;
		}
		if (li == VB_TAG_HEAD) {
			/* a one-sided ring's head READ (vb_write1.c) */
			if (wc[i].status != IBV_WC_SUCCESS)
				break_wc(g, qq, &wc[i]);
			else
				vb_w1_head_done(g, qq);
			continue;
		}
		if (wc[i].status != IBV_WC_SUCCESS) {
			break_wc(g, qq, &wc[i]);
			/* A failed completion says nothing was ACKed: its requests
			 * never commit.  The test-only fault commit-on-error
			 * (fault.h) delivers them anyway, after the break, so the
			 * harness can show it catches a client that does. */
			if (!nreq || !fault_on(FAULT_COMMIT_ON_ERROR))
				continue;
			for (unsigned r = 0; r < nreq; r++)
				fault_fired(FAULT_COMMIT_ON_ERROR);
		}
		qq->send_completions++;
		struct vb_lane *L = li < VB_MAX_LANES ? atomic_load_explicit(&g->lanes[li], memory_order_acquire) : NULL;
		if (!L || !nreq)
			continue;
		/* this completion implies the ACKs of the nreq requests the
		 * lane posted up to it on this QP (in order: Guarantees) */
		struct vb_lq *lq = &L->q[qq->w];
		for (unsigned r = 0; r < nreq; r++) {
			struct vb_ev e = {
				.seq = lq->mseq[lq->done & (D - 1)], .kind = TP_EV_DELIVERED, .buf = VB_NOBUF, .t = t,
			};
			lq->done++;
			if (vb_push_ev(L, qq->w, &e) != 0)
				qq->overflow++;
		}
		atomic_store_explicit(&lq->done_pub, lq->done, memory_order_release);
	}
	if (n > 0)
		did += n;
	n = ibv_poll_cq(q->rcq, 32, wc);
	t = poll_stamp(!g->delegated, n);
	for (int i = 0; i < n; i++) {
		uint32_t bi = (uint32_t)wc[i].wr_id;
		if (wc[i].status != IBV_WC_SUCCESS) {
			q->bad++;
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR) {
				log_msg(LOG_WARN, "a response from worker %u of %s arrived with %s", q->w, g->endpoint,
					ibv_wc_status_str(wc[i].status));
				vb_repost_bufs(g, &bi, 1);
			}
			continue;
		}
		const uint8_t *p = g->rbuf + (size_t)bi * g->slot_size;
		struct wire_resp r;
		if (wc[i].byte_len < WIRE_RESP_HDR) {
			q->bad++;
			vb_repost_bufs(g, &bi, 1);
			continue;
		}
		wire_decode_resp(p, &r);
		if ((uint64_t)WIRE_RESP_HDR + r.val_len > wc[i].byte_len) {
			q->bad++;
			vb_repost_bufs(g, &bi, 1);
			continue;
		}
		unsigned li = r.client_id & (VB_MAX_LANES - 1);
		struct vb_lane *L = (r.client_id >> VB_LANE_BITS) == g->block ?
			atomic_load_explicit(&g->lanes[li], memory_order_acquire) : NULL;
		if (!L) {
			q->stray++;
			vb_repost_bufs(g, &bi, 1);
			continue;
		}
		struct vb_ev e = {
			/* the worker's stall mark rides in the status word's top bits to the lane (vb_cli.c) */
			.seq = r.seq, .status = r.status | (uint32_t)r.mark << WIRE_S_SHIFT, .val_len = r.val_len, .buf = bi,
			.kind = r.kind == WIRE_ACK ? TP_EV_ACK : TP_EV_RESP, .op = r.op, .t = t,
		};
		/* with XRC every worker replies on one QP: the reply names it */
		unsigned rw = q->shared && r.worker < g->workers ? r.worker : q->w;
		q->responses++;
		if (vb_push_ev(L, rw, &e) != 0) {
			q->overflow++;
			vb_repost_bufs(g, &bi, 1);
		}
	}
	if (n > 0)
		did += n;
	return did;
}

/* One WR of a chain on q: len bytes at addr in L's registered buffer
 * (with XRC it names the worker's SRQ); the caller sets opcode, flags and,
 * if it is signaled, the wr_id (send_tag()). */
static struct ibv_send_wr *chain_wr(struct ibv_send_wr *wr, struct ibv_sge *sg, const struct vb_cqp *q,
				    const struct vb_lane *L, const void *addr, uint32_t len)
{
	sg->addr = (uintptr_t)addr;
	sg->length = len;
	sg->lkey = L->mr->lkey;
	memset(wr, 0, sizeof *wr);
	if (q->shared)
		wr->qp_type.xrc.remote_srqn = q->srqn;
	wr->sg_list = sg;
	wr->num_sge = 1;
	return wr;
}

/* Posts the chain at wr, which holds reqs requests, on q: 0, or -1 after
 * breaking the group. */
static int post_chain(struct vb_group *g, struct vb_cqp *q, struct ibv_send_wr *wr, unsigned reqs)
{
	struct ibv_send_wr *bad = NULL;
	int e = ibv_post_send(q->qp, wr, &bad);
	if (e) {
		vb_group_break(g, "posting requests to worker %u of %s failed: %s (the QP is in its error state, most "
			    "often because the connection to the server broke: check that the server still runs and "
			    "what its log says, then start the run again)", q->w, g->endpoint, strerror(e));
		return -1;
	}
	q->post_calls++;
	q->sends += reqs;
	return 0;
}

/* Owner: posts every lane's written requests that fit the send queue
 * (q->sq_full: some did not fit). */
static int owner_post(struct vb_group *g, struct vb_cqp *q)
{
	struct ibv_send_wr wr[32];
	struct ibv_sge sg[32];
	const unsigned D = g->depth, W = g->workers;
	unsigned nwr = 0, reqs = 0;
	int full = 0;
	unsigned hi = atomic_load_explicit(&g->lanes_hi, memory_order_acquire);
	for (unsigned k = 0; k < hi && !full; k++) {
		/* one lane (no delegation): no division on every pass */
		unsigned li = hi == 1 ? 0 : (q->rr + k) % hi;
		struct vb_lane *L = atomic_load_explicit(&g->lanes[li], memory_order_acquire);
		if (!L)
			continue;
		struct vb_lq *lq = &L->q[q->w];
		if (g->os == VB_OS_SEQWRITE) {
			/* vb_seqwrite_cli.c: the FAA on the log's tail first */
			int k2 = vb_sw_post_new(g, q, L);
			q->rr++;
			return k2 > 0 ? k2 : 0;
		}
		uint64_t head = atomic_load_explicit(&lq->head, memory_order_acquire);
		/* WRs and requests of this lane's run since its last signaled
		 * WR; last: that WR, or -1 */
		unsigned run_wrs = 0, run_reqs = 0;
		int last = -1;
		while (lq->posted < head) {
			unsigned slot = (unsigned)(lq->posted & (D - 1));
			int dur = lq->mdur[slot];
			unsigned need = dur ? 2 : 1;
			if (q->sq_used + need > q->sq_depth) {
				full = 1;
				break;
			}
			if (nwr + need + (g->os != VB_OS_NONE) > 32)
				break;   /* chain full (one-sided: room for a head READ too) */
			uint32_t len = lq->mlen[slot];
			uint8_t *buf = L->sbuf + ((size_t)q->w * D + slot) * g->slot_size;
			if (g->os == VB_OS_WRITE1) {
				/* vb_write1.c: a WRITE into this QP's ring, or
				 * (no room by the cached head) a READ of the head */
				int rd_used;
				if (!vb_w1_fill(g, q, L, lq->posted, buf, len, &wr[nwr], &sg[nwr], &rd_used)) {
					if (rd_used) {
						nwr++;
						q->sq_used++;
						q->signaled++;
					}
					full = 1;
					break;
				}
				q->inline_sends += (wr[nwr].send_flags & IBV_SEND_INLINE) != 0;
			} else {
				struct ibv_send_wr *sw = chain_wr(&wr[nwr], &sg[nwr], q, L, buf, len);
				sw->opcode = IBV_WR_SEND;
				sw->send_flags = len <= q->max_inline ? IBV_SEND_INLINE : 0;
				q->inline_sends += len <= q->max_inline;
			}
			last = (int)nwr++;
			run_wrs += need;
			run_reqs++;
			if (dur) {
				/* §5.3: the READ's completion implies the SEND before it
				 * on this QP was placed; it stands for the SEND (and for
				 * the run before it), whose own completion would not
				 * say that the request is in the ring. */
				uint8_t *dst = L->sbuf + (size_t)W * D * g->slot_size + (size_t)q->w * 64;
				struct ibv_send_wr *rd = chain_wr(&wr[nwr], &sg[nwr], q, L, dst, 8);
				rd->opcode = IBV_WR_RDMA_READ;
				rd->send_flags = IBV_SEND_SIGNALED;
				rd->wr_id = send_tag(li, q->w, run_wrs, run_reqs);
				rd->wr.rdma.remote_addr = q->read_addr;
				rd->wr.rdma.rkey = q->read_rkey;
				nwr++;
				q->reads++;
				q->signaled++;
				run_wrs = run_reqs = 0;
				last = -1;
			}
			q->sq_used += need;
			lq->posted++;
			reqs++;
		}
		if (last >= 0) {
			/* the run's last SEND: its completion delivers the run */
			wr[last].send_flags |= IBV_SEND_SIGNALED;
			wr[last].wr_id = send_tag(li, q->w, run_wrs, run_reqs);
			q->signaled++;
		}
		if (nwr + 2 > 32)
			break;
	}
	q->rr++;
	q->sq_full = full;
	if (!nwr)
		return 0;
	for (unsigned i = 0; i + 1 < nwr; i++)
		wr[i].next = &wr[i + 1];
	wr[nwr - 1].next = NULL;
	return post_chain(g, q, wr, reqs) == 0 ? (int)reqs : 0;
}

/*
 * Without delegation: posts the request lane_put() just recorded in slot
 * `posted` of L's ring to worker w without copying it (it returned 2), as
 * a SEND inline from req -- what owner_post() does for a run of one,
 * signaled with the same tag, without the send buffer and the chain.
 * 0, or -1 when the post failed and broke the group.
 */
int vb_post_direct(struct vb_group *g, struct vb_lane *L, unsigned w, const void *req, uint32_t len)
{
	struct vb_cqp *q = &g->q[w];
	struct ibv_sge sg = { .addr = (uintptr_t)req, .length = len, .lkey = L->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = send_tag(L->idx, w, 1, 1), .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED,
	};
	if (post_chain(g, q, &wr, 1) != 0)
		return -1;
	L->q[w].posted++;
	q->sq_used++;
	q->inline_sends++;
	q->signaled++;
	q->progress_ns = 0;
	q->idle = 0;
	return 0;
}

/* Posts the lanes' written requests: one chain holds up to 32 WRs (>= 16
 * requests); more chains follow while they come full, so a burst leaves in
 * one go.  Returns the requests posted. */
static int owner_post_all(struct vb_group *g, struct vb_cqp *q)
{
	int did = 0;
	for (int k = 0; k < 8 && !atomic_load_explicit(&g->broken, memory_order_relaxed); k++) {
		int p = owner_post(g, q);
		did += p;
		if (p < 16)
			break;
	}
	return did;
}

/* So one call posts everything one lane can have written (each full chain
 * holds at least 16 requests), unless the send queue fills (sq_full): a
 * reap by a lone lane, which posts as it writes, need not post first. */
_Static_assert(VB_LANE_DEPTH <= 8 * 16, "one lane's requests fit one owner_post_all()");

/* Does the owner's work on QP w if nobody else is doing it: post first
 * (what a lane just wrote leaves before any polling), then reap (always
 * with VB_REAP; with VB_POST_ONLY only when the send queue was full), then
 * post again what the reaped completions made room for. */
int vb_combine(struct vb_group *g, unsigned w, int how)
{
	struct vb_cqp *q = &g->q[w];
	/* Without delegation the group is one thread's own: there is nobody
	 * to combine with, and the lock would only cost its two calls on
	 * every post and poll.  (vb_cli_stats reads the counters after the
	 * thread is done.) */
	const int solo = !g->delegated;
	if (!solo && pthread_mutex_trylock(q->lk) != 0)
		return 0;
	/* A reap by one lane, which posts what it writes at once
	 * (vb_cli_post), has nothing to post first unless the send queue was
	 * full (see the assertion after owner_post_all). */
	int did = how == VB_REAP && solo && !q->shared && !q->sq_full ? 0 : owner_post_all(g, q);
	int polled = how == VB_REAP || q->sq_full ? owner_poll(g, q) : 0;
	/* Post again what the reaped completions made room for, and, with
	 * delegation, what other lanes wrote while we held the lock (their
	 * own combine found it taken).  One lane whose send queue had room
	 * has nothing new to post. */
	if (polled)
		did += polled + (q->sq_full || !solo ? owner_post_all(g, q) : 0);
	if (!q->sq_used || did) {
		q->progress_ns = 0;
		q->idle = 0;
	} else if ((++q->idle & (VB_IDLE_CLOCK - 1)) == 0) {
		/* Requests in flight and nothing completes: with rnr_retry 7
		 * a server that stopped consuming would stall us forever.
		 * The clock is read on every VB_IDLE_CLOCK-th idle pass. */
		uint64_t now = clock_ns();
		if (!q->progress_ns)
			q->progress_ns = now;
		else if (now - q->progress_ns > VB_STALL_NS)
			vb_group_break(g, "worker %u of %s acknowledged none of %u requests in flight for %.0f s: the "
				    "server is not consuming requests (hung or overloaded), or the connection is stuck",
				    w, g->endpoint, q->sq_used, (double)(now - q->progress_ns) / 1e9);
	}
	if (!solo)
		pthread_mutex_unlock(q->lk);
	return did;
}

/* Notices a server that closed or lost the connection (every 50 ms). */
void vb_cm_check(struct vb_group *g)
{
	uint64_t now = clock_ns();
	if (now < atomic_load_explicit(&g->next_cm_check, memory_order_relaxed))
		return;
	if (pthread_mutex_trylock(&g->cm_mu) != 0)
		return;
	atomic_store(&g->next_cm_check, now + VB_CM_CHECK_NS);
	struct rdma_cm_event *ev;
	while (rdma_get_cm_event(g->ch, &ev) == 0) {
		enum rdma_cm_event_type t = ev->event;
		struct vb_cqp *q = ev->id ? ev->id->context : NULL;
		unsigned w = q ? q->w : 0;
		rdma_ack_cm_event(ev);
		if (t == RDMA_CM_EVENT_DISCONNECTED || t == RDMA_CM_EVENT_DEVICE_REMOVAL ||
		    t == RDMA_CM_EVENT_TIMEWAIT_EXIT)
			vb_group_break(g, "the server at %s closed the connection to worker %u (%s): it stopped or "
				    "crashed", g->endpoint, w, rdma_event_str(t));
	}
	pthread_mutex_unlock(&g->cm_mu);
}

