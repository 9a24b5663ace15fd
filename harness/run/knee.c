/*
 * knee.c - the knee search of `arrival.loads_ops: {"auto": true}`: its
 * config object, the ramp-and-bisect search over a probe function, the
 * verdict of one probe, and run.json's "knee".  knee.h states the
 * algorithm, its bounds and the tests that show them.
 *
 * The search knows nothing of processes: run.c hands it a probe function
 * that runs one short point, so the algorithm is tested here against
 * systems of known capacity (tests/unit/test_knee.c).
 */
#include "knee.h"
#include "checks.h"
#include "conf.h"
#include "result.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const double k_default_fractions[] = { 0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25 };

static const struct conf_key search_keys[] = {
	{ "start_ops", CONF_NUM, 0, 1, 1e10, NULL, NULL, "first load probed, ops/s (default 20000)" },
	{ "factor", CONF_NUM, 0, 1.1, 100, NULL, NULL, "ramp step: each load probed is the last one times this (default 2)" },
	{ "max_ops", CONF_NUM, 0, 1, 1e10, NULL, NULL, "highest load probed; sustained there, the knee is a lower bound (default 1e8)" },
	{ "probe_s", CONF_NUM, 0, 0.01, 600, NULL, NULL, "measured seconds per probe (default 0.3)" },
	{ "warmup_s", CONF_NUM, 0, 0, 600, NULL, NULL, "warm-up seconds per probe (default 0.2)" },
	{ "refine", CONF_INT, 0, 0, 20, NULL, NULL, "bisection steps between the last sustained and the first unsustained load (default 3)" },
	{ "confirm", CONF_INT, 0, 0, 5, NULL, NULL, "probes more a system gets at a load it did not sustain, any of which sustaining it counts (default 1)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL }
};

static const struct conf_key auto_keys[] = {
	{ "auto", CONF_BOOL, 1, 0, 0, NULL, NULL, "true: find the knee first, then sweep fractions of it" },
	{ "fractions", CONF_ARR_NUM, 0, 0.001, 10, NULL, NULL, "the loads to sweep as fractions of the knee, increasing (default [0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25])" },
	{ "search", CONF_OBJ, 0, 0, 0, NULL, search_keys, "how the knee is searched" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL }
};

int knee_conf_parse(const json_t *v, const char *where, struct knee_conf *kc, char *err, size_t errlen)
{
	char at[1200];
	const json_t *fr, *s, *e;
	size_t i;

	memset(kc, 0, sizeof *kc);
	snprintf(at, sizeof at, "%s.loads_ops", where);
	if (conf_check(v, auto_keys, at, err, errlen) < 0)
		return -1;
	if (!json_is_true(json_object_get(v, "auto"))) {
		snprintf(err, errlen, "%s.auto: false is not a form of its own; give the loads as a list "
			 "(\"loads_ops\": [100000, 200000]) or set \"auto\": true", at);
		return -1;
	}
	kc->on = 1;
	fr = json_object_get(v, "fractions");
	if (fr) {
		if (json_array_size(fr) == 0) {
			snprintf(err, errlen, "%s.fractions: empty; list the loads to sweep as fractions of "
				 "the knee, e.g. [0.1, 0.5, 0.9, 1.0, 1.1], or leave the key out for the default",
				 at);
			return -1;
		}
		if (json_array_size(fr) > KNEE_MAX_FRACTIONS) {
			snprintf(err, errlen, "%s.fractions: %zu fractions; at most %d", at,
				 json_array_size(fr), KNEE_MAX_FRACTIONS);
			return -1;
		}
		json_array_foreach(fr, i, e) {
			kc->fractions[i] = json_number_value(e);
			if (i && kc->fractions[i] <= kc->fractions[i - 1]) {
				snprintf(err, errlen, "%s.fractions[%zu]: %g does not exceed fractions[%zu] (%g); "
					 "list the fractions in increasing order, each once", at, i,
					 kc->fractions[i], i - 1, kc->fractions[i - 1]);
				return -1;
			}
		}
		kc->nfractions = json_array_size(fr);
	} else {
		kc->nfractions = sizeof k_default_fractions / sizeof k_default_fractions[0];
		memcpy(kc->fractions, k_default_fractions, sizeof k_default_fractions);
	}
	s = json_object_get(v, "search");
	kc->start_ops = conf_num(s, "start_ops", 20000);
	kc->factor = conf_num(s, "factor", 2);
	kc->max_ops = conf_num(s, "max_ops", 1e8);
	kc->probe_s = conf_num(s, "probe_s", 0.3);
	kc->warmup_s = conf_num(s, "warmup_s", 0.2);
	kc->refine = (int)conf_int(s, "refine", 3);
	kc->confirm = (int)conf_int(s, "confirm", 1);
	if (kc->max_ops < kc->start_ops) {
		snprintf(err, errlen, "%s.search.max_ops: %g is below start_ops (%g); raise max_ops or "
			 "lower start_ops", at, kc->max_ops, kc->start_ops);
		return -1;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* x to three significant digits: down (floor) or to the nearest. */
static double sig3(double x, int down)
{
	if (!(x > 0) || !isfinite(x))
		return 0;
	double scale = pow(10, floor(log10(x)) - 2);
	double m = x / scale;
	double v = (down ? floor(m + 1e-9) : round(m)) * scale;
	return scale >= 1 ? round(v) : v;   /* whole ops/s without float dust */
}

double knee_round(double x)
{
	return sig3(x, 1);
}

void knee_loads(const struct knee_conf *kc, double knee, double *loads)
{
	for (size_t i = 0; i < kc->nfractions; i++)
		loads[i] = fmax(1, sig3(kc->fractions[i] * knee, 0));
}

size_t knee_max_probes(const struct knee_conf *kc, size_t nsystems)
{
	double up = 1 + ceil(log(kc->max_ops / kc->start_ops) / log(kc->factor) - 1e-9);
	double down = 1 + KNEE_MAX_DOWN;

	return nsystems * (size_t)(fmax(up, down) + kc->refine) * (size_t)(1 + kc->confirm);
}

/*
 * The checks that say the client could not keep to its schedule or the
 * server left requests unanswered: the load was not sustained even where
 * achieved_ops looks close to offered.  They count only when the
 * interference check passed: a thread that lost its CPU to another task
 * lags at any load (measured here with other builds running: 63 % of the
 * sends late at 3000 ops/s, 36 % CPU share), and that says nothing about
 * the load; then achieved < 95 % of offered alone decides.
 */
static const char *const k_behind[] = { "schedule_lag", "unsent", "unanswered", NULL };
#define KNEE_SERVER_ROOM 0.5
#define KNEE_RING_FULL 0.01

void knee_verdict(const json_t *pj, const json_t *checks, struct knee_probe *out)
{
	char warned[96] = "";
	size_t i, o = 0;
	const json_t *c;
	int stolen = 0;

	double ach = result_achieved(pj);
	out->achieved_ops = isnan(ach) ? 0 : ach;
	out->saturated = result_saturated(pj);
	json_array_foreach(checks, i, c) {
		const char *name = result_check_name(c);
		if (!name || !result_check_warns(c))
			continue;
		if (checks_is_disturbance(name))
			stolen = 1;
		for (size_t k = 0; k_behind[k]; k++) {
			if (strcmp(name, k_behind[k]) == 0 && o + 1 < sizeof warned) {
				int w = snprintf(warned + o, sizeof warned - o, "%s%s", o ? ", " : "", name);
				if (w > 0)
					o += (size_t)w;
			}
		}
	}
	if (warned[0] && !stolen)
		out->saturated = 1;
	double pct = out->offered_ops > 0 ? 100 * out->achieved_ops / out->offered_ops : 0;
	int w = snprintf(out->reason, sizeof out->reason, "achieved %.0f %%%s%s%s", pct, warned[0] ? "; " : "",
			 warned, !warned[0] ? "" : stolen ? " warned, not counted: interference warned too" : " warned");
	/* Whose limit: the server's workers' busy share, estimated as the
	 * achieved load times the median service time over the workers
	 * (the backend's time only, so it reads low).  A load not sustained
	 * while they were busy under KNEE_SERVER_ROOM of the time is the load
	 * generator's: it could not keep the schedule while the server had
	 * room, and the knee says what the clients can send, not what the
	 * system can take.  The estimate leaves out the worker's own loop,
	 * which on shm with a fast backend is most of its time, so a
	 * server out of room shows first in its clients: due requests that
	 * waited for ring room over KNEE_RING_FULL of the window make the
	 * limit the system's, whatever the estimate. */
	double svc = result_num(result_service(pj, "all"), "p50"), nw = result_server_workers(pj);
	double full = result_full_wait_ns(pj), win = result_measured_ns(pj);
	out->server_busy = svc > 0 && nw > 0 ? out->achieved_ops * svc / 1e9 / nw : NAN;
	out->ring_full = full > 0 && win > 0 ? full / win : 0;
	out->by_generator = out->saturated && out->server_busy < KNEE_SERVER_ROOM && !(out->ring_full > KNEE_RING_FULL);
	if (out->by_generator && w > 0 && (size_t)w < sizeof out->reason)
		snprintf(out->reason + w, sizeof out->reason - (size_t)w, "; the generator's: the server's workers "
			 "were busy about %.0f %% of the time", 100 * out->server_busy);
}

struct search {
	const struct knee_conf *kc;
	const char *const *systems;
	size_t nsystems;
	knee_probe_fn fn;
	void *ctx;
	FILE *progress;
	struct knee_result *res;
	size_t cap;               /* of res->probes */
	size_t first;             /* the system that failed last: probed first */
	char *err;
	size_t errlen;
};

/*
 * Probes the systems at load, the one that failed last first, until one
 * does not sustain it.  Returns 1 (all sustained), 0 (*who did not), or
 * -1 (a probe failed; err says why).
 */
static int probe_load(struct search *s, double load, const char **who)
{
	for (size_t k = 0; k < s->nsystems; k++) {
		size_t i = k == 0 ? s->first : k <= s->first ? k - 1 : k;
		struct knee_result *res = s->res;
		int saturated = 1;
		for (int t = 0; t <= s->kc->confirm && saturated; t++) {
			if (res->nprobes == s->cap) {
				size_t cap = s->cap ? 2 * s->cap : 16;
				struct knee_probe *p = realloc(res->probes, cap * sizeof *p);
				if (!p) {
					snprintf(s->err, s->errlen, "out of memory recording knee probes");
					return -1;
				}
				res->probes = p;
				s->cap = cap;
			}
			struct knee_probe *p = &res->probes[res->nprobes];
			memset(p, 0, sizeof *p);
			p->system = s->systems[i];
			p->offered_ops = load;
			if (s->fn(s->ctx, p->system, load, p, s->err, s->errlen) < 0)
				return -1;
			res->nprobes++;
			saturated = p->saturated;
			if (s->progress)
				fprintf(s->progress, "knee: %s %.0f ops/s: %s (%s)%s\n", p->system, load,
					saturated ? "saturated" : "sustained", p->reason,
					saturated && t < s->kc->confirm ? "; probing again" : "");
		}
		if (saturated) {
			s->first = i;
			*who = s->systems[i];
			return 0;
		}
	}
	return 1;
}

/* Probes load and moves the bracket: lo up to it if every system
 * sustained it, hi down to it (naming the system) if one did not.
 * Returns probe_load's 1, 0 or -1. */
static int narrow(struct search *s, double load, double *lo, double *hi)
{
	const char *who = NULL;
	int r = probe_load(s, load, &who);

	if (r == 1) {
		*lo = load;
	} else if (r == 0) {
		*hi = load;
		s->res->slowest = who;
	}
	return r;
}

int knee_search(const struct knee_conf *kc, const char *const *systems, size_t nsystems,
		knee_probe_fn fn, void *ctx, FILE *progress, struct knee_result *res,
		char *err, size_t errlen)
{
	struct search s = { .kc = kc, .systems = systems, .nsystems = nsystems, .fn = fn, .ctx = ctx,
			    .progress = progress, .res = res, .err = err, .errlen = errlen };
	double t0 = now_s(), lo = 0, hi = 0, load;
	int r;

	memset(res, 0, sizeof *res);
	if (nsystems == 0) {
		snprintf(err, errlen, "knee search: no systems to probe");
		return -1;
	}
	r = narrow(&s, sig3(kc->start_ops, 0), &lo, &hi);
	if (r < 0)
		goto out;
	if (r == 1) {
		/* upwards while every system keeps up */
		while (hi == 0 && lo < kc->max_ops) {
			load = fmin(sig3(lo * kc->factor, 0), kc->max_ops);
			if (load <= lo)
				break;
			if ((r = narrow(&s, load, &lo, &hi)) < 0)
				goto out;
		}
		res->capped = hi == 0;
	} else {
		/* start_ops is past the knee already: downwards */
		for (int d = 0; d < KNEE_MAX_DOWN && lo == 0; d++) {
			load = sig3(hi / kc->factor, 0);
			if (load < 1)
				break;
			if ((r = narrow(&s, load, &lo, &hi)) < 0)
				goto out;
		}
		if (lo == 0) {
			snprintf(err, errlen, "knee search: even %.0f ops/s was not sustained (%s saturated; "
				 "%zu probes down from arrival.loads_ops.search.start_ops %.0f); check that the "
				 "system runs at all at a low load (a fixed list such as [100]), or lower start_ops",
				 hi, res->slowest, res->nprobes, kc->start_ops);
			r = -1;
			goto out;
		}
	}
	for (int i = 0; hi > 0 && i < kc->refine; i++) {
		double mid = sig3(sqrt(lo * hi), 0);
		if (mid <= lo || mid >= hi)
			break;   /* three significant digits cannot split it further */
		if ((r = narrow(&s, mid, &lo, &hi)) < 0)
			goto out;
	}
	res->ops = knee_round(lo);
	r = 0;
out:
	res->lo = lo;
	res->hi = hi;
	res->elapsed_s = now_s() - t0;
	return r < 0 ? -1 : 0;
}

void knee_result_free(struct knee_result *res)
{
	free(res->probes);
	res->probes = NULL;
	res->nprobes = 0;
}

static json_t *num_array(const double *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_real(v[i]));
	return a;
}

/* The common shape of both forms, so a reader finds the same keys. */
static json_t *knee_obj(const char *found_by, json_t *ops, json_t *probes, json_t *fractions,
			const char *slowest, json_t *search, double elapsed_s, json_t *loads)
{
	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:f, s:o}", "found_by", found_by, "ops", ops,
			 "probes", probes, "fractions", fractions, "slowest_system",
			 slowest ? json_string(slowest) : json_null(), "search", search,
			 "elapsed_s", elapsed_s, "loads_ops", loads);
}

/* Whose limit the knee is: the slowest system's probes at the load it did
 * not sustain (hi) were all the generator's ("generator"), or not
 * ("system"); null when no load went unsustained. */
static json_t *knee_set_by(const struct knee_result *res)
{
	int any = 0, gen = 1;
	if (!res->slowest || !(res->hi > 0))
		return json_null();
	for (size_t i = 0; i < res->nprobes; i++) {
		const struct knee_probe *p = &res->probes[i];
		if (p->offered_ops != res->hi || strcmp(p->system, res->slowest) != 0 || !p->saturated)
			continue;
		any = 1;
		gen &= p->by_generator;
	}
	return json_string(any && gen ? "generator" : "system");
}

json_t *knee_json(const struct knee_conf *kc, const struct knee_result *res, const double *loads)
{
	json_t *probes = json_array();

	for (size_t i = 0; i < res->nprobes; i++) {
		const struct knee_probe *p = &res->probes[i];
		json_t *pj = json_pack("{s:s, s:f, s:f, s:b, s:s}", "system", p->system, "offered_ops", p->offered_ops,
				       "achieved_ops", p->achieved_ops, "saturated", p->saturated, "reason", p->reason);
		if (p->by_generator)
			json_object_set_new(pj, "by_generator", json_true());
		json_array_append_new(probes, pj);
	}
	json_t *search = json_pack("{s:f, s:f, s:f, s:f, s:f, s:i, s:i}", "start_ops", kc->start_ops,
				   "factor", kc->factor, "max_ops", kc->max_ops, "probe_s", kc->probe_s,
				   "warmup_s", kc->warmup_s, "refine", kc->refine, "confirm", kc->confirm);
	json_t *k = knee_obj("search", res->ops > 0 ? json_real(res->ops) : json_null(), probes,
			     num_array(kc->fractions, kc->nfractions), res->slowest, search,
			     res->elapsed_s, loads ? num_array(loads, kc->nfractions) : json_null());
	json_object_set_new(k, "bracket_ops", json_pack("[f, o]", res->lo,
				res->hi > 0 ? json_real(res->hi) : json_null()));
	json_object_set_new(k, "capped", json_boolean(res->capped));
	json_object_set_new(k, "set_by", knee_set_by(res));
	json_object_set_new(k, "criterion", json_string("a probe does not sustain its load when achieved "
			    "< 95 % of offered, or schedule_lag, unsent or unanswered warns while interference "
			    "does not; a system sustains a load when any of its 1 + confirm probes there does"));
	return k;
}

json_t *knee_json_fixed(const double *loads, size_t nloads)
{
	return knee_obj("fixed", json_null(), json_array(), json_null(), NULL, json_null(), 0,
			num_array(loads, nloads));
}

void knee_after_sweep(json_t *run, FILE *progress)
{
	json_t *knee = result_knee_json(run);
	const json_t *points = result_points(run);
	double k = result_knee(run, NULL, NULL);
	size_t i, npast = 0, nsat = 0, nbelow = 0, nbelow_sat = 0, nloads = 0;
	const json_t *p, *l;
	char note[320] = "";

	if (!(k > 0))
		return;
	json_array_foreach(result_knee_loads(run), i, l)
		nloads += json_number_value(l) > k;
	json_array_foreach(points, i, p) {
		double off = result_offered(p);
		int sat = result_saturated(p);
		if (off > k) {
			npast++;
			nsat += sat;
		} else if (off < k) {
			nbelow++;
			nbelow_sat += sat;
		}
	}
	if (npast && nsat < npast)
		snprintf(note, sizeof note, "%zu of %zu points past the knee were not saturated: the knee "
			 "came out below what the sweep sustained (the host was busier during the search "
			 "than during the sweep, or the probes were too short to see it)", npast - nsat, npast);
	else if (nbelow_sat)
		snprintf(note, sizeof note, "%zu of %zu points below the knee were saturated: the host was "
			 "busier during the sweep than during the search", nbelow_sat, nbelow);
	json_t *pk = json_pack("{s:I, s:I, s:I}", "loads", (json_int_t)nloads, "points", (json_int_t)npast,
			       "saturated", (json_int_t)nsat);
	if (note[0])
		json_object_set_new(pk, "note", json_string(note));
	json_object_set_new(knee, "past_knee", pk);
	if (progress && npast)
		fprintf(progress, "knee: %zu of %zu points past the knee (%.0f ops/s) saturated%s%s\n", nsat, npast,
			k, note[0] ? "; " : "", note);
}

void knee_describe(FILE *f, const struct knee_conf *kc, const char *const *systems, size_t nsystems)
{
	char list[512] = "";
	size_t o = 0;

	for (size_t i = 0; i < nsystems && o + 1 < sizeof list; i++) {
		int w = snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", systems[i]);
		if (w > 0)
			o += (size_t)w;
	}
	fprintf(f, "knee search (arrival.loads_ops auto): probes of %g s after %g s of warm-up, at each "
		"load every system in turn (%s) until one saturates; ramp from %.0f ops/s by x%g while all "
		"sustain it (at most %.0f ops/s; downwards if the first load saturates), then %d bisection "
		"step(s), leaving the knee within x%.3g of the first load not sustained; a saturated probe is "
		"repeated %d time(s) before the load counts as not sustained; at most %zu probes\n",
		kc->probe_s, kc->warmup_s, list, kc->start_ops, kc->factor, kc->max_ops, kc->refine,
		pow(kc->factor, pow(0.5, kc->refine)), kc->confirm, knee_max_probes(kc, nsystems));
	fprintf(f, "sweep: %zu loads, fractions of the knee (rounded to 3 significant digits):", kc->nfractions);
	for (size_t i = 0; i < kc->nfractions; i++)
		fprintf(f, " %g", kc->fractions[i]);
	fprintf(f, "\n");
}
