/*
 * hdrenc.h - struct hist in HdrHistogram's interchange encoding, so that
 * HdrHistogram's libraries (Java, C, Python, JS, Go, Rust) and
 * HistogramLogAnalyzer read oqbench's latencies, and oqbench reads theirs.
 *
 * The format ("V2 compressed", what HdrHistogram's histogram logs carry
 * after the timestamps), as HdrHistogram's own encoders write it; all
 * integers big-endian:
 *
 *   base64 (RFC 4648, with padding) of
 *     0   u32  cookie 0x1c849314 (V2 compressed base 0x1c849304; bits 4-7 =
 *              1, readers mask them with ~0xf0)
 *     4   i32  length L of the zlib stream that follows
 *     8   L    zlib (RFC 1950) stream of the V2 encoding:
 *       0   u32  cookie 0x1c849313 (V2 base 0x1c849303, bits 4-7 = 1:
 *                counts are ZigZag LEB128 varints)
 *       4   i32  payload length P in bytes (the counts below)
 *       8   i32  normalizing index offset
 *       12  i32  number of significant value digits
 *       16  i64  lowest discernible (trackable) value
 *       24  i64  highest trackable value
 *       32  f64  integer-to-double conversion ratio (IEEE-754 bits)
 *       40  P    counts from index 0 to the index of the largest value:
 *                each a ZigZag-encoded LEB128 varint (at most 9 bytes,
 *                the 9th carrying 8 bits); a negative value -k stands for
 *                k consecutive zero counts.
 *
 * Layout: an HdrHistogram with lowest 1 (unit magnitude 0) and 3
 * significant digits has 2048 sub-buckets, counts index
 * ((b + 1) << 10) + (v >> b) - 1024 with b = 53 - clz(v | 2047), and
 * counts_len 31744 for a highest value of 2^40 - 1: exactly hist_index and
 * HIST_NCOUNTS.  The index depends on the lowest value and the digits
 * only, so a histogram with any highest value decodes, as long as no count
 * lies beyond HIST_MAX.  tests/unit/test_hdrenc.c checks the mapping
 * against HdrHistogram's formulas for every counter and at every bucket
 * edge, and tests/integration/hdr-interop.sh against hdr-histogram-js.
 *
 * What the format does not carry: the exact min and max, the sum and the
 * overflow count.  A decoded histogram has min = the lowest value of its
 * lowest non-empty counter and max = the highest value of its highest
 * (HdrHistogram's own readers do the same), sum = the counters' midpoints
 * times their counts (so hist_mean is HdrHistogram's getMean), and
 * overflow = 0 (values that were clamped sit in the last counter).
 *
 * Two header fields are not used on decoding: the conversion ratio (only
 * HdrHistogram's DoubleHistogram needs it; hdr-histogram-js writes the
 * integer 1 there) and the normalizing index offset.  Java writes the
 * counts in logical index order whatever its offset (getCountAtIndex),
 * and hdr-histogram-js and hdrhistogram-go write the constant 1 there
 * over unshifted counts, so applying the offset would move every count of
 * theirs one index up.
 * We write 0 and ratio 1.0, as HdrHistogram_c does.
 */
#ifndef OQB_HDRENC_H
#define OQB_HDRENC_H

#include <stddef.h>
#include <stdint.h>
#include "hist.h"

#define HDRENC_COMPRESSED_COOKIE 0x1c849314u
#define HDRENC_ENCODING_COOKIE   0x1c849313u
#define HDRENC_HEADER_LEN        40
#define HDRENC_PART_COOKIE       0x6f716231u   /* "oqb1" */

/*
 * The base64 text of h's compressed V2 encoding (lowest 1, highest
 * HIST_MAX, 3 digits).  Counts are written up to the highest non-empty
 * counter (one zero count for an empty histogram, as HdrHistogram_c
 * does), in the shortest zlib stream of deflate with LZ77 matching, of
 * Huffman coding alone and of Huffman coding in blocks (lib/zsplit.h).
 * Returns a malloc'd NUL-terminated string, or NULL with err (a
 * count above INT64_MAX, which the format's signed varints cannot hold,
 * or out of memory).
 */
char *hdr_encode_b64(const struct hist *h, char *err, size_t errlen);

/*
 * Decodes such text (ours or any HdrHistogram library's, when its layout
 * matches ours: 3 significant digits, unit magnitude 0; anything else is
 * refused with a clear reason) into h (reset first).  Leading and
 * trailing white space is ignored.  Refused, with a message that says
 * where and what: bad base64, a cookie that is not V2 compressed (older V0
 * and V1 encodings are named as such), a zlib length that disagrees with
 * the data, a zlib stream that does not inflate or is longer or shorter
 * than its header says, a varint cut short, a count or zero run reaching
 * past counter HIST_NCOUNTS - 1, a total count above 2^64 - 1.
 * 0, or -1 with err and h left empty.
 */
int hdr_decode_b64(const char *text, struct hist *h, char *err, size_t errlen);

/*
 * A histogram as run.json keeps a trial's: its bins when it has them
 * (older files; hist_from_json), else its HdrHistogram text "hdr" with the
 * exact n checked and min, max, sum and overflow put back from the object.
 * 0, or -1 with err.
 */
int hist_from_trial_json(struct hist *h, const json_t *j, char *err, size_t errlen);

/*
 * A part of a histogram (a histogram whose every counter is at most the
 * whole's), stored against the whole: oqbench's own format, not
 * HdrHistogram's, for what only makes sense beside the whole (run.json's
 * untagged requests beside a trial's latencies, harness/result).  Base64
 * of: u32 cookie HDRENC_PART_COOKIE, u32 length L, then L bytes of a zlib
 * stream (the shortest of the three codings above) of one ZigZag LEB128
 * varint per non-empty counter of the whole, in index order: k >= 0, the
 * part holds k of that counter's c values; k < 0, it holds all but
 * -k - 1 of them.  The encoder writes whichever is smaller, so a part
 * that is most of the whole, or little of it, costs about a byte per
 * counter before deflate and far less after (on the quickstart the
 * untagged requests took 0.17 MB of base64 this way against 0.36 MB as
 * the smaller of their own or the tagged requests' HdrHistogram text).
 *
 * hdr_part_encode_b64 returns the malloc'd text, or NULL with err (a
 * counter of part above the whole's, or out of memory).
 * hdr_part_decode_b64 reads such text against whole into part (reset
 * first): its counters and n, min and max those of its lowest and
 * highest counter, sum the counters' midpoints, no overflow (the caller
 * puts back the exact ones it keeps).  Refused with a message: bad
 * base64, another cookie, a length that disagrees, a stream that does
 * not inflate, fewer or more counts than the whole has counters, a
 * count above the whole's.  0, or -1 with err and part left empty.
 */
char *hdr_part_encode_b64(const struct hist *whole, const struct hist *part, char *err, size_t errlen);
int hdr_part_decode_b64(const char *text, const struct hist *whole, struct hist *part, char *err, size_t errlen);

/*
 * The base64 steps alone (RFC 4648 standard alphabet, '=' padding), for
 * tests and log tools that build or take apart an encoding by hand.
 * hdr_b64_encode returns a malloc'd NUL-terminated string or NULL (out of
 * memory).  hdr_b64_decode accepts text with or without padding (white
 * space around it is skipped) and returns a malloc'd buffer and its
 * length in *len, or NULL with err naming the offending character.
 */
char *hdr_b64_encode(const uint8_t *buf, size_t len);
uint8_t *hdr_b64_decode(const char *text, size_t *len, char *err, size_t errlen);

#endif
