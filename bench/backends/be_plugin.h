/*
 * be_plugin.h - the `plugin` back end: a user's engine in a shared object,
 * loaded with dlopen against include/oqb_plugin.h (docs/plugins.md).
 *
 * The loader is also used by the driver, which loads the plugin at config
 * check time when the server runs on its own host, so a plugin built for
 * another ABI, or without a capability the config needs, is refused before
 * anything starts.  The server checks again when it opens its instances.
 */
#ifndef OQB_BE_PLUGIN_H
#define OQB_BE_PLUGIN_H

#include <stddef.h>
#include "backend.h"
#include "oqb_plugin.h"

extern const struct backend_ops plugin_backend_ops;

/* A loaded plugin: its dlopen handle and its checked table. */
struct plugin_lib {
	void *dl;
	const struct oqb_plugin *tbl;
	const char *file;        /* the path's last part, for messages */
};

/*
 * Checks a plugin's table: ABI version and struct size first (nothing else
 * is read from a table of another version), then the name, the required
 * functions (open, close, get, set, del) and the capabilities against the
 * functions present.  `file` names the plugin in messages.  Returns 0, or
 * -1 with a message that names the plugin and the fix.
 */
int plugin_check_table(const struct oqb_plugin *p, const char *file, char *err, size_t errlen);

/*
 * Loads the shared object at `path` (dlopen, RTLD_NOW | RTLD_LOCAL), finds
 * its entry point and checks its table.  Returns 0 with lib filled, or -1
 * with a message naming the path, what is wrong and what to do; nothing
 * stays loaded then.  Each call takes its own reference on the library.
 */
int plugin_load(const char *path, struct plugin_lib *lib, char *err, size_t errlen);
void plugin_unload(struct plugin_lib *lib);

/* "durable, incr" style list of a table's capabilities ("none" if none). */
const char *plugin_caps_text(uint32_t caps, char *buf, size_t cap);

#endif
