/*
 * result_run.c - the reads run/ and trust/ make of run.json (result.h,
 * the block "result_run.c"): a check row's fields, a point's counts,
 * sweep, counters and canary regime, a trial's number and why it was set
 * aside, the run's config, id and knee, and its finding's pairs.  One
 * spelling of each key; a missing number is NaN (result_num), a missing
 * string NULL, a missing object or array NULL.
 */
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* o[key] when it is a string, else NULL. */
static const char *str_of(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

const char *result_check_name(const json_t *row)
{
	return str_of(row, "name");
}

int result_check_warns(const json_t *row)
{
	const char *st = str_of(row, "status");
	return st && !strcmp(st, "warn");
}

const char *result_check_detail(const json_t *row)
{
	return str_of(row, "detail");
}

const json_t *result_check_concerns(const json_t *row)
{
	const json_t *a = json_object_get(row, "concerns");
	return json_is_array(a) ? a : NULL;
}

const char *result_check_cause(const json_t *row)
{
	return str_of(row, "cause");
}

const json_t *result_check_value(const json_t *row)
{
	return json_object_get(row, "value");
}

const json_t *result_check_threshold(const json_t *row)
{
	return json_object_get(row, "threshold");
}

const json_t *result_check_row(const json_t *checks, const char *name)
{
	size_t i;
	const json_t *r;
	json_array_foreach(checks, i, r) {
		const char *n = result_check_name(r);
		if (n && name && !strcmp(n, name))
			return r;
	}
	return NULL;
}

double result_sent(const json_t *p)
{
	return result_num(p, "sent");
}

double result_unanswered(const json_t *p)
{
	return result_num(p, "unanswered");
}

double result_unsent(const json_t *p)
{
	return result_num(p, "unsent");
}

double result_errors(const json_t *p)
{
	return result_num(p, "errors");
}

double result_ring_full_waits(const json_t *p)
{
	return result_num(p, "ring_full_waits");
}

double result_full_wait_ns(const json_t *p)
{
	return result_num(p, "full_wait_ns");
}

double result_measured_ns(const json_t *p)
{
	return result_num(p, "measured_ns");
}

const json_t *result_rdma_counters(const json_t *p)
{
	const json_t *c = json_object_get(p, "rdma_counters");
	return json_is_object(c) ? c : NULL;
}

double result_rnr_naks(const json_t *p, int sent)
{
	return result_num(result_rdma_counters(p), sent ? "rnr_naks_sent" : "rnr_naks_received");
}

const json_t *result_rdma_side(const json_t *p, int client)
{
	return json_object_get(result_rdma_counters(p), client ? "client" : "server");
}

const json_t *result_rdma_derived(const json_t *p, int client)
{
	return json_object_get(json_object_get(result_rdma_counters(p), "derived"), client ? "client" : "server");
}

const json_t *result_rdma_shared(const json_t *p)
{
	return json_object_get(result_rdma_counters(p), "shared_device");
}

double result_host_count(const json_t *p, enum result_tag_count which, const char *cls)
{
	static const char *const key[] = { "tagged", "unattributed", "worker" };
	return result_num(json_object_get(result_host_tags(p), key[which]), cls);
}

const json_t *result_host_stalls(const json_t *p)
{
	const json_t *s = json_object_get(result_host_tags(p), "stall_ns");
	return json_is_object(s) ? s : NULL;
}

int result_host_stalls_complete(const json_t *p)
{
	return !json_is_false(json_object_get(result_host_stalls(p), "complete"));
}

const json_t *result_host_len(const json_t *p)
{
	const json_t *s = json_object_get(result_host_tags(p), "host_len_ns");
	return json_is_object(s) ? s : NULL;
}

int result_backend_library(const json_t *p, const char *backend, const char **version, const char **assertions)
{
	const json_t *w = json_array_get(json_object_get(json_object_get(p, "server"), "per_worker"), 0);
	const json_t *lib = json_object_get(json_object_get(json_object_get(w, "backend"), backend), "library");

	*version = str_of(lib, "header_version");
	*assertions = str_of(lib, "assertions");
	return json_is_object(lib) ? 0 : -1;
}

int result_regime_mixed(const json_t *p)
{
	const json_t *reg = json_object_get(p, "canary_regime");
	if (!json_is_object(reg))
		return -1;
	return json_is_true(json_object_get(reg, "mixed"));
}

double result_regime_set_aside(const json_t *p)
{
	return result_num(json_object_get(p, "canary_regime"), "set_aside");
}

long result_trial_no(const json_t *t)
{
	const json_t *v = json_object_get(t, "trial");
	return json_is_integer(v) && json_integer_value(v) >= 0 ? (long)json_integer_value(v) : -1;
}

int result_regime_rerun(const json_t *t)
{
	return json_is_true(json_object_get(t, "regime_rerun"));
}

const char *result_set_aside_reason(const json_t *t)
{
	return str_of(t, "reason");
}

int result_pct_ci(const json_t *s, const char *pct, double *lo, double *hi)
{
	char key[16];
	snprintf(key, sizeof key, "%s_ci", pct);
	const json_t *ci = json_object_get(s, key);
	const json_t *a = json_array_get(ci, 0), *b = json_array_get(ci, 1);

	*lo = json_is_number(a) ? json_number_value(a) : NAN;
	*hi = json_is_number(b) ? json_number_value(b) : NAN;
	return json_array_size(ci) == 2 && json_is_number(a) && json_is_number(b) ? 0 : -1;
}

const char *result_run_id(const json_t *run)
{
	return str_of(run, "run_id");
}

json_t *result_knee_json(const json_t *run)
{
	json_t *k = json_object_get(run, "knee");
	return json_is_object(k) ? k : NULL;
}

const char *result_knee_found_by(const json_t *run)
{
	return str_of(result_knee_json(run), "found_by");
}

const json_t *result_knee_loads(const json_t *run)
{
	const json_t *l = json_object_get(result_knee_json(run), "loads_ops");
	return json_is_array(l) ? l : NULL;
}

const char *result_finding_status(const json_t *f)
{
	return str_of(f, "status");
}

const char *result_finding_reference(const json_t *f)
{
	return str_of(f, "reference");
}

const json_t *result_finding_pairs(const json_t *f)
{
	const json_t *a = json_object_get(f, "pairs");
	return json_is_array(a) ? a : NULL;
}

const json_t *result_finding_pair(const json_t *f, const char *sys)
{
	size_t i;
	const json_t *pr;
	json_array_foreach(result_finding_pairs(f), i, pr) {
		const char *s = result_pair_system(pr);
		if (s && sys && !strcmp(s, sys))
			return pr;
	}
	return NULL;
}

const char *result_pair_system(const json_t *pr)
{
	return str_of(pr, "system");
}

double result_pair_ratio(const json_t *pr)
{
	return result_num(pr, "ratio");
}

int result_pair_ci(const json_t *pr, double *lo, double *hi)
{
	const json_t *ci = json_object_get(pr, "ci95");
	const json_t *a = json_array_get(ci, 0), *b = json_array_get(ci, 1);

	*lo = json_is_number(a) ? json_number_value(a) : NAN;
	*hi = json_is_number(b) ? json_number_value(b) : NAN;
	return json_is_number(a) && json_is_number(b) ? 0 : -1;
}

size_t result_pair_nloads(const json_t *pr)
{
	return json_array_size(json_object_get(pr, "loads"));
}

const char *result_pair_status(const json_t *pr)
{
	return str_of(pr, "status");
}

const char *result_pair_reason(const json_t *pr)
{
	return str_of(pr, "reason");
}
