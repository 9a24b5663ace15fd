/*
 * merge.c - client results -> one point of run.json.
 *
 * Each client reports one histogram per op class ("all", "nilext",
 * "non_nilext").  The point's histogram of a class is the bin-wise sum of
 * the clients' (hist_merge), and every percentile is read from that sum;
 * averaging per-client percentiles would be wrong whenever clients see
 * different loads.  Counters and throughputs add up; the RDMA device's
 * counters are combined by devctr.c.
 */
#include "merge.h"
#include "devctr.h"
#include "hosttags.h"
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const classes[] = { "all", "nilext", "non_nilext" };
#define NCLASSES 3

const char *const merge_counters[MERGE_NCOUNTERS] = {
	"sent", "committed", "unanswered", "unsent", "ring_full_waits", "full_wait_ns", "errors",
};

int merge_hist_from(struct hist *h, const json_t *j, const char *what, char *err, size_t errlen)
{
	char e[256];

	if (hist_from_json(h, j, e, sizeof e) < 0) {
		snprintf(err, errlen, "%s: %s", what, e);
		return -1;
	}
	return 0;
}

int merge_service(json_t *server, char *err, size_t errlen)
{
	/* the server's result is this function's to change */
	json_t *svc = (json_t *)result_service(server, NULL);
	struct hist *h;
	char what[64];
	int rc = 0;

	if (!json_is_object(svc) || !json_object_get(svc, "all"))
		return 0;
	if (!(h = hist_new())) {
		snprintf(err, errlen, "out of memory merging service times");
		return -1;
	}
	for (size_t c = 0; c < NCLASSES && rc == 0; c++) {
		const json_t *hj = json_object_get(svc, classes[c]);
		if (!hj)
			continue;
		snprintf(what, sizeof what, "server: service_ns.%s", classes[c]);
		if (merge_hist_from(h, hj, what, err, errlen) < 0)
			rc = -1;
		else
			json_object_set_new(svc, classes[c], result_hist_summary(h));
	}
	hist_free(h);
	return rc;
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : 0;
}

json_t *merge_point(const struct point *pt, json_t *const *clients, size_t nclients,
		    const json_t *server, char *err, size_t errlen)
{
	struct hist *sum[NCLASSES] = { 0 }, *one = NULL;
	json_t *p = NULL, *lat, *cl;
	double achieved = 0, tot[MERGE_NCOUNTERS] = { 0 }, measured = 0;
	char what[128];
	size_t i, c, k;

	one = hist_new();
	for (c = 0; c < NCLASSES; c++)
		sum[c] = hist_new();
	p = json_object();
	cl = json_array();
	if (!one || !sum[0] || !sum[1] || !sum[2] || !p || !cl) {
		snprintf(err, errlen, "out of memory merging results");
		json_decref(cl);
		goto fail;
	}
	json_object_set_new(p, "index", json_integer(pt->idx));
	json_object_set_new(p, "system", json_string(pt->system));
	if (pt->outstanding > 0) {
		json_object_set_new(p, "offered_ops", json_null());
		json_object_set_new(p, "outstanding", json_integer(pt->outstanding));
	} else {
		json_object_set_new(p, "offered_ops", json_real(pt->offered_ops));
	}
	json_object_set_new(p, "clients", cl);

	for (i = 0; i < nclients; i++) {
		const json_t *r = clients[i], *lj;
		const char *schema = json_string_value(json_object_get(r, "schema"));
		long long rank = json_integer_value(json_object_get(r, "rank"));
		json_t *row;

		if (!json_is_object(r) || !schema || strcmp(schema, "oqbench.client/1") != 0) {
			snprintf(err, errlen, "client %zu: result schema is \"%s\", expected "
				 "\"oqbench.client/1\" (oqb-client and oqb from different builds? run make)",
				 i, schema ? schema : "(none)");
			goto fail;
		}
		lj = result_lat(r, NULL);
		row = json_object();
		json_object_set_new(row, "rank", json_integer(rank));
		json_object_set(row, "host", json_object_get(r, "host") ? json_object_get(r, "host")
									: json_null());
		json_object_set_new(row, "threads", json_integer(json_integer_value(json_object_get(r, "threads"))));
		if (json_object_get(r, "placement"))
			json_object_set(row, "placement", json_object_get(r, "placement"));
		json_object_set_new(row, "offered_ops", json_real(num(r, "offered_ops")));
		json_object_set_new(row, "achieved_ops", json_real(num(r, "achieved_ops")));
		json_object_set_new(row, "measured_ns", json_integer((json_int_t)num(r, "measured_ns")));
		if (json_object_get(r, "connect_ns"))
			json_object_set(row, "connect_ns", json_object_get(r, "connect_ns"));
		if (json_object_get(r, "usage"))
			json_object_set(row, "usage", json_object_get(r, "usage"));
		if (json_object_get(r, "needs"))
			json_object_set(row, "needs", json_object_get(r, "needs"));
		for (k = 0; k < MERGE_NCOUNTERS; k++) {
			json_object_set_new(row, merge_counters[k], json_integer((json_int_t)num(r, merge_counters[k])));
			tot[k] += num(r, merge_counters[k]);
		}
		achieved += num(r, "achieved_ops");
		if (num(r, "measured_ns") > measured)
			measured = num(r, "measured_ns");
		json_t *ns = json_object();
		for (c = 0; c < NCLASSES; c++) {
			const json_t *hj = json_object_get(lj, classes[c]);
			if (!hj && c > 0) {
				/* A client may leave out a class it never sent. */
				json_object_set_new(ns, classes[c], json_integer(0));
				continue;
			}
			snprintf(what, sizeof what, "client %lld: lat_ns.%s", rank, classes[c]);
			if (merge_hist_from(one, hj, what, err, errlen) < 0) {
				json_decref(ns);
				json_decref(row);
				goto fail;
			}
			hist_merge(sum[c], one);
			json_object_set_new(ns, classes[c], json_integer((json_int_t)one->n));
		}
		json_object_set_new(row, "n", ns);
		json_array_append_new(cl, row);
		if (i == 0 && json_object_get(r, "workload"))
			json_object_set(p, "workload", json_object_get(r, "workload"));
	}

	json_object_set_new(p, "achieved_ops", json_real(achieved));
	for (k = 0; k < MERGE_NCOUNTERS; k++)
		json_object_set_new(p, merge_counters[k], json_integer((json_int_t)tot[k]));
	json_object_set_new(p, "measured_ns", json_integer((json_int_t)measured));
	if (pt->outstanding > 0)
		json_object_set_new(p, "saturated", json_null());
	else
		json_object_set_new(p, "saturated",
				    json_boolean(achieved < MERGE_SATURATED * pt->offered_ops));
	lat = json_object();
	json_object_set_new(p, "lat_ns", lat);
	for (c = 0; c < NCLASSES; c++)
		json_object_set_new(lat, classes[c], result_hist_summary(sum[c]));
	/* the requests apart by host stall (hosttags.h); none from an older build */
	err[0] = 0;
	json_t *ht = hosttags_point(clients, nclients, server, lat, err, errlen);
	if (ht)
		json_object_set_new(p, "host_tags", ht);
	else if (err[0])
		goto fail;
	if (server) {
		json_t *srv = json_deep_copy(server);
		if (!srv || merge_service(srv, err, errlen) < 0) {
			if (!srv)
				snprintf(err, errlen, "out of memory copying the server's result");
			json_decref(srv);
			goto fail;
		}
		/* the workers' host stall lengths are in host_tags, once, as a
		 * summary: not their bins a second time */
		size_t wi;
		json_t *wv;
		json_array_foreach(json_object_get(srv, "per_worker"), wi, wv)
			json_object_del(json_object_get(wv, "stalls"), "host_len_ns");
		json_object_set_new(p, "server", srv);
	} else {
		json_object_set_new(p, "server", json_null());
	}
	/* verbs: the RDMA port's counters of the server and the clients */
	json_t *ctr = devctr_point(server, clients, nclients);
	if (ctr)
		json_object_set_new(p, "rdma_counters", ctr);

	for (c = 0; c < NCLASSES; c++)
		hist_free(sum[c]);
	hist_free(one);
	return p;
fail:
	for (c = 0; c < NCLASSES; c++)
		hist_free(sum[c]);
	hist_free(one);
	json_decref(p);
	return NULL;
}
