/*
 * conf.c - load JSON config files and check them against a schema.
 *
 * The checker walks the object in file order, so the first message is
 * about the first problem a reader would meet.  Every message has the
 * shape "FILE: dotted.path[i]: what is wrong; what would be right", which
 * is why the path is threaded through the recursion rather than rebuilt.
 * Only the first problem is reported: fixing it often fixes the rest.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>
#include <sys/stat.h>

#include "conf.h"
#include "log.h"

#define CONF_PATH_MAX 512
#define CONF_NAME_MAX 64     /* edit distance is computed on this many chars */

/* ---------------------------------------------------------------- loading */

/* A hint for the JSON mistakes people make most when editing by hand. */
static const char *json_hint(const char *text)
{
	if (strstr(text, "near '/'") || strstr(text, "near '#'"))
		return " (JSON has no comments)";
	if (strstr(text, "near '''"))
		return " (JSON strings use double quotes)";
	if (strstr(text, "near '}'") || strstr(text, "near ']'"))
		return " (a trailing comma before it? JSON allows none)";
	if (strstr(text, "end of file"))
		return " (the file ends too early: a closing '}', ']' or '\"' missing?)";
	if (strstr(text, "unable to decode byte") || strstr(text, "invalid UTF-8"))
		return " (JSON files must be UTF-8: re-save the file as UTF-8)";
	if (strstr(text, "duplicate object key"))
		return " (a key may appear only once in an object: remove one)";
	if (strstr(text, "number overflow"))
		return " (a number too large for a double)";
	if (strstr(text, "maximum parsing depth"))
		return " (objects or arrays nested too deeply: a config needs only a few levels)";
	return "";
}

/*
 * What conf_load_file and conf_load_buf share once jansson has answered:
 * the parse error (with a hint) or the top-level check.
 */
static int load_finish(const char *name, json_t *root, const json_error_t *jerr, json_t **out,
		       char *err, size_t errlen)
{
	if (root == NULL) {
		if (jerr->position == 0 && strstr(jerr->text, "end of file"))
			err_set(err, errlen, "%s: file is empty; expected a JSON object {...}", name);
		else if (jerr->line > 0)
			err_set(err, errlen, "%s:%d:%d: %s%s", name, jerr->line, jerr->column,
			       jerr->text, json_hint(jerr->text));
		else
			err_set(err, errlen, "%s: %s", name, jerr->text);
		return -1;
	}
	if (!json_is_object(root)) {
		err_set(err, errlen, "%s: the top level must be a JSON object {...}, not %s",
		       name, json_is_array(root) ? "an array" : "a single value");
		json_decref(root);
		return -1;
	}
	*out = root;
	return 0;
}

int conf_load_file(const char *path, json_t **out, char *err, size_t errlen)
{
	json_error_t jerr;
	struct stat st;
	json_t *root;
	FILE *f;

	*out = NULL;
	if (path == NULL || *path == '\0') {
		err_set(err, errlen, "config: no file name given; pass the path of a JSON config");
		return -1;
	}
	f = fopen(path, "r");
	if (f == NULL) {
		err_set(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		err_set(err, errlen, "%s: cannot read: is a directory; expected a JSON file", path);
		return -1;
	}
	root = json_loadf(f, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	fclose(f);
	return load_finish(path, root, &jerr, out, err, errlen);
}

int conf_load_buf(const char *name, const void *buf, size_t len, json_t **out,
		  char *err, size_t errlen)
{
	json_error_t jerr;

	*out = NULL;
	if (name == NULL)
		name = "config";
	return load_finish(name, json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
					    &jerr), &jerr, out, err, errlen);
}

int conf_load_checked(const char *path, const struct conf_key *schema, json_t **out,
		      char *err, size_t errlen)
{
	if (conf_load_file(path, out, err, errlen) != 0)
		return -1;
	if (conf_check(*out, schema, path, err, errlen) != 0) {
		json_decref(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------- suggestions */

/*
 * Optimal-string-alignment distance (Levenshtein plus adjacent swaps),
 * ignoring case: "put_ratoi" is one edit from "put_ratio".
 */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t rows[3][CONF_NAME_MAX + 1];
	size_t *pp = rows[0], *p = rows[1], *c = rows[2];

	if (la > CONF_NAME_MAX)
		la = CONF_NAME_MAX;
	if (lb > CONF_NAME_MAX)
		lb = CONF_NAME_MAX;
	for (size_t j = 0; j <= lb; j++)
		p[j] = j;
	for (size_t i = 1; i <= la; i++) {
		int ca = tolower((unsigned char)a[i - 1]);

		c[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			int cb = tolower((unsigned char)b[j - 1]);
			size_t cost = ca != cb;
			size_t d = p[j] + 1;

			if (c[j - 1] + 1 < d)
				d = c[j - 1] + 1;
			if (p[j - 1] + cost < d)
				d = p[j - 1] + cost;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < d)
				d = pp[j - 2] + 1;
			c[j] = d;
		}
		size_t *t = pp;
		pp = p;
		p = c;
		c = t;
	}
	return p[lb];
}

const char *conf_nearest(const char *bad, const char *const *cands, size_t n)
{
	const char *best = NULL, *prefix = NULL;
	size_t bestd = SIZE_MAX, len, limit;
	int nprefix = 0;

	if (bad == NULL || cands == NULL || (len = strlen(bad)) == 0)
		return NULL;
	/* Short names tolerate 2 edits, longer ones a third of their length. */
	limit = len / 3 > 2 ? len / 3 : 2;
	for (size_t i = 0; i < n && cands[i] != NULL; i++) {
		size_t d = edit_distance(bad, cands[i]);

		if (d < bestd) {
			bestd = d;
			best = cands[i];
		}
		if (len >= 3 && strncasecmp(bad, cands[i], len) == 0) {
			prefix = cands[i];
			nprefix++;
		}
	}
	/* A match that replaced every character is no suggestion at all. */
	if (best != NULL && bestd <= limit && bestd < len)
		return best;
	/* "--work" for "--workers": an unambiguous prefix is a fair guess. */
	if (nprefix == 1)
		return prefix;
	return NULL;
}

/* ------------------------------------------------------------- checking */

struct where {
	const char *file;    /* "" if none */
	char path[CONF_PATH_MAX];
};

/* Formats "FILE: path: " (parts left out when empty) into buf. */
static const char *loc(const struct where *w, char *buf, size_t len)
{
	if (*w->file && *w->path)
		snprintf(buf, len, "%s: %s: ", w->file, w->path);
	else if (*w->file)
		snprintf(buf, len, "%s: ", w->file);
	else if (*w->path)
		snprintf(buf, len, "%s: ", w->path);
	else
		buf[0] = '\0';
	return buf;
}

static void path_push_key(struct where *w, size_t *saved, const char *key)
{
	size_t n = strlen(w->path);

	*saved = n;
	snprintf(w->path + n, sizeof w->path - n, "%s%s", n ? "." : "", key);
}

static void path_push_index(struct where *w, size_t *saved, size_t i)
{
	size_t n = strlen(w->path);

	*saved = n;
	snprintf(w->path + n, sizeof w->path - n, "[%zu]", i);
}

static void path_pop(struct where *w, size_t saved)
{
	w->path[saved] = '\0';
}

/* A real printed so it still looks like one: 2.0 stays "2.0", not "2". */
static void fmt_real(double d, char *buf, size_t len)
{
	snprintf(buf, len, "%.15g", d);
	if (isfinite(d) && strpbrk(buf, ".eE") == NULL && strlen(buf) + 2 < len)
		strcat(buf, ".0");
}

/* "string \"fast\"", "number 1.5", "boolean true", "null", "an object"... */
static void describe(const json_t *v, char *buf, size_t len)
{
	char num[64];

	switch (json_typeof(v)) {
	case JSON_STRING: {
		const char *s = json_string_value(v);
		size_t sl = strlen(s);
		int cut = sl > 40;
		char tmp[48];
		size_t k;

		/* Show control characters as '?' so the message stays one line. */
		for (k = 0; k < sl && k < 40; k++)
			tmp[k] = iscntrl((unsigned char)s[k]) ? '?' : s[k];
		tmp[k] = '\0';
		snprintf(buf, len, "string \"%s%s\"", tmp, cut ? "..." : "");
		break;
	}
	case JSON_INTEGER:
		snprintf(buf, len, "number %" JSON_INTEGER_FORMAT, json_integer_value(v));
		break;
	case JSON_REAL:
		fmt_real(json_real_value(v), num, sizeof num);
		snprintf(buf, len, "number %s", num);
		break;
	case JSON_TRUE:
		snprintf(buf, len, "boolean true");
		break;
	case JSON_FALSE:
		snprintf(buf, len, "boolean false");
		break;
	case JSON_NULL:
		snprintf(buf, len, "null");
		break;
	case JSON_OBJECT:
		snprintf(buf, len, "an object");
		break;
	case JSON_ARRAY:
		snprintf(buf, len, "an array");
		break;
	default:
		snprintf(buf, len, "an unknown JSON value");
		break;
	}
}

/* Joins a NULL-terminated (or n-long) list as "a, b, c". */
static void join(const char *const *list, size_t n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && list[i] != NULL && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", list[i]);
}

static int has_range(const struct conf_key *k)
{
	/* {0, 0} is what a row that never mentions bounds gets: no range. */
	return k->min <= k->max && !(k->min == 0 && k->max == 0);
}

static void fmt_range(const struct conf_key *k, char *buf, size_t len)
{
	if (isinf(k->max) && isinf(k->min))
		snprintf(buf, len, "any number");
	else if (isinf(k->max))
		snprintf(buf, len, "at least %.15g", k->min);
	else if (isinf(k->min))
		snprintf(buf, len, "at most %.15g", k->max);
	else
		snprintf(buf, len, "%.15g to %.15g", k->min, k->max);
}

/* Checks one number (v already known to be integer or real) for a row. */
static int check_number(const json_t *v, const struct conf_key *k, int want_int,
			const struct where *w, char *err, size_t errlen)
{
	char lb[CONF_PATH_MAX + 256], what[96], range[96];
	double d = json_number_value(v);

	if (want_int && json_is_real(v)) {
		fmt_real(d, what, sizeof what);
		if (isfinite(d) && d == floor(d) && fabs(d) < 9e15)
			err_set(err, errlen, "%sexpected an integer, got %s; write it as %.0f",
			       loc(w, lb, sizeof lb), what, d);
		else
			err_set(err, errlen, "%sexpected an integer, got number %s",
			       loc(w, lb, sizeof lb), what);
		return -1;
	}
	if (has_range(k) && (d < k->min || d > k->max)) {
		if (json_is_integer(v))
			snprintf(what, sizeof what, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		else
			fmt_real(d, what, sizeof what);
		fmt_range(k, range, sizeof range);
		err_set(err, errlen, "%s%s is out of range; expected %s",
		       loc(w, lb, sizeof lb), what, range);
		return -1;
	}
	return 0;
}

static int check_choice(const char *s, const struct conf_key *k, const struct where *w,
			char *err, size_t errlen)
{
	char lb[CONF_PATH_MAX + 256], list[512];
	const char *near;

	if (k->choices == NULL)
		return 0;
	for (size_t i = 0; k->choices[i] != NULL; i++)
		if (strcmp(s, k->choices[i]) == 0)
			return 0;
	join(k->choices, SIZE_MAX, list, sizeof list);
	near = conf_nearest(s, k->choices, SIZE_MAX);
	if (near != NULL)
		err_set(err, errlen, "%s\"%s\" is not one of: %s; did you mean \"%s\"?",
		       loc(w, lb, sizeof lb), s, list, near);
	else
		err_set(err, errlen, "%s\"%s\" is not one of: %s", loc(w, lb, sizeof lb), s, list);
	return -1;
}

static int type_error(const json_t *v, const char *expected, const struct where *w,
		      char *err, size_t errlen)
{
	char lb[CONF_PATH_MAX + 256], got[96];

	describe(v, got, sizeof got);
	err_set(err, errlen, "%sexpected %s, got %s", loc(w, lb, sizeof lb), expected, got);
	return -1;
}

static int check_object(const json_t *obj, const struct conf_key *schema, struct where *w,
			char *err, size_t errlen);

/* Checks each element of an array v against row k; elem says what each must be. */
static int check_array_elems(const json_t *v, const struct conf_key *k, int strings,
			     struct where *w, char *err, size_t errlen)
{
	size_t i, saved;
	const json_t *e;

	json_array_foreach(v, i, e) {
		int rc;

		path_push_index(w, &saved, i);
		if (strings)
			rc = json_is_string(e) ? check_choice(json_string_value(e), k, w, err, errlen)
					       : type_error(e, "a string", w, err, errlen);
		else
			rc = json_is_number(e) ? check_number(e, k, 0, w, err, errlen)
					       : type_error(e, "a number", w, err, errlen);
		path_pop(w, saved);
		if (rc != 0)
			return -1;
	}
	return 0;
}

static int check_value(const json_t *v, const struct conf_key *k, struct where *w,
		       char *err, size_t errlen)
{
	char lb[CONF_PATH_MAX + 256];

	switch (k->type) {
	case CONF_INT:
		if (!json_is_number(v))
			return type_error(v, "an integer", w, err, errlen);
		return check_number(v, k, 1, w, err, errlen);
	case CONF_NUM:
		if (!json_is_number(v))
			return type_error(v, "a number", w, err, errlen);
		return check_number(v, k, 0, w, err, errlen);
	case CONF_STR:
		if (!json_is_string(v))
			return type_error(v, "a string", w, err, errlen);
		return check_choice(json_string_value(v), k, w, err, errlen);
	case CONF_BOOL:
		if (!json_is_boolean(v))
			return type_error(v, "true or false", w, err, errlen);
		return 0;
	case CONF_OBJ:
		if (!json_is_object(v))
			return type_error(v, "an object {...}", w, err, errlen);
		return k->sub ? check_object(v, k->sub, w, err, errlen) : 0;
	case CONF_ARR_NUM:
		if (!json_is_array(v))
			return type_error(v, "an array of numbers", w, err, errlen);
		return check_array_elems(v, k, 0, w, err, errlen);
	case CONF_ARR_STR:
		if (!json_is_array(v))
			return type_error(v, "an array of strings", w, err, errlen);
		return check_array_elems(v, k, 1, w, err, errlen);
	case CONF_NUM_OR_ARR:
		if (json_is_number(v))
			return check_number(v, k, 0, w, err, errlen);
		if (!json_is_array(v))
			return type_error(v, "a number or an array of numbers", w, err, errlen);
		if (json_array_size(v) == 0) {
			/* A sweep over nothing is always a mistake. */
			err_set(err, errlen, "%sexpected a number or a non-empty array of numbers, "
			       "got an empty array", loc(w, lb, sizeof lb));
			return -1;
		}
		return check_array_elems(v, k, 0, w, err, errlen);
	case CONF_ANY:
		return 0;
	}
	err_set(err, errlen, "%sschema error: row has unknown type %d", loc(w, lb, sizeof lb),
	       (int)k->type);
	return -1;
}

static int check_object(const json_t *obj, const struct conf_key *schema, struct where *w,
			char *err, size_t errlen)
{
	char lb[CONF_PATH_MAX + 256], list[1024];
	const char *names[256];
	size_t nnames = 0, saved;
	const char *key;
	const json_t *v;

	while (schema[nnames].name != NULL && nnames < sizeof names / sizeof names[0]) {
		names[nnames] = schema[nnames].name;
		nnames++;
	}

	/* File order first, so the first error is the first one a reader meets. */
	json_object_foreach((json_t *)obj, key, v) {
		const struct conf_key *k = NULL;
		int rc;

		for (size_t i = 0; schema[i].name != NULL; i++)
			if (strcmp(schema[i].name, key) == 0) {
				k = &schema[i];
				break;
			}
		path_push_key(w, &saved, key);
		if (k == NULL) {
			const char *near = conf_nearest(key, names, nnames);

			if (near != NULL) {
				err_set(err, errlen, "%sunknown key; did you mean \"%s\"?",
				       loc(w, lb, sizeof lb), near);
			} else if (nnames == 0) {
				err_set(err, errlen, "%sunknown key; this object takes no keys",
				       loc(w, lb, sizeof lb));
			} else {
				join(names, nnames, list, sizeof list);
				err_set(err, errlen, "%sunknown key; valid keys are: %s",
				       loc(w, lb, sizeof lb), list);
			}
			return -1;
		}
		rc = check_value(v, k, w, err, errlen);
		path_pop(w, saved);
		if (rc != 0)
			return -1;
	}

	for (size_t i = 0; schema[i].name != NULL; i++) {
		if (!schema[i].required || json_object_get(obj, schema[i].name) != NULL)
			continue;
		path_push_key(w, &saved, schema[i].name);
		if (schema[i].help != NULL)
			err_set(err, errlen, "%smissing (required); add it: %s",
			       loc(w, lb, sizeof lb), schema[i].help);
		else
			err_set(err, errlen, "%smissing (required)", loc(w, lb, sizeof lb));
		return -1;
	}
	return 0;
}

int conf_check(const json_t *obj, const struct conf_key *schema, const char *where,
	       char *err, size_t errlen)
{
	char filebuf[CONF_PATH_MAX];
	struct where w;
	const char *sep;

	/* "file: parent.path" splits at the last ": " into file and path. */
	w.file = "";
	w.path[0] = '\0';
	if (where != NULL) {
		sep = NULL;
		for (const char *p = strstr(where, ": "); p != NULL; p = strstr(p + 1, ": "))
			sep = p;
		if (sep != NULL) {
			size_t n = (size_t)(sep - where);

			if (n >= sizeof filebuf)
				n = sizeof filebuf - 1;
			memcpy(filebuf, where, n);
			filebuf[n] = '\0';
			w.file = filebuf;
			snprintf(w.path, sizeof w.path, "%s", sep + 2);
		} else {
			w.file = where;
		}
	}
	if (schema == NULL) {
		err_set(err, errlen, "%s: internal error: no schema given to conf_check", w.file);
		return -1;
	}
	if (obj == NULL || !json_is_object(obj)) {
		if (obj == NULL) {
			char lb[CONF_PATH_MAX + 256];

			err_set(err, errlen, "%sexpected an object {...}, got nothing",
			       loc(&w, lb, sizeof lb));
			return -1;
		}
		return type_error(obj, "an object {...}", &w, err, errlen);
	}
	return check_object(obj, schema, &w, err, errlen);
}

/* -------------------------------------------------------------- getters */

const json_t *conf_path(const json_t *root, const char *dotted)
{
	const json_t *cur = root;
	const char *p = dotted;
	char key[256];

	if (root == NULL || dotted == NULL)
		return NULL;
	while (*p) {
		size_t n = strcspn(p, ".[");

		if (n > 0) {
			if (n >= sizeof key || !json_is_object(cur))
				return NULL;
			memcpy(key, p, n);
			key[n] = '\0';
			cur = json_object_get(cur, key);
			if (cur == NULL)
				return NULL;
			p += n;
		}
		while (*p == '[') {
			char *end;
			unsigned long long idx;

			if (!isdigit((unsigned char)p[1]))
				return NULL;
			errno = 0;
			idx = strtoull(p + 1, &end, 10);
			if (errno != 0 || *end != ']' || !json_is_array(cur))
				return NULL;
			cur = json_array_get(cur, (size_t)idx);
			if (cur == NULL)
				return NULL;
			p = end + 1;
		}
		if (*p == '.') {
			p++;
			if (*p == '\0' || *p == '.')
				return NULL;
		} else if (*p != '\0') {
			return NULL;
		}
	}
	return cur;
}

/* A plain key first (keys may contain dots), then a dotted path. */
static const json_t *lookup(const json_t *obj, const char *key)
{
	const json_t *v;

	if (obj == NULL || key == NULL || !json_is_object(obj))
		return NULL;
	v = json_object_get(obj, key);
	if (v == NULL && strpbrk(key, ".[") != NULL)
		v = conf_path(obj, key);
	return v;
}

long long conf_int(const json_t *obj, const char *key, long long def)
{
	const json_t *v = lookup(obj, key);

	if (json_is_integer(v))
		return (long long)json_integer_value(v);
	if (json_is_real(v)) {
		double d = json_real_value(v);

		if (isfinite(d) && d >= -9.2e18 && d <= 9.2e18)
			return (long long)d;
	}
	return def;
}

double conf_num(const json_t *obj, const char *key, double def)
{
	const json_t *v = lookup(obj, key);

	return json_is_number(v) ? json_number_value(v) : def;
}

const char *conf_str(const json_t *obj, const char *key, const char *def)
{
	const json_t *v = lookup(obj, key);

	return json_is_string(v) ? json_string_value(v) : def;
}

int conf_bool(const json_t *obj, const char *key, int def)
{
	const json_t *v = lookup(obj, key);

	return json_is_boolean(v) ? json_is_true(v) : def;
}

size_t conf_nums(const json_t *obj, const char *key, double *out, size_t cap)
{
	const json_t *v = lookup(obj, key), *e;
	size_t i, n = 0;

	if (json_is_number(v)) {
		if (cap > 0)
			out[0] = json_number_value(v);
		return 1;
	}
	if (!json_is_array(v))
		return 0;
	json_array_foreach(v, i, e) {
		if (!json_is_number(e))
			return 0;
		if (n < cap)
			out[n] = json_number_value(e);
		n++;
	}
	return n;
}

/* ------------------------------------------------------------------ docs */

static const char *type_name(enum conf_type t)
{
	switch (t) {
	case CONF_INT: return "integer";
	case CONF_NUM: return "number";
	case CONF_STR: return "string";
	case CONF_BOOL: return "boolean";
	case CONF_OBJ: return "object";
	case CONF_ARR_NUM: return "array of numbers";
	case CONF_ARR_STR: return "array of strings";
	case CONF_ANY: return "any";
	case CONF_NUM_OR_ARR: return "number or array of numbers";
	}
	return "?";
}

static void print_schema(FILE *f, const struct conf_key *schema, const char *prefix, int depth)
{
	char path[CONF_PATH_MAX], range[96], list[512];

	if (depth > 16)   /* a schema that contains itself would never end */
		return;
	for (size_t i = 0; schema[i].name != NULL; i++) {
		const struct conf_key *k = &schema[i];

		snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", k->name);
		fprintf(f, "%s (%s%s)", path, type_name(k->type), k->required ? ", required" : "");
		if (k->help != NULL)
			fprintf(f, ": %s", k->help);
		if (has_range(k) && k->type != CONF_STR && k->type != CONF_BOOL &&
		    k->type != CONF_OBJ && k->type != CONF_ARR_STR) {
			fmt_range(k, range, sizeof range);
			fprintf(f, "; %s", range);
		}
		if (k->choices != NULL) {
			join(k->choices, SIZE_MAX, list, sizeof list);
			fprintf(f, "; one of: %s", list);
		}
		fputc('\n', f);
		if (k->type == CONF_OBJ && k->sub != NULL)
			print_schema(f, k->sub, path, depth + 1);
	}
}

void conf_print_schema(FILE *f, const struct conf_key *schema)
{
	if (f != NULL && schema != NULL)
		print_schema(f, schema, "", 0);
}
