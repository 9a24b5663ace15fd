/*
 * idle.h - what a polling thread (a server worker, a client thread) does
 * when a pass of its loop found nothing to do.
 *
 *   spin (nap_ns 0, the default): keep polling, and give the CPU to any
 *       other ready thread (sched_yield) every so many empty passes.  The
 *       lowest latency there is, and the right mode whenever each polling
 *       thread has a CPU of its own, as on the paper's testbed.
 *   nap: keep spinning for spin_ns after the last pass that did work, then
 *       sleep nap_ns at a time (nanosleep, with the thread's timer slack
 *       set to 1 us) until work comes.  For runs with many more polling
 *       threads than CPUs (the paper's 210 threads in one 2-vCPU VM, or
 *       8 x 24 client threads on one machine), where spinners starve each
 *       other and the connection manager.  Its cost: a request that arrives
 *       during a nap waits up to nap_ns (plus the wake-up) before its thread
 *       sees it, which shows in its latency; docs/scale.md measures it.
 *       A client with a schedule never naps past its next intended send.
 *
 * A nap is deliberate: the caller passes its length as stall slack
 * (stall.h), so a nap is not counted as the machine taking the CPU, while
 * oversleeping beyond it still is.
 */
#ifndef OQB_IDLE_H
#define OQB_IDLE_H

#include <stdint.h>

struct idle_conf {
	uint64_t spin_ns;         /* nap mode: spin this long after the last work */
	uint64_t nap_ns;          /* 0: spin mode */
};

struct idle_state {
	uint64_t since;           /* when the current idle stretch began, 0: busy */
	uint64_t naps, nap_ns;    /* naps taken and their requested time */
};

/* The thread did work: the idle stretch is over. */
static inline void idle_busy(struct idle_state *s)
{
	s->since = 0;
}

/*
 * Called every so many empty passes.  Spin mode: sched_yield().  Nap mode:
 * sched_yield() for spin_ns after the last work, then one nap of nap_ns,
 * or of cap_ns when that is shorter (0: no cap; a cap under 20 us yields
 * instead).  Returns the nap's requested length (ns), 0 when it did not
 * nap: the caller adds it to its stall meter's slack.
 */
uint64_t idle_pause(struct idle_state *s, const struct idle_conf *c, uint64_t now, uint64_t cap_ns);

/* For nap mode, once per thread before its loop: timer slack of 1 us, so a
 * nap ends when asked rather than up to 50 us later.  No-op in spin mode. */
void idle_thread_init(const struct idle_conf *c);

/* "spin" or "nap" (for results). */
const char *idle_mode(const struct idle_conf *c);

#endif
