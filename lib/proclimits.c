/*
 * proclimits.c - the open-file and locked-memory needs of a server or client
 * process, and the check of a process's own limits (proclimits.h).
 *
 * Where the numbers come from: measured in the Soft-RoCE VM (rxe, Linux
 * 6.1, rdma-core 44, 2026-11-28) by counting /proc/PID/fd and reading VmPin
 * (the kernel's pinned_vm, which ibv_reg_mr raises) in /proc/PID/status of
 * a verbs server and client while connected, at 1 and 4 workers, 1, 4 and
 * 8 client threads, delegation off and on (docs/doctor.md has the table
 * and the commands):
 *  - fds: a server holds 7 at every shape (standard streams, the uverbs
 *    device, the rdma_cm channel, the provider's own): a connection costs
 *    it no fd, since every QP and id shares the process's channel and
 *    device context.  A client holds 6 + threads without delegation (each
 *    thread's connection group has its own rdma_cm channel) and 7 with it.
 *    On shm a server or client holds 5 (measured on the host the same
 *    way), 6 with the control socket.  LIM_FD_BASE (16) is about twice the
 *    most seen, for what libraries open; a durable server adds one ring
 *    file per worker; per client thread LIM_FD_PER_THREAD (1) is the
 *    measured cost.  Every measured thread (a server's worker, a client's
 *    thread) also keeps its own /proc/thread-self/schedstat open for its
 *    stall meter (lib/stall.c), LIM_FD_PER_METER (1): the scale test saw a
 *    16-worker server hold 23 and a 16-thread client 38.
 *  - pinned bytes: a region pins the pages it spans, counted per region.
 *    Client: exact, e.g. 4 workers x 8 threads: 20,512 KiB measured and
 *    computed (8 x (516 KiB request slots + 2 MiB responses)); with
 *    delegation 12,320 KiB both.  Server: the ring header, the reply
 *    buffers and, in srq mode, one region per receive buffer at a 64-byte
 *    aligned address, so a 2,048 B buffer spans one or two pages: bounded
 *    here at two (8,708 KiB per worker of 1,024 x 2,048 B), measured
 *    6,532 KiB for one worker and 26,388 KiB for four.  The bound is kept
 *    rather than the average because a need set too low lets a run fail
 *    in ibv_reg_mr after connections were made.
 */
#include "proclimits.h"
#include "settings.h"
#include "usage.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#define LIM_PAGE            4096ull
#define LIM_FD_BASE         16
#define LIM_FD_PER_THREAD   1
#define LIM_FD_PER_METER    1   /* a stall meter's schedstat */
/* Mirrors of the verbs transport's sizes (bench/transports/verbs/
 * vb_internal.h), which lib/ cannot include; tests/verbs/guest-scale.sh
 * checks that they agree in effect: every process's measured pinned
 * memory and descriptors (usage) within what it computed (needs). */
#define LIM_VB_HDR_BYTES    4096ull         /* VB_HDR_BYTES */
#define LIM_VB_SRV_SBUFS    256ull          /* VB_SRV_SBUFS: reply buffers per worker */
#define LIM_VB_LANE_DEPTH   64ull           /* VB_LANE_DEPTH */
#define LIM_VB_LANE_CAP     (16ull << 20)   /* request slots per lane: at most 16 MiB */
#define LIM_VB_RESP_CAP     (64ull << 20)   /* response buffers per group: at most 64 MiB */
#define LIM_VB_RESP_MAX     1024ull         /* response SRQ depth without delegation */
#define LIM_VB_RESP_DELEG   4096ull         /* ... with delegation */
/* a shape field left 0 is oqb-server's default: its row's (server.def) */
#define LIM_DEF(key)        ((unsigned long long)settings_default_num("server", key))
/* eRPC registers its hugepage buffers; an upper estimate per process,
 * not measured here (docs/erpc.md). */
#define LIM_ERPC_BYTES      (512ull << 20)

static unsigned long long pages(unsigned long long b)
{
	return (b + LIM_PAGE - 1) / LIM_PAGE * LIM_PAGE;
}

/* The most pages a buffer of b bytes at a 64-byte aligned address spans. */
static unsigned long long span(unsigned long long b)
{
	return (b + LIM_PAGE - 64 + LIM_PAGE - 1) / LIM_PAGE * LIM_PAGE;
}

static unsigned long long pow2_at_least(unsigned long long v)
{
	unsigned long long p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

json_t *lim_need_json(const struct lim_need *n)
{
	return json_pack("{s:I,s:I,s:I}", "fds", (json_int_t)n->fds, "locked_bytes", (json_int_t)n->locked_bytes,
			 "qps", (json_int_t)n->qps);
}

void lim_server_need(const struct lim_server_shape *s, struct lim_need *n)
{
	unsigned long long w = s->workers ? s->workers : LIM_DEF("workers");
	unsigned long long ss = s->slot_size ? s->slot_size : LIM_DEF("slot_size");
	unsigned long long slots = s->ring_slots ? s->ring_slots : LIM_DEF("ring_slots");

	memset(n, 0, sizeof *n);
	n->fds = LIM_FD_BASE + (long long)(w * LIM_FD_PER_METER)
		 + (s->durable ? (long long)w : 0);   /* a ring file per worker */
	if (!strcmp(s->transport, "shm"))
		return;
	if (!strcmp(s->transport, "erpc")) {
		n->locked_bytes = (long long)LIM_ERPC_BYTES;
		return;
	}
	n->qps = (long long)s->conns;
	/* Per worker: the ring header, its receive buffers (one region in
	 * slot_ring mode, else one per slot, durable or not: a durable ring's
	 * buffers lie in one file but are registered one by one, and pinned_vm
	 * counts each region's pages, so two buffers in a page pin it twice;
	 * the scale test measured 81 MiB at 18 durable workers where one
	 * region per ring was assumed, 45 MiB), its reply buffers. */
	unsigned long long per = pages(LIM_VB_HDR_BYTES) + pages(LIM_VB_SRV_SBUFS * ss);
	per += s->slot_ring ? pages(slots * ss) : slots * span(ss);
	n->locked_bytes = (long long)(w * per);
}

void lim_client_need(const struct lim_client_shape *c, struct lim_need *n)
{
	unsigned long long t = c->threads ? c->threads : (unsigned long long)settings_default_num("clients", "threads");
	unsigned long long w = c->workers ? c->workers : LIM_DEF("workers");
	unsigned long long ss = c->slot_size ? c->slot_size : LIM_DEF("slot_size");

	memset(n, 0, sizeof *n);
	n->fds = LIM_FD_BASE + (long long)(t * (LIM_FD_PER_THREAD + LIM_FD_PER_METER));
	if (!strcmp(c->transport, "shm"))
		return;
	if (!strcmp(c->transport, "erpc")) {
		n->locked_bytes = (long long)LIM_ERPC_BYTES;
		return;
	}
	n->qps = (long long)(c->delegation ? w : t * w);
	/* Per thread (lane): depth request slots per worker, depth halved
	 * until they fit 16 MiB, plus 64 B per worker (READ targets) and 8 B
	 * per slot (seqwrite's atomics' results, vb_cli.c, in every lane). */
	unsigned long long d = LIM_VB_LANE_DEPTH;
	while (d > 2 && d * ss * w > LIM_VB_LANE_CAP)
		d /= 2;
	unsigned long long lane = pages(w * d * ss + w * 64 + w * d * 8);
	/* Per group (a thread, or the process with delegation): response
	 * buffers, as deep as the response SRQ, at most 64 MiB. */
	unsigned long long rd = c->delegation ? LIM_VB_RESP_DELEG :
			pow2_at_least(c->max_outstanding ? c->max_outstanding : LIM_VB_RESP_MAX);
	if (rd < 64)
		rd = 64;
	if (!c->delegation && rd > LIM_VB_RESP_MAX)
		rd = LIM_VB_RESP_MAX;
	while (rd > 16 && rd * ss > LIM_VB_RESP_CAP)
		rd /= 2;
	unsigned long long groups = c->delegation ? 1 : t;
	n->locked_bytes = (long long)(t * lane + groups * pages(rd * ss));
}

static long long rl(rlim_t v)
{
	return v == RLIM_INFINITY ? -1 : (long long)v;
}

/* Whether CAP_IPC_LOCK (bit 14) is in this process's effective set. */
static int have_ipc_lock(void)
{
	char v[64];
	unsigned long long caps = 0;
	if (sscanf(proc_status_field("CapEff", v, sizeof v), "%llx", &caps) != 1)
		return 0;
	return (caps >> 14) & 1;
}

void lim_read_self(struct lim_have *h)
{
	struct rlimit r;

	memset(h, 0, sizeof *h);
	h->nofile_soft = h->nofile_hard = h->memlock_soft = h->memlock_hard = -1;
	if (getrlimit(RLIMIT_NOFILE, &r) == 0) {
		h->nofile_soft = rl(r.rlim_cur);
		h->nofile_hard = rl(r.rlim_max);
	}
	if (getrlimit(RLIMIT_MEMLOCK, &r) == 0) {
		h->memlock_soft = rl(r.rlim_cur);
		h->memlock_hard = rl(r.rlim_max);
	}
	h->cap_ipc_lock = have_ipc_lock();
}

void lim_fmt_bytes(char *buf, size_t len, long long b)
{
	if (b < 0)
		snprintf(buf, len, "unlimited");
	else if (b >= 1ll << 30)
		snprintf(buf, len, "%.1f GiB", (double)b / (1 << 30));
	else if (b >= 1 << 20)
		snprintf(buf, len, "%.1f MiB", (double)b / (1 << 20));
	else
		snprintf(buf, len, "%lld KiB", b >> 10);
}

static int covers(long long limit, long long need)
{
	return limit < 0 || limit >= need;
}

enum lim_verdict lim_judge(int which, const struct lim_need *n, const struct lim_have *h, const char *who,
			   int delegation, char *msg, size_t msglen, char *fix, size_t fixlen)
{
	char a[32], b[32], c[32];
	const char *alt = delegation ? "" : ", or fewer client threads or clients.delegation: true";

	fix[0] = '\0';
	if (which == 0) {
		if (covers(h->nofile_soft, n->fds)) {
			snprintf(msg, msglen, "%s needs %lld open files; the limit is %lld", who, n->fds, h->nofile_soft);
			return LIM_OK;
		}
		if (covers(h->nofile_hard, n->fds)) {
			snprintf(msg, msglen, "%s needs %lld open files; the soft limit is %lld, the hard %lld: "
				 "the process raises its own", who, n->fds, h->nofile_soft, h->nofile_hard);
			return LIM_RAISE;
		}
		snprintf(msg, msglen, "%s needs %lld open files (RLIMIT_NOFILE); the limit is %lld (hard %lld)", who,
			 n->fds, h->nofile_soft, h->nofile_hard);
		snprintf(fix, fixlen, "ulimit -n %lld (as root, or nofile in /etc/security/limits.conf for the user "
			 "the launcher logs in as)%s", n->fds, n->qps ? alt : "");
		return LIM_SHORT;
	}
	lim_fmt_bytes(a, sizeof a, n->locked_bytes);
	lim_fmt_bytes(b, sizeof b, h->memlock_soft);
	lim_fmt_bytes(c, sizeof c, h->memlock_hard);
	if (!n->locked_bytes) {
		snprintf(msg, msglen, "%s registers no memory (the limit is %s)", who, b);
		return LIM_OK;
	}
	if (h->cap_ipc_lock) {
		snprintf(msg, msglen, "%s pins %s; no limit applies (CAP_IPC_LOCK)", who, a);
		return LIM_OK;
	}
	if (covers(h->memlock_soft, n->locked_bytes)) {
		snprintf(msg, msglen, "%s pins %s; the locked-memory limit is %s", who, a, b);
		return LIM_OK;
	}
	if (covers(h->memlock_hard, n->locked_bytes)) {
		snprintf(msg, msglen, "%s pins %s; the soft locked-memory limit is %s, the hard %s: the process raises "
			 "its own", who, a, b, c);
		return LIM_RAISE;
	}
	snprintf(msg, msglen, "%s pins %s of registered memory (RLIMIT_MEMLOCK); the limit is %s (hard %s)", who, a,
		 b, c);
	snprintf(fix, fixlen, "ulimit -l unlimited (as root, or memlock unlimited in /etc/security/limits.conf for "
		 "the user the launcher logs in as; LimitMEMLOCK=infinity for a systemd service), or less to register: "
		 "fewer workers, threads or ring slots%s", delegation || !n->qps ? "" : ", or clients.delegation: true");
	return LIM_SHORT;
}

int lim_check_self(const struct lim_need *n, const char *who, int delegation, char *note, size_t notelen,
		   char *err, size_t errlen)
{
	struct lim_have h;
	char msg[512], fix[512];
	size_t o = 0;

	note[0] = '\0';
	lim_read_self(&h);
	for (int which = 0; which < 2; which++) {
		enum lim_verdict v = lim_judge(which, n, &h, who, delegation, msg, sizeof msg, fix, sizeof fix);
		if (v == LIM_SHORT) {
			snprintf(err, errlen, "%s; fix: %s", msg, fix);
			return -1;
		}
		if (v == LIM_OK)
			continue;
		struct rlimit r;
		int res = which == 0 ? RLIMIT_NOFILE : RLIMIT_MEMLOCK;
		long long want = which == 0 ? n->fds : n->locked_bytes;
		if (getrlimit(res, &r) != 0)
			continue;
		r.rlim_cur = r.rlim_max == RLIM_INFINITY || (long long)r.rlim_max >= want ? (rlim_t)want : r.rlim_max;
		if (setrlimit(res, &r) != 0) {
			snprintf(err, errlen, "%s; raising the soft limit failed; fix: %s", msg,
				 which == 0 ? "ulimit -n" : "ulimit -l");
			return -1;
		}
		if (o < notelen)
			o += (size_t)snprintf(note + o, notelen - o, "%sraised the soft %s limit to %lld", o ? "; " : "",
					      which == 0 ? "open-file" : "locked-memory", want);
	}
	return 0;
}
