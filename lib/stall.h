/*
 * stall.h - a spinning thread's own record of the time it did not run.
 *
 * A thread that spins reads the clock on every pass of its loop.  When two
 * reads are further apart than one pass can take (threshold, default
 * STALL_THRESHOLD_NS), the thread was not running in between: the guest
 * kernel gave its CPU to another task, an interrupt ran long, or (what the
 * thread's own CPU time cannot show) the hypervisor descheduled the vCPU.
 * The guest counts a descheduled vCPU's time as the thread's CPU time when
 * the host reports no steal, so the interference check cannot see those
 * stalls in getrusage; this meter can, because it measures time passing,
 * not time charged.  The threshold is above the timer tick: on the
 * development VM every 4 ms tick took a spinning thread's CPU for about
 * 22 us, a steady tax that says nothing about one trial against another.
 *
 * Cost: one compare and one store per pass (and for a worker, one clock
 * read after a pass that ran requests: stall_own); a stall (rare) calls
 * stall_note().  Events keep their end in wall-clock time (CLOCK_REALTIME)
 * so the driver can intersect a server's stalls with a client's measured
 * window across processes (and, NTP permitting, across hosts).  The last
 * STALL_EVENTS events are kept; the totals count all of them.
 * tests/unit/test_stall.c checks the accounting.
 *
 * Whose stall (docs/trust.md, "Host stalls, attributed"): at each stall,
 * and only there (plus a refresh every STALL_READ_NS of the loop), the
 * meter reads evidence the thread cannot make up: the kernel's run-queue
 * delay of the thread (/proc/thread-self/schedstat, second field: time it
 * was runnable and not running), its voluntary context switches (it
 * blocked in a call of its own), and the wake-ups of the probe on its CPU
 * (probe.h).  A gap is
 *   host          when run-queue delay or the probe's late wake-ups cover
 *                 at least half of it (another task or the CPU's absence);
 *   system        else when it blocked (a voluntary switch), the probe
 *                 woke on time inside it (the CPU was there and the thread
 *                 was not taken off it: its own code ran, a busy-wait
 *                 delay included), or the thread's own clock puts half of
 *                 it or more in its own work (stall_own: a worker's pass
 *                 that ran requests; the code may blame itself, never the
 *                 host, on its own word);
 *   unattributed  else: no evidence either way, never counted the host's.
 * Every gap is classified and counted (per class time and count, the time
 * the kernel and the probe each vouched for, the host stalls' lengths in
 * a histogram); only the last STALL_EVENTS are kept one by one.
 *
 * Tags (issue 50): after a host or unattributed stall S the thread's
 * backlog delays even requests that arrive after S ended, so S's interval
 * runs to R(S), the first pass after it that found no work (the caller
 * says so: stall_idle).  A request whose window [intended send, commit]
 * overlaps [S.start, R(S)] of a thread on its path is tagged: the client
 * thread asks stall_tag() with its intended send time when it commits
 * (one compare when no stall is open or recent), and a server worker puts
 * stall_mark_now() on the replies it sends inside the interval.
 */
#ifndef OQB_STALL_H
#define OQB_STALL_H

#include <stdint.h>

#include <jansson.h>

#include "hist.h"
#include "probe.h"

#define STALL_THRESHOLD_NS 50000ull
#define STALL_EVENTS 256
#define STALL_READ_NS 10000000ull      /* the evidence's baseline is refreshed this often */

/* whose a gap was */
enum { STALL_UNATT = 0, STALL_HOST = 1, STALL_SYS = 2, STALL_NCLS = 3 };
/* a request's tag (bits; the host's wins where both apply) */
enum { STALL_TAG_HOST = 1, STALL_TAG_UNATT = 2 };

struct stall_event {
	uint64_t wall_end_ns;     /* CLOCK_REALTIME when the thread ran again */
	uint64_t len_ns;          /* the gap between its two clock reads */
	uint64_t mono_end_ns;     /* the same end, monotonic */
	uint64_t rq_ns;           /* run-queue delay the kernel charged meanwhile (at most len_ns) */
	uint64_t late_ns;         /* the part the probe's late wake-ups cover */
	uint64_t backlog_ns;      /* from the end to R (the first idle pass), once known */
	uint8_t cls;              /* STALL_HOST, STALL_SYS, STALL_UNATT */
	uint8_t blocked, ontime;  /* a voluntary switch; the probe woke on time inside it */
	uint8_t own;              /* the thread's own clock put half of it or more in its own work */
};

struct stall_meter {
	uint64_t prev;            /* monotonic time of the last pass */
	uint64_t own_to;          /* when the last pass's own work ended (stall_own), if after prev */
	uint64_t threshold_ns;
	uint64_t from, to;        /* only gaps ending in [from, to) count */
	uint64_t total_ns, count, max_ns;
	uint64_t nev;             /* events noted; ev[] keeps the last STALL_EVENTS */
	struct stall_event ev[STALL_EVENTS];
	/* evidence (stall_evidence): the thread's schedstat file, -1 none */
	int sched_fd;
	uint64_t rq_seen;         /* run-queue delay at the last read */
	long vcsw_seen;           /* voluntary switches at the last read */
	uint64_t next_read;       /* monotonic: refresh the baseline after this */
	const struct probe_cpu *probe;
	/* every gap, by class, and what each evidence vouched for */
	uint64_t cls_ns[STALL_NCLS], cls_count[STALL_NCLS];
	uint64_t kernel_ns, probe_ns;
	struct hist *host_len;    /* host stalls' lengths (allocated at the first) */
	/* tags: the ends of the latest host and unattributed intervals, and
	 * the later of them (UINT64_MAX while one is open, before R) */
	uint64_t host_until, unatt_until, mark_until;
	uint64_t last_host_end, last_host_len;   /* the latest host stall's end (monotonic) and length */
	uint64_t host_from;       /* the start of the first host stall of the latest host interval */
	uint64_t settle_from;     /* the first event waiting for its R */
};

/* Starts a meter whose loop began at start and counts the gaps that end in
 * [from, to) (monotonic ns; to 0: no end; threshold 0: the default).  No
 * evidence until stall_evidence: every gap unattributed. */
void stall_init(struct stall_meter *m, uint64_t threshold_ns, uint64_t start, uint64_t from, uint64_t to);
/* From the thread the meter measures: opens its schedstat (absent or
 * unreadable: no kernel evidence) and takes the probe of its CPU (NULL:
 * none).  Call once, after stall_init. */
void stall_evidence(struct stall_meter *m, const struct probe_cpu *probe);
void stall_free(struct stall_meter *m);   /* what the meter allocated */
void stall_note(struct stall_meter *m, uint64_t now, uint64_t slack_ns);
void stall_refresh(struct stall_meter *m, uint64_t now);
void stall_settle(struct stall_meter *m, uint64_t now);
/*
 * Classifies a gap [now - len, now) from its evidence (stall.h's rule):
 * rq run-queue delay, late the probe's late overlap, blocked, ontime; own
 * the part of it the thread's own clock put in its own work (stall_own).
 * The host needs evidence from outside the thread; the system may rest on
 * the thread's own word, since that only ever blames the code measured.
 */
unsigned stall_classify(uint64_t len, uint64_t rq, uint64_t late, int blocked, int ontime, uint64_t own);

/* The pass whose clock read was the last stall_tick did its own work (a
 * worker executing the batch it polled) until t: a gap the next tick finds
 * is the system's when half of it or more was that work, unless evidence
 * from outside says the host's.  One store; a worker calls it after a pass
 * that ran requests. */
static inline void stall_own(struct stall_meter *m, uint64_t t)
{
	m->own_to = t;
}

/*
 * One pass of the loop, with the clock it read (monotonic ns).  slack_ns:
 * how long the previous pass may have taken for its work (a worker that ran
 * a batch of requests); it is added to the threshold, and not subtracted
 * from a stall, so a stall counts whole or not at all.
 */
static inline int stall_tick(struct stall_meter *m, uint64_t now, uint64_t slack_ns)
{
	int gap = now - m->prev > m->threshold_ns + slack_ns;
	if (gap)
		stall_note(m, now, slack_ns);
	else if (now >= m->next_read)
		stall_refresh(m, now);
	m->prev = now;
	return gap;   /* a gap ended here: the pass's earlier look for work was before it */
}

/* A pass that found no work at now: the open intervals end here (R). */
static inline void stall_idle(struct stall_meter *m, uint64_t now)
{
	if (m->mark_until == UINT64_MAX)
		stall_settle(m, now);
}

/* The tag of a request whose window began at t (monotonic) and ends now,
 * on this thread's stalls: 0, STALL_TAG_HOST or STALL_TAG_UNATT. */
static inline unsigned stall_tag(const struct stall_meter *m, uint64_t t)
{
	if (__builtin_expect(t > m->mark_until, 1))
		return 0;
	return t <= m->host_until ? STALL_TAG_HOST : t <= m->unatt_until ? STALL_TAG_UNATT : 0;
}

/*
 * Whether a send intended at t and made at now was late for the host: its
 * window met a host stall's interval of this thread (stall_tag), it was
 * intended no earlier than that interval's first host stall began (less
 * the threshold: a send due in the pass the stall interrupted), and it
 * was made no later than the latest host stall's end plus its length
 * again.  A client that keeps its schedule catches up from a stall in
 * less time than the stall took; one still behind after that, or one
 * that was behind before the stall began (a generator slower than its
 * schedule, which may never reach R), is behind for its own reasons, and
 * those sends are judged.  Called only when t is at or before the
 * thread's mark_until, so it costs nothing when no stall is near
 * (bench/client.c's schedule_lag counts such sends apart).
 */
static inline int stall_late_by_host(const struct stall_meter *m, uint64_t t, uint64_t now)
{
	/* the latest host stall's bound, not the latest gap's: a short gap
	 * of another class during the catch-up does not end the host's */
	return (stall_tag(m, t) & STALL_TAG_HOST) && m->last_host_len && t + m->threshold_ns >= m->host_from &&
	       now <= m->last_host_end + m->last_host_len;
}

/* The mark for what the thread sends now: inside an open interval, its
 * tag, else 0. */
static inline unsigned stall_mark_now(const struct stall_meter *m)
{
	if (__builtin_expect(m->mark_until != UINT64_MAX, 1))
		return 0;
	return m->host_until == UINT64_MAX ? STALL_TAG_HOST : STALL_TAG_UNATT;
}

/* {"threshold_ns", "total_ns", "count", "max_ns", "events": [[wall end,
 * length, class], ...] (the kept ones, oldest first; class 0
 * unattributed, 1 host, 2 system), "events_dropped", "evidence" (which
 * sources spoke: "schedstat", "probe"), "host_ns", "system_ns",
 * "unattributed_ns", "host_count", "system_count", "unattributed_count",
 * "kernel_ns", "probe_ns" (the time each vouched for), "host_len_ns" (a
 * histogram, or absent)}. */
json_t *stall_json(const struct stall_meter *m);

/*
 * The gaps inside [from, to) (monotonic) by class and evidence:
 * {"host_ns", "system_ns", "unattributed_ns", "kernel_ns", "probe_ns",
 * "host_count", "complete"}: from the totals when the meter counted that
 * span itself, else from the kept events (clipped to the span, their
 * evidence in proportion); complete false when events of the span were
 * dropped.
 */
json_t *stall_window_json(const struct stall_meter *m, uint64_t from, uint64_t to);

/* Total of the kept events' parts that fall inside [from, to) (wall ns). */
uint64_t stall_overlap(const struct stall_event *ev, unsigned n, uint64_t from, uint64_t to);

#endif
