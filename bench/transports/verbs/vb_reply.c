/*
 * vb_reply.c - replies from a server worker (software ACKs and responses):
 * srv_reply, the worker's send CQ, and the wait for room that RC and XRC
 * replies share (the XRC reply itself is vb_xrc.c's).
 *
 * Guarantees: a reply is routed by the client's block to the QP that
 * client opened to this worker (README.md, "Client ids"); it is at most a
 * receive slot's size (a larger one becomes KV_ERR_NOSPACE, so the
 * client's QP never breaks on a length error); a client that takes no
 * replies holds the worker up once for VB_REPLY_WAIT_NS at most, after
 * which its replies are dropped and counted (reply_drops) until it drains.
 * A reply's wr_id names the connection and its generation, so a completion
 * that arrives after the connection was reused is not counted against the
 * new one.  Shown by the verbs suite's rawrpc and deferred cases (the
 * server's reply counts against the commit rules) and the "server killed
 * under load" case.
 */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "vb_internal.h"

/* Reaps reply completions; returns how many. */
int vb_reap_sends(struct tp_server *s, struct vb_worker *w)
{
	struct ibv_wc wc[32];
	int n = ibv_poll_cq(w->scq, 32, wc);
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++) {
		uint32_t ci = (uint32_t)(wc[i].wr_id >> 32);
		uint32_t gen = (uint32_t)(wc[i].wr_id >> 16) & 0xffff;
		uint32_t sb = (uint32_t)wc[i].wr_id & 0xffff;
		if (sb < VB_SRV_SBUFS)
			w->sfree[w->nsfree++] = (uint16_t)sb;
		if (w->scq_out)
			w->scq_out--;
		if (ci < VB_MAX_CONNS) {
			struct vb_sconn *c = &s->conns[ci];
			if ((atomic_load(&c->gen) & 0xffff) == gen)
				atomic_fetch_sub(&c->inflight, 1);
		}
		if (wc[i].status != IBV_WC_SUCCESS && wc[i].status != IBV_WC_WR_FLUSH_ERR) {
			w->send_errors++;
			if (vb_w_may_log(w))
				log_msg(LOG_WARN, "worker %u: a reply to a client failed: %s (vendor error 0x%x); "
					"the client's connection is broken", w->idx,
					ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
		}
	}
	return n;
}

/* No room on c for a reply of len bytes: its send queue is full (an XRC
 * reply QP keeps one entry free: its buffers are a ring of sq_depth), or,
 * on RC, the worker's send CQ or its reply buffers are. */
static int reply_full(const struct vb_worker *w, struct vb_sconn *c, uint32_t len)
{
	if (c->kind == CK_XREPLY)
		return atomic_load(&c->inflight) + 1 >= c->sq_depth;
	return atomic_load(&c->inflight) >= c->sq_depth || w->scq_out >= VB_SRV_SCQ ||
	       (len > c->max_inline && !w->nsfree);
}

/*
 * Waits until c has room for a reply of len bytes, reaping completions.
 * A client that stopped taking replies must not stall the worker for
 * everyone: wait VB_REPLY_WAIT_NS once, then drop (and keep dropping
 * while it stays full).  0: room; -1: dropped (counted).  The caller holds
 * what keeps c alive (w->mu; for an XRC reply QP also c->xmu).
 */
int vb_reply_room(struct vb_worker *w, struct vb_sconn *c, uint32_t client_id, uint32_t len)
{
	if (reply_full(w, c, len)) {
		uint64_t t0 = clock_ns();
		w->reply_waits++;
		while (reply_full(w, c, len)) {
			if (c->kind == CK_XREPLY)
				vb_xreply_reap(c);
			else if (vb_reap_sends(w->s, w))
				continue;
			if (c->stalled || clock_ns() - t0 > VB_REPLY_WAIT_NS) {
				if (!c->stalled && vb_w_may_log(w))
					log_msg(LOG_WARN, "worker %u: client %u (pid %u) takes no replies (its %s "
						"stayed full for %llu ms); dropping replies to it until it drains", w->idx,
						client_id, c->pid, c->kind == CK_XREPLY ? "XRC reply queue" : "send queue",
						VB_REPLY_WAIT_NS / 1000000);
				c->stalled = 1;
				w->reply_drops++;
				return -1;
			}
			cpu_relax();
		}
	}
	c->stalled = 0;
	return 0;
}

/* The reply's bytes: header, then the value. */
void vb_encode_reply(uint8_t *b, const struct wire_resp *rr, const void *val)
{
	wire_encode_resp(b, rr);
	if (rr->val_len)
		memcpy(b + WIRE_RESP_HDR, val, rr->val_len);
}

/* Posts one signaled SEND of len bytes at b on c's QP.  0 (counted in
 * flight), or -1 (counted, logged). */
int vb_post_reply(struct vb_worker *w, struct vb_sconn *c, uint32_t client_id, const void *b, uint32_t len,
		  uint32_t lkey, unsigned flags, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)b, .length = len, .lkey = lkey };
	struct ibv_send_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof wr);
	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED | flags;
	int e = ibv_post_send(c->id->qp, &wr, &bad);
	if (e) {
		w->send_errors++;
		if (vb_w_may_log(w))
			log_msg(LOG_WARN, "worker %u: posting a reply to client %u failed: %s", w->idx, client_id,
				strerror(e));
		return -1;
	}
	atomic_fetch_add(&c->inflight, 1);
	w->replies++;
	return 0;
}

int vb_srv_reply(struct tp_server *s, unsigned wi, uint32_t client_id, const struct wire_resp *r, const void *val)
{
	struct vb_worker *w = &s->w[wi];
	uint32_t block = client_id >> VB_LANE_BITS;
	struct wire_resp rr = *r;
	if (WIRE_RESP_HDR + (uint64_t)rr.val_len > s->c.slot_size) {
		/* The client's receive buffers hold slot_size bytes. */
		rr.status = KV_ERR_NOSPACE;
		rr.val_len = 0;
		val = NULL;
		w->reply_too_big++;
	}
	uint32_t len = WIRE_RESP_HDR + rr.val_len;

	pthread_mutex_lock(&w->mu);
	uint32_t ci = block < w->nblock ? w->by_block[block] : 0;
	struct vb_sconn *c = ci ? &s->conns[ci - 1] : NULL;
	if (!c || c->state != CS_LIVE) {
		w->unknown_client++;
		pthread_mutex_unlock(&w->mu);
		return -1;
	}
	ci--;
	if (c->kind == CK_XREPLY)
		return vb_xrc_reply(s, w, c, client_id, &rr, val, len);   /* unlocks w->mu */
	if (vb_reply_room(w, c, client_id, len) != 0) {
		pthread_mutex_unlock(&w->mu);
		return -1;
	}
	uint8_t tmp[VB_INLINE];
	uint32_t sb = 0xffff;
	uint64_t wr_id = (uint64_t)ci << 32 | (uint64_t)(atomic_load(&c->gen) & 0xffff) << 16;
	int ret;
	if (len <= c->max_inline && len <= sizeof tmp) {
		vb_encode_reply(tmp, &rr, val);
		w->reply_inline++;
		ret = vb_post_reply(w, c, client_id, tmp, len, 0, IBV_SEND_INLINE, wr_id | sb);
	} else {
		sb = w->sfree[--w->nsfree];
		uint8_t *b = w->sbuf + (size_t)sb * s->c.slot_size;
		vb_encode_reply(b, &rr, val);
		ret = vb_post_reply(w, c, client_id, b, len, w->sbuf_mr->lkey, 0, wr_id | sb);
		if (ret != 0)
			w->sfree[w->nsfree++] = (uint16_t)sb;
	}
	if (ret == 0)
		w->scq_out++;
	pthread_mutex_unlock(&w->mu);
	return ret;
}
