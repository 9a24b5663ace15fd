/*
 * client.c - client threads: schedule, send, wait for commits, measure.
 *
 * Each thread owns a transport client, a generator and an arrival process,
 * so threads share nothing on the data path.  Per request the thread keeps
 * its intended send time and the event that commits it (system.h):
 * DELIVERED for an oq nilext request, ACK for a deferred one, RESP for
 * everything else.  Latency = commit time - intended time, recorded in the
 * request's class histogram (nilext / non_nilext) and in `all`, only for
 * requests whose intended time falls in the measured window (warm-up is
 * excluded).  At the end the thread stops issuing, drains for up to
 * drain_ns, and counts what is still unanswered.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/resource.h>

#include "client.h"
#include "clock.h"
#include "fault.h"
#include "hist.h"
#include "history_rec.h"
#include "log.h"
#include "probe.h"
#include "rng.h"
#include "stall.h"
#include "tagtrace.h"
#include "usage.h"

enum { CLS_NILEXT = 0, CLS_NON = 1, CLS_ALL = 2, NCLS = 3 };
static const char *const cls_name[NCLS] = { "nilext", "non_nilext", "all" };

struct pend {
	uint64_t seq;
	uint64_t t_int;          /* intended send time */
	uint8_t busy, cls, rule;
};

#define QCAP 64                /* power of two; more than a pass issues (32), plus one */
#define STAGE_BYTES 4096u      /* a request larger than this uses bigbuf */

struct cthread {
	struct client *cl;
	unsigned idx;
	pthread_t th;
	int started;
	struct tp_client *tp;
	struct gen *gen;
	struct arrival arr;
	struct pend *pend;
	uint64_t pmask;
	uint64_t seq, outstanding;
	unsigned workers;
	uint32_t client_id;
	/* Requests generated and encoded, not yet sent, oldest first: the
	 * first q_timed of them were due (their intended time is set), the
	 * rest were made ahead of time. */
	struct tp_req q[QCAP];    /* a run of them is a cli_post_many batch as it is */
	unsigned q_w[QCAP];       /* the worker each goes to */
	unsigned q_head, q_n, q_timed;
	uint8_t *arena;           /* QCAP x STAGE_BYTES: entry i encodes into its own part */
	uint8_t *bigbuf;          /* REQBUF, for one request larger than STAGE_BYTES */
	int big_used;
	uint64_t busy_posts;
	uint64_t full_since, full_ns;  /* due requests refused for room since; the time so, in all */
	struct hist *h[CLS_ALL];       /* per class; "all" is half[0] + half[1] */
	uint64_t warm_end, end;
	int gen_done;
	/* counters */
	uint64_t sent, committed, committed_in_window, loaded, unanswered, unsent;
	uint64_t status_not_found, status_errors, stray_events;
	uint64_t cls_sent[2];
	int failed;
	char err[512];
	struct hrec *hrec;        /* history recorder (lib/history.h), or NULL */
	/* trust: what the driver's self-checks are computed from */
	int cpu;                  /* -1: unpinned */
	struct hist *lag;         /* actual post time - intended time, in the window */
	/* the requests due but unsent when the loop ended: how long each had
	 * been due then (allocated at the first; the check counts those due
	 * longer than its lag_ns, the rest the window's close cut) */
	struct hist *unsent_lag;
	/* sends whose window (intended to actual) met a host stall's interval
	 * of this thread (stall.h): left out of lag and gaps, counted here */
	uint64_t lag_excluded, lag_excluded_max;
	struct hist *half[2];     /* "all" latencies of the window's two halves */
	uint64_t mid;             /* middle of the window */
	uint64_t *gaps;           /* the first GAPS_MAX gaps between intended times in the window */
	unsigned ngaps;
	uint64_t last_int;        /* the last intended time noted in gaps */
	long nivcsw;              /* involuntary context switches from start to end */
	struct idle_state idle;   /* naps when idle (lib/idle.h) */
	uint64_t cpu_ns;          /* CPU time the thread got from start to end */
	struct stall_meter stall; /* the time it did not run in the window (stall.h) */
	/* tagged requests of the window (stall.h): the host's, per class, in
	 * a histogram (allocated at the first) so that the untagged ones are
	 * the class's less these; the unattributed ones counted */
	struct hist *tagged[CLS_ALL];
	uint64_t ntag_host[CLS_ALL], ntag_unatt[CLS_ALL], ntag_worker[CLS_ALL];
	struct tagtrace *trace;   /* test-only (tagtrace.h), or NULL */
};

struct client {
	struct client_conf c;
	struct cthread *t;
	_Atomic unsigned ready, failed;
	_Atomic uint64_t start_ns;     /* 0 until the run starts */
	_Atomic int abort;
	/* GO's gate: threads ready before GO sleep here, not in a poll loop
	 * (192 waiting threads woke 96,000 times a second at 2 ms, and
	 * starved the processes still starting on a 2-vCPU guest). */
	pthread_mutex_t go_mu;
	pthread_cond_t go_cv;
	uint64_t measured_ns;
	uint64_t steal_ticks, total_ticks;   /* host CPU time from GO to the end */
	uint64_t connect_ns, connect_max_ns; /* every thread's cli_open, and the slowest */
	struct probe *probe;           /* per thread CPU (lib/probe.h), or NULL */
};

#define REQBUF (KV_MAX_VALUE + 4096)
#define GAPS_MAX 4096

unsigned client_route(const char *key, unsigned len, unsigned workers)
{
	/* FNV-1a over the key: the partition function clients and the docs
	 * agree on (hash(key) % workers, paper §5.1). */
	uint64_t h = 0xcbf29ce484222325ull;
	for (unsigned i = 0; i < len; i++) {
		h ^= (uint8_t)key[i];
		h *= 0x100000001b3ull;
	}
	return (unsigned)(h % workers);
}

static enum commit_on event_commit(uint8_t kind)
{
	return kind == TP_EV_DELIVERED ? COMMIT_DELIVERY : kind == TP_EV_ACK ? COMMIT_ACK : COMMIT_RESPONSE;
}

static void thread_fail(struct cthread *t, const char *what, const char *msg)
{
	if (!t->failed) {
		snprintf(t->err, sizeof t->err, "%s%.400s", what, msg);
		t->failed = 1;
		atomic_fetch_add(&t->cl->failed, 1);
	}
}

/* A request of the window that may be tagged (rare: the reply carries a
 * mark, or a stall's interval reaches its intended send), or any when
 * tracing: its tag is the STALL_TAG_* bits of the thread's own stalls and
 * of the worker's mark on the reply (mark's WIRE_MARK_TAGS; a test-only
 * fault's mark is no tag, wire.h). */
static __attribute__((noinline)) void record_tagged(struct cthread *t, const struct pend *p, uint64_t end,
						    uint64_t lat, unsigned mark)
{
	unsigned cls = p->cls, worker = mark & WIRE_MARK_TAGS, tag = 0;
	if (worker || p->t_int <= t->stall.mark_until)
		tag = worker | stall_tag(&t->stall, p->t_int);
	if (t->trace)
		tagtrace_add(t->trace, p->t_int, end, tag, mark, cls);
	if (!tag)
		return;
	if (worker)
		t->ntag_worker[cls]++;
	if (!(tag & STALL_TAG_HOST)) {
		t->ntag_unatt[cls]++;
		return;
	}
	t->ntag_host[cls]++;
	if (!t->tagged[cls])
		t->tagged[cls] = hist_new();
	if (t->tagged[cls])
		hist_record(t->tagged[cls], lat);
}

/* Handles events until none is pending; returns how many it handled. */
static int poll_events(struct cthread *t, uint64_t now)
{
	struct tp_event ev[64];
	const struct transport_ops *tp = t->cl->c.tp;
	int n = tp->cli_poll(t->tp, ev, 64);
	if (n <= 0)
		return 0;
	if (!now)
		now = clock_ns();
	for (int i = 0; i < n; i++) {
		struct pend *p = &t->pend[ev[i].seq & t->pmask];
		if (!p->busy || p->seq != ev[i].seq || event_commit(ev[i].kind) != p->rule) {
			/* e.g. the DELIVERED of a get under oq, which commits on
			 * its response instead. */
			t->stray_events++;
			continue;
		}
		p->busy = 0;
		t->outstanding--;
		t->committed++;
		unsigned mark = ev[i].mark;   /* the worker's stall tag on its reply (wire.h) */
		if (t->hrec)
			hrec_commit(t->hrec, &ev[i], now);
		if (ev[i].status == KV_NOT_FOUND)
			t->status_not_found++;
		else if (ev[i].status != KV_OK)
			t->status_errors++;
		if (p->t_int >= t->warm_end && p->t_int < t->end) {
			/* the latency ends when the transport found the event, if it
			 * says (tp_event.t_done), else now, after cli_poll */
			uint64_t end = ev[i].t_done && ev[i].t_done <= now ? ev[i].t_done : now;
			uint64_t lat = end > p->t_int ? end - p->t_int : 0;
			/* "all" is not recorded per request: it is the merge of
			 * the two halves (client_result), which hold it exactly */
			hist_record(t->h[p->cls], lat);
			hist_record(t->half[p->t_int >= t->mid], lat);
			/* one compare when no stall is near (stall.h) */
			if (__builtin_expect(mark != 0, 0) || __builtin_expect(p->t_int <= t->stall.mark_until, 0) ||
			    __builtin_expect(t->trace != NULL, 0))
				record_tagged(t, p, end, lat, mark);
		}
		if (now >= t->warm_end && now < t->end)
			t->committed_in_window++;
	}
	return n;
}

/* Counts request seq as sent at `now`. */
static inline void sent_one(struct cthread *t, uint64_t seq, int loading, uint64_t now)
{
	struct pend *p = &t->pend[seq & t->pmask];
	t->outstanding++;
	if (loading)
		return;
	t->sent++;
	t->cls_sent[p->cls]++;
	/* by the time it was sent, not intended: a client that fell behind in
	 * the warm-up sends the window's requests late */
	if (now >= t->warm_end && now < t->end) {
		uint64_t lag = now > p->t_int ? now - p->t_int : 0;
		/* A send whose intended time met a host stall's interval
		 * [start, R] of this thread was late for the host, not for the
		 * generator: the thread was off its CPU, then caught up in a
		 * burst.  Such sends are counted apart, and their lag is not
		 * judged (docs/trust.md, "schedule_lag").  One compare when no
		 * stall is near. */
		if (__builtin_expect(p->t_int <= t->stall.mark_until, 0) && stall_late_by_host(&t->stall, p->t_int, now)) {
			t->lag_excluded++;
			if (lag > t->lag_excluded_max)
				t->lag_excluded_max = lag;
			return;
		}
		hist_record(t->lag, lag);
	}
}

/* Notes the intended time of an arrival taken off the schedule.  The gaps
 * between intended times are what arrival_fit tests: the schedule is the
 * load the config describes, and how far each send strayed from it is
 * schedule_lag's (docs/trust.md, "arrival_fit"). */
static inline void note_intended(struct cthread *t, uint64_t due)
{
	if (due < t->warm_end || due >= t->end || t->ngaps >= GAPS_MAX)
		return;
	if (t->last_int)
		t->gaps[t->ngaps++] = due - t->last_int;
	t->last_int = due;
}

/*
 * Sends the queue's due requests (its first q_timed), in order, those to
 * the same worker in one cli_post_many where the transport has it.
 * Returns how many were sent (fewer than were due if the transport is
 * busy: the rest stay queued, due), or -1 when the transport failed.
 * now: the clock read once for the caller's pass, taken as the send time.
 */
static inline int post_due(struct cthread *t, int loading, uint64_t now)
{
	const struct transport_ops *tp = t->cl->c.tp;
	char err[512];
	int sent = 0;
	while (t->q_timed) {
		const unsigned h = t->q_head, w = t->q_w[h];
		unsigned n = 1;
		int x;
		/* the run of due requests to w, up to the ring's end */
		if (tp->cli_post_many)
			while (n < t->q_timed && h + n < QCAP && t->q_w[h + n] == w)
				n++;
		if (n > 1) {
			x = tp->cli_post_many(t->tp, w, &t->q[h], (int)n, err, sizeof err);
		} else {
			x = tp->cli_post(t->tp, w, t->q[h].buf, t->q[h].len, t->q[h].seq, err, sizeof err);
			x = x == 0 ? 1 : x == 1 ? 0 : -1;
		}
		if (x < 0) {
			t->pend[t->q[h].seq & t->pmask].busy = 0;
			thread_fail(t, "send: ", err);
			return -1;
		}
		for (unsigned i = 0; i < (unsigned)x; i++) {
			sent_one(t, t->q[h + i].seq, loading, now);
			if (t->q[h + i].buf == t->bigbuf)
				t->big_used = 0;
		}
		t->q_head = (t->q_head + (unsigned)x) & (QCAP - 1);
		t->q_n -= (unsigned)x;
		t->q_timed -= (unsigned)x;
		sent += x;
		if (x > 0 && t->full_since) {
			t->full_ns += now - t->full_since;
			t->full_since = 0;
		}
		if ((unsigned)x < n) {
			t->busy_posts++;
			if (!t->full_since && !loading)
				t->full_since = now;
			break;
		}
	}
	return sent;
}

/*
 * Generates and encodes the next operation onto the queue, its pending
 * entry filled in but for the intended time: 1 done, 0 wait (the pending
 * table or the queue is full), -1 when the generator is exhausted or
 * failed.  now: a clock reading for the history's invoke stamp (only read
 * when recording one).
 */
static int prepare(struct cthread *t, int loading, uint64_t load_i, uint64_t now)
{
	struct client *cl = t->cl;
	struct pend *p = &t->pend[(t->seq + 1) & t->pmask];
	struct gen_op op;
	char err[512];
	int r;

	/* big_used: a request is in bigbuf, and the next might need it too */
	if (p->busy || t->q_n == QCAP || t->big_used)
		return 0;
	/* Generators fill op, key, sizes and flags; only the optional field
	 * needs a default (no memset of the 250 B key buffer per request). */
	op.aux = 0;
	if (loading)
		r = cl->c.gen->load(t->gen, load_i, &op);
	else
		r = cl->c.gen->next(t->gen, &op);
	if (r != 0) {
		if (r < 0) {
			const char *m = cl->c.gen->error ? cl->c.gen->error(t->gen) : NULL;
			thread_fail(t, "workload: ", m ? m : "generator failed");
		}
		t->gen_done = 1;
		return -1;
	}
	if (fault_on(FAULT_CLIENT_GEN_DELAY))
		fault_delay(fault_gen_delay_ns);   /* test-only: a slow generator */
	uint64_t seq = ++t->seq;
	unsigned w = t->workers > 1 ? client_route(op.key, op.key_len, t->workers) : 0;
	struct wire_req h = {
		.op = (uint8_t)op.op, .flags = (uint16_t)op.flags, .key_len = op.key_len,
		.val_len = op.val_len, .client_id = t->client_id, .worker = w,
		.seq = seq, .aux = op.aux,
	};
	/* Durable: a request that commits on delivery (oq's nilext) is made
	 * persistent by the client (verbs: READ after SEND); one that commits
	 * on the server's ACK or response is persisted by the server first. */
	if (cl->c.durable && system_commit_rule(cl->c.sys, h.flags) == COMMIT_DELIVERY)
		h.flags |= WIRE_F_DURABLE;
	unsigned qi = (t->q_head + t->q_n) & (QCAP - 1);
	uint8_t *buf = t->arena + (size_t)qi * STAGE_BYTES;
	const void *val = t->hrec ? hrec_value(t->hrec, seq, &op) : NULL;
	uint32_t len = wire_encode_req(buf, STAGE_BYTES, &h, op.key, val);
	if (!len) {   /* larger than its part of the arena (or than any request) */
		buf = t->bigbuf;
		len = wire_encode_req(buf, REQBUF, &h, op.key, val);
		t->big_used = len != 0;
	}
	if (!len) {
		snprintf(err, sizeof err, "op %s with a %u B key and %u B value does not fit a request",
			 kv_op_name(op.op), op.key_len, op.val_len);
		thread_fail(t, "", err);
		return -1;
	}
	if (t->hrec)
		hrec_issue_at(t->hrec, seq, &op, buf, len, now);   /* now: read before the post */
	p->seq = seq;
	p->cls = (op.flags & KV_F_NILEXT) ? CLS_NILEXT : CLS_NON;
	p->rule = (uint8_t)system_commit_rule(cl->c.sys, h.flags);
	p->busy = 1;
	t->q[qi] = (struct tp_req){ .buf = buf, .len = len, .seq = seq };
	t->q_w[qi] = w;
	t->q_n++;
	return 1;
}

/*
 * Makes the next operation due at t_int: the first one prepared ahead if
 * there is one, else a new one.  1 done, 0 wait, -1 as prepare.
 */
static inline int make_due(struct cthread *t, uint64_t t_int, int loading, uint64_t load_i, uint64_t now)
{
	if (t->q_timed == t->q_n) {
		int r = prepare(t, loading, load_i, now);
		if (r <= 0)
			return r;
	}
	t->pend[t->q[(t->q_head + t->q_timed) & (QCAP - 1)].seq & t->pmask].t_int = t_int;
	t->q_timed++;
	return 1;
}

/*
 * Sends the next operation with intended time t_int, or, while an earlier
 * one is still waiting for the transport, that one (keeping its time).
 * Returns 1 if sent, 0 if it must wait (the pending table or the transport
 * is full), -1 when the generator is exhausted or failed, or the transport
 * failed.
 */
static int issue(struct cthread *t, uint64_t t_int, int loading, uint64_t load_i, uint64_t now)
{
	if (!t->q_timed) {
		int r = make_due(t, t_int, loading, load_i, now);
		if (r <= 0)
			return r;
	}
	int r = post_due(t, loading, now);
	return r < 0 ? -1 : r > 0;
}

static void drain(struct cthread *t, uint64_t deadline)
{
	while (t->outstanding && !atomic_load(&t->cl->abort)) {
		if (!poll_events(t, 0)) {
			if (clock_ns() >= deadline)
				break;
			sched_yield();
		}
	}
}

/* Load phase: this thread's share of the records, a window at a time. */
static void load_phase(struct cthread *t)
{
	const struct client_conf *c = &t->cl->c;
	uint64_t i = 0;
	if (!c->gen->load)
		return;
	t->warm_end = t->end = UINT64_MAX;   /* nothing recorded */
	uint64_t deadline = clock_ns() + 600ull * 1000000000ull, last_progress = clock_ns();
	while (!t->gen_done && !t->failed) {
		uint64_t now = clock_ns();
		if (now > deadline || now - last_progress > 30ull * 1000000000ull) {
			thread_fail(t, "load phase: ", now > deadline ? "did not finish within 600 s"
				    : "no progress for 30 s (is the server alive?)");
			break;
		}
		if (poll_events(t, 0))
			last_progress = clock_ns();
		while (t->outstanding < 64) {
			uint64_t t_now = clock_ns();
			int r = issue(t, t_now, 1, i, t_now);
			if (r <= 0)
				break;
			i++;
			t->loaded++;
			last_progress = clock_ns();
		}
	}
	t->gen_done = 0;
	/* The last window's answers, under the loop's rule: given up only
	 * after 30 s without one (a fixed 10 s failed loaded but live runs:
	 * 15 of 64 answers slower than that beside a load of 16 on 2 CPUs). */
	for (uint64_t left = t->outstanding; left && !t->failed && !atomic_load(&t->cl->abort);) {
		drain(t, clock_ns() + 1000000000ull);
		if (t->outstanding < left)
			last_progress = clock_ns(), left = t->outstanding;
		else if (clock_ns() - last_progress > 30ull * 1000000000ull)
			break;
	}
	if (t->outstanding && !t->failed) {
		char m[128];
		snprintf(m, sizeof m, "%llu load requests unanswered, none answered for 30 s (is the server alive?)",
			 (unsigned long long)t->outstanding);
		thread_fail(t, "load phase: ", m);
	}
}

/* User plus system CPU time of a rusage, in ns. */
static uint64_t ru_ns(const struct rusage *r)
{
	return (uint64_t)(r->ru_utime.tv_sec + r->ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(r->ru_utime.tv_usec + r->ru_stime.tv_usec) * 1000ull;
}

/* Opens GO's gate: the run starts at start_ns, or (0) it is aborted; wakes
 * every thread asleep on the gate. */
static void gate_open(struct client *cl, uint64_t start_ns)
{
	pthread_mutex_lock(&cl->go_mu);
	if (start_ns)
		atomic_store(&cl->start_ns, start_ns);
	else
		atomic_store(&cl->abort, 1);
	pthread_cond_broadcast(&cl->go_cv);
	pthread_mutex_unlock(&cl->go_mu);
}

/* Counts the due requests still unsent at the end of the loop (now) into
 * t->unsent and t->unsent_lag. */
static void unsent_at_end(struct cthread *t, uint64_t now)
{
	uint64_t n = t->q_timed;

	if (!n && (t->gen_done || arrival_peek(&t->arr) >= t->end))
		return;
	if (!t->unsent_lag)
		t->unsent_lag = hist_new();
	for (unsigned i = 0; i < t->q_timed; i++) {
		uint64_t due = t->pend[t->q[(t->q_head + i) & (QCAP - 1)].seq & t->pmask].t_int;
		if (t->unsent_lag)
			hist_record(t->unsent_lag, now > due ? now - due : 0);
	}
	if (!t->gen_done)
		for (; arrival_peek(&t->arr) < t->end; arrival_next(&t->arr), n++)
			if (t->unsent_lag)
				hist_record(t->unsent_lag, now > arrival_peek(&t->arr) ? now - arrival_peek(&t->arr) : 0);
	t->unsent += n;
}

static void *thread_main(void *arg)
{
	struct cthread *t = arg;
	struct client *cl = t->cl;
	const struct client_conf *c = &cl->c;

	/* named as the server's workers are (oqb-wN), for top -H and /proc */
	char name[16];
	snprintf(name, sizeof name, "oqb-c%u", t->idx);
	pthread_setname_np(pthread_self(), name);
	if (t->cpu >= 0) {
		char e[128];
		if (cpus_pin_self(t->cpu, e, sizeof e) < 0) {
			log_msg(LOG_WARN, "client thread %u: %s; it runs unpinned", t->idx, e);
			t->cpu = -1;
		}
	}
	load_phase(t);
	atomic_fetch_add(&cl->ready, 1);
	/* Until GO (or the end), asleep on the gate: polling, 24 threads
	 * waking every 200 us took 0.38 CPU per waiting process on 2 busy
	 * cores and starved the processes still starting (a Slurm step takes
	 * seconds there).  The wake-up's latency is covered by GO's start
	 * delay, and each thread sleeps until its first send anyway. */
	uint64_t start;
	pthread_mutex_lock(&cl->go_mu);
	while (!(start = atomic_load(&cl->start_ns)) && !atomic_load(&cl->abort))
		pthread_cond_wait(&cl->go_cv, &cl->go_mu);
	pthread_mutex_unlock(&cl->go_mu);
	if (!start || t->failed)
		return NULL;
	t->warm_end = start + c->warmup_ns;
	t->end = t->warm_end + c->duration_ns;
	t->mid = t->warm_end + c->duration_ns / 2;
	struct rusage ru0, ru1;
	uint64_t aseed = c->seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)c->rank << 32) ^ t->idx ^ 0xa77;
	if (c->arrival == ARRIVAL_POISSON)
		arrival_init_poisson(&t->arr, start, c->rate / c->threads, aseed);
	else
		arrival_init_closed(&t->arr, c->outstanding, aseed);
	clock_spin_until(start);
	int have_ru = getrusage(RUSAGE_THREAD, &ru0) == 0;   /* from the start: warm-up and window */

	unsigned idle = 0;
	uint64_t napped = 0;
	idle_thread_init(&c->idle);
	/* A pass issues at most 32 and polls at most 64: it fits in the
	 * threshold, so no slack (stall.h), but for a nap it chose. */
	stall_init(&t->stall, 0, start, t->warm_end, t->end);
	stall_evidence(&t->stall, probe_of(cl->probe, t->cpu));
	for (;;) {
		uint64_t now = clock_ns();
		stall_tick(&t->stall, now, napped);
		napped = 0;
		if (now >= t->end || t->failed || atomic_load_explicit(&cl->abort, memory_order_relaxed))
			break;
		int did = 0;
		if (!t->gen_done) {
			if (c->arrival == ARRIVAL_POISSON) {
				/* Every request due by now (at most a batch before
				 * polling, so events keep up), then one send for
				 * them: they go out together, cheaper than one by
				 * one.  What the transport cannot take stays queued
				 * with its intended time; what the pending table
				 * cannot take stays on the schedule. */
				for (int b = 0; b < 32 && arrival_peek(&t->arr) <= now; b++) {
					if (make_due(t, arrival_peek(&t->arr), 0, 0, now) <= 0)
						break;
					note_intended(t, arrival_peek(&t->arr));
					arrival_next(&t->arr);
				}
				if (t->q_timed && post_due(t, 0, now) > 0)
					did = 1;
			} else {
				for (int b = 0; b < 32 && t->outstanding < c->outstanding; b++) {
					if (issue(t, now, 0, 0, now) <= 0)
						break;
					did = 1;
				}
			}
		}
		if (poll_events(t, 0))
			did = 1;
		/* The next request is generated and encoded before it is due,
		 * so that its latency, counted from the intended time, holds
		 * the system's time and not the generator's.  Not while a
		 * history is recorded: an op's invoke stamp is taken when it
		 * is made, and one taken long before the send would widen its
		 * interval and weaken the check. */
		if (t->q_n == t->q_timed && !t->gen_done && !t->hrec)
			prepare(t, 0, 0, 0);
		if (!did && !t->q_timed)
			stall_idle(&t->stall, now);   /* back on its schedule: a stall's backlog is gone (R) */
		if (did) {
			idle = 0;
			idle_busy(&t->idle);
		} else if (++idle >= 1024) {
			/* spin (yielding now and then), or nap until the next
			 * intended send at the latest (clients.idle) */
			idle = 0;
			uint64_t t2 = clock_ns(), cap = 0;
			/* wake CLOCK_SPIN_TAIL_NS early and spin the rest, as
			 * clock_sleep_until does, so a nap does not make a send
			 * late (a cap too short to nap spins) */
			if (c->arrival == ARRIVAL_POISSON && !t->gen_done)
				cap = arrival_peek(&t->arr) > t2 + CLOCK_SPIN_TAIL_NS ?
				      arrival_peek(&t->arr) - t2 - CLOCK_SPIN_TAIL_NS : 1;
			napped = idle_pause(&t->idle, &c->idle, t2, cap);
		}
	}
	if (have_ru && getrusage(RUSAGE_THREAD, &ru1) == 0) {
		t->nivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
		t->cpu_ns = ru_ns(&ru1) - ru_ns(&ru0);
	}
	/* Requests that were due but never sent: those queued with their
	 * time set, and those still on the schedule.  Each is recorded with
	 * how long it had been due when the loop ended: one due a few us
	 * before the close was cut by it (the last pass had not come round),
	 * one due far longer was left behind. */
	if (c->arrival == ARRIVAL_POISSON)
		unsent_at_end(t, clock_ns());
	/* A failed thread does not wait out the schedule: its transport is
	 * gone, and the error is what the caller needs. */
	drain(t, t->failed ? clock_ns() + 100000000ull : t->end + c->drain_ns);
	t->unanswered = t->outstanding;
	return NULL;
}

static int max_outstanding_pow2(unsigned v)
{
	unsigned p = 1;
	while (p < v)
		p <<= 1;
	return (int)p;
}

struct client *client_prepare(const struct client_conf *c, char *err, size_t errlen)
{
	struct client *cl = calloc(1, sizeof *cl);
	if (!cl) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&cl->go_mu, NULL);
	pthread_cond_init(&cl->go_cv, NULL);
	cl->c = *c;
	if (fault_init("client", err, errlen) != 0) {   /* test-only faults (fault.h) */
		free(cl);
		return NULL;
	}
	if (cl->c.arrival == ARRIVAL_CLOSED && cl->c.max_outstanding < cl->c.outstanding)
		cl->c.max_outstanding = cl->c.outstanding;
	unsigned pcap = (unsigned)max_outstanding_pow2(cl->c.max_outstanding ? cl->c.max_outstanding : 1024);
	cl->t = calloc(c->threads, sizeof *cl->t);
	if (!cl->t) {
		snprintf(err, errlen, "out of memory");
		free(cl);
		return NULL;
	}
	for (unsigned i = 0; i < c->threads; i++) {
		struct cthread *t = &cl->t[i];
		t->cl = cl;
		t->idx = i;
		t->pmask = pcap - 1;
		t->pend = calloc(pcap, sizeof *t->pend);
		t->arena = malloc((size_t)QCAP * STAGE_BYTES);
		t->bigbuf = malloc(REQBUF);
		for (int k = 0; k < CLS_ALL; k++)
			t->h[k] = hist_new();
		t->lag = hist_new();
		t->half[0] = hist_new();
		t->half[1] = hist_new();
		t->gaps = malloc(GAPS_MAX * sizeof *t->gaps);
		t->cpu = c->cpus && c->cpus->n > (int)i ? c->cpus->cpu[i] : -1;
		stall_init(&t->stall, 0, 0, 0, 0);   /* no evidence yet: nothing to free */
		if (!t->pend || !t->arena || !t->bigbuf || !t->h[0] || !t->h[1] || !t->lag || !t->half[0] ||
		    !t->half[1] || !t->gaps) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		/* The workload first: a mistake in it is reported before any
		 * connection is tried. */
		struct gen_ctx gc = {
			.seed = c->seed, .process = c->rank, .nprocesses = c->nprocesses ? c->nprocesses : 1,
			.thread = i, .nthreads = c->threads, .config_dir = c->config_dir, .where = "workload",
		};
		t->gen = c->gen->open(c->workload, &gc, err, errlen);
		if (!t->gen)
			goto fail;
		struct tp_cli_conf tc = {
			.endpoint = c->endpoint, .system = c->sys->name, .thread = i,
			.max_outstanding = pcap, .durable = c->durable,
			.delegation = c->delegation, .connect_timeout_ms = c->connect_timeout_ms,
		};
		uint64_t t_open = clock_ns();
		t->tp = c->tp->cli_open(&tc, err, errlen);
		if (!t->tp)
			goto fail;
		t_open = clock_ns() - t_open;
		cl->connect_ns += t_open;
		if (t_open > cl->connect_max_ns)
			cl->connect_max_ns = t_open;
		t->workers = c->tp->cli_workers(t->tp);
		t->client_id = c->tp->cli_id(t->tp);
		if (c->history.dir && !(t->hrec = hrec_open(&c->history, c->rank, i, t->client_id,
							    pcap, err, errlen)))
			goto fail;
		if (!(t->trace = tagtrace_open(c->rank, i, err, errlen)) && err[0])
			goto fail;
	}
	if (c->manual) {
		for (unsigned i = 0; i < c->threads; i++) {
			struct cthread *t = &cl->t[i];
			t->warm_end = 0;
			t->end = t->mid = UINT64_MAX;
		}
		return cl;
	}
	for (unsigned i = 0; i < c->threads; i++) {
		int e = pthread_create(&cl->t[i].th, NULL, thread_main, &cl->t[i]);
		if (e) {
			snprintf(err, errlen, "cannot start client thread %u: %s", i, strerror(e));
			gate_open(cl, 0);
			goto fail;
		}
		cl->t[i].started = 1;
	}
	/* Wait for every thread's load phase. */
	while (atomic_load(&cl->ready) < c->threads)
		usleep(500);
	for (unsigned i = 0; i < c->threads; i++)
		if (cl->t[i].failed) {
			snprintf(err, errlen, "client thread %u: %.450s", i, cl->t[i].err);
			gate_open(cl, 0);
			goto fail;
		}
	return cl;
fail:
	client_destroy(cl);
	return NULL;
}

int client_step_issue(struct client *cl, uint64_t t_int)
{
	return issue(&cl->t[0], t_int, 0, 0, clock_ns());
}

int client_step_poll(struct client *cl)
{
	return poll_events(&cl->t[0], 0);
}

/* The host's CPU time in ticks from /proc/stat's "cpu" line: steal and
 * the total of all states; 0 when unreadable. */
static int read_steal(uint64_t *steal, uint64_t *total)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			   &v[4], &v[5], &v[6], &v[7]) : 0;
	if (f)
		fclose(f);
	if (n < 8)
		return 0;
	*steal = v[7];
	*total = 0;
	for (int i = 0; i < 8; i++)
		*total += v[i];
	return 1;
}

/* After the threads ended: writes what is still pending as unknown and
 * closes every history file.  0, or -1 with the first error. */
static int history_close_all(struct client *cl, char *err, size_t errlen)
{
	int rc = 0;
	for (unsigned i = 0; i < cl->c.threads; i++) {
		if (hrec_close(cl->t[i].hrec, err, errlen) != 0)
			rc = -1;
		cl->t[i].hrec = NULL;
	}
	return rc;
}

int client_run(struct client *cl, uint64_t start_in_ns, char *err, size_t errlen)
{
	uint64_t s0 = 0, t0 = 0, s1 = 0, t1 = 0;
	int have = read_steal(&s0, &t0);
	/* the probes before GO: each thread takes its CPU's as its window starts */
	if (cl->c.probe_ns && cl->c.cpus && cl->c.cpus->n > 0 && !cl->c.manual)
		cl->probe = probe_start(cl->c.cpus->cpu, (unsigned)(cl->c.cpus->n < (int)cl->c.threads ? cl->c.cpus->n
										   : (int)cl->c.threads), cl->c.probe_ns);
	gate_open(cl, clock_ns() + start_in_ns);
	for (unsigned i = 0; i < cl->c.threads; i++)
		if (cl->t[i].started) {
			pthread_join(cl->t[i].th, NULL);
			cl->t[i].started = 0;
		}
	probe_stop(cl->probe);
	if (history_close_all(cl, err, errlen) != 0)
		return -1;
	if (have && read_steal(&s1, &t1) && t1 > t0) {
		cl->steal_ticks = s1 - s0;
		cl->total_ticks = t1 - t0;
	}
	cl->measured_ns = cl->c.duration_ns;
	for (unsigned i = 0; i < cl->c.threads; i++)
		if (cl->t[i].failed) {
			snprintf(err, errlen, "client thread %u: %.450s", i, cl->t[i].err);
			return -1;
		}
	return 0;
}

/* The raw material of the driver's self-checks (docs/trust.md). */
static json_t *trust_json(struct client *cl)
{
	struct hist *lag = hist_new(), *h0 = hist_new(), *h1 = hist_new(), *ul = hist_new();
	json_t *gaps = json_array(), *sw = json_array(), *cpus = json_array(), *cpu = json_array();
	uint64_t excl = 0, excl_max = 0;
	for (unsigned i = 0; i < cl->c.threads; i++) {
		struct cthread *t = &cl->t[i];
		excl += t->lag_excluded;
		excl_max = t->lag_excluded_max > excl_max ? t->lag_excluded_max : excl_max;
		if (lag && t->lag)
			hist_merge(lag, t->lag);
		if (ul && t->unsent_lag)
			hist_merge(ul, t->unsent_lag);
		if (h0 && t->half[0])
			hist_merge(h0, t->half[0]);
		if (h1 && t->half[1])
			hist_merge(h1, t->half[1]);
		json_t *g = json_array();
		for (unsigned k = 0; k < t->ngaps; k++)
			json_array_append_new(g, json_integer((json_int_t)t->gaps[k]));
		json_array_append_new(gaps, g);
		json_array_append_new(sw, json_integer(t->nivcsw));
		json_array_append_new(cpu, json_integer((json_int_t)t->cpu_ns));
		json_array_append_new(cpus, t->cpu >= 0 ? json_integer(t->cpu) : json_null());
	}
	json_t *j = json_pack("{s:o,s:o,s:o,s:f,s:o,s:o,s:I,s:I,s:I,s:I}",
		"lag_ns", lag ? hist_to_json(lag) : json_null(),
		"halves_ns", json_pack("[oo]", h0 ? hist_to_json(h0) : json_null(),
				       h1 ? hist_to_json(h1) : json_null()),
		"intended_gaps_ns", gaps,
		"mean_gap_ns", cl->c.arrival == ARRIVAL_POISSON && cl->c.rate > 0 ? 1e9 * cl->c.threads / cl->c.rate : 0.0,
		"involuntary_switches", sw, "thread_cpus", cpus,
		"window_ns", (json_int_t)cl->c.duration_ns,
		"switch_window_ns", (json_int_t)(cl->c.warmup_ns + cl->c.duration_ns),
		"steal_ticks", (json_int_t)cl->steal_ticks, "total_ticks", (json_int_t)cl->total_ticks);
	json_object_set_new(j, "cpu_ns", cpu);
	/* the sends left out of lag_ns (sent_one) */
	json_object_set_new(j, "lag_excluded", json_pack("{s:I,s:I}", "n", (json_int_t)excl, "max_ns", (json_int_t)excl_max));
	/* the unsent requests, by how long each had been due when its
	 * thread's loop ended (unsent_at_end); empty when none was, so that
	 * the check tells this client from one older than the key */
	json_object_set_new(j, "unsent_lag_ns", ul ? hist_to_json(ul) : json_null());
	hist_free(ul);
	json_t *st = json_array();
	for (unsigned i = 0; i < cl->c.threads; i++) {
		json_t *sj = stall_json(&cl->t[i].stall);
		json_object_set_new(sj, "window", stall_window_json(&cl->t[i].stall, cl->t[i].warm_end, cl->t[i].end));
		json_array_append_new(st, sj);
	}
	json_object_set_new(j, "stalls", st);
	/* the window in wall-clock time, which the server's stalls are timed in */
	if (cl->c.threads) {
		uint64_t off = clock_wall_ns() - clock_ns();
		json_object_set_new(j, "window_wall_ns", json_pack("[II]", (json_int_t)(cl->t[0].warm_end + off),
								  (json_int_t)(cl->t[0].end + off)));
	}
	hist_free(lag);
	hist_free(h0);
	hist_free(h1);
	return j;
}

/*
 * The window's requests by tag (lib/stall.h): "sys_lat_ns" per class, the
 * requests no host stall touched (each class's histogram less its
 * host-tagged ones: m[] are the classes' merged histograms, left as they
 * are); "host" and "unattributed" counts per class ("worker": those of
 * them the worker's mark tagged); "probe", the probes' own record.
 */
static json_t *tags_json(struct client *cl, struct hist *const *m)
{
	struct hist *sys[NCLS];
	json_t *lat = json_object(), *nh = json_object(), *nu = json_object(), *nw = json_object();
	for (int k = 0; k < NCLS; k++)
		sys[k] = hist_new();
	for (int k = 0; k < CLS_ALL; k++) {
		uint64_t h = 0, u = 0, w = 0;
		if (sys[k] && m[k])
			hist_merge(sys[k], m[k]);
		for (unsigned i = 0; i < cl->c.threads; i++) {
			struct cthread *t = &cl->t[i];
			if (sys[k] && t->tagged[k])
				hist_subtract(sys[k], t->tagged[k]);
			h += t->ntag_host[k];
			u += t->ntag_unatt[k];
			w += t->ntag_worker[k];
		}
		if (sys[CLS_ALL] && sys[k])
			hist_merge(sys[CLS_ALL], sys[k]);
		json_object_set_new(nh, cls_name[k], json_integer((json_int_t)h));
		json_object_set_new(nu, cls_name[k], json_integer((json_int_t)u));
		json_object_set_new(nw, cls_name[k], json_integer((json_int_t)w));
	}
	for (int k = 0; k < NCLS; k++) {
		json_object_set_new(lat, cls_name[k], sys[k] ? hist_to_json(sys[k]) : json_null());
		hist_free(sys[k]);
	}
	return json_pack("{s:o,s:o,s:o,s:o,s:o}", "sys_lat_ns", lat, "host", nh, "unattributed", nu, "worker", nw,
			 "probe", probe_json(cl->probe));
}

json_t *client_result(struct client *cl)
{
	struct hist *m[NCLS];
	uint64_t sent = 0, committed = 0, inwin = 0, unans = 0, unsent = 0, nf = 0, serr = 0, stray = 0;
	uint64_t loaded = 0, cls_sent[2] = { 0, 0 };
	json_t *tstats = json_array();
	for (int k = 0; k < NCLS; k++)
		m[k] = hist_new();
	for (unsigned i = 0; i < cl->c.threads; i++) {
		struct cthread *t = &cl->t[i];
		for (int k = 0; k < CLS_ALL; k++)
			if (m[k] && t->h[k])
				hist_merge(m[k], t->h[k]);
		if (m[CLS_ALL])
			for (int k = 0; k < 2; k++)
				if (t->half[k])
					hist_merge(m[CLS_ALL], t->half[k]);
		sent += t->sent; committed += t->committed; inwin += t->committed_in_window;
		unans += t->unanswered; unsent += t->unsent; nf += t->status_not_found;
		serr += t->status_errors; stray += t->stray_events; loaded += t->loaded;
		cls_sent[0] += t->cls_sent[0]; cls_sent[1] += t->cls_sent[1];
		if (t->tp && cl->c.tp->cli_stats)
			json_array_append_new(tstats, cl->c.tp->cli_stats(t->tp));
	}
	double secs = cl->measured_ns / 1e9;
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	json_t *lat = json_object(), *sum = json_object();
	for (int k = 0; k < NCLS; k++) {
		json_object_set_new(lat, cls_name[k], m[k] ? hist_to_json(m[k]) : json_null());
		/* this process's percentiles, from its merged histogram (the
		 * driver merges bins across processes; never average these) */
		if (m[k])
			json_object_set_new(sum, cls_name[k], json_pack("{s:I,s:I,s:I,s:I,s:f}",
				"n", (json_int_t)m[k]->n, "p50", (json_int_t)hist_percentile(m[k], 50),
				"p99", (json_int_t)hist_percentile(m[k], 99),
				"max", (json_int_t)(m[k]->n ? m[k]->max : 0), "mean", hist_mean(m[k])));
	}

	json_t *j = json_pack("{s:s,s:i,s:s,s:s,s:s,s:i,s:s,s:f,s:f,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"schema", "oqbench.client/1", "rank", (int)cl->c.rank, "host", host,
		"system", cl->c.sys->name, "transport", cl->c.tp->name, "threads", (int)cl->c.threads,
		"arrival", cl->c.arrival == ARRIVAL_POISSON ? "poisson" : "closed",
		"offered_ops", cl->c.arrival == ARRIVAL_POISSON ? cl->c.rate : 0.0,
		"achieved_ops", secs > 0 ? inwin / secs : 0.0,
		"measured_ns", (json_int_t)cl->measured_ns,
		"sent", (json_int_t)sent, "committed", (json_int_t)committed,
		"unanswered", (json_int_t)unans, "unsent", (json_int_t)unsent,
		"not_found", (json_int_t)nf, "errors", (json_int_t)serr,
		"stray_events", (json_int_t)stray, "loaded", (json_int_t)loaded,
		"sent_nilext", (json_int_t)cls_sent[0], "sent_non_nilext", (json_int_t)cls_sent[1]);
	if (cl->c.sys->label)   /* e.g. write1: "not linearizable by design" (system.h) */
		json_object_set_new(j, "system_label", json_string(cl->c.sys->label));
	uint64_t busy = 0;
	for (unsigned i = 0; i < cl->c.threads; i++)
		busy += cl->t[i].busy_posts;
	json_object_set_new(j, "busy_posts", json_integer((json_int_t)busy));
	json_t *naps = json_array(), *napped = json_array();
	for (unsigned i = 0; i < cl->c.threads; i++) {
		json_array_append_new(naps, json_integer((json_int_t)cl->t[i].idle.naps));
		json_array_append_new(napped, json_integer((json_int_t)cl->t[i].idle.nap_ns));
	}
	/* napped_ns: the nap time each thread asked for, which the
	 * interference check does not count as CPU it lost */
	json_object_set_new(j, "idle", json_pack("{s:s,s:I,s:I,s:o,s:o}", "mode", idle_mode(&cl->c.idle),
						 "spin_ns", (json_int_t)cl->c.idle.spin_ns, "nap_ns",
						 (json_int_t)cl->c.idle.nap_ns, "naps_per_thread", naps,
						 "napped_ns_per_thread", napped));
	/* The threads open their connections one after another before GO
	 * (verbs: one QP per server worker each, or one per process with
	 * delegation): how long that took, for scale runs (docs/scale.md). */
	json_object_set_new(j, "connect_ns", json_pack("{s:I,s:I}", "total", (json_int_t)cl->connect_ns,
						      "slowest_thread", (json_int_t)cl->connect_max_ns));
	/* a full receive ring (shm: the slot's previous lap not executed yet;
	 * verbs: every request slot of a lane in flight): how often a thread
	 * found it so and waited (the transport counts it), and how long its
	 * due requests waited for room in all (full_wait_ns, post_due) */
	uint64_t fw = 0, fns = 0;
	size_t i;
	json_t *v;
	json_array_foreach(tstats, i, v)
		fw += (uint64_t)json_integer_value(json_object_get(v, "ring_full_waits"));
	for (unsigned k = 0; k < cl->c.threads; k++)
		fns += cl->t[k].full_ns;
	json_object_set_new(j, "ring_full_waits", json_integer((json_int_t)fw));
	json_object_set_new(j, "full_wait_ns", json_integer((json_int_t)fns));
	/* the RDMA device's counters over this process's life: one thread's
	 * transport stats carry them for the whole process (verbs:
	 * vb_counters.c); they move up here, where the driver reads them */
	json_array_foreach(tstats, i, v) {
		json_t *rc = json_object_get(v, "rdma_counters");
		if (rc) {
			json_object_set(j, "rdma_counters", rc);
			json_object_del(v, "rdma_counters");
			break;
		}
	}
	json_object_set_new(j, "transport_stats", tstats);
	json_object_set_new(j, "lat_ns", lat);
	json_object_set_new(j, "host_tags", tags_json(cl, m));
	json_object_set_new(j, "summary_ns", sum);
	if (cl->c.threads && cl->t[0].gen && cl->c.gen->describe) {
		json_t *d = cl->c.gen->describe(cl->t[0].gen);
		if (d)
			json_object_set_new(j, "workload", d);
	}
	json_object_set_new(j, "trust", trust_json(cl));
	json_object_set_new(j, "usage", usage_json());
	for (int k = 0; k < NCLS; k++)
		hist_free(m[k]);
	return j;
}

void client_destroy(struct client *cl)
{
	if (!cl)
		return;
	gate_open(cl, 0);
	for (unsigned i = 0; i < cl->c.threads; i++) {
		struct cthread *t = &cl->t[i];
		if (t->started)
			pthread_join(t->th, NULL);
		if (t->gen)
			cl->c.gen->close(t->gen);
		if (t->tp)
			cl->c.tp->cli_close(t->tp);
		for (int k = 0; k < CLS_ALL; k++)
			hist_free(t->h[k]);
		hist_free(t->lag);
		hist_free(t->unsent_lag);
		hist_free(t->half[0]);
		hist_free(t->half[1]);
		hist_free(t->tagged[0]);
		hist_free(t->tagged[1]);
		stall_free(&t->stall);
		free(t->gaps);
		hrec_close(t->hrec, NULL, 0);
		char te[256];
		if (tagtrace_close(t->trace, te, sizeof te) != 0)
			log_msg(LOG_WARN, "client thread %u: tag trace not written: %s", t->idx, te);
		free(t->pend);
		free(t->arena);
		free(t->bigbuf);
	}
	free(cl->t);
	probe_free(cl->probe);
	pthread_cond_destroy(&cl->go_cv);
	pthread_mutex_destroy(&cl->go_mu);
	free(cl);
}
