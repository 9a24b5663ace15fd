/*
 * oqb_main.c - bin/oqb, the driver: one command per verb.
 *
 *   oqb run CONFIG.json [--set KEY=JSON]... [--out DIR] [--dry-run] [--quiet] [--strict] [--pretty]
 *   oqb doctor CONFIG.json [--set KEY=JSON]... [--json]   (preflight, harness/doctor/doctor.c)
 *   oqb plot RUN_DIR [--out DIR]
 *   oqb figures [--runs DIR] [--out DIR] [--check]   (harness/figures/figures.c)
 *   oqb compare BASE.json NEW.json [--tolerance PCT] [--json]
 *   oqb ab CONFIG --base BINDIR --new BINDIR   (the A/B gate, harness/verdict/ab.c)
 *   oqb crashtest CONFIG    (crash injection: runs bin/oqb-crashtest, harness/crash/)
 *   oqb tgap ...            (T_gap analysis of traces, workloads/tgap.c)
 *   oqb history ...         (performance history and change points, harness/verdict/perfhist.c)
 *   oqb config-keys         (every config key with its type and help)
 *
 * Only this file exits; the verbs return their exit status.
 */
#include "ab.h"
#include "compare.h"
#include "conf.h"
#include "check_cmd.h"
#include "doctor.h"
#include "figures.h"
#include "opts.h"
#include "perfhist.h"
#include "plotcmd.h"
#include "run.h"
#include "runconf.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include("tgap.h")
#include "tgap.h"
#define OQB_HAVE_TGAP 1
#endif
#endif

struct run_cli {
	const char *out;
	const char *set;   /* only for --help: cmd_run takes every --set out first */
	int dry_run, quiet, strict, pretty;
};

#define O(f) offsetof(struct run_cli, f)
static const struct opt run_tab[] = {
	{ "out", OPT_STR, O(out), NULL, 0, 0, NULL,
	  "results directory (default: results/NAME-UTCSTAMP)" },
	{ "set", OPT_STR, O(set), NULL, 0, 0, NULL,
	  "KEY=JSON: override a config key before the check, repeatable, e.g. --set duration_s=0.3 "
	  "--set 'arrival.loads_ops=[2000]' (plain words need no quotes; null removes a key)" },
	{ "dry-run", OPT_BOOL, O(dry_run), NULL, 0, 0, NULL,
	  "check the config and print the plan and command lines; start nothing" },
	{ "quiet", OPT_BOOL, O(quiet), NULL, 0, 0, NULL, "no progress line per point" },
	{ "strict", OPT_BOOL, O(strict), NULL, 0, 0, NULL,
	  "fail the run (exit 1) at the first trial whose self-checks warn (docs/trust.md)" },
	{ "pretty", OPT_BOOL, O(pretty), NULL, 0, 0, NULL,
	  "write run.json indented, one key a line (default: compact, one line)" },
	{ NULL, .help = "run the experiment described by CONFIG.json (see docs/config.md)" },
};
#undef O

static void usage(FILE *f)
{
	fprintf(f,
		"usage: oqb COMMAND [ARGS]\n"
		"  run CONFIG.json [--set KEY=JSON]... [--out DIR] [--dry-run] [--quiet] [--strict] [--pretty]\n"
		"                       run a sweep; writes DIR/run.json (docs/driver.md)\n"
		"  doctor CONFIG.json [--set KEY=JSON]... [--json] [--timeout-s S]\n"
		"                       check every host of the config before a run; exit 0 when it\n"
		"                       can run, 1 when a check failed (docs/doctor.md)\n"
		"  plot RUN_DIR [--out DIR]\n"
		"                       latency vs throughput figures (SVG and PNG)\n"
		"  figures [--runs DIR] [--out DIR] [--check]\n"
		"                       the paper's figures and the claims report (docs/figures.md)\n"
		"  compare BASE.json NEW.json [--tolerance PCT] [--json]\n"
		"                       diff two runs; exit 1 on regressions\n"
		"  ab CONFIG --base BINDIR --new BINDIR [--new-env K=V]...\n"
		"                       A/B regression gate: both builds in shuffled rounds; exit 0/1/2/3\n"
		"                       = no regression/regression/inconclusive/too noisy (docs/ci.md)\n"
		"  crashtest CONFIG     kill a durable oq server under load, check every commit\n"
		"  check RUN_DIR | HISTORY...\n"
		"                       linearizability of recorded histories (docs/correctness.md)\n"
		"  history add|show|detect|export-otava|plot ...\n"
		"                       performance history and change points (docs/history.md)\n"
		"  tgap ...             T_gap analysis of request traces (oqb tgap --help)\n"
		"  config-keys          list every config key\n"
		"Each command takes --help.\n");
}

#define RUN_USAGE "usage: oqb run CONFIG.json [--set KEY=JSON]... [--out DIR] [--dry-run] [--quiet] [--strict] [--pretty]\n"

/*
 * --set repeats, which an option table cannot say: takes every --set (and
 * --set=) out of argv, in order, into *sets, and the rest into *rest.
 * Returns 0, or -1 with the message printed (prog names the command).
 */
static int take_sets(int argc, char **argv, const char *prog, const char *usage_line, char ***rest, int *nrest,
		     const char ***sets, size_t *nsets)
{
	*rest = calloc((size_t)argc + 1, sizeof **rest);
	*sets = calloc((size_t)argc + 1, sizeof **sets);
	*nrest = 0;
	*nsets = 0;
	if (!*rest || !*sets) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		if (i > 0 && !strcmp(argv[i], "--")) {
			while (i < argc)
				(*rest)[(*nrest)++] = argv[i++];
			break;
		}
		if (i > 0 && !strcmp(argv[i], "--set")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "%s: --set needs KEY=JSON, e.g. --set duration_s=0.3\n%s", prog, usage_line);
				return -1;
			}
			(*sets)[(*nsets)++] = argv[++i];
		} else if (i > 0 && !strncmp(argv[i], "--set=", 6)) {
			(*sets)[(*nsets)++] = argv[i] + 6;
		} else {
			(*rest)[(*nrest)++] = argv[i];
		}
	}
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	struct run_cli c;
	struct run_opts o;
	char err[20000], dir[4096];
	int npos = 0, r, n = 0;
	char **rest;
	const char **sets;
	size_t nsets;

	if (take_sets(argc, argv, "oqb run", RUN_USAGE, &rest, &n, &sets, &nsets) < 0) {
		free(rest);
		free(sets);
		return 2;
	}
	r = opts_parse(run_tab, &c, n, rest, &npos, err, sizeof err);
	if (r == 1 || r < 0 || npos != 1) {
		if (r != 1)
			fprintf(stderr, "oqb run: %s\n" RUN_USAGE, r < 0 ? err : "expected one config file");
		free(rest);
		free(sets);
		return r == 1 ? 0 : 2;
	}
	memset(&o, 0, sizeof o);
	o.config = rest[1];
	o.out = c.out;
	o.dry_run = c.dry_run;
	o.quiet = c.quiet;
	o.strict = c.strict;
	o.pretty = c.pretty;
	o.sets = sets;
	o.nsets = nsets;
	r = run_experiment(&o, dir, sizeof dir, err, sizeof err);
	free(rest);
	free(sets);
	if (r != 0) {
		fprintf(stderr, "oqb run: %s\n", err);
		if (dir[0])
			fprintf(stderr, "oqb run: partial results in %s/run.json\n", dir);
		return r;
	}
	if (!o.dry_run)
		printf("%s/run.json\n", dir);
	return 0;
}

struct doctor_cli {
	const char *set;   /* only for --help: cmd_doctor takes every --set out first */
	int json;
	double timeout_s;
};

#define O(f) offsetof(struct doctor_cli, f)
static const struct opt doctor_tab[] = {
	{ "set", OPT_STR, O(set), NULL, 0, 0, NULL, "KEY=JSON: override a config key, as for oqb run (repeatable)" },
	{ "json", OPT_BOOL, O(json), NULL, 0, 0, NULL, "print the checks as JSON instead of the table" },
	{ "timeout-s", OPT_DBL, O(timeout_s), "10", 0.5, 600, NULL,
	  "a host that has not answered by then fails \"reachable\"" },
	{ NULL, .help = "check every host of CONFIG.json before a run: reachable, binaries and build, limits, RDMA "
	  "device, port, GID, MTU, NUMA, CPU and clock settings (docs/doctor.md); exit 0 when the config can run, "
	  "1 when a check failed, 2 on a bad config" },
};
#undef O

#define DOCTOR_USAGE "usage: oqb doctor CONFIG.json [--set KEY=JSON]... [--json] [--timeout-s S]\n"

static int cmd_doctor(int argc, char **argv)
{
	struct doctor_cli c;
	struct doctor_opts o;
	char err[1024];
	int npos = 0, r, n = 0;
	char **rest;
	const char **sets;
	size_t nsets;

	if (take_sets(argc, argv, "oqb doctor", DOCTOR_USAGE, &rest, &n, &sets, &nsets) < 0) {
		free(rest);
		free(sets);
		return 2;
	}
	r = opts_parse(doctor_tab, &c, n, rest, &npos, err, sizeof err);
	if (r == 1 || r < 0 || npos != 1) {
		if (r != 1)
			fprintf(stderr, "oqb doctor: %s\n" DOCTOR_USAGE, r < 0 ? err : "expected one config file");
		free(rest);
		free(sets);
		return r == 1 ? 0 : 2;
	}
	memset(&o, 0, sizeof o);
	o.config = rest[1];
	o.sets = sets;
	o.nsets = nsets;
	o.json = c.json;
	o.timeout_s = c.timeout_s;
	r = doctor_run(&o);
	free(rest);
	free(sets);
	return r;
}

static void print_keys(const struct conf_key *k, const char *prefix)
{
	for (; k->name; k++) {
		char path[256];
		snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", k->name);
		printf("%-28s %s%s\n", path, k->help ? k->help : "", k->required ? " [required]" : "");
		if (k->sub)
			print_keys(k->sub, path);
	}
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd || !strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(cmd ? stdout : stderr);
		return cmd ? 0 : 2;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "doctor"))
		return cmd_doctor(argc - 1, argv + 1);
	if (!strcmp(cmd, "plot"))
		return plot_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "figures"))
		return figures_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "compare"))
		return compare_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "ab"))
		return ab_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "crashtest"))   /* a client of the server: its own binary (harness/crash/) */
		return run_sibling("oqb-crashtest", argc - 1, argv + 1);
	if (!strcmp(cmd, "check"))
		return check_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "history"))
		return perfhist_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "config-keys")) {
		print_keys(runconf_schema(), "");
		return 0;
	}
	if (!strcmp(cmd, "tgap")) {
#ifdef OQB_HAVE_TGAP
		return tgap_main(argc - 1, argv + 1);
#else
		fprintf(stderr, "oqb: tgap is not part of this build\n");
		return 2;
#endif
	}
	static const char *const cmds[] = { "run", "doctor", "plot", "figures", "compare", "ab", "crashtest", "check", "tgap", "history", "config-keys",
					    "help", NULL };
	const char *near = conf_nearest(cmd, cmds, (size_t)-1);
	fprintf(stderr, "oqb: unknown command \"%s\"%s%s%s (see oqb help)\n", cmd,
		near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
	return 2;
}
