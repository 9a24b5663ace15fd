/*
 * test_opts.c - option table parsing and --help generation.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exitcodes.h"
#include "opts.h"
#include "unit.h"

struct o {
	int workers;
	uint64_t ring;
	double rate;
	const char *config;
	const char *label;
	int durable;
	int verbose;
	int transport;
	int mode;
	int delta;
};

static const char *const transports[] = { "shm", "verbs", NULL };
static const char *const modes[] = { "plain", "slot-ring", "mp", NULL };

static const struct opt tab[] = {
	{ "workers", OPT_INT, offsetof(struct o, workers), "4", 1, 64, NULL,
	  "server worker threads" },
	{ "ring", OPT_U64, offsetof(struct o, ring), "64Ki", 0, 0, NULL, "ring bytes" },
	{ "rate", OPT_DBL, offsetof(struct o, rate), "1.5k", 0, INFINITY, NULL,
	  "offered load, ops/s" },
	{ "config", OPT_STR, offsetof(struct o, config), "configs/quick.json", 0, 0, NULL,
	  "experiment file" },
	{ "label", OPT_STR, offsetof(struct o, label), NULL, 0, 0, NULL, "free text" },
	{ "durable", OPT_BOOL, offsetof(struct o, durable), "true", 0, 0, NULL,
	  "persist requests" },
	{ "verbose", OPT_BOOL, offsetof(struct o, verbose), NULL, 0, 0, NULL, "say more" },
	{ "transport", OPT_ENUM, offsetof(struct o, transport), "verbs", 0, 0, transports,
	  "how requests travel" },
	{ "receive-buffer-mode", OPT_ENUM, offsetof(struct o, mode), NULL, 0, 0, modes,
	  "receive buffers" },
	{ "delta", OPT_INT, offsetof(struct o, delta), "-3", -10, 10, NULL, "signed knob" },
	{ NULL, 0, 0, NULL, 0, 0, NULL, "test program: exercises every option type" },
};

/* Parses a NULL-terminated list of words as argv (argv[0] = "prog"). */
static int parse(struct o *v, int *npos, char **argv_out, char *err, size_t errlen, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	const char *a;

	argv[argc++] = (char *)"bin/prog";
	va_start(ap, errlen);
	while ((a = va_arg(ap, const char *)) != NULL && argc < 31)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	memset(v, 0x5a, sizeof *v);   /* garbage: defaults must overwrite it all */
	err[0] = '\0';
	int rc = opts_parse(tab, v, argc, argv, npos, err, errlen);
	if (argv_out != NULL)
		memcpy(argv_out, argv, sizeof argv);
	return rc;
}

#define P(v, err, ...) parse(v, NULL, NULL, err, sizeof err, __VA_ARGS__, (const char *)NULL)
#define P0(v, err) parse(v, NULL, NULL, err, sizeof err, (const char *)NULL)

TEST(defaults)
{
	struct o v;
	char err[256];

	REQUIRE(P0(&v, err) == 0, "err: %s", err);
	CHECK(v.workers == 4);
	CHECK_EQ_U64(v.ring, 65536);
	CHECK_NEAR(v.rate, 1500, 0);
	CHECK(v.config && strcmp(v.config, "configs/quick.json") == 0);
	CHECK(v.label == NULL);
	CHECK(v.durable == 1);
	CHECK(v.verbose == 0);
	CHECK(v.transport == 1);
	CHECK(v.mode == 0);
	CHECK(v.delta == -3);
}

TEST(space_and_equals_forms)
{
	struct o v;
	char err[256];

	REQUIRE(P(&v, err, "--workers", "8", "--ring=4096", "--rate", "2.5e3", "--label=x=y",
		  "--config", "a.json", "--delta", "-7") == 0, "err: %s", err);
	CHECK(v.workers == 8);
	CHECK_EQ_U64(v.ring, 4096);
	CHECK_NEAR(v.rate, 2500, 0);
	CHECK(strcmp(v.label, "x=y") == 0);
	CHECK(strcmp(v.config, "a.json") == 0);
	CHECK(v.delta == -7, "negative value after a space");
	/* the last one wins */
	REQUIRE(P(&v, err, "--workers", "8", "--workers=9") == 0, "err: %s", err);
	CHECK(v.workers == 9);
	/* empty string is a value */
	REQUIRE(P(&v, err, "--label=") == 0, "err: %s", err);
	CHECK(v.label && *v.label == '\0');
}

TEST(str_points_into_argv)
{
	struct o v;
	char err[256], *argv[32];

	REQUIRE(parse(&v, NULL, argv, err, sizeof err, "--label", "hello", "--config=c.json",
		      (const char *)NULL) == 0, "err: %s", err);
	CHECK(v.label == argv[2]);
	CHECK(v.config == argv[3] + strlen("--config="));
}

TEST(booleans)
{
	struct o v;
	char err[256];

	REQUIRE(P(&v, err, "--verbose", "--no-durable") == 0, "err: %s", err);
	CHECK(v.verbose == 1);
	CHECK(v.durable == 0);
	REQUIRE(P(&v, err, "--verbose=off", "--durable=yes") == 0, "err: %s", err);
	CHECK(v.verbose == 0);
	CHECK(v.durable == 1);
	REQUIRE(P(&v, err, "--verbose=TRUE", "--durable=0") == 0, "err: %s", err);
	CHECK(v.verbose == 1);
	CHECK(v.durable == 0);
	CHECK(P(&v, err, "--verbose=maybe") == -1);
	CHECK(strstr(err, "--verbose: expected true or false") != NULL, "got: %s", err);
	CHECK(strstr(err, "\"maybe\"") != NULL, "got: %s", err);
	/* a bare bool does not swallow the next word */
	CHECK(P(&v, err, "--verbose", "x") == -1);
	CHECK(strstr(err, "unexpected argument \"x\"") != NULL, "got: %s", err);
	/* --no- only for booleans */
	CHECK(P(&v, err, "--no-workers") == -1);
	CHECK(strstr(err, "unknown option --no-workers") != NULL, "got: %s", err);
}

TEST(enums)
{
	struct o v;
	char err[256];

	REQUIRE(P(&v, err, "--transport", "shm", "--receive-buffer-mode=mp") == 0, "err: %s", err);
	CHECK(v.transport == 0);
	CHECK(v.mode == 2);
	CHECK(P(&v, err, "--transport", "shmm") == -1);
	CHECK(strcmp(err, "--transport: \"shmm\" is not one of: shm, verbs; did you mean "
		     "\"shm\"?") == 0, "got: %s", err);
	CHECK(P(&v, err, "--transport=tcp") == -1);
	CHECK(strcmp(err, "--transport: \"tcp\" is not one of: shm, verbs") == 0, "got: %s", err);
}

TEST(numbers_and_bounds)
{
	struct o v;
	char err[256];

	CHECK(P(&v, err, "--workers", "0") == -1);
	CHECK(strcmp(err, "--workers: 0 is out of range; expected 1 to 64") == 0, "got: %s", err);
	CHECK(P(&v, err, "--workers=65") == -1);
	CHECK(strstr(err, "65 is out of range; expected 1 to 64") != NULL, "got: %s", err);
	CHECK(P(&v, err, "--workers", "1.5") == -1);
	CHECK(strcmp(err, "--workers: expected an integer, got \"1.5\"") == 0, "got: %s", err);
	CHECK(P(&v, err, "--workers", "four") == -1);
	CHECK(strstr(err, "--workers: expected an integer, got \"four\"") != NULL, "got: %s", err);
	CHECK(P(&v, err, "--workers", " 4") == -1);
	CHECK(P(&v, err, "--workers", "4x") == -1);
	CHECK(strstr(err, "unknown suffix") != NULL, "got: %s", err);
	CHECK(P(&v, err, "--delta", "-11") == -1);
	CHECK(strstr(err, "-11 is out of range; expected -10 to 10") != NULL, "got: %s", err);
	CHECK(P(&v, err, "--rate", "-1") == -1);
	CHECK(strcmp(err, "--rate: -1 is out of range; expected at least 0") == 0, "got: %s", err);
	CHECK(P(&v, err, "--rate", "fast") == -1);
	CHECK(strcmp(err, "--rate: expected a number, got \"fast\"") == 0, "got: %s", err);
	CHECK(P(&v, err, "--rate", "nan") == -1);
	CHECK(P(&v, err, "--rate", "inf") == -1);
	CHECK(P(&v, err, "--rate", "1e400") == -1);
	CHECK(strstr(err, "too large") != NULL, "got: %s", err);
	CHECK(P(&v, err, "--ring", "-1") == -1);
	CHECK(strcmp(err, "--ring: expected a non-negative integer, got \"-1\"") == 0,
	      "got: %s", err);
}

TEST(integer_limits)
{
	struct o v;
	char err[256];

	REQUIRE(P(&v, err, "--ring", "18446744073709551615") == 0, "err: %s", err);
	CHECK(v.ring == UINT64_MAX);
	CHECK(P(&v, err, "--ring", "18446744073709551616") == -1);
	CHECK(strstr(err, "--ring: 18446744073709551616 is out of range; expected 0 to "
		     "18446744073709551615") != NULL, "got: %s", err);
	CHECK(P(&v, err, "--ring", "20E") == -1);
	/* an unbounded int still has to fit in an int */
	static const struct opt t2[] = {
		{ "n", OPT_INT, 0, NULL, 0, 0, NULL, "n" },
		{ NULL, 0, 0, NULL, 0, 0, NULL, NULL },
	};
	int n = 0;
	char *argv[] = { (char *)"p", (char *)"--n", (char *)"3000000000", NULL };
	CHECK(opts_parse(t2, &n, 3, argv, NULL, err, sizeof err) == -1);
	CHECK(strstr(err, "expected -2147483648 to 2147483647") != NULL, "got: %s", err);
	char *argv2[] = { (char *)"p", (char *)"--n", (char *)"-2147483648", NULL };
	CHECK(opts_parse(t2, &n, 3, argv2, NULL, err, sizeof err) == 0, "err: %s", err);
	CHECK(n == -2147483647 - 1);
}

TEST(suffixes)
{
	struct o v;
	char err[256];

	REQUIRE(P(&v, err, "--rate", "5M", "--ring", "2Gi", "--workers", "0.032k") == 0,
		"err: %s", err);
	CHECK_NEAR(v.rate, 5e6, 0);
	CHECK_EQ_U64(v.ring, 2147483648ULL);
	CHECK(v.workers == 32);
	REQUIRE(P(&v, err, "--rate=1.5K", "--ring=3T", "--workers=1e1") == 0, "err: %s", err);
	CHECK_NEAR(v.rate, 1500, 0);
	CHECK_EQ_U64(v.ring, 3000000000000ULL);
	CHECK(v.workers == 10);
	REQUIRE(P(&v, err, "--ring", "1.5Ki") == 0, "err: %s", err);
	CHECK_EQ_U64(v.ring, 1536);
	CHECK(P(&v, err, "--ring", "1.5") == -1, "non-integral after scaling");
	CHECK(P(&v, err, "--workers", "1k") == -1);
	CHECK(strstr(err, "1k is out of range; expected 1 to 64") != NULL, "got: %s", err);
	CHECK(P(&v, err, "--rate", "5m") == -1, "lower-case m is not mega");
}

TEST(unknown_options_suggest)
{
	struct o v;
	char err[256];

	CHECK(P(&v, err, "--wokers", "4") == -1);
	CHECK(strcmp(err, "unknown option --wokers; did you mean --workers?") == 0, "got: %s", err);
	CHECK(P(&v, err, "--trasnport=shm") == -1);
	CHECK(strcmp(err, "unknown option --trasnport=shm; did you mean --transport?") == 0,
	      "got: %s", err);
	CHECK(P(&v, err, "--xyz") == -1);
	CHECK(strcmp(err, "unknown option --xyz; see --help for the list") == 0, "got: %s", err);
	CHECK(P(&v, err, "--hepl") == -1);
	CHECK(strstr(err, "did you mean --help?") != NULL, "got: %s", err);
	CHECK(P(&v, err, "-workers", "4") == -1);
	CHECK(strstr(err, "two dashes: --workers") != NULL, "got: %s", err);
	CHECK(P(&v, err, "-x") == -1);
	CHECK(strstr(err, "unknown option -x") != NULL, "got: %s", err);
	CHECK(P(&v, err, "--receive-buffer") == -1);
	CHECK(strstr(err, "did you mean --receive-buffer-mode?") != NULL, "got: %s", err);
}

TEST(missing_value)
{
	struct o v;
	char err[256];

	CHECK(P(&v, err, "--workers") == -1);
	CHECK(strcmp(err, "--workers: missing value; write --workers VALUE or --workers=VALUE")
	      == 0, "got: %s", err);
	CHECK(P(&v, err, "--rate", "--workers", "4") == -1);
	CHECK(strstr(err, "--rate: missing value") != NULL, "got: %s", err);
	/* the = form takes anything, even a leading "--" */
	REQUIRE(P(&v, err, "--label=--odd") == 0, "err: %s", err);
	CHECK(strcmp(v.label, "--odd") == 0);
	/* a lone "-" is a value (stdin, by habit) */
	REQUIRE(P(&v, err, "--label", "-") == 0, "err: %s", err);
	CHECK(strcmp(v.label, "-") == 0);
}

TEST(positionals)
{
	struct o v;
	char err[256], *argv[32];
	int npos = -1;

	REQUIRE(parse(&v, &npos, argv, err, sizeof err, "a", "--workers", "2", "b", "-", "--",
		      "--verbose", (const char *)NULL) == 0, "err: %s", err);
	CHECK(npos == 4);
	CHECK(strcmp(argv[1], "a") == 0);
	CHECK(strcmp(argv[2], "b") == 0);
	CHECK(strcmp(argv[3], "-") == 0);
	CHECK(strcmp(argv[4], "--verbose") == 0);
	CHECK(v.verbose == 0, "after -- nothing is an option");
	CHECK(v.workers == 2);

	CHECK(P(&v, err, "stray") == -1);
	CHECK(strstr(err, "unexpected argument \"stray\"") != NULL, "got: %s", err);
}

TEST(bad_default_is_reported)
{
	static const struct opt bad[] = {
		{ "n", OPT_INT, 0, "lots", 0, 0, NULL, "n" },
		{ NULL, 0, 0, NULL, 0, 0, NULL, NULL },
	};
	int n;
	char err[256], *argv[] = { (char *)"p", NULL };

	CHECK(opts_parse(bad, &n, 1, argv, NULL, err, sizeof err) == -1);
	CHECK(strstr(err, "option table: --n default: expected an integer, got \"lots\"") != NULL,
	      "got: %s", err);
}

/* Runs opts_parse with stdout redirected to a file; returns rc, output in out. */
static int parse_capture(const char *arg, char *out, size_t outlen)
{
	char path[256], err[256];
	const char *dir = getenv("TMPDIR");
	char *argv[] = { (char *)"some/dir/oqb-test", (char *)arg, NULL };
	struct o v;
	int fd, saved, rc;
	ssize_t n;

	snprintf(path, sizeof path, "%s/oqb_opts_XXXXXX", dir && *dir ? dir : P_tmpdir);
	fd = mkstemp(path);
	if (fd < 0)
		return -2;
	fflush(stdout);
	saved = dup(1);
	dup2(fd, 1);
	rc = opts_parse(tab, &v, 2, argv, NULL, err, sizeof err);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	lseek(fd, 0, SEEK_SET);
	n = read(fd, out, outlen - 1);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	return rc;
}

TEST(help_flag_prints_and_returns_1)
{
	char out[8192];

	CHECK(parse_capture("--help", out, sizeof out) == 1);
	CHECK(strncmp(out, "usage: oqb-test [options]\n", 26) == 0, "got: %s", out);
	CHECK(strstr(out, "test program: exercises every option type") != NULL,
	      "summary from the end row: %s", out);
	CHECK(parse_capture("-h", out, sizeof out) == 1);
	CHECK(strstr(out, "--workers") != NULL);
}

TEST(help_text_lists_everything_aligned)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int col = -1;

	REQUIRE(f != NULL);
	opts_help(f, "prog", "does things", tab);
	fclose(f);
	CHECK(strncmp(buf, "usage: prog [options]\ndoes things\n", 34) == 0, "got: %s", buf);
	for (size_t i = 0; tab[i].name != NULL; i++) {
		char want[64];

		snprintf(want, sizeof want, "--%s", tab[i].name);
		CHECK(strstr(buf, want) != NULL, "missing %s", want);
		CHECK(strstr(buf, tab[i].help) != NULL, "missing help of %s", want);
	}
	CHECK(strstr(buf, "server worker threads (default: 4; range 1..64)") != NULL, "%s", buf);
	CHECK(strstr(buf, "ring bytes (default: 64Ki)") != NULL, "%s", buf);
	CHECK(strstr(buf, "(default: 1.5k; range >= 0)") != NULL, "%s", buf);
	CHECK(strstr(buf, "experiment file (default: configs/quick.json)") != NULL, "%s", buf);
	CHECK(strstr(buf, "free text\n") != NULL, "no default for a NULL string: %s", buf);
	CHECK(strstr(buf, "persist requests (default: true)") != NULL, "%s", buf);
	CHECK(strstr(buf, "say more (default: false)") != NULL, "%s", buf);
	CHECK(strstr(buf, "(default: verbs; one of: shm, verbs)") != NULL, "%s", buf);
	CHECK(strstr(buf, "(default: plain; one of: plain, slot-ring, mp)") != NULL, "%s", buf);
	CHECK(strstr(buf, "(default: -3; range -10..10)") != NULL, "%s", buf);
	CHECK(strstr(buf, "  --workers N ") != NULL, "%s", buf);
	CHECK(strstr(buf, "-h, --help") != NULL, "%s", buf);

	/* every help text starts in the same column */
	for (char *line = strtok(buf, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		char *p;
		int c;

		if (strncmp(line, "  -", 3) != 0)
			continue;
		p = strstr(line + 3, "  ");
		REQUIRE(p != NULL, "no gap in: %s", line);
		while (*p == ' ')
			p++;
		c = (int)(p - line);
		if (col < 0)
			col = c;
		CHECK(c == col, "column %d, others %d: %s", c, col, line);
	}
	CHECK(col > 0);
	free(buf);
}

TEST(help_wraps_very_long_names)
{
	static const struct opt t[] = {
		{ "a", OPT_INT, 0, "1", 0, 0, NULL, "short" },
		{ "an-option-with-a-very-long-name-indeed", OPT_STR, 0, NULL, 0, 0, NULL, "long" },
		{ NULL, 0, 0, NULL, 0, 0, NULL, NULL },
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	REQUIRE(f != NULL);
	opts_help(f, "p", NULL, t);
	fclose(f);
	CHECK(strstr(buf, "--an-option-with-a-very-long-name-indeed TEXT\n") != NULL, "%s", buf);
	CHECK(strstr(buf, "  --a N       short (default: 1)") != NULL, "%s", buf);
	free(buf);
}

/* ---- positional and repeatable rows ---- */

struct cmd {
	const char *config, *extra, *out;
	struct opt_list sets, envs, rest;
	int quiet;
};

static const struct opt cmd_tab[] = {
	{ "CONFIG", OPT_ARG, offsetof(struct cmd, config), NULL, 0, 0, NULL, "the config file" },
	{ "EXTRA", OPT_ARG, offsetof(struct cmd, extra), "none", 0, 1, NULL, "an optional one" },
	{ "out", OPT_STR, offsetof(struct cmd, out), NULL, 0, 0, NULL, "DIR: where results go" },
	{ "set", OPT_LIST, offsetof(struct cmd, sets), NULL, 0, 0, NULL, "KEY=JSON: override a key" },
	{ "env", OPT_LIST, offsetof(struct cmd, envs), NULL, 0, 2, NULL, "NAME=VALUE: for the child" },
	{ "quiet", OPT_BOOL, offsetof(struct cmd, quiet), NULL, 0, 0, NULL, "say less" },
	{ NULL, .help = "a command with positionals and lists" },
};

static const struct opt rest_tab[] = {
	{ "FILE", OPT_ARGS, offsetof(struct cmd, rest), NULL, 0, 0, NULL, "inputs" },
	{ "quiet", OPT_BOOL, offsetof(struct cmd, quiet), NULL, 0, 0, NULL, "say less" },
	{ NULL, .help = "one or more files" },
};

/* Parses words with tab t into *c; argv[0] = "prog". */
static int parse_cmd(const struct opt *t, struct cmd *c, char *err, size_t errlen, ...)
{
	static char *argv[40];
	int argc = 0;
	va_list ap;
	const char *a;

	argv[argc++] = (char *)"prog";
	va_start(ap, errlen);
	while ((a = va_arg(ap, const char *)) != NULL && argc < 39)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	memset(c, 0x5a, sizeof *c);
	err[0] = '\0';
	return opts_parse(t, c, argc, argv, NULL, err, errlen);
}

#define PC(t, c, err, ...) parse_cmd(t, c, err, sizeof err, __VA_ARGS__, (const char *)NULL)

TEST(positional_rows_take_arguments_in_order)
{
	static struct cmd c;
	char err[256];

	REQUIRE(PC(cmd_tab, &c, err, "--quiet", "a.json") == 0, "err: %s", err);
	CHECK(c.config && strcmp(c.config, "a.json") == 0);
	CHECK(c.extra && strcmp(c.extra, "none") == 0, "an optional positional takes its default");
	CHECK(c.quiet == 1);
	REQUIRE(PC(cmd_tab, &c, err, "a.json", "--out", "d", "b") == 0, "err: %s", err);
	CHECK(strcmp(c.config, "a.json") == 0 && strcmp(c.extra, "b") == 0);
	CHECK(strcmp(c.out, "d") == 0);
	/* "--" makes an option-looking word a positional */
	REQUIRE(PC(cmd_tab, &c, err, "--", "--odd.json") == 0, "err: %s", err);
	CHECK(strcmp(c.config, "--odd.json") == 0);
}

TEST(positional_rows_name_what_is_missing_or_extra)
{
	static struct cmd c;
	char err[256];

	CHECK(PC(cmd_tab, &c, err, "--quiet") == -1);
	CHECK(strstr(err, "missing CONFIG: the config file") != NULL, "got: %s", err);
	CHECK(PC(cmd_tab, &c, err, "a", "b", "c") == -1);
	CHECK(strstr(err, "unexpected argument \"c\"") != NULL, "got: %s", err);
	CHECK(PC(rest_tab, &c, err, "--quiet") == -1);
	CHECK(strstr(err, "missing FILE...") != NULL, "got: %s", err);
	/* a positional row is not an option */
	CHECK(PC(cmd_tab, &c, err, "--CONFIG", "x") == -1);
	CHECK(strstr(err, "unknown option --CONFIG") != NULL, "got: %s", err);
}

TEST(trailing_positionals_collect_every_one)
{
	static struct cmd c;
	char err[256];

	REQUIRE(PC(rest_tab, &c, err, "a", "--quiet", "b", "-", "c") == 0, "err: %s", err);
	REQUIRE(c.rest.n == 4, "n = %d", c.rest.n);
	CHECK(strcmp(c.rest.v[0], "a") == 0 && strcmp(c.rest.v[1], "b") == 0);
	CHECK(strcmp(c.rest.v[2], "-") == 0 && strcmp(c.rest.v[3], "c") == 0);
}

TEST(repeatable_options_keep_order_and_cap)
{
	static struct cmd c;
	char err[256];

	REQUIRE(PC(cmd_tab, &c, err, "x.json", "--set", "a=1", "--set=b=[2]", "--quiet", "--set", "c=x")
		== 0, "err: %s", err);
	REQUIRE(c.sets.n == 3, "n = %d", c.sets.n);
	CHECK(strcmp(c.sets.v[0], "a=1") == 0);
	CHECK(strcmp(c.sets.v[1], "b=[2]") == 0);
	CHECK(strcmp(c.sets.v[2], "c=x") == 0);
	CHECK(c.envs.n == 0, "a list not given is empty, not garbage");
	CHECK(strcmp(c.config, "x.json") == 0, "values of a list are not positionals");
	CHECK(PC(cmd_tab, &c, err, "x", "--env", "A=1", "--env", "B=2", "--env", "C=3") == -1);
	CHECK(strstr(err, "--env: given more than 2 times; at most 2") != NULL, "got: %s", err);
	CHECK(PC(cmd_tab, &c, err, "x", "--set") == -1);
	CHECK(strstr(err, "--set: missing value") != NULL, "got: %s", err);
}

TEST(help_shows_positionals_and_lists)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	REQUIRE(f != NULL);
	opts_help(f, "oqb thing", NULL, cmd_tab);
	fclose(f);
	CHECK(strncmp(buf, "usage: oqb thing [options] CONFIG [EXTRA]\n", 42) == 0, "%s", buf);
	CHECK(strstr(buf, "\narguments:\n  CONFIG ") != NULL, "%s", buf);
	CHECK(strstr(buf, "an optional one (optional; default: none)") != NULL, "%s", buf);
	CHECK(strstr(buf, "--set KEY=JSON    override a key (repeatable)") != NULL, "%s", buf);
	CHECK(strstr(buf, "--env NAME=VALUE") != NULL && strstr(buf, "(repeatable, at most 2 times)"), "%s", buf);
	CHECK(strstr(buf, "--out DIR") != NULL, "%s", buf);
	CHECK(strstr(buf, "--CONFIG") == NULL, "%s", buf);
	free(buf);
}

TEST(command_help_ends_with_its_exit_codes)
{
	static const struct opts_cmd c = { "oqb thing", rest_tab,
					   OQB_EXITS_BASE | OQB_EXITS(OQB_EXIT_INCONCLUSIVE) };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	REQUIRE(f != NULL);
	opts_command_help(f, &c);
	fclose(f);
	CHECK(strstr(buf, "usage: oqb thing [options] FILE...\n") == buf, "%s", buf);
	CHECK(strstr(buf, "\nexit status:\n  0  ok: ") != NULL, "%s", buf);
	CHECK(strstr(buf, "\n  2  bad input: ") != NULL, "%s", buf);
	CHECK(strstr(buf, "\n  3  inconclusive: ") != NULL, "%s", buf);
	CHECK(strstr(buf, "\n  1  ") == NULL && strstr(buf, "\n  5  ") == NULL, "only its own: %s", buf);
	free(buf);
}

TEST(command_parse_returns_exit_statuses)
{
	static const struct opts_cmd c = { "oqb thing", cmd_tab, OQB_EXITS_BASE };
	static struct cmd v;
	char *ok[] = { (char *)"thing", (char *)"x.json", NULL };
	char *bad[] = { (char *)"thing", (char *)"--nope", NULL };
	char *none[] = { (char *)"thing", NULL };
	FILE *saved = stderr;

	CHECK(opts_command(&c, &v, 2, ok) == OPTS_GO);
	CHECK(strcmp(v.config, "x.json") == 0);
	stderr = fopen("/dev/null", "w");
	int r1 = opts_command(&c, &v, 2, bad), r2 = opts_command(&c, &v, 1, none);
	fclose(stderr);
	stderr = saved;
	CHECK(r1 == OQB_EXIT_USAGE && r2 == OQB_EXIT_USAGE, "%d %d", r1, r2);
}

TEST(exit_code_table)
{
	char buf[64];

	CHECK(strcmp(exitcode_name(OQB_EXIT_OK), "ok") == 0);
	CHECK(strcmp(exitcode_name(OQB_EXIT_USAGE), "bad input") == 0);
	CHECK(strcmp(exitcode_name(OQB_EXIT_INCONCLUSIVE), "inconclusive") == 0);
	CHECK(exitcode_name(OQB_EXIT_COUNT) == NULL && exitcode_name(-1) == NULL);
	for (int i = 0; i < OQB_EXIT_COUNT; i++)
		CHECK(exitcode_name(i) && exitcode_meaning(i) && *exitcode_meaning(i), "row %d", i);
	exitcodes_list(OQB_EXITS_BASE | OQB_EXITS(OQB_EXIT_ERROR), buf, sizeof buf);
	CHECK(strcmp(buf, "0/2/5") == 0, "%s", buf);
}

UNIT_MAIN(defaults, space_and_equals_forms, str_points_into_argv, booleans, enums,
	  numbers_and_bounds, integer_limits, suffixes, unknown_options_suggest, missing_value,
	  positionals, bad_default_is_reported, help_flag_prints_and_returns_1,
	  help_text_lists_everything_aligned, help_wraps_very_long_names,
	  positional_rows_take_arguments_in_order, positional_rows_name_what_is_missing_or_extra,
	  trailing_positionals_collect_every_one, repeatable_options_keep_order_and_cap,
	  help_shows_positionals_and_lists, command_help_ends_with_its_exit_codes,
	  command_parse_returns_exit_statuses, exit_code_table)
