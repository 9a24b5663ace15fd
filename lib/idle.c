/*
 * idle.c - spin or nap when a polling thread has nothing to do (idle.h).
 */
#include "idle.h"

#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#define IDLE_MIN_NAP_NS 20000ull

uint64_t idle_pause(struct idle_state *s, const struct idle_conf *c, uint64_t now, uint64_t cap_ns)
{
	if (!c->nap_ns) {
		sched_yield();
		return 0;
	}
	if (!s->since)
		s->since = now;
	uint64_t nap = c->nap_ns;
	if (cap_ns && cap_ns < nap)
		nap = cap_ns;
	if (now - s->since < c->spin_ns || nap < IDLE_MIN_NAP_NS) {
		sched_yield();
		return 0;
	}
	struct timespec ts = { (time_t)(nap / 1000000000ull), (long)(nap % 1000000000ull) };
	nanosleep(&ts, NULL);
	s->naps++;
	s->nap_ns += nap;
	return nap;
}

void idle_thread_init(const struct idle_conf *c)
{
	if (c->nap_ns)
		prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
}

const char *idle_mode(const struct idle_conf *c)
{
	return c->nap_ns ? "nap" : "spin";
}
