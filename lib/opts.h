/*
 * opts.h - command-line options from one table.
 *
 * Each binary declares a table of {name, type, offset into its options
 * struct, default, bounds, help}; opts_parse() fills the struct from argv
 * ("--name value" or "--name=value", booleans as bare "--name"), checks
 * types and bounds, and opts_help() prints --help from the same rows, so
 * the two never drift apart.
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
	double min, max;            /* bounds for numbers (ignored if min > max) */
	const char *const *choices; /* OPT_ENUM: NULL-terminated names; stored as int index */
	const char *help;
};

/*
 * Applies defaults, then parses argv[1..].  Positional arguments are left
 * in order in argv[1..*npos] (if npos is not NULL; else they are errors).
 * Returns 0, 1 if --help was given (help already printed to stdout), or -1
 * with a message in err naming the option and what it expected (unknown
 * options get the nearest valid name suggested).
 */
int opts_parse(const struct opt *tab, void *base, int argc, char **argv, int *npos,
	       char *err, size_t errlen);

void opts_help(FILE *f, const char *prog, const char *summary, const struct opt *tab);

#endif
