/*
 * hdrenc.c - HdrHistogram's V2 compressed encoding of struct hist, both
 * ways, and the base64 under it.  The format and what a decoded histogram
 * holds are described in hdrenc.h.
 *
 * Decoding trusts nothing: every length is checked against the bytes that
 * are really there before it is used, the inflated size is bounded by the
 * largest encoding our layout allows (40 + 9 x 31744 bytes), and every
 * counter index is checked before it is written, so a corrupt or hostile
 * text costs at most that much memory and is refused with a message.
 */
#include "hdrenc.h"
#include "zsplit.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define COOKIE_BASE(c)        ((c) & ~0xf0u)
#define V2_COMPRESSED_BASE    0x1c849304u
#define V2_ENCODING_BASE      0x1c849303u
#define MAX_VARINT            9
#define MAX_PAYLOAD           ((size_t)MAX_VARINT * HIST_NCOUNTS)

static void put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get_be64(const uint8_t *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

/* ZigZag then LEB128: 7 bits a byte, low first; a 9th byte carries the last 8 bits. */
static size_t put_varint(uint8_t *p, int64_t v)
{
	uint64_t u = v < 0 ? ~((uint64_t)v << 1) : (uint64_t)v << 1;
	size_t n = 0;

	while (n < MAX_VARINT - 1 && u >= 0x80) {
		p[n++] = (uint8_t)(u & 0x7f) | 0x80;
		u >>= 7;
	}
	p[n++] = (uint8_t)u;
	return n;
}

/* One varint from p[0..len): bytes used, or 0 when it runs past len. */
static size_t get_varint(const uint8_t *p, size_t len, int64_t *v)
{
	uint64_t u = 0;
	size_t n = 0;

	for (;;) {
		if (n >= len)
			return 0;
		uint8_t b = p[n];
		if (n == MAX_VARINT - 1) {
			u |= (uint64_t)b << 56;
			n++;
			break;
		}
		u |= (uint64_t)(b & 0x7f) << (7 * n);
		n++;
		if (!(b & 0x80))
			break;
	}
	*v = (u & 1) ? (int64_t)~(u >> 1) : (int64_t)(u >> 1);
	return n;
}

/* ---- base64 -------------------------------------------------------- */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

char *hdr_b64_encode(const uint8_t *buf, size_t len)
{
	char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t w = (uint32_t)buf[i] << 16;
		if (i + 1 < len)
			w |= (uint32_t)buf[i + 1] << 8;
		if (i + 2 < len)
			w |= buf[i + 2];
		*o++ = B64[w >> 18 & 63];
		*o++ = B64[w >> 12 & 63];
		*o++ = i + 1 < len ? B64[w >> 6 & 63] : '=';
		*o++ = i + 2 < len ? B64[w & 63] : '=';
	}
	*o = 0;
	return out;
}

uint8_t *hdr_b64_decode(const char *text, size_t *len, char *err, size_t errlen)
{
	const char *s = text;
	size_t n, pad = 0, o = 0;
	uint32_t acc = 0;
	int bits = 0;

	*len = 0;
	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	while (n > 0 && s[n - 1] == '=' && pad < 2) {
		n--;
		pad++;
	}
	if ((pad && (n + pad) % 4) || n % 4 == 1) {
		snprintf(err, errlen, "base64: %zu characters%s is not a whole number of 4-character groups: the text is cut short or padded wrongly",
			 n + pad, pad ? " with padding" : "");
		return NULL;
	}
	uint8_t *out = malloc(n / 4 * 3 + 3);
	if (!out) {
		snprintf(err, errlen, "base64: out of memory for %zu characters", n);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		int v = b64_value((unsigned char)s[i]);
		if (v < 0) {
			unsigned char c = (unsigned char)s[i];
			snprintf(err, errlen, "base64: character %zu (%s%c%s, byte 0x%02x) is not in the base64 alphabet A-Z a-z 0-9 + /",
				 (size_t)(s - text) + i, isprint(c) ? "'" : "", isprint(c) ? c : '?', isprint(c) ? "'" : "", c);
			free(out);
			return NULL;
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (uint8_t)(acc >> bits);
		}
	}
	*len = o;
	return out;
}

/* ---- encoding ------------------------------------------------------ */

/*
 * src[0..len) as a zlib stream into dst (room for compressBound(len)),
 * with strategy; its length, or 0 with err.
 */
static size_t deflate_with(uint8_t *dst, const uint8_t *src, size_t len, int strategy, const char *what, char *err,
			   size_t errlen)
{
	z_stream st;
	size_t out = 0;
	int rc;

	memset(&st, 0, sizeof st);
	rc = deflateInit2(&st, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15, 8, strategy);
	if (rc == Z_OK) {
		st.next_in = (Bytef *)(uintptr_t)src;
		st.avail_in = (uInt)len;
		st.next_out = dst;
		st.avail_out = (uInt)compressBound((uLong)len);
		rc = deflate(&st, Z_FINISH);
		out = rc == Z_STREAM_END ? st.total_out : 0;
		deflateEnd(&st);
	}
	if (!out)
		snprintf(err, errlen, "%szlib deflate failed (%s)", what, zError(rc));
	return out;
}

/*
 * raw[0..len) deflated, framed as cookie, zlib length and the zlib
 * stream (all big-endian), in base64: a malloc'd string, or NULL with
 * err.  Counts are small noisy numbers with few repeats: Huffman coding
 * alone is often shorter than LZ77 with it, and shorter still in blocks
 * cut where the counts' statistics change (lib/zsplit.h: 12.9 % of the
 * quickstart run.json's encodings).  All three are tried and the
 * shortest kept; each is a plain zlib stream to every reader.
 */
static char *pack_b64(uint32_t cookie, const uint8_t *raw, size_t len, char *err, size_t errlen)
{
	const char *what = cookie == HDRENC_PART_COOKIE ? "histogram part encoding: " : "HdrHistogram encoding: ";
	size_t bound = compressBound((uLong)len), sbound = zsplit_bound(len), zlen, zh, zs;
	uint8_t *z = malloc(8 + 2 * bound + (sbound > bound ? sbound : bound));
	char *text = NULL, e[200];

	if (!z) {
		snprintf(err, errlen, "%sout of memory", what);
		return NULL;
	}
	zlen = deflate_with(z + 8, raw, len, Z_DEFAULT_STRATEGY, what, err, errlen);
	zh = zlen ? deflate_with(z + 8 + bound, raw, len, Z_HUFFMAN_ONLY, what, err, errlen) : 0;
	zs = zh ? zsplit_deflate(z + 8 + 2 * bound, raw, len, e, sizeof e) : 0;
	if (zh && !zs)
		snprintf(err, errlen, "%s%s", what, e);
	if (zlen && zh && zs) {
		if (zh < zlen) {
			memmove(z + 8, z + 8 + bound, zh);
			zlen = zh;
		}
		if (zs < zlen) {
			memmove(z + 8, z + 8 + 2 * bound, zs);
			zlen = zs;
		}
		put_be32(z, cookie);
		put_be32(z + 4, (uint32_t)zlen);
		text = hdr_b64_encode(z, 8 + zlen);
		if (!text)
			snprintf(err, errlen, "%sout of memory", what);
	}
	free(z);
	return text;
}

char *hdr_encode_b64(const struct hist *h, char *err, size_t errlen)
{
	unsigned limit = 1;     /* counters written: up to the highest non-empty one */
	uint8_t *raw = NULL;
	char *text = NULL;

	for (unsigned i = HIST_NCOUNTS; i-- > 0;) {
		if (h->counts[i]) {
			limit = i + 1;
			break;
		}
	}
	for (unsigned i = 0; i < limit; i++) {
		if (h->counts[i] > (uint64_t)INT64_MAX) {
			snprintf(err, errlen, "HdrHistogram encoding: counter %u (values %llu..%llu) holds %llu, above the format's limit 2^63 - 1",
				 i, (unsigned long long)hist_index_low(i),
				 (unsigned long long)(hist_index_low(i) + hist_index_width(i) - 1),
				 (unsigned long long)h->counts[i]);
			return NULL;
		}
	}
	raw = malloc(HDRENC_HEADER_LEN + (size_t)MAX_VARINT * limit);
	if (!raw)
		goto oom;
	size_t p = HDRENC_HEADER_LEN;
	for (unsigned i = 0; i < limit;) {
		if (h->counts[i]) {
			p += put_varint(raw + p, (int64_t)h->counts[i]);
			i++;
			continue;
		}
		unsigned run = 0;
		while (i < limit && !h->counts[i]) {
			run++;
			i++;
		}
		p += put_varint(raw + p, -(int64_t)run);
	}
	put_be32(raw, HDRENC_ENCODING_COOKIE);
	put_be32(raw + 4, (uint32_t)(p - HDRENC_HEADER_LEN));
	put_be32(raw + 8, 0);                       /* normalizing index offset */
	put_be32(raw + 12, 3);                      /* significant value digits */
	put_be64(raw + 16, 1);                      /* lowest discernible value */
	put_be64(raw + 24, HIST_MAX);               /* highest trackable value */
	double ratio = 1.0;
	uint64_t ratio_bits;
	memcpy(&ratio_bits, &ratio, sizeof ratio_bits);
	put_be64(raw + 32, ratio_bits);

	text = pack_b64(HDRENC_COMPRESSED_COOKIE, raw, p, err, errlen);
	goto out;
oom:
	snprintf(err, errlen, "HdrHistogram encoding: out of memory");
out:
	free(raw);
	return text;
}

/* ---- decoding ------------------------------------------------------ */

#define DEC "HdrHistogram text: "

/* What a cookie that is not V2 compressed is, for the error message. */
static void bad_cookie(uint32_t cookie, char *err, size_t errlen)
{
	switch (COOKIE_BASE(cookie)) {
	case V2_ENCODING_BASE:
		snprintf(err, errlen, DEC "cookie 0x%08x is HdrHistogram's uncompressed V2 encoding; expected the compressed form (cookie 0x%08x) that encodeIntoCompressedByteBuffer and histogram logs write",
			 cookie, HDRENC_COMPRESSED_COOKIE);
		return;
	case 0x1c849301u:
	case 0x1c849302u:
	case 0x1c849308u:
	case 0x1c849309u:
		snprintf(err, errlen, DEC "cookie 0x%08x is an older HdrHistogram encoding (V0 or V1); only V2 (cookie 0x%08x) is read: re-encode it with a current HdrHistogram",
			 cookie, HDRENC_COMPRESSED_COOKIE);
		return;
	}
	snprintf(err, errlen, DEC "cookie 0x%08x is not HdrHistogram's V2 compressed cookie 0x%08x: not an HdrHistogram encoding, or corrupt",
		 cookie, HDRENC_COMPRESSED_COOKIE);
}

/*
 * Inflates the zlib stream z[0..zlen) into a new buffer of at most
 * limit bytes; its length in *len.  NULL with err (prefixed with what:
 * the text being read, and naming largest: what the limit is) when the
 * stream is corrupt, cut short, too long, or followed by other bytes.
 */
static uint8_t *inflate_all(const uint8_t *z, size_t zlen, size_t limit, const char *what, const char *largest,
			    size_t *len, char *err, size_t errlen)
{
	size_t cap = limit + 1;   /* one spare byte tells "too long" */
	uint8_t *out = malloc(cap);
	z_stream st;
	int rc;

	if (!out) {
		snprintf(err, errlen, "%sout of memory inflating %zu bytes", what, zlen);
		return NULL;
	}
	memset(&st, 0, sizeof st);
	if (inflateInit(&st) != Z_OK) {
		snprintf(err, errlen, "%szlib inflateInit failed", what);
		free(out);
		return NULL;
	}
	st.next_in = (Bytef *)(uintptr_t)z;
	st.avail_in = (uInt)zlen;
	st.next_out = out;
	st.avail_out = (uInt)cap;
	rc = inflate(&st, Z_FINISH);
	*len = st.total_out;
	if (rc == Z_STREAM_END && st.avail_in == 0) {
		inflateEnd(&st);
		return out;
	}
	if (rc == Z_STREAM_END)
		snprintf(err, errlen, "%s%u bytes follow the end of the zlib stream inside its announced length: corrupt",
			 what, st.avail_in);
	else if (rc == Z_BUF_ERROR && st.avail_out == 0)
		snprintf(err, errlen, "%sthe zlib stream inflates to more than %zu bytes, %s: corrupt or not a histogram",
			 what, limit, largest);
	else if (rc == Z_BUF_ERROR)
		snprintf(err, errlen, "%sthe zlib stream ends early (after %lu of %zu bytes, %zu inflated): truncated",
			 what, st.total_in, zlen, *len);
	else
		snprintf(err, errlen, "%sthe zlib stream does not inflate (%s, at compressed byte %lu): corrupt",
			 what, st.msg ? st.msg : zError(rc), st.total_in);
	inflateEnd(&st);
	free(out);
	return NULL;
}

/* Reads the V2 counts payload p[0..plen) into h->counts and n. */
static int read_counts(const uint8_t *p, size_t plen, struct hist *h, char *err, size_t errlen)
{
	size_t pos = 0, idx = 0;
	uint64_t total = 0;

	while (pos < plen) {
		int64_t v;
		size_t used = get_varint(p + pos, plen - pos, &v);
		if (!used) {
			snprintf(err, errlen, DEC "payload byte %zu starts a count that runs past the payload's end (%zu bytes): truncated or corrupt",
				 pos, plen);
			return -1;
		}
		if (v < 0) {
			if (v == INT64_MIN || (uint64_t)-v > HIST_NCOUNTS - idx) {
				snprintf(err, errlen, DEC "payload byte %zu: a run of %llu zero counts from counter %zu reaches past the last counter %u (values up to 2^40 - 1): corrupt",
					 pos, (unsigned long long)-(uint64_t)v, idx, HIST_NCOUNTS - 1);
				return -1;
			}
			idx += (size_t)-v;
		} else {
			if (idx >= HIST_NCOUNTS) {
				snprintf(err, errlen, DEC "payload byte %zu: count %lld for counter %zu, past the last counter %u: the histogram holds values above 2^40 - 1 ns, beyond oqbench's range",
					 pos, (long long)v, idx, HIST_NCOUNTS - 1);
				return -1;
			}
			if (total + (uint64_t)v < total) {
				snprintf(err, errlen, DEC "payload byte %zu: counts add up past 2^64 - 1", pos);
				return -1;
			}
			total += (uint64_t)v;
			h->counts[idx++] = (uint64_t)v;
		}
		pos += used;
	}
	h->n = total;
	return 0;
}

/* Checks the 40-byte V2 header of the inflated encoding e[0..elen); the payload length in *plen. */
static int check_header(const uint8_t *e, size_t elen, size_t *plen, char *err, size_t errlen)
{
	if (elen < HDRENC_HEADER_LEN) {
		snprintf(err, errlen, DEC "inflates to %zu bytes, fewer than the %d-byte V2 header: truncated or not a histogram",
			 elen, HDRENC_HEADER_LEN);
		return -1;
	}
	uint32_t cookie = get_be32(e);
	if (COOKIE_BASE(cookie) != V2_ENCODING_BASE || (cookie & 0xf0u) != 0x10u) {
		snprintf(err, errlen, DEC "inner cookie 0x%08x is not the V2 encoding cookie 0x%08x (ZigZag LEB128 counts): corrupt or an unknown variant",
			 cookie, HDRENC_ENCODING_COOKIE);
		return -1;
	}
	int32_t payload = (int32_t)get_be32(e + 4);
	int32_t digits = (int32_t)get_be32(e + 12);
	int64_t lowest = (int64_t)get_be64(e + 16), highest = (int64_t)get_be64(e + 24);
	if (payload < 0 || (size_t)payload != elen - HDRENC_HEADER_LEN) {
		snprintf(err, errlen, DEC "the header's payload length is %d bytes but %zu follow it: corrupt",
			 payload, elen - HDRENC_HEADER_LEN);
		return -1;
	}
	if (digits != 3) {
		snprintf(err, errlen, DEC "the histogram has %d significant value digits; only 3 (2048 sub-buckets, oqbench's layout) can be read: record with 3 digits",
			 digits);
		return -1;
	}
	if (lowest != 1) {
		snprintf(err, errlen, DEC "lowest discernible value %lld; only 1 (unit magnitude 0: one unit = 1 ns, oqbench's layout) can be read: record in ns with lowest value 1",
			 (long long)lowest);
		return -1;
	}
	if (highest < 2) {
		snprintf(err, errlen, DEC "highest trackable value %lld is below 2 (twice the lowest): corrupt", (long long)highest);
		return -1;
	}
	*plen = (size_t)payload;
	return 0;
}

/* A decoded histogram's min and max, those of its lowest and highest
 * non-empty counter, and its sum, the counters' midpoints times their
 * counts (the format carries none of them: hdrenc.h). */
static void bounds_of_counters(struct hist *h)
{
	unsigned lo = 0, hi = HIST_NCOUNTS - 1;

	if (!h->n)
		return;
	while (!h->counts[lo])
		lo++;
	while (!h->counts[hi])
		hi--;
	h->min = hist_index_low(lo);
	h->max = hist_index_low(hi) + hist_index_width(hi) - 1;
	for (unsigned i = lo; i <= hi; i++)
		h->sum += (double)h->counts[i] * (double)hist_index_mid(i);
}

int hdr_decode_b64(const char *text, struct hist *h, char *err, size_t errlen)
{
	uint8_t *bytes = NULL, *enc = NULL;
	size_t len, elen, plen;
	int ret = -1;

	hist_reset(h);
	char why[200];
	bytes = hdr_b64_decode(text ? text : "", &len, why, sizeof why);
	if (!bytes) {
		snprintf(err, errlen, DEC "%s", why);
		goto out;
	}
	if (len < 8) {
		snprintf(err, errlen, DEC "%zu bytes after base64, fewer than the 8-byte header (cookie, length)%s",
			 len, len ? ": truncated" : ": empty text");
		goto out;
	}
	uint32_t cookie = get_be32(bytes);
	if (COOKIE_BASE(cookie) != V2_COMPRESSED_BASE) {
		bad_cookie(cookie, err, errlen);
		goto out;
	}
	int32_t zlen = (int32_t)get_be32(bytes + 4);
	if (zlen < 0 || (size_t)zlen > len - 8) {
		snprintf(err, errlen, DEC "the header announces %d bytes of zlib data but %zu follow: truncated", zlen, len - 8);
		goto out;
	}
	if ((size_t)zlen < len - 8) {
		snprintf(err, errlen, DEC "%zu bytes follow the %d bytes of zlib data the header announces: two encodings run together, or corrupt",
			 len - 8 - (size_t)zlen, zlen);
		goto out;
	}
	enc = inflate_all(bytes + 8, (size_t)zlen, HDRENC_HEADER_LEN + MAX_PAYLOAD, DEC,
			  "the largest V2 encoding of a 3-digit histogram up to 2^40 - 1", &elen, err, errlen);
	if (!enc || check_header(enc, elen, &plen, err, errlen) ||
	    read_counts(enc + HDRENC_HEADER_LEN, plen, h, err, errlen))
		goto out;

	bounds_of_counters(h);
	ret = 0;
out:
	if (ret)
		hist_reset(h);
	free(bytes);
	free(enc);
	return ret;
}

int hist_from_trial_json(struct hist *h, const json_t *j, char *err, size_t errlen)
{
	char e[256];
	if (json_object_get(j, "bins"))
		return hist_from_json(h, j, err, errlen);
	const char *text = json_string_value(json_object_get(j, "hdr"));
	if (!text || hdr_decode_b64(text, h, e, sizeof e) < 0) {
		snprintf(err, errlen, "%s", text ? e : "neither bins nor an hdr encoding");
		return -1;
	}
	if ((uint64_t)json_integer_value(json_object_get(j, "n")) != h->n) {
		snprintf(err, errlen, "the hdr encoding holds %llu values, n says %lld",
			 (unsigned long long)h->n, json_integer_value(json_object_get(j, "n")));
		return -1;
	}
	h->min = (uint64_t)json_integer_value(json_object_get(j, "min"));
	h->max = (uint64_t)json_integer_value(json_object_get(j, "max"));
	h->sum = json_number_value(json_object_get(j, "sum"));
	h->overflow = (uint64_t)json_integer_value(json_object_get(j, "overflow"));
	return 0;
}

/* ---- a part of a histogram, against the whole ---------------------- */

#define PART "histogram part text: "

char *hdr_part_encode_b64(const struct hist *whole, const struct hist *part, char *err, size_t errlen)
{
	uint8_t *raw;
	size_t p = 0;
	char *text;

	for (unsigned i = 0; i < HIST_NCOUNTS; i++) {
		if (part->counts[i] > whole->counts[i] || whole->counts[i] > (uint64_t)INT64_MAX) {
			snprintf(err, errlen, "histogram part encoding: counter %u holds %llu in the part and %llu in the whole: %s", i,
				 (unsigned long long)part->counts[i], (unsigned long long)whole->counts[i],
				 part->counts[i] > whole->counts[i] ? "not a part of it" : "above the format's limit 2^63 - 1");
			return NULL;
		}
	}
	raw = malloc((size_t)MAX_VARINT * HIST_NCOUNTS);
	if (!raw) {
		snprintf(err, errlen, "histogram part encoding: out of memory");
		return NULL;
	}
	for (unsigned i = 0; i < HIST_NCOUNTS; i++) {
		uint64_t c = whole->counts[i], k = part->counts[i];
		if (!c)
			continue;
		/* the part's count, or how many it leaves out, whichever is
		 * smaller: a counter the part holds whole is one byte, -1 */
		p += put_varint(raw + p, 2 * k <= c ? (int64_t)k : -(int64_t)(c - k) - 1);
	}
	text = pack_b64(HDRENC_PART_COOKIE, raw, p, err, errlen);
	free(raw);
	return text;
}

int hdr_part_decode_b64(const char *text, const struct hist *whole, struct hist *part, char *err, size_t errlen)
{
	uint8_t *bytes = NULL, *enc = NULL;
	size_t len, elen, pos = 0;
	char why[200];
	int ret = -1;

	hist_reset(part);
	bytes = hdr_b64_decode(text ? text : "", &len, why, sizeof why);
	if (!bytes) {
		snprintf(err, errlen, PART "%s", why);
		goto out;
	}
	if (len < 8 || get_be32(bytes) != HDRENC_PART_COOKIE) {
		snprintf(err, errlen, PART "%s", len < 8 ? "shorter than its 8-byte header: truncated"
			 : "its cookie is not oqbench's part cookie 0x6f716231: not a part encoding, or corrupt");
		goto out;
	}
	int32_t zlen = (int32_t)get_be32(bytes + 4);
	if (zlen < 0 || (size_t)zlen != len - 8) {
		snprintf(err, errlen, PART "the header announces %d bytes of zlib data but %zu follow: corrupt", zlen, len - 8);
		goto out;
	}
	enc = inflate_all(bytes + 8, (size_t)zlen, MAX_PAYLOAD, PART, "one 9-byte count per counter", &elen, err, errlen);
	if (!enc)
		goto out;
	for (unsigned i = 0; i < HIST_NCOUNTS; i++) {
		uint64_t c = whole->counts[i];
		int64_t v;
		size_t used;
		if (!c)
			continue;
		used = pos < elen ? get_varint(enc + pos, elen - pos, &v) : 0;
		if (!used) {
			snprintf(err, errlen, PART "ends at byte %zu, before the whole's counter %u: truncated, or read against another histogram",
				 pos, i);
			goto out;
		}
		if (v < 0 ? (v == INT64_MIN || (uint64_t)(-(v + 1)) > c) : (uint64_t)v > c) {
			snprintf(err, errlen, PART "byte %zu: %lld for counter %u, which holds %llu in the whole: corrupt, or read against another histogram",
				 pos, (long long)v, i, (unsigned long long)c);
			goto out;
		}
		part->counts[i] = v < 0 ? c - (uint64_t)(-(v + 1)) : (uint64_t)v;
		part->n += part->counts[i];
		pos += used;
	}
	if (pos != elen) {
		snprintf(err, errlen, PART "%zu bytes left after the whole's last counter: corrupt, or read against another histogram",
			 elen - pos);
		goto out;
	}
	bounds_of_counters(part);
	ret = 0;
out:
	if (ret)
		hist_reset(part);
	free(bytes);
	free(enc);
	return ret;
}
