/*
 * result.c - run.json read and written in one place (result.h).
 *
 * Why one histogram encoding: a point of the quickstart kept each of its
 * histograms as bins, ranges_ns and hdr, pretty-printed, and its run.json
 * came to 41 MB.  The HdrHistogram text alone holds every counter (it is
 * lossless for our layout, lib/hdrenc.h); what it lacks (the exact min,
 * max, sum and overflow) sits beside it as plain numbers, so result_hist
 * rebuilds the histogram that was summarised, bit for bit, and
 * tests/integration/result-file.sh recomputes the printed percentiles
 * from it with a decoder written apart from lib/hdrenc.c.
 */
#include "result.h"
#include "hdrenc.h"
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>

int result_version(const json_t *run)
{
	const char *s = json_string_value(json_object_get(run, "schema"));
	if (!s)
		return 0;
	if (!strcmp(s, RESULT_SCHEMA))
		return 5;
	if (!strcmp(s, RESULT_SCHEMA_V4))
		return 4;
	if (!strcmp(s, RESULT_SCHEMA_V3))
		return 3;
	if (!strcmp(s, RESULT_SCHEMA_V2))
		return 2;
	if (!strcmp(s, RESULT_SCHEMA_V1))
		return 1;
	return 0;
}

json_t *result_load(const char *path, char *err, size_t errlen)
{
	json_error_t je;
	json_t *r, *points, *p;
	const char *schema;
	char inside[4096];
	struct stat st;
	size_t i;

	/* a run's directory stands for its run.json (a directory opened as a
	 * file reads as empty, which would name the wrong fault) */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(inside, sizeof inside, "%s/run.json", path);
		if (access(inside, F_OK) != 0) {
			snprintf(err, errlen, "%s: a directory without run.json; give a run's directory (oqb run --out) "
				 "or its run.json", path);
			return NULL;
		}
		path = inside;
	}
	r = json_load_file(path, 0, &je);
	if (!r) {
		if (je.line < 0)
			snprintf(err, errlen, "%s: cannot read: %s", path, je.text);
		else if (je.position == 0 && strstr(je.text, "end of file"))
			snprintf(err, errlen, "%s: file is empty; expected a run.json written by oqb run",
				 path);
		else
			snprintf(err, errlen, "%s:%d:%d: %s; the file is damaged or is not a run.json",
				 path, je.line, je.column, je.text);
		return NULL;
	}
	if (!json_is_object(r)) {
		snprintf(err, errlen, "%s: the top level is %s, not an object; is this an oqb run.json?",
			 path, json_is_array(r) ? "an array" : "a single value");
		json_decref(r);
		return NULL;
	}
	schema = json_string_value(json_object_get(r, "schema"));
	if (!result_version(r)) {
		snprintf(err, errlen, "%s: schema is \"%s\", expected \"%s\" or the older \"%s\", \"%s\", \"%s\" or "
			 "\"%s\" (is this an oqb run.json? one from a newer oqb needs that oqb to read it)", path,
			 schema ? schema : "(none)", RESULT_SCHEMA, RESULT_SCHEMA_V4, RESULT_SCHEMA_V3, RESULT_SCHEMA_V2,
			 RESULT_SCHEMA_V1);
		json_decref(r);
		return NULL;
	}
	points = json_object_get(r, "points");
	if (!json_is_array(points)) {
		snprintf(err, errlen, "%s: no \"points\" array; the file is damaged or was not "
			 "written by oqb run", path);
		json_decref(r);
		return NULL;
	}
	/* compare and plot match points by system: each must name one. */
	json_array_foreach(points, i, p) {
		if (!json_is_object(p) || !json_is_string(json_object_get(p, "system"))) {
			snprintf(err, errlen, "%s: points[%zu]: %s; the file is damaged or was not "
				 "written by oqb run", path, i, json_is_object(p) ?
				 "no \"system\" string" : "not an object");
			json_decref(r);
			return NULL;
		}
	}
	return r;
}

/* Dumps j to tmp, then renames it to path. */
static int write_atomic(const json_t *j, const char *dir, const char *name, size_t flags, char *err,
			size_t errlen)
{
	char tmp[4096], path[4096];

	snprintf(path, sizeof path, "%s/%s", dir, name);
	snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
	if (json_dump_file(j, tmp, flags) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		return -1;
	}
	return 0;
}

int result_write(const json_t *run, const char *dir, int pretty, char *err, size_t errlen)
{
	char tmp[4096], path[4096];
	size_t flags = JSON_PRESERVE_ORDER | (pretty ? JSON_INDENT(1) : JSON_COMPACT);

	if (write_atomic(run, dir, "run.json", flags, err, errlen) < 0)
		return -1;
	snprintf(path, sizeof path, "%s/%s", dir, RESULT_CSV);
	snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, RESULT_CSV);
	if (result_csv_write(run, tmp, err, errlen) < 0)
		return -1;
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		return -1;
	}
	return 0;
}

static json_t *ci_pair(uint64_t lo, uint64_t hi)
{
	return json_pack("[II]", (json_int_t)lo, (json_int_t)hi);
}

json_t *result_hist_summary(const struct hist *h)
{
	json_t *j = json_object(), *sum;
	uint64_t lo, hi;
	char e[128], *hdr;

	if (!j)
		return NULL;
	/* sum of integers is integral: an integer keeps it exact whatever
	 * precision a reader parses reals with (as hist_to_json does) */
	if (h->sum >= 0 && h->sum < 0x1p63 && h->sum == floor(h->sum))
		sum = json_integer((json_int_t)h->sum);
	else
		sum = json_real(h->sum);
	json_object_set_new(j, "n", json_integer((json_int_t)h->n));
	json_object_set_new(j, "min", json_integer((json_int_t)(h->n ? h->min : 0)));
	json_object_set_new(j, "max", json_integer((json_int_t)h->max));
	json_object_set_new(j, "sum", sum);
	json_object_set_new(j, "overflow", json_integer((json_int_t)h->overflow));
	json_object_set_new(j, "mean", json_real(hist_mean(h)));
	json_object_set_new(j, "p50", json_integer((json_int_t)hist_percentile(h, 50)));
	json_object_set_new(j, "p99", json_integer((json_int_t)hist_percentile(h, 99)));
	json_object_set_new(j, "p999", json_integer((json_int_t)hist_percentile(h, 99.9)));
	stats_hist_pct_ci(h, 0.5, STATS_Z95, &lo, &hi);
	json_object_set_new(j, "p50_ci", ci_pair(lo, hi));
	stats_hist_pct_ci(h, 0.99, STATS_Z95, &lo, &hi);
	json_object_set_new(j, "p99_ci", ci_pair(lo, hi));
	stats_hist_pct_ci(h, 0.999, STATS_Z95, &lo, &hi);
	json_object_set_new(j, "p999_ci", ci_pair(lo, hi));
	hdr = hdr_encode_b64(h, e, sizeof e);
	if (!hdr) {
		json_decref(j);
		return NULL;
	}
	json_object_set_new(j, "hdr", json_string(hdr));
	free(hdr);
	return j;
}

int result_exact(const json_t *s, const char *key, uint64_t *out, char *err, size_t errlen)
{
	const json_t *v = json_object_get(s, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		snprintf(err, errlen, "\"%s\" is %s, expected a non-negative integer beside \"hdr\"", key,
			 v ? "not a non-negative integer" : "missing");
		return -1;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int result_hist(struct hist *h, const json_t *s, char *err, size_t errlen)
{
	const char *text = json_string_value(json_object_get(s, "hdr"));
	const json_t *sumv = json_object_get(s, "sum");
	uint64_t n, min, max, ovf;
	char e[256];

	if (!json_is_object(s)) {
		hist_reset(h);
		snprintf(err, errlen, "expected a histogram summary (an object), found %s",
			 s ? "another type" : "nothing");
		return -1;
	}
	if (json_object_get(s, "bins"))
		return hist_from_json(h, s, err, errlen);
	if (!text) {
		hist_reset(h);
		snprintf(err, errlen, "neither \"hdr\" (oqbench.run/2 and later) nor \"bins\" (oqbench.run/1)%s",
			 json_object_get(s, "p50") ? ": a summary that keeps its numbers only (a point's, from its "
			 "trials: result_point_hist; a trial set aside keeps none)" : "");
		return -1;
	}
	if (result_exact(s, "n", &n, err, errlen) < 0 || result_exact(s, "min", &min, err, errlen) < 0 ||
	    result_exact(s, "max", &max, err, errlen) < 0 || result_exact(s, "overflow", &ovf, err, errlen) < 0) {
		hist_reset(h);
		return -1;
	}
	if (!json_is_number(sumv) || !(json_number_value(sumv) >= 0)) {
		hist_reset(h);
		snprintf(err, errlen, "\"sum\" is missing or not a non-negative number");
		return -1;
	}
	if (hdr_decode_b64(text, h, e, sizeof e) < 0) {
		snprintf(err, errlen, "%s", e);
		return -1;
	}
	if (h->n != n) {
		snprintf(err, errlen, "the hdr encoding holds %llu values, \"n\" says %llu",
			 (unsigned long long)h->n, (unsigned long long)n);
		hist_reset(h);
		return -1;
	}
	if (n && (min > max || hist_index(min > HIST_MAX ? HIST_MAX : min) != hist_index(h->min) ||
		  hist_index(max > HIST_MAX ? HIST_MAX : max) != hist_index(h->max))) {
		snprintf(err, errlen, "\"min\" %llu or \"max\" %llu lies outside the encoding's lowest or "
			 "highest counter", (unsigned long long)min, (unsigned long long)max);
		hist_reset(h);
		return -1;
	}
	if (n) {
		h->min = min;
		h->max = max;
	}
	h->sum = json_number_value(sumv);
	h->overflow = ovf;
	return 0;
}

/* One class of lat into h, or leaves h empty when lat has no such class
 * or it has no samples.  0 or -1 with err. */
static int class_or_empty(struct hist *h, const json_t *lat, const char *cls, char *err, size_t errlen)
{
	const json_t *c = json_object_get(lat, cls);
	if (!c || json_integer_value(json_object_get(c, "n")) == 0) {
		hist_reset(h);
		return 0;
	}
	return result_hist(h, c, err, errlen);
}

/* h = nilext + non_nilext of lat; 0 or -1 with err. */
static int classes_sum(struct hist *h, const json_t *lat, char *err, size_t errlen)
{
	struct hist *one = hist_new();
	int rc = -1;
	if (!one) {
		snprintf(err, errlen, "out of memory reading a histogram");
		return -1;
	}
	if (class_or_empty(h, lat, "nilext", err, errlen) == 0 &&
	    class_or_empty(one, lat, "non_nilext", err, errlen) == 0) {
		hist_merge(h, one);
		rc = 0;
	}
	hist_free(one);
	return rc;
}

json_t *result_trial_classes(const json_t *lat)
{
	json_t *out = json_deep_copy(lat);
	json_t *all = json_object_get(out, "all");
	struct hist *a = hist_new(), *b = hist_new();
	char e[256];

	if (!out || !a || !b) {
		json_decref(out);
		out = NULL;
		goto done;
	}
	if (!json_object_get(all, "hdr") || !json_object_get(out, "nilext"))
		goto done;
	if (result_hist(a, all, e, sizeof e) < 0 || classes_sum(b, out, e, sizeof e) < 0)
		goto done;
	if (a->n == b->n && a->sum == b->sum && a->overflow == b->overflow &&
	    (a->n == 0 || (a->min == b->min && a->max == b->max)) &&
	    !memcmp(a->counts, b->counts, sizeof a->counts))
		json_object_del(all, "hdr");
done:
	hist_free(a);
	hist_free(b);
	return out;
}

int result_class_hist(struct hist *h, const json_t *lat, const char *cls, char *err, size_t errlen)
{
	const json_t *c = json_object_get(lat, cls);
	uint64_t n;

	if (!c || strcmp(cls, "all") != 0 || json_object_get(c, "hdr") || json_object_get(c, "bins"))
		return result_hist(h, c, err, errlen);
	if (result_exact(c, "n", &n, err, errlen) < 0) {
		hist_reset(h);
		return -1;
	}
	if (classes_sum(h, lat, err, errlen) < 0)
		return -1;
	if (h->n != n) {
		snprintf(err, errlen, "\"all\" has no \"hdr\" and its n %llu is not nilext's and non_nilext's "
			 "together (%llu)", (unsigned long long)n, (unsigned long long)h->n);
		hist_reset(h);
		return -1;
	}
	return 0;
}
