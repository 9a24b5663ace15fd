/*
 * test_hdrenc.c - lib/hdrenc: struct hist's layout against HdrHistogram's
 * own index arithmetic (every counter, every bucket edge), the exact bytes
 * of a hand-worked encoding, a text written by hdr-histogram-js 3.0.1,
 * round trips (empty, single values, every counter, clamped overflow,
 * counts up to 2^63 - 1, random latencies), and malformed texts refused
 * with a message that says what is wrong.
 *
 * Two extra modes serve tests/integration/hdr-interop.sh, which checks us
 * against an independent implementation (hdr-histogram-js):
 *   test_hdrenc --emit FILE       writes our encodings of a few histograms
 *                                 and what any HdrHistogram reader must
 *                                 find in them (JSON)
 *   test_hdrenc --check-js FILE   decodes the encodings hdr-histogram-js
 *                                 wrote (JSON: name, b64, the values it
 *                                 recorded, or the error we must give) and
 *                                 prints ok / not ok per histogram
 */
#include "unit.h"
#include "hdrenc.h"
#include "hist.h"
#include "rng.h"

#include <jansson.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

static char err[512];

/* ---- HdrHistogram's layout, written out from its definition -------- */

/*
 * HdrHistogram (hdr_histogram.c / AbstractHistogram.java) for a lowest
 * discernible value, a highest trackable value and significant digits:
 * sub_bucket_count = 2^ceil(log2(2 * 10^digits)), unit magnitude
 * floor(log2(lowest)), buckets doubled until they pass the highest value,
 * counts_len = (bucket_count + 1) * sub_bucket_count / 2.
 */
struct hdr_layout {
	int unit_mag, half_mag;
	int64_t sub_count, half, mask;
	int32_t bucket_count, counts_len;
};

static void hdr_layout_init(struct hdr_layout *l, int64_t lowest, int64_t highest, int digits)
{
	double largest_single_unit = 2 * pow(10, digits);
	int count_mag = (int)ceil(log2(largest_single_unit));

	l->half_mag = (count_mag > 1 ? count_mag : 1) - 1;
	l->unit_mag = (int)floor(log2((double)lowest));
	l->sub_count = (int64_t)1 << (l->half_mag + 1);
	l->half = l->sub_count / 2;
	l->mask = (l->sub_count - 1) << l->unit_mag;
	int64_t untrackable = l->sub_count << l->unit_mag;
	int32_t buckets = 1;
	while (untrackable <= highest) {
		if (untrackable > INT64_MAX / 2) {
			buckets++;
			break;
		}
		untrackable <<= 1;
		buckets++;
	}
	l->bucket_count = buckets;
	l->counts_len = (int32_t)((buckets + 1) * l->half);
}

static int32_t hdr_counts_index(const struct hdr_layout *l, int64_t v)
{
	int32_t bucket = 64 - __builtin_clzll((uint64_t)(v | l->mask)) - l->unit_mag - (l->half_mag + 1);
	int64_t sub = v >> (bucket + l->unit_mag);
	return (int32_t)(((int64_t)(bucket + 1) << l->half_mag) + (sub - l->half));
}

static int64_t hdr_value_from_index(const struct hdr_layout *l, int32_t i)
{
	int32_t bucket = (i >> l->half_mag) - 1;
	int64_t sub = (i & (l->half - 1)) + l->half;
	if (bucket < 0) {
		sub -= l->half;
		bucket = 0;
	}
	return sub << (bucket + l->unit_mag);
}

TEST(layout_matches_hdrhistogram)
{
	struct hdr_layout l;

	hdr_layout_init(&l, 1, (int64_t)HIST_MAX, 3);
	CHECK_EQ_U64(l.sub_count, HIST_SUB);
	CHECK_EQ_U64(l.unit_mag, 0);
	CHECK_EQ_U64(l.bucket_count, HIST_NBUCKETS);
	CHECK_EQ_U64(l.counts_len, HIST_NCOUNTS);
	/* Every counter: same lowest value, and both ends of its range map back to it. */
	int bad = 0;
	for (int32_t i = 0; i < l.counts_len && bad < 5; i++) {
		int64_t low = hdr_value_from_index(&l, i);
		uint64_t high = hist_index_low((unsigned)i) + hist_index_width((unsigned)i) - 1;
		if ((uint64_t)low != hist_index_low((unsigned)i) || hdr_counts_index(&l, low) != i ||
		    hdr_counts_index(&l, (int64_t)high) != i || hist_index(high) != (unsigned)i) {
			CHECK(0, "counter %d: HdrHistogram low %lld, ours %llu..%llu", i, (long long)low,
			      (unsigned long long)hist_index_low((unsigned)i), (unsigned long long)high);
			bad++;
		}
	}
	/* Bucket edges and random values. */
	for (int k = 1; k <= HIST_MAX_BITS; k++) {
		int64_t p = (int64_t)1 << k;
		for (int64_t v = p - 2; v <= p + 2; v++)
			if (v >= 0 && (uint64_t)v <= HIST_MAX)
				CHECK(hdr_counts_index(&l, v) == (int32_t)hist_index((uint64_t)v), "value %lld", (long long)v);
	}
	struct rng r;
	rng_seed(&r, 3);
	for (int k = 0; k < 100000; k++) {
		uint64_t v = rng_next(&r) >> (24 + rng_below(&r, 40));
		CHECK(hdr_counts_index(&l, (int64_t)v) == (int32_t)hist_index(v), "value %llu", (unsigned long long)v);
	}
	/* The index does not depend on the highest value: a bigger histogram shares our counters. */
	struct hdr_layout big;
	hdr_layout_init(&big, 1, 3600000000000LL, 3);
	CHECK(big.counts_len > l.counts_len);
	CHECK(hdr_counts_index(&big, (int64_t)HIST_MAX) == HIST_NCOUNTS - 1);
	/* Negative controls: 2 digits or lowest 1000 give another layout. */
	struct hdr_layout two, coarse;
	hdr_layout_init(&two, 1, (int64_t)HIST_MAX, 2);
	hdr_layout_init(&coarse, 1000, (int64_t)HIST_MAX, 3);
	CHECK(two.sub_count == 256 && hdr_counts_index(&two, 5000) != (int32_t)hist_index(5000));
	CHECK(coarse.unit_mag == 9 && hdr_counts_index(&coarse, 5000) != (int32_t)hist_index(5000));
}

/* ---- helpers ------------------------------------------------------- */

/* The raw bytes under a text: base64-decoded, checked to be non-NULL. */
static uint8_t *raw_of(const char *text, size_t *len)
{
	return hdr_b64_decode(text, len, err, sizeof err);
}

/* The compressed-form text around an uncompressed V2 encoding enc[0..len), with the given outer cookie. */
static char *wrap(const uint8_t *enc, size_t len, uint32_t cookie)
{
	uLongf zlen = compressBound((uLong)len);
	uint8_t *z = malloc(8 + zlen);
	char *t = NULL;

	if (z && compress(z + 8, &zlen, enc, (uLong)len) == Z_OK) {
		for (int i = 0; i < 4; i++) {
			z[i] = (uint8_t)(cookie >> (24 - 8 * i));
			z[4 + i] = (uint8_t)(zlen >> (24 - 8 * i));
		}
		t = hdr_b64_encode(z, 8 + zlen);
	}
	free(z);
	return t;
}

/* A V2 header into e[0..40): cookie, payload length, digits, lowest, highest (offset 0, ratio 1.0). */
static void v2_header(uint8_t *e, uint32_t cookie, uint32_t plen, uint32_t digits, uint64_t lowest, uint64_t highest)
{
	const uint64_t one_bits = 0x3ff0000000000000ull;
	const uint64_t f64[3] = { lowest, highest, one_bits };
	const uint32_t f32[4] = { cookie, plen, 0, digits };

	for (int k = 0; k < 4; k++)
		for (int i = 0; i < 4; i++)
			e[4 * k + i] = (uint8_t)(f32[k] >> (24 - 8 * i));
	for (int k = 0; k < 3; k++)
		for (int i = 0; i < 8; i++)
			e[16 + 8 * k + i] = (uint8_t)(f64[k] >> (56 - 8 * i));
}

/* Encodes h, decodes the text into a new histogram (NULL with a failed check on error). */
static struct hist *round_trip(const struct hist *h)
{
	char *t = hdr_encode_b64(h, err, sizeof err);
	struct hist *d = hist_new();

	CHECK(t, "encode: %s", err);
	CHECK(d);
	if (!t || !d || hdr_decode_b64(t, d, err, sizeof err)) {
		CHECK(0, "decode: %s", err);
		free(t);
		hist_free(d);
		return NULL;
	}
	free(t);
	return d;
}

/* Same counters and n; min and max in the same counters as h's. */
static int same_bins(const struct hist *h, const struct hist *d)
{
	int diff = 0;

	if (h->n != d->n)
		return 0;
	for (unsigned i = 0; i < HIST_NCOUNTS; i++)
		diff += h->counts[i] != d->counts[i];
	if (diff)
		return 0;
	if (h->n == 0)
		return d->min == UINT64_MAX && d->max == 0;
	return hist_index(h->min) == hist_index(d->min) && hist_index(h->max) == hist_index(d->max) &&
	       d->min == hist_index_low(hist_index(d->min)) &&
	       d->max == hist_index_low(hist_index(d->max)) + hist_index_width(hist_index(d->max)) - 1;
}

/* Encodes h, decodes it, and checks same_bins; the decoded histogram, or NULL. */
static struct hist *round_trip_same(const struct hist *h)
{
	struct hist *d = round_trip(h);

	if (d && !same_bins(h, d)) {
		CHECK(0, "decoded counters, n, min or max differ (n %llu vs %llu)",
		      (unsigned long long)d->n, (unsigned long long)h->n);
	}
	return d;
}

/* ---- exact bytes --------------------------------------------------- */

TEST(encoding_bytes_by_hand)
{
	struct hist *h = hist_new();
	REQUIRE(h);
	hist_record(h, 1);
	hist_record(h, 1);
	hist_record(h, 5);
	char *t = hdr_encode_b64(h, err, sizeof err);
	REQUIRE(t, "%s", err);
	CHECK(strncmp(t, "HISTFAAAA", 9) == 0, "every V2 compressed text starts HISTFAAAA (cookie 1c849314): %s", t);

	size_t len;
	uint8_t *raw = raw_of(t, &len);
	REQUIRE(raw && len > 8, "%s", err);
	const uint8_t cookie[4] = { 0x1c, 0x84, 0x93, 0x14 };
	CHECK(memcmp(raw, cookie, 4) == 0);
	uint32_t zlen = (uint32_t)raw[4] << 24 | (uint32_t)raw[5] << 16 | (uint32_t)raw[6] << 8 | raw[7];
	CHECK_EQ_U64(zlen, len - 8);

	uint8_t enc[64];
	uLongf elen = sizeof enc;
	REQUIRE(uncompress(enc, &elen, raw + 8, zlen) == Z_OK);
	/*
	 * Header: cookie 1c849313, payload 4, offset 0, digits 3, lowest 1,
	 * highest 2^40 - 1 = 0xffffffffff, ratio 1.0.  Counts up to index 5:
	 * one zero (-1 -> ZigZag 1), count 2 (-> 4), three zeros (-3 -> 5),
	 * count 1 (-> 2).
	 */
	const uint8_t want[44] = {
		0x1c, 0x84, 0x93, 0x13, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 3,
		0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff,
		0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x01, 0x04, 0x05, 0x02,
	};
	CHECK_EQ_U64(elen, sizeof want);
	for (size_t i = 0; i < sizeof want && i < elen; i++)
		CHECK(enc[i] == want[i], "byte %zu: 0x%02x, want 0x%02x", i, enc[i], want[i]);

	/* Large counts take several varint bytes: 300 -> ZigZag 600 = 0xd8 0x04. */
	hist_reset(h);
	h->counts[0] = 300;
	h->n = 300;
	h->min = h->max = 0;
	free(t);
	free(raw);
	t = hdr_encode_b64(h, err, sizeof err);
	REQUIRE(t, "%s", err);
	raw = raw_of(t, &len);
	REQUIRE(raw);
	elen = sizeof enc;
	REQUIRE(uncompress(enc, &elen, raw + 8, len - 8) == Z_OK);
	CHECK(elen == 42 && enc[7] == 2 && enc[40] == 0xd8 && enc[41] == 0x04);
	free(t);
	free(raw);
	hist_free(h);
}

TEST(encoding_keeps_the_shorter_stream)
{
	/* The zlib stream is the shortest of LZ77 with Huffman coding,
	 * Huffman coding alone and Huffman coding in blocks (hdr_encode_b64):
	 * never longer than what compress2 writes of the same encoding, and
	 * on noisy latencies (counts that rarely repeat a run of bytes)
	 * shorter; it reads back either way. */
	struct hist *h = hist_new(), *back = hist_new();
	struct rng r;
	int shorter = 0;
	REQUIRE(h && back);
	rng_seed(&r, 5);
	for (int k = 0; k < 8; k++) {
		hist_reset(h);
		for (int i = 0; i < 20000 * (k + 1); i++)
			hist_record(h, (uint64_t)(400 + 2000 * -log(1 - rng_double(&r))));
		char *t = hdr_encode_b64(h, err, sizeof err);
		REQUIRE(t, "%s", err);
		size_t len;
		uint8_t *raw = raw_of(t, &len);
		REQUIRE(raw && len > 8);
		uLongf elen = HDRENC_HEADER_LEN + 9 * HIST_NCOUNTS, zdef = compressBound(elen);
		uint8_t *enc = malloc(elen), *z = malloc(zdef);
		REQUIRE(enc && z);
		REQUIRE(uncompress(enc, &elen, raw + 8, (uLong)(len - 8)) == Z_OK);
		REQUIRE(compress2(z, &zdef, enc, elen, Z_DEFAULT_COMPRESSION) == Z_OK);
		CHECK(len - 8 <= zdef, "case %d: %zu bytes, compress2 %lu", k, len - 8, (unsigned long)zdef);
		shorter += len - 8 < zdef;
		CHECK(hdr_decode_b64(t, back, err, sizeof err) == 0 && back->n == h->n &&
		      !memcmp(back->counts, h->counts, sizeof h->counts), "case %d reads back: %s", k, err);
		free(enc);
		free(z);
		free(raw);
		free(t);
	}
	CHECK(shorter > 0, "no noisy histogram came out shorter than compress2's stream");
	hist_free(h);
	hist_free(back);
}

/* The encoding's zlib stream of h's counts with one strategy, one table. */
static size_t one_stream(const struct hist *h, int strategy)
{
	char *t = hdr_encode_b64(h, err, sizeof err);
	size_t len, out = 0;
	uint8_t *raw = t ? raw_of(t, &len) : NULL;
	uLongf elen = HDRENC_HEADER_LEN + 9 * HIST_NCOUNTS;
	uint8_t *enc = malloc(elen), *z = malloc(compressBound(elen));
	z_stream st;

	memset(&st, 0, sizeof st);
	if (raw && enc && z && uncompress(enc, &elen, raw + 8, (uLong)(len - 8)) == Z_OK &&
	    deflateInit2(&st, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15, 8, strategy) == Z_OK) {
		st.next_in = enc;
		st.avail_in = (uInt)elen;
		st.next_out = z;
		st.avail_out = (uInt)compressBound(elen);
		if (deflate(&st, Z_FINISH) == Z_STREAM_END)
			out = st.total_out;
		deflateEnd(&st);
	}
	free(t);
	free(raw);
	free(enc);
	free(z);
	return out;
}

/* 60,000 latencies as the quickstart's: 97 % a body of varied counts
 * around 600 ns, 3 % a sparse tail of host stalls out to 2 ms. */
static void body_and_tail(struct hist *h, uint64_t seed)
{
	struct rng r;

	rng_seed(&r, seed);
	for (int i = 0; i < 60000; i++) {
		if (rng_double(&r) < 0.97)
			hist_record(h, (uint64_t)(450 + 300 * -log(1 - rng_double(&r))));
		else
			hist_record(h, (uint64_t)(5000 * exp(6 * rng_double(&r))));
	}
}

TEST(encoding_cuts_blocks_where_counts_change)
{
	/* A latency histogram as the quickstart's (body_and_tail): its
	 * counts in blocks of their own (lib/zsplit.h) come out shorter than
	 * either one-table stream, by 5 % at least, and read back. */
	struct hist *h = hist_new(), *back = hist_new();
	REQUIRE(h && back);
	body_and_tail(h, 17);
	char *t = hdr_encode_b64(h, err, sizeof err);
	REQUIRE(t, "%s", err);
	size_t len;
	uint8_t *raw = raw_of(t, &len);
	REQUIRE(raw && len > 8);
	size_t zd = one_stream(h, Z_DEFAULT_STRATEGY), zh = one_stream(h, Z_HUFFMAN_ONLY);
	REQUIRE(zd && zh, "%s", err);
	CHECK((double)(len - 8) < 0.95 * (double)(zd < zh ? zd : zh), "%zu bytes; one table: default %zu, Huffman only %zu",
	      len - 8, zd, zh);
	CHECK(hdr_decode_b64(t, back, err, sizeof err) == 0 && back->n == h->n &&
	      !memcmp(back->counts, h->counts, sizeof h->counts), "reads back: %s", err);
	free(raw);
	free(t);
	hist_free(h);
	hist_free(back);
}

TEST(part_round_trips_against_its_whole)
{
	/* A part read back against its whole gives its counters exactly:
	 * none of it, all of it, the tail only (the host-tagged requests of a
	 * quickstart trial), and a random share of every counter. */
	struct hist *w = hist_new(), *p = hist_new(), *back = hist_new();
	struct rng r;
	size_t len_none = 0, len_all = 0;
	REQUIRE(w && p && back);
	body_and_tail(w, 23);
	rng_seed(&r, 29);
	for (int k = 0; k < 4; k++) {
		hist_reset(p);
		for (unsigned i = 0; i < HIST_NCOUNTS; i++) {
			uint64_t c = w->counts[i];
			p->counts[i] = k == 0 ? 0 : k == 1 ? c : k == 2 ? (hist_index_low(i) > 5000 ? c : 0)
				     : rng_below(&r, c + 1);
			p->n += p->counts[i];
		}
		char *t = hdr_part_encode_b64(w, p, err, sizeof err);
		REQUIRE(t, "case %d: %s", k, err);
		CHECK(hdr_part_decode_b64(t, w, back, err, sizeof err) == 0, "case %d: %s", k, err);
		CHECK(back->n == p->n && !memcmp(back->counts, p->counts, sizeof p->counts), "case %d: %llu of %llu back",
		      k, (unsigned long long)back->n, (unsigned long long)p->n);
		if (k == 0)
			len_none = strlen(t);
		if (k == 1)
			len_all = strlen(t);
		free(t);
	}
	/* none and all cost a byte per counter before deflate, little after */
	char *whole = hdr_encode_b64(w, err, sizeof err);
	REQUIRE(whole, "%s", err);
	CHECK(len_none * 10 < strlen(whole) && len_all * 10 < strlen(whole), "none %zu, all %zu, the whole %zu",
	      len_none, len_all, strlen(whole));
	free(whole);
	hist_free(w);
	hist_free(p);
	hist_free(back);
}

TEST(part_refuses_what_is_not_a_part)
{
	struct hist *w = hist_new(), *p = hist_new(), *other = hist_new();
	char *t, *hdr;
	REQUIRE(w && p && other);
	body_and_tail(w, 31);
	body_and_tail(other, 37);
	hist_merge(p, w);
	p->counts[hist_index(600)]++;                  /* one more than the whole */
	CHECK(!hdr_part_encode_b64(w, p, err, sizeof err) && strstr(err, "not a part"), "%s", err);
	hist_reset(p);
	for (unsigned i = 0; i < HIST_NCOUNTS; i++)
		p->counts[i] = w->counts[i] / 2;
	t = hdr_part_encode_b64(w, p, err, sizeof err);
	REQUIRE(t, "%s", err);
	/* against another whole: other counters, so too few or too many
	 * counts, or a count above a counter's */
	CHECK(hdr_part_decode_b64(t, other, p, err, sizeof err) < 0 && p->n == 0 &&
	      strstr(err, "another histogram"), "%s", err);
	/* an HdrHistogram text is not a part text */
	hdr = hdr_encode_b64(w, err, sizeof err);
	REQUIRE(hdr);
	CHECK(hdr_part_decode_b64(hdr, w, p, err, sizeof err) < 0 && strstr(err, "cookie"), "%s", err);
	/* cut short */
	t[strlen(t) / 2] = 0;
	CHECK(hdr_part_decode_b64(t, w, p, err, sizeof err) < 0, "half a text read");
	free(t);
	free(hdr);
	hist_free(w);
	hist_free(p);
	hist_free(other);
}

TEST(decodes_hdr_histogram_js_text)
{
	/*
	 * hdr-histogram-js 3.0.1: build({bitBucketSize: 64, lowestDiscernibleValue: 1,
	 * highestTrackableValue: 3600e9, numberOfSignificantValueDigits: 3}), then
	 * recordValue of 1, 1000, 2048, 123456, 1e9, 1e9, 1e9, and
	 * encodeIntoCompressedBase64.  Its header carries normalizing offset 1 and
	 * the integer 1 as conversion ratio; its counts are in logical order (a
	 * single zero written as 0, longer runs as negatives).
	 */
	const char *js = "HISTFAAAADR4nJNpmSzMwMDAz8DAwMjAwMDMAAGMDAzMbgY7FjDA+Uyn+ZnWCjD1xzFdPM/IBgCV2Adg";
	struct hist *d = hist_new(), *want = hist_new();
	REQUIRE(d && want);
	const uint64_t vals[] = { 1, 1000, 2048, 123456, 1000000000, 1000000000, 1000000000 };
	for (size_t i = 0; i < 7; i++)
		hist_record(want, vals[i]);
	REQUIRE(hdr_decode_b64(js, d, err, sizeof err) == 0, "%s", err);
	CHECK(same_bins(want, d));
	CHECK_EQ_U64(d->n, 7);
	CHECK_EQ_U64(d->counts[hist_index(1000000000)], 3);
	CHECK_EQ_U64(d->min, 1);
	/* hdr-histogram-js reports maxValue 1000341503 for the same text. */
	CHECK_EQ_U64(d->max, 1000341503);
	CHECK_EQ_U64(hist_index(hist_percentile(d, 50)), hist_index(123456));
	/* White space around the text is fine (log lines end in newlines). */
	char padded[200];
	snprintf(padded, sizeof padded, "  %s\r\n", js);
	CHECK(hdr_decode_b64(padded, d, err, sizeof err) == 0, "%s", err);
	CHECK(same_bins(want, d));
	hist_free(d);
	hist_free(want);
}

/* ---- round trips --------------------------------------------------- */

TEST(round_trip_empty)
{
	struct hist *h = hist_new(), *d;
	REQUIRE(h);
	d = round_trip_same(h);
	REQUIRE(d);
	CHECK(d->n == 0 && d->sum == 0 && d->overflow == 0);
	hist_free(d);
	hist_free(h);
}

TEST(round_trip_single_values)
{
	const uint64_t vals[] = { 0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 123456789,
				  1ull << 39, HIST_MAX - 1, HIST_MAX };
	struct hist *h = hist_new();
	REQUIRE(h);
	for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
		hist_reset(h);
		hist_record(h, vals[k]);
		struct hist *d = round_trip_same(h);
		REQUIRE(d, "value %llu", (unsigned long long)vals[k]);
		CHECK_EQ_U64(d->counts[hist_index(vals[k])], 1);
		/* Below 2048 the counter is one value wide: min and max come back exactly. */
		if (vals[k] < HIST_SUB)
			CHECK(d->min == vals[k] && d->max == vals[k]);
		hist_free(d);
	}
	hist_free(h);
}

TEST(round_trip_every_counter)
{
	struct hist *h = hist_new(), *d;
	REQUIRE(h);
	/* One value in every counter: no zero runs at all. */
	for (unsigned i = 0; i < HIST_NCOUNTS; i++)
		hist_record(h, hist_index_low(i) + hist_index_width(i) - 1);
	d = round_trip_same(h);
	REQUIRE(d);
	CHECK_EQ_U64(d->n, HIST_NCOUNTS);
	hist_free(d);
	/* One value per bucket (powers of two): long zero runs between them. */
	hist_reset(h);
	for (int k = 0; k < HIST_MAX_BITS; k++)
		hist_record(h, (1ull << k) + (uint64_t)k);
	d = round_trip_same(h);
	REQUIRE(d);
	hist_free(d);
	hist_free(h);
}

TEST(round_trip_overflow_clamp)
{
	struct hist *h = hist_new(), *d;
	REQUIRE(h);
	hist_record(h, 17);
	hist_record(h, HIST_MAX + 5);
	hist_record(h, UINT64_MAX);
	CHECK_EQ_U64(h->overflow, 2);
	d = round_trip_same(h);
	REQUIRE(d);
	CHECK_EQ_U64(d->counts[HIST_NCOUNTS - 1], 2);
	CHECK_EQ_U64(d->max, HIST_MAX);
	CHECK_EQ_U64(d->overflow, 0);     /* not part of the format (hdrenc.h) */
	hist_free(d);
	hist_free(h);
}

TEST(round_trip_huge_counts)
{
	struct hist *h = hist_new(), *d;
	REQUIRE(h);
	h->counts[3] = (uint64_t)INT64_MAX;
	h->counts[5000] = 1ull << 62;
	h->counts[HIST_NCOUNTS - 1] = 1;
	h->n = (uint64_t)INT64_MAX + (1ull << 62) + 1;
	h->min = 3;
	h->max = HIST_MAX;
	d = round_trip_same(h);
	REQUIRE(d);
	hist_free(d);

	/* Above 2^63 - 1 the signed varints cannot carry it: refused, with the counter named. */
	h->counts[7] = (uint64_t)INT64_MAX + 1;
	err[0] = 0;
	CHECK(hdr_encode_b64(h, err, sizeof err) == NULL);
	CHECK(strstr(err, "counter 7") && strstr(err, "2^63 - 1"), "%s", err);
	hist_free(h);
}

TEST(round_trip_random_latencies)
{
	struct hist *h = hist_new(), *d;
	struct rng r;
	REQUIRE(h);
	rng_seed(&r, 17);
	for (int i = 0; i < 200000; i++) {
		/* Log-uniform over 100 ns .. 100 ms, plus a few exact small values. */
		double e = 2 + 6 * rng_double(&r);
		hist_record(h, i % 97 ? (uint64_t)pow(10, e) : rng_below(&r, 2048));
	}
	d = round_trip_same(h);
	REQUIRE(d);
	/* Readers see the same percentiles (same counters) and the mean within the bound. */
	const double ps[] = { 1, 50, 90, 99, 99.9, 99.99 };
	for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++)
		CHECK(hist_index(hist_percentile(d, ps[k])) == hist_index(hist_percentile(h, ps[k])), "p%g", ps[k]);
	CHECK(fabs(hist_mean(d) - hist_mean(h)) <= hist_mean(h) / 2048, "mean %g vs %g", hist_mean(d), hist_mean(h));
	/* Encoding is deterministic. */
	char *t1 = hdr_encode_b64(h, err, sizeof err), *t2 = hdr_encode_b64(h, err, sizeof err);
	CHECK(t1 && t2 && strcmp(t1, t2) == 0);
	free(t1);
	free(t2);
	hist_free(d);
	hist_free(h);
}

/* ---- malformed texts ----------------------------------------------- */

/* Decoding must fail, mention `want`, and leave d empty. */
static void refused(const char *what, const char *text, const char *want)
{
	struct hist *d = hist_new();

	if (!d) {
		CHECK(0, "out of memory");
		return;
	}
	d->n = 99;
	err[0] = 0;
	CHECK(hdr_decode_b64(text, d, err, sizeof err) == -1, "%s: accepted", what);
	CHECK(strstr(err, want), "%s: message \"%s\" lacks \"%s\"", what, err, want);
	CHECK(d->n == 0 && d->min == UINT64_MAX, "%s: histogram not left empty", what);
	hist_free(d);
}

TEST(refuses_bad_framing)
{
	struct hist *h = hist_new();
	REQUIRE(h);
	hist_record(h, 42);
	hist_record(h, 4242);
	char *good = hdr_encode_b64(h, err, sizeof err);
	REQUIRE(good, "%s", err);
	size_t len;
	uint8_t *raw = raw_of(good, &len);
	REQUIRE(raw);

	refused("empty", "", "empty text");
	refused("not base64", "HISTFAAAA!AA", "character 9 ('!'");
	refused("bad base64 length", "HISTF", "4-character groups");
	refused("too short", "HIST", "fewer than the 8-byte header");

	/* Outer cookies: unknown, uncompressed V2, V1. */
	uint8_t *m = malloc(len + 16);
	REQUIRE(m);
	const struct { uint32_t cookie; const char *want; } cookies[] = {
		{ 0xdeadbeefu, "not HdrHistogram's V2 compressed cookie" },
		{ 0x1c849313u, "uncompressed V2" },
		{ 0x1c849322u, "older HdrHistogram encoding" },
	};
	for (size_t k = 0; k < 3; k++) {
		memcpy(m, raw, len);
		for (int i = 0; i < 4; i++)
			m[i] = (uint8_t)(cookies[k].cookie >> (24 - 8 * i));
		char *t = hdr_b64_encode(m, len);
		refused(cookies[k].want, t, cookies[k].want);
		free(t);
	}

	/* Cut short, or with bytes after the announced zlib data. */
	char *t = hdr_b64_encode(raw, len - 5);
	refused("truncated", t, "truncated");
	free(t);
	memcpy(m, raw, len);
	memcpy(m + len, "junk", 4);
	t = hdr_b64_encode(m, len + 4);
	refused("trailing bytes", t, "follow the");
	free(t);

	/* Corrupt zlib data: a flipped byte in the deflate stream, or a bad zlib header. */
	memcpy(m, raw, len);
	m[8 + (len - 8) / 2] ^= 0x5a;
	t = hdr_b64_encode(m, len);
	refused("corrupt deflate", t, "zlib stream");
	free(t);
	memcpy(m, raw, len);
	m[8] = 0x00;
	t = hdr_b64_encode(m, len);
	refused("bad zlib header", t, "does not inflate");
	free(t);
	/* A zlib length that announces less than is there cuts the stream: "ends early". */
	memcpy(m, raw, len);
	m[7] = (uint8_t)(m[7] - 3);
	t = hdr_b64_encode(m, len - 3);
	refused("short zlib", t, "ends early");
	free(t);

	free(m);
	free(raw);
	free(good);
	hist_free(h);
}

/*
 * A compressed text around a V2 header (cookie, payload length field,
 * digits, lowest, highest) and payload[0..plen), with the last `cut`
 * bytes of the encoding left out; decoding it must fail with `want`.
 */
static void refused_v2(const char *what, uint32_t cookie, uint32_t plen_field, uint32_t digits, uint64_t lowest,
		       uint64_t highest, const uint8_t *payload, size_t plen, size_t cut, const char *want)
{
	uint8_t e[HDRENC_HEADER_LEN + 32];
	char *t;

	if (plen > 32) {
		CHECK(0, "%s: payload too long for the test buffer", what);
		return;
	}
	v2_header(e, cookie, plen_field, digits, lowest, highest);
	memcpy(e + HDRENC_HEADER_LEN, payload, plen);
	t = wrap(e, HDRENC_HEADER_LEN + plen - cut, HDRENC_COMPRESSED_COOKIE);
	refused(what, t, want);
	free(t);
}

/* ZigZag LEB128 of v into p (HdrHistogram's variant: the 9th byte carries 8 bits); its length. */
static size_t varint(uint8_t *p, int64_t v)
{
	uint64_t zz = v < 0 ? 2 * (uint64_t)-v - 1 : 2 * (uint64_t)v;
	size_t n = 0;

	while (n < 8 && zz >= 0x80) {
		p[n++] = (uint8_t)(zz & 0x7f) | 0x80;
		zz >>= 7;
	}
	p[n++] = (uint8_t)zz;
	return n;
}

TEST(refuses_bad_content)
{
	const uint32_t V2 = HDRENC_ENCODING_COOKIE;
	const uint8_t count1[] = { 0x02 }, cut_varint[] = { 0x02, 0x80 };
	uint8_t p[32];
	size_t n;

	/* Wrong inner cookie (word-size nibble 0); payload length that disagrees; header cut short. */
	refused_v2("word-size nibble 0", 0x1c849303u, 1, 3, 1, HIST_MAX, count1, 1, 0, "inner cookie");
	refused_v2("payload length", V2, 5, 3, 1, HIST_MAX, count1, 1, 0, "payload length is 5");
	refused_v2("short header", V2, 1, 3, 1, HIST_MAX, count1, 1, 11, "fewer than the 40-byte V2 header");

	/* Another layout: 2 digits, lowest 1000 (unit magnitude 9). */
	refused_v2("2 digits", V2, 1, 2, 1, HIST_MAX, count1, 1, 0, "2 significant value digits");
	refused_v2("lowest 1000", V2, 1, 3, 1000, HIST_MAX, count1, 1, 0, "lowest discernible value 1000");

	/* Counts past our last counter: a zero run of HIST_NCOUNTS then a count;
	 * a zero run longer than the whole histogram. */
	n = varint(p, -(int64_t)HIST_NCOUNTS);
	n += varint(p + n, 1);
	refused_v2("count past the end", V2, (uint32_t)n, 3, 1, 1ull << 50, p, n, 0, "past the last counter 31743");
	n = varint(p, -(int64_t)HIST_NCOUNTS - 1);
	refused_v2("zero run past the end", V2, (uint32_t)n, 3, 1, 1ull << 50, p, n, 0, "reaches past the last counter");

	/* A varint whose continuation bit runs off the payload. */
	refused_v2("truncated varint", V2, 2, 3, 1, HIST_MAX, cut_varint, 2, 0, "payload byte 1");

	/* Counts adding up past 2^64 - 1: three times 2^63 - 1 (ZigZag 2^64 - 2, 9 bytes). */
	n = 0;
	for (int k = 0; k < 3; k++)
		n += varint(p + n, INT64_MAX);
	CHECK_EQ_U64(n, 27);
	CHECK(p[0] == 0xfe && p[1] == 0xff && p[8] == 0xff, "9-byte varint: the 9th byte carries 8 bits");
	refused_v2("total overflow", V2, 27, 3, 1, HIST_MAX, p, 27, 0, "2^64 - 1");
	/* Two of them fit. */
	uint8_t e[HDRENC_HEADER_LEN + 18];
	v2_header(e, V2, 18, 3, 1, HIST_MAX);
	memcpy(e + HDRENC_HEADER_LEN, p, 18);
	char *t = wrap(e, sizeof e, HDRENC_COMPRESSED_COOKIE);
	struct hist *d = hist_new();
	REQUIRE(t && d);
	CHECK(hdr_decode_b64(t, d, err, sizeof err) == 0, "%s", err);
	CHECK(d->counts[0] == (uint64_t)INT64_MAX && d->counts[1] == (uint64_t)INT64_MAX);
	free(t);
	hist_free(d);
}

/* ---- modes for tests/integration/hdr-interop.sh -------------------- */

/* The counter that holds the k-th smallest value (1 <= k <= n). */
static unsigned bin_at_rank(const struct hist *h, uint64_t k)
{
	return hist_index(hist_value_at_rank(h, k));
}

static uint64_t bin_high(unsigned i)
{
	return hist_index_low(i) + hist_index_width(i) - 1;
}

/* One case: our text and what a reader must see (HdrHistogram's conventions). */
static json_t *emit_case(const char *name, const struct hist *h)
{
	char *t = hdr_encode_b64(h, err, sizeof err);
	json_t *c = NULL, *pct = json_array(), *at = json_array();
	const double ps[] = { 1, 25, 50, 90, 99, 99.9, 100 };

	if (!t || !pct || !at)
		goto out;
	unsigned lo = 0, hi = 0;
	for (unsigned i = 1; i < HIST_NCOUNTS; i++)        /* lowest non-empty above 0: minNonZeroValue */
		if (h->counts[i]) {
			lo = i;
			break;
		}
	for (unsigned i = 0; i < HIST_NCOUNTS; i++)
		if (h->counts[i])
			hi = i;
	for (size_t k = 0; h->n && k < sizeof ps / sizeof ps[0]; k++)
		json_array_append_new(pct, json_pack("[fI]", ps[k], (json_int_t)bin_high(bin_at_rank(h, hist_rank(h->n, ps[k])))));
	for (unsigned i = 0, listed = 0; i < HIST_NCOUNTS && listed < 40; i++) {
		if (h->counts[i] || i % 997 == 0) {        /* non-empty counters and some empty ones */
			json_array_append_new(at, json_pack("[II]", (json_int_t)hist_index_low(i), (json_int_t)h->counts[i]));
			json_array_append_new(at, json_pack("[II]", (json_int_t)bin_high(i), (json_int_t)h->counts[i]));
			listed++;
		}
	}
	c = json_pack("{s:s, s:s, s:I, s:o, s:o, s:o?, s:o?}", "name", name, "b64", t, "n", (json_int_t)h->n, "pct", pct, "at", at,
		      "min_nonzero", lo ? json_integer((json_int_t)hist_index_low(lo)) : NULL,
		      "max", h->n ? json_integer((json_int_t)bin_high(hi)) : NULL);
	pct = at = NULL;
out:
	json_decref(pct);
	json_decref(at);
	free(t);
	return c;
}

static int emit(const char *path)
{
	struct hist *h = hist_new();
	json_t *all = json_array();
	struct rng r;
	int ret = 1;

	if (!h || !all)
		goto out;
	json_array_append_new(all, emit_case("empty", h));
	hist_record(h, 12345);
	json_array_append_new(all, emit_case("single", h));
	hist_reset(h);
	for (int i = 0; i < 5; i++)
		hist_record(h, 0);
	hist_record(h, 1);
	hist_record(h, 1);
	hist_record(h, 5);
	json_array_append_new(all, emit_case("small_with_zeros", h));
	hist_reset(h);
	for (int k = 0; k < HIST_MAX_BITS; k++)
		hist_record(h, (1ull << k) + (uint64_t)k);
	hist_record(h, HIST_MAX);
	json_array_append_new(all, emit_case("every_bucket", h));
	hist_reset(h);
	hist_record(h, 999);
	hist_record(h, HIST_MAX + 1000);
	hist_record(h, UINT64_MAX);
	json_array_append_new(all, emit_case("overflow_clamped", h));
	hist_reset(h);
	h->counts[100] = 1ull << 52;
	h->counts[20000] = 3;
	h->n = (1ull << 52) + 3;
	h->min = 100;
	h->max = hist_index_low(20000);
	json_array_append_new(all, emit_case("huge_counts", h));
	hist_reset(h);
	rng_seed(&r, 99);
	for (int i = 0; i < 100000; i++)
		hist_record(h, (uint64_t)(5000 * exp(0.8 * sqrt(-2 * log(1 - rng_double(&r))) * cos(6.283185307179586 * rng_double(&r)))));
	json_array_append_new(all, emit_case("lognormal_100k", h));
	/* a stream of several deflate blocks (lib/zsplit.h): the case
	 * encoding_cuts_blocks_where_counts_change checks it is cut */
	hist_reset(h);
	body_and_tail(h, 17);
	json_array_append_new(all, emit_case("body_and_tail_blocks", h));
	if (json_array_size(all) != 8 || json_dump_file(all, path, JSON_INDENT(1))) {
		fprintf(stderr, "test_hdrenc --emit: cannot write %s (%s)\n", path, err);
		goto out;
	}
	ret = 0;
out:
	json_decref(all);
	hist_free(h);
	return ret;
}

/* Decodes hdr-histogram-js's texts; prints ok / not ok hdr-interop-c-reads-js-NAME. */
static int check_js(const char *path)
{
	json_error_t jerr;
	json_t *all = json_load_file(path, 0, &jerr);
	struct hist *d = hist_new(), *want = hist_new();
	int failed = 0;

	if (!all || !json_is_array(all) || !d || !want) {
		fprintf(stderr, "test_hdrenc --check-js: cannot read %s: %s\n", path, jerr.text);
		return 1;
	}
	for (size_t k = 0; k < json_array_size(all); k++) {
		json_t *c = json_array_get(all, k), *vals = json_object_get(c, "values");
		const char *name = json_string_value(json_object_get(c, "name"));
		const char *b64 = json_string_value(json_object_get(c, "b64"));
		const char *expect = json_string_value(json_object_get(c, "expect_error"));
		char why[600] = "";

		hist_reset(want);
		for (size_t i = 0; i < json_array_size(vals); i++) {
			json_t *pair = json_array_get(vals, i);
			uint64_t v = (uint64_t)json_integer_value(json_array_get(pair, 0));
			uint64_t cnt = (uint64_t)json_integer_value(json_array_get(pair, 1));
			want->counts[hist_index(v > HIST_MAX ? HIST_MAX : v)] += cnt;
			want->n += cnt;
		}
		int rc = hdr_decode_b64(b64 ? b64 : "", d, err, sizeof err);
		if (expect) {
			if (rc == 0)
				snprintf(why, sizeof why, "decoded, but must be refused with \"%s\"", expect);
			else if (!strstr(err, expect))
				snprintf(why, sizeof why, "refused with \"%s\", which lacks \"%s\"", err, expect);
		} else if (rc) {
			snprintf(why, sizeof why, "%s", err);
		} else if (d->n != want->n) {
			snprintf(why, sizeof why, "total count %llu, recorded %llu", (unsigned long long)d->n,
				 (unsigned long long)want->n);
		} else {
			for (unsigned i = 0; i < HIST_NCOUNTS && !why[0]; i++)
				if (d->counts[i] != want->counts[i])
					snprintf(why, sizeof why, "counter %u (values %llu..%llu) holds %llu, recorded %llu", i,
						 (unsigned long long)hist_index_low(i), (unsigned long long)bin_high(i),
						 (unsigned long long)d->counts[i], (unsigned long long)want->counts[i]);
		}
		if (why[0]) {
			printf("not ok hdr-interop-c-reads-js-%s\n", name ? name : "?");
			fprintf(stderr, "  %s\n", why);
			failed++;
		} else {
			printf("ok hdr-interop-c-reads-js-%s\n", name ? name : "?");
		}
	}
	json_decref(all);
	hist_free(d);
	hist_free(want);
	return failed ? 1 : 0;
}

#define CASES layout_matches_hdrhistogram, encoding_bytes_by_hand, encoding_keeps_the_shorter_stream, \
	encoding_cuts_blocks_where_counts_change, part_round_trips_against_its_whole, part_refuses_what_is_not_a_part, \
	decodes_hdr_histogram_js_text, \
	round_trip_empty, round_trip_single_values, round_trip_every_counter, round_trip_overflow_clamp, \
	round_trip_huge_counts, round_trip_random_latencies, refuses_bad_framing, refuses_bad_content

int main(int argc, char **argv)
{
	static const struct unit_case cases[] = { UNIT_FOREACH_(UNIT_CASE_, CASES) };

	if (argc == 3 && strcmp(argv[1], "--emit") == 0)
		return emit(argv[2]);
	if (argc == 3 && strcmp(argv[1], "--check-js") == 0)
		return check_js(argv[2]);
	return unit_run_(__FILE__, cases, sizeof cases / sizeof cases[0], argc, argv);
}
