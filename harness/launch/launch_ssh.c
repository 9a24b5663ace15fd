/*
 * launch_ssh.c - the ssh launcher: the system's OpenSSH client, one ssh
 * child per remote process.
 *
 * Safety and speed, both from ssh's own options:
 *  - BatchMode=yes: never prompt (a missing key is an error, not a hang);
 *  - StrictHostKeyChecking=yes: host keys are always verified, against the
 *    user's known_hosts or the config's hosts.ssh.known_hosts;
 *  - ControlMaster=auto + ControlPersist, with ControlPath in a private
 *    directory (mode 0700) made for this run: the first connection to a
 *    host is reused by the others, so starting 16 clients costs one
 *    handshake.  fini() ends the masters with "ssh -O exit".
 * The remote command is one `sh -c` script with every word single-quoted,
 * so arguments (the workload JSON, paths with spaces) arrive unchanged.
 */
#include "launch.h"
#include "conf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SSH_PERSIST_S "120"

static int ssh_init(struct launcher *l, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");

	/* Unix socket paths are limited to ~107 bytes: keep the dir short. */
	if (!tmp || !*tmp || strlen(tmp) > 60)
		tmp = P_tmpdir;
	snprintf(l->ctl_dir, sizeof l->ctl_dir, "%s/oqb-ssh-XXXXXX", tmp);
	if (!mkdtemp(l->ctl_dir)) {
		snprintf(err, errlen, "cannot create a private directory for ssh control sockets "
			 "in %s: %s (set TMPDIR to a writable directory)", tmp, strerror(errno));
		l->ctl_dir[0] = '\0';
		return -1;
	}
	return 0;
}

/*
 * The ssh options common to every invocation.  shared: through the run's
 * master connection (the processes, -O exit); else a login of its own
 * (the probe), bounded by ConnectTimeout, which comes before the
 * config's options because ssh keeps the first value of each.
 */
static int ssh_common(struct launcher *l, char ***w, int shared)
{
	char buf[512];
	const char *kh = conf_str(l->ssh, "known_hosts", NULL);
	const char *id = conf_str(l->ssh, "identity", NULL);
	const char *user = conf_str(l->ssh, "user", NULL);
	long long port = conf_int(l->ssh, "port", 0);
	const json_t *opts = json_object_get(l->ssh, "options");
	int rc = 0;
	size_t i;
	json_t *o;

	rc |= argv_push(w, "ssh");
	rc |= argv_push(w, "-T");
	rc |= argv_push(w, "-o");
	rc |= argv_push(w, "BatchMode=yes");
	rc |= argv_push(w, "-o");
	rc |= argv_push(w, "StrictHostKeyChecking=yes");
	if (shared) {
		rc |= argv_push(w, "-o");
		rc |= argv_push(w, "ControlMaster=auto");
		snprintf(buf, sizeof buf, "ControlPath=%s/%%C", l->ctl_dir);
		rc |= argv_push(w, "-o");
		rc |= argv_push(w, buf);
		rc |= argv_push(w, "-o");
		rc |= argv_push(w, "ControlPersist=" SSH_PERSIST_S);
	} else {
		snprintf(buf, sizeof buf, "ConnectTimeout=%d", LAUNCH_PROBE_S);
		rc |= argv_push(w, "-o");
		rc |= argv_push(w, "ControlMaster=no");
		rc |= argv_push(w, "-o");
		rc |= argv_push(w, "ControlPath=none");
		rc |= argv_push(w, "-o");
		rc |= argv_push(w, buf);
	}
	if (kh) {
		snprintf(buf, sizeof buf, "UserKnownHostsFile=%s", kh);
		rc |= argv_push(w, "-o");
		rc |= argv_push(w, buf);
	}
	if (id) {
		rc |= argv_push(w, "-i");
		rc |= argv_push(w, id);
		rc |= argv_push(w, "-o");
		rc |= argv_push(w, "IdentitiesOnly=yes");
	}
	if (port > 0) {
		snprintf(buf, sizeof buf, "%lld", port);
		rc |= argv_push(w, "-p");
		rc |= argv_push(w, buf);
	}
	if (user) {
		rc |= argv_push(w, "-l");
		rc |= argv_push(w, user);
	}
	json_array_foreach(opts, i, o) {
		rc |= argv_push(w, "-o");
		rc |= argv_push(w, json_string_value(o));
	}
	return rc ? -1 : 0;
}

static char **ssh_wrap(struct launcher *l, const char *host, const char *cwd,
		       char *const *argv, char *err, size_t errlen)
{
	char **w = argv_new();
	char *script = launch_script(cwd, argv);
	char *cmd = NULL;
	size_t len = 0, cap;
	int rc;

	if (!w || !script)
		goto oom;
	/* "sh -c SCRIPT": whatever the login shell is, POSIX sh runs it. */
	cap = strlen(script) * 4 + 64;
	cmd = malloc(cap);
	if (!cmd)
		goto oom;
	memcpy(cmd, "sh -c ", 7);
	len = 6;
	if (shell_quote(cmd, cap, &len, script) < 0)
		goto oom;
	rc = ssh_common(l, &w, 1);
	rc |= argv_push(&w, "--");
	rc |= argv_push(&w, host);
	rc |= argv_push(&w, cmd);
	if (rc)
		goto oom;
	free(script);
	free(cmd);

	/* Remember the host so fini() can end its master connection. */
	for (size_t i = 0; i < l->nhosts; i++)
		if (strcmp(l->hosts[i], host) == 0)
			return w;
	if (l->nhosts < sizeof l->hosts / sizeof l->hosts[0])
		l->hosts[l->nhosts++] = strdup(host);
	return w;
oom:
	free(script);
	free(cmd);
	launch_argv_free(w);
	snprintf(err, errlen, "out of memory building the ssh command for %s", host);
	return NULL;
}

static void rm_dir(const char *dir)
{
	char **w = argv_new();
	pid_t p;

	argv_push(&w, "rm");
	argv_push(&w, "-rf");
	argv_push(&w, "--");
	argv_push(&w, dir);
	p = fork();
	if (p == 0) {
		execvp(w[0], w);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
	launch_argv_free(w);
}

static void ssh_fini(struct launcher *l)
{
	for (size_t i = 0; i < l->nhosts; i++) {
		char **w = argv_new();
		pid_t p;

		if (ssh_common(l, &w, 1) == 0 && argv_push(&w, "-O") == 0 &&
		    argv_push(&w, "exit") == 0 && argv_push(&w, "--") == 0 &&
		    argv_push(&w, l->hosts[i]) == 0) {
			p = fork();
			if (p == 0) {
				int nul = open("/dev/null", O_RDWR);
				if (nul >= 0) {
					dup2(nul, 0);
					dup2(nul, 1);
					dup2(nul, 2);
				}
				execvp(w[0], w);
				_exit(127);
			}
			if (p > 0)
				waitpid(p, NULL, 0);
		}
		launch_argv_free(w);
	}
	if (l->ctl_dir[0]) {
		rm_dir(l->ctl_dir);
		l->ctl_dir[0] = '\0';
	}
}

/*
 * Whether host still takes a login: `ssh HOST true` on a connection of
 * its own (the run's master for that host may be the very thing that
 * broke).  Exit 0: it answers.  255: ssh could not reach it or log in;
 * why is ssh's own message ("connect to host ... Connection refused", a
 * timeout).  Anything else: it logged in, so the host is up.
 */
static int ssh_probe(struct launcher *l, const char *host, char *why, size_t len)
{
	char **w = argv_new();
	char out[512];
	int st, rc;

	if (!w || ssh_common(l, &w, 0) < 0 || argv_push(&w, "--") < 0 || argv_push(&w, host) < 0 ||
	    argv_push(&w, "true") < 0) {
		launch_argv_free(w);
		snprintf(why, len, "out of memory");
		return -1;
	}
	st = launch_capture(w, (LAUNCH_PROBE_S + 2) * 1000, out, sizeof out);
	launch_argv_free(w);
	if (st < 0) {
		snprintf(why, len, "a new ssh login got no answer within %d s", LAUNCH_PROBE_S + 2);
		return 0;
	}
	rc = !(WIFEXITED(st) && WEXITSTATUS(st) == 255);
	snprintf(why, len, "%.480s", out[0] ? out : rc ? "it took a new login" : "ssh exited with 255");
	return rc;
}

const struct launch_ops launch_ssh_ops = {
	.name = "ssh",
	.version = LAUNCH_OPS_VERSION,
	.direct = 0,
	.init = ssh_init,
	.wrap = ssh_wrap,
	.fini = ssh_fini,
	.probe = ssh_probe,
};
