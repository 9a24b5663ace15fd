/*
 * vb_seqwrite.c - system seqwrite, the server's side: a log per worker that
 * clients fill with RDMA, the server NIC as the sequencer.  Two round trips
 * per request, in slot order, linearizable.  The client's side is
 * vb_seqwrite_cli.c.
 *
 * Region of worker w (one registration, REMOTE_WRITE | READ | ATOMIC; the
 * accept data carries its address, rkey, L and where the slots start):
 *
 *   off 0 + w * 32     u64 tail   tickets taken; changed ONLY by clients'
 *                                 RDMA fetch-and-add (atomics are not
 *                                 coherent with other writes to the word)
 *   off 2048 + w * 32  u64 head   the client may take slot t % L for ticket t
 *                                 when t < head + L; stored by the worker's
 *                                 CPU only, read by clients with one 8-byte
 *                                 RDMA READ
 *   off 4096           u64 state[L + 3]   per slot, changed ONLY by RDMA
 *                                 atomics: clients' FAA +1, the worker's
 *                                 FAA through its loopback QP (then a
 *                                 spare word, unused, and the loopback's
 *                                 result)
 *   off 4096 + S       L slots of slot_size, the entry at the slot's end
 *                      (vb_write1.c: vb_os_entry): request, u32 len, and
 *                      last u64 marker = t + 1
 *
 * The tails and heads of different workers sit at different offsets within
 * their pages, so they never share the low 12 bits the NIC's atomic lock
 * table is indexed by (seed 004).
 *
 * Ticket t's slot is p = t % L in lap g = t / L; its state word reads 4g
 * when armed for that lap.  Bit 0 (+1) is the client's, bit 1 (+2) the
 * worker's.
 *
 * Client, per request: (1) FAA(tail, 1) gives t; (2) once t < head + L
 * (cached head, refreshed by READ; a wait counted per episode), it posts
 * on the same QP the WRITE of the request with marker t + 1 last, then
 * FAA(state[p], 1).  RC executes a QP's requests in order at the
 * responder, so the FAA follows the WRITE's placement.  The FAA's old
 * value says who came first: 4g -- the client: committed (a nilext request
 * commits on that completion); 4g + 2 -- the worker gave the slot up
 * first: NOT committed, and the client takes a new ticket and writes
 * again (the request never ran).
 *
 * Worker: runs tickets in order (Rule 2 as in OQ).  Ticket t has arrived
 * when state[p] has bit 0 and the marker reads t + 1 (the marker is
 * checked although the FAA already orders it: belt and braces, and a
 * stale entry never passes).  When t is claimed (tail > t) and has not
 * arrived for void_timeout_ns, the worker gives it up: FAA(state[p], 2)
 * through its loopback QP, so exactly one of the two atomics comes first
 * (atomics on one NIC are coherent with each other).  Old value 4g: the
 * slot is voided (reported as a voided arrival, never executed); 4g + 1:
 * the client won meanwhile and the entry is executed.
 *
 * A voided slot is not used again (its state is not re-armed, so head
 * cannot pass it) until the late writer can write no more into it: its
 * FAA landed (bit 0), or every connection that was live when the slot was
 * voided has since closed or landed a later ticket (a client takes and
 * writes its tickets in order on one QP, so a later landed ticket means
 * its earlier writes landed).  Without that quarantine a stopped client's
 * late WRITE would land in the slot's next entry.
 *
 * Re-arming slot p for lap g + 1 after ticket t ran: FAA(state[p],
 * 4(g + 1) - old) through the loopback QP, posted in ticket order, the
 * re-arms waiting at one time as one chain (one doorbell) with only the
 * last signaled; head is stored only after that last FAA completed (RC
 * completes a QP's WRs in order, so all of the chain's are done).  No client atomic can target the
 * word then (the next lap's client waits for head), and the CPU never
 * stores to it.
 *
 * Durability: none (the log is DRAM).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "clock.h"
#include "log.h"
#include "vb_internal.h"

static size_t sw_slots_off(const struct tp_server *s)
{
	/* L state words, a spare word (L; a no-op FAA once closed each
	 * re-arm batch, before the batch's last re-arm was signaled itself)
	 * and the loopback atomics' result word (L + 2) */
	return VB_SW_STATES_OFF + ((size_t)(s->c.ring_slots + 3) * 8 + 4095) / 4096 * 4096;
}

static inline uint64_t *sw_tail(struct vb_worker *w)
{
	return (uint64_t *)(w->sw_mem + VB_SW_TAIL_OFF(w->idx));
}

static inline uint64_t *sw_head(struct vb_worker *w)
{
	return (uint64_t *)(w->sw_mem + VB_SW_HEAD_OFF(w->idx));
}

static inline uint64_t *sw_state(struct vb_worker *w, uint64_t p)
{
	return (uint64_t *)(w->sw_mem + VB_SW_STATES_OFF) + p;
}

static inline uint8_t *sw_slot(const struct tp_server *s, struct vb_worker *w, uint64_t p)
{
	return w->sw_mem + sw_slots_off(s) + p * s->c.slot_size;
}

/* The loopback RC pair: lb[0] posts atomics that lb[1] answers. */
static int sw_loopback(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen)
{
	struct ibv_port_attr pa;
	union ibv_gid gid;
	if (ibv_query_port(s->ctx, s->port_num, &pa) != 0 ||
	    (s->gid_index >= 0 && ibv_query_gid(s->ctx, s->port_num, s->gid_index, &gid) != 0)) {
		snprintf(err, errlen, "worker %u: cannot query port %u for the seqwrite loopback QP: %s", w->idx,
			 s->port_num, strerror(errno));
		return -1;
	}
	w->sw_cq = ibv_create_cq(s->ctx, 2 * (int)s->c.ring_slots + 64, NULL, NULL, 0);
	if (!w->sw_cq) {
		snprintf(err, errlen, "worker %u: cannot create the loopback CQ: %s", w->idx, strerror(errno));
		return -1;
	}
	for (int k = 0; k < 2; k++) {
		struct ibv_qp_init_attr a;
		memset(&a, 0, sizeof a);
		a.send_cq = a.recv_cq = w->sw_cq;
		a.qp_type = IBV_QPT_RC;
		a.cap.max_send_wr = s->c.ring_slots + 16;
		a.cap.max_recv_wr = 1;
		a.cap.max_send_sge = a.cap.max_recv_sge = 1;
		w->sw_lb[k] = ibv_create_qp(s->pd, &a);
		if (!w->sw_lb[k]) {
			snprintf(err, errlen, "worker %u: cannot create the loopback QP: %s", w->idx, strerror(errno));
			return -1;
		}
	}
	for (int k = 0; k < 2; k++) {
		struct ibv_qp_attr qa;
		memset(&qa, 0, sizeof qa);
		qa.qp_state = IBV_QPS_INIT;
		qa.port_num = s->port_num;
		qa.qp_access_flags = IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
		int e = ibv_modify_qp(w->sw_lb[k], &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				      IBV_QP_ACCESS_FLAGS);
		memset(&qa, 0, sizeof qa);
		qa.qp_state = IBV_QPS_RTR;
		qa.path_mtu = pa.active_mtu;
		qa.dest_qp_num = w->sw_lb[1 - k]->qp_num;
		qa.rq_psn = 1;
		qa.max_dest_rd_atomic = 16;
		qa.min_rnr_timer = 1;
		qa.ah_attr.port_num = s->port_num;
		qa.ah_attr.dlid = pa.lid;
		if (s->gid_index >= 0) {
			qa.ah_attr.is_global = 1;
			qa.ah_attr.grh.dgid = gid;
			qa.ah_attr.grh.sgid_index = (uint8_t)s->gid_index;
			qa.ah_attr.grh.hop_limit = 1;
		}
		e = e ? e : ibv_modify_qp(w->sw_lb[k], &qa, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_MIN_RNR_TIMER);
		memset(&qa, 0, sizeof qa);
		qa.qp_state = IBV_QPS_RTS;
		qa.timeout = 14;
		qa.retry_cnt = 7;
		qa.rnr_retry = 7;
		qa.sq_psn = 1;
		qa.max_rd_atomic = 16;
		e = e ? e : ibv_modify_qp(w->sw_lb[k], &qa, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
		if (e) {
			snprintf(err, errlen, "worker %u: cannot connect the seqwrite loopback QP on %s port %u: %s",
				 w->idx, s->devname, s->port_num, strerror(e));
			return -1;
		}
	}
	return 0;
}

int vb_sw_init(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen)
{
	w->sw_len = sw_slots_off(s) + (size_t)s->c.ring_slots * s->c.slot_size;
	w->sw_mem = mmap(NULL, w->sw_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->sw_mem == MAP_FAILED) {
		w->sw_mem = NULL;
		snprintf(err, errlen, "worker %u: cannot map %zu B for the seqwrite log: %s", w->idx, w->sw_len,
			 strerror(errno));
		return -1;
	}
	w->sw_mr = vb_reg_or_explain(s, w->sw_mem, w->sw_len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, "the seqwrite log", w->idx,
				     err, errlen);
	if (!w->sw_mr)
		return -1;
	w->sw_fin = calloc(s->c.ring_slots, sizeof *w->sw_fin);
	w->sw_void = calloc(s->c.ring_slots, sizeof *w->sw_void);
	if (!w->sw_fin || !w->sw_void) {
		snprintf(err, errlen, "verbs: out of memory");
		return -1;
	}
	/* every state word reads 0 = armed for lap 0; head 0 */
	return sw_loopback(s, w, err, errlen);
}

void vb_sw_free(struct vb_worker *w)
{
	for (int k = 0; k < 2; k++)
		if (w->sw_lb[k])
			ibv_destroy_qp(w->sw_lb[k]);
	vb_destroy_cq(w->sw_cq);
	vb_dereg_mr(w->sw_mr);
	if (w->sw_mem)
		munmap(w->sw_mem, w->sw_len);
	free(w->sw_fin);
	free(w->sw_void);
}

/* The accept data's seqwrite fields (README.md: offsets 72..95). */
void vb_sw_accept(struct tp_server *s, struct vb_worker *w, uint8_t *acc)
{
	put64(acc + 72, (uint64_t)(uintptr_t)w->sw_mem);
	put32(acc + 80, w->sw_mr->rkey);
	put32(acc + 84, s->c.ring_slots);
	put64(acc + 88, sw_slots_off(s));
}

/* Fills wr and sg with FAA(state[p], add) on the loopback QP, signaled
 * with wr_id when sig; the old value lands in the result word (L + 2). */
static void lb_wr(struct vb_worker *w, uint64_t p, uint64_t add, int sig, uint64_t wr_id, struct ibv_send_wr *wr,
		  struct ibv_sge *sg)
{
	*sg = (struct ibv_sge){ .addr = (uintptr_t)sw_state(w, w->s->c.ring_slots + 2), .length = 8,
				.lkey = w->sw_mr->lkey };
	memset(wr, 0, sizeof *wr);
	wr->wr_id = wr_id;
	wr->sg_list = sg;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr->send_flags = sig ? IBV_SEND_SIGNALED : 0;
	wr->wr.atomic.remote_addr = (uintptr_t)sw_state(w, p);
	wr->wr.atomic.rkey = w->sw_mr->rkey;
	wr->wr.atomic.compare_add = add;
}

/* Posts the n WRs chained in wr[] with one doorbell.  0, or -1 (counted). */
static int lb_post(struct vb_worker *w, struct ibv_send_wr *wr, unsigned n)
{
	struct ibv_send_wr *bad = NULL;
	for (unsigned i = 0; i + 1 < n; i++)
		wr[i].next = &wr[i + 1];
	if (ibv_post_send(w->sw_lb[0], wr, &bad) != 0) {
		w->sw_lb_errors++;
		return -1;
	}
	w->sw_lb_out += n;
	return 0;
}

/* Reaps loopback completions: a re-arm's (wr_id = ticket + 1) moves head
 * past its ticket; the void's (wr_id 0) result lands in sw_res. */
static void lb_reap(struct tp_server *s, struct vb_worker *w)
{
	struct ibv_wc wc[16];
	int n = ibv_poll_cq(w->sw_cq, 16, wc);
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			w->sw_lb_errors++;
			log_msg(LOG_ERR, "worker %u: a seqwrite loopback atomic failed: %s", w->idx,
				ibv_wc_status_str(wc[i].status));
			continue;
		}
		w->sw_lb_out = 0;   /* signaled: every WR before it completed (one QP, in order) */
		if (wc[i].wr_id) {
			__atomic_store_n(sw_head(w), wc[i].wr_id, __ATOMIC_RELEASE);
			w->sw_head_pub = wc[i].wr_id;
		} else {
			w->sw_void_done = 1;
		}
	}
	(void)s;
}

/* Whether the late writer of voided ticket t can write no more (file
 * top): its FAA landed, or every connection live at the void closed or
 * landed a later ticket. */
static int quarantine_over(struct tp_server *s, struct vb_worker *w, uint64_t t)
{
	uint64_t p = t & s->mask;
	if (__atomic_load_n(sw_state(w, p), __ATOMIC_ACQUIRE) & 1)
		return 1;
	int over = 1;
	unsigned hi = __atomic_load_n(&s->conns_hi, __ATOMIC_ACQUIRE);
	/* sw_open, and the fields read only while it is set, change under
	 * w->mu (vb_srv_cm.c): a connection counts from before its accept
	 * until its QP is in the error state, not by its CM state, which
	 * turns to closing before the QP stops landing writes */
	pthread_mutex_lock(&w->mu);
	for (unsigned i = 0; i < hi && over; i++) {
		const struct vb_sconn *c = &s->conns[i];
		if (c->sw_open && c->worker == w->idx && c->serial < w->sw_void[p] && c->sw_landed <= t)
			over = 0;
	}
	pthread_mutex_unlock(&w->mu);
	return over;
}

/* Re-arms, in ticket order, the slots of executed tickets (file top); a
 * voided one waits for its quarantine to end.  At most SW_REARM_BATCH per
 * call, posted as one chain (one doorbell) whose last FAA is signaled:
 * its completion says every re-arm before it is done (one RC QP
 * completes in order), and then head moves past it (lb_reap). */
#define SW_REARM_BATCH 32u
static void rearm(struct tp_server *s, struct vb_worker *w)
{
	const uint64_t L = s->c.ring_slots;
	struct ibv_send_wr wr[SW_REARM_BATCH];
	struct ibv_sge sg[SW_REARM_BATCH];
	unsigned n = 0;
	uint64_t next = w->sw_rearm;
	while (next < w->sw_released && n < SW_REARM_BATCH && w->sw_lb_out + n + 1 < L + 16) {
		uint64_t t = next, p = t & s->mask, g = t / L;
		if (w->sw_void[p] && !quarantine_over(s, w, t))
			break;
		uint64_t now = __atomic_load_n(sw_state(w, p), __ATOMIC_ACQUIRE);
		if (w->sw_void[p]) {
			w->sw_void[p] = 0;
			w->sw_quarantine_ended++;
		}
		next++;
		lb_wr(w, p, 4 * (g + 1) - now, 0, 0, &wr[n], &sg[n]);
		n++;
	}
	if (!n)
		return;
	wr[n - 1].send_flags = IBV_SEND_SIGNALED;
	wr[n - 1].wr_id = next;
	if (lb_post(w, wr, n) == 0)
		w->sw_rearm = next;
}

/* Whether the executed tickets' re-arms should go now: SW_REARM_DUE of
 * them wait (fewer with a short log), or a client may be waiting for room
 * (the tail is within that many of head + L), and none is in flight.
 * Re-arming a few at a time costs one doorbell and one signaled loopback
 * atomic per batch, not per request; rxe runs each in software on the
 * CPUs the client and worker also need. */
#define SW_REARM_DUE 8u
static int rearm_due(struct tp_server *s, struct vb_worker *w)
{
	const uint64_t L = s->c.ring_slots;
	uint64_t due = L / 4 < SW_REARM_DUE ? (L / 4 ? L / 4 : 1) : SW_REARM_DUE;
	if (w->sw_lb_out || w->sw_rearm >= w->sw_released)
		return 0;
	if (w->sw_released - w->sw_rearm >= due)
		return 1;
	return __atomic_load_n(sw_tail(w), __ATOMIC_ACQUIRE) + due > w->sw_head_pub + L;
}

int vb_sw_poll(struct tp_server *s, unsigned wi, struct tp_arrival *a, int max)
{
	struct vb_worker *w = &s->w[wi];
	const uint64_t L = s->c.ring_slots;
	int n = 0;
	if (w->sw_lb_out)
		lb_reap(s, w);
	if (rearm_due(s, w))
		rearm(s, w);
	while (n < max && w->sw_next - w->sw_released < L && w->sw_next < w->sw_head_pub + L) {
		uint64_t t = w->sw_next, p = t & s->mask, g = t / L;
		uint64_t st = __atomic_load_n(sw_state(w, p), __ATOMIC_ACQUIRE);
		const uint8_t *slot = sw_slot(s, w, p);
		uint64_t mk = __atomic_load_n((const uint64_t *)(slot + s->c.slot_size - 8), __ATOMIC_ACQUIRE);
		if (st == 4 * g + 1 && mk == t + 1) {
			a[n].slot = t;
			a[n].voided = 0;
			n++;
			w->sw_next++;
			w->sw_wait_since = 0;
			w->arrivals++;
			continue;
		}
		if (st == 4 * g + 1)
			w->sw_marker_late++;   /* FAA seen before the WRITE's bytes: never, by RC order */
		/* claimed and not arrived: give it up after void_timeout_ns */
		uint64_t tail = __atomic_load_n(sw_tail(w), __ATOMIC_ACQUIRE);
		if (tail <= t || st != 4 * g)
			break;
		uint64_t now = clock_ns();
		if (!w->sw_wait_since) {
			w->sw_wait_since = now;
			break;
		}
		if (now - w->sw_wait_since < s->c.void_timeout_ns)
			break;
		/* FAA(state, 2) through the loopback QP, waited for here (a
		 * loopback round trip) */
		while (w->sw_lb_out)
			lb_reap(s, w);
		w->sw_void_done = 0;
		struct ibv_send_wr vwr;
		struct ibv_sge vsg;
		lb_wr(w, p, 2, 1, 0, &vwr, &vsg);
		if (lb_post(w, &vwr, 1) != 0)
			break;
		uint64_t dl = clock_ns() + 1000000000ull;
		while (!w->sw_void_done && clock_ns() < dl)
			lb_reap(s, w);
		if (!w->sw_void_done)
			break;
		uint64_t old = __atomic_load_n(sw_state(w, L + 2), __ATOMIC_ACQUIRE);
		w->sw_wait_since = 0;
		a[n].slot = t;
		if (old == 4 * g) {
			/* ours: the slot is a hole, quarantined until its writer is done */
			w->sw_void[p] = atomic_load(&s->conn_serial) + 1;
			a[n].voided = 1;
			w->sw_voided++;
		} else {
			a[n].voided = 0;   /* the client's came first: its entry is there */
			w->sw_void_lost++;
			w->arrivals++;
		}
		n++;
		w->sw_next++;
	}
	return n;
}

const void *vb_sw_req(struct tp_server *s, unsigned wi, uint64_t slot, size_t *avail)
{
	struct vb_worker *w = &s->w[wi];
	const uint8_t *p = vb_os_req(sw_slot(s, w, slot & s->mask), s->c.slot_size, avail);
	if (!w->sw_void[slot & s->mask] && *avail >= WIRE_HDR_SIZE) {
		/* the request's client has landed this ticket (quarantine rule) */
		struct wire_req h;
		if (wire_check(p, *avail, &h, NULL) == 0) {
			uint32_t block = h.client_id >> VB_LANE_BITS;
			pthread_mutex_lock(&w->mu);
			uint32_t ci = block < w->nblock ? w->by_block[block] : 0;
			if (ci)
				s->conns[ci - 1].sw_landed = slot + 1;
			pthread_mutex_unlock(&w->mu);
		}
	}
	return w->sw_void[slot & s->mask] ? NULL : p;
}

void vb_sw_release(struct tp_server *s, unsigned wi, uint64_t slot)
{
	struct vb_worker *w = &s->w[wi];
	w->sw_released = slot + 1;
	if (rearm_due(s, w))
		rearm(s, w);
}

json_t *vb_sw_stats(struct vb_worker *w)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "voided", (json_int_t)w->sw_voided,
			 "void_lost_to_client", (json_int_t)w->sw_void_lost,
			 "quarantines_ended", (json_int_t)w->sw_quarantine_ended,
			 "marker_after_state", (json_int_t)w->sw_marker_late,
			 "loopback_errors", (json_int_t)w->sw_lb_errors, "head", (json_int_t)w->sw_head_pub);
}
