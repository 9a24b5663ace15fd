/*
 * stall.c - noting a spinning thread's stalls, and whose they were (stall.h).
 */
#include "stall.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/resource.h>

#include "clock.h"

void stall_init(struct stall_meter *m, uint64_t threshold_ns, uint64_t start, uint64_t from, uint64_t to)
{
	memset(m, 0, sizeof *m);
	m->prev = start;
	m->threshold_ns = threshold_ns ? threshold_ns : STALL_THRESHOLD_NS;
	m->from = from;
	m->to = to ? to : UINT64_MAX;
	m->sched_fd = -1;
	m->next_read = UINT64_MAX;
}

/* The thread's run-queue delay (ns) and voluntary switches now; 0 when
 * the kernel does not say. */
static int read_kernel(struct stall_meter *m, uint64_t *rq, long *vcsw)
{
	char buf[96];
	ssize_t n = pread(m->sched_fd, buf, sizeof buf - 1, 0);
	unsigned long long on, wait;
	struct rusage ru;
	if (n <= 0)
		return -1;
	buf[n] = 0;
	if (sscanf(buf, "%llu %llu", &on, &wait) != 2 || getrusage(RUSAGE_THREAD, &ru) != 0)
		return -1;
	*rq = wait;
	*vcsw = ru.ru_nvcsw;
	return 0;
}

void stall_evidence(struct stall_meter *m, const struct probe_cpu *probe)
{
	m->probe = probe;
	m->sched_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (m->sched_fd >= 0 && read_kernel(m, &m->rq_seen, &m->vcsw_seen) != 0) {
		close(m->sched_fd);
		m->sched_fd = -1;
	}
	if (m->sched_fd >= 0)
		m->next_read = clock_ns() + STALL_READ_NS;
}

void stall_free(struct stall_meter *m)
{
	if (m->sched_fd >= 0)
		close(m->sched_fd);
	m->sched_fd = -1;
	hist_free(m->host_len);
	m->host_len = NULL;
}

/* A fresh baseline, so a later gap's delta holds little from before it. */
void stall_refresh(struct stall_meter *m, uint64_t now)
{
	if (m->sched_fd < 0 || read_kernel(m, &m->rq_seen, &m->vcsw_seen) != 0)
		m->next_read = UINT64_MAX;
	else
		m->next_read = now + STALL_READ_NS;
}

unsigned stall_classify(uint64_t len, uint64_t rq, uint64_t late, int blocked, int ontime, uint64_t own)
{
	uint64_t host = rq > late ? rq : late;
	if (host * 2 >= len)
		return STALL_HOST;
	if (blocked || ontime || own * 2 >= len)
		return STALL_SYS;
	return STALL_UNATT;
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
	/* the evidence, read now that the thread runs again */
	uint64_t rq = 0, late = 0, rq_now;
	long vcsw_now;
	int blocked = 0, ontime = 0;
	if (m->sched_fd >= 0 && read_kernel(m, &rq_now, &vcsw_now) == 0) {
		rq = rq_now - m->rq_seen;
		if (rq > len)
			rq = len;
		blocked = vcsw_now > m->vcsw_seen;
		m->rq_seen = rq_now;
		m->vcsw_seen = vcsw_now;
		m->next_read = now + STALL_READ_NS;
	}
	probe_judge(m->probe, now - len, now, &late, &ontime);
	/* the previous pass's own work, from its clock read (prev) to its end */
	uint64_t own = m->own_to > m->prev && m->own_to <= now ? m->own_to - m->prev : 0;
	if (own > len)
		own = len;
	unsigned cls = stall_classify(len, rq, late, blocked, ontime, own);
	m->cls_ns[cls] += len;
	m->cls_count[cls]++;
	m->kernel_ns += rq;
	m->probe_ns += late;
	if (cls == STALL_HOST) {
		if (!m->host_len)
			m->host_len = hist_new();
		if (m->host_len)
			hist_record(m->host_len, len);
		if (m->host_until != UINT64_MAX)
			m->host_from = now - len;   /* a new interval: it was closed (or none yet) */
		m->host_until = m->mark_until = UINT64_MAX;
		m->last_host_end = now;
		m->last_host_len = len;
	} else if (cls == STALL_UNATT) {
		m->unatt_until = m->mark_until = UINT64_MAX;
	}
	struct stall_event *e = &m->ev[m->nev++ % STALL_EVENTS];
	*e = (struct stall_event){ .wall_end_ns = clock_wall_ns(), .len_ns = len, .mono_end_ns = now, .rq_ns = rq,
				   .late_ns = late, .cls = (uint8_t)cls, .blocked = (uint8_t)blocked,
				   .ontime = (uint8_t)ontime, .own = own * 2 >= len };
	if (m->nev - m->settle_from > STALL_EVENTS)
		m->settle_from = m->nev - STALL_EVENTS;
}

void stall_settle(struct stall_meter *m, uint64_t now)
{
	if (m->host_until == UINT64_MAX)
		m->host_until = now;
	if (m->unatt_until == UINT64_MAX)
		m->unatt_until = now;
	m->mark_until = m->host_until > m->unatt_until ? m->host_until : m->unatt_until;
	for (uint64_t i = m->settle_from; i < m->nev; i++) {
		struct stall_event *e = &m->ev[i % STALL_EVENTS];
		if (e->cls != STALL_SYS && now >= e->mono_end_ns)
			e->backlog_ns = now - e->mono_end_ns;
	}
	m->settle_from = m->nev;
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
	json_t *ev = json_array(), *src = json_array();

	for (uint64_t i = m->nev - kept; i < m->nev; i++) {
		const struct stall_event *e = &m->ev[i % STALL_EVENTS];
		json_array_append_new(ev, json_pack("[III]", (json_int_t)e->wall_end_ns, (json_int_t)e->len_ns,
						    (json_int_t)e->cls));
	}
	if (m->sched_fd >= 0)
		json_array_append_new(src, json_string("schedstat"));
	if (m->probe)
		json_array_append_new(src, json_string("probe"));
	json_t *j = json_pack("{s:I,s:I,s:I,s:I,s:o,s:I,s:o}", "threshold_ns", (json_int_t)m->threshold_ns,
			      "total_ns", (json_int_t)m->total_ns, "count", (json_int_t)m->count,
			      "max_ns", (json_int_t)m->max_ns, "events", ev, "events_dropped", (json_int_t)(m->nev - kept),
			      "evidence", src);
	static const char *const names[STALL_NCLS] = { "unattributed", "host", "system" };
	for (unsigned c = 0; c < STALL_NCLS; c++) {
		char k[32];
		snprintf(k, sizeof k, "%s_ns", names[c]);
		json_object_set_new(j, k, json_integer((json_int_t)m->cls_ns[c]));
		snprintf(k, sizeof k, "%s_count", names[c]);
		json_object_set_new(j, k, json_integer((json_int_t)m->cls_count[c]));
	}
	json_object_set_new(j, "kernel_ns", json_integer((json_int_t)m->kernel_ns));
	json_object_set_new(j, "probe_ns", json_integer((json_int_t)m->probe_ns));
	if (m->host_len)
		json_object_set_new(j, "host_len_ns", hist_to_json(m->host_len));
	return j;
}

json_t *stall_window_json(const struct stall_meter *m, uint64_t from, uint64_t to)
{
	uint64_t ns[STALL_NCLS] = { 0 }, kern = 0, probe = 0, hosts = 0;
	int complete = 1;

	if (m->from >= from && m->to <= to) {
		for (unsigned c = 0; c < STALL_NCLS; c++)
			ns[c] = m->cls_ns[c];
		kern = m->kernel_ns;
		probe = m->probe_ns;
		hosts = m->cls_count[STALL_HOST];
	} else {
		uint64_t kept = m->nev < STALL_EVENTS ? m->nev : STALL_EVENTS;
		for (uint64_t i = m->nev - kept; i < m->nev; i++) {
			const struct stall_event *e = &m->ev[i % STALL_EVENTS];
			uint64_t end = e->mono_end_ns, start = end > e->len_ns ? end - e->len_ns : 0;
			uint64_t s = start > from ? start : from, t = end < to ? end : to;
			if (t <= s)
				continue;
			double f = (double)(t - s) / (double)e->len_ns;
			ns[e->cls] += t - s;
			kern += (uint64_t)(f * (double)e->rq_ns);
			probe += (uint64_t)(f * (double)e->late_ns);
			hosts += e->cls == STALL_HOST;
		}
		/* the oldest kept event ends after from: older, dropped ones may
		 * have been inside */
		if (m->nev > kept && m->ev[(m->nev - kept) % STALL_EVENTS].mono_end_ns > from)
			complete = 0;
	}
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:b}", "host_ns", (json_int_t)ns[STALL_HOST],
			 "system_ns", (json_int_t)ns[STALL_SYS], "unattributed_ns", (json_int_t)ns[STALL_UNATT],
			 "kernel_ns", (json_int_t)kern, "probe_ns", (json_int_t)probe, "host_count", (json_int_t)hosts,
			 "complete", complete);
}
