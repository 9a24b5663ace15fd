/*
 * shm_recover.c - a restarted durable server's rings (paper §5.3): sealed so
 * that no client of the dead server can claim or publish, replayed by the
 * recovery scan (bench/recovery.c) from ReqToExecute to SRQTail, then
 * replaced by a fresh file.  The protocol: shm_internal.h ("Durable mode");
 * the folder's map: README.md.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include <libpmem.h>

#include "fault.h"
#include "log.h"

#include "shm_internal.h"

struct rec_arg {
	struct tp_server *s;
	unsigned w;
};

/* A ticket's request counts only if its slot's state says it was
 * published for that very ticket (not voided, retired, or reused). */
static int rec_slot_ok(void *arg, uint64_t t)
{
	struct rec_arg *ra = arg;
	struct srv_worker *w = &ra->s->w[ra->w];
	uint64_t v = atomic_load(&w->state[(t & (ra->s->c.ring_slots - 1)) * ST_STRIDE]);
	return v == ST(t, ST_PUB);
}

static void rec_exec(void *arg, const void *req, const struct wire_req *h)
{
	struct rec_arg *ra = arg;
	if (ra->s->c.recover_exec)
		ra->s->c.recover_exec(ra->s->c.recover_arg, ra->w, req, h);
}

/*
 * Makes every slot that is not PUBLISHED unclaimable and unpublishable:
 * FREE(t) and WRITING(t) become QUARANTINED(t), so a client of the dead
 * server still holding a ticket fails its claim or publish CAS and learns
 * that its request was not committed.  PUBLISHED slots stay as they are.
 */
void shm_seal_ring(struct tp_server *s, struct srv_worker *w)
{
	for (uint64_t i = 0; i < s->c.ring_slots; i++) {
		_Atomic uint64_t *st = &w->state[i * ST_STRIDE];
		uint64_t v = atomic_load(st);
		while ((v & 3) != ST_PUB && (v & 3) != ST_QUAR &&
		       !atomic_compare_exchange_weak(st, &v, ST(v >> 2, ST_QUAR)))
			;
	}
	persist(w->state, (size_t)s->c.ring_slots * CL, w->is_pmem);
}

/*
 * A recovered ring starts its new generation in a new file, never in the
 * old one.  A client of the dead server that was stalled between its claim
 * and its write (a thread preempted on a loaded host) still has the old
 * file mapped, and writes into it when it wakes.  When the old file was
 * reset in place, those bytes landed in a slot of the new queue, over a
 * request committed there after the restart: the commit was lost, or torn
 * and never answered (issue 39's crash-test hang, "no response for get ...
 * by the deadline" at load 60; test_shm_durable:
 * a_writer_stalled_across_a_restart_cannot_touch_the_new_queue).  Now the
 * stale writer's bytes go to the old inode, which nobody reads again; it
 * learns of the new generation there and reconnects.
 *
 * shm_fresh_ring_file maps a new ring-W.new in place of the recovered ring;
 * the caller initialises and persists it, and shm_ring_file_replace renames it
 * over ring-W and syncs the directory.  A crash before the rename leaves
 * the old ring, replayed again by the next server (its requests are
 * idempotent); a crash after it, the fresh ring.
 */
int shm_fresh_ring_file(struct tp_server *s, unsigned wi, char *err, size_t errlen)
{
	struct srv_worker *w = &s->w[wi];
	char p[600];
	int existed = 0;
	snprintf(p, sizeof p, "%s/ring-%u.new", s->dir, wi);
	unlink(p);   /* left by a crash before its rename */
	void *base_p = pmap_file(p, s->ring_size, &existed, &w->is_pmem, err, errlen);
	if (!base_p)
		return -1;
	pmem_unmap(w->ring, s->ring_size);
	shm_ring_attach(s, w, base_p);
	return 0;
}

int shm_ring_file_replace(struct tp_server *s, unsigned wi, char *err, size_t errlen)
{
	char from[600], to[600];
	snprintf(from, sizeof from, "%s/ring-%u.new", s->dir, wi);
	snprintf(to, sizeof to, "%s/ring-%u", s->dir, wi);
	return replace_file(from, to, s->dir, err, errlen);
}

/* Replays what a crashed server left in worker wi's ring (§5.3). */
int shm_recover_ring(struct tp_server *s, unsigned wi, char *err, size_t errlen)
{
	struct srv_worker *w = &s->w[wi];
	struct rec_arg ra = { s, wi };
	uint64_t from = w->ring->req_to_execute, to = w->ring->srq_tail;
	w->recovered = 1;
	/* Fault injection for the crash test's negative control only: proves
	 * that the test detects lost commits when recovery is skipped. */
	char ferr[300];
	if (fault_init("server", ferr, sizeof ferr) == 0 && fault_on(FAULT_SKIP_RECOVERY)) {
		log_msg(LOG_WARN, "OQB_FAULT=skip-recovery: NOT replaying ring %u (test-only fault)", wi);
		return 0;
	}
	if (recovery_scan_ring_checked(w->data, s->c.ring_slots, s->c.slot_size, from, to,
				       rec_slot_ok, &ra, rec_exec, &ra, &w->rec) != 0) {
		snprintf(err, errlen, "%s/ring-%u: ReqToExecute %llu and SRQTail %llu are inconsistent "
			 "(more than %u slots apart); the ring is corrupt: move the file aside to start "
			 "without its unexecuted requests, or restore it from a copy", s->dir, wi,
			 (unsigned long long)from, (unsigned long long)to, 2 * s->c.ring_slots);
		return -1;
	}
	log_msg(LOG_INFO, "recovery: ring %u: scanned %llu, valid %llu, re-executed %llu, skipped %llu, %.3f ms",
		wi, (unsigned long long)w->rec.scanned, (unsigned long long)w->rec.valid,
		(unsigned long long)w->rec.reexecuted,
		(unsigned long long)(w->rec.skipped_invalid + w->rec.skipped_non_nilext +
				     w->rec.skipped_nonidempotent), w->rec.ns / 1e6);
	return 0;
}
