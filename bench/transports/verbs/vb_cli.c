/*
 * vb_cli.c - the client operations (cli_open .. cli_close) and the lanes:
 * one lane per client thread, with a ring of request slots per worker that
 * the QP's owner posts from and a ring of events the owner routes back
 * (vb_cli_owner.c).  Without delegation a tp_client has its own group
 * (QPs) and one lane; with delegation (§5.2.2) the threads of a process
 * share one group, lane = thread.
 *
 * Guarantees: cli_post never blocks: when all of a lane's request slots to
 * a worker are in flight (the server's ring is full: RNR) it returns busy
 * (1) and nothing was sent; a lane is unpublished only once no owner can
 * still see it, and its held response buffers go back to the SRQ; with
 * delegation every thread of a process must name the same server, and a
 * thread index is open at most once.  client_id = block << 10 | lane
 * (README.md, "Client ids").  Shown by the verbs suite's delegation, order
 * and busy cases.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "vb_internal.h"


static pthread_mutex_t deleg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct vb_group *deleg_group;

static void lane_free(struct vb_lane *L, unsigned workers)
{
	if (!L)
		return;
	vb_dereg_mr(L->mr);
	free(L->sbuf);
	if (L->q)
		for (unsigned w = 0; w < workers; w++) {
			free(L->q[w].mseq);
			free(L->q[w].mlen);
			free(L->q[w].mdur);
			free(L->q[w].ev);
		}
	free(L->q);
	free(L);
}

static struct vb_lane *lane_open(struct vb_group *g, unsigned idx, unsigned max_outstanding, char *err, size_t errlen)
{
	const unsigned W = g->workers, D = g->depth;
	struct vb_lane *L = calloc(1, sizeof *L);
	if (!L)
		goto oom;
	L->g = g;
	L->idx = idx;
	L->client_id = g->block << VB_LANE_BITS | idx;
	L->evcap = vb_pow2_at_least(2 * (max_outstanding ? max_outstanding : 1024) + 2 * D + 64);
	/* requests, READ targets, and seqwrite's atomics' results */
	size_t bytes = (size_t)W * D * g->slot_size + (size_t)W * 64 + (size_t)W * D * 8;
	L->sbuf = vb_alloc_pages(bytes);
	if (!L->sbuf)
		goto oom;
	L->mr = vb_cli_reg(g, L->sbuf, bytes, "request buffers", err, errlen);
	if (!L->mr) {
		lane_free(L, W);
		return NULL;
	}
	L->q = calloc(W, sizeof *L->q);
	if (!L->q)
		goto oom;
	for (unsigned w = 0; w < W; w++) {
		L->q[w].mseq = calloc(D, sizeof *L->q[w].mseq);
		L->q[w].mlen = calloc(D, sizeof *L->q[w].mlen);
		L->q[w].mdur = calloc(D, 1);
		L->q[w].ev = calloc(L->evcap, sizeof *L->q[w].ev);
		if (!L->q[w].mseq || !L->q[w].mlen || !L->q[w].mdur || !L->q[w].ev)
			goto oom;
	}
	return L;
oom:
	snprintf(err, errlen, "verbs: out of memory for a client thread's buffers");
	lane_free(L, W);
	return NULL;
}

static void lane_publish(struct vb_group *g, struct vb_lane *L)
{
	atomic_store_explicit(&g->lanes[L->idx], L, memory_order_release);
	unsigned hi = atomic_load(&g->lanes_hi);
	while (L->idx + 1 > hi && !atomic_compare_exchange_weak(&g->lanes_hi, &hi, L->idx + 1))
		;
}

/* Unpublishes L after its requests completed (or 2 s), waits until no
 * owner can still see it, and returns its buffers. */
static void lane_close(struct vb_group *g, struct vb_lane *L)
{
	const unsigned W = g->workers;
	uint64_t deadline = clock_ns() + 2000000000ull;
	while (!atomic_load(&g->broken) && clock_ns() < deadline) {
		int busy = 0;
		for (unsigned w = 0; w < W; w++) {
			vb_combine(g, w, VB_REAP);
			struct vb_lq *lq = &L->q[w];
			busy |= atomic_load(&lq->done_pub) != atomic_load(&lq->head);
		}
		if (!busy)
			break;
		sched_yield();
	}
	atomic_store(&g->lanes[L->idx], NULL);
	for (unsigned w = 0; w < W; w++) {
		pthread_mutex_lock(g->q[w].lk);   /* no owner still holds L */
		pthread_mutex_unlock(g->q[w].lk);
	}
	if (!atomic_load(&g->broken)) {
		vb_repost_bufs(g, L->held, L->nheld);
		for (unsigned w = 0; w < W; w++) {
			struct vb_lq *lq = &L->q[w];
			for (uint64_t t = atomic_load(&lq->ev_tail); t < atomic_load(&lq->ev_head); t++)
				if (lq->ev[t & (L->evcap - 1)].buf != VB_NOBUF)
					vb_repost_bufs(g, &lq->ev[t & (L->evcap - 1)].buf, 1);
		}
	}
	lane_free(L, W);
}

struct tp_client *vb_cli_open(const struct tp_cli_conf *cc, char *err, size_t errlen)
{
	struct tp_client *c = calloc(1, sizeof *c);
	if (!c) {
		snprintf(err, errlen, "verbs: out of memory");
		return NULL;
	}
	c->c = *cc;
	if (!cc->delegation) {
		c->g = vb_group_open(cc, 0, err, errlen);
		if (!c->g)
			goto fail;
		c->g->refs = 1;
		c->l = lane_open(c->g, 0, cc->max_outstanding, err, errlen);
		if (!c->l)
			goto fail;
		lane_publish(c->g, c->l);
		vb_ctr_cli_begin(c);
		return c;
	}
	if (cc->thread >= VB_MAX_LANES) {
		snprintf(err, errlen, "delegation shares QPs among at most %u threads per process; thread %u is one too many",
			 VB_MAX_LANES, cc->thread);
		goto fail;
	}
	pthread_mutex_lock(&deleg_mu);
	if (deleg_group) {
		char ep[192];
		struct sockaddr_storage dst;
		unsigned port;
		if (vb_canon_endpoint(cc->endpoint, &dst, &port, ep, sizeof ep, err, errlen) != 0) {
			pthread_mutex_unlock(&deleg_mu);
			goto fail;
		}
		if (strcmp(ep, deleg_group->endpoint) != 0) {
			snprintf(err, errlen, "delegation: this process already shares its QPs with %s; all client threads of "
				 "a process must use the same server (%s asked)", deleg_group->endpoint, ep);
			pthread_mutex_unlock(&deleg_mu);
			goto fail;
		}
		if (atomic_load(&deleg_group->broken)) {
			vb_group_err(deleg_group, err, errlen);
			pthread_mutex_unlock(&deleg_mu);
			goto fail;
		}
	} else {
		deleg_group = vb_group_open(cc, 1, err, errlen);
		if (!deleg_group) {
			pthread_mutex_unlock(&deleg_mu);
			goto fail;
		}
	}
	if (atomic_load(&deleg_group->lanes[cc->thread])) {
		snprintf(err, errlen, "delegation: client thread %u is already open on the shared QPs", cc->thread);
		if (!deleg_group->refs) {
			vb_group_destroy(deleg_group);
			deleg_group = NULL;
		}
		pthread_mutex_unlock(&deleg_mu);
		goto fail;
	}
	c->l = lane_open(deleg_group, cc->thread, cc->max_outstanding, err, errlen);
	if (!c->l) {
		if (!deleg_group->refs) {
			vb_group_destroy(deleg_group);
			deleg_group = NULL;
		}
		pthread_mutex_unlock(&deleg_mu);
		goto fail;
	}
	c->g = deleg_group;
	c->g->refs++;
	lane_publish(c->g, c->l);
	pthread_mutex_unlock(&deleg_mu);
	vb_ctr_cli_begin(c);
	return c;
fail:
	vb_cli_close(c);
	return NULL;
}

uint32_t vb_cli_id(struct tp_client *c)
{
	return c->l->client_id;
}

unsigned vb_cli_workers(struct tp_client *c)
{
	return c->g->workers;
}

/*
 * Puts one request into the lane's next request slot to worker wi, for
 * the owner to post: 0 done, 1 busy (every slot to wi is in flight: the
 * server's ring is full), -1 with err.  Posts nothing itself.  With
 * direct (no delegation: the lane is the owner), a request the QP can
 * take at once -- inline, not durable, nothing queued before it, room in
 * the send queue -- is recorded in the slot but not copied to the send
 * buffer, and 2 says so: the caller posts it from req (vb_post_direct).
 */
static int lane_put(struct tp_client *c, unsigned wi, const void *req, uint32_t len, uint64_t seq, int direct,
		    char *err, size_t errlen)
{
	struct vb_group *g = c->g;
	struct vb_lane *L = c->l;
	if (atomic_load_explicit(&g->broken, memory_order_relaxed)) {
		vb_group_err(g, err, errlen);
		return -1;
	}
	if (wi >= g->workers) {
		snprintf(err, errlen, "verbs: worker %u does not exist (the server has %u)", wi, g->workers);
		return -1;
	}
	if (g->os && len > g->slot_size - 16) {
		snprintf(err, errlen, "request of %u B does not fit a %u B one-sided log slot, whose last 16 B are its "
			 "length and marker; start the server with a larger --slot-size", len, g->slot_size);
		return -1;
	}
	if (len > g->slot_size) {
		snprintf(err, errlen, "request of %u B does not fit a %u B receive slot; start the server with a larger "
			 "--slot-size", len, g->slot_size);
		return -1;
	}
	const unsigned D = g->depth;
	struct vb_lq *lq = &L->q[wi];
	uint64_t h = atomic_load_explicit(&lq->head, memory_order_relaxed);
	if (h - atomic_load_explicit(&lq->done_pub, memory_order_acquire) >= D) {
		/* Every request slot to this worker is in flight, not yet
		 * ACKed (the server's ring is full: RNR).  Say busy, so the
		 * caller keeps consuming responses (which return receive
		 * buffers) and posts again; a QP that makes no progress at all
		 * is broken by the watchdog in vb_combine(). */
		vb_combine(g, wi, VB_REAP);
		if (h - atomic_load_explicit(&lq->done_pub, memory_order_acquire) >= D) {
			/* one wait per stretch of refusals, as shm counts it;
			 * every refused post in busy_returns */
			L->full_waits += !lq->full;
			lq->full = 1;
			L->busy_returns++;
			if (++L->cm_tick % VB_CM_CHECK_EVERY == 0)
				vb_cm_check(g);
			if (atomic_load_explicit(&g->broken, memory_order_relaxed)) {
				vb_group_err(g, err, errlen);
				return -1;
			}
			return 1;
		}
	}
	unsigned slot = (unsigned)(h & (D - 1));
	const int dur = g->durable_srv && len >= WIRE_HDR_SIZE && (get16((const uint8_t *)req + 16) & WIRE_F_DURABLE);
	const struct vb_cqp *q = &g->q[wi];
	direct = direct && !g->os && !dur && !q->shared && len <= q->max_inline && lq->posted == h && q->sq_used < q->sq_depth;
	if (!direct)
		memcpy(L->sbuf + ((size_t)wi * D + slot) * g->slot_size, req, len);
	lq->mseq[slot] = seq;
	lq->mlen[slot] = len;
	lq->mdur[slot] = (uint8_t)dur;
	atomic_store_explicit(&lq->head, h + 1, memory_order_release);
	lq->full = 0;
	L->posts++;
	return direct ? 2 : 0;
}

int vb_cli_post(struct tp_client *c, unsigned wi, const void *req, uint32_t len,
		       uint64_t seq, char *err, size_t errlen)
{
	struct vb_group *g = c->g;
	int r = lane_put(c, wi, req, len, seq, !g->delegated, err, errlen);
	if (r == 2) {
		if (vb_post_direct(g, c->l, wi, req, len) == 0)
			return 0;
		vb_group_err(g, err, errlen);
		return -1;
	}
	/* post at once; the completions are reaped by the next poll (here
	 * only if the send queue has no room), so nothing precedes the SEND */
	if (r == 0)
		vb_combine(g, wi, VB_POST_ONLY);
	return r;
}

/* Puts as many of r[0..n) as there are free request slots, then lets the
 * owner post them together: one chain of WRs, one doorbell, and a signaled
 * completion only where the commit rules need one (vb_cli_owner.c). */
int vb_cli_post_many(struct tp_client *c, unsigned wi, const struct tp_req *r, int n,
		     char *err, size_t errlen)
{
	int k = 0;
	for (; k < n; k++) {
		int x = lane_put(c, wi, r[k].buf, r[k].len, r[k].seq, 0, err, errlen);
		if (x < 0 && k == 0)
			return -1;
		if (x != 0)
			break;   /* busy, or an error the next post reports */
	}
	if (k)
		vb_combine(c->g, wi, VB_POST_ONLY);
	return k;
}

void vb_cli_flush(struct tp_client *c)
{
	for (unsigned w = 0; w < c->g->workers; w++)
		vb_combine(c->g, w, VB_REAP);
}

int vb_cli_poll(struct tp_client *c, struct tp_event *ev, int max)
{
	struct vb_group *g = c->g;
	struct vb_lane *L = c->l;
	const unsigned W = g->workers;
	if (L->nheld) {
		vb_repost_bufs(g, L->held, L->nheld);
		L->nheld = 0;
	}
	/* the CM channel is looked at every VB_CM_CHECK_EVERY-th poll (it
	 * reads the clock; a closed server is still noticed within
	 * VB_CM_CHECK_NS of polling) */
	if (++L->cm_tick % VB_CM_CHECK_EVERY == 0)
		vb_cm_check(g);
	for (unsigned w = 0; w < W; w++)
		vb_combine(g, w, VB_REAP);
	if (max > VB_HELD_MAX)
		max = VB_HELD_MAX;
	int k = 0;
	for (unsigned i = 0; i < W && k < max; i++) {
		unsigned w = W == 1 ? 0 : (L->rr + i) % W;
		struct vb_lq *lq = &L->q[w];
		uint64_t t = atomic_load_explicit(&lq->ev_tail, memory_order_relaxed);
		uint64_t h = atomic_load_explicit(&lq->ev_head, memory_order_acquire);
		while (t < h && k < max) {
			const struct vb_ev *e = &lq->ev[t & (L->evcap - 1)];
			struct tp_event *o = &ev[k++];
			o->seq = e->seq;
			o->status = e->status & ~WIRE_S_MARKS;
			o->mark = (uint8_t)(e->status >> WIRE_S_SHIFT);
			o->val_len = e->val_len;
			o->kind = e->kind;
			o->op = e->op;
			o->worker = (uint16_t)w;
			o->val = NULL;
			o->t_done = e->t;
			if (e->buf != VB_NOBUF) {
				L->held[L->nheld++] = e->buf;
				o->val = g->rbuf + (size_t)e->buf * g->slot_size + WIRE_RESP_HDR;
			}
			if (e->kind == TP_EV_DELIVERED)
				L->delivered++;
			else if (e->kind == TP_EV_ACK)
				L->acks++;
			else
				L->resps++;
			t++;
		}
		atomic_store_explicit(&lq->ev_tail, t, memory_order_release);
	}
	L->rr++;
	/* broken and nothing left to hand out: say so, so a caller waiting
	 * for one request's commit stops now, not at its deadline */
	if (k == 0 && atomic_load_explicit(&g->broken, memory_order_relaxed))
		return -1;
	return k;
}

json_t *vb_cli_stats(struct tp_client *c)
{
	struct vb_group *g = c->g;
	struct vb_lane *L = c->l;
	uint64_t sends = 0, inl = 0, reads = 0, calls = 0, stray = 0, bad = 0, ovf = 0, sig = 0, cqes = 0, polls = 0;
	unsigned rnr_retry = 7, min_rnr = 31, inline_max = 0;
	for (unsigned w = 0; w < g->workers; w++) {
		struct vb_cqp *q = &g->q[w];
		pthread_mutex_lock(q->lk);
		sends += q->sends; inl += q->inline_sends; reads += q->reads; calls += q->post_calls;
		stray += q->stray; bad += q->bad; ovf += q->overflow;
		sig += q->signaled; cqes += q->send_completions; polls += q->polls;
		pthread_mutex_unlock(q->lk);
		if (q->rnr_retry < rnr_retry)
			rnr_retry = q->rnr_retry;
		if (q->min_rnr < min_rnr)
			min_rnr = q->min_rnr;
		inline_max = q->max_inline;
	}
	json_t *j = json_pack("{s:s,s:s,s:I,s:i,s:b,s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:i,s:i,s:i,s:i,s:i}",
		"transport", "verbs", "endpoint", g->endpoint, "client_id", (json_int_t)L->client_id,
		"qps", g->xrc ? 2 : (int)g->workers, "delegation", g->delegated,
		"threads_sharing_qps", g->delegated ? (int)g->refs : 1,
		"posts", (json_int_t)L->posts, "ring_full_waits", (json_int_t)L->full_waits,
		"busy_returns", (json_int_t)L->busy_returns, "delivered", (json_int_t)L->delivered,
		"acks", (json_int_t)L->acks, "responses", (json_int_t)L->resps,
		"response_buffers", (json_int_t)g->rdepth,
		"rnr_retry", (int)rnr_retry, "min_rnr_timer", (int)min_rnr, "max_inline", (int)inline_max,
		"request_slots_per_worker", (int)g->depth, "durable_reads_possible", g->durable_srv);
	if (g->xrc)
		json_object_set_new(j, "xrc", json_true());
	if (g->os) {
		/* write1 and seqwrite (vb_write1.c, vb_seqwrite_cli.c) */
		uint64_t fw = 0, hr = 0, rt = 0;
		for (unsigned w = 0; w < g->workers; w++) {
			fw += g->q[w].os_full_waits;
			hr += g->q[w].os_head_reads;
			rt += g->q[w].sw_retries;
		}
		json_object_set_new(j, "onesided", json_pack("{s:s,s:I,s:I,s:I}",
			"system", g->os == VB_OS_WRITE1 ? "write1" : "seqwrite", "onesided_full_waits", (json_int_t)fw,
			"head_reads", (json_int_t)hr, "seqwrite_retries", (json_int_t)rt));
	}
	/* QP-level counters are the group's: with delegation every thread
	 * reports the same shared totals. */
	json_object_set_new(j, "qp_totals", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"sends", (json_int_t)sends, "inline_sends", (json_int_t)inl, "durable_reads", (json_int_t)reads,
		"post_calls", (json_int_t)calls, "signaled_wrs", (json_int_t)sig,
		"send_completions", (json_int_t)cqes, "owner_polls", (json_int_t)polls,
		"stray_responses", (json_int_t)stray,
		"bad_responses", (json_int_t)bad, "event_overflows", (json_int_t)ovf));
	if (atomic_load(&g->broken)) {
		char e[400];
		vb_group_err(g, e, sizeof e);
		json_object_set_new(j, "error", json_string(e));
	}
	/* the device's counters, in the one thread that owns the process's
	 * snapshot (vb_counters.c) */
	json_t *ctr = vb_ctr_cli_json(c);
	if (ctr)
		json_object_set_new(j, "rdma_counters", ctr);
	return j;
}

void vb_cli_close(struct tp_client *c)
{
	if (!c)
		return;
	vb_ctr_cli_end(c);
	struct vb_group *g = c->g;
	if (!g) {
		free(c);
		return;
	}
	if (!g->delegated) {
		if (c->l)
			lane_close(g, c->l);
		vb_group_destroy(g);
		free(c);
		return;
	}
	pthread_mutex_lock(&deleg_mu);
	if (c->l)
		lane_close(g, c->l);
	if (--g->refs == 0) {
		vb_group_destroy(g);
		if (deleg_group == g)
			deleg_group = NULL;
	}
	pthread_mutex_unlock(&deleg_mu);
	free(c);
}
