/*
 * launch.c - the launcher table and what all launchers share: spawning
 * the local child with its log file, shell quoting, and whether a host
 * name means this machine.
 */
#include "launch.h"
#include "subproc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct launch_ops *const launchers[] = {
	&launch_local_ops,
	&launch_ssh_ops,
	&launch_slurm_ops,
};

int launch_open(struct launcher *l, const char *name, const json_t *ssh_conf,
		char *err, size_t errlen)
{
	memset(l, 0, sizeof *l);
	l->ssh = ssh_conf;
	for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
		if (strcmp(launchers[i]->name, name) == 0) {
			if (launchers[i]->version != LAUNCH_OPS_VERSION) {
				snprintf(err, errlen, "launcher %s: version %d, expected %d", name,
					 launchers[i]->version, LAUNCH_OPS_VERSION);
				return -1;
			}
			l->ops = launchers[i];
			return l->ops->init ? l->ops->init(l, err, errlen) : 0;
		}
	}
	snprintf(err, errlen, "unknown launcher \"%s\"; use local, ssh or slurm", name);
	return -1;
}

void launch_close(struct launcher *l)
{
	if (l->ops && l->ops->fini)
		l->ops->fini(l);
	for (size_t i = 0; i < l->nhosts; i++)
		free(l->hosts[i]);
	l->nhosts = 0;
	l->ops = NULL;
}

char **argv_new(void)
{
	return calloc(1, sizeof(char *));
}

int argv_push(char ***argv, const char *s)
{
	size_t n = 0;
	char **a;

	if (!*argv)
		return -1;
	while ((*argv)[n])
		n++;
	a = realloc(*argv, (n + 2) * sizeof(char *));
	if (!a)
		return -1;
	*argv = a;
	a[n] = strdup(s);
	a[n + 1] = NULL;
	return a[n] ? 0 : -1;
}

void launch_argv_free(char **argv)
{
	if (!argv)
		return;
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

int shell_quote(char *buf, size_t cap, size_t *len, const char *s)
{
	/* Words made only of safe characters stay readable. */
	int plain = *s != '\0';
	for (const char *p = s; *p && plain; p++)
		plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			       "_-./:=,+@%", *p) != NULL;
	size_t need = plain ? strlen(s) : 2 + strlen(s) * 4;

	if (*len + need + 1 >= cap)
		return -1;
	if (plain) {
		memcpy(buf + *len, s, strlen(s));
		*len += strlen(s);
	} else {
		buf[(*len)++] = '\'';
		for (const char *p = s; *p; p++) {
			if (*p == '\'') {
				/* close, escaped quote, reopen */
				memcpy(buf + *len, "'\\''", 4);
				*len += 4;
			} else {
				buf[(*len)++] = *p;
			}
		}
		buf[(*len)++] = '\'';
	}
	buf[*len] = '\0';
	return 0;
}

char *launch_describe(struct launcher *l, const char *host, const char *cwd,
		      char *const *argv)
{
	char err[256];
	char **w = l->ops->wrap(l, host, cwd, argv, err, sizeof err);
	size_t cap = 1 << 16, len = 0;
	char *out;

	if (!w)
		return strdup(err);
	out = malloc(cap);
	if (!out) {
		launch_argv_free(w);
		return NULL;
	}
	out[0] = '\0';
	for (size_t i = 0; w[i]; i++) {
		if (i && len + 2 < cap)
			out[len++] = ' ';
		if (shell_quote(out, cap, &len, w[i]) < 0)
			break;
	}
	launch_argv_free(w);
	return out;
}

int launch_start(struct launcher *l, const char *host, const char *cwd, char *const *argv,
		 const char *log_path, pid_t *pid, char *err, size_t errlen)
{
	char **w = l->ops->wrap(l, host, cwd, argv, err, errlen);
	int logfd, pfd[2], e = 0;
	pid_t p;
	ssize_t r;

	if (!w)
		return -1;
	logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0) {
		snprintf(err, errlen, "cannot create log file %s: %s", log_path, strerror(errno));
		launch_argv_free(w);
		return -1;
	}
	/* The child reports an exec failure through this pipe; CLOEXEC closes
	 * it on success, so the parent reads EOF. */
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(logfd);
		launch_argv_free(w);
		return -1;
	}
	p = fork();
	if (p < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(logfd);
		close(pfd[0]);
		close(pfd[1]);
		launch_argv_free(w);
		return -1;
	}
	if (p == 0) {
		int nul = open("/dev/null", O_RDONLY);
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		if (cwd && l->ops->direct && chdir(cwd) < 0) {
			e = errno;
			goto child_fail;
		}
		execvp(w[0], w);
		e = errno;
child_fail:
		if (write(pfd[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	close(logfd);
	do
		r = read(pfd[0], &e, sizeof e);
	while (r < 0 && errno == EINTR);
	close(pfd[0]);
	if (r == (ssize_t)sizeof e) {
		int st;
		waitpid(p, &st, 0);
		snprintf(err, errlen, "cannot run %s%s%s: %s", w[0], cwd ? " in " : "", cwd ? cwd : "",
			 strerror(e));
		launch_argv_free(w);
		return -1;
	}
	launch_argv_free(w);
	*pid = p;
	return 0;
}

char *launch_script(const char *cwd, char *const *argv)
{
	size_t cap = 1 << 16, len = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	s[0] = '\0';
	if (cwd) {
		memcpy(s, "cd ", 4);
		len = 3;
		if (shell_quote(s, cap, &len, cwd) < 0 || len + 5 >= cap)
			goto fail;
		memcpy(s + len, " && ", 5);
		len += 4;
	}
	/* exec: the remote shell is replaced, so the benchmark process is
	 * the one ssh/srun waits for and its exit status is ours. */
	if (len + 6 >= cap)
		goto fail;
	memcpy(s + len, "exec ", 6);
	len += 5;
	for (size_t i = 0; argv[i]; i++) {
		if (i) {
			if (len + 2 >= cap)
				goto fail;
			s[len++] = ' ';
			s[len] = '\0';
		}
		if (shell_quote(s, cap, &len, argv[i]) < 0)
			goto fail;
	}
	return s;
fail:
	free(s);
	return NULL;
}

int host_is_local(const char *s)
{
	char me[256];
	struct in_addr a4;

	if (!s || !*s || strcmp(s, "localhost") == 0 || strcmp(s, "::1") == 0)
		return 1;
	if (inet_pton(AF_INET, s, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (gethostname(me, sizeof me) == 0) {
		me[sizeof me - 1] = '\0';
		if (strcmp(s, me) == 0)
			return 1;
	}
	return 0;
}

int launch_capture(char *const *argv, int timeout_ms, char *out, size_t outlen)
{
	int st = subproc_capture(argv, SUBPROC_STDERR, timeout_ms, out, outlen);
	size_t len = strlen(out);

	if (st == -1) {
		snprintf(out, outlen, "cannot start %s: %s", argv[0], strerror(errno));
		return -1;
	}
	if (st == -2) {
		snprintf(out, outlen, "%s did not finish within %.1f s", argv[0], timeout_ms / 1e3);
		return -1;
	}
	/* one line: newlines become "; ", trailing ones go */
	while (len && (out[len - 1] == '\n' || out[len - 1] == '\r'))
		out[--len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (out[i] == '\n' || out[i] == '\r')
			out[i] = ';';
	return st;
}

int launch_probe(struct launcher *l, const char *host, char *why, size_t len)
{
	if (why && len)
		why[0] = '\0';
	if (!l->ops->probe)
		return l->ops->direct ? 1 : -1;
	return l->ops->probe(l, host, why, len);
}

int launch_host_is_here(struct launcher *l, const char *host)
{
	if (host_is_local(host))
		return 1;
	return l->ops == &launch_slurm_ops && slurm_node_is_here(host);
}
