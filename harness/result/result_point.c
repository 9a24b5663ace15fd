/*
 * result_point.c - a point's histograms, stored once: in its trials.
 *
 * A point's lat_ns, server.service_ns and host_tags.sys_lat_ns summaries
 * are its kept trials' histograms merged counter by counter (harness/run/trials.c), so from
 * "oqbench.run/3" on the point keeps their numbers (n, percentiles, CIs,
 * min, max, sum) and not the encoding: result_point_compact drops it
 * where it is exactly that merge, and result_point_hist merges the trials
 * again on reading.  A trial that was set aside (discarded_trials) is in
 * no merge; it keeps its numbers and checks, not its histograms
 * (result_trial_set_aside).  On the quickstart these were 0.7 MB and
 * 0.5 MB of a 3.0 MB run.json.
 *
 * A trial's untagged requests (host_tags.sys_lat_ns, the system's tail)
 * are a part of its latencies, counter by counter: most of them on a
 * calm host, few of them on a busy one.  From "oqbench.run/5" on a class
 * keeps whichever is shorter (result_trial_compact): the untagged
 * requests' own HdrHistogram text ("hdr"), or their counts against the
 * class's lat_ns ("lat_part", lib/hdrenc.h: for each counter of lat_ns,
 * the untagged ones or how many are tagged, whichever is smaller).
 * "oqbench.run/4" kept the tagged requests' own text ("tagged_hdr")
 * where that was shorter, still read: lat_ns less it.  On the quickstart
 * (the trials bimodal: most 0-6 % tagged, a fifth 99 %) the untagged
 * encodings were 0.8 MB of a 3.2 MB run.json, 0.36 MB with
 * "tagged_hdr" and 0.17 MB with "lat_part".
 */
#include "result.h"
#include "hdrenc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const classes[] = { "all", "nilext", "non_nilext" };
#define NCLASSES 3

/* The sides a point keeps per class: the clients' latency, the server's
 * service time, and the untagged requests' latency (host_tags, the
 * system's tail: harness/run/hosttags.h).  A fourth, the host stalls'
 * lengths (host_tags.host_len_ns), has no classes: its one summary is
 * read as class "all" (hist_of). */
static const char *const sides[] = { "lat_ns", "service_ns", "sys_lat_ns", "host_len_ns" };
#define NSIDES 4
#define SIDE_SVC 1
#define SIDE_LEN 3

/* The sides whose encodings a point keeps itself from "oqbench.run/4"
 * on, its trials their numbers only: no reader takes the server's
 * service times or the host stalls' lengths trial by trial (oqb compare,
 * oqb ab and the finding read a trial's latencies), and a point's merge
 * is shorter than its trials' encodings together (on the quickstart
 * 38 KB against 108 KB). */
static int side_at_point(int svc)
{
	return svc == SIDE_SVC || svc == SIDE_LEN;
}

/* The side's index in sides, -1 for anything else. */
static int side_of(const char *field)
{
	for (int i = 0; i < NSIDES; i++)
		if (!strcmp(field, sides[i]))
			return i;
	return -1;
}

/* The object that holds the classes of side svc: a point keeps its
 * service times under "server", a trial at its top. */
static json_t *classes_of(const json_t *o, int svc, int is_point)
{
	if (svc == 0)
		return json_object_get(o, "lat_ns");
	if (svc == SIDE_LEN)
		return json_object_get(o, "host_tags");
	if (svc == 2)
		return json_object_get(json_object_get(o, "host_tags"), "sys_lat_ns");
	return json_object_get(is_point ? json_object_get(o, "server") : o, "service_ns");
}

int result_trial_sys_hist(struct hist *h, const json_t *t, const char *cls, char *err, size_t errlen)
{
	const json_t *sl = json_object_get(json_object_get(t, "host_tags"), "sys_lat_ns");
	const json_t *c = json_object_get(sl, cls);
	const char *text = json_string_value(json_object_get(c, "tagged_hdr"));
	const char *part = json_string_value(json_object_get(c, "lat_part"));
	struct hist *l, *tg;
	uint64_t n, min, max, ovf;
	char e[256];
	int rc = -1;

	if (!strcmp(cls, "all") && c && !json_object_get(c, "hdr") && !text && !part) {
		/* a trial's "all" is its other two classes together */
		if (result_exact(c, "n", &n, err, errlen) < 0 || !(tg = hist_new())) {
			hist_reset(h);
			return -1;
		}
		hist_reset(h);
		for (int k = 1; k < NCLASSES && rc != -2; k++) {
			if (result_trial_sys_hist(tg, t, classes[k], e, sizeof e) < 0) {
				snprintf(err, errlen, "%s: %s", classes[k], e);
				rc = -2;
			} else {
				hist_merge(h, tg);
			}
		}
		hist_free(tg);
		if (rc == -2 || h->n != n) {
			if (rc != -2)
				snprintf(err, errlen, "\"all\" holds %llu, nilext's and non_nilext's together %llu",
					 (unsigned long long)n, (unsigned long long)h->n);
			hist_reset(h);
			return -1;
		}
		return 0;
	}
	if (!text && !part)
		return result_class_hist(h, sl, cls, err, errlen);
	hist_reset(h);
	if (result_exact(c, "n", &n, err, errlen) < 0 || result_exact(c, "min", &min, err, errlen) < 0 ||
	    result_exact(c, "max", &max, err, errlen) < 0 || result_exact(c, "overflow", &ovf, err, errlen) < 0 ||
	    !json_is_number(json_object_get(c, "sum")))
		return -1;
	l = hist_new();
	tg = hist_new();
	if (!l || !tg)
		snprintf(err, errlen, "out of memory reading a histogram");
	else if (result_class_hist(l, json_object_get(t, "lat_ns"), cls, e, sizeof e) < 0)
		snprintf(err, errlen, "\"%s\" is read against lat_ns.%s: %s", part ? "lat_part" : "tagged_hdr", cls, e);
	else if (part) {
		e[0] = 0;
		if (hdr_part_decode_b64(part, l, h, e, sizeof e) == 0 && h->n != n)
			snprintf(e, sizeof e, "it holds %llu values, \"n\" says %llu", (unsigned long long)h->n,
				 (unsigned long long)n);
		rc = *e ? -1 : 0;
		if (rc < 0)
			snprintf(err, errlen, "\"lat_part\" against lat_ns.%s: %s: the file is damaged", cls, e);
	} else if (hdr_decode_b64(text, tg, e, sizeof e) < 0)
		snprintf(err, errlen, "\"tagged_hdr\": %s", e);
	else {
		rc = hist_is_part(l, tg) && l->n - tg->n == n ? 0 : -1;
		if (rc == 0) {
			hist_subtract(l, tg);
			memcpy(h->counts, l->counts, sizeof h->counts);
		} else {
			snprintf(err, errlen, "\"tagged_hdr\" (%llu values) is not a part of lat_ns.%s (%llu) that "
				 "leaves \"n\" %llu: the file is damaged", (unsigned long long)tg->n, cls,
				 (unsigned long long)l->n, (unsigned long long)n);
		}
	}
	if (rc == 0) {
		h->n = n;
		h->min = n ? min : UINT64_MAX;
		h->max = n ? max : 0;
		h->sum = json_number_value(json_object_get(c, "sum"));
		h->overflow = ovf;
	} else {
		hist_reset(h);
	}
	hist_free(l);
	hist_free(tg);
	return rc;
}

/* The summary of class cls of side svc in o: for the stall lengths, the
 * one summary whatever cls. */
static json_t *summary_of(const json_t *o, int svc, const char *cls, int is_point)
{
	return json_object_get(classes_of(o, svc, is_point), svc == SIDE_LEN ? "host_len_ns" : cls);
}

/* h = the merge of class cls of side svc over p's trials (those with
 * samples); the number of trials merged, or -1 with err. */
static int trials_merged(struct hist *h, const json_t *p, int svc, const char *cls, char *err, size_t errlen)
{
	const json_t *t;
	struct hist *one = hist_new();
	size_t i;
	int k = 0;
	char e[256];

	hist_reset(h);
	if (!one) {
		snprintf(err, errlen, "out of memory reading a histogram");
		return -1;
	}
	json_array_foreach(json_object_get(p, "trials"), i, t) {
		const json_t *lat = classes_of(t, svc, 0);
		int rc;
		if (!(result_num(summary_of(t, svc, cls, 0), "n") > 0))
			continue;
		if (svc == SIDE_LEN)
			rc = result_hist(one, summary_of(t, svc, cls, 0), e, sizeof e);
		else if (svc == 2)
			rc = result_trial_sys_hist(one, t, cls, e, sizeof e);
		else
			rc = result_class_hist(one, lat, cls, e, sizeof e);
		if (rc < 0) {
			snprintf(err, errlen, "trials[%zu].%s.%s: %s", i, sides[svc], cls, e);
			hist_free(one);
			hist_reset(h);
			return -1;
		}
		hist_merge(h, one);
		k++;
	}
	hist_free(one);
	return k;
}

int result_point_hist(struct hist *h, const json_t *p, const char *field, const char *cls, char *err,
		      size_t errlen)
{
	int svc = side_of(field);
	const json_t *lat, *c;
	uint64_t n;

	if (svc < 0) {
		hist_reset(h);
		snprintf(err, errlen, "no histogram field \"%s\" (lat_ns, service_ns, sys_lat_ns or host_len_ns)",
			 field);
		return -1;
	}
	if (svc == SIDE_LEN)
		cls = "all";   /* one summary, no classes */
	lat = classes_of(p, svc, 1);
	c = summary_of(p, svc, cls, 1);
	/* stored: an older file, a point without trials, one whose trials
	 * did not add up to it, or a side the point keeps (side_at_point:
	 * its "all" the sum of its classes) */
	if (!c || json_object_get(c, "hdr") || json_object_get(c, "bins") ||
	    !json_array_size(json_object_get(p, "trials")) ||
	    (svc == SIDE_SVC && !strcmp(cls, "all") && (json_object_get(json_object_get(lat, "nilext"), "hdr") ||
							json_object_get(json_object_get(lat, "non_nilext"), "hdr"))))
		return svc == SIDE_LEN ? result_hist(h, c, err, errlen) : result_class_hist(h, lat, cls, err, errlen);
	n = (uint64_t)result_num(c, "n");
	if (trials_merged(h, p, svc, cls, err, errlen) < 0)
		return -1;
	if (h->n != n || (n && (h->min != (uint64_t)result_num(c, "min") ||
				h->max != (uint64_t)result_num(c, "max")))) {
		snprintf(err, errlen, "%s.%s keeps no \"hdr\" and its trials merged do not make it (n %llu, "
			 "trials' %llu): the file is damaged", field, cls, (unsigned long long)n,
			 (unsigned long long)h->n);
		hist_reset(h);
		return -1;
	}
	return 0;
}

/* a and b hold the same values, counter by counter. */
static int same_hist(const struct hist *a, const struct hist *b)
{
	return a->n == b->n && a->sum == b->sum && a->overflow == b->overflow &&
	       (a->n == 0 || (a->min == b->min && a->max == b->max)) &&
	       !memcmp(a->counts, b->counts, sizeof a->counts);
}

/* Drops the encodings of side svc from a stored trial t. */
static void trial_drop_side(json_t *t, int svc)
{
	for (int c = 0; c < (svc == SIDE_LEN ? 1 : NCLASSES); c++)
		json_object_del(summary_of(t, svc, classes[c], 0), "hdr");
}

void result_point_compact(json_t *p)
{
	struct hist *a = hist_new(), *b = hist_new();
	json_t *stored, *t, *w, *svc_all;
	int at_point[NSIDES] = { 0 }, same[NSIDES][NCLASSES] = { { 0 } };
	size_t i;
	char e[256];

	if (!a || !b || !json_array_size(json_object_get(p, "trials")))
		goto done;
	for (int svc = 0; svc < NSIDES; svc++) {
		at_point[svc] = side_at_point(svc);
		for (int c = 0; c < (svc == SIDE_LEN ? 1 : NCLASSES); c++) {
			json_t *s = summary_of(p, svc, classes[c], 1);
			if (!json_object_get(s, "hdr") || result_hist(a, s, e, sizeof e) < 0 ||
			    trials_merged(b, p, svc, classes[c], e, sizeof e) < 0 || !same_hist(a, b)) {
				at_point[svc] = 0;   /* its trials keep theirs */
				continue;
			}
			same[svc][c] = 1;
		}
	}
	for (int svc = 0; svc < NSIDES; svc++)
		for (int c = 0; !at_point[svc] && c < (svc == SIDE_LEN ? 1 : NCLASSES); c++)
			if (same[svc][c])
				json_object_del(summary_of(p, svc, classes[c], 1), "hdr");
	/* service times the point keeps: their "all" is their classes
	 * summed, as a trial's is (result_trial_classes keeps an "all" that
	 * is not) */
	if (json_object_get(summary_of(p, SIDE_SVC, "nilext", 1), "hdr") &&
	    json_object_get(summary_of(p, SIDE_SVC, "non_nilext", 1), "hdr") &&
	    json_object_get(summary_of(p, SIDE_SVC, "all", 1), "hdr") &&
	    (svc_all = result_trial_classes(classes_of(p, SIDE_SVC, 1))))
		json_object_set_new(json_object_get(p, "server"), "service_ns", svc_all);
	/* each trial as run.json stores it (result_trial_stored): a copy, so
	 * that the rows the run merges its points from keep everything */
	stored = json_array();
	json_array_foreach(json_object_get(p, "trials"), i, t) {
		json_t *st = result_trial_stored(t, json_object_get(p, "checks"));
		for (int svc = 0; st && svc < NSIDES; svc++)
			if (at_point[svc])
				trial_drop_side(st, svc);
		json_array_append_new(stored, st);
	}
	if (stored && json_array_size(stored) == json_array_size(json_object_get(p, "trials")))
		json_object_set(p, "trials", stored);
	json_decref(stored);
	/* the first trial's server stall events: every trial's are in its
	 * directory's server-N.json, and its stall times in host_tags */
	json_array_foreach(json_object_get(json_object_get(p, "server"), "per_worker"), i, w)
		json_object_del(json_object_get(w, "stalls"), "events");
done:
	hist_free(a);
	hist_free(b);
}

/* What a trial's check row may leave to the point's row of its name
 * when the two hold the same (result_trial_full puts them back). */
static const char *const row_from_point[] = { "concerns", "threshold" };
#define NROW_FROM_POINT 2

/* A check row of a trial as run.json stores it: no "detail" when it
 * passed (the point's row keeps one), no "concerns" or "threshold" when
 * they are the point's row's of that name (prow; NULL: it keeps them). */
static void check_row_stored(json_t *row, const json_t *prow)
{
	if (!strcmp(json_string_value(json_object_get(row, "status")) ?: "", "pass"))
		json_object_del(row, "detail");
	for (int k = 0; prow && k < NROW_FROM_POINT; k++)
		if (json_equal(json_object_get(row, row_from_point[k]), json_object_get(prow, row_from_point[k])))
			json_object_del(row, row_from_point[k]);
}

/* The point's row named like row, or NULL. */
static const json_t *point_row(const json_t *point_checks, const json_t *row)
{
	const char *name = json_string_value(json_object_get(row, "name"));
	const json_t *r;
	size_t i;

	json_array_foreach(point_checks, i, r)
		if (name && json_equal(json_object_get(r, "name"), json_object_get(row, "name")))
			return r;
	return NULL;
}

void result_trial_set_aside(json_t *t)
{
	json_t *row;
	size_t i;

	for (int svc = 0; svc < NSIDES; svc++)
		for (int c = 0; c < (svc == SIDE_LEN ? 1 : NCLASSES); c++) {
			json_t *s = summary_of(t, svc, classes[c], 0);
			json_object_del(s, "hdr");
			json_object_del(s, "tagged_hdr");
			json_object_del(s, "lat_part");
			json_object_del(s, "bins");
		}
	json_array_foreach(json_object_get(t, "checks"), i, row)
		check_row_stored(row, NULL);
}

/* The numbers of a summary that its histogram gives back exactly
 * (result_hist_summary): the mean is sum / n, the CIs the counters'. */
static const char *const derived_keys[] = { "mean", "p50_ci", "p99_ci", "p999_ci" };
#define NDERIVED 4

/* Trial t's histogram of side svc and class cls, read as a point reads
 * it (trials_merged).  0, or -1 with err. */
static int trial_hist_of(struct hist *h, const json_t *t, int svc, const char *cls, char *err, size_t errlen)
{
	if (svc == SIDE_LEN)
		return result_hist(h, summary_of(t, svc, cls, 0), err, errlen);
	if (svc == 2)
		return result_trial_sys_hist(h, t, cls, err, errlen);
	return result_class_hist(h, classes_of(t, svc, 0), cls, err, errlen);
}

/* Per summary of trial t that its histogram reads back: fill (1) its
 * derived numbers from the histogram where it lacks them, or (0) drop
 * those the histogram gives back as they stand.  t is changed in place. */
static void trial_derived(json_t *t, int fill)
{
	struct hist *h = hist_new();
	char e[256];

	for (int svc = 0; h && svc < NSIDES; svc++)
		for (int c = 0; c < (svc == SIDE_LEN ? 1 : NCLASSES); c++) {
			json_t *s = summary_of(t, svc, classes[c], 0), *full;
			int same = 1;

			if (!json_is_object(s))
				continue;
			if (trial_hist_of(h, t, svc, classes[c], e, sizeof e) < 0 || !(full = result_hist_summary(h))) {
				/* a side its point keeps (oqbench.run/4): the mean
				 * comes back from the exact sum, the CIs do not */
				double n = result_num(s, "n"), sum = result_num(s, "sum");
				if (fill && n > 0 && sum >= 0 && !json_object_get(s, "mean"))
					json_object_set_new(s, "mean", json_real(sum / n));
				else if (!fill && n > 0 && sum >= 0 && result_num(s, "mean") == sum / n)
					json_object_del(s, "mean");
				continue;
			}
			for (int k = 0; k < NDERIVED && !fill; k++)
				same &= json_equal(json_object_get(s, derived_keys[k]),
						   json_object_get(full, derived_keys[k]));
			for (int k = 0; k < NDERIVED; k++) {
				if (!fill && same)
					json_object_del(s, derived_keys[k]);
				else if (fill && !json_object_get(s, derived_keys[k]))
					json_object_set(s, derived_keys[k], json_object_get(full, derived_keys[k]));
			}
			json_decref(full);
		}
	hist_free(h);
}

json_t *result_trial_stored(const json_t *t, const json_t *point_checks)
{
	json_t *out = json_deep_copy(t), *row;
	size_t i;

	if (!out)
		return NULL;
	trial_derived(out, 0);
	json_array_foreach(json_object_get(out, "checks"), i, row)
		check_row_stored(row, point_row(point_checks, row));
	return out;
}

json_t *result_trial_full(const json_t *p, const json_t *t)
{
	json_t *out = json_deep_copy(t), *row;
	const json_t *prow;
	size_t i;

	if (!out)
		return NULL;
	trial_derived(out, 1);
	json_array_foreach(json_object_get(out, "checks"), i, row) {
		if (!(prow = point_row(json_object_get(p, "checks"), row)))
			continue;
		for (int k = 0; k < NROW_FROM_POINT; k++)
			if (!json_object_get(row, row_from_point[k]) && json_object_get(prow, row_from_point[k]))
				json_object_set(row, row_from_point[k], json_object_get(prow, row_from_point[k]));
	}
	return out;
}

void result_trial_compact(json_t *t)
{
	json_t *sl = json_object_get(json_object_get(t, "host_tags"), "sys_lat_ns");
	struct hist *u = hist_new(), *l = hist_new(), *back = hist_new();
	char e[256];

	for (int c = 1; c < NCLASSES && u && l && back; c++) {
		json_t *s = json_object_get(sl, classes[c]);
		const char *hdr = json_string_value(json_object_get(s, "hdr"));
		char *enc;

		if (!hdr || result_hist(u, s, e, sizeof e) < 0 ||
		    result_class_hist(l, json_object_get(t, "lat_ns"), classes[c], e, sizeof e) < 0)
			continue;
		if (!hist_is_part(l, u))
			continue;   /* not a part of lat_ns: keep it as it is */
		enc = hdr_part_encode_b64(l, u, e, sizeof e);
		if (enc && strlen(enc) < strlen(hdr)) {
			json_t *keep = json_string(hdr);
			json_object_set_new(s, "lat_part", json_string(enc));
			json_object_del(s, "hdr");
			/* read back: the same counters, or the untagged encoding stays */
			if (result_trial_sys_hist(back, t, classes[c], e, sizeof e) < 0 || !same_hist(back, u)) {
				json_object_del(s, "lat_part");
				json_object_set(s, "hdr", keep);
			}
			json_decref(keep);
		}
		free(enc);
	}
	hist_free(u);
	hist_free(l);
	hist_free(back);
}
