/*
 * runconf_plugin.c - the config check of the `plugin` back end.
 *
 * A plugin is the user's own code, so most of what can go wrong with it is
 * found by loading it: the driver loads it (be_plugin.h's plugin_load, the
 * same checks as the server's) when the server runs on this host, and then
 * compares what it declares with what the config asks of it:
 *   - a system that runs durable needs OQB_CAP_DURABLE;
 *   - a workload that sends incr needs OQB_CAP_INCR, and its keys and
 *     values must fit the declared max_key and max_value.
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

#include "be_plugin.h"
#include "conf.h"
#include "gen.h"
#include "launch.h"
#include "log.h"
#include "runconf.h"

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

int runconf_plugin_check(struct runconf *rc, char *err, size_t errlen)
{
	struct plugin_lib lib;
	char caps[64];
	unsigned max_key, max_val;
	int incr, bad = 0;

	if (strcmp(rc->backend, "plugin") != 0 || !host_is_local(rc->server_host))
		return 0;
	if (rc->plugin_path[0] != '/') {
		/* Local servers run the path made absolute, so it does not
		 * depend on where the driver starts them. */
		char abs[PATH_MAX];
		if (realpath(rc->plugin_path, abs) && strlen(abs) < sizeof rc->plugin_file) {
			snprintf(rc->plugin_file, sizeof rc->plugin_file, "%s", abs);
			rc->plugin_path = rc->plugin_file;
		}
	}
	char lerr[1024];
	if (plugin_load(rc->plugin_path, &lib, lerr, sizeof lerr) != 0) {
		err_set(err, errlen, "%s: server.backend: %s", rc->path, lerr);
		return -1;
	}
	const struct oqb_plugin *p = lib.tbl;
	plugin_caps_text(p->caps, caps, sizeof caps);
	if (rc->durable_mask && !(p->caps & OQB_CAP_DURABLE)) {
		err_set(err, errlen, "%s: durable: plugin %s (engine %s) does not declare OQB_CAP_DURABLE (its "
			"capabilities: %s), so a durable system would lose its writes in a crash; set durable "
			"to false, or use an engine whose writes persist before they return", rc->path, lib.file,
			p->name, caps);
		bad = 1;
	} else if (strcmp(rc->launcher, "local") == 0) {
		unsigned lim_key = p->max_key ? p->max_key : KV_MAX_KEY;
		unsigned lim_val = p->max_value ? p->max_value : KV_MAX_VALUE;
		bad = probe_workload(rc, &max_key, &max_val, &incr, err, errlen) != 0;
		if (!bad && incr && !(p->caps & OQB_CAP_INCR)) {
			err_set(err, errlen, "%s: workload: it sends incr, but plugin %s (engine %s) does not "
				"declare OQB_CAP_INCR (its capabilities: %s); implement incr in the engine, or "
				"choose a workload without incr", rc->path, lib.file, p->name, caps);
			bad = 1;
		} else if (!bad && (max_key > lim_key || max_val > lim_val)) {
			err_set(err, errlen, "%s: workload: it sends %s of %u bytes, but plugin %s (engine %s) "
				"takes at most %u; make the workload's %s smaller, or raise the engine's %s",
				rc->path, max_key > lim_key ? "keys" : "values", max_key > lim_key ? max_key : max_val,
				lib.file, p->name, max_key > lim_key ? lim_key : lim_val,
				max_key > lim_key ? "keys" : "values", max_key > lim_key ? "max_key" : "max_value");
			bad = 1;
		}
	}
	plugin_unload(&lib);
	return bad ? -1 : 0;
}
