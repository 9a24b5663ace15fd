/*
 * fault.c - test-only faults (fault.h): the OQB_FAULT parser, the
 * ack-before-alloc deferral queue, and the worker's faults: fault_hook,
 * the pass a worker runs instead of its own when a fault is on, and
 * fault_exec at its backend call.  The worker loop (bench/server.c) has
 * one branch for them, fault_on(FAULTS_ANY) once per pass: a predictable
 * branch on a global that is zero unless OQB_FAULT names a fault.
 * tests/integration/check-faults.sh shows each correctness fault is caught
 * by `oqb check` in every seed, and the correct server passes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "bits.h"
#include "clock.h"
#include "exec.h"
#include "fault.h"
#include "log.h"
#include "transport.h"
#include "wire.h"

unsigned fault_mask;
uint64_t fault_delay_ns;
uint32_t fault_delay_frac_ppb = FAULT_FRAC_ONE;
int fault_delay_sleep;
uint64_t fault_gen_delay_ns;
uint64_t fault_claim_stall_ms;

static const struct { const char *name; unsigned bit; } faults[] = {
	{ "exec-out-of-order", FAULT_EXEC_OOO },
	{ "ack-before-alloc", FAULT_ACK_BEFORE_ALLOC },
	{ "get-bypass", FAULT_GET_BYPASS },
	{ "drop-after-ack", FAULT_DROP_AFTER_ACK },
	{ "incr-nonatomic", FAULT_INCR_NONATOMIC },
	{ "skip-recovery", FAULT_SKIP_RECOVERY },
	{ "commit-on-error", FAULT_COMMIT_ON_ERROR },
};
#define NFAULTS (sizeof faults / sizeof faults[0])

static _Atomic uint64_t fired[32];   /* by bit number of the FAULT_* flag */
static _Atomic unsigned fired_added; /* the faults fault_fired_add counted */

void fault_fired(unsigned f)
{
	atomic_fetch_add_explicit(&fired[__builtin_ctz(f) & 31], 1, memory_order_relaxed);
}

void fault_fired_add(unsigned f, uint64_t n)
{
	atomic_fetch_add_explicit(&fired[__builtin_ctz(f) & 31], n, memory_order_relaxed);
	atomic_fetch_or_explicit(&fired_added, f, memory_order_relaxed);
}

uint64_t fault_fired_count(unsigned f)
{
	return atomic_load_explicit(&fired[__builtin_ctz(f) & 31], memory_order_relaxed);
}

/* The faults that slow a process down without breaking anything. */
#define FAULTS_SLOW ((unsigned)(FAULT_SERVER_DELAY | FAULT_CLIENT_GEN_DELAY | FAULT_CLAIM_STALL))
/* ... the ones whose firings are not counted, and the one a server
 * counts in bulk as it stops (fault.h) */
#define FAULTS_UNCOUNTED ((unsigned)(FAULT_SKIP_RECOVERY | FAULT_CLIENT_GEN_DELAY))
#define FAULTS_BULK ((unsigned)FAULT_SERVER_DELAY)

/* At exit: one line with the firings of every fault that is on, but for
 * skip-recovery and the client's delay; the server's delay only where a
 * server added its count (a client with the same OQB_FAULT delayed
 * nothing, and says nothing rather than 0). */
static void report_fired(void)
{
	char line[400];
	const size_t head = (size_t)snprintf(line, sizeof line, "OQB_FAULT fired:");
	size_t len = head;
	for (size_t i = 0; i < NFAULTS && len < sizeof line; i++)
		if ((fault_mask & faults[i].bit) && !(faults[i].bit & FAULTS_UNCOUNTED))
			len += (size_t)snprintf(line + len, sizeof line - len, " %s=%llu", faults[i].name,
						(unsigned long long)fault_fired_count(faults[i].bit));
	if ((fault_mask & FAULT_CLAIM_STALL) && len < sizeof line)
		len += (size_t)snprintf(line + len, sizeof line - len, " claim-stall-ms=%llu",
					(unsigned long long)fault_fired_count(FAULT_CLAIM_STALL));
	if ((fault_mask & atomic_load(&fired_added) & FAULT_SERVER_DELAY) && len < sizeof line)
		len += (size_t)snprintf(line + len, sizeof line - len, " server-delay=%llu",
					(unsigned long long)fault_fired_count(FAULT_SERVER_DELAY));
	if (len > head)
		fprintf(stderr, "%s\n", line);
}

/* server-delay-frac's F: a decimal in (0, 1] with at most 9 decimals,
 * parsed exactly into parts per billion (no binary rounding, so "exactly
 * floor(k F + 1/2) of k" holds for the F written).  0, or -1. */
static int parse_frac(const char *s, uint32_t *ppb)
{
	uint64_t whole = 0, frac = 0, scale = FAULT_FRAC_ONE;
	int digits = 0;
	for (; *s >= '0' && *s <= '9'; s++, digits++)
		if ((whole = whole * 10 + (uint64_t)(*s - '0')) > 1)
			return -1;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
			if (scale == 1)
				return -1;   /* a tenth decimal: not exact in ppb */
			scale /= 10;
			frac += scale * (uint64_t)(*s - '0');
		}
	uint64_t v = whole * FAULT_FRAC_ONE + frac;
	if (*s || !digits || v == 0 || v > FAULT_FRAC_ONE)
		return -1;
	*ppb = (uint32_t)v;
	return 0;
}

int fault_parse(const char *s, unsigned *mask, struct fault_params *fp, char *err, size_t errlen)
{
	*mask = 0;
	*fp = (struct fault_params){ .delay_frac_ppb = FAULT_FRAC_ONE };
	const char *modifier = NULL;   /* a server-delay-frac or -mode seen */
	while (s && *s) {
		size_t n = strcspn(s, ",");
		char item[64];
		snprintf(item, sizeof item, "%.*s", (int)(n < 63 ? n : 63), s);
		s += n + (s[n] == ',');
		if (!item[0])
			continue;
		unsigned long long d;
		char tail;
		if (sscanf(item, "server-delay-ns:%llu%c", &d, &tail) == 1) {
			*mask |= FAULT_SERVER_DELAY;
			fp->delay_ns = d;
			continue;
		}
		if (!strncmp(item, "server-delay-frac:", 18)) {
			if (parse_frac(item + 18, &fp->delay_frac_ppb) != 0) {
				snprintf(err, errlen, "OQB_FAULT: \"%s\": F is the fraction of requests "
					 "server-delay-ns delays, a decimal with 0 < F <= 1 and at most 9 "
					 "decimals, e.g. server-delay-frac:0.02", item);
				return -1;
			}
			modifier = "server-delay-frac";
			continue;
		}
		if (!strncmp(item, "server-delay-mode:", 18)) {
			if (!strcmp(item + 18, "busy") || !strcmp(item + 18, "sleep")) {
				fp->delay_sleep = item[18] == 's';
			} else {
				snprintf(err, errlen, "OQB_FAULT: \"%s\": unknown mode; server-delay-mode "
					 "is busy (spin on the CPU, the default) or sleep (block in "
					 "clock_nanosleep)", item);
				return -1;
			}
			modifier = "server-delay-mode";
			continue;
		}
		if (sscanf(item, "client-gen-delay-ns:%llu%c", &d, &tail) == 1) {
			*mask |= FAULT_CLIENT_GEN_DELAY;
			fp->gen_delay_ns = d;
			continue;
		}
		if (sscanf(item, "claim-stall-ms:%llu%c", &d, &tail) == 1) {
			*mask |= FAULT_CLAIM_STALL;
			fp->claim_stall_ms = d;
			continue;
		}
		size_t i;
		for (i = 0; i < NFAULTS; i++)
			if (!strcmp(item, faults[i].name))
				break;
		if (i == NFAULTS) {
			snprintf(err, errlen, "OQB_FAULT: unknown fault \"%s\"; known: exec-out-of-order, "
				 "ack-before-alloc, get-bypass, drop-after-ack, incr-nonatomic, "
				 "server-delay-ns:N (with server-delay-frac:F, server-delay-mode:busy|sleep), "
				 "client-gen-delay-ns:N, claim-stall-ms:N, skip-recovery, "
				 "commit-on-error (N in nanoseconds, for claim-stall in ms; unset OQB_FAULT for "
				 "a correct run)", item);
			return -1;
		}
		*mask |= faults[i].bit;
	}
	if (modifier && !(*mask & FAULT_SERVER_DELAY)) {
		snprintf(err, errlen, "OQB_FAULT: %s modifies server-delay-ns, which the list lacks; "
			 "add it, e.g. OQB_FAULT=server-delay-ns:1000000,server-delay-frac:0.02,"
			 "server-delay-mode:sleep", modifier);
		return -1;
	}
	return 0;
}

static void calibrate(void);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_rc;
static char init_err[300];
static const char *init_who = "process";

static void init_once(void)
{
	const char *e = getenv("OQB_FAULT");
	unsigned m;
	struct fault_params fp;
	if (fault_parse(e, &m, &fp, init_err, sizeof init_err) != 0) {
		init_rc = -1;
		return;
	}
	fault_mask = m;
	fault_delay_ns = fp.delay_ns;
	fault_delay_frac_ppb = fp.delay_frac_ppb;
	fault_delay_sleep = fp.delay_sleep;
	fault_gen_delay_ns = fp.gen_delay_ns;
	fault_claim_stall_ms = fp.claim_stall_ms;
	if ((fp.delay_ns && !fp.delay_sleep) || fp.gen_delay_ns)
		calibrate();
	if (m & ~FAULTS_UNCOUNTED)
		atexit(report_fired);
	if (m)
		log_msg(LOG_WARN, "!!! %s: TEST-ONLY FAULT INJECTION ON: OQB_FAULT=%s -- this %s is "
			"deliberately %s; never use its results !!!", init_who, e,
			init_who, (m & ~FAULTS_SLOW) ? "BROKEN" : "slowed down");
}

int fault_init(const char *who, char *err, size_t errlen)
{
	init_who = who;
	pthread_once(&once, init_once);
	if (init_rc)
		snprintf(err, errlen, "%s", init_err);
	return init_rc;
}

/*
 * A delay fault must add N ns, not N plus the cost of reading the clock
 * (two reads, about 50 ns here: a 30 ns delay measured +128 ns).  So the
 * delay is a loop of CPU pause instructions counted, not timed: at start
 * the loop's speed is measured over about 1 ms (best of 5, against
 * preemption), and every request spins the pauses that N ns take.
 * From FAULT_DELAY_CLOCK_NS (20 us) on, the two reads are 0.25 % of the
 * delay or less, and a count can be short: a start on a busy host may
 * calibrate slow in all five tries (each preempted), and a CPU that
 * clocks up later spins faster.  So a long delay spins on the clock to
 * its deadline, and is never shorter than N (what a test that reads N
 * off a latency percentile relies on).
 */
static uint64_t pauses_per_kns;   /* pause loops per 1000 ns */

static void spin_pauses(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		cpu_relax();
		__asm__ __volatile__("" ::: "memory");   /* where the hint is no instruction */
	}
}

static void calibrate(void)
{
	uint64_t best = UINT64_MAX, n = 1;
	/* grow the loop until it takes about 100 us, then time 10x that */
	for (;;) {
		uint64_t t0 = clock_ns();
		spin_pauses(n);
		if (clock_ns() - t0 >= 100000 || n >= (1ull << 40))
			break;
		n *= 2;
	}
	n *= 10;
	for (int k = 0; k < 5; k++) {
		uint64_t t0 = clock_ns();
		spin_pauses(n);
		uint64_t dt = clock_ns() - t0;
		if (dt < best)
			best = dt;
	}
	pauses_per_kns = best ? n * 1000 / best : 1;
	if (!pauses_per_kns)
		pauses_per_kns = 1;
}

void fault_delay(uint64_t ns)
{
	if (ns >= FAULT_DELAY_CLOCK_NS)
		clock_spin_until(clock_ns() + ns);
	else
		spin_pauses(ns * pauses_per_kns / 1000);
}

void fault_sleep(uint64_t ns)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += (time_t)(ns / 1000000000ull);
	t.tv_nsec += (long)(ns % 1000000000ull);
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

/* ---- ack-before-alloc ---- */

#define DEFER_NS   50000ull
#define DEFER_MAX  64

struct deferred {
	uint64_t since;
	unsigned w;
	uint32_t len;
	uint8_t *req;
};

struct fault_deferq {
	struct deferred d[DEFER_MAX];
	unsigned head, tail;            /* FIFO: tail..head */
};

int fault_defer(struct fault_deferq **qp, unsigned w, const void *req, uint32_t len)
{
	struct fault_deferq *q = *qp;
	struct wire_req h;
	/* Only what commits on the delivery is ACKed early: a nilext request.
	 * Everything else is posted at once, so a get can overtake the set
	 * its own client committed just before (paper §4's case). */
	wire_decode_req(req, &h);
	if (!(h.flags & KV_F_NILEXT) || (h.flags & KV_F_NONIDEMP))
		return -1;
	if (!q && !(q = *qp = calloc(1, sizeof *q)))
		return -1;
	if (q->head - q->tail >= DEFER_MAX)
		return -1;
	struct deferred *d = &q->d[q->head % DEFER_MAX];
	uint8_t *copy = realloc(d->req, len);
	if (!copy)
		return -1;
	memcpy(copy, req, len);
	d->req = copy;
	d->len = len;
	d->w = w;
	d->since = clock_ns();
	q->head++;
	fault_fired(FAULT_ACK_BEFORE_ALLOC);
	return 0;
}

int fault_defer_flush(struct fault_deferq *q, int all, fault_send_fn send, void *arg)
{
	if (!q || q->head == q->tail)
		return 0;
	uint64_t now = clock_ns();
	while (q->tail != q->head) {
		struct deferred *d = &q->d[q->tail % DEFER_MAX];
		if (!all && now - d->since < DEFER_NS)
			break;
		if (send(arg, d->w, d->req, d->len) != 0)
			return -1;
		q->tail++;
	}
	return 0;
}

void fault_defer_free(struct fault_deferq *q)
{
	if (!q)
		return;
	for (unsigned i = 0; i < DEFER_MAX; i++)
		free(q->d[i].req);
	free(q);
}

/* ---- the worker's faults (fault.h: fault_hook) ---- */

int fault_worker_init(struct fault_worker *f, const struct fault_host *host, void *w,
		      struct exec *x, const uint8_t *isvoid, uint64_t ring_slots)
{
	f->host = host;
	f->w = w;
	f->x = x;
	f->isvoid = isvoid;
	f->mask = ring_slots - 1;
	if (fault_on(FAULT_GET_BYPASS) && !(f->early = calloc(ring_slots, 1)))
		return -1;
	return 0;
}

void fault_worker_free(struct fault_worker *f)
{
	free(f->early);
	f->early = NULL;
}

int fault_exec(struct fault_worker *f, const struct backend_ops *ops, struct backend *be,
	       const struct backend_req *br, struct backend_out *out)
{
	f->just_delayed = 0;
	if (fault_on(FAULT_SERVER_DELAY) && fault_delay_pick(&f->delay_acc, fault_delay_frac_ppb)) {
		f->delayed++;
		f->just_delayed = 1;   /* its reply carries WIRE_MARK_FAULT (wire.h) */
		if (fault_delay_sleep)
			fault_sleep(fault_delay_ns);
		else
			fault_delay(fault_delay_ns);
	}
	if (fault_on(FAULT_DROP_AFTER_ACK) && br->async && (++f->n & 7) == 0) {
		fault_fired(FAULT_DROP_AFTER_ACK);
		return FAULT_EXEC_DROPPED;   /* committed already (delivery or ACK), and never executed */
	}
	if (!fault_on(FAULT_INCR_NONATOMIC))
		return FAULT_EXEC_NONE;
	/* The write-back of the previous incr lands after this request. */
	int due = f->incr_pend;
	struct fault_worker prev = *f;
	f->incr_pend = 0;
	if (br->op == KV_OP_INCR) {
		struct backend_req g = *br;
		g.op = KV_OP_GET;
		ops->exec(be, &g, out);
		uint64_t v = 0;
		uint32_t i;
		if (out->status == KV_OK) {
			for (i = 0; i < out->val_len && i < 20 && out->val[i] >= '0' && out->val[i] <= '9'; i++)
				v = v * 10 + (uint64_t)(out->val[i] - '0');
			if (i != out->val_len || !i) {
				out->status = KV_ERR_OP;
				out->val_len = 0;
			} else {
				int n = snprintf(f->val, sizeof f->val, "%llu", (unsigned long long)(v + br->aux));
				memcpy(out->val, f->val, (size_t)n);
				out->val_len = (uint32_t)n;
				f->vlen = (uint8_t)n;
				f->klen = (uint16_t)(br->key_len < sizeof f->key ? br->key_len : sizeof f->key);
				memcpy(f->key, br->key, f->klen);
				f->incr_pend = 1;
			}
		}
	} else {
		ops->exec(be, br, out);
	}
	if (due) {
		fault_fired(FAULT_INCR_NONATOMIC);   /* another request ran in between */
		struct backend_req st = { .op = KV_OP_SET, .key = prev.key, .key_len = prev.klen,
					  .val = (const uint8_t *)prev.val, .val_len = prev.vlen };
		struct backend_out o2 = { .status = KV_OK, .val = NULL, .val_cap = 0 };
		ops->exec(be, &st, &o2);
	}
	return FAULT_EXEC_DONE;
}

/* get-bypass: a get arriving behind unexecuted slots is served now. */
static void get_bypass(struct fault_worker *f, uint64_t slot)
{
	size_t avail;
	struct wire_req h;
	if (slot == f->x->idx || f->isvoid[slot & f->mask] || f->early[slot & f->mask])
		return;
	const void *req = f->host->req(f->w, slot, &avail);
	if (!req || wire_check(req, avail, &h, NULL) != 0 || h.op != KV_OP_GET)
		return;
	f->host->run(f->w, slot);
	fault_fired(FAULT_GET_BYPASS);
	f->early[slot & f->mask] = 1;
}

/* 1 if slot was executed before its turn by get-bypass (and forgets it:
 * its turn has come). */
static int ran_early(struct fault_worker *f, uint64_t slot)
{
	if (!f->early || !f->early[slot & f->mask])
		return 0;
	f->early[slot & f->mask] = 0;
	return 1;
}

/* exec-out-of-order: holds ready slots back and runs each group of up to
 * FAULT_HOLD_MAX in reverse (or after 30 us), then releases them in order.
 * A void or early-run slot is released without a run. */
static int exec_reversed(struct fault_worker *f)
{
	uint64_t slot;
	while (f->nheld < FAULT_HOLD_MAX && (slot = exec_next(f->x)) != EXEC_NONE) {
		if (!f->nheld)
			f->held_since = clock_ns();
		f->held[f->nheld++] = slot;
	}
	if (!f->nheld || (f->nheld < FAULT_HOLD_MAX && clock_ns() - f->held_since < 30000))
		return 0;
	if (f->nheld > 1)
		fault_fired(FAULT_EXEC_OOO);
	for (unsigned i = f->nheld; i-- > 0; )
		if (!f->isvoid[f->held[i] & f->mask] && !(f->early && f->early[f->held[i] & f->mask]))
			f->host->run(f->w, f->held[i]);
	for (unsigned i = 0; i < f->nheld; i++) {
		ran_early(f, f->held[i]);
		f->host->release(f->w, f->held[i]);
	}
	f->nheld = 0;
	return 1;
}

int fault_hook(struct fault_worker *f, struct tp_arrival *arr, int n)
{
	if (!fault_on(FAULTS_REORDER))
		return f->host->pass(f->w, arr, n);
	/* mark every arrival, let the faults run slots out of their turn,
	 * then run what is ready in slot order */
	for (int i = 0; i < n; i++) {
		if (f->host->arrive(f->w, &arr[i]) != 0)
			continue;
		if (fault_on(FAULT_GET_BYPASS))
			get_bypass(f, arr[i].slot);
	}
	int did = 0;
	if (fault_on(FAULT_EXEC_OOO))
		did = exec_reversed(f);
	uint64_t slot;
	while ((slot = exec_next(f->x)) != EXEC_NONE) {
		did++;
		if (ran_early(f, slot))
			f->host->release(f->w, slot);
		else
			f->host->finish(f->w, slot);
	}
	return did;
}
