/*
 * vb_util.c - the small pieces both sides of the verbs transport use: the
 * system-name hash, address strings, the rdma_cm event channel and a
 * bounded wait for its next event, the reject private data (written and
 * read), QP creation with the inline-size fallback, and posting a chain of
 * receive WRs to an SRQ.
 *
 * Guarantees: vb_create_qp asks for VB_INLINE inline bytes, then 64, then
 * none, and reports what the device granted, so a device that grants less
 * still gets a QP; every wait here is bounded by its caller's timeout.
 * Exercised by every case of the verbs suite (tests/verbs/guest-suite.sh).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "vb_internal.h"

uint64_t vb_fnv64(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; s && *s; s++) {
		h ^= (uint8_t)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

unsigned vb_pow2_at_least(unsigned v)
{
	unsigned p = 1;
	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

/* Waits up to ms for fd to become readable: 1 ready, 0 timeout, -1 error. */
int vb_wait_readable(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	for (;;) {
		int r = poll(&pfd, 1, ms < 0 ? 0 : ms);
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -1 : r > 0;
	}
}

/* "A.B.C.D" or "[V6]" for an endpoint string. */
void vb_host_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";
	if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, a, sizeof a);
		snprintf(buf, len, "%s", a);
	} else if (sa->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, a, sizeof a);
		snprintf(buf, len, "[%s]", a);
	} else {
		snprintf(buf, len, "?");
	}
}

/* Sets the QP's min RNR NAK timer (allowed RTS -> RTS); 0 or errno. */
int vb_set_min_rnr(struct ibv_qp *qp, unsigned code)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.min_rnr_timer = (uint8_t)code;
	return ibv_modify_qp(qp, &a, IBV_QP_MIN_RNR_TIMER);
}

/* A non-blocking rdma_cm event channel, or NULL with err set. */
struct rdma_event_channel *vb_cm_channel(char *err, size_t errlen)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	if (!ch) {
		snprintf(err, errlen, "cannot open the RDMA connection manager: %s (load rdma_ucm: modprobe rdma_ucm; "
			 "a host without RDMA can run the verbs tests in the Soft-RoCE VM, tests/vm/rxe-vm)",
			 strerror(errno));
		return NULL;
	}
	int fl = fcntl(ch->fd, F_GETFL);
	if (fl < 0 || fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) != 0) {
		snprintf(err, errlen, "verbs: cannot make the CM channel non-blocking: %s", strerror(errno));
		rdma_destroy_event_channel(ch);
		return NULL;
	}
	return ch;
}

int vb_cm_next(struct rdma_event_channel *ch, uint64_t deadline, struct rdma_cm_event **ev)
{
	for (;;) {
		if (rdma_get_cm_event(ch, ev) == 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		uint64_t now = clock_ns();
		if (now >= deadline)
			return 1;
		uint64_t left = (deadline - now) / 1000000 + 1;
		vb_wait_readable(ch->fd, left > 200 ? 200 : (int)left);
	}
}

void vb_reject(struct rdma_cm_id *id, uint16_t version, uint16_t code, const char *why)
{
	uint8_t rj[VB_REJECT_LEN];
	memset(rj, 0, sizeof rj);
	put32(rj, VB_REJECT_MAGIC);
	put16(rj + 4, version);
	put16(rj + 6, code);
	snprintf((char *)rj + 8, VB_REJECT_LEN - 8, "%s", why);
	rdma_reject(id, rj, VB_REJECT_LEN);
}

int vb_reject_text(const struct rdma_cm_event *ev, char *buf, size_t len)
{
	const uint8_t *p = ev->param.conn.private_data;
	unsigned pl = ev->param.conn.private_data_len;
	if (ev->event != RDMA_CM_EVENT_REJECTED || !p || pl < 9 || get32(p) != VB_REJECT_MAGIC)
		return 0;
	size_t ml = pl - 8 < VB_REJECT_LEN - 8 ? pl - 8 : VB_REJECT_LEN - 8;
	snprintf(buf, len, "%.*s", (int)strnlen((const char *)p + 8, ml), (const char *)p + 8);
	return 1;
}

/* bytes of zeroed, page-aligned memory (to be registered), or NULL. */
uint8_t *vb_alloc_pages(size_t bytes)
{
	void *p = NULL;
	if (posix_memalign(&p, 4096, bytes) != 0)
		return NULL;
	memset(p, 0, bytes);
	return p;
}

/*
 * Creates id's QP from attr (which names the PD), asking for VB_INLINE
 * inline bytes, then 64, then none.  0 with *max_inline = what the device
 * granted, or the errno of the last try.
 */
int vb_create_qp(struct rdma_cm_id *id, const struct ibv_qp_init_attr_ex *attr, uint32_t *max_inline)
{
	static const unsigned inl[] = { VB_INLINE, 64, 0 };
	int e = EINVAL;
	for (size_t k = 0; k < sizeof inl / sizeof inl[0]; k++) {
		struct ibv_qp_init_attr_ex a = *attr;
		a.cap.max_inline_data = inl[k];
		if (rdma_create_qp_ex(id, &a) == 0) {
			*max_inline = a.cap.max_inline_data;
			return 0;
		}
		e = errno ? errno : EINVAL;
	}
	return e;
}

/* An RC QP with sq_depth send WRs on the CQs given, receiving from srq
 * (or, without one, nothing: one receive WR).  As vb_create_qp. */
int vb_create_rc_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
		    struct ibv_srq *srq, uint32_t sq_depth, uint32_t *max_inline)
{
	struct ibv_qp_init_attr_ex a;
	memset(&a, 0, sizeof a);
	a.send_cq = scq;
	a.recv_cq = rcq;
	a.srq = srq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = sq_depth;
	a.cap.max_recv_wr = srq ? 0 : 1;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	return vb_create_qp(id, &a, max_inline);
}

/* NULL-safe releases, like free(): a teardown releases whatever was made. */
void vb_destroy_id(struct rdma_cm_id *id)
{
	if (id && id->qp)
		rdma_destroy_qp(id);
	if (id)
		rdma_destroy_id(id);
}

#define VB_RELEASE_FN(name, type, release) \
	void name(type *p) { if (p) release(p); }
VB_RELEASE_FN(vb_destroy_cq, struct ibv_cq, ibv_destroy_cq)
VB_RELEASE_FN(vb_dereg_mr, struct ibv_mr, ibv_dereg_mr)
VB_RELEASE_FN(vb_destroy_srq, struct ibv_srq, ibv_destroy_srq)
VB_RELEASE_FN(vb_dealloc_pd, struct ibv_pd, ibv_dealloc_pd)
VB_RELEASE_FN(vb_destroy_channel, struct rdma_event_channel, rdma_destroy_event_channel)

/*
 * Links wr[0..n-1], whose wr_id and sg[i] the caller filled, into one chain
 * (n <= VB_RECV_CHAIN) and posts it to srq.  0, or the errno of the post.
 */
int vb_post_recv_chain(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_sge *sg, unsigned n)
{
	struct ibv_recv_wr *bad = NULL;
	for (unsigned i = 0; i < n; i++) {
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return ibv_post_srq_recv(srq, wr, &bad);
}
