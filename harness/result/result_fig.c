/*
 * result_fig.c - what verdict/ (oqb compare, oqb history) and figures/
 * (oqb plot, oqb figures) read of run.json beyond result_access.c's
 * numbers: the run's config by setting name, who ran it where (its
 * identity and testbed), its knee search, and of a point its sweep, its
 * load in flight, its flags, its value size, its linearizability check
 * and its server's device (result.h, the block "result_fig.c").
 *
 * One spelling of each key, here; a missing number is NaN (result_num),
 * a missing string NULL, and a missing flag false.
 */
#include "result.h"
#include "conf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* o[k] as a string, NULL when missing or not one. */
static const char *str_of(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* ---- the run ---- */

const json_t *result_config(const json_t *run)
{
	const json_t *c = json_object_get(run, "config");
	return json_is_object(c) ? c : NULL;
}

const json_t *result_setting(const json_t *run, const char *name)
{
	return conf_path(result_config(run), name);
}

const char *result_setting_str(const json_t *run, const char *name)
{
	return json_string_value(result_setting(run, name));
}

double result_setting_num(const json_t *run, const char *name)
{
	const json_t *v = result_setting(run, name);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

void result_ident(const json_t *run, struct result_ident *id)
{
	const json_t *d = json_object_get(run, "git_dirty");

	id->run_id = str_of(run, "run_id");
	id->name = str_of(run, "name");
	id->created_utc = str_of(run, "created_utc");
	id->git_commit = str_of(run, "git_commit");
	id->config_path = str_of(run, "config_path");
	id->git_dirty = json_is_boolean(d) ? json_is_true(d) : -1;
}

const char *result_error_message(const json_t *run)
{
	const json_t *e = json_object_get(run, "error");
	/* run.c writes {"message": ...}; a string is kept for older files */
	return json_is_object(e) ? str_of(e, "message") : json_string_value(e);
}

const char *result_transport_name(const json_t *run)
{
	return str_of(json_object_get(run, "transport"), "name");
}

const char *result_driver_host(const json_t *run)
{
	return str_of(json_object_get(run, "hosts"), "driver");
}

const char *result_cpu_model(const json_t *run)
{
	return str_of(json_object_get(run, "environment"), "cpu_model");
}

double result_cpus_online(const json_t *run)
{
	return result_num(json_object_get(run, "environment"), "cpus_online");
}

/* The transport block's device details only (never counters). */
static json_t *transport_hw(const json_t *v)
{
	static const char *const keep[] = { "name", "device", "devices", "driver_host_devices", "guid",
					    "model", "vendor_id", "vendor_part_id", "hw_ver", "fw_ver",
					    "firmware", "link_layer", "rate", "link_rate", "speed", "width",
					    "mtu", "active_mtu", "port", "ports", NULL };
	const char *k;
	json_t *c, *out;
	size_t i;

	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, c)
			json_array_append_new(out, transport_hw(c));
		return out;
	}
	if (!json_is_object(v))
		return json_deep_copy(v);
	out = json_object();
	json_object_foreach((json_t *)v, k, c)
		for (i = 0; keep[i]; i++)
			if (!strcmp(k, keep[i]))
				json_object_set_new(out, k, transport_hw(c));
	return out;
}

/* A copy of v, JSON null for none. */
static json_t *or_null(const json_t *v)
{
	return v ? json_deep_copy(v) : json_null();
}

json_t *result_testbed(const json_t *run)
{
	const json_t *h = json_object_get(run, "hosts"), *e = json_object_get(run, "environment");
	const json_t *scpus = result_setting(run, "server.cpus"), *ccpus = result_setting(run, "clients.cpus");
	json_t *t = json_object();

	if (!t)
		return NULL;
	json_object_set_new(t, "server", or_null(json_object_get(h, "server")));
	json_object_set_new(t, "clients", or_null(json_object_get(h, "clients")));
	json_object_set_new(t, "cpu_model", or_null(json_object_get(e, "cpu_model")));
	json_object_set_new(t, "cpus", or_null(json_object_get(e, "cpus_online")));
	json_object_set_new(t, "smt", or_null(json_object_get(e, "smt")));
	json_object_set_new(t, "governor", or_null(json_object_get(e, "governor")));
	json_object_set_new(t, "kernel", or_null(json_object_get(json_object_get(run, "versions"), "kernel")));
	json_object_set_new(t, "transport", transport_hw(json_object_get(run, "transport")));
	json_object_set_new(t, "server_cpus", scpus ? json_deep_copy(scpus) : json_string("auto"));
	json_object_set_new(t, "client_cpus", ccpus ? json_deep_copy(ccpus) : json_string("auto"));
	json_object_set_new(t, "verbs_device", or_null(result_setting(run, "verbs.device")));
	return t;
}

double result_knee_ops(const json_t *run, const char **found_by)
{
	/* the knee object and its found_by are result_run.c's */
	if (found_by)
		*found_by = result_knee_found_by(run);
	return result_num(result_knee_json(run), "ops");
}

void result_knee_past(const json_t *run, double *points, double *saturated)
{
	const json_t *pk = json_object_get(json_object_get(run, "knee"), "past_knee");
	*points = result_num(pk, "points");
	*saturated = result_num(pk, "saturated");
}

double result_knee_confirm(const json_t *run)
{
	return result_num(json_object_get(json_object_get(run, "knee"), "search"), "confirm");
}

const char *result_finding_text(const json_t *finding, const char **caveat)
{
	if (caveat)
		*caveat = str_of(finding, "caveat");
	return str_of(finding, "text");
}

/* ---- a point ---- */

static const json_t *sweep_of(const json_t *p)
{
	const json_t *s = json_object_get(p, "sweep");
	return json_is_object(s) ? s : NULL;
}

int result_has_sweep(const json_t *p)
{
	return sweep_of(p) != NULL;
}

const json_t *result_sweep(const json_t *p)
{
	return sweep_of(p);
}

const char *result_sweep_key(const json_t *p)
{
	return str_of(sweep_of(p), "key");
}

const json_t *result_sweep_value(const json_t *p)
{
	const json_t *v = json_object_get(sweep_of(p), "value");
	return v ? v : json_null();
}

long long result_sweep_index(const json_t *p)
{
	const json_t *i = json_object_get(sweep_of(p), "index");
	return json_is_integer(i) ? (long long)json_integer_value(i) : -1;
}

double result_outstanding(const json_t *p)
{
	return result_num(p, "outstanding");
}

int result_flagged(const json_t *p)
{
	return json_is_true(json_object_get(p, "flagged"));
}

int result_durable(const json_t *p)
{
	return json_is_true(json_object_get(p, "durable"));
}

long result_repeat(const json_t *p)
{
	const json_t *r = json_object_get(p, "repeat");
	return json_is_integer(r) ? (long)json_integer_value(r) : -1;
}

double result_value_size(const json_t *p)
{
	return result_num(json_object_get(p, "workload"), "value_size");
}

const char *result_device(const json_t *p)
{
	return str_of(json_object_get(json_object_get(p, "server"), "transport"), "device");
}

int result_lincheck(const json_t *p, struct result_lincheck *c)
{
	const json_t *ck = json_object_get(p, "check");

	c->verdict = str_of(ck, "verdict");
	c->ops = json_integer_value(json_object_get(ck, "ops"));
	c->keys_violation = json_integer_value(json_object_get(ck, "keys_violation"));
	return c->verdict ? 0 : -1;
}

/* ---- a histogram's summary ---- */

double result_n(const json_t *s)
{
	return result_num(s, "n");
}

const json_t *result_ci(const json_t *s, const char *pct)
{
	char k[16];
	snprintf(k, sizeof k, "%s_ci", pct);
	return json_object_get(s, k);
}

double result_service_every(const json_t *p)
{
	return result_num(result_service(p, NULL), "sample_every");
}
