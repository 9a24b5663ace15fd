/*
 * conf.h - JSON config files with errors a person can act on.
 *
 * A config is checked against a schema before anything reads it: every key
 * must be known (an unknown key is an error that suggests the nearest valid
 * one), every value must have the right type and range.  Errors name the
 * file, the field path and what was expected, e.g.
 *   configs/x.json: server.wokers: unknown key; did you mean "workers"?
 *   configs/x.json: arrival.loads_ops[2]: expected a number > 0, got "fast"
 * After a successful check the getters below read values with defaults and
 * cannot fail.
 */
#ifndef OQB_CONF_H
#define OQB_CONF_H

#include <stddef.h>
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
	double min, max;             /* range for numbers; ignored if min > max */
	const char *const *choices;  /* NULL-terminated allowed strings, or NULL */
	const struct conf_key *sub;  /* schema of a CONF_OBJ value, or NULL */
	const char *help;            /* one line, for docs and errors */
};

/* Reads and parses a JSON file whose top level must be an object. */
int conf_load_file(const char *path, json_t **out, char *err, size_t errlen);

/*
 * Checks obj against schema.  `where` prefixes messages (a file name, or
 * "file: parent.path").  Returns 0, or -1 with one message in err.
 */
int conf_check(const json_t *obj, const struct conf_key *schema, const char *where,
	       char *err, size_t errlen);

/* The candidate nearest to `bad` by edit distance, or NULL if none is close. */
const char *conf_nearest(const char *bad, const char *const *cands, size_t n);

/* Getters: the value at `key` of obj, or def when absent. */
long long conf_int(const json_t *obj, const char *key, long long def);
double conf_num(const json_t *obj, const char *key, double def);
const char *conf_str(const json_t *obj, const char *key, const char *def);
int conf_bool(const json_t *obj, const char *key, int def);
/* Dotted path lookup ("server.backend.kind"); NULL if absent. */
const json_t *conf_path(const json_t *root, const char *dotted);

#endif
