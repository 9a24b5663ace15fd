/*
 * trace.c - streaming reader of Twitter cache traces (plain or zstd).
 *
 * The decompressed text goes through one fixed buffer of TRACE_LINE_MAX + 1
 * bytes; compressed input through one of ZSTD_DStreamInSize() bytes.  A
 * line is handed out as a pointer into the text buffer, so nothing is
 * copied until a field is parsed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <inttypes.h>
#include <zstd.h>

#include "trace.h"
#include "gen.h"

static const char *const trace_op_names[TRACE_NOPS] = {
	"get", "gets", "set", "add", "replace", "cas", "append", "prepend",
	"delete", "incr", "decr",
};

const char *trace_op_name(enum trace_op op)
{
	return (unsigned)op < TRACE_NOPS ? trace_op_names[op] : "?";
}

int trace_op_parse(const char *s, size_t n)
{
	for (int i = 0; i < TRACE_NOPS; i++)
		if (strlen(trace_op_names[i]) == n && memcmp(trace_op_names[i], s, n) == 0)
			return i;
	return -1;
}

unsigned trace_op_kv(enum trace_op op, unsigned *flags)
{
	unsigned w;

	switch (op) {
	case TRACE_GET:
	case TRACE_GETS:
		w = KV_OP_GET;
		break;
	case TRACE_DELETE:
		w = KV_OP_DEL;
		break;
	case TRACE_INCR:
	case TRACE_DECR:
		w = KV_OP_INCR;
		break;
	default:
		w = KV_OP_SET;
		break;
	}
	if (flags)
		*flags = trace_op_nilext(op) ? KV_F_NILEXT : gen_op_flags(w) & ~KV_F_NILEXT;
	return w;
}

int trace_op_nilext(enum trace_op op)
{
	return op == TRACE_SET || op == TRACE_DELETE;
}

/* ------------------------------------------------------------ parsing */

/* Strict unsigned decimal: digits only, no sign, no overflow. */
static int parse_u64(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return -1;
		if (v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* Quotes up to 40 bytes of a field for an error message. */
static const char *quote(const char *s, size_t n, char *buf, size_t cap)
{
	size_t j = 0;

	for (size_t i = 0; i < n && j + 5 < cap && i < 40; i++)
		buf[j++] = (s[i] >= 32 && s[i] < 127) ? s[i] : '?';
	if (n > 40 && j + 4 < cap) {
		memcpy(buf + j, "...", 3);
		j += 3;
	}
	buf[j] = '\0';
	return buf;
}

int trace_parse_line(const char *line, size_t len, struct trace_rec *r, char *why, size_t whylen)
{
	const char *f[7];
	size_t fl[7];
	const char *c1, *p;
	size_t ncomma = 0;
	char q[64];
	uint64_t v;
	int op;

	for (size_t i = 0; i < len; i++)
		ncomma += line[i] == ',';
	if (ncomma < 6) {
		snprintf(why, whylen, "%zu fields, expected 7 (timestamp,key,key size,value size,"
			 "client id,operation,TTL)", ncomma + 1);
		return -1;
	}
	/* The first field ends at the first comma; the last five start after
	 * the last five commas; the key is what lies between. */
	c1 = memchr(line, ',', len);
	f[0] = line;
	fl[0] = (size_t)(c1 - line);
	p = line + len;
	for (int k = 6; k >= 2; k--) {
		const char *e = p;
		while (p > c1 && p[-1] != ',')
			p--;
		f[k] = p;
		fl[k] = (size_t)(e - p);
		p--;    /* the comma */
	}
	f[1] = c1 + 1;
	fl[1] = (size_t)(p - f[1]);

	if (parse_u64(f[0], fl[0], UINT64_MAX, &r->ts) < 0) {
		snprintf(why, whylen, "timestamp \"%s\" is not a whole number of seconds",
			 quote(f[0], fl[0], q, sizeof q));
		return -1;
	}
	if (fl[1] == 0) {
		snprintf(why, whylen, "the key is empty");
		return -1;
	}
	if (fl[1] > TRACE_MAX_KEY) {
		snprintf(why, whylen, "the key is %zu bytes, longer than %u", fl[1], TRACE_MAX_KEY);
		return -1;
	}
	if (parse_u64(f[2], fl[2], UINT32_MAX, &v) < 0) {
		snprintf(why, whylen, "key size \"%s\" is not a byte count (0 to %" PRIu32 ")",
			 quote(f[2], fl[2], q, sizeof q), UINT32_MAX);
		return -1;
	}
	r->key_size = (uint32_t)v;
	if (parse_u64(f[3], fl[3], UINT32_MAX, &v) < 0) {
		snprintf(why, whylen, "value size \"%s\" is not a byte count (0 to %" PRIu32 ")",
			 quote(f[3], fl[3], q, sizeof q), UINT32_MAX);
		return -1;
	}
	r->value_size = (uint32_t)v;
	if (parse_u64(f[4], fl[4], UINT64_MAX, &r->client) < 0) {
		snprintf(why, whylen, "client id \"%s\" is not a non-negative integer",
			 quote(f[4], fl[4], q, sizeof q));
		return -1;
	}
	op = trace_op_parse(f[5], fl[5]);
	if (op < 0) {
		snprintf(why, whylen, "unknown operation \"%s\" (expected get, gets, set, add, replace, "
			 "cas, append, prepend, delete, incr or decr)", quote(f[5], fl[5], q, sizeof q));
		return -1;
	}
	r->op = (enum trace_op)op;
	if (parse_u64(f[6], fl[6], UINT32_MAX, &v) < 0) {
		snprintf(why, whylen, "TTL \"%s\" is not a whole number of seconds (0 to %" PRIu32 ")",
			 quote(f[6], fl[6], q, sizeof q), UINT32_MAX);
		return -1;
	}
	r->ttl = (uint32_t)v;
	memcpy(r->key, f[1], fl[1]);
	r->key[fl[1]] = '\0';
	r->key_len = (uint16_t)fl[1];
	return 0;
}

/* ------------------------------------------------------------ reading */

struct trace_reader {
	FILE *f;
	char *path;
	const char *hint;
	int skip_malformed;
	int zstd;
	ZSTD_DStream *ds;
	unsigned char *in;        /* compressed input */
	size_t in_cap;
	ZSTD_inBuffer zin;
	int frame_done;           /* the last zstd frame ended cleanly */
	char *buf;                /* text: [pos, end) not yet consumed */
	size_t cap, pos, end;
	int src_eof;              /* no more text will come */
	uint64_t line;
	uint64_t skipped;
	char first_skip[256];
};

static const unsigned char zstd_magic[4] = { 0x28, 0xB5, 0x2F, 0xFD };

/* Reads the first bytes and decides plain or zstd. */
static int trace_start(struct trace_reader *t, char *err, size_t errlen)
{
	unsigned char head[4];
	size_t n = fread(head, 1, sizeof head, t->f);

	if (n < sizeof head && ferror(t->f)) {
		snprintf(err, errlen, "%s: cannot read: %s", t->path, strerror(errno));
		return -1;
	}
	t->pos = t->end = 0;
	t->src_eof = 0;
	t->line = 0;
	t->frame_done = 1;
	t->zstd = n == sizeof head && memcmp(head, zstd_magic, sizeof head) == 0;
	if (t->zstd) {
		if (!t->ds) {
			t->ds = ZSTD_createDStream();
			t->in_cap = ZSTD_DStreamInSize();
			t->in = malloc(t->in_cap);
			if (!t->ds || !t->in) {
				snprintf(err, errlen, "%s: out of memory for the zstd decoder", t->path);
				return -1;
			}
		}
		ZSTD_initDStream(t->ds);
		memcpy(t->in, head, n);
		t->zin.src = t->in;
		t->zin.size = n;
		t->zin.pos = 0;
		t->frame_done = 0;
	} else {
		memcpy(t->buf, head, n);
		t->end = n;
	}
	return 0;
}

struct trace_reader *trace_open(const char *path, int skip_malformed, char *err, size_t errlen)
{
	struct trace_reader *t = calloc(1, sizeof *t);

	if (!t) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	t->path = strdup(path);
	t->cap = TRACE_LINE_MAX + 1;
	t->buf = malloc(t->cap);
	t->skip_malformed = skip_malformed;
	t->hint = "use skip_malformed to skip such lines";
	if (!t->path || !t->buf) {
		snprintf(err, errlen, "%s: out of memory", path);
		trace_close(t);
		return NULL;
	}
	t->f = fopen(path, "rb");
	if (!t->f) {
		snprintf(err, errlen, "%s: cannot open trace: %s", path, strerror(errno));
		trace_close(t);
		return NULL;
	}
	if (trace_start(t, err, errlen) < 0) {
		trace_close(t);
		return NULL;
	}
	return t;
}

void trace_set_hint(struct trace_reader *t, const char *hint)
{
	t->hint = hint;
}

int trace_rewind(struct trace_reader *t, char *err, size_t errlen)
{
	if (fseek(t->f, 0, SEEK_SET) != 0) {
		snprintf(err, errlen, "%s: cannot rewind (%s); loop needs a regular file",
			 t->path, strerror(errno));
		return -1;
	}
	clearerr(t->f);
	return trace_start(t, err, errlen);
}

/* Appends more text after buf[end]; sets src_eof when there is none. */
static int trace_fill(struct trace_reader *t, char *err, size_t errlen)
{
	if (t->pos > 0) {
		memmove(t->buf, t->buf + t->pos, t->end - t->pos);
		t->end -= t->pos;
		t->pos = 0;
	}
	if (!t->zstd) {
		size_t n = fread(t->buf + t->end, 1, t->cap - t->end, t->f);
		if (n == 0) {
			if (ferror(t->f)) {
				snprintf(err, errlen, "%s: read error: %s", t->path, strerror(errno));
				return -1;
			}
			t->src_eof = 1;
		}
		t->end += n;
		return 0;
	}
	for (;;) {
		ZSTD_outBuffer out = { t->buf + t->end, t->cap - t->end, 0 };
		size_t in_before = t->zin.pos;
		size_t r = ZSTD_decompressStream(t->ds, &out, &t->zin);
		size_t n;

		if (ZSTD_isError(r)) {
			snprintf(err, errlen, "%s: corrupt zstd data after line %" PRIu64 ": %s; the file "
				 "is damaged (check it with zstd -t, re-download or re-compress it)",
				 t->path, t->line, ZSTD_getErrorName(r));
			return -1;
		}
		if (r == 0)
			t->frame_done = 1;
		else if (out.pos > 0 || t->zin.pos > in_before)
			t->frame_done = 0;
		if (out.pos > 0) {
			t->end += out.pos;
			return 0;
		}
		if (t->zin.pos < t->zin.size)
			continue;
		n = fread(t->in, 1, t->in_cap, t->f);
		if (n == 0) {
			if (ferror(t->f)) {
				snprintf(err, errlen, "%s: read error: %s", t->path, strerror(errno));
				return -1;
			}
			if (!t->frame_done) {
				snprintf(err, errlen, "%s: truncated zstd stream after line %" PRIu64
					 "; the file is incomplete (re-download or re-compress it)",
					 t->path, t->line);
				return -1;
			}
			t->src_eof = 1;
			return 0;
		}
		t->zin.src = t->in;
		t->zin.size = n;
		t->zin.pos = 0;
	}
}

/*
 * Next non-empty line.  Returns 1 with *s and *n set (valid until the next
 * call), 2 for a line longer than TRACE_LINE_MAX (skipped), 0 at the end,
 * -1 on error.
 */
static int trace_raw_line(struct trace_reader *t, const char **s, size_t *n, char *err, size_t errlen)
{
	int toolong = 0;

	for (;;) {
		char *b = t->buf + t->pos;
		char *nl = memchr(b, '\n', t->end - t->pos);
		size_t len;

		if (!nl && t->src_eof && t->end > t->pos)
			nl = t->buf + t->end;    /* last line without a newline */
		if (nl) {
			len = (size_t)(nl - b);
			t->pos = nl < t->buf + t->end ? (size_t)(nl - t->buf) + 1 : t->end;
			if (toolong) {
				t->line++;
				return 2;
			}
			if (len > 0 && b[len - 1] == '\r')
				len--;
			if (len == 0) {
				t->line++;
				continue;
			}
			t->line++;
			*s = b;
			*n = len;
			return 1;
		}
		if (t->src_eof) {
			if (toolong) {
				t->line++;
				return 2;
			}
			return 0;
		}
		if (t->pos == 0 && t->end == t->cap) {
			/* No newline in a full buffer: drop it and keep looking. */
			toolong = 1;
			t->end = 0;
		}
		if (trace_fill(t, err, errlen) < 0)
			return -1;
	}
}

int trace_next_line(struct trace_reader *t, struct trace_rec *r, char *err, size_t errlen)
{
	const char *s = NULL;
	size_t n = 0;
	char why[200];
	int k = trace_raw_line(t, &s, &n, err, errlen);

	if (k <= 0)
		return k;
	if (k == 2)
		snprintf(why, sizeof why, "line longer than %u bytes", TRACE_LINE_MAX);
	else if (trace_parse_line(s, n, r, why, sizeof why) == 0)
		return 1;
	if (!t->skip_malformed) {
		snprintf(err, errlen, "%s:%" PRIu64 ": %s; %s", t->path, t->line, why, t->hint);
		return -1;
	}
	if (t->skipped++ == 0)
		snprintf(t->first_skip, sizeof t->first_skip, "%s:%" PRIu64 ": %s",
			 t->path, t->line, why);
	return 2;
}

int trace_next(struct trace_reader *t, struct trace_rec *r, char *err, size_t errlen)
{
	int k;

	while ((k = trace_next_line(t, r, err, errlen)) == 2)
		;
	return k;
}

int64_t trace_skip(struct trace_reader *t, uint64_t n, char *err, size_t errlen)
{
	uint64_t done = 0;

	while (done < n) {
		const char *s;
		size_t len;
		int k = trace_raw_line(t, &s, &len, err, errlen);

		if (k < 0)
			return -1;
		if (k == 0)
			break;
		done++;
	}
	return (int64_t)done;
}

uint64_t trace_line(const struct trace_reader *t) { return t->line; }
uint64_t trace_skipped(const struct trace_reader *t) { return t->skipped; }
const char *trace_first_skip(const struct trace_reader *t) { return t->first_skip; }
int trace_is_zstd(const struct trace_reader *t) { return t->zstd; }
const char *trace_path(const struct trace_reader *t) { return t->path; }

void trace_close(struct trace_reader *t)
{
	if (!t)
		return;
	if (t->f)
		fclose(t->f);
	if (t->ds)
		ZSTD_freeDStream(t->ds);
	free(t->in);
	free(t->buf);
	free(t->path);
	free(t);
}
