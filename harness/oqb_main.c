/*
 * oqb_main.c - bin/oqb, the driver: one command per verb.
 *
 * The table `verbs` below is the list: each command's usage, summary and
 * exit statuses in `oqb --help` come from its option table (lib/opts.h) and
 * the one exit-status table (lib/exitcodes.h), as its own --help does.
 * `oqb exit-codes` prints that table; `oqb --version` the build id.
 *
 * Only this file exits; the verbs return their exit status.
 */
#include "ab.h"
#include "buildid.h"   /* the build id every binary of this build shares (the Makefile) */
#include "compare.h"
#include "conf.h"
#include "check_cmd.h"
#include "doctor.h"
#include "figures.h"
#include "exitcodes.h"
#include "opts.h"
#include "perfhist.h"
#include "plotcmd.h"
#include "run.h"
#include "runconf.h"
#include "result.h"
#include "runjson.h"

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
	const char *config;
	const char *out;
	const char *loads_from;
	struct opt_list set_files, sets;
	int dry_run, quiet, strict, pretty;
};

#define SET_HELP "KEY=JSON: override a config key before the check, e.g. --set duration_s=0.3 " \
	"--set 'arrival.loads_ops=[2000]', --set arrival.loads_ops.search.start_ops=500000, " \
	"--set 'hosts.clients[0]=node1' (plain words need no quotes; null removes a key; @FILE is --set-file FILE)"
#define SET_FILE_HELP "FILE: an overlay {\"about\": ..., \"set\": {...}} merged into the config before every " \
	"--set, in the order given, e.g. configs/lab/testbed.json (docs/config.md)"

static void free_sets(const char **v, const struct opt_list *files)
{
	size_t i;

	for (i = 0; v && i < (size_t)files->n; i++)
		free((char *)v[i]);
	free(v);
}

/*
 * The overrides in the order they apply: each --set-file as "@FILE", then
 * each --set (runconf_set).  Returns a malloc'd array of *n, or NULL.
 */
static const char **all_sets(const struct opt_list *files, const struct opt_list *sets, size_t *n)
{
	const char **v = calloc((size_t)files->n + (size_t)sets->n + 1, sizeof *v);
	size_t i, k = 0;

	if (!v)
		return NULL;
	for (i = 0; i < (size_t)files->n; i++) {
		size_t len = strlen(files->v[i]) + 2;
		char *at = malloc(len);
		if (!at) {
			free_sets(v, files);
			return NULL;
		}
		snprintf(at, len, "@%s", files->v[i]);
		v[k++] = at;
	}
	for (i = 0; i < (size_t)sets->n; i++)
		v[k++] = sets->v[i];
	*n = k;
	return v;
}

#define O(f) offsetof(struct run_cli, f)
static const struct opt run_tab[] = {
	{ "CONFIG", OPT_ARG, O(config), NULL, 0, 0, NULL, "the experiment's config file (docs/config.md)" },
	{ "out", OPT_STR, O(out), NULL, 0, 0, NULL,
	  "results directory (default: results/NAME-UTCSTAMP)" },
	{ "set-file", OPT_LIST, O(set_files), NULL, 0, 0, NULL, SET_FILE_HELP },
	{ "set", OPT_LIST, O(sets), NULL, 0, 0, NULL, SET_HELP },
	{ "loads-from", OPT_STR, O(loads_from), NULL, 0, 0, NULL,
	  "BASE_RUN_DIR: run at the loads BASE swept (its knee search's, frozen) instead of searching, so "
	  "oqb compare matches every point on exact load; BASE must be a run of this experiment" },
	{ "dry-run", OPT_BOOL, O(dry_run), NULL, 0, 0, NULL,
	  "check the config and print the plan and command lines; start nothing" },
	{ "quiet", OPT_BOOL, O(quiet), NULL, 0, 0, NULL, "no progress line per point" },
	{ "strict", OPT_BOOL, O(strict), NULL, 0, 0, NULL,
	  "fail the run (exit 1) at the first trial whose self-checks warn (docs/trust.md)" },
	{ "pretty", OPT_BOOL, O(pretty), NULL, 0, 0, NULL,
	  "write run.json indented, one key a line (default: compact, one line)" },
	{ NULL, .help = "run a sweep of the experiment CONFIG describes; writes DIR/run.json (docs/driver.md)" },
};
#undef O

static const struct opts_cmd run_cmd = {
	"oqb run", run_tab,
	OQB_EXITS_BASE | OQB_EXITS(OQB_EXIT_FAIL) | OQB_EXITS(OQB_EXIT_ERROR),
};

static int cmd_run(int argc, char **argv)
{
	struct run_cli c;
	struct run_opts o;
	const char **sets;
	char err[20000], dir[4096];
	int r = opts_command(&run_cmd, &c, argc, argv);

	if (r != OPTS_GO)
		return r;
	memset(&o, 0, sizeof o);
	o.config = c.config;
	o.out = c.out;
	o.loads_from = c.loads_from;
	o.dry_run = c.dry_run;
	o.quiet = c.quiet;
	o.strict = c.strict;
	o.pretty = c.pretty;
	sets = all_sets(&c.set_files, &c.sets, &o.nsets);
	o.sets = sets;
	if (!sets) {
		fprintf(stderr, "oqb run: out of memory\n");
		return OQB_EXIT_ERROR;
	}
	r = run_experiment(&o, dir, sizeof dir, err, sizeof err);
	free_sets(sets, &c.set_files);
	if (r != 0) {
		fprintf(stderr, "oqb run: %s\n", err);
		if (dir[0])
			fprintf(stderr, "oqb run: partial results in %s/run.json\n", dir);
		return r;
	}
	if (!o.dry_run)
		printf("%s/run.json\n", dir);
	return OQB_EXIT_OK;
}

struct doctor_cli {
	const char *config;
	struct opt_list set_files, sets;
	int json;
	double timeout_s;
};

#define O(f) offsetof(struct doctor_cli, f)
static const struct opt doctor_tab[] = {
	{ "CONFIG", OPT_ARG, O(config), NULL, 0, 0, NULL, "the config whose hosts to check, as for oqb run" },
	{ "set-file", OPT_LIST, O(set_files), NULL, 0, 0, NULL, "FILE: an overlay merged into the config, as for oqb run" },
	{ "set", OPT_LIST, O(sets), NULL, 0, 0, NULL, "KEY=JSON: override a config key, as for oqb run" },
	{ "json", OPT_BOOL, O(json), NULL, 0, 0, NULL, "print the checks as JSON instead of the table" },
	{ "timeout-s", OPT_DBL, O(timeout_s), "10", 0.5, 600, NULL,
	  "a host that has not answered by then fails \"reachable\"" },
	{ NULL, .help = "check every host of CONFIG before a run: reachable, binaries and build, limits, RDMA "
	  "device, port, GID, MTU, NUMA, CPU and clock settings (docs/doctor.md)" },
};
#undef O

static const struct opts_cmd doctor_cmd = {
	"oqb doctor", doctor_tab, OQB_EXITS_BASE | OQB_EXITS(OQB_EXIT_FAIL),
};

static int cmd_doctor(int argc, char **argv)
{
	struct doctor_cli c;
	struct doctor_opts o;
	const char **sets;
	int r = opts_command(&doctor_cmd, &c, argc, argv);

	if (r != OPTS_GO)
		return r;
	memset(&o, 0, sizeof o);
	o.config = c.config;
	sets = all_sets(&c.set_files, &c.sets, &o.nsets);
	o.sets = sets;
	if (!sets) {
		fprintf(stderr, "oqb doctor: out of memory\n");
		return OQB_EXIT_ERROR;
	}
	o.json = c.json;
	o.timeout_s = c.timeout_s;
	r = doctor_run(&o);
	free_sets(sets, &c.set_files);
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

static int cmd_config_keys(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	print_keys(runconf_schema(), "");
	return OQB_EXIT_OK;
}

static int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("oqb (oqbench) build %s\nwrites %s\n", OQB_BUILD_ID, RESULT_SCHEMA);
	return OQB_EXIT_OK;
}

/* The table itself, one row a line: "CODE<TAB>NAME<TAB>MEANING" (docs/driver.md). */
static int cmd_exit_codes(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	for (int c = 0; c < OQB_EXIT_COUNT; c++)
		printf("%d\t%s\t%s\n", c, exitcode_name(c), exitcode_meaning(c));
	return OQB_EXIT_OK;
}

/* The crash tester is a client of the server, its own layer and binary
 * (harness/crash/): run bin/oqb-crashtest beside this oqb. */
static int cmd_crashtest(int argc, char **argv)
{
	return run_sibling("oqb-crashtest", argc, argv);
}

#ifndef OQB_HAVE_TGAP
static int no_tgap(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "oqb: tgap is not part of this build\n");
	return OQB_EXIT_USAGE;
}
#endif

/*
 * Every command: its name, entry, and either its option table (usage,
 * summary and exit statuses come from it) or, for one without a single
 * table, a usage and summary line and the exit statuses it declares.
 */
static const struct verb {
	const char *name;
	int (*run)(int argc, char **argv);
	const struct opts_cmd *cmd;
	const char *usage, *summary;
	unsigned exits;
	int takes_args;   /* only for a verb without cmd: passes its arguments on */
} verbs[] = {
	{ "run", cmd_run, &run_cmd, NULL, NULL, 0, 1 },
	{ "doctor", cmd_doctor, &doctor_cmd, NULL, NULL, 0, 1 },
	{ "plot", plot_main, &plot_cmd, NULL, NULL, 0, 1 },
	{ "figures", figures_main, &figures_cmd, NULL, NULL, 0, 1 },
	{ "compare", compare_main, &compare_cmd, NULL, NULL, 0, 1 },
	{ "ab", ab_main, &ab_cmd, NULL, NULL, 0, 1 },
	{ "crashtest", cmd_crashtest, NULL, "oqb crashtest [options] CONFIG",
	  "kill a durable oq server under load and check every commit survived (oqb crashtest --help)",
	  OQB_EXITS_BASE | OQB_EXITS(OQB_EXIT_FAIL) | OQB_EXITS(OQB_EXIT_ERROR), 1 },
	{ "check", check_main, &check_cmd, NULL, NULL, 0, 1 },
	{ "history", perfhist_main, NULL, "oqb history add|show|detect|export-otava|plot [options] ...",
	  "performance history and change points (docs/history.md)", PERFHIST_EXITS, 1 },
#ifdef OQB_HAVE_TGAP
	{ "tgap", tgap_main, &tgap_cmd, NULL, NULL, 0, 1 },
#else
	{ "tgap", no_tgap, NULL, "oqb tgap", "T_gap analysis of traces (not part of this build)",
	  OQB_EXITS_BASE, 1 },
#endif
	{ "config-keys", cmd_config_keys, NULL, "oqb config-keys", "list every config key",
	  OQB_EXITS_BASE, 0 },
	{ "exit-codes", cmd_exit_codes, NULL, "oqb exit-codes",
	  "the exit statuses every command shares, one a line: CODE, NAME, MEANING", OQB_EXITS_BASE, 0 },
	{ "version", cmd_version, NULL, "oqb version | oqb --version", "this build's id and what it writes",
	  OQB_EXITS_BASE, 0 },
};
#define NVERBS (sizeof verbs / sizeof verbs[0])

/* A summary's first line, wrapped at 78 columns, each line indented 6. */
static void summary_lines(FILE *f, const char *s)
{
	size_t n = strcspn(s ? s : "", "\n"), col = 0;

	while (n > 0) {
		size_t w = strcspn(s, " \n");

		if (w > n)
			w = n;
		if (col && col + 1 + w > 72) {
			fputc('\n', f);
			col = 0;
		}
		fprintf(f, "%s%.*s", col ? " " : "      ", (int)w, s);
		col += w + 1;
		s += w;
		n -= w;
		while (n > 0 && *s == ' ') {
			s++;
			n--;
		}
	}
	fputc('\n', f);
}

static void usage(FILE *f)
{
	char codes[64];

	fprintf(f, "usage: oqb COMMAND [ARGS]    (oqb COMMAND --help for its options)\n");
	for (size_t i = 0; i < NVERBS; i++) {
		const struct verb *v = &verbs[i];
		const char *sum = v->summary;
		unsigned ex = v->exits;

		if (v->cmd) {
			size_t n = 0;

			fprintf(f, "  ");
			opts_synopsis(f, v->cmd->prog, v->cmd->tab);
			fputc('\n', f);
			while (v->cmd->tab[n].name)
				n++;
			sum = v->cmd->tab[n].help;
			ex = v->cmd->exits;
		} else {
			fprintf(f, "  %s\n", v->usage);
		}
		summary_lines(f, sum);
		exitcodes_list(ex, codes, sizeof codes);
		fprintf(f, "      exit %s\n", codes);
	}
	fprintf(f, "\nexit statuses, the same for every command (docs/driver.md, \"Exit codes\"):\n");
	for (int c = 0; c < OQB_EXIT_COUNT; c++)
		fprintf(f, "  %d  %s: %s\n", c, exitcode_name(c), exitcode_meaning(c));
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	const char *names[NVERBS + 2];

	if (!cmd || !strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(cmd ? stdout : stderr);
		return cmd ? OQB_EXIT_OK : OQB_EXIT_USAGE;
	}
	if (!strcmp(cmd, "--version"))
		return cmd_version(argc - 1, argv + 1);
	for (size_t i = 0; i < NVERBS; i++) {
		const struct verb *v = &verbs[i];

		if (strcmp(cmd, v->name))
			continue;
		if (!v->cmd && !v->takes_args && argc > 2) {
			/* a command without options: --help is its usage, anything else a slip */
			if (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) {
				printf("usage: %s\n%s\n", v->usage, v->summary);
				exitcodes_help(stdout, v->exits);
				return OQB_EXIT_OK;
			}
			fprintf(stderr, "oqb %s: unexpected argument \"%s\"; it takes none\nusage: %s\n", cmd,
				argv[2], v->usage);
			return OQB_EXIT_USAGE;
		}
		return v->run(argc - 1, argv + 1);
	}
	for (size_t i = 0; i < NVERBS; i++)
		names[i] = verbs[i].name;
	names[NVERBS] = "help";
	names[NVERBS + 1] = NULL;
	const char *near = conf_nearest(cmd, names, (size_t)-1);
	fprintf(stderr, "oqb: unknown command \"%s\"%s%s%s (see oqb help)\n", cmd,
		near ? "; did you mean \"" : "", near ? near : "", near ? "\"?" : "");
	return OQB_EXIT_USAGE;
}
