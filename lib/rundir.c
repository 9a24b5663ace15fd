/*
 * rundir.c - see rundir.h: run directories whose owner holds a flock on
 * their owner.lock, made so that a reaper can never take a live one, and
 * reaped when that lock is free.
 */
#include "rundir.h"
#include "rmtree.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

const char *rundir_base(const char *run_dir)
{
	const char *e;
	if (run_dir && *run_dir)
		return run_dir;
	e = getenv("OQB_RUN_DIR");
	if (e && *e)
		return e;
	if (access("/dev/shm", W_OK) == 0)
		return "/dev/shm";
	e = getenv("TMPDIR");
	return (e && *e) ? e : "/tmp";
}

/* "oqb-" KIND "-" (when KIND is not empty) */
static size_t prefix(const char *kind, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "oqb-%s%s", kind, *kind ? "-" : "");
	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

int rundir_name_match(const char *name, const char *kind, pid_t *pid)
{
	char pre[64];
	size_t n = prefix(kind, pre, sizeof pre), digits = 0;
	if (!n || strncmp(name, pre, n) != 0)
		return 0;
	const char *p = name + n;
	while (isdigit((unsigned char)p[digits]))
		digits++;
	/* PID, a dash, and mkdtemp's six characters (letters and digits) */
	if (digits == 0 || digits > 10 || p[digits] != '-' || strlen(p + digits + 1) != 6)
		return 0;
	for (const char *q = p + digits + 1; *q; q++)
		if (!isalnum((unsigned char)*q))
			return 0;
	if (pid)
		*pid = (pid_t)strtol(p, NULL, 10);
	return 1;
}

int rundir_create(const char *base, const char *kind, char *dir, size_t cap, int *lock_fd,
		  char *err, size_t errlen)
{
	char pre[64], lock[4096];
	struct stat st;
	*lock_fd = -1;
	if (!prefix(kind, pre, sizeof pre) || (size_t)snprintf(dir, cap, "%s/%s%d-XXXXXX", base, pre, (int)getpid()) >= cap ||
	    (size_t)snprintf(lock, sizeof lock, "%s/%s%d-XXXXXX/" RUNDIR_LOCK, base, pre, (int)getpid()) >= sizeof lock) {
		snprintf(err, errlen, "the folder name %s is too long for a run directory; set --run-dir or "
			 "OQB_RUN_DIR to a shorter one", base);
		return -1;
	}
	/* A reaper that takes the lock between our open and our flock
	 * unlinks the file: then we try again under a new name. */
	for (int tries = 0; tries < 5; tries++) {
		snprintf(dir, cap, "%s/%s%d-XXXXXX", base, pre, (int)getpid());
		if (!mkdtemp(dir)) {
			snprintf(err, errlen, "cannot create a run directory under %s: %s (set --run-dir or "
				 "OQB_RUN_DIR to a writable directory)", base, strerror(errno));
			return -1;
		}
		snprintf(lock, sizeof lock, "%s/" RUNDIR_LOCK, dir);
		int fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;   /* reaped already */
			snprintf(err, errlen, "cannot create %s: %s", lock, strerror(errno));
			rm_tree(dir);
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &st) == 0 && st.st_nlink > 0) {
			/* for a person (or a test suite) asking whose it is */
			char exe[PATH_MAX];
			ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
			exe[n > 0 ? n : 0] = '\0';
			dprintf(fd, "pid %d\nexe %s\n", (int)getpid(), exe);
			*lock_fd = fd;
			return 0;
		}
		close(fd);
	}
	snprintf(err, errlen, "cannot keep a run directory under %s: another process removed it each time "
		 "(is something cleaning %s?)", base, base);
	return -1;
}

int rundir_remove(const char *dir, int lock_fd)
{
	int rc = rm_tree(dir), e = errno;
	if (lock_fd >= 0)
		close(lock_fd);
	errno = e;
	return rc;
}

int rundir_reap(const char *base, const char *kind, pid_t pid)
{
	DIR *d = opendir(base);
	struct dirent *e;
	char path[4096], lock[4200];
	int n = 0;
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		pid_t p;
		struct stat st;
		if (!rundir_name_match(e->d_name, kind, &p) || (pid > 0 && p != pid))
			continue;
		if ((size_t)snprintf(path, sizeof path, "%s/%s", base, e->d_name) >= sizeof path)
			continue;
		if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		snprintf(lock, sizeof lock, "%s/" RUNDIR_LOCK, path);
		int fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;   /* not ours to judge: no lock, no removal */
		/* a lock on an unlinked file: someone else removed it meanwhile */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &st) == 0 && st.st_nlink > 0 &&
		    rm_tree(path) == 0)
			n++;
		close(fd);
	}
	closedir(d);
	return n;
}
