/*
 * settings.c - the rows of settings.h as one table, and what is made of
 * them: option rows, config checks, flag values, help and the docs' list.
 */
#include "settings.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NOCHOICES NULL
#define CHOICES(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const struct setting rows[] = {
#define SETTING(field_, section_, key_, type_, def_, min_, max_, rule_, choices_, unit_, owner_, bins_, flag_, help_) \
	{ #field_, section_, key_, SET_##type_, def_, min_, max_, SET_RULE_##rule_, choices_, unit_, owner_, bins_, \
	  flag_, help_, offsetof(struct setting_vals, field_) },
#include "settings.def"
#undef SETTING
	{ NULL, NULL, NULL, SET_INT, NULL, 0, 0, SET_RULE_NONE, NULL, NULL, NULL, 0, NULL, NULL, 0 }
};

#define NROWS (sizeof rows / sizeof rows[0] - 1)

const struct setting *settings_rows(void)
{
	return rows;
}

const struct setting *settings_find(const char *section, const char *key)
{
	for (size_t i = 0; i < NROWS; i++)
		if (!strcmp(rows[i].section, section) && !strcmp(rows[i].key, key))
			return &rows[i];
	return NULL;
}

int settings_owned_by(const struct setting *s, const char *kind)
{
	size_t n = strlen(kind);
	const char *p = s->owner;

	if (!*p)
		return 1;
	while (*p) {
		size_t w = strcspn(p, " ");
		if (w == n && !strncmp(p, kind, n))
			return 1;
		p += w;
		p += strspn(p, " ");
	}
	return 0;
}

const char *settings_help(const struct setting *s)
{
	static char *lines[NROWS];
	size_t i = (size_t)(s - rows);

	if (i >= NROWS)
		return s->help;
	if (!lines[i]) {
		size_t len = strlen(s->owner) + strlen(s->help) + strlen(s->unit) + 16;
		char *b = malloc(len);
		if (!b)
			return s->help;
		char who[128];
		snprintf(who, sizeof who, "%s", s->owner);
		for (char *c = who; *c; c++)
			if (*c == ' ')
				*c = '/';
		snprintf(b, len, "%s%s%s%s%s%s", who, *who ? ": " : "", s->help, *s->unit ? " (" : "", s->unit,
			 *s->unit ? ")" : "");
		lines[i] = b;
	}
	return lines[i];
}

/* Row s as an option named flag, its value at off. */
static struct opt row_opt(const struct setting *s, const char *flag, size_t off, const char *help)
{
	struct opt o = { .name = flag, .off = off, .def = s->def, .min = s->min, .max = s->max,
			 .choices = s->choices, .help = help };
	switch (s->type) {
	case SET_INT: o.type = OPT_INT; break;
	case SET_U64: o.type = OPT_U64; break;
	case SET_NUM: o.type = OPT_DBL; break;
	case SET_STR: o.type = OPT_STR; break;
	case SET_BOOL: o.type = OPT_BOOL; break;
	case SET_BOOL01: o.type = OPT_INT; o.min = 0; o.max = 1; break;
	case SET_ENUM: o.type = OPT_ENUM; break;
	}
	return o;
}

size_t settings_opts(unsigned bin, size_t base, struct opt *out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < NROWS; i++) {
		const struct setting *s = &rows[i];
		if (!(s->binaries & bin))
			continue;
		if (n == cap)
			return 0;
		out[n++] = row_opt(s, s->flag, base + s->off, settings_help(s));
	}
	return n;
}

int settings_opt_as(const char *section, const char *key, const char *flag, size_t off, const char *help,
		    struct opt *out)
{
	const struct setting *s = settings_find(section, key);

	if (!s)
		return -1;
	*out = row_opt(s, flag, off, help);
	return 0;
}

double settings_default_num(const char *section, const char *key)
{
	const struct setting *s = settings_find(section, key);

	return s && s->def ? strtod(s->def, NULL) : 0;
}

json_t *settings_json(const char *section, const char *kind, const struct setting_vals *v)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < NROWS; i++) {
		const struct setting *s = &rows[i];
		const char *p = (const char *)v + s->off;
		if (strcmp(s->section, section) || !*s->owner || !settings_owned_by(s, kind))
			continue;
		json_t *x = NULL;
		switch (s->type) {
		case SET_INT: x = json_integer(*(const int *)(const void *)p); break;
		case SET_U64: x = json_integer((json_int_t)*(const uint64_t *)(const void *)p); break;
		case SET_NUM: x = json_real(*(const double *)(const void *)p); break;
		case SET_STR: {
			const char *str = *(const char *const *)(const void *)p;
			x = str ? json_string(str) : NULL;
			break;
		}
		case SET_BOOL:
		case SET_BOOL01: x = json_boolean(*(const int *)(const void *)p); break;
		case SET_ENUM: {
			const char *c = settings_choice(section, s->key, *(const int *)(const void *)p);
			x = c ? json_string(c) : NULL;
			break;
		}
		}
		if (x)
			json_object_set_new(o, s->key, x);
	}
	return o;
}

static int is_pow2(double v)
{
	unsigned long long u = (unsigned long long)v;
	return v >= 1 && (double)u == v && (u & (u - 1)) == 0;
}

/* The rule of s for v: NULL when kept, else what it asks for, with a
 * valid value near v in hint. */
static const char *broken_rule(const struct setting *s, double v, char *hint, size_t len)
{
	if (s->rule == SET_RULE_POW2 && !is_pow2(v)) {
		double p = s->min > 1 ? s->min : 1;
		while (p * 2 <= v && p * 2 <= s->max)
			p *= 2;
		if (p * 2 <= s->max && p * 2 - v < v - p)
			p *= 2;   /* the nearer of the two around v */
		snprintf(hint, len, "%.0f", p);
		return "a power of two";
	}
	if (s->rule == SET_RULE_MUL64 && fmod(v, 64) != 0) {
		snprintf(hint, len, "%.0f", (floor(v / 64) + 1) * 64);
		return "a multiple of 64";
	}
	return NULL;
}

static double val_num(const struct setting *s, const struct setting_vals *v)
{
	const char *p = (const char *)v + s->off;
	switch (s->type) {
	case SET_INT: return *(const int *)(const void *)p;
	case SET_U64: return (double)*(const uint64_t *)(const void *)p;
	case SET_NUM: return *(const double *)(const void *)p;
	default: return 0;
	}
}

int settings_check_vals(unsigned bin, const struct setting_vals *v, char *err, size_t errlen)
{
	char hint[64];

	for (size_t i = 0; i < NROWS; i++) {
		const struct setting *s = &rows[i];
		if (!(s->binaries & bin) || s->rule == SET_RULE_NONE)
			continue;
		double x = val_num(s, v);
		const char *want = broken_rule(s, x, hint, sizeof hint);
		if (want) {
			snprintf(err, errlen, "--%s %.0f: expected %s from %.10g to %.10g, e.g. %s", s->flag, x, want,
				 s->min, s->max, hint);
			return -1;
		}
	}
	return 0;
}

/* The kinds that own s, for a message: "cache, memcached". */
static void owners_text(const char *owner, char *buf, size_t len)
{
	size_t o = 0;
	const char *p = owner;

	buf[0] = '\0';
	while (*p && o + 4 < len) {
		size_t w = strcspn(p, " ");
		o += (size_t)snprintf(buf + o, len - o, "%s\"%.*s\"", o ? ", " : "", (int)w, p);
		p += w;
		p += strspn(p, " ");
	}
}

int settings_check_json(const char *section, const json_t *obj, const char *kind, const char *where,
			char *err, size_t errlen)
{
	const char *key;
	json_t *val;
	char hint[64], who[256];

	json_object_foreach((json_t *)obj, key, val) {
		const struct setting *s = settings_find(section, key);
		if (!s)
			continue;
		if (kind && !settings_owned_by(s, kind)) {
			owners_text(s->owner, who, sizeof who);
			snprintf(err, errlen, "%s.%s: not used by kind \"%s\" (only by %s); remove it", where, key, kind,
				 who);
			return -1;
		}
		if (s->rule != SET_RULE_NONE && json_is_number(val)) {
			double x = json_number_value(val);
			const char *want = broken_rule(s, x, hint, sizeof hint);
			if (want) {
				snprintf(err, errlen, "%s.%s: %.10g is not %s; the server takes %s from %.10g to %.10g, "
					 "e.g. %s", where, key, x, want, want, s->min, s->max, hint);
				return -1;
			}
		}
	}
	return 0;
}

int settings_check_num(const char *section, const char *key, double v, char *err, size_t errlen)
{
	const struct setting *s = settings_find(section, key);
	char hint[64];

	if (!s)
		return 0;
	if (s->min < s->max && (v < s->min || v > s->max)) {
		snprintf(err, errlen, "%s %.10g: out of range; expected %.10g to %.10g", key, v, s->min, s->max);
		return -1;
	}
	const char *want = broken_rule(s, v, hint, sizeof hint);
	if (want) {
		snprintf(err, errlen, "%s %.10g: expected %s, e.g. %s", key, v, want, hint);
		return -1;
	}
	return 0;
}

int settings_flag_value(const struct setting *s, const json_t *v, char *buf, size_t len)
{
	int n;

	switch (s->type) {
	case SET_BOOL:
		if (!json_is_boolean(v))
			return -1;
		return json_is_true(v) ? 1 : 0;
	case SET_BOOL01:
		if (!json_is_boolean(v))
			return -1;
		n = snprintf(buf, len, "%d", json_is_true(v) ? 1 : 0);
		break;
	case SET_STR:
	case SET_ENUM:
		if (!json_is_string(v))
			return -1;
		n = snprintf(buf, len, "%s", json_string_value(v));
		break;
	default:
		if (!json_is_number(v))
			return -1;
		n = snprintf(buf, len, "%.10g", json_number_value(v));
		break;
	}
	return n < 0 || (size_t)n >= len ? -1 : 2;
}

const char *settings_choice(const char *section, const char *key, int i)
{
	const struct setting *s = settings_find(section, key);

	if (!s || !s->choices || i < 0)
		return NULL;
	for (int k = 0; s->choices[k]; k++)
		if (k == i)
			return s->choices[k];
	return NULL;
}

static const char *type_text(const struct setting *s, char *buf, size_t len)
{
	switch (s->type) {
	case SET_INT:
	case SET_U64: return "integer";
	case SET_NUM: return "number";
	case SET_STR: return "string";
	case SET_BOOL:
	case SET_BOOL01: return "bool";
	case SET_ENUM: {
		size_t o = 0;
		buf[0] = '\0';
		for (int k = 0; s->choices[k] && o + 8 < len; k++)
			o += (size_t)snprintf(buf + o, len - o, "%s`%s`", k ? " \\| " : "", s->choices[k]);
		return buf;
	}
	}
	return "";
}

static const char *def_text(const struct setting *s)
{
	if (s->type == SET_BOOL)
		return "false";
	if (s->type == SET_BOOL01)
		return s->def && !strcmp(s->def, "1") ? "true" : "false";
	return s->def ? s->def : "";
}

void settings_print_markdown(FILE *f)
{
	char t[256], bounds[128];

	fprintf(f, "| key | type | default | bounds | unit | for | binary | flag | meaning |\n");
	fprintf(f, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
	for (size_t i = 0; i < NROWS; i++) {
		const struct setting *s = &rows[i];
		const char *d = def_text(s);
		bounds[0] = '\0';
		if (s->min < s->max)
			snprintf(bounds, sizeof bounds, "%.10g..%.10g%s", s->min, s->max,
				 s->rule == SET_RULE_POW2 ? ", a power of two" :
				 s->rule == SET_RULE_MUL64 ? ", a multiple of 64" : "");
		fprintf(f, "| `%s.%s` | %s | %s%s%s | %s | %s | %s | %s%s%s | `--%s` | %s |\n", s->section, s->key,
			type_text(s, t, sizeof t), *d ? "`" : "", d, *d ? "`" : "", bounds, s->unit,
			*s->owner ? s->owner : "all", s->binaries & SET_SERVER ? "oqb-server" : "",
			(s->binaries & SET_SERVER) && (s->binaries & SET_CLIENT) ? ", " : "",
			s->binaries & SET_CLIENT ? "oqb-client" : "", s->flag, s->help);
	}
}

int settings_table(const struct opt *own, size_t nown, unsigned bin, size_t base, struct opt *out, size_t cap)
{
	if (cap < nown + 1)
		return -1;
	memcpy(out, own, nown * sizeof *own);
	size_t k = settings_opts(bin, base, out + nown, cap - 1 - nown);
	if (k == 0)
		return -1;
	out[nown + k] = (struct opt){ .name = NULL };
	return 0;
}
