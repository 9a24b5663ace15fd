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
 * executed), slot >= idx + window, or slot already arrived.  Inline: the
 * worker calls it and exec_next once per request (bench/icount.sh). */
static inline int exec_arrive(struct exec *x, uint64_t slot)
{
	/* Unsigned distance: a slot below idx wraps to a huge value and is
	 * rejected by the same comparison as one too far ahead. */
	uint64_t *w = &x->bits[(slot & (x->window - 1)) >> 6], b = 1ull << (slot & 63);
	if (slot - x->idx >= x->window || (*w & b)) {
		x->rejected++;
		return -1;
	}
	*w |= b;
	x->arrived++;
	x->out_of_order += slot != x->idx;
	return 0;
}

/* Next slot to execute, or -1 (as UINT64_MAX) if bit idx is clear.  The
 * slot is consumed: idx advances. */
#define EXEC_NONE UINT64_MAX
static inline uint64_t exec_next(struct exec *x)
{
	uint64_t *w = &x->bits[(x->idx & (x->window - 1)) >> 6], b = 1ull << (x->idx & 63);

	if (!(*w & b))
		return EXEC_NONE;
	*w &= ~b;
	x->executed++;
	return x->idx++;
}

/* 1 if exec_next has a slot to return (bit idx is set). */
static inline int exec_ready(const struct exec *x)
{
	return (x->bits[(x->idx & (x->window - 1)) >> 6] >> (x->idx & 63)) & 1;
}

/* An arrival that is the very slot to execute next: consumed at once (1),
 * as exec_arrive followed by exec_next would, without touching the
 * bitmap; 0 for any other slot (nothing changes: use exec_arrive).  Bit
 * idx is always clear here, because exec_next takes every slot from idx
 * on whose bit is set, so the caller must drain exec_next after each
 * slot it takes this way before it offers the next arrival. */
static inline int exec_take(struct exec *x, uint64_t slot)
{
	if (slot != x->idx)
		return 0;
	x->idx++;
	x->arrived++;
	x->executed++;
	return 1;
}

/* Skips the slot at idx without an arrival (a voided slot); 0 or -1 if
 * it had arrived. */
int exec_skip(struct exec *x);

#endif
