/*
 * binquery.c - the questions a binary answers before its options are
 * parsed (buildinfo.h, binquery_answer): what build it is, and, for the
 * server, whether a plugin loads.  The driver asks them through its
 * launcher on the hosts of a run, so it never links a transport, a back
 * end or a user's plugin itself.
 */
#include "buildinfo.h"
#include "be_plugin.h"
#include "kvop.h"

#include <stdio.h>
#include <string.h>

/* The value of option `name` in argv (--name VALUE or --name=VALUE), or NULL. */
static const char *arg_value(int argc, char **argv, const char *name)
{
	size_t n = strlen(name);
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], name, n) != 0)
			continue;
		if (argv[i][n] == '=')
			return argv[i] + n + 1;
		if (argv[i][n] == '\0' && i + 1 < argc)
			return argv[i + 1];
	}
	return NULL;
}

static int has_arg(int argc, char **argv, const char *name)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return 1;
	return 0;
}

/* --check-plugin: load it as the server does, print what it declares. */
static int check_plugin(const char *program, int argc, char **argv)
{
	const char *path = arg_value(argc, argv, "--plugin-path");
	struct plugin_lib lib;
	char err[1024];

	if (!path || !path[0]) {
		fprintf(stderr, "%s: --check-plugin needs --plugin-path PATH (the engine's .so)\n", program);
		return 2;
	}
	if (plugin_load(path, &lib, err, sizeof err) != 0) {
		fprintf(stderr, "%s: %s\n", program, err);
		return 2;
	}
	const struct oqb_plugin *p = lib.tbl;
	json_t *caps = json_array();
	if (p->caps & OQB_CAP_DURABLE)
		json_array_append_new(caps, json_string("durable"));
	if (p->caps & OQB_CAP_INCR)
		json_array_append_new(caps, json_string("incr"));
	/* max_key, max_value: what the server enforces (0 in the table: ours) */
	json_t *j = json_pack("{s:s, s:s, s:s, s:s?, s:I, s:o, s:I, s:I, s:s}", "path", path, "file", lib.file,
			      "name", p->name, "version", p->version, "abi_version", (json_int_t)p->abi_version,
			      "caps", caps,
			      "max_key", (json_int_t)(p->max_key && p->max_key < KV_MAX_KEY ? p->max_key : KV_MAX_KEY),
			      "max_value",
			      (json_int_t)(p->max_value && p->max_value < KV_MAX_VALUE ? p->max_value : KV_MAX_VALUE),
			      "build_id", buildinfo_id());
	json_dumpf(j, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(j);
	plugin_unload(&lib);
	return 0;
}

int binquery_answer(const char *program, int argc, char **argv)
{
	if (has_arg(argc, argv, "--build-info")) {
		json_t *j = buildinfo_json(argv[0]);
		json_dumpf(j, stdout, JSON_COMPACT);
		putchar('\n');
		json_decref(j);
		return 0;
	}
	if (strcmp(program, "oqb-server") == 0 && has_arg(argc, argv, "--check-plugin"))
		return check_plugin(program, argc, argv);
	return -1;
}
