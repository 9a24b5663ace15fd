/*
 * probe.c - per-CPU wake-up probes (probe.h).
 */
#include "probe.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/prctl.h>
#include <sys/resource.h>

#include "clock.h"

void probe_record(struct probe_cpu *c, uint64_t due, uint64_t woke)
{
	uint64_t k = atomic_load_explicit(&c->nwake, memory_order_relaxed);
	struct probe_wake *w = &c->ring[k % PROBE_RING];
	/* woke 0 first: a reader that sees the new due with the old woke
	 * finds woke < due and skips the record */
	atomic_store_explicit(&w->woke, 0, memory_order_relaxed);
	atomic_store_explicit(&w->due, due, memory_order_release);
	atomic_store_explicit(&w->woke, woke, memory_order_release);
	atomic_store_explicit(&c->nwake, k + 1, memory_order_release);
	uint64_t late = woke > due ? woke - due : 0;
	if (late > PROBE_LATE_NS) {
		c->late++;
		c->late_ns += late;
	}
	if (late > c->max_late_ns)
		c->max_late_ns = late;
}

void probe_judge(const struct probe_cpu *c, uint64_t from, uint64_t to, uint64_t *late_ns, int *ontime)
{
	*late_ns = 0;
	*ontime = 0;
	if (!c || to <= from)
		return;
	uint64_t k = atomic_load_explicit(&((struct probe_cpu *)c)->nwake, memory_order_acquire);
	uint64_t first = k > PROBE_RING ? k - PROBE_RING : 0;
	/* late intervals may overlap only if the probe fell a period behind;
	 * it skips missed deadlines (probe_main), so they do not */
	for (uint64_t i = k; i-- > first;) {
		const struct probe_wake *w = &c->ring[i % PROBE_RING];
		uint64_t woke = atomic_load_explicit(&((struct probe_wake *)w)->woke, memory_order_acquire);
		uint64_t due = atomic_load_explicit(&((struct probe_wake *)w)->due, memory_order_acquire);
		if (!woke || woke < due)
			continue;              /* being rewritten */
		if (woke < from)
			break;                 /* older ones end before the gap too */
		if (woke - due > PROBE_LATE_NS) {
			uint64_t s = due > from ? due : from, e = woke < to ? woke : to;
			if (e > s)
				*late_ns += e - s;
		} else if (woke >= from && woke < to) {
			*ontime = 1;
		}
	}
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t probe_budget_step(uint64_t period_ns, uint64_t cpu_ns, uint64_t wall_ns)
{
	if (!wall_ns || period_ns >= PROBE_MAX_PERIOD_NS || cpu_ns * 100 <= wall_ns * PROBE_BUDGET_PCT)
		return period_ns;
	return period_ns * 2 < PROBE_MAX_PERIOD_NS ? period_ns * 2 : PROBE_MAX_PERIOD_NS;
}

static void *probe_main(void *arg)
{
	struct probe_cpu *c = arg;
	struct probe *p = c->p;
	char name[16];

	snprintf(name, sizeof name, "oqb-probe%d", c->cpu);
	pthread_setname_np(pthread_self(), name);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	uint64_t period = p->period_ns;
	atomic_store_explicit(&c->period_ns, period, memory_order_relaxed);
	uint64_t due = clock_ns() + period, look_cpu = thread_cpu_ns(), look_wall = clock_ns();
	unsigned since = 0;
	while (!atomic_load_explicit(&p->stop, memory_order_relaxed)) {
		struct timespec ts = { .tv_sec = (time_t)(due / 1000000000ull), .tv_nsec = (long)(due % 1000000000ull) };
		int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		if (r == EINTR)
			continue;
		uint64_t now = clock_ns();
		probe_record(c, due, now);
		/* the next deadline on the grid, past now: a long absence is one
		 * late wake-up, not a burst of them */
		due += period;
		if (due <= now)
			due += ((now - due) / period + 1) * period;
		if (++since == PROBE_BUDGET_EVERY) {   /* its own cost, now and then */
			uint64_t cpu = thread_cpu_ns(), wall = clock_ns();
			uint64_t next = probe_budget_step(period, cpu - look_cpu, wall - look_wall);
			if (next != period) {
				period = next;
				c->backoffs++;
				atomic_store_explicit(&c->period_ns, period, memory_order_relaxed);
			}
			look_cpu = cpu;
			look_wall = wall;
			since = 0;
		}
	}
	c->cpu_ns = thread_cpu_ns();
	return NULL;
}

struct probe *probe_start(const int *cpus, unsigned n, uint64_t period_ns)
{
	if (!period_ns || !cpus)
		return NULL;
	struct probe *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->period_ns = period_ns;
	p->c = calloc(n ? n : 1, sizeof *p->c);
	if (!p->c) {
		free(p);
		return NULL;
	}
	p->realtime = 1;
	for (unsigned i = 0; i < n; i++) {
		int dup = cpus[i] < 0;
		for (unsigned k = 0; k < p->n && !dup; k++)
			dup = p->c[k].cpu == cpus[i];
		if (dup)
			continue;
		struct probe_cpu *c = &p->c[p->n];
		c->cpu = cpus[i];
		c->p = p;
		pthread_attr_t a;
		pthread_attr_init(&a);
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(c->cpu, &set);
		pthread_attr_setaffinity_np(&a, sizeof set, &set);
		/* real time from the first instruction, so no wake-up of it is
		 * an ordinary thread's */
		struct sched_param sp = { .sched_priority = sched_get_priority_max(SCHED_FIFO) };
		pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&a, SCHED_FIFO);
		pthread_attr_setschedparam(&a, &sp);
		int e = pthread_create(&c->th, &a, probe_main, c);
		if (e == EPERM || e == EINVAL) {
			/* no real-time priority here: an ordinary thread, whose
			 * lateness is no evidence (probe.h) */
			if (p->realtime)
				snprintf(p->why, sizeof p->why, "SCHED_FIFO refused (%s): the probe's lateness is not evidence "
					 "here; run as root or with CAP_SYS_NICE", strerror(e));
			p->realtime = 0;
			pthread_attr_setinheritsched(&a, PTHREAD_INHERIT_SCHED);
			e = pthread_create(&c->th, &a, probe_main, c);
		}
		pthread_attr_destroy(&a);
		if (e) {
			if (!p->why[0])
				snprintf(p->why, sizeof p->why, "cannot start a probe thread on CPU %d: %s", c->cpu, strerror(e));
			p->realtime = 0;
			continue;
		}
		c->started = 1;
		p->n++;
	}
	if (!p->n) {
		free(p->c);
		free(p);
		return NULL;
	}
	return p;
}

void probe_stop(struct probe *p)
{
	if (!p)
		return;
	atomic_store(&p->stop, 1);
	for (unsigned i = 0; i < p->n; i++)
		if (p->c[i].started) {
			pthread_join(p->c[i].th, NULL);
			p->c[i].started = 0;
		}
}

const struct probe_cpu *probe_of(const struct probe *p, int cpu)
{
	if (!p || !p->realtime || cpu < 0)
		return NULL;
	for (unsigned i = 0; i < p->n; i++)
		if (p->c[i].cpu == cpu)
			return &p->c[i];
	return NULL;
}

json_t *probe_json(const struct probe *p)
{
	if (!p)
		return json_null();
	json_t *cs = json_array();
	for (unsigned i = 0; i < p->n; i++) {
		const struct probe_cpu *c = &p->c[i];
		json_array_append_new(cs, json_pack("{s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:i}", "cpu", c->cpu,
			"wakes", (json_int_t)atomic_load(&((struct probe_cpu *)c)->nwake), "late", (json_int_t)c->late,
			"late_ns", (json_int_t)c->late_ns, "max_late_ns", (json_int_t)c->max_late_ns,
			"cpu_ns", (json_int_t)c->cpu_ns,
			"period_ns", (json_int_t)atomic_load(&((struct probe_cpu *)c)->period_ns),
			"backoffs", (int)c->backoffs));
	}
	json_t *j = json_pack("{s:I,s:b,s:o}", "period_ns", (json_int_t)p->period_ns, "realtime", p->realtime, "cpus", cs);
	if (p->why[0])
		json_object_set_new(j, "why", json_string(p->why));
	return j;
}

void probe_free(struct probe *p)
{
	if (!p)
		return;
	probe_stop(p);
	free(p->c);
	free(p);
}
