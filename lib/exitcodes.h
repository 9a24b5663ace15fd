/*
 * exitcodes.h - the one table of exit statuses every oqb command returns.
 *
 * A status means the same thing whichever command returns it, so a CI job
 * can branch on it without knowing the command:
 *
 *   0  ok            finished; same or better; every check passed
 *   1  failed        a regression, a failed check, a violation, a lost commit
 *   2  bad input     usage, an unknown option, a missing argument, or a
 *                    config or file that cannot be read or is invalid;
 *                    nothing was run
 *   3  inconclusive  the evidence decides neither way (more trials may)
 *   4  too noisy     the machine's canary spread too far to judge; nothing
 *                    was run
 *   5  error         could not finish: a process, host or tool failed, or
 *                    a result could not be written; there is no answer
 *
 * Each command says which of these it can return (a bit set of them, see
 * OQB_EXITS) and its --help prints those rows from this table, so a
 * command's help, `oqb --help`, `oqb exit-codes` and the docs' table
 * (docs/driver.md, "Exit codes"; a test compares them) cannot drift.
 */
#ifndef OQB_EXITCODES_H
#define OQB_EXITCODES_H

#include <stdio.h>

enum oqb_exit {
	OQB_EXIT_OK = 0,
	OQB_EXIT_FAIL = 1,
	OQB_EXIT_USAGE = 2,
	OQB_EXIT_INCONCLUSIVE = 3,
	OQB_EXIT_NOISY = 4,
	OQB_EXIT_ERROR = 5,
	OQB_EXIT_COUNT
};

/* A set of exit statuses, e.g. OQB_EXITS(OQB_EXIT_OK) | OQB_EXITS(OQB_EXIT_FAIL). */
#define OQB_EXITS(code) (1u << (code))
/* What every command can return: ok, bad input. */
#define OQB_EXITS_BASE (OQB_EXITS(OQB_EXIT_OK) | OQB_EXITS(OQB_EXIT_USAGE))

/* The status's short name ("bad input"), or NULL for a status outside the table. */
const char *exitcode_name(int code);

/* Its meaning in one line, or NULL. */
const char *exitcode_meaning(int code);

/*
 * Prints "exit status:" then one line per status in the set, in order:
 *   "  2  bad input: usage, an unknown option, ..."
 * Nothing when the set is empty.
 */
void exitcodes_help(FILE *f, unsigned set);

/* "0/1/2/5": the statuses of a set, joined by '/', into buf. */
void exitcodes_list(unsigned set, char *buf, size_t len);

#endif
