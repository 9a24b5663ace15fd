/*
 * launch_slurm.c - the slurm launcher: one srun job step per process,
 * inside the allocation the driver runs in (SLURM_JOB_ID must be set;
 * runconf checks it before anything starts).
 *
 * Each step is one task on the named node.  --overlap lets the server and
 * client steps share nodes and CPUs of the allocation, and
 * --kill-on-bad-exit ends a step whose task fails.  Ending the srun PID
 * (after the control socket has closed) ends the step.
 *
 * Host names in the config are Slurm node names.  The server and each
 * client report the node they run on (SLURMD_NODENAME, "node" in HELLO),
 * and run.json records it per process, so placement is what the
 * processes saw, not what was asked.  Several node names can be one
 * machine (several slurmd on one host): slurm_same_machine asks Slurm
 * (NodeHostName), so transport "shm" may span such nodes.
 * tests/integration/slurm.sh runs all of this against real daemons.
 */
#include "launch.h"

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

/* NodeHostName of Slurm node `node` (from `scontrol show node -o`), or -1. */
static int node_host(const char *node, char *out, size_t outlen)
{
	char cmd[600] = "scontrol show node -o ";
	size_t len = strlen(cmd);
	char line[4096];
	FILE *f;
	int found = -1, st;

	if (shell_quote(cmd, sizeof cmd, &len, node) < 0 || len + 12 >= sizeof cmd)
		return -1;
	snprintf(cmd + len, sizeof cmd - len, " 2>/dev/null");
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		const char *h = strstr(line, " NodeHostName=");
		if (h && found < 0) {
			h += strlen(" NodeHostName=");
			snprintf(out, outlen, "%.*s", (int)strcspn(h, " \n"), h);
			found = out[0] ? 0 : -1;
		}
	}
	st = pclose(f);
	return st == 0 ? found : -1;
}

int slurm_same_machine(const char *a, const char *b)
{
	char ha[256], hb[256];

	if (!getenv("SLURM_JOB_ID") || node_host(a, ha, sizeof ha) < 0 || node_host(b, hb, sizeof hb) < 0)
		return 0;
	return strcmp(ha, hb) == 0;
}

const struct launch_ops launch_slurm_ops = {
	.name = "slurm",
	.version = LAUNCH_OPS_VERSION,
	.direct = 0,
	.init = slurm_init,
	.wrap = slurm_wrap,
};
