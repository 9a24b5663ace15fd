/*
 * wire.h - the request/response format shared by every transport.
 *
 * A request is a 48-byte header, then the key, then the value, padded with
 * zeros to a multiple of WIRE_ALIGN (64 B) so that requests in a receive
 * ring start at aligned offsets (paper §5.2.1 and §5.3: recovery scans
 * aligned positions).  All fields are little-endian.  The header starts
 * with the 64-bit checksum and the 32-bit size, as §5.3 requires:
 *
 *   off size field
 *     0  8   csum      wire_csum() over the whole padded request with this
 *                      field taken as zero
 *     8  4   size      request length in bytes before padding (48+key+value)
 *    12  2   magic     WIRE_MAGIC ("OQ")
 *    14  1   version   WIRE_VERSION
 *    15  1   op        enum kv_op
 *    16  2   flags     WIRE_F_*
 *    18  2   key_len
 *    20  4   val_len
 *    24  4   client_id
 *    28  4   worker    target worker (partition) id
 *    32  8   seq       per-client sequence number, echoed in responses
 *    40  8   aux       op argument (incr delta, ...) or 0
 *
 * A response (mailbox record or verbs SEND) is a 32-byte header then the value:
 *
 *   off size field
 *     0  8   seq        the request's seq
 *     8  4   status     enum kv_status in bits 0-29; bit 30: sent inside a
 *                        host stall's interval of the worker, bit 31: inside
 *                        an unattributed one (WIRE_S_*, lib/stall.h's tags)
 *    12  4   val_len
 *    16  1   kind       enum wire_resp_kind
 *    17  1   op
 *    18  2   worker
 *    20  4   client_id
 *    24  8   reserved   (0)
 *
 * wire_check() validates a received request: magic, version, sizes against
 * the space it arrived in, flags, and checksum.  The server rejects and
 * counts anything that fails; it never executes it.
 */
#ifndef OQB_WIRE_H
#define OQB_WIRE_H

#include <stdint.h>
#include <stddef.h>
#include "kvop.h"

#define WIRE_MAGIC      0x514fu   /* bytes 'O','Q' little-endian */
#define WIRE_VERSION    2         /* 2: the three-instruction checksum round (wire.c) */
#define WIRE_ALIGN      64u
#define WIRE_HDR_SIZE   48u
#define WIRE_RESP_HDR   32u

/* The op byte is an enum kv_op, the status word an enum kv_status, and the
 * flags word carries kvop.h's KV_F_NILEXT and KV_F_NONIDEMP beside the one
 * flag that only the wire knows: */
#define WIRE_F_DURABLE  0x2u  /* client made it persistent before commit */
#define WIRE_F_ALL      (KV_F_NILEXT | WIRE_F_DURABLE | KV_F_NONIDEMP)

enum wire_resp_kind { WIRE_RESP = 1, WIRE_ACK = 2 };

/* The status word's top bits: the worker's stall tag (STALL_TAG_HOST 1,
 * STALL_TAG_UNATT 2) and WIRE_MARK_FAULT shifted up; wire_encode_resp
 * puts wire_resp.mark there and wire_decode_resp takes it back out, so
 * status never has it. */
#define WIRE_S_SHIFT    29
#define WIRE_S_MARKS    (7u << WIRE_S_SHIFT)
/* Test-only (bench/fault.h, server-delay): the worker's fault delayed this
 * very request.  Never a stall tag: a delay the system makes is the
 * system's (the tagger's negative control, bench/tagger-validate.sh). */
#define WIRE_MARK_FAULT 4u
#define WIRE_MARK_TAGS  3u   /* the bits that are the worker's stall tag */

struct wire_req {            /* host-order view of a request header */
	uint64_t csum;
	uint32_t size;
	uint16_t magic;
	uint8_t  version;
	uint8_t  op;
	uint16_t flags;
	uint16_t key_len;
	uint32_t val_len;
	uint32_t client_id;
	uint32_t worker;
	uint64_t seq;
	uint64_t aux;
};

struct wire_resp {
	uint64_t seq;
	uint32_t status;
	uint32_t val_len;
	uint8_t  kind;
	uint8_t  op;
	uint16_t worker;
	uint32_t client_id;
	uint64_t reserved;
	uint8_t  mark;     /* the status word's top bits (WIRE_S_*): not in status */
};

/* Padded length of a request with these key and value lengths. */
static inline uint32_t wire_req_len(uint32_t key_len, uint32_t val_len)
{
	uint32_t n = WIRE_HDR_SIZE + key_len + val_len;
	return (n + WIRE_ALIGN - 1) & ~(WIRE_ALIGN - 1);
}

/* 64-bit checksum of len bytes (word-at-a-time; not cryptographic).  Any
 * change inside one aligned 8-byte word is always detected. */
uint64_t wire_csum(const void *buf, size_t len);

/* Checksum of a padded request of padded_len bytes with its csum field
 * (bytes 0..7) read as zero: the value the csum field must hold. */
uint64_t wire_req_csum(const void *buf, size_t padded_len);

/* Recomputes and stores the csum field of a padded request, e.g. after a
 * header field was changed in place. */
void wire_req_seal(void *buf, size_t padded_len);

/* The pattern wire_encode_req writes when val is NULL: a function of seq
 * and the byte offset.  wire_check_pattern returns 0 if src holds it. */
void wire_fill_pattern(uint8_t *dst, uint32_t len, uint64_t seq);
int wire_check_pattern(const uint8_t *src, uint32_t len, uint64_t seq);

/*
 * Encodes a request into buf (capacity cap) and fills in size and checksum;
 * magic and version are always WIRE_MAGIC and WIRE_VERSION (h->csum,
 * h->size, h->magic and h->version are ignored).  val may be NULL: the
 * value bytes are then filled from `seq` (wire_fill_pattern); key may be
 * NULL for zero bytes.  The padding up to WIRE_ALIGN is zeroed.  Returns the
 * padded length, or 0 if it does not fit in cap or key_len/val_len exceed
 * KV_MAX_KEY/KV_MAX_VALUE.
 */
uint32_t wire_encode_req(void *buf, size_t cap, const struct wire_req *h,
			 const void *key, const void *val);

/* Decodes the header fields of buf (no validation). */
void wire_decode_req(const void *buf, struct wire_req *h);

/*
 * Validates the request at buf, which has `avail` readable bytes (never
 * reads beyond them).  Checks magic, version, op < KV_OP_MAX_, flags
 * within WIRE_F_ALL, key_len and val_len limits, size == 48+key+value, the
 * padded length <= avail, and the checksum.  Returns 0 if it is well-formed
 * (h, if not NULL, holds the decoded header), else -1 with a short static
 * reason in *why ("bad magic", "size exceeds buffer", "checksum mismatch",
 * ...).  why may be NULL.
 */
int wire_check(const void *buf, size_t avail, struct wire_req *h, const char **why);

static inline const uint8_t *wire_key(const void *req) { return (const uint8_t *)req + WIRE_HDR_SIZE; }
static inline const uint8_t *wire_val(const void *req, uint16_t key_len)
{ return (const uint8_t *)req + WIRE_HDR_SIZE + key_len; }

void wire_encode_resp(void *buf, const struct wire_resp *r);
void wire_decode_resp(const void *buf, struct wire_resp *r);

/*
 * Validates the response at buf, which has `avail` readable bytes (never
 * reads beyond them): kind RESP or ACK, op < KV_OP_MAX_, a known status,
 * val_len <= KV_MAX_VALUE and within avail (an ACK carries none), reserved
 * zero.  Returns 0 (r, if not NULL, holds the decoded header; the value is
 * the val_len bytes after the header), else -1 with a short static reason
 * in *why (why may be NULL).  Responses carry no checksum: they come from
 * the server over the transport's own integrity checks.
 */
int wire_check_resp(const void *buf, size_t avail, struct wire_resp *r, const char **why);


#endif
