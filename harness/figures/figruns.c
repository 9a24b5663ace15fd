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
	return isfinite(l) ? l : fg_jnum(p, "outstanding");
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
		if (!strcmp(fg_jstr(p, "system", ""), "oq") && json_is_true(json_object_get(p, "durable")))
			return 1;
	return 0;
}

/* Whether a point of the run ran seqwrite or write1 (issue 52's run). */
static int has_onesided(const json_t *run)
{
	size_t i;
	json_t *p;

	json_array_foreach(result_points(run), i, p)
		if (!strcmp(fg_jstr(p, "system", ""), "seqwrite") || !strcmp(fg_jstr(p, "system", ""), "write1"))
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

/* The latency points of an open-loop run, per system, sorted by offered load. */
static void collect_points(struct frun *r)
{
	size_t i, j;
	json_t *p;

	json_array_foreach(result_points(r->run), i, p) {
		const char *s = fg_jstr(p, "system", NULL);
		const json_t *all = result_lat(p, "all");
		const json_t *s50 = result_spread(p, "all", "p50"), *s99 = result_spread(p, "all", "p99");
		struct fpt *t;

		if (!s || json_integer_value(json_object_get(all, "n")) <= 0 ||
		    json_integer_value(json_object_get(json_object_get(p, "sweep"), "index")) != 0)
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
		t->flagged = json_is_true(json_object_get(p, "flagged"));
		t->saturated = result_saturated(p);
		static const char *const qs[3] = { "p50", "p99", "sys_p99" };
		for (int q = 0; q < 3; q++)
			t->flag_q[q] = checks_point_flagged(p, qs[q], t->warns_q[q], sizeof t->warns_q[q]);
		t->sys99 = result_num(result_sys_lat(p, "all"), "p99");
		t->trials = json_is_integer(json_object_get(p, "repeat")) ?
			    (int)json_integer_value(json_object_get(p, "repeat")) : 1;
		const json_t *svc = result_service(p, NULL);
		const json_t *sa = result_service(p, "all"), *ci = json_object_get(sa, "p50_ci");
		t->svc_every = (int)json_integer_value(json_object_get(svc, "sample_every"));
		t->svc_n = fg_jnum(sa, "n");
		t->svc50 = fg_jnum(sa, "p50");
		t->svc99 = fg_jnum(sa, "p99");
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
	const json_t *knee = json_object_get(r->run, "knee");
	double loads[FG_MAXPT * FG_MAXSYS];
	size_t n = run_loads(r, loads, sizeof loads / sizeof loads[0]), i, j;
	int pass;

	r->peak = NAN;
	if (json_is_number(json_object_get(knee, "ops")) && fg_jnum(knee, "ops") > 0 &&
	    strcmp(fg_jstr(knee, "found_by", ""), "fixed") != 0) {
		r->peak = nearest_load(r, fg_jnum(knee, "ops"));
		snprintf(r->basis, sizeof r->basis, "knee %.0f ops/s (%s)%s", fg_jnum(knee, "ops"),
			 fg_jstr(knee, "found_by", "run.json knee"),
			 fabs(r->peak - fg_jnum(knee, "ops")) > 0.01 * r->peak ?
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
	r->load80 = isnan(r->peak) ? NAN : nearest_load(r, 0.8 * (strncmp(r->basis, "knee", 4) ? r->peak :
								  fg_jnum(knee, "ops")));
}

static void classify(struct frun *r)
{
	const json_t *cf = json_object_get(r->run, "config");
	const json_t *wl = json_object_get(cf, "workload");
	const char *kind = fg_jstr(wl, "kind", "");
	const char *skey = fg_jstr(json_object_get(cf, "sweep"), "key", "");
	const json_t *env = json_object_get(r->run, "environment");

	snprintf(r->name, sizeof r->name, "%s", fg_jstr(r->run, "name", "?"));
	snprintf(r->transport, sizeof r->transport, "%s",
		 fg_jstr(json_object_get(r->run, "transport"), "name", fg_jstr(cf, "transport", "?")));
	snprintf(r->created, sizeof r->created, "%s", fg_jstr(r->run, "created_utc", ""));
	snprintf(r->commit, sizeof r->commit, "%.10s", fg_jstr(r->run, "git_commit", "?"));
	snprintf(r->machine, sizeof r->machine, "%s on %s (%s, %.0f CPUs)", r->transport,
		 fg_jstr(json_object_get(r->run, "hosts"), "driver", "?"), fg_jstr(env, "cpu_model", "CPU unknown"),
		 fg_jnum(env, "cpus_online"));
	snprintf(r->backend, sizeof r->backend, "%s",
		 fg_jstr(json_object_get(json_object_get(cf, "server"), "backend"), "kind", "?"));
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
			if (json_integer_value(json_object_get(wl, "cluster")) == fg_clusters[k])
				r->slot = k;
		r->fig = r->slot >= 0 ? FIG_78 : FIG_NONE;
	} else if (!strcmp(kind, "ycsb")) {
		for (int k = 0; k < 4; k++)
			if (fabs(fg_jnum(wl, "put_ratio") - fg_put_ratios[k]) < 1e-9)
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
		if (strcmp(fg_jstr(p, "system", ""), sys) != 0 ||
		    json_integer_value(json_object_get(json_object_get(p, "sweep"), "index")) != w)
			continue;
		if (isnan(best) || fg_jnum(p, "achieved_ops") > best) {
			best = fg_jnum(p, "achieved_ops");
			if (flagged)
				*flagged = json_is_true(json_object_get(p, "flagged"));
		}
	}
	return best;
}
