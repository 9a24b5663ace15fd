/*
 * exec.h - the in-order executor (OQ Rule 2; paper §5.1, Fig 3).
 *
 * Arrivals (CQ entries on verbs, published slots on shm) may be reported in
 * any order; the executor releases them strictly in slot order.  It keeps a
 * bitmap of arrived slots and `idx`, the first slot not yet executed:
 *   1. exec_arrive(slot) sets the slot's bit;
 *   2. while bit idx is set, exec_next() returns idx, clears it, advances idx.
 * Slots are ticket numbers (monotonic 64-bit); the bitmap is a window of
 * `window` slots starting at idx (a power of two >= the ring size), so an
 * arrival beyond idx + window is a caller bug and is rejected.
 */
#ifndef OQB_EXEC_H
#define OQB_EXEC_H

#include <stdint.h>

struct exec {
	uint64_t idx;        /* first slot not yet executed */
	uint64_t window;     /* bitmap size in slots (power of two) */
	uint64_t *bits;      /* window / 64 words */
	uint64_t arrived;    /* statistics */
	uint64_t executed;
	uint64_t out_of_order; /* arrivals that were not at idx when reported */
	uint64_t skipped;    /* slots passed over by exec_skip */
	uint64_t rejected;   /* exec_arrive calls refused (duplicate, out of window) */
};

/* window: at least the number of slots that can be outstanding; must be a
 * power of two.  Execution starts at first_slot.  0, or -1 if window is
 * not a power of two (or absurdly large) or memory is short. */
int exec_init(struct exec *x, uint64_t first_slot, uint64_t window);
void exec_free(struct exec *x);

/* Marks slot arrived; -1 (and nothing changes) if slot < idx (already
 * executed), slot >= idx + window, or slot already arrived. */
int exec_arrive(struct exec *x, uint64_t slot);

/* Next slot to execute, or -1 (as UINT64_MAX) if bit idx is clear.  The
 * slot is consumed: idx advances. */
#define EXEC_NONE UINT64_MAX
uint64_t exec_next(struct exec *x);

/* Skips the slot at idx without an arrival (a voided slot); 0 or -1 if
 * it had arrived. */
int exec_skip(struct exec *x);

#endif
