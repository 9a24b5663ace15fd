/*
 * figruns.c - the runs of a reproduction, read and sorted into the paper's
 * figures by what they measured (figures.c is the map).
 */
#include "figures_internal.h"
#include "result.h"
#include "checks.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *fg_jstr(const json_t *o, const char *k, const char *dflt)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : dflt;
}

double fg_jnum(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

double fg_pt_load(const json_t *p)
{
	double l = result_offered(p);
	return isfinite(l) ? l : result_outstanding(p);
}

/* s, or dflt when it is NULL */
static const char *or_str(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

long long fg_pt_sweep(const json_t *p)
{
	long long w = result_sweep_index(p);
	return w < 0 ? 0 : w;
}

int fg_pt_is(const json_t *p, const char *sys)
{
	const char *s = result_system(p);
	return s && sys && !strcmp(s, sys);
}

void fg_fmt_ops(char *buf, size_t len, double ops)
{
	if (!isfinite(ops))
		snprintf(buf, len, "?");
	else if (ops >= 1e6)
		snprintf(buf, len, "%.2f Mops/s", ops / 1e6);
	else if (ops < 1e4)
		snprintf(buf, len, "%.2f Kops/s", ops / 1e3);
	else
		snprintf(buf, len, "%.0f Kops/s", ops / 1e3);
}

static int oq_durable(const json_t *run)
{
	size_t i;
	json_t *p;

	json_array_foreach(result_points(run), i, p)
		if (fg_pt_is(p, "oq") && result_durable(p))
			return 1;
	return 0;
}

/* Whether a point of the run ran seqwrite or write1 (issue 52's run). */
static int has_onesided(const json_t *run)
{
	size_t i;
	json_t *p;

	json_array_foreach(result_points(run), i, p)
		if (fg_pt_is(p, "seqwrite") || fg_pt_is(p, "write1"))
			return 1;
	return 0;
}

static int cmp_pt(const void *a, const void *b)
{
	double x = ((const struct fpt *)a)->offered, y = ((const struct fpt *)b)->offered;
	return x < y ? -1 : x > y;
}

static int sys_rank(const char *name)
{
	static const char *const order[] = { "oq", "rawrpc", "deferred", "erpc", "seqwrite", "write1" };
	for (int i = 0; i < 6; i++)
		if (!strcmp(name, order[i]))
			return i;
	return 6;
}

static int cmp_sys(const void *a, const void *b)
{
	const struct fsys *x = a, *y = b;
	int d = sys_rank(x->name) - sys_rank(y->name);
	return d ? d : strcmp(x->name, y->name);
}

/* Whether trial_agreement row a warned about the number q names. */
static int agree_warns(const json_t *a, unsigned q)
{
	return a && result_check_warns(a) && (checks_concerns(a) & q);
}

/* t's canary, regime factor and, for a point whose trials ran on two
 * floors, its numbers per floor (figures_internal.h, struct freg). */
static void collect_regimes(struct fpt *t, const json_t *p)
{
	static const unsigned qbit[3] = { CHECK_P50, CHECK_P99, CHECK_SYS99 };
	const json_t *rgs = result_regimes(p), *rg;
	size_t i;

	t->canary = result_regime_canary(p);
	t->factor = result_regime_factor(p);
	t->nreg = 0;
	if (result_regime_mixed(p) != 1)
		return;
	json_array_foreach(rgs, i, rg) {
		const json_t *a = result_regime_agreement(rg);
		struct freg *g;
		if (t->nreg == FG_MAXREG)
			break;
		g = &t->reg[t->nreg++];
		g->r = (struct fc_regime){ result_canary_ns(rg), (int)json_array_size(result_regime_trials(rg)),
					   a != NULL };
		g->p50 = result_num(result_lat(rg, "all"), "p50");
		g->p99 = result_num(result_lat(rg, "all"), "p99");
		g->sys99 = result_num(result_sys_lat(rg, "all"), "p99");
		for (int q = 0; q < 3; q++)
			g->agree_q[q] = agree_warns(a, qbit[q]);
	}
}

/* The latency points of an open-loop run, per system, sorted by offered load. */
static void collect_points(struct frun *r)
{
	size_t i, j;
	json_t *p;

	json_array_foreach(result_points(r->run), i, p) {
		const char *s = result_system(p);
		const json_t *all = result_lat(p, "all");
		const json_t *s50 = result_spread(p, "all", "p50"), *s99 = result_spread(p, "all", "p99");
		struct fpt *t;

		if (!s || !(result_n(all) > 0) || fg_pt_sweep(p) != 0)
			continue;
		for (j = 0; j < r->nsys && strcmp(r->sys[j].name, s) != 0; j++)
			;
		if (j == r->nsys) {
			if (r->nsys == FG_MAXSYS)
				continue;
			snprintf(r->sys[r->nsys++].name, sizeof r->sys[0].name, "%s", s);
		}
		if (r->sys[j].n == FG_MAXPT)
			continue;
		t = &r->sys[j].pt[r->sys[j].n++];
		t->offered = fg_pt_load(p);
		t->achieved = result_achieved(p);
		t->p50 = result_num(all, "p50");
		t->p99 = result_num(all, "p99");
		t->lo50 = s50 ? result_num(s50, "min") : t->p50;
		t->hi50 = s50 ? result_num(s50, "max") : t->p50;
		t->lo99 = s99 ? result_num(s99, "min") : t->p99;
		t->hi99 = s99 ? result_num(s99, "max") : t->p99;
		t->flagged = result_flagged(p);
		t->saturated = result_saturated(p);
		static const char *const qs[3] = { "p50", "p99", "sys_p99" };
		for (int q = 0; q < 3; q++)
			t->flag_q[q] = checks_point_flagged(p, qs[q], t->warns_q[q], sizeof t->warns_q[q]);
		t->sys99 = result_num(result_sys_lat(p, "all"), "p99");
		t->trials = result_repeat(p) >= 0 ? (int)result_repeat(p) : 1;
		collect_regimes(t, p);
		const json_t *sa = result_service(p, "all"), *ci = result_ci(sa, "p50");
		t->svc_every = isfinite(result_service_every(p)) ? (int)result_service_every(p) : 0;
		t->svc_n = result_n(sa);
		t->svc50 = result_num(sa, "p50");
		t->svc99 = result_num(sa, "p99");
		t->svc50_lo = json_is_number(json_array_get(ci, 0)) ? json_number_value(json_array_get(ci, 0)) : NAN;
		t->svc50_hi = json_is_number(json_array_get(ci, 1)) ? json_number_value(json_array_get(ci, 1)) : NAN;
		t->svc_nil50 = result_num(result_service(p, "nilext"), "n") > 0 ?
			       result_num(result_service(p, "nilext"), "p50") : NAN;
		t->svc_non50 = result_num(result_service(p, "non_nilext"), "n") > 0 ?
			       result_num(result_service(p, "non_nilext"), "p50") : NAN;
		if (!(t->svc_n > 0))
			t->svc50 = t->svc99 = t->svc50_lo = t->svc50_hi = NAN;
	}
	for (j = 0; j < r->nsys; j++)
		qsort(r->sys[j].pt, r->sys[j].n, sizeof r->sys[j].pt[0], cmp_pt);
	/* one colour per system in every panel: a fixed order of systems */
	qsort(r->sys, r->nsys, sizeof r->sys[0], cmp_sys);
}

const struct fpt *fg_pt_at(const struct fsys *s, double load)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->pt[i].offered == load)
			return &s->pt[i];
	return NULL;
}

const struct fsys *fg_sys_of(const struct frun *r, const char *name)
{
	for (size_t j = 0; j < r->nsys; j++)
		if (!strcmp(r->sys[j].name, name))
			return &r->sys[j];
	return NULL;
}

/* Offered loads of the run (union over systems), ascending; returns the count. */
static size_t run_loads(const struct frun *r, double *loads, size_t cap)
{
	size_t n = 0, i, j, k;

	for (j = 0; j < r->nsys; j++)
		for (i = 0; i < r->sys[j].n; i++) {
			double l = r->sys[j].pt[i].offered;
			for (k = 0; k < n && loads[k] != l; k++)
				;
			if (k == n && n < cap)
				loads[n++] = l;
		}
	for (i = 1; i < n; i++)
		for (k = i; k > 0 && loads[k - 1] > loads[k]; k--) {
			double t = loads[k];
			loads[k] = loads[k - 1];
			loads[k - 1] = t;
		}
	return n;
}

/* The offered load of the run nearest to want (log distance, ties low). */
static double nearest_load(const struct frun *r, double want)
{
	double loads[FG_MAXPT * FG_MAXSYS], best = NAN, bd = INFINITY;
	size_t n = run_loads(r, loads, sizeof loads / sizeof loads[0]);

	for (size_t i = 0; i < n; i++) {
		double d = fabs(log(loads[i] / want));
		if (d < bd - 1e-12) {
			bd = d;
			best = loads[i];
		}
	}
	return best;
}

/* Peak and 80 % of peak of an open-loop run, with the basis in words. */
static void find_peak(struct frun *r)
{
	const char *found_by;
	double knee = result_knee_ops(r->run, &found_by);
	double loads[FG_MAXPT * FG_MAXSYS];
	size_t n = run_loads(r, loads, sizeof loads / sizeof loads[0]), i, j;
	int pass;

	r->peak = NAN;
	if (knee > 0 && (!found_by || strcmp(found_by, "fixed") != 0)) {
		r->peak = nearest_load(r, knee);
		snprintf(r->basis, sizeof r->basis, "knee %.0f ops/s (%s)%s", knee,
			 found_by ? found_by : "run.json knee",
			 fabs(r->peak - knee) > 0.01 * r->peak ?
			 "; the nearest load with latency samples" : "");
	}
	for (pass = 0; pass < 2 && isnan(r->peak); pass++) {
		for (i = n; i-- > 0 && isnan(r->peak);) {
			int bad = 0;
			for (j = 0; j < r->nsys; j++) {
				const struct fpt *t = fg_pt_at(&r->sys[j], loads[i]);
				if (t && (t->saturated || (pass == 0 && t->flagged)))
					bad = 1;
			}
			if (!bad)
				r->peak = loads[i];
		}
		if (!isnan(r->peak))
			snprintf(r->basis, sizeof r->basis, "%s",
				 pass == 0 ? "no knee in run.json: highest load with no point flagged" :
				 "no knee in run.json and every load had a flagged point: highest load "
				 "at which no system saturated");
	}
	if (isnan(r->peak) && n) {
		r->peak = loads[0];
		snprintf(r->basis, sizeof r->basis, "every load saturated: the lowest load");
	}
	/* 80 % of the knee itself, not of the load standing in for it */
	r->load80 = isnan(r->peak) ? NAN : nearest_load(r, 0.8 * (strncmp(r->basis, "knee", 4) ? r->peak : knee));
}

static void classify(struct frun *r)
{
	const char *kind = or_str(result_setting_str(r->run, "workload.kind"), "");
	const char *skey = or_str(result_setting_str(r->run, "sweep.key"), "");
	struct result_ident id;

	result_ident(r->run, &id);
	snprintf(r->name, sizeof r->name, "%s", or_str(id.name, "?"));
	snprintf(r->transport, sizeof r->transport, "%s",
		 or_str(result_transport_name(r->run), or_str(result_setting_str(r->run, "transport"), "?")));
	snprintf(r->created, sizeof r->created, "%s", or_str(id.created_utc, ""));
	snprintf(r->commit, sizeof r->commit, "%.10s", or_str(id.git_commit, "?"));
	snprintf(r->machine, sizeof r->machine, "%s on %s (%s, %.0f CPUs)", r->transport,
		 or_str(result_driver_host(r->run), "?"), or_str(result_cpu_model(r->run), "CPU unknown"),
		 result_cpus_online(r->run));
	snprintf(r->backend, sizeof r->backend, "%s",
		 or_str(result_setting_str(r->run, "server.backend.kind"), "?"));
	r->durable = oq_durable(r->run);
	r->slot = -1;
	if (has_onesided(r->run)) {
		r->fig = FIG_ONESIDED;
	} else if (!strcmp(kind, "echo")) {
		r->fig = FIG_6;
	} else if (!strcmp(skey, "workload.value_size")) {
		r->fig = FIG_11;
	} else if (!strcmp(kind, "twitter")) {
		for (int k = 0; k < 4; k++)
			if (result_setting_num(r->run, "workload.cluster") == fg_clusters[k])
				r->slot = k;
		r->fig = r->slot >= 0 ? FIG_78 : FIG_NONE;
	} else if (!strcmp(kind, "ycsb")) {
		for (int k = 0; k < 4; k++)
			if (fabs(result_setting_num(r->run, "workload.put_ratio") - fg_put_ratios[k]) < 1e-9)
				r->slot = k;
		r->fig = r->slot >= 0 ? FIG_910 : FIG_NONE;
	}
	if (r->fig == FIG_78 || r->fig == FIG_910 || r->fig == FIG_ONESIDED) {
		collect_points(r);
		find_peak(r);
	}
}

/* Is run a better choice than cur for a panel (one with points, durable
 * first for 9/10, the cache backend first for 7/8 (the paper's
 * Memcached-like store; memcached runs have the faithfulness figure),
 * then newer)? */
static int better(const struct frun *a, const struct frun *cur)
{
	if (!cur)
		return 1;
	if ((a->nsys > 0) != (cur->nsys > 0))
		return a->nsys > 0;
	if (a->fig == FIG_910 && a->durable != cur->durable)
		return a->durable;
	if (a->fig == FIG_78 && !strcmp(a->backend, "cache") != !strcmp(cur->backend, "cache"))
		return !strcmp(a->backend, "cache");
	return strcmp(a->created, cur->created) > 0;
}

static int load_one(struct fctx *x, const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	struct frun *r;

	snprintf(path, sizeof path, "%s/run.json", dir);
	if (access(path, R_OK) != 0)
		return 0;
	if (x->nruns == FG_MAXRUNS) {
		snprintf(err, errlen, "more than %d runs under the runs directory; give a directory with "
			 "one reproduction's runs", FG_MAXRUNS);
		return -1;
	}
	r = &x->runs[x->nruns];
	memset(r, 0, sizeof *r);
	r->run = result_load(path, err, errlen);
	if (!r->run)
		return -1;
	snprintf(r->dir, sizeof r->dir, "%s", dir);
	x->nruns++;
	classify(r);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads DIR/run.json, DIR/ * /run.json and DIR/ * / * /run.json, in name order. */
int fg_load_tree(struct fctx *x, const char *dir, int depth, char *err, size_t errlen)
{
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (load_one(x, dir, err, errlen) < 0)
		return -1;
	if (depth == 0 || !(d = opendir(dir)))
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **t = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
			if (!t)
				break;
			names = t;
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_name);
	for (size_t i = 0; i < n; i++) {
		char sub[PATH_MAX];
		struct stat st;
		if (rc == 0 && names[i] && (size_t)snprintf(sub, sizeof sub, "%s/%s", dir, names[i]) < sizeof sub &&
		    stat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			rc = fg_load_tree(x, sub, depth - 1, err, errlen);
		free(names[i]);
	}
	free(names);
	return rc;
}

void fg_pick_panels(struct fctx *x)
{
	for (size_t i = 0; i < x->nruns; i++) {
		struct frun *r = &x->runs[i];
		if (r->fig == FIG_78 && !strcmp(r->backend, "memcached") && better(r, x->mc78[r->slot]))
			x->mc78[r->slot] = r;
		if (r->fig == FIG_78 && better(r, x->panel78[r->slot]))
			x->panel78[r->slot] = r;
		else if (r->fig == FIG_910 && better(r, x->panel910[r->slot]))
			x->panel910[r->slot] = r;
		else if (r->fig == FIG_11 && better(r, x->fig11))
			x->fig11 = r;
		else if (r->fig == FIG_6 && x->nfig6 < 4)
			x->fig6[x->nfig6++] = r;
		else if (r->fig == FIG_ONESIDED && better(r, x->onesided))
			x->onesided = r;
	}
	if (x->onesided)
		x->onesided->drawn = 1;
	for (int k = 0; k < 4; k++) {
		const struct frun *c, *m;
		if ((fg_clusters[k] == 12 || fg_clusters[k] == 31) && fg_faith_pair(x, k, &c, &m)) {
			x->panel78[k]->faith = 1;
			x->mc78[k]->faith = x->mc78[k]->drawn = 1;
		}
		if (x->panel78[k])
			x->panel78[k]->drawn = 1;
		if (x->panel910[k])
			x->panel910[k]->drawn = 1;
	}
	if (x->fig11)
		x->fig11->drawn = 1;
	for (size_t k = 0; k < x->nfig6; k++)
		x->fig6[k]->drawn = 1;
}

/* Peak achieved throughput of system sys at sweep index w of a run (NAN: none). */
double fg_sweep_peak(const json_t *run, const char *sys, long long w, int *flagged)
{
	double best = NAN;
	size_t i;
	json_t *p;

	json_array_foreach(result_points(run), i, p) {
		if (!fg_pt_is(p, sys) || fg_pt_sweep(p) != w)
			continue;
		if (isnan(best) || result_achieved(p) > best) {
			best = result_achieved(p);
			if (flagged)
				*flagged = result_flagged(p);
		}
	}
	return best;
}
