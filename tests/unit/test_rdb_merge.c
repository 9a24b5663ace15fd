/*
 * test_rdb_merge.c - the add operator of the rocksdb back end
 * (bench/backends/rdb_merge.h): decimal counters, 8-byte deltas, sums
 * modulo 2^64, and what it refuses.  Needs no RocksDB.
 */
#include <stdint.h>
#include <string.h>

#include "unit.h"
#include "backend.h"
#include "rdb_merge.h"

static int full(const char *base, const uint64_t *deltas, int n, char *out)
{
	uint8_t ops[8][RDB_OPERAND_LEN];
	const char *p[8];
	size_t l[8];
	for (int i = 0; i < n; i++) {
		rdb_operand(ops[i], deltas[i]);
		p[i] = (const char *)ops[i];
		l[i] = RDB_OPERAND_LEN;
	}
	int len = rdb_full_merge(base, base ? strlen(base) : 0, p, l, n, out);
	if (len >= 0)
		out[len] = '\0';
	return len;
}

TEST(parse_follows_the_cache_rule)
{
	uint64_t v = 0;
	CHECK(backend_parse_u64((const uint8_t *)"0", 1, &v) == 0 && v == 0);
	CHECK(backend_parse_u64((const uint8_t *)"18446744073709551615", 20, &v) == 0 && v == UINT64_MAX);
	CHECK(backend_parse_u64((const uint8_t *)"18446744073709551616", 20, &v) == -1, "one past UINT64_MAX");
	CHECK(backend_parse_u64((const uint8_t *)"", 0, &v) == -1, "empty");
	CHECK(backend_parse_u64((const uint8_t *)"12a", 3, &v) == -1, "not a digit");
	CHECK(backend_parse_u64((const uint8_t *)"-1", 2, &v) == -1, "a sign");
	CHECK(backend_parse_u64((const uint8_t *)"000000000000000000001", 21, &v) == -1, "21 digits");
}

TEST(full_merge_adds_in_decimal)
{
	char out[RDB_NUM_MAX + 1];
	uint64_t d[] = { 2, 3, 10 };
	CHECK(full("5", d, 3, out) == 2 && strcmp(out, "20") == 0, "got %s", out);
	CHECK(full(NULL, d, 1, out) == 1 && strcmp(out, "2") == 0, "an absent base reads as 0: %s", out);
	CHECK(full("7", d, 0, out) == 1 && strcmp(out, "7") == 0, "no operands: the base");
	uint64_t decr[] = { UINT64_MAX };   /* decr by 1 */
	CHECK(full("7", decr, 1, out) == 1 && strcmp(out, "6") == 0, "decr: %s", out);
	CHECK(full("0", decr, 1, out) == 20 && strcmp(out, "18446744073709551615") == 0, "wraps below 0: %s", out);
	uint64_t one[] = { 1 };
	CHECK(full("18446744073709551615", one, 1, out) == 1 && strcmp(out, "0") == 0, "wraps above: %s", out);
}

TEST(full_merge_refuses_what_is_not_a_counter)
{
	char out[RDB_NUM_MAX + 1];
	uint64_t d[] = { 1 };
	CHECK(full("abc", d, 1, out) == -1, "a base that is not a number");
	CHECK(full("", d, 1, out) == -1, "an empty base");
	const char *p[] = { "1234567" };
	size_t l[] = { 7 };
	CHECK(rdb_full_merge("1", 1, p, l, 1, out) == -1, "a 7-byte operand");
}

TEST(partial_merge_sums_operands)
{
	uint8_t a[RDB_OPERAND_LEN], b[RDB_OPERAND_LEN], c[RDB_OPERAND_LEN], sum[RDB_OPERAND_LEN];
	rdb_operand(a, 40);
	rdb_operand(b, UINT64_MAX);   /* -1 */
	rdb_operand(c, 3);
	const char *p[] = { (const char *)a, (const char *)b, (const char *)c };
	size_t l[] = { 8, 8, 8 };
	REQUIRE(rdb_partial_merge(p, l, 3, sum) == 0);
	char out[RDB_NUM_MAX + 1];
	const char *q[] = { (const char *)sum };
	int n = rdb_full_merge("100", 3, q, l, 1, out);
	CHECK(n == 3 && memcmp(out, "142", 3) == 0, "partial then full: %.*s", n > 0 ? n : 0, out);
	/* associativity: merging the parts in either grouping gives one sum */
	uint8_t ab[RDB_OPERAND_LEN], abc[RDB_OPERAND_LEN];
	REQUIRE(rdb_partial_merge(p, l, 2, ab) == 0);
	const char *r[] = { (const char *)ab, (const char *)c };
	REQUIRE(rdb_partial_merge(r, l, 2, abc) == 0);
	CHECK(memcmp(abc, sum, RDB_OPERAND_LEN) == 0, "(a+b)+c == a+b+c");
	size_t bad[] = { 8, 9, 8 };
	CHECK(rdb_partial_merge(p, bad, 3, sum) == -1, "a 9-byte operand is declined");
}

TEST(operand_is_little_endian)
{
	uint8_t o[RDB_OPERAND_LEN];
	rdb_operand(o, 0x0102030405060708ull);
	static const uint8_t want[] = { 8, 7, 6, 5, 4, 3, 2, 1 };
	CHECK(memcmp(o, want, sizeof want) == 0);
}

UNIT_MAIN(parse_follows_the_cache_rule, full_merge_adds_in_decimal, full_merge_refuses_what_is_not_a_counter,
	  partial_merge_sums_operands, operand_is_little_endian)
