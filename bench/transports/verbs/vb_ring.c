/*
 * vb_ring.c - a server worker's receive ring and its data path in the
 * modes srq and slot_ring: the SRQ and its receive CQ, the receive
 * buffers and their MRs, posting WQEs in ticket order (Rule 1), and the
 * transport operations srv_poll, srv_req, srv_release and srv_flush.  The
 * mp mode brings its own ring and data path (vb_mp_exp.c) through
 * s->hooks and reuses the pieces exported here.
 *
 * Guarantees (README.md, "Rule 1" and "Rule 2"):
 *  - WQE t (wr_id = ticket t) goes into slot t % ring_slots, and tickets
 *    are posted strictly in order: vb_post_wqes is the only poster, and
 *    post_recv refuses any ticket but the next one.  The SRQ hands WQEs
 *    out in posting order, so a receive completion's ticket is the
 *    request's place in the queue.
 *  - srv_release reposts ticket t + ring_slots into the same buffer; the
 *    executor releases in slot order, so posting order stays ticket order.
 *    Reposts are batched (both modes) but never reordered: released
 *    tickets wait, in order, until repost_due() -- a batch of
 *    repost_batch() tickets, or fewer than half the ring still posted --
 *    and then go in one linked post.  At most repost_batch() - 1 <=
 *    ring_slots / 4 WQEs are held back, and never while the SRQ runs low,
 *    so a client never waits in RNR for a WQE the worker keeps (with two
 *    slots, as in `vtest hwack`, every release is posted at once).
 *  - In durable mode SRQTail is persisted before a post and a released
 *    slot is invalidated before its repost (vb_durable.c relies on both).
 *  - A receive completing in error is counted and reported as a voided
 *    arrival, never executed.
 * Shown by the verbs suite: `vtest hwack` (no WQE, no ACK), `vtest order`
 * (slots executed 0..n-1 over 8 threads), the slot_ring and durable cases.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <libpmem.h>

#include "log.h"
#include "vb_internal.h"

/* Logs at most a few lines per worker, then every power of two. */
int vb_w_may_log(struct vb_worker *w)
{
	uint64_t n = ++w->log_budget;
	return n <= 5 || (n & (n - 1)) == 0;
}

/* srq and slot_ring: WQE t is slot t % ring_slots. */
static void slot_sge(const struct tp_server *s, const struct vb_worker *w, uint64_t t, struct ibv_sge *sg)
{
	uint64_t pos = t & s->mask;
	sg->addr = (uintptr_t)slot_buf(s, w, pos);
	sg->length = s->c.slot_size;
	sg->lkey = slot_lkey(w, pos);
}

/*
 * Posts WQEs first .. first+n-1 (wr_id = their number, buffers from fill)
 * to w's SRQ in linked batches, in that order.  0, or -1 (logged, counted;
 * what names the WQEs in the log).
 */
int vb_post_wqes(struct tp_server *s, struct vb_worker *w, uint64_t first, unsigned n, vb_wqe_fn *fill,
		 const char *what)
{
	struct ibv_recv_wr wr[VB_REPOST_BATCH];
	struct ibv_sge sg[VB_REPOST_BATCH];
	while (n) {
		unsigned k = n < VB_REPOST_BATCH ? n : VB_REPOST_BATCH;
		for (unsigned i = 0; i < k; i++) {
			fill(s, w, first + i, &sg[i]);
			wr[i].wr_id = first + i;
		}
		int e = vb_post_recv_chain(w->srq, wr, sg, k);
		if (e) {
			w->post_errors++;
			if (vb_w_may_log(w))
				log_msg(LOG_ERR, "worker %u: ibv_post_srq_recv of %s %" PRIu64 "..%" PRIu64 ": %s",
					w->idx, what, first, first + k - 1, strerror(e));
			return -1;
		}
		w->post_calls++;
		first += k;
		n -= k;
		w->next_post = first;
	}
	return 0;
}

/*
 * Posts n receive WQEs for tickets first.. into their slots.  first must
 * be the next ticket to post: posting order is the order the SRQ hands
 * WQEs out (Rule 1).  0, or -1 (logged, counted).
 */
static int post_recv(struct tp_server *s, struct vb_worker *w, uint64_t first, unsigned n)
{
	if (first != w->next_post) {
		log_msg(LOG_ERR, "worker %u: repost of ticket %" PRIu64 " but the next ticket to post is %" PRIu64
			"; this is a transport bug", w->idx, first, w->next_post);
		return -1;
	}
	/* SRQTail first: a request can land in a WQE as soon as it is
	 * posted, and recovery scans only up to SRQTail. */
	w->hdr->srq_tail = first + n;
	vb_persist(w, &w->hdr->srq_tail, sizeof w->hdr->srq_tail);
	return vb_post_wqes(s, w, first, n, slot_sge, "tickets");
}

/* Released tickets per linked repost: VB_REPOST_BATCH, at most a quarter
 * of the ring (at least 1). */
static unsigned repost_batch(const struct tp_server *s)
{
	unsigned b = s->c.ring_slots / 4;
	return b < 1 ? 1 : b > VB_REPOST_BATCH ? VB_REPOST_BATCH : b;
}

/* Whether w's held-back reposts must go now: a full batch, or fewer than
 * half of the ring's WQEs still posted and not yet taken (every completion,
 * an error too, takes one: arrivals counts them). */
static int repost_due(const struct tp_server *s, const struct vb_worker *w)
{
	return w->batch_n >= repost_batch(s) || w->next_post - w->arrivals < s->c.ring_slots / 2;
}

static void flush_reposts(struct tp_server *s, struct vb_worker *w)
{
	if (w->batch_n && repost_due(s, w)) {
		post_recv(s, w, w->batch_first, w->batch_n);
		w->batch_n = 0;
	}
}

struct ibv_mr *vb_reg_or_explain(struct tp_server *s, void *addr, size_t len, int access, const char *what,
				 unsigned wi, char *err, size_t errlen)
{
	struct ibv_mr *mr = ibv_reg_mr(s->pd, addr, len, access);
	if (!mr) {
		int e = errno;
		snprintf(err, errlen, "cannot register %s of worker %u (%zu bytes) with %s: %s%s", what, wi, len,
			 s->devname, strerror(e),
			 e == ENOMEM ? " (raise the locked-memory limit: ulimit -l unlimited, or fewer/smaller slots)" :
			 e == EOPNOTSUPP || e == EINVAL ? " (a file on an fsdax file system cannot be pinned for "
			 "RDMA: use a device-DAX path /dev/daxN.M or tmpfs for --pmem-path)" : "");
	}
	return mr;
}

/* w's ring in anonymous memory (bytes, of which the message counts shown). */
int vb_map_anon(struct vb_worker *w, size_t bytes, const char *what, size_t shown, char *err, size_t errlen)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "worker %u: cannot map a %zu-byte %s: %s", w->idx, shown, what, strerror(errno));
		return -1;
	}
	w->map = p;
	w->map_len = bytes;
	return 0;
}

/* Writes (and persists) the ring header at w->map and registers its page
 * for the clients' durable READs.  0, or -1 with err set. */
int vb_ring_hdr_init(struct tp_server *s, struct vb_worker *w, uint64_t data_off, char *err, size_t errlen)
{
	w->hdr = (struct vb_ring_hdr *)w->map;
	memset(w->hdr, 0, sizeof *w->hdr);
	w->hdr->version = VB_VERSION;
	w->hdr->worker = w->idx;
	w->hdr->ring_slots = s->c.ring_slots;
	w->hdr->slot_size = s->c.slot_size;
	w->hdr->data_off = data_off;
	w->hdr->magic = VB_RING_MAGIC;
	vb_persist(w, w->hdr, sizeof *w->hdr);
	w->hdr_mr = vb_reg_or_explain(s, w->map, VB_HDR_BYTES, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
				      "the ring header", w->idx, err, errlen);
	return w->hdr_mr ? 0 : -1;
}

/* The per-position records of w's arrivals (with offsets: of mp's
 * messages too), no ticket in any.  0, or -1: out of memory. */
int vb_slot_records(struct tp_server *s, struct vb_worker *w, int offsets)
{
	const size_t n = s->c.ring_slots;
	w->len = calloc(n, sizeof *w->len);
	w->tick = calloc(n, sizeof *w->tick);
	w->ok = calloc(n, 1);
	if (offsets)
		w->moff = calloc(n, sizeof *w->moff);
	if (!w->len || !w->tick || !w->ok || (offsets && !w->moff))
		return -1;
	for (size_t k = 0; k < n; k++)
		w->tick[k] = UINT64_MAX;
	return 0;
}

/* The send CQ and registered reply buffers of worker w. */
static int worker_init_replies(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen)
{
	const size_t ss = s->c.slot_size;
	w->scq = ibv_create_cq(s->ctx, VB_SRV_SCQ + 16, NULL, NULL, 0);
	if (!w->scq) {
		snprintf(err, errlen, "worker %u: cannot create a send CQ on %s: %s (max_cqe %d)", w->idx,
			 s->devname, strerror(errno), s->da.max_cqe);
		return -1;
	}
	w->sbuf = vb_alloc_pages((size_t)VB_SRV_SBUFS * ss);
	if (!w->sbuf) {
		snprintf(err, errlen, "worker %u: out of memory for %u reply buffers of %zu B", w->idx, VB_SRV_SBUFS, ss);
		return -1;
	}
	w->sbuf_mr = vb_reg_or_explain(s, w->sbuf, (size_t)VB_SRV_SBUFS * ss, IBV_ACCESS_LOCAL_WRITE,
				       "the reply buffers", w->idx, err, errlen);
	if (!w->sbuf_mr)
		return -1;
	for (unsigned k = 0; k < VB_SRV_SBUFS; k++)
		w->sfree[k] = (uint16_t)(VB_SRV_SBUFS - 1 - k);
	w->nsfree = VB_SRV_SBUFS;
	return 0;
}

/* srq: every slot is its own buffer (in DRAM, unless the ring is a file)
 * and memory region.  0, 1 (out of memory), or -1 with err set. */
static int srq_buffers(struct tp_server *s, struct vb_worker *w, int contiguous, char *err, size_t errlen)
{
	const size_t n = s->c.ring_slots, ss = s->c.slot_size;
	w->buf_mr = calloc(n, sizeof *w->buf_mr);
	if (!contiguous)
		w->bufs = calloc(n, sizeof *w->bufs);
	if (!w->buf_mr || (!contiguous && !w->bufs))
		return 1;
	for (size_t k = 0; k < n; k++) {
		if (!contiguous) {
			void *b = NULL;
			if (posix_memalign(&b, WIRE_ALIGN, ss) != 0)
				return 1;
			memset(b, 0, ss);
			w->bufs[k] = b;
		}
		w->buf_mr[k] = vb_reg_or_explain(s, slot_buf(s, w, k), ss, IBV_ACCESS_LOCAL_WRITE,
						 "a receive buffer", w->idx, err, errlen);
		if (!w->buf_mr[k])
			return -1;
	}
	return 0;
}

/* The SRQ of worker w: its own, or with XRC one that clients name by
 * number; its completions go to the worker's receive CQ either way. */
static int worker_srq(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen)
{
	const size_t n = s->c.ring_slots;
	if (s->xrcd) {
		struct ibv_srq_init_attr_ex xa;
		memset(&xa, 0, sizeof xa);
		xa.attr.max_wr = (uint32_t)n;
		xa.attr.max_sge = 1;
		xa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
			       IBV_SRQ_INIT_ATTR_CQ;
		xa.srq_type = IBV_SRQT_XRC;
		xa.pd = s->pd;
		xa.xrcd = s->xrcd;
		xa.cq = w->rcq;
		w->srq = ibv_create_srq_ex(s->ctx, &xa);
		if (w->srq && ibv_get_srq_num(w->srq, &w->srqn) != 0) {
			snprintf(err, errlen, "worker %u: cannot read the XRC SRQ's number on %s: %s", w->idx, s->devname,
				 strerror(errno));
			return -1;
		}
	} else {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = (uint32_t)n, .max_sge = 1 } };
		w->srq = ibv_create_srq(s->pd, &sa);
	}
	if (!w->srq) {
		snprintf(err, errlen, "worker %u: cannot create %s SRQ of %zu WQEs on %s: %s", w->idx,
			 s->xrcd ? "an XRC" : "an", n, s->devname, strerror(errno));
		return -1;
	}
	return 0;
}

int vb_worker_init(struct tp_server *s, unsigned i, char *err, size_t errlen)
{
	struct vb_worker *w = &s->w[i];
	const size_t n = s->c.ring_slots, ss = s->c.slot_size;
	int file_slots = s->c.durable && s->c.pmem_path && *s->c.pmem_path;
	int contiguous = s->mode == RM_SLOT_RING || file_slots;
	size_t bytes = VB_HDR_BYTES + (contiguous ? n * ss : 0);

	w->s = s;
	w->idx = i;
	pthread_mutex_init(&w->mu, NULL);
	if (s->hooks)
		return s->hooks->worker_init(s, w, err, errlen) == 0 ? worker_init_replies(s, w, err, errlen) : -1;
	if (file_slots) {
		if (vb_map_ring_file(s, w, bytes, err, errlen) != 0)
			return -1;
	} else if (vb_map_anon(w, bytes, "receive ring", bytes, err, errlen) != 0) {
		return -1;
	}
	w->hdr = (struct vb_ring_hdr *)w->map;
	if (contiguous)
		w->slots = w->map + VB_HDR_BYTES;
	if (w->existed && vb_recover_ring(s, w, err, errlen) != 0)
		return -1;
	if (vb_ring_hdr_init(s, w, contiguous ? VB_HDR_BYTES : 0, err, errlen) != 0)
		return -1;
	if (s->mode == RM_SLOT_RING) {
		w->ring_mr = vb_reg_or_explain(s, w->slots, n * ss, IBV_ACCESS_LOCAL_WRITE, "the receive ring", i,
					       err, errlen);
		if (!w->ring_mr)
			return -1;
	} else {
		int r = srq_buffers(s, w, contiguous, err, errlen);
		if (r < 0)
			return -1;
		if (r > 0)
			goto oom;
	}
	if (vb_slot_records(s, w, 0) != 0)
		goto oom;
	w->rcq = ibv_create_cq(s->ctx, (int)n + 16, NULL, NULL, 0);
	if (!w->rcq) {
		snprintf(err, errlen, "worker %u: cannot create a receive CQ on %s: %s (max_cqe %d)", i,
			 s->devname, strerror(errno), s->da.max_cqe);
		return -1;
	}
	if (worker_srq(s, w, err, errlen) != 0 || worker_init_replies(s, w, err, errlen) != 0)
		return -1;
	if (post_recv(s, w, 0, (unsigned)n) != 0) {
		snprintf(err, errlen, "worker %u: cannot post %zu receive buffers to its SRQ (see the log above)", i, n);
		return -1;
	}
	return 0;
oom:
	snprintf(err, errlen, "worker %u: out of memory for %zu receive slots of %zu B", i, n, ss);
	return -1;
}

void vb_worker_free(struct tp_server *s, struct vb_worker *w)
{
	vb_w1_free(w);
	vb_sw_free(w);
	vb_destroy_srq(w->srq);
	vb_destroy_cq(w->rcq);
	vb_destroy_cq(w->scq);
	for (size_t k = 0; w->buf_mr && k < s->c.ring_slots; k++)
		vb_dereg_mr(w->buf_mr[k]);
	for (size_t k = 0; w->bufs && k < s->c.ring_slots; k++)
		free(w->bufs[k]);
	vb_dereg_mr(w->ring_mr);
	vb_dereg_mr(w->hdr_mr);
	vb_dereg_mr(w->sbuf_mr);
	free(w->sbuf);
	if (w->map && w->pmem_file) {
		w->hdr->clean = 1;
		vb_persist(w, &w->hdr->clean, sizeof w->hdr->clean);
		pmem_unmap(w->map, w->map_len);
	} else if (w->map) {
		munmap(w->map, w->map_len);
	}
	void *mem[] = { w->buf_mr, w->bufs, w->len, w->tick, w->ok, w->moff, w->by_block };
	for (size_t k = 0; k < sizeof mem / sizeof mem[0]; k++)
		free(mem[k]);
	mpring_free(w->mp);
	pthread_mutex_destroy(&w->mu);
}

int vb_srv_poll(struct tp_server *s, unsigned wi, struct tp_arrival *a, int max)
{
	struct vb_worker *w = &s->w[wi];
	struct ibv_wc wc[64];
	vb_srv_flush(s, wi);
	if (max > 64)
		max = 64;
	if (s->os == VB_OS_WRITE1)
		return vb_w1_poll(s, wi, a, max);
	if (s->os == VB_OS_SEQWRITE)
		return vb_sw_poll(s, wi, a, max);
	if (s->hooks)
		return s->hooks->poll(s, w, a, max);
	int n = ibv_poll_cq(w->rcq, max, wc);
	if (n <= 0) {
		if (n < 0 && vb_w_may_log(w))
			log_msg(LOG_ERR, "worker %u: ibv_poll_cq on the receive CQ failed", wi);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		uint64_t t = wc[i].wr_id, pos = t & s->mask;
		w->tick[pos] = t;
		w->ok[pos] = wc[i].status == IBV_WC_SUCCESS;
		w->len[pos] = wc[i].byte_len;
		a[i].slot = t;
		a[i].voided = !w->ok[pos];
		if (!w->ok[pos]) {
			w->recv_errors++;
			w->last_recv_error = ibv_wc_status_str(wc[i].status);
			if (vb_w_may_log(w))
				log_msg(LOG_WARN, "worker %u: receive in slot %" PRIu64 " (QP 0x%x) completed with %s "
					"(vendor error 0x%x); the slot is voided, never executed", wi, t, wc[i].qp_num,
					w->last_recv_error, wc[i].vendor_err);
		}
	}
	w->arrivals += (uint64_t)n;
	return n;
}

const void *vb_srv_req(struct tp_server *s, unsigned wi, uint64_t slot, size_t *avail)
{
	struct vb_worker *w = &s->w[wi];
	uint64_t pos = slot & s->mask;
	if (s->os == VB_OS_WRITE1)
		return vb_w1_req(s, wi, slot, avail);
	if (s->os == VB_OS_SEQWRITE)
		return vb_sw_req(s, wi, slot, avail);
	if (w->tick[pos] != slot || !w->ok[pos]) {
		*avail = 0;
		return NULL;
	}
	*avail = w->len[pos] < s->c.slot_size ? w->len[pos] : s->c.slot_size;
	if (w->mp)
		return w->slots + w->moff[pos];
	return slot_buf(s, w, pos);
}

void vb_srv_release(struct tp_server *s, unsigned wi, uint64_t slot)
{
	struct vb_worker *w = &s->w[wi];
	if (s->os == VB_OS_WRITE1) {
		vb_w1_release(s, wi, slot);
		return;
	}
	if (s->os == VB_OS_SEQWRITE) {
		vb_sw_release(s, wi, slot);
		return;
	}
	if (s->hooks) {
		s->hooks->release(s, w, slot);
		return;
	}
	w->hdr->req_to_execute = slot + 1;
	vb_persist(w, &w->hdr->req_to_execute, sizeof w->hdr->req_to_execute);
	w->tick[slot & s->mask] = UINT64_MAX;
	if (w->pmem_file) {
		/* Invalidate before the repost: after a crash the scan must
		 * not find this executed request in a slot posted again. */
		uint8_t *b = slot_buf(s, w, slot & s->mask);
		memset(b, 0, 16);
		vb_persist(w, b, 16);
	}
	uint64_t t = slot + s->c.ring_slots;
	if (w->batch_n && w->batch_first + w->batch_n != t) {
		/* not the next ticket: cannot happen with in-order releases;
		 * post what is held, so order is kept whatever comes */
		post_recv(s, w, w->batch_first, w->batch_n);
		w->batch_n = 0;
	}
	if (!w->batch_n)
		w->batch_first = t;
	w->batch_n++;
	flush_reposts(s, w);
}

/* Posts the batched reposts and reaps the worker's reply completions. */
void vb_srv_flush(struct tp_server *s, unsigned wi)
{
	struct vb_worker *w = &s->w[wi];
	flush_reposts(s, w);
	if (w->scq_out)
		vb_reap_sends(s, w);
}
