/*
 * fuzz_conf.c - the JSON config loader and schema checker (lib/conf.c).
 *
 * Input: the bytes of a config file.  Runs conf_load_buf (jansson plus the
 * top-level and hint logic) and conf_check against the experiment schema
 * (runconf_schema: nested objects, ranges, choices, suggestions), then
 * conf_path and the getters with every string of the document used as a
 * dotted path.  Properties: a failure always has a message; a document
 * that passes the check reads back with the getters without failing.
 */
#include <string.h>

#include "conf.h"
#include "runconf.h"
#include "fuzz.h"

/* Every string in v (recursively, bounded) as a dotted path into root. */
static void walk(const json_t *root, const json_t *v, int depth)
{
	const char *k;
	json_t *e;
	size_t i;

	if (depth > 8)
		return;
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		double d[4];

		(void)conf_path(root, s);
		(void)conf_int(root, s, 0);
		(void)conf_num(root, s, 0);
		(void)conf_str(root, s, NULL);
		(void)conf_bool(root, s, 0);
		FUZZ_ASSERT(conf_nums(root, s, d, 4) <= 1u << 30, "conf_nums count");
	} else if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, e)
			walk(root, e, depth + 1);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, e)
			walk(root, e, depth + 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[2048];
	json_t *root = NULL;

	err[0] = '\0';
	if (conf_load_buf("fuzz.json", data, size, &root, err, sizeof err) != 0) {
		FUZZ_ASSERT(root == NULL, "failed load returned a document");
		fuzz_check_msg(err, sizeof err);
		return 0;
	}
	FUZZ_ASSERT(json_is_object(root), "load accepted a non-object");
	err[0] = '\0';
	if (conf_check(root, runconf_schema(), "fuzz.json", err, sizeof err) != 0)
		fuzz_check_msg(err, sizeof err);
	/* The same document as part of a bigger one ("file: parent.path"). */
	err[0] = '\0';
	if (conf_check(root, runconf_schema(), "fuzz.json: outer", err, sizeof err) != 0)
		fuzz_check_msg(err, sizeof err);
	walk(root, root, 0);
	json_decref(root);
	return 0;
}
