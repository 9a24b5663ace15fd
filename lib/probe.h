/*
 * probe.h - per-CPU wake-up probes: evidence of the CPU's absence that the
 * code under test cannot produce.
 *
 * A probe is a thread of its own, pinned to one CPU, at the highest
 * SCHED_FIFO priority, that sleeps to absolute deadlines one period apart
 * (clock_nanosleep, TIMER_ABSTIME on CLOCK_MONOTONIC, timer slack 1 ns)
 * and notes how late each wake-up was.  A real-time thread preempts every
 * ordinary task on its CPU at once, so its lateness is the time the CPU
 * itself was away: the hypervisor ran another vCPU, an SMI, an interrupt
 * storm, or a task of a higher real-time priority.  Nothing the measured
 * threads do (spin, block, take a lock) makes it late.
 *
 * The stall meter (stall.h) asks, for a gap [from, to) of a thread on the
 * same CPU: how much of it overlaps late wake-ups (the host's), and did a
 * wake-up come on time inside it (the CPU was there: the gap was the
 * thread's own doing, or another task's, which the kernel's run-queue
 * delay shows).  A gap shorter than a period often holds no wake-up at
 * all: no evidence either way.
 *
 * Without SCHED_FIFO (no CAP_SYS_NICE, RT throttled away) an ordinary
 * thread's lateness would measure the scheduler's fairness, not the CPU's
 * absence, so such a probe gives no evidence (probe_json says why) and its
 * gaps stay unattributed unless the kernel's accounting speaks.
 *
 * Cost: one wake-up per period per CPU, a few microseconds each (the
 * probe_json "cpu_ns" says how much it took; docs/trust.md has the
 * measured effect on p50).  Where a wake-up costs far more (an emulated
 * guest: under QEMU's TCG one took about 480 us of the guest's CPU, half
 * of it at 1 ms), the probe keeps to a budget: every PROBE_BUDGET_EVERY
 * wake-ups it reads its own CPU time and, above PROBE_BUDGET_PCT of the
 * wall time since the last look, doubles its period, up to
 * PROBE_MAX_PERIOD_NS (probe_budget_step); probe_json reports each CPU's
 * period at the end and how often it backed off.  A longer period costs
 * evidence (more short gaps hold no wake-up), never its meaning.  Records: the last PROBE_RING wake-ups per CPU,
 * written by the probe and read by the threads of that CPU at their rare
 * stalls (a seqcount per record; a torn read is retried or skipped).
 */
#ifndef OQB_PROBE_H
#define OQB_PROBE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <jansson.h>

#define PROBE_RING 128                 /* wake-ups kept per CPU (128 ms at 1 ms) */
#define PROBE_LATE_NS 50000ull         /* a wake-up later than this is a late one */
#define PROBE_BUDGET_EVERY 64          /* wake-ups between looks at its own CPU time */
#define PROBE_BUDGET_PCT 2             /* the most of a CPU a probe may take */
#define PROBE_MAX_PERIOD_NS 100000000ull   /* its period backs off at most to 100 ms */

struct probe_wake {
	_Atomic uint64_t due, woke;    /* monotonic ns: the deadline, the wake-up */
};

struct probe_cpu {
	int cpu;
	struct probe *p;
	pthread_t th;
	int started;
	_Atomic uint64_t nwake;        /* wake-ups so far; ring[(k) % PROBE_RING] is the k-th */
	struct probe_wake ring[PROBE_RING];
	uint64_t late, late_ns, max_late_ns;   /* the probe thread's own totals */
	uint64_t cpu_ns;               /* CPU time the probe thread used */
	_Atomic uint64_t period_ns;    /* its period now (the budget may have doubled it) */
	unsigned backoffs;             /* how often the budget doubled it */
};

struct probe {
	uint64_t period_ns;
	int realtime;                  /* 1: every probe got SCHED_FIFO; its lateness is evidence */
	char why[160];                 /* when not realtime: why */
	_Atomic int stop;
	unsigned n;
	struct probe_cpu *c;
};

/*
 * Starts one probe per distinct CPU of cpus[0..n) (negative entries, an
 * unpinned thread, are skipped) waking every period_ns.  Returns NULL when
 * period_ns is 0 or no CPU is pinned (no probe: its evidence is absent),
 * or on failure to allocate.  A probe that cannot get SCHED_FIFO runs
 * anyway (so its cost is the same) but its evidence is off (realtime 0).
 */
struct probe *probe_start(const int *cpus, unsigned n, uint64_t period_ns);
void probe_stop(struct probe *p);   /* joins the threads (their records stay readable); NULL ok */
void probe_free(struct probe *p);   /* stops and frees; NULL ok */

/* The probe of cpu, or NULL (no probe there, or no evidence: not realtime). */
const struct probe_cpu *probe_of(const struct probe *p, int cpu);

/*
 * The evidence over a gap [from, to) (monotonic ns): *late_ns the part of
 * it covered by late wake-ups' [due, woke) intervals, *ontime 1 when a
 * wake-up came on time inside it.  c NULL: both 0.
 */
void probe_judge(const struct probe_cpu *c, uint64_t from, uint64_t to, uint64_t *late_ns, int *ontime);

/* The budget's step: the period to use after a look that found the probe
 * took cpu_ns of CPU in wall_ns of time at period period_ns: doubled (at
 * most to PROBE_MAX_PERIOD_NS) when that is above PROBE_BUDGET_PCT %,
 * else the same. */
uint64_t probe_budget_step(uint64_t period_ns, uint64_t cpu_ns, uint64_t wall_ns);

/* Records one wake-up (the probe thread's step; tests use it to stand in
 * for a probe). */
void probe_record(struct probe_cpu *c, uint64_t due, uint64_t woke);

/* {"period_ns", "realtime", "why"?, "cpus": [{"cpu", "wakes", "late",
 * "late_ns", "max_late_ns", "cpu_ns", "period_ns", "backoffs"}]}: the
 * top period_ns is the one asked for, a CPU's the one it ended with; NULL
 * p: null. */
json_t *probe_json(const struct probe *p);

#endif
