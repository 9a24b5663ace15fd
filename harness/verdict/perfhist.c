/*
 * perfhist.c - `oqb history`: the append-only history file, its
 * fingerprints, and detect / show / export-otava / plot over it.  The
 * format and the guarantees are in perfhist.h; docs/history.md is the
 * user's guide.  Detection itself is harness/verdict/changepoint.c.
 */
#include "perfhist.h"
#include "changepoint.h"
#include "history.h"
#include "opts.h"
#include "plotcmd.h"
#include "result.h"
#include "stats.h"
#include "runjson.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>

/* keys of the history's own lines */
#define HIST_POINTS "points"
#define HIST_SPREAD "spread"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NMETRICS 3
static const char *const metric_names[NMETRICS + 1] = { "p50", "p99", "achieved_ops", NULL };
/* +1: higher is worse (latency); -1: lower is worse (throughput). */
static const int metric_dir[NMETRICS] = { 1, 1, -1 };

/* ---- fingerprints ---- */

static void fp_of(const json_t *v, char fp[17])
{
	json_t *c = json_deep_copy(v);
	char *s;

	result_whole_reals(c);
	s = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	snprintf(fp, 17, "%016llx", (unsigned long long)history_key_hash(s ? s : "", s ? strlen(s) : 0));
	free(s);
	json_decref(c);
}

void perfhist_config_fp(const json_t *config, char fp[17])
{
	json_t *c = result_config_measured(config, 0);   /* the keys that change what is measured */

	fp_of(c, fp);
	json_decref(c);
}

static json_t *or_null(const json_t *v)
{
	return v ? json_deep_copy(v) : json_null();
}

/* A load as the configs write it: whole ones as integers; null for none. */
static json_t *load_json(double v)
{
	if (isnan(v))
		return json_null();
	return v == floor(v) && fabs(v) < 9e15 ? json_integer((json_int_t)v) : json_real(v);
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* ---- one line from a run.json ---- */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* [min, median, max] of a metric over the point's trials, or null. */
static json_t *trial_spread(const json_t *pt, int metric)
{
	const json_t *trials = result_trials(pt), *t;
	size_t i, n = 0, cap = json_array_size(trials);
	double *v = malloc((cap ? cap : 1) * sizeof *v), med;
	json_t *out;

	if (!v)
		return json_null();
	json_array_foreach(trials, i, t) {
		const json_t *all = result_lat(t, "all");
		double x = metric == 2 ? result_achieved(t) : result_num(all, metric_names[metric]);
		if (isfinite(x) && (metric == 2 || result_n(all) > 0))
			v[n++] = x;
	}
	if (!n) {
		free(v);
		return json_null();
	}
	med = stats_median_inplace(v, n);
	out = json_pack("[fff]", v[0], med, v[n - 1]);
	free(v);
	return out;
}

/*
 * "SYSTEM@LOAD[,KEY=VALUE]": LOAD is the offered ops/s, or closed/N, or
 * for a run that searched its knee the point's fraction of that knee
 * ("oq@0.5xknee"), so that the series of one point continues from run to
 * run while each run's knee, and so its loads, move (result.h).
 */
static void point_key(const json_t *run, const json_t *pt, char *out, size_t len)
{
	const char *sys = result_system(pt);
	double frac = result_knee_fraction(run, pt);
	size_t l;

	if (isfinite(frac))
		snprintf(out, len, "%s@%.3gxknee", sys ? sys : "?", frac);
	else if (!isnan(result_offered(pt)))
		snprintf(out, len, "%s@%.0f", sys ? sys : "?", result_offered(pt));
	else
		snprintf(out, len, "%s@closed/%.0f", sys ? sys : "?", result_outstanding(pt));
	if (result_has_sweep(pt)) {
		const char *k = result_sweep_key(pt), *dot;
		char *v = json_dumps(result_sweep_value(pt), JSON_COMPACT | JSON_ENCODE_ANY);
		dot = k ? strrchr(k, '.') : NULL;
		l = strlen(out);
		snprintf(out + l, len - l, ",%s=%s", dot ? dot + 1 : k ? k : "sweep", v ? v : "?");
		free(v);
	}
}

json_t *perfhist_record(const json_t *run, const char *commit, char *err, size_t errlen)
{
	const json_t *pts = result_points(run), *pt;
	const char *st = result_status(run);
	char cfp[17], tfp[17], key[512], stamp[32];
	json_t *rec, *tb, *out;
	struct result_ident id;
	double *canaries;
	size_t i, nc = 0;
	time_t now = time(NULL);
	struct tm tm;

	if (st && strcmp(st, "ok") != 0) {
		snprintf(err, errlen, "its status is \"%s\"; only finished runs (status ok) go into the history", st);
		return NULL;
	}
	if (!json_array_size(pts) || !result_config(run)) {
		snprintf(err, errlen, "it has no points or no config; is it a run.json of oqb run?");
		return NULL;
	}
	canaries = malloc(json_array_size(pts) * sizeof *canaries);
	if (!canaries) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	perfhist_config_fp(result_config(run), cfp);
	tb = result_testbed(run);
	result_ident(run, &id);
	fp_of(tb, tfp);
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
	out = json_array();
	json_array_foreach(pts, i, pt) {
		const json_t *all = result_lat(pt, "all");
		json_t *p = json_object();
		double c = result_canary_ns(pt);
		point_key(run, pt, key, sizeof key);
		json_object_set_new(p, "key", json_string(key));
		double ops = result_offered(pt);
		json_object_set_new(p, "system", result_system(pt) ? json_string(result_system(pt)) : json_null());
		json_object_set_new(p, "offered_ops", load_json(ops));
		json_object_set_new(p, "outstanding", load_json(result_outstanding(pt)));
		json_object_set_new(p, "sweep", or_null(result_sweep(pt)));
		for (int m = 0; m < 2; m++) {
			char ci[16];
			snprintf(ci, sizeof ci, "%s_ci", metric_names[m]);
			json_object_set_new(p, metric_names[m],
					    num_or_null(result_n(all) > 0 ? result_num(all, metric_names[m]) : NAN));
			json_object_set_new(p, ci, or_null(result_ci(all, metric_names[m])));
		}
		json_object_set_new(p, "achieved_ops", num_or_null(result_achieved(pt)));
		json_object_set_new(p, "n", num_or_null(result_n(all)));
		json_object_set_new(p, "trials", json_integer((json_int_t)json_array_size(result_trials(pt))));
		json_object_set_new(p, "spread", json_pack("{s:o, s:o, s:o}", "p50", trial_spread(pt, 0),
							   "p99", trial_spread(pt, 1), "achieved_ops",
							   trial_spread(pt, 2)));
		json_object_set_new(p, "canary_ns", num_or_null(c));
		json_object_set_new(p, "flagged", json_boolean(result_flagged(pt)));
		if (isfinite(c))
			canaries[nc++] = c;
		json_array_append_new(out, p);
	}
	/* A searched run's knee is a series of its own ("knee", as
	 * achieved_ops): with points keyed by fraction of the knee, a system
	 * that got slower keeps its latencies and loses knee. */
	double klo, khi, knee = result_knee(run, &klo, &khi);
	if (isfinite(knee))
		json_array_append_new(out, json_pack("{s:s, s:n, s:n, s:n, s:n, s:n, s:f, s:[f, o], s:o}", "key",
						     "knee", "system", "offered_ops", "outstanding", "p50", "p99",
						     "achieved_ops", knee, "bracket_ops", klo,
						     isfinite(khi) ? json_real(khi) : json_null(), "flagged", json_false()));
	stats_sort(canaries, nc);
	rec = json_object();
	json_object_set_new(rec, "schema", json_string(PERFHIST_SCHEMA));
	json_object_set_new(rec, "run_id", str_or_null(id.run_id));
	json_object_set_new(rec, "name", str_or_null(id.name));
	json_object_set_new(rec, "created_utc", str_or_null(id.created_utc));
	json_object_set_new(rec, "added_utc", json_string(stamp));
	json_object_set_new(rec, "git_commit", commit ? json_string(commit) : str_or_null(id.git_commit));
	json_object_set_new(rec, "git_dirty", commit ? json_false() : id.git_dirty < 0 ? json_null() : json_boolean(id.git_dirty));
	json_object_set_new(rec, "config_path", str_or_null(id.config_path));
	json_object_set_new(rec, "config_fp", json_string(cfp));
	json_object_set_new(rec, "testbed_fp", json_string(tfp));
	json_object_set_new(rec, "testbed", tb);
	json_object_set_new(rec, "canary_ns", num_or_null(nc ? canaries[nc / 2] : NAN));
	json_object_set_new(rec, "points", out);
	free(canaries);
	return rec;
}

/* A history line's points and a history point's spread (this file's own
 * format, oqbench.history: not run.json, which result.h reads). */
static const json_t *rec_points(const json_t *rec)
{
	return json_object_get(rec, HIST_POINTS);
}

static const json_t *rec_spread(const json_t *p)
{
	return json_object_get(p, HIST_SPREAD);
}

/* A number of a history line or of a change found in it (this file's own
 * format), NaN when missing. */
static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* ---- reading the file ---- */

static int check_line(json_t *r, char *err, size_t errlen)
{
	static const char *const strs[] = { "config_fp", "testbed_fp", NULL };
	const char *s = json_string_value(json_object_get(r, "schema"));
	const json_t *pts = rec_points(r), *p;
	size_t i;

	if (!json_is_object(r)) {
		snprintf(err, errlen, "not a JSON object");
		return -1;
	}
	if (!s || strcmp(s, PERFHIST_SCHEMA) != 0) {
		snprintf(err, errlen, "schema is %s, expected \"%s\"", s ? s : "missing", PERFHIST_SCHEMA);
		return -1;
	}
	for (i = 0; strs[i]; i++)
		if (!json_is_string(json_object_get(r, strs[i]))) {
			snprintf(err, errlen, "%s: missing or not a string", strs[i]);
			return -1;
		}
	if (!json_is_array(pts)) {
		snprintf(err, errlen, "points: missing or not an array");
		return -1;
	}
	json_array_foreach(pts, i, p) {
		if (!json_is_string(json_object_get(p, "key"))) {
			snprintf(err, errlen, "points[%zu].key: missing or not a string", i);
			return -1;
		}
		for (int m = 0; m < NMETRICS; m++) {
			const json_t *v = json_object_get(p, metric_names[m]);
			if (v && !json_is_null(v) && !json_is_number(v)) {
				snprintf(err, errlen, "points[%zu].%s: not a number", i, metric_names[m]);
				return -1;
			}
		}
	}
	return 0;
}

json_t *perfhist_load(const char *path, int missing_ok, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	json_t *all;
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;

	if (!f) {
		if (errno == ENOENT && missing_ok)
			return json_array();
		snprintf(err, errlen, "cannot open history %s: %s%s", path, strerror(errno),
			 errno == ENOENT ? " (add a run first: oqb history add RUN_DIR, or give --file)" : "");
		return NULL;
	}
	all = json_array();
	while ((len = getline(&line, &cap, f)) >= 0) {
		json_error_t je;
		json_t *r;
		char why[256];
		lineno++;
		if (strspn(line, " \t\r\n") == (size_t)len)
			continue;
		if (len > 0 && line[len - 1] != '\n') {
			snprintf(err, errlen, "%s:%zu: the last line is incomplete (no newline: a write was cut short); "
				 "delete that line", path, lineno);
			goto fail;
		}
		r = json_loads(line, 0, &je);
		if (!r) {
			snprintf(err, errlen, "%s:%zu: not valid JSON (column %d: %s); fix or delete that line",
				 path, lineno, je.column, je.text);
			goto fail;
		}
		if (check_line(r, why, sizeof why) < 0) {
			snprintf(err, errlen, "%s:%zu: %s; fix or delete that line", path, lineno, why);
			json_decref(r);
			goto fail;
		}
		json_object_set_new(r, "line", json_integer((json_int_t)lineno));
		json_array_append_new(all, r);
	}
	free(line);
	fclose(f);
	return all;
fail:
	free(line);
	fclose(f);
	json_decref(all);
	return NULL;
}

/* ---- add ---- */

static int append_line(const char *path, const json_t *rec, char *err, size_t errlen)
{
	char *s = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
	size_t len;
	int fd, rc = -1;
	char dir[PATH_MAX], *slash;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(dir, sizeof dir, "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
			free(s);
			return -1;
		}
	}
	len = strlen(s);
	s[len++] = '\n';   /* json_dumps leaves room: we replace its NUL */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s for appending: %s", path, strerror(errno));
	} else if (write(fd, s, len) != (ssize_t)len || fsync(fd) != 0) {
		snprintf(err, errlen, "cannot append to %s: %s", path, strerror(errno));
		close(fd);
	} else {
		rc = close(fd);
		if (rc)
			snprintf(err, errlen, "cannot close %s: %s", path, strerror(errno));
	}
	free(s);
	return rc;
}

struct hopts {
	const char *run;
	const char *file, *commit, *config, *testbed, *ack, *out, *point, *branch;
	int metric, json, window, min_segment;
	double pvalue, min_change;
};

#define O(f) offsetof(struct hopts, f)
#define FILE_ROW { "file", OPT_STR, O(file), PERFHIST_DEFAULT_FILE, 0, 0, NULL, "the history file (JSON lines)" }
#define CONFIG_ROW { "config", OPT_STR, O(config), NULL, 0, 0, NULL, "only runs whose config fingerprint starts so" }
#define TESTBED_ROW { "testbed", OPT_STR, O(testbed), NULL, 0, 0, NULL, "only runs whose testbed fingerprint starts so" }
#define POINT_ROW { "point", OPT_STR, O(point), NULL, 0, 0, NULL, "only this point, SYSTEM@LOAD as show prints it" }
#define DETECT_ROWS \
	{ "window", OPT_INT, O(window), "50", 0, CP_MAX_WINDOW, NULL, "runs per sliding window (0: the whole series)" }, \
	{ "pvalue", OPT_DBL, O(pvalue), "0.0001", 1e-300, 0.5, NULL, "significance level of a change" }, \
	{ "min-segment", OPT_INT, O(min_segment), "5", 2, 1000, NULL, "fewest runs between two changes (a spike is none)" }, \
	{ "min-change", OPT_DBL, O(min_change), "0", 0, 1000, NULL, "ignore changes smaller than this many percent" }

static const char *const metric_choices[] = { "all", "p50", "p99", "achieved_ops", NULL };

static const struct opt add_tab[] = {
	{ "RUN_DIR", OPT_ARG, O(run), NULL, 0, 0, NULL, "a results directory, or its run.json" },
	FILE_ROW,
	{ "commit", OPT_STR, O(commit), NULL, 0, 0, NULL, "record this commit instead of run.json's git_commit" },
	{ NULL, .help = "append one run (RUN_DIR or its run.json) to the history" },
};
static const struct opt show_tab[] = {
	FILE_ROW, CONFIG_ROW, TESTBED_ROW,
	{ NULL, .help = "list the runs of the history and its groups of comparable runs" },
};
static const struct opt detect_tab[] = {
	FILE_ROW, CONFIG_ROW, TESTBED_ROW, POINT_ROW,
	{ "metric", OPT_ENUM, O(metric), "all", 0, 0, metric_choices, "the metric to search" },
	DETECT_ROWS,
	{ "ack", OPT_STR, O(ack), NULL, 0, 0, NULL, "acknowledgement file: known changes to mute (docs/history.md)" },
	{ "json", OPT_BOOL, O(json), NULL, 0, 0, NULL, "print the changes as JSON" },
	{ NULL, .help = "find change points in every series of comparable runs (an unacknowledged regression fails)" },
};
static const struct opt export_tab[] = {
	FILE_ROW, CONFIG_ROW, TESTBED_ROW,
	{ "out", OPT_STR, O(out), NULL, 0, 0, NULL,
	  "write DIR/GROUP.json per group and DIR/otava.yaml (default: one group's JSON to stdout)" },
	{ "branch", OPT_STR, O(branch), "main", 0, 0, NULL, "the branch attribute of every run" },
	{ NULL, .help = "export the history in Apache Otava's JSON input format" },
};
static const struct opt plot_tab[] = {
	FILE_ROW, CONFIG_ROW, TESTBED_ROW, POINT_ROW,
	{ "metric", OPT_ENUM, O(metric), "p99", 1, 3, metric_choices, "the metric to draw" },
	DETECT_ROWS,
	{ "out", OPT_STR, O(out), NULL, 0, 0, NULL, "the figure, F.svg or F.png (its data goes to F.dat)" },
	{ NULL, .help = "draw a metric over commits with its change points marked" },
};
#undef O

/* RUN_DIR or run.json to a run.json path. */
static void run_path(const char *arg, char *out, size_t len)
{
	struct stat st;
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(out, len, "%s/run.json", arg);
	else
		snprintf(out, len, "%s", arg);
}

static const char *str(const json_t *o, const char *k, const char *def)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : def;
}

static int cmd_add(const struct hopts *o, const char *arg)
{
	char path[PATH_MAX + 16], err[2 * PATH_MAX];
	json_t *run, *hist, *rec, *r;
	size_t i;
	int rc = 2;

	run_path(arg, path, sizeof path);
	run = result_load(path, err, sizeof err);
	if (!run) {
		fprintf(stderr, "oqb history add: %s\n", err);
		return 2;
	}
	rec = perfhist_record(run, o->commit, err, sizeof err);
	json_decref(run);
	if (!rec) {
		fprintf(stderr, "oqb history add: %s: %s\n", path, err);
		return 2;
	}
	hist = perfhist_load(o->file, 1, err, sizeof err);
	if (!hist) {
		fprintf(stderr, "oqb history add: %s; nothing was added\n", err);
		goto out;
	}
	json_array_foreach(hist, i, r)
		if (json_equal(json_object_get(r, "run_id"), json_object_get(rec, "run_id")) &&
		    json_equal(json_object_get(r, "created_utc"), json_object_get(rec, "created_utc"))) {
			fprintf(stderr, "oqb history add: run %s of %s is already in %s at line %lld; "
				"the history is append-only, nothing was added\n", str(rec, "run_id", "?"),
				str(rec, "created_utc", "?"), o->file,
				(long long)json_integer_value(json_object_get(r, "line")));
			goto out;   /* bad input: that run is there already */
		}
	if (append_line(o->file, rec, err, sizeof err) < 0) {
		fprintf(stderr, "oqb history add: %s\n", err);
		rc = OQB_EXIT_ERROR;
		goto out;
	}
	printf("history: added run %s (commit %.12s, config %s, testbed %s, %zu points) to %s\n",
	       str(rec, "run_id", "?"), str(rec, "git_commit", "unknown"), str(rec, "config_fp", "?"),
	       str(rec, "testbed_fp", "?"), json_array_size(rec_points(rec)), o->file);
	rc = 0;
out:
	json_decref(hist);
	json_decref(rec);
	return rc;
}

/* ---- groups of comparable runs ---- */

static int fp_match(const json_t *r, const struct hopts *o)
{
	const char *c = str(r, "config_fp", ""), *t = str(r, "testbed_fp", "");
	return (!o->config || !strncmp(c, o->config, strlen(o->config))) &&
	       (!o->testbed || !strncmp(t, o->testbed, strlen(o->testbed)));
}

/*
 * The groups of runs with equal fingerprints (passing the filters), in
 * order of first appearance: an array of arrays of history lines.
 */
static json_t *groups_of(const json_t *hist, const struct hopts *o)
{
	json_t *groups = json_array(), *idx = json_object(), *r;
	size_t i;

	json_array_foreach(hist, i, r) {
		char key[64];
		json_t *g;
		if (!fp_match(r, o))
			continue;
		snprintf(key, sizeof key, "%s/%s", str(r, "config_fp", ""), str(r, "testbed_fp", ""));
		g = json_object_get(idx, key);
		if (!g) {
			g = json_array();
			json_object_set_new(idx, key, g);
			json_array_append(groups, g);
		}
		json_array_append(g, r);
	}
	json_decref(idx);
	return groups;
}

/* The point keys of a group, in order of first appearance. */
static json_t *keys_of(const json_t *group)
{
	json_t *keys = json_array(), *seen = json_object(), *r, *p;
	size_t i, j;

	json_array_foreach(group, i, r)
		json_array_foreach(rec_points(r), j, p) {
			const char *k = str(p, "key", "");
			if (!json_object_get(seen, k)) {
				json_object_set_new(seen, k, json_true());
				json_array_append_new(keys, json_string(k));
			}
		}
	json_decref(seen);
	return keys;
}

static const json_t *point_of(const json_t *r, const char *key)
{
	const json_t *p;
	size_t i;
	json_array_foreach(rec_points(r), i, p)
		if (!strcmp(str(p, "key", ""), key))
			return p;
	return NULL;
}

/* The series of one point and metric in a group: values and their runs. */
static size_t series_of(const json_t *group, const char *key, int m, double *x, const json_t **runs)
{
	const json_t *r;
	size_t i, n = 0;

	json_array_foreach(group, i, r) {
		double v = num(point_of(r, key), metric_names[m]);
		if (isfinite(v) && (m == 2 || v > 0)) {
			x[n] = v;
			runs[n++] = r;
		}
	}
	return n;
}

/* ---- show ---- */

static int cmd_show(const struct hopts *o)
{
	char err[1024];
	json_t *hist = perfhist_load(o->file, 0, err, sizeof err), *groups, *g, *r;
	size_t i, j;

	if (!hist) {
		fprintf(stderr, "oqb history show: %s\n", err);
		return 2;
	}
	printf("%-5s %-28s %-20s %-12s %-16s %-16s %6s %7s %9s\n", "line", "run_id", "created_utc", "commit",
	       "config", "testbed", "points", "flagged", "canary_ns");
	json_array_foreach(hist, i, r) {
		size_t nf = 0;
		const json_t *p;
		if (!fp_match(r, o))
			continue;
		json_array_foreach(rec_points(r), j, p)
			nf += json_is_true(json_object_get(p, "flagged"));
		printf("%-5lld %-28.28s %-20s %-12.12s %-16s %-16s %6zu %7zu %9.1f\n",
		       (long long)json_integer_value(json_object_get(r, "line")), str(r, "run_id", "?"),
		       str(r, "created_utc", "?"), str(r, "git_commit", "unknown"), str(r, "config_fp", "?"),
		       str(r, "testbed_fp", "?"), json_array_size(rec_points(r)), nf,
		       num(r, "canary_ns"));
	}
	groups = groups_of(hist, o);
	printf("groups (only runs of one group are ever compared):\n");
	json_array_foreach(groups, i, g) {
		const json_t *first = json_array_get(g, 0), *tb = json_object_get(first, "testbed");
		json_t *keys = keys_of(g);
		printf("  config %s testbed %s: %zu runs of %s, %zu points; %s on %s, %s, kernel %s\n",
		       str(first, "config_fp", "?"), str(first, "testbed_fp", "?"), json_array_size(g),
		       str(first, "name", "?"), json_array_size(keys),
		       str(json_object_get(tb, "transport"), "name", "?"), str(tb, "server", "?"),
		       str(tb, "cpu_model", "?"), str(tb, "kernel", "?"));
		json_decref(keys);
	}
	json_decref(groups);
	json_decref(hist);
	return 0;
}

/* ---- acknowledgements ---- */

static json_t *load_acks(const char *path, char *err, size_t errlen)
{
	json_error_t je;
	json_t *a = json_load_file(path, 0, &je), *e;
	size_t i;

	if (!a) {
		snprintf(err, errlen, "%s:%d: %s (an acknowledgement file is a JSON array of "
			 "{\"commit\", \"reason\", optional \"metric\", \"point\", \"config\", \"testbed\"})",
			 path, je.line, je.text);
		return NULL;
	}
	if (!json_is_array(a)) {
		snprintf(err, errlen, "%s: expected a JSON array of acknowledgements", path);
		json_decref(a);
		return NULL;
	}
	json_array_foreach(a, i, e) {
		const char *c = str(e, "commit", NULL);
		if (!json_is_object(e) || !c || strlen(c) < 4 || !json_is_string(json_object_get(e, "reason"))) {
			snprintf(err, errlen, "%s: entry %zu: needs \"commit\" (at least 4 hex digits of the first "
				 "run after the change) and \"reason\"", path, i);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* The acknowledgement muting this change, or NULL. */
static const json_t *acked(const json_t *acks, const json_t *run, const char *key, const char *metric)
{
	const char *commit = str(run, "git_commit", "");
	const json_t *e;
	size_t i;

	json_array_foreach(acks, i, e) {
		const char *c = str(e, "commit", ""), *m = str(e, "metric", NULL), *p = str(e, "point", NULL);
		const char *cf = str(e, "config", NULL), *tb = str(e, "testbed", NULL);
		if (strncmp(commit, c, strlen(c)) != 0)
			continue;
		if ((m && strcmp(m, metric)) || (p && strcmp(p, key)) ||
		    (cf && strncmp(str(run, "config_fp", ""), cf, strlen(cf))) ||
		    (tb && strncmp(str(run, "testbed_fp", ""), tb, strlen(tb))))
			continue;
		return e;
	}
	return NULL;
}

/* ---- detect ---- */

static void params_of(const struct hopts *o, struct cp_params *p)
{
	cp_params_default(p);
	p->window = (size_t)o->window;
	p->pvalue = o->pvalue;
	p->min_segment = (size_t)o->min_segment;
	p->min_change = o->min_change / 100;
}

/*
 * Runs cp_detect on one series; calls back per change.  Returns the
 * number of changes, or -1 with err.
 */
static long detect_series(const json_t *group, const char *key, int m, const struct hopts *o,
			  struct cp_change **cs, double **xs, const json_t ***runs, size_t *n,
			  char *err, size_t errlen)
{
	struct cp_params p;
	size_t nc = 0, cap = json_array_size(group);

	*cs = NULL;
	*xs = malloc((cap ? cap : 1) * sizeof **xs);
	*runs = malloc((cap ? cap : 1) * sizeof **runs);
	if (!*xs || !*runs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	*n = series_of(group, key, m, *xs, *runs);
	params_of(o, &p);
	p.direction = metric_dir[m];
	if (cp_detect(*xs, *n, &p, cs, &nc, err, errlen) < 0)
		return -1;
	return (long)nc;
}

static void fmt_val(char *buf, size_t len, double v, int m)
{
	if (m == 2)
		snprintf(buf, len, "%.0f ops/s", v);
	else if (v >= 1e6)
		snprintf(buf, len, "%.3f ms", v / 1e6);
	else
		snprintf(buf, len, "%.2f us", v / 1e3);
}

static int cmd_detect(const struct hopts *o)
{
	char err[1024];
	json_t *hist, *groups = NULL, *acks = NULL, *changes = json_array(), *g;
	size_t gi, nseries = 0, nreg = 0, nimp = 0, nack = 0, nshort = 0;
	int rc = 2;

	hist = perfhist_load(o->file, 0, err, sizeof err);
	if (!hist) {
		fprintf(stderr, "oqb history detect: %s\n", err);
		goto out;
	}
	if (o->ack && !(acks = load_acks(o->ack, err, sizeof err))) {
		fprintf(stderr, "oqb history detect: %s\n", err);
		goto out;
	}
	groups = groups_of(hist, o);
	json_array_foreach(groups, gi, g) {
		json_t *keys = keys_of(g), *k;
		size_t ki;
		json_array_foreach(keys, ki, k) {
			const char *key = json_string_value(k);
			if (o->point && strcmp(o->point, key))
				continue;
			for (int m = 0; m < NMETRICS; m++) {
				struct cp_change *cs;
				double *xs;
				const json_t **runs;
				size_t n;
				if (o->metric && o->metric - 1 != m)
					continue;
				long nc = detect_series(g, key, m, o, &cs, &xs, &runs, &n, err, sizeof err);
				if (nc < 0) {
					fprintf(stderr, "oqb history detect: %s, metric %s: %s\n", key,
						metric_names[m], err);
					free(cs);
					free(xs);
					free(runs);
					json_decref(keys);
					goto out;
				}
				nseries++;
				nshort += n < 2 * (size_t)o->min_segment;
				for (long c = 0; c < nc; c++) {
					const json_t *run = runs[cs[c].index], *ack = acked(acks, run, key, metric_names[m]);
					const json_t *prev = runs[cs[c].index - 1];
					json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:s, s:O}",
						"config", str(run, "config_fp", ""), "testbed", str(run, "testbed_fp", ""),
						"point", key, "metric", metric_names[m], "index", (json_int_t)cs[c].index,
						"runs", (json_int_t)n, "run_id", str(run, "run_id", "?"),
						"commit", str(run, "git_commit", "unknown"),
						"previous_commit", str(prev, "git_commit", "unknown"),
						"created_utc", str(run, "created_utc", "?"),
						"mean_before", cs[c].mean_before, "mean_after", cs[c].mean_after,
						"change_pct", cs[c].change_pct, "p", cs[c].p, "t", cs[c].t,
						"verdict", cs[c].worse ? "regression" : "improvement",
						"acknowledged", ack ? json_object_get((json_t *)ack, "reason") : json_null());
					json_object_set_new(j, "line", json_integer(json_integer_value(json_object_get(run, "line"))));
					json_array_append_new(changes, j);
					if (ack)
						nack++;
					else if (cs[c].worse)
						nreg++;
					else
						nimp++;
				}
				free(cs);
				free(xs);
				free(runs);
			}
		}
		json_decref(keys);
	}
	if (o->point && !nseries) {
		fprintf(stderr, "oqb history detect: no run of %s has a point \"%s\" (oqb history show lists "
			"the groups; points are SYSTEM@LOAD, e.g. oq@5000)\n", o->file, o->point);
		goto out;
	}
	if (o->json) {
		json_t *doc = json_pack("{s:s, s:{s:i, s:f, s:i, s:f}, s:I, s:O, s:{s:I, s:I, s:I, s:I, s:I, s:I}}",
					"file", o->file, "params", "window", o->window, "pvalue", o->pvalue,
					"min_segment", o->min_segment, "min_change_pct", o->min_change,
					"groups", (json_int_t)json_array_size(groups), "changes", changes,
					"summary", "series", (json_int_t)nseries, "short_series", (json_int_t)nshort,
					"changes", (json_int_t)json_array_size(changes), "regressions", (json_int_t)nreg,
					"improvements", (json_int_t)nimp, "acknowledged", (json_int_t)nack);
		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
	} else {
		json_t *c;
		size_t i;
		json_array_foreach(changes, i, c) {
			char b[64], a[64];
			int m = !strcmp(str(c, "metric", ""), "p50") ? 0 : !strcmp(str(c, "metric", ""), "p99") ? 1 : 2;
			const json_t *ack = json_object_get(c, "acknowledged");
			fmt_val(b, sizeof b, num(c, "mean_before"), m);
			fmt_val(a, sizeof a, num(c, "mean_after"), m);
			printf("%-11s %s %s at run %lld of %lld (line %lld, run %s, commit %.12s): %s -> %s, %+.1f%%, p %.2g"
			       "  [config %.8s testbed %.8s]%s%s\n",
			       json_is_string(ack) ? "ACKED" : str(c, "verdict", "?"), str(c, "point", "?"),
			       str(c, "metric", "?"), (long long)json_integer_value(json_object_get(c, "index")),
			       (long long)json_integer_value(json_object_get(c, "runs")),
			       (long long)json_integer_value(json_object_get(c, "line")), str(c, "run_id", "?"),
			       str(c, "commit", "?"), b, a, num(c, "change_pct"), num(c, "p"), str(c, "config", ""),
			       str(c, "testbed", ""), json_is_string(ack) ? ": " : "",
			       json_is_string(ack) ? json_string_value(ack) : "");
		}
	}
	fprintf(o->json ? stderr : stdout,
		"detect: %zu group(s), %zu series (%zu too short, under 2 x %d runs), %zu change(s): %zu regression(s), "
		"%zu improvement(s), %zu acknowledged; window %d, p %g, min segment %d\n",
		json_array_size(groups), nseries, nshort, o->min_segment, json_array_size(changes), nreg, nimp,
		nack, o->window, o->pvalue, o->min_segment);
	rc = nreg ? OQB_EXIT_FAIL : OQB_EXIT_OK;
out:
	json_decref(changes);
	json_decref(groups);
	json_decref(acks);
	json_decref(hist);
	return rc;
}

/* ---- export to Otava ---- */

/* Seconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ", or 0. */
static long long epoch_of(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	if (!s || !strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return 0;
	return (long long)timegm(&tm);
}

static json_t *otava_of(const json_t *group, const char *branch)
{
	json_t *out = json_array(), *keys = keys_of(group);
	const json_t *r, *k;
	size_t i, ki;

	json_array_foreach(group, i, r) {
		json_t *ms = json_array();
		json_array_foreach(keys, ki, k) {
			const json_t *p = point_of(r, json_string_value(k));
			for (int m = 0; p && m < NMETRICS; m++) {
				char name[600];
				double v = num(p, metric_names[m]);
				if (!isfinite(v))
					continue;
				snprintf(name, sizeof name, "%s.%s", json_string_value(k), metric_names[m]);
				json_array_append_new(ms, json_pack("{s:s, s:f}", "name", name, "value", v));
			}
		}
		/* Otava orders and filters runs by timestamp: later lines of
		 * one second stay after earlier ones (+1 s each). */
		long long ts = epoch_of(str(r, "created_utc", NULL));
		json_array_append_new(out, json_pack("{s:I, s:o, s:{s:s, s:s, s:s, s:s, s:s}}", "timestamp",
			(json_int_t)ts, "metrics", ms, "attributes", "branch", branch, "commit",
			str(r, "git_commit", "unknown"), "run_id", str(r, "run_id", "?"), "config_fp",
			str(r, "config_fp", ""), "testbed_fp", str(r, "testbed_fp", "")));
	}
	json_decref(keys);
	/* Timestamps must grow strictly: Otava keys its series by time. */
	for (i = 1; i < json_array_size(out); i++) {
		json_t *cur = json_array_get(out, i);
		json_int_t prev = json_integer_value(json_object_get(json_array_get(out, i - 1), "timestamp"));
		if (json_integer_value(json_object_get(cur, "timestamp")) <= prev)
			json_object_set_new(cur, "timestamp", json_integer(prev + 1));
	}
	return out;
}

static int cmd_export(const struct hopts *o)
{
	char err[1024];
	json_t *hist = perfhist_load(o->file, 0, err, sizeof err), *groups, *g;
	size_t i;
	int rc = 2;

	if (!hist) {
		fprintf(stderr, "oqb history export-otava: %s\n", err);
		return 2;
	}
	groups = groups_of(hist, o);
	if (!json_array_size(groups)) {
		fprintf(stderr, "oqb history export-otava: no runs in %s match\n", o->file);
		goto out;
	}
	if (!o->out) {
		if (json_array_size(groups) > 1) {
			fprintf(stderr, "oqb history export-otava: %s holds %zu groups of comparable runs and "
				"Otava would mix them; pick one with --config/--testbed or give --out DIR:\n",
				o->file, json_array_size(groups));
			json_array_foreach(groups, i, g)
				fprintf(stderr, "  --config %s --testbed %s (%zu runs)\n",
					str(json_array_get(g, 0), "config_fp", "?"),
					str(json_array_get(g, 0), "testbed_fp", "?"), json_array_size(g));
			goto out;
		}
		json_t *doc = otava_of(json_array_get(groups, 0), o->branch);
		json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
		rc = 0;
		goto out;
	}
	rc = OQB_EXIT_ERROR;   /* the input was good: what fails from here is writing */
	if (mkdir(o->out, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "oqb history export-otava: cannot create %s: %s\n", o->out, strerror(errno));
		goto out;
	}
	char yaml[PATH_MAX + 32];
	snprintf(yaml, sizeof yaml, "%s/otava.yaml", o->out);
	FILE *y = fopen(yaml, "w");
	if (!y) {
		fprintf(stderr, "oqb history export-otava: cannot write %s: %s\n", yaml, strerror(errno));
		goto out;
	}
	fprintf(y, "# written by oqb history export-otava from %s; run: otava analyze --config-file "
		"otava.yaml TEST (from this directory)\ntests:\n", o->file);
	rc = 0;
	json_array_foreach(groups, i, g) {
		char name[64], path[PATH_MAX + 96];
		const json_t *first = json_array_get(g, 0);
		snprintf(name, sizeof name, "%s-%.8s-%.8s", str(first, "name", "run"), str(first, "config_fp", ""),
			 str(first, "testbed_fp", ""));
		snprintf(path, sizeof path, "%s/%s.json", o->out, name);
		json_t *doc = otava_of(g, o->branch);
		if (json_dump_file(doc, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER) != 0) {
			fprintf(stderr, "oqb history export-otava: cannot write %s\n", path);
			rc = OQB_EXIT_ERROR;
		}
		json_decref(doc);
		fprintf(y, "  %s:\n    type: json\n    file: %s.json\n", name, name);
		printf("%s (%zu runs)\n", path, json_array_size(g));
	}
	if (fclose(y) != 0)
		rc = OQB_EXIT_ERROR;
	printf("%s\n", yaml);
out:
	json_decref(groups);
	json_decref(hist);
	return rc;
}

/* ---- plot ---- */

static const json_t *one_group(const json_t *groups, const char *cmd)
{
	const json_t *g;
	size_t i;

	if (json_array_size(groups) == 1)
		return json_array_get(groups, 0);
	fprintf(stderr, "oqb history %s: %s; pick one with --config/--testbed:\n", cmd,
		json_array_size(groups) ? "several groups of comparable runs match" : "no runs match");
	json_array_foreach(groups, i, g)
		fprintf(stderr, "  --config %s --testbed %s (%zu runs of %s)\n",
			str(json_array_get(g, 0), "config_fp", "?"), str(json_array_get(g, 0), "testbed_fp", "?"),
			json_array_size(g), str(json_array_get(g, 0), "name", "?"));
	return NULL;
}

static int cmd_plot(const struct hopts *o)
{
	char err[1024], data[PATH_MAX + 8], plotdir[PATH_MAX], script[PATH_MAX + 32], title[512];
	json_t *hist, *groups = NULL, *keys = NULL;
	const json_t *g, **runs = NULL;
	const char *key = o->point;
	struct cp_change *cs = NULL;
	double *xs = NULL;
	size_t n = 0, ext;
	int rc = 2, m = o->metric - 1;
	FILE *f;

	if (m < 0) {
		fprintf(stderr, "oqb history plot: --metric must name one metric: p50, p99 or achieved_ops\n");
		return 2;
	}
	ext = o->out ? strlen(o->out) : 0;
	if (!o->out || ext < 5 || (strcmp(o->out + ext - 4, ".svg") && strcmp(o->out + ext - 4, ".png"))) {
		fprintf(stderr, "oqb history plot: --out F.svg or F.png is required\n");
		return 2;
	}
	hist = perfhist_load(o->file, 0, err, sizeof err);
	if (!hist) {
		fprintf(stderr, "oqb history plot: %s\n", err);
		return 2;
	}
	groups = groups_of(hist, o);
	if (!(g = one_group(groups, "plot")))
		goto out;
	keys = keys_of(g);
	if (!key && json_array_size(keys) == 1)
		key = json_string_value(json_array_get(keys, 0));
	if (!key || !json_array_size(keys)) {
		const json_t *k;
		size_t i;
		fprintf(stderr, "oqb history plot: name the point with --point; this group has:");
		json_array_foreach(keys, i, k)
			fprintf(stderr, " %s", json_string_value(k));
		fputc('\n', stderr);
		goto out;
	}
	long nc = detect_series(g, key, m, o, &cs, &xs, &runs, &n, err, sizeof err);
	if (nc < 0 || n == 0) {
		fprintf(stderr, "oqb history plot: %s %s: %s\n", key, metric_names[m],
			nc < 0 ? err : "no values (is the point name right? oqb history show lists groups)");
		goto out;
	}
	snprintf(data, sizeof data, "%.*s.dat", (int)(ext - 4), o->out);
	rc = OQB_EXIT_ERROR;   /* the input was good: what fails from here is writing or drawing */
	if (!(f = fopen(data, "w"))) {
		fprintf(stderr, "oqb history plot: cannot write %s: %s\n", data, strerror(errno));
		goto out;
	}
	fprintf(f, "# run value ci_lo ci_hi commit change segment_mean (%s %s)\n", key, metric_names[m]);
	for (size_t i = 0, c = 0; i < n; i++) {
		const json_t *p = point_of(runs[i], key), *ci = NULL;
		char cin[16];
		snprintf(cin, sizeof cin, "%s_ci", metric_names[m]);
		ci = json_object_get(p, cin);
		if (!json_is_array(ci))
			ci = json_object_get(rec_spread(p), metric_names[m]);
		double lo = json_number_value(json_array_get(ci, 0)), hi = json_number_value(json_array_size(ci) == 3 ? json_array_get(ci, 2) : json_array_get(ci, 1));
		while (c < (size_t)nc && cs[c].index <= i)
			c++;
		double seg = c ? cs[c - 1].mean_after : (nc ? cs[0].mean_before : NAN);
		if (!nc) {
			double s = 0;
			for (size_t k = 0; k < n; k++)
				s += xs[k];
			seg = s / (double)n;
		}
		int is_change = c && cs[c - 1].index == i;
		fprintf(f, "%zu %.6g %.6g %.6g %.7s %d %.6g\n", i, xs[i], json_is_array(ci) ? lo : xs[i],
			json_is_array(ci) ? hi : xs[i], str(runs[i], "git_commit", "unknown"), is_change, seg);
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "oqb history plot: cannot write %s\n", data);
		goto out;
	}
	if (plot_find_dir(plotdir, sizeof plotdir) < 0) {
		fprintf(stderr, "oqb history plot: cannot find the plot/ directory; set OQB_PLOT_DIR\n");
		goto out;
	}
	snprintf(script, sizeof script, "%s/history.gp", plotdir);
	snprintf(title, sizeof title, "%s %s %s (config %.8s, testbed %.8s): %ld change(s)",
		 str(json_array_get(g, 0), "name", "?"), key, metric_names[m],
		 str(json_array_get(g, 0), "config_fp", ""), str(json_array_get(g, 0), "testbed_fp", ""), nc);
	char *argv[] = { "gnuplot", "-c", script, data, (char *)o->out, title,
			 m == 2 ? "achieved ops/s" : "latency (us)", m == 2 ? "1" : "1000", NULL };
	char msg[512];
	if (run_capture(argv, msg, sizeof msg) < 0) {
		fprintf(stderr, "oqb history plot: gnuplot -c %s %s %s failed (is gnuplot installed? make deps)\n",
			script, data, o->out);
		goto out;
	}
	printf("%s (%zu runs, %ld change point(s))\n", o->out, n, nc);
	rc = 0;
out:
	free(cs);
	free(xs);
	free(runs);
	json_decref(keys);
	json_decref(groups);
	json_decref(hist);
	return rc;
}

/* ---- dispatch ---- */

#define HX(x) (OQB_EXITS_BASE | (x))
static const struct opts_cmd hcmds[] = {
	{ "oqb history add", add_tab, HX(OQB_EXITS(OQB_EXIT_ERROR)) },
	{ "oqb history show", show_tab, HX(0) },
	{ "oqb history detect", detect_tab, HX(OQB_EXITS(OQB_EXIT_FAIL)) },
	{ "oqb history export-otava", export_tab, HX(OQB_EXITS(OQB_EXIT_ERROR)) },
	{ "oqb history plot", plot_tab, HX(OQB_EXITS(OQB_EXIT_ERROR)) },
};
#undef HX
#define NHCMDS (sizeof hcmds / sizeof hcmds[0])

/* Every subcommand's usage, summary and exit statuses, from its table. */
static void usage(FILE *f)
{
	char codes[64];

	fprintf(f, "usage: oqb history COMMAND [options] (docs/history.md)\n");
	for (size_t i = 0; i < NHCMDS; i++) {
		size_t n = 0;

		fprintf(f, "  ");
		opts_synopsis(f, hcmds[i].prog, hcmds[i].tab);
		fputc('\n', f);
		while (hcmds[i].tab[n].name)
			n++;
		exitcodes_list(hcmds[i].exits, codes, sizeof codes);
		fprintf(f, "      %s; exit %s\n", hcmds[i].tab[n].help, codes);
	}
	fprintf(f, "The default file is " PERFHIST_DEFAULT_FILE "; each command takes --help.\n");
	exitcodes_help(f, PERFHIST_EXITS);
}

int perfhist_main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	struct hopts o;
	int r;

	if (!cmd || !strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		usage(cmd ? stdout : stderr);
		return cmd ? OQB_EXIT_OK : OQB_EXIT_USAGE;
	}
	for (size_t i = 0; i < NHCMDS; i++) {
		if (strcmp(cmd, strrchr(hcmds[i].prog, ' ') + 1))
			continue;
		memset(&o, 0, sizeof o);
		r = opts_command(&hcmds[i], &o, argc - 1, argv + 1);
		if (r != OPTS_GO)
			return r;
		switch (i) {
		case 0: return cmd_add(&o, o.run);
		case 1: return cmd_show(&o);
		case 2: return cmd_detect(&o);
		case 3: return cmd_export(&o);
		default: return cmd_plot(&o);
		}
	}
	fprintf(stderr, "oqb history: unknown command \"%s\"\n", cmd);
	usage(stderr);
	return OQB_EXIT_USAGE;
}
