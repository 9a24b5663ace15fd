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
 * The row with name NULL ends a table; its .help, if set, is the one-line
 * summary that --help prints under the usage line.
 */
#ifndef OQB_OPTS_H
#define OQB_OPTS_H

#include <stddef.h>
#include <stdio.h>

enum opt_type { OPT_INT, OPT_U64, OPT_DBL, OPT_STR, OPT_BOOL, OPT_ENUM };

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

#endif
