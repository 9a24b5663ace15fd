/*
 * opts.c - parse argv and print --help from one option table.
 *
 * Both directions read the same rows, so a new option is one line and its
 * help, default and bounds can never disagree with what the parser does.
 * Defaults go through the same value parser as the command line, so a
 * default such as "5M" means exactly what "--rate 5M" would.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "opts.h"
#include "conf.h"   /* conf_nearest() */
#include "exitcodes.h"
#include "log.h"

#define OPTS_MAX_ROWS 256
#define HELP_COL_MAX 30     /* left column wider than this wraps */

static int has_bounds(const struct opt *o)
{
	/* A row that never sets min/max gets {0, 0}: that means "no bounds". */
	return o->min <= o->max && !(o->min == 0 && o->max == 0);
}

static int is_positional(const struct opt *o)
{
	return o->type == OPT_ARG || o->type == OPT_ARGS;
}

/* How many values a list row (OPT_LIST, OPT_ARGS) or OPT_ARG may take. */
static void count_bounds(const struct opt *o, int *lo, int *hi)
{
	*lo = o->type == OPT_LIST ? 0 : 1;
	*hi = o->type == OPT_ARG ? 1 : OPTS_LIST_MAX;
	if (!has_bounds(o))
		return;
	if (o->type != OPT_LIST && o->min >= 0)
		*lo = o->min > *hi ? *hi : (int)o->min;
	if (o->max < *hi)
		*hi = o->max < 0 ? 0 : (int)o->max;
}

/*
 * The value's name a help text opens with ("KEY=JSON: override ..."), its
 * length in *n, or NULL: capitals, digits, '_', '=', '.', then ": ".
 */
static const char *help_metavar(const char *help, size_t *n)
{
	size_t i = 0;

	if (help == NULL)
		return NULL;
	while (isupper((unsigned char)help[i]) || isdigit((unsigned char)help[i]) ||
	       help[i] == '_' || help[i] == '=' || help[i] == '.')
		i++;
	if (i == 0 || help[i] != ':' || help[i + 1] != ' ' || !isupper((unsigned char)help[0]))
		return NULL;
	*n = i;
	return help;
}

static void fmt_bounds(const struct opt *o, const char *sep, char *buf, size_t len)
{
	if (isinf(o->min) && isinf(o->max))
		snprintf(buf, len, "any");
	else if (isinf(o->max))
		snprintf(buf, len, ">= %.15g", o->min);
	else if (isinf(o->min))
		snprintf(buf, len, "<= %.15g", o->max);
	else
		snprintf(buf, len, "%.15g%s%.15g", o->min, sep, o->max);
}

static void join_choices(const char *const *c, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; c != NULL && c[i] != NULL && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", c[i]);
}

/*
 * Parses a number with an optional suffix: k/K, M, G, T are powers of
 * 1000, Ki, Mi, Gi, Ti powers of 1024.  Returns 0, or -1 with a reason.
 */
static int parse_scaled(const char *s, long double *out, const char **why)
{
	static const struct { const char *sfx; long double mul; } sfx[] = {
		{ "", 1.0L },
		{ "k", 1e3L }, { "K", 1e3L }, { "M", 1e6L }, { "G", 1e9L }, { "T", 1e12L },
		{ "Ki", 1024.0L }, { "Mi", 1048576.0L }, { "Gi", 1073741824.0L },
		{ "Ti", 1099511627776.0L },
	};
	long double v;
	char *end;

	*why = NULL;
	/* strtold would skip spaces and read "nan", "inf" and hex: none wanted. */
	if (*s == '\0' || isspace((unsigned char)*s))
		return -1;
	if (strncasecmp(s + (*s == '-' || *s == '+'), "0x", 2) == 0)
		return -1;
	errno = 0;
	v = strtold(s, &end);
	if (end == s || !isfinite(v))
		return -1;
	for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
		if (strcmp(end, sfx[i].sfx) == 0) {
			v *= sfx[i].mul;
			if (!isfinite(v))
				return -1;
			*out = v;
			return 0;
		}
	}
	*why = "unknown suffix; use k, M, G, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of 1024)";
	return -1;
}

/* Plain decimal digits with an optional sign: parsed exactly, no rounding. */
static int is_plain_integer(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!isdigit((unsigned char)*s))
		return 0;
	while (isdigit((unsigned char)*s))
		s++;
	return *s == '\0';
}

/*
 * Whether v is a whole number, allowing for the rounding of decimal
 * fractions ("0.032k" is 32 although 0.032 has no exact binary form);
 * if so, v is rounded to it.
 */
static int near_whole(long double *v)
{
	long double r = roundl(*v);

	if (fabsl(*v - r) > 1e-12L * (fabsl(r) > 1 ? fabsl(r) : 1))
		return 0;
	*v = r;
	return 1;
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on", NULL };
	static const char *const no[] = { "0", "false", "no", "off", NULL };

	for (size_t i = 0; yes[i] != NULL; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

static int range_error(const struct opt *o, const char *who, const char *val,
		       long double lo, long double hi, char *err, size_t errlen)
{
	char b[128];

	if (has_bounds(o))
		fmt_bounds(o, " to ", b, sizeof b);
	else
		snprintf(b, sizeof b, "%.0Lf to %.0Lf", lo, hi);
	if (has_bounds(o) && isinf(o->max))
		err_set(err, errlen, "%s: %s is out of range; expected at least %.15g",
		       who, val, o->min);
	else if (has_bounds(o) && isinf(o->min))
		err_set(err, errlen, "%s: %s is out of range; expected at most %.15g",
		       who, val, o->max);
	else
		err_set(err, errlen, "%s: %s is out of range; expected %s", who, val, b);
	return -1;
}

/*
 * Parses val for row o and stores it at base + o->off.  `who` names the
 * value in messages ("--workers", or "option table: --workers default").
 */
static int set_value(const struct opt *o, void *base, const char *val, const char *who,
		     char *err, size_t errlen)
{
	void *field = (char *)base + o->off;
	const char *why = NULL;
	long double v = 0;

	switch (o->type) {
	case OPT_STR:
	case OPT_ARG:
		*(const char **)field = val;
		return 0;
	case OPT_LIST:
	case OPT_ARGS: {
		struct opt_list *l = field;
		int lo, hi;

		count_bounds(o, &lo, &hi);
		if (l->n >= hi) {
			err_set(err, errlen, "%s: given more than %d times; at most %d", who, hi, hi);
			return -1;
		}
		l->v[l->n++] = val;
		return 0;
	}
	case OPT_BOOL: {
		int b;

		if (parse_bool(val, &b) != 0) {
			err_set(err, errlen, "%s: expected true or false (also 1/0, yes/no, on/off), "
			       "got \"%s\"", who, val);
			return -1;
		}
		*(int *)field = b;
		return 0;
	}
	case OPT_ENUM: {
		char list[512];
		const char *near;

		for (int i = 0; o->choices != NULL && o->choices[i] != NULL; i++) {
			if (strcmp(val, o->choices[i]) == 0) {
				*(int *)field = i;
				return 0;
			}
		}
		join_choices(o->choices, list, sizeof list);
		near = o->choices ? conf_nearest(val, o->choices, SIZE_MAX) : NULL;
		if (near != NULL)
			err_set(err, errlen, "%s: \"%s\" is not one of: %s; did you mean \"%s\"?",
			       who, val, list, near);
		else
			err_set(err, errlen, "%s: \"%s\" is not one of: %s", who, val, list);
		return -1;
	}
	case OPT_INT:
	case OPT_U64: {
		int is_u64 = o->type == OPT_U64;
		long double lo = is_u64 ? 0.0L : (long double)INT_MIN;
		long double hi = is_u64 ? 18446744073709551615.0L : (long double)INT_MAX;
		unsigned long long u = 0;
		long long s = 0;
		int exact = 0;

		if (is_u64 && val[0] == '-') {
			err_set(err, errlen, "%s: expected a non-negative integer, got \"%s\"", who, val);
			return -1;
		}
		/* Exact path first: a long double might not hold every uint64_t. */
		if (is_plain_integer(val)) {
			errno = 0;
			if (is_u64)
				u = strtoull(val, NULL, 10);
			else
				s = strtoll(val, NULL, 10);
			if (errno == ERANGE || (!is_u64 && (s < INT_MIN || s > INT_MAX))) {
				struct opt t = *o;

				t.min = t.max = 0;
				return range_error(&t, who, val, lo, hi, err, errlen);
			}
			v = is_u64 ? (long double)u : (long double)s;
			exact = 1;
		} else if (parse_scaled(val, &v, &why) != 0 || !near_whole(&v)) {
			err_set(err, errlen, "%s: expected %s, got \"%s\"%s%s", who,
			       is_u64 ? "a non-negative integer" : "an integer", val,
			       why ? "; " : "", why ? why : "");
			return -1;
		}
		if (v < lo || v > hi) {
			/* Beyond what the field can hold: name the type's limits. */
			struct opt t = *o;

			t.min = t.max = 0;
			return range_error(&t, who, val, lo, hi, err, errlen);
		}
		if (has_bounds(o) && (v < o->min || v > o->max))
			return range_error(o, who, val, lo, hi, err, errlen);
		if (is_u64)
			*(uint64_t *)field = exact ? (uint64_t)u : (uint64_t)v;
		else
			*(int *)field = exact ? (int)s : (int)v;
		return 0;
	}
	case OPT_DBL:
		if (parse_scaled(val, &v, &why) != 0) {
			err_set(err, errlen, "%s: expected a number, got \"%s\"%s%s", who, val,
			       why ? "; " : "", why ? why : "");
			return -1;
		}
		if (!isfinite((double)v)) {
			err_set(err, errlen, "%s: %s is too large for a double", who, val);
			return -1;
		}
		if (has_bounds(o) && (v < o->min || v > o->max))
			return range_error(o, who, val, 0, 0, err, errlen);
		*(double *)field = (double)v;
		return 0;
	}
	err_set(err, errlen, "%s: option table error: unknown type %d", who, (int)o->type);
	return -1;
}

static void set_zero(const struct opt *o, void *base)
{
	void *field = (char *)base + o->off;

	switch (o->type) {
	case OPT_STR:
	case OPT_ARG:
		*(const char **)field = NULL;
		break;
	case OPT_LIST:
	case OPT_ARGS:
		((struct opt_list *)field)->n = 0;
		break;
	case OPT_U64:
		*(uint64_t *)field = 0;
		break;
	case OPT_DBL:
		*(double *)field = 0;
		break;
	case OPT_INT:
	case OPT_BOOL:
	case OPT_ENUM:
		*(int *)field = 0;
		break;
	}
}

static const struct opt *find_opt(const struct opt *tab, const char *name, size_t len)
{
	for (size_t i = 0; tab[i].name != NULL; i++)
		if (!is_positional(&tab[i]) && strlen(tab[i].name) == len &&
		    strncmp(tab[i].name, name, len) == 0)
			return &tab[i];
	return NULL;
}

static int unknown_option(const struct opt *tab, const char *arg, const char *name,
			  size_t len, char *err, size_t errlen)
{
	const char *names[OPTS_MAX_ROWS + 1];
	char bad[128];
	const char *near;
	size_t n = 0;

	for (size_t i = 0; tab[i].name != NULL && n < OPTS_MAX_ROWS; i++)
		if (!is_positional(&tab[i]))
			names[n++] = tab[i].name;
	names[n++] = "help";
	snprintf(bad, sizeof bad, "%.*s", (int)(len < sizeof bad ? len : sizeof bad - 1), name);
	near = conf_nearest(bad, names, n);
	if (near != NULL)
		err_set(err, errlen, "unknown option %s; did you mean --%s?", arg, near);
	else
		err_set(err, errlen, "unknown option %s; see --help for the list", arg);
	return -1;
}

static const char *prog_name(char **argv)
{
	const char *p, *slash;

	if (argv == NULL || argv[0] == NULL || argv[0][0] == '\0')
		return "prog";
	p = argv[0];
	slash = strrchr(p, '/');
	return slash ? slash + 1 : p;
}

/*
 * Hands the positional arguments argv[1..npos] to the table's positional
 * rows in order; a required one missing or one left over is an error that
 * names it.  A table without positional rows leaves them to the caller.
 */
static int take_positionals(const struct opt *tab, void *base, char **argv, int npos,
			    char *err, size_t errlen)
{
	int next = 0, any = 0;

	for (size_t i = 0; tab[i].name != NULL; i++) {
		const struct opt *o = &tab[i];
		int lo, hi;

		if (!is_positional(o))
			continue;
		any = 1;
		count_bounds(o, &lo, &hi);
		if (npos - next < lo) {
			int h = o->help != NULL && *o->help;

			err_set(err, errlen, "missing %s%s%s%s", o->name, o->type == OPT_ARGS ? "..." : "",
				h ? ": " : "", h ? o->help : "");
			return -1;
		}
		for (int k = 0; k < hi && next < npos; k++, next++) {
			if (o->type == OPT_ARG) {
				*(const char **)((char *)base + o->off) = argv[1 + next];
			} else {
				struct opt_list *l = (struct opt_list *)((char *)base + o->off);

				l->v[l->n++] = argv[1 + next];
			}
		}
	}
	if (any && next < npos) {
		err_set(err, errlen, "unexpected argument \"%s\"; %s", argv[1 + next],
			next ? "too many arguments" : "this command takes no positional argument here");
		return -1;
	}
	return 0;
}

static int has_positional_rows(const struct opt *tab)
{
	for (size_t i = 0; tab[i].name != NULL; i++)
		if (is_positional(&tab[i]))
			return 1;
	return 0;
}

static int parse_tab(const struct opt *tab, const struct opts_cmd *cmd, void *base, int argc,
		     char **argv, int *npos, char *err, size_t errlen)
{
	char who[160];
	int pos = 0, only_pos = 0, rows_take = has_positional_rows(tab);
	size_t ntab;

	if (npos != NULL)
		*npos = 0;
	for (ntab = 0; tab[ntab].name != NULL; ntab++) {
		const struct opt *o = &tab[ntab];

		set_zero(o, base);
		if (o->def == NULL || o->type == OPT_LIST || o->type == OPT_ARGS)
			continue;
		/* A bad default is the program's bug; say which row. */
		snprintf(who, sizeof who, "option table: --%s default", o->name);
		if (set_value(o, base, o->def, who, err, errlen) != 0)
			return -1;
	}

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *name, *eq, *val;
		const struct opt *o;
		size_t len;

		if (arg == NULL)
			break;
		if (only_pos || arg[0] != '-' || arg[1] == '\0') {
			if (npos == NULL && !rows_take) {
				err_set(err, errlen, "unexpected argument \"%s\"; options look like "
				       "--name value (see --help)", arg);
				return -1;
			}
			argv[1 + pos++] = (char *)arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			if (cmd != NULL)
				opts_command_help(stdout, cmd);
			else
				opts_help(stdout, prog_name(argv), NULL, tab);
			return 1;
		}
		if (arg[1] != '-') {
			/* "-workers": a single dash is a common slip; say so precisely. */
			if (find_opt(tab, arg + 1, strlen(arg + 1)) != NULL) {
				err_set(err, errlen, "unknown option %s; long options take two dashes: -%s",
				       arg, arg);
				return -1;
			}
			return unknown_option(tab, arg, arg + 1, strlen(arg + 1), err, errlen);
		}

		name = arg + 2;
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		o = find_opt(tab, name, len);
		if (o == NULL && len > 3 && strncmp(name, "no-", 3) == 0 && eq == NULL) {
			const struct opt *b = find_opt(tab, name + 3, len - 3);

			if (b != NULL && b->type == OPT_BOOL) {
				*(int *)((char *)base + b->off) = 0;
				continue;
			}
		}
		if (o == NULL)
			return unknown_option(tab, arg, name, len, err, errlen);
		snprintf(who, sizeof who, "--%s", o->name);

		if (eq != NULL) {
			val = eq + 1;
		} else if (o->type == OPT_BOOL) {
			*(int *)((char *)base + o->off) = 1;
			continue;
		} else if (i + 1 >= argc || argv[i + 1] == NULL ||
			   (argv[i + 1][0] == '-' && argv[i + 1][1] == '-' && argv[i + 1][2] != '\0')) {
			/* "--rate --workers 4": the value was forgotten, not "--workers". */
			err_set(err, errlen, "%s: missing value; write %s VALUE or %s=VALUE",
			       who, who, who);
			return -1;
		} else {
			val = argv[++i];
		}
		if (set_value(o, base, val, who, err, errlen) != 0)
			return -1;
	}
	if (npos != NULL)
		*npos = pos;
	if (rows_take && take_positionals(tab, base, argv, pos, err, errlen) != 0)
		return -1;
	return 0;
}

int opts_parse(const struct opt *tab, void *base, int argc, char **argv, int *npos,
	       char *err, size_t errlen)
{
	return parse_tab(tab, NULL, base, argc, argv, npos, err, errlen);
}

int opts_command(const struct opts_cmd *c, void *base, int argc, char **argv)
{
	char err[2048];
	int npos = 0, r;

	r = parse_tab(c->tab, c, base, argc, argv, &npos, err, sizeof err);
	if (r == 1)
		return OQB_EXIT_OK;
	if (r == 0 && !has_positional_rows(c->tab) && npos > 0) {
		err_set(err, sizeof err, "unexpected argument \"%s\"; %s takes no positional argument",
			argv[1], c->prog);
		r = -1;
	}
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", c->prog, err);
		opts_usage(stderr, c->prog, c->tab);
		fprintf(stderr, "(%s --help lists every option)\n", c->prog);
		return OQB_EXIT_USAGE;
	}
	return OPTS_GO;
}

static const char *metavar(enum opt_type t)
{
	switch (t) {
	case OPT_INT:
	case OPT_U64:
		return " N";
	case OPT_DBL:
		return " X";
	case OPT_STR:
	case OPT_LIST:
		return " TEXT";
	case OPT_ENUM:
		return " NAME";
	case OPT_BOOL:
	case OPT_ARG:
	case OPT_ARGS:
		return "";
	}
	return " VALUE";
}

/*
 * The left column of a row: "--name N", "--set KEY=JSON" (a list row's
 * help may name its value), "CONFIG" or "HISTORY..." for positionals.
 * *help is where the help text starts once a named value is taken off it.
 */
static void row_left(const struct opt *o, char *buf, size_t len, const char **help)
{
	const char *mv;
	size_t n = 0;

	*help = o->help;
	if (o->type == OPT_ARG || o->type == OPT_ARGS) {
		snprintf(buf, len, "%s%s", o->name, o->type == OPT_ARGS ? "..." : "");
		return;
	}
	mv = o->type == OPT_LIST || o->type == OPT_STR ? help_metavar(o->help, &n) : NULL;
	if (mv != NULL) {
		snprintf(buf, len, "--%s %.*s", o->name, (int)n, mv);
		*help = o->help + n + 2;
		return;
	}
	snprintf(buf, len, "--%s%s", o->name, metavar(o->type));
}

void opts_usage(FILE *f, const char *prog, const struct opt *tab)
{
	fprintf(f, "usage: ");
	opts_synopsis(f, prog, tab);
	fputc('\n', f);
}

void opts_synopsis(FILE *f, const char *prog, const struct opt *tab)
{
	fprintf(f, "%s [options]", prog ? prog : "prog");
	for (size_t i = 0; tab[i].name != NULL; i++) {
		const struct opt *o = &tab[i];
		int lo, hi;

		if (!is_positional(o))
			continue;
		count_bounds(o, &lo, &hi);
		fprintf(f, " %s%s%s%s", lo ? "" : "[", o->name, o->type == OPT_ARGS ? "..." : "",
			lo ? "" : "]");
	}
}

/* Appends "; " (or nothing, first time) then the formatted text. */
static void note_add(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note_add(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used >= len)
		return;
	if (used > 0)
		used += (size_t)snprintf(buf + used, len - used, "; ");
	if (used >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* One aligned row: the left column, then its help and notes. */
static void help_row(FILE *f, size_t width, const char *left, const char *help, const char *notes)
{
	if (strlen(left) > width) {
		/* Too wide for the column: the help goes on its own line. */
		fprintf(f, "  %s\n  %-*s  ", left, (int)width, "");
	} else {
		fprintf(f, "  %-*s  ", (int)width, left);
	}
	if (help != NULL && *help && *notes)
		fprintf(f, "%s (%s)\n", help, notes);
	else if (*notes)
		fprintf(f, "(%s)\n", notes);
	else
		fprintf(f, "%s\n", help ? help : "");
}

static void help_body(FILE *f, const char *prog, const char *summary, const struct opt *tab)
{
	char left[160], notes[1024], tmp[512];
	const char *help;
	size_t width = strlen("-h, --help"), n;
	int npositional = 0;

	for (n = 0; tab[n].name != NULL; n++) {
		size_t w;

		row_left(&tab[n], left, sizeof left, &help);
		w = strlen(left);
		if (w > width && w <= HELP_COL_MAX)
			width = w;
		npositional += is_positional(&tab[n]);
	}
	/* The terminating row's help is the program's one-line summary. */
	if (summary == NULL)
		summary = tab[n].help;

	opts_usage(f, prog, tab);
	if (summary != NULL && *summary)
		fprintf(f, "%s\n", summary);
	if (npositional) {
		fprintf(f, "\narguments:\n");
		for (size_t i = 0; tab[i].name != NULL; i++) {
			const struct opt *o = &tab[i];
			int lo, hi;

			if (!is_positional(o))
				continue;
			row_left(o, left, sizeof left, &help);
			count_bounds(o, &lo, &hi);
			notes[0] = '\0';
			if (o->type == OPT_ARG && !lo)
				note_add(notes, sizeof notes, "optional%s%s", o->def ? "; default: " : "",
					 o->def ? o->def : "");
			else if (o->type == OPT_ARGS && (lo != 1 || hi != OPTS_LIST_MAX))
				note_add(notes, sizeof notes, "%d to %d of them", lo, hi);
			help_row(f, width, left, help, notes);
		}
	}
	fprintf(f, "\noptions:\n");
	for (size_t i = 0; tab[i].name != NULL; i++) {
		const struct opt *o = &tab[i];

		if (is_positional(o))
			continue;
		row_left(o, left, sizeof left, &help);
		notes[0] = '\0';
		switch (o->type) {
		case OPT_BOOL: {
			int b = 0;

			if (o->def != NULL && parse_bool(o->def, &b) != 0)
				b = 0;
			note_add(notes, sizeof notes, "default: %s", b ? "true" : "false");
			break;
		}
		case OPT_ENUM:
			if (o->def != NULL)
				note_add(notes, sizeof notes, "default: %s", o->def);
			else if (o->choices != NULL && o->choices[0] != NULL)
				note_add(notes, sizeof notes, "default: %s", o->choices[0]);
			join_choices(o->choices, tmp, sizeof tmp);
			note_add(notes, sizeof notes, "one of: %s", tmp);
			break;
		case OPT_STR:
			if (o->def != NULL)
				note_add(notes, sizeof notes, "default: %s", o->def);
			break;
		case OPT_LIST: {
			int lo, hi;

			count_bounds(o, &lo, &hi);
			if (hi < OPTS_LIST_MAX)
				note_add(notes, sizeof notes, "repeatable, at most %d times", hi);
			else
				note_add(notes, sizeof notes, "repeatable");
			break;
		}
		case OPT_INT:
		case OPT_U64:
		case OPT_DBL:
			note_add(notes, sizeof notes, "default: %s", o->def ? o->def : "0");
			if (has_bounds(o)) {
				fmt_bounds(o, "..", tmp, sizeof tmp);
				note_add(notes, sizeof notes, "range %s", tmp);
			}
			break;
		case OPT_ARG:
		case OPT_ARGS:
			break;
		}
		help_row(f, width, left, help, notes);
	}
	fprintf(f, "  %-*s  print this help and exit\n", (int)width, "-h, --help");
}

void opts_help(FILE *f, const char *prog, const char *summary, const struct opt *tab)
{
	help_body(f, prog, summary, tab);
}

void opts_command_help(FILE *f, const struct opts_cmd *c)
{
	help_body(f, c->prog, NULL, c->tab);
	exitcodes_help(f, c->exits);
}
