/*
 * plotcmd.c - `oqb plot RUN_DIR [--out DIR]` (plotcmd.h).
 *
 * Latency vs throughput (the paper's Figs 7/8): the data file has one
 * block per system, blocks separated by two blank lines (gnuplot's
 * `index`), rows sorted by offered load:
 *   achieved_ops  p50_ns  p99_ns  offered_ops
 * and then flagged p50_min p50_max p99_min p99_max p50_flagged p99_flagged
 * saturated.  Points without samples are left out.  The script gets the
 * system names in block order as its third argument, and as its fifth
 * latency-throughput.scale: the panels' axes (ltscale.h: log latency, its
 * range set by the points below saturation).  A run with a `sweep` has one
 * block per (system, swept value), named "SYSTEM/VALUE".
 *
 * Throughput vs the swept parameter (Fig 11 when the key is
 * workload.value_size), only for runs with a sweep: one block per system,
 * rows sorted by the swept value:
 *   x  peak_achieved_ops  label
 * x is the value when every value is a number, else its index; label is
 * the value as text (the tick label).  Peak = the highest achieved
 * throughput over the point's loads, so with one saturating load or a
 * closed loop it is the system's throughput at that value.
 */
#include "checks.h"
#include "ltscale.h"
#include "plotcmd.h"
#include "opts.h"
#include "run.h"
#include "runconf.h"
#include "result.h"
#include "runjson.h"

#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct plot_opts {
	const char *run;
	const char *out;
};

#define O(f) offsetof(struct plot_opts, f)
static const struct opt plot_tab[] = {
	{ "RUN_DIR", OPT_ARG, O(run), NULL, 0, 0, NULL, "a results directory, or its run.json" },
	{ "out", OPT_STR, O(out), NULL, 0, 0, NULL, "directory for the figures (default: RUN_DIR)" },
	{ NULL, .help = "plot median and P99 latency vs achieved throughput from RUN_DIR/run.json, and "
	  "for a run with a sweep the peak throughput vs the swept value" },
};
#undef O

const struct opts_cmd plot_cmd = {
	"oqb plot", plot_tab, OQB_EXITS_BASE | OQB_EXITS(OQB_EXIT_ERROR),
};

/* The sweep index of a point, -1 without one. */
static long long sweep_index(const json_t *p)
{
	return result_sweep_index(p);
}

/* The run's name, "?" without one. */
static const char *run_name(const json_t *run)
{
	struct result_ident id;
	result_ident(run, &id);
	return id.name ? id.name : "?";
}

/* Whether point p ran system sys and has latency samples. */
static int has_samples_of(const json_t *p, const char *sys)
{
	const char *s = result_system(p);
	return s && !strcmp(s, sys) && result_n(result_lat(p, "all")) > 0;
}

/* A swept value as one word (no blanks) for names and tick labels. */
static void value_word(const json_t *v, char *buf, size_t len)
{
	char *t = json_is_string(v) ? strdup(json_string_value(v)) :
		  json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	snprintf(buf, len, "%s", t ? t : "?");
	for (char *c = buf; *c; c++)
		if (*c == ' ' || *c == '\t' || *c == '"')
			*c = '_';
	free(t);
}

static int cmp_offered(const void *a, const void *b)
{
	double x = result_offered(*(json_t *const *)a), y = result_offered(*(json_t *const *)b);
	x = isnan(x) ? 0 : x;   /* closed loop */
	y = isnan(y) ? 0 : y;
	if (x == y) {
		x = result_outstanding(*(json_t *const *)a);
		y = result_outstanding(*(json_t *const *)b);
		x = isnan(x) ? 0 : x;
		y = isnan(y) ? 0 : y;
	}
	return x < y ? -1 : x > y;
}

/* Writes the axes of both panels (ltscale.h) to path, the file the script
 * loads.  0, or -1 with err. */
static int write_lt_scale(const char *path, const struct lts_row *r50, const struct lts_row *r99, size_t n,
			  char *err, size_t errlen)
{
	struct lts_axes a;
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# oqb plot: the axes of latency-throughput.gp's panels (harness/figures/ltscale.h), "
		"suffix 50: median, 99: P99\n");
	lts_axes_of(r50, n, &a);
	lts_write_gp(f, "50", &a);
	lts_axes_of(r99, n, &a);
	lts_write_gp(f, "99", &a);
	if (fclose(f) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Writes the data file, and the panels' axes to scale_path.  Returns the
 * number of systems with data (their names, space-separated, in names),
 * or -1 with err.
 */
static int write_lt_data(const json_t *run, const char *path, const char *scale_path, char *names, size_t nlen,
			 char *err, size_t errlen)
{
	struct lts_row *r50 = NULL, *r99 = NULL;
	size_t nr = 0, cap = 0;
	const json_t *points = result_points(run);
	const char *seen[512];
	long long seen_sw[512];
	const json_t *seen_val[512];
	size_t nseen = 0, i, j;
	json_t *p;
	FILE *f;
	int blocks = 0;

	/* (system, sweep value) in order of first appearance: the config's
	 * order of systems within each sweep value. */
	json_array_foreach(points, i, p) {
		const char *s = result_system(p);
		long long w = sweep_index(p);
		if (!s)
			continue;
		for (j = 0; j < nseen && (strcmp(seen[j], s) != 0 || seen_sw[j] != w); j++)
			;
		if (j == nseen && nseen < 512) {
			seen_val[nseen] = json_is_null(result_sweep_value(p)) ? NULL : result_sweep_value(p);
			seen_sw[nseen] = w;
			seen[nseen++] = s;
		}
	}
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# oqb plot: latency vs throughput; one block per system (%s)\n",
		run_name(run));
	fprintf(f, "# achieved_ops p50_ns p99_ns offered_ops flagged p50_min p50_max p99_min p99_max p50_flagged "
		"p99_flagged saturated sys_p99_ns sys_p99_flagged\n# (flagged: 1 when a self-check warned, docs/trust.md; "
		"p50_flagged, p99_flagged: when one warned about that number; min/max: over the trials; saturated: the "
		"point's; sys_p99: the P99 of the requests no host stall touched, ? without host_tags)\n");
	names[0] = '\0';
	for (j = 0; j < nseen; j++) {
		json_t *rows[1024];
		size_t n = 0;
		json_array_foreach(points, i, p) {
			if (!has_samples_of(p, seen[j]) || sweep_index(p) != seen_sw[j] || n >= 1024)
				continue;
			rows[n++] = p;
		}
		if (!n)
			continue;
		qsort(rows, n, sizeof rows[0], cmp_offered);
		char name[200], vw[120];
		if (seen_sw[j] >= 0) {
			value_word(seen_val[j], vw, sizeof vw);
			snprintf(name, sizeof name, "%s/%s", seen[j], vw);
		} else {
			snprintf(name, sizeof name, "%s", seen[j]);
		}
		if (blocks)
			fprintf(f, "\n\n");
		fprintf(f, "# system %s\n", name);
		for (i = 0; i < n; i++) {
			/* a point with samples has its percentiles and achieved_ops */
			const json_t *all = result_lat(rows[i], "all");
			double p50 = result_num(all, "p50");
			double p99 = result_num(all, "p99");
			const json_t *s50 = result_spread(rows[i], "all", "p50"), *s99 = result_spread(rows[i], "all", "p99");
			int flagged = result_flagged(rows[i]);
			int sat = result_saturated(rows[i]);
			double ach = result_achieved(rows[i]);
			double lo50 = s50 ? result_num(s50, "min") : p50;
			double hi50 = s50 ? result_num(s50, "max") : p50;
			double lo99 = s99 ? result_num(s99, "min") : p99;
			double hi99 = s99 ? result_num(s99, "max") : p99;
			const json_t *sysl = result_sys_lat(rows[i], "all");
			double sys99 = result_num(sysl, "p99"), off = result_offered(rows[i]);
			char sys[64] = "? ?";
			/* no untagged request (a host stall touched all): no system P99 */
			if (!isnan(sys99) && result_num(sysl, "n") > 0)
				snprintf(sys, sizeof sys, "%.0f %d", sys99, checks_point_flagged(rows[i], "sys_p99", NULL, 0));
			fprintf(f, "%.1f %.0f %.0f %.1f %d %.0f %.0f %.0f %.0f %d %d %d %s\n", ach, p50, p99,
				isnan(off) ? 0 : off, flagged, lo50, hi50, lo99, hi99,
				checks_point_flagged(rows[i], "p50", NULL, 0), checks_point_flagged(rows[i], "p99", NULL, 0),
				sat, sys);
			if (nr == cap) {
				size_t nc = cap ? 2 * cap : 64;
				struct lts_row *a = realloc(r50, nc * sizeof *a), *b = a ? realloc(r99, nc * sizeof *b) : NULL;
				if (a)
					r50 = a;
				if (!b) {
					fclose(f);
					free(r50);
					free(r99);
					snprintf(err, errlen, "out of memory");
					return -1;
				}
				r99 = b;
				cap = nc;
			}
			r50[nr] = (struct lts_row){ ach, p50, lo50, hi50, sat };
			/* the P99 panel's range holds the system's P99 line too */
			r99[nr++] = (struct lts_row){ ach, p99, isnan(sys99) ? lo99 : fmin(lo99, sys99), hi99, sat };
		}
		snprintf(names + strlen(names), nlen - strlen(names), "%s%s", blocks ? " " : "", name);
		blocks++;
	}
	if (fclose(f) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		blocks = -1;
	} else if (write_lt_scale(scale_path, r50, r99, nr, err, errlen) < 0) {
		blocks = -1;
	}
	free(r50);
	free(r99);
	return blocks;
}

struct tp_row {
	double x, y;
	char label[120];
};

static int cmp_x(const void *a, const void *b)
{
	double x = ((const struct tp_row *)a)->x, y = ((const struct tp_row *)b)->x;
	return x < y ? -1 : x > y;
}

/*
 * Writes the throughput-vs-parameter data file.  Returns the number of
 * systems (names in names), 0 when the run has no sweep, or -1 with err.
 * *numeric says whether x holds the values themselves.
 */
static int write_tp_data(const json_t *run, const char *path, char *names, size_t nlen,
			 int *numeric, char *err, size_t errlen)
{
	const json_t *points = result_points(run);
	const json_t *values = result_setting(run, "sweep.values");
	const char *seen[64];
	size_t nseen = 0, i, j, nv = json_array_size(values);
	json_t *p, *v;
	FILE *f;
	int blocks = 0;

	if (nv == 0)
		return 0;
	*numeric = 1;
	json_array_foreach(values, i, v)
		if (!json_is_number(v))
			*numeric = 0;
	json_array_foreach(points, i, p) {
		const char *s = result_system(p);
		if (!s || sweep_index(p) < 0)
			continue;
		for (j = 0; j < nseen && strcmp(seen[j], s) != 0; j++)
			;
		if (j == nseen && nseen < 64)
			seen[nseen++] = s;
	}
	if (nseen == 0)
		return 0;
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# oqb plot: peak achieved throughput vs %s; one block per system (%s)\n",
		result_setting_str(run, "sweep.key") ? result_setting_str(run, "sweep.key") : "?", run_name(run));
	fprintf(f, "# x peak_achieved_ops label\n");
	names[0] = '\0';
	for (j = 0; j < nseen; j++) {
		struct tp_row rows[RUNCONF_MAX_SWEEP];
		size_t n = 0;
		for (size_t w = 0; w < nv && w < RUNCONF_MAX_SWEEP; w++) {
			double best = -1;
			json_array_foreach(points, i, p) {
				if (!has_samples_of(p, seen[j]) || sweep_index(p) != (long long)w)
					continue;
				double a = result_achieved(p);
				if (a > best)
					best = a;
			}
			if (best < 0)
				continue;
			rows[n].x = *numeric ? json_number_value(json_array_get(values, w)) : (double)w;
			rows[n].y = best;
			value_word(json_array_get(values, w), rows[n].label, sizeof rows[n].label);
			n++;
		}
		if (!n)
			continue;
		qsort(rows, n, sizeof rows[0], cmp_x);
		if (blocks)
			fprintf(f, "\n\n");
		fprintf(f, "# system %s\n", seen[j]);
		for (i = 0; i < n; i++)
			fprintf(f, "%.10g %.1f %s\n", rows[i].x, rows[i].y, rows[i].label);
		snprintf(names + strlen(names), nlen - strlen(names), "%s%s", blocks ? " " : "", seen[j]);
		blocks++;
	}
	if (fclose(f) != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return blocks;
}

/*
 * The plot/ directory: $OQB_PLOT_DIR, else the first plot/ found going up
 * from the binary's directory (bin/../plot for `make`, deeper for builds
 * in build/<variant>/bin).  Returns 0 or -1.
 */
int plot_find_dir(char *out, size_t cap)
{
	const char *env = getenv("OQB_PLOT_DIR");
	char base[PATH_MAX], probe[PATH_MAX + 64];

	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return 0;
	}
	snprintf(base, sizeof base, "%s", self_bin_dir());
	for (int up = 0; up < 5; up++) {
		snprintf(probe, sizeof probe, "%s/plot/latency-throughput.gp", base);
		if (access(probe, R_OK) == 0) {
			snprintf(out, cap, "%s/plot", base);
			return 0;
		}
		char *slash = strrchr(base, '/');
		if (!slash || slash == base)
			break;
		*slash = '\0';
	}
	return -1;
}

static int gnuplot(const char *script, const char *data, const char *out, const char *names,
		   const char *title, const char *arg5, const char *arg6, char *err, size_t errlen)
{
	char msg[512];
	char *argv[] = { "gnuplot", "-c", (char *)script, (char *)data, (char *)out, (char *)names,
			 (char *)title, (char *)arg5, (char *)arg6, NULL };

	if (run_capture(argv, msg, sizeof msg) < 0) {
		snprintf(err, errlen, "gnuplot -c %s %s %s failed (is gnuplot installed? make deps; "
			 "run that command by hand to see its error)", script, data, out);
		return -1;
	}
	return 0;
}

int plot_main(int argc, char **argv)
{
	struct plot_opts o;
	char err[16384], path[PATH_MAX + 32], dir[PATH_MAX], outdir[PATH_MAX], plotdir[PATH_MAX + 32];
	char data[PATH_MAX + 64], svg[PATH_MAX + 64], png[PATH_MAX + 64], script[PATH_MAX + 64];
	char scale[PATH_MAX + 64], names[8192], title[512];
	int r, rc = OQB_EXIT_ERROR;
	json_t *run;
	struct stat st;

	r = opts_command(&plot_cmd, &o, argc, argv);
	if (r != OPTS_GO)
		return r;
	snprintf(dir, sizeof dir, "%s", o.run);
	if (stat(dir, &st) == 0 && S_ISREG(st.st_mode)) {
		/* Given run.json itself. */
		snprintf(path, sizeof path, "%s", dir);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof dir, ".");
	} else {
		snprintf(path, sizeof path, "%s/run.json", dir);
	}
	run = result_load(path, err, sizeof err);
	if (!run) {
		fprintf(stderr, "oqb plot: %s\n", err);
		return OQB_EXIT_USAGE;
	}
	snprintf(outdir, sizeof outdir, "%s", o.out ? o.out : dir);
	if (o.out && mkdir(o.out, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "oqb plot: cannot create %s: %s\n", o.out, strerror(errno));
		goto out;
	}
	if (plot_find_dir(plotdir, sizeof plotdir) < 0) {
		fprintf(stderr, "oqb plot: cannot find plot/latency-throughput.gp next to %s or above it; "
			"set OQB_PLOT_DIR to the plot/ directory of oqbench\n", self_bin_dir());
		goto out;
	}
	snprintf(script, sizeof script, "%s/latency-throughput.gp", plotdir);

	snprintf(data, sizeof data, "%s/latency-throughput.dat", outdir);
	snprintf(scale, sizeof scale, "%s/latency-throughput.scale", outdir);
	int nsys = write_lt_data(run, data, scale, names, sizeof names, err, sizeof err);
	if (nsys < 0) {
		fprintf(stderr, "oqb plot: %s\n", err);
		goto out;
	}
	if (nsys == 0) {
		fprintf(stderr, "oqb plot: %s has no points with latency samples; nothing to plot\n", path);
		goto out;
	}
	struct result_ident id;
	result_ident(run, &id);
	snprintf(title, sizeof title, "%s (%s, %s)", id.name ? id.name : "?",
		 result_transport_name(run) ? result_transport_name(run) : "?", id.created_utc ? id.created_utc : "?");
	snprintf(svg, sizeof svg, "%s/latency-throughput.svg", outdir);
	snprintf(png, sizeof png, "%s/latency-throughput.png", outdir);
	if (gnuplot(script, data, svg, names, title, scale, NULL, err, sizeof err) < 0 ||
	    gnuplot(script, data, png, names, title, scale, NULL, err, sizeof err) < 0) {
		fprintf(stderr, "oqb plot: %s\n", err);
		goto out;
	}
	printf("%s\n%s\n", svg, png);

	/* A sweep adds throughput against the swept value. */
	int numeric = 0;
	snprintf(data, sizeof data, "%s/throughput-vs-param.dat", outdir);
	nsys = write_tp_data(run, data, names, sizeof names, &numeric, err, sizeof err);
	if (nsys < 0) {
		fprintf(stderr, "oqb plot: %s\n", err);
		goto out;
	}
	if (nsys > 0) {
		const char *key = result_setting_str(run, "sweep.key");
		snprintf(script, sizeof script, "%s/throughput-vs-param.gp", plotdir);
		snprintf(svg, sizeof svg, "%s/throughput-vs-param.svg", outdir);
		snprintf(png, sizeof png, "%s/throughput-vs-param.png", outdir);
		if (gnuplot(script, data, svg, names, title, key ? key : "value", numeric ? "1" : "0",
			    err, sizeof err) < 0 ||
		    gnuplot(script, data, png, names, title, key ? key : "value", numeric ? "1" : "0",
			    err, sizeof err) < 0) {
			fprintf(stderr, "oqb plot: %s\n", err);
			goto out;
		}
		printf("%s\n%s\n", svg, png);
	}
	rc = 0;
out:
	json_decref(run);
	return rc;
}
