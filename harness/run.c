/*
 * run.c - `oqb run`: plan, launch, rendezvous, collect, merge, run.json.
 *
 * One point at a time, each with a fresh server and a fresh control port
 * (so nothing from a previous point can talk into this one).  The driver
 * is one thread with one poll() loop over the listening socket, the
 * accepted control connections, and (every tick) waitpid(WNOHANG) on the
 * PIDs it started.  Everything that can go wrong turns into one message,
 * "[host:role:rank] what happened (pid N)" plus the tail of that process's
 * log, recorded in run.json; the first failure stops the run.
 *
 * Results directory:
 *   run.json           the merged results (rewritten after every point)
 *   processes.tsv      every process started: point, role, rank, host, pid
 *                      (the local PID: the process itself, or its ssh/srun)
 *   pNN-SYSTEM[-KEY-VALUE]-LOAD/   per point: ROLE-RANK.log (stdout+stderr)
 *                      and ROLE-RANK.json (the result it sent in DONE)
 *
 * A point whose server needs --pmem-path (durable, or the pmkv backend)
 * gets a fresh directory, PARENT/oqb-RUNID-pNN, removed after the point:
 * a durable server would otherwise recover the previous point's rings,
 * pmkv would start from its data, and a second server on one directory is
 * refused (the server locks it).
 */
#include "run.h"
#include "check_cmd.h"
#include "checks.h"
#include "ctl.h"
#include "launch.h"
#include "merge.h"
#include "procargs.h"
#include "rng.h"
#include "runconf.h"
#include "runjson.h"
#include "stats.h"
#include "trials.h"

#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_POINTS RUNCONF_MAX_POINTS
#define MAX_PENDING 64
#define TICK_MS 100
#define TERM_WAIT_MS 2000

static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
	g_signal = sig;
}

struct proc {
	char role[8];
	unsigned rank;
	const char *host;
	pid_t pid;
	int started, exited, status;
	int stopping;            /* we are ending it: its exit is expected */
	int eof;                 /* its control connection closed */
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
	char warn[PATH_MAX * 3];
	double canary_ns;              /* this trial's canary p50, or -1 */
	json_t *checks;                /* this trial's self-checks */
	int aux;                       /* the verbs canary's processes, not the trial's */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void fmt_ns(char *buf, size_t len, double ns)
{
	if (ns < 1e3)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 1e4)
		snprintf(buf, len, "%.2fus", ns / 1e3);
	else if (ns < 1e6)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
}

static void fmt_dur(char *buf, size_t len, double s)
{
	long t = lround(s);

	if (t >= 3600)
		snprintf(buf, len, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
	else if (t >= 60)
		snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, len, "%lds", t);
}

const char *self_bin_dir(void)
{
	static char dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
	char *slash;

	if (n <= 0)
		return ".";
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (!slash)
		return ".";
	*slash = '\0';
	return dir;
}

/* mkdir -p */
static int mkdirs(const char *path, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof tmp) {
		snprintf(err, errlen, "bad directory name \"%s\"", path);
		return -1;
	}
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(tmp, 0755) != 0 && errno != EEXIST) {
				snprintf(err, errlen, "cannot create directory %s: %s", tmp, strerror(errno));
				return -1;
			}
			*p = c;
			if (c == '\0')
				break;
		}
	}
	return 0;
}

/* The sweep value of a point as compact JSON (malloc'd), or NULL. */
static char *sweep_value_text(const struct runconf *rc, const struct point *pt)
{
	if (pt->sweep < 0 || !rc->sweep_values)
		return NULL;
	return json_dumps(json_array_get(rc->sweep_values, (size_t)pt->sweep),
			  JSON_COMPACT | JSON_ENCODE_ANY);
}

/* "workload.value_size=200 load=5000 ops/s", for progress and errors. */
static void load_label(char *buf, size_t len, const struct runconf *rc, const struct point *pt)
{
	char *v = sweep_value_text(rc, pt);
	char sw[256] = "";

	if (v)
		snprintf(sw, sizeof sw, "%s=%.120s ", rc->sweep_key, v);
	free(v);
	if (pt->outstanding > 0)
		snprintf(buf, len, "%soutstanding=%lld", sw, pt->outstanding);
	else if (rc->knee.on && rc->knee_ops <= 0)
		snprintf(buf, len, "%sload=%g x knee", sw, pt->offered_ops);   /* a fraction until the search */
	else
		snprintf(buf, len, "%sload=%.0f ops/s", sw, pt->offered_ops);
}

/*
 * The directory name of a point: pNN-SYSTEM[-KEY-VALUE]-LOAD, KEY being
 * the last part of the sweep key and VALUE its value with anything but
 * [A-Za-z0-9._] turned into '_' (a path must not depend on JSON syntax).
 */
static void point_name(char *buf, size_t len, const struct runconf *rc, const struct point *pt)
{
	char *v = sweep_value_text(rc, pt);
	char sw[128] = "";

	if (v) {
		const char *k = strrchr(rc->sweep_key, '.');
		size_t n;
		k = k ? k + 1 : rc->sweep_key;
		snprintf(sw, sizeof sw, "-%.40s-%.40s", k, v);
		for (n = 1; sw[n]; n++)
			if (!isalnum((unsigned char)sw[n]) && sw[n] != '.' && sw[n] != '_' && sw[n] != '-')
				sw[n] = '_';
		free(v);
	}
	char tr[32] = "";
	if (rc->repeat > 1)
		snprintf(tr, sizeof tr, "-t%u", pt->trial + 1);
	if (rc->converge)
		snprintf(tr + strlen(tr), sizeof tr - strlen(tr), "-k%u", pt->chunk + 1);
	if (pt->rerun)
		snprintf(tr + strlen(tr), sizeof tr - strlen(tr), "-r%u", pt->rerun);
	if (pt->outstanding > 0)
		snprintf(buf, len, "p%02u-%s%s-c%lld%s", pt->idx + 1, pt->system, sw, pt->outstanding, tr);
	else
		snprintf(buf, len, "p%02u-%s%s-%.0f%s", pt->idx + 1, pt->system, sw, pt->offered_ops, tr);
}

static void proc_label(char *buf, size_t len, const struct proc *p)
{
	snprintf(buf, len, "[%s:%s:%u]", p->host, p->role, p->rank);
}

/* The last nlines of a log file, each indented, for error messages. */
static void log_tail(const char *path, char *out, size_t cap, int nlines)
{
	FILE *f = fopen(path, "r");
	char buf[4096];
	long size;
	size_t n, start;
	int lines = 0;

	out[0] = '\0';
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0, SEEK_SET);
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (n == 0)
		return;
	start = n;
	while (start > 0) {
		if (buf[start - 1] == '\n' && ++lines >= nlines)
			break;
		start--;
	}
	size_t len = 0;
	const char *p = buf + start;
	while (*p && len + 8 < cap) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		int w = snprintf(out + len, cap - len, "\n    | %.*s", (int)l, p);
		if (w < 0 || (size_t)w >= cap - len)
			break;
		len += (size_t)w;
		p += l + (e ? 1 : 0);
	}
}

static void status_text(char *buf, size_t len, int st)
{
	if (WIFEXITED(st)) {
		int c = WEXITSTATUS(st);
		snprintf(buf, len, "exited with status %d%s", c,
			 c == CTL_EXIT_LOST ? " (it lost its control connection)" :
			 c == 127 ? " (command not found on that host?)" :
			 c == 255 ? " (ssh: connection or authentication failed?)" : "");
	} else if (WIFSIGNALED(st)) {
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	} else {
		snprintf(buf, len, "ended with wait status %d", st);
	}
}

/* Records the first failure; later ones are consequences and are dropped. */
static void fail(struct prun *pr, const struct proc *p, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct prun *pr, const struct proc *p, const char *fmt, ...)
{
	char msg[2048], label[300], tail[8192] = "";
	va_list ap;

	if (pr->failed)
		return;
	pr->failed = 1;
	pr->culprit = p;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!p) {
		snprintf(pr->err, sizeof pr->err, "%s", msg);
		return;
	}
	proc_label(label, sizeof label, p);
	if (p->started) {
		/* Give a dying process's last words a moment to reach the file. */
		struct timespec ts = { 0, 50 * 1000000L };
		nanosleep(&ts, NULL);
		log_tail(p->log, tail, sizeof tail, 12);
	}
	snprintf(pr->err, sizeof pr->err, "%s %s%s%s%s%s", label, msg,
		 p->started ? "; log: " : "", p->started ? p->log : "",
		 tail[0] ? ", last lines:" : "", tail);
}

static struct proc *find_proc(struct prun *pr, const char *role, long long rank)
{
	for (size_t i = 0; i < pr->nprocs; i++)
		if (strcmp(pr->procs[i].role, role) == 0 && pr->procs[i].rank == rank)
			return &pr->procs[i];
	return NULL;
}

/* Collects exit statuses; an exit we did not ask for is a failure. */
static void reap(struct prun *pr)
{
	for (size_t i = 0; i < pr->nprocs; i++) {
		struct proc *p = &pr->procs[i];
		int st;

		if (!p->started || p->exited)
			continue;
		if (waitpid(p->pid, &st, WNOHANG) != p->pid)
			continue;
		p->exited = 1;
		p->status = st;
		if (!p->stopping && !p->result) {
			char s[160];
			status_text(s, sizeof s, st);
			fail(pr, p, "%s before %s (pid %d)", s, p->hello ? "sending DONE" : "sending HELLO",
			     (int)p->pid);
		}
	}
}

/* Waits up to ms for p to exit, so a message can say how it ended. */
static void await_exit(struct proc *p, int ms)
{
	for (int waited = 0; p->started && !p->exited && waited < ms; waited += 20) {
		int st;
		if (waitpid(p->pid, &st, WNOHANG) == p->pid) {
			p->exited = 1;
			p->status = st;
			break;
		}
		poll(NULL, 0, 20);
	}
}

static void write_result_file(struct proc *p)
{
	if (json_dump_file(p->result, p->json, JSON_INDENT(1)) != 0)
		fprintf(stderr, "oqb: warning: cannot write %s: %s\n", p->json, strerror(errno));
}

static void handle_msg(struct prun *pr, struct proc *p, json_t *m)
{
	const char *type = json_string_value(json_object_get(m, "type"));

	if (strcmp(type, "HELLO") == 0) {
		if (!p->hello) {
			p->hello = json_incref(m);
			json_t *row = json_pack("{s:I, s:s, s:I, s:O?, s:O?, s:O?, s:I}",
						"point", (json_int_t)pr->pt->idx, "role", p->role,
						"rank", (json_int_t)p->rank,
						"host", json_object_get(m, "host"),
						"node", json_object_get(m, "node"),
						"pid", json_object_get(m, "pid"),
						"local_pid", (json_int_t)p->pid);
			if (pr->aux)
				json_object_set_new(row, "purpose", json_string("canary"));
			json_array_append_new(json_object_get(json_object_get(pr->r->runj, "hosts"),
							      "processes"), row);
		}
	} else if (strcmp(type, "DONE") == 0) {
		if (!p->result) {
			json_t *res = json_object_get(m, "result");
			p->result = json_incref(res ? res : json_null());
			write_result_file(p);
			const char *e = json_string_value(json_object_get(res, "error"));
			if (e && !p->stopping)
				fail(pr, p, "finished with an error: %s", e);
		}
	} else if (strcmp(type, "ERROR") == 0) {
		const char *msg = json_string_value(json_object_get(m, "message"));
		if (!p->stopping)
			fail(pr, p, "reported an error: %s", msg ? msg : "(no message)");
	}
	/* Anything else is a newer process talking; ignore it. */
}

/* A pending connection spoke: attach it to the process it names. */
static void attach(struct prun *pr, size_t pi, json_t *m)
{
	struct ctl *k = pr->pending[pi];
	const char *role = json_string_value(json_object_get(m, "role"));
	json_t *rk = json_object_get(m, "rank");
	struct proc *p = role && json_is_integer(rk) ? find_proc(pr, role, json_integer_value(rk)) : NULL;

	pr->pending[pi] = pr->pending[--pr->npending];
	if (!p || !p->started || p->ctl) {
		fprintf(stderr, "oqb: warning: control connection from %s (role %s, rank %lld) matches no "
			"process of this point; closed\n", ctl_peer(k), role ? role : "?",
			json_is_integer(rk) ? (long long)json_integer_value(rk) : -1LL);
		ctl_close(k);
		return;
	}
	p->ctl = k;
	handle_msg(pr, p, m);
}

/*
 * One turn of the event loop: accept, read, dispatch, reap.  Waits at most
 * ms for something to happen.
 */
static void step(struct prun *pr, int ms)
{
	struct pollfd fds[1 + MAX_PENDING + 1100];
	struct proc *who[1 + MAX_PENDING + 1100];
	size_t nf = 0, i;
	char err[1024];

	if (pr->lfd >= 0) {
		fds[nf] = (struct pollfd){ .fd = pr->lfd, .events = POLLIN };
		who[nf++] = NULL;
	}
	/* Pending connections (no message yet) take fds[fpend .. fpend+np). */
	struct ctl *snap[MAX_PENDING];
	size_t fpend = nf, np = pr->npending;
	for (i = 0; i < np; i++) {
		snap[i] = pr->pending[i];
		fds[nf] = (struct pollfd){ .fd = ctl_fd(pr->pending[i]), .events = POLLIN };
		who[nf++] = NULL;
	}
	for (i = 0; i < pr->nprocs; i++) {
		struct proc *p = &pr->procs[i];
		if (p->ctl && !p->eof) {
			fds[nf] = (struct pollfd){ .fd = ctl_fd(p->ctl), .events = POLLIN };
			who[nf++] = p;
		}
	}
	if (ms > TICK_MS)
		ms = TICK_MS;   /* waitpid needs a look now and then */
	int n = poll(fds, nf, ms);
	if (n < 0 && errno != EINTR)
		fail(pr, NULL, "poll: %s", strerror(errno));

	if (n > 0) {
		size_t f = 0;
		if (pr->lfd >= 0) {
			if (fds[f].revents & POLLIN) {
				struct ctl *k = ctl_accept(pr->lfd, err, sizeof err);
				if (k && pr->npending < MAX_PENDING)
					pr->pending[pr->npending++] = k;
				else if (k)
					ctl_close(k);
			}
			f++;
		}
		/* Pending connections: the first message says who it is.  Walk
		 * the snapshot, since attach() and accept reorder the array. */
		f = fpend + np;
		for (i = 0; i < np; i++) {
			if (!fds[fpend + i].revents)
				continue;
			size_t pi;
			for (pi = 0; pi < pr->npending && pr->pending[pi] != snap[i]; pi++)
				;
			if (pi == pr->npending)
				continue;
			int r = ctl_pump(snap[i], err, sizeof err);
			json_t *m = ctl_pop(snap[i]);
			if (m) {
				attach(pr, pi, m);
				json_decref(m);
				/* Anything queued behind the first message. */
				struct proc *p = NULL;
				for (size_t q = 0; q < pr->nprocs; q++)
					if (pr->procs[q].ctl == snap[i])
						p = &pr->procs[q];
				while (p && (m = ctl_pop(snap[i])) != NULL) {
					handle_msg(pr, p, m);
					json_decref(m);
				}
				if (p && r == 0)
					p->eof = 1;
			} else if (r <= 0) {
				if (r < 0)
					fprintf(stderr, "oqb: warning: %s\n", err);
				pr->pending[pi] = pr->pending[--pr->npending];
				ctl_close(snap[i]);
			}
		}
		for (; f < nf; f++) {
			struct proc *p = who[f];
			if (!p || !fds[f].revents)
				continue;
			int r = ctl_pump(p->ctl, err, sizeof err);
			json_t *m;
			while ((m = ctl_pop(p->ctl)) != NULL) {
				handle_msg(pr, p, m);
				json_decref(m);
			}
			if (r < 0 && !p->stopping) {
				fail(pr, p, "%s", err);
				p->eof = 1;
			} else if (r <= 0) {
				p->eof = 1;
			}
		}
	}
	reap(pr);
	/* A control connection closed before DONE: say how the process ended. */
	for (i = 0; i < pr->nprocs; i++) {
		struct proc *p = &pr->procs[i];
		if (p->eof && !p->result && !p->stopping && !pr->failed) {
			char s[160];
			await_exit(p, 1000);
			if (p->exited) {
				status_text(s, sizeof s, p->status);
				fail(pr, p, "%s before sending DONE (pid %d)", s, (int)p->pid);
			} else {
				fail(pr, p, "closed its control connection before sending DONE, and is still "
				     "running (pid %d)", (int)p->pid);
			}
		}
	}
	if (g_signal && !pr->failed)
		fail(pr, NULL, "interrupted by SIG%s; every process of the point was stopped",
		     sigabbrev_np(g_signal) ? sigabbrev_np(g_signal) : "?");
}

typedef int (*pred_fn)(const struct prun *pr, const char *role, int what);
enum { WANT_HELLO, WANT_DONE, WANT_EXIT };

static int all_have(const struct prun *pr, const char *role, int what)
{
	for (size_t i = 0; i < pr->nprocs; i++) {
		const struct proc *p = &pr->procs[i];
		if (role && strcmp(p->role, role) != 0)
			continue;
		if (!p->started)
			continue;
		if (what == WANT_HELLO && !p->hello)
			return 0;
		if (what == WANT_DONE && !p->result)
			return 0;
		if (what == WANT_EXIT && !p->exited)
			return 0;
	}
	return 1;
}

/*
 * Runs the loop until every process of role has reached `what`, a failure
 * happens, or deadline_ms passes (then fails naming the first laggard and
 * `why`, the config knob that set the deadline).
 */
static int wait_all(struct prun *pr, const char *role, int what, uint64_t deadline_ms,
		    const char *why)
{
	while (!pr->failed && !all_have(pr, role, what)) {
		uint64_t now = now_ms();
		if (now >= deadline_ms) {
			for (size_t i = 0; i < pr->nprocs; i++) {
				struct proc *p = &pr->procs[i];
				if (strcmp(p->role, role) != 0 || !p->started)
					continue;
				if (what == WANT_HELLO && !p->hello) {
					fail(pr, p, "did not report ready (no HELLO) within %s; it is still running "
					     "(pid %d)%s", why, (int)p->pid,
					     pr->r->l.ops->direct ? "" :
					     "; if the host does not answer, check that it is up and "
					     "reachable and that the launcher can log in");
					break;
				}
				if (what == WANT_DONE && !p->result) {
					fail(pr, p, "did not finish (no DONE) within %s (pid %d)", why, (int)p->pid);
					break;
				}
			}
			break;
		}
		step(pr, (int)(deadline_ms - now));
	}
	return pr->failed ? -1 : 0;
}

static void tsv_add(struct run *r, const struct prun *pr, const struct proc *p)
{
	if (!r->tsv)
		return;
	fprintf(r->tsv, "%u\t%s\t%s\t%u\t%s\t%d\t%s\n", pr->pt->idx + 1, pr->pt->system, p->role,
		p->rank, p->host, (int)p->pid, p->log);
	fflush(r->tsv);
}

static int start_proc(struct prun *pr, struct proc *p, char **argv)
{
	char err[1024];

	if (!argv) {
		fail(pr, p, "out of memory building its command line");
		return -1;
	}
	if (launch_start(&pr->r->l, p->host, NULL, argv, p->log, &p->pid, err, sizeof err) < 0) {
		launch_argv_free(argv);
		fail(pr, p, "could not be started: %s", err);
		return -1;
	}
	launch_argv_free(argv);
	p->started = 1;
	tsv_add(pr->r, pr, p);
	return 0;
}

/*
 * Ends every process of the point: BYE to clients, STOP to the server (and
 * a wait for its DONE), close all control connections (processes exit by
 * themselves), wait, and only then signal what is still there, by PID.
 */
static void stop_all(struct prun *pr)
{
	const struct runconf *rc = &pr->r->rc;
	char err[256];
	size_t i;
	int stop_sent = 0;

	for (i = 0; i < pr->nprocs; i++) {
		struct proc *p = &pr->procs[i];
		if (strcmp(p->role, "client") == 0 && p->ctl && !p->eof)
			ctl_send(p->ctl, json_pack("{s:s}", "type", "BYE"), err, sizeof err);
		if (strcmp(p->role, "client") == 0)
			p->stopping = 1;
	}
	for (i = 0; i < pr->nprocs; i++) {
		struct proc *p = &pr->procs[i];
		if (strcmp(p->role, "server") != 0)
			continue;
		if (p->ctl && !p->eof && !p->exited) {
			ctl_send(p->ctl, json_pack("{s:s}", "type", "STOP"), err, sizeof err);
			stop_sent = 1;
		}
		p->stopping = 1;
	}
	if (stop_sent) {
		uint64_t deadline = now_ms() + (uint64_t)(rc->stop_s * 1000);
		int was_failed = pr->failed;
		/* The server's DONE; a server that dies now is a failure of
		 * this point only if nothing failed before.  A server that has
		 * exited is still read until its control socket ends: it sends
		 * DONE and exits at once, and its exit can be seen before the
		 * DONE it left in the socket is read (a race CI hit). */
		while (now_ms() < deadline) {
			int pending = 0;
			for (i = 0; i < pr->nprocs; i++) {
				struct proc *p = &pr->procs[i];
				if (strcmp(p->role, "server") == 0 && p->started && !p->result && !p->eof &&
				    (!p->exited || p->ctl))
					pending = 1;
			}
			if (!pending)
				break;
			step(pr, (int)(deadline - now_ms()));
		}
		for (i = 0; i < pr->nprocs && !was_failed; i++) {
			struct proc *p = &pr->procs[i];
			if (strcmp(p->role, "server") == 0 && p->started && !p->result) {
				char s[160] = "is still running";
				if (p->exited)
					status_text(s, sizeof s, p->status);
				fail(pr, p, "sent no DONE within %g s of STOP (timeouts.stop_s) and %s (pid %d)",
				     rc->stop_s, s, (int)p->pid);
			}
		}
	}

	/* Closing the control sockets ends every process (ctl.h). */
	for (i = 0; i < pr->nprocs; i++) {
		if (pr->procs[i].ctl) {
			ctl_close(pr->procs[i].ctl);
			pr->procs[i].ctl = NULL;
		}
	}
	for (i = 0; i < pr->npending; i++)
		ctl_close(pr->pending[i]);
	pr->npending = 0;
	if (pr->lfd >= 0) {
		close(pr->lfd);
		pr->lfd = -1;
	}

	uint64_t deadline = now_ms() + (uint64_t)(rc->exit_s * 1000);
	while (!all_have(pr, NULL, WANT_EXIT) && now_ms() < deadline) {
		reap(pr);
		if (!all_have(pr, NULL, WANT_EXIT))
			poll(NULL, 0, 20);
	}
	for (int sig = SIGTERM; ; sig = SIGKILL) {
		int left = 0;
		for (i = 0; i < pr->nprocs; i++) {
			struct proc *p = &pr->procs[i];
			if (!p->started || p->exited)
				continue;
			left = 1;
			/* Each child leads its own process group (launch_start). */
			if (kill(-p->pid, sig) != 0)
				kill(p->pid, sig);
			if (!pr->warn[0])
				snprintf(pr->warn, sizeof pr->warn, "[%s:%s:%u] did not exit within %g s "
					 "(timeouts.exit_s) after its control connection closed; sent %s to pid %d",
					 p->host, p->role, p->rank, rc->exit_s, sig == SIGTERM ? "SIGTERM" : "SIGKILL",
					 (int)p->pid);
		}
		if (!left)
			break;
		uint64_t until = now_ms() + TERM_WAIT_MS;
		while (!all_have(pr, NULL, WANT_EXIT) && now_ms() < until) {
			reap(pr);
			if (!all_have(pr, NULL, WANT_EXIT))
				poll(NULL, 0, 20);
		}
		if (sig == SIGKILL) {
			/* SIGKILL cannot be refused: collect them. */
			for (i = 0; i < pr->nprocs; i++) {
				struct proc *p = &pr->procs[i];
				if (p->started && !p->exited && waitpid(p->pid, &p->status, 0) == p->pid)
					p->exited = 1;
			}
			break;
		}
	}
}

/* The parent of private pmem directories: hosts.scratch_dir, else
 * $OQB_RUN_DIR, else /dev/shm (tmpfs: pmkv's msync costs nothing there,
 * while on a disk it costs milliseconds per put, docs/durability.md), else
 * the results directory. */
static void pmem_parent(const struct run *r, const struct runconf *rc, char *buf, size_t len)
{
	const char *env = getenv("OQB_RUN_DIR");
	struct stat st;

	if (rc->pmem_dir)
		snprintf(buf, len, "%s", rc->pmem_dir);
	else if (rc->scratch_dir)
		snprintf(buf, len, "%s", rc->scratch_dir);
	else if (env && *env)
		snprintf(buf, len, "%s", env);
	else if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0)
		snprintf(buf, len, "/dev/shm");
	else if (!realpath(r->dir, buf))
		snprintf(buf, len, "%s", r->dir);
}

/* The server's --pmem-path for a point: a fresh directory named after the
 * run and the point, or "" when the point needs none. */
static void point_pmem(const struct run *r, const struct point *pt, char *buf, size_t len)
{
	const struct runconf *rc = runconf_for(&r->rc, pt);
	char parent[PATH_MAX];
	size_t n;

	buf[0] = '\0';
	if (!runconf_needs_pmem(rc, pt->system))
		return;
	pmem_parent(r, rc, parent, sizeof parent);
	n = strlen(parent);
	while (n > 1 && parent[n - 1] == '/')
		parent[--n] = '\0';
	snprintf(buf, len, "%s/oqb-%s-p%02u", parent, r->run_id[0] ? r->run_id : "RUNID", pt->idx + 1);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/*
 * Removes the point's pmem directory: here directly, on another host
 * through the launcher (`rm -rf -- DIR`, logged to pmem-cleanup.log).  A
 * failure only warns: the measurements are already safe.
 */
static void pmem_remove(struct prun *pr)
{
	const char *host = pr->rc->server_host;
	char err[1024], log[PATH_MAX + 400];
	char *argv[] = { "rm", "-rf", "--", pr->pmem, NULL };
	pid_t pid;
	int st = 0, done = 0;

	if (!pr->pmem[0])
		return;
	if (host_is_local(host)) {
		if (nftw(pr->pmem, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT &&
		    !pr->warn[0])
			snprintf(pr->warn, sizeof pr->warn, "cannot remove %s: %s", pr->pmem, strerror(errno));
		return;
	}
	snprintf(log, sizeof log, "%s/pmem-cleanup.log", pr->pdir);
	if (launch_start(&pr->r->l, host, NULL, argv, log, &pid, err, sizeof err) < 0) {
		if (!pr->warn[0])
			snprintf(pr->warn, sizeof pr->warn, "cannot remove %s on %s: %s", pr->pmem, host, err);
		return;
	}
	for (int waited = 0; waited < 30000 && !done; waited += 20) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			done = 1;
		else
			poll(NULL, 0, 20);
	}
	if (!done) {
		kill(-pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	if ((!done || !WIFEXITED(st) || WEXITSTATUS(st) != 0) && !pr->warn[0])
		snprintf(pr->warn, sizeof pr->warn, "could not remove %s on %s (%s); remove it by hand; "
			 "log: %s", pr->pmem, host, done ? "rm failed" : "rm did not finish in 30 s", log);
}

static void prun_free(struct prun *pr)
{
	for (size_t i = 0; i < pr->nprocs; i++) {
		json_decref(pr->procs[i].hello);
		json_decref(pr->procs[i].result);
	}
	free(pr->procs);
	json_decref(pr->checks);
}

/*
 * Runs one point.  Returns the merged point object, or NULL with the
 * failure in pr->err (the caller records it).
 */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Opens pr's control port (hosts.ctl_bind, hosts.ctl_port) and the
 * HOST:PORT its processes are told (hosts.ctl_addr): 0, or -1 failed. */
static int prun_listen(struct prun *pr)
{
	const struct runconf *rc = pr->rc;
	unsigned port = (unsigned)rc->ctl_port;
	char err[512];
	pr->lfd = ctl_listen(rc->ctl_bind, &port, err, sizeof err);
	if (pr->lfd < 0) {
		fail(pr, NULL, "%s (hosts.ctl_port)", err);
		return -1;
	}
	int v6 = strchr(rc->ctl_addr, ':') != NULL;
	snprintf(pr->ctl_hp, sizeof pr->ctl_hp, "%s%s%s:%u", v6 ? "[" : "", rc->ctl_addr, v6 ? "]" : "", port);
	return 0;
}

/* Whether point pt runs over the verbs transport (system erpc has its own). */
static int point_on_verbs(const struct runconf *rc, const struct point *pt)
{
	return strcmp(rc->transport, "verbs") == 0 && strcmp(pt->system, "erpc") != 0;
}

/*
 * The verbs canary after a trial, with the trial's processes gone: an
 * oqb-vfloor echoer on the server's host (its verbs.addr, server worker
 * 0's CPU) and a pinger on client 0's host (client thread 0's CPU),
 * started, met and ended through the launcher and the control channel as
 * the trial's own processes are.  Returns the pinger's round-trip p50
 * (ns), or -1 with why set.  Its processes' logs and results land in the
 * point's directory as canary-*.
 */
static double verbs_canary(struct run *r, const struct prun *tr, int cpu_a, int cpu_b, char *why, size_t len)
{
	const struct runconf *rc = tr->rc;
	struct prun *cp = calloc(1, sizeof *cp);
	char err[1024];
	double p50 = -1;

	if (!cp || !(cp->procs = calloc(2, sizeof *cp->procs))) {
		snprintf(why, len, "out of memory");
		free(cp);
		return -1;
	}
	cp->r = r;
	cp->pt = tr->pt;
	cp->rc = rc;
	cp->lfd = -1;
	cp->nprocs = 2;
	cp->aux = 1;
	snprintf(cp->pdir, sizeof cp->pdir, "%s", tr->pdir);
	for (size_t i = 0; i < 2; i++) {
		struct proc *p = &cp->procs[i];
		snprintf(p->role, sizeof p->role, "%s", i == 0 ? "server" : "client");
		p->host = i == 0 ? rc->server_host : runconf_client_host(rc, 0);
		snprintf(p->log, sizeof p->log, "%s/canary-%s.log", cp->pdir, i == 0 ? "echo" : "ping");
		snprintf(p->json, sizeof p->json, "%s/canary-%s.json", cp->pdir, i == 0 ? "echo" : "ping");
	}
	if (prun_listen(cp) < 0)
		goto out;
	/* Both ends start at once (a login over ssh or srun can take seconds):
	 * the pinger learns the echoer's endpoint from its GO. */
	snprintf(err, sizeof err, "%g s (timeouts.hello_s)", rc->hello_s);
	if (start_proc(cp, &cp->procs[0], procargs_vfloor(r->bin, rc, cp->ctl_hp, NULL, cpu_a)) < 0 ||
	    start_proc(cp, &cp->procs[1], procargs_vfloor(r->bin, rc, cp->ctl_hp, "go", cpu_b)) < 0 ||
	    wait_all(cp, "server", WANT_HELLO, now_ms() + (uint64_t)(rc->hello_s * 1000), err) < 0 ||
	    wait_all(cp, "client", WANT_HELLO, now_ms() + (uint64_t)(rc->hello_s * 1000), err) < 0)
		goto out;
	const char *ep = json_string_value(json_object_get(cp->procs[0].hello, "endpoint"));
	if (!ep || !*ep) {
		fail(cp, &cp->procs[0], "sent a HELLO without an \"endpoint\" (oqb-vfloor and oqb from different "
		     "builds? run make)");
		goto out;
	}
	if (ctl_send(cp->procs[1].ctl, json_pack("{s:s, s:I, s:s}", "type", "GO", "start_in_ns", (json_int_t)0,
						 "endpoint", ep), err, sizeof err) < 0) {
		fail(cp, &cp->procs[1], "GO could not be sent: %s", err);
		goto out;
	}
	/* connecting and the rounds, with the slack of a trial's end */
	double done_s = CANARY_CONNECT_S + CANARY_MAX_MS / 1e3 + rc->grace_s;
	snprintf(err, sizeof err, "%g s (%d s to connect, %d ms of rounds, timeouts.grace_s)", done_s, CANARY_CONNECT_S,
		 CANARY_MAX_MS);
	wait_all(cp, "client", WANT_DONE, now_ms() + (uint64_t)(done_s * 1000), err);
out:
	stop_all(cp);
	if (!cp->failed) {
		const json_t *res = cp->procs[1].result;
		p50 = json_number_value(json_object_get(json_object_get(res, "rtt_ns"), "p50"));
		if (!(p50 > 0)) {
			snprintf(why, len, "the verbs canary (oqb-vfloor) gave no round-trip time: %.300s",
				 json_string_value(json_object_get(res, "error")) ?: "no rtt_ns.p50 in its result");
			p50 = -1;
		}
	} else {
		snprintf(why, len, "the verbs canary (oqb-vfloor) failed: %.900s", cp->err);
	}
	if (p50 < 0 && !r->canary_warned) {
		fprintf(stderr, "oqb: warning: no canary beside this trial: %s (said once; each trial's canary_note "
			"says it again)\n", why);
		r->canary_warned = 1;
	}
	prun_free(cp);
	free(cp);
	return p50;
}

/*
 * After a trial, with every process gone: the canary.  On shm, a cache-line
 * ping-pong on the CPUs the trial's server worker 0 and client thread 0
 * ran on (only where they ran on this machine); on verbs, a raw RC SEND
 * ping-pong between the server's and client 0's hosts (verbs_canary).
 * Then the self-checks (checks.h).
 */
static void self_check(struct run *r, struct prun *pr, json_t *pj, json_t *const *cres, size_t nc)
{
	const struct runconf *rc = pr->rc;
	char why[1024] = "";
	double median = -1;

	pr->canary_ns = -1;
	if (!rc->canary) {
		snprintf(why, sizeof why, "off (config canary: false)");
	} else if (point_on_verbs(rc, pr->pt)) {
		int a, b;
		trials_canary_cpus(pr->procs[0].result, cres, nc, &a, &b);
		pr->canary_ns = verbs_canary(r, pr, a, b, why, sizeof why);
	} else if (strcmp(rc->launcher, "local") != 0 || !host_is_local(rc->server_host)) {
		snprintf(why, sizeof why, "not measured: the server ran on another host (the canary runs "
			 "only where the driver does)");
	} else {
		int a, b;
		trials_canary_cpus(pr->procs[0].result, cres, nc, &a, &b);
		pr->canary_ns = trials_canary(r->bin, a, b, CANARY_MAX_MS, why, sizeof why);
	}
	if (pr->canary_ns > 0) {
		double *c = realloc(r->canaries, (r->ncanaries + 1) * sizeof *c);
		if (c) {
			r->canaries = c;
			c[r->ncanaries++] = pr->canary_ns;
			double *tmp = malloc(r->ncanaries * sizeof *tmp);
			if (tmp) {
				memcpy(tmp, c, r->ncanaries * sizeof *tmp);
				qsort(tmp, r->ncanaries, sizeof *tmp, cmp_double);
				median = r->ncanaries % 2 ? tmp[r->ncanaries / 2]
					 : (tmp[r->ncanaries / 2 - 1] + tmp[r->ncanaries / 2]) / 2;
				free(tmp);
			}
		}
	}
	json_object_set_new(pj, "canary_ns", pr->canary_ns > 0 ? json_real(pr->canary_ns) : json_null());
	if (why[0])
		json_object_set_new(pj, "canary_note", json_string(why));
	pr->checks = checks_point(&rc->checks, pj, cres, nc, pr->procs[0].result, pr->canary_ns, median);
}

/* history: every client records into POINT/history/ (docs/correctness.md). */
static void history_args(char ***a, const char *pdir, const struct runconf *rc)
{
	char dir[PATH_MAX + 400], keys[32];
	snprintf(dir, sizeof dir, "%s/history", pdir);
	snprintf(keys, sizeof keys, "%.17g", rc->history_keys);
	if (argv_push(a, "--history") | argv_push(a, dir) | argv_push(a, "--history-keys") |
	    argv_push(a, keys) | (rc->history_numeric ? argv_push(a, "--history-numeric") : 0)) {
		launch_argv_free(*a);
		*a = NULL;
	}
}

/* "check": true: oqb check the point's history; the verdict goes into the
 * point object and POINT/check.json, and a violation is said loudly. */
static void check_point(struct prun *pr, json_t *pj)
{
	char err[1024];
	struct check_opts co = { .budget = { .time_s = 20, .mem_bytes = 1024u << 20 }, .threads = 2 };
	json_t *v = check_point_dir(pr->pdir, &co, NULL, err, sizeof err);
	if (!v) {
		json_object_set_new(pj, "check", json_pack("{s:s,s:s}", "verdict", "unknown", "error", err));
		fprintf(stderr, "oqb run: check: %s\n", err);
		return;
	}
	const char *verdict = json_string_value(json_object_get(v, "verdict"));
	if (verdict && strcmp(verdict, "ok"))
		fprintf(stderr, "oqb run: check: point %s: %s (%s/check.json; oqb check %s)\n",
			pr->pdir, verdict, pr->pdir, pr->pdir);
	json_object_set_new(pj, "check", v);
}

static json_t *run_point(struct run *r, struct prun *pr, const struct point *pt)
{
	const struct runconf *rc = runconf_for(&r->rc, pt);
	char err[2048], name[256];
	json_t *pj = NULL;
	size_t i;

	memset(pr, 0, sizeof *pr);
	pr->r = r;
	pr->pt = pt;
	pr->rc = rc;
	pr->lfd = -1;
	pr->nprocs = 1 + (size_t)rc->processes;
	pr->procs = calloc(pr->nprocs, sizeof *pr->procs);
	if (!pr->procs) {
		fail(pr, NULL, "out of memory");
		return NULL;
	}
	point_name(name, sizeof name, &r->rc, pt);
	snprintf(pr->pdir, sizeof pr->pdir, "%s/%s", r->dir, name);
	if (mkdirs(pr->pdir, err, sizeof err) < 0) {
		fail(pr, NULL, "%s", err);
		return NULL;
	}
	for (i = 0; i < pr->nprocs; i++) {
		struct proc *p = &pr->procs[i];
		snprintf(p->role, sizeof p->role, "%s", i == 0 ? "server" : "client");
		p->rank = i == 0 ? 0 : (unsigned)(i - 1);
		p->host = i == 0 ? rc->server_host : runconf_client_host(rc, p->rank);
		snprintf(p->log, sizeof p->log, "%s/%s-%u.log", pr->pdir, p->role, p->rank);
		snprintf(p->json, sizeof p->json, "%s/%s-%u.json", pr->pdir, p->role, p->rank);
	}

	if (prun_listen(pr) < 0)
		return NULL;

	/* A fresh --pmem-path: here we can make its parent and clear a
	 * leftover; a remote server makes it (its parent must exist). */
	point_pmem(r, pt, pr->pmem, sizeof pr->pmem);
	if (pr->pmem[0] && host_is_local(rc->server_host)) {
		char parent[PATH_MAX + 64];
		snprintf(parent, sizeof parent, "%s", pr->pmem);
		*strrchr(parent, '/') = '\0';
		nftw(pr->pmem, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		if (parent[0] && mkdirs(parent, err, sizeof err) < 0) {
			fail(pr, NULL, "%s (server.recv_pmem_path / hosts.scratch_dir)", err);
			pr->pmem[0] = '\0';
			goto stop;
		}
	}

	/* Server first: clients need its endpoint. */
	if (start_proc(pr, &pr->procs[0], procargs_server(r->bin, &r->rc, pt, pr->ctl_hp, pr->pmem)) < 0)
		goto stop;
	snprintf(err, sizeof err, "%g s (timeouts.hello_s)", rc->hello_s);
	if (wait_all(pr, "server", WANT_HELLO, now_ms() + (uint64_t)(rc->hello_s * 1000), err) < 0)
		goto stop;
	const char *endpoint = json_string_value(json_object_get(pr->procs[0].hello, "endpoint"));
	if (!endpoint || !*endpoint) {
		fail(pr, &pr->procs[0], "sent a HELLO without an \"endpoint\"; the clients cannot "
		     "connect (oqb-server and oqb from different builds? run make)");
		goto stop;
	}

	for (i = 1; i < pr->nprocs; i++) {
		struct proc *p = &pr->procs[i];
		/* --out only where the file lands in our results directory. */
		const char *out = r->l.ops->direct ? p->json : NULL;
		char **a = procargs_client(r->bin, &r->rc, pt, pr->ctl_hp, endpoint, p->rank, out);
		if (a && rc->history)
			history_args(&a, pr->pdir, rc);
		if (start_proc(pr, p, a) < 0)
			goto stop;
	}
	if (wait_all(pr, "client", WANT_HELLO, now_ms() + (uint64_t)(rc->hello_s * 1000), err) < 0)
		goto stop;

	/* One start time for all: clients start start_delay after GO. */
	for (i = 1; i < pr->nprocs; i++) {
		struct proc *p = &pr->procs[i];
		if (ctl_send(p->ctl, json_pack("{s:s, s:I}", "type", "GO", "start_in_ns",
					       (json_int_t)(rc->start_delay_ms * 1e6)), err, sizeof err) < 0) {
			fail(pr, p, "GO could not be sent: %s", err);
			goto stop;
		}
	}
	double limit_s = rc->start_delay_ms / 1000 + rc->warmup_s + rc->duration_s + rc->grace_s;
	snprintf(err, sizeof err, "%g s (start delay + warmup_s + duration_s + timeouts.grace_s)", limit_s);
	wait_all(pr, "client", WANT_DONE, now_ms() + (uint64_t)(limit_s * 1000), err);

stop:
	stop_all(pr);
	/* Every process has exited: nothing holds the directory now. */
	pmem_remove(pr);
	if (!pr->failed) {
		json_t *cres[1024];
		size_t nc = 0;
		for (i = 1; i < pr->nprocs && nc < 1024; i++)
			cres[nc++] = pr->procs[i].result;
		pj = merge_point(pt, cres, nc, pr->procs[0].result, err, sizeof err);
		if (!pj) {
			fail(pr, NULL, "%s", err);
		} else {
			json_object_set_new(pj, "dir", json_string(name));
			json_object_set_new(pj, "durable", json_boolean(runconf_durable(rc, pt->system)));
			if (pt->sweep >= 0)
				json_object_set_new(pj, "sweep", json_pack("{s:s, s:O, s:i}", "key",
						    r->rc.sweep_key, "value",
						    json_array_get(r->rc.sweep_values, (size_t)pt->sweep),
						    "index", pt->sweep));
			self_check(r, pr, pj, cres, nc);
			if (rc->check)
				check_point(pr, pj);
		}
	}
	return pj;
}

/* Why a trial was disturbed (its interference or stalls check warned: a
 * spinning thread lost its CPU, the host stole it, or the thread stood
 * still), or NULL. */
static const char *disturbed(const json_t *checks)
{
	size_t i;
	const json_t *c;
	json_array_foreach(checks, i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		if (checks_is_disturbance(name) && !strcmp(json_string_value(json_object_get(c, "status")) ?: "", "warn"))
			return json_string_value(json_object_get(c, "detail")) ?: name;
	}
	return NULL;
}

/*
 * One trial.  With duration_s "auto" it is measured in chunks of
 * convergence.chunk_s (each a fresh set of processes, its own warm-up),
 * merged bin-wise, until the P99's 95 % CI is narrower than
 * convergence.ci_p99 of it or convergence.max_s of measurement is reached;
 * "convergence" in the point says which.  pr holds the last chunk's run,
 * with the trial's merged checks and canary.
 */
static json_t *run_trial(struct run *r, struct prun *pr, const struct point *pt0)
{
	const struct runconf *rc = runconf_for(&r->rc, pt0);
	if (!rc->converge)
		return run_point(r, pr, pt0);

	struct point pt = *pt0;
	json_t *chunks = json_array(), *pj0 = NULL, *merged = NULL;
	double measured = 0, width = INFINITY;
	char e[512];
	for (pt.chunk = 0;; pt.chunk++) {
		if (pt.chunk)
			prun_free(pr);
		json_t *pj = run_point(r, pr, &pt);
		if (!pj)
			goto fail;
		json_array_append_new(chunks, trials_entry(pj, pt.chunk, pt.chunk, pr->canary_ns, pr->checks));
		if (!pj0)
			pj0 = json_incref(pj);
		json_decref(pj);
		json_decref(merged);
		merged = trials_point(pj0, chunks, &rc->checks, e, sizeof e);
		if (!merged) {
			snprintf(pr->err, sizeof pr->err, "%s", e);
			pr->failed = 1;
			goto fail;
		}
		measured += rc->duration_s;
		const json_t *all = json_object_get(json_object_get(merged, "lat_ns"), "all");
		const json_t *ci = json_object_get(all, "p99_ci");
		double p99 = json_number_value(json_object_get(all, "p99"));
		/* a CI whose top rank is past the last sample bounds nothing */
		if (p99 > 0 && json_array_size(ci) == 2 &&
		    stats_pct_ci_bounded((uint64_t)json_number_value(json_object_get(all, "n")), 0.99, STATS_Z95))
			width = (json_number_value(json_array_get(ci, 1)) - json_number_value(json_array_get(ci, 0))) / p99;
		if (width <= rc->conv_ci || measured >= rc->conv_max_s - 1e-9 || g_signal)
			break;
	}
	json_object_set_new(merged, "convergence", json_pack("{s:s,s:i,s:f,s:f,s:f,s:f}", "stopped_by",
		width <= rc->conv_ci ? "ci_p99 reached" : g_signal ? "interrupted" : "max_s reached",
		"chunks", (int)json_array_size(chunks), "measured_s", measured, "ci_p99", isfinite(width) ? width : -1.0,
		"target_ci_p99", rc->conv_ci, "max_s", rc->conv_max_s));
	json_object_del(merged, "trials");
	json_object_set_new(merged, "chunks", chunks);
	/* the trial's checks: per check, in how many chunks it warned */
	json_decref(pr->checks);
	pr->checks = json_incref(json_object_get(merged, "checks"));
	pr->canary_ns = json_number_value(json_object_get(merged, "canary_ns"));
	json_decref(pj0);
	return merged;
fail:
	json_decref(chunks);
	json_decref(pj0);
	json_decref(merged);
	return NULL;
}

/*
 * The knee search's probe (knee.h): one short point of `system`, run like
 * any other (its processes, logs and results in RUN/knee/pNN-...), with
 * the search's probe_s and warmup_s, one trial, and no canary, history
 * or check; find_knee sets those for the search and restores them.
 */
static int knee_probe(void *ctx, const char *system, double offered_ops, struct knee_probe *out,
		      char *err, size_t errlen)
{
	struct run *r = ctx;
	struct prun pr;
	struct point pt = { .idx = r->nprobes++, .system = system, .offered_ops = offered_ops, .sweep = -1 };
	json_t *pj = run_point(r, &pr, &pt);

	if (pr.warn[0])
		fprintf(stderr, "oqb: warning: %s\n", pr.warn);
	if (pj)
		knee_verdict(pj, pr.checks, out);
	else
		snprintf(err, errlen, "knee search: probe of system=%s at %.0f ops/s: %s", system,
			 offered_ops, pr.err);
	json_decref(pj);
	prun_free(&pr);
	return pj ? 0 : -1;
}

/*
 * arrival.loads_ops {"auto": true}: the knee search, then the sweep's loads
 * (fractions x knee) into the config and the plan.  run.json gets "knee"
 * either way (with the probes run so far when the search failed).
 */
static int find_knee(struct run *r, char *err, size_t errlen)
{
	struct runconf *rc = &r->rc;
	struct knee_result res;
	size_t n = strlen(r->dir);
	double dur = rc->duration_s, warm = rc->warmup_s;
	int canary = rc->canary, history = rc->history, check = rc->check, converge = rc->converge;
	long long repeat = rc->repeat;
	int ret;

	if (n + sizeof "/knee" > sizeof r->dir) {
		snprintf(err, errlen, "%s: path too long for the knee probes' directory", r->dir);
		return -1;
	}
	memcpy(r->dir + n, "/knee", sizeof "/knee");
	rc->duration_s = rc->knee.probe_s;
	rc->warmup_s = rc->knee.warmup_s;
	rc->canary = rc->history = rc->check = rc->converge = 0;
	rc->repeat = 1;
	ret = knee_search(&rc->knee, rc->systems, rc->nsystems, knee_probe, r, r->o->quiet ? NULL : stderr,
			  &res, err, errlen);
	r->dir[n] = '\0';
	rc->duration_s = dur;
	rc->warmup_s = warm;
	rc->canary = canary;
	rc->history = history;
	rc->check = check;
	rc->converge = converge;
	rc->repeat = repeat;
	if (ret == 0) {
		rc->knee_ops = res.ops;
		knee_loads(&rc->knee, res.ops, rc->loads);
		r->npts = runconf_plan(rc, r->pts, MAX_POINTS);
		if (!r->o->quiet) {
			char slow[160] = "";
			if (res.slowest)
				snprintf(slow, sizeof slow, " (slowest: %s, which did not sustain %.0f)", res.slowest,
					 res.hi);
			fprintf(stderr, "knee: %.0f ops/s%s%s, %zu probes in %.0f s; loads:", res.ops,
				res.capped ? " (search.max_ops reached: a lower bound)" : "", slow, res.nprobes,
				res.elapsed_s);
			for (size_t i = 0; i < rc->nloads; i++)
				fprintf(stderr, " %.0f", rc->loads[i]);
			fprintf(stderr, "\n");
		}
	}
	json_object_set_new(r->runj, "knee", knee_json(&rc->knee, &res, ret == 0 ? rc->loads : NULL));
	if (ret < 0) {
		json_object_set_new(r->runj, "error", json_pack("{s:s}", "message", err));
		json_object_set_new(r->runj, "status", json_string(g_signal ? "interrupted" : "failed"));
	}
	knee_result_free(&res);
	return ret;
}

static void progress(const struct run *r, const struct point *pt, const json_t *pj,
		     const json_t *checks, double elapsed_s, size_t done)
{
	char load[400], p50[32], p99[32], eta[32], flags[256], tr[48] = "";
	const json_t *all = json_object_get(json_object_get(pj, "lat_ns"), "all");
	double left = (double)(r->ntrials - done);

	if (r->o->quiet)
		return;
	load_label(load, sizeof load, &r->rc, pt);
	fmt_ns(p50, sizeof p50, json_number_value(json_object_get(all, "p50")));
	fmt_ns(p99, sizeof p99, json_number_value(json_object_get(all, "p99")));
	if (json_integer_value(json_object_get(all, "n")) == 0) {
		snprintf(p50, sizeof p50, "- (no samples)");
		snprintf(p99, sizeof p99, "-");
	}
	fmt_dur(eta, sizeof eta, done ? elapsed_s / (double)done * left : 0);
	if (r->rc.repeat > 1)
		snprintf(tr, sizeof tr, " trial %u/%lld", pt->trial + 1, r->rc.repeat);
	checks_flagged(checks, flags, sizeof flags);
	fprintf(stderr, "[%zu/%zu] system=%s %s%s  p50=%s p99=%s  achieved=%.0f ops/s%s%s%s  ETA %s\n",
		done, r->ntrials, pt->system, load, tr, p50, p99,
		json_number_value(json_object_get(pj, "achieved_ops")),
		json_is_true(json_object_get(pj, "saturated")) ? " (saturated)" : "",
		flags[0] ? "  CHECK: " : "", flags, eta);
}

static int dry_run(struct run *r)
{
	char **a;
	char *d;

	char sweep[64] = "";

	if (r->rc.nsweep)
		snprintf(sweep, sizeof sweep, " x %zu sweep values", r->rc.nsweep);
	char trials[48] = "";
	if (r->rc.repeat > 1)
		snprintf(trials, sizeof trials, " x %lld trials", r->rc.repeat);
	printf("config %s: %zu points (%zu systems%s x %zu loads)%s, launcher %s, %lld client "
	       "process(es) x %lld thread(s), about %.0f s of measurement%s\n",
	       r->rc.path, r->npts, r->rc.nsystems, sweep, r->rc.nloads,
	       trials, r->rc.launcher, r->rc.processes, r->rc.threads,
	       (double)r->npts * (double)r->rc.repeat * (r->rc.warmup_s + r->rc.duration_s),
	       r->rc.converge ? " per chunk (duration_s auto)" : "");
	if (json_array_size(r->rc.overrides)) {
		char *ov = json_dumps(r->rc.overrides, JSON_COMPACT);
		printf("overrides: %s\n", ov ? ov : "?");
		free(ov);
	}
	if (r->rc.knee.on) {
		knee_describe(stdout, &r->rc.knee, r->rc.systems, r->rc.nsystems);
		printf("command lines below: the sweep's, shown at search.start_ops' rate (%.0f ops/s), since the knee is not known yet\n",
		       r->rc.knee.start_ops);
	}
	for (size_t i = 0; i < r->npts; i++) {
		struct point shown = r->pts[i];
		const struct point *pt = &shown;
		if (r->rc.knee.on)
			shown.offered_ops = r->rc.knee.start_ops;
		const struct runconf *rc = runconf_for(&r->rc, pt);
		char load[400], pmem[PATH_MAX + 64];
		load_label(load, sizeof load, &r->rc, &r->pts[i]);
		printf("[%zu/%zu] system=%s %s%s\n", i + 1, r->npts, pt->system, load,
		       runconf_durable(rc, pt->system) ? " durable" : "");
		/* Command lines of the first load of each sweep value (every
		 * system: they differ in --system and --durable). */
		if (i % (r->rc.nsystems * r->rc.nloads) >= r->rc.nsystems)
			continue;
		point_pmem(r, pt, pmem, sizeof pmem);
		a = procargs_server(r->bin, &r->rc, pt, "CTLHOST:PORT", pmem);
		d = a ? launch_describe(&r->l, rc->server_host, NULL, a) : NULL;
		printf("  server 0 on %s: %s\n", rc->server_host, d ? d : "?");
		free(d);
		launch_argv_free(a);
		for (unsigned c = 0; c < (unsigned)rc->processes; c++) {
			a = procargs_client(r->bin, &r->rc, pt, "CTLHOST:PORT", "ENDPOINT", c, NULL);
			d = a ? launch_describe(&r->l, runconf_client_host(rc, c), NULL, a) : NULL;
			printf("  client %u on %s: %s\n", c, runconf_client_host(rc, c), d ? d : "?");
			free(d);
			launch_argv_free(a);
		}
	}
	return 0;
}

/*
 * run.json's "overrides" (the --set arguments, [] without any), placed
 * right after "config", which holds the config as they changed it.
 * jansson appends keys, so the object is rebuilt in order.
 */
static void add_overrides(json_t *runj, json_t *overrides)
{
	json_t *copy = json_copy(runj), *v;
	const char *k;

	json_object_clear(runj);
	json_object_foreach(copy, k, v) {
		json_object_set(runj, k, v);
		if (strcmp(k, "config") == 0)
			json_object_set_new(runj, "overrides", overrides ? json_incref(overrides) : json_array());
	}
	if (!json_object_get(runj, "overrides"))
		json_object_set_new(runj, "overrides", overrides ? json_incref(overrides) : json_array());
	json_decref(copy);
}

/*
 * The order of all trials: `repeat` rounds, each running every point once
 * in an order shuffled (Fisher-Yates) by a generator seeded from the
 * config's seed, so the run can be repeated exactly.  Recorded in run.json.
 */
static int plan_order(struct run *r)
{
	size_t rounds = (size_t)r->rc.repeat, k = 0;
	struct rng g;
	json_t *ord = json_array();

	r->ntrials = r->npts * rounds;
	r->order = calloc(r->ntrials ? r->ntrials : 1, sizeof *r->order);
	if (!r->order || !ord) {
		json_decref(ord);
		return -1;
	}
	rng_seed_multi(&g, (uint64_t)r->rc.seed, 0x6f72646572ull /* "order" */, 0);
	for (size_t t = 0; t < rounds; t++) {
		size_t base = k;
		for (size_t i = 0; i < r->npts; i++, k++) {
			r->order[k].point = i;
			r->order[k].trial = (unsigned)t;
		}
		/* one trial: the plan's order, as before repeat existed */
		if (rounds > 1)
			for (size_t i = r->npts; i > 1; i--) {
				size_t j = (size_t)(rng_next(&g) % i);
				struct trial_ref tmp = r->order[base + i - 1];
				r->order[base + i - 1] = r->order[base + j];
				r->order[base + j] = tmp;
			}
	}
	for (k = 0; k < r->ntrials; k++)
		json_array_append_new(ord, json_pack("[ii]", (int)r->order[k].point, (int)r->order[k].trial));
	json_object_set_new(r->runj, "trial_order", json_pack("{s:I,s:I,s:s,s:o}", "repeat", (json_int_t)rounds,
			    "seed", (json_int_t)r->rc.seed, "how",
			    rounds > 1 ? "rounds; each round runs every point once, shuffled (Fisher-Yates, "
			    "xoshiro256** seeded from seed)" : "plan order (one trial)", "order", ord));
	return 0;
}

/* run.json's points, in plan order, from the trials run so far. */
static int rebuild_points(struct run *r, char *err, size_t errlen)
{
	json_t *pts = json_array();
	for (size_t i = 0; i < r->npts; i++) {
		if (!r->entries[i])
			continue;
		/* a point is merged (and its trials bootstrapped) again only
		 * when a trial was added since */
		size_t from = json_array_size(r->entries[i]) + json_array_size(r->discarded[i]);
		if (!r->built[i] || r->built_from[i] != from) {
			json_t *p = trials_point(r->pj0[i], r->entries[i], &runconf_for(&r->rc, &r->pts[i])->checks,
						 err, errlen);
			if (!p) {
				json_decref(pts);
				return -1;
			}
			if (r->discarded[i])
				json_object_set(p, "discarded_trials", r->discarded[i]);
			json_decref(r->built[i]);
			r->built[i] = p;
			r->built_from[i] = from;
		}
		json_array_append(pts, r->built[i]);
	}
	json_object_set_new(r->runj, "points", pts);
	return 0;
}

/* --strict: the first trial with a failed self-check ends the run. */
static int strict_failed(const struct run *r, const json_t *checks, const struct point *pt, char *err,
			 size_t errlen)
{
	char flags[256], load[400];
	if (!r->o->strict || !checks_flagged(checks, flags, sizeof flags))
		return 0;
	load_label(load, sizeof load, &r->rc, pt);
	snprintf(err, errlen, "--strict: system=%s %s failed its self-checks: %s (run.json has the values)",
		 pt->system, load, flags);
	json_object_set_new(r->runj, "status", json_string("failed-checks"));
	return 1;
}

static void record_error(struct run *r, const struct prun *pr, const char *status)
{
	json_t *e = json_object();
	const struct proc *p = pr->culprit;

	json_object_set_new(e, "message", json_string(pr->err));
	json_object_set_new(e, "point", json_integer(pr->pt->idx));
	json_object_set_new(e, "system", json_string(pr->pt->system));
	if (pr->pt->outstanding > 0)
		json_object_set_new(e, "outstanding", json_integer(pr->pt->outstanding));
	else
		json_object_set_new(e, "offered_ops", json_real(pr->pt->offered_ops));
	json_object_set_new(e, "host", p ? json_string(p->host) : json_null());
	json_object_set_new(e, "role", p ? json_string(p->role) : json_null());
	json_object_set_new(e, "rank", p ? json_integer(p->rank) : json_null());
	json_object_set_new(r->runj, "error", e);
	json_object_set_new(r->runj, "status", json_string(status));
}

int run_experiment(const struct run_opts *o, char *run_dir, size_t run_dir_len,
		   char *err, size_t errlen)
{
	struct run *r = calloc(1, sizeof *r);
	struct sigaction sa, old_int, old_term, old_hup;
	char stamp[32], path[PATH_MAX + 32], src[PATH_MAX + 8];
	time_t now = time(NULL);
	struct tm tm;
	int rc = 2;
	uint64_t t0;

	if (run_dir_len)
		run_dir[0] = '\0';
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return 2;
	}
	r->o = o;
	if (runconf_load_sets(o->config, o->sets, o->nsets, &r->rc, err, errlen) < 0) {
		free(r);
		return 2;
	}
	r->npts = runconf_plan(&r->rc, r->pts, MAX_POINTS);
	snprintf(r->bin, sizeof r->bin, "%s", r->rc.bin_dir ? r->rc.bin_dir : self_bin_dir());
	if (strcmp(r->rc.launcher, "local") == 0) {
		const char *progs[] = { "oqb-server", "oqb-client" };
		for (int i = 0; i < 2; i++) {
			snprintf(path, sizeof path, "%s/%s", r->bin, progs[i]);
			if (access(path, X_OK) != 0) {
				snprintf(err, errlen, "%s: %s (build it with make, or set hosts.bin_dir)", path,
					 strerror(errno));
				goto out;
			}
		}
	}
	if (launch_open(&r->l, r->rc.launcher, r->rc.ssh, err, errlen) < 0)
		goto out;
	r->launcher_open = 1;
	if (o->dry_run) {
		rc = dry_run(r);
		goto out;
	}

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	if (o->out) {
		snprintf(r->dir, sizeof r->dir, "%s", o->out);
	} else {
		snprintf(r->dir, sizeof r->dir, "results/%s-%s", r->rc.name, stamp);
	}
	snprintf(path, sizeof path, "%s/run.json", r->dir);
	if (access(path, F_OK) == 0) {
		snprintf(err, errlen, "%s already exists: the output directory holds an earlier run; "
			 "choose another --out or remove it", path);
		goto out;
	}
	if (mkdirs(r->dir, err, errlen) < 0)
		goto out;
	if (run_dir_len)
		snprintf(run_dir, run_dir_len, "%s", r->dir);
	{
		const char *slash = strrchr(r->dir, '/');
		snprintf(r->run_id, sizeof r->run_id, "%s", slash && slash[1] ? slash + 1 : r->dir);
	}
	/* The checkout this oqb was built from: bin/.. */
	snprintf(src, sizeof src, "%s/..", self_bin_dir());
	r->runj = runjson_new(&r->rc, r->run_id, src);
	add_overrides(r->runj, r->rc.overrides);
	snprintf(path, sizeof path, "%s/processes.tsv", r->dir);
	r->tsv = fopen(path, "w");
	if (!r->tsv) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		goto out;
	}
	fprintf(r->tsv, "point\tsystem\trole\trank\thost\tpid\tlog\n");
	fflush(r->tsv);
	if (runjson_write(r->runj, r->dir, err, errlen) < 0)
		goto out;

	/* Ctrl-C and friends stop the run in order instead of killing it. */
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	signal(SIGPIPE, SIG_IGN);

	rc = 0;
	t0 = now_ms();
	if (r->rc.knee.on && find_knee(r, err, errlen) < 0)
		rc = 1;
	else if (r->rc.arrival == ARRIVAL_POISSON && !r->rc.knee.on)
		json_object_set_new(r->runj, "knee", knee_json_fixed(r->rc.loads, r->rc.nloads));
	if (rc == 0 && plan_order(r) < 0) {
		snprintf(err, errlen, "out of memory planning %zu trials", r->ntrials);
		rc = 1;
	}
	uint64_t last_write = now_ms();
	/* Reruns help against a passing disturbance (trials.h: when they stop
	 * and resume).  rerun_budget bounds those of the whole run, so a host
	 * that disturbs many trials costs a known share of time. */
	struct rerun_policy rp;
	rerun_init(&rp, r->rc.rerun_disturbed,
		   r->rc.rerun_budget < 0 ? -1 : (long long)(r->rc.rerun_budget * (double)r->ntrials));
	for (size_t k = 0; rc == 0 && k < r->ntrials; k++) {
		struct prun pr;
		struct point pt = r->pts[r->order[k].point];
		pt.trial = r->order[k].trial;
		size_t i = r->order[k].point;
again:;
		json_t *pj = run_trial(r, &pr, &pt);

		if (pr.warn[0])
			fprintf(stderr, "oqb: warning: %s\n", pr.warn);
		if (!pj) {
			char load[400];
			load_label(load, sizeof load, &r->rc, &pt);
			record_error(r, &pr, g_signal ? "interrupted" : "failed");
			snprintf(err, errlen, "point %zu/%zu (system=%s %s%s): %s", i + 1, r->npts,
				 pt.system, load, r->rc.repeat > 1 ? ", a trial" : "", pr.err);
			prun_free(&pr);
			rc = 1;
			break;
		}
		/* A trial whose spinning thread lost its CPU measured the
		 * machine's scheduler, not the system: run it again (same
		 * seed, its own directory) and keep it aside, with why. */
		const char *still = disturbed(pr.checks);
		enum rerun_event ev;
		const char *why = rerun_decide(&rp, pt.rerun, still != NULL, &ev) ? still : NULL;
		if (ev == RR_BUDGET_STOP)
			fprintf(stderr, "oqb: warning: the run's rerun budget is spent (%lld rerun(s): rerun_budget %g of "
				"%zu trials); disturbed trials from here on are kept and stay flagged (last: %s). "
				"Raise rerun_budget in the config for more\n", rp.used, r->rc.rerun_budget, r->ntrials, still);
		else if (ev == RR_FUTILE_STOP)
			fprintf(stderr, "oqb: warning: three trials in a row were still disturbed after %lld "
				"rerun(s) each (last: %s); the disturbance looks permanent, so disturbed trials "
				"are not rerun until one comes back calm (they stay flagged). Find what shares that "
				"thread's CPU (uptime, top -H), or set \"rerun_disturbed\": 0 to skip the reruns\n",
				r->rc.rerun_disturbed, still);
		if (ev == RR_BUDGET_STOP || ev == RR_FUTILE_STOP)
			json_object_set_new(r->runj, "reruns_stopped",
					    json_pack("{s:I,s:s,s:s}", "after_trial", (json_int_t)k, "last_reason", still,
						      "cause", ev == RR_BUDGET_STOP ? "budget" : "futile"));
		else if (ev == RR_RESUME) {
			if (!r->o->quiet)
				fprintf(stderr, "oqb: trial %zu came back calm: the disturbance passed, so disturbed "
					"trials are rerun again\n", k + 1);
			json_object_set_new(r->runj, "reruns_resumed", json_pack("{s:I}", "after_trial", (json_int_t)k));
		}
		if (why) {
			if (!r->discarded[i])
				r->discarded[i] = json_array();
			json_t *d = trials_entry(pj, pt.trial, k, pr.canary_ns, pr.checks);
			json_object_set_new(d, "discarded", json_string(why));
			json_array_append_new(r->discarded[i], d);
			if (!r->o->quiet)
				fprintf(stderr, "oqb: trial %u of point %zu (%s) disturbed: %s; running it again (%u/%lld)\n",
					pt.trial + 1, i + 1, pt.system, why, pt.rerun + 1, rp.per_trial);
			json_decref(pj);
			prun_free(&pr);
			pt.rerun++;
			goto again;
		}
		progress(r, &pt, pj, pr.checks, (double)(now_ms() - t0) / 1000, k + 1);
		if (strict_failed(r, pr.checks, &pt, err, errlen))
			rc = 1;
		if (!r->entries[i])
			r->entries[i] = json_array();
		json_array_append_new(r->entries[i], trials_entry(pj, pt.trial, k, pr.canary_ns, pr.checks));
		if (!r->pj0[i])
			r->pj0[i] = json_incref(pj);
		json_decref(pj);
		prun_free(&pr);
		/* run.json after every trial, but at most every 5 s (it holds every
		 * trial's histograms), and always after the last */
		if (k + 1 == r->ntrials || now_ms() - last_write >= 5000) {
			if (rebuild_points(r, err, errlen) < 0 || runjson_write(r->runj, r->dir, err, errlen) < 0) {
				rc = 1;
				break;
			}
			last_write = now_ms();
		}
	}
	{
		char e3[512];
		rebuild_points(r, e3, sizeof e3);   /* the trials of a run that stopped early */
	}
	if (rc == 0 && r->rc.knee.on)
		knee_after_sweep(json_object_get(r->runj, "knee"), json_object_get(r->runj, "points"),
				 r->o->quiet ? NULL : stderr);
	if (rc == 0)
		json_object_set_new(r->runj, "status", json_string("ok"));
	{
		char e2[512];
		if (runjson_write(r->runj, r->dir, e2, sizeof e2) < 0 && rc == 0) {
			snprintf(err, errlen, "%s", e2);
			rc = 1;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
out:
	if (r->tsv)
		fclose(r->tsv);
	if (r->launcher_open)
		launch_close(&r->l);
	json_decref(r->runj);
	for (size_t i = 0; i < r->npts; i++) {
		json_decref(r->pj0[i]);
		json_decref(r->entries[i]);
		json_decref(r->discarded[i]);
		json_decref(r->built[i]);
	}
	free(r->order);
	free(r->canaries);
	runconf_free(&r->rc);
	free(r);
	return rc;
}
