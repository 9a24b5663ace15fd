/*
 * mcd.c - one memcached process owned by the server: start it from the
 * packaged binary, poll until it answers, read its identity, notice its
 * death, stop it by PID and leave nothing behind (the contract is in
 * mcd.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "mcd.h"
#include "mcmeta.h"
#include "rundir.h"

struct mcd {
	pid_t pid;
	int reaped;
	int status;               /* wait status once reaped */
	pthread_mutex_t lock;     /* reaped, status */
	char bin[4096];
	char dir[512], sock[600], log[600], pidfile[600];
	int lock_fd;              /* holds dir's owner.lock (rundir.h) */
	char version[64];
	json_t *settings;         /* `stats settings` at start */
	json_t *argv;             /* the command line */
};

/* ---- small helpers ---- */

static uint64_t now_ms(void)
{
	return clock_ns() / 1000000u;
}

static void pause_ms(unsigned ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };
	nanosleep(&ts, NULL);
}

/* The binary: a path as given, or the first executable NAME on PATH. */
static int find_bin(const char *name, char *out, size_t cap, char *err, size_t errlen)
{
	if (strchr(name, '/')) {
		if (access(name, X_OK) != 0) {
			err_set(err, errlen, "memcached binary %s: %s; set server.backend.memcached_path "
				"(--memcached-path) to memcached's path", name, strerror(errno));
			return -1;
		}
		snprintf(out, cap, "%s", name);
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);
		if (n > 0 && (size_t)snprintf(out, cap, "%.*s/%s", (int)n, path, name) < cap &&
		    access(out, X_OK) == 0)
			return 0;
		path += n + (end ? 1 : 0);
	}
	err_set(err, errlen, "%s is not installed (not found on PATH): install Debian's memcached "
		"(make deps, or apt-get install memcached), or set server.backend.memcached_path "
		"(--memcached-path) to its path", name);
	return -1;
}

void mcd_log_tail(const struct mcd *d, char *out, size_t cap, int nlines)
{
	char buf[4096];
	out[0] = '\0';
	int fd = open(d->log, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	off_t size = lseek(fd, 0, SEEK_END);
	off_t from = size > (off_t)sizeof buf - 1 ? size - (off_t)sizeof buf + 1 : 0;
	ssize_t n = pread(fd, buf, sizeof buf - 1, from);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	/* back up over nlines line ends */
	char *p = buf + n;
	int seen = 0;
	while (p > buf) {
		if (p[-1] == '\n' && ++seen == nlines)
			break;
		p--;
	}
	size_t o = 0;
	for (; *p && o + 4 < cap; p++) {
		if (*p == '\n') {
			o += (size_t)snprintf(out + o, cap - o, " | ");
		} else if ((unsigned char)*p >= 0x20) {
			out[o++] = *p;
		}
	}
	out[o < cap ? o : cap - 1] = '\0';
}

static void describe_exit(const struct mcd *d, int status, char *msg, size_t cap)
{
	char tail[1500], how[96];
	if (WIFSIGNALED(status))
		snprintf(how, sizeof how, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(status));
	mcd_log_tail(d, tail, sizeof tail, 8);
	snprintf(msg, cap, "memcached (pid %d, %s) %s; its last log lines: %s", (int)d->pid, d->bin, how,
		 tail[0] ? tail : "(its log is empty)");
}

int mcd_check(struct mcd *d, char *msg, size_t cap)
{
	int st, r = 0;
	pthread_mutex_lock(&d->lock);
	if (!d->reaped && waitpid(d->pid, &st, WNOHANG) == d->pid) {
		d->reaped = 1;
		d->status = st;
	}
	if (d->reaped) {
		describe_exit(d, d->status, msg, cap);
		r = -1;
	}
	pthread_mutex_unlock(&d->lock);
	return r;
}

pid_t mcd_pid(const struct mcd *d)
{
	return d->pid;
}

int mcd_connect(const struct mcd *d, char *err, size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(d->sock) >= sizeof a.sun_path) {
		err_set(err, errlen, "memcached socket path %s is longer than a UNIX socket allows; "
			"use a shorter --run-dir", d->sock);
		return -1;
	}
	strcpy(a.sun_path, d->sock);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err_set(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		err_set(err, errlen, "connect to memcached at %s: %s", d->sock, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- a start-up or stats query: one command, replies until want ---- */

static int send_all(int fd, const char *s, size_t n, uint64_t deadline)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			s += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		uint64_t t = now_ms();
		if (t >= deadline || poll(&p, 1, (int)(deadline - t)) < 0)
			return -1;
	}
	return 0;
}

/* Sends cmd and reads replies until one of kind `last`; STAT lines go into
 * *stats, VERSION into version.  0, or -1 with the reason. */
static int query(int fd, const char *cmd, enum mcm_kind last, json_t *stats, char *version, size_t vcap,
		 uint64_t deadline, char *err, size_t errlen)
{
	static __thread uint8_t buf[65536];
	size_t have = 0;
	if (send_all(fd, cmd, strlen(cmd), deadline) != 0) {
		err_set(err, errlen, "cannot send \"%.*s\" to memcached: %s", (int)strcspn(cmd, "\r"), cmd,
			errno ? strerror(errno) : "timed out");
		return -1;
	}
	for (;;) {
		struct mcm_reply r;
		char why[256];
		long used = mcm_parse(buf, have, &r, why, sizeof why);
		if (used < 0) {
			err_set(err, errlen, "memcached's answer to \"%.*s\" is malformed: %s", (int)strcspn(cmd, "\r"),
				cmd, why);
			return -1;
		}
		if (used > 0) {
			if (r.kind == MCM_STAT && stats) {
				char name[128];
				snprintf(name, sizeof name, "%.*s", (int)r.msg_len, r.msg);
				json_object_set_new(stats, name, json_stringn((const char *)r.val, r.val_len));
			} else if (r.kind == MCM_VERSION && version) {
				snprintf(version, vcap, "%.*s", (int)r.msg_len, r.msg);
			} else if (r.kind != MCM_STAT && r.kind != last) {
				err_set(err, errlen, "memcached answered \"%.*s\" with %s %.*s", (int)strcspn(cmd, "\r"), cmd,
					mcm_kind_name(r.kind), (int)r.msg_len, r.msg ? r.msg : "");
				return -1;
			}
			int done = r.kind == last;
			memmove(buf, buf + used, have - (size_t)used);
			have -= (size_t)used;
			if (done)
				return 0;
			continue;
		}
		if (have == sizeof buf) {
			err_set(err, errlen, "memcached's answer to \"%.*s\" is longer than %zu bytes",
				(int)strcspn(cmd, "\r"), cmd, sizeof buf);
			return -1;
		}
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t t = now_ms();
		if (t >= deadline || poll(&p, 1, (int)(deadline - t)) <= 0) {
			err_set(err, errlen, "memcached did not answer \"%.*s\" in time", (int)strcspn(cmd, "\r"), cmd);
			return -1;
		}
		ssize_t n = recv(fd, buf + have, sizeof buf - have, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			err_set(err, errlen, "memcached closed the connection while answering \"%.*s\"",
				(int)strcspn(cmd, "\r"), cmd);
			return -1;
		}
		if (n > 0)
			have += (size_t)n;
	}
}

/* ---- start and stop ---- */

static void child(const struct mcd *d, char *const argv[], int logfd)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* The signal follows the thread that forked, not the process: the
	 * server forks from worker 0's thread as it opens its backend, and
	 * that thread ends only after every instance was closed (server.c). */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0)
		_exit(127);
	int fd0 = open("/dev/null", O_RDONLY);
	if (fd0 >= 0 && fd0 != 0) {
		dup2(fd0, 0);
	}
	close_range(3, ~0u, 0);
	execv(d->bin, argv);
	dprintf(2, "exec %s: %s\n", d->bin, strerror(errno));
	_exit(127);
}

static void remove_files(struct mcd *d)
{
	unlink(d->sock);
	unlink(d->log);
	unlink(d->pidfile);
	if (d->dir[0] && rundir_remove(d->dir, d->lock_fd) != 0)
		log_msg(LOG_WARN, "memcached run directory %s: cannot remove: %s", d->dir, strerror(errno));
	d->lock_fd = -1;   /* closed by rundir_remove */
}

static void reap_or_kill(struct mcd *d)
{
	pthread_mutex_lock(&d->lock);
	if (!d->reaped && d->pid > 0) {
		int st;
		kill(d->pid, SIGTERM);
		uint64_t deadline = now_ms() + MCD_STOP_MS;
		while (waitpid(d->pid, &st, WNOHANG) != d->pid) {
			if (now_ms() >= deadline) {
				log_msg(LOG_WARN, "memcached (pid %d) did not exit within %d ms of SIGTERM; sending SIGKILL",
					(int)d->pid, MCD_STOP_MS);
				kill(d->pid, SIGKILL);
				waitpid(d->pid, &st, 0);
				break;
			}
			pause_ms(1);
		}
		d->reaped = 1;
		d->status = st;
	}
	pthread_mutex_unlock(&d->lock);
}

void mcd_stop(struct mcd *d)
{
	if (!d)
		return;
	reap_or_kill(d);
	remove_files(d);
	json_decref(d->settings);
	json_decref(d->argv);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

struct mcd *mcd_start(const struct mcd_conf *c, char *err, size_t errlen)
{
	struct mcd *d = calloc(1, sizeof *d);
	if (!d) {
		err_set(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->pid = -1;
	d->lock_fd = -1;
	if (find_bin(c->bin && *c->bin ? c->bin : "memcached", d->bin, sizeof d->bin, err, errlen) != 0)
		goto fail;
	if (c->max_item_mb == 0 || (uint64_t)c->max_item_mb * 2 > c->memory_mb) {
		err_set(err, errlen, "memcached: max_item_mb %u must be at least 1 and at most half of its memory "
			"(%llu MiB = memory_mb x workers); raise memory_mb or lower max_item_mb", c->max_item_mb,
			(unsigned long long)c->memory_mb);
		goto fail;
	}
	/* oqb-mc-SERVERPID-XXXXXX, locked for the server's life (rundir.h);
	 * first those of servers killed before they could remove theirs */
	const char *parent = rundir_base(c->run_parent);
	char e2[600];
	rundir_reap(parent, "mc", 0);
	if (rundir_create(parent, "mc", d->dir, sizeof d->dir, &d->lock_fd, e2, sizeof e2) != 0) {
		err_set(err, errlen, "memcached: %s (server.scratch_dir)", e2);
		d->dir[0] = '\0';
		goto fail;
	}
	snprintf(d->sock, sizeof d->sock, "%s/memcached.sock", d->dir);
	snprintf(d->log, sizeof d->log, "%s/memcached.log", d->dir);
	snprintf(d->pidfile, sizeof d->pidfile, "%s/memcached.pid", d->dir);

	char mem[24], thr[16], item[24];
	snprintf(mem, sizeof mem, "%llu", (unsigned long long)c->memory_mb);
	snprintf(thr, sizeof thr, "%u", c->threads ? c->threads : 1);
	snprintf(item, sizeof item, "%um", c->max_item_mb);
	/* As root memcached insists on -u; it drops to that user before it
	 * makes the socket, so the user must own the run directory: ours. */
	char *argv[] = { d->bin, "-s", d->sock, "-a", "0700", "-m", mem, "-t", thr, "-I", item, "-v",
			 geteuid() == 0 ? "-u" : NULL, "root", NULL };
	d->argv = json_array();
	for (int i = 0; argv[i]; i++)
		json_array_append_new(d->argv, json_string(argv[i]));
	int logfd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (logfd < 0) {
		err_set(err, errlen, "memcached: cannot create its log %s: %s", d->log, strerror(errno));
		goto fail;
	}
	uint64_t t0 = clock_ns();
	d->pid = fork();
	if (d->pid == 0)
		child(d, argv, logfd);
	close(logfd);
	if (d->pid < 0) {
		err_set(err, errlen, "memcached: fork: %s", strerror(errno));
		goto fail;
	}
	FILE *pf = fopen(d->pidfile, "we");
	if (pf) {
		fprintf(pf, "%d\n", (int)d->pid);
		fclose(pf);
	}

	/* Ready when a connection is accepted and `version` answered. */
	uint64_t deadline = now_ms() + MCD_READY_MS;
	int fd = -1;
	char cerr[256] = "";
	while (fd < 0) {
		char msg[2048];
		if (mcd_check(d, msg, sizeof msg) != 0) {
			err_set(err, errlen, "memcached did not start: %s", msg);
			goto fail;
		}
		fd = mcd_connect(d, cerr, sizeof cerr);
		if (fd >= 0)
			break;
		if (now_ms() >= deadline) {
			char tail[1024];
			mcd_log_tail(d, tail, sizeof tail, 8);
			err_set(err, errlen, "memcached (pid %d) did not accept connections on %s within %d ms (%s); "
				"its log: %s", (int)d->pid, d->sock, MCD_READY_MS, cerr, tail);
			goto fail;
		}
		pause_ms(1);
	}
	d->settings = json_object();
	int q = query(fd, "version\r\n", MCM_VERSION, NULL, d->version, sizeof d->version, deadline, err, errlen);
	if (q == 0)
		q = query(fd, "stats settings\r\n", MCM_END, d->settings, NULL, 0, deadline, err, errlen);
	close(fd);
	if (q != 0)
		goto fail;
	log_msg(LOG_INFO, "memcached %s ready in %.1f ms: pid %d, socket %s, log %s", d->version,
		(double)(clock_ns() - t0) / 1e6, (int)d->pid, d->sock, d->log);
	return d;
fail:
	if (d->pid > 0) {
		reap_or_kill(d);
	}
	remove_files(d);
	json_decref(d->settings);
	json_decref(d->argv);
	free(d);
	return NULL;
}

/* A copy of j (a string, an array or an object of them) with the private
 * run directory written as RUN_DIR: it is gone after the run, and a
 * report names only files that are there. */
static json_t *without_dir(const json_t *j, const char *dir)
{
	size_t n = strlen(dir), i;
	const char *k;
	json_t *v, *c;
	if (json_is_string(j)) {
		const char *sv = json_string_value(j);
		if (n && strncmp(sv, dir, n) == 0 && (sv[n] == '/' || sv[n] == '\0')) {
			char *r = malloc(strlen(sv) - n + sizeof "RUN_DIR");
			if (!r)
				return json_string("RUN_DIR");
			sprintf(r, "RUN_DIR%s", sv + n);
			c = json_string(r);
			free(r);
			return c;
		}
		return json_copy((json_t *)j);
	}
	if (json_is_array(j)) {
		c = json_array();
		json_array_foreach(j, i, v)
			json_array_append_new(c, without_dir(v, dir));
		return c;
	}
	if (json_is_object(j)) {
		c = json_object();
		json_object_foreach((json_t *)j, k, v)
			json_object_set_new(c, k, without_dir(v, dir));
		return c;
	}
	return json_deep_copy(j);
}

json_t *mcd_json(struct mcd *d)
{
	static const char *const keep[] = {
		"curr_connections", "cmd_get", "cmd_set", "get_hits", "get_misses", "delete_hits",
		"delete_misses", "incr_hits", "incr_misses", "curr_items", "bytes", "limit_maxbytes",
		"evictions", "store_too_large", "store_no_memory", "conn_yields", NULL,
	};
	json_t *j = json_pack("{s:s,s:s,s:i,s:o,s:o,s:s}", "binary", d->bin, "version", d->version,
			      "pid", (int)d->pid, "argv", without_dir(d->argv, d->dir),
			      "settings", without_dir(d->settings, d->dir),
			      "run_dir_is", "private (RUN_DIR: oqb-mc-SERVERPID-XXXXXX, removed at exit)");
	char err[256];
	int fd = mcd_connect(d, err, sizeof err);
	json_t *st = json_object();
	if (fd >= 0 && query(fd, "stats\r\n", MCM_END, st, NULL, 0, now_ms() + 2000, err, sizeof err) == 0) {
		json_t *sel = json_object();
		for (int i = 0; keep[i]; i++) {
			json_t *v = json_object_get(st, keep[i]);
			if (v)
				json_object_set_new(sel, keep[i], json_integer(strtoll(json_string_value(v), NULL, 10)));
		}
		json_object_set_new(j, "stats_at_end", sel);
	} else {
		json_object_set_new(j, "stats_at_end_error", json_string(err));
	}
	json_decref(st);
	if (fd >= 0)
		close(fd);
	return j;
}
