/*
 * mcd.h - one memcached process, owned by the server: start, readiness,
 * identity, liveness, stop.  Used by the `memcached` back end
 * (be_memcached.c), which keeps one per server process.
 *
 * Life of the process:
 *   - mcd_start makes a private run directory (mkdtemp, mode 0700) under
 *     the parent it is given, forks and execs the packaged memcached binary
 *     unmodified, listening only on the UNIX socket memcached.sock there
 *     (-s: no TCP or UDP), with its stdout and stderr in memcached.log and
 *     its PID in memcached.pid.  The child closes every inherited
 *     descriptor above stderr (the driver's control socket among them, so
 *     memcached can never hold a connection of the server open), unblocks
 *     the signals the server blocks, and asks for SIGTERM when the server
 *     dies (PR_SET_PDEATHSIG), so even a kill -9 of the server does not
 *     leave memcached running.
 *   - Readiness is polled, never slept for: connect() to the socket until
 *     it is accepted, then a `version` round trip and `stats settings`,
 *     within MCD_READY_MS; if memcached exits first (a bad option, -I too
 *     large for -m) the error carries its exit status and log.
 *   - mcd_check reaps it without waiting: a memcached that exited while the
 *     server still needs it is reported with its status and last log lines.
 *   - mcd_stop sends SIGTERM to its PID (SIGKILL after MCD_STOP_MS), waits
 *     for it, and removes the socket, the log, the PID file and the
 *     directory.  It is called on every exit path of the server (normal
 *     stop, failed start, SIGINT/SIGTERM, lost driver).
 */
#ifndef OQB_MCD_H
#define OQB_MCD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>

#define MCD_READY_MS 10000   /* from fork to a `version` answer */
#define MCD_STOP_MS  2000    /* SIGTERM to exit, before SIGKILL */

struct mcd_conf {
	const char *bin;          /* a path, or a name looked up on PATH */
	const char *run_parent;   /* parent of the private run directory */
	uint64_t memory_mb;       /* -m */
	unsigned threads;         /* -t */
	unsigned max_item_mb;     /* -I <n>m */
};

struct mcd;

/* Starts memcached and waits until it answers; NULL with the reason. */
struct mcd *mcd_start(const struct mcd_conf *c, char *err, size_t errlen);
/* A new connection to it (a blocking UNIX stream socket), or -1. */
int mcd_connect(const struct mcd *d, char *err, size_t errlen);
pid_t mcd_pid(const struct mcd *d);
/* 0 while it runs; -1 once it has exited, with what happened (exit status
 * or signal, and its last log lines) in msg[cap].  Thread-safe. */
int mcd_check(struct mcd *d, char *msg, size_t cap);
/* Its last nlines of log, as one line (" | " between lines). */
void mcd_log_tail(const struct mcd *d, char *out, size_t cap, int nlines);
/* Identity for results: binary, version, pid, command line, `stats
 * settings` as read at start, and a few counters of `stats` read now. */
json_t *mcd_json(struct mcd *d);
/* Stops it by PID and removes its run directory; frees d. */
void mcd_stop(struct mcd *d);

#endif
