/*
 * test_zsplit.c - lib/zsplit: the cost model against zlib's own blocks,
 * cuts where the bytes' statistics change and none where they do not,
 * streams that inflate to their input at every size the step arithmetic
 * has an edge, and a stream shorter than one Huffman table for the same
 * bytes when two parts differ.
 */
#include "unit.h"
#include "rng.h"
#include "zsplit.h"

#include <stdint.h>
#include <string.h>
#include <zlib.h>

static char err[256];

/* n bytes: bytes 0..span-1 drawn uniformly, or, with skew, a geometric
 * law (half 0, a quarter 1, ...), as the tail of a histogram's counts. */
static void fill(uint8_t *b, size_t n, struct rng *r, unsigned span, int skew)
{
	for (size_t i = 0; i < n; i++) {
		if (!skew) {
			b[i] = (uint8_t)rng_below(r, span);
			continue;
		}
		unsigned v = 0;
		while (v + 1 < span && rng_double(r) < 0.5)
			v++;
		b[i] = (uint8_t)v;
	}
}

/* The length of src as one zlib stream, Huffman coding alone. */
static size_t one_table(const uint8_t *src, size_t len)
{
	uLongf cap = compressBound(len);
	uint8_t *z = malloc(cap);
	z_stream st;
	size_t out = 0;

	memset(&st, 0, sizeof st);
	if (z && deflateInit2(&st, 9, Z_DEFLATED, 15, 9, Z_HUFFMAN_ONLY) == Z_OK) {
		st.next_in = (Bytef *)(uintptr_t)src;
		st.avail_in = (uInt)len;
		st.next_out = z;
		st.avail_out = (uInt)cap;
		if (deflate(&st, Z_FINISH) == Z_STREAM_END)
			out = st.total_out;
		deflateEnd(&st);
	}
	free(z);
	return out;
}

/* Deflates src with zsplit and inflates it back: 1 when it came back
 * whole; *zlen the stream's length. */
static int round_trip(const uint8_t *src, size_t len, size_t *zlen)
{
	uint8_t *z = malloc(zsplit_bound(len)), *back = malloc(len + 1);
	uLongf blen = len + 1;
	int same = 0;

	*zlen = 0;
	if (z && back) {
		*zlen = zsplit_deflate(z, src, len, err, sizeof err);
		same = *zlen && uncompress(back, &blen, z, (uLong)*zlen) == Z_OK && blen == len &&
		       (len == 0 || !memcmp(back, src, len));
	}
	free(z);
	free(back);
	return same;
}

TEST(model_tracks_zlib_blocks)
{
	/* One block's estimate against the block zlib writes for the same
	 * bytes (the stream less its 2-byte header and 4-byte trailer): the
	 * data are coded at their entropy, a Huffman code is at most 1 bit
	 * a symbol above it and on these laws a few per cent, so the model
	 * may sit a little under zlib (15 % at most here, on four symbols), never above it by much. */
	static const struct { unsigned span; int skew; size_t n; } cases[] = {
		{ 4, 0, 3000 }, { 64, 0, 3000 }, { 256, 0, 20000 }, { 16, 1, 3000 }, { 40, 1, 20000 },
	};
	struct rng r;
	uint8_t *b = malloc(20000);
	REQUIRE(b);
	rng_seed(&r, 11);
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		uint32_t f[256] = { 0 };
		fill(b, cases[k].n, &r, cases[k].span, cases[k].skew);
		for (size_t i = 0; i < cases[k].n; i++)
			f[b[i]]++;
		double model = (double)zsplit_block_bits(f), real = 8.0 * (double)(one_table(b, cases[k].n) - 6);
		CHECK(model > 0.85 * real && model < 1.02 * real, "case %zu: model %.0f bits, zlib %.0f", k, model, real);
	}
	free(b);
}

TEST(cuts_where_the_bytes_change)
{
	/* 6 KB of varied counts, then 6 KB of a geometric tail: one cut, at
	 * the change (a multiple of the 128-byte step), and no cut in a
	 * stretch of bytes drawn from one law. */
	struct rng r;
	uint8_t *b = malloc(12288);
	size_t cuts[ZSPLIT_CANDIDATES];
	int n;
	REQUIRE(b);
	rng_seed(&r, 3);
	fill(b, 6144, &r, 200, 0);
	fill(b + 6144, 6144, &r, 30, 1);
	n = zsplit_cuts(b, 12288, cuts, ZSPLIT_CANDIDATES);
	CHECK(n >= 1, "no cut in two different halves");
	int at_change = 0;
	for (int i = 0; i < n; i++)
		at_change += cuts[i] == 6144;
	CHECK(at_change == 1, "%d cuts, none at 6144 (first %zu)", n, n > 0 ? cuts[0] : (size_t)0);
	for (int i = 1; i < n; i++)
		CHECK(cuts[i] > cuts[i - 1] && cuts[i] < 12288, "cut %d at %zu after %zu", i, cuts[i], cuts[i - 1]);

	fill(b, 12288, &r, 200, 0);
	n = zsplit_cuts(b, 12288, cuts, ZSPLIT_CANDIDATES);
	CHECK(n == 0, "%d cuts in bytes of one law (first %zu)", n, n > 0 ? cuts[0] : (size_t)0);
	free(b);
}

TEST(streams_inflate_to_their_input)
{
	/* the step's edges, one candidate and two, the candidate cap (the
	 * step grows past 128), and zlib's own block limit (16K symbols at
	 * memLevel 9 is 32K; 300 KB passes it) */
	static const size_t sizes[] = { 0, 1, 127, 128, 129, 255, 256, 257, 4096, 12288, 12289, 40000, 300000 };
	struct rng r;
	uint8_t *b = malloc(300000);
	REQUIRE(b);
	rng_seed(&r, 7);
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		size_t n = sizes[k], zlen;
		fill(b, n / 2, &r, 180, 0);
		fill(b + n / 2, n - n / 2, &r, 20, 1);
		CHECK(round_trip(b, n, &zlen), "%zu bytes: %s", n, zlen ? "inflated to other bytes" : err);
		CHECK(zlen <= zsplit_bound(n), "%zu bytes: %zu past the bound %zu", n, zlen, zsplit_bound(n));
	}
	free(b);
}

TEST(shorter_than_one_table_when_parts_differ)
{
	/* The point of it: the two-part bytes above in blocks of their own
	 * come out well under one table for all (here 8 % and more), and a
	 * stretch of one law costs no more than one table. */
	struct rng r;
	uint8_t *b = malloc(12288);
	size_t zlen, one;
	REQUIRE(b);
	rng_seed(&r, 3);
	fill(b, 6144, &r, 200, 0);
	fill(b + 6144, 6144, &r, 30, 1);
	REQUIRE(round_trip(b, 12288, &zlen), "%s", err);
	one = one_table(b, 12288);
	CHECK(zlen < one * 0.92, "split %zu bytes, one table %zu", zlen, one);
	fill(b, 12288, &r, 200, 0);
	REQUIRE(round_trip(b, 12288, &zlen), "%s", err);
	one = one_table(b, 12288);
	CHECK(zlen <= one, "split %zu bytes, one table %zu", zlen, one);
	free(b);
}

UNIT_MAIN(model_tracks_zlib_blocks, cuts_where_the_bytes_change, streams_inflate_to_their_input,
	  shorter_than_one_table_when_parts_differ)
