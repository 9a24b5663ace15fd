/*
 * tp_erpc.c - transport "erpc": the project's requests and responses carried
 * as eRPC messages (erpc_shim.h), for system erpc (docs/erpc.md).
 *
 * Server: one eRPC Rpc per worker, rpc_id = worker index, created by the
 * worker thread itself on its first srv_poll (eRPC binds an Rpc to the
 * thread that made it).  eRPC's request handler runs inside that worker's
 * event loop; it copies the request into the worker's ring of arrivals and
 * numbers it, so srv_poll/srv_req/srv_release feed the same in-order
 * executor as every transport.  srv_reply answers the request whose bytes
 * srv_req last handed out (run_slot reads, executes, then replies);
 * srv_release answers, empty, a request that got no reply (rejected), since
 * eRPC holds the client's session slot until it is answered.
 * Client: one Rpc per client thread (rpc_id = thread), made by that thread
 * on first use, with one session per server worker; every request goes on
 * one of max_outstanding buffer pairs; responses become TP_EV_RESP events.
 *
 * Bound: at most ring_slots requests wait per worker; beyond that (more
 * clients x eRPC's window of 8 than slots) a request is answered empty and
 * counted as "overflow".  Tested by tests/erpc/guest-erpc.sh in the VM.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "erpc_shim.h"
#include "log.h"
#include "transport.h"
#include "wire.h"

#define ERPC_PORT_BASE   31850u
#define ERPC_PORTS       32u
#define ERPC_REQ_MAX     (64u * 1024 + 512)        /* client request buffer */
#define ERPC_RESP_MAX    (WIRE_RESP_HDR + 64u * 1024)
#define ERPC_MAX_PAIRS   256u
#define ERPC_READY_MS    120000u                    /* TCG: Rpc creation is slow */

struct ew_slot {
	void *handle;
	uint32_t len;
	int answered;
};

struct ew {                     /* one server worker */
	struct tp_server *s;
	unsigned idx;
	struct es_rpc *rpc;
	uint8_t *buf;               /* ring_slots x slot_size request copies */
	struct ew_slot *slot;
	uint64_t head, tail, reported, cur;
	uint64_t overflow, oversize, empty_answers, reply_errors;
};

struct tp_server {
	struct tp_srv_conf c;
	struct es_nexus *nx;
	unsigned port;
	struct ew *w;
	_Atomic unsigned ready, failed;
	pthread_mutex_t why_mu;     /* the first worker failure, for srv_ready */
	char why[600];
	char endpoint[160];
};

/* The eRPC build this adapter links (commit, transport, MTU, flags): the
 * table's build description, and part of every HELLO and stats block. */
static json_t *tp_erpc_build_json(void)
{
	return json_pack("{s:s,s:s,s:b,s:b,s:i,s:s}", "commit", es_build_commit(), "transport", es_transport(),
			 "modified", es_build_modified(), "roce", es_is_roce(), "mtu_data",
			 (int)es_max_data_per_pkt(), "cxx_flags", es_build_flags());
}

/* ---------------------------------------------------------------- server */

static void srv_on_req(void *ctx, void *handle, const void *req, size_t len)
{
	struct ew *w = ctx;
	unsigned n = w->s->c.ring_slots;
	if (w->tail - w->head >= n || len > w->s->c.slot_size) {
		if (len > w->s->c.slot_size)
			w->oversize++;
		else
			w->overflow++;
		es_respond(w->rpc, handle, NULL, 0, NULL, 0);
		return;
	}
	struct ew_slot *sl = &w->slot[w->tail & (n - 1)];
	memcpy(w->buf + (size_t)(w->tail & (n - 1)) * w->s->c.slot_size, req, len);
	sl->handle = handle;
	sl->len = (uint32_t)len;
	sl->answered = 0;
	w->tail++;
}

static struct tp_server *erpc_srv_open(const struct tp_srv_conf *c, char *err, size_t errlen)
{
	if (!c->addr || !*c->addr) {
		snprintf(err, errlen, "transport erpc: no server address (--addr, or verbs.addr in the config): "
			 "eRPC needs the IP of the RoCE interface");
		return NULL;
	}
	if (c->workers > 200) {
		snprintf(err, errlen, "transport erpc: %u workers; eRPC allows at most 200 Rpcs here", c->workers);
		return NULL;
	}
	if (es_preflight(err, errlen) != 0)
		return NULL;
	struct tp_server *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->c = *c;
	pthread_mutex_init(&s->why_mu, NULL);
	s->port = c->port >= ERPC_PORT_BASE && c->port < ERPC_PORT_BASE + ERPC_PORTS ? c->port : ERPC_PORT_BASE;
	s->w = calloc(c->workers, sizeof *s->w);
	if (!s->w)
		goto oom;
	for (unsigned i = 0; i < c->workers; i++) {
		struct ew *w = &s->w[i];
		w->s = s;
		w->idx = i;
		w->buf = malloc((size_t)c->ring_slots * c->slot_size);
		w->slot = calloc(c->ring_slots, sizeof *w->slot);
		if (!w->buf || !w->slot)
			goto oom;
	}
	s->nx = es_nexus_new(c->addr, s->port, 1, err, errlen);
	if (!s->nx)
		goto fail;
	snprintf(s->endpoint, sizeof s->endpoint, "%s:%u:%u", c->addr, s->port, c->workers);
	return s;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	if (s->w)
		for (unsigned i = 0; i < c->workers; i++) {
			free(s->w[i].buf);
			free(s->w[i].slot);
		}
	pthread_mutex_destroy(&s->why_mu);
	free(s->w);
	free(s);
	return NULL;
}

/* Waits until every worker has made its Rpc, so that clients told the
 * endpoint can connect at once; the first worker that could not is the
 * server's error (server_start fails with it, before "ready"). */
static int erpc_srv_ready(struct tp_server *s, char *err, size_t errlen)
{
	uint64_t t0 = clock_ns();
	unsigned ok;
	while ((ok = atomic_load(&s->ready)) < s->c.workers && !atomic_load(&s->failed)) {
		if (clock_ns() - t0 > ERPC_READY_MS * 1000000ull) {
			snprintf(err, errlen, "transport erpc: only %u of %u workers made their eRPC Rpc within %u s; "
				 "the host is overloaded, or eRPC hangs in its set-up (see the log above)",
				 ok, s->c.workers, ERPC_READY_MS / 1000);
			return -1;
		}
		usleep(1000);
	}
	if (!atomic_load(&s->failed))
		return 0;
	pthread_mutex_lock(&s->why_mu);
	snprintf(err, errlen, "transport erpc: %s", s->why);
	pthread_mutex_unlock(&s->why_mu);
	return -1;
}

static const char *erpc_srv_endpoint(struct tp_server *s)
{
	return s->endpoint;
}

static int worker_rpc(struct ew *w)
{
	char err[512];
	if (w->rpc)
		return 0;
	if (w->idx == ~0u)
		return -1;
	w->rpc = es_rpc_new(w->s->nx, w->idx, w, srv_on_req, NULL, 0, 0, 0, err, sizeof err);
	if (!w->rpc) {
		log_msg(LOG_ERR, "worker %u: %s", w->idx, err);
		pthread_mutex_lock(&w->s->why_mu);
		if (!w->s->why[0])
			snprintf(w->s->why, sizeof w->s->why, "worker %u cannot serve: %s", w->idx, err);
		pthread_mutex_unlock(&w->s->why_mu);
		w->idx = ~0u;   /* never again */
		atomic_fetch_add(&w->s->failed, 1);
		return -1;
	}
	atomic_fetch_add(&w->s->ready, 1);
	return 0;
}

static int erpc_srv_poll(struct tp_server *s, unsigned wi, struct tp_arrival *a, int max)
{
	struct ew *w = &s->w[wi];
	int n = 0;
	if (worker_rpc(w) < 0)
		return 0;
	es_run_once(w->rpc);
	while (w->reported < w->tail && n < max) {
		a[n].slot = w->reported++;
		a[n].voided = 0;
		n++;
	}
	return n;
}

static const void *erpc_srv_req(struct tp_server *s, unsigned wi, uint64_t slot, size_t *avail)
{
	struct ew *w = &s->w[wi];
	unsigned m = s->c.ring_slots - 1;
	w->cur = slot;
	*avail = w->slot[slot & m].len;
	return w->buf + (size_t)(slot & m) * s->c.slot_size;
}

static void erpc_srv_release(struct tp_server *s, unsigned wi, uint64_t slot)
{
	struct ew *w = &s->w[wi];
	struct ew_slot *sl = &w->slot[slot & (s->c.ring_slots - 1)];
	if (!sl->answered) {
		es_respond(w->rpc, sl->handle, NULL, 0, NULL, 0);
		w->empty_answers++;
	}
	w->head = slot + 1;
}

static int erpc_srv_reply(struct tp_server *s, unsigned wi, uint32_t client_id,
			  const struct wire_resp *r, const void *val)
{
	struct ew *w = &s->w[wi];
	struct ew_slot *sl = &w->slot[w->cur & (s->c.ring_slots - 1)];
	uint8_t hdr[WIRE_RESP_HDR];
	if (sl->answered || w->cur >= w->tail) {
		w->reply_errors++;
		return -1;   /* eRPC allows one response per request */
	}
	wire_encode_resp(hdr, r);
	if (es_respond(w->rpc, sl->handle, hdr, sizeof hdr, val, r->val_len) != 0) {
		w->reply_errors++;
		return -1;
	}
	sl->answered = 1;
	return 0;
}

static void erpc_srv_flush(struct tp_server *s, unsigned wi)
{
	if (s->w[wi].rpc)
		es_run_once(s->w[wi].rpc);   /* sends the batch eRPC queued */
}

static json_t *erpc_srv_stats(struct tp_server *s)
{
	json_t *ws = json_array();
	for (unsigned i = 0; i < s->c.workers; i++) {
		struct ew *w = &s->w[i];
		json_array_append_new(ws, json_pack("{s:I,s:I,s:I,s:I,s:I}", "requests", (json_int_t)w->tail,
			"overflow", (json_int_t)w->overflow, "oversize", (json_int_t)w->oversize,
			"empty_answers", (json_int_t)w->empty_answers, "reply_errors", (json_int_t)w->reply_errors));
	}
	return json_pack("{s:s,s:i,s:o,s:o}", "name", "erpc", "udp_port", (int)s->port,
			 "erpc_build", tp_erpc_build_json(), "per_worker", ws);
}

static void erpc_srv_close(struct tp_server *s)
{
	/* The Rpcs belong to the worker threads, which have ended: eRPC
	 * frees an Rpc from any thread once its loop is no longer run. */
	for (unsigned i = 0; i < s->c.workers; i++) {
		es_rpc_free(s->w[i].rpc);
		free(s->w[i].buf);
		free(s->w[i].slot);
	}
	es_nexus_free(s->nx);
	pthread_mutex_destroy(&s->why_mu);
	free(s->w);
	free(s);
}

/* ---------------------------------------------------------------- client */

/* One Nexus per client process, shared by its threads. */
static pthread_mutex_t cnx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct es_nexus *cnx;
static unsigned cnx_refs, cnx_port;

struct tp_client {
	char addr[64];
	unsigned port, workers, thread, npairs;
	unsigned connect_ms;
	uint32_t id;
	struct es_rpc *rpc;
	int *session;
	int failed;
	char err[512];
	unsigned *freel, nfree;        /* free buffer pairs */
	unsigned *done, ndone;         /* answered, not yet returned by cli_poll */
	struct { unsigned idx; const uint8_t *resp; size_t len; } *ans;
	unsigned *lent, nlent;         /* returned by the last cli_poll */
	uint64_t posted, answered, bad_responses;
};

/* The local address the kernel would use to reach addr. */
static int local_addr(const char *addr, char *out, size_t outlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(ERPC_PORT_BASE) };
	socklen_t sl = sizeof sa;
	int fd, r = -1;
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0 && inet_ntop(AF_INET, &sa.sin_addr, out, (socklen_t)outlen))
		r = 0;
	close(fd);
	return r;
}

static int client_nexus(const char *srv_addr, unsigned srv_port, char *err, size_t errlen)
{
	char me[64];
	int r = 0;
	pthread_mutex_lock(&cnx_lock);
	if (cnx) {
		cnx_refs++;
		goto out;
	}
	if (local_addr(srv_addr, me, sizeof me) < 0) {
		snprintf(err, errlen, "transport erpc: no local route to server address %s (want an IPv4 address)",
			 srv_addr);
		r = -1;
		goto out;
	}
	/* A free session port: the server's and other processes' are taken. */
	for (unsigned p = ERPC_PORT_BASE; p < ERPC_PORT_BASE + ERPC_PORTS && !cnx; p++) {
		if (p == srv_port)
			continue;
		cnx = es_nexus_new(me, p, 0, err, errlen);
		cnx_port = p;
		if (!cnx && !strstr(err, "in use"))
			break;
	}
	if (!cnx) {
		r = -1;
		goto out;
	}
	cnx_refs = 1;
out:
	pthread_mutex_unlock(&cnx_lock);
	return r;
}

static void client_nexus_put(void)
{
	pthread_mutex_lock(&cnx_lock);
	if (cnx_refs && --cnx_refs == 0) {
		es_nexus_free(cnx);
		cnx = NULL;
	}
	pthread_mutex_unlock(&cnx_lock);
}

static void cli_on_resp(void *ctx, unsigned idx, const void *resp, size_t len)
{
	struct tp_client *c = ctx;
	c->ans[c->ndone].idx = idx;
	c->ans[c->ndone].resp = resp;
	c->ans[c->ndone].len = len;
	c->ndone++;
}

static struct tp_client *erpc_cli_open(const struct tp_cli_conf *cf, char *err, size_t errlen)
{
	if (es_preflight(err, errlen) != 0)
		return NULL;
	struct tp_client *c = calloc(1, sizeof *c);
	unsigned port, workers;
	char tail;
	const char *colon;
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	colon = strchr(cf->endpoint, ':');
	if (!colon || (size_t)(colon - cf->endpoint) >= sizeof c->addr ||
	    sscanf(colon + 1, "%u:%u%c", &port, &workers, &tail) != 2 || !workers) {
		snprintf(err, errlen, "transport erpc: endpoint \"%s\" is not ADDR:PORT:WORKERS "
			 "(what an erpc server prints)", cf->endpoint);
		free(c);
		return NULL;
	}
	memcpy(c->addr, cf->endpoint, (size_t)(colon - cf->endpoint));
	c->port = port;
	c->workers = workers;
	c->thread = cf->thread;
	c->connect_ms = cf->connect_timeout_ms ? cf->connect_timeout_ms : 60000;
	c->npairs = cf->max_outstanding && cf->max_outstanding < ERPC_MAX_PAIRS ? cf->max_outstanding : ERPC_MAX_PAIRS;
	if (cf->thread > 200) {
		snprintf(err, errlen, "transport erpc: client thread %u; eRPC allows at most 200 Rpcs per process",
			 cf->thread);
		free(c);
		return NULL;
	}
	c->session = calloc(workers, sizeof *c->session);
	c->freel = calloc(c->npairs, sizeof *c->freel);
	c->lent = calloc(c->npairs, sizeof *c->lent);
	c->ans = calloc(c->npairs, sizeof *c->ans);
	if (!c->session || !c->freel || !c->lent || !c->ans) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (unsigned i = 0; i < c->npairs; i++)
		c->freel[c->nfree++] = c->npairs - 1 - i;
	if (client_nexus(c->addr, port, err, errlen) < 0)
		goto fail;
	c->id = ((uint32_t)(getpid() & 0x7fff) << 13) | ((cnx_port - ERPC_PORT_BASE) << 8) | cf->thread;
	return c;
fail:
	free(c->session);
	free(c->freel);
	free(c->lent);
	free(c->ans);
	free(c);
	return NULL;
}

/* The Rpc and sessions, made by the thread that uses them (eRPC's rule). */
static int client_rpc(struct tp_client *c)
{
	if (c->failed)
		return -1;
	if (c->rpc)
		return 0;
	c->rpc = es_rpc_new(cnx, c->thread, c, NULL, cli_on_resp, c->npairs, ERPC_REQ_MAX, ERPC_RESP_MAX,
			    c->err, sizeof c->err);
	int bad = !c->rpc;
	for (unsigned w = 0; !bad && w < c->workers; w++) {
		c->session[w] = es_connect(c->rpc, c->addr, c->port, w, c->connect_ms, c->err, sizeof c->err);
		bad = c->session[w] < 0;
	}
	if (bad) {
		c->failed = 1;
		return -1;
	}
	return 0;
}

static uint32_t erpc_cli_id(struct tp_client *c)
{
	return c->id;
}

static unsigned erpc_cli_workers(struct tp_client *c)
{
	return c->workers;
}

static int erpc_cli_post(struct tp_client *c, unsigned w, const void *req, uint32_t len, uint64_t seq,
			 char *err, size_t errlen)
{
	if (client_rpc(c) < 0) {
		snprintf(err, errlen, "%s", c->err);
		return -1;
	}
	if (w >= c->workers) {
		snprintf(err, errlen, "transport erpc: worker %u, and the server has %u", w, c->workers);
		return -1;
	}
	if (!c->nfree)
		return 1;
	unsigned idx = c->freel[--c->nfree];
	if (es_request(c->rpc, c->session[w], idx, req, len, err, errlen) != 0) {
		c->freel[c->nfree++] = idx;
		return -1;
	}
	c->posted++;
	return 0;
}

static void erpc_cli_flush(struct tp_client *c)
{
	if (client_rpc(c) == 0)
		es_run_once(c->rpc);
}

static int erpc_cli_poll(struct tp_client *c, struct tp_event *ev, int max)
{
	int n = 0;
	unsigned i;
	if (client_rpc(c) < 0)
		return 0;
	/* The values handed out last time are no longer needed. */
	for (i = 0; i < c->nlent; i++)
		c->freel[c->nfree++] = c->lent[i];
	c->nlent = 0;
	es_run_once(c->rpc);
	for (i = 0; i < c->ndone && n < max; i++) {
		struct wire_resp r;
		const char *why;
		c->answered++;
		if (wire_check_resp(c->ans[i].resp, c->ans[i].len, &r, &why) != 0) {
			c->bad_responses++;   /* an empty answer: rejected, or no room */
			c->freel[c->nfree++] = c->ans[i].idx;
			continue;
		}
		ev[n] = (struct tp_event){
			.seq = r.seq, .status = r.status, .mark = r.mark, .val_len = r.val_len,
			.kind = r.kind == WIRE_ACK ? TP_EV_ACK : TP_EV_RESP, .op = r.op,
			.worker = r.worker, .val = c->ans[i].resp + WIRE_RESP_HDR,
		};
		c->lent[c->nlent++] = c->ans[i].idx;
		n++;
	}
	memmove(c->ans, c->ans + i, (c->ndone - i) * sizeof *c->ans);
	c->ndone -= i;
	return n;
}

static json_t *erpc_cli_stats(struct tp_client *c)
{
	return json_pack("{s:s,s:I,s:I,s:I,s:i,s:o}", "name", "erpc", "posted", (json_int_t)c->posted,
			 "answered", (json_int_t)c->answered, "bad_responses", (json_int_t)c->bad_responses,
			 "udp_port", (int)cnx_port, "erpc_build", tp_erpc_build_json());
}

static void erpc_cli_close(struct tp_client *c)
{
	es_rpc_free(c->rpc);
	client_nexus_put();
	free(c->session);
	free(c->freel);
	free(c->lent);
	free(c->ans);
	free(c);
}

const struct transport_ops tp_erpc_ops = {
	.name = "erpc",
	.version = TRANSPORT_OPS_VERSION,
	.build = tp_erpc_build_json,
	.srv_open = erpc_srv_open,
	.srv_endpoint = erpc_srv_endpoint,
	.srv_ready = erpc_srv_ready,
	.srv_poll = erpc_srv_poll,
	.srv_req = erpc_srv_req,
	.srv_release = erpc_srv_release,
	.srv_reply = erpc_srv_reply,
	.srv_flush = erpc_srv_flush,
	.srv_stats = erpc_srv_stats,
	.srv_close = erpc_srv_close,
	.cli_open = erpc_cli_open,
	.cli_id = erpc_cli_id,
	.cli_workers = erpc_cli_workers,
	.cli_post = erpc_cli_post,
	.cli_flush = erpc_cli_flush,
	.cli_poll = erpc_cli_poll,
	.cli_stats = erpc_cli_stats,
	.cli_close = erpc_cli_close,
};
