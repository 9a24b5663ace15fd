/*
 * runconf_set.c - changes to a config before it is checked: `--set
 * KEY=VALUE` and `--set-file FILE` (an overlay).
 *
 * A key is a path to any leaf of the config: object keys joined by dots,
 * an array element by its index in brackets.
 *
 *   key   := part ("." part)*
 *   part  := name ("[" index "]")*
 *
 * e.g. duration_s, arrival.loads_ops.search.start_ops, hosts.clients[2],
 * sweep.values[0].  The path is checked against the schema as far as the
 * schema goes (a misspelt name is refused with the nearest valid one);
 * below a key the schema leaves to its owner (arrival.loads_ops, workload,
 * plugin options) and inside array elements any name goes, and the owner's
 * check names a wrong one when the config is parsed.  Missing parent
 * objects are made; an index must name an element that exists (the fix,
 * giving the whole array, is in the message).
 *
 * An overlay file is JSON: {"about": "what it is for", "set": {...}}.
 * "set" is a merge patch (RFC 7386's rule): an object merges into the
 * object at its place key by key, null removes the key, any other value
 * replaces what is there.  Every key of the patch is checked as a --set
 * key would be, so a typo in the file fails naming the file and the key.
 * `--set @FILE` is the same as `--set-file FILE`.
 */
#include "runconf.h"
#include "conf.h"
#include "log.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STEPS 32

struct step {
	char name[128];   /* "" for an index step */
	long index;       /* >= 0 for an index step */
};

/* Splits key into steps; -1 with err when it does not follow the grammar. */
static int split_key(const char *key, const char *label, struct step *st, size_t *nst,
		     char *err, size_t errlen)
{
	const char *p = key;
	size_t n = 0;

	if (!*key) {
		err_set(err, errlen, "%s: empty key", label);
		return -1;
	}
	for (;;) {
		size_t len = strcspn(p, ".[");
		if (len == 0 || len >= sizeof st[0].name || n >= MAX_STEPS)
			goto bad;
		memcpy(st[n].name, p, len);
		st[n].name[len] = '\0';
		st[n++].index = -1;
		p += len;
		while (*p == '[') {
			char *end;
			long i;
			if (!isdigit((unsigned char)p[1]))
				goto bad;
			i = strtol(p + 1, &end, 10);
			if (*end != ']' || i > 1000000 || n >= MAX_STEPS)
				goto bad;
			st[n].name[0] = '\0';
			st[n++].index = i;
			p = end + 1;
		}
		if (!*p)
			break;
		if (*p != '.' || !p[1])
			goto bad;
		p++;
	}
	*nst = n;
	return 0;
bad:
	err_set(err, errlen, "%s: \"%s\" is not a key path: object keys joined by dots, an array "
		"element by its index, e.g. arrival.loads_ops.search.start_ops or hosts.clients[0]",
		label, key);
	return -1;
}

int runconf_check_key(const char *key, const char *label, char *err, size_t errlen)
{
	const struct conf_key *schema = runconf_schema();
	struct step st[MAX_STEPS];
	char done[512] = "";
	size_t n, i;

	if (split_key(key, label, st, &n, err, errlen) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		const struct conf_key *k;
		if (st[i].index >= 0)
			return 0;   /* inside an array: the owner checks its elements */
		for (k = schema; k->name && strcmp(k->name, st[i].name) != 0; k++)
			;
		if (!k->name) {
			const char *names[64];
			size_t nn = 0;
			for (k = schema; k->name && nn < 64; k++)
				names[nn++] = k->name;
			const char *near = conf_nearest(st[i].name, names, nn);
			err_set(err, errlen, "%s: unknown key \"%s%s\"%s%s%s%s (oqb config-keys lists them)", label,
				done, st[i].name, near ? "; did you mean \"" : "", near ? done : "",
				near ? near : "", near ? "\"?" : "");
			return -1;
		}
		snprintf(done + strlen(done), sizeof done - strlen(done), "%.127s.", st[i].name);
		if (i + 1 == n || st[i + 1].index >= 0)
			return 0;
		if (k->type == CONF_ANY || (k->type == CONF_OBJ && !k->sub))
			return 0;   /* free-form below: its owner checks */
		if (k->type != CONF_OBJ) {
			err_set(err, errlen, "%s: \"%.*s\" is not an object, so it has no key \"%s\"", label,
				(int)strlen(done) - 1, done, st[i + 1].name);
			return -1;
		}
		schema = k->sub;
	}
	return 0;
}

/* What v is, for messages: "an object", "a number"... */
static const char *kind_of(const json_t *v)
{
	if (json_is_object(v))
		return "an object";
	if (json_is_array(v))
		return "an array";
	if (json_is_string(v))
		return "a string";
	if (json_is_number(v))
		return "a number";
	return "true, false or null";
}

/* The path of steps [0, n) as the user wrote it, for messages. */
static void path_text(const struct step *st, size_t n, char *out, size_t outlen)
{
	size_t i, o = 0;

	out[0] = '\0';
	for (i = 0; i < n && o < outlen; i++) {
		if (st[i].index >= 0)
			o += (size_t)snprintf(out + o, outlen - o, "[%ld]", st[i].index);
		else
			o += (size_t)snprintf(out + o, outlen - o, "%s%.127s", i ? "." : "", st[i].name);
	}
}

int runconf_put(json_t *root, const char *key, json_t *value, const char *label,
		    char *err, size_t errlen)
{
	struct step st[MAX_STEPS];
	char at[512];
	json_t *cur = root;
	size_t n, i;

	if (split_key(key, label, st, &n, err, errlen) < 0)
		goto fail;
	for (i = 0; i + 1 <= n; i++) {
		int last = i + 1 == n;
		json_t *next;
		path_text(st, i, at, sizeof at);
		if (st[i].index >= 0) {
			if (!json_is_array(cur)) {
				err_set(err, errlen, "%s: \"%s\" is %s in the config, not an array, so it has no "
					"element [%ld]", label, at, kind_of(cur), st[i].index);
				goto fail;
			}
			if ((size_t)st[i].index >= json_array_size(cur)) {
				err_set(err, errlen, "%s: \"%s\" has %zu element%s, so there is no [%ld]; to make "
					"it longer give the whole array, e.g. --set '%s=[...]'", label, at,
					json_array_size(cur), json_array_size(cur) == 1 ? "" : "s", st[i].index, at);
				goto fail;
			}
			if (last) {
				if (value)
					json_array_set_new(cur, (size_t)st[i].index, value);
				else
					json_array_remove(cur, (size_t)st[i].index);
				return 0;
			}
			cur = json_array_get(cur, (size_t)st[i].index);
			continue;
		}
		if (!json_is_object(cur)) {
			err_set(err, errlen, "%s: \"%s\" is %s in the config, not an object, so it has no key "
				"\"%s\"; give \"%s\" whole as an object", label, at,
				kind_of(cur), st[i].name, at);
			goto fail;
		}
		if (last) {
			if (value)
				json_object_set_new(cur, st[i].name, value);
			else
				json_object_del(cur, st[i].name);
			return 0;
		}
		next = json_object_get(cur, st[i].name);
		if (!next) {
			if (!value)
				return 0;   /* removing what is not there */
			if (st[i + 1].index >= 0) {
				path_text(st, i + 1, at, sizeof at);
				err_set(err, errlen, "%s: \"%s\" is not in the config, so it has no element "
					"[%ld]; give the whole array, e.g. --set '%s=[...]'", label, at,
					st[i + 1].index, at);
				goto fail;
			}
			next = json_object();
			json_object_set_new(cur, st[i].name, next);
		}
		cur = next;
	}
	return 0;
fail:
	json_decref(value);
	return -1;
}

/* Checks every key of patch below prefix, as --set would check it. */
static int check_patch_keys(const json_t *patch, const char *prefix, const char *label,
			    char *err, size_t errlen)
{
	const char *k;
	const json_t *v;

	json_object_foreach((json_t *)patch, k, v) {
		char key[512];
		snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", k);
		if (strpbrk(k, ".[]")) {
			err_set(err, errlen, "%s: key \"%s\": write nested keys as nested objects, not "
				"with dots or brackets", label, key);
			return -1;
		}
		if (runconf_check_key(key, label, err, errlen) < 0)
			return -1;
		if (json_is_object(v) && check_patch_keys(v, key, label, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* RFC 7386's merge: patch's objects merge, null removes, the rest replaces. */
static void merge_patch(json_t *target, const json_t *patch)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)patch, k, v) {
		json_t *t = json_object_get(target, k);
		if (json_is_null(v))
			json_object_del(target, k);
		else if (json_is_object(v) && json_is_object(t))
			merge_patch(t, v);
		else if (json_is_object(v)) {
			json_t *fresh = json_object();
			merge_patch(fresh, v);
			json_object_set_new(target, k, fresh);
		} else
			json_object_set_new(target, k, json_deep_copy(v));
	}
}

int runconf_set_file(json_t *root, const char *path, char *err, size_t errlen)
{
	char label[1100], inner[1200];
	json_t *f, *patch;
	const char *k;
	json_t *v;
	int r = -1;

	snprintf(label, sizeof label, "--set-file %.1000s", path);
	if (conf_load_file(path, &f, inner, sizeof inner) < 0) {
		err_set(err, errlen, "--set-file: %s (an overlay, e.g. configs/lab/testbed.json)", inner);
		return -1;
	}
	if (!json_is_object(f)) {
		err_set(err, errlen, "%s: expected an object {\"about\": \"...\", \"set\": {...}} "
			"(configs/lab/ has examples)", label);
		goto out;
	}
	json_object_foreach(f, k, v) {
		if (strcmp(k, "about") != 0 && strcmp(k, "set") != 0) {
			err_set(err, errlen, "%s: unknown key \"%s\"; an overlay has \"about\" (text) and "
				"\"set\" (the keys to change, as nested objects)", label, k);
			goto out;
		}
	}
	patch = json_object_get(f, "set");
	if (!json_is_object(patch)) {
		err_set(err, errlen, "%s: \"set\" is missing or not an object; give the keys to change "
			"as nested objects, e.g. {\"set\": {\"server\": {\"workers\": 16}}}", label);
		goto out;
	}
	if (check_patch_keys(patch, "", label, err, errlen) < 0)
		goto out;
	merge_patch(root, patch);
	r = 0;
out:
	json_decref(f);
	return r;
}

int runconf_set(json_t *root, const char *spec, char *err, size_t errlen)
{
	const char *eq = strchr(spec, '=');
	char key[256], label[300];
	json_error_t je;
	json_t *v;

	if (spec[0] == '@')
		return runconf_set_file(root, spec + 1, err, errlen);
	snprintf(label, sizeof label, "--set %.280s", spec);
	if (!eq || eq == spec) {
		err_set(err, errlen, "%s: expected KEY=VALUE, e.g. --set duration_s=0.3 or "
			"--set 'arrival.loads_ops=[2000, 4000]'", label);
		return -1;
	}
	if ((size_t)(eq - spec) >= sizeof key) {
		err_set(err, errlen, "%s: key too long", label);
		return -1;
	}
	memcpy(key, spec, (size_t)(eq - spec));
	key[eq - spec] = '\0';
	if (runconf_check_key(key, label, err, errlen) < 0)
		return -1;
	v = json_loads(eq + 1, JSON_DECODE_ANY, &je);
	if (!v) {
		/* Plain words need no quotes; what looks like JSON must be JSON. */
		const char *t = eq + 1;
		while (isspace((unsigned char)*t))
			t++;
		if (*t == '[' || *t == '{' || *t == '"') {
			err_set(err, errlen, "%s: the value is not valid JSON: %s (column %d); quote the whole "
				"argument for the shell, e.g. --set 'arrival.loads_ops=[2000, 4000]'", label,
				je.text, je.column);
			return -1;
		}
		v = json_string(eq + 1);
	}
	if (json_is_null(v)) {
		json_decref(v);
		v = NULL;
	}
	return runconf_put(root, key, v, label, err, errlen);
}
