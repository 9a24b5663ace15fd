/*
 * fuzz_wire_req.c - the server's request decoder (bench/wire.c:
 * wire_check, wire_decode_req) and the recovery scan built on it
 * (bench/recovery.c).
 *
 * Input: bytes as they would sit in a receive slot or a persistent ring.
 * Runs wire_check on them as received, then on a copy whose checksum
 * field is recomputed (wire_req_seal; random bytes almost never carry a
 * valid checksum, and the checks behind it deserve the fuzzer's time
 * too), then the region and ring recovery scans over both.  Properties:
 *  - a rejection has a reason, an acceptance none;
 *  - sealing changes nothing but a "checksum mismatch" verdict;
 *  - an accepted request lies within the bytes given, and encoding its
 *    decoded header, key and value again gives back the same bytes
 *    (checksum included when the padding is zero, as the encoder writes);
 *  - the scans only hand out accepted requests inside the buffer, and
 *    their counters add up.
 */
#include <string.h>

#include "recovery.h"
#include "wire.h"
#include "fuzz.h"

struct span {
	const uint8_t *lo, *hi;
	uint64_t calls;
};

static void on_exec(void *arg, const void *req, const struct wire_req *h)
{
	struct span *s = arg;
	const uint8_t *p = req;

	FUZZ_ASSERT(p >= s->lo && p + wire_req_len(h->key_len, h->val_len) <= s->hi,
		    "scan handed out a request outside the buffer");
	FUZZ_ASSERT(((size_t)(p - s->lo) % WIRE_ALIGN) == 0, "misaligned request");
	FUZZ_ASSERT(wire_check(p, (size_t)(s->hi - p), NULL, NULL) == 0, "scan executed a bad request");
	FUZZ_ASSERT((h->flags & KV_F_NILEXT) && !(h->flags & KV_F_NONIDEMP), "re-executed flags %#x",
		    h->flags);
	s->calls++;
}

static void scans(const uint8_t *buf, size_t len)
{
	struct recovery_report r;
	struct span s = { buf, buf + len, 0 };
	unsigned slots = 1;

	memset(&r, 0, sizeof r);
	recovery_scan_region(buf, len, on_exec, &s, &r);
	FUZZ_ASSERT(r.scanned == r.valid + r.skipped_invalid, "region counters");
	FUZZ_ASSERT(r.valid == r.reexecuted + r.skipped_non_nilext + r.skipped_nonidempotent,
		    "region valid counters");
	FUZZ_ASSERT(s.calls == r.reexecuted, "region calls");

	/* A ring of 128-byte slots over as much of the buffer as fits. */
	while ((size_t)slots * 2 * 128 <= len)
		slots *= 2;
	if ((size_t)slots * 128 > len)
		return;
	memset(&r, 0, sizeof r);
	s.calls = 0;
	FUZZ_ASSERT(recovery_scan_ring(buf, slots, 128, 3, 3 + slots, on_exec, &s, &r) == 0, "ring");
	FUZZ_ASSERT(r.scanned == slots && s.calls == r.reexecuted, "ring counters");
	FUZZ_ASSERT(recovery_scan_ring(buf, slots, 128, 0, slots + 1, on_exec, &s, &r) == -1,
		    "a range longer than the ring was accepted");
}

/* Checks an accepted request against a fresh encoding of what it says. */
static void reencode(const uint8_t *buf, const struct wire_req *h)
{
	uint32_t padded = wire_req_len(h->key_len, h->val_len);
	static uint8_t out[WIRE_HDR_SIZE + KV_MAX_KEY + KV_MAX_VALUE + WIRE_ALIGN];
	int zero_pad = 1;

	FUZZ_ASSERT(h->size == WIRE_HDR_SIZE + h->key_len + h->val_len, "size %u", h->size);
	FUZZ_ASSERT(wire_encode_req(out, sizeof out, h, wire_key(buf),
				    wire_val(buf, h->key_len)) == padded, "encoder refused");
	FUZZ_ASSERT(memcmp(out + 8, buf + 8, h->size - 8) == 0, "re-encoding differs");
	for (uint32_t i = h->size; i < padded; i++)
		zero_pad &= buf[i] == 0;
	if (zero_pad)
		FUZZ_ASSERT(memcmp(out, buf, padded) == 0, "checksum differs after re-encoding");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_req h, hs;
	const char *why = "unset", *why_sealed = "unset";
	uint8_t *copy;
	int rc, rcs;

	rc = wire_check(data, size, &h, &why);
	FUZZ_ASSERT((rc == 0) == (why == NULL), "verdict %d with reason %s", rc, why ? why : "none");
	if (rc == 0) {
		FUZZ_ASSERT(wire_req_len(h.key_len, h.val_len) <= size, "accepted past the buffer");
		reencode(data, &h);
	}
	scans(data, size);

	if (size < WIRE_HDR_SIZE)
		return 0;
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	wire_decode_req(copy, &hs);
	if (hs.key_len <= KV_MAX_KEY && hs.val_len <= KV_MAX_VALUE &&
	    wire_req_len(hs.key_len, hs.val_len) <= size)
		wire_req_seal(copy, wire_req_len(hs.key_len, hs.val_len));
	rcs = wire_check(copy, size, &hs, &why_sealed);
	FUZZ_ASSERT((rcs == 0) == (why_sealed == NULL), "sealed verdict");
	if (rc == 0 || (why && strcmp(why, "checksum mismatch") == 0))
		FUZZ_ASSERT(rcs == 0, "sealed copy rejected: %s", why_sealed);
	else
		FUZZ_ASSERT(rcs != 0 && strcmp(why, why_sealed) == 0,
			    "sealing changed the verdict from \"%s\" to \"%s\"", why,
			    why_sealed ? why_sealed : "accepted");
	if (rcs == 0)
		reencode(copy, &hs);
	scans(copy, size);
	free(copy);
	return 0;
}
