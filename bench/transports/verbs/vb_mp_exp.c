/*
 * vb_mp_exp.c - recv_mode mp: the real multi-packet SRQ (§5.1) through
 * MLNX_OFED 4.x's experimental verbs (infiniband/verbs_exp.h).  The
 * Makefile compiles this file only where that header has multi-packet SRQ
 * completions (HAVE_VERBS_EXP=1, which also defines OQB_HAVE_VERBS_EXP);
 * elsewhere vb_mp_none.c leaves vb_mp_hooks NULL and the server refuses
 * --recv-mode mp with what is needed.
 *
 * Written from MLNX_OFED 4.6's verbs_exp.h and compile-checked against it;
 * no NIC that can run it was available, so it has never run (docs/verbs.md
 * says what to check on first use).
 *
 * MLNX_OFED offers multi-packet WQEs on an SRQ only for a tag-matching SRQ
 * (mp_rq_caps.supported_qps & IBV_EXP_MP_RQ_SUP_TYPE_SRQ_TM).  No tag is
 * ever added, so every message is "unexpected" and goes to the next free
 * strides of the current WQE.  WQEs are 2^log_strides strides of
 * 2^log_stride bytes over one contiguous ring, posted in address order with
 * wr_id = WQE sequence number.  A completion names (wr_id, strides_offset,
 * byte_len) and flags the last message of a WQE (MP_WR_CONSUMED); a
 * RECV_NOP completion is a filler that closes a WQE.  mpring.c puts those
 * back in placement order and numbers the messages 0, 1, 2, ...: the
 * executor's slots, exactly as the ticket is in srq mode.  A WQE is posted
 * again once every message in it was released.  Rule 1 holds as in srq
 * mode: with no WQE left the RNIC sends an RNR NAK, and a message is ACKed
 * only after it was placed.  The ordering logic is NIC-free and
 * unit-tested (mpring.c, tests/unit/test_mpring.c); the verbs calls here
 * are not.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs_exp.h>

#include "log.h"
#include "vb_internal.h"

#define VB_MP_LOG_STRIDE  6            /* 64 B strides: WIRE_ALIGN, Rowan's choice */
#define VB_MP_LOG_STRIDES 10           /* 1024 strides = 64 KiB per WQE */

static int mp_geometry(struct tp_server *s, struct mpring_conf *mc, char *err, size_t errlen)
{
	struct ibv_exp_device_attr xa;
	memset(&xa, 0, sizeof xa);
	xa.comp_mask = (uint32_t)(IBV_EXP_DEVICE_ATTR_RESERVED - 1);
	int e = ibv_exp_query_device(s->ctx, &xa);
	if (e) {
		snprintf(err, errlen, "recv_mode mp: ibv_exp_query_device on %s failed: %s (the multi-packet SRQ "
			 "needs MLNX_OFED 4.x's libibverbs and libmlx5)", s->devname, strerror(e));
		return -1;
	}
	if (!(xa.comp_mask & IBV_EXP_DEVICE_ATTR_MP_RQ) ||
	    !(xa.mp_rq_caps.supported_qps & IBV_EXP_MP_RQ_SUP_TYPE_SRQ_TM)) {
		snprintf(err, errlen, "recv_mode mp: device %s offers no multi-packet SRQ for RC QPs "
			 "(mp_rq_caps.supported_qps = 0x%x); that needs a ConnectX-5 or newer with the link layer "
			 "set to InfiniBand under MLNX_OFED 4.x; use recv_mode slot_ring for the portable emulation",
			 s->devname, (xa.comp_mask & IBV_EXP_DEVICE_ATTR_MP_RQ) ? xa.mp_rq_caps.supported_qps : 0);
		return -1;
	}
	const struct ibv_exp_mp_rq_caps *mc_caps = &xa.mp_rq_caps;
	unsigned ls = VB_MP_LOG_STRIDE, lS = VB_MP_LOG_STRIDES;
	if (ls < mc_caps->min_single_stride_log_num_of_bytes)
		ls = mc_caps->min_single_stride_log_num_of_bytes;
	if (ls > mc_caps->max_single_stride_log_num_of_bytes)
		ls = mc_caps->max_single_stride_log_num_of_bytes;
	if (lS < mc_caps->min_single_wqe_log_num_of_strides)
		lS = mc_caps->min_single_wqe_log_num_of_strides;
	if (lS > mc_caps->max_single_wqe_log_num_of_strides)
		lS = mc_caps->max_single_wqe_log_num_of_strides;
	/* every message must fit one WQE */
	while (((size_t)1 << (ls + lS)) < s->c.slot_size && lS < mc_caps->max_single_wqe_log_num_of_strides)
		lS++;
	size_t wqe_bytes = (size_t)1 << (ls + lS);
	if (wqe_bytes < s->c.slot_size) {
		snprintf(err, errlen, "recv_mode mp: %s's strides (2^%u..2^%u B, 2^%u..2^%u per WQE) cannot hold a "
			 "%u-byte message in one WQE; lower --slot-size", s->devname,
			 mc_caps->min_single_stride_log_num_of_bytes, mc_caps->max_single_stride_log_num_of_bytes,
			 mc_caps->min_single_wqe_log_num_of_strides, mc_caps->max_single_wqe_log_num_of_strides,
			 s->c.slot_size);
		return -1;
	}
	/* the same memory as slot_ring would use, at least two WQEs */
	size_t ring = (size_t)s->c.ring_slots * s->c.slot_size;
	unsigned wqes = 2;
	while ((size_t)wqes * 2 * wqe_bytes <= ring && wqes < (1u << 20))
		wqes *= 2;
	if (wqes > (unsigned)s->da.max_srq_wr) {
		snprintf(err, errlen, "recv_mode mp: %u WQEs of %zu B exceed %s's max_srq_wr %d; lower --ring-slots",
			 wqes, wqe_bytes, s->devname, s->da.max_srq_wr);
		return -1;
	}
	/* A message of several packets gives one completion per packet
	 * (MP_WR_MORE_IN_MSG), which this path does not put together. */
	struct ibv_port_attr pa;
	if (ibv_query_port(s->ctx, s->port_num, &pa) == 0 && (int)s->c.slot_size > vb_mtu_bytes(pa.active_mtu)) {
		snprintf(err, errlen, "recv_mode mp: --slot-size %u exceeds the active MTU of %s port %u (%d B); a "
			 "request must be one packet here; lower --slot-size", s->c.slot_size, s->devname, s->port_num,
			 vb_mtu_bytes(pa.active_mtu));
		return -1;
	}
	mc->log_stride = ls;
	mc->log_strides = lS;
	mc->wqes = wqes;
	mc->max_out = s->c.ring_slots;     /* the executor's window */
	return 0;
}

/* WQE q: its place in the ring, the whole WQE. */
static void mp_sge(const struct tp_server *s, const struct vb_worker *w, uint64_t q, struct ibv_sge *sg)
{
	sg->addr = (uintptr_t)(w->slots + mpring_offset(w->mp, q, 0));
	sg->length = (uint32_t)w->mp_wqe_bytes;
	sg->lkey = w->ring_mr->lkey;
}

/* Posts the WQEs mpring hands back (or, first, WQEs 0 .. wqes-1). */
static int mp_post(struct tp_server *s, struct vb_worker *w, uint64_t first, unsigned n)
{
	return vb_post_wqes(s, w, first, n, mp_sge, "multi-packet WQEs");
}

/* Ring, MR, CQ and the tag-matching multi-packet SRQ of worker w. */
static int mp_worker_init(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen)
{
	struct mpring_conf mc;
	if (mp_geometry(s, &mc, err, errlen) != 0)
		return -1;
	w->mp = mpring_new(&mc, err, errlen);
	if (!w->mp)
		return -1;
	w->mp_wqe_bytes = mpring_wqe_bytes(w->mp);
	size_t bytes = mpring_bytes(w->mp);
	if (vb_map_anon(w, VB_HDR_BYTES + bytes, "multi-packet ring", bytes, err, errlen) != 0)
		return -1;
	w->slots = w->map + VB_HDR_BYTES;
	if (vb_ring_hdr_init(s, w, VB_HDR_BYTES, err, errlen) != 0)
		return -1;
	w->ring_mr = vb_reg_or_explain(s, w->slots, bytes, IBV_ACCESS_LOCAL_WRITE, "the multi-packet ring", w->idx,
				       err, errlen);
	if (!w->ring_mr)
		return -1;
	if (vb_slot_records(s, w, 1) != 0) {
		snprintf(err, errlen, "worker %u: out of memory for %u slot records; lower --ring-slots", w->idx,
			 s->c.ring_slots);
		return -1;
	}
	/* one completion per message: at most one per stride in the ring */
	size_t cqe = (size_t)mc.wqes << mc.log_strides;
	if (cqe + 16 > (size_t)s->da.max_cqe)
		cqe = (size_t)s->da.max_cqe - 16;
	w->rcq = ibv_create_cq(s->ctx, (int)cqe + 16, NULL, NULL, 0);
	if (!w->rcq) {
		snprintf(err, errlen, "worker %u: cannot create a receive CQ of %zu entries on %s: %s", w->idx,
			 cqe + 16, s->devname, strerror(errno));
		return -1;
	}
	struct ibv_exp_create_srq_attr sa;
	memset(&sa, 0, sizeof sa);
	sa.base.attr.max_wr = mc.wqes;
	sa.base.attr.max_sge = 1;
	sa.srq_type = IBV_EXP_SRQT_TAG_MATCHING;
	sa.pd = s->pd;
	sa.cq = w->rcq;
	sa.tm_cap.max_num_tags = 1;    /* none is ever added */
	sa.tm_cap.max_ops = 1;
	sa.mp_wr.log_num_of_strides = (uint8_t)mc.log_strides;
	sa.mp_wr.log_stride_size = (uint8_t)mc.log_stride;
	sa.comp_mask = IBV_EXP_CREATE_SRQ_CQ | IBV_EXP_CREATE_SRQ_TM | IBV_EXP_CREATE_SRQ_MP_WR;
	w->srq = ibv_exp_create_srq(s->ctx, &sa);
	if (!w->srq) {
		snprintf(err, errlen, "worker %u: ibv_exp_create_srq (tag matching, %u multi-packet WQEs of 2^%u x %u B) "
			 "failed on %s: %s", w->idx, mc.wqes, mc.log_strides, 1u << mc.log_stride, s->devname,
			 strerror(errno));
		return -1;
	}
	if (mp_post(s, w, 0, mc.wqes) != 0) {
		snprintf(err, errlen, "worker %u: cannot post %u multi-packet WQEs (see the log above)", w->idx, mc.wqes);
		return -1;
	}
	log_msg(LOG_INFO, "worker %u: multi-packet SRQ, %u WQEs x %u strides x %u B", w->idx, mc.wqes,
		1u << mc.log_strides, 1u << mc.log_stride);
	return 0;
}

/* Completions into mpring, then whatever is next in placement order out. */
static int mp_poll(struct tp_server *s, struct vb_worker *w, struct tp_arrival *a, int max)
{
	struct ibv_exp_wc wc[32];
	int n = ibv_exp_poll_cq(w->rcq, 32, wc, sizeof wc[0]);
	if (n < 0 && vb_w_may_log(w))
		log_msg(LOG_ERR, "worker %u: ibv_exp_poll_cq on the receive CQ failed (%d)", w->idx, n);
	for (int i = 0; i < n; i++) {
		const struct ibv_exp_wc *c = &wc[i];
		int r;
		if (c->status != IBV_WC_SUCCESS) {
			/* nothing was placed that the ring could order */
			w->recv_errors++;
			w->last_recv_error = ibv_wc_status_str(c->status);
			if (c->status != IBV_WC_WR_FLUSH_ERR && vb_w_may_log(w))
				log_msg(LOG_WARN, "worker %u: a multi-packet receive (WQE %" PRIu64 ", QP 0x%x) completed "
					"with %s (vendor error 0x%x)", w->idx, c->wr_id, c->qp_num, w->last_recv_error,
					c->vendor_err);
			continue;
		}
		if (c->exp_opcode == IBV_EXP_WC_RECV_NOP)
			r = mpring_fill(w->mp, c->wr_id, c->mp_wr.strides_offset);
		else if (c->exp_wc_flags & IBV_EXP_WC_MP_WR_MORE_IN_MSG)
			r = -2;
		else
			r = mpring_arrive(w->mp, c->wr_id, c->mp_wr.strides_offset, c->mp_wr.byte_len,
					  (c->exp_wc_flags & IBV_EXP_WC_MP_WR_CONSUMED) != 0);
		if (r != 0) {
			w->recv_errors++;
			w->last_recv_error = r == -2 ? "a request of several packets" : "an impossible completion";
			if (vb_w_may_log(w))
				log_msg(LOG_ERR, "worker %u: multi-packet completion (opcode %d, WQE %" PRIu64 ", stride %u, "
					"%u B, flags 0x%" PRIx64 ") not placed: %s", w->idx, (int)c->exp_opcode, c->wr_id,
					c->mp_wr.strides_offset, c->mp_wr.byte_len, (uint64_t)c->exp_wc_flags,
					r == -2 ? "requests must be one packet (slot size <= MTU)" : mpring_error(w->mp));
		}
	}
	int k = 0;
	struct mpring_msg m;
	while (k < max && mpring_next(w->mp, &m)) {
		uint64_t pos = m.ticket & s->mask;
		w->tick[pos] = m.ticket;
		w->ok[pos] = 1;
		w->len[pos] = m.len;
		w->moff[pos] = m.off;
		a[k].slot = m.ticket;
		a[k].voided = 0;
		k++;
	}
	w->arrivals += (uint64_t)k;
	return k;
}

static void mp_release(struct tp_server *s, struct vb_worker *w, uint64_t slot)
{
	w->tick[slot & s->mask] = UINT64_MAX;
	if (mpring_release(w->mp, slot) != 0) {
		if (vb_w_may_log(w))
			log_msg(LOG_ERR, "worker %u: %s; this is a transport bug", w->idx, mpring_error(w->mp));
		return;
	}
	uint64_t q;
	while (mpring_repost(w->mp, &q))
		if (mp_post(s, w, q, 1) != 0)
			break;
}

static const struct vb_recv_hooks mp_hooks = {
	.worker_init = mp_worker_init,
	.poll = mp_poll,
	.release = mp_release,
};

const struct vb_recv_hooks *const vb_mp_hooks = &mp_hooks;
