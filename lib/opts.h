/*
 * opts.h - command-line options from one table.
 *
 * Each binary declares a table of {name, type, offset into its options
 * struct, default, bounds, help}; opts_parse() fills the struct from argv
 * ("--name value" or "--name=value", booleans as bare "--name"), checks
 * types and bounds, and opts_help() prints --help from the same rows, so
 * the two never drift apart.
 *
 *   struct srv_opts { int workers; uint64_t ring; double rate; int transport;
 *                     const char *config; int durable; };
 *   static const char *const transports[] = { "shm", "verbs", NULL };
 *   static const struct opt srv_tab[] = {
 *       { "workers", OPT_INT, offsetof(struct srv_opts, workers), "4", 1, 64,
 *         NULL, "server worker threads" },
 *       { "ring", OPT_U64, offsetof(struct srv_opts, ring), "64Ki", 1, 1e9,
 *         NULL, "ring bytes per worker" },
 *       { "transport", OPT_ENUM, offsetof(struct srv_opts, transport), "shm",
 *         0, 0, transports, "how requests travel" },
 *       { NULL, .help = "oqbench server: serves one system over one transport" },
 *   };
 *
 * Values:
 *  - OPT_INT -> int, OPT_U64 -> uint64_t, OPT_DBL -> double, OPT_BOOL ->
 *    int 0/1, OPT_ENUM -> int index into .choices, OPT_STR -> const char *
 *    pointing into argv or at .def (not copied; argv outlives main's use).
 *  - Numbers take a suffix: k (or K), M, G, T are powers of 1000 and Ki,
 *    Mi, Gi, Ti powers of 1024, so "--rate 1.5M" is 1500000.  Integers
 *    must come out whole ("1.5" is refused for OPT_INT); OPT_U64 refuses
 *    negatives.  Bounds are inclusive and apply after the suffix.
 *  - Booleans: "--name" sets 1, "--no-name" sets 0, "--name=VALUE" takes
 *    true/false, 1/0, yes/no, on/off.
 *  - "--name VALUE" treats a VALUE that starts with "--" as a forgotten
 *    value (error); write "--name=--odd" for such a value.
 *  - "--" ends options; everything after it is positional.
 *
 * Repeatable options and positional arguments are rows too:
 *  - OPT_LIST -> struct opt_list: "--set A=1 --set B=2" appends each value
 *    in order.  Bounds, if set, cap how often it may be given (only .max
 *    counts).  Help shows it as repeatable.  Its help text (and an
 *    OPT_STR's) may open with "METAVAR: " (capitals, digits, '_', '=',
 *    '.') to name the value, as in "KEY=JSON: override a config key":
 *    --help then shows "--set KEY=JSON" and the rest of the text.
 *  - OPT_ARG -> const char *: one positional argument, taken in the
 *    table's order.  Its name is what usage shows ("CONFIG").  Required,
 *    unless its bounds are 0, 1 (then optional, .def or NULL when absent).
 *  - OPT_ARGS -> struct opt_list: the positional arguments left, the last
 *    positional row.  Bounds are how many (default: at least one).
 * A table with positional rows checks the count itself and names what is
 * missing ("missing CONFIG") or left over; one without keeps the old rule
 * (they are left in argv for the caller, or errors when npos is NULL).
 *
 * The row with name NULL ends a table; its .help, if set, is the one-line
 * summary that --help prints under the usage line.
 *
 * A command of bin/oqb is a struct opts_cmd: its name for messages, the
 * table and the exit statuses it can return (exitcodes.h).  opts_command()
 * parses with it and prints a bad argument's message with the usage line;
 * its --help ends with those exit statuses, from the one table.
 */
#ifndef OQB_OPTS_H
#define OQB_OPTS_H

#include <stddef.h>
#include <stdio.h>

enum opt_type { OPT_INT, OPT_U64, OPT_DBL, OPT_STR, OPT_BOOL, OPT_ENUM,
		OPT_LIST, OPT_ARG, OPT_ARGS };

/* Most values one OPT_LIST or OPT_ARGS row holds; more is an error naming it. */
#define OPTS_LIST_MAX 1024

/* The values of a repeatable option or of the trailing positionals, in order. */
struct opt_list {
	int n;
	const char *v[OPTS_LIST_MAX];   /* into argv (not copied) */
};

struct opt {
	const char *name;           /* long name without "--"; NULL ends the table */
	enum opt_type type;
	size_t off;                 /* offsetof in the options struct */
	const char *def;            /* default as text, or NULL (zero/NULL) */
	double min, max;            /* inclusive bounds for numbers; ignored if min > max
				       or both are 0 (row left them out).  Use
				       -INFINITY / INFINITY for one-sided bounds. */
	const char *const *choices; /* OPT_ENUM: NULL-terminated names; stored as int index */
	const char *help;
};

/*
 * Sets every field to its default (.def parsed like a command-line value;
 * zero / NULL when .def is NULL), then parses argv[1..].  Positional
 * arguments are left in order in argv[1..*npos] (if npos is not NULL; else
 * they are errors).
 * Returns 0, 1 if --help was given (help already printed to stdout), or -1
 * with a message in err naming the option and what it expected (unknown
 * options get the nearest valid name suggested).
 */
int opts_parse(const struct opt *tab, void *base, int argc, char **argv, int *npos,
	       char *err, size_t errlen);

/*
 * Prints "usage: PROG [options]", the summary (the end row's .help when
 * summary is NULL), then one aligned line per option:
 *   --name VALUE   help (default: X; range A..B; one of: a, b)
 * and a last line for -h, --help.
 */
void opts_help(FILE *f, const char *prog, const char *summary, const struct opt *tab);

/* A command: "oqb run", its table, the exit statuses it can return. */
struct opts_cmd {
	const char *prog;           /* as messages and usage name it: "oqb run" */
	const struct opt *tab;
	unsigned exits;             /* OQB_EXITS() set (exitcodes.h) */
};

/* opts_command()'s "go on": any other value is the exit status to return. */
#define OPTS_GO (-1)

/*
 * opts_parse() for a command.  Returns OPTS_GO when the command should go
 * on; 0 after --help (printed to stdout, ending with the exit statuses);
 * 2 (bad input) after a message on stderr naming the argument, then the
 * usage line.  Positional counts are checked from the table's rows.
 */
int opts_command(const struct opts_cmd *c, void *base, int argc, char **argv);

/* The command's --help: usage, summary, arguments, options, exit statuses. */
void opts_command_help(FILE *f, const struct opts_cmd *c);

/* "usage: PROG [options] CONFIG [MORE...]" and a newline. */
void opts_usage(FILE *f, const char *prog, const struct opt *tab);

/* The same without "usage: " and the newline: "PROG [options] CONFIG". */
void opts_synopsis(FILE *f, const char *prog, const struct opt *tab);

#endif
