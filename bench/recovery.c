/*
 * recovery.c - see recovery.h for the rules; this file applies them.
 */
#include <string.h>

#include "clock.h"
#include "recovery.h"

/* Classifies one valid request and executes it if the rules say so. */
static void consider(const void *req, const struct wire_req *h, recovery_exec_fn fn, void *arg,
		     struct recovery_report *r)
{
	r->valid++;
	if (!(h->flags & KV_F_NILEXT)) {
		r->skipped_non_nilext++;
	} else if (h->flags & KV_F_NONIDEMP) {
		r->skipped_nonidempotent++;
	} else {
		r->reexecuted++;
		if (fn)
			fn(arg, req, h);
	}
}

int recovery_scan_ring(const uint8_t *data, unsigned slots, unsigned slot_size,
		       uint64_t from, uint64_t to, recovery_exec_fn fn, void *arg,
		       struct recovery_report *r)
{
	return recovery_scan_ring_checked(data, slots, slot_size, from, to, NULL, NULL, fn, arg, r);
}

int recovery_scan_ring_checked(const uint8_t *data, unsigned slots, unsigned slot_size,
			       uint64_t from, uint64_t to, recovery_slot_ok_fn ok, void *ok_arg,
			       recovery_exec_fn fn, void *arg, struct recovery_report *r)
{
	uint64_t t0 = clock_ns();
	if (to < from || to - from > (ok ? 2ull : 1ull) * slots)
		return -1;
	for (uint64_t t = from; t < to; t++) {
		const uint8_t *p = data + (t & (slots - 1)) * (size_t)slot_size;
		struct wire_req h;
		const char *why;
		r->scanned++;
		if ((ok && !ok(ok_arg, t)) || wire_check(p, slot_size, &h, &why) != 0) {
			r->skipped_invalid++;
			continue;   /* next slot: one request per slot here */
		}
		consider(p, &h, fn, arg, r);
	}
	r->ns += clock_ns() - t0;
	return 0;
}

void recovery_scan_region(const uint8_t *buf, size_t len, recovery_exec_fn fn, void *arg,
			  struct recovery_report *r)
{
	uint64_t t0 = clock_ns();
	size_t off = 0;
	/* Only aligned positions can start a request; a misaligned "request"
	 * is never looked at, and a failing position moves on by one unit. */
	while (off + WIRE_HDR_SIZE <= len) {
		struct wire_req h;
		const char *why;
		r->scanned++;
		if (wire_check(buf + off, len - off, &h, &why) != 0) {
			r->skipped_invalid++;
			off += WIRE_ALIGN;
			continue;
		}
		consider(buf + off, &h, fn, arg, r);
		off += wire_req_len(h.key_len, h.val_len);
	}
	r->ns += clock_ns() - t0;
}

json_t *recovery_report_json(const struct recovery_report *r)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"scanned", (json_int_t)r->scanned, "valid", (json_int_t)r->valid,
		"reexecuted", (json_int_t)r->reexecuted,
		"skipped_invalid", (json_int_t)r->skipped_invalid,
		"skipped_non_nilext", (json_int_t)r->skipped_non_nilext,
		"skipped_nonidempotent", (json_int_t)r->skipped_nonidempotent,
		"ns", (json_int_t)r->ns);
}
