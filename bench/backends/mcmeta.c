/*
 * mcmeta.c - memcached's meta text protocol: encoders, key check, reply
 * parser (the contract and the grammar are in mcmeta.h).
 */
#include <stdio.h>
#include <string.h>

#include "mcmeta.h"

static const char *const kind_names[MCM_KIND_MAX_] = {
	[MCM_NONE] = "none", [MCM_HD] = "HD", [MCM_VA] = "VA", [MCM_EN] = "EN",
	[MCM_NF] = "NF", [MCM_NS] = "NS", [MCM_EX] = "EX", [MCM_MN] = "MN",
	[MCM_CLIENT_ERROR] = "CLIENT_ERROR", [MCM_SERVER_ERROR] = "SERVER_ERROR",
	[MCM_ERROR] = "ERROR", [MCM_VERSION] = "VERSION", [MCM_STAT] = "STAT", [MCM_END] = "END",
};

const char *mcm_kind_name(enum mcm_kind k)
{
	return (unsigned)k < MCM_KIND_MAX_ ? kind_names[k] : "?";
}

const char *mcm_key_check(const uint8_t *key, size_t klen)
{
	if (klen == 0)
		return "the key is empty";
	if (klen > MCM_KEY_MAX)
		return "the key is longer than memcached's 250 bytes";
	for (size_t i = 0; i < klen; i++)
		if (key[i] <= 0x20 || key[i] == 0x7f)
			return "the key holds a space or control byte, which memcached's text protocol cannot carry";
	return NULL;
}

/* ---- encoders ---- */

struct out {
	char *p;
	size_t n, cap;
	int full;
};

static void put(struct out *o, const void *s, size_t n)
{
	if (o->full || o->cap - o->n < n) {
		o->full = 1;
		return;
	}
	memcpy(o->p + o->n, s, n);
	o->n += n;
}

static void put_u64(struct out *o, uint64_t v)
{
	char d[20];
	size_t n = 0;
	do {
		d[sizeof d - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(o, d + sizeof d - n, n);
}

static size_t finish(struct out *o, uint64_t opaque)
{
	if (opaque) {
		put(o, " O", 2);
		put_u64(o, opaque);
	}
	put(o, "\r\n", 2);
	return o->full ? 0 : o->n;
}

static int start(struct out *o, const char *cmd, char *buf, size_t cap, const uint8_t *key, size_t klen)
{
	o->p = buf;
	o->n = 0;
	o->cap = cap;
	o->full = 0;
	if (mcm_key_check(key, klen))
		return -1;
	put(o, cmd, 3);
	put(o, key, klen);
	return 0;
}

size_t mcm_enc_set(char *buf, size_t cap, const uint8_t *key, size_t klen, uint32_t val_len,
		   int quiet, uint64_t opaque)
{
	struct out o;
	if (start(&o, "ms ", buf, cap, key, klen) != 0)
		return 0;
	put(&o, " ", 1);
	put_u64(&o, val_len);
	if (quiet)
		put(&o, " q", 2);
	return finish(&o, opaque);
}

size_t mcm_enc_del(char *buf, size_t cap, const uint8_t *key, size_t klen, int quiet, uint64_t opaque)
{
	struct out o;
	if (start(&o, "md ", buf, cap, key, klen) != 0)
		return 0;
	if (quiet)
		put(&o, " q", 2);
	return finish(&o, opaque);
}

size_t mcm_enc_get(char *buf, size_t cap, const uint8_t *key, size_t klen, uint64_t opaque)
{
	struct out o;
	if (start(&o, "mg ", buf, cap, key, klen) != 0)
		return 0;
	put(&o, " v", 2);
	return finish(&o, opaque);
}

size_t mcm_enc_incr(char *buf, size_t cap, const uint8_t *key, size_t klen, uint64_t delta, uint64_t opaque)
{
	struct out o;
	if (start(&o, "ma ", buf, cap, key, klen) != 0)
		return 0;
	put(&o, " v D", 4);
	put_u64(&o, delta);
	return finish(&o, opaque);
}

size_t mcm_enc_noop(char *buf, size_t cap)
{
	if (cap < 4)
		return 0;
	memcpy(buf, "mn\r\n", 4);
	return 4;
}

/* ---- the reply parser ---- */

#define BAD(...) do { snprintf(why, cap, __VA_ARGS__); return -1; } while (0)

/* Plain decimal, 1..10 digits, at most max.  0, or -1 if not a number. */
static int parse_u32(const char *s, size_t n, uint32_t max, uint32_t *v)
{
	uint64_t x = 0;
	if (n == 0 || n > 10)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	if (x > max)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/* The next space-separated token of line[*pos..n): its start and length;
 * 0 at the end of the line, -1 for an empty token (two spaces, or a space
 * at the end). */
static int next_token(const char *line, size_t n, size_t *pos, const char **tok, size_t *tlen)
{
	size_t p = *pos;
	if (p >= n)
		return 0;
	if (line[p] != ' ')
		return -1;
	p++;
	size_t s = p;
	while (p < n && line[p] != ' ')
		p++;
	if (p == s)
		return -1;
	*tok = line + s;
	*tlen = p - s;
	*pos = p;
	return 1;
}

/* The flags of HD, VA, EN, NF, NS, EX: tokens of a letter and an
 * argument; O's argument is kept, the others' are not looked at. */
static int parse_flags(const char *line, size_t n, size_t pos, struct mcm_reply *r, char *why, size_t cap)
{
	const char *t;
	size_t tl;
	int k;
	while ((k = next_token(line, n, &pos, &t, &tl)) > 0) {
		if (!((t[0] >= 'a' && t[0] <= 'z') || (t[0] >= 'A' && t[0] <= 'Z')))
			BAD("%s reply: flag \"%.*s\" does not start with a letter", mcm_kind_name(r->kind),
			    (int)(tl < 40 ? tl : 40), t);
		if (t[0] == 'O') {
			if (tl - 1 > MCM_OPAQUE_MAX)
				BAD("%s reply: opaque of %zu bytes, longer than memcached's %u", mcm_kind_name(r->kind),
				    tl - 1, MCM_OPAQUE_MAX);
			memcpy(r->opaque, t + 1, tl - 1);
			r->opaque_len = (uint32_t)(tl - 1);
			r->has_opaque = 1;
		}
	}
	if (k < 0)
		BAD("%s reply: empty flag (a stray space) in \"%.*s\"", mcm_kind_name(r->kind),
		    (int)(n < 80 ? n : 80), line);
	return 0;
}

static int is_code(const char *line, size_t n, const char *code)
{
	size_t c = strlen(code);
	return n >= c && memcmp(line, code, c) == 0 && (n == c || line[c] == ' ');
}

/* The text after "CODE " (or nothing). */
static void rest(struct mcm_reply *r, const char *line, size_t n, size_t c)
{
	r->msg = n > c ? line + c + 1 : line + n;
	r->msg_len = n > c ? (uint32_t)(n - c - 1) : 0;
}

long mcm_parse(const uint8_t *buf, size_t len, struct mcm_reply *r, char *why, size_t cap)
{
	static const struct { const char *code; enum mcm_kind kind; } flagged[] = {
		{ "HD", MCM_HD }, { "EN", MCM_EN }, { "NF", MCM_NF }, { "NS", MCM_NS }, { "EX", MCM_EX },
	};
	size_t scan = len < MCM_LINE_MAX ? len : MCM_LINE_MAX;
	const uint8_t *nl = memchr(buf, '\n', scan);

	memset(r, 0, sizeof *r);
	if (!nl) {
		if (len >= MCM_LINE_MAX)
			BAD("reply line longer than %u bytes without \\r\\n", MCM_LINE_MAX);
		return 0;
	}
	size_t eol = (size_t)(nl - buf);   /* index of \n */
	if (eol == 0 || buf[eol - 1] != '\r')
		BAD("reply line ends in \\n without \\r: \"%.*s\"", (int)(eol < 80 ? eol : 80), (const char *)buf);
	const char *line = (const char *)buf;
	size_t n = eol - 1;                 /* line length without \r\n */
	for (size_t i = 0; i < n; i++)
		if ((uint8_t)line[i] < 0x20 || (uint8_t)line[i] == 0x7f)
			BAD("reply line holds control byte 0x%02x at %zu: \"%.*s\"", (uint8_t)line[i], i,
			    (int)(n < 80 ? n : 80), line);
	long used = (long)eol + 1;

	for (size_t i = 0; i < sizeof flagged / sizeof flagged[0]; i++)
		if (is_code(line, n, flagged[i].code)) {
			r->kind = flagged[i].kind;
			return parse_flags(line, n, 2, r, why, cap) ? -1 : used;
		}
	if (is_code(line, n, "VA")) {
		size_t pos = 2;
		const char *t;
		size_t tl;
		r->kind = MCM_VA;
		if (next_token(line, n, &pos, &t, &tl) != 1 || parse_u32(t, tl, MCM_VALUE_MAX, &r->val_len) != 0)
			BAD("VA reply without a valid data length (decimal, at most %u): \"%.*s\"", MCM_VALUE_MAX,
			    (int)(n < 80 ? n : 80), line);
		if (parse_flags(line, n, pos, r, why, cap))
			return -1;
		size_t need = (size_t)used + r->val_len + 2;
		if (len < need)
			return 0;
		if (buf[used + r->val_len] != '\r' || buf[used + r->val_len + 1] != '\n')
			BAD("VA %u: the data block is not followed by \\r\\n (its length does not match)", r->val_len);
		r->val = buf + used;
		return (long)need;
	}
	if (n == 2 && memcmp(line, "MN", 2) == 0) {
		r->kind = MCM_MN;
		return used;
	}
	if (n == 3 && memcmp(line, "END", 3) == 0) {
		r->kind = MCM_END;
		return used;
	}
	if (is_code(line, n, "CLIENT_ERROR")) {
		r->kind = MCM_CLIENT_ERROR;
		rest(r, line, n, 12);
		return used;
	}
	if (is_code(line, n, "SERVER_ERROR")) {
		r->kind = MCM_SERVER_ERROR;
		rest(r, line, n, 12);
		return used;
	}
	if (is_code(line, n, "ERROR")) {
		r->kind = MCM_ERROR;
		rest(r, line, n, 5);
		return used;
	}
	if (is_code(line, n, "VERSION") && n > 8) {
		r->kind = MCM_VERSION;
		rest(r, line, n, 7);
		return used;
	}
	if (is_code(line, n, "STAT")) {
		size_t pos = 4;
		const char *t;
		size_t tl;
		r->kind = MCM_STAT;
		if (next_token(line, n, &pos, &t, &tl) != 1 || pos >= n || line[pos] != ' ')
			BAD("STAT line without a name and a value: \"%.*s\"", (int)(n < 80 ? n : 80), line);
		r->msg = t;
		r->msg_len = (uint32_t)tl;
		r->val = (const uint8_t *)line + pos + 1;
		r->val_len = (uint32_t)(n - pos - 1);
		return used;
	}
	BAD("unknown reply \"%.*s\"", (int)(n < 80 ? n : 80), line);
}
