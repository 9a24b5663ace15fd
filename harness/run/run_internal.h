/*
 * run_internal.h - what the three files of `oqb run` share (run.h is the
 * public face; only harness/run/run.c, point.c and rendezvous.c include
 * this):
 *
 *   run.c         the experiment: plan and trial order, the knee search,
 *                 reruns, progress, run.json after every trial
 *   point.c       one point, one trial: its directory and pmem directory,
 *                 server then clients, merge, canary, self-checks, history
 *                 check; convergence chunks
 *   rendezvous.c  the processes of one point: start through the launcher,
 *                 the control channel's event loop (HELLO, GO, DONE), the
 *                 first failure with the culprit's log tail, and the stop
 *                 in order (BYE/STOP, close, wait, then signals by PID)
 */
#ifndef OQB_RUN_INTERNAL_H
#define OQB_RUN_INTERNAL_H

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <jansson.h>

#include "launch.h"
#include "runconf.h"

#define MAX_POINTS RUNCONF_MAX_POINTS
#define MAX_PENDING 64

/* The signal that asked the run to stop (SIGINT, SIGTERM, SIGHUP), or 0. */
extern volatile sig_atomic_t run_signal;

struct proc {
	char role[8];
	unsigned rank;
	const char *host;
	pid_t pid;
	int started, exited, status;
	int stopping;            /* we are ending it: its exit is expected */
	int eof;                 /* its control connection closed */
	uint64_t t_launch_ms;    /* now_ms() when the launcher started it */
	struct ctl *ctl;
	json_t *hello, *result;
	char log[PATH_MAX + 400];
	char json[PATH_MAX + 400];
};

struct run {
	const struct run_opts *o;
	struct runconf rc;
	struct launcher l;
	int launcher_open;
	char dir[PATH_MAX];
	char run_id[PATH_MAX];
	char bin[PATH_MAX];
	json_t *runj;
	json_t *loads_from;            /* --loads-from's base run (loadsfrom.h), or NULL */
	FILE *tsv;
	struct point pts[MAX_POINTS];
	size_t npts;
	/* trials: per point, its first trial's point object and every trial's entry */
	json_t *pj0[MAX_POINTS];
	json_t *entries[MAX_POINTS];
	json_t *discarded[MAX_POINTS];  /* disturbed trials run again */
	json_t *built[MAX_POINTS];      /* the point as last merged ... */
	size_t built_from[MAX_POINTS];  /* ... from this many trials and discarded ones */
	size_t ntrials_done, ntrials;
	double *canaries;              /* every canary p50 so far */
	size_t ncanaries;
	int canary_warned;             /* a failed canary was said once */
	struct trial_ref { size_t point; unsigned trial; } *order;
	unsigned nprobes;              /* knee search probes run (knee.h) */
	json_t *build;                 /* what the binaries said they are (binbuild.h) */
};

struct prun {
	struct run *r;
	const struct point *pt;
	const struct runconf *rc;      /* the point's config (its sweep variant) */
	char pdir[PATH_MAX + 300];
	char pmem[PATH_MAX + 64];      /* the server's --pmem-path, or "" */
	int lfd;
	char ctl_hp[300];
	struct proc *procs;      /* [0] server, [1..] clients */
	size_t nprocs;
	struct ctl *pending[MAX_PENDING];
	size_t npending;
	int failed;
	char err[16384];
	const struct proc *culprit;
	const char *lost_host;         /* a host that stopped answering the launcher, or NULL */
	char warn[PATH_MAX * 3];
	double canary_ns;              /* this trial's canary p50, or -1 */
	json_t *checks;                /* this trial's self-checks */
	int aux;                       /* the verbs canary's processes, not the trial's */
};

/* Whether host is the one the launcher lost in this point (rendezvous.c:
 * fail_ended), so nothing more is asked of it. */
static inline int prun_host_lost(const struct prun *pr, const char *host)
{
	return pr->lost_host && host && strcmp(pr->lost_host, host) == 0;
}

static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- run.c ---- */

/* mkdir -p: 0, or -1 with err naming the directory. */
int run_mkdirs(const char *path, char *err, size_t errlen);

/* ---- point.c ---- */

/* "workload.value_size=200 load=5000 ops/s", for progress and errors. */
void point_label(char *buf, size_t len, const struct runconf *rc, const struct point *pt);

/* The server's --pmem-path for a point: a fresh directory named after the
 * run and the point, or "" when the point needs none. */
void point_pmem(const struct run *r, const struct point *pt, char *buf, size_t len);

/* Runs one point: a fresh server and clients, merged into the point
 * object.  Returns it, or NULL with the failure in pr->err (the caller
 * records it).  pr holds the run's processes until prun_free. */
json_t *run_point(struct run *r, struct prun *pr, const struct point *pt);

/* One trial: run_point, or with duration_s "auto" chunks of it until the
 * P99's CI is narrow enough (point.c says how). */
json_t *run_trial(struct run *r, struct prun *pr, const struct point *pt0);

/* Why a trial was disturbed (a disturbance check warned), or NULL. */
const char *trial_disturbed(const json_t *checks);

/* ---- rendezvous.c ---- */

enum { WANT_HELLO, WANT_DONE, WANT_EXIT };

/* Records the first failure (p: the culprit, or NULL); later ones are
 * consequences and are dropped. */
void prun_fail(struct prun *pr, const struct proc *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Opens pr's control port (hosts.ctl_bind, hosts.ctl_port) and the
 * HOST:PORT its processes are told (hosts.ctl_addr): 0, or -1 failed. */
int prun_listen(struct prun *pr);

/* Starts p through the launcher with argv (consumed); 0, or -1 failed. */
int prun_start(struct prun *pr, struct proc *p, char **argv);

/* Runs the event loop until every process of role has reached `what`, a
 * failure happens, or deadline_ms passes (then fails naming the first
 * laggard and `why`, the config knob that set the deadline). */
int prun_wait_all(struct prun *pr, const char *role, int what, uint64_t deadline_ms, const char *why);

/* Ends every process of the point, in order (rendezvous.c). */
void prun_stop_all(struct prun *pr);

void prun_free(struct prun *pr);

#endif
