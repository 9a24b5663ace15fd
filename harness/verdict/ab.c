/*
 * ab.c - `oqb ab`: the A/B regression gate (ab.h).
 *
 * Each side's runs are ordinary `oqb run` runs with one trial per point
 * (repeat 1), its own binaries (hosts.bin_dir) and environment; round r
 * of both sides uses seed + 7919 r.  The rounds' single trials become the
 * trials of one combined run per side, which compare_eval judges.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ab.h"
#include "ab_seq.h"
#include "binbuild.h"
#include "clock.h"
#include "compare.h"
#include "exitcodes.h"
#include "opts.h"
#include "rng.h"
#include "run.h"
#include "runconf.h"
#include "result.h"
#include "runjson.h"
#include "stats.h"
#include "trials.h"
#include "launch.h"

#define AB_MAX_ROUNDS 200
#define AB_MAX_REGIME_RERUNS 50
#define AB_MAX_RUNS (AB_MAX_ROUNDS + AB_MAX_REGIME_RERUNS)
#define AB_MAX_ENV 32
#define FLOOR_REPS 5

/* The gate's verdicts are exit statuses of the one table (exitcodes.h). */
enum {
	AB_SAME = OQB_EXIT_OK, AB_REGRESSION = OQB_EXIT_FAIL, AB_USAGE = OQB_EXIT_USAGE,
	AB_INCONCLUSIVE = OQB_EXIT_INCONCLUSIVE, AB_NOISY = OQB_EXIT_NOISY, AB_RUNFAIL = OQB_EXIT_ERROR
};
static const char *const verdict_word[OQB_EXIT_COUNT] = {
	[AB_SAME] = "no regression", [AB_REGRESSION] = "REGRESSION", [AB_INCONCLUSIVE] = "inconclusive",
	[AB_NOISY] = "too noisy to judge",
};

/* The verdict's word, or NULL when there is none (bad input, a run failed). */
static const char *verdict_of(int v)
{
	return v >= 0 && v < OQB_EXIT_COUNT ? verdict_word[v] : NULL;
}

struct ab_cli {
	const char *config;
	struct opt_list sets, base_env, new_env;
	const char *base, *new_, *out;
	int trials, max_trials, correction, quiet, noise_retries, regime_reruns, tail;
	double tolerance, tolerance_p99, tolerance_tagged, alpha, noise_limit, canary_drift, noise_wait_s, regime_factor;
	long long seed;
};

static const char *const corrections[] = { "bh", "holm", "none", NULL };
static const char *const tails[] = { "system", "raw", NULL };

#define O(f) offsetof(struct ab_cli, f)
static const struct opt ab_tab[] = {
	{ "CONFIG", OPT_ARG, O(config), NULL, 0, 0, NULL, "the experiment's config file, run by both sides" },
	{ "base", OPT_STR, O(base), NULL, 0, 0, NULL, "BINDIR: directory of BASE's built binaries (oqb-server, oqb-client, oqb-floor)" },
	{ "new", OPT_STR, O(new_), NULL, 0, 0, NULL, "BINDIR: directory of NEW's built binaries" },
	{ "out", OPT_STR, O(out), NULL, 0, 0, NULL, "output directory (default results/ab-NAME-UTCSTAMP)" },
	{ "trials", OPT_INT, O(trials), "5", 2, AB_MAX_ROUNDS, NULL, "rounds before the first verdict (each runs every point once per side)" },
	{ "max-trials", OPT_INT, O(max_trials), "10", 2, AB_MAX_ROUNDS, NULL,
	  "rounds at most (the round budget), adding one at a time while a gated metric is undecided; the looks' "
	  "alpha spending is spread over it (docs/ci.md)" },
	{ "tolerance", OPT_DBL, O(tolerance), "5", 0, 1000, NULL, "percent p50 or throughput may move before the move can count" },
	{ "tolerance-p99", OPT_DBL, O(tolerance_p99), "25", 0, 1000, NULL, "the same for p99 (as oqb compare's)" },
	{ "tolerance-tagged", OPT_DBL, O(tolerance_tagged), "1", 0, 100, NULL,
	  "percentage points the share of requests host stalls tagged may move before the move is reported" },
	{ "tail", OPT_ENUM, O(tail), "system", 0, 0, tails,
	  "system (judge the percentiles of the requests no host stall tagged; the raw ones beside) or raw (every request's)" },
	{ "alpha", OPT_DBL, O(alpha), "0.05", 1e-9, 0.5, NULL,
	  "the gate's false-alarm rate over all its looks, points and metrics (alpha spending, then each look's correction)" },
	{ "correction", OPT_ENUM, O(correction), "holm", 0, 0, corrections,
	  "each look's correction: holm (family-wise: the false-alarm rate holds), bh (Benjamini-Hochberg) or none" },
	{ "noise-limit", OPT_DBL, O(noise_limit), "1.5", 1, 1e9, NULL,
	  "too noisy when the canary's readings before the gate spread by more than this factor (a move between before and after is noted)" },
	{ "noise-retries", OPT_INT, O(noise_retries), "2", 0, 20, NULL,
	  "when the canary before the gate spreads too far, wait and measure it again this many times before giving up" },
	{ "noise-wait-s", OPT_DBL, O(noise_wait_s), "10", 0, 3600, NULL, "seconds to wait before each such retry" },
	{ "canary-drift", OPT_DBL, O(canary_drift), "1.5", 1, 1000, NULL, "as oqb compare's" },
	{ "regime-factor", OPT_DBL, O(regime_factor), "2", 0, 1000, NULL,
	  "a round whose canary (either side's median) is this factor or more off the gate's regime is set aside and run again, as the config's canary_regime_factor (0: off)" },
	{ "regime-reruns", OPT_INT, O(regime_reruns), "4", 0, AB_MAX_REGIME_RERUNS, NULL,
	  "rounds set aside for their canary regime at most; beyond, every round is kept and the regimes mix (compare's canary strata then judge them)" },
	{ "seed", OPT_U64, O(seed), "1", 0, 0, NULL, "seed of the rounds' order (the config's seed drives the schedules)" },
	{ "set", OPT_LIST, O(sets), NULL, 0, 0, NULL,
	  "KEY=JSON: override a config key for both sides, as for oqb run" },
	{ "base-env", OPT_LIST, O(base_env), NULL, 0, AB_MAX_ENV, NULL,
	  "NAME=VALUE: an environment variable for BASE's processes, e.g. OQB_FAULT=server-delay-ns:400" },
	{ "new-env", OPT_LIST, O(new_env), NULL, 0, AB_MAX_ENV, NULL,
	  "NAME=VALUE: an environment variable for NEW's processes" },
	{ "quiet", OPT_BOOL, O(quiet), NULL, 0, 0, NULL, "no progress lines" },
	{ NULL, .help = "A/B regression gate: BASE and NEW binaries in shuffled rounds on the same hosts (docs/ci.md)" },
};
#undef O

const struct opts_cmd ab_cmd = {
	"oqb ab", ab_tab,
	OQB_EXITS_BASE | OQB_EXITS(OQB_EXIT_FAIL) | OQB_EXITS(OQB_EXIT_INCONCLUSIVE) | OQB_EXITS(OQB_EXIT_NOISY) |
		OQB_EXITS(OQB_EXIT_ERROR),
};

struct side {
	const char *name;          /* "base" | "new" */
	char bin[PATH_MAX];
	const char *env[AB_MAX_ENV];
	size_t nenv;
	json_t *runs[AB_MAX_RUNS];
	double canary[AB_MAX_RUNS];   /* the median canary of each round's run, or -1 */
	char build_id[64];         /* what BINDIR/oqb-server --build-info says: every process must be it */
	char build_from[PATH_MAX + 40];
};

struct ab {
	struct ab_cli c;
	const char *config;
	const char **sets;
	size_t nsets;
	char dir[PATH_MAX];
	struct side side[2];
	json_t *order;             /* [[round, "base"|"new"], ...] */
	unsigned rounds;           /* rounds run, set-aside ones included */
	struct rng rng;
	/* the gate's canary regime (trials.h): which rounds are kept */
	unsigned kept[AB_MAX_RUNS];
	unsigned nkept;
	double regime_ns;          /* the regime's canary, or -1 */
	int mixed;                 /* more rounds off it than --regime-reruns: all kept */
	/* the hosts the config tests, where the canary is measured */
	struct runconf rc;         /* the config as the gate runs it (its hosts, launcher) */
	int rc_loaded;
	struct launcher l;
	int l_open;
	const char *floor_hosts[RUNCONF_MAX_HOSTS];   /* distinct, the server's first */
	size_t nfloor_hosts;
};

/* What oqb-floor prints (bench/, not run.json): its round trip's median
 * in ns (NaN without) and its rounds. */
#define FLOOR_OUT_RTT "rtt_ns"
#define FLOOR_OUT_MEDIAN "p50"
static double floor_rtt(const json_t *out, int *rounds)
{
	const json_t *m = json_object_get(json_object_get(out, FLOOR_OUT_RTT), FLOOR_OUT_MEDIAN);
	*rounds = (int)json_integer_value(json_object_get(out, "rounds"));
	return json_is_number(m) ? json_number_value(m) : NAN;
}

/* The noise check's own keys (ab.json's "noise", built by floor_json). */
#define FLOOR_SPREAD "spread"

/* One host's canary: oqb-floor's p50, FLOOR_REPS times, started on host
 * through the config's launcher from BASE's BINDIR (the same path on every
 * host, as the runs use it). */
static int floor_host(struct ab *a, const char *host, double *v, char *err, size_t errlen)
{
	char prog[PATH_MAX + 16], out[4096], lerr[512];
	snprintf(prog, sizeof prog, "%s/oqb-floor", a->side[0].bin);
	char *argv[] = { prog, "--max-ms", "300", "20000", NULL };
	char **w = a->l.ops->wrap(&a->l, host, NULL, argv, lerr, sizeof lerr);
	if (!w) {
		snprintf(err, errlen, "%s on %s (launcher %s): %s", prog, host, a->l.ops->name, lerr);
		return -1;
	}
	int rcode = 0;
	for (int i = 0; i < FLOOR_REPS && rcode == 0; i++) {
		const char *brace;
		json_t *j = NULL;
		if (launch_capture(w, 30000, out, sizeof out) != 0) {
			snprintf(err, errlen, "%s on %s (launcher %s) failed: %.200s", prog, host, a->l.ops->name, out);
			rcode = -1;
			break;
		}
		brace = strchr(out, '{');   /* a launcher may print its notes first */
		if (brace)
			j = json_loads(brace, JSON_DISABLE_EOF_CHECK, NULL);
		int rounds;
		v[i] = floor_rtt(j, &rounds);
		json_decref(j);
		if (!(v[i] > 0) && rounds > 0)
			v[i] = 300e6;   /* not one round trip measured in 300 ms: the machine is that busy */
		if (!(v[i] > 0)) {
			snprintf(err, errlen, "%s on %s printed no rtt_ns.p50: %.200s", prog, host, out);
			rcode = -1;
		}
	}
	launch_argv_free(w);
	return rcode;
}

static json_t *floor_json(const double *v);

/*
 * The noise check's canary on every host the config tests (the server's
 * first; a busy client host disturbs a gate as much as a busy server).
 * v: the server host's readings, the gate's reference; *hosts (new, may be
 * NULL): one floor_json per host with its "host"; *worst: the largest
 * spread of any host, *worst_host that host.
 */
static int floor_check(struct ab *a, double *v, json_t **hosts, double *worst, const char **worst_host, char *err,
		       size_t errlen)
{
	double hv[FLOOR_REPS];
	json_t *hj = json_array();
	*worst = 0;
	*worst_host = a->nfloor_hosts ? a->floor_hosts[0] : "";
	for (size_t h = 0; h < a->nfloor_hosts; h++) {
		if (floor_host(a, a->floor_hosts[h], h ? hv : v, err, errlen) < 0) {
			json_decref(hj);
			return -1;
		}
		json_t *f = floor_json(h ? hv : v);
		double sp = json_number_value(json_object_get(f, FLOOR_SPREAD));
		if (sp > *worst) {
			*worst = sp;
			*worst_host = a->floor_hosts[h];
		}
		json_object_set_new(f, "host", json_string(a->floor_hosts[h]));
		json_array_append_new(hj, f);
	}
	if (hosts)
		*hosts = hj;
	else
		json_decref(hj);
	return 0;
}

/* The hosts of rc the canary is measured on: the server's, then each
 * client host not seen before. */
static void floor_hosts_of(struct ab *a, const struct runconf *rc)
{
	a->nfloor_hosts = 0;
	a->floor_hosts[a->nfloor_hosts++] = rc->server_host;
	for (size_t i = 0; i < rc->nclient_hosts; i++) {
		int seen = 0;
		for (size_t k = 0; k < a->nfloor_hosts; k++)
			seen |= strcmp(a->floor_hosts[k], rc->client_hosts[i]) == 0;
		if (!seen && a->nfloor_hosts < RUNCONF_MAX_HOSTS)
			a->floor_hosts[a->nfloor_hosts++] = rc->client_hosts[i];
	}
}

static double median5(const double *v)
{
	return stats_median(v, FLOOR_REPS);
}

static json_t *floor_json(const double *v)
{
	json_t *a = json_array();
	double lo = v[0], hi = v[0];
	for (int i = 0; i < FLOOR_REPS; i++) {
		json_array_append_new(a, json_real(v[i]));
		lo = fmin(lo, v[i]);
		hi = fmax(hi, v[i]);
	}
	return json_pack("{s:o,s:f,s:f}", "p50_ns", a, "median_ns", median5(v), FLOOR_SPREAD, hi / lo);
}

/* The NAME of "NAME=VALUE" into buf. */
static const char *env_name(const char *kv, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)(strchr(kv, '=') - kv), kv);
	return buf;
}

/* Sets a side's NAME=VALUE pairs, remembering what was there; env_undo
 * puts it back. */
static void env_apply(const struct side *s, char **saved)
{
	char name[256];
	for (size_t i = 0; i < s->nenv; i++) {
		const char *old = getenv(env_name(s->env[i], name, sizeof name));
		saved[i] = old ? strdup(old) : NULL;
		setenv(name, strchr(s->env[i], '=') + 1, 1);
	}
}

static void env_undo(const struct side *s, char **saved)
{
	char name[256];
	for (size_t i = 0; i < s->nenv; i++) {
		env_name(s->env[i], name, sizeof name);
		if (saved[i])
			setenv(name, saved[i], 1);
		else
			unsetenv(name);
		free(saved[i]);
	}
}

/* The median canary of one side's run of a round, or -1. */
static double run_canary(const json_t *run)
{
	double v[RUNCONF_MAX_POINTS];
	size_t n = 0, i, cnt;
	const json_t *p;
	json_array_foreach(result_points(run), i, p) {
		double c = result_canary_ns(json_array_get(result_trials(p), 0));
		if (c > 0 && n < RUNCONF_MAX_POINTS)
			v[n++] = c;
	}
	return regime_mode(v, n, 0, -1, &cnt);
}

/* One run of one side in round r. */
static int run_side(struct ab *a, int si, unsigned r, char *err, size_t errlen)
{
	struct side *s = &a->side[si];
	const char **sets = calloc(a->nsets + 4, sizeof *sets);
	char seed[64], bin[PATH_MAX + 32], dir[PATH_MAX + 64], rundir[PATH_MAX], path[PATH_MAX + 96];
	char *saved[AB_MAX_ENV];
	struct runconf rc;

	if (!sets) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* the config's own seed, moved per round */
	if (runconf_load_sets(a->config, a->sets, a->nsets, &rc, err, errlen) < 0) {
		free(sets);
		return -1;
	}
	snprintf(seed, sizeof seed, "seed=%lld", rc.seed + 7919ll * r);
	runconf_free(&rc);
	memcpy(sets, a->sets, a->nsets * sizeof *sets);
	snprintf(bin, sizeof bin, "hosts.bin_dir=\"%s\"", s->bin);
	sets[a->nsets] = "repeat=1";
	sets[a->nsets + 1] = seed;
	sets[a->nsets + 2] = bin;
	snprintf(dir, sizeof dir, "%s/r%02u-%s", a->dir, r + 1, s->name);
	struct run_opts o = { .config = a->config, .out = dir, .quiet = 1, .sets = sets, .nsets = a->nsets + 3,
			      .expect_build = s->build_id, .expect_from = s->build_from };
	env_apply(s, saved);
	int rc2 = run_experiment(&o, rundir, sizeof rundir, err, errlen);
	env_undo(s, saved);
	free(sets);
	if (rc2 != 0)
		return -1;
	snprintf(path, sizeof path, "%s/run.json", dir);
	s->runs[r] = result_load(path, err, errlen);
	s->canary[r] = s->runs[r] ? run_canary(s->runs[r]) : -1;
	return s->runs[r] ? 0 : -1;
}

/*
 * The gate's canary regime, from every round run so far (both sides'
 * median canaries) and the canary before the gate (which breaks a tie):
 * the regime most of them share (trials.h).  A round either of whose
 * sides is off it is set aside, up to --regime-reruns rounds; with more
 * off it, the machine did not stay long enough on one floor and every
 * round is kept (a->mixed).  Sets a->kept, a->nkept, a->regime_ns.
 */
static void gate_regime(struct ab *a, double before)
{
	double v[2 * AB_MAX_RUNS + 1];
	size_t n = 0, cnt;
	unsigned nout = 0;
	if (before > 0)
		v[n++] = before;
	for (unsigned r = 0; r < a->rounds; r++)
		for (int k = 0; k < 2; k++)
			if (a->side[k].canary[r] > 0)
				v[n++] = a->side[k].canary[r];
	a->regime_ns = a->c.regime_factor > 0 ? regime_mode(v, n, a->c.regime_factor, before, &cnt) : -1;
	a->nkept = 0;
	for (unsigned r = 0; r < a->rounds; r++) {
		int in = regime_same(a->side[0].canary[r], a->regime_ns, a->c.regime_factor) &&
			 regime_same(a->side[1].canary[r], a->regime_ns, a->c.regime_factor);
		if (in)
			a->kept[a->nkept++] = r;
		else
			nout++;
	}
	a->mixed = nout > (unsigned)a->c.regime_reruns;
	if (a->mixed)
		for (unsigned r = a->nkept = 0; r < a->rounds; r++)
			a->kept[a->nkept++] = r;
}

/* One run per side whose points hold the kept rounds' trials (compare.h). */
static json_t *combine(const struct ab *a, const struct side *s, char *err, size_t errlen)
{
	json_t *c = json_deep_copy(s->runs[a->kept[0]]), *p;
	size_t i;
	json_array_foreach(result_points(c), i, p) {
		json_t *trials = json_array();
		double can[AB_MAX_RUNS];
		size_t ncan = 0;
		for (unsigned k = 0; k < a->nkept; k++) {
			unsigned r = a->kept[k];
			const json_t *q = json_array_get(result_points(s->runs[r]), i);
			double oq = q ? result_offered(q) : NAN, op = result_offered(p);
			if (!q || !result_system(q) || !result_system(p) || strcmp(result_system(q), result_system(p)) ||
			    !(oq == op || (isnan(oq) && isnan(op)))) {
				snprintf(err, errlen, "%s round %u: point %zu is not the first kept round's (a config "
					 "that plans differently per run?)", s->name, r + 1, i + 1);
				json_decref(trials);
				json_decref(c);
				return NULL;
			}
			json_t *t = json_deep_copy(json_array_get(result_trials(q), 0));
			json_object_set_new(t, "round", json_integer(r + 1));
			if (!isnan(result_canary_ns(t)))
				can[ncan++] = result_canary_ns(t);
			json_array_append_new(trials, t);
		}
		json_object_set_new(p, "trials", trials);
		if (ncan)   /* the one median (lib/stats.h), as compare and run take it */
			json_object_set_new(p, "canary_ns", json_real(stats_median_inplace(can, ncan)));
	}
	return c;
}

/*
 * ab.json's "regime": the gate's canary regime, the rounds kept and those
 * set aside (each with its two sides' canaries), whether the regimes mix,
 * and where the canaries before and after the gate sat.
 */
static json_t *regime_json(const struct ab *a, double before, const json_t *after)
{
	json_t *kept = json_array(), *aside = json_array();
	unsigned k = 0;
	char note[600] = "";
	for (unsigned r = 0; r < a->rounds; r++) {
		if (k < a->nkept && a->kept[k] == r) {
			json_array_append_new(kept, json_integer(r + 1));
			k++;
			continue;
		}
		json_array_append_new(aside, json_pack("{s:i,s:f,s:f,s:s}", "round", (int)r + 1, "base_canary_ns",
						       a->side[0].canary[r], "new_canary_ns", a->side[1].canary[r],
						       "reason", "canary regime"));
	}
	double aft = json_number_value(json_object_get(after, "median_ns"));
	if (a->mixed)
		snprintf(note, sizeof note, "more than %d round(s) ran on another floor of the machine than the gate's "
			 "%.0f ns (--regime-reruns): every round is kept, and compare's canary strata judge them",
			 a->c.regime_reruns, a->regime_ns);
	else if (json_array_size(aside))
		snprintf(note, sizeof note, "%zu round(s) ran on another floor of the machine than the gate's %.0f ns "
			 "and were set aside and run again: %s", json_array_size(aside), a->regime_ns, "see regime.rounds_set_aside");
	json_t *j = json_pack("{s:f,s:f,s:o,s:o,s:b,s:b,s:o}", "factor", a->c.regime_factor, "median_ns", a->regime_ns,
			      "rounds_kept", kept, "rounds_set_aside", aside, "mixed", a->mixed, "before_in_regime",
			      regime_same(before, a->regime_ns, a->c.regime_factor), "after_in_regime",
			      aft > 0 ? json_boolean(regime_same(aft, a->regime_ns, a->c.regime_factor)) : json_null());
	if (note[0])
		json_object_set_new(j, "note", json_string(note));
	return j;
}

static void xml_escape(FILE *f, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
				fputc(*s, f);
		}
}

static int write_junit(const struct ab *a, const json_t *doc, int verdict, const json_t *noise, double secs)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/junit.xml", a->dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	const json_t *pts = compare_rows(doc), *p;
	size_t i, nfail = 0, nskip = 0;
	json_array_foreach(pts, i, p) {
		const char *v = json_string_value(json_object_get(p, "verdict"));
		nfail += !strcmp(v, "regression");
		nskip += !strcmp(v, "inconclusive") || !strcmp(v, "unmatched");
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"oqb ab ");
	xml_escape(f, a->config);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\" errors=\"%d\" time=\"%.1f\">\n",
		json_array_size(pts) + 1, nfail + (verdict == AB_NOISY), nskip, 0, secs);
	fprintf(f, "  <testcase classname=\"oqb.ab\" name=\"environment\">");
	if (verdict == AB_NOISY) {
		fprintf(f, "<failure message=\"too noisy to judge\">");
		xml_escape(f, json_string_value(json_object_get(noise, "note")));
		fprintf(f, "</failure>");
	} else if (json_is_string(json_object_get(noise, "note"))) {
		fprintf(f, "<system-out>");
		xml_escape(f, json_string_value(json_object_get(noise, "note")));
		fprintf(f, "</system-out>");
	}
	fprintf(f, "</testcase>\n");
	json_array_foreach(pts, i, p) {
		const char *v = json_string_value(json_object_get(p, "verdict"));
		fprintf(f, "  <testcase classname=\"oqb.ab.");
		xml_escape(f, json_string_value(json_object_get(p, "system")));
		fprintf(f, "\" name=\"load ");
		xml_escape(f, json_string_value(json_object_get(p, "load")));
		fprintf(f, "\">");
		const char *d = json_string_value(json_object_get(p, "detail"));
		if (!strcmp(v, "regression")) {
			fprintf(f, "<failure message=\"");
			xml_escape(f, d ? d : v);
			fprintf(f, "\"/>");
		} else if (!strcmp(v, "inconclusive") || !strcmp(v, "unmatched")) {
			fprintf(f, "<skipped message=\"");
			xml_escape(f, d);
			fprintf(f, "\"/>");
		}
		fprintf(f, "</testcase>\n");
	}
	fprintf(f, "</testsuite>\n");
	return fclose(f);
}

static int write_markdown(const struct ab *a, const json_t *doc, int verdict, const json_t *noise)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/summary.md", a->dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	const json_t *sum = compare_summary(doc), *p;
	size_t i;
	fprintf(f, "### oqb ab: %s\n\n", verdict_of(verdict));
	fprintf(f, "`%s`: base `%s`, new `%s`; %u rounds in shuffled order (RMIT); tolerance %g %% (p99 %g %%), "
		"%s. Canary before %.0f ns, after %.0f ns.\n\n", a->config, a->side[0].bin,
		a->side[1].bin, a->rounds, a->c.tolerance, a->c.tolerance_p99,
		doc ? json_string_value(json_object_get(sum, "how")) : "no comparison",
		json_number_value(json_object_get(json_object_get(noise, "before"), "median_ns")),
		json_number_value(json_object_get(json_object_get(noise, "after"), "median_ns")));
	const json_t *hosts = json_object_get(json_object_get(noise, "before"), "hosts"), *h;
	if (json_array_size(hosts) > 1) {
		fprintf(f, "Canary before, on each tested host:");
		json_array_foreach(hosts, i, h)
			fprintf(f, "%s %s %.0f ns (spread x%.2f)", i ? "," : "", json_string_value(json_object_get(h, "host")),
				json_number_value(json_object_get(h, "median_ns")),
				json_number_value(json_object_get(h, FLOOR_SPREAD)));
		fprintf(f, ".\n\n");
	}
	if (json_is_string(json_object_get(noise, "note")))
		fprintf(f, "**%s**\n\n", json_string_value(json_object_get(noise, "note")));
	if (a->nkept < a->rounds || a->mixed) {
		fprintf(f, "Canary regime: the gate's rounds ran at %.0f ns (--regime-factor %g); ", a->regime_ns,
			a->c.regime_factor);
		if (a->mixed)
			fprintf(f, "more than %d rounds ran on another floor, so all %u are kept.", a->c.regime_reruns,
				a->rounds);
		else {
			fprintf(f, "set aside and run again:");
			for (unsigned r = 0, k = 0; r < a->rounds; r++) {
				if (k < a->nkept && a->kept[k] == r) {
					k++;
					continue;
				}
				fprintf(f, " round %u (base %.0f ns, new %.0f ns)", r + 1, a->side[0].canary[r],
					a->side[1].canary[r]);
			}
			fputc('.', f);
		}
		fprintf(f, "\n\n");
	}
	if (doc) {
		fprintf(f, "| system | load | p50 base → new (rounds) | p99 base → new (rounds) | ops/s base → new (rounds) | verdict |\n"
			   "| --- | --- | --- | --- | --- | --- |\n");
		json_array_foreach(compare_rows(doc), i, p) {
			const json_t *m[3] = { compare_row_metric(p, COMPARE_P50), compare_row_metric(p, COMPARE_P99),
					       compare_row_metric(p, COMPARE_OPS) };
			fprintf(f, "| %s | %s |", json_string_value(json_object_get(p, "system")),
				json_string_value(json_object_get(p, "load")));
			for (int k = 0; k < 3; k++) {
				if (!m[k]) {
					fprintf(f, " - |");
					continue;
				}
				double b = json_number_value(json_object_get(m[k], "base"));
				double n = json_number_value(json_object_get(m[k], "new"));
				const json_t *ch = json_object_get(m[k], "change_pct");
				const json_t *rn = json_object_get(m[k], "rounds_needed");
				char r[32] = ", undecided";
				if (json_is_integer(rn))
					snprintf(r, sizeof r, ", %lld", (long long)json_integer_value(rn));
				if (k < 2)
					fprintf(f, " %.2f → %.2f µs (%+.1f %%%s) |", b / 1e3, n / 1e3, json_number_value(ch), r);
				else
					fprintf(f, " %.0f → %.0f (%+.1f %%%s) |", b, n, json_number_value(ch), r);
			}
			fprintf(f, " %s |\n", json_string_value(json_object_get(p, "detail")) ?: "missing");
		}
	}
	return fclose(f);
}

/* --base-env and --new-env into the sides, each checked to be NAME=VALUE. */
static int take_env(struct ab *a, char *err, size_t errlen)
{
	for (int k = 0; k < 2; k++) {
		const struct opt_list *l = k ? &a->c.new_env : &a->c.base_env;
		const char *o = k ? "--new-env" : "--base-env";
		struct side *s = &a->side[k];

		for (int i = 0; i < l->n; i++) {
			const char *v = l->v[i], *eq = strchr(v, '=');

			if (!eq || v[0] == '=' || eq - v >= 255) {
				snprintf(err, errlen, "%s %s: expected NAME=VALUE, e.g. %s OQB_FAULT=server-delay-ns:400",
					 o, v, o);
				return -1;
			}
			s->env[s->nenv++] = v;
		}
	}
	return 0;
}

static int check_bindir(const char *opt, const char *dir, char *out, size_t outlen, char *err, size_t errlen)
{
	static const char *const progs[] = { "oqb-server", "oqb-client", "oqb-floor" };
	char path[PATH_MAX + 32];
	if (!dir) {
		snprintf(err, errlen, "%s DIR is required: the bin/ of a build of that revision", opt);
		return -1;
	}
	if (!realpath(dir, out)) {
		snprintf(err, errlen, "%s %s: %s", opt, dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof path, "%s/%s", out, progs[i]);
		if (access(path, X_OK) != 0) {
			snprintf(err, errlen, "%s %s: no executable %s there (build that revision with make and give "
				 "its bin/)", opt, dir, progs[i]);
			return -1;
		}
	}
	(void)outlen;
	return 0;
}

/* Whether every host of rc runs, from each side's BINDIR, that side's build
 * (binbuild_run).  0, or -1 with err naming both ids. */
static int sides_check(struct ab *a, const struct runconf *rc, char *err, size_t errlen)
{
	struct launcher l;
	char e[8192];
	if (launch_open(&l, rc->launcher, rc->ssh, e, sizeof e) < 0) {
		snprintf(err, errlen, "hosts.launcher %s: %s", rc->launcher, e);
		return -1;
	}
	int rcode = 0;
	for (int k = 0; k < 2 && rcode == 0; k++) {
		json_t *b = binbuild_run(&l, rc, a->side[k].bin, a->side[k].build_id, a->side[k].build_from, NULL, e, sizeof e);
		if (!b) {
			snprintf(err, errlen, "%s (%s): %s", k ? "--new" : "--base", a->side[k].bin, e);
			rcode = -1;
		}
		json_decref(b);
	}
	launch_close(&l);
	return rcode;
}

/* The build of side s: its own BINDIR's oqb-server, asked (never the driver's). */
static int side_build(struct side *s, const char *opt, char *err, size_t errlen)
{
	char e[4096];
	json_t *b = binbuild_local(s->bin, e, sizeof e);
	if (!b) {
		snprintf(err, errlen, "%s %s: %s", opt, s->bin, e);
		return -1;
	}
	snprintf(s->build_id, sizeof s->build_id, "%s", binbuild_id(b));
	snprintf(s->build_from, sizeof s->build_from, "%s %s's oqb-server", opt, s->bin);
	json_decref(b);
	return 0;
}

int ab_main(int argc, char **argv)
{
	struct ab *a = calloc(1, sizeof *a);
	char err[20000];
	int verdict = AB_USAGE;
	json_t *doc = NULL, *bj = NULL, *nj = NULL, *noise = NULL;
	double pre[FLOOR_REPS], post[FLOOR_REPS];
	time_t t0 = time(NULL);
	struct ab_seq seq = { 0 };

	if (!a) {
		fprintf(stderr, "oqb ab: out of memory\n");
		goto out;
	}
	a->side[0].name = "base";
	a->side[1].name = "new";
	verdict = opts_command(&ab_cmd, &a->c, argc, argv);
	if (verdict != OPTS_GO)
		goto out;
	verdict = AB_USAGE;
	if (take_env(a, err, sizeof err) < 0) {
		fprintf(stderr, "oqb ab: %s\n", err);
		goto out;
	}
	a->sets = a->c.sets.v;
	a->nsets = (size_t)a->c.sets.n;
	a->config = a->c.config;
	if (a->c.max_trials < a->c.trials)
		a->c.max_trials = a->c.trials;
	if (check_bindir("--base", a->c.base, a->side[0].bin, sizeof a->side[0].bin, err, sizeof err) < 0 ||
	    check_bindir("--new", a->c.new_, a->side[1].bin, sizeof a->side[1].bin, err, sizeof err) < 0 ||
	    side_build(&a->side[0], "--base", err, sizeof err) < 0 || side_build(&a->side[1], "--new", err, sizeof err) < 0) {
		fprintf(stderr, "oqb ab: %s\n", err);
		goto out;
	}
	{
		if (runconf_load_sets(a->config, a->sets, a->nsets, &a->rc, err, sizeof err) < 0) {
			fprintf(stderr, "oqb ab: %s\n", err);
			goto out;
		}
		a->rc_loaded = 1;
		char stamp[32];
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
		if (a->c.out)
			snprintf(a->dir, sizeof a->dir, "%s", a->c.out);
		else
			snprintf(a->dir, sizeof a->dir, "results/ab-%s-%s", a->rc.name, stamp);
		/* each side's processes on their hosts are its BINDIR's build,
		 * checked before anything runs (each run checks again) */
		int bad = sides_check(a, &a->rc, err, sizeof err);
		if (bad) {
			fprintf(stderr, "oqb ab: %s\n", err);
			goto out;
		}
		/* the canary is measured on the tested hosts, through the
		 * launcher that starts the runs' processes there */
		char e[4096];
		if (launch_open(&a->l, a->rc.launcher, a->rc.ssh, e, sizeof e) < 0) {
			fprintf(stderr, "oqb ab: hosts.launcher %s: %s\n", a->rc.launcher, e);
			goto out;
		}
		a->l_open = 1;
		floor_hosts_of(a, &a->rc);
	}
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/ab.json", a->dir);
	if (access(path, F_OK) == 0) {
		fprintf(stderr, "oqb ab: %s exists: choose another --out or remove it\n", path);
		goto out;
	}
	if (!a->c.out)
		mkdir("results", 0755);
	if (mkdir(a->dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "oqb ab: cannot create %s: %s\n", a->dir, strerror(errno));
		goto out;
	}
	rng_seed(&a->rng, (uint64_t)a->c.seed);
	a->regime_ns = -1;
	a->order = json_array();

	/* Noise pre-check: the canary, FLOOR_REPS times.  The placement of a
	 * VM's vCPUs on the host can change for a while and change back, so a
	 * spread canary is measured again after a wait, noise_retries times,
	 * before the gate gives up; every attempt is kept. */
	json_t *attempts = json_array();
	double spread = 0;
	const char *noisy_host = "";
	noise = json_object();
	for (int k = 0; k <= a->c.noise_retries; k++) {
		if (k) {
			if (!a->c.quiet)
				fprintf(stderr, "oqb ab: the canary on %s spread by x%.2f (limit x%g); measuring it again "
					"in %g s (%d of %d)\n", noisy_host, spread, a->c.noise_limit, a->c.noise_wait_s, k,
					a->c.noise_retries);
			clock_sleep_until(clock_ns() + (uint64_t)(a->c.noise_wait_s * 1e9));
		}
		json_t *hosts = NULL;
		if (floor_check(a, pre, &hosts, &spread, &noisy_host, err, sizeof err) < 0) {
			fprintf(stderr, "oqb ab: noise pre-check: %s\n", err);
			json_decref(attempts);
			verdict = AB_RUNFAIL;
			goto out;
		}
		json_t *f = floor_json(pre);
		json_object_set_new(f, "host", json_string(a->floor_hosts[0]));
		json_object_set_new(f, "hosts", hosts);
		json_object_set_new(f, "worst_spread", json_real(spread));
		json_array_append(attempts, f);
		json_object_set_new(noise, "before", f);
		if (spread <= a->c.noise_limit)
			break;
	}
	json_object_set_new(noise, "before_attempts", attempts);
	if (spread > a->c.noise_limit) {
		snprintf(err, sizeof err, "the canary's readings before the gate spread by x%.2f on %s (limit x%g), in %d "
			 "attempt(s) %g s apart: the machine is too noisy to judge; nothing was run. Run the gate "
			 "when the machine is quieter, or give the canary longer to settle with --noise-retries "
			 "and --noise-wait-s", spread, noisy_host, a->c.noise_limit, a->c.noise_retries + 1,
			 a->c.noise_wait_s);
		json_object_set_new(noise, "note", json_string(err));
		verdict = AB_NOISY;
		goto report;
	}

	/* Rounds until --trials of them are kept, then one more while a point
	 * is inconclusive, up to --max-trials kept; a round on another floor
	 * of the machine than the gate's is set aside and costs one more
	 * (gate_regime), at most --regime-reruns of them. */
	unsigned cap = (unsigned)(a->c.max_trials + a->c.regime_reruns);
	if (ab_seq_init(&seq, a->c.alpha, (unsigned)a->c.max_trials) < 0) {
		fprintf(stderr, "oqb ab: out of memory\n");
		verdict = AB_RUNFAIL;
		goto report;
	}
	for (a->rounds = 0; a->rounds < cap;) {
		unsigned rd = a->rounds;
		int first = (int)(rng_next(&a->rng) & 1);
		for (int k = 0; k < 2; k++) {
			int si = k ? !first : first;
			if (!a->c.quiet)
				fprintf(stderr, "oqb ab: round %u: %s\n", rd + 1, a->side[si].name);
			json_array_append_new(a->order, json_pack("[is]", rd + 1, a->side[si].name));
			if (run_side(a, si, rd, err, sizeof err) < 0) {
				fprintf(stderr, "oqb ab: round %u, %s: %s\n", rd + 1, a->side[si].name, err);
				verdict = AB_RUNFAIL;
				goto report;
			}
		}
		a->rounds++;
		gate_regime(a, median5(pre));
		if (!a->c.quiet && !a->mixed && (a->nkept == 0 || a->kept[a->nkept - 1] != rd))
			fprintf(stderr, "oqb ab: round %u set aside: its canary read %.0f ns (base) and %.0f ns (new) "
				"against the gate's %.0f ns, another floor of the machine; running one more\n", rd + 1,
				a->side[0].canary[rd], a->side[1].canary[rd], a->regime_ns);
		if (a->nkept < (unsigned)a->c.trials)
			continue;
		json_decref(bj);
		json_decref(nj);
		json_decref(doc);
		bj = combine(a, &a->side[0], err, sizeof err);
		nj = bj ? combine(a, &a->side[1], err, sizeof err) : NULL;
		if (!nj) {
			fprintf(stderr, "oqb ab: %s\n", err);
			verdict = AB_RUNFAIL;
			goto report;
		}
		double look_alpha = ab_seq_alpha(&seq, a->nkept);
		struct compare_params cp = { .tolerance_pct = a->c.tolerance, .tolerance_p99_pct = a->c.tolerance_p99,
					     .tolerance_tagged_pp = a->c.tolerance_tagged, .alpha = look_alpha,
					     .canary_drift = a->c.canary_drift, .correction = a->c.correction,
					     .tail_raw = a->c.tail == 1 };
		doc = compare_eval(bj, nj, &cp, "new");
		if (!doc) {
			fprintf(stderr, "oqb ab: out of memory\n");
			verdict = AB_RUNFAIL;
			goto report;
		}
		size_t open = ab_seq_look(&seq, doc, a->nkept);
		int decided_regression = 0;
		const char *dk;
		json_t *dv;
		json_object_foreach(seq.decided, dk, dv)
			decided_regression |= !strcmp(json_string_value(json_object_get(dv, "verdict")), "regression");
		if (!a->c.quiet)
			fprintf(stderr, "oqb ab: after %u rounds (%u kept), a look at alpha %.3g: %zu gated metric(s) "
				"decided, %zu undecided\n", a->rounds, a->nkept, look_alpha, json_object_size(seq.decided),
				open);
		/* every metric decided, or a regression (it stays decided: the
		 * gate fails whatever more rounds say), or the budget spent */
		if (!open || decided_regression || a->nkept >= (unsigned)a->c.max_trials)
			break;
	}
	if (doc) {
		ab_seq_final(&seq, doc);
		const json_t *sum = compare_summary(doc);
		long long reg = json_integer_value(json_object_get(sum, "regressions"));
		long long und = json_integer_value(json_object_get(sum, "inconclusive"));
		verdict = reg ? AB_REGRESSION : und ? AB_INCONCLUSIVE : AB_SAME;
	}

	/* The canary again: did the machine change during the gate?  The
	 * verdict stands on the rounds whose two sides' canaries agree
	 * (compare pairs them), so a machine that changed between rounds does
	 * not spoil it; the change is recorded and said. */
	double post_spread;
	const char *post_host;
	json_t *post_hosts = NULL;
	if (floor_check(a, post, &post_hosts, &post_spread, &post_host, err, sizeof err) == 0) {
		/* the same rule as the rounds': an after-canary on another floor
		 * than the gate's is measured again after a wait, as the
		 * pre-check is, so a flip at the end is not taken for a move */
		json_t *aatt = json_array();
		for (int k = 0;; k++) {
			json_t *f = floor_json(post);
			json_object_set_new(f, "host", json_string(a->floor_hosts[0]));
			json_object_set_new(f, "hosts", post_hosts);
			post_hosts = NULL;
			json_array_append_new(aatt, f);
			if (k >= a->c.noise_retries || regime_same(median5(post), a->regime_ns, a->c.regime_factor))
				break;
			if (!a->c.quiet)
				fprintf(stderr, "oqb ab: the canary after the gate read %.0f ns, another floor than the "
					"gate's %.0f ns; measuring it again in %g s (%d of %d)\n", median5(post),
					a->regime_ns, a->c.noise_wait_s, k + 1, a->c.noise_retries);
			clock_sleep_until(clock_ns() + (uint64_t)(a->c.noise_wait_s * 1e9));
			if (floor_check(a, post, &post_hosts, &post_spread, &post_host, err, sizeof err) < 0)
				break;
		}
		json_object_set_new(noise, "after_attempts", aatt);
		json_object_set_new(noise, "after", floor_json(post));
		double f = fmax(median5(post) / median5(pre), median5(pre) / median5(post));
		json_object_set_new(noise, "moved", json_boolean(f > a->c.noise_limit));
		if (f > a->c.noise_limit) {
			const json_t *lo = json_object_get(compare_summary(doc), "rounds_left_out");
			snprintf(err, sizeof err, "the canary moved by x%.2f between before and after the gate (limit x%g): "
				 "the machine changed while it ran; the verdict rests on the rounds whose two sides' "
				 "canaries agree (%lld point-round(s) left out) and on the %u round(s) kept in the gate's "
				 "canary regime of %.0f ns (%u set aside)", f, a->c.noise_limit,
				 json_is_integer(lo) ? (long long)json_integer_value(lo) : 0LL, a->nkept, a->regime_ns,
				 a->mixed ? 0 : a->rounds - a->nkept);
			json_object_set_new(noise, "note", json_string(err));
		}
	}

report:
	{
		json_t *abj = json_pack("{s:s,s:s,s:s,s:s,s:i,s:O,s:O?,s:O?}", "schema", "oqbench.ab/1", "config",
					a->config, "verdict", verdict_of(verdict) ? verdict_of(verdict) : "a run failed",
					"dir", a->dir, "rounds", (int)a->rounds, "order", a->order, "noise", noise,
					"comparison", doc);
		json_t *sides = json_object();
		for (int k = 0; k < 2; k++) {
			json_t *env = json_array();
			for (size_t i = 0; i < a->side[k].nenv; i++)
				json_array_append_new(env, json_string(a->side[k].env[i]));
			json_object_set_new(sides, a->side[k].name, json_pack("{s:s,s:s,s:o}", "bin", a->side[k].bin, "build_id",
										 a->side[k].build_id, "env", env));
		}
		json_object_set_new(abj, "sides", sides);
		json_object_set_new(abj, "regime", regime_json(a, median5(pre), json_object_get(noise, "after")));
		json_object_set_new(abj, "exit_status", json_integer(verdict));
		snprintf(path, sizeof path, "%s/ab.json", a->dir);
		if (json_dump_file(abj, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0)
			fprintf(stderr, "oqb ab: cannot write %s\n", path);
		if (verdict_of(verdict)) {
			json_t *empty = doc ? NULL : json_pack("{s:[],s:{}}", "points", "summary");
			write_junit(a, doc ? doc : empty, verdict, noise, difftime(time(NULL), t0));
			write_markdown(a, doc, verdict, noise);
			json_decref(empty);
		}
		if (doc && !a->c.quiet) {
			size_t i;
			json_t *v;
			json_array_foreach(json_object_get(doc, "table"), i, v)
				printf("%s\n", json_string_value(v));
		}
		if (doc && a->c.quiet) {   /* rounds per metric, in any case */
			size_t i;
			json_t *v;
			json_array_foreach(json_object_get(doc, "table"), i, v)
				if (!strncmp(json_string_value(v), "rounds needed:", 14))
					printf("ab: %s\n", json_string_value(v));
		}
		printf("ab: %s after %u rounds; %s/ab.json, junit.xml, summary.md\n",
		       verdict_of(verdict) ? verdict_of(verdict) : "a run failed", a->rounds, a->dir);
		if (noise && json_object_get(noise, "note"))
			printf("ab: %s\n", json_string_value(json_object_get(noise, "note")));
		const json_t *rg = json_object_get(abj, "regime"), *x;
		size_t i;
		if (json_array_size(json_object_get(rg, "rounds_set_aside"))) {
			printf("ab: rounds set aside (canary regime, the gate's %.0f ns):",
			       json_number_value(json_object_get(rg, "median_ns")));
			json_array_foreach(json_object_get(rg, "rounds_set_aside"), i, x)
				printf(" %lld (base %.0f ns, new %.0f ns)", json_integer_value(json_object_get(x, "round")),
				       json_number_value(json_object_get(x, "base_canary_ns")),
				       json_number_value(json_object_get(x, "new_canary_ns")));
			printf("%s\n", a->mixed ? "; more than --regime-reruns, so all are kept" : "");
		}
		json_decref(abj);
	}
out:
	if (a) {
		if (a->l_open)
			launch_close(&a->l);
		if (a->rc_loaded)
			runconf_free(&a->rc);
		for (int k = 0; k < 2; k++)
			for (unsigned rr = 0; rr < AB_MAX_RUNS; rr++)
				json_decref(a->side[k].runs[rr]);
		json_decref(a->order);
	}
	json_decref(doc);
	json_decref(bj);
	json_decref(nj);
	json_decref(noise);
	ab_seq_free(&seq);
	free(a);
	return verdict;
}
