/*
 * check_cmd.h - checking whole histories and run directories (check_cmd.c),
 * for `oqb check` and for `oqb run` when the config says "check": true.
 */
#ifndef OQB_CHECK_CMD_H
#define OQB_CHECK_CMD_H

#include <stdio.h>
#include <jansson.h>
#include "check.h"
#include "exitcodes.h"
#include "opts.h"

struct check_opts {
	struct check_budget budget;  /* per key */
	unsigned threads;            /* keys checked in parallel */
};

/*
 * Loads the history files (binary *.bin, or text), splits by key, checks
 * every key, prints violations (explained) and a summary line to report
 * (NULL: silent), and returns the verdict object ("oqbench.check/1":
 * verdict, per-key counts, time, peak memory, the first violations).
 * NULL with err if a file cannot be read.
 */
json_t *check_histories(char *const *paths, size_t npaths, const struct check_opts *co,
			FILE *report, char *err, size_t errlen);

/* Checks POINT_DIR/history/ (or the files directly in pdir) and writes
 * POINT_DIR/check.json.  NULL with err if there is no history or it is
 * unreadable. */
json_t *check_point_dir(const char *pdir, const struct check_opts *co, FILE *report,
			char *err, size_t errlen);

/* `oqb check ARGS`: the verb's main (argv[0] = "check"); returns the exit
 * status (lib/exitcodes.h): 0 ok, 1 a violation, 2 unreadable input, 3 a
 * key out of budget (verdict unknown), 5 the verdict could not be written.
 * Until issue 49, unknown was 2 and unreadable input 3. */
int check_main(int argc, char **argv);
extern const struct opts_cmd check_cmd;

#endif
