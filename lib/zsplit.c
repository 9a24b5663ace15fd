/*
 * zsplit.c - Huffman-coded literals in deflate blocks placed by a cost
 * model (zsplit.h says why and what it gains).
 *
 * The model (zsplit_block_bits) follows RFC 1951 3.2.7.  A dynamic
 * block is 3 bits of type, 14 of HLIT/HDIST/HCLEN, 3 per code-length
 * code sent, the run-length coded code lengths of the 257 literal/end
 * codes and of the two distance codes zlib always declares (it gives
 * distance codes 0 and 1 one bit each when there are none), then each
 * literal's code and the end-of-block code.  The symbols of both codes
 * are counted at their entropy under the segment's own counts, and a
 * symbol's code length, for the run-length coded header, is its entropy
 * rounded (1-15 bits, 1-7 for the code-length code).  A Huffman code is
 * at most a bit a symbol above the entropy; the model only has to rank
 * cuts, not meet zlib's sizes (tests/unit/test_zsplit.c holds it within
 * 15 % under and 2 % over zlib's blocks).  The plug-in entropy of a
 * short sample is biased low, which would favour cuts; on the
 * quickstart's encodings Miller and Madow's correction for it changed
 * the total by 0.05 % (the wrong way), so it is not applied.
 */
#include "zsplit.h"

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <zlib.h>

#define NLIT   257          /* 256 literals and end-of-block */
#define NBL    19           /* the code-length code's symbols */

size_t zsplit_bound(size_t len)
{
	/* each block no longer than its bytes stored (5 bytes of header per
	 * 64 KB), at most ZSPLIT_CANDIDATES of ours and one of zlib's per
	 * 16K symbols, the zlib header and trailer */
	return len + 5 * (ZSPLIT_CANDIDATES + len / 16384 + 4) + 16;
}

/*
 * The bits that the symbols with counts f[0..n) take at their entropy
 * under those counts; len[s] a symbol's code length, its entropy
 * rounded to 1..max (0 for one that does not occur).
 */
static double coded_bits(const uint32_t *f, int n, int max, uint8_t *len)
{
	uint64_t total = 0;
	double bits = 0, lg;

	for (int s = 0; s < n; s++)
		total += f[s];
	lg = total ? log2((double)total) : 0;
	for (int s = 0; s < n; s++) {
		len[s] = 0;
		if (!f[s])
			continue;
		double l = lg - log2((double)f[s]);
		int r = (int)(l + 0.5);
		bits += f[s] * l;
		len[s] = (uint8_t)(r < 1 ? 1 : r > max ? max : r);
	}
	return bits;
}

/*
 * The code-length code's symbol counts for lengths len[0..n), run-length
 * coded as RFC 1951 allows: 16 repeats the previous length 3-6 times,
 * 17 sends 3-10 zeros, 18 sends 11-138; adds the extra bits to *extra.
 */
static void runs_of(const uint8_t *len, int n, uint32_t bl[NBL], uint64_t *extra)
{
	for (int i = 0; i < n;) {
		int v = len[i], r = 1;
		while (i + r < n && len[i + r] == v)
			r++;
		i += r;
		if (v == 0) {
			for (; r >= 11; r -= r > 138 ? 138 : r) {
				bl[18]++;
				*extra += 7;
			}
			if (r >= 3) {
				bl[17]++;
				*extra += 3;
				r = 0;
			}
			bl[0] += (uint32_t)r;
			continue;
		}
		bl[v]++;
		for (r--; r >= 3; r -= r > 6 ? 6 : r) {
			bl[16]++;
			*extra += 2;
		}
		bl[v] += (uint32_t)r;
	}
}

uint64_t zsplit_block_bits(const uint32_t freq[256])
{
	static const uint8_t order[NBL] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };
	static const uint8_t dist[2] = { 1, 1 };
	uint32_t f[NLIT], bl[NBL] = { 0 };
	uint8_t len[NLIT], bllen[NBL];
	uint64_t extra = 3 + 14;                /* block type, HLIT, HDIST, HCLEN */
	double bits;
	int hclen = 4;

	memcpy(f, freq, 256 * sizeof f[0]);
	f[256] = 1;                             /* the end-of-block code */
	bits = coded_bits(f, NLIT, 15, len);
	runs_of(len, NLIT, bl, &extra);
	runs_of(dist, 2, bl, &extra);
	bits += coded_bits(bl, NBL, 7, bllen);
	for (int i = 0; i < NBL; i++)
		if (bllen[order[i]])
			hclen = i + 1;
	return (uint64_t)(bits + 0.5) + extra + 3 * (uint64_t)hclen;
}

/* The model's bits for candidate segments i..j of the prefix counts. */
static uint64_t seg_bits(const uint32_t *pre, int i, int j)
{
	uint32_t f[256];

	for (int b = 0; b < 256; b++)
		f[b] = pre[(size_t)j * 256 + b] - pre[(size_t)i * 256 + b];
	return zsplit_block_bits(f);
}

/*
 * Candidates a..b, whose one block costs whole bits: the cut that makes
 * the two blocks cheapest, if they are cheaper than one, then the same
 * in each part.  Appends the cuts (in candidate steps) to cuts[*n..max).
 */
static void bisect(const uint32_t *pre, int a, int b, uint64_t whole, int *cuts, int *n, int max)
{
	uint64_t best = whole, left = 0, right = 0;
	int at = -1;

	for (int c = a + 1; c < b; c++) {
		uint64_t l = seg_bits(pre, a, c), r = seg_bits(pre, c, b);
		if (l + r < best) {
			best = l + r;
			at = c;
			left = l;
			right = r;
		}
	}
	if (at < 0 || *n >= max)
		return;
	cuts[(*n)++] = at;
	bisect(pre, a, at, left, cuts, n, max);
	bisect(pre, at, b, right, cuts, n, max);
}

static int by_offset(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

int zsplit_cuts(const uint8_t *src, size_t len, size_t *cuts, int max)
{
	size_t step = (len + ZSPLIT_CANDIDATES - 1) / ZSPLIT_CANDIDATES;
	uint32_t *pre = NULL;
	int at[ZSPLIT_CANDIDATES], m, n = 0;

	if (step < ZSPLIT_STEP_MIN)
		step = ZSPLIT_STEP_MIN;
	m = (int)((len + step - 1) / step);     /* segments of one step */
	if (m < 2 || max <= 0)
		return 0;
	if (max > ZSPLIT_CANDIDATES)
		max = ZSPLIT_CANDIDATES;
	/* pre[k * 256 + b]: how often byte b occurs in src[0 .. k x step) */
	pre = calloc((size_t)(m + 1) * 256, sizeof *pre);
	if (!pre)
		return -1;
	for (int k = 1; k <= m; k++) {
		size_t end = (size_t)k * step < len ? (size_t)k * step : len;
		memcpy(pre + (size_t)k * 256, pre + (size_t)(k - 1) * 256, 256 * sizeof *pre);
		for (size_t i = (size_t)(k - 1) * step; i < end; i++)
			pre[(size_t)k * 256 + src[i]]++;
	}
	bisect(pre, 0, m, seg_bits(pre, 0, m), at, &n, max);
	qsort(at, (size_t)n, sizeof at[0], by_offset);
	for (int i = 0; i < n; i++)
		cuts[i] = (size_t)at[i] * step;
	free(pre);
	return n;
}

size_t zsplit_deflate(uint8_t *dst, const uint8_t *src, size_t len, char *err, size_t errlen)
{
	size_t cuts[ZSPLIT_CANDIDATES], from = 0, out = 0;
	int n = zsplit_cuts(src, len, cuts, ZSPLIT_CANDIDATES), rc;
	z_stream st;

	if (n < 0) {
		snprintf(err, errlen, "deflate in blocks: out of memory");
		return 0;
	}
	memset(&st, 0, sizeof st);
	rc = deflateInit2(&st, 9, Z_DEFLATED, 15, 9, Z_HUFFMAN_ONLY);
	if (rc != Z_OK) {
		snprintf(err, errlen, "deflate in blocks: zlib deflateInit2 failed (%s)", zError(rc));
		return 0;
	}
	st.next_out = dst;
	st.avail_out = (uInt)zsplit_bound(len);
	for (int k = 0; k <= n; k++) {
		size_t to = k < n ? cuts[k] : len;
		int last = k == n;
		st.next_in = (Bytef *)(uintptr_t)(src + from);
		st.avail_in = (uInt)(to - from);
		rc = deflate(&st, last ? Z_FINISH : Z_BLOCK);
		if (rc != (last ? Z_STREAM_END : Z_OK) || st.avail_in) {
			snprintf(err, errlen, "deflate in blocks: zlib deflate failed at byte %zu of %zu (%s)", from, len,
				 rc == Z_OK || rc == Z_STREAM_END ? "output full" : zError(rc));
			break;
		}
		from = to;
		if (last)
			out = st.total_out;
	}
	deflateEnd(&st);
	return out;
}
