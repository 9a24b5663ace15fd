/*
 * vb_xrc.c - the XRC path of both sides (--xrc on the server; clients
 * follow it).  Each client unit (a thread, or a process with delegation)
 * opens its usual RC connection, which on an XRC server becomes the QP
 * every worker replies on, and one XRC connection in the IB port space
 * whose SENDs name a worker's XRC SRQ (remote_srqn): the server holds 2
 * QPs per unit instead of one per unit and worker.
 *
 * Server: the reply QP's lock, send CQ and buffer ring (vb_xreply_*), the
 * accept data listing every worker's SRQ number (vb_xrc_accept), and the
 * reply on the shared QP (vb_xrc_reply).  Client: vb_connect_xrc.  The
 * workers' XRC SRQs are made in vb_ring.c (worker_srq), the server's
 * second listener in vb_srv.c, and the XRC request connection is told
 * apart from an RC one in vb_srv_cm.c (cm_request).
 *
 * Status: written against rdma-core's XRC API and built with -Werror,
 * never run: rxe has no XRC, and there is no other device here
 * (docs/verbs.md, "XRC", says what to check on first use).  The verbs
 * suite checks the refusal on a device without XRC.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "vb_internal.h"

/* XRC reply QP: reaps its send completions (under c->xmu). */
void vb_xreply_reap(struct vb_sconn *c)
{
	struct ibv_wc wc[32];
	int n;
	while ((n = ibv_poll_cq(c->xcq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			if (atomic_load(&c->inflight))
				atomic_fetch_sub(&c->inflight, 1);
			if (wc[i].status != IBV_WC_SUCCESS && wc[i].status != IBV_WC_WR_FLUSH_ERR)
				log_msg(LOG_WARN, "a reply to client block %u failed: %s (vendor error 0x%x); the client's "
					"connection is broken", c->block, ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
		}
	}
}

/* XRC reply QP: its lock, send CQ, and one registered reply buffer per
 * send-queue entry.  0, or -1 with errno set. */
int vb_xreply_init(struct tp_server *s, struct vb_sconn *c)
{
	pthread_mutex_init(&c->xmu, NULL);
	c->xmu_init = 1;
	c->xposted = 0;
	c->xcq = ibv_create_cq(s->ctx, (int)c->sq_depth + 16, NULL, NULL, 0);
	if (!c->xcq)
		return -1;
	size_t bytes = (size_t)c->sq_depth * s->c.slot_size;
	c->xbuf = vb_alloc_pages(bytes);
	if (!c->xbuf) {
		errno = ENOMEM;
		return -1;
	}
	c->xmr = ibv_reg_mr(s->pd, c->xbuf, bytes, IBV_ACCESS_LOCAL_WRITE);
	return c->xmr ? 0 : -1;
}

/* Returns what vb_xreply_init made (any part of it). */
void vb_xreply_free(struct vb_sconn *c)
{
	vb_dereg_mr(c->xmr);
	free(c->xbuf);
	vb_destroy_cq(c->xcq);
	if (c->xmu_init)
		pthread_mutex_destroy(&c->xmu);
	c->xmr = NULL;
	c->xbuf = NULL;
	c->xcq = NULL;
	c->xmu_init = 0;
	c->xposted = 0;
}

/*
 * Accepts an XRC request connection whose receive QP exists: the accept
 * data carries the SRQ number of every worker (little-endian):
 *   off 0 u32 magic "aBQO", 4 u16 version, 6 u16 status, 8 u32 client block,
 *   12 u16 workers, 14 u16 flags (VB_AF_XRC), 16 u32 srqn[workers]
 * The client sends to worker w with remote_srqn = srqn[w].
 */
int vb_xrc_accept(struct tp_server *s, struct rdma_cm_event *ev, struct vb_sconn *c, const char *peer)
{
	uint8_t acc[VB_XACCEPT_LEN(VB_XRC_MAX_WORKERS)];
	memset(acc, 0, sizeof acc);
	vb_accept_head(acc, c->block, s->c.workers, VB_AF_XRC | (s->c.durable ? VB_AF_DURABLE : 0));
	for (unsigned i = 0; i < s->c.workers; i++)
		put32(acc + 16 + 4 * i, s->w[i].srqn);
	vb_accept_conn(s, ev, c, acc, VB_XACCEPT_LEN(s->c.workers), peer);
	return 0;
}

/*
 * A reply on an XRC client's reply QP, which every worker shares: under
 * the connection's lock, with its own send CQ and buffers.  Buffer k of
 * the ring is reused only after the WR that used it completed: at most
 * sq_depth - 1 replies are in flight and completions come in order.
 * Called with w->mu held (it keeps c alive); unlocks it.
 */
int vb_xrc_reply(struct tp_server *s, struct vb_worker *w, struct vb_sconn *c, uint32_t client_id,
		 const struct wire_resp *rr, const void *val, uint32_t len)
{
	int ret = -1;
	pthread_mutex_lock(&c->xmu);
	vb_xreply_reap(c);
	if (vb_reply_room(w, c, client_id, len) == 0) {
		uint8_t *b = c->xbuf + (size_t)(c->xposted % c->sq_depth) * s->c.slot_size;
		vb_encode_reply(b, rr, val);
		w->reply_inline += len <= c->max_inline;
		ret = vb_post_reply(w, c, client_id, b, len, c->xmr->lkey, len <= c->max_inline ? IBV_SEND_INLINE : 0,
				    c->xposted);
		if (ret == 0)
			c->xposted++;
	}
	pthread_mutex_unlock(&c->xmu);
	pthread_mutex_unlock(&w->mu);
	return ret;
}

/*
 * XRC: the server's accept on QP 0 said VB_AF_XRC, so QP 0 is the RC QP
 * every worker replies on.  Requests to all workers go over one XRC_SEND
 * QP, connected here in the IB port space; each SEND names its worker's
 * SRQ number (remote_srqn), which the accept data lists.  The server then
 * holds one XRC receive QP and one reply QP per client unit instead of one
 * QP per unit and worker.  Every worker's vb_cqp points at the shared QP
 * and CQs under one lock, so one owner at a time posts and polls.
 */
int vb_connect_xrc(struct vb_group *g, const struct tp_cli_conf *cc, uint64_t started, uint64_t deadline,
		       char *err, size_t errlen)
{
	const unsigned W = g->workers;
	struct rdma_cm_event *ev = NULL;
	if (W > VB_XRC_MAX_WORKERS) {
		snprintf(err, errlen, "the server at %s runs XRC with %u workers; at most %d are supported", g->endpoint,
			 W, VB_XRC_MAX_WORKERS);
		return -1;
	}
	if (!(g->da.device_cap_flags & IBV_DEVICE_XRC)) {
		snprintf(err, errlen, "the server at %s runs with verbs.xrc, but this client's device %s has no XRC "
			 "support; start the server without --xrc", g->endpoint, ibv_get_device_name(g->ctx->device));
		return -1;
	}
	char host[INET6_ADDRSTRLEN + 1], port[16];
	if (getnameinfo((struct sockaddr *)&g->dst, sizeof g->dst, host, sizeof host, NULL, 0, NI_NUMERICHOST) != 0) {
		snprintf(err, errlen, "cannot format the address of %s", g->endpoint);
		return -1;
	}
	snprintf(port, sizeof port, "%u", g->port);
	struct rdma_addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_flags = RAI_NUMERICHOST;
	hints.ai_port_space = RDMA_PS_IB;
	hints.ai_qp_type = IBV_QPT_XRC_SEND;   /* the CM's REQ then asks for an XRC target */
	int e = rdma_getaddrinfo(host, port, &hints, &res);
	if (e) {
		snprintf(err, errlen, "cannot resolve %s for its XRC connection: rdma_getaddrinfo: %s", g->endpoint,
			 gai_strerror(e));
		return -1;
	}
	/* resolves address and route synchronously (2 s each), then async */
	e = rdma_create_ep(&g->xid, res, NULL, NULL);
	rdma_freeaddrinfo(res);
	if (e) {
		g->xid = NULL;
		snprintf(err, errlen, "cannot reach %s for its XRC connection: %s", g->endpoint, strerror(errno));
		return -1;
	}
	if (g->xid->verbs != g->ctx) {
		snprintf(err, errlen, "the XRC connection to %s resolved to another RDMA device than its reply QP; "
			 "give the server an address that only one RDMA device of this host reaches", g->endpoint);
		return -1;
	}
	if (rdma_migrate_id(g->xid, g->ch) != 0) {
		snprintf(err, errlen, "rdma_migrate_id for the XRC connection: %s", strerror(errno));
		return -1;
	}
	unsigned sq = g->sq_depth < 2 * W ? 2 * W : g->sq_depth;
	if (sq > (unsigned)g->da.max_qp_wr)
		sq = (unsigned)g->da.max_qp_wr;
	g->xscq = ibv_create_cq(g->ctx, (int)sq + 16, NULL, NULL, 0);
	if (!g->xscq) {
		snprintf(err, errlen, "cannot create the XRC send CQ on %s: %s", ibv_get_device_name(g->ctx->device),
			 strerror(errno));
		return -1;
	}
	struct ibv_qp_init_attr_ex xa;
	memset(&xa, 0, sizeof xa);
	xa.qp_type = IBV_QPT_XRC_SEND;
	xa.send_cq = g->xscq;
	xa.recv_cq = g->xscq;
	xa.comp_mask = IBV_QP_INIT_ATTR_PD;
	xa.pd = g->pd;
	xa.cap.max_send_wr = sq;
	xa.cap.max_send_sge = 1;
	uint32_t xinl = 0;
	int qerr = vb_create_qp(g->xid, &xa, &xinl);
	if (qerr) {
		snprintf(err, errlen, "cannot create an XRC send QP on %s: %s", ibv_get_device_name(g->ctx->device),
			 strerror(qerr));
		return -1;
	}
	if (vb_hello_connect(g, cc, g->xid, 0, "connecting the XRC QP", started, deadline, &ev, err, errlen) != 0)
		return -1;
	g->xconnected = 1;
	const uint8_t *a = ev->param.conn.private_data;
	unsigned alen = ev->param.conn.private_data_len;
	uint32_t srqn[VB_XRC_MAX_WORKERS];
	int bad = !a || alen < VB_XACCEPT_LEN(W) || get32(a) != VB_ACCEPT_MAGIC || get16(a + 4) != VB_VERSION ||
		  get32(a + 8) != g->block || get16(a + 12) != W || !(get16(a + 14) & VB_AF_XRC);
	for (unsigned w = 0; !bad && w < W; w++)
		srqn[w] = get32(a + 16 + 4 * w);
	rdma_ack_cm_event(ev);
	if (bad) {
		snprintf(err, errlen, "the server at %s accepted the XRC connection with unexpected data (client id, "
			 "worker count or SRQ numbers); was it restarted while this client connected?", g->endpoint);
		return -1;
	}
	unsigned rnr_retry = 7, min_rnr = 0;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	if (ibv_query_qp(g->xid->qp, &qa, IBV_QP_RNR_RETRY, &qi) == 0)
		rnr_retry = qa.rnr_retry;
	min_rnr = g->min_rnr;   /* the server's receive QP sets the RNR timer */

	/* share: every worker's cqp uses the XRC QP; replies come on q[0]'s QP */
	struct vb_cqp *q0 = &g->q[0];
	g->rep_scq = q0->scq;
	g->rep_rcq = q0->rcq;
	pthread_mutex_init(&g->xmu, NULL);
	g->xmu_init = 1;
	g->xrc = 1;
	uint64_t ra = q0->read_addr;
	uint32_t rk = q0->read_rkey;
	for (unsigned w = 0; w < W; w++) {
		struct vb_cqp *q = &g->q[w];
		q->g = g;
		q->w = w;
		if (!q->mu_init) {
			pthread_mutex_init(&q->mu, NULL);
			q->mu_init = 1;
		}
		q->lk = &g->xmu;
		q->shared = 1;
		q->qp = g->xid->qp;
		q->scq = g->xscq;
		q->rcq = g->rep_rcq;
		q->srqn = srqn[w];
		q->sq_depth = sq / W;
		q->max_inline = xinl;
		q->read_addr = ra;      /* any registered server region serves the READ */
		q->read_rkey = rk;
		q->rnr_retry = rnr_retry;
		q->min_rnr = min_rnr;
	}
	return 0;
}
