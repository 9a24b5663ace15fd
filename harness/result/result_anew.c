/*
 * result_anew.c - a run.json of an earlier writer stored as the current
 * one stores it (result_store_anew).
 *
 * Why: what run.json costs is measured on a quiet host's quickstart, and
 * a run there takes minutes the shared test machines rarely give calmly;
 * storing a kept quiet run anew measures the writer on the same trials
 * (tests/unit/test_result_anew.c --anew), and gives the readers a /3 and
 * a /4 file of one run to conclude the same from (result-file.sh).
 *
 * How: a point's trials go back to what the run held (result_trial_full,
 * each encoding written again by the current encoder, the untagged
 * requests in their own encoding), its summaries get their
 * encodings back from those trials (result_point_hist), and then the
 * writer's own calls store it: result_point_compact, and
 * result_trial_set_aside for the trials set aside.  What an earlier
 * writer did not keep (a set-aside trial's histograms, a passing check
 * row's detail in a trial) stays missing.
 */
#include "result.h"
#include "hdrenc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const classes[] = { "all", "nilext", "non_nilext" };

/* Sets s["hdr"] to h's encoding; 0, or -1 with err. */
static int put_hdr(json_t *s, const struct hist *h, char *err, size_t errlen)
{
	char e[128], *text = hdr_encode_b64(h, e, sizeof e);
	if (!text) {
		snprintf(err, errlen, "%s", e);
		return -1;
	}
	json_object_set_new(s, "hdr", json_string(text));
	free(text);
	return 0;
}

/* Each encoding of trial t written again by the current encoder
 * (lib/hdrenc.c).  0, or -1 with err. */
static int trial_reencode(json_t *t, struct hist *h, char *err, size_t errlen)
{
	json_t *sides[3] = { json_object_get(t, "lat_ns"), json_object_get(t, "service_ns"),
			     json_object_get(t, "host_tags") };
	char e[160];

	for (int k = 0; k < 3; k++)
		for (int c = 0; c < 3; c++) {
			json_t *s = json_object_get(sides[k], k == 2 ? "host_len_ns" : classes[c]);
			if (!json_object_get(s, "hdr"))
				continue;
			if (result_hist(h, s, e, sizeof e) < 0 || put_hdr(s, h, e, sizeof e) < 0) {
				snprintf(err, errlen, "%s: %s", k == 2 ? "host_len_ns" : classes[c], e);
				return -1;
			}
		}
	return 0;
}

/* Trial t (full) with each class's untagged requests in their own
 * encoding, as harness/run/hosttags.c gives them, then the shorter kept
 * (result_trial_compact).  0, or -1 with err. */
static int trial_untagged_own(json_t *t, struct hist *h, char *err, size_t errlen)
{
	json_t *sl = json_object_get(json_object_get(t, "host_tags"), "sys_lat_ns");
	char e[160];

	for (int c = 1; c < 3; c++) {
		json_t *s = json_object_get(sl, classes[c]);
		if (!json_object_get(s, "tagged_hdr") && !json_object_get(s, "lat_part"))
			continue;
		if (result_trial_sys_hist(h, t, classes[c], e, sizeof e) < 0 || put_hdr(s, h, e, sizeof e) < 0) {
			snprintf(err, errlen, "host_tags.sys_lat_ns.%s: %s", classes[c], e);
			return -1;
		}
		json_object_del(s, "tagged_hdr");
		json_object_del(s, "lat_part");
	}
	result_trial_compact(t);
	return 0;
}

/* The summary of class cls of field at point p (result_point_hist's
 * fields), or NULL. */
static json_t *point_summary(json_t *p, const char *field, const char *cls)
{
	json_t *ht = json_object_get(p, "host_tags");
	if (!strcmp(field, "lat_ns"))
		return json_object_get(json_object_get(p, "lat_ns"), cls);
	if (!strcmp(field, "service_ns"))
		return json_object_get(json_object_get(json_object_get(p, "server"), "service_ns"), cls);
	if (!strcmp(field, "sys_lat_ns"))
		return json_object_get(json_object_get(ht, "sys_lat_ns"), cls);
	return json_object_get(ht, "host_len_ns");
}

/* Point p of a loaded run as the current writer stores it. */
static int point_anew(json_t *p, struct hist *h, char *err, size_t errlen)
{
	static const char *const fields[] = { "lat_ns", "service_ns", "sys_lat_ns", "host_len_ns" };
	json_t *full = json_array(), *t, *s;
	size_t i;
	char e[300];

	if (!full) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* the point's encodings first, read while its trials are as stored */
	for (int f = 0; f < 4; f++)
		for (int c = 0; c < (f == 3 ? 1 : 3); c++) {
			s = point_summary(p, fields[f], classes[c]);
			if (!json_is_object(s) || json_object_get(s, "hdr") || json_object_get(s, "bins"))
				continue;
			if (result_point_hist(h, p, fields[f], classes[c], e, sizeof e) < 0 ||
			    put_hdr(s, h, e, sizeof e) < 0) {
				snprintf(err, errlen, "%s.%s: %s", fields[f], classes[c], e);
				json_decref(full);
				return -1;
			}
		}
	json_array_foreach(json_object_get(p, "trials"), i, t) {
		json_t *ft = result_trial_full(p, t);
		if (!ft || trial_reencode(ft, h, e, sizeof e) < 0 || trial_untagged_own(ft, h, e, sizeof e) < 0) {
			snprintf(err, errlen, "trials[%zu]: %s", i, ft ? e : "out of memory");
			json_decref(ft);
			json_decref(full);
			return -1;
		}
		json_array_append_new(full, ft);
	}
	json_object_set_new(p, "trials", full);
	result_point_compact(p);
	json_array_foreach(json_object_get(p, "discarded_trials"), i, t)
		result_trial_set_aside(t);
	return 0;
}

int result_store_anew(json_t *run, char *err, size_t errlen)
{
	struct hist *h;
	json_t *p;
	size_t i;
	char e[512];
	int v = result_version(run);

	if (v < 3) {
		snprintf(err, errlen, "schema \"%s\": only a run.json of \"%s\", \"%s\" or \"%s\" is stored anew (an "
			 "older one keeps its bins; compare and history read it as it is)",
			 json_string_value(json_object_get(run, "schema")) ?: "(none)", RESULT_SCHEMA_V3,
			 RESULT_SCHEMA_V4, RESULT_SCHEMA);
		return -1;
	}
	if (!(h = hist_new())) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	json_array_foreach(json_object_get(run, "points"), i, p) {
		if (!json_array_size(json_object_get(p, "trials")))
			continue;
		if (point_anew(p, h, e, sizeof e) < 0) {
			snprintf(err, errlen, "points[%zu]: %s", i, e);
			hist_free(h);
			return -1;
		}
	}
	hist_free(h);
	json_object_set_new(run, "schema", json_string(RESULT_SCHEMA));
	return 0;
}
