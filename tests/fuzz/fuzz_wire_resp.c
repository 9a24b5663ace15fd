/*
 * fuzz_wire_resp.c - the client's response decoder (bench/wire.c:
 * wire_check_resp over wire_decode_resp).
 *
 * Input: bytes as a response buffer holds them (32-byte header, value).
 * Properties: a rejection has a reason and an acceptance none; an
 * accepted response's value lies within the bytes; encoding the decoded
 * header again gives back the same 32 bytes; a response accepted with
 * avail bytes is also accepted with more, and one cut short of its value
 * is rejected.
 */
#include <string.h>

#include "wire.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_resp r;
	const char *why = "unset";
	uint8_t hdr[WIRE_RESP_HDR];
	int rc = wire_check_resp(data, size, &r, &why);

	FUZZ_ASSERT((rc == 0) == (why == NULL), "verdict %d with reason %s", rc, why ? why : "none");
	if (rc != 0)
		return 0;
	FUZZ_ASSERT((size_t)WIRE_RESP_HDR + r.val_len <= size, "value past the buffer");
	FUZZ_ASSERT(r.kind == WIRE_RESP || r.kind == WIRE_ACK, "kind %u", r.kind);
	wire_encode_resp(hdr, &r);
	FUZZ_ASSERT(memcmp(hdr, data, WIRE_RESP_HDR) == 0, "re-encoding differs");
	FUZZ_ASSERT(wire_check_resp(data, WIRE_RESP_HDR + r.val_len, NULL, NULL) == 0,
		    "rejected with exactly its length");
	if (r.val_len > 0)
		FUZZ_ASSERT(wire_check_resp(data, WIRE_RESP_HDR + r.val_len - 1, NULL, &why) != 0,
			    "accepted without the value's last byte");
	return 0;
}
