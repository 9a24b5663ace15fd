/*
 * oqb_main.c - bin/oqb, the driver: one command per verb.
 *
 *   oqb run CONFIG.json [--out DIR] [--dry-run] [--quiet]
 *   oqb plot RUN_DIR [--out DIR]
 *   oqb compare BASE.json NEW.json [--tolerance PCT] [--json]
 *   oqb tgap ...            (T_gap analysis of traces, workloads/tgap.c)
 *   oqb config-keys         (every config key with its type and help)
 *
 * Only this file exits; the verbs return their exit status.
 */
#include "compare.h"
#include "conf.h"
#include "opts.h"
#include "plotcmd.h"
#include "run.h"
#include "runconf.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#if defined(__has_include)
#if __has_include("tgap.h")
#include "tgap.h"
#define OQB_HAVE_TGAP 1
#endif
#endif

struct run_cli {
	const char *out;
	int dry_run, quiet;
};

#define O(f) offsetof(struct run_cli, f)
static const struct opt run_tab[] = {
	{ "out", OPT_STR, O(out), NULL, 0, 0, NULL,
	  "results directory (default: results/NAME-UTCSTAMP)" },
	{ "dry-run", OPT_BOOL, O(dry_run), NULL, 0, 0, NULL,
	  "check the config and print the plan and command lines; start nothing" },
	{ "quiet", OPT_BOOL, O(quiet), NULL, 0, 0, NULL, "no progress line per point" },
	{ NULL, .help = "run the experiment described by CONFIG.json (see docs/config.md)" },
};
#undef O

static void usage(FILE *f)
{
	fprintf(f,
		"usage: oqb COMMAND [ARGS]\n"
		"  run CONFIG.json [--out DIR] [--dry-run] [--quiet]\n"
		"                       run a sweep; writes DIR/run.json (docs/driver.md)\n"
		"  plot RUN_DIR [--out DIR]\n"
		"                       latency vs throughput figures (SVG and PNG)\n"
		"  compare BASE.json NEW.json [--tolerance PCT] [--json]\n"
		"                       diff two runs; exit 1 on regressions\n"
		"  tgap ...             T_gap analysis of request traces (oqb tgap --help)\n"
		"  config-keys          list every config key\n"
		"Each command takes --help.\n");
}

static int cmd_run(int argc, char **argv)
{
	struct run_cli c;
	struct run_opts o;
	char err[20000], dir[4096];
	int npos = 0, r;

	r = opts_parse(run_tab, &c, argc, argv, &npos, err, sizeof err);
	if (r == 1)
		return 0;
	if (r < 0 || npos != 1) {
		fprintf(stderr, "oqb run: %s\nusage: oqb run CONFIG.json [--out DIR] [--dry-run] [--quiet]\n",
			r < 0 ? err : "expected one config file");
		return 2;
	}
	memset(&o, 0, sizeof o);
	o.config = argv[1];
	o.out = c.out;
	o.dry_run = c.dry_run;
	o.quiet = c.quiet;
	r = run_experiment(&o, dir, sizeof dir, err, sizeof err);
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
	if (!strcmp(cmd, "plot"))
		return plot_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "compare"))
		return compare_main(argc - 1, argv + 1);
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
	static const char *const cmds[] = { "run", "plot", "compare", "tgap", "config-keys", "help", NULL };
	const char *near = conf_nearest(cmd, cmds, (size_t)-1);
	fprintf(stderr, "oqb: unknown command \"%s\"%s%s%s (see oqb help)\n", cmd,
		near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
	return 2;
}
