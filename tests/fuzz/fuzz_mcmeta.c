/*
 * fuzz_mcmeta.c - memcached's meta-protocol reply parser (bench/backends/
 * mcmeta.c: mcm_parse), as the `memcached` back end drives it over a
 * stream of replies.
 *
 * Input: bytes as they might come back from memcached's socket.
 * Properties: a malformed reply has a terminated reason; a parsed reply
 * takes at least one byte and no more than there are, its value and
 * message lie within what it took, and its opaque within the limit; the
 * same bytes parse the same way again; a reply that parsed is only "wait
 * for more" (0) when cut short of its end, never malformed; and the
 * parser never waits on MCM_LINE_MAX bytes or more without a line end.
 */
#include <string.h>

#include "mcmeta.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	while (off < size) {
		struct mcm_reply r, r2;
		char why[256];
		const uint8_t *p = data + off;
		size_t left = size - off;
		why[0] = '\0';
		long n = mcm_parse(p, left, &r, why, sizeof why);
		if (n < 0) {
			fuzz_check_msg(why, sizeof why);
			return 0;
		}
		if (n == 0) {
			FUZZ_ASSERT(left < MCM_LINE_MAX || memchr(p, '\n', MCM_LINE_MAX),
				    "waits on %zu bytes with no line end", left);
			return 0;
		}
		FUZZ_ASSERT((size_t)n <= left, "took %ld of %zu bytes", n, left);
		FUZZ_ASSERT(r.kind > MCM_NONE && r.kind < MCM_KIND_MAX_, "kind %d", (int)r.kind);
		FUZZ_ASSERT(r.opaque_len <= MCM_OPAQUE_MAX, "opaque of %u bytes", r.opaque_len);
		if (r.val)
			FUZZ_ASSERT(r.val >= p && r.val + r.val_len <= p + n, "value outside the reply");
		if (r.msg)
			FUZZ_ASSERT((const uint8_t *)r.msg >= p && (const uint8_t *)r.msg + r.msg_len <= p + n,
				    "message outside the reply");
		FUZZ_ASSERT(mcm_parse(p, left, &r2, why, sizeof why) == n && r2.kind == r.kind &&
			    r2.val_len == r.val_len, "not the same the second time");
		/* cut short by one byte: only "wait for more" */
		FUZZ_ASSERT(mcm_parse(p, (size_t)n - 1, &r2, why, sizeof why) == 0,
			    "a %s reply of %ld bytes cut short is not incomplete", mcm_kind_name(r.kind), n);
		off += (size_t)n;
	}
	return 0;
}
