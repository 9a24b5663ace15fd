/*
 * history.c - the history file format (history.h): encoding, the
 * append-only writer and the validating reader.
 *
 * The reader is written for hostile input (it is fuzzed): every length is
 * checked against the buffer before it is read, and every field that the
 * checker relies on is range-checked, so a corrupt file gives a message
 * with its byte offset, never a wrong verdict.  tests/unit/test_history.c
 * round-trips records and feeds truncated and corrupted files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bits.h"
#include "history.h"
#include "kvop.h"

/* 8 bytes per multiply (a byte-at-a-time FNV-1a took about 200 cycles for
 * a 44 B key, on every recorded op), then a full avalanche. */
uint64_t history_key_hash(const void *key, size_t len)
{
	const uint8_t *k = key;
	uint64_t h = 0xcbf29ce484222325ull ^ len;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, k + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 32;
	}
	uint64_t t = 0;
	if (i < len && len >= 8) {
		memcpy(&t, k + len - 8, 8);   /* the last 8 bytes, overlapping */
	} else {
		for (size_t j = 0; i + j < len; j++)
			t |= (uint64_t)k[i + j] << (8 * j);
	}
	return mix64(h ^ mix64(t + len));
}

int history_key_sampled(uint64_t key_hash, double fraction)
{
	if (fraction >= 1.0)
		return 1;
	/* A second mix so the sample does not follow the worker partition. */
	double u = (double)(mix64(key_hash ^ 0x5a3c) >> 11) * (1.0 / 9007199254740992.0);
	return u < fraction;
}

/* Four lanes of (x ^ word) * K, x ^= x >> 32 over 32-byte blocks (they
 * run in parallel on one core), then the remaining words and bytes. */
static uint64_t lanes(const uint8_t *p, size_t n, uint64_t seed)
{
	const uint64_t k = 0xff51afd7ed558ccdull;
	uint64_t a = seed, b = seed ^ 0x9e3779b97f4a7c15ull, c = seed ^ 0xc2b2ae3d27d4eb4full,
		 d = seed ^ 0x165667b19e3779f9ull;
	size_t i = 0;
	for (; i + 32 <= n; i += 32) {
		uint64_t w[4];
		memcpy(w, p + i, 32);
		a = (a ^ w[0]) * k;
		b = (b ^ w[1]) * k;
		c = (c ^ w[2]) * k;
		d = (d ^ w[3]) * k;
		a ^= a >> 32;
		b ^= b >> 32;
		c ^= c >> 32;
		d ^= d >> 32;
	}
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		a = (a ^ w) * k;
		a ^= a >> 32;
	}
	uint64_t t = 0;
	for (size_t j = 0; i + j < n; j++)
		t |= (uint64_t)p[i + j] << (8 * j);
	return mix64(a ^ t) ^ mix64(b + 1) ^ mix64(c + 2) * 3 ^
	       mix64(d + 3) * 5;
}

uint64_t history_digest_tail(const void *rest, size_t n)
{
	return lanes(rest, n, 0x2545f4914f6cdd1dull ^ n);
}

uint64_t history_digest_join(const uint8_t *head16, uint64_t tail, size_t len)
{
	uint64_t h = mix64(get64(head16) ^ len);
	h = mix64(h ^ get64(head16 + 8));
	return mix64(h ^ tail);
}

uint64_t history_digest(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	if (len >= HISTORY_TAG_SIZE)
		return history_digest_join(p, history_digest_tail(p + HISTORY_TAG_SIZE,
								  len - HISTORY_TAG_SIZE), len);
	return mix64(lanes(p, len, 0x9e3779b97f4a7c15ull ^ len));
}

void history_tag_put(uint8_t *dst, uint32_t client, uint64_t seq)
{
	put32(dst, HISTORY_TAG_MAGIC);
	put32(dst + 4, client);
	put64(dst + 8, seq);
}

enum history_vkind history_value_kind(const uint8_t *v, size_t len, uint32_t *client,
				      uint64_t *seq, uint64_t *num)
{
	*client = 0;
	*seq = 0;
	if (len >= HISTORY_TAG_SIZE && get32(v) == HISTORY_TAG_MAGIC) {
		*client = get32(v + 4);
		*seq = get64(v + 8);
		*num = history_digest(v, len);
		return HV_TAG;
	}
	if (len >= 1 && len <= 20) {
		uint64_t x = 0;
		size_t i;
		for (i = 0; i < len; i++) {
			unsigned d = (unsigned)(v[i] - '0');
			if (d > 9 || x > (UINT64_MAX - d) / 10)
				break;
			x = x * 10 + d;
		}
		if (i == len) {
			*num = x;
			return HV_NUM;
		}
	}
	*num = history_digest(v, len);
	return HV_DIGEST;
}

void history_encode(uint8_t *d, const struct history_op *o)
{
	put64(d, o->t_inv);
	put64(d + 8, o->t_ret);
	put64(d + 16, o->key_hash);
	put64(d + 24, o->seq);
	put32(d + 32, o->client);
	d[36] = o->op;
	d[37] = o->status;
	d[38] = o->key_len;
	d[39] = (uint8_t)((o->wkind & 3) | (o->rkind & 3) << 2 | (o->dflags & 3) << 4);
	put64(d + 40, o->arg);
	put64(d + 48, o->rseq);
	put32(d + 56, o->rclient);
	put32(d + 60, o->val_len);
	put64(d + 64, o->rval);
	memcpy(d + 72, o->key, HISTORY_KEY_SHOWN);
	memset(d + 88, 0, 8);
}

void history_decode(const uint8_t *s, struct history_op *o)
{
	o->t_inv = get64(s);
	o->t_ret = get64(s + 8);
	o->key_hash = get64(s + 16);
	o->seq = get64(s + 24);
	o->client = get32(s + 32);
	o->op = s[36];
	o->status = s[37];
	o->key_len = s[38];
	o->wkind = s[39] & 3;
	o->rkind = (s[39] >> 2) & 3;
	o->dflags = (s[39] >> 4) & 3;
	o->arg = get64(s + 40);
	o->rseq = get64(s + 48);
	o->rclient = get32(s + 56);
	o->val_len = get32(s + 60);
	o->rval = get64(s + 64);
	memcpy(o->key, s + 72, HISTORY_KEY_SHOWN);
}

void history_encode_header(uint8_t *d, const struct history_header *h)
{
	union { double d; uint64_t u; } f = { .d = h->key_fraction };
	memset(d, 0, HISTORY_HDR_SIZE);
	memcpy(d, HISTORY_MAGIC, 8);
	put16(d + 8, HISTORY_VERSION);
	put16(d + 10, HISTORY_HDR_SIZE);
	put16(d + 12, HISTORY_REC_SIZE);
	put16(d + 14, h->clock_kind);
	put64(d + 16, h->clock_bound_ns);
	put32(d + 24, h->client_id);
	put32(d + 28, h->flags);
	put64(d + 32, f.u);
	memcpy(d + 40, h->host, strnlen(h->host, 64));
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t k = write(fd, p, len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

int history_writer_open(struct history_writer *w, const char *path,
			const struct history_header *h, size_t cap, char *err, size_t errlen)
{
	memset(w, 0, sizeof *w);
	w->fd = -1;
	snprintf(w->path, sizeof w->path, "%s", path);
	if (cap < HISTORY_HDR_SIZE + HISTORY_REC_SIZE)
		cap = HISTORY_HDR_SIZE + HISTORY_REC_SIZE;
	w->buf = malloc(cap);
	if (!w->buf) {
		snprintf(err, errlen, "history %s: out of memory for a %zu B buffer", path, cap);
		return -1;
	}
	w->cap = cap;
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		snprintf(err, errlen, "history %s: cannot create: %s (is the history directory "
			 "writable?)", path, strerror(errno));
		free(w->buf);
		w->buf = NULL;
		return -1;
	}
	history_encode_header(w->buf, h);
	w->len = HISTORY_HDR_SIZE;
	return 0;
}

static void writer_flush(struct history_writer *w)
{
	if (w->failed || !w->len)
		return;
	if (write_all(w->fd, w->buf, w->len) != 0) {
		snprintf(w->err, sizeof w->err, "history %s: write failed after %llu records: %s",
			 w->path, (unsigned long long)w->records, strerror(errno));
		w->failed = 1;
	}
	w->len = 0;
}

void history_writer_add(struct history_writer *w, const struct history_op *op)
{
	if (w->failed || !w->buf)
		return;
	if (w->len + HISTORY_REC_SIZE > w->cap)
		writer_flush(w);
	history_encode(w->buf + w->len, op);
	w->len += HISTORY_REC_SIZE;
	w->records++;
}

int history_writer_close(struct history_writer *w, char *err, size_t errlen)
{
	int rc = 0;
	if (w->fd >= 0) {
		writer_flush(w);
		if (close(w->fd) != 0 && !w->failed) {
			snprintf(w->err, sizeof w->err, "history %s: close: %s", w->path, strerror(errno));
			w->failed = 1;
		}
		w->fd = -1;
	}
	if (w->failed) {
		snprintf(err, errlen, "%s", w->err);
		rc = -1;
	}
	free(w->buf);
	w->buf = NULL;
	return rc;
}

static int rec_check(const struct history_op *o, char *why, size_t len)
{
	if (o->op >= KV_OP_MAX_)
		snprintf(why, len, "op %u is not a known op", o->op);
	else if (o->status > KV_ERR_OP && o->status != HISTORY_ST_UNKNOWN && o->status != HISTORY_ST_UNSEEN)
		snprintf(why, len, "status %u is not a known status", o->status);
	else if (o->key_len > KV_MAX_KEY)
		snprintf(why, len, "key_len %u exceeds %u", o->key_len, KV_MAX_KEY);
	else if (o->t_ret != HISTORY_T_UNKNOWN && o->t_ret < o->t_inv)
		snprintf(why, len, "returns (%llu ns) before it was invoked (%llu ns)",
			 (unsigned long long)o->t_ret, (unsigned long long)o->t_inv);
	else if ((o->t_ret == HISTORY_T_UNKNOWN) != (o->status == HISTORY_ST_UNKNOWN))
		snprintf(why, len, "return time and status disagree on whether it committed");
	else if (o->wkind != HV_NONE && o->op != KV_OP_SET)
		snprintf(why, len, "a %s carries a written value", kv_op_name(o->op));
	else if (o->op == KV_OP_SET && o->wkind == HV_NONE)
		snprintf(why, len, "a set without a written value kind");
	else if ((o->dflags & HISTORY_D_WRITTEN) && (o->op != KV_OP_SET || o->wkind != HV_TAG))
		snprintf(why, len, "a written digest on an op that is not a tagged set");
	else if ((o->dflags & HISTORY_D_READ) && o->rkind != HV_TAG)
		snprintf(why, len, "a read digest on an op that returned no tagged value");
	else
		return 0;
	return -1;
}

int history_read(const void *buf, size_t len, const char *name, struct history_header *h,
		 struct history_op **ops, size_t *n, char *err, size_t errlen)
{
	const uint8_t *b = buf;
	*ops = NULL;
	*n = 0;
	if (len < HISTORY_HDR_SIZE) {
		snprintf(err, errlen, "%s: %zu bytes: shorter than a history header (%u B); "
			 "not a history file, or truncated", name, len, HISTORY_HDR_SIZE);
		return -1;
	}
	if (memcmp(b, HISTORY_MAGIC, 8) != 0) {
		snprintf(err, errlen, "%s: offset 0: bad magic (not an oqbench history file)", name);
		return -1;
	}
	memset(h, 0, sizeof *h);
	h->version = get16(b + 8);
	uint16_t hsize = get16(b + 10);
	h->record_size = get16(b + 12);
	h->clock_kind = get16(b + 14);
	h->clock_bound_ns = get64(b + 16);
	h->client_id = get32(b + 24);
	h->flags = get32(b + 28);
	union { double d; uint64_t u; } f = { .u = get64(b + 32) };
	h->key_fraction = f.d;
	memcpy(h->host, b + 40, 64);
	h->host[64] = 0;
	if (h->version != HISTORY_VERSION) {
		snprintf(err, errlen, "%s: offset 8: version %u; this oqb reads version %u "
			 "(use the oqb that recorded it)", name, h->version, HISTORY_VERSION);
		return -1;
	}
	if (hsize != HISTORY_HDR_SIZE || h->record_size < HISTORY_REC_SIZE || h->record_size > 4096) {
		snprintf(err, errlen, "%s: offset 10: header size %u / record size %u; expected %u / "
			 "%u..4096 (corrupt header)", name, hsize, h->record_size,
			 HISTORY_HDR_SIZE, HISTORY_REC_SIZE);
		return -1;
	}
	if (h->clock_kind != HISTORY_CLOCK_MONOTONIC && h->clock_kind != HISTORY_CLOCK_REALTIME) {
		snprintf(err, errlen, "%s: offset 14: clock kind %u is unknown", name, h->clock_kind);
		return -1;
	}
	if (!(h->key_fraction > 0 && h->key_fraction <= 1)) {
		snprintf(err, errlen, "%s: offset 32: key fraction %g outside (0, 1]", name, h->key_fraction);
		return -1;
	}
	size_t body = len - HISTORY_HDR_SIZE, rs = h->record_size;
	if (body % rs) {
		snprintf(err, errlen, "%s: %zu bytes after the header is not a whole number of %zu B "
			 "records: the last record (offset %zu) is truncated (did the client die while "
			 "writing?)", name, body, rs, HISTORY_HDR_SIZE + body / rs * rs);
		return -1;
	}
	size_t cnt = body / rs;
	struct history_op *o = cnt ? malloc(cnt * sizeof *o) : NULL;
	if (cnt && !o) {
		snprintf(err, errlen, "%s: out of memory for %zu records", name, cnt);
		return -1;
	}
	for (size_t i = 0; i < cnt; i++) {
		char why[160];
		size_t off = HISTORY_HDR_SIZE + i * rs;
		history_decode(b + off, &o[i]);
		if (rec_check(&o[i], why, sizeof why) != 0) {
			snprintf(err, errlen, "%s: record %zu (offset %zu): %s (corrupt file)", name, i, off, why);
			free(o);
			return -1;
		}
	}
	*ops = o;
	*n = cnt;
	return 0;
}

int history_read_file(const char *path, struct history_header *h, struct history_op **ops,
		      size_t *n, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	size_t len = (size_t)st.st_size;
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory for %zu bytes", path, len);
		close(fd);
		return -1;
	}
	size_t got = 0;
	while (got < len) {
		ssize_t k = read(fd, buf + got, len - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	int rc = history_read(buf, got, path, h, ops, n, err, errlen);
	free(buf);
	return rc;
}
