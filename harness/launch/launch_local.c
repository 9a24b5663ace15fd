/*
 * launch_local.c - the local launcher: fork/exec on this machine.  The PID
 * the driver holds is the benchmark process itself.
 */
#include "launch.h"

#include <stdio.h>

static char **local_wrap(struct launcher *l, const char *host, const char *cwd,
			 char *const *argv, char *err, size_t errlen)
{
	char **w = argv_new();

	for (size_t i = 0; argv[i]; i++) {
		if (argv_push(&w, argv[i]) < 0) {
			launch_argv_free(w);
			snprintf(err, errlen, "out of memory");
			return NULL;
		}
	}
	return w;
}

const struct launch_ops launch_local_ops = {
	.name = "local",
	.version = LAUNCH_OPS_VERSION,
	.direct = 1,
	.wrap = local_wrap,
};
