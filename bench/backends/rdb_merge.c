/*
 * rdb_merge.c - the add operator's arithmetic (rdb_merge.h): decimal
 * counters, 8-byte little-endian deltas, sums modulo 2^64.
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "bits.h"
#include "rdb_merge.h"

void rdb_operand(uint8_t out[RDB_OPERAND_LEN], uint64_t delta)
{
	put64(out, delta);
}

/* The sum of the operands, modulo 2^64; -1 if one is not 8 bytes. */
static int sum_ops(const char *const *ops, const size_t *lens, int n, uint64_t *sum)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++) {
		if (lens[i] != RDB_OPERAND_LEN)
			return -1;
		s += get64((const uint8_t *)ops[i]);
	}
	*sum = s;
	return 0;
}

int rdb_full_merge(const char *base, size_t base_len, const char *const *ops, const size_t *lens, int n,
		   char out[RDB_NUM_MAX + 1])
{
	uint64_t v = 0, d;
	if (base && backend_parse_u64((const uint8_t *)base, base_len, &v) != 0)
		return -1;
	if (sum_ops(ops, lens, n, &d) != 0)
		return -1;
	return snprintf(out, RDB_NUM_MAX + 1, "%llu", (unsigned long long)(v + d));
}

int rdb_partial_merge(const char *const *ops, const size_t *lens, int n, uint8_t out[RDB_OPERAND_LEN])
{
	uint64_t d;
	if (sum_ops(ops, lens, n, &d) != 0)
		return -1;
	rdb_operand(out, d);
	return 0;
}
