/*
 * fuzz_history.c - the history readers of `oqb check`: the binary history
 * file (lib/history.c: history_read, over a buffer) and the text form of
 * golden histories (harness/check/check_text.c: check_text_parse).
 *
 * Input: the bytes of a history file; the same bytes, NUL-terminated,
 * as a text history.  Properties: a failure has a message and hands out
 * no records; an accepted binary file has exactly (len - header) / record
 * size records, each of which encodes and decodes back to itself
 * (history_encode / history_decode).
 */
#include <string.h>

#include "check.h"
#include "history.h"
#include "fuzz.h"

static int same_op(const struct history_op *a, const struct history_op *b)
{
	return a->t_inv == b->t_inv && a->t_ret == b->t_ret && a->key_hash == b->key_hash &&
	       a->seq == b->seq && a->client == b->client && a->op == b->op &&
	       a->status == b->status && a->key_len == b->key_len && a->wkind == b->wkind &&
	       a->rkind == b->rkind && a->arg == b->arg && a->rseq == b->rseq &&
	       a->rclient == b->rclient && a->val_len == b->val_len && a->rval == b->rval &&
	       memcmp(a->key, b->key, sizeof a->key) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct history_header h;
	struct history_op *ops = NULL, back;
	uint8_t rec[HISTORY_REC_SIZE];
	size_t n = 99;
	char err[1024], *text;
	int expect;

	err[0] = '\0';
	if (history_read(data, size, "fuzz.hist", &h, &ops, &n, err, sizeof err) != 0) {
		fuzz_check_msg(err, sizeof err);
		FUZZ_ASSERT(ops == NULL && n == 0, "failed read handed out %zu records", n);
	} else {
		FUZZ_ASSERT(h.record_size >= HISTORY_REC_SIZE, "record size %u", h.record_size);
		FUZZ_ASSERT(n == (size - HISTORY_HDR_SIZE) / h.record_size, "%zu records", n);
		for (size_t i = 0; i < n; i++) {
			history_encode(rec, &ops[i]);
			history_decode(rec, &back);
			FUZZ_ASSERT(same_op(&ops[i], &back), "record %zu changes when re-encoded", i);
		}
		free(ops);
	}

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ops = NULL;
	n = 0;
	err[0] = '\0';
	if (check_text_parse(text, "fuzz.txt", &ops, &n, &expect, err, sizeof err) != 0)
		fuzz_check_msg(err, sizeof err);
	free(ops);
	free(text);
	return 0;
}
