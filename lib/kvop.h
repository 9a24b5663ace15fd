/*
 * kvop.h - the operation vocabulary of the key-value model: op codes, the
 * commit-relevant op flags, status codes and the size limits.
 *
 * Workload generators, backends, the executor and the wire format all speak
 * it; only the wire format (bench/wire.h) knows how these travel in bytes.
 * The numeric values are part of the wire format (version 1): an op code is
 * the request's op byte, a status the response's status word.  Never
 * renumber; add at the end.
 *
 * Which ops may commit before execution (paper §2.2, §4): a "nilext"
 * operation (set, del) has no externalized result, so OQ may commit it on
 * the transport's delivery ACK.  get, echo and incr externalize a value and
 * always wait for the software response; incr is also non-idempotent, so it
 * is executed once, its effect persisted, and only then answered.
 */
#ifndef OQB_KVOP_H
#define OQB_KVOP_H

enum kv_op {
	KV_OP_NOP = 0,
	KV_OP_GET = 1,
	KV_OP_SET = 2,
	KV_OP_DEL = 3,
	KV_OP_INCR = 4,     /* non-idempotent: always software-controlled */
	KV_OP_ECHO = 5,     /* returns its value (microbenchmarks) */
	KV_OP_MAX_
};

#define KV_F_NILEXT     0x1u  /* does not externalize: may commit on delivery */
#define KV_F_NONIDEMP   0x4u  /* non-idempotent: execute, persist index, respond */

enum kv_status {
	KV_OK = 0,
	KV_NOT_FOUND = 1,
	KV_ERR_BAD = 2,         /* malformed request (rejected by wire_check) */
	KV_ERR_NOSPACE = 3,     /* backend full, or value larger than the room for it */
	KV_ERR_OP = 4,          /* unsupported op for this backend */
};

#define KV_MAX_KEY      250u          /* memcached's limit */
#define KV_MAX_VALUE    (1u << 20)

/* Name of an op ("get", ...) or "?"; kv_op_from_name returns -1 if unknown
 * (case-insensitive). */
const char *kv_op_name(unsigned op);
int kv_op_from_name(const char *name);

/* Name of a status ("ok", "not_found", ...) or "?". */
const char *kv_status_name(unsigned status);

#endif
