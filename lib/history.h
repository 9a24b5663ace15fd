/*
 * history.h - recorded client histories: what each client saw, one record
 * per operation, for the linearizability checker (harness/check/check.h).
 *
 * One file per client thread, written append-only.  All integers are
 * little-endian.  A file is a 128-byte header, then fixed-size records:
 *
 *   header (128 B)
 *     off size field
 *       0  8   magic        "OQBHIST1"
 *       8  2   version      HISTORY_VERSION
 *      10  2   header_size  128
 *      12  2   record_size  96 (a reader accepts larger records and reads
 *                           their first 96 bytes: fields are only added)
 *      14  2   clock_kind   enum history_clock
 *      16  8   clock_bound_ns  bound on this host's clock offset from the
 *                           others; the checker widens every interval by it
 *      24  4   client_id    the transport's id of the recording thread
 *      28  4   flags        HISTORY_F_*
 *      32  8   key_fraction the sampled share of keys (double, 1.0 = all)
 *      40  64  host         the client host's name, NUL padded
 *     104  24  reserved     zero
 *
 *   record (96 B)
 *       0  8   t_inv    ns, taken BEFORE the request was posted
 *       8  8   t_ret    ns, taken after its commit event was seen;
 *                       HISTORY_T_UNKNOWN (all ones): never committed
 *                       (unanswered at the end, or the client failed)
 *      16  8   key_hash history_key_hash() of the whole key
 *      24  8   seq      the client's sequence number of the request: with
 *                       client_id, the unique tag of a written value
 *      32  4   client   the client id (tag half)
 *      36  1   op       enum kv_op
 *      37  1   status   enum kv_status, or HISTORY_ST_UNKNOWN (no commit),
 *                       or HISTORY_ST_UNSEEN (committed by a delivery or
 *                       ACK, which carry no status)
 *      38  1   key_len  the whole key's length (<= KV_MAX_KEY)
 *      39  1   vkinds   bits 0-1: kind of the value written (set),
 *                       bits 2-3: kind of the value returned (get, incr);
 *                       enum history_vkind; bit 4 (HISTORY_D_WRITTEN): a
 *                       TAG set's arg is the digest of the bytes written;
 *                       bit 5 (HISTORY_D_READ): a TAG get's rval is the
 *                       digest of the bytes returned
 *      40  8   arg      set: the value's number (NUM) or digest (DIGEST,
 *                       and TAG with HISTORY_D_WRITTEN); incr: the delta
 *      48  8   rseq     returned TAG: the seq named by the value's tag
 *      56  4   rclient  returned TAG: the client named by the tag
 *      60  4   val_len  set: bytes written; get/incr: bytes returned
 *      64  8   rval     returned NUM: the number; else a 64-bit digest of
 *                       the bytes returned (history_digest)
 *      72  16  key      the key's first 16 bytes, zero padded (display)
 *      88  8   reserved zero
 *
 * Why fixed 96 B records and a key hash rather than the whole key: a record
 * must be appended in a few ns from a per-thread buffer, and a whole key
 * (up to 250 B) would triple the bytes written for display only.  The
 * checker splits by the 64-bit hash; two keys of one run share a hash with
 * probability below n^2 / 2^65 (1e-9 for 10^5 keys).
 *
 * Value kinds.  With recording on, the client writes a 16-byte tag (magic
 * "OQT1", client id, seq) into the first bytes of every SET value that has
 * room for it (TAG), so a get's response names the write it saw.  A value
 * shorter than 16 B keeps its bytes and is recorded by its digest
 * (DIGEST): such a key cannot use the checker's unique-value fast path and
 * goes to the general search.  A value made of 1-20 decimal digits (what
 * incr stores and returns) is recorded as its number (NUM).
 *
 * Read digests.  The tag names the write a get saw, the digest says the
 * get saw all of it: a tagged set records the digest of every byte it
 * wrote, a get the digest of every byte it got back, and the checker's
 * model requires them equal.  A value with the right tag and other bytes
 * (torn by a concurrent write, mixed with a stale value, truncated) was
 * written by no one, and is a violation.  The digest of a value of 16 or
 * more bytes is computed as two parts, the first 16 bytes and the rest
 * (history_digest_tail, history_digest_join), so a recorder that writes
 * one filler under changing tags digests the filler once per length.
 */
#ifndef OQB_HISTORY_H
#define OQB_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#define HISTORY_MAGIC       "OQBHIST1"
#define HISTORY_VERSION     1
#define HISTORY_HDR_SIZE    128u
#define HISTORY_REC_SIZE    96u
#define HISTORY_T_UNKNOWN   UINT64_MAX
#define HISTORY_ST_UNKNOWN  0xffu
#define HISTORY_ST_UNSEEN   0xfeu
#define HISTORY_KEY_SHOWN   16u
#define HISTORY_TAG_SIZE    16u
#define HISTORY_TAG_MAGIC   0x3154514fu    /* "OQT1" little-endian */

enum history_clock { HISTORY_CLOCK_MONOTONIC = 1, HISTORY_CLOCK_REALTIME = 2 };
enum history_vkind { HV_NONE = 0, HV_TAG = 1, HV_NUM = 2, HV_DIGEST = 3 };

#define HISTORY_F_SAMPLED 0x1u   /* only a sample of the keys is recorded */

/* struct history_op.dflags: which digests a TAG op carries */
#define HISTORY_D_WRITTEN 0x1u   /* set: arg = history_digest of the bytes written */
#define HISTORY_D_READ    0x2u   /* get: rval = history_digest of the bytes returned */

struct history_header {
	uint16_t version, record_size;
	uint16_t clock_kind;
	uint64_t clock_bound_ns;
	uint32_t client_id;
	uint32_t flags;
	double key_fraction;
	char host[65];
};

struct history_op {
	uint64_t t_inv, t_ret;
	uint64_t key_hash;
	uint64_t seq;
	uint32_t client;
	uint8_t op, status, key_len;
	uint8_t wkind, rkind;        /* enum history_vkind */
	uint8_t dflags;              /* HISTORY_D_* */
	uint64_t arg;
	uint64_t rseq;
	uint32_t rclient;
	uint32_t val_len;
	uint64_t rval;
	uint8_t key[HISTORY_KEY_SHOWN];
};

/* 64-bit hash of a key (8 bytes per multiply, then a full avalanche):
 * splits histories by key and decides key sampling, the same on every
 * client of a run. */
uint64_t history_key_hash(const void *key, size_t len);

/* Whether a key with this hash is in a sample of `fraction` of the keys
 * (deterministic: the same keys on every client and run). */
int history_key_sampled(uint64_t key_hash, double fraction);

/* 64-bit digest of len bytes (not cryptographic: it finds torn and corrupt
 * values, not forgeries; four independent 8-byte lanes). */
uint64_t history_digest(const void *buf, size_t len);

/* For len >= HISTORY_TAG_SIZE, history_digest(v, len) ==
 * history_digest_join(v, history_digest_tail(v + 16, len - 16), len). */
uint64_t history_digest_tail(const void *rest, size_t n);
uint64_t history_digest_join(const uint8_t *head16, uint64_t tail, size_t len);

/* Writes the 16-byte value tag of (client, seq) into dst. */
void history_tag_put(uint8_t *dst, uint32_t client, uint64_t seq);

/* Classifies a returned value: TAG (with *client, *seq from its tag), NUM
 * (*num = its number), or DIGEST (*num = history_digest of it).  An empty
 * value is a DIGEST. */
enum history_vkind history_value_kind(const uint8_t *v, size_t len, uint32_t *client,
				      uint64_t *seq, uint64_t *num);

/* Encode/decode one record (HISTORY_REC_SIZE bytes) and the header. */
void history_encode(uint8_t *dst, const struct history_op *op);
void history_decode(const uint8_t *src, struct history_op *op);
void history_encode_header(uint8_t *dst, const struct history_header *h);

/*
 * Append-only writer: records collect in a buffer of `cap` bytes that is
 * written to the file when full, so no system call happens per operation.
 * Errors are sticky: after the first failed write, add does nothing and
 * close returns -1 with the message.
 */
struct history_writer {
	int fd;
	uint8_t *buf;
	size_t len, cap;
	uint64_t records;
	int failed;
	char path[512];
	char err[600];
};

int history_writer_open(struct history_writer *w, const char *path,
			const struct history_header *h, size_t cap, char *err, size_t errlen);
void history_writer_add(struct history_writer *w, const struct history_op *op);
/* Flushes, closes; 0, or -1 with the first error.  Safe on a writer that
 * never opened (fd < 0). */
int history_writer_close(struct history_writer *w, char *err, size_t errlen);

/*
 * Parses a whole history file held in buf[0, len): the header into *h and
 * the records into a malloc'd array *ops of *n.  `name` prefixes messages.
 * Returns 0, or -1 with a message naming the problem and its byte offset:
 * wrong magic, unsupported version or sizes, a truncated record, or a field
 * out of range (op, status, key_len, kinds, t_ret < t_inv).  Never reads
 * outside buf.
 */
int history_read(const void *buf, size_t len, const char *name, struct history_header *h,
		 struct history_op **ops, size_t *n, char *err, size_t errlen);

/* Reads the file at path, then history_read. */
int history_read_file(const char *path, struct history_header *h, struct history_op **ops,
		      size_t *n, char *err, size_t errlen);

#endif
