/*
 * be_plugin.c - the `plugin` back end: loads a user's engine (a shared
 * object built against include/oqb_plugin.h) and adapts it to backend_ops.
 *
 * What it guarantees, and where:
 *   - A plugin built for another ABI version, or against a modified
 *     header, is refused by file name and version before any of its
 *     functions runs (plugin_check_table reads only the first two members
 *     of a table it does not know).  A table with a NULL required function
 *     or capabilities that disagree with its functions is refused too.
 *   - Durable mode (--durable) refuses an engine without OQB_CAP_DURABLE:
 *     the rings would survive a crash but the engine's state would not.
 *   - Requests the engine declared it cannot take never reach it: a key
 *     over max_key is answered KV_ERR_BAD, a value over max_value
 *     KV_ERR_NOSPACE, incr without OQB_CAP_INCR KV_ERR_OP; each counted.
 *   - A status the ABI does not define, or a get that claims more bytes
 *     than its buffer, is answered KV_ERR_OP and counted in plugin_faults
 *     rather than trusted.
 *
 * Each instance takes its own dlopen reference (dlopen counts them), so
 * instances open and close independently and nothing here is global.
 * echo and nop are answered here without calling the engine: they exist
 * for the transport's microbenchmarks, not for stores.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "be_plugin.h"

/* The ABI's statuses below OQB_ERROR are oqbench's own codes. */
_Static_assert((int)OQB_OK == (int)KV_OK && (int)OQB_NOT_FOUND == (int)KV_NOT_FOUND &&
	       (int)OQB_BAD == (int)KV_ERR_BAD && (int)OQB_NOSPACE == (int)KV_ERR_NOSPACE &&
	       (int)OQB_UNSUPPORTED == (int)KV_ERR_OP,
	       "oqb_plugin.h statuses must match kvop.h");

#define PLUGIN_NSTATUS (OQB_ERROR + 1)
#define PLUGIN_HEADER "include/oqb_plugin.h"

static const char *const status_names[PLUGIN_NSTATUS] = {
	"ok", "not_found", "bad", "nospace", "unsupported", "error",
};

const char *plugin_caps_text(uint32_t caps, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s%s%s", caps & OQB_CAP_DURABLE ? "durable" : "",
		 (caps & OQB_CAP_DURABLE) && (caps & OQB_CAP_INCR) ? ", " : "",
		 caps & OQB_CAP_INCR ? "incr" : "");
	if (!buf[0])
		snprintf(buf, cap, "none");
	return buf;
}

int plugin_check_table(const struct oqb_plugin *p, const char *file, char *err, size_t errlen)
{
	if (p->abi_version != OQB_PLUGIN_ABI_VERSION) {
		snprintf(err, errlen, "plugin %s was built for oqbench plugin ABI %" PRIu32 "; this server speaks "
			 "%d: rebuild it against %s of this oqbench (docs/plugins.md)", file, p->abi_version,
			 OQB_PLUGIN_ABI_VERSION, PLUGIN_HEADER);
		return -1;
	}
	if (p->struct_size != sizeof *p) {
		snprintf(err, errlen, "plugin %s says ABI %d but its struct oqb_plugin has %" PRIu32 " bytes, not "
			 "%zu: it was compiled against a modified header; rebuild it against %s of this oqbench",
			 file, OQB_PLUGIN_ABI_VERSION, p->struct_size, sizeof *p, PLUGIN_HEADER);
		return -1;
	}
	if (!p->name || !p->name[0]) {
		snprintf(err, errlen, "plugin %s: its table has no name; set .name to the engine's name", file);
		return -1;
	}
	const struct { const char *what; int missing; } req[] = {
		{ "open", !p->open }, { "close", !p->close }, { "get", !p->get },
		{ "set", !p->set }, { "del", !p->del },
	};
	for (size_t i = 0; i < sizeof req / sizeof req[0]; i++)
		if (req[i].missing) {
			snprintf(err, errlen, "plugin %s (engine %s): .%s is NULL; every plugin implements open, "
				 "close, get, set and del (%s)", file, p->name, req[i].what, PLUGIN_HEADER);
			return -1;
		}
	if (p->caps & ~(OQB_CAP_DURABLE | OQB_CAP_INCR)) {
		snprintf(err, errlen, "plugin %s (engine %s): caps 0x%" PRIx32 " has bits ABI %d does not define; "
			 "use only OQB_CAP_DURABLE and OQB_CAP_INCR", file, p->name, p->caps, OQB_PLUGIN_ABI_VERSION);
		return -1;
	}
	if (!(p->caps & OQB_CAP_INCR) != !p->incr) {
		snprintf(err, errlen, "plugin %s (engine %s): %s; declare OQB_CAP_INCR exactly when .incr is set",
			 file, p->name, p->incr ? ".incr is set but caps lacks OQB_CAP_INCR" :
			 "caps has OQB_CAP_INCR but .incr is NULL");
		return -1;
	}
	return 0;
}

static const char *last_part(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int plugin_load(const char *path, struct plugin_lib *lib, char *err, size_t errlen)
{
	struct stat st;

	memset(lib, 0, sizeof *lib);
	if (!path || !path[0]) {
		snprintf(err, errlen, "backend plugin: no path; set server.backend.path (--plugin-path) to the "
			 "plugin's .so on the server host");
		return -1;
	}
	lib->file = last_part(path);
	if (stat(path, &st) != 0) {
		snprintf(err, errlen, "plugin %s: %s (backend.path); give the path of the plugin's .so on the "
			 "server host (docs/plugins.md shows how to build one)", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "plugin %s: not a regular file (backend.path); give the plugin's .so", path);
		return -1;
	}
	/* dlopen needs a slash to take the path as a path, not a name to
	 * look up in the library search path. */
	char buf[4096];
	snprintf(buf, sizeof buf, "%s%s", strchr(path, '/') ? "" : "./", path);
	lib->dl = dlopen(buf, RTLD_NOW | RTLD_LOCAL);
	if (!lib->dl) {
		const char *why = dlerror();
		snprintf(err, errlen, "plugin %s: cannot load it: %s; build it with cc -fPIC -shared, for this "
			 "machine, and check with ldd that every library it needs is installed", path,
			 why ? why : "unknown dlopen error");
		return -1;
	}
	const struct oqb_plugin *(*entry)(void);
	*(void **)&entry = dlsym(lib->dl, OQB_PLUGIN_ENTRY_SYMBOL);
	if (!entry) {
		snprintf(err, errlen, "plugin %s has no %s(): it is not an oqbench plugin, or the function is "
			 "static or C++-mangled; export const struct oqb_plugin *%s(void) (%s, docs/plugins.md)",
			 path, OQB_PLUGIN_ENTRY_SYMBOL, OQB_PLUGIN_ENTRY_SYMBOL, PLUGIN_HEADER);
		goto fail;
	}
	lib->tbl = entry();
	if (!lib->tbl) {
		snprintf(err, errlen, "plugin %s: %s() returned NULL; return a pointer to its static struct "
			 "oqb_plugin", path, OQB_PLUGIN_ENTRY_SYMBOL);
		goto fail;
	}
	if (plugin_check_table(lib->tbl, lib->file, err, errlen) != 0)
		goto fail;
	return 0;
fail:
	dlclose(lib->dl);
	memset(lib, 0, sizeof *lib);
	return -1;
}

void plugin_unload(struct plugin_lib *lib)
{
	if (lib->dl)
		dlclose(lib->dl);
	memset(lib, 0, sizeof *lib);
}

/* ---- the backend ---- */

struct backend {
	struct plugin_lib lib;
	const struct oqb_plugin *p;
	void *inst;
	char path[1024];
	uint32_t max_key, max_value;
	uint64_t ops[KV_OP_MAX_];
	uint64_t status[PLUGIN_NSTATUS];
	uint64_t bad_ops;            /* op codes this adapter does not know */
	uint64_t keys_refused;       /* longer than max_key */
	uint64_t values_refused;     /* longer than max_value */
	uint64_t incr_unsupported;   /* incr to an engine without it */
	uint64_t plugin_faults;      /* answers outside the ABI */
};

static struct backend *plugin_open(const struct backend_conf *c, char *err, size_t errlen)
{
	struct backend *b = calloc(1, sizeof *b);
	char caps[64];

	if (!b) {
		snprintf(err, errlen, "plugin backend: out of memory");
		return NULL;
	}
	if (plugin_load(c->plugin_path, &b->lib, err, errlen) != 0) {
		free(b);
		return NULL;
	}
	b->p = b->lib.tbl;
	snprintf(b->path, sizeof b->path, "%s", c->plugin_path);
	if (c->durable && !(b->p->caps & OQB_CAP_DURABLE)) {
		snprintf(err, errlen, "plugin %s (engine %s) does not declare OQB_CAP_DURABLE (its capabilities: "
			 "%s), so durable mode would lose its writes in a crash; run without durable, or use "
			 "an engine whose writes persist before they return", b->lib.file, b->p->name,
			 plugin_caps_text(b->p->caps, caps, sizeof caps));
		goto fail;
	}
	b->max_key = b->p->max_key && b->p->max_key < KV_MAX_KEY ? b->p->max_key : KV_MAX_KEY;
	b->max_value = b->p->max_value && b->p->max_value < KV_MAX_VALUE ? b->p->max_value : KV_MAX_VALUE;
	struct oqb_plugin_conf pc = {
		.struct_size = sizeof pc,
		.worker = (uint32_t)c->worker,
		.workers = c->workers,
		.durable = c->durable,
		.seed = c->seed,
		.options_json = c->plugin_options && c->plugin_options[0] ? c->plugin_options : "{}",
		.path = c->plugin_path,
	};
	char perr[512] = "";
	b->inst = b->p->open(&pc, perr, sizeof perr);
	if (!b->inst) {
		perr[sizeof perr - 1] = '\0';
		snprintf(err, errlen, "plugin %s (engine %s) failed to open: %s", b->lib.file, b->p->name,
			 perr[0] ? perr : "it gave no reason (write one into err)");
		goto fail;
	}
	return b;
fail:
	plugin_unload(&b->lib);
	free(b);
	return NULL;
}

/* The engine's status as oqbench's; a value outside the ABI is a fault. */
static unsigned map_status(struct backend *b, int st)
{
	if (st < 0 || st >= PLUGIN_NSTATUS) {
		b->plugin_faults++;
		return KV_ERR_OP;
	}
	b->status[st]++;
	return st == OQB_ERROR ? KV_ERR_OP : (unsigned)st;
}

static void plugin_exec(struct backend *b, const struct backend_req *r, struct backend_out *o)
{
	const struct oqb_plugin *p = b->p;

	if (backend_exec_prologue(r, o, b->ops, &b->bad_ops))
		return;
	if (r->key_len > b->max_key) {
		b->keys_refused++;
		o->status = KV_ERR_BAD;
		return;
	}
	switch (r->op) {
	case KV_OP_GET: {
		uint32_t len = 0;
		o->status = map_status(b, p->get(b->inst, r->key, r->key_len, o->val, o->val ? o->val_cap : 0, &len));
		if (o->status == KV_OK && len > o->val_cap) {
			b->plugin_faults++;   /* claims to have written past the buffer */
			o->status = KV_ERR_OP;
		} else if (o->status == KV_OK || o->status == KV_ERR_NOSPACE) {
			o->val_len = len;
		}
		break;
	}
	case KV_OP_SET:
		if (r->val_len > b->max_value) {
			b->values_refused++;
			o->status = KV_ERR_NOSPACE;
			break;
		}
		o->status = map_status(b, p->set(b->inst, r->key, r->key_len, r->val, r->val_len));
		break;
	case KV_OP_DEL:
		o->status = map_status(b, p->del(b->inst, r->key, r->key_len));
		break;
	case KV_OP_INCR: {
		uint64_t sum = 0;
		if (!p->incr) {
			b->incr_unsupported++;
			o->status = KV_ERR_OP;
			break;
		}
		o->status = map_status(b, p->incr(b->inst, r->key, r->key_len, r->aux, &sum));
		if (o->status == KV_OK) {
			char num[24];
			int n = snprintf(num, sizeof num, "%" PRIu64, sum);
			backend_copy_out(o, (const uint8_t *)num, (uint32_t)n);
		}
		break;
	}
	}
}

static json_t *plugin_stats(struct backend *b)
{
	char caps[64];
	json_t *ops = json_object(), *st = json_object();

	for (unsigned i = 0; i < KV_OP_MAX_; i++)
		json_object_set_new(ops, kv_op_name(i), json_integer((json_int_t)b->ops[i]));
	json_object_set_new(ops, "unsupported", json_integer((json_int_t)b->bad_ops));
	for (unsigned i = 0; i < PLUGIN_NSTATUS; i++)
		json_object_set_new(st, status_names[i], json_integer((json_int_t)b->status[i]));
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:i, s:s, s:I, s:I, s:o, s:o, s:I, s:I, s:I, s:I}",
			      "backend", "plugin",
			      "plugin", b->p->name,
			      "plugin_version", b->p->version ? b->p->version : "",
			      "path", b->path,
			      "abi", OQB_PLUGIN_ABI_VERSION,
			      "caps", plugin_caps_text(b->p->caps, caps, sizeof caps),
			      "max_key", (json_int_t)b->max_key,
			      "max_value", (json_int_t)b->max_value,
			      "ops", ops,
			      "status", st,
			      "keys_refused", (json_int_t)b->keys_refused,
			      "values_refused", (json_int_t)b->values_refused,
			      "incr_unsupported", (json_int_t)b->incr_unsupported,
			      "plugin_faults", (json_int_t)b->plugin_faults);
	if (o && b->p->stats) {
		char buf[4096] = "";
		size_t n = b->p->stats(b->inst, buf, sizeof buf);
		buf[n < sizeof buf ? n : sizeof buf - 1] = '\0';
		json_error_t je;
		json_t *e = json_loads(buf, 0, &je);
		if (e && json_is_object(e))
			json_object_set_new(o, "engine", e);
		else
			json_object_set_new(o, "engine_stats_unreadable",
					    json_string(e ? "not a JSON object" : je.text));
		if (e && !json_is_object(e))
			json_decref(e);
	}
	return o;
}

static void plugin_close(struct backend *b)
{
	if (!b)
		return;
	if (b->inst)
		b->p->close(b->inst);
	plugin_unload(&b->lib);
	free(b);
}

const struct backend_ops plugin_backend_ops = {
	.name = "plugin",
	.version = BACKEND_OPS_VERSION,
	.open = plugin_open,
	.exec = plugin_exec,
	.stats_json = plugin_stats,
	.close = plugin_close,
};
