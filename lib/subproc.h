/*
 * subproc.h - running a helper program (git, dpkg-query, gnuplot, ssh,
 * scontrol) and reading what it printed, within a bound: the one place
 * the harness forks a short-lived helper and waits for it.
 */
#ifndef OQB_SUBPROC_H
#define OQB_SUBPROC_H

#include <stddef.h>

/* flags */
#define SUBPROC_STDERR 1   /* capture stderr too (else it goes to /dev/null) */

/*
 * Runs argv (no shell; PATH searched) in its own process group, stdin from
 * /dev/null, and reads its stdout (and stderr with SUBPROC_STDERR) into
 * out: the first cap - 1 bytes, NUL-ended, every line.  timeout_ms > 0:
 * a helper still running then is killed with SIGKILL, its group and
 * itself (a host that swallows packets costs timeout_ms, never more).
 * Returns its wait status (>= 0; 127 when it could not be executed, with
 * "cannot run NAME: ..." in out under SUBPROC_STDERR), -1 when it could
 * not be started (pipe, fork), -2 when it timed out.
 */
int subproc_capture(char *const *argv, int flags, int timeout_ms, char *out, size_t cap);

#endif
