/*
 * server.c - the worker loop, the same for every transport and system.
 *
 * Each worker polls its transport for arrivals (in whatever order they come),
 * marks them in the executor's bitmap, and runs requests strictly in slot
 * order (OQ Rule 2).  What it sends back follows the system's commit rule
 * (system.h): nothing for an oq nilext request, an ACK at dequeue for
 * deferred, a response after execution for everything else.
 *
 * Every call into a worker's backend instance runs on that worker's own
 * thread: open (while the thread may run on any CPU of the worker's NUMA
 * node, so the instance's memory is first touched there and what the store
 * starts is not tied to the worker's one CPU), a crashed server's replay
 * and the requests (pinned to the worker's CPU), stats and close.  The main thread hands the calls that are not requests to the
 * worker and waits for them (worker_call): before the loop (open, replay),
 * during it (stats, polled once a pass), and after it (stats, close).  A
 * worker thread ends only once every instance is closed, so a process a
 * backend started from one (memcached) outlives no thread it depends on.
 * Manual servers have no worker threads: the caller's thread runs all.
 *
 * The test-only faults (fault.h) are not here: with any of them on, a pass
 * is fault_hook's (bench/fault.c), made of this loop's own steps
 * (worker_fault_host); that one branch per pass is all the loop has of
 * them.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bits.h"
#include "clock.h"
#include "exec.h"
#include "fault.h"
#include "hist.h"
#include "log.h"
#include "server.h"
#include "stall.h"
#include "usage.h"

#define POLL_BATCH 64
#define STALL_SLACK_NS 10000ull   /* per request a pass ran (stall.h) */

struct worker {
	struct server *s;
	unsigned idx;
	pthread_t th;
	int started;
	struct exec x;
	uint8_t *isvoid;          /* per ring position: arrival was a void */
	struct backend *be;
	uint8_t *valbuf;
	/* the transport's srv_executed if the rings are durable, else NULL:
	 * its only duty is persisting ReqToExecute (transport.h) */
	void (*on_executed)(struct tp_server *s, unsigned w, uint64_t slot);
	uint8_t rule[WIRE_F_ALL + 1];   /* system_commit_rule by the wire flags */
	/* counters */
	uint64_t executed, rejected, voided, misrouted, acks, resps, reply_errors;
	uint64_t nilext, non_nilext, recovered;
	const char *last_reject;
	struct fault_worker fw;   /* test-only faults (fault.h) */
	/* service time (server.h): svc[0] non-nilext, svc[1] nilext, NULL
	 * when off; svc_left counts down to the next timed request */
	struct hist *svc[2];
	uint32_t svc_left;
	uint64_t svc_rng;
	uint64_t svc_outside;     /* timed, but started outside the window */
	/* placement and interference over the worker's life */
	int cpu;                  /* -1: unpinned */
	uint64_t life_ns;
	long nivcsw;              /* involuntary context switches */
	uint64_t cpu_ns;          /* CPU time the thread got (user + system) */
	struct stall_meter stall; /* the time it did not run (lib/stall.h) */
	struct idle_state idle;   /* naps when idle (lib/idle.h) */
	int tid;                  /* the thread's Linux id (0: no thread of its own) */
	/* A call the worker runs on its own thread for the main thread
	 * (worker_call), and how far the main thread lets it go (gate). */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int sync_init;
	void (*call_fn)(struct worker *w, void *arg);
	void *call_arg;
	_Atomic int call_pending;
	int gate;                 /* GATE_*: set by the main thread */
	int left_loop;            /* 1 once the worker left its request loop */
	char call_err[256];       /* open's message on failure */
};

/* How far a worker thread may go: serve calls until the gate opens, run the
 * request loop until the server stops, serve calls until it may exit. */
enum { GATE_SETUP, GATE_RUN, GATE_EXIT };

struct server {
	struct server_conf c;
	struct tp_server *tp;
	_Atomic uint64_t win_from, win_to;   /* the measured window (server_window) */
	_Atomic int win_set;
	_Atomic int stop;
	int stopped;
	struct worker *w;
	struct probe *probe;      /* per worker CPU (lib/probe.h), or NULL */
};

/* extra: WIRE_MARK_FAULT from the faults' copy of run_slot, else 0 */
static void reply(struct worker *w, const struct wire_req *h, unsigned kind,
		  unsigned status, const void *val, uint32_t val_len, unsigned extra)
{
	struct server *s = w->s;
	struct wire_resp r = {
		/* inside a stall's interval (lib/stall.h) the reply says so */
		.seq = h->seq, .status = status, .val_len = val_len, .kind = (uint8_t)kind,
		.mark = (uint8_t)(stall_mark_now(&w->stall) | extra),
		.op = h->op, .worker = (uint16_t)w->idx, .client_id = h->client_id,
	};
	if (s->c.tp->srv_reply(s->tp, w->idx, h->client_id, &r, val) != 0)
		w->reply_errors++;
	else if (kind == WIRE_ACK)
		w->acks++;
	else
		w->resps++;
}

/* Requests until the next timed one: uniform on 1 .. 2N-1 (mean N), from
 * the worker's own xorshift64 (any pattern of the workload is unrelated
 * to it).  UINT32_MAX when timing is off. */
static uint32_t svc_gap(struct worker *w)
{
	uint32_t n = w->s->c.service_sample;
	if (!w->svc[0])
		return UINT32_MAX;
	if (n <= 1)
		return 1;
	uint64_t x = w->svc_rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	w->svc_rng = x;
	return 1 + (uint32_t)((x >> 11) % (2ull * n - 1));
}

/* The backend call of one request with the clock read around it (server.h,
 * "Service time"); out of line, so the untimed path stays as it was. */
static __attribute__((noinline)) void exec_timed(struct worker *w, const struct backend_req *br,
						 struct backend_out *out, unsigned nilext)
{
	struct server *s = w->s;
	w->svc_left = svc_gap(w);
	if (!w->svc[0]) {
		s->c.be->exec(w->be, br, out);
		return;
	}
	uint64_t t0 = clock_ns();
	s->c.be->exec(w->be, br, out);
	uint64_t t1 = clock_ns();
	if (t0 >= atomic_load_explicit(&s->win_from, memory_order_relaxed) &&
	    t0 < atomic_load_explicit(&s->win_to, memory_order_relaxed))
		hist_record(w->svc[nilext], t1 - t0);
	else
		w->svc_outside++;
}

/* Executes the request in one slot, in slot order.  faults is a constant:
 * 1 in the copy the test-only faults' pass runs (fault_exec at the backend
 * call, fault.h), 0 in the worker's own, which has no trace of them. */
static inline __attribute__((always_inline)) void run_slot(struct worker *w, uint64_t slot, int faults)
{
	struct server *s = w->s;
	const struct transport_ops *tp = s->c.tp;
	size_t avail;
	const void *req = tp->srv_req(s->tp, w->idx, slot, &avail);
	struct wire_req h;
	const char *why = NULL;

	if (!req || wire_check(req, avail, &h, &why) != 0) {
		if (w->on_executed)
			w->on_executed(s->tp, w->idx, slot);
		/* Never executed, never answered: the client counts it as
		 * unanswered.  A corrupt header cannot be trusted for a reply. */
		w->rejected++;
		if (w->rejected <= 5 || (w->rejected & (w->rejected - 1)) == 0)
			log_msg(LOG_WARN, "worker %u: rejected request in slot %llu: %s (%llu rejected so far)",
				w->idx, (unsigned long long)slot, why ? why : "no data",
				(unsigned long long)w->rejected);
		w->last_reject = why;
		return;
	}
	if (h.worker != w->idx) {
		w->misrouted++;
		if (w->on_executed)
			w->on_executed(s->tp, w->idx, slot);
		reply(w, &h, WIRE_RESP, KV_ERR_BAD, NULL, 0, 0);
		return;
	}
	enum commit_on rule = (enum commit_on)w->rule[h.flags & WIRE_F_ALL];   /* wire_check bounds flags */
	if (rule == COMMIT_ACK) {
		/* durable: the request is persistent before the ACK commits it */
		if (s->c.tpc.durable && tp->srv_persist_req)
			tp->srv_persist_req(s->tp, w->idx, slot);
		reply(w, &h, WIRE_ACK, KV_OK, NULL, 0, 0);
		tp->srv_flush(s->tp, w->idx);   /* the ACK leaves before execution */
	}
	/* async: nothing that carries this result is sent, so a backend
	 * with a pipeline may return before its store ran it (backend.h). */
	struct backend_req br = {
		.op = h.op, .key = wire_key(req), .key_len = h.key_len,
		.val = wire_val(req, h.key_len), .val_len = h.val_len, .aux = h.aux,
		.async = rule != COMMIT_RESPONSE,
	};
	struct backend_out out = { .status = KV_OK, .val = w->valbuf, .val_cap = KV_MAX_VALUE };
	if (faults) {
		int r = fault_exec(&w->fw, s->c.be, w->be, &br, &out);
		if (r != FAULT_EXEC_NONE) {   /* dropped, or executed by the fault */
			w->executed += r == FAULT_EXEC_DONE;
			goto executed;
		}
	}
	if (__builtin_expect(--w->svc_left == 0, 0))
		exec_timed(w, &br, &out, (h.flags & KV_F_NILEXT) != 0);
	else
		s->c.be->exec(w->be, &br, &out);
	w->executed++;
	if (h.flags & KV_F_NILEXT)
		w->nilext++;
	else
		w->non_nilext++;
executed:
	/* §5.3 order: execute, persist ReqToExecute, then respond. */
	if (w->on_executed)
		w->on_executed(s->tp, w->idx, slot);
	if (rule == COMMIT_RESPONSE)
		reply(w, &h, WIRE_RESP, out.status, out.val, out.val_len,
		      faults && w->fw.just_delayed ? WIRE_MARK_FAULT : 0);
}

/* Runs (or passes over, if voided) one slot whose turn it is, and
 * releases it. */
static inline __attribute__((always_inline)) void finish_slot(struct worker *w, uint64_t slot,
							      unsigned isvoid, int faults)
{
	struct server *s = w->s;
	const struct transport_ops *tp = s->c.tp;
	if (isvoid) {
		w->voided++;
		if (w->on_executed)
			w->on_executed(s->tp, w->idx, slot);
	} else {
		run_slot(w, slot, faults);
	}
	tp->srv_release(s->tp, w->idx, slot);
}

/* Runs every slot from the executor's idx on that has arrived. */
static inline __attribute__((always_inline)) int drain(struct worker *w, uint64_t mask, int faults)
{
	int did = 0;
	uint64_t slot;
	while ((slot = exec_next(&w->x)) != EXEC_NONE) {
		did++;
		finish_slot(w, slot, w->isvoid[slot & mask], faults);
	}
	return did;
}

/* Marks an arrival that is not the executor's next slot, to run in its
 * turn: 0, or -1 for a slot outside the executor's window (logged). */
static int arrive(struct worker *w, const struct tp_arrival *a, uint64_t mask)
{
	if (exec_arrive(&w->x, a->slot) != 0) {
		log_msg(LOG_ERR, "worker %u: transport reported slot %llu outside the executor "
			"window (idx %llu); this is a transport bug", w->idx,
			(unsigned long long)a->slot, (unsigned long long)w->x.idx);
		return -1;
	}
	w->isvoid[a->slot & mask] = (uint8_t)a->voided;
	return 0;
}

/* Runs and releases what is ready of n arrivals, in slot order.  An
 * arrival that is the executor's next slot (the common case: slots
 * published in ticket order) runs at once, followed by every later slot
 * that arrived before it; any other arrival waits in the executor's bitmap
 * for its turn (Rule 2 either way).  Returns how many slots it ran or
 * released.  faults: as in run_slot. */
static inline __attribute__((always_inline)) int run_arrivals(struct worker *w, struct tp_arrival *arr,
							      int n, int faults)
{
	const uint64_t mask = w->s->c.tpc.ring_slots - 1;
	int did = 0;
	for (int i = 0; i < n; i++) {
		uint64_t slot = arr[i].slot;
		if (exec_take(&w->x, slot)) {
			did++;
			finish_slot(w, slot, arr[i].voided, faults);
			if (exec_ready(&w->x))
				did += drain(w, mask, faults);
		} else {
			arrive(w, &arr[i], mask);
		}
	}
	return did;
}

/* One pass of the worker loop: poll, run and release what is ready in
 * slot order, flush.  Returns how many slots it ran or released (at least
 * 1 if it did anything), 0 if none.  With a test-only fault on, the pass
 * is the faults' (fault_hook, fault.h), made of the worker's own steps
 * (fault_host below); that is the loop's one branch for them. */
/* *gap: a stall ended at *now, so an empty poll was before it and says
 * nothing of the backlog (no R yet).  now NULL: no clock and no stall meter (server_step, a caller's own
 * loop, as bench/oqb_icount_main.c counts the request path). */
static inline __attribute__((always_inline)) int worker_step(struct worker *w, struct tp_arrival *arr, uint64_t *now,
							     uint64_t slack, int *gap)
{
	struct server *s = w->s;
	const struct transport_ops *tp = s->c.tp;
	int n = tp->srv_poll(s->tp, w->idx, arr, POLL_BATCH);
	/* The pass's clock reading, after the poll: a stall inside the poll
	 * (most of a pass's time) is noted before the batch it delayed is
	 * answered, so those replies carry its mark (lib/stall.h).  Read at
	 * the top of the pass instead, the first batch after such a stall
	 * went out unmarked: bench/tagger-validate.sh found whole bursts of
	 * a hog on the worker's CPU untagged. */
	if (now) {
		*now = clock_ns();
		*gap = stall_tick(&w->stall, *now, slack);
	}
	int did;
	if (fault_on(FAULTS_ANY))
		did = fault_hook(&w->fw, arr, n);
	else
		did = run_arrivals(w, arr, n, 0);
	/* when its work ended: a gap the next pass finds that this work
	 * filled is the system's (a slow backend call, a busy delay), on the
	 * worker's own word (lib/stall.h) */
	if (now && did)
		stall_own(&w->stall, clock_ns());
	if (did)
		tp->srv_flush(s->tp, w->idx);
	return did;
}

/* ---- the worker's steps, lent to the test-only faults' pass (fault.h) ---- */

static int host_pass(void *w, struct tp_arrival *arr, int n)
{
	return run_arrivals(w, arr, n, 1);
}

static int host_arrive(void *wp, const struct tp_arrival *a)
{
	struct worker *w = wp;
	return arrive(w, a, w->s->c.tpc.ring_slots - 1);
}

static void host_run(void *w, uint64_t slot)
{
	run_slot(w, slot, 1);
}

static void host_finish(void *wp, uint64_t slot)
{
	struct worker *w = wp;
	finish_slot(w, slot, w->isvoid[slot & (w->s->c.tpc.ring_slots - 1)], 1);
}

static void host_release(void *wp, uint64_t slot)
{
	struct worker *w = wp;
	w->s->c.tp->srv_release(w->s->tp, w->idx, slot);
}

static const void *host_req(void *wp, uint64_t slot, size_t *avail)
{
	struct worker *w = wp;
	return w->s->c.tp->srv_req(w->s->tp, w->idx, slot, avail);
}

static const struct fault_host worker_fault_host = {
	.pass = host_pass, .arrive = host_arrive, .run = host_run,
	.finish = host_finish, .release = host_release, .req = host_req,
};

int server_step(struct server *s, unsigned wi)
{
	struct tp_arrival arr[POLL_BATCH];
	return worker_step(&s->w[wi], arr, NULL, 0, NULL);
}

/* Runs the pending call, if any; the caller holds w->mu. */
static void serve_call(struct worker *w)
{
	if (!atomic_load_explicit(&w->call_pending, memory_order_relaxed))
		return;
	w->call_fn(w, w->call_arg);
	atomic_store_explicit(&w->call_pending, 0, memory_order_relaxed);
	pthread_cond_broadcast(&w->cv);
}

/* The worker's thread: serves calls until the gate reaches level. */
static void serve_until(struct worker *w, int level)
{
	pthread_mutex_lock(&w->mu);
	for (;;) {
		serve_call(w);
		if (w->gate >= level)
			break;
		pthread_cond_wait(&w->cv, &w->mu);
	}
	pthread_mutex_unlock(&w->mu);
}

/* Runs fn(w, arg) on worker w's thread and returns once it has run; in the
 * caller's thread when the worker has none (manual servers, or before it
 * started).  Callers may be several threads: each waits its turn. */
static void worker_call(struct worker *w, void (*fn)(struct worker *, void *), void *arg)
{
	if (!w->started) {
		fn(w, arg);
		return;
	}
	pthread_mutex_lock(&w->mu);
	if (w->gate == GATE_EXIT) {
		/* the thread is ending (server_destroy): it serves no more */
		pthread_mutex_unlock(&w->mu);
		fn(w, arg);
		return;
	}
	while (atomic_load_explicit(&w->call_pending, memory_order_relaxed))
		pthread_cond_wait(&w->cv, &w->mu);
	w->call_fn = fn;
	w->call_arg = arg;
	atomic_store_explicit(&w->call_pending, 1, memory_order_release);
	pthread_cond_broadcast(&w->cv);
	while (atomic_load_explicit(&w->call_pending, memory_order_relaxed))
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

/* Opens the gate of every started worker to level. */
static void open_gates(struct server *s, int level)
{
	for (unsigned i = 0; i < s->c.tpc.workers; i++) {
		struct worker *w = &s->w[i];
		if (!w->started)
			continue;
		pthread_mutex_lock(&w->mu);
		if (w->gate < level)
			w->gate = level;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000ull;
}

/* The request loop, from GO to the stop flag. */
static void worker_loop(struct worker *w)
{
	struct server *s = w->s;
	struct tp_arrival arr[POLL_BATCH];
	unsigned idle = 0;
	uint64_t born = clock_ns();
	struct rusage ru0, ru;

	/* what the thread spent before (its backend's open) is not the loop's */
	if (getrusage(RUSAGE_THREAD, &ru0) != 0)
		memset(&ru0, 0, sizeof ru0);
	/* A pass that ran n requests may take up to n * STALL_SLACK_NS beyond
	 * the threshold before the gap after it counts as a stall. */
	stall_init(&w->stall, 0, born, born, 0);
	stall_evidence(&w->stall, probe_of(s->probe, w->cpu));
	int ran = 0;
	uint64_t napped = 0;
	idle_thread_init(&s->c.idle);
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		if (atomic_load_explicit(&w->call_pending, memory_order_acquire)) {
			/* the main thread wants stats; rare, and between requests */
			pthread_mutex_lock(&w->mu);
			serve_call(w);
			pthread_mutex_unlock(&w->mu);
		}
		uint64_t now;
		uint64_t slack = (uint64_t)ran * STALL_SLACK_NS + napped;
		int gap = 0;
		napped = 0;
		if ((ran = worker_step(w, arr, &now, slack, &gap)) > 0) {
			idle = 0;
			idle_busy(&w->idle);
		} else {
			/* nothing to do: a host stall's backlog is gone (R),
			 * unless the stall ended after this pass looked */
			if (!gap)
				stall_idle(&w->stall, now);
			if (++idle >= 256) {
				/* Spin, but let other threads on this core run;
				 * or nap (server.idle, lib/idle.h). */
				idle = 0;
				napped = idle_pause(&w->idle, &s->c.idle, now, 0);
			}
		}
	}
	w->life_ns = clock_ns() - born;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		w->nivcsw = ru.ru_nivcsw - ru0.ru_nivcsw;
		w->cpu_ns = tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime) - tv_ns(&ru0.ru_utime) - tv_ns(&ru0.ru_stime);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char e[128];

	w->tid = (int)gettid();
	/* named for top -H and /proc/PID/task/TID/comm (tests/integration/
	 * kernel-switches.sh finds the workers by it) */
	char name[16];
	snprintf(name, sizeof name, "oqb-w%u", w->idx);
	pthread_setname_np(pthread_self(), name);
	/* The backend opens on the worker's NUMA node, not yet on its CPU
	 * (cpus.h: cpus_pin_self_node); the requests run on its CPU. */
	if (w->cpu >= 0 && cpus_pin_self_node(w->cpu, e, sizeof e) < 0)
		log_msg(LOG_WARN, "worker %u: %s; it opens its backend where it was started", w->idx, e);
	serve_until(w, GATE_RUN);        /* open, then a crashed server's replay */
	if (w->cpu >= 0 && cpus_pin_self(w->cpu, e, sizeof e) < 0) {
		log_msg(LOG_WARN, "worker %u: %s; it runs unpinned", w->idx, e);
		w->cpu = -1;
	}
	if (!atomic_load(&w->s->stop))   /* not a server that failed to start */
		worker_loop(w);
	pthread_mutex_lock(&w->mu);
	w->left_loop = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	serve_until(w, GATE_EXIT);       /* stats, close */
	return NULL;
}

/* Recovery: re-executes one request of a crashed server's ring, on the
 * worker's thread (worker_call), before the worker serves anything. */
struct replay {
	const void *req;
	const struct wire_req *h;
};

static void replay_call(struct worker *w, void *arg)
{
	const struct replay *r = arg;
	struct backend_req br = {
		.op = r->h->op, .key = wire_key(r->req), .key_len = r->h->key_len,
		.val = wire_val(r->req, r->h->key_len), .val_len = r->h->val_len, .aux = r->h->aux,
	};
	struct backend_out out = { .status = KV_OK, .val = w->valbuf, .val_cap = KV_MAX_VALUE };
	w->s->c.be->exec(w->be, &br, &out);
	w->recovered++;
}

static void recover_exec(void *arg, unsigned wi, const void *req, const struct wire_req *h)
{
	struct server *s = arg;
	struct replay r = { .req = req, .h = h };
	worker_call(&s->w[wi], replay_call, &r);
}

/* Opens worker w's backend instance (on its thread); w->be stays NULL on
 * failure, with why in w->call_err. */
static void open_call(struct worker *w, void *arg)
{
	const struct backend_conf *bc = arg;
	w->be = w->s->c.be->open(bc, w->call_err, sizeof w->call_err);
}

static void close_call(struct worker *w, void *arg)
{
	(void)arg;
	w->s->c.be->close(w->be);
	w->be = NULL;
}

static void stats_call(struct worker *w, void *arg)
{
	*(json_t **)arg = w->s->c.be->stats_json(w->be);
}

struct server *server_start(const struct server_conf *c, char *err, size_t errlen)
{
	if (fault_init("server", err, errlen) != 0)
		return NULL;
	struct server *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->c = *c;
	atomic_store(&s->win_from, c->window_from_go ? UINT64_MAX : 0);
	atomic_store(&s->win_to, UINT64_MAX);
	s->w = calloc(c->tpc.workers, sizeof *s->w);
	if (!s->w) {
		snprintf(err, errlen, "out of memory");
		free(s);
		return NULL;
	}
	/* the probes first, so each worker finds its CPU's when its loop starts */
	if (c->probe_ns && c->cpus && c->cpus->n > 0 && !c->manual)
		s->probe = probe_start(c->cpus->cpu, (unsigned)(c->cpus->n < (int)c->tpc.workers ? c->cpus->n
										 : (int)c->tpc.workers), c->probe_ns);
	/* Each worker's thread starts first and opens its own instance, one
	 * worker after another (a backend's first open may start the store
	 * the others then reach: memcached). */
	for (unsigned i = 0; i < c->tpc.workers; i++) {
		struct worker *w = &s->w[i];
		w->s = s;
		w->idx = i;
		w->cpu = c->cpus && c->cpus->n > (int)i ? c->cpus->cpu[i] : -1;
		stall_init(&w->stall, 0, 0, 0, 0);   /* no evidence yet: nothing to free */
		w->on_executed = c->tpc.durable ? c->tp->srv_executed : NULL;
		for (unsigned f = 0; f <= WIRE_F_ALL; f++)
			w->rule[f] = (uint8_t)system_commit_rule(c->sys, f);
		w->valbuf = malloc(KV_MAX_VALUE);
		w->isvoid = calloc(c->tpc.ring_slots, 1);
		int svc_ok = 1;
		if (c->service_sample) {
			w->svc[0] = hist_new();
			w->svc[1] = hist_new();
			svc_ok = w->svc[0] && w->svc[1];
			/* splitmix64 of (seed, worker): never 0, as xorshift needs */
			w->svc_rng = mix64(c->bc.seed ^ (0x737663ull << 32) ^ i) | 1;
		}
		w->svc_left = svc_gap(w);
		if (!w->valbuf || !w->isvoid || !svc_ok || exec_init(&w->x, 0, c->tpc.ring_slots) != 0 ||
		    fault_worker_init(&w->fw, &worker_fault_host, w, &w->x, w->isvoid, c->tpc.ring_slots) != 0) {
			snprintf(err, errlen, "out of memory for worker %u", i);
			goto fail;
		}
		if (pthread_mutex_init(&w->mu, NULL) != 0 || pthread_cond_init(&w->cv, NULL) != 0) {
			snprintf(err, errlen, "worker %u: cannot create its mutex or condition variable", i);
			goto fail;
		}
		w->sync_init = 1;
		if (!c->manual) {
			int e = pthread_create(&w->th, NULL, worker_main, w);
			if (e) {
				snprintf(err, errlen, "cannot start worker thread %u: %s", i, strerror(e));
				goto fail;
			}
			w->started = 1;
		}
		struct backend_conf bc = c->bc;
		bc.worker = (int)i;
		bc.workers = c->tpc.workers;
		worker_call(w, open_call, &bc);
		if (!w->be) {
			snprintf(err, errlen, "backend %s (worker %u): %s", c->be->name, i, w->call_err);
			goto fail;
		}
	}
	/* Backends first: a durable transport replays a crashed server's
	 * ring into them before anyone can connect. */
	struct tp_srv_conf tpc = c->tpc;
	tpc.recover_exec = recover_exec;
	tpc.recover_arg = s;
	s->tp = c->tp->srv_open(&tpc, err, errlen);
	if (!s->tp)
		goto fail;
	open_gates(s, GATE_RUN);
	if (c->tp->srv_ready && c->tp->srv_ready(s->tp, err, errlen) != 0)
		goto fail;
	return s;
fail:
	server_destroy(s);
	return NULL;
}

void server_window(struct server *s, uint64_t from, uint64_t to)
{
	/* The driver sends it with GO, before any client sends a measured
	 * request; the two stores need no order between them. */
	atomic_store_explicit(&s->win_from, from, memory_order_relaxed);
	atomic_store_explicit(&s->win_to, to, memory_order_relaxed);
	atomic_store(&s->win_set, 1);
}

const char *server_endpoint(struct server *s)
{
	return s->c.tp->srv_endpoint(s->tp);
}

void server_stop(struct server *s)
{
	if (s->stopped)
		return;
	atomic_store(&s->stop, 1);
	/* The threads stay, to run stats and close on themselves; each has
	 * left its loop once this returns, so the counters are final. */
	for (unsigned i = 0; i < s->c.tpc.workers; i++) {
		struct worker *w = &s->w[i];
		if (!w->started)
			continue;
		pthread_mutex_lock(&w->mu);
		if (w->gate < GATE_RUN)
			w->gate = GATE_RUN;   /* a failed start: past its loop at once */
		pthread_cond_broadcast(&w->cv);
		while (!w->left_loop)
			pthread_cond_wait(&w->cv, &w->mu);
		pthread_mutex_unlock(&w->mu);
	}
	/* the workers' delays, final now, for the fault's exit line (once:
	 * s->stopped) */
	if (fault_on(FAULT_SERVER_DELAY))
		for (unsigned i = 0; i < s->c.tpc.workers; i++)
			fault_fired_add(FAULT_SERVER_DELAY, s->w[i].fw.delayed);
	probe_stop(s->probe);   /* its CPU time final, for server_stats */
	s->stopped = 1;
}

int server_fatal(struct server *s, char *msg, size_t cap)
{
	if (!s->c.be->fatal)
		return 0;
	for (unsigned i = 0; i < s->c.tpc.workers; i++) {
		const char *why = s->w[i].be ? s->c.be->fatal(s->w[i].be) : NULL;
		if (why) {
			snprintf(msg, cap, "backend %s, worker %u: %s", s->c.be->name, i, why);
			return -1;
		}
	}
	return 0;
}

/* One class's service times: the histogram (hist.h's JSON, so the driver
 * merges bins) with its median, P99 and mean. */
static json_t *svc_class_json(const struct hist *h)
{
	json_t *j = hist_to_json(h);
	if (!j)
		return json_null();
	json_object_set_new(j, "p50", json_integer((json_int_t)hist_percentile(h, 50)));
	json_object_set_new(j, "p99", json_integer((json_int_t)hist_percentile(h, 99)));
	json_object_set_new(j, "mean", json_real(hist_mean(h)));
	return j;
}

/* "service_ns": the workers' service times merged bin-wise (server.h). */
static json_t *svc_json(struct server *s)
{
	json_t *j = json_pack("{s:s,s:i}", "definition", "the backend's exec call of one request, the clock read "
			      "just before and just after it: waiting in the ring, the request check, the ACK and the "
			      "response are not in it (bench/server.h, docs/driver.md)",
			      "sample_every", (int)s->c.service_sample);
	if (!s->c.service_sample || !j)
		return j;
	struct hist *cls[2] = { hist_new(), hist_new() }, *all = hist_new();
	uint64_t outside = 0;
	if (cls[0] && cls[1] && all) {
		for (unsigned i = 0; i < s->c.tpc.workers; i++)
			for (int c = 0; c < 2; c++)
				if (s->w[i].svc[c]) {
					hist_merge(cls[c], s->w[i].svc[c]);
					hist_merge(all, s->w[i].svc[c]);
				}
		for (unsigned i = 0; i < s->c.tpc.workers; i++)
			outside += s->w[i].svc_outside;
		json_object_set_new(j, "window", json_string(atomic_load(&s->win_set) ?
			"the clients' measured window (load phase, warm-up and drain left out)" :
			s->c.window_from_go ? "none: no GO with the window came, so nothing was recorded" :
			"the server's life (no window was set)"));
		json_object_set_new(j, "outside_window", json_integer((json_int_t)outside));
		json_object_set_new(j, "all", svc_class_json(all));
		json_object_set_new(j, "nilext", svc_class_json(cls[1]));
		json_object_set_new(j, "non_nilext", svc_class_json(cls[0]));
	}
	hist_free(cls[0]);
	hist_free(cls[1]);
	hist_free(all);
	return j;
}

json_t *server_stats(struct server *s)
{
	json_t *ws = json_array();
	uint64_t tot_exec = 0, tot_rej = 0, tot_void = 0, tot_delayed = 0;
	for (unsigned i = 0; i < s->c.tpc.workers; i++) {
		struct worker *w = &s->w[i];
		/* per-op counts are the backend's (its "ops" below) */
		json_t *wj = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			"executed", (json_int_t)w->executed, "rejected", (json_int_t)w->rejected,
			"voided", (json_int_t)w->voided, "misrouted", (json_int_t)w->misrouted,
			"acks_sent", (json_int_t)w->acks, "responses_sent", (json_int_t)w->resps,
			"reply_errors", (json_int_t)w->reply_errors,
			"nilext", (json_int_t)w->nilext, "non_nilext", (json_int_t)w->non_nilext,
			"out_of_order_arrivals", (json_int_t)w->x.out_of_order);
		json_object_set_new(wj, "recovered", json_integer((json_int_t)w->recovered));
		json_object_set_new(wj, "cpu", w->cpu >= 0 ? json_integer(w->cpu) : json_null());
		json_object_set_new(wj, "life_ns", json_integer((json_int_t)w->life_ns));
		json_object_set_new(wj, "involuntary_switches", json_integer(w->nivcsw));
		json_object_set_new(wj, "cpu_ns", json_integer((json_int_t)w->cpu_ns));
		json_t *sj = stall_json(&w->stall);
		if (atomic_load(&s->win_set))   /* the measured window's gaps by class (stall.h) */
			json_object_set_new(sj, "window", stall_window_json(&w->stall, atomic_load(&s->win_from),
									    atomic_load(&s->win_to)));
		json_object_set_new(wj, "stalls", sj);
		if (w->svc[0]) {
			struct hist *h = hist_new();
			if (h) {
				hist_merge(h, w->svc[0]);
				hist_merge(h, w->svc[1]);
				json_object_set_new(wj, "service_ns", json_pack("{s:I,s:I}", "n", (json_int_t)h->n,
						    "p50", (json_int_t)hist_percentile(h, 50)));
				hist_free(h);
			}
		}
		if (s->c.idle.nap_ns)
			json_object_set_new(wj, "idle_naps", json_pack("{s:I,s:I}", "count", (json_int_t)w->idle.naps,
								      "requested_ns", (json_int_t)w->idle.nap_ns));
		if (w->last_reject)
			json_object_set_new(wj, "last_reject_reason", json_string(w->last_reject));
		json_object_set_new(wj, "tid", w->tid ? json_integer(w->tid) : json_null());
		if (fault_on(FAULT_SERVER_DELAY))   /* test-only: OQB_FAULT=server-delay-ns */
			json_object_set_new(wj, "fault_delayed", json_integer((json_int_t)w->fw.delayed));
		if (w->be && s->c.be->stats_json) {
			json_t *b = NULL;
			worker_call(w, stats_call, &b);
			if (b)
				json_object_set_new(wj, "backend", b);
		}
		json_array_append_new(ws, wj);
		tot_exec += w->executed;
		tot_rej += w->rejected;
		tot_void += w->voided;
		tot_delayed += w->fw.delayed;
	}
	json_t *j = json_pack("{s:s,s:s,s:s,s:i,s:I,s:I,s:I,s:o}",
		"schema", "oqbench.server/1", "system", s->c.sys->name,
		"backend", s->c.be->name, "workers", (int)s->c.tpc.workers,
		"executed", (json_int_t)tot_exec, "rejected", (json_int_t)tot_rej,
		"voided", (json_int_t)tot_void, "per_worker", ws);
	json_object_set_new(j, "idle", json_pack("{s:s,s:I,s:I}", "mode", idle_mode(&s->c.idle),
						 "spin_ns", (json_int_t)s->c.idle.spin_ns, "nap_ns", (json_int_t)s->c.idle.nap_ns));
	json_object_set_new(j, "service_ns", svc_json(s));
	if (fault_on(FAULT_SERVER_DELAY))
		json_object_set_new(j, "fault_delayed", json_integer((json_int_t)tot_delayed));
	if (s->tp && s->c.tp->srv_stats) {
		json_t *t = s->c.tp->srv_stats(s->tp);
		/* the RDMA device's counters since the transport opened (verbs):
		 * at the top, beside the clients' (bench/client.c) */
		json_t *rc = json_object_get(t, "rdma_counters");
		if (rc) {
			json_object_set(j, "rdma_counters", rc);
			json_object_del(t, "rdma_counters");
		}
		json_object_set_new(j, "transport", t);
	}
	json_object_set_new(j, "usage", usage_json());
	json_object_set_new(j, "probe", probe_json(s->probe));
	return j;
}

void server_destroy(struct server *s)
{
	if (!s)
		return;
	server_stop(s);
	/* Every instance is closed before any worker thread ends (a store a
	 * backend started from its worker's thread may be tied to it: mcd.c). */
	for (unsigned i = 0; i < s->c.tpc.workers; i++)
		if (s->w[i].be)
			worker_call(&s->w[i], close_call, NULL);
	open_gates(s, GATE_EXIT);
	for (unsigned i = 0; i < s->c.tpc.workers; i++) {
		struct worker *w = &s->w[i];
		if (w->started)
			pthread_join(w->th, NULL);
		if (w->sync_init) {
			pthread_mutex_destroy(&w->mu);
			pthread_cond_destroy(&w->cv);
		}
		exec_free(&w->x);
		fault_worker_free(&w->fw);
		hist_free(w->svc[0]);
		hist_free(w->svc[1]);
		free(w->valbuf);
		free(w->isvoid);
		stall_free(&w->stall);
	}
	probe_free(s->probe);
	if (s->tp)
		s->c.tp->srv_close(s->tp);
	free(s->w);
	free(s);
}
