/*
 * vb_srv_cm.c - the server's connection-manager thread: it checks each
 * connect request's hello, hands out client blocks, creates the QP on the
 * named worker's SRQ and CQs (or the XRC pair's QPs), publishes it in the
 * reply tables, accepts with the server's geometry, and tears connections
 * down when they close.  The byte layouts of hello, accept and reject are
 * in README.md ("Connection set-up").
 *
 * Guarantees: a request that is not an oqbench hello of this version, or
 * names a worker or client block that does not exist, is refused with a
 * reason the client prints verbatim; a QP is published to its worker
 * before the accept (the client may send as soon as it sees it); the CM
 * thread is the only other thread that touches a worker's connection table,
 * under the worker's mutex; a closing connection's QP is destroyed once
 * its replies drained, or after VB_ZOMBIE_NS.  The thread polls its channel
 * every 100 ms, so it stops promptly.  Shown by the verbs suite's connect,
 * refusal and delegation cases (8 vs 2 server QPs).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "vb_internal.h"

/* The workers whose reply tables list c: [*first, *last).  An XRC reply
 * QP is in every worker's table, an RC QP in its own worker's, an XRC
 * receive QP in none. */
static void conn_tables(const struct tp_server *s, const struct vb_sconn *c, unsigned *first, unsigned *last)
{
	*first = c->kind == CK_XREPLY ? 0 : c->worker;
	*last = c->kind == CK_XREPLY ? s->c.workers : c->kind == CK_RC ? c->worker + 1 : c->worker;
}

/* Removes c from its worker's table and starts its teardown. */
void vb_conn_close(struct tp_server *s, struct vb_sconn *c)
{
	if (c->state != CS_LIVE)
		return;
	uint32_t ci = (uint32_t)(c - s->conns);
	unsigned first, last;
	conn_tables(s, c, &first, &last);
	for (unsigned i = first; i < last; i++) {
		struct vb_worker *w = &s->w[i];
		pthread_mutex_lock(&w->mu);
		if (c->block < w->nblock && w->by_block[c->block] == ci + 1)
			w->by_block[c->block] = 0;
		pthread_mutex_unlock(&w->mu);
	}
	c->state = CS_CLOSING;
	/* Moves the QP to the error state: replies still queued complete
	 * with a flush status, which returns their buffers to the worker. */
	rdma_disconnect(c->id);
	if (c->sw_open) {
		/* nothing lands through an errored QP: a seqwrite quarantine
		 * need not wait for this connection any more */
		pthread_mutex_lock(&s->w[c->worker].mu);
		c->sw_open = 0;
		pthread_mutex_unlock(&s->w[c->worker].mu);
	}
	if (c->kind == CK_RC && c->w1ring >= 0)
		vb_w1_close(&s->w[c->worker], c->w1ring);
	c->closing_since = clock_ns();
	s->disconnects++;
	atomic_fetch_sub(&s->qps_live, 1);
	if (c->kind == CK_RC)
		atomic_fetch_sub(&s->w[c->worker].qps, 1);
	else if (c->kind == CK_XREPLY)
		s->qps_xreply--;
	else
		s->qps_xrecv--;
}

/* Destroys closing connections whose replies have drained (or after
 * VB_ZOMBIE_NS, or all of them when force is set). */
void vb_reap_zombies(struct tp_server *s, int force)
{
	uint64_t now = clock_ns();
	for (unsigned i = 0; i < s->conns_hi; i++) {
		struct vb_sconn *c = &s->conns[i];
		if (c->state != CS_CLOSING)
			continue;
		if (c->kind == CK_XREPLY) {
			/* no worker finds it any more: the CM thread reaps it */
			pthread_mutex_lock(&c->xmu);
			vb_xreply_reap(c);
			pthread_mutex_unlock(&c->xmu);
		}
		if (!force && atomic_load(&c->inflight) && now - c->closing_since < VB_ZOMBIE_NS)
			continue;
		if (!force && atomic_load(&c->inflight))
			log_msg(LOG_WARN, "worker %u: %u replies to client block %u never completed after its "
				"disconnect; destroying its QP anyway", c->worker, atomic_load(&c->inflight), c->block);
		vb_destroy_id(c->id);
		c->id = NULL;
		if (c->kind == CK_XREPLY)
			vb_xreply_free(c);
		atomic_fetch_add(&c->gen, 1);
		atomic_store(&c->inflight, 0);
		c->state = CS_FREE;
		s->cfree[s->ncfree++] = i;
	}
}

static void peer_str(struct rdma_cm_id *id, char *buf, size_t len)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	if (sa)
		vb_host_str(sa, buf, len);
	else
		snprintf(buf, len, "?");
}

/*
 * Accepts c (its QP exists and is published) with acc as the accept data,
 * sets the responder's RNR timer and counts it; a failed accept closes c.
 */
void vb_accept_conn(struct tp_server *s, struct rdma_cm_event *ev, struct vb_sconn *c, const uint8_t *acc,
			unsigned acc_len, const char *peer)
{
	struct rdma_cm_id *id = ev->id;
	/* The CM reports the request from this side's point of view: the
	 * client's initiator depth arrives as our responder_resources.  Zero
	 * here would leave the client's durable READs queued forever. */
	unsigned rr = ev->param.conn.responder_resources;
	if (rr > (unsigned)s->da.max_qp_rd_atom)
		rr = (unsigned)s->da.max_qp_rd_atom;
	struct rdma_conn_param cp = {
		.private_data = acc, .private_data_len = (uint8_t)acc_len,
		.responder_resources = (uint8_t)rr, .initiator_depth = 0,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	if (rdma_accept(id, &cp) != 0) {
		log_msg(LOG_ERR, "rdma_accept for %s failed: %s", peer, strerror(errno));
		vb_conn_close(s, c);
		return;
	}
	/* rdma_cm leaves min_rnr_timer at 0 (655 ms); RTS -> RTS may set it.
	 * It matters on the responder: an RC QP, or an XRC receive QP. */
	int e = vb_set_min_rnr(id->qp, s->c.min_rnr_timer);
	if (e && !s->rnr_set_failed++)
		log_msg(LOG_WARN, "cannot set min_rnr_timer %u on the server QPs (%s); RNR waits use the "
			"device default", s->c.min_rnr_timer, strerror(e));
	s->conn_total++;
	if (c->delegated)
		s->conn_delegated++;
	unsigned live = atomic_load(&s->qps_live);
	if (live > s->qps_peak)
		s->qps_peak = live;
	log_msg(LOG_DEBUG, "accepted %s: %s, client block %u, pid %u%s", peer,
		c->kind == CK_XRECV ? "XRC requests" : c->kind == CK_XREPLY ? "XRC replies" : "RC", c->block, c->pid,
		c->delegated ? " (delegated)" : "");
}


/* c's QP on id: an XRC target QP (no queues of its own: the XRC domain's
 * SRQs), an XRC reply QP (its own CQ and buffers; it receives nothing),
 * or an RC QP on worker w's SRQ and CQs.  0 or an errno. */
static int conn_qp(struct tp_server *s, struct vb_sconn *c, struct vb_worker *w, struct rdma_cm_id *id)
{
	if (c->kind == CK_XRECV) {
		struct ibv_qp_init_attr_ex xa;
		memset(&xa, 0, sizeof xa);
		xa.qp_type = IBV_QPT_XRC_RECV;
		xa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD;
		xa.pd = s->pd;
		xa.xrcd = s->xrcd;
		c->max_inline = 0;
		return rdma_create_qp_ex(id, &xa) ? (errno ? errno : EINVAL) : 0;
	}
	if (c->kind == CK_XREPLY) {
		if (vb_xreply_init(s, c) != 0)
			return errno ? errno : ENOMEM;
		/* an RC QP cannot use an XRC SRQ */
		return vb_create_rc_qp(id, s->pd, c->xcq, c->xcq, NULL, c->sq_depth, &c->max_inline);
	}
	return vb_create_rc_qp(id, s->pd, w->scq, w->rcq, w->srq, c->sq_depth, &c->max_inline);
}

/* Lists c (connection ci) in the reply tables of its workers, growing
 * them as needed.  1, or 0 if a table could not grow (out of memory). */
static int conn_publish(struct tp_server *s, struct vb_sconn *c, uint32_t ci)
{
	int mapped = 1;
	unsigned first, last;
	conn_tables(s, c, &first, &last);
	for (unsigned i = first; i < last; i++) {
		struct vb_worker *wi = &s->w[i];
		pthread_mutex_lock(&wi->mu);
		if (c->block >= wi->nblock) {
			uint32_t nb = wi->nblock ? wi->nblock : 64;
			while (nb <= c->block)
				nb *= 2;
			uint32_t *p = realloc(wi->by_block, (size_t)nb * sizeof *p);
			if (p) {
				memset(p + wi->nblock, 0, (size_t)(nb - wi->nblock) * sizeof *p);
				wi->by_block = p;
				wi->nblock = nb;
			}
		}
		if (c->block < wi->nblock)
			wi->by_block[c->block] = ci + 1;
		else
			mapped = 0;
		pthread_mutex_unlock(&wi->mu);
	}
	return mapped;
}

/* The accept data of an RC connection (README.md, "accept"). */
static void rc_accept(struct tp_server *s, struct rdma_cm_event *ev, struct vb_sconn *c, struct vb_worker *w,
		      const char *peer)
{
	uint8_t acc[VB_ACCEPT_LEN];
	memset(acc, 0, sizeof acc);
	vb_accept_head(acc, c->block, s->c.workers,
		       (s->c.durable ? VB_AF_DURABLE : 0) | (s->mode == RM_SLOT_RING ? VB_AF_SLOT_RING : 0) |
		       (w->pmem_file ? VB_AF_PMEM : 0) | (c->kind == CK_XREPLY ? VB_AF_XRC : 0) |
		       (c->w1ring >= 0 ? VB_AF_WRITE1 : 0) | (s->os == VB_OS_SEQWRITE ? VB_AF_SEQWRITE : 0));
	put32(acc + 16, s->c.slot_size);
	put32(acc + 20, s->c.ring_slots);
	put64(acc + 24, (uint64_t)(uintptr_t)&w->hdr->flush_word);
	put32(acc + 32, w->hdr_mr->rkey);
	acc[36] = (uint8_t)s->c.min_rnr_timer;
	put64(acc + 40, s->sys_hash);
	memcpy(acc + 48, s->system, 16);
	put32(acc + 64, (uint32_t)getpid());
	if (c->w1ring >= 0)
		vb_w1_accept(s, w, c->w1ring, acc);
	if (s->os == VB_OS_SEQWRITE)
		vb_sw_accept(s, w, acc);
	vb_accept_conn(s, ev, c, acc, VB_ACCEPT_LEN, peer);
}

/* The first 16 bytes of every accept data: magic, version, status 0,
 * client block, workers, flags (VB_AF_*). */
void vb_accept_head(uint8_t *acc, uint32_t block, unsigned workers, unsigned flags)
{
	put32(acc, VB_ACCEPT_MAGIC);
	put16(acc + 4, VB_VERSION);
	put16(acc + 6, 0);
	put32(acc + 8, block);
	put16(acc + 12, (uint16_t)workers);
	put16(acc + 14, (uint16_t)flags);
}

/*
 * Handles a connect request: checks the hello, creates the QP on the
 * named worker's SRQ and CQs, publishes it to the worker and accepts.
 * Returns 1 if the request was refused (the caller destroys the id after
 * acking the event), 0 if accepted.
 */
static int cm_request(struct tp_server *s, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	const uint8_t *h = ev->param.conn.private_data;
	unsigned hl = ev->param.conn.private_data_len;
	char why[VB_REJECT_LEN - 8] = "", peer[64];
	uint16_t code = 0;
	unsigned worker = 0;
	uint32_t block = 0, ci = 0;
	struct vb_sconn *c = NULL;

	peer_str(id, peer, sizeof peer);
	if (!h || hl < VB_HELLO_LEN || get32(h) != VB_HELLO_MAGIC) {
		code = 1;
		snprintf(why, sizeof why, "%s", h && hl >= 4 && get32(h) == VB_CANARY_MAGIC ?
			 "this is an oqb-server, not a canary echoer: ping an oqb-vfloor --serve" :
			 "not an oqbench verbs client (the connect request has no oqbench hello)");
		goto reject;
	}
	if (get16(h + 4) != VB_VERSION) {
		code = 2;
		snprintf(why, sizeof why, "client speaks verbs protocol %u, this server %u; use the same oqbench "
			 "build on both sides", get16(h + 4), VB_VERSION);
		goto reject;
	}
	unsigned flags = get16(h + 6);
	worker = get16(h + 12);
	block = get32(h + 8);
	/* With XRC a client unit opens two connections: an RC one here (the
	 * QP every worker replies on; it comes first and gets the client id)
	 * and an XRC one on listen_x, whose SENDs name a worker's SRQ. */
	int xreq = s->listen_x && ev->listen_id == s->listen_x;
	int xreply = !xreq && s->xrcd;
	if (xreq || xreply)
		worker = 0;
	if (xreq && block == 0) {
		code = 8;
		snprintf(why, sizeof why, "an XRC request connection must name the client id its reply connection got");
		goto reject;
	}
	if (worker >= s->c.workers) {
		code = 3;
		snprintf(why, sizeof why, "worker %u does not exist: this server has %u worker(s)", worker,
			 s->c.workers);
		goto reject;
	}
	if (block == 0) {
		if (s->next_block > VB_MAX_BLOCK) {
			code = 4;
			snprintf(why, sizeof why, "client ids are used up; restart the server");
			goto reject;
		}
		block = s->next_block++;
	} else if (block >= s->next_block) {
		code = 5;
		snprintf(why, sizeof why, "unknown client id block %u (was the server restarted? reconnect)", block);
		goto reject;
	}
	if (!s->ncfree) {
		code = 6;
		snprintf(why, sizeof why, "too many connections (%d); close some clients or use --delegation",
			 VB_MAX_CONNS);
		goto reject;
	}
	ci = s->cfree[--s->ncfree];
	if (ci + 1 > s->conns_hi)
		__atomic_store_n(&s->conns_hi, ci + 1, __ATOMIC_RELEASE);   /* workers read it (vb_seqwrite.c) */
	c = &s->conns[ci];
	struct vb_worker *w = &s->w[worker];
	c->kind = xreq ? CK_XRECV : xreply ? CK_XREPLY : CK_RC;
	c->worker = worker;
	c->block = block;
	c->pid = get32(h + 20);
	c->thread = get32(h + 24);
	c->delegated = (flags & VB_HF_DELEGATED) != 0;
	c->w1ring = -1;
	c->serial = atomic_fetch_add(&s->conn_serial, 1) + 1;
	if (s->os != VB_OS_NONE && c->delegated) {
		s->cfree[s->ncfree++] = ci;
		code = 8;
		snprintf(why, sizeof why, "%s: one client thread per QP, so delegation "
			 "does not apply; run it without --delegation", s->system);
		goto reject;
	}
	if (s->os == VB_OS_WRITE1 && (c->w1ring = vb_w1_take(s, w)) < 0) {
		s->cfree[s->ncfree++] = ci;
		code = 9;
		snprintf(why, sizeof why, "worker %u has no free write1 ring: at most %d client threads per worker; "
			 "run fewer client threads", worker, VB_W1_RINGS);
		goto reject;
	}
	c->sq_depth = c->delegated ? VB_SRV_SQ_DELEG : VB_SRV_SQ;
	if (c->sq_depth > (uint32_t)s->da.max_qp_wr)
		c->sq_depth = (uint32_t)s->da.max_qp_wr;
	c->established = 0;
	c->stalled = 0;
	atomic_store(&c->inflight, 0);

	int qerr = conn_qp(s, c, w, id);
	if (qerr) {
		vb_w1_close(w, c->w1ring);
		if (c->kind == CK_XREPLY)
			vb_xreply_free(c);
		s->cfree[s->ncfree++] = ci;
		code = 7;
		snprintf(why, sizeof why, "the server cannot create a%s QP: %s", c->kind == CK_XRECV ? "n XRC receive" :
			 c->kind == CK_XREPLY ? "n XRC reply" : "", strerror(qerr));
		log_msg(LOG_ERR, "worker %u: creating a QP for %s failed: %s (max_qp %d)", worker, peer,
			strerror(qerr), s->da.max_qp);
		goto reject;
	}
	c->id = id;
	id->context = c;

	/* Publish before accepting: the client may send (and expect a reply)
	 * as soon as it sees the accept. */
	int mapped = conn_publish(s, c, ci);
	if (s->os == VB_OS_SEQWRITE && c->kind == CK_RC) {
		pthread_mutex_lock(&w->mu);
		c->sw_landed = 0;
		c->sw_open = 1;
		pthread_mutex_unlock(&w->mu);
	}
	c->state = CS_LIVE;
	if (c->kind == CK_RC)
		atomic_fetch_add(&w->qps, 1);
	else if (c->kind == CK_XREPLY)
		s->qps_xreply++;
	else
		s->qps_xrecv++;
	atomic_fetch_add(&s->qps_live, 1);
	if (!mapped) {
		vb_conn_close(s, c);
		log_msg(LOG_ERR, "out of memory for the connection table of worker %u", worker);
		return 0;   /* the id is destroyed by the zombie reaper */
	}
	if (c->kind == CK_XRECV)
		return vb_xrc_accept(s, ev, c, peer);

	rc_accept(s, ev, c, w, peer);
	return 0;

reject:
	s->conn_rejected++;
	snprintf(s->last_reject, sizeof s->last_reject, "%s", why);
	log_msg(LOG_WARN, "refused a connection from %s: %s", peer, why);
	vb_reject(id, VB_VERSION, code, why);
	return 1;
}

static void cm_event(struct tp_server *s, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	enum rdma_cm_event_type type = ev->event;
	int status = ev->status;
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		int refused = cm_request(s, ev);
		rdma_ack_cm_event(ev);
		if (refused)
			rdma_destroy_id(id);
		return;
	}
	struct vb_sconn *c = id && id != s->listen && id->context != (void *)s ? id->context : NULL;
	rdma_ack_cm_event(ev);
	switch (type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c)
			c->established = 1;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		if (c) {
			if (type != RDMA_CM_EVENT_DISCONNECTED)
				log_msg(LOG_WARN, "connection of client block %u to worker %u failed: %s (status %d)",
					c->block, c->worker, rdma_event_str(type), status);
			vb_conn_close(s, c);
		}
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		log_msg(LOG_ERR, "RDMA device %s was removed; the server cannot go on", s->devname);
		break;
	default:
		log_msg(LOG_DEBUG, "rdma_cm event %s (status %d)", rdma_event_str(type), status);
		break;
	}
}

void *vb_cm_main(void *arg)
{
	struct tp_server *s = arg;
	while (!atomic_load(&s->stop)) {
		if (vb_wait_readable(s->ch->fd, 100) > 0) {
			struct rdma_cm_event *ev;
			while (!atomic_load(&s->stop) && rdma_get_cm_event(s->ch, &ev) == 0)
				cm_event(s, ev);
		}
		vb_reap_zombies(s, 0);
	}
	return NULL;
}
