/*
 * runconf_plugin.c - the config check of the `plugin` back end.
 *
 * A plugin is the user's own code, so most of what can go wrong with it is
 * found by loading it.  The driver never loads it itself (it links no
 * back end): when the server runs on this host it asks the server binary,
 * `oqb-server --check-plugin --plugin-path PATH` from hosts.bin_dir, which
 * loads it with the server's own checks and prints what it declares
 * (bench/binquery.c), and then compares that with what the config asks:
 *   - a system that runs durable needs the durable capability;
 *   - a workload that sends incr needs the incr capability, and its keys
 *     and values must fit the declared max_key and max_value.
 * What the workload sends is seen, not guessed: the first PROBE_OPS
 * requests of client thread 0's generator (local clients only, as
 * runconf.c's workload check).  A plugin on another host is checked by
 * its server at start, with the same messages.  Options are the engine's
 * to judge: they reach it as JSON text when the server opens it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "gen.h"
#include "kvop.h"
#include "launch.h"
#include "log.h"
#include "run.h"
#include "runconf.h"
#include "subproc.h"

#include <sys/wait.h>

#define PROBE_OPS 20000

int runconf_plugin_keys(struct runconf *rc, const json_t *b, const char *where, char *err, size_t errlen)
{
	static const char *const others[] = { "service_ns", "service_dist", "memory_mb", "prefault",
					      "pmem_path", "pool_mb", NULL };

	for (int i = 0; others[i]; i++)
		if (json_object_get(b, others[i])) {
			err_set(err, errlen, "%s.%s: not used by kind \"plugin\" (the engine's settings go in "
				"server.backend.options); remove it", where, others[i]);
			return -1;
		}
	rc->plugin_path = conf_str(b, "path", NULL);
	if (!rc->plugin_path || !rc->plugin_path[0]) {
		err_set(err, errlen, "%s.path: missing; kind \"plugin\" needs the path of the engine's .so "
			"on the server host (docs/plugins.md)", where);
		return -1;
	}
	rc->plugin_options = json_object_get(b, "options");
	if (rc->plugin_options && !json_is_object(rc->plugin_options)) {
		err_set(err, errlen, "%s.options: expected an object (the engine's options, passed to it as "
			"JSON text), e.g. {\"buckets\": 4096}", where);
		return -1;
	}
	return 0;
}

/* The largest key and value, and whether an incr, among the first
 * PROBE_OPS requests of client thread 0.  0, or -1 with err. */
static int probe_workload(const struct runconf *rc, unsigned *max_key, unsigned *max_val, int *incr,
			  char *err, size_t errlen)
{
	char where[1100], dir[1024];
	const struct gen_ops *g = gen_lookup(rc->workload, NULL, err, errlen);
	struct gen_op op;

	*max_key = *max_val = 0;
	*incr = 0;
	if (!g || !g->open)
		return g ? 0 : -1;
	snprintf(where, sizeof where, "%s: workload", rc->path);
	snprintf(dir, sizeof dir, "%s", rc->path);
	char *cut = strrchr(dir, '/');
	if (cut)
		*cut = '\0';   /* relative trace paths are the config's */
	else
		strcpy(dir, ".");
	struct gen_ctx c = { .seed = (uint64_t)rc->seed, .nprocesses = (unsigned)rc->processes,
			     .nthreads = (unsigned)rc->threads, .config_dir = dir, .where = where };
	struct gen *inst = g->open(rc->workload, &c, err, errlen);
	if (!inst)
		return -1;
	for (int i = 0; i < PROBE_OPS && g->next(inst, &op) == 0; i++) {
		*max_key = op.key_len > *max_key ? op.key_len : *max_key;
		if (op.op == KV_OP_SET)
			*max_val = op.val_len > *max_val ? op.val_len : *max_val;
		*incr |= op.op == KV_OP_INCR;
	}
	if (g->close)
		g->close(inst);
	return 0;
}

/* Whether the plugin's declared capabilities (caps: ["durable", "incr"]) hold cap. */
static int has_cap(const json_t *id, const char *cap)
{
	size_t i;
	const json_t *c;
	json_array_foreach(json_object_get(id, "caps"), i, c)
		if (json_is_string(c) && strcmp(json_string_value(c), cap) == 0)
			return 1;
	return 0;
}

/* The server binary's answer about the plugin at path: its identity JSON,
 * or NULL with the loader's error in err. */
static json_t *ask_server(const struct runconf *rc, const char *path, char *err, size_t errlen)
{
	char prog[PATH_MAX + 16], out[8192];
	snprintf(prog, sizeof prog, "%s/oqb-server", rc->bin_dir ? rc->bin_dir : self_bin_dir());
	char *argv[] = { prog, "--check-plugin", "--plugin-path", (char *)path, NULL };
	int st = subproc_capture(argv, SUBPROC_STDERR, 30000, out, sizeof out);
	size_t n = strlen(out);
	while (n && out[n - 1] == '\n')
		out[--n] = '\0';
	if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		json_t *j = json_loads(strchr(out, '{') ? strchr(out, '{') : out, JSON_DISABLE_EOF_CHECK, NULL);
		if (json_is_object(j))
			return j;
		json_decref(j);
	}
	/* the loader's message, without the program's prefix */
	const char *msg = strncmp(out, "oqb-server: ", 12) == 0 ? out + 12 : out;
	if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 2 && msg[0])
		err_set(err, errlen, "%s: server.backend: %s", rc->path, msg);
	else
		err_set(err, errlen, "%s: server.backend: %s --check-plugin could not check plugin %s%s%s (build "
			"it with make, or set hosts.bin_dir)", rc->path, prog, path, msg[0] ? ": " : "", msg);
	return NULL;
}

int runconf_plugin_check(struct runconf *rc, char *err, size_t errlen)
{
	char caps[64];
	unsigned max_key, max_val;
	int incr, bad = 0;

	if (strcmp(rc->backend, "plugin") != 0 || !host_is_local(rc->server_host))
		return 0;
	if (rc->plugin_path[0] != '/') {
		/* Local servers run the path made absolute, so it does not
		 * depend on where the driver starts them. */
		char abs[PATH_MAX];
		size_t n;
		if (realpath(rc->plugin_path, abs) && (n = strlen(abs)) < sizeof rc->plugin_file) {
			memcpy(rc->plugin_file, abs, n + 1);   /* fits: checked */
			rc->plugin_path = rc->plugin_file;
		}
	}
	json_t *id = ask_server(rc, rc->plugin_path, err, errlen);
	if (!id)
		return -1;
	const char *file = json_string_value(json_object_get(id, "file"));
	const char *name = json_string_value(json_object_get(id, "name"));
	int durable = has_cap(id, "durable"), can_incr = has_cap(id, "incr");
	file = file ? file : rc->plugin_path;
	name = name ? name : "?";
	snprintf(caps, sizeof caps, "%s%s%s", durable ? "durable" : "", durable && can_incr ? ", " : "",
		 can_incr ? "incr" : "");
	if (!caps[0])
		snprintf(caps, sizeof caps, "none");
	if (rc->durable_mask && !durable) {
		err_set(err, errlen, "%s: durable: plugin %s (engine %s) does not declare OQB_CAP_DURABLE (its "
			"capabilities: %s), so a durable system would lose its writes in a crash; set durable "
			"to false, or use an engine whose writes persist before they return", rc->path, file,
			name, caps);
		bad = 1;
	} else if (strcmp(rc->launcher, "local") == 0) {
		json_int_t mk = json_integer_value(json_object_get(id, "max_key"));
		json_int_t mv = json_integer_value(json_object_get(id, "max_value"));
		unsigned lim_key = mk > 0 ? (unsigned)mk : KV_MAX_KEY;
		unsigned lim_val = mv > 0 ? (unsigned)mv : KV_MAX_VALUE;
		bad = probe_workload(rc, &max_key, &max_val, &incr, err, errlen) != 0;
		if (!bad && incr && !can_incr) {
			err_set(err, errlen, "%s: workload: it sends incr, but plugin %s (engine %s) does not "
				"declare OQB_CAP_INCR (its capabilities: %s); implement incr in the engine, or "
				"choose a workload without incr", rc->path, file, name, caps);
			bad = 1;
		} else if (!bad && (max_key > lim_key || max_val > lim_val)) {
			err_set(err, errlen, "%s: workload: it sends %s of %u bytes, but plugin %s (engine %s) "
				"takes at most %u; make the workload's %s smaller, or raise the engine's %s",
				rc->path, max_key > lim_key ? "keys" : "values", max_key > lim_key ? max_key : max_val,
				file, name, max_key > lim_key ? lim_key : lim_val,
				max_key > lim_key ? "keys" : "values", max_key > lim_key ? "max_key" : "max_value");
			bad = 1;
		}
	}
	json_decref(id);
	return bad ? -1 : 0;
}
