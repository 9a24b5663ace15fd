/*
 * hosttags.c - a point's requests apart by host stall (hosttags.h).
 */
#include "hosttags.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hist.h"
#include "merge.h"
#include "result.h"

#define NCLS 3
static const char *const cls[NCLS] = { "all", "nilext", "non_nilext" };
#define NCOUNTS 3
static const char *const stall_keys[] = { "host", "system", "unattributed", "kernel", "probe" };
#define NSTALL 5

/* Requests of h at or above value v, at the bins' resolution (v's bin
 * and those above it: a tail all in one bin is still seen). */
static uint64_t above(const struct hist *h, uint64_t v)
{
	uint64_t n = 0;
	for (unsigned i = hist_index(v > HIST_MAX ? HIST_MAX : v); i < HIST_NCOUNTS; i++)
		n += h->counts[i];
	return n;
}

int hosttags_set_by_host(const struct hist *all, const struct hist *sys, double q)
{
	if (!all->n)
		return 0;
	uint64_t v = hist_percentile(all, q), a = above(all, v), s = above(sys, v);
	return a > 0 && (a - (s < a ? s : a)) * 2 > a;
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : 0;
}

static void add_num(json_t *o, const char *k, double v)
{
	json_object_set_new(o, k, json_integer((json_int_t)(num(o, k) + v)));
}

/* The derived fields from the merged histograms: fractions of lat's n,
 * and set_by_host from all's and sys's "all". */
static void derive(json_t *ht, const struct hist *all, const struct hist *sys, const json_t *lat)
{
	json_t *tf = json_object(), *uf = json_object();
	for (int c = 0; c < NCLS; c++) {
		double n = num(json_object_get(lat, cls[c]), "n");
		json_object_set_new(tf, cls[c], json_real(n > 0 ? num(json_object_get(ht, "tagged"), cls[c]) / n : 0));
		json_object_set_new(uf, cls[c], json_real(n > 0 ? num(json_object_get(ht, "unattributed"), cls[c]) / n : 0));
	}
	json_object_set_new(ht, "tagged_frac", tf);
	json_object_set_new(ht, "unattributed_frac", uf);
	json_object_set_new(ht, "set_by_host", json_pack("{s:b,s:b,s:b}", "p50", hosttags_set_by_host(all, sys, 50),
							 "p99", hosttags_set_by_host(all, sys, 99),
							 "p999", hosttags_set_by_host(all, sys, 99.9)));
}

/* The host_tags object of a point or a client: the untagged histograms
 * per class, the counts, the stall times and lengths, and what they give
 * (derive).  Takes cn's and st's references as json_pack's "O" does not:
 * the caller still owns them.  NULL on allocation failure. */
static json_t *tags_object(struct hist *const sys[NCLS], json_t *const cn[NCOUNTS], json_t *st,
			   const struct hist *len, const struct hist *all, const json_t *lat)
{
	json_t *sl = json_object(), *ht;
	for (int c = 0; c < NCLS; c++)
		json_object_set_new(sl, cls[c], result_hist_summary(sys[c]));
	ht = json_pack("{s:o,s:O,s:O,s:O,s:O,s:o}", "sys_lat_ns", sl, "tagged", cn[0], "unattributed", cn[1],
		       "worker", cn[2], "stall_ns", st, "host_len_ns", len->n ? result_hist_summary(len) : json_null());
	if (ht)
		derive(ht, all, sys[0], lat);
	return ht;
}

/* One thread's window stalls ("window" of a stall_json) into st. */
static void add_window(json_t *st, const json_t *w)
{
	if (!json_is_object(w))
		return;
	for (int k = 0; k < NSTALL; k++) {
		char key[32];
		snprintf(key, sizeof key, "%s_ns", stall_keys[k]);
		add_num(st, stall_keys[k], num(w, key));
	}
	add_num(st, "host_stalls", num(w, "host_count"));
	if (json_is_false(json_object_get(w, "complete")))
		json_object_set_new(st, "complete", json_false());
}

/* A stall_json's host_len_ns into len (a process's hist_to_json). */
static int add_len(struct hist *len, struct hist *one, const json_t *sj, char *err, size_t errlen)
{
	const json_t *hj = json_object_get(sj, "host_len_ns");
	if (!hj)
		return 0;
	if (merge_hist_from(one, hj, "stalls.host_len_ns", err, errlen) < 0)
		return -1;
	hist_merge(len, one);
	return 0;
}

json_t *hosttags_point(json_t *const *clients, size_t nclients, const json_t *server, const json_t *lat,
		       char *err, size_t errlen)
{
	struct hist *sys[NCLS], *all = hist_new(), *one = hist_new(), *len = hist_new();
	json_t *ht = NULL, *cn[NCOUNTS], *st = json_pack("{s:b}", "complete", 1);
	size_t i, k;
	const json_t *v;
	int any = 0, ok = all && one && len && st;

	for (int c = 0; c < NCLS; c++)
		ok &= (sys[c] = hist_new()) != NULL;
	for (int c = 0; c < NCOUNTS; c++)
		cn[c] = json_pack("{s:i,s:i,s:i}", cls[0], 0, cls[1], 0, cls[2], 0);
	for (i = 0; ok && i < nclients; i++) {
		const json_t *t = json_object_get(clients[i], "host_tags");
		if (!t)
			continue;
		any = 1;
		for (int c = 0; c < NCLS && ok; c++) {
			char what[64];
			snprintf(what, sizeof what, "client %zu: host_tags.sys_lat_ns.%s", i, cls[c]);
			if (merge_hist_from(one, json_object_get(json_object_get(t, "sys_lat_ns"), cls[c]), what, err,
					    errlen) < 0)
				ok = 0;
			else
				hist_merge(sys[c], one);
		}
		/* the client's "host" count is run.json's "tagged" */
		static const char *const src[NCOUNTS] = { "host", "unattributed", "worker" };
		for (int c = 0; c < NCOUNTS; c++)
			for (int x = 1; x < NCLS; x++) {
				double n = num(json_object_get(t, src[c]), cls[x]);
				add_num(cn[c], cls[x], n);
				add_num(cn[c], cls[0], n);
			}
		json_array_foreach(json_object_get(json_object_get(clients[i], "trust"), "stalls"), k, v) {
			add_window(st, json_object_get(v, "window"));
			if (ok && add_len(len, one, v, err, errlen) < 0)
				ok = 0;
		}
	}
	json_array_foreach(json_object_get(server, "per_worker"), k, v) {
		const json_t *sj = json_object_get(v, "stalls");
		add_window(st, json_object_get(sj, "window"));
		if (ok && add_len(len, one, sj, err, errlen) < 0)
			ok = 0;
	}
	if (ok && any && result_hist(all, json_object_get(lat, "all"), err, errlen) == 0) {
		ht = tags_object(sys, cn, st, len, all, lat);
	}
	for (int c = 0; c < NCOUNTS; c++)
		json_decref(cn[c]);
	json_decref(st);
	for (int c = 0; c < NCLS; c++)
		hist_free(sys[c]);
	hist_free(all);
	hist_free(one);
	hist_free(len);
	return ht;
}

json_t *hosttags_trial(const json_t *ht)
{
	if (!json_is_object(ht))
		return NULL;
	return json_pack("{s:o,s:O,s:O,s:O,s:O,s:O}", "sys_lat_ns", result_trial_classes(json_object_get(ht, "sys_lat_ns")),
			 "tagged", json_object_get(ht, "tagged"), "unattributed", json_object_get(ht, "unattributed"),
			 "worker", json_object_get(ht, "worker"), "stall_ns", json_object_get(ht, "stall_ns"),
			 "host_len_ns", json_object_get(ht, "host_len_ns"));
}

int hosttags_over(json_t *p, const json_t *entries, char *err, size_t errlen)
{
	struct hist *sys[NCLS], *all = hist_new(), *one = hist_new(), *len = hist_new();
	json_t *cn[NCOUNTS], *st = json_pack("{s:b}", "complete", 1), *e;
	size_t i, nt = 0;
	int rc = all && one && len && st ? 0 : -1;
	char e2[256];

	for (int c = 0; c < NCLS; c++)
		if (!(sys[c] = hist_new()))
			rc = -1;
	if (rc < 0)
		snprintf(err, errlen, "out of memory merging host_tags");
	for (int c = 0; c < NCOUNTS; c++)
		cn[c] = json_pack("{s:i,s:i,s:i}", cls[0], 0, cls[1], 0, cls[2], 0);
	json_array_foreach(entries, i, e) {
		const json_t *t = result_host_tags(e);
		if (rc < 0 || !t)
			continue;
		nt++;
		for (int c = 0; c < NCLS && rc == 0; c++) {
			if (result_trial_sys_hist(one, e, cls[c], e2, sizeof e2) < 0) {
				snprintf(err, errlen, "trial %zu: host_tags.sys_lat_ns.%s: %s", i, cls[c], e2);
				rc = -1;
			} else {
				hist_merge(sys[c], one);
			}
		}
		static const enum result_tag_count which[NCOUNTS] = { RESULT_TAGGED, RESULT_UNATTRIBUTED, RESULT_WORKER };
		for (int c = 0; c < NCOUNTS; c++)
			for (int x = 0; x < NCLS; x++) {
				double v = result_host_count(e, which[c], cls[x]);
				add_num(cn[c], cls[x], isnan(v) ? 0 : v);   /* a trial without it adds none */
			}
		/* stall_ns's keys are tags_object's own (stall_keys, written above) */
		const json_t *ts = result_host_stalls(e);
		for (int k = 0; k < NSTALL; k++)
			add_num(st, stall_keys[k], num(ts, stall_keys[k]));
		add_num(st, "host_stalls", num(ts, "host_stalls"));
		if (!result_host_stalls_complete(e))
			json_object_set_new(st, "complete", json_false());
		const json_t *lj = result_host_len(e);
		if (rc == 0 && lj) {
			if (result_hist(one, lj, e2, sizeof e2) < 0) {
				snprintf(err, errlen, "trial %zu: host_tags.host_len_ns: %s", i, e2);
				rc = -1;
			} else {
				hist_merge(len, one);
			}
		}
	}
	const json_t *lat = result_lat(p, NULL);
	if (rc == 0 && nt < json_array_size(entries))
		json_object_del(p, "host_tags");   /* not every trial has them: no merge to speak of */
	else if (rc == 0 && result_hist(all, result_lat(p, "all"), e2, sizeof e2) < 0) {
		snprintf(err, errlen, "lat_ns.all: %s", e2);
		rc = -1;
	} else if (rc == 0) {
		json_t *ht = tags_object(sys, cn, st, len, all, lat);
		if (ht)
			json_object_set_new(p, "host_tags", ht);
	}
	for (int c = 0; c < NCOUNTS; c++)
		json_decref(cn[c]);
	json_decref(st);
	for (int c = 0; c < NCLS; c++)
		hist_free(sys[c]);
	hist_free(all);
	hist_free(one);
	hist_free(len);
	return rc;
}
