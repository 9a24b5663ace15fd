/*
 * rdb_merge.h - the arithmetic of the `rocksdb` back end's add operator.
 *
 * incr on rocksdb is a RocksDB merge.  A counter's stored value is decimal
 * ASCII, as the cache and memcached back ends store it and as every back
 * end returns it (backend.h): a get of a counter reads the same bytes on
 * every back end.  A merge operand is the delta as 8 bytes little-endian
 * (an unsigned 64-bit number; decr is the delta 2^64-1), and sums wrap
 * around modulo 2^64, as memcached's incr does.
 *
 * Kept apart from RocksDB so that the rules are tested on every build
 * (tests/unit/test_rdb_merge.c); be_rocksdb.c wraps them in the callbacks
 * of rocksdb_mergeoperator_create.
 */
#ifndef OQB_RDB_MERGE_H
#define OQB_RDB_MERGE_H

#include <stddef.h>
#include <stdint.h>

#define RDB_OPERAND_LEN 8u
#define RDB_NUM_MAX     20u   /* decimal digits of UINT64_MAX */

/* A counter's value is read by backend_parse_u64 (backend.h), the rule of
 * every back end. */

/* The operand for adding delta. */
void rdb_operand(uint8_t out[RDB_OPERAND_LEN], uint64_t delta);

/* Full merge: base (NULL: the key has no value, read as 0) plus every
 * operand, written in decimal into out (no NUL).  Returns the length, or
 * -1 if the base is not a number or an operand is not 8 bytes. */
int rdb_full_merge(const char *base, size_t base_len, const char *const *ops, const size_t *lens, int n,
		   char out[RDB_NUM_MAX + 1]);

/* Partial merge: the operands' sum as one operand.  0, or -1 if an operand
 * is not 8 bytes (RocksDB then keeps them apart). */
int rdb_partial_merge(const char *const *ops, const size_t *lens, int n, uint8_t out[RDB_OPERAND_LEN]);

#endif
