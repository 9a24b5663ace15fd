/*
 * be_memcached.c - the `memcached` back end: Debian's memcached, unmodified,
 * as the store behind every system.
 *
 * One memcached process per server (mcd.c starts it on a UNIX socket in a
 * private run directory, and stops it by PID when the last instance
 * closes); one connection per worker.  memcached gives a connection to one
 * of its threads and runs that connection's commands one at a time in the
 * order they arrive, so a worker that writes its requests in slot order
 * has them executed in slot order: the paper's Rule 2 holds from the
 * receive ring to the store.  Keys are partitioned by worker, so no two
 * connections touch one key.
 *
 * The wire (mcmeta.h has the grammar):
 *   set    ms <key> <len> q O<id>\r\n<value>\r\n mn\r\n
 *   del    md <key> q O<id>\r\n mn\r\n
 *   get    mg <key> v O<id>\r\n        -> VA <len> ..\r\n<value>\r\n | EN
 *   incr   ma <key> v D<delta> O<id>\r\n -> VA <len> ..\r\n<count>\r\n | NF
 * Sets and deletes are quiet (q: no reply when they succeed) and each is
 * followed by the fence `mn`, so the replies come back as one group per
 * request: nothing or one failure line, then MN.  A failure is attributed
 * to the request whose MN comes next, which needs no opaque: error lines
 * (CLIENT_ERROR, SERVER_ERROR, ERROR) carry none.  Where a failure does
 * carry one (NS, NF, EX) it must equal that request's id, else the stream
 * is out of step and the instance fails.  The worker does not wait for
 * the MNs of quiet requests while at most MC_WINDOW bytes of them (and
 * MC_PEND_MAX requests) are unfenced; beyond that it reads replies until
 * there is room, and while a write waits it reads what has come back.
 * Both keep a pipeline from stalling: memcached stops reading a connection
 * whose replies are not read, and it writes each MN by itself, so the
 * kernel charges every unread MN a whole buffer against memcached's send
 * buffer.  Measured here (1.6.18, one thread): with nothing read, memcached
 * stalled after 135-141 fenced quiet sets; hence 64.  gets
 * and incrs wait for their own reply, after the fences of everything
 * sent before them.
 *
 * When a request is "executed", per system (bench/system.c):
 *   rawrpc    a set or delete is answered after its MN came back: memcached
 *             has executed it and everything before it on the connection;
 *             the status is memcached's (NS/SERVER_ERROR: KV_ERR_NOSPACE,
 *             NF for a delete: KV_NOT_FOUND).
 *   oq        a set or delete commits on delivery, before the worker sees
 *             it; the worker then writes it to memcached in slot order and
 *             goes on (backend_req.async).  It is executed when memcached
 *             reads it, before any later request of that worker; its MN is
 *             read later, and a failure is counted and logged against its
 *             key (the "failed" counters), since nobody waits for it.
 *   deferred  the ACK leaves at dequeue, before the request is written;
 *             then as oq.
 *   get and incr, in every system: answered with memcached's reply.
 * Keys memcached cannot take (empty, over 250 bytes, with a space or
 * control byte; mcm_key_check) are refused with KV_ERR_BAD and counted in
 * keys_refused, before anything is written: no base64 encoding.
 *
 * If memcached dies or stalls, the worker's read or write fails at once
 * (end of stream) or after MC_TIMEOUT_MS; the instance then answers
 * KV_ERR_OP to everything without touching the socket, and `fatal` (polled
 * by the server's main thread, which also reaps memcached) reports what
 * happened with memcached's last log lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend.h"
#include "clock.h"
#include "log.h"
#include "mcd.h"
#include "mcmeta.h"

#define MC_WINDOW      (64u << 10)   /* bytes of quiet requests sent and not yet fenced */
#define MC_PEND_MAX    64u           /* quiet requests not yet fenced (a power of two) */
#define MC_TIMEOUT_MS  5000          /* longest wait for memcached to read or answer */
#define MC_RBUF        (KV_MAX_VALUE + MCM_LINE_MAX + 2 + 4096)
#define MC_KEY_NOTE    40u           /* key bytes kept to name a failed request */

/* A quiet request waiting for its MN. */
struct pend {
	uint64_t id;
	uint32_t bytes;
	uint8_t op;
	uint8_t klen;
	uint8_t fail;               /* enum mcm_kind of its failure line, or 0 */
	uint8_t key[MC_KEY_NOTE];
};

/* The server's one memcached, shared by the workers' instances. */
static pthread_mutex_t daemon_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mcd *daemon_;
static unsigned daemon_refs;

struct backend {
	int fd;
	int worker;
	struct mcd *d;
	_Atomic int dead;           /* set (release) after why[] is written */
	char why[2400];             /* worker's failure */
	char dmsg[2048];            /* fatal(): the daemon's exit */
	uint8_t *rbuf;
	size_t rhead, rtail;
	struct pend *pend;
	uint64_t ph, pt;            /* pending head (oldest) and tail, counts */
	uint64_t inflight;          /* bytes of pending requests */
	uint64_t next_id;
	uint8_t wait_fail;          /* failure of the request being waited for */
	uint64_t wait_id;
	char fmsg[160];             /* text of the last SERVER_ERROR / CLIENT_ERROR */
	/* counters */
	uint64_t ops[KV_OP_MAX_], bad_ops, keys_refused, fences, window_waits;
	uint64_t failed[MCM_KIND_MAX_], del_not_found, pipelined_max;
	char last_failure[384];
};

/* ---- failure ---- */

static void __attribute__((format(printf, 2, 3))) fail(struct backend *b, const char *fmt, ...)
{
	char what[1024], tail[1200];
	va_list ap;
	if (atomic_load(&b->dead))
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	mcd_log_tail(b->d, tail, sizeof tail, 8);
	snprintf(b->why, sizeof b->why, "memcached (pid %d), connection of worker %d: %s; its last log lines: %s",
		 (int)mcd_pid(b->d), b->worker, what, tail[0] ? tail : "(none)");
	atomic_store_explicit(&b->dead, 1, memory_order_release);
	log_msg(LOG_ERR, "%s", b->why);
}

/* ---- the socket ---- */

static uint64_t now_ms(void)
{
	return clock_ns() / 1000000u;
}

/* Waits for fd to be readable or writable; 0, or -1 (failed) on timeout. */
static int wait_fd(struct backend *b, short ev, uint64_t deadline, const char *doing)
{
	for (;;) {
		struct pollfd p = { .fd = b->fd, .events = ev };
		uint64_t t = now_ms();
		int n = t < deadline ? poll(&p, 1, (int)(deadline - t)) : 0;
		if (n > 0)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		fail(b, "no progress %s for %d ms%s", doing, MC_TIMEOUT_MS, n < 0 ? " (poll failed)" : "");
		return -1;
	}
}

static int drain_ready(struct backend *b);

static int send_iov(struct backend *b, struct iovec *iov, int n)
{
	uint64_t deadline = now_ms() + MC_TIMEOUT_MS;
	while (n > 0) {
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = (size_t)n };
		ssize_t w = sendmsg(b->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN) {
				fail(b, "writing a request: %s", strerror(errno));
				return -1;
			}
			/* memcached stops reading while its replies wait
			 * unread: read them while the write waits. */
			if (wait_fd(b, POLLOUT | POLLIN, deadline, "writing a request (memcached does not read)") != 0 ||
			    drain_ready(b) != 0)
				return -1;
			continue;
		}
		size_t left = (size_t)w;
		while (n > 0 && left >= iov->iov_len) {
			left -= iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + left;
			iov->iov_len -= left;
		}
	}
	return 0;
}

/* Reads more reply bytes into rbuf.  0, or -1 (failed). */
static int fill(struct backend *b, const char *waiting_for)
{
	if (b->rhead == b->rtail) {
		b->rhead = b->rtail = 0;
	} else if (b->rhead > 0 && (b->rtail == MC_RBUF || b->rhead > MC_RBUF / 2)) {
		memmove(b->rbuf, b->rbuf + b->rhead, b->rtail - b->rhead);
		b->rtail -= b->rhead;
		b->rhead = 0;
	}
	if (b->rtail == MC_RBUF) {
		fail(b, "a reply longer than %u bytes while waiting for %s", (unsigned)MC_RBUF, waiting_for);
		return -1;
	}
	uint64_t deadline = now_ms() + MC_TIMEOUT_MS;
	for (;;) {
		ssize_t n = recv(b->fd, b->rbuf + b->rtail, MC_RBUF - b->rtail, MSG_DONTWAIT);
		if (n > 0) {
			b->rtail += (size_t)n;
			return 0;
		}
		if (n == 0) {
			fail(b, "memcached closed the connection while the worker waited for %s", waiting_for);
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			fail(b, "reading the reply to %s: %s", waiting_for, strerror(errno));
			return -1;
		}
		char doing[160];
		snprintf(doing, sizeof doing, "waiting for the reply to %s", waiting_for);
		if (wait_fd(b, POLLIN, deadline, doing) != 0)
			return -1;
	}
}

/* The next whole reply; its pointers stay valid until the next call. */
static int next_reply(struct backend *b, struct mcm_reply *r, const char *waiting_for)
{
	for (;;) {
		char why[256];
		long used = mcm_parse(b->rbuf + b->rhead, b->rtail - b->rhead, r, why, sizeof why);
		if (used > 0) {
			b->rhead += (size_t)used;
			return 0;
		}
		if (used < 0) {
			fail(b, "malformed reply while waiting for %s: %s", waiting_for, why);
			return -1;
		}
		if (fill(b, waiting_for) != 0)
			return -1;
	}
}

/* ---- the quiet pipeline ---- */

static int is_failure(enum mcm_kind k)
{
	return k == MCM_NS || k == MCM_NF || k == MCM_EX || k == MCM_CLIENT_ERROR ||
	       k == MCM_SERVER_ERROR || k == MCM_ERROR;
}

static uint64_t opaque_id(const struct mcm_reply *r)
{
	uint64_t v = 0;
	if (!r->opaque_len || r->opaque_len > 19)
		return UINT64_MAX;
	for (uint32_t i = 0; i < r->opaque_len; i++) {
		if (r->opaque[i] < '0' || r->opaque[i] > '9')
			return UINT64_MAX;
		v = v * 10 + (uint64_t)(r->opaque[i] - '0');
	}
	return v;
}

/* The oldest quiet request got its MN: count its outcome. */
static void resolve(struct backend *b, struct pend *p)
{
	b->fences++;
	b->inflight -= p->bytes;
	if (p->id == b->wait_id)
		b->wait_fail = p->fail;
	if (!p->fail)
		return;
	if (p->op == KV_OP_DEL && p->fail == MCM_NF) {
		b->del_not_found++;
		return;
	}
	b->failed[p->fail]++;
	snprintf(b->last_failure, sizeof b->last_failure, "%s of key \"%.*s\"%s: %s %s", kv_op_name(p->op),
		 (int)p->klen, (const char *)p->key, p->klen == MC_KEY_NOTE ? "..." : "",
		 mcm_kind_name((enum mcm_kind)p->fail), b->fmsg);
	uint64_t n = 0;
	for (unsigned k = 0; k < MCM_KIND_MAX_; k++)
		n += b->failed[k];
	if (n <= 5 || (n & (n - 1)) == 0)
		log_msg(LOG_WARN, "memcached, worker %d: %s (%llu failed so far)", b->worker, b->last_failure,
			(unsigned long long)n);
}

/* Takes one reply of the quiet pipeline (a failure line or an MN) for
 * the oldest pending request. */
static int take(struct backend *b, const struct mcm_reply *rp)
{
	struct pend *p = &b->pend[b->ph & (MC_PEND_MAX - 1)];
	struct mcm_reply r = *rp;
	char waiting[96];
	snprintf(waiting, sizeof waiting, "the fence of %s #%llu", kv_op_name(p->op), (unsigned long long)p->id);
	if (r.kind == MCM_MN) {
		resolve(b, p);
		b->ph++;
		return 0;
	}
	if (!is_failure(r.kind)) {
		fail(b, "unexpected %s while waiting for %s", mcm_kind_name(r.kind), waiting);
		return -1;
	}
	if (p->fail) {
		fail(b, "two failure replies (%s, then %s) for %s: the stream is out of step",
		     mcm_kind_name((enum mcm_kind)p->fail), mcm_kind_name(r.kind), waiting);
		return -1;
	}
	if (r.has_opaque && opaque_id(&r) != p->id) {
		fail(b, "%s with opaque O%.*s while waiting for %s: the stream is out of step",
		     mcm_kind_name(r.kind), (int)r.opaque_len, (const char *)r.opaque, waiting);
		return -1;
	}
	p->fail = (uint8_t)r.kind;
	snprintf(b->fmsg, sizeof b->fmsg, "%.*s", (int)r.msg_len, r.msg ? r.msg : "");
	return 0;
}

/* Waits for one reply of the quiet pipeline and takes it. */
static int pump(struct backend *b)
{
	struct mcm_reply r;
	if (next_reply(b, &r, "the fence of a set or delete") != 0)
		return -1;
	return take(b, &r);
}

/* Takes every pipeline reply that has arrived, without waiting. */
static int drain_ready(struct backend *b)
{
	for (;;) {
		if (b->rhead == b->rtail) {
			b->rhead = b->rtail = 0;
		} else if (b->rhead > MC_RBUF / 2) {
			memmove(b->rbuf, b->rbuf + b->rhead, b->rtail - b->rhead);
			b->rtail -= b->rhead;
			b->rhead = 0;
		}
		ssize_t n = b->rtail < MC_RBUF ? recv(b->fd, b->rbuf + b->rtail, MC_RBUF - b->rtail, MSG_DONTWAIT) : -1;
		if (n == 0) {
			fail(b, "memcached closed the connection");
			return -1;
		}
		if (n > 0)
			b->rtail += (size_t)n;
		while (b->ph != b->pt) {
			struct mcm_reply r;
			char why[256];
			long used = mcm_parse(b->rbuf + b->rhead, b->rtail - b->rhead, &r, why, sizeof why);
			if (used < 0) {
				fail(b, "malformed reply in the pipeline: %s", why);
				return -1;
			}
			if (used == 0)
				break;
			b->rhead += (size_t)used;
			if (take(b, &r) != 0)
				return -1;
		}
		if (n < 0 && errno != EINTR)
			return 0;
	}
}

/* Reads replies until every quiet request sent so far is fenced. */
static int settle(struct backend *b)
{
	while (b->ph != b->pt && !atomic_load_explicit(&b->dead, memory_order_relaxed))
		if (pump(b) != 0)
			return -1;
	return atomic_load_explicit(&b->dead, memory_order_relaxed) ? -1 : 0;
}

/* Sends one quiet set or delete with its fence; sync: waits for it. */
static void quiet(struct backend *b, const struct backend_req *r, struct backend_out *o)
{
	char line[MCM_KEY_MAX + 96];
	uint64_t id = ++b->next_id;
	size_t n = r->op == KV_OP_SET ?
		mcm_enc_set(line, sizeof line, r->key, r->key_len, r->val_len, 1, id) :
		mcm_enc_del(line, sizeof line, r->key, r->key_len, 1, id);
	static const char tail[] = "\r\nmn\r\n";
	struct iovec iov[3];
	int niov = 0;
	iov[niov++] = (struct iovec){ line, n };
	if (r->op == KV_OP_SET) {
		if (r->val_len)
			iov[niov++] = (struct iovec){ (void *)r->val, r->val_len };
		iov[niov++] = (struct iovec){ (void *)tail, 6 };
	} else {
		iov[niov++] = (struct iovec){ (void *)(tail + 2), 4 };
	}
	uint32_t bytes = (uint32_t)(n + (r->op == KV_OP_SET ? r->val_len + 6 : 4));
	/* Room in the window first (a request larger than the window goes
	 * alone, after everything before it is fenced). */
	if (b->ph != b->pt && (b->inflight + bytes > MC_WINDOW || b->pt - b->ph == MC_PEND_MAX)) {
		b->window_waits++;
		while (b->ph != b->pt && (b->inflight + bytes > MC_WINDOW || b->pt - b->ph == MC_PEND_MAX))
			if (pump(b) != 0)
				goto dead;
	}
	if (send_iov(b, iov, niov) != 0)
		goto dead;
	struct pend *p = &b->pend[b->pt++ & (MC_PEND_MAX - 1)];
	p->id = id;
	p->bytes = bytes;
	p->op = (uint8_t)r->op;
	p->fail = 0;
	p->klen = (uint8_t)(r->key_len < MC_KEY_NOTE ? r->key_len : MC_KEY_NOTE);
	memcpy(p->key, r->key, p->klen);
	b->inflight += bytes;
	if (b->pt - b->ph > b->pipelined_max)
		b->pipelined_max = b->pt - b->ph;
	if (r->async) {
		o->status = KV_OK;
		return;
	}
	b->wait_id = id;
	b->wait_fail = 0;
	if (settle(b) != 0)
		goto dead;
	b->wait_id = 0;
	switch (b->wait_fail) {
	case 0:
		o->status = KV_OK;
		break;
	case MCM_NF:
		o->status = KV_NOT_FOUND;
		break;
	case MCM_NS:
	case MCM_SERVER_ERROR:
		o->status = KV_ERR_NOSPACE;
		break;
	default:
		o->status = KV_ERR_OP;
		break;
	}
	return;
dead:
	o->status = KV_ERR_OP;
}

/* A get or an incr: sent after the quiet ones, answered in order. */
static void direct(struct backend *b, const struct backend_req *r, struct backend_out *o)
{
	char line[MCM_KEY_MAX + 96];
	uint64_t id = ++b->next_id;
	size_t n = r->op == KV_OP_GET ? mcm_enc_get(line, sizeof line, r->key, r->key_len, id) :
		mcm_enc_incr(line, sizeof line, r->key, r->key_len, r->aux, id);
	struct iovec iov = { line, n };
	struct mcm_reply rep;
	const char *what = r->op == KV_OP_GET ? "a get" : "an incr";

	o->status = KV_ERR_OP;
	if (send_iov(b, &iov, 1) != 0 || settle(b) != 0 || next_reply(b, &rep, what) != 0)
		return;
	if (rep.has_opaque && opaque_id(&rep) != id) {
		fail(b, "%s with opaque O%.*s in answer to %s #%llu: the stream is out of step",
		     mcm_kind_name(rep.kind), (int)rep.opaque_len, (const char *)rep.opaque, what,
		     (unsigned long long)id);
		return;
	}
	switch (rep.kind) {
	case MCM_VA:
		o->status = KV_OK;
		backend_copy_out(o, rep.val, rep.val_len);
		break;
	case MCM_EN:
	case MCM_NF:
		o->status = KV_NOT_FOUND;
		break;
	case MCM_CLIENT_ERROR:   /* incr of a value that is not a number */
		b->failed[rep.kind]++;
		snprintf(b->last_failure, sizeof b->last_failure, "%s: CLIENT_ERROR %.*s", what,
			 (int)rep.msg_len, rep.msg);
		break;
	case MCM_SERVER_ERROR:
	case MCM_ERROR:
		b->failed[rep.kind]++;
		snprintf(b->last_failure, sizeof b->last_failure, "%s: %s %.*s", what, mcm_kind_name(rep.kind),
			 (int)rep.msg_len, rep.msg ? rep.msg : "");
		break;
	default:
		fail(b, "unexpected %s in answer to %s", mcm_kind_name(rep.kind), what);
		break;
	}
}

/* ---- backend_ops ---- */

static void mc_exec(struct backend *b, const struct backend_req *r, struct backend_out *o)
{
	/* memcached has no echo: nop and echo are answered here */
	if (backend_exec_prologue(r, o, b->ops, &b->bad_ops))
		return;
	if (atomic_load_explicit(&b->dead, memory_order_relaxed)) {
		o->status = KV_ERR_OP;
		return;
	}
	if (mcm_key_check(r->key, r->key_len)) {
		b->keys_refused++;
		o->status = KV_ERR_BAD;
		return;
	}
	if (r->op == KV_OP_SET || r->op == KV_OP_DEL)
		quiet(b, r, o);
	else
		direct(b, r, o);
}

static void daemon_release(void)
{
	pthread_mutex_lock(&daemon_lock);
	if (daemon_refs && --daemon_refs == 0) {
		mcd_stop(daemon_);
		daemon_ = NULL;
	}
	pthread_mutex_unlock(&daemon_lock);
}

static struct backend *mc_open(const struct backend_conf *c, char *err, size_t errlen)
{
	unsigned workers = c->workers ? c->workers : (unsigned)settings_default_num("server", "workers");
	pthread_mutex_lock(&daemon_lock);
	if (!daemon_) {
		struct mcd_conf mc = {
			.bin = c->set.memcached_path, .run_parent = c->run_dir,
			.memory_mb = (c->set.memory_mb ? c->set.memory_mb
						       : (uint64_t)settings_default_num("server.backend", "memory_mb")) * workers,
			.threads = c->set.memcached_threads > 0 ? (unsigned)c->set.memcached_threads : workers,
			.max_item_mb = c->set.max_item_mb > 0 ? (unsigned)c->set.max_item_mb
							      : (unsigned)settings_default_num("server.backend", "max_item_mb"),
		};
		daemon_ = mcd_start(&mc, err, errlen);
	}
	if (daemon_)
		daemon_refs++;
	struct mcd *d = daemon_;
	pthread_mutex_unlock(&daemon_lock);
	if (!d)
		return NULL;
	struct backend *b = calloc(1, sizeof *b);
	if (b) {
		b->rbuf = malloc(MC_RBUF);
		b->pend = calloc(MC_PEND_MAX, sizeof *b->pend);
	}
	if (!b || !b->rbuf || !b->pend) {
		snprintf(err, errlen, "memcached backend: out of memory");
		goto fail;
	}
	b->d = d;
	b->worker = c->worker;
	b->fd = mcd_connect(d, err, errlen);
	if (b->fd < 0)
		goto fail;
	return b;
fail:
	if (b) {
		free(b->rbuf);
		free(b->pend);
		free(b);
	}
	daemon_release();
	return NULL;
}

static json_t *mc_stats(struct backend *b)
{
	/* The workers have stopped: read the fences still out, so every
	 * failure is counted. */
	settle(b);
	json_t *ops = json_object(), *failed = json_object();
	for (unsigned i = 0; i < KV_OP_MAX_; i++)
		json_object_set_new(ops, kv_op_name(i), json_integer((json_int_t)b->ops[i]));
	json_object_set_new(ops, "unsupported", json_integer((json_int_t)b->bad_ops));
	for (unsigned k = 0; k < MCM_KIND_MAX_; k++)
		if (b->failed[k])
			json_object_set_new(failed, mcm_kind_name((enum mcm_kind)k), json_integer((json_int_t)b->failed[k]));
	json_t *j = json_pack("{s:s,s:o,s:I,s:o,s:I,s:I,s:I,s:I,s:I}", "backend", "memcached", "ops", ops,
			      "keys_refused", (json_int_t)b->keys_refused, "failed", failed,
			      "del_not_found", (json_int_t)b->del_not_found, "fences", (json_int_t)b->fences,
			      "window_bytes", (json_int_t)MC_WINDOW, "window_waits", (json_int_t)b->window_waits,
			      "pipelined_max", (json_int_t)b->pipelined_max);
	if (b->last_failure[0])
		json_object_set_new(j, "last_failure", json_string(b->last_failure));
	if (atomic_load(&b->dead))
		json_object_set_new(j, "error", json_string(b->why));
	else if (b->worker == 0)
		json_object_set_new(j, "memcached", mcd_json(b->d));
	return j;
}

static const char *mc_fatal(struct backend *b)
{
	if (mcd_check(b->d, b->dmsg, sizeof b->dmsg) != 0)
		return b->dmsg;
	if (atomic_load_explicit(&b->dead, memory_order_acquire))
		return b->why;
	return NULL;
}

static void mc_close(struct backend *b)
{
	if (!b)
		return;
	settle(b);
	close(b->fd);
	free(b->rbuf);
	free(b->pend);
	free(b);
	daemon_release();
}

const struct backend_ops memcached_backend_ops = {
	.name = "memcached",
	.version = BACKEND_OPS_VERSION,
	.open = mc_open,
	.exec = mc_exec,
	.stats_json = mc_stats,
	.close = mc_close,
	.fatal = mc_fatal,
};
