/*
 * hist.c - log-linear latency histogram: counter ranges, merge, ranks and
 * percentiles, and the JSON form of the bins (written and checked).
 *
 * The layout and its error bound are described in hist.h.  Reads walk the
 * counters once (31,744 of them); they happen after a run, never on the
 * data path.
 */
#include "hist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hist *hist_new(void)
{
	struct hist *h = calloc(1, sizeof *h);

	if (h)
		h->min = UINT64_MAX;
	return h;
}

void hist_free(struct hist *h)
{
	free(h);
}

void hist_reset(struct hist *h)
{
	memset(h, 0, sizeof *h);
	h->min = UINT64_MAX;
}

/* Bucket number of counter i (0 for the exact counters below HIST_SUB). */
static unsigned index_shift(unsigned i)
{
	if (i >= HIST_NCOUNTS)
		i = HIST_NCOUNTS - 1;
	if (i < HIST_SUB)
		return 0;
	return (i >> (HIST_SUB_BITS - 1)) - 1;
}

uint64_t hist_index_low(unsigned i)
{
	if (i >= HIST_NCOUNTS)
		i = HIST_NCOUNTS - 1;
	if (i < HIST_SUB)
		return i;
	unsigned shift = index_shift(i);
	/* Inverse of hist_index: the sub-bucket v >> shift is in [1024, 2048). */
	uint64_t sub = (uint64_t)i - ((uint64_t)shift << (HIST_SUB_BITS - 1));
	return sub << shift;
}

uint64_t hist_index_width(unsigned i)
{
	return 1ull << index_shift(i);
}

uint64_t hist_index_mid(unsigned i)
{
	return hist_index_low(i) + hist_index_width(i) / 2;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	for (unsigned i = 0; i < HIST_NCOUNTS; i++)
		dst->counts[i] += src->counts[i];
	dst->n += src->n;
	dst->sum += src->sum;
	dst->overflow += src->overflow;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

int hist_is_part(const struct hist *whole, const struct hist *part)
{
	if (part->n > whole->n)
		return 0;
	for (unsigned i = 0; i < HIST_NCOUNTS; i++)
		if (part->counts[i] > whole->counts[i])
			return 0;
	return 1;
}

void hist_subtract(struct hist *dst, const struct hist *src)
{
	unsigned lo = HIST_NCOUNTS, hi = 0;
	for (unsigned i = 0; i < HIST_NCOUNTS; i++) {
		dst->counts[i] -= src->counts[i] < dst->counts[i] ? src->counts[i] : dst->counts[i];
		if (dst->counts[i]) {
			if (lo == HIST_NCOUNTS)
				lo = i;
			hi = i;
		}
	}
	dst->n -= src->n < dst->n ? src->n : dst->n;
	dst->sum -= src->sum;
	dst->overflow -= src->overflow < dst->overflow ? src->overflow : dst->overflow;
	if (!dst->n || lo == HIST_NCOUNTS) {
		dst->min = UINT64_MAX;
		dst->max = 0;
		dst->sum = 0;
		return;
	}
	uint64_t l = hist_index_low(lo), h = hist_index_low(hi) + hist_index_width(hi) - 1;
	if (l > dst->min)
		dst->min = l;
	if (h < dst->max)
		dst->max = h;
}

uint64_t hist_rank(uint64_t n, double p)
{
	if (n == 0)
		return 0;
	if (!(p > 0))
		return 1;
	if (p >= 100)
		return n;
	double x = p / 100.0 * (double)n;
	double k = ceil(x - x * 1e-14);
	if (k < 1)
		return 1;
	if (k >= (double)n)
		return n;
	return (uint64_t)k;
}

uint64_t hist_value_at_rank(const struct hist *h, uint64_t k)
{
	if (h->n == 0)
		return 0;
	if (k < 1)
		k = 1;
	if (k > h->n)
		k = h->n;
	/* The extremes are kept exactly; no need to approximate them. */
	if (k == 1)
		return h->min;
	if (k == h->n)
		return h->max;

	/* Nothing lies below min's counter, so start the walk there. */
	unsigned first = h->min <= HIST_MAX ? hist_index(h->min) : 0;
	uint64_t cum = 0;
	for (unsigned i = first; i < HIST_NCOUNTS; i++) {
		cum += h->counts[i];
		if (cum >= k) {
			uint64_t v = hist_index_mid(i);
			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max;   /* counts sum to less than n: only a hand-made struct */
}

uint64_t hist_percentile(const struct hist *h, double p)
{
	return hist_value_at_rank(h, hist_rank(h->n, p));
}

double hist_mean(const struct hist *h)
{
	return h->n ? h->sum / (double)h->n : 0.0;
}

/* ---- JSON ---------------------------------------------------------- */

/* Adds key = integer v to obj; -1 on allocation failure. */
static int set_int(json_t *obj, const char *key, uint64_t v)
{
	return json_object_set_new(obj, key, json_integer((json_int_t)v));
}

json_t *hist_to_json(const struct hist *h)
{
	json_t *j = json_object();
	json_t *bins = json_array();
	json_t *sum;

	if (!j || !bins)
		goto fail;
	/*
	 * Recorded values are integers, so sum is integral (exactly, or
	 * rounded to an integral double above 2^53): an integer keeps it
	 * bit-exact whatever real precision the caller dumps with.
	 */
	if (h->sum >= 0 && h->sum < 0x1p63 && h->sum == floor(h->sum))
		sum = json_integer((json_int_t)h->sum);
	else
		sum = json_real(h->sum);
	if (set_int(j, "n", h->n) ||
	    set_int(j, "min", h->n ? h->min : 0) ||
	    set_int(j, "max", h->max) ||
	    json_object_set_new(j, "sum", sum) ||
	    set_int(j, "overflow", h->overflow))
		goto fail;
	for (unsigned i = 0; i < HIST_NCOUNTS; i++) {
		if (!h->counts[i])
			continue;
		json_t *pair = json_pack("[II]", (json_int_t)i, (json_int_t)h->counts[i]);
		if (json_array_append_new(bins, pair))
			goto fail;
	}
	if (json_object_set_new(j, "bins", bins)) {
		bins = NULL;   /* set_new consumed it even on failure */
		goto fail;
	}
	return j;
fail:
	json_decref(bins);
	json_decref(j);
	return NULL;
}

/* A short description of what a JSON value is, for error messages. */
static const char *json_kind(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return json_integer_value(v) < 0 ? "a negative integer" : "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE: return "true";
	case JSON_FALSE: return "false";
	case JSON_NULL: return "null";
	}
	return "an unknown value";
}

#define FIX_HINT " (the histogram must be written by hist_to_json)"

static int get_u64(const json_t *j, const char *key, uint64_t *out, char *err, size_t errlen)
{
	json_t *v = json_object_get(j, key);

	if (!v) {
		snprintf(err, errlen, "histogram JSON: missing field \"%s\"" FIX_HINT, key);
		return -1;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		snprintf(err, errlen, "histogram JSON: field \"%s\" must be a non-negative integer, not %s",
			 key, json_kind(v));
		return -1;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int hist_from_json(struct hist *h, const json_t *j, char *err, size_t errlen)
{
	uint64_t n, min, max, overflow, total = 0;
	const json_t *sumv, *bins;

	if (!h) {
		snprintf(err, errlen, "histogram JSON: no histogram to read into");
		return -1;
	}
	hist_reset(h);
	if (!j || !json_is_object(j)) {
		snprintf(err, errlen, "histogram JSON: expected an object with n, min, max, sum, overflow, bins, got %s",
			 j ? json_kind(j) : "nothing");
		return -1;
	}
	if (get_u64(j, "n", &n, err, errlen) || get_u64(j, "min", &min, err, errlen) ||
	    get_u64(j, "max", &max, err, errlen) || get_u64(j, "overflow", &overflow, err, errlen))
		goto fail;

	sumv = json_object_get(j, "sum");
	if (!sumv) {
		snprintf(err, errlen, "histogram JSON: missing field \"sum\"" FIX_HINT);
		goto fail;
	}
	if (!json_is_number(sumv) || !(json_number_value(sumv) >= 0) || !isfinite(json_number_value(sumv))) {
		snprintf(err, errlen, "histogram JSON: field \"sum\" must be a finite number >= 0, not %s",
			 json_kind(sumv));
		goto fail;
	}

	bins = json_object_get(j, "bins");
	if (!bins) {
		snprintf(err, errlen, "histogram JSON: missing field \"bins\"" FIX_HINT);
		goto fail;
	}
	if (!json_is_array(bins)) {
		snprintf(err, errlen, "histogram JSON: field \"bins\" must be an array of [index, count] pairs, not %s",
			 json_kind(bins));
		goto fail;
	}
	for (size_t b = 0; b < json_array_size(bins); b++) {
		const json_t *pair = json_array_get(bins, b);
		const json_t *iv = json_array_get(pair, 0), *cv = json_array_get(pair, 1);

		if (!json_is_array(pair) || json_array_size(pair) != 2 ||
		    !json_is_integer(iv) || !json_is_integer(cv)) {
			snprintf(err, errlen, "histogram JSON: bins[%zu] must be a pair of integers [index, count]", b);
			goto fail;
		}
		json_int_t idx = json_integer_value(iv), cnt = json_integer_value(cv);
		if (idx < 0 || idx >= (json_int_t)HIST_NCOUNTS) {
			snprintf(err, errlen, "histogram JSON: bins[%zu] index %lld is out of range 0..%u",
				 b, (long long)idx, HIST_NCOUNTS - 1);
			goto fail;
		}
		if (cnt <= 0) {
			snprintf(err, errlen, "histogram JSON: bins[%zu] count %lld must be positive (only non-empty bins are listed)",
				 b, (long long)cnt);
			goto fail;
		}
		if (h->counts[idx]) {
			snprintf(err, errlen, "histogram JSON: bins[%zu] repeats index %lld", b, (long long)idx);
			goto fail;
		}
		if (total + (uint64_t)cnt < total) {
			snprintf(err, errlen, "histogram JSON: bins counts overflow 64 bits at bins[%zu]", b);
			goto fail;
		}
		total += (uint64_t)cnt;
		h->counts[idx] = (uint64_t)cnt;
	}
	if (total != n) {
		snprintf(err, errlen, "histogram JSON: bins counts sum to %llu but field \"n\" is %llu",
			 (unsigned long long)total, (unsigned long long)n);
		goto fail;
	}
	if (overflow > h->counts[HIST_NCOUNTS - 1]) {
		snprintf(err, errlen, "histogram JSON: field \"overflow\" is %llu but the last bin (index %u) holds only %llu",
			 (unsigned long long)overflow, HIST_NCOUNTS - 1,
			 (unsigned long long)h->counts[HIST_NCOUNTS - 1]);
		goto fail;
	}
	if (n > 0) {
		unsigned lo = 0, hi = HIST_NCOUNTS - 1;
		while (!h->counts[lo])
			lo++;
		while (!h->counts[hi])
			hi--;
		if (min > HIST_MAX || hist_index(min) != lo) {
			snprintf(err, errlen, "histogram JSON: field \"min\" (%llu) is not in the lowest non-empty bin (index %u, values %llu..%llu)",
				 (unsigned long long)min, lo, (unsigned long long)hist_index_low(lo),
				 (unsigned long long)(hist_index_low(lo) + hist_index_width(lo) - 1));
			goto fail;
		}
		if (max > HIST_MAX || hist_index(max) != hi || max < min) {
			snprintf(err, errlen, "histogram JSON: field \"max\" (%llu) is not in the highest non-empty bin (index %u, values %llu..%llu) or is below min",
				 (unsigned long long)max, hi, (unsigned long long)hist_index_low(hi),
				 (unsigned long long)(hist_index_low(hi) + hist_index_width(hi) - 1));
			goto fail;
		}
		h->min = min;
		h->max = max;
	} else if (min != 0 || max != 0 || json_number_value(sumv) != 0) {
		snprintf(err, errlen, "histogram JSON: an empty histogram (\"n\" = 0) must have min, max and sum 0");
		goto fail;
	}
	h->n = n;
	h->sum = json_number_value(sumv);
	h->overflow = overflow;
	return 0;
fail:
	hist_reset(h);
	return -1;
}
