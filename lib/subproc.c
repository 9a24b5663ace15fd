/*
 * subproc.c - see subproc.h.
 */
#include "subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long ms_since(const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000LL + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

int subproc_capture(char *const *argv, int flags, int timeout_ms, char *out, size_t cap)
{
	int pfd[2], st = 0, timed_out = 0;
	size_t len = 0;
	struct timespec t0;
	pid_t p;

	if (cap)
		out[0] = '\0';
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	p = fork();
	if (p < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (p == 0) {
		int nul = open("/dev/null", O_RDWR);
		setpgid(0, 0);   /* its own group: a timeout ends it and its children */
		signal(SIGPIPE, SIG_DFL);
		dup2(pfd[1], 1);
		if (nul >= 0)
			dup2(nul, 0);
		if (flags & SUBPROC_STDERR)
			dup2(pfd[1], 2);
		else if (nul >= 0)
			dup2(nul, 2);
		execvp(argv[0], argv);
		if (flags & SUBPROC_STDERR)
			dprintf(2, "cannot run %s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char buf[512];
		if (timeout_ms > 0) {
			long long left = timeout_ms - ms_since(&t0);
			struct pollfd pf = { .fd = pfd[0], .events = POLLIN };
			int n = left > 0 ? poll(&pf, 1, (int)left) : 0;
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0) {
				timed_out = 1;
				/* the process we started, by PID: its group, and
				 * itself in case it had not made the group yet */
				kill(-p, SIGKILL);
				kill(p, SIGKILL);
				break;
			}
		}
		ssize_t r = read(pfd[0], buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		for (ssize_t i = 0; i < r; i++)
			if (len + 1 < cap)
				out[len++] = buf[i];
	}
	close(pfd[0]);
	if (cap)
		out[len] = '\0';
	while (waitpid(p, &st, 0) < 0 && errno == EINTR)
		;
	return timed_out ? -2 : st;
}
