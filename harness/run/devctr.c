/*
 * devctr.c - see devctr.h.  Shown by tests/unit/test_rdmactr.c (one device
 * shared, two client devices, an unavailable side, trials summed) and by
 * the RNR runs of tests/verbs/guest-rnr.sh.
 */
#include "devctr.h"
#include "rdmactr.h"
#include "result.h"

#include <stdio.h>
#include <string.h>

/* Adds every integer of src into dst (NAME: value objects); with max, keeps
 * the larger instead. */
static void add_counts(json_t *dst, const json_t *src, int max)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)src, k, v) {
		if (!json_is_integer(v))
			continue;
		json_int_t x = json_integer_value(v), have = json_integer_value(json_object_get(dst, k));
		if (!json_is_integer(json_object_get(dst, k)))
			json_object_set_new(dst, k, json_integer(x));
		else
			json_object_set_new(dst, k, json_integer(max ? (x > have ? x : have) : have + x));
	}
}

static int same_place(const json_t *a, const json_t *b)
{
	const char *ha = json_string_value(json_object_get(a, "host")), *hb = json_string_value(json_object_get(b, "host"));
	const char *da = json_string_value(json_object_get(a, "device")), *db = json_string_value(json_object_get(b, "device"));
	return ha && hb && da && db && !strcmp(ha, hb) && !strcmp(da, db) &&
	       json_integer_value(json_object_get(a, "port")) == json_integer_value(json_object_get(b, "port"));
}

/* a + b over the five names, null-aware (null + null = null). */
static json_t *sum_derived(const json_t *a, const json_t *b)
{
	json_t *d = json_object();
	for (unsigned k = 0; k < RDMACTR_NDERIVED; k++) {
		const char *n = rdmactr_derived_names[k];
		const json_t *x = json_object_get(a, n), *y = json_object_get(b, n);
		if (!json_is_integer(x) && !json_is_integer(y))
			json_object_set_new(d, n, json_null());
		else
			json_object_set_new(d, n, json_integer(json_integer_value(x) + json_integer_value(y)));
	}
	return d;
}

json_t *devctr_point(const json_t *server, json_t *const *clients, size_t nclients)
{
	const json_t *srv = server ? json_object_get(server, "rdma_counters") : NULL;
	const json_t *places[1024];
	json_t *byplace[1024];
	size_t nplaces = 0, nreported = 0, i, g;
	const char *cwhy = NULL;

	for (i = 0; i < nclients; i++) {
		const json_t *rc = json_object_get(clients[i], "rdma_counters");
		if (!rc)
			continue;
		nreported++;
		if (json_is_string(rc)) {
			if (!cwhy)
				cwhy = json_string_value(rc);
			continue;
		}
		for (g = 0; g < nplaces && !same_place(places[g], rc); g++)
			;
		if (g == nplaces) {
			if (nplaces == sizeof places / sizeof places[0])
				continue;
			places[nplaces] = rc;
			byplace[nplaces++] = json_object();
		}
		add_counts(byplace[g], json_object_get(rc, "counters"), 1);
	}
	if (!srv && !nreported)
		return NULL;

	json_t *p = json_object(), *derived = json_object();
	const json_t *first = json_is_object(srv) ? srv : nplaces ? places[0] : NULL;
	json_object_set_new(p, "device", first ? json_incref(json_object_get(first, "device")) : json_null());
	json_object_set_new(p, "port", first ? json_incref(json_object_get(first, "port")) : json_null());

	json_t *sderived = NULL, *cderived = NULL;
	if (json_is_object(srv)) {
		json_object_set(p, "server", json_object_get(srv, "counters"));
		sderived = rdmactr_derive(json_object_get(srv, "counters"));
	} else {
		json_object_set_new(p, "server", srv ? json_incref((json_t *)srv) :
				    json_string("unavailable: the server reported no device counters"));
	}
	if (nplaces) {
		json_t *c = json_object();
		for (g = 0; g < nplaces; g++) {
			add_counts(c, byplace[g], 0);
			json_decref(byplace[g]);
		}
		cderived = rdmactr_derive(c);
		json_object_set_new(p, "client", c);
		json_object_set_new(p, "client_devices", json_integer((json_int_t)nplaces));
	} else {
		char why[600];
		snprintf(why, sizeof why, "%s", cwhy ? cwhy : "unavailable: no client reported device counters");
		json_object_set_new(p, "client", json_string(why));
	}
	int shared = json_is_object(srv) && nplaces == 1 && same_place(srv, places[0]);
	json_object_set_new(p, "shared_device", json_boolean(shared));
	json_object_set_new(derived, "server", sderived ? json_incref(sderived) : json_null());
	json_object_set_new(derived, "client", cderived ? json_incref(cderived) : json_null());
	json_object_set_new(p, "derived", derived);

	json_t *tot = shared ? json_incref(sderived) : sum_derived(sderived, cderived);
	json_object_update(p, tot);
	json_decref(tot);
	json_decref(sderived);
	json_decref(cderived);
	return p;
}

/* dst += src for one side's {NAME: delta} (or the first reason it was
 * unavailable). */
static void add_side(json_t *acc, const char *side, const json_t *src)
{
	json_t *have = json_object_get(acc, side);
	if (json_is_string(have))
		return;
	if (!json_is_object(src)) {
		json_object_set(acc, side, src ? (json_t *)src : json_null());
		return;
	}
	if (!have) {
		json_object_set_new(acc, side, json_deep_copy(src));
		return;
	}
	add_counts(have, src, 0);
}

json_t *devctr_over(const json_t *entries)
{
	json_t *acc = NULL, *e;
	size_t i, n = 0;

	json_array_foreach(entries, i, e) {
		const json_t *rc = result_rdma_counters(e);
		if (!rc)
			continue;
		if (!acc) {
			acc = json_deep_copy(rc);
			n = 1;
			continue;
		}
		n++;
		add_side(acc, "server", result_rdma_side(e, 0));
		add_side(acc, "client", result_rdma_side(e, 1));
		json_t *d = json_object_get(acc, "derived");
		for (unsigned s = 0; s < 2 && d; s++) {
			const char *side = s ? "client" : "server";
			const json_t *a = json_object_get(d, side);
			const json_t *b = result_rdma_derived(e, (int)s);
			if (json_is_object(a) || json_is_object(b))
				json_object_set_new(d, side, sum_derived(a, b));
		}
		json_t *tot = sum_derived(acc, rc);
		json_object_update(acc, tot);
		json_decref(tot);
		if (!json_equal(json_object_get(acc, "shared_device"), result_rdma_shared(e)))
			json_object_set_new(acc, "shared_device", json_null());
	}
	if (acc)
		json_object_set_new(acc, "trials", json_integer((json_int_t)n));
	return acc;
}
