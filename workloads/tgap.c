/*
 * tgap.c - T_gap analysis (paper §4, Figure 2) and the `oqb tgap` command.
 *
 * Per client the state is the number of nilext requests still waiting for
 * a non-nilext one, and their counts for the last TGAP_WINDOW seconds.
 * When a non-nilext request arrives at time t, every waiting nilext request
 * gets its T_gap; those stamped at t - max_gap or later are "within".  A
 * nilext request stamped after t (out-of-order lines) has a negative gap,
 * which the one-second resolution cannot tell from 0, so it counts as
 * within too.
 *
 * The fraction reported per trace (and plotted) is within / all requests
 * analysed, by default; see docs/workloads.md for why, and --per nilext
 * for within / nilext requests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <unistd.h>
#include <limits.h>
#include <sys/wait.h>
#include <jansson.h>

#include "tgap.h"
#include "trace.h"
#include "opts.h"

void tgap_opts_default(struct tgap_opts *o)
{
	memset(o, 0, sizeof *o);
	for (int i = 0; i < TRACE_NOPS; i++)
		if (trace_op_nilext((enum trace_op)i))
			o->nilext_mask |= 1u << i;
	o->max_gap = 2;
}

int tgap_parse_ops(const char *list, unsigned *mask, char *err, size_t errlen)
{
	const char *p = list;

	*mask = 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		int op = trace_op_parse(p, n);
		if (op < 0) {
			snprintf(err, errlen, "\"%.*s\" is not a trace operation; use names from "
				 "get, gets, set, add, replace, cas, append, prepend, delete, incr, decr",
				 (int)(n > 40 ? 40 : n), p);
			return -1;
		}
		*mask |= 1u << op;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

struct tg_client {
	uint64_t id;
	uint64_t pending;         /* nilext requests without a T_gap yet */
	uint64_t win_ts;          /* newest second in win[] */
	uint64_t last_ts;
	uint32_t win[TGAP_WINDOW];/* pending nilext counts, by second modulo the window */
	uint8_t used, have_win, seen;
};

struct tgap {
	struct tgap_opts o;
	struct tg_client *c;
	uint64_t cap, n;
	struct tgap_result r;
};

struct tgap *tgap_new(const struct tgap_opts *o)
{
	struct tgap *s = calloc(1, sizeof *s);

	if (!s)
		return NULL;
	s->o = *o;
	if (s->o.max_gap >= TGAP_WINDOW)
		s->o.max_gap = TGAP_WINDOW - 1;
	s->cap = 1024;
	s->c = calloc(s->cap, sizeof *s->c);
	if (!s->c) {
		free(s);
		return NULL;
	}
	return s;
}

void tgap_free(struct tgap *s)
{
	if (!s)
		return;
	free(s->c);
	free(s);
}

static uint64_t tg_hash(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static struct tg_client *tg_slot(struct tg_client *tab, uint64_t cap, uint64_t id)
{
	uint64_t i = tg_hash(id) & (cap - 1);

	while (tab[i].used && tab[i].id != id)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static struct tg_client *tg_get(struct tgap *s, uint64_t id)
{
	struct tg_client *e;

	if ((s->n + 1) * 4 > s->cap * 3) {    /* keep the load under 3/4 */
		uint64_t ncap = s->cap * 2;
		struct tg_client *nt = calloc(ncap, sizeof *nt);
		if (!nt)
			return NULL;
		for (uint64_t i = 0; i < s->cap; i++)
			if (s->c[i].used)
				*tg_slot(nt, ncap, s->c[i].id) = s->c[i];
		free(s->c);
		s->c = nt;
		s->cap = ncap;
	}
	e = tg_slot(s->c, s->cap, id);
	if (!e->used) {
		e->used = 1;
		e->id = id;
		s->n++;
	}
	return e;
}

int tgap_add(struct tgap *s, uint64_t client, uint64_t ts, int nilext)
{
	struct tg_client *e = tg_get(s, client);

	if (!e)
		return -1;
	s->r.requests++;
	if (e->seen && ts < e->last_ts)
		s->r.out_of_order++;
	if (!e->seen || ts > e->last_ts)
		e->last_ts = ts;
	e->seen = 1;
	if (nilext) {
		s->r.nilext++;
		if (!e->have_win || ts > e->win_ts) {
			if (!e->have_win || ts - e->win_ts >= TGAP_WINDOW)
				memset(e->win, 0, sizeof e->win);
			else
				for (uint64_t t = e->win_ts + 1; t <= ts; t++)
					e->win[t % TGAP_WINDOW] = 0;
			e->win_ts = ts;
			e->have_win = 1;
		}
		if (e->win_ts - ts < TGAP_WINDOW)
			e->win[ts % TGAP_WINDOW]++;
		e->pending++;
		return 0;
	}
	s->r.non_nilext++;
	if (e->pending) {
		s->r.gaps += e->pending;
		for (uint64_t i = 0; i < TGAP_WINDOW && i <= e->win_ts; i++) {
			uint64_t bt = e->win_ts - i;    /* second of this bucket */
			if (bt + s->o.max_gap >= ts)
				s->r.within += e->win[bt % TGAP_WINDOW];
		}
		e->pending = 0;
		e->have_win = 0;
		memset(e->win, 0, sizeof e->win);
	}
	return 0;
}

void tgap_result(const struct tgap *s, struct tgap_result *r)
{
	*r = s->r;
	r->no_next = 0;
	for (uint64_t i = 0; i < s->cap; i++)
		if (s->c[i].used)
			r->no_next += s->c[i].pending;
	r->clients = s->n;
	r->frac_all = r->requests ? (double)r->within / (double)r->requests : 0;
	r->frac_nilext = r->nilext ? (double)r->within / (double)r->nilext : 0;
}

int tgap_file(const char *path, const struct tgap_opts *o, struct tgap_result *r,
	      char *err, size_t errlen)
{
	struct trace_reader *t = trace_open(path, o->skip_malformed, err, errlen);
	struct tgap *s;
	struct trace_rec rec;
	int k = 0, rc = 0;

	if (!t)
		return -1;
	trace_set_hint(t, "pass --skip-malformed to skip such lines");
	s = tgap_new(o);
	if (!s) {
		snprintf(err, errlen, "%s: out of memory", path);
		trace_close(t);
		return -1;
	}
	while ((!o->limit || s->r.requests < o->limit) &&
	       (k = trace_next(t, &rec, err, errlen)) > 0) {
		if (tgap_add(s, rec.client, rec.ts, (o->nilext_mask >> rec.op) & 1) < 0) {
			snprintf(err, errlen, "%s: out of memory after %" PRIu64 " clients", path, s->n);
			rc = -1;
			break;
		}
	}
	if (k < 0)
		rc = -1;
	tgap_result(s, r);
	r->skipped = trace_skipped(t);
	tgap_free(s);
	trace_close(t);
	return rc;
}

/* ------------------------------------------------------------ command */

struct tgap_cli {
	struct opt_list traces;
	const char *json, *plot, *cdf, *nilext;
	uint64_t max_gap, limit;
	int skip_malformed, per, quiet;
};

static const char *const tgap_per_names[] = { "all", "nilext", NULL };

static const struct opt tgap_tab[] = {
	{ "TRACE", OPT_ARGS, offsetof(struct tgap_cli, traces), NULL, 0, 0, NULL,
	  "request traces in the Twitter format, plain or zstd" },
	{ "json", OPT_STR, offsetof(struct tgap_cli, json), NULL, 0, 0, NULL,
	  "write the results as JSON (schema oqbench.tgap/1) to this file, - for stdout" },
	{ "plot", OPT_STR, offsetof(struct tgap_cli, plot), NULL, 0, 0, NULL,
	  "plot the CDF across traces with gnuplot to this .svg or .png file" },
	{ "cdf", OPT_STR, offsetof(struct tgap_cli, cdf), NULL, 0, 0, NULL,
	  "also keep the CDF data (\"x y\" lines, gnuplot input) in this file" },
	{ "max-gap", OPT_U64, offsetof(struct tgap_cli, max_gap), "2", 0, TGAP_WINDOW - 1, NULL,
	  "count T_gap in [0, this many seconds]" },
	{ "limit", OPT_U64, offsetof(struct tgap_cli, limit), "0", 0, 1e18, NULL,
	  "analyse only the first N requests of each trace (the paper used 1M; 0 = all)" },
	{ "nilext", OPT_STR, offsetof(struct tgap_cli, nilext), "set,delete", 0, 0, NULL,
	  "comma-separated trace ops treated as nilext" },
	{ "per", OPT_ENUM, offsetof(struct tgap_cli, per), "all", 0, 0, tgap_per_names,
	  "denominator of the plotted percentage: all requests, or nilext requests" },
	{ "skip-malformed", OPT_BOOL, offsetof(struct tgap_cli, skip_malformed), "false", 0, 0, NULL,
	  "skip and count lines that do not parse instead of failing" },
	{ "quiet", OPT_BOOL, offsetof(struct tgap_cli, quiet), "false", 0, 0, NULL,
	  "do not print the table" },
	{ NULL, 0, 0, NULL, 0, 0, NULL,
	  "T_gap (paper Fig 2): the share of requests that are nilext and followed by their client's "
	  "next non-nilext request within max-gap seconds" },
};

const struct opts_cmd tgap_cmd = {
	"oqb tgap", tgap_tab, OQB_EXITS_BASE | OQB_EXITS(OQB_EXIT_ERROR),
};

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* CDF data: a step from (0, 0) through (x_i, i/n) to (100, 1). */
static int write_cdf(const char *path, const double *x, size_t n, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		snprintf(err, errlen, "%s: cannot write the CDF data: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# x = %% of requests with T_gap in [0, max gap], y = fraction of traces <= x\n");
	fprintf(f, "0 0\n");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.6f %.6f\n", x[i], (double)(i + 1) / (double)n);
	fprintf(f, "100 1\n");
	if (fclose(f) != 0) {
		snprintf(err, errlen, "%s: cannot write the CDF data: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* plot/tgap-cdf.gp: $OQB_PLOT_DIR, else next to the binary's ../plot, else ./plot. */
static void find_script(char *out, size_t cap)
{
	const char *d = getenv("OQB_PLOT_DIR");
	char exe[PATH_MAX];
	ssize_t n;

	if (d && *d) {
		snprintf(out, cap, "%s/tgap-cdf.gp", d);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		char *slash;
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(out, cap, "%s/../plot/tgap-cdf.gp", exe);
			if (access(out, R_OK) == 0)
				return;
		}
	}
	snprintf(out, cap, "plot/tgap-cdf.gp");
}

static int run_gnuplot(const char *data, const char *out, const char *title, const char *xlabel,
		       char *err, size_t errlen)
{
	char script[PATH_MAX + 32];
	pid_t pid;
	int st;

	find_script(script, sizeof script);
	if (access(script, R_OK) != 0) {
		snprintf(err, errlen, "%s: plot script not found; run from the oqbench checkout or set "
			 "OQB_PLOT_DIR to its plot/ directory", script);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot start gnuplot: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		execlp("gnuplot", "gnuplot", "-c", script, data, out, title, xlabel, (char *)NULL);
		fprintf(stderr, "tgap: cannot run gnuplot: %s; install gnuplot-nox (make deps) "
			"or leave out --plot\n", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			snprintf(err, errlen, "waiting for gnuplot: %s", strerror(errno));
			return -1;
		}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(err, errlen, "gnuplot failed on %s (exit status %d) writing %s",
			 script, WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
		return -1;
	}
	if (access(out, R_OK) != 0) {
		snprintf(err, errlen, "gnuplot did not write %s", out);
		return -1;
	}
	return 0;
}

static json_t *result_json(const char *path, const struct tgap_result *r, double pct)
{
	const char *base = strrchr(path, '/');

	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f}",
			 "path", path, "name", base ? base + 1 : path,
			 "requests", (json_int_t)r->requests, "nilext", (json_int_t)r->nilext,
			 "non_nilext", (json_int_t)r->non_nilext, "gaps", (json_int_t)r->gaps,
			 "within", (json_int_t)r->within, "nilext_without_next", (json_int_t)r->no_next,
			 "clients", (json_int_t)r->clients, "out_of_order", (json_int_t)r->out_of_order,
			 "skipped_malformed", (json_int_t)r->skipped,
			 "fraction_of_all", r->frac_all, "fraction_of_nilext", r->frac_nilext,
			 "percent", pct);
}

int tgap_main(int argc, char **argv)
{
	struct tgap_cli cli;
	struct tgap_opts o;
	char err[2 * PATH_MAX];
	int npos = 0, rc;
	double *x = NULL;
	json_t *root = NULL, *traces, *cdf, *nil;
	size_t n, below = 0;

	rc = opts_command(&tgap_cmd, &cli, argc, argv);
	if (rc != OPTS_GO)
		return rc;
	npos = cli.traces.n;
	tgap_opts_default(&o);
	o.max_gap = cli.max_gap;
	o.limit = cli.limit;
	o.skip_malformed = cli.skip_malformed;
	if (tgap_parse_ops(cli.nilext, &o.nilext_mask, err, sizeof err) < 0) {
		fprintf(stderr, "tgap: --nilext: %s\n", err);
		return OQB_EXIT_USAGE;
	}
	n = (size_t)npos;
	x = calloc(n, sizeof *x);
	root = json_object();
	traces = json_array();
	json_object_set_new(root, "traces", traces);   /* root owns it on every path out */
	nil = json_array();
	for (int i = 0; i < TRACE_NOPS; i++)
		if ((o.nilext_mask >> i) & 1)
			json_array_append_new(nil, json_string(trace_op_name((enum trace_op)i)));
	json_object_set_new(root, "schema", json_string("oqbench.tgap/1"));
	json_object_set_new(root, "definition", json_pack(
		"{s:s, s:I, s:o, s:s, s:I}",
		"t_gap", "seconds from a nilext request to the same client's next non-nilext request",
		"max_gap_s", (json_int_t)o.max_gap, "nilext_ops", nil,
		"percent_of", cli.per ? "nilext requests" : "all requests",
		"limit", (json_int_t)o.limit));
	if (!cli.quiet)
		printf("%-40s %10s %10s %10s %10s %8s %8s\n", "trace", "requests", "nilext",
		       "gaps", "within", "%all", "%nilext");
	for (size_t i = 0; i < n; i++) {
		const char *path = cli.traces.v[i];
		struct tgap_result r;

		if (tgap_file(path, &o, &r, err, sizeof err) < 0) {
			fprintf(stderr, "tgap: %s\n", err);
			rc = OQB_EXIT_USAGE;   /* an unreadable or malformed trace */
			goto out;
		}
		x[i] = 100.0 * (cli.per ? r.frac_nilext : r.frac_all);
		below += x[i] < 10.0;
		json_array_append_new(traces, result_json(path, &r, x[i]));
		if (!cli.quiet)
			printf("%-40s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %8.3f %8.3f\n",
			       path, r.requests, r.nilext, r.gaps, r.within, 100 * r.frac_all,
			       100 * r.frac_nilext);
		if (r.skipped && !cli.quiet)
			fprintf(stderr, "tgap: %s: skipped %" PRIu64 " malformed lines\n", path, r.skipped);
	}
	qsort(x, n, sizeof *x, cmp_dbl);
	cdf = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(cdf, json_pack("{s:f, s:f}", "percent", x[i],
						     "fraction_of_traces", (double)(i + 1) / (double)n));
	json_object_set_new(root, "cdf", cdf);
	json_object_set_new(root, "summary", json_pack("{s:I, s:f}", "traces", (json_int_t)n,
						       "fraction_below_10_percent",
						       (double)below / (double)n));
	rc = 0;
	if (cli.json) {
		int e = strcmp(cli.json, "-") == 0
			? json_dumpf(root, stdout, JSON_INDENT(2)) | (fputc('\n', stdout) == EOF)
			: json_dump_file(root, cli.json, JSON_INDENT(2));
		if (e) {
			fprintf(stderr, "tgap: %s: cannot write the JSON output: %s\n", cli.json,
				strerror(errno));
			rc = OQB_EXIT_ERROR;
			goto out;
		}
	}
	if (cli.cdf && write_cdf(cli.cdf, x, n, err, sizeof err) < 0) {
		fprintf(stderr, "tgap: %s\n", err);
		rc = OQB_EXIT_ERROR;
		goto out;
	}
	if (cli.plot) {
		char tmp[PATH_MAX], title[64], xlabel[128];
		const char *data = cli.cdf;
		int fd = -1;

		if (!data) {
			/* Next to the plot, so no temporary directory is assumed. */
			snprintf(tmp, sizeof tmp, "%s.cdf-XXXXXX", cli.plot);
			fd = mkstemp(tmp);
			if (fd < 0) {
				fprintf(stderr, "tgap: %s: cannot create the CDF data file: %s; "
					"pass --cdf FILE\n", tmp, strerror(errno));
				rc = OQB_EXIT_ERROR;
				goto out;
			}
			close(fd);
			data = tmp;
			if (write_cdf(data, x, n, err, sizeof err) < 0) {
				fprintf(stderr, "tgap: %s\n", err);
				unlink(tmp);
				rc = OQB_EXIT_ERROR;
				goto out;
			}
		}
		snprintf(title, sizeof title, "%zu trace%s", n, n == 1 ? "" : "s");
		snprintf(xlabel, sizeof xlabel, "%s with T_{gap} in [0, %" PRIu64 " s] (%%)",
			 cli.per ? "Nilext requests" : "Requests", o.max_gap);
		if (run_gnuplot(data, cli.plot, title, xlabel, err, sizeof err) < 0) {
			fprintf(stderr, "tgap: %s\n", err);
			rc = OQB_EXIT_ERROR;
		}
		if (fd >= 0)
			unlink(tmp);
	}
out:
	json_decref(root);
	free(x);
	return rc;
}
