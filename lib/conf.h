/*
 * conf.h - JSON config files with errors a person can act on.
 *
 * A config is checked against a schema before anything reads it: every key
 * must be known (an unknown key is an error that suggests the nearest valid
 * one), every value must have the right type and range.  Errors name the
 * file, the field path and what was expected, e.g.
 *   configs/x.json: server.wokers: unknown key; did you mean "workers"?
 *   configs/x.json: arrival.loads_ops[2]: expected a number, got string "fast"
 *   configs/x.json: server.workers: 0 is out of range; expected 1 to 64
 *   configs/x.json: transport: "shmm" is not one of: shm, verbs; did you mean "shm"?
 *   configs/x.json: workload.kind: missing (required)
 * After a successful check the getters below read values with defaults and
 * cannot fail.
 *
 * Decisions worth knowing:
 *  - CONF_INT rejects reals, even 2.0 ("expected an integer, got number
 *    2.0; write it as 2"): a config that says 2.0 workers is a typo.
 *  - A key present with the value null is a type error, not "absent".
 *  - CONF_NUM_OR_ARR rejects an empty array (a sweep over nothing).
 *  - Duplicate keys in a file are a load error (with line and column).
 */
#ifndef OQB_CONF_H
#define OQB_CONF_H

#include <stddef.h>
#include <stdint.h>   /* SIZE_MAX for conf_nearest() */
#include <stdio.h>
#include <jansson.h>

enum conf_type {
	CONF_INT,        /* JSON integer */
	CONF_NUM,        /* integer or real */
	CONF_STR,
	CONF_BOOL,
	CONF_OBJ,        /* checked against .sub if set, else any object */
	CONF_ARR_NUM,    /* array of numbers, each within [min, max] */
	CONF_ARR_STR,    /* array of strings, each in .choices if set */
	CONF_ANY,        /* anything; checked by the caller */
	CONF_NUM_OR_ARR, /* a number, or an array of numbers (sweeps) */
};

struct conf_key {
	const char *name;            /* NULL ends a schema */
	enum conf_type type;
	int required;
	double min, max;             /* range for numbers (inclusive); ignored if
					min > max or both are 0 (row left them out).
					Use -INFINITY / INFINITY for one-sided. */
	const char *const *choices;  /* NULL-terminated allowed strings, or NULL */
	const struct conf_key *sub;  /* schema of a CONF_OBJ value, or NULL */
	const char *help;            /* one line, for docs and errors */
};

/*
 * Reads and parses a JSON file whose top level must be an object.  Returns
 * 0 with a new reference in *out (json_decref it), or -1 with *out = NULL
 * and a message: "PATH: cannot open: <strerror>", "PATH:LINE:COL: <parse
 * error>" (with a hint for comments, single quotes, trailing commas), or
 * "PATH: the top level must be a JSON object".
 */
int conf_load_file(const char *path, json_t **out, char *err, size_t errlen);

/*
 * The same over len bytes in memory (a config received or generated, the
 * fuzz target); `name` stands for the file name in messages.
 */
int conf_load_buf(const char *name, const void *buf, size_t len, json_t **out,
		  char *err, size_t errlen);

/* conf_load_file() then conf_check(schema, where = path).  Returns 0 or -1. */
int conf_load_checked(const char *path, const struct conf_key *schema, json_t **out,
		      char *err, size_t errlen);

/*
 * Checks obj against schema, recursing into CONF_OBJ rows that have .sub.
 * `where` prefixes messages: a file name, or "file: parent.path" when obj
 * is a part of a bigger document (keys are then reported as
 * "file: parent.path.key").  Keys are checked in file order and the first
 * problem is reported.  Returns 0, or -1 with one message in err.
 */
int conf_check(const json_t *obj, const struct conf_key *schema, const char *where,
	       char *err, size_t errlen);

/*
 * The candidate nearest to `bad` by edit distance (Levenshtein plus
 * adjacent swaps, ignoring case), or NULL if none is close: the distance
 * must be at most max(2, strlen(bad)/3) and less than strlen(bad).  Failing
 * that, a candidate that `bad` (3+ chars) is a prefix of, if only one is.
 * Reads cands[0..n-1], stopping early at a NULL entry, so a NULL-terminated
 * list can be passed with n = SIZE_MAX.
 */
const char *conf_nearest(const char *bad, const char *const *cands, size_t n);

/*
 * Getters: the value at `key` of obj, or def when absent or of another
 * type.  key is a plain key or, if no such key exists, a dotted path as
 * for conf_path().  conf_int() truncates a real; conf_num() takes both.
 */
long long conf_int(const json_t *obj, const char *key, long long def);
double conf_num(const json_t *obj, const char *key, double def);
const char *conf_str(const json_t *obj, const char *key, const char *def);
int conf_bool(const json_t *obj, const char *key, int def);
/*
 * Dotted path lookup ("server.backend.kind", also "arrival.loads_ops[2]");
 * NULL if any part is absent or of the wrong kind.
 */
const json_t *conf_path(const json_t *root, const char *dotted);

/*
 * The numbers at key, for CONF_NUM_OR_ARR sweeps: a single number gives
 * one value, an array gives its elements.  Stores at most cap values in
 * out and returns how many there are (may exceed cap); 0 if absent or not
 * numbers.
 */
size_t conf_nums(const json_t *obj, const char *key, double *out, size_t cap);

/* Prints one line per key ("server.workers (integer, required): help; 1 to 64"). */
void conf_print_schema(FILE *f, const struct conf_key *schema);

#endif
