/*
 * vb_durable.c - durable mode's ring files (§5.3): worker W's receive ring
 * in <pmem_path>/vring-<W>, mapped with libpmem, and the recovery of a
 * ring that a previous server left.
 *
 * Guarantees: the file's first page is the ring header (struct
 * vb_ring_hdr: ReqToExecute and SRQTail on cache lines of their own);
 * vb_ring.c persists SRQTail before every post and invalidates a released
 * slot before its WQE is posted again, so the tickets from ReqToExecute to
 * SRQTail hold every request an ACK can have committed and nothing stale.
 * vb_recover_ring re-executes the whole, nilext, idempotent ones of that
 * range in ticket order before any client can connect.  A file of another
 * layout is refused, never reinterpreted.  `vtest crash` in the verbs suite
 * shows it (a durable server killed after 40 commits, 15 executed), and
 * `oqb crashtest` with transport "verbs" kills a loaded server hundreds of
 * times (tests/verbs/run-crash.sh, docs/durability.md); its negative
 * control, OQB_FAULT=skip-recovery, makes vb_recover_ring drop the range
 * instead, and the crash test must then find lost commits.
 *
 * A software ACK (deferred's commit) is sent by the server's CPU, not by
 * the device, so no client READ stands behind it: vb_srv_persist_req
 * persists the request's bytes in the ring file before the worker sends
 * that ACK (srv_persist_req in transport.h), so an ACK never promises
 * more than the file holds.
 *
 * The client half of durable mode -- the unsignaled SEND followed by a
 * signaled 8-byte READ of the header's flush_word -- is in vb_cli_owner.c
 * (owner_post).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libpmem.h>

#include "fault.h"
#include "log.h"
#include "vb_internal.h"

/* Makes n bytes at p durable: a no-op unless the ring is a file. */
void vb_persist(struct vb_worker *w, const void *p, size_t n)
{
	if (!w->pmem_file)
		return;
	if (w->is_pmem)
		pmem_persist(p, n);
	else
		pmem_msync(p, n);
}

/* Maps (or creates) worker w's durable ring file. */
int vb_map_ring_file(struct tp_server *s, struct vb_worker *w, size_t bytes, char *err, size_t errlen)
{
	char path[4096];
	size_t mapped = 0;
	int is_pmem = 0;
	snprintf(path, sizeof path, "%s/vring-%u", s->c.pmem_path, w->idx);
	void *p = pmem_map_file(path, bytes, PMEM_FILE_CREATE | PMEM_FILE_EXCL, 0600, &mapped, &is_pmem);
	if (!p && errno == EEXIST) {
		p = pmem_map_file(path, 0, 0, 0, &mapped, &is_pmem);
		if (!p) {
			snprintf(err, errlen, "durable ring file %s: %s", path, pmem_errormsg());
			return -1;
		}
		const struct vb_ring_hdr *h = p;
		if (mapped < bytes || h->magic != VB_RING_MAGIC || h->ring_slots != s->c.ring_slots ||
		    h->slot_size != s->c.slot_size) {
			pmem_unmap(p, mapped);
			snprintf(err, errlen, "durable ring file %s exists with another layout (not %u slots of %u B); "
				 "remove it, or start with the --ring-slots and --slot-size it was made with",
				 path, s->c.ring_slots, s->c.slot_size);
			return -1;
		}
		w->existed = 1;
	} else if (!p) {
		snprintf(err, errlen, "cannot create the durable ring file %s: %s (--pmem-path is a writable "
			 "directory, e.g. on a DAX-mounted PM file system)", path, pmem_errormsg());
		return -1;
	}
	w->map = p;
	w->map_len = mapped;
	w->pmem_file = 1;
	w->is_pmem = is_pmem;
	return 0;
}

/* Before a software ACK commits the request in slot: its bytes, as they
 * arrived, made durable in the ring file (nothing without a file). */
void vb_srv_persist_req(struct tp_server *s, unsigned wi, uint64_t slot)
{
	struct vb_worker *w = &s->w[wi];
	size_t len;
	const void *req = vb_srv_req(s, wi, slot, &len);
	if (req && len && w->pmem_file)
		vb_persist(w, req, len);
}

struct rec_arg { struct tp_server *s; unsigned w; };

static void rec_exec(void *arg, const void *req, const struct wire_req *h)
{
	struct rec_arg *ra = arg;
	if (ra->s->c.recover_exec)
		ra->s->c.recover_exec(ra->s->c.recover_arg, ra->w, req, h);
}

/*
 * Replays the ring file a previous server left (§5.3): the requests between
 * ReqToExecute and SRQTail that are whole, nilext and idempotent may have
 * been committed by their ACK, so they are executed again, in ticket order,
 * before any client can connect.  Released slots were invalidated before
 * their WQE was reposted, and SRQTail was persisted before the post, so the
 * range holds every committed request and nothing stale.  Then the ring is
 * reset (all slots invalid, tickets from 0).  0, or -1 with err set.
 * Under the test-only fault skip-recovery (the crash test's negative
 * control) the range is not replayed but dropped, as if the file had been
 * lost: committed, unexecuted requests are gone.
 */
int vb_recover_ring(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen)
{
	const struct vb_ring_hdr *h = w->hdr;
	struct rec_arg ra = { s, w->idx };
	uint64_t from = h->req_to_execute, to = h->srq_tail;
	w->recovered = 1;
	char ferr[300];
	if (fault_init("server", ferr, sizeof ferr) == 0 && fault_on(FAULT_SKIP_RECOVERY)) {
		log_msg(LOG_WARN, "OQB_FAULT=skip-recovery: NOT replaying verbs ring %u, tickets %llu..%llu "
			"(test-only fault)", w->idx, (unsigned long long)from, (unsigned long long)to);
		goto reset;
	}
	if (recovery_scan_ring(w->slots, s->c.ring_slots, s->c.slot_size, from, to, rec_exec, &ra, &w->rec) != 0) {
		snprintf(err, errlen, "durable ring file %s/vring-%u: ReqToExecute %llu and SRQTail %llu are more than "
			 "%u slots apart; the ring is corrupt (remove it to discard its requests)", s->c.pmem_path,
			 w->idx, (unsigned long long)from, (unsigned long long)to, s->c.ring_slots);
		return -1;
	}
	log_msg(LOG_INFO, "recovery: verbs ring %u (%s): tickets %llu..%llu scanned %llu, valid %llu, "
		"re-executed %llu, %.3f ms", w->idx, h->clean ? "clean shutdown" : "crashed",
		(unsigned long long)from, (unsigned long long)to, (unsigned long long)w->rec.scanned,
		(unsigned long long)w->rec.valid, (unsigned long long)w->rec.reexecuted, w->rec.ns / 1e6);
reset:
	for (size_t k = 0; k < s->c.ring_slots; k++)
		memset(w->slots + k * s->c.slot_size, 0, 16);
	vb_persist(w, w->slots, (size_t)s->c.ring_slots * s->c.slot_size);
	return 0;
}
