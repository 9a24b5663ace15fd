/*
 * exec.c - the in-order executor (OQ Rule 2; paper §5.1, Fig 3).
 *
 * The bitmap is a circular window: slot s lives at bit (s & (window - 1)).
 * Because every arrival is checked to lie in [idx, idx + window), two live
 * slots never share a bit, and a bit is cleared exactly when idx moves past
 * its slot, so the window slides without ever being rescanned or reset.
 * exec_arrive and exec_next are inline in exec.h.
 */
#include <stdlib.h>

#include "exec.h"

static inline uint64_t *word_of(const struct exec *x, uint64_t slot)
{
	return &x->bits[(slot & (x->window - 1)) >> 6];
}

static inline uint64_t bit_of(uint64_t slot)
{
	return 1ull << (slot & 63);
}

int exec_init(struct exec *x, uint64_t first_slot, uint64_t window)
{
	x->bits = NULL;
	/* Power of two so the slot-to-bit map is a mask; the cap keeps the
	 * word count computation and the allocation sane. */
	if (window == 0 || (window & (window - 1)) != 0 || window > (1ull << 40))
		return -1;
	uint64_t words = (window + 63) / 64;
	x->bits = calloc(words, sizeof *x->bits);
	if (!x->bits)
		return -1;
	x->idx = first_slot;
	x->window = window;
	x->arrived = 0;
	x->executed = 0;
	x->out_of_order = 0;
	x->skipped = 0;
	x->rejected = 0;
	return 0;
}

void exec_free(struct exec *x)
{
	free(x->bits);
	x->bits = NULL;
}

int exec_skip(struct exec *x)
{
	uint64_t *w = word_of(x, x->idx), b = bit_of(x->idx);

	if (*w & b)
		return -1;
	x->idx++;
	x->skipped++;
	return 0;
}
