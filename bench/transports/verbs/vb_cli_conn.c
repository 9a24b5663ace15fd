/*
 * vb_cli_conn.c - a client's connections to one server (a group): the
 * endpoint, the rdma_cm steps for every worker's QP (resolve address and
 * route, create the QP, send the hello, check the accept), the client's
 * PD, response SRQ and buffers, and the group's teardown.  With delegation
 * the threads of a process share one group (vb_cli.c).
 *
 * Guarantees: connecting to all workers is bounded by
 * --connect-timeout-s (timeouts.connect_s's default when the caller gives
 * none: lib/settings/timing.def) however the server
 * behaves; every failure says which endpoint and worker, what the CM
 * reported, and what to check -- a refusal carries the server's own
 * reason from the reject private data; an accept whose geometry, system or
 * durable flag does not match is refused here.  Pinned memory is bounded
 * (64 MiB of response buffers, 16 MiB of request slots per lane).  Shown by
 * the verbs suite's connect, error-message and system-mismatch cases.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "system.h"
#include "vb_internal.h"

static const char *cm_reject_reason(int status)
{
	/* IBTA CM REJ reason codes that a connecting client can meet. */
	switch (status) {
	case 1: return "no QP available at the server";
	case 3: return "the server has no resources";
	case 4: return "timeout";
	case 8: return "nothing listens on that port (invalid service ID)";
	case 10: return "stale connection";
	case 28: return "refused by the server";
	default: return "see the IBTA CM REJ reason codes";
	}
}

/* Parses "verbs:ADDR:PORT" (or "ADDR:PORT", "[V6]:PORT") into dst. */
static int parse_endpoint(const char *ep, struct sockaddr_storage *dst, char *host, size_t hostlen,
			  unsigned *port, char *err, size_t errlen)
{
	const char *p = ep ? ep : "";
	if (!strncmp(p, "verbs:", 6))
		p += 6;
	const char *colon;
	size_t hl;
	if (*p == '[') {
		const char *rb = strchr(p, ']');
		if (!rb || rb[1] != ':')
			goto bad;
		p++;
		hl = (size_t)(rb - p);
		colon = rb + 1;
	} else {
		colon = strrchr(p, ':');
		if (!colon)
			goto bad;
		hl = (size_t)(colon - p);
	}
	if (hl == 0 || hl >= hostlen)
		goto bad;
	memcpy(host, p, hl);
	host[hl] = 0;
	char *end;
	unsigned long pv = strtoul(colon + 1, &end, 10);
	if (*end || pv == 0 || pv > 65535)
		goto bad;
	*port = (unsigned)pv;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int e = getaddrinfo(host, colon + 1, &hints, &ai);
	if (e || !ai) {
		snprintf(err, errlen, "endpoint %s: cannot resolve '%s': %s", ep, host, gai_strerror(e));
		return -1;
	}
	memset(dst, 0, sizeof *dst);
	memcpy(dst, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
bad:
	snprintf(err, errlen, "endpoint '%s' is not of the form verbs:ADDR:PORT (e.g. verbs:198.18.0.1:7471, "
		 "or verbs:[fe80::1]:7471); give the endpoint the server printed", ep ? ep : "");
	return -1;
}


/* ep as "verbs:HOST:PORT" in out, with its address in *dst: the name
 * a group goes by (delegation compares it).  0, or -1 with err set. */
int vb_canon_endpoint(const char *ep, struct sockaddr_storage *dst, unsigned *port, char *out, size_t outlen,
		      char *err, size_t errlen)
{
	char host[128];
	if (parse_endpoint(ep, dst, host, sizeof host, port, err, errlen) != 0)
		return -1;
	vb_host_str((struct sockaddr *)dst, host, sizeof host);
	snprintf(out, outlen, "verbs:%s:%u", host, *port);
	return 0;
}

static void format_cm_error(struct vb_group *g, unsigned w, struct rdma_cm_event *ev, const char *doing,
			    char *err, size_t errlen)
{
	int st = ev->status;
	char sts[96];
	if (st < 0)
		snprintf(sts, sizeof sts, "%s", strerror(-st));
	else
		snprintf(sts, sizeof sts, "status %d", st);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		snprintf(err, errlen, "cannot connect to %s: RDMA_CM_EVENT_ADDR_ERROR (%s) while %s: no RDMA device "
			 "routes to that address, or nothing answered ARP for it (is the address right, and is "
			 "oqb-server running there?)", g->endpoint, sts, doing);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		snprintf(err, errlen, "cannot connect to %s: RDMA_CM_EVENT_ROUTE_ERROR (%s) while %s (is oqb-server "
			 "running there, and is the address reachable over RDMA?)", g->endpoint, sts, doing);
		break;
	case RDMA_CM_EVENT_REJECTED: {
		char msg[VB_REJECT_LEN];
		if (vb_reject_text(ev, msg, sizeof msg)) {
			snprintf(err, errlen, "cannot connect to %s (worker %u): the server refused: %s", g->endpoint, w, msg);
		} else {
			snprintf(err, errlen, "cannot connect to %s: RDMA_CM_EVENT_REJECTED (reason %d: %s) (is oqb-server "
				 "running there, on port %u?)", g->endpoint, st, cm_reject_reason(st), g->port);
		}
		break;
	}
	case RDMA_CM_EVENT_UNREACHABLE:
		snprintf(err, errlen, "cannot connect to %s: RDMA_CM_EVENT_UNREACHABLE (%s) (is oqb-server running "
			 "there?)", g->endpoint, sts);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		snprintf(err, errlen, "cannot connect to %s: RDMA_CM_EVENT_CONNECT_ERROR (%s) while %s (is oqb-server "
			 "running there?)", g->endpoint, sts, doing);
		break;
	default:
		snprintf(err, errlen, "cannot connect to %s: unexpected %s (%s) while %s", g->endpoint,
			 rdma_event_str(ev->event), sts, doing);
		break;
	}
}

/*
 * Waits for the rdma_cm event `want` on id until deadline.  0 with *out
 * set (the caller acks it), or -1 with err set (a failure event, or the
 * deadline passed).
 */
static int cm_wait(struct vb_group *g, unsigned w, struct rdma_cm_id *id, enum rdma_cm_event_type want,
		   uint64_t deadline, uint64_t started, const char *doing, struct rdma_cm_event **out,
		   char *err, size_t errlen)
{
	for (;;) {
		struct rdma_cm_event *ev;
		int r = vb_cm_next(g->ch, deadline, &ev);
		if (r < 0) {
			snprintf(err, errlen, "cannot read rdma_cm events while %s: %s", doing, strerror(errno));
			return -1;
		}
		if (r > 0) {
			snprintf(err, errlen, "cannot connect to %s: no answer within %.1f s while %s (is oqb-server "
				 "running there, and is the address reachable over RDMA?)", g->endpoint,
				 (double)(clock_ns() - started) / 1e9, doing);
			return -1;
		}
		if (ev->id != id) {
			/* an earlier QP of this client: only a disconnect matters */
			int bye = ev->event == RDMA_CM_EVENT_DISCONNECTED;
			rdma_ack_cm_event(ev);
			if (bye) {
				snprintf(err, errlen, "the server at %s closed a connection while this client was "
					 "still connecting (it is stopping?)", g->endpoint);
				return -1;
			}
			continue;
		}
		if (ev->event == want && ev->status == 0) {
			*out = ev;
			return 0;
		}
		format_cm_error(g, w, ev, doing, err, errlen);
		rdma_ack_cm_event(ev);
		return -1;
	}
}

static int ms_left(uint64_t deadline)
{
	uint64_t now = clock_ns();
	if (now >= deadline)
		return 1;
	uint64_t ms = (deadline - now) / 1000000;
	return ms > 5000 ? 5000 : ms < 1 ? 1 : (int)ms;
}

/* PD, SRQ and limits, once the first QP told us the device. */
static int group_init_verbs(struct vb_group *g, struct ibv_context *ctx, unsigned max_outstanding,
			    char *err, size_t errlen)
{
	g->ctx = ctx;
	if (ibv_query_device(ctx, &g->da) != 0) {
		snprintf(err, errlen, "cannot query RDMA device %s: %s", ibv_get_device_name(ctx->device), strerror(errno));
		return -1;
	}
	g->pd = ibv_alloc_pd(ctx);
	if (!g->pd) {
		snprintf(err, errlen, "cannot allocate a protection domain on %s: %s", ibv_get_device_name(ctx->device),
			 strerror(errno));
		return -1;
	}
	unsigned rd = g->delegated ? 4096 : vb_pow2_at_least(max_outstanding ? max_outstanding : 1024);
	if (rd < 64)
		rd = 64;
	if (!g->delegated && rd > 1024)
		rd = 1024;
	while (rd > 64 && rd > (unsigned)g->da.max_srq_wr)
		rd /= 2;
	g->rdepth = rd;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = rd, .max_sge = 1 } };
	g->srq = ibv_create_srq(g->pd, &sa);
	if (!g->srq) {
		snprintf(err, errlen, "cannot create the client's response SRQ (%u WQEs) on %s: %s", rd,
			 ibv_get_device_name(ctx->device), strerror(errno));
		return -1;
	}
	g->sq_depth = g->delegated ? VB_CLI_SQ_DELEG : VB_CLI_SQ;
	if (g->sq_depth > (unsigned)g->da.max_qp_wr)
		g->sq_depth = (unsigned)g->da.max_qp_wr;
	return 0;
}

/* Registers bytes at buf (what they hold names them in the message) for
 * the group's local writes: the MR, or NULL with err set. */
struct ibv_mr *vb_cli_reg(struct vb_group *g, void *buf, size_t bytes, const char *what, char *err, size_t errlen)
{
	struct ibv_mr *mr = ibv_reg_mr(g->pd, buf, bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		snprintf(err, errlen, "cannot register %zu bytes of %s: %s%s", bytes, what, strerror(errno),
			 errno == ENOMEM ? " (raise the locked-memory limit: ulimit -l unlimited)" : "");
	return mr;
}

/* Response buffers, once the first accept told us the slot size. */
static int group_init_bufs(struct vb_group *g, char *err, size_t errlen)
{
	/* bound the pinned memory: at most 64 MiB of response buffers */
	while (g->rdepth > 16 && (size_t)g->rdepth * g->slot_size > (64u << 20))
		g->rdepth /= 2;
	size_t bytes = (size_t)g->rdepth * g->slot_size;
	g->rbuf = vb_alloc_pages(bytes);
	if (!g->rbuf) {
		snprintf(err, errlen, "out of memory for %u response buffers of %u B", g->rdepth, g->slot_size);
		return -1;
	}
	g->rmr = vb_cli_reg(g, g->rbuf, bytes, "response buffers", err, errlen);
	if (!g->rmr)
		return -1;
	uint32_t idx[64];
	for (unsigned i = 0; i < g->rdepth; i += 64) {
		unsigned k = g->rdepth - i < 64 ? g->rdepth - i : 64;
		for (unsigned j = 0; j < k; j++)
			idx[j] = i + j;
		vb_repost_bufs(g, idx, k);
	}
	if (atomic_load(&g->broken)) {
		vb_group_err(g, err, errlen);
		return -1;
	}
	/* request slots per lane per worker: bound pinned memory too */
	unsigned d = VB_LANE_DEPTH;
	while (d > 2 && (size_t)d * g->slot_size * g->workers > (16u << 20))
		d /= 2;
	g->depth = d;
	return 0;
}

static int parse_accept(struct vb_group *g, unsigned w, const struct rdma_cm_event *ev,
			const struct tp_cli_conf *cc, char *err, size_t errlen)
{
	const uint8_t *a = ev->param.conn.private_data;
	unsigned len = ev->param.conn.private_data_len;
	if (!a || len < VB_ACCEPT_LEN || get32(a) != VB_ACCEPT_MAGIC) {
		snprintf(err, errlen, "%s accepted the connection but is not an oqbench verbs server (no accept "
			 "data); is another program listening on that port?", g->endpoint);
		return -1;
	}
	if (get16(a + 4) != VB_VERSION) {
		snprintf(err, errlen, "the server at %s speaks verbs protocol %u, this client %u; use the same "
			 "oqbench build on both sides", g->endpoint, get16(a + 4), VB_VERSION);
		return -1;
	}
	char sys[17];
	memcpy(sys, a + 48, 16);
	sys[16] = 0;
	uint32_t block = get32(a + 8);
	unsigned workers = get16(a + 12), flags = get16(a + 14);
	unsigned slot = get32(a + 16);
	if (w == 0) {
		if (workers < 1 || workers > VB_MAX_WORKERS || slot < WIRE_ALIGN || slot % WIRE_ALIGN || !block ||
		    block > VB_MAX_BLOCK) {
			snprintf(err, errlen, "the server at %s sent an invalid geometry (%u workers, %u B slots)",
				 g->endpoint, workers, slot);
			return -1;
		}
		g->block = block;
		g->workers = workers;
		g->sflags = flags;
		g->slot_size = slot;
		g->ring_slots = get32(a + 20);
		g->min_rnr = a[36] & 31;
		g->server_pid = get32(a + 64);
		memcpy(g->server_system, sys, sizeof sys);
		g->durable_srv = (flags & VB_AF_DURABLE) != 0;
		if (cc->system && strcmp(cc->system, sys) != 0) {
			snprintf(err, errlen, "server at %s runs system '%s' but this client was started with --system %s; "
				 "use the same system on both", g->endpoint, sys, cc->system);
			return -1;
		}
		if (vb_fnv64(sys) != get64(a + 40)) {
			snprintf(err, errlen, "the server at %s sent a system name that does not match its hash; "
				 "version mismatch?", g->endpoint);
			return -1;
		}
		/* tp_event.t_done: only a thread that waits on its own requests
		 * stamps them (no delegation), and a send completion only where
		 * it can commit one, under a system whose nilext requests commit
		 * on delivery: elsewhere every DELIVERED is stray, and its clock
		 * read would be waste on the request path. */
		const struct system_def *sd = system_find(sys);
		g->stamp_sends = !g->delegated && (!sd || sd->nilext_commit == COMMIT_DELIVERY);
		if (cc->durable && !g->durable_srv) {
			snprintf(err, errlen, "server at %s was not started with --durable, but this client was; start both "
				 "with --durable or neither", g->endpoint);
			return -1;
		}
	} else if (block != g->block || workers != g->workers || slot != g->slot_size) {
		snprintf(err, errlen, "worker %u of %s answered with another client id or geometry (block %u, %u "
			 "workers); was the server restarted while this client connected?", w, g->endpoint, block, workers);
		return -1;
	}
	g->q[w].read_addr = get64(a + 24);
	g->q[w].read_rkey = get32(a + 32);
	if (w == 0)
		g->os = (flags & VB_AF_WRITE1) ? VB_OS_WRITE1 : (flags & VB_AF_SEQWRITE) ? VB_OS_SEQWRITE : VB_OS_NONE;
	if (g->os != VB_OS_NONE) {
		/* the one-sided area, accept bytes 72-95: seqwrite's log of the
		 * worker (vb_seqwrite.c) or write1's ring of this QP
		 * (vb_write1.c): address, rkey, entries, then the log's slots
		 * offset or the ring's head word */
		struct vb_cqp *q = &g->q[w];
		int sw = g->os == VB_OS_SEQWRITE;
		q->os_addr = get64(a + 72);
		q->os_rkey = get32(a + 80);
		q->os_k = get32(a + 84);
		if (sw)
			q->os_slots_off = get64(a + 88);
		else
			q->os_head_addr = get64(a + 88);
		q->os_head = 0;
		int ok = (flags & (sw ? VB_AF_SEQWRITE : VB_AF_WRITE1)) && q->os_k && q->os_addr;
		if (sw) {
			free(q->sw_tick);
			free(q->sw_stage);
			free(q->sw_fin);
			q->sw_tick = calloc(VB_LANE_DEPTH, sizeof *q->sw_tick);
			q->sw_stage = calloc(VB_LANE_DEPTH, 1);
			q->sw_fin = calloc(VB_LANE_DEPTH, 1);
			ok = ok && q->sw_tick && q->sw_stage && q->sw_fin;
		}
		if (!ok) {
			snprintf(err, errlen, "worker %u of %s runs system %s but sent no %s (accept data of %u B)%s; use "
				 "the same oqbench build on both sides", w, g->endpoint, sw ? "seqwrite" : "write1",
				 sw ? "log" : "ring", len, sw ? ", or memory is short" : "");
			return -1;
		}
	}
	return 0;
}

/*
 * Sends the hello for worker w on id (rdma_connect) and waits for the
 * ESTABLISHED event, which *ev returns (the caller acks it).  0 or -1.
 */
int vb_hello_connect(struct vb_group *g, const struct tp_cli_conf *cc, struct rdma_cm_id *id, unsigned w,
			 const char *doing, uint64_t started, uint64_t deadline, struct rdma_cm_event **ev,
			 char *err, size_t errlen)
{
	uint8_t hello[VB_HELLO_LEN];
	memset(hello, 0, sizeof hello);
	put32(hello, VB_HELLO_MAGIC);
	put16(hello + 4, VB_VERSION);
	put16(hello + 6, (uint16_t)((g->delegated ? VB_HF_DELEGATED : 0) | (cc->durable ? VB_HF_DURABLE : 0)));
	put32(hello + 8, g->block);
	put16(hello + 12, (uint16_t)w);
	put16(hello + 14, (uint16_t)(g->delegated ? VB_MAX_LANES : 1));
	put32(hello + 16, g->rdepth);
	put32(hello + 20, (uint32_t)getpid());
	put32(hello + 24, g->delegated ? UINT32_MAX : cc->thread);
	unsigned rd = g->da.max_qp_init_rd_atom < 16 ? (unsigned)g->da.max_qp_init_rd_atom : 16;
	/* rnr_retry 7 is infinite (a full SRQ is waited out, §4).  Transport
	 * retries stay finite: 6, not 7, since Soft-RoCE takes retry_cnt 7 to
	 * mean infinite as well (rxe_comp.c), and a request to a host gone
	 * from the wire must end as a failed completion (RETRY_EXC_ERR, about
	 * 7 x 2.1 s with rdma_cm's ACK timeout on rxe), not retry until the
	 * stall watchdog.  At 5 % loss a packet is lost 7 times in a row with
	 * odds of 8e-10 (docs/verbs-vm.md, "Faults on the wire"). */
	struct rdma_conn_param cp = {
		.private_data = hello, .private_data_len = VB_HELLO_LEN,
		.initiator_depth = (uint8_t)rd, .responder_resources = 0,
		.retry_count = 6, .rnr_retry_count = 7,
	};
	if (rdma_connect(id, &cp) != 0) {
		snprintf(err, errlen, "cannot connect to %s: rdma_connect: %s", g->endpoint, strerror(errno));
		return -1;
	}
	return cm_wait(g, w, id, RDMA_CM_EVENT_ESTABLISHED, deadline, started, doing, ev, err, errlen);
}

/* Connects QP w: resolve, create, connect, check the accept. */
static int connect_one(struct vb_group *g, unsigned w, const struct tp_cli_conf *cc, uint64_t started,
		       uint64_t deadline, char *err, size_t errlen)
{
	struct vb_cqp *q = &g->q[w];
	struct rdma_cm_event *ev = NULL;
	q->g = g;
	q->w = w;
	pthread_mutex_init(&q->mu, NULL);
	q->mu_init = 1;
	q->lk = &q->mu;
	if (rdma_create_id(g->ch, &q->id, q, RDMA_PS_TCP) != 0) {
		snprintf(err, errlen, "rdma_create_id: %s", strerror(errno));
		return -1;
	}
	if (rdma_resolve_addr(q->id, NULL, (struct sockaddr *)&g->dst, ms_left(deadline)) != 0) {
		snprintf(err, errlen, "cannot connect to %s: rdma_resolve_addr: %s (is the address on a network an RDMA "
			 "device can reach?)", g->endpoint, strerror(errno));
		return -1;
	}
	if (cm_wait(g, w, q->id, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, started, "resolving the address", &ev,
		    err, errlen) != 0)
		return -1;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(q->id, ms_left(deadline)) != 0) {
		snprintf(err, errlen, "cannot connect to %s: rdma_resolve_route: %s", g->endpoint, strerror(errno));
		return -1;
	}
	if (cm_wait(g, w, q->id, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, started, "resolving the route", &ev,
		    err, errlen) != 0)
		return -1;
	rdma_ack_cm_event(ev);
	if (!g->ctx) {
		if (group_init_verbs(g, q->id->verbs, cc->max_outstanding, err, errlen) != 0)
			return -1;
	} else if (q->id->verbs != g->ctx) {
		snprintf(err, errlen, "worker %u of %s resolved to another RDMA device than worker 0", w, g->endpoint);
		return -1;
	}
	/* CQs as deep as what can be in them, no deeper (at the paper's 3,456
	 * QPs the rings are most of a guest's memory, docs/scale.md).  Send: at
	 * most sq_depth WRs are posted and not yet reaped (sq_used).  Receive:
	 * a reply answers a request, so without delegation one QP holds at most
	 * its one lane's VB_LANE_DEPTH requests in flight, and never more than
	 * the response SRQ has buffers; a receive CQ that overflows kills its
	 * QP (rxe: RESPST_ERR_CQ_OVERFLOW), so never less either. */
	unsigned rcqe = g->delegated || g->rdepth < VB_LANE_DEPTH ? g->rdepth : VB_LANE_DEPTH;
	q->scq = ibv_create_cq(g->ctx, (int)g->sq_depth, NULL, NULL, 0);
	q->rcq = ibv_create_cq(g->ctx, (int)rcqe + 16, NULL, NULL, 0);
	if (!q->scq || !q->rcq) {
		snprintf(err, errlen, "cannot create completion queues on %s: %s", ibv_get_device_name(g->ctx->device),
			 strerror(errno));
		return -1;
	}
	int qerr = vb_create_rc_qp(q->id, g->pd, q->scq, q->rcq, g->srq, g->sq_depth, &q->max_inline);
	if (qerr) {
		snprintf(err, errlen, "cannot create a QP on %s: %s", ibv_get_device_name(g->ctx->device), strerror(qerr));
		return -1;
	}
	q->qp = q->id->qp;
	q->sq_depth = g->sq_depth;

	if (vb_hello_connect(g, cc, q->id, w, "connecting", started, deadline, &ev, err, errlen) != 0)
		return -1;
	q->connected = 1;
	int r = parse_accept(g, w, ev, cc, err, errlen);
	rdma_ack_cm_event(ev);
	if (r != 0)
		return -1;
	if (w == 0 && group_init_bufs(g, err, errlen) != 0)
		return -1;
	/* The client's own RNR timer matters when the server replies faster
	 * than responses are consumed: use the server's setting. */
	vb_set_min_rnr(q->qp, g->min_rnr);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	if (ibv_query_qp(q->qp, &qa, IBV_QP_RNR_RETRY | IBV_QP_MIN_RNR_TIMER, &qi) == 0) {
		q->rnr_retry = qa.rnr_retry;
		q->min_rnr = qa.min_rnr_timer;
	}
	return 0;
}

void vb_group_destroy(struct vb_group *g)
{
	if (!g)
		return;
	if (g->q) {
		for (unsigned w = 0; w < VB_MAX_WORKERS; w++)
			if (g->q[w].id && g->q[w].connected)
				rdma_disconnect(g->q[w].id);
		if (g->xid && g->xconnected)
			rdma_disconnect(g->xid);
		for (unsigned w = 0; w < VB_MAX_WORKERS; w++) {
			struct vb_cqp *q = &g->q[w];
			free(q->sw_tick);
			free(q->sw_stage);
			free(q->sw_fin);
			vb_destroy_id(q->id);
			if (!q->shared) {
				vb_destroy_cq(q->scq);
				vb_destroy_cq(q->rcq);
			}
			if (q->mu_init)
				pthread_mutex_destroy(&q->mu);
		}
	}
	vb_destroy_id(g->xid);
	vb_destroy_cq(g->xscq);
	vb_destroy_cq(g->rep_scq);
	vb_destroy_cq(g->rep_rcq);
	vb_dereg_mr(g->rmr);
	free(g->rbuf);
	vb_destroy_srq(g->srq);
	vb_dealloc_pd(g->pd);
	vb_destroy_channel(g->ch);
	if (g->xmu_init)
		pthread_mutex_destroy(&g->xmu);
	pthread_mutex_destroy(&g->err_mu);
	pthread_mutex_destroy(&g->cm_mu);
	free(g->q);
	free(g);
}

struct vb_group *vb_group_open(const struct tp_cli_conf *cc, int delegated, char *err, size_t errlen)
{
	struct vb_group *g = calloc(1, sizeof *g);
	if (!g) {
		snprintf(err, errlen, "verbs: out of memory");
		return NULL;
	}
	pthread_mutex_init(&g->err_mu, NULL);
	pthread_mutex_init(&g->cm_mu, NULL);
	g->delegated = delegated;
	g->q = calloc(VB_MAX_WORKERS, sizeof *g->q);
	if (!g->q) {
		snprintf(err, errlen, "verbs: out of memory");
		goto fail;
	}
	if (vb_canon_endpoint(cc->endpoint, &g->dst, &g->port, g->endpoint, sizeof g->endpoint, err, errlen) != 0)
		goto fail;
	g->ch = vb_cm_channel(err, errlen);
	if (!g->ch)
		goto fail;
	uint64_t started = clock_ns();
	double cto_s = cc->connect_timeout_ms ? cc->connect_timeout_ms / 1e3 : settings_default_num("timeouts", "connect_s");
	uint64_t deadline = started + (uint64_t)(cto_s * 1e9);
	if (connect_one(g, 0, cc, started, deadline, err, errlen) != 0)
		goto fail;
	if (g->sflags & VB_AF_XRC) {
		if (vb_connect_xrc(g, cc, started, deadline, err, errlen) != 0)
			goto fail;
		return g;
	}
	for (unsigned w = 1; w < g->workers; w++)
		if (connect_one(g, w, cc, started, deadline, err, errlen) != 0)
			goto fail;
	return g;
fail:
	vb_group_destroy(g);
	return NULL;
}
