/*
 * test_rundir.c - run directories (lib/rundir.h): the names each kind
 * matches, a live owner's directory is never reaped (by a lock held in a
 * process that is still there, whatever its PID), a killed owner's is, and
 * nothing without an owner.lock or of another kind is touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "rmtree.h"
#include "rundir.h"

static char base[256];

static int make_base(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(base, sizeof base, "%s/test_rundir-XXXXXX", t && *t ? t : "/tmp");
	return mkdtemp(base) ? 0 : -1;
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

TEST(names_of_each_kind)
{
	pid_t pid = 0;
	CHECK(rundir_name_match("oqb-1234-AbCdE9", "", &pid) && pid == 1234);
	CHECK(rundir_name_match("oqb-mc-77-abcdef", "mc", &pid) && pid == 77);
	CHECK(rundir_name_match("oqb-rdb-5-ZZZZZZ", "rdb", NULL));
	CHECK(rundir_name_match("oqb-crash-42-a1b2c3", "crash", &pid) && pid == 42);
	/* another kind's, the driver's pmem directories, logs, short names */
	CHECK(!rundir_name_match("oqb-mc-77-abcdef", "", NULL));
	CHECK(!rundir_name_match("oqb-1234-AbCdE9", "mc", NULL));
	CHECK(!rundir_name_match("oqb-20261128T090000Z-p01", "", NULL));
	CHECK(!rundir_name_match("oqb-run-p01", "", NULL));
	CHECK(!rundir_name_match("oqb-1234-AbCdE9.server.log", "", NULL));
	CHECK(!rundir_name_match("oqb-1234-AbCd", "", NULL));
	CHECK(!rundir_name_match("oqb--AbCdE9", "", NULL));
	CHECK(!rundir_name_match("oqbx-1234-AbCdE9", "", NULL));
	CHECK(!rundir_name_match("oqb-crash-AbCdE9", "crash", NULL));
}

TEST(create_names_locks_and_removes)
{
	char dir[512], err[256], want[64], lock[600];
	int fd;
	REQUIRE(make_base() == 0, "mkdtemp: %s", strerror(errno));
	REQUIRE(rundir_create(base, "mc", dir, sizeof dir, &fd, err, sizeof err) == 0, "%s", err);
	snprintf(want, sizeof want, "/oqb-mc-%d-", (int)getpid());
	CHECK(strstr(dir, want) != NULL, "%s", dir);
	snprintf(lock, sizeof lock, "%s/" RUNDIR_LOCK, dir);
	CHECK(exists(lock));
	/* it says whose it is */
	char text[256] = "", line[64];
	FILE *f = fopen(lock, "r");
	if (f) {
		size_t n = fread(text, 1, sizeof text - 1, f);
		text[n] = '\0';
		fclose(f);
	}
	snprintf(line, sizeof line, "pid %d\nexe /", (int)getpid());
	CHECK(strncmp(text, line, strlen(line)) == 0 && strstr(text, "test_rundir\n"), "owner.lock: %s", text);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC, "the lock is not inherited across exec");
	/* held by us: a reaper leaves it */
	CHECK(rundir_reap(base, "mc", 0) == 0 && exists(dir));
	CHECK(rundir_remove(dir, fd) == 0 && !exists(dir));
	/* a base that cannot be written: the message names it and the fix */
	CHECK(rundir_create("/proc/no-such-dir", "", dir, sizeof dir, &fd, err, sizeof err) == -1 && fd == -1);
	CHECK(strstr(err, "/proc/no-such-dir") && strstr(err, "OQB_RUN_DIR"), "%s", err);
	rm_tree(base);
}

/* A child makes a run directory of kind and waits, holding its lock,
 * until killed; its path comes back through the pipe. */
static pid_t owner(const char *kind, char *dir, size_t cap)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char d[512], err[256];
		int fd;
		close(p[0]);
		if (rundir_create(base, kind, d, sizeof d, &fd, err, sizeof err) != 0)
			_exit(1);
		if (write(p[1], d, strlen(d) + 1) < 0)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	ssize_t n = pid > 0 ? read(p[0], dir, cap - 1) : -1;
	close(p[0]);
	if (n <= 0)
		return -1;
	dir[n] = '\0';
	return pid;
}

TEST(a_live_owner_keeps_it_a_killed_one_does_not)
{
	char a[512], b[512], old[600], other[600], file[600];
	REQUIRE(make_base() == 0, "mkdtemp: %s", strerror(errno));
	pid_t pa = owner("", a, sizeof a), pb = owner("", b, sizeof b);
	REQUIRE(pa > 0 && pb > 0, "owners did not start");
	/* an older build's directory (no owner.lock) of a dead PID, another
	 * kind's, and a plain file with a run directory's name */
	snprintf(old, sizeof old, "%s/oqb-999999-AbCdEf", base);
	snprintf(other, sizeof other, "%s/oqb-mc-999999-AbCdEf", base);
	snprintf(file, sizeof file, "%s/oqb-999998-AbCdEf", base);
	CHECK(mkdir(old, 0700) == 0 && mkdir(other, 0700) == 0);
	int fd = open(file, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	close(fd);

	CHECK(rundir_reap(base, "", 0) == 0, "both owners live: nothing to reap");
	CHECK(exists(a) && exists(b));
	kill(pa, SIGKILL);
	waitpid(pa, NULL, 0);
	CHECK(rundir_reap(base, "", pb) == 0 && exists(a), "only pb's asked for");
	CHECK(rundir_reap(base, "", 0) == 1, "the killed owner's directory goes");
	CHECK(!exists(a) && exists(b), "a gone, b (live) kept");
	CHECK(exists(old) && exists(other) && exists(file), "no lock, other kind, a file: untouched");
	kill(pb, SIGKILL);
	waitpid(pb, NULL, 0);
	CHECK(rundir_reap(base, "", pb) == 1 && !exists(b));
	rm_tree(base);
}

UNIT_MAIN(names_of_each_kind, create_names_locks_and_removes, a_live_owner_keeps_it_a_killed_one_does_not)
