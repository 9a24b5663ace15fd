/*
 * fuzz_trace.c - the Twitter trace reader (workloads/trace.c), plain and
 * zstd.
 *
 * Input: the bytes of a trace file (a zstd frame when it starts with the
 * zstd magic), read through a memfd path three ways: strict (trace_next
 * until the first error), skipping malformed lines (trace_next_line), and
 * after trace_rewind with trace_skip.  At most FUZZ_TRACE_LINES lines per
 * pass, so a small zstd input that inflates to gigabytes stays a short
 * run.  Properties: every record has a key of 1..TRACE_MAX_KEY bytes,
 * NUL-terminated, and a known op; a failure has a message naming the file;
 * line numbers never go back; the strict pass and the skipping pass agree
 * on the first record; a rewind gives the same first record again.
 */
#include <string.h>
#include <unistd.h>

#include "trace.h"
#include "fuzz.h"

#define FUZZ_TRACE_LINES 20000

static void check_rec(const struct trace_rec *r)
{
	FUZZ_ASSERT(r->key_len >= 1 && r->key_len <= TRACE_MAX_KEY, "key_len %u", r->key_len);
	FUZZ_ASSERT(r->key[r->key_len] == '\0', "key not terminated");
	FUZZ_ASSERT((unsigned)r->op < TRACE_NOPS, "op %d", (int)r->op);
	FUZZ_ASSERT(trace_op_kv(r->op, NULL) < KV_OP_MAX_, "kv op");
}

/* One pass; returns the number of records and copies the first to *first. */
static int pass(const char *path, int skip, struct trace_rec *first, int *got_first)
{
	static struct trace_rec r;
	char err[1024];
	struct trace_reader *t;
	uint64_t last_line = 0;
	int n = 0, k;

	*got_first = 0;
	t = trace_open(path, skip, err, sizeof err);
	if (!t) {
		fuzz_check_msg(err, sizeof err);
		return -1;
	}
	for (int i = 0; i < FUZZ_TRACE_LINES; i++) {
		err[0] = '\0';
		k = skip ? trace_next_line(t, &r, err, sizeof err) : trace_next(t, &r, err, sizeof err);
		FUZZ_ASSERT(trace_line(t) >= last_line, "line went back from %llu to %llu",
			    (unsigned long long)last_line, (unsigned long long)trace_line(t));
		last_line = trace_line(t);
		if (k < 0) {
			fuzz_check_msg(err, sizeof err);
			FUZZ_ASSERT(strstr(err, path) != NULL, "message does not name the file: %s", err);
			break;
		}
		if (k == 0)
			break;
		if (k == 2) {
			FUZZ_ASSERT(skip, "skipped a line in strict mode");
			FUZZ_ASSERT(trace_first_skip(t)[0] != '\0', "skip without a first message");
			continue;
		}
		check_rec(&r);
		if (!*got_first) {
			*first = r;
			*got_first = 1;
		}
		n++;
	}
	if (skip && *got_first) {
		/* Rewind: the same file gives the same first record. */
		err[0] = '\0';
		if (trace_rewind(t, err, sizeof err) == 0) {
			k = trace_next(t, &r, err, sizeof err);
			FUZZ_ASSERT(k == 1 && r.key_len == first->key_len &&
				    memcmp(r.key, first->key, r.key_len) == 0 && r.ts == first->ts,
				    "first record differs after rewind");
			FUZZ_ASSERT(trace_rewind(t, err, sizeof err) == 0, "second rewind: %s", err);
			(void)trace_skip(t, FUZZ_TRACE_LINES, err, sizeof err);
		} else {
			fuzz_check_msg(err, sizeof err);
		}
	}
	trace_close(t);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct trace_rec a, b;
	char path[64];
	int fd = fuzz_memfd(data, size, path, sizeof path), ga, gb;

	if (fd < 0)
		return 0;
	pass(path, 0, &a, &ga);
	pass(path, 1, &b, &gb);
	/* A strict pass that read a record read the file's first good line,
	 * and so does the skipping pass, as long as no line before it broke. */
	if (ga && gb)
		FUZZ_ASSERT(a.ts == b.ts && a.key_len == b.key_len && memcmp(a.key, b.key, a.key_len) == 0,
			    "strict and skipping passes disagree on the first record");
	close(fd);
	return 0;
}
