/*
 * vb_canary.c - the verbs canary: a raw RC SEND ping-pong between two
 * hosts' RDMA devices, with nothing of a system in its path (no SRQ, no
 * wire format, no executor).  `oqb-vfloor` runs it, and `oqb run` runs
 * that beside every trial on transport verbs, as oqb-floor's cache-line
 * ping-pong is beside every trial on shm: a number that moves when the
 * machines or the fabric move, and only then (docs/trust.md).
 *
 * Protocol.  rdma_cm, RDMA_PS_TCP, one RC QP a side with a CQ for its
 * sends and one for its receives.  The pinger's connect private data is a
 * 16-byte hello (u32 magic "cBQO", u16 version, u16 0, u32 message size,
 * u32 0); the echoer accepts with u32 magic "CBQO", u16 version, or
 * rejects with the transport's reject layout (u32 "rBQO", u16 version,
 * u16 code, text), which the pinger prints.  A round: the pinger posts one SEND of `size` bytes
 * (inline where the device allows it) and polls its CQ until the receive
 * of the echo completes; the echoer, polling its CQ, answers every
 * receive with a SEND of the bytes it got and reposts the receive.  Both
 * keep VB_CANARY_RECVS receives posted and signal one SEND in
 * VB_CANARY_SIGNAL, so a round costs one post and one completion a side,
 * as perftest's ib_send_lat does.
 *
 * Guarantees: every wait is bounded (connecting by connect_s, a round by
 * VB_CANARY_ROUND_MS, a whole ping by max_ms plus that); a request that is
 * not a canary hello of this version is refused with a reason, and an
 * oqb-server's accept, or anything else, is refused on the pinger's side
 * with one; the echoer serves one pinger at a time (a second is refused as
 * busy) and goes back to listening when it disconnects.  Shown by the
 * verbs suite (tests/verbs/guest-suite.sh: the canary cases).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hist.h"
#include "tp_verbs.h"
#include "vb_internal.h"

#define VB_CANARY_ACCEPT  0x4f514243u   /* "CBQO": an echoer's accept */
#define VB_CANARY_VERSION 1
#define VB_CANARY_HELLO   16
#define VB_CANARY_RECVS   16            /* receives kept posted per side */
#define VB_CANARY_SIGNAL  16            /* one signaled SEND in this many */
#define VB_CANARY_SQ      (2 * VB_CANARY_SIGNAL)
#define VB_CANARY_MAX     4096          /* largest message */
#define VB_CANARY_ROUND_MS 5000         /* a round with no echo this long: the peer is gone */

/* One side's verbs objects for one connection. */
struct cside {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_mr *mr;
	uint8_t *buf;             /* VB_CANARY_RECVS receive buffers, then one send buffer */
	uint32_t max_inline;
	unsigned unsignaled;      /* SENDs since the last signaled one */
	unsigned sq_used;         /* SENDs not yet known complete */
};

static void side_free(struct cside *c)
{
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	vb_dereg_mr(c->mr);
	vb_destroy_cq(c->scq);
	vb_destroy_cq(c->rcq);
	vb_dealloc_pd(c->pd);
	free(c->buf);
	c->mr = NULL;
	c->scq = c->rcq = NULL;
	c->pd = NULL;
	c->buf = NULL;
}

static uint8_t *recv_buf(const struct cside *c, unsigned i)
{
	return c->buf + (size_t)i * VB_CANARY_MAX;
}

static int post_recv(struct cside *c, unsigned i)
{
	struct ibv_sge sg = { .addr = (uintptr_t)recv_buf(c, i), .length = VB_CANARY_MAX, .lkey = c->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sg, .num_sge = 1 }, *bad;
	return ibv_post_recv(c->id->qp, &wr, &bad);
}

/* PD, CQ, buffers and the QP on c->id, with every receive posted. */
static int side_init(struct cside *c, char *err, size_t errlen)
{
	struct ibv_context *ctx = c->id->verbs;
	const char *dev = ibv_get_device_name(ctx->device);
	c->pd = ibv_alloc_pd(ctx);
	c->scq = c->pd ? ibv_create_cq(ctx, VB_CANARY_SQ, NULL, NULL, 0) : NULL;
	c->rcq = c->scq ? ibv_create_cq(ctx, VB_CANARY_RECVS, NULL, NULL, 0) : NULL;
	c->buf = vb_alloc_pages((size_t)(VB_CANARY_RECVS + 1) * VB_CANARY_MAX);
	if (!c->pd || !c->scq || !c->rcq || !c->buf) {
		snprintf(err, errlen, "canary: cannot set up %s (protection domain, CQ or buffers): %s", dev,
			 strerror(errno ? errno : ENOMEM));
		return -1;
	}
	c->mr = ibv_reg_mr(c->pd, c->buf, (size_t)(VB_CANARY_RECVS + 1) * VB_CANARY_MAX, IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr) {
		snprintf(err, errlen, "canary: cannot register %d KiB on %s: %s%s", (VB_CANARY_RECVS + 1) * 4, dev,
			 strerror(errno), errno == ENOMEM ? " (raise the locked-memory limit: ulimit -l unlimited)" : "");
		return -1;
	}
	struct ibv_qp_init_attr_ex a;
	memset(&a, 0, sizeof a);
	a.send_cq = c->scq;
	a.recv_cq = c->rcq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = VB_CANARY_SQ;
	a.cap.max_recv_wr = VB_CANARY_RECVS;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = c->pd;
	int e = vb_create_qp(c->id, &a, &c->max_inline);
	if (e) {
		snprintf(err, errlen, "canary: cannot create an RC QP on %s: %s", dev, strerror(e));
		return -1;
	}
	for (unsigned i = 0; i < VB_CANARY_RECVS; i++)
		if ((e = post_recv(c, i)) != 0) {
			snprintf(err, errlen, "canary: cannot post receives on %s: %s", dev, strerror(e));
			return -1;
		}
	return 0;
}

/* Reaps the send CQ: 0, or -1 with err set on a failed SEND. */
static int reap_sends(struct cside *c, const char *peer, char *err, size_t errlen)
{
	struct ibv_wc wc[4];
	int n = ibv_poll_cq(c->scq, 4, wc);
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			snprintf(err, errlen, "canary: a SEND to %s failed: %s", peer, ibv_wc_status_str(wc[i].status));
			return -1;
		}
		c->sq_used -= wc[i].wr_id < c->sq_used ? (unsigned)wc[i].wr_id : c->sq_used;
	}
	if (n < 0) {
		snprintf(err, errlen, "canary: polling the send CQ failed (%d)", n);
		return -1;
	}
	return 0;
}

/*
 * Posts one SEND of len bytes from src (copied to the send buffer; inline
 * where the device allows).  One in VB_CANARY_SIGNAL is signaled, and its
 * wr_id says how many SENDs its completion stands for; completions are
 * reaped here only when the send queue is full (one poll in about
 * VB_CANARY_SIGNAL rounds, instead of one on every pass of a polling
 * loop), waiting for at most VB_CANARY_ROUND_MS.
 * 0, or -1 with err set.
 */
static int post_send(struct cside *c, const void *src, uint32_t len, const char *peer, char *err, size_t errlen)
{
	uint64_t t0 = 0;
	while (c->sq_used >= VB_CANARY_SQ) {
		if (reap_sends(c, peer, err, errlen) != 0)
			return -1;
		uint64_t now = clock_ns();
		if (!t0)
			t0 = now;
		else if (now - t0 > (uint64_t)VB_CANARY_ROUND_MS * 1000000) {
			snprintf(err, errlen, "canary: %s acknowledged no SEND within %d ms", peer, VB_CANARY_ROUND_MS);
			return -1;
		}
	}
	uint8_t *sb = recv_buf(c, VB_CANARY_RECVS);
	memcpy(sb, src, len);
	struct ibv_sge sg = { .addr = (uintptr_t)sb, .length = len, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;
	if (len <= c->max_inline)
		wr.send_flags |= IBV_SEND_INLINE;
	if (++c->unsignaled >= VB_CANARY_SIGNAL) {
		wr.send_flags |= IBV_SEND_SIGNALED;
		wr.wr_id = c->unsignaled;
		c->unsignaled = 0;
	}
	c->sq_used++;
	int e = ibv_post_send(c->id->qp, &wr, &bad);
	if (e)
		snprintf(err, errlen, "canary: posting a SEND to %s failed: %s", peer, strerror(e));
	return e ? -1 : 0;
}

/*
 * Polls the receive CQ once: each completed receive's buffer index and
 * length into got[]/len[] (up to 8); returns how many, or -1 with err set
 * on a failed one.
 */
static int poll_recv(struct cside *c, unsigned *got, uint32_t *len, const char *peer, char *err, size_t errlen)
{
	struct ibv_wc wc[8];
	int n = ibv_poll_cq(c->rcq, 8, wc);
	if (n < 0) {
		snprintf(err, errlen, "canary: polling the receive CQ failed (%d)", n);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			snprintf(err, errlen, "canary: a receive from %s failed: %s", peer, ibv_wc_status_str(wc[i].status));
			return -1;
		}
		got[i] = (unsigned)wc[i].wr_id;
		len[i] = wc[i].byte_len;
	}
	return n;
}

/* --- the pinger ------------------------------------------------------ */

/* Waits for event `want` on ch until deadline: 0 with *out, or -1 with err. */
static int wait_event(struct rdma_event_channel *ch, enum rdma_cm_event_type want, uint64_t deadline,
		      const char *ep, const char *doing, struct rdma_cm_event **out, char *err, size_t errlen)
{
	struct rdma_cm_event *ev;
	int r = vb_cm_next(ch, deadline, &ev);
	if (r < 0) {
		snprintf(err, errlen, "canary: cannot read rdma_cm events while %s: %s", doing, strerror(errno));
		return -1;
	}
	if (r > 0) {
		snprintf(err, errlen, "canary: cannot connect to %s: no answer while %s (is oqb-vfloor --serve "
			 "running there, and is the address reachable over RDMA?)", ep, doing);
		return -1;
	}
	if (ev->event == want && ev->status == 0) {
		*out = ev;
		return 0;
	}
	char why[VB_REJECT_LEN];
	if (vb_reject_text(ev, why, sizeof why))
		snprintf(err, errlen, "canary: %s refused the connection: %s", ep, why);
	else
		snprintf(err, errlen, "canary: cannot connect to %s: %s (status %d) while %s (is oqb-vfloor --serve "
			 "running there, on that port, and is the address reachable over RDMA?)", ep,
			 rdma_event_str(ev->event), ev->status, doing);
	rdma_ack_cm_event(ev);
	return -1;
}

int vb_canary_ping(const char *endpoint, const struct vb_canary_conf *cf, struct hist *h, struct vb_canary_info *info,
		   char *err, size_t errlen)
{
	struct sockaddr_storage dst;
	unsigned port;
	char ep[160];
	struct cside c;
	struct rdma_event_channel *ch = NULL;
	struct rdma_cm_event *ev = NULL;
	int rc = -1, connected = 0;

	memset(&c, 0, sizeof c);
	memset(info, 0, sizeof *info);
	if (cf->size < 1 || cf->size > VB_CANARY_MAX) {
		snprintf(err, errlen, "canary: --size %u: give a message size from 1 to %d bytes", cf->size, VB_CANARY_MAX);
		return -1;
	}
	if (vb_canon_endpoint(endpoint, &dst, &port, ep, sizeof ep, err, errlen) != 0)
		return -1;
	uint64_t t0 = clock_ns(), deadline = t0 + (uint64_t)(cf->connect_s * 1e9);
	if (!(ch = vb_cm_channel(err, errlen)))
		return -1;
	if (rdma_create_id(ch, &c.id, NULL, RDMA_PS_TCP) != 0) {
		snprintf(err, errlen, "canary: rdma_create_id: %s", strerror(errno));
		goto out;
	}
	int ms = (int)(cf->connect_s * 1000) > 1 ? (int)(cf->connect_s * 1000) : 1;
	if (rdma_resolve_addr(c.id, NULL, (struct sockaddr *)&dst, ms) != 0) {
		snprintf(err, errlen, "canary: cannot connect to %s: rdma_resolve_addr: %s (is the address on a network "
			 "an RDMA device can reach?)", ep, strerror(errno));
		goto out;
	}
	if (wait_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, ep, "resolving the address", &ev, err, errlen))
		goto out;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(c.id, ms) != 0) {
		snprintf(err, errlen, "canary: cannot connect to %s: rdma_resolve_route: %s", ep, strerror(errno));
		goto out;
	}
	if (wait_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, ep, "resolving the route", &ev, err, errlen))
		goto out;
	rdma_ack_cm_event(ev);
	if (side_init(&c, err, errlen) != 0)
		goto out;
	snprintf(info->device, sizeof info->device, "%s", ibv_get_device_name(c.id->verbs->device));
	info->inline_send = cf->size <= c.max_inline;
	uint8_t hello[VB_CANARY_HELLO];
	memset(hello, 0, sizeof hello);
	put32(hello, VB_CANARY_MAGIC);
	put16(hello + 4, VB_CANARY_VERSION);
	put32(hello + 8, cf->size);
	struct rdma_conn_param cp = { .private_data = hello, .private_data_len = sizeof hello,
				      .retry_count = 7, .rnr_retry_count = 7 };
	if (rdma_connect(c.id, &cp) != 0) {
		snprintf(err, errlen, "canary: cannot connect to %s: rdma_connect: %s", ep, strerror(errno));
		goto out;
	}
	if (wait_event(ch, RDMA_CM_EVENT_ESTABLISHED, deadline, ep, "connecting", &ev, err, errlen))
		goto out;
	connected = 1;
	const uint8_t *acc = ev->param.conn.private_data;
	int ok = acc && ev->param.conn.private_data_len >= 6 && get32(acc) == VB_CANARY_ACCEPT &&
		 get16(acc + 4) == VB_CANARY_VERSION;
	rdma_ack_cm_event(ev);
	if (!ok) {
		snprintf(err, errlen, "canary: %s accepted, but not as a canary echoer of this version; start "
			 "oqb-vfloor --serve there, from the same oqbench build as this pinger", ep);
		goto out;
	}

	/* The rounds.  The message's first 8 bytes carry the round number,
	 * so an echo is matched to its round. */
	uint8_t msg[VB_CANARY_MAX];
	memset(msg, 0xa5, sizeof msg);
	uint64_t started = clock_ns();
	uint64_t end = cf->max_ms > 0 ? started + (uint64_t)(cf->max_ms * 1e6) : UINT64_MAX;
	long r;
	for (r = 0; r < cf->rounds + cf->warmup; r++) {
		uint64_t tag = (uint64_t)r;
		memcpy(msg, &tag, sizeof tag < cf->size ? sizeof tag : cf->size);
		uint64_t a = clock_ns();
		if (a >= end && r > cf->warmup)
			break;
		if (post_send(&c, msg, cf->size, ep, err, errlen) != 0)
			goto out;
		unsigned got[8];
		uint32_t len[8];
		int n;
		for (;;) {
			if ((n = poll_recv(&c, got, len, ep, err, errlen)) < 0)
				goto out;
			if (n)
				break;
			if (clock_ns() - a > (uint64_t)VB_CANARY_ROUND_MS * 1000000) {
				snprintf(err, errlen, "canary: no echo from %s within %d ms (round %ld): the echoer stopped",
					 ep, VB_CANARY_ROUND_MS, r);
				goto out;
			}
		}
		uint64_t b = clock_ns();
		for (int k = 0; k < n; k++) {
			uint64_t back = 0;
			memcpy(&back, recv_buf(&c, got[k]), sizeof back < cf->size ? sizeof back : cf->size);
			if (len[k] != cf->size || (cf->size >= sizeof back && back != tag)) {
				snprintf(err, errlen, "canary: %s echoed %u B (round %llu), expected %u B (round %ld)", ep,
					 len[k], (unsigned long long)back, cf->size, r);
				goto out;
			}
			int e2 = post_recv(&c, got[k]);
			if (e2) {
				snprintf(err, errlen, "canary: reposting a receive failed: %s", strerror(e2));
				goto out;
			}
		}
		if (r >= cf->warmup)
			hist_record(h, b - a);
	}
	info->rounds = r > cf->warmup ? r - cf->warmup : 0;
	info->took_ns = clock_ns() - started;
	rc = 0;
out:
	if (connected)
		rdma_disconnect(c.id);
	side_free(&c);
	if (c.id)
		rdma_destroy_id(c.id);
	vb_destroy_channel(ch);
	return rc;
}

/* --- the echoer ------------------------------------------------------ */

struct vb_canary_srv {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct cside c;            /* the pinger being served (c.id NULL: none) */
	int live;                  /* its connection is established */
	char peer[80];
};

struct vb_canary_srv *vb_canary_listen(const char *addr, unsigned port, char *endpoint, size_t eplen, char *err,
				       size_t errlen)
{
	struct vb_canary_srv *s = calloc(1, sizeof *s);
	char spec[160];
	struct sockaddr_storage sa;
	unsigned p;
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (!addr || !*addr) {
		snprintf(err, errlen, "canary: give --addr, an IP address of an RDMA device to listen on");
		goto fail;
	}
	/* the endpoint parser wants a port; the one asked for is set after */
	snprintf(spec, sizeof spec, strchr(addr, ':') ? "verbs:[%s]:%u" : "verbs:%s:%u", addr, port ? port : 1);
	if (vb_canon_endpoint(spec, &sa, &p, endpoint, eplen, err, errlen) != 0)
		goto fail;
	((struct sockaddr_in *)&sa)->sin_port = htons((uint16_t)port);   /* sin6_port sits at the same offset */
	if (!(s->ch = vb_cm_channel(err, errlen)))
		goto fail;
	if (rdma_create_id(s->ch, &s->listen, NULL, RDMA_PS_TCP) != 0) {
		snprintf(err, errlen, "canary: rdma_create_id: %s", strerror(errno));
		goto fail;
	}
	if (rdma_bind_addr(s->listen, (struct sockaddr *)&sa) != 0) {
		snprintf(err, errlen, "canary: cannot listen on %s:%u: %s (%s)", addr, port, strerror(errno),
			 errno == EADDRINUSE ? "the port is taken; give another --port, or 0 for any free one" :
			 errno == EADDRNOTAVAIL || errno == ENODEV ? "that address is not on an RDMA device: "
			 "oqb-server --list-devices shows the devices and their addresses" : "check --addr");
		goto fail;
	}
	if (rdma_listen(s->listen, 4) != 0) {
		snprintf(err, errlen, "canary: rdma_listen on %s:%u: %s", addr, port, strerror(errno));
		goto fail;
	}
	char host[128];
	vb_host_str(rdma_get_local_addr(s->listen), host, sizeof host);
	snprintf(endpoint, eplen, "verbs:%s:%u", host, (unsigned)ntohs(rdma_get_src_port(s->listen)));
	return s;
fail:
	vb_canary_close(s);
	return NULL;
}

void vb_canary_close(struct vb_canary_srv *s)
{
	if (!s)
		return;
	if (s->c.id) {
		side_free(&s->c);
		rdma_destroy_id(s->c.id);
	}
	if (s->listen)
		rdma_destroy_id(s->listen);
	vb_destroy_channel(s->ch);
	free(s);
}

/* The pinger went away (or must): its QP and id go, listening goes on. */
static void drop(struct vb_canary_srv *s)
{
	if (!s->c.id)
		return;
	if (s->live)
		rdma_disconnect(s->c.id);
	side_free(&s->c);
	rdma_destroy_id(s->c.id);
	memset(&s->c, 0, sizeof s->c);
	s->live = 0;
}

/*
 * One connect request: accepts a canary hello when no pinger is being
 * served, else refuses it with a reason.  Returns 1 when refused: the
 * caller acks the event, then destroys the id (never before: rdma_cm
 * waits for the ack).
 */
static int on_request(struct vb_canary_srv *s, struct rdma_cm_event *ev, struct vb_canary_stats *st)
{
	struct rdma_cm_id *id = ev->id;
	const uint8_t *h = ev->param.conn.private_data;
	unsigned hl = ev->param.conn.private_data_len;
	char why[VB_REJECT_LEN - 8] = "";
	uint16_t code = 0;

	if (!h || hl < VB_CANARY_HELLO || get32(h) != VB_CANARY_MAGIC) {
		code = 1;
		snprintf(why, sizeof why, "%s", h && hl >= 4 && get32(h) == VB_HELLO_MAGIC ?
			 "this is a canary echoer (oqb-vfloor --serve), not an oqb-server; connect oqb-client to the "
			 "oqb-server's endpoint" : "not a canary pinger (the connect request has no oqb-vfloor hello)");
	} else if (get16(h + 4) != VB_CANARY_VERSION) {
		code = 2;
		snprintf(why, sizeof why, "the pinger speaks canary protocol %u, this echoer %u; use the same oqbench "
			 "build on both sides", get16(h + 4), VB_CANARY_VERSION);
	} else if (s->c.id) {
		code = 3;
		snprintf(why, sizeof why, "busy: the echoer serves one pinger at a time; try again when it is done");
	} else if (get32(h + 8) < 1 || get32(h + 8) > VB_CANARY_MAX) {
		code = 4;
		snprintf(why, sizeof why, "a message of %u B; the echoer takes 1 to %d", get32(h + 8), VB_CANARY_MAX);
	} else {
		s->c.id = id;
		vb_host_str(rdma_get_peer_addr(id), s->peer, sizeof s->peer);
		uint8_t acc[8] = { 0 };
		put32(acc, VB_CANARY_ACCEPT);
		put16(acc + 4, VB_CANARY_VERSION);
		struct rdma_conn_param cp = { .private_data = acc, .private_data_len = sizeof acc,
					      .retry_count = 7, .rnr_retry_count = 7 };
		if (side_init(&s->c, why, sizeof why) == 0 && rdma_accept(id, &cp) == 0)
			return 0;
		if (!why[0])
			snprintf(why, sizeof why, "canary: rdma_accept: %s", strerror(errno));
		code = 5;
		side_free(&s->c);
		memset(&s->c, 0, sizeof s->c);
	}
	vb_reject(id, VB_CANARY_VERSION, code, why);
	st->refused++;
	snprintf(st->last_error, sizeof st->last_error, "%s", why);
	return 1;
}

/* Takes every pending CM event: 0, or -1 with err when the channel broke. */
static int cm_events(struct vb_canary_srv *s, struct vb_canary_stats *st, char *err, size_t errlen)
{
	struct rdma_cm_event *ev;
	while (rdma_get_cm_event(s->ch, &ev) == 0) {
		enum rdma_cm_event_type t = ev->event;
		if (t == RDMA_CM_EVENT_CONNECT_REQUEST) {
			struct rdma_cm_id *id = ev->id;
			int refused = on_request(s, ev, st);
			rdma_ack_cm_event(ev);
			if (refused)
				rdma_destroy_id(id);
			continue;
		}
		struct rdma_cm_id *id = ev->id;
		rdma_ack_cm_event(ev);
		if (id != s->c.id || !id)
			continue;
		if (t == RDMA_CM_EVENT_ESTABLISHED) {
			s->live = 1;
			st->pingers++;
		} else if (t == RDMA_CM_EVENT_DISCONNECTED || t == RDMA_CM_EVENT_CONNECT_ERROR ||
			   t == RDMA_CM_EVENT_UNREACHABLE || t == RDMA_CM_EVENT_REJECTED ||
			   t == RDMA_CM_EVENT_TIMEWAIT_EXIT || t == RDMA_CM_EVENT_DEVICE_REMOVAL) {
			s->live = 0;   /* the pinger's side is gone: no disconnect to send */
			drop(s);
		}
	}
	if (errno != EAGAIN && errno != EWOULDBLOCK) {
		snprintf(err, errlen, "canary: reading rdma_cm events: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int vb_canary_serve(struct vb_canary_srv *s, volatile int *stop, double max_s, struct vb_canary_stats *st, char *err,
		    size_t errlen)
{
	uint64_t end = max_s > 0 ? clock_ns() + (uint64_t)(max_s * 1e9) : UINT64_MAX;
	unsigned idle = 0;
	memset(st, 0, sizeof *st);
	while (!*stop && clock_ns() < end) {
		if (!s->live) {
			/* nobody to echo to: wait on the channel, not the CPU */
			vb_wait_readable(s->ch->fd, 100);
			if (cm_events(s, st, err, errlen) != 0)
				return -1;
			continue;
		}
		unsigned got[8];
		uint32_t len[8];
		char e[256];
		int n = poll_recv(&s->c, got, len, s->peer, e, sizeof e);
		if (n < 0) {
			/* a pinger that vanished mid-round: its problem, not ours */
			st->dropped++;
			snprintf(st->last_error, sizeof st->last_error, "%s", e);
			drop(s);
			continue;
		}
		for (int k = 0; k < n; k++) {
			uint32_t l = len[k] < VB_CANARY_MAX ? len[k] : VB_CANARY_MAX;
			int x = post_send(&s->c, recv_buf(&s->c, got[k]), l, s->peer, e, sizeof e);
			if (!x && (x = post_recv(&s->c, got[k])) != 0)
				snprintf(e, sizeof e, "canary: reposting a receive failed: %s", strerror(x));
			if (x) {
				st->dropped++;
				snprintf(st->last_error, sizeof st->last_error, "%s", e);
				drop(s);
				break;
			}
			st->echoed++;
		}
		/* the CM channel every 4096 empty polls: a pinger that left */
		if (n)
			idle = 0;
		else if (++idle >= 4096) {
			idle = 0;
			if (cm_events(s, st, err, errlen) != 0)
				return -1;
		}
	}
	return 0;
}
