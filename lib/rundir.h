/*
 * rundir.h - private run directories in a shared folder (the shared-memory
 * folder, /dev/shm, by default) that are never left behind for good, even
 * when the process that made one is killed with SIGKILL.
 *
 * A run directory is BASE/oqb-[KIND-]PID-XXXXXX (mode 0700; PID is its
 * creator's, XXXXXX from mkdtemp).  KIND says whose it is: "" for the shm
 * transport's server (its rings, map and mailboxes), "mc" for the memcached
 * a server starts, "rdb" for a server's private RocksDB directory, "crash"
 * for the crash tester.  Inside is `owner.lock`, a file its creator holds
 * an exclusive flock(2) on for as long as it lives, and which says who that
 * is ("pid N" and "exe PATH" lines, for a person or a test suite asking
 * whose a directory is; nothing reads them back).  The kernel drops that
 * lock when the process ends, however it ends, so "is the owner gone?" has
 * an exact answer that a PID cannot give (PIDs are reused, and differ
 * between PID namespaces that share one /dev/shm): the lock can be taken.
 *
 * rundir_reap removes the run directories of one kind whose lock it can
 * take, and only those: a live owner's directory is never touched, and
 * neither is anything without an `owner.lock` (another program's files,
 * or a run directory of an older build, which a user removes by hand).
 * The creator cannot lose its new directory to a reaper between mkdtemp
 * and taking its lock: it makes the lock file, takes the lock, and then
 * checks the file is still linked; if a reaper got there first it starts
 * again with a new name (test_rundir).
 *
 * Who reaps: each kind's creator reaps its own kind in the same folder
 * before it makes a directory (shm/shm_srv.c, mcd.c, be_rocksdb.c,
 * crashtest.c), and `oqb run` reaps those of a local server it saw die
 * (harness/run/point.c).  So a kill -9 leaves at most one directory per
 * kind until the next start of that kind, and none after a run or test
 * whose starter cleans up.
 */
#ifndef OQB_RUNDIR_H
#define OQB_RUNDIR_H

#include <stddef.h>
#include <sys/types.h>

#define RUNDIR_LOCK "owner.lock"

/* The folder for run directories when the user named none: $OQB_RUN_DIR,
 * else /dev/shm where it is writable, else $TMPDIR, else /tmp.  run_dir,
 * when set and not empty, wins. */
const char *rundir_base(const char *run_dir);

/* Makes BASE/oqb-[KIND-]PID-XXXXXX with its lock held; its path into
 * dir[cap] and the lock's descriptor (close-on-exec) into *lock_fd.
 * 0, or -1 with a message naming BASE and the fix in err. */
int rundir_create(const char *base, const char *kind, char *dir, size_t cap, int *lock_fd,
		  char *err, size_t errlen);

/* Removes dir and all in it, then drops its lock (closes lock_fd when it
 * is >= 0).  0 when dir is gone, else -1 with errno set. */
int rundir_remove(const char *dir, int lock_fd);

/* Removes every run directory of KIND in BASE, owned by this user, whose
 * lock can be taken (its owner is gone); with pid > 0 only that
 * creator's.  Returns how many it removed. */
int rundir_reap(const char *base, const char *kind, pid_t pid);

/* Whether name (an entry of a folder, no slash) is a run directory name of
 * KIND, and if so its creator's PID into *pid. */
int rundir_name_match(const char *name, const char *kind, pid_t *pid);

#endif
