/*
 * recovery.h - the recovery scan of a persistent receive ring (paper §5.3).
 *
 * After a crash the receive buffers still hold every request that was
 * persisted before its commit.  Each request starts with its 64-bit checksum
 * and 32-bit size and sits at a WIRE_ALIGN-aligned position, so a scan can
 * tell a whole request from a torn one, a stale one (released slots are
 * invalidated before reuse) or garbage.  The scan covers the positions from
 * ReqToExecute (the first request not known to be executed) to SRQTail (the
 * end of what was posted), and:
 *   - re-executes, in order, every valid nilext request that is idempotent:
 *     it may have been committed by its delivery ACK, and executing it
 *     twice is harmless;
 *   - skips valid non-nilext requests: they commit only on a response,
 *     which was never sent for one not executed;
 *   - skips non-idempotent requests (incr): they are software-controlled
 *     (execute, advance ReqToExecute, then respond), so the one at
 *     ReqToExecute was either executed and not acknowledged, or neither;
 *   - skips positions that fail wire_check and moves to the next aligned
 *     position (region scan) or the next slot (ring scan).
 */
#ifndef OQB_RECOVERY_H
#define OQB_RECOVERY_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "wire.h"

struct recovery_report {
	uint64_t scanned;        /* positions examined */
	uint64_t valid;          /* well-formed requests found */
	uint64_t reexecuted;     /* valid idempotent nilext requests executed */
	uint64_t skipped_invalid;      /* torn, stale, misaligned, garbage */
	uint64_t skipped_non_nilext;   /* valid but never committed */
	uint64_t skipped_nonidempotent;/* software-controlled */
	uint64_t ns;             /* time taken */
};

/* Called for each request to re-execute, in order. */
typedef void (*recovery_exec_fn)(void *arg, const void *req, const struct wire_req *h);

/*
 * Ring scan: tickets [from, to) of a ring of `slots` slots (power of two)
 * of slot_size bytes each at `data`; ticket t's request starts at slot
 * t % slots.  Adds to *r.  Returns 0, or -1 if the range is longer than
 * the ring (a corrupt ReqToExecute/SRQTail pair; nothing is executed).
 */
int recovery_scan_ring(const uint8_t *data, unsigned slots, unsigned slot_size,
		       uint64_t from, uint64_t to, recovery_exec_fn fn, void *arg,
		       struct recovery_report *r);

/*
 * The same, but ticket t is considered only if ok(ok_arg, t) says its slot
 * still belongs to t (e.g. the shm ring's persisted slot state is
 * PUBLISHED for t); otherwise it counts as invalid.  Because of that check
 * the range may span up to two laps (2 x slots): each slot is then looked
 * at for two tickets and belongs to at most one.  The shm ring needs it:
 * a slot freed without an execution (a void) is free for a ticket a lap
 * ahead of ReqToExecute's, and SRQTail covers that ticket (shm/shm_internal.h: cover_ticket).
 */
typedef int (*recovery_slot_ok_fn)(void *arg, uint64_t ticket);
int recovery_scan_ring_checked(const uint8_t *data, unsigned slots, unsigned slot_size,
			       uint64_t from, uint64_t to, recovery_slot_ok_fn ok, void *ok_arg,
			       recovery_exec_fn fn, void *arg, struct recovery_report *r);

/*
 * Region scan: requests packed at WIRE_ALIGN-aligned offsets in
 * [buf, buf + len) (a multi-packet receive buffer).  Adds to *r.
 */
void recovery_scan_region(const uint8_t *buf, size_t len, recovery_exec_fn fn, void *arg,
			  struct recovery_report *r);

json_t *recovery_report_json(const struct recovery_report *r);

#endif
