/*
 * test_wire.c - the request/response format: layout, round trips, and that
 * wire_check rejects every corruption it is meant to catch without reading
 * past the bytes it was given.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "wire.h"

/* Small local generator so this test does not depend on lib/rng.c. */
static uint64_t tw_state;
static uint64_t tw_next(void)
{
	uint64_t z = (tw_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static struct wire_req sample_hdr(uint16_t klen, uint32_t vlen)
{
	struct wire_req h;
	memset(&h, 0, sizeof h);
	h.op = KV_OP_SET;
	h.flags = KV_F_NILEXT | WIRE_F_DURABLE;
	h.key_len = klen;
	h.val_len = vlen;
	h.client_id = 0xA1B2C3D4u;
	h.worker = 7;
	h.seq = 0x0102030405060708ull;
	h.aux = 0xFFEEDDCCBBAA9988ull;
	return h;
}

/* A 200-byte request (48 + 40 + 112), padded to 256. */
static uint32_t make_200(uint8_t *buf, size_t cap)
{
	uint8_t key[40], val[112];
	for (unsigned i = 0; i < sizeof key; i++)
		key[i] = (uint8_t)('a' + i % 26);
	for (unsigned i = 0; i < sizeof val; i++)
		val[i] = (uint8_t)(i * 7 + 3);
	struct wire_req h = sample_hdr(40, 112);
	return wire_encode_req(buf, cap, &h, key, val);
}

TEST(roundtrip_fields)
{
	uint8_t buf[512];
	uint8_t key[13] = "hello-key-13";
	uint8_t val[77];
	for (unsigned i = 0; i < sizeof val; i++)
		val[i] = (uint8_t)(255 - i);
	struct wire_req h = sample_hdr(13, 77);
	memset(buf, 0xAB, sizeof buf);
	uint32_t n = wire_encode_req(buf, sizeof buf, &h, key, val);
	CHECK_EQ_U64(n, 192);   /* 48+13+77 = 138 -> 192 */

	struct wire_req d;
	const char *why = "unset";
	REQUIRE(wire_check(buf, n, &d, &why) == 0, "%s", why);
	CHECK(why == NULL);
	CHECK_EQ_U64(d.size, 138);
	CHECK_EQ_U64(d.magic, WIRE_MAGIC);
	CHECK_EQ_U64(d.version, WIRE_VERSION);
	CHECK_EQ_U64(d.op, h.op);
	CHECK_EQ_U64(d.flags, h.flags);
	CHECK_EQ_U64(d.key_len, 13);
	CHECK_EQ_U64(d.val_len, 77);
	CHECK_EQ_U64(d.client_id, h.client_id);
	CHECK_EQ_U64(d.worker, h.worker);
	CHECK_EQ_U64(d.seq, h.seq);
	CHECK_EQ_U64(d.aux, h.aux);
	CHECK_EQ_U64(d.csum, wire_req_csum(buf, n));
	CHECK(memcmp(wire_key(buf), key, 13) == 0);
	CHECK(memcmp(wire_val(buf, 13), val, 77) == 0);
	for (uint32_t i = 138; i < n; i++)
		CHECK(buf[i] == 0, "padding byte %u is %u", i, buf[i]);
	CHECK(buf[n] == 0xAB, "wrote past the padded length");

	/* wire_decode_req agrees with wire_check's decode. */
	struct wire_req d2;
	wire_decode_req(buf, &d2);
	CHECK(memcmp(&d, &d2, sizeof d) == 0);

	/* Every op and the NULL-key form round-trip too. */
	for (unsigned op = 0; op < KV_OP_MAX_; op++) {
		struct wire_req q = sample_hdr(0, 0);
		q.op = (uint8_t)op;
		q.flags = WIRE_F_ALL;
		n = wire_encode_req(buf, sizeof buf, &q, NULL, NULL);
		CHECK_EQ_U64(n, 64);
		CHECK(wire_check(buf, n, &d, &why) == 0, "op %u: %s", op, why);
		CHECK_EQ_U64(d.op, op);
	}
}

TEST(byte_layout)
{
	uint8_t buf[256];
	struct wire_req h = sample_hdr(3, 5);
	uint32_t n = wire_encode_req(buf, sizeof buf, &h, "abc", "vwxyz");
	REQUIRE(n == 64);
	/* Little-endian at the documented offsets. */
	CHECK(buf[8] == 56 && buf[9] == 0 && buf[10] == 0 && buf[11] == 0);
	CHECK(buf[12] == 'O' && buf[13] == 'Q');
	CHECK(buf[14] == WIRE_VERSION);
	CHECK(buf[15] == KV_OP_SET);
	CHECK(buf[16] == 3 && buf[17] == 0);
	CHECK(buf[18] == 3 && buf[19] == 0);
	CHECK(buf[20] == 5 && buf[21] == 0 && buf[22] == 0 && buf[23] == 0);
	CHECK(buf[24] == 0xD4 && buf[27] == 0xA1);
	CHECK(buf[28] == 7 && buf[31] == 0);
	CHECK(buf[32] == 0x08 && buf[39] == 0x01);
	CHECK(buf[40] == 0x88 && buf[47] == 0xFF);
	CHECK(memcmp(buf + 48, "abcvwxyz", 8) == 0);
	uint64_t cs = 0;
	for (int i = 7; i >= 0; i--)
		cs = (cs << 8) | buf[i];
	CHECK_EQ_U64(cs, wire_req_csum(buf, n));
}

TEST(encode_limits)
{
	uint8_t buf[256];
	struct wire_req h = sample_hdr(40, 112);
	CHECK_EQ_U64(wire_encode_req(buf, 255, &h, NULL, NULL), 0);
	CHECK_EQ_U64(wire_encode_req(buf, 256, &h, NULL, NULL), 256);
	h.key_len = KV_MAX_KEY + 1;
	h.val_len = 0;
	CHECK_EQ_U64(wire_encode_req(buf, sizeof buf, &h, NULL, NULL), 0);
	h.key_len = 0;
	h.val_len = KV_MAX_VALUE + 1;
	CHECK_EQ_U64(wire_encode_req(buf, (size_t)1 << 30, &h, NULL, NULL), 0);
}

TEST(value_pattern)
{
	uint8_t buf[512];
	for (uint32_t len = 0; len < 100; len += 7) {
		struct wire_req h = sample_hdr(5, len);
		h.seq = 1000 + len;
		uint32_t n = wire_encode_req(buf, sizeof buf, &h, "kkkkk", NULL);
		REQUIRE(n > 0);
		CHECK(wire_check(buf, n, NULL, NULL) == 0);
		CHECK(wire_check_pattern(wire_val(buf, 5), len, h.seq) == 0, "len %u", len);
		if (len > 0)
			CHECK(wire_check_pattern(wire_val(buf, 5), len, h.seq + 1) != 0,
			      "len %u: another seq's pattern matched", len);
	}
}

TEST(every_bit_flip_rejected)
{
	uint8_t buf[256], orig[256];
	uint32_t n = make_200(orig, sizeof orig);
	REQUIRE(n == 256);
	REQUIRE(wire_check(orig, n, NULL, NULL) == 0);
	unsigned rejected = 0, total = 0;
	for (uint32_t byte = 0; byte < n; byte++) {
		for (int bit = 0; bit < 8; bit++) {
			memcpy(buf, orig, n);
			buf[byte] ^= (uint8_t)(1u << bit);
			const char *why = NULL;
			total++;
			if (wire_check(buf, n, NULL, &why) != 0)
				rejected++;
			else
				CHECK(0, "flip of byte %u bit %d accepted", byte, bit);
		}
	}
	CHECK_EQ_U64(rejected, total);

	/* Flips inside the csum field itself, and in the payload, are caught by
	 * the checksum. */
	const char *why = NULL;
	memcpy(buf, orig, n);
	buf[3] ^= 0x10;
	CHECK(wire_check(buf, n, NULL, &why) != 0 && strcmp(why, "checksum mismatch") == 0);
	memcpy(buf, orig, n);
	buf[150] ^= 0x01;
	CHECK(wire_check(buf, n, NULL, &why) != 0 && strcmp(why, "checksum mismatch") == 0);
}

TEST(byte_swaps_rejected)
{
	uint8_t buf[256], orig[256];
	uint32_t n = make_200(orig, sizeof orig);
	REQUIRE(n == 256);
	unsigned tried = 0;
	/* Every pair of bytes (adjacent or not) that differ, swapped. */
	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t j = i + 1; j < n; j++) {
			if (orig[i] == orig[j])
				continue;
			memcpy(buf, orig, n);
			buf[i] = orig[j];
			buf[j] = orig[i];
			tried++;
			if (wire_check(buf, n, NULL, NULL) == 0)
				CHECK(0, "swap of bytes %u and %u accepted", i, j);
		}
	}
	CHECK(tried > 10000, "only %u swaps tried", tried);
}

TEST(header_corruptions)
{
	uint8_t buf[256];
	struct wire_req h;
	const char *why;
	uint32_t n;

#define RESEAL_AND_EXPECT(mutate, reason) do { \
		n = make_200(buf, sizeof buf); \
		mutate; \
		wire_req_seal(buf, n); \
		why = NULL; \
		CHECK(wire_check(buf, n, &h, &why) == -1, "%s accepted", #mutate); \
		CHECK(why && strcmp(why, reason) == 0, "%s: got \"%s\", want \"%s\"", \
		      #mutate, why ? why : "(null)", reason); \
	} while (0)

	RESEAL_AND_EXPECT(buf[12] = 'X', "bad magic");
	RESEAL_AND_EXPECT(buf[14] = WIRE_VERSION + 1, "bad version");
	RESEAL_AND_EXPECT(buf[14] = 0, "bad version");
	RESEAL_AND_EXPECT(buf[15] = KV_OP_MAX_, "bad op");
	RESEAL_AND_EXPECT(buf[15] = 0xFF, "bad op");
	RESEAL_AND_EXPECT(buf[16] = 0x08, "bad flags");
	RESEAL_AND_EXPECT(buf[17] = 0x80, "bad flags");
	/* key_len 251 with a size that agrees: still too long. */
	RESEAL_AND_EXPECT((buf[18] = 251, buf[8] = (uint8_t)(48 + 251 + 112),
			   buf[9] = (uint8_t)((48 + 251 + 112) >> 8)), "key too long");
	RESEAL_AND_EXPECT(buf[19] = 0xFF, "key too long");
	RESEAL_AND_EXPECT(buf[23] = 0x01, "value too long");
	RESEAL_AND_EXPECT(buf[8] = 201, "size does not match lengths");
	RESEAL_AND_EXPECT(buf[11] = 0x80, "size does not match lengths");
	RESEAL_AND_EXPECT(buf[8] = 199, "size does not match lengths");
	/* Lengths that agree with size but overrun the buffer. */
	/* 48 + 40 + 169 = 257 bytes, padded 320 > 256. */
	RESEAL_AND_EXPECT((buf[20] = 169, buf[8] = 1, buf[9] = 1), "size exceeds buffer");
#undef RESEAL_AND_EXPECT

	/* Truncation: every avail shorter than the padded length. */
	n = make_200(buf, sizeof buf);
	for (size_t avail = 0; avail < n; avail++) {
		why = NULL;
		CHECK(wire_check(buf, avail, NULL, &why) == -1, "avail %zu accepted", avail);
		const char *want = avail < WIRE_HDR_SIZE ? "truncated header" : "size exceeds buffer";
		CHECK(why && strcmp(why, want) == 0, "avail %zu: %s", avail, why ? why : "(null)");
	}
	CHECK(wire_check(buf, n, NULL, NULL) == 0);
	CHECK(wire_check(buf, n + 1000, NULL, NULL) == 0, "extra room after it is fine");
	CHECK(wire_check(NULL, 100, NULL, NULL) == -1);
}

/* A request claiming a 1 MiB value sits in the last 64 bytes of a heap
 * block: wire_check must refuse it without touching the bytes after it
 * (ASan, in `make check`, faults on any such read). */
TEST(huge_size_at_end_of_buffer)
{
	uint8_t *blk = malloc(64);
	REQUIRE(blk);
	struct wire_req h = sample_hdr(0, 0);
	REQUIRE(wire_encode_req(blk, 64, &h, NULL, NULL) == 64);
	uint32_t vlen = KV_MAX_VALUE, size = WIRE_HDR_SIZE + vlen;
	for (int i = 0; i < 4; i++) {
		blk[20 + i] = (uint8_t)(vlen >> (8 * i));
		blk[8 + i] = (uint8_t)(size >> (8 * i));
	}
	wire_req_seal(blk, 64);
	const char *why = NULL;
	CHECK(wire_check(blk, 64, NULL, &why) == -1);
	CHECK(why && strcmp(why, "size exceeds buffer") == 0, "%s", why ? why : "(null)");
	/* A size field near UINT32_MAX must not wrap around into "fits". */
	for (int i = 0; i < 4; i++)
		blk[8 + i] = 0xFF;
	blk[20] = blk[21] = blk[22] = blk[23] = 0;
	wire_req_seal(blk, 64);
	CHECK(wire_check(blk, 64, NULL, &why) == -1);
	free(blk);
}

TEST(fuzz_never_accepts)
{
	enum { CAP = 640 };
	uint8_t *buf = malloc(CAP);
	uint8_t valid[CAP];
	REQUIRE(buf);
	tw_state = 12345;
	uint32_t vn = make_200(valid, sizeof valid);
	unsigned accepted = 0;
	for (int it = 0; it < 100000; it++) {
		size_t len = tw_next() % (CAP + 1);
		uint64_t mode = tw_next() % 4;
		if (mode == 0) {
			/* Pure noise. */
			for (size_t i = 0; i < len; i++)
				buf[i] = (uint8_t)tw_next();
		} else {
			/* A valid request with a few random bytes changed, and
			 * sometimes the magic/version kept intact so the deeper
			 * checks are exercised. */
			memcpy(buf, valid, vn);
			for (size_t i = vn; i < CAP; i++)
				buf[i] = (uint8_t)tw_next();
			len = vn + tw_next() % (CAP - vn + 1);
			unsigned nmut = 1 + (unsigned)(tw_next() % 4);
			for (unsigned m = 0; m < nmut; m++) {
				size_t pos = mode == 1 ? 8 + tw_next() % 40 : tw_next() % vn;
				buf[pos] = (uint8_t)tw_next();
			}
			if (memcmp(buf, valid, vn) == 0)
				continue;   /* the mutation happened to restore it */
		}
		/* Place the candidate at the end of the heap block so any read
		 * past `len` is an ASan error. */
		uint8_t *p = buf + (CAP - len);
		memmove(p, buf, len);
		const char *why = NULL;
		if (wire_check(p, len, NULL, &why) == 0)
			accepted++;
		else
			CHECK(why != NULL);
	}
	CHECK_EQ_U64(accepted, 0);
	free(buf);
}

TEST(csum_properties)
{
	uint8_t a[1100];
	tw_state = 99;
	for (size_t i = 0; i < sizeof a; i++)
		a[i] = (uint8_t)tw_next();
	/* Deterministic. */
	CHECK_EQ_U64(wire_csum(a, 1000), wire_csum(a, 1000));
	/* Length is mixed in: prefixes of zeros all differ. */
	uint8_t z[64] = { 0 };
	for (size_t i = 0; i < 64; i++)
		for (size_t j = i + 1; j < 64; j++)
			CHECK(wire_csum(z, i) != wire_csum(z, j), "zeros %zu vs %zu", i, j);
	/* Single-bit flips over every tail shape (len 1..70, all bits). */
	for (size_t len = 1; len <= 70; len++) {
		uint64_t base = wire_csum(a, len);
		for (size_t bit = 0; bit < len * 8; bit++) {
			a[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			CHECK(wire_csum(a, len) != base, "len %zu bit %zu", len, bit);
			a[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		}
	}
	/* Position matters: swapping two equal-length words changes the sum. */
	uint8_t b[64];
	memcpy(b, a, 64);
	uint8_t t[8];
	memcpy(t, b, 8);
	memcpy(b, b + 32, 8);
	memcpy(b + 32, t, 8);
	CHECK(wire_csum(a, 64) != wire_csum(b, 64));
	/* The request variant equals wire_csum with the first word zeroed. */
	memcpy(b, a, 64);
	memset(b, 0, 8);
	CHECK_EQ_U64(wire_req_csum(a, 64), wire_csum(b, 64));
	memcpy(b, a, 24);
	memset(b, 0, 8);
	CHECK_EQ_U64(wire_req_csum(a, 24), wire_csum(b, 24));
}

TEST(req_len_alignment)
{
	for (uint32_t k = 0; k <= KV_MAX_KEY; k++) {
		for (uint32_t v = 0; v < 300; v++) {
			uint32_t n = wire_req_len(k, v), raw = WIRE_HDR_SIZE + k + v;
			if (n % WIRE_ALIGN != 0 || n < raw || n >= raw + WIRE_ALIGN)
				CHECK(0, "wire_req_len(%u, %u) = %u", k, v, n);
		}
	}
	CHECK_EQ_U64(wire_req_len(0, 0), 64);
	CHECK_EQ_U64(wire_req_len(0, 16), 64);
	CHECK_EQ_U64(wire_req_len(0, 17), 128);
	CHECK_EQ_U64(wire_req_len(KV_MAX_KEY, KV_MAX_VALUE),
		     (WIRE_HDR_SIZE + KV_MAX_KEY + KV_MAX_VALUE + 63) / 64 * 64);
}

TEST(response_roundtrip)
{
	uint8_t buf[WIRE_RESP_HDR + 8];
	memset(buf, 0xCC, sizeof buf);
	struct wire_resp r = {
		.seq = 0x1122334455667788ull, .status = KV_NOT_FOUND, .val_len = 0x00ABCDEF,
		.kind = WIRE_ACK, .op = KV_OP_INCR, .worker = 0x1234, .client_id = 0xCAFEBABEu,
		.reserved = 0,
	}, d;
	wire_encode_resp(buf, &r);
	CHECK(buf[WIRE_RESP_HDR] == 0xCC, "wrote past the response header");
	wire_decode_resp(buf, &d);
	CHECK_EQ_U64(d.seq, r.seq);
	CHECK_EQ_U64(d.status, r.status);
	CHECK_EQ_U64(d.val_len, r.val_len);
	CHECK_EQ_U64(d.kind, r.kind);
	CHECK_EQ_U64(d.op, r.op);
	CHECK_EQ_U64(d.worker, r.worker);
	CHECK_EQ_U64(d.client_id, r.client_id);
	CHECK_EQ_U64(d.reserved, 0);
	CHECK(buf[0] == 0x88 && buf[7] == 0x11);
	CHECK(buf[8] == KV_NOT_FOUND);
	CHECK(buf[12] == 0xEF && buf[14] == 0xAB && buf[15] == 0);
	CHECK(buf[16] == WIRE_ACK && buf[17] == KV_OP_INCR);
	CHECK(buf[18] == 0x34 && buf[19] == 0x12);
	CHECK(buf[20] == 0xBE && buf[23] == 0xCA);
	CHECK_EQ_U64(d.mark, 0);
}

/* The stall tags and the fault's mark ride in the status word's top bits,
 * each alone and together, and never leak into the status. */
TEST(response_marks)
{
	uint8_t buf[WIRE_RESP_HDR];
	for (unsigned m = 0; m <= 7; m++) {
		struct wire_resp r = { .seq = 9, .status = KV_ERR_NOSPACE, .kind = WIRE_RESP, .mark = (uint8_t)m }, d;
		wire_encode_resp(buf, &r);
		wire_decode_resp(buf, &d);
		CHECK_EQ_U64(d.mark, m);
		CHECK_EQ_U64(d.status, KV_ERR_NOSPACE);
	}
	CHECK((WIRE_MARK_FAULT & WIRE_MARK_TAGS) == 0);
	CHECK(((WIRE_MARK_FAULT | WIRE_MARK_TAGS) << WIRE_S_SHIFT) == WIRE_S_MARKS);
}

TEST(op_and_status_names)
{
	const char *want[] = { "nop", "get", "set", "del", "incr", "echo" };
	REQUIRE(sizeof want / sizeof want[0] == KV_OP_MAX_);
	for (unsigned i = 0; i < KV_OP_MAX_; i++) {
		CHECK(strcmp(kv_op_name(i), want[i]) == 0);
		CHECK(kv_op_from_name(want[i]) == (int)i);
	}
	CHECK(strcmp(kv_op_name(KV_OP_MAX_), "?") == 0);
	CHECK(strcmp(kv_op_name(1000), "?") == 0);
	CHECK(kv_op_from_name("put") == -1);
	CHECK(kv_op_from_name("") == -1);
	CHECK(kv_op_from_name(NULL) == -1);
	CHECK(strcmp(kv_status_name(KV_OK), "ok") == 0);
	CHECK(strcmp(kv_status_name(KV_ERR_NOSPACE), "no_space") == 0);
	CHECK(strcmp(kv_status_name(99), "?") == 0);
}

UNIT_MAIN(roundtrip_fields, byte_layout, encode_limits, value_pattern,
	  every_bit_flip_rejected, byte_swaps_rejected, header_corruptions,
	  huge_size_at_end_of_buffer, fuzz_never_accepts, csum_properties,
	  req_len_alignment, response_roundtrip, response_marks, op_and_status_names)
