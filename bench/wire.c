/*
 * wire.c - encoding, decoding and validation of requests and responses.
 *
 * Every field is stored and loaded byte by byte in little-endian order, so
 * the format does not depend on the host's struct layout or byte order.
 *
 * The checksum (wire_csum) reads the buffer in 8-byte words spread over
 * four independent lanes, so that a 1 MiB value costs four parallel
 * multiply chains instead of one long one.  Each lane step
 *     lane = rotl((lane ^ w) * K1, 31)
 * is a bijection of the word for a fixed lane value and a bijection of the
 * lane for a fixed word (xor, a multiplication by an odd constant and a
 * rotation are each invertible); the rotation carries the high bits, which
 * a multiplication never moves down, into the low ones of the next step,
 * so two flips of a word's top bit do not cancel.  The lanes are folded by
 *     h = rotl(h, 23) * K3 ^ lane
 * (a bijection of h for a fixed lane and of the lane for a fixed h) and a
 * final avalanche.  Hence any change confined to one 8-byte word (every
 * single-bit flip, every swap of two bytes inside a word) always changes
 * the result; other changes collide with probability about 2^-64.  It is
 * an integrity check against torn and stale buffers (paper §5.3), not a
 * defence against an adversary.  Three instructions a word and a short
 * fold: it runs on every request on both sides (bench/icount.sh).
 */
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "bits.h"
#include "wire.h"

/* Little-endian loads and stores: lib/bits.h (one mov each here). */

/* ---- checksum ---- */

#define CS_K1   0x9E3779B97F4A7C15ull   /* odd: multiplication is a bijection */
#define CS_K2   0xC2B2AE3D27D4EB4Full
#define CS_K3   0xBF58476D1CE4E5B9ull
#define CS_K4   0x94D049BB133111EBull
#define CS_SEED 0x4F51424E43485753ull   /* "OQBNCHWS": fixed, so sums are portable */

static inline uint64_t rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t cs_round(uint64_t lane, uint64_t w)
{
	return rotl64((lane ^ w) * CS_K1, 31);
}

/* One lane into the running fold. */
static inline uint64_t cs_fold(uint64_t h, uint64_t lane)
{
	return (rotl64(h, 23) * CS_K3) ^ lane;
}

/* Invertible avalanche (xorshift-multiply); spreads every input bit. */
static inline uint64_t cs_mix(uint64_t h)
{
	h ^= h >> 30;
	h *= CS_K3;
	h ^= h >> 27;
	h *= CS_K4;
	h ^= h >> 31;
	return h;
}

/*
 * The checksum proper.  With zero_first set, the first 8 bytes are read as
 * zero: that is how a request's own csum field is excluded without copying
 * or modifying the (possibly read-only) buffer.
 */
static uint64_t csum_impl(const uint8_t *p, size_t len, int zero_first)
{
	uint64_t a = CS_SEED + CS_K1;
	uint64_t b = CS_SEED ^ CS_K2;
	uint64_t c = CS_SEED - CS_K3;
	uint64_t d = ~CS_SEED;
	size_t n = len;

	if (zero_first && n >= 32) {
		a = cs_round(a, 0);
		b = cs_round(b, get64(p + 8));
		c = cs_round(c, get64(p + 16));
		d = cs_round(d, get64(p + 24));
		p += 32;
		n -= 32;
		zero_first = 0;
	}
	while (n >= 32) {
		a = cs_round(a, get64(p));
		b = cs_round(b, get64(p + 8));
		c = cs_round(c, get64(p + 16));
		d = cs_round(d, get64(p + 24));
		p += 32;
		n -= 32;
	}
	/* Up to three whole words left: they continue lanes a, b, c in turn,
	 * so their positions stay distinct from one another.  With zero_first
	 * still set (len < 32) the first of them is the csum field: zero. */
	if (n >= 8) {
		a = cs_round(a, zero_first ? 0 : get64(p));
		zero_first = 0;
		p += 8;
		n -= 8;
		if (n >= 8) {
			b = cs_round(b, get64(p));
			p += 8;
			n -= 8;
			if (n >= 8) {
				c = cs_round(c, get64(p));
				p += 8;
				n -= 8;
			}
		}
	}
	if (n > 0) {
		/* Tail bytes zero-extended; the length in the fold below tells
		 * "ab" from "ab\0". */
		uint64_t w = 0;
		for (size_t i = 0; i < n; i++)
			w |= (uint64_t)p[i] << (8 * i);
		if (zero_first)
			w = 0;
		d = cs_round(d, w);
	}
	uint64_t h = a ^ (uint64_t)len;
	h = cs_fold(h, b);
	h = cs_fold(h, c);
	h = cs_fold(h, d);
	return cs_mix(h);
}

uint64_t wire_csum(const void *buf, size_t len)
{
	return csum_impl(buf, len, 0);
}

uint64_t wire_req_csum(const void *buf, size_t padded_len)
{
	return csum_impl(buf, padded_len, 1);
}

void wire_req_seal(void *buf, size_t padded_len)
{
	put64(buf, csum_impl(buf, padded_len, 1));
}

/* ---- value pattern ---- */

static inline uint64_t pattern_base(uint64_t seq)
{
	return seq * CS_K1 + CS_K2;
}

void wire_fill_pattern(uint8_t *dst, uint32_t len, uint64_t seq)
{
	uint64_t base = pattern_base(seq);
	uint32_t i = 0;

	for (; i + 8 <= len; i += 8)
		put64(dst + i, base + i);
	if (i < len) {
		uint8_t last[8];
		put64(last, base + i);
		memcpy(dst + i, last, len - i);
	}
}

int wire_check_pattern(const uint8_t *src, uint32_t len, uint64_t seq)
{
	uint64_t base = pattern_base(seq);
	uint32_t i = 0;

	for (; i + 8 <= len; i += 8)
		if (get64(src + i) != base + i)
			return -1;
	if (i < len) {
		uint8_t last[8];
		put64(last, base + i);
		if (memcmp(src + i, last, len - i) != 0)
			return -1;
	}
	return 0;
}

/* ---- requests ---- */

uint32_t wire_encode_req(void *buf, size_t cap, const struct wire_req *h,
			 const void *key, const void *val)
{
	uint8_t *p = buf;

	if (h->key_len > KV_MAX_KEY || h->val_len > KV_MAX_VALUE)
		return 0;
	uint32_t size = WIRE_HDR_SIZE + h->key_len + h->val_len;
	uint32_t padded = wire_req_len(h->key_len, h->val_len);
	if (padded > cap)
		return 0;

	put64(p + 0, 0);
	put32(p + 8, size);
	put16(p + 12, WIRE_MAGIC);
	p[14] = WIRE_VERSION;
	p[15] = h->op;
	put16(p + 16, h->flags);
	put16(p + 18, h->key_len);
	put32(p + 20, h->val_len);
	put32(p + 24, h->client_id);
	put32(p + 28, h->worker);
	put64(p + 32, h->seq);
	put64(p + 40, h->aux);

	uint8_t *k = p + WIRE_HDR_SIZE;
	if (h->key_len) {
		if (key)
			memcpy(k, key, h->key_len);
		else
			memset(k, 0, h->key_len);
	}
	uint8_t *v = k + h->key_len;
	if (h->val_len) {
		if (val)
			memcpy(v, val, h->val_len);
		else
			wire_fill_pattern(v, h->val_len, h->seq);
	}
	memset(p + size, 0, padded - size);
	put64(p, csum_impl(p, padded, 1));
	return padded;
}

/* On a little-endian host struct wire_req is the wire header itself
 * (same offsets, same sizes, no padding: checked below), so decoding is
 * one 48-byte copy; elsewhere it is field by field. */
#if !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
#define WIRE_REQ_IS_WIRE 1
_Static_assert(sizeof(struct wire_req) == WIRE_HDR_SIZE && offsetof(struct wire_req, size) == 8 &&
	       offsetof(struct wire_req, magic) == 12 && offsetof(struct wire_req, version) == 14 &&
	       offsetof(struct wire_req, op) == 15 && offsetof(struct wire_req, flags) == 16 &&
	       offsetof(struct wire_req, key_len) == 18 && offsetof(struct wire_req, val_len) == 20 &&
	       offsetof(struct wire_req, client_id) == 24 && offsetof(struct wire_req, worker) == 28 &&
	       offsetof(struct wire_req, seq) == 32 && offsetof(struct wire_req, aux) == 40,
	       "struct wire_req must mirror the wire header on little-endian hosts");
#endif

void wire_decode_req(const void *buf, struct wire_req *h)
{
#ifdef WIRE_REQ_IS_WIRE
	memcpy(h, buf, WIRE_HDR_SIZE);
#else
	const uint8_t *p = buf;

	h->csum = get64(p + 0);
	h->size = get32(p + 8);
	h->magic = get16(p + 12);
	h->version = p[14];
	h->op = p[15];
	h->flags = get16(p + 16);
	h->key_len = get16(p + 18);
	h->val_len = get32(p + 20);
	h->client_id = get32(p + 24);
	h->worker = get32(p + 28);
	h->seq = get64(p + 32);
	h->aux = get64(p + 40);
#endif
}

/* The reason a decoded header fails (NULL if it passes), in the order
 * wire_check documents; only a request that failed the fast test below
 * comes here. */
static const char *header_fault(const struct wire_req *h, size_t avail)
{
	if (h->magic != WIRE_MAGIC)
		return "bad magic";
	if (h->version != WIRE_VERSION)
		return "bad version";
	if (h->op >= KV_OP_MAX_)
		return "bad op";
	if (h->flags & ~WIRE_F_ALL)
		return "bad flags";
	if (h->key_len > KV_MAX_KEY)
		return "key too long";
	if (h->val_len > KV_MAX_VALUE)
		return "value too long";
	/* Both lengths are bounded now, so this sum cannot overflow; the size
	 * field itself is never used for arithmetic before it matches. */
	if (h->size != WIRE_HDR_SIZE + h->key_len + h->val_len)
		return "size does not match lengths";
	if (wire_req_len(h->key_len, h->val_len) > avail)
		return "size exceeds buffer";
	return NULL;
}

int wire_check(const void *buf, size_t avail, struct wire_req *h, const char **why)
{
	struct wire_req tmp;
	const char *dummy;

	if (!h)
		h = &tmp;
	if (!why)
		why = &dummy;
	if (!buf || avail < WIRE_HDR_SIZE) {
		*why = "truncated header";
		return -1;
	}
	wire_decode_req(buf, h);
	/* Every header rule at once, without a branch each (this runs once
	 * per request on the worker, bench/icount.sh): the lengths are
	 * bounded before they are added, so the sums cannot overflow. */
	uint64_t klen = h->key_len, vlen = h->val_len;
	int bad = (h->magic != WIRE_MAGIC) | (h->version != WIRE_VERSION) | (h->op >= KV_OP_MAX_) |
		  ((h->flags & ~WIRE_F_ALL) != 0) | (klen > KV_MAX_KEY) | (vlen > KV_MAX_VALUE);
	uint64_t padded = (WIRE_HDR_SIZE + klen + vlen + WIRE_ALIGN - 1) & ~(uint64_t)(WIRE_ALIGN - 1);
	bad |= (h->size != WIRE_HDR_SIZE + klen + vlen) | (padded > avail);
	if (bad) {
		*why = header_fault(h, avail);
		return -1;
	}
	if (csum_impl(buf, padded, 1) != h->csum) {
		*why = "checksum mismatch";
		return -1;
	}
	*why = NULL;
	return 0;
}

/* ---- responses ---- */

void wire_encode_resp(void *buf, const struct wire_resp *r)
{
	uint8_t *p = buf;

	put64(p + 0, r->seq);
	put32(p + 8, (r->status & ~WIRE_S_MARKS) | (uint32_t)(r->mark & 7u) << WIRE_S_SHIFT);
	put32(p + 12, r->val_len);
	p[16] = r->kind;
	p[17] = r->op;
	put16(p + 18, r->worker);
	put32(p + 20, r->client_id);
	put64(p + 24, r->reserved);
}

void wire_decode_resp(const void *buf, struct wire_resp *r)
{
	const uint8_t *p = buf;

	r->seq = get64(p + 0);
	r->status = get32(p + 8);
	r->mark = (uint8_t)(r->status >> WIRE_S_SHIFT);
	r->status &= ~WIRE_S_MARKS;
	r->val_len = get32(p + 12);
	r->kind = p[16];
	r->op = p[17];
	r->worker = get16(p + 18);
	r->client_id = get32(p + 20);
	r->reserved = get64(p + 24);
}

int wire_check_resp(const void *buf, size_t avail, struct wire_resp *r, const char **why)
{
	struct wire_resp tmp;
	const char *dummy;

	if (!r)
		r = &tmp;
	if (!why)
		why = &dummy;
	if (!buf || avail < WIRE_RESP_HDR) {
		*why = "truncated response header";
		return -1;
	}
	wire_decode_resp(buf, r);
	if (r->kind != WIRE_RESP && r->kind != WIRE_ACK) {
		*why = "bad response kind";
		return -1;
	}
	if (r->op >= KV_OP_MAX_) {
		*why = "bad op";
		return -1;
	}
	if (r->status > KV_ERR_OP) {
		*why = "bad status";
		return -1;
	}
	if (r->val_len > KV_MAX_VALUE) {
		*why = "value too long";
		return -1;
	}
	if (r->kind == WIRE_ACK && r->val_len != 0) {
		*why = "ACK with a value";
		return -1;
	}
	/* val_len is bounded, so the sum cannot overflow. */
	if ((size_t)WIRE_RESP_HDR + r->val_len > avail) {
		*why = "value exceeds buffer";
		return -1;
	}
	if (r->reserved != 0) {
		*why = "reserved field not zero";
		return -1;
	}
	*why = NULL;
	return 0;
}
