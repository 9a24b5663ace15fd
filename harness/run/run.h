/*
 * run.h - `oqb run`: one experiment from a config file to run.json.
 *
 * For each point of the sweep: start the server through the launcher,
 * wait for its HELLO (its endpoint), start the clients with that endpoint,
 * wait for their HELLOs, broadcast GO with a start delay, wait for every
 * DONE, STOP the server, end every process, merge, rewrite run.json.
 * Waits are on messages and process exits with timeouts, never fixed
 * sleeps.  Any failure (a process exits or closes its control socket
 * early, a HELLO or DONE does not come in time, Ctrl-C) stops the run
 * cleanly: every process started is ended by PID, run.json keeps the
 * finished points plus the error, and the exit status is non-zero.
 */
#ifndef OQB_RUN_H
#define OQB_RUN_H

#include <stddef.h>

struct run_opts {
	const char *config;   /* path of the config file */
	const char *out;      /* results directory, or NULL for results/<name>-<UTC stamp> */
	int dry_run;          /* check and print the plan; start nothing */
	int quiet;            /* no progress lines */
	int strict;           /* a trial whose self-checks warn fails the run */
	int pretty;           /* run.json indented (default: compact, result.h) */
	const char *const *sets;   /* --set KEY=VALUE overrides, in order */
	size_t nsets;
	const char *loads_from;    /* --loads-from BASE: its loads, frozen (loadsfrom.h); NULL: none */
	/* The build id every process must have (oqb ab: its side's BINDIR),
	 * and what names it in messages; NULL: the server's own (binbuild.h). */
	const char *expect_build, *expect_from;
};

/*
 * Runs the experiment.  Returns an exit status (lib/exitcodes.h): 0 when
 * every point completed, 1 when --strict stopped it at a trial whose
 * self-checks warned, 5 when a point failed or the run was interrupted
 * after it started (run.json written, err says why), 2 when it could not
 * start (bad config, unusable output dir; nothing was started).  Until
 * issue 49 a failed point was 1 as well.  *run_dir receives the results directory (may be
 * empty on early errors).
 */
int run_experiment(const struct run_opts *o, char *run_dir, size_t run_dir_len,
		   char *err, size_t errlen);

/* Formats a latency in ns for people: "850ns", "3.1us", "1.20ms", "2.3s". */
void fmt_ns(char *buf, size_t len, double ns);

/* The directory holding the running oqb binary (bin/), or "." if unknown. */
const char *self_bin_dir(void);

/*
 * Replaces this process with program `prog` beside oqb (self_bin_dir),
 * with argv (argv[0] is replaced by prog's path); returns 2 with a message when it cannot.  For the
 * subcommands that are their own binary (`oqb crashtest`).
 */
int run_sibling(const char *prog, int argc, char **argv);

#endif
