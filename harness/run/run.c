/*
 * run.c - `oqb run`: plan, trials, reruns, run.json (run.h).
 *
 * The experiment's loop: load the config, plan the points, search the
 * knee when the loads are {"auto": true}, order the trials (rounds, each
 * shuffled), run each trial (point.c, whose processes rendezvous.c starts
 * and stops), run a disturbed trial again within the rerun budget, print
 * progress, and rewrite run.json after every trial (at most every 5 s).
 * The first failure stops the run: every process started is ended by PID,
 * run.json keeps the finished points plus the error.
 *
 * Results directory:
 *   run.json           the merged results (rewritten after every point)
 *   processes.tsv      every process started: point, role, rank, host, pid
 *                      (the local PID: the process itself, or its ssh/srun)
 *   pNN-.../           one per point (point.c)
 *   knee/              the knee search's probes, when it ran
 */
#include "exitcodes.h"
#include "run.h"
#include "binbuild.h"
#include "run_internal.h"
#include "loadsfrom.h"
#include "checks.h"
#include "finding.h"
#include "needs.h"
#include "procargs.h"
#include "rng.h"
#include "result.h"
#include "runjson.h"
#include "trials.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

volatile sig_atomic_t run_signal;

static void on_signal(int sig)
{
	run_signal = sig;
}

void fmt_ns(char *buf, size_t len, double ns)
{
	if (ns < 1e3)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 1e4)
		snprintf(buf, len, "%.2fus", ns / 1e3);
	else if (ns < 1e6)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
}

static void fmt_dur(char *buf, size_t len, double s)
{
	long t = lround(s);

	if (t >= 3600)
		snprintf(buf, len, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
	else if (t >= 60)
		snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, len, "%lds", t);
}

const char *self_bin_dir(void)
{
	static char dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
	char *slash;

	if (n <= 0)
		return ".";
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash)
		return ".";
	*slash = '\0';
	return dir;
}

int run_sibling(const char *prog, int argc, char **argv)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", self_bin_dir(), prog);
	argv[0] = path;
	(void)argc;
	fflush(NULL);
	execv(path, argv);
	fprintf(stderr, "oqb: cannot run %s: %s (build it with make)\n", path, strerror(errno));
	return 2;
}

/* mkdir -p (run_internal.h) */
int run_mkdirs(const char *path, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof tmp) {
		snprintf(err, errlen, "bad directory name \"%s\"", path);
		return -1;
	}
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(tmp, 0755) != 0 && errno != EEXIST) {
				snprintf(err, errlen, "cannot create directory %s: %s", tmp, strerror(errno));
				return -1;
			}
			*p = c;
			if (c == '\0')
				break;
		}
	}
	return 0;
}

/*
 * The knee search's probe (knee.h): one short point of `system`, run like
 * any other (its processes, logs and results in RUN/knee/pNN-...), with
 * the search's probe_s and warmup_s, one trial, and no canary, history
 * or check; find_knee sets those for the search and restores them.
 */
static int knee_probe(void *ctx, const char *system, double offered_ops, struct knee_probe *out,
		      char *err, size_t errlen)
{
	struct run *r = ctx;
	struct prun pr;
	struct point pt = { .idx = r->nprobes++, .system = system, .offered_ops = offered_ops, .sweep = -1 };
	json_t *pj = run_point(r, &pr, &pt);

	if (pr.warn[0])
		fprintf(stderr, "oqb: warning: %s\n", pr.warn);
	if (pj)
		knee_verdict(pj, pr.checks, out);
	else
		snprintf(err, errlen, "knee search: probe of system=%s at %.0f ops/s: %s", system,
			 offered_ops, pr.err);
	json_decref(pj);
	prun_free(&pr);
	return pj ? 0 : -1;
}

/*
 * arrival.loads_ops {"auto": true}: the knee search, then the sweep's loads
 * (fractions x knee) into the config and the plan.  run.json gets "knee"
 * either way (with the probes run so far when the search failed).
 */
static int find_knee(struct run *r, char *err, size_t errlen)
{
	struct runconf *rc = &r->rc;
	struct knee_result res;
	size_t n = strlen(r->dir);
	double dur = rc->duration_s, warm = rc->warmup_s;
	int canary = rc->canary, history = rc->history, check = rc->check, converge = rc->converge;
	long long repeat = rc->repeat;
	int ret;

	if (n + sizeof "/knee" > sizeof r->dir) {
		snprintf(err, errlen, "%s: path too long for the knee probes' directory", r->dir);
		return -1;
	}
	memcpy(r->dir + n, "/knee", sizeof "/knee");
	rc->duration_s = rc->knee.probe_s;
	rc->warmup_s = rc->knee.warmup_s;
	rc->canary = rc->history = rc->check = rc->converge = 0;
	rc->repeat = 1;
	ret = knee_search(&rc->knee, rc->systems, rc->nsystems, knee_probe, r, r->o->quiet ? NULL : stderr,
			  &res, err, errlen);
	r->dir[n] = '\0';
	rc->duration_s = dur;
	rc->warmup_s = warm;
	rc->canary = canary;
	rc->history = history;
	rc->check = check;
	rc->converge = converge;
	rc->repeat = repeat;
	if (ret == 0) {
		rc->knee_ops = res.ops;
		knee_loads(&rc->knee, res.ops, rc->loads);
		r->npts = runconf_plan(rc, r->pts, MAX_POINTS);
		if (!r->o->quiet) {
			char slow[160] = "";
			if (res.slowest)
				snprintf(slow, sizeof slow, " (slowest: %s, which did not sustain %.0f)", res.slowest,
					 res.hi);
			fprintf(stderr, "knee: %.0f ops/s%s%s, %zu probes in %.0f s; loads:", res.ops,
				res.capped ? " (search.max_ops reached: a lower bound)" : "", slow, res.nprobes,
				res.elapsed_s);
			for (size_t i = 0; i < rc->nloads; i++)
				fprintf(stderr, " %.0f", rc->loads[i]);
			fprintf(stderr, "\n");
		}
	}
	json_object_set_new(r->runj, "knee", knee_json(&rc->knee, &res, ret == 0 ? rc->loads : NULL));
	if (ret < 0) {
		json_object_set_new(r->runj, "error", json_pack("{s:s}", "message", err));
		json_object_set_new(r->runj, "status", json_string(run_signal ? "interrupted" : "failed"));
	}
	knee_result_free(&res);
	return ret;
}

static void progress(const struct run *r, const struct point *pt, const json_t *pj,
		     const json_t *checks, double elapsed_s, size_t done)
{
	char load[400], p50[32], p99[32], eta[32], flags[256], tr[48] = "";
	const json_t *all = result_lat(pj, "all");
	double left = (double)(r->ntrials - done);

	if (r->o->quiet)
		return;
	point_label(load, sizeof load, &r->rc, pt);
	fmt_ns(p50, sizeof p50, result_num(all, "p50"));
	fmt_ns(p99, sizeof p99, result_num(all, "p99"));
	if (!(result_num(all, "n") > 0)) {
		snprintf(p50, sizeof p50, "- (no samples)");
		snprintf(p99, sizeof p99, "-");
	}
	fmt_dur(eta, sizeof eta, done ? elapsed_s / (double)done * left : 0);
	if (r->rc.repeat > 1)
		snprintf(tr, sizeof tr, " trial %u/%lld", pt->trial + 1, r->rc.repeat);
	checks_flagged(checks, flags, sizeof flags);
	/* A figure on Debian's RocksDB says beside it what build it came from. */
	char be[160] = "";
	if (strcmp(r->rc.backend, "rocksdb") == 0) {
		const char *ver, *a;
		result_backend_library(pj, "rocksdb", &ver, &a);
		snprintf(be, sizeof be, " [rocksdb %s, assertions %s]", ver ? ver : "?", a ? a : "unknown");
	}
	/* the server's median service time per request (bench/server.h) */
	const json_t *svc = result_service(pj, "all");
	if (result_num(svc, "n") > 0) {
		char sv[32];
		fmt_ns(sv, sizeof sv, result_num(svc, "p50"));
		snprintf(be + strlen(be), sizeof be - strlen(be), "  service p50=%s", sv);
	}
	/* a full receive queue: RNR NAKs on verbs (the device's counters,
	 * devctr.h), the clients' waits for a full ring on shm */
	char full[96] = "";
	if (result_rdma_counters(pj)) {
		char a[24] = "?", b[24] = "?";
		double s = result_rnr_naks(pj, 1), v = result_rnr_naks(pj, 0);
		if (!isnan(s))
			snprintf(a, sizeof a, "%.0f", s);
		if (!isnan(v))
			snprintf(b, sizeof b, "%.0f", v);
		snprintf(full, sizeof full, "  RNR NAKs sent=%s received=%s", a, b);
	} else if (strcmp(r->rc.transport, "shm") == 0) {
		double w = result_ring_full_waits(pj);
		snprintf(full, sizeof full, "  ring full waits=%.0f", isnan(w) ? 0 : w);
	}
	fprintf(stderr, "[%zu/%zu] system=%s %s%s  p50=%s p99=%s%s  achieved=%.0f ops/s%s%s%s%s  ETA %s\n",
		done, r->ntrials, pt->system, load, tr, p50, p99, be,
		isnan(result_achieved(pj)) ? 0 : result_achieved(pj),
		result_saturated(pj) ? " (saturated)" : "", full,
		flags[0] ? "  CHECK: " : "", flags, eta);
}

static int dry_run(struct run *r)
{
	char **a;
	char *d;

	char sweep[64] = "";

	if (r->rc.nsweep)
		snprintf(sweep, sizeof sweep, " x %zu sweep values", r->rc.nsweep);
	char trials[48] = "";
	if (r->rc.repeat > 1)
		snprintf(trials, sizeof trials, " x %lld trials", r->rc.repeat);
	printf("config %s: %zu points (%zu systems%s x %zu loads)%s, launcher %s, %lld client "
	       "process(es) x %lld thread(s), about %.0f s of measurement%s\n",
	       r->rc.path, r->npts, r->rc.nsystems, sweep, r->rc.nloads,
	       trials, r->rc.launcher, r->rc.processes, r->rc.threads,
	       (double)r->npts * (double)r->rc.repeat * (r->rc.warmup_s + r->rc.duration_s),
	       r->rc.converge ? " per chunk (duration_s auto)" : "");
	if (json_array_size(r->rc.overrides)) {
		char *ov = json_dumps(r->rc.overrides, JSON_COMPACT);
		printf("overrides: %s\n", ov ? ov : "?");
		free(ov);
	}
	needs_print(stdout, &r->rc);
	if (r->rc.knee.on) {
		knee_describe(stdout, &r->rc.knee, r->rc.systems, r->rc.nsystems);
		printf("command lines below: the sweep's, shown at search.start_ops' rate (%.0f ops/s), since the knee is not known yet\n",
		       r->rc.knee.start_ops);
	}
	for (size_t i = 0; i < r->npts; i++) {
		struct point shown = r->pts[i];
		const struct point *pt = &shown;
		if (r->rc.knee.on)
			shown.offered_ops = r->rc.knee.start_ops;
		const struct runconf *rc = runconf_for(&r->rc, pt);
		char load[400], pmem[PATH_MAX + 64];
		point_label(load, sizeof load, &r->rc, &r->pts[i]);
		printf("[%zu/%zu] system=%s %s%s\n", i + 1, r->npts, pt->system, load,
		       runconf_durable(rc, pt->system) ? " durable" : "");
		/* Command lines of the first load of each sweep value (every
		 * system: they differ in --system and --durable). */
		if (i % (r->rc.nsystems * r->rc.nloads) >= r->rc.nsystems)
			continue;
		point_pmem(r, pt, pmem, sizeof pmem);
		a = procargs_server(r->bin, &r->rc, pt, "CTLHOST:PORT", pmem);
		d = a ? launch_describe(&r->l, rc->server_host, NULL, a) : NULL;
		printf("  server 0 on %s: %s\n", rc->server_host, d ? d : "?");
		free(d);
		launch_argv_free(a);
		for (unsigned c = 0; c < (unsigned)rc->processes; c++) {
			a = procargs_client(r->bin, &r->rc, pt, "CTLHOST:PORT", "ENDPOINT", c, NULL);
			d = a ? launch_describe(&r->l, runconf_client_host(rc, c), NULL, a) : NULL;
			printf("  client %u on %s: %s\n", c, runconf_client_host(rc, c), d ? d : "?");
			free(d);
			launch_argv_free(a);
		}
	}
	return 0;
}

/*
 * run.json's "overrides" (the --set arguments, [] without any), placed
 * right after "config", which holds the config as they changed it.
 * jansson appends keys, so the object is rebuilt in order.
 */
static void add_overrides(json_t *runj, json_t *overrides)
{
	json_t *copy = json_copy(runj), *v;
	const char *k;

	json_object_clear(runj);
	json_object_foreach(copy, k, v) {
		json_object_set(runj, k, v);
		if (strcmp(k, "config") == 0)
			json_object_set_new(runj, "overrides", overrides ? json_incref(overrides) : json_array());
	}
	if (!json_object_get(runj, "overrides"))
		json_object_set_new(runj, "overrides", overrides ? json_incref(overrides) : json_array());
	json_decref(copy);
}

/*
 * The order of all trials: `repeat` rounds, each running every point once
 * in an order shuffled (Fisher-Yates) by a generator seeded from the
 * config's seed, so the run can be repeated exactly.  Recorded in run.json.
 */
static int plan_order(struct run *r)
{
	size_t rounds = (size_t)r->rc.repeat, k = 0;
	struct rng g;
	json_t *ord = json_array();

	r->ntrials = r->npts * rounds;
	r->order = calloc(r->ntrials ? r->ntrials : 1, sizeof *r->order);
	if (!r->order || !ord) {
		json_decref(ord);
		return -1;
	}
	rng_seed_multi(&g, (uint64_t)r->rc.seed, 0x6f72646572ull /* "order" */, 0);
	for (size_t t = 0; t < rounds; t++) {
		size_t base = k;
		for (size_t i = 0; i < r->npts; i++, k++) {
			r->order[k].point = i;
			r->order[k].trial = (unsigned)t;
		}
		/* one trial: the plan's order, as before repeat existed */
		if (rounds > 1)
			for (size_t i = r->npts; i > 1; i--) {
				size_t j = (size_t)(rng_next(&g) % i);
				struct trial_ref tmp = r->order[base + i - 1];
				r->order[base + i - 1] = r->order[base + j];
				r->order[base + j] = tmp;
			}
	}
	for (k = 0; k < r->ntrials; k++)
		json_array_append_new(ord, json_pack("[ii]", (int)r->order[k].point, (int)r->order[k].trial));
	json_object_set_new(r->runj, "trial_order", json_pack("{s:I,s:I,s:s,s:o}", "repeat", (json_int_t)rounds,
			    "seed", (json_int_t)r->rc.seed, "how",
			    rounds > 1 ? "rounds; each round runs every point once, shuffled (Fisher-Yates, "
			    "xoshiro256** seeded from seed)" : "plan order (one trial)", "order", ord));
	return 0;
}

/* The median of the run's canaries so far, or -1. */
static double run_canary_median(const struct run *r)
{
	size_t cnt;
	/* with the factor off every canary is in one regime: its median */
	return regime_mode(r->canaries, r->ncanaries, 0, -1, &cnt);
}

/*
 * Why a trial of point i whose canary read `canary` ran on another floor
 * of the machine than the point's kept trials (trials.h, "Canary
 * regimes"), into buf; NULL when it did not, or the rule is off.
 */
static const char *regime_off(const struct run *r, size_t i, double canary, char *buf, size_t len)
{
	double factor = runconf_for(&r->rc, &r->pts[i])->canary_regime_factor;
	size_t nk;
	if (factor <= 0 || !(canary > 0))
		return NULL;
	double *k = entry_canaries(r->entries[i], &nk);
	if (!k)
		return NULL;
	double ref = regime_reference(k, nk, canary, r->canaries, r->ncanaries, factor);
	free(k);
	if (ref <= 0 || regime_same(canary, ref, factor))
		return NULL;
	snprintf(buf, len, "canary regime: its canary read %.0f ns against %.0f ns, %s (x%.2f, canary_regime_factor "
		 "%g): another floor of the machine", canary, ref, nk ? "the point's other trials'" :
		 "the run's median so far", canary > ref ? canary / ref : ref / canary, factor);
	return buf;
}

/* What a rerun decision stopped or resumed (trials.h: rerun_decide): said
 * on stderr and kept in run.json.  still: why the last trial was to be run
 * again; k: that trial (run order). */
static void rerun_event(struct run *r, const struct rerun_policy *rp, enum rerun_event ev, size_t k,
			const char *still)
{
	if (ev == RR_BUDGET_STOP)
		fprintf(stderr, "oqb: warning: the run's rerun budget is spent (%lld rerun(s): rerun_budget %g of "
			"%zu trials); disturbed trials, and trials on another canary floor than their point's, are kept "
			"from here on and stay flagged (last: %s). "
			"Raise rerun_budget in the config for more\n", rp->used, r->rc.rerun_budget, r->ntrials, still);
	else if (ev == RR_FUTILE_STOP)
		fprintf(stderr, "oqb: warning: three trials in a row were still disturbed after %lld "
			"rerun(s) each (last: %s); the disturbance looks permanent, so disturbed trials "
			"are not rerun until one comes back calm (they stay flagged). Find what shares that "
			"thread's CPU (uptime, top -H), or set \"rerun_disturbed\": 0 to skip the reruns\n",
			r->rc.rerun_disturbed, still);
	if (ev == RR_BUDGET_STOP || ev == RR_FUTILE_STOP)
		json_object_set_new(r->runj, "reruns_stopped",
				    json_pack("{s:I,s:s,s:s}", "after_trial", (json_int_t)k, "last_reason", still,
					      "cause", ev == RR_BUDGET_STOP ? "budget" : "futile"));
	else if (ev == RR_RESUME) {
		if (!r->o->quiet)
			fprintf(stderr, "oqb: trial %zu came back calm: the disturbance passed, so disturbed "
				"trials are rerun again\n", k + 1);
		json_object_set_new(r->runj, "reruns_resumed", json_pack("{s:I}", "after_trial", (json_int_t)k));
	}
}

/* Puts trial entry d (its reference taken) in point i's discarded_trials,
 * with why in words and the reason's key. */
static void set_aside(struct run *r, size_t i, json_t *d, const char *why, const char *reason)
{
	json_object_set_new(d, "discarded", json_string(why));
	json_object_set_new(d, "reason", json_string(reason));
	result_trial_set_aside(d);   /* merged nowhere: its numbers, not its histograms */
	if (!r->discarded[i])
		r->discarded[i] = json_array();
	json_array_append_new(r->discarded[i], d);
}

/*
 * The first kept trial of point i that its point's later trials show to
 * be on another floor (trials.h: regime_stray), moved to discarded_trials
 * with its reason when the rerun budget allows one more trial; then *pt
 * is that trial, to be run again.  k is the trial just kept (run order).
 * Returns 1 when it did so.
 */
static int set_aside_stray(struct run *r, size_t i, size_t k, struct rerun_policy *rp, struct point *pt)
{
	double factor = runconf_for(&r->rc, &r->pts[i])->canary_regime_factor, ref;
	long j = regime_stray(r->entries[i], factor, &ref);
	enum rerun_event ev;
	if (j < 0)
		return 0;
	/* its own reruns count against rerun_disturbed, as a rerun's would */
	long trial = result_trial_no(json_array_get(r->entries[i], (size_t)j));
	size_t x, nrun = 0;
	const json_t *e;
	json_array_foreach(r->discarded[i], x, e)
		nrun += result_trial_no(e) == trial;
	if ((long long)nrun >= rp->per_trial)
		return 0;
	if (!rerun_decide(rp, (unsigned)nrun, 1, &ev)) {
		rerun_event(r, rp, ev, k, "the canary regime of a kept trial");
		return 0;
	}
	json_t *d = json_incref(json_array_get(r->entries[i], (size_t)j));
	double c = result_canary_ns(d);
	char why[400];
	snprintf(why, sizeof why, "canary regime: its canary read %.0f ns against %.0f ns, the point's later "
		 "trials' (x%.2f, canary_regime_factor %g): another floor of the machine, seen once the point "
		 "had more trials", c, ref, c > ref ? c / ref : ref / c, factor);
	json_array_remove(r->entries[i], (size_t)j);
	set_aside(r, i, d, why, "canary_regime");
	pt->trial = trial;
	pt->rerun = (unsigned)nrun + 1;
	if (!r->o->quiet)
		fprintf(stderr, "oqb: trial %u of point %zu (%s) set aside: %s; running it again\n", pt->trial + 1,
			i + 1, pt->system, why);
	return 1;
}

/* run.json's points, in plan order, from the trials run so far. */
static int rebuild_points(struct run *r, char *err, size_t errlen)
{
	json_t *pts = json_array();
	double run_med = run_canary_median(r);
	size_t nmixed = 0, naside = 0, nregime = 0;
	for (size_t i = 0; i < r->npts; i++) {
		if (!r->entries[i])
			continue;
		/* a point is merged (and its trials bootstrapped) again only
		 * when a trial was added since */
		size_t from = json_array_size(r->entries[i]) + json_array_size(r->discarded[i]);
		if (!r->built[i] || r->built_from[i] != from) {
			json_t *p = trials_point(r->pj0[i], r->entries[i], &runconf_for(&r->rc, &r->pts[i])->checks,
						 err, errlen);
			if (!p) {
				json_decref(pts);
				return -1;
			}
			result_point_compact(p);   /* its histograms live in its trials */
			if (r->discarded[i])
				json_object_set(p, "discarded_trials", r->discarded[i]);
			json_t *reg = regime_of_point(r->entries[i], r->discarded[i],
						      runconf_for(&r->rc, &r->pts[i])->canary_regime_factor, run_med,
						      &runconf_for(&r->rc, &r->pts[i])->checks);
			if (reg)
				json_object_set_new(p, "canary_regime", reg);
			json_decref(r->built[i]);
			r->built[i] = p;
			r->built_from[i] = from;
		}
		json_array_append(pts, r->built[i]);
		int mixed = result_regime_mixed(r->built[i]);
		if (mixed >= 0) {
			double aside = result_regime_set_aside(r->built[i]);
			nregime++;
			nmixed += (size_t)mixed;
			naside += isnan(aside) ? 0 : (size_t)aside;
		}
	}
	json_object_set_new(r->runj, "points", pts);
	if (nregime)
		json_object_set_new(r->runj, "canary_regimes",
				    json_pack("{s:f,s:f,s:I,s:I,s:I}", "factor", r->rc.canary_regime_factor,
					      "run_median_ns", run_med, "points", (json_int_t)nregime, "points_mixed",
					      (json_int_t)nmixed, "trials_set_aside", (json_int_t)naside));
	return 0;
}

/*
 * The end of the run, on stderr: each point whose kept trials mixed
 * canary regimes, with each regime's numbers (trials.h: regime_line), so
 * that nobody reads its merged numbers as one machine's.
 */
static void regime_report(const struct run *r)
{
	size_t nmixed = 0;
	for (size_t i = 0; i < r->npts; i++)
		nmixed += r->built[i] && result_regimes(r->built[i]);
	if (!nmixed)
		return;
	fprintf(stderr, "oqb: %zu point(s) kept trials on two floors of the machine (canary regimes); each regime's "
		"own numbers (run.json: canary_regime.regimes):\n", nmixed);
	for (size_t i = 0; i < r->npts; i++) {
		char line[1024], load[400];
		if (!r->built[i] || !result_regimes(r->built[i]))
			continue;
		regime_line(line, sizeof line, r->built[i]);
		point_label(load, sizeof load, &r->rc, &r->pts[i]);
		fprintf(stderr, "  p%02u %s %s: %s\n", r->pts[i].idx + 1, r->pts[i].system, load, line);
	}
}

/* --strict: the first trial with a failed self-check ends the run. */
static int strict_failed(const struct run *r, const json_t *checks, const struct point *pt, char *err,
			 size_t errlen)
{
	char flags[256], load[400];
	if (!r->o->strict || !checks_flagged(checks, flags, sizeof flags))
		return 0;
	point_label(load, sizeof load, &r->rc, pt);
	snprintf(err, errlen, "--strict: system=%s %s failed its self-checks: %s (run.json has the values)",
		 pt->system, load, flags);
	json_object_set_new(r->runj, "status", json_string("failed-checks"));
	return 1;
}

static void record_error(struct run *r, const struct prun *pr, const char *status)
{
	json_t *e = json_object();
	const struct proc *p = pr->culprit;

	json_object_set_new(e, "message", json_string(pr->err));
	json_object_set_new(e, "point", json_integer(pr->pt->idx));
	json_object_set_new(e, "system", json_string(pr->pt->system));
	if (pr->pt->outstanding > 0)
		json_object_set_new(e, "outstanding", json_integer(pr->pt->outstanding));
	else
		json_object_set_new(e, "offered_ops", json_real(pr->pt->offered_ops));
	json_object_set_new(e, "host", p ? json_string(p->host) : json_null());
	json_object_set_new(e, "role", p ? json_string(p->role) : json_null());
	json_object_set_new(e, "rank", p ? json_integer(p->rank) : json_null());
	/* the launcher lost that host (it no longer answers ssh or Slurm) */
	json_object_set_new(e, "host_lost", json_boolean(p && prun_host_lost(pr, p->host)));
	json_object_set_new(r->runj, "error", e);
	json_object_set_new(r->runj, "status", json_string(status));
}

/*
 * The config with its --set overrides into r->rc; with --loads-from, BASE's
 * loads appended as one more override and BASE checked to be a run of the
 * same experiment (loadsfrom.h).  0, or -1 with err.
 */
static int load_config(struct run *r, char *err, size_t errlen)
{
	const struct run_opts *o = r->o;
	char *set = NULL;

	if (!o->loads_from)
		return runconf_load_sets(o->config, o->sets, o->nsets, &r->rc, err, errlen);
	r->loads_from = loadsfrom_read(o->loads_from, o->sets, o->nsets, &set, err, errlen);
	if (!r->loads_from)
		return -1;
	const char **sets = calloc(o->nsets + 1, sizeof *sets);
	int ret = -1;
	if (!sets) {
		snprintf(err, errlen, "out of memory");
	} else {
		for (size_t i = 0; i < o->nsets; i++)
			sets[i] = o->sets[i];
		sets[o->nsets] = set;
		ret = runconf_load_sets(o->config, sets, o->nsets + 1, &r->rc, err, errlen);
		if (ret == 0 && loadsfrom_check(r->loads_from, r->rc.root, o->loads_from, o->config, err,
						 errlen) < 0) {
			runconf_free(&r->rc);
			ret = -1;
		}
	}
	free(sets);
	free(set);
	return ret;
}

int run_experiment(const struct run_opts *o, char *run_dir, size_t run_dir_len,
		   char *err, size_t errlen)
{
	struct run *r = calloc(1, sizeof *r);
	struct sigaction sa, old_int, old_term, old_hup;
	char stamp[32], path[PATH_MAX + 32], src[PATH_MAX + 8];
	time_t now = time(NULL);
	struct tm tm;
	int rc = OQB_EXIT_USAGE;
	uint64_t t0;

	if (run_dir_len)
		run_dir[0] = '\0';
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return OQB_EXIT_ERROR;
	}
	r->o = o;
	if (load_config(r, err, errlen) < 0) {
		json_decref(r->loads_from);
		free(r);
		return OQB_EXIT_USAGE;
	}
	r->npts = runconf_plan(&r->rc, r->pts, MAX_POINTS);
	snprintf(r->bin, sizeof r->bin, "%s", r->rc.bin_dir ? r->rc.bin_dir : self_bin_dir());
	if (strcmp(r->rc.launcher, "local") == 0) {
		const char *progs[] = { "oqb-server", "oqb-client" };
		for (int i = 0; i < 2; i++) {
			snprintf(path, sizeof path, "%s/%s", r->bin, progs[i]);
			if (access(path, X_OK) != 0) {
				snprintf(err, errlen, "%s: %s (build it with make, or set hosts.bin_dir)", path,
					 strerror(errno));
				goto out;
			}
		}
	}
	if (launch_open(&r->l, r->rc.launcher, r->rc.ssh, err, errlen) < 0)
		goto out;
	r->launcher_open = 1;
	/* The binaries' build, asked of them on their hosts; a dry run starts
	 * nothing elsewhere, so it asks only on this host. */
	if (!o->dry_run || strcmp(r->rc.launcher, "local") == 0) {
		int no_answer;
		r->build = binbuild_run(&r->l, &r->rc, r->bin, o->expect_build, o->expect_from, &no_answer, err,
					errlen);
		if (!r->build) {
			if (no_answer)
				rc = OQB_EXIT_ERROR;   /* a host or its launcher failed */
			goto out;
		}
	}
	if (o->dry_run) {
		rc = dry_run(r);
		goto out;
	}

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	if (o->out) {
		snprintf(r->dir, sizeof r->dir, "%s", o->out);
	} else {
		snprintf(r->dir, sizeof r->dir, "results/%s-%s", r->rc.name, stamp);
	}
	snprintf(path, sizeof path, "%s/run.json", r->dir);
	if (access(path, F_OK) == 0) {
		snprintf(err, errlen, "%s already exists: the output directory holds an earlier run; "
			 "choose another --out or remove it", path);
		goto out;
	}
	if (run_mkdirs(r->dir, err, errlen) < 0)
		goto out;
	if (run_dir_len)
		snprintf(run_dir, run_dir_len, "%s", r->dir);
	{
		const char *slash = strrchr(r->dir, '/');
		snprintf(r->run_id, sizeof r->run_id, "%s", slash && slash[1] ? slash + 1 : r->dir);
	}
	/* The checkout this oqb was built from: bin/.. */
	snprintf(src, sizeof src, "%s/..", self_bin_dir());
	r->runj = runjson_new(&r->rc, r->run_id, src);
	runjson_set_build(r->runj, &r->rc, r->build);
	add_overrides(r->runj, r->rc.overrides);
	snprintf(path, sizeof path, "%s/processes.tsv", r->dir);
	r->tsv = fopen(path, "w");
	if (!r->tsv) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		goto out;
	}
	fprintf(r->tsv, "point\tsystem\trole\trank\thost\tpid\tlog\n");
	fflush(r->tsv);
	if (result_write(r->runj, r->dir, r->o->pretty, err, errlen) < 0)
		goto out;

	/* Ctrl-C and friends stop the run in order instead of killing it. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	signal(SIGPIPE, SIG_IGN);

	rc = 0;
	t0 = now_ms();
	if (r->rc.knee.on && find_knee(r, err, errlen) < 0)
		rc = OQB_EXIT_ERROR;
	else if (r->rc.arrival == ARRIVAL_POISSON && !r->rc.knee.on) {
		json_t *knee = knee_json_fixed(r->rc.loads, r->rc.nloads);
		if (r->loads_from)
			json_object_set_new(knee, "loads_from", loadsfrom_json(r->loads_from, o->loads_from));
		json_object_set_new(r->runj, "knee", knee);
	}
	if (rc == 0 && plan_order(r) < 0) {
		snprintf(err, errlen, "out of memory planning %zu trials", r->ntrials);
		rc = OQB_EXIT_ERROR;
	}
	uint64_t last_write = now_ms();
	/* Reruns help against a passing disturbance (trials.h: when they stop
	 * and resume).  rerun_budget bounds those of the whole run, so a host
	 * that disturbs many trials costs a known share of time. */
	struct rerun_policy rp;
	rerun_init(&rp, r->rc.rerun_disturbed,
		   r->rc.rerun_budget < 0 ? -1 : (long long)(r->rc.rerun_budget * (double)r->ntrials));
	for (size_t k = 0; rc == 0 && k < r->ntrials; k++) {
		struct prun pr;
		struct point pt = r->pts[r->order[k].point];
		pt.trial = r->order[k].trial;
		size_t i = r->order[k].point;
		int stray_rerun = 0;
again:;
		json_t *pj = run_trial(r, &pr, &pt);

		if (pr.warn[0])
			fprintf(stderr, "oqb: warning: %s\n", pr.warn);
		if (!pj) {
			char load[400];
			point_label(load, sizeof load, &r->rc, &pt);
			record_error(r, &pr, run_signal ? "interrupted" : "failed");
			snprintf(err, errlen, "point %zu/%zu (system=%s %s%s): %s", i + 1, r->npts,
				 pt.system, load, r->rc.repeat > 1 ? ", a trial" : "", pr.err);
			prun_free(&pr);
			rc = OQB_EXIT_ERROR;
			break;
		}
		/* A trial whose spinning thread lost its CPU measured the
		 * machine's scheduler, not the system: run it again (same
		 * seed, its own directory) and keep it aside, with why. */
		const char *still = trial_disturbed(pr.checks), *reason = "disturbed";
		/* One machine condition per point: a trial on another floor
		 * of the machine than its point's other trials is run again
		 * the same way, within the same budget (trials.h). */
		char rbuf[400];
		if (!still && (still = regime_off(r, i, pr.canary_ns, rbuf, sizeof rbuf)))
			reason = "canary_regime";
		enum rerun_event ev;
		const char *why = rerun_decide(&rp, pt.rerun, still != NULL, &ev) ? still : NULL;
		rerun_event(r, &rp, ev, k, still);
		if (why) {
			set_aside(r, i, trials_entry(pj, pt.trial, k, pr.canary_ns, pr.checks), why, reason);
			if (!r->o->quiet)
				fprintf(stderr, "oqb: trial %u of point %zu (%s) %s: %s; running it again (%u/%lld)\n",
					pt.trial + 1, i + 1, pt.system, strcmp(reason, "disturbed") ? "set aside" :
					"disturbed", why, pt.rerun + 1, rp.per_trial);
			json_decref(pj);
			prun_free(&pr);
			pt.rerun++;
			goto again;
		}
		progress(r, &pt, pj, pr.checks, (double)(now_ms() - t0) / 1000, k + 1);
		if (strict_failed(r, pr.checks, &pt, err, errlen))
			rc = OQB_EXIT_FAIL;
		if (!r->entries[i])
			r->entries[i] = json_array();
		json_t *kept = trials_entry(pj, pt.trial, k, pr.canary_ns, pr.checks);
		if (stray_rerun)
			json_object_set_new(kept, "regime_rerun", json_true());
		json_array_append_new(r->entries[i], kept);
		if (!r->pj0[i])
			r->pj0[i] = json_incref(pj);
		json_decref(pj);
		prun_free(&pr);
		/* A trial kept before its point's floor was known (the run's
		 * first trials, judged with fewer than 3 canaries) that the
		 * point's later trials show to be on another floor: set it
		 * aside and run that trial again, within the same budget. */
		if (set_aside_stray(r, i, k, &rp, &pt)) {
			stray_rerun = 1;
			goto again;
		}
		/* run.json after every trial, but at most every 5 s (it holds every
		 * trial's histograms), and always after the last */
		if (k + 1 == r->ntrials || now_ms() - last_write >= 5000) {
			if (rebuild_points(r, err, errlen) < 0 || result_write(r->runj, r->dir, r->o->pretty, err, errlen) < 0) {
				rc = OQB_EXIT_ERROR;
				break;
			}
			last_write = now_ms();
		}
	}
	{
		char e3[512];
		rebuild_points(r, e3, sizeof e3);   /* the trials of a run that stopped early */
	}
	if (!r->o->quiet)
		regime_report(r);
	if (rc == 0 && r->rc.knee.on)
		knee_after_sweep(r->runj, r->o->quiet ? NULL : stderr);
	/* the result in one sentence, from the trials (finding.h) */
	json_object_set_new(r->runj, "finding", finding_of_run(r->runj));
	if (rc == 0)
		json_object_set_new(r->runj, "status", json_string("ok"));
	{
		char e2[512];
		if (result_write(r->runj, r->dir, r->o->pretty, e2, sizeof e2) < 0 && rc == 0) {
			snprintf(err, errlen, "%s", e2);
			rc = OQB_EXIT_ERROR;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
out:
	if (r->tsv)
		fclose(r->tsv);
	if (r->launcher_open)
		launch_close(&r->l);
	json_decref(r->runj);
	json_decref(r->build);
	json_decref(r->loads_from);
	for (size_t i = 0; i < r->npts; i++) {
		json_decref(r->pj0[i]);
		json_decref(r->entries[i]);
		json_decref(r->discarded[i]);
		json_decref(r->built[i]);
	}
	free(r->order);
	free(r->canaries);
	runconf_free(&r->rc);
	free(r);
	return rc;
}
