/*
 * fault.c - test-only faults (fault.h): the OQB_FAULT parser and the
 * ack-before-alloc deferral queue.  The server's faults live at their hook
 * in bench/server.c, each behind fault_on(), which is one predictable
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

#include "bits.h"
#include "clock.h"
#include "fault.h"
#include "log.h"
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
