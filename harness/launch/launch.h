/*
 * launch.h - starting benchmark processes on hosts, with existing tools.
 *
 * A launcher turns "run this argv on that host" into a local child
 * process: the program itself (local), an OpenSSH client (ssh) or an srun
 * step (slurm).  Either way the driver owns one local PID per process,
 * its stdout and stderr go to a log file, and it is ended by closing its
 * control socket (the process exits by itself) or, as a last resort, by a
 * signal to that PID.  Nothing is ever killed by name.
 *
 * Launchers are registered in one table in launch.c; each is a
 * `static const struct launch_ops` in its own file.
 */
#ifndef OQB_LAUNCH_H
#define OQB_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>

#define LAUNCH_OPS_VERSION 1

struct launcher;

struct launch_ops {
	const char *name;
	int version;
	/* Whether the PID we hold is the process itself (1) or a proxy (0). */
	int direct;
	/* Sets up what the launcher needs (ssh: a private ControlPath dir). */
	int (*init)(struct launcher *l, char *err, size_t errlen);
	/*
	 * Builds the local argv that runs `argv` on host (in cwd, when not
	 * NULL).  Returns a NULL-terminated malloc'd array of malloc'd strings
	 * (free with launch_argv_free), or NULL with err set.
	 */
	char **(*wrap)(struct launcher *l, const char *host, const char *cwd,
		       char *const *argv, char *err, size_t errlen);
	/* Ends what init started (ssh: the ControlMaster connections). */
	void (*fini)(struct launcher *l);
	/*
	 * Whether host still answers this launcher, asked afresh (ssh: a new
	 * login that shares nothing with the run's connections; slurm: the
	 * node's state and whether its slurmd takes a connection), within
	 * LAUNCH_PROBE_S: 1 it does, 0 it does not (why says what was seen),
	 * -1 cannot tell.  NULL: the launcher cannot lose a host (local).
	 */
	int (*probe)(struct launcher *l, const char *host, char *why, size_t len);
};

/* The bound on one launch_probe, in seconds. */
#define LAUNCH_PROBE_S 10

struct launcher {
	const struct launch_ops *ops;
	const json_t *ssh;          /* hosts.ssh config, or NULL */
	char ctl_dir[256];          /* ssh: private dir for control sockets */
	char *hosts[256];           /* ssh: hosts we connected to (for fini) */
	size_t nhosts;
};

/* Finds the launcher called name and runs its init.  Returns 0 or -1. */
int launch_open(struct launcher *l, const char *name, const json_t *ssh_conf,
		char *err, size_t errlen);
void launch_close(struct launcher *l);

/*
 * Starts argv on host with stdout+stderr appended to log_path and stdin
 * from /dev/null, in a new process group (so a Ctrl-C at the terminal
 * reaches only the driver, which then stops everything in order).
 * Returns 0 with *pid set, or -1 with err naming the program and the
 * reason (exec failures are reported here, not as a mysterious exit 127).
 */
int launch_start(struct launcher *l, const char *host, const char *cwd, char *const *argv,
		 const char *log_path, pid_t *pid, char *err, size_t errlen);

/*
 * Whether host still answers the launcher (launch_ops.probe): 1, 0 with
 * why, or -1 when it cannot tell (the local launcher always answers 1).
 * Takes at most LAUNCH_PROBE_S + 2 seconds.
 */
int launch_probe(struct launcher *l, const char *host, char *why, size_t len);

/*
 * Whether host is this machine as the launcher sees it: host_is_local, or
 * under slurm a node whose NodeHostName is this machine's name.
 */
int launch_host_is_here(struct launcher *l, const char *host);

/*
 * Runs argv (a helper: scontrol, an ssh probe) with stdin from /dev/null,
 * stdout and stderr into out (the first outlen - 1 bytes, NUL-ended), in
 * its own process group, killed with SIGKILL after timeout_ms.  Returns
 * its wait status, or -1 (err in out) when it could not run or timed out.
 */
int launch_capture(char *const *argv, int timeout_ms, char *out, size_t outlen);

/* The command line that would be run, shell-quoted, for logs and --dry-run. */
char *launch_describe(struct launcher *l, const char *host, const char *cwd,
		      char *const *argv);

/* Appends s to buf (of size cap, used len) in POSIX shell single quotes. */
int shell_quote(char *buf, size_t cap, size_t *len, const char *s);

void launch_argv_free(char **argv);

/*
 * The POSIX sh script that runs argv on a remote host, every word
 * single-quoted: "[cd CWD && ]exec ARGV".  malloc'd; NULL if it does not
 * fit in 64 KiB.
 */
char *launch_script(const char *cwd, char *const *argv);

/* Helpers for the launchers. */
char **argv_new(void);
int argv_push(char ***argv, const char *s);

/*
 * Whether Slurm nodes a and b are one machine (the same NodeHostName), as
 * `scontrol show node` says inside an allocation; 0 when it cannot tell.
 */
int slurm_same_machine(const char *a, const char *b);

/* Whether Slurm node `node` runs on this machine (its NodeHostName). */
int slurm_node_is_here(const char *node);

extern const struct launch_ops launch_local_ops;
extern const struct launch_ops launch_ssh_ops;
extern const struct launch_ops launch_slurm_ops;

/* Whether s names this machine (localhost, 127.x, ::1, our host name). */
int host_is_local(const char *s);

#endif
