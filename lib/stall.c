/*
 * stall.c - noting a spinning thread's stalls (stall.h).
 */
#include "stall.h"

#include <string.h>

#include "clock.h"

void stall_init(struct stall_meter *m, uint64_t threshold_ns, uint64_t start, uint64_t from, uint64_t to)
{
	memset(m, 0, sizeof *m);
	m->prev = start;
	m->threshold_ns = threshold_ns ? threshold_ns : STALL_THRESHOLD_NS;
	m->from = from;
	m->to = to ? to : UINT64_MAX;
}

void stall_note(struct stall_meter *m, uint64_t now, uint64_t slack_ns)
{
	if (now < m->from || now >= m->to)
		return;
	uint64_t len = now - m->prev;
	/* a gap that began before the counted span counts from its start */
	if (m->prev < m->from)
		len = now - m->from;
	if (len <= m->threshold_ns + slack_ns)
		return;
	m->total_ns += len;
	m->count++;
	if (len > m->max_ns)
		m->max_ns = len;
	struct stall_event *e = &m->ev[m->nev++ % STALL_EVENTS];
	e->wall_end_ns = clock_wall_ns();
	e->len_ns = len;
}

uint64_t stall_overlap(const struct stall_event *ev, unsigned n, uint64_t from, uint64_t to)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < n; i++) {
		uint64_t end = ev[i].wall_end_ns;
		uint64_t start = end > ev[i].len_ns ? end - ev[i].len_ns : 0;
		if (start < from)
			start = from;
		if (end > to)
			end = to;
		if (end > start)
			sum += end - start;
	}
	return sum;
}

json_t *stall_json(const struct stall_meter *m)
{
	uint64_t kept = m->nev < STALL_EVENTS ? m->nev : STALL_EVENTS;
	json_t *ev = json_array();

	for (uint64_t i = m->nev - kept; i < m->nev; i++) {
		const struct stall_event *e = &m->ev[i % STALL_EVENTS];
		json_array_append_new(ev, json_pack("[II]", (json_int_t)e->wall_end_ns, (json_int_t)e->len_ns));
	}
	return json_pack("{s:I,s:I,s:I,s:I,s:o,s:I}", "threshold_ns", (json_int_t)m->threshold_ns,
			 "total_ns", (json_int_t)m->total_ns, "count", (json_int_t)m->count,
			 "max_ns", (json_int_t)m->max_ns, "events", ev, "events_dropped", (json_int_t)(m->nev - kept));
}
