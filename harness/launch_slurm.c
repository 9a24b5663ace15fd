/*
 * launch_slurm.c - the slurm launcher: one srun job step per process,
 * inside the allocation the driver runs in (SLURM_JOB_ID must be set;
 * runconf checks it before anything starts).
 *
 * Each step is one task on the named node.  --overlap lets the server and
 * client steps share nodes and CPUs of the allocation, and
 * --kill-on-bad-exit ends a step whose task fails.  Ending the srun PID
 * (after the control socket has closed) ends the step.
 */
#include "launch.h"
#include "runconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int slurm_init(struct launcher *l, char *err, size_t errlen)
{
	if (!getenv("SLURM_JOB_ID")) {
		snprintf(err, errlen, "launcher \"slurm\" needs a Slurm allocation but SLURM_JOB_ID is "
			 "not set: run oqb inside salloc or sbatch, or use launcher \"ssh\" or \"local\"");
		return -1;
	}
	return 0;
}

static char **slurm_wrap(struct launcher *l, const char *host, const char *cwd,
			 char *const *argv, char *err, size_t errlen)
{
	char **w = argv_new();
	char buf[512];
	char *script = launch_script(cwd, argv);
	int rc = 0;

	if (!w || !script)
		goto oom;
	rc |= argv_push(&w, "srun");
	rc |= argv_push(&w, "--nodes=1");
	rc |= argv_push(&w, "--ntasks=1");
	rc |= argv_push(&w, "--overlap");
	rc |= argv_push(&w, "--kill-on-bad-exit=1");
	rc |= argv_push(&w, "--quiet");
	/* "localhost" in a config means "wherever Slurm puts it". */
	if (host && !host_is_local(host)) {
		snprintf(buf, sizeof buf, "--nodelist=%s", host);
		rc |= argv_push(&w, buf);
	}
	rc |= argv_push(&w, "sh");
	rc |= argv_push(&w, "-c");
	rc |= argv_push(&w, script);
	if (rc)
		goto oom;
	free(script);
	return w;
oom:
	free(script);
	launch_argv_free(w);
	snprintf(err, errlen, "out of memory building the srun command for %s", host);
	return NULL;
}

const struct launch_ops launch_slurm_ops = {
	.name = "slurm",
	.version = LAUNCH_OPS_VERSION,
	.direct = 0,
	.init = slurm_init,
	.wrap = slurm_wrap,
};
