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

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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

int slurm_node_is_here(const char *node)
{
	char h[256], me[256];

	if (!getenv("SLURM_JOB_ID") || gethostname(me, sizeof me) != 0 || node_host(node, h, sizeof h) < 0)
		return 0;
	me[sizeof me - 1] = '\0';
	/* one of them may be the short name of the other */
	size_t a = strcspn(h, "."), b = strcspn(me, ".");
	return strcmp(h, me) == 0 || (a == b && strncmp(h, me, a) == 0 && (!h[a] || !me[b]));
}

/* The value of " KEY=" in a `scontrol show node -o` line, into out. */
static int node_field(const char *line, const char *key, char *out, size_t outlen)
{
	char pat[64];
	const char *v;

	snprintf(pat, sizeof pat, " %s=", key);
	v = strstr(line, pat);
	if (!v)
		return -1;
	v += strlen(pat);
	snprintf(out, outlen, "%.*s", (int)strcspn(v, " \n;"), v);
	return out[0] ? 0 : -1;
}

/* 1: a TCP connection to addr:port is taken; 0: refused or no answer
 * within ms (why says which); -1: cannot tell. */
static int tcp_answers(const char *addr, const char *port, int ms, char *why, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int fd, rc = -1, e = 0;
	socklen_t el = sizeof e;

	if (getaddrinfo(addr, port, &hints, &ai) != 0 || !ai)
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			rc = 1;
		} else if (errno == EINPROGRESS) {
			struct pollfd pf = { .fd = fd, .events = POLLOUT };
			if (poll(&pf, 1, ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == 0) {
				rc = e == 0;
				if (e)
					snprintf(why, len, "its slurmd at %s:%s: %s", addr, port, strerror(e));
			} else {
				rc = 0;
				snprintf(why, len, "its slurmd at %s:%s gave no answer within %d ms", addr, port, ms);
			}
		} else {
			rc = 0;
			snprintf(why, len, "its slurmd at %s:%s: %s", addr, port, strerror(errno));
		}
		close(fd);
	}
	freeaddrinfo(ai);
	return rc;
}

/*
 * Whether node `host` still answers: Slurm's own view first (State DOWN
 * or NOT_RESPONDING: slurmctld gave up on it, after SlurmdTimeout), then,
 * since slurmctld notices late, whether its slurmd still takes a TCP
 * connection (NodeAddr, and Port where scontrol says it).  "localhost"
 * (Slurm's choice) cannot be asked about.
 */
static int slurm_probe(struct launcher *l, const char *host, char *why, size_t len)
{
	char *argv[] = { "scontrol", "show", "node", "-o", (char *)host, NULL };
	char out[4096], state[256], addr[256], port[32];
	int st;

	(void)l;
	if (host_is_local(host))
		return -1;
	st = launch_capture(argv, LAUNCH_PROBE_S * 1000, out, sizeof out);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || node_field(out, "State", state, sizeof state) < 0) {
		snprintf(why, len, "scontrol show node %s: %.300s", host, out[0] ? out : "no answer");
		return -1;
	}
	if (strstr(state, "DOWN") || strstr(state, "NOT_RESPONDING") || strchr(state, '*')) {
		snprintf(why, len, "Slurm lists node %s as State=%s", host, state);
		return 0;
	}
	if (node_field(out, "NodeAddr", addr, sizeof addr) == 0 && node_field(out, "Port", port, sizeof port) == 0) {
		int r = tcp_answers(addr, port, 2000, why, len);
		if (r == 1)
			snprintf(why, len, "its slurmd at %s:%s takes connections", addr, port);
		if (r >= 0)
			return r;
	}
	snprintf(why, len, "Slurm lists node %s as State=%s (it notices a lost node only after SlurmdTimeout)",
		 host, state);
	return -1;
}

const struct launch_ops launch_slurm_ops = {
	.name = "slurm",
	.version = LAUNCH_OPS_VERSION,
	.direct = 0,
	.init = slurm_init,
	.wrap = slurm_wrap,
	.probe = slurm_probe,
};
