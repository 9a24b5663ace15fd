/*
 * trace.h - streaming reader of the public Twitter cache-trace format.
 *
 * One request per line, seven comma-separated fields:
 *   timestamp,anonymized key,key size,value size,client id,operation,TTL
 * (timestamp in whole seconds, sizes in bytes, TTL in seconds and 0 for
 * non-writes; operation one of get gets set add replace cas append prepend
 * delete incr decr).  Files are plain text or zstd-compressed; the reader
 * tells them apart by the zstd magic bytes (28 B5 2F FD), never by name,
 * and decompresses with fixed buffers, so memory does not grow with the
 * file.  The key is everything between the first and the fifth-from-last
 * comma, so a key that contains commas still parses.
 */
#ifndef OQB_TRACE_H
#define OQB_TRACE_H

#include <stdint.h>
#include <stddef.h>
#include "kvop.h"

enum trace_op {
	TRACE_GET, TRACE_GETS, TRACE_SET, TRACE_ADD, TRACE_REPLACE, TRACE_CAS,
	TRACE_APPEND, TRACE_PREPEND, TRACE_DELETE, TRACE_INCR, TRACE_DECR,
	TRACE_NOPS
};

#define TRACE_MAX_KEY KV_MAX_KEY
/* Longest line the reader accepts (bytes, without the newline). */
#define TRACE_LINE_MAX 65536

struct trace_rec {
	uint64_t ts;              /* seconds */
	uint64_t client;
	uint32_t key_size;        /* the key-size field (bytes) */
	uint32_t value_size;
	uint32_t ttl;
	enum trace_op op;
	uint16_t key_len;         /* bytes of the anonymized key in key[] */
	char key[TRACE_MAX_KEY + 1];
};

struct trace_reader;

/*
 * Opens path for reading.  skip_malformed: skip (and count) lines that do
 * not parse instead of failing.  Returns the reader, or NULL with a message
 * naming the file in err.
 */
struct trace_reader *trace_open(const char *path, int skip_malformed, char *err, size_t errlen);

/*
 * What a malformed-line error suggests, e.g. "use skip_malformed to skip
 * such lines" (the default) or "pass --skip-malformed to skip them".
 */
void trace_set_hint(struct trace_reader *t, const char *hint);

/*
 * Next request.  Returns 1 and fills *r, 0 at the end of the file, or -1
 * with "PATH:LINE: what is wrong; <hint>" in err (malformed line, read or
 * decompression error, truncated zstd stream).  Empty lines are ignored.
 */
int trace_next(struct trace_reader *t, struct trace_rec *r, char *err, size_t errlen);

/*
 * Like trace_next but consumes exactly one non-empty line: returns 2 if it
 * was malformed and skipped (skip_malformed), so callers that take every
 * N-th line keep their stride.
 */
int trace_next_line(struct trace_reader *t, struct trace_rec *r, char *err, size_t errlen);

/*
 * Skips up to n lines without parsing them (empty lines do not count).
 * Returns the number skipped (< n only at the end of the file), or -1.
 */
int64_t trace_skip(struct trace_reader *t, uint64_t n, char *err, size_t errlen);

/* Back to the first line (the file must be seekable).  Returns 0 or -1. */
int trace_rewind(struct trace_reader *t, char *err, size_t errlen);

uint64_t trace_line(const struct trace_reader *t);      /* last line read (1-based) */
uint64_t trace_skipped(const struct trace_reader *t);   /* malformed lines skipped */
/* First skipped line's problem ("PATH:LINE: ..."), or "" if none. */
const char *trace_first_skip(const struct trace_reader *t);
int trace_is_zstd(const struct trace_reader *t);
const char *trace_path(const struct trace_reader *t);
void trace_close(struct trace_reader *t);

/*
 * Parses one line (without its newline) into *r.  Returns 0, or -1 with
 * what is wrong in why (no file or line prefix).
 */
int trace_parse_line(const char *line, size_t len, struct trace_rec *r, char *why, size_t whylen);

/* "get", "set", ...; trace_op_parse returns -1 for an unknown name. */
const char *trace_op_name(enum trace_op op);
int trace_op_parse(const char *s, size_t n);

/*
 * How a trace op is sent (see docs/workloads.md for the reasoning):
 *   get gets                         GET   externalizes
 *   set                              SET   nilext
 *   add replace cas append prepend   SET   externalizes (conditional reply)
 *   delete                           DEL   nilext
 *   incr decr                        INCR  externalizes, non-idempotent
 * trace_op_kv returns the KV op (kvop.h) and stores the KV_F_* flags in *flags.
 */
unsigned trace_op_kv(enum trace_op op, unsigned *flags);

/* 1 if the op is nilext under the table above (set, delete). */
int trace_op_nilext(enum trace_op op);

#endif
