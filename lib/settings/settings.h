/*
 * settings.h - every setting a binary takes from an experiment config,
 * declared once as a row.
 *
 * A row says: the config key (section and key), its type, the binary's
 * default, its bounds and rule (power of two, multiple of 64), its unit,
 * which back end or transport owns it, which binaries take it, the flag
 * they take it as, and one line of help.  From the rows come:
 *  - the config check (harness/run/runconf.c builds its schema from them
 *    and refuses a key its back end does not own, a bound or a rule
 *    broken, before anything starts);
 *  - the binaries' option tables and --help (oqb-server, oqb-client:
 *    settings_opts);
 *  - the driver's translation of a config into flags (procargs.c walks
 *    the rows of a binary and emits --flag value for each key the config
 *    sets: settings_flag_value);
 *  - docs/config.md's key list (oqb-server --list-settings prints it, a
 *    test diffs it with the docs).
 *
 * The rows are data in one .def file per role, back end and transport
 * (server.def, client.def, be_rocksdb.def, tp_verbs.def, ...), as fio's
 * engines own their options.  They live here in lib/, not beside the back
 * end's code, so that the driver reads them without including or linking
 * any back end or transport: the driver never asks a binary for its rows
 * at check time (the server may be on another host, or not built yet for
 * an `oqb run --dry-run`), and a config must be refused before anything
 * starts.  A binary built from the same commit has the same rows;
 * `oqb ab` runs binaries of another build, whose flags are only ever
 * added to, never renamed.
 *
 * Row layout (the .def files):
 *   SETTING(field, section, key, type, default, min, max, rule, choices,
 *           unit, owner, binaries, flag, help)
 *  - field: the member of struct setting_vals that holds the value;
 *  - type: INT (int), U64 (uint64_t), NUM (double), STR (const char *),
 *    BOOL (config true/false, the flag bare: --xrc), BOOL01 (config
 *    true/false, the flag takes 0 or 1: --prefault 0), ENUM (config
 *    string, one of choices; held as the index);
 *  - default: the binary's, as text (NULL: none/false); the driver passes
 *    a flag only when the config sets its key, so this is the one default;
 *  - min, max: inclusive bounds of numbers (0, 0: none);
 *  - rule: NONE, POW2 or MUL64;
 *  - owner: "" (every kind), or the back-end kinds ("cache memcached") or
 *    transport ("verbs") that use the key; another kind refuses it;
 *  - binaries: SET_SERVER and/or SET_CLIENT.
 * Rules that span keys or processes (durable needs a pmem directory, sync
 * needs wal, delegation needs verbs) are in runconf.c, not here.
 */
#ifndef OQB_SETTINGS_H
#define OQB_SETTINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "opts.h"

enum set_type { SET_INT, SET_U64, SET_NUM, SET_STR, SET_BOOL, SET_BOOL01, SET_ENUM };
enum set_rule { SET_RULE_NONE, SET_RULE_POW2, SET_RULE_MUL64 };
enum { SET_SERVER = 1, SET_CLIENT = 2 };

#define SET_CTYPE_INT    int
#define SET_CTYPE_U64    uint64_t
#define SET_CTYPE_NUM    double
#define SET_CTYPE_STR    const char *
#define SET_CTYPE_BOOL   int
#define SET_CTYPE_BOOL01 int
#define SET_CTYPE_ENUM   int

/* Every row's value, as a binary holds them after parsing its flags. */
struct setting_vals {
#define SETTING(field, section, key, type, ...) SET_CTYPE_##type field;
#include "settings.def"
#undef SETTING
};

/*
 * The bounds of every INT row as compile-time constants, SETMIN_field and
 * SETMAX_field (SETMAX_workers is the workers row's max), for what must be
 * sized or checked at compile time by a row (shm's and verbs's per-worker
 * tables): changing the row changes them, so no copy is left behind.
 * Rows of other types have none (their bounds need not be integers).
 */
#define SET_BOUNDS_INT(f, lo, hi) SETMIN_##f = (lo), SETMAX_##f = (hi),
#define SET_BOUNDS_U64(f, lo, hi)
#define SET_BOUNDS_NUM(f, lo, hi)
#define SET_BOUNDS_STR(f, lo, hi)
#define SET_BOUNDS_BOOL(f, lo, hi)
#define SET_BOUNDS_BOOL01(f, lo, hi)
#define SET_BOUNDS_ENUM(f, lo, hi)
enum setting_int_bounds {
#define SETTING(field, section, key, type, def, min, max, ...) SET_BOUNDS_##type(field, min, max)
#include "settings.def"
#undef SETTING
	SET_BOUNDS_END_
};

struct setting {
	const char *field;           /* NULL ends the table */
	const char *section;         /* "server", "server.backend", "clients", "verbs" */
	const char *key;
	enum set_type type;
	const char *def;
	double min, max;
	enum set_rule rule;
	const char *const *choices;  /* SET_ENUM: NULL-terminated */
	const char *unit;
	const char *owner;
	unsigned binaries;
	const char *flag;            /* without "--" */
	const char *help;
	size_t off;                  /* offsetof(struct setting_vals, field) */
};

/* All rows, in .def order, ending with a row whose field is NULL. */
const struct setting *settings_rows(void);

/* The row of section.key, or NULL. */
const struct setting *settings_find(const char *section, const char *key);

/* Whether a row is used by kind (a back-end kind or a transport); rows
 * with owner "" are used by every kind. */
int settings_owned_by(const struct setting *s, const char *kind);

/*
 * Appends the option rows of binary `bin` (SET_SERVER, SET_CLIENT) to
 * out, their values at base + the row's offset (base: offsetof the struct
 * setting_vals in the binary's options struct).  Returns how many, or 0
 * when they would not fit cap.
 */
size_t settings_opts(unsigned bin, size_t base, struct opt *out, size_t cap);

/*
 * A binary's whole option table in out (cap entries): its own nown
 * options first (own, without their end row), then the rows of the
 * settings bin takes (settings_opts), then the end row.  0, or -1 when
 * they do not fit cap.
 */
int settings_table(const struct opt *own, size_t nown, unsigned bin, size_t base, struct opt *out, size_t cap);

/*
 * After opts_parse: the rules of binary bin's rows (power of two, ...).
 * Returns 0, or -1 with err naming the flag, the value and a valid one.
 */
int settings_check_vals(unsigned bin, const struct setting_vals *v, char *err, size_t errlen);

/*
 * The config check's part for one section object: each key of obj that is
 * a row must be owned by `kind` (NULL: no owner check) and keep its rule.
 * where names the section ("FILE: server.backend").  0, or -1 with err.
 * Keys that are not rows are left alone (the caller's schema has them).
 */
int settings_check_json(const char *section, const json_t *obj, const char *kind, const char *where,
			char *err, size_t errlen);

/*
 * The same for a value given to a back end directly (a unit test, an
 * embedding program): v against the bounds and rule of section.key.
 * err: "KEY V: out of range; expected MIN to MAX".  0 or -1.
 */
int settings_check_num(const char *section, const char *key, double v, char *err, size_t errlen);

/*
 * How config value v of row s goes on a command line: returns 0 (no flag:
 * a false BOOL), 1 (the bare flag) or 2 (the flag and buf), -1 when buf is
 * too small or v is of another type.
 */
int settings_flag_value(const struct setting *s, const json_t *v, char *buf, size_t len);

/*
 * The default of section.key as a number (the row's text: "15" is 15; a
 * true BOOL01 is 1), for code that needs it when a caller left the value
 * 0 (a unit test, an embedding program) instead of writing it again.  0
 * when the row is missing or has no default.
 */
double settings_default_num(const char *section, const char *key);

/*
 * An option row of a binary that takes section.key's value under its own
 * flag name and help (oqb-client's --expect-workers is the server's
 * workers; oqb-vfloor's --connect-timeout-s the clients' connect_s): the
 * row's type, default and bounds, the value at off.  0, or -1 when the
 * row is missing.
 */
int settings_opt_as(const char *section, const char *key, const char *flag, size_t off, const char *help,
		    struct opt *out);

/*
 * The values of the rows of section that `kind` owns alone (owner not
 * ""), as a JSON object keyed by the rows' keys (a back end's options in
 * its stats: be_rocksdb's).  A STR row without a value is left out.
 */
json_t *settings_json(const char *section, const char *kind, const struct setting_vals *v);

/* One line of help: "OWNER: help (UNIT)", built once per row. */
const char *settings_help(const struct setting *s);

/* The ENUM row's choice at index i, as a binary maps its value back. */
const char *settings_choice(const char *section, const char *key, int i);

/* docs/config.md's key list: a markdown table of every row. */
void settings_print_markdown(FILE *f);

#endif
