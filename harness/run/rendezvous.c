/*
 * rendezvous.c - the processes of one point of `oqb run` (run_internal.h).
 *
 * The driver is one thread with one poll() loop over the listening socket,
 * the accepted control connections, and (every tick) waitpid(WNOHANG) on
 * the PIDs it started.  A process is started through the launcher, says
 * HELLO (its endpoint) on its control connection, is told GO, and sends
 * DONE with its result.  Waits are on those messages and on process exits,
 * with deadlines from the config's timeouts, never fixed sleeps.
 *
 * Everything that can go wrong turns into one message, "[host:role:rank]
 * what happened (pid N)" plus the tail of that process's log (prun_fail);
 * the first failure stops the point.  prun_stop_all ends the point in
 * order: BYE to clients, STOP to the server and a wait for its DONE, close
 * every control connection (a process exits when its connection closes,
 * lib/ctl.h), and only then SIGTERM and SIGKILL, by PID, to what is left.
 */
#include "run_internal.h"
#include "ctl.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TICK_MS 100
#define TERM_WAIT_MS 2000

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

#define VIA_SSH(pr) (strcmp((pr)->r->l.ops->name, "ssh") == 0)

/* How a process ended; via_ssh: the PID is an ssh client, whose 255 is its
 * own failure, not the program's. */
static void status_text(char *buf, size_t len, int st, int via_ssh)
{
	if (WIFEXITED(st)) {
		int c = WEXITSTATUS(st);
		snprintf(buf, len, "exited with status %d%s", c,
			 c == CTL_EXIT_LOST ? " (it lost its control connection)" :
			 c == 127 ? " (command not found on that host?)" :
			 c == 255 && via_ssh ? " (ssh's own failure: the login failed, the connection broke, or the "
				    "process was killed by a signal on that host, e.g. by the kernel's "
				    "out-of-memory killer: see that host's kernel log)" : "");
	} else if (WIFSIGNALED(st)) {
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	} else {
		snprintf(buf, len, "ended with wait status %d", st);
	}
}

static void fail_ended(struct prun *pr, struct proc *p);
static void await_exit(struct proc *p, int ms);

/* The server (procs[0]) has gone (its control connection closed or it
 * exited) without its DONE, and nobody asked it to. */
static int server_gone(const struct prun *pr)
{
	const struct proc *s = pr->nprocs ? &pr->procs[0] : NULL;
	return s && !pr->aux && strcmp(s->role, "server") == 0 && s->started && !s->stopping && !s->result &&
	       (s->eof || s->exited);
}

void prun_fail(struct prun *pr, const struct proc *p, const char *fmt, ...)
{
	char msg[2048], label[300], tail[8192] = "";
	va_list ap;

	if (pr->failed)
		return;
	/* A client that fails once its server is gone (its host died, say)
	 * reports a consequence: the server's end is the cause, so the one
	 * message names the server and its host. */
	if (p && p != &pr->procs[0] && server_gone(pr)) {
		fail_ended(pr, &pr->procs[0]);
		if (pr->failed)
			return;
	}
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

/*
 * p ended before its DONE, unasked: its launcher process exited, or its
 * control connection closed.  Under ssh or slurm the launcher is asked
 * afresh whether p's host still answers (launch_probe, at most
 * LAUNCH_PROBE_S): when it does not, the host is lost with every process
 * of the run on it, and the one message says so first, naming the host
 * as the config does; when it does, the process itself ended there.
 */
static void fail_ended(struct prun *pr, struct proc *p)
{
	const char *lname = pr->r->l.ops->name, *until = p->hello ? "DONE" : "HELLO";
	/* the local PID: the process itself, or its ssh or srun */
	const char *via = pr->r->l.ops->direct ? "process" : !strcmp(lname, "slurm") ? "srun" : lname;
	const char *daemon = !strcmp(lname, "slurm") ? "slurmd" : !strcmp(lname, "ssh") ? "sshd" : "launcher";
	char s[320] = "", why[600] = "", what[600];
	int alive;

	/* A process that never said HELLO may never have reached its host
	 * (a refused host key, a login that fails): its log says why, and a
	 * probe would call that host lost. */
	alive = pr->r->l.ops->direct || !p->hello ? 1 : launch_probe(&pr->r->l, p->host, why, sizeof why);
	/* How its launcher process ended, when it ends soon; one that waits
	 * on a lost host (an srun) is not waited for. */
	await_exit(p, alive == 0 ? 100 : 1000);
	if (p->exited) {
		/* ssh's 255 needs its long hint only while the host answers */
		status_text(s, sizeof s, p->status, VIA_SSH(pr) && alive != 0);
		snprintf(what, sizeof what, "%s%s %s before sending %s (pid %d)", pr->r->l.ops->direct ? "" : "its ",
			 pr->r->l.ops->direct ? "" : via, s, until, (int)p->pid);
	} else {
		snprintf(what, sizeof what, "its control connection closed before it sent %s, and its %s (pid %d) "
			 "had not exited %s later", until, via, (int)p->pid, alive == 0 ? "0.1 s" : "a second");
	}
	if (alive == 0) {
		pr->lost_host = p->host;
		prun_fail(pr, p, "lost with its host: %s no longer answers %s (%s), so the host or its %s is down, "
			  "and every process of this run on it is gone; %s. Bring the host back, or take it out of "
			  "the config's hosts, and run again: run.json keeps the points that finished",
			  p->host, lname, why, daemon, what);
	} else if (pr->r->l.ops->direct || !p->hello) {
		/* local, or before HELLO: the messages as they always were */
		if (p->exited)
			prun_fail(pr, p, "%s before sending %s (pid %d)", s, until, (int)p->pid);
		else
			prun_fail(pr, p, "closed its control connection before sending %s, and is still running "
				  "(pid %d)", until, (int)p->pid);
	} else {
		prun_fail(pr, p, "%s%s%s%s", what, alive == 1 ? "; its host still answers " : "",
			  alive == 1 ? lname : "", alive == 1 ? " (so the process itself ended there)" : "");
	}
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
		if (!p->stopping && !p->result && !pr->failed)
			fail_ended(pr, p);
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

/* Drops from j every string that names dir or a path under it (an
 * object's member, an array's element): the point's --pmem-path, which
 * the driver removes after the point, so that run.json and ROLE-RANK.json
 * name only files that are still there. */
static void drop_paths_under(json_t *j, const char *dir)
{
	size_t n = strlen(dir), i;
	const char *k;
	json_t *v;
	void *tmp;
	if (json_is_object(j)) {
		json_object_foreach_safe(j, tmp, k, v) {
			const char *sv = json_string_value(v);
			if (sv && strncmp(sv, dir, n) == 0 && (sv[n] == '\0' || sv[n] == '/'))
				json_object_del(j, k);
			else
				drop_paths_under(v, dir);
		}
	} else if (json_is_array(j)) {
		for (i = json_array_size(j); i-- > 0;) {
			const char *sv = json_string_value(json_array_get(j, i));
			if (sv && strncmp(sv, dir, n) == 0 && (sv[n] == '\0' || sv[n] == '/'))
				json_array_remove(j, i);
			else
				drop_paths_under(json_array_get(j, i), dir);
		}
	}
}

static void write_result_file(struct proc *p)
{
	if (json_dump_file(p->result, p->json, JSON_INDENT(1)) != 0)
		fprintf(stderr, "oqb: warning: cannot write %s: %s\n", p->json, strerror(errno));
}

/*
 * A process's start, in seconds: launch_to_hello on the driver's clock
 * (launcher call to HELLO received), in_process on the process's own (its
 * start to HELLO sent; a client's split into reaching the driver and
 * client_prepare: connections, load).  Their difference is the launcher's
 * share (ssh login, srun, exec) and the control channel's delivery; both
 * are durations, so the hosts' clocks need not agree.
 */
static json_t *start_split(const struct proc *p, const json_t *hello)
{
	json_t *o = json_pack("{s:f}", "launch_to_hello", (double)(now_ms() - p->t_launch_ms) / 1e3);
	const json_t *up = json_object_get(hello, "up_ns");
	if (json_is_integer(up))
		json_object_set_new(o, "in_process", json_real((double)json_integer_value(up) / 1e9));
	const char *k;
	const json_t *v;
	json_object_foreach((json_t *)json_object_get(hello, "start_ns"), k, v)
		if (json_is_integer(v))
			json_object_set_new(o, k, json_real((double)json_integer_value(v) / 1e9));
	return o;
}

/* Fails the point before GO when a process is not the run's build (the
 * server's, asked at start: binbuild.h), say a binary replaced mid-run. */
static void check_build(struct prun *pr, struct proc *p, const json_t *hello)
{
	const char *want = json_string_value(json_object_get(pr->r->build, "build_id"));
	const char *got = json_string_value(json_object_get(hello, "build_id"));
	if (!want || (got && strcmp(got, want) == 0))
		return;
	prun_fail(pr, p, "is build %s, but this run's is %s (oqb-server in bin_dir %s on %s, asked at the start): "
		  "the processes of one run must share one build; install one build's bin/ (make) in "
		  "hosts.bin_dir on every host", got ? got : "(none: older than build ids in HELLO)", want,
		  pr->r->bin, pr->rc->server_host);
}

static void handle_msg(struct prun *pr, struct proc *p, json_t *m)
{
	const char *type = json_string_value(json_object_get(m, "type"));

	if (strcmp(type, "HELLO") == 0) {
		if (!p->hello) {
			p->hello = json_incref(m);
			check_build(pr, p, m);
			/* host: what the process says it runs on (its host name);
			 * launched_on: the host of the config the launcher reached
			 * it by (distinct logical hosts may share a machine). */
			json_t *row = json_pack("{s:I, s:s, s:I, s:O?, s:s, s:O?, s:O?, s:I}",
						"point", (json_int_t)pr->pt->idx, "role", p->role,
						"rank", (json_int_t)p->rank,
						"host", json_object_get(m, "host"), "launched_on", p->host,
						"node", json_object_get(m, "node"),
						"pid", json_object_get(m, "pid"),
						"local_pid", (json_int_t)p->pid);
			json_object_set_new(row, "start_s", start_split(p, m));
			if (pr->aux)
				json_object_set_new(row, "purpose", json_string("canary"));
			/* a soft limit the process raised to its hard one (proclimits.h) */
			if (json_is_string(json_object_get(m, "limits_raised")))
				json_object_set(row, "limits_raised", json_object_get(m, "limits_raised"));
			json_array_append_new(json_object_get(json_object_get(pr->r->runj, "hosts"),
							      "processes"), row);
		}
	} else if (strcmp(type, "DONE") == 0) {
		if (!p->result) {
			json_t *res = json_object_get(m, "result");
			if (res && pr->pmem[0])
				drop_paths_under(res, pr->pmem);
			p->result = json_incref(res ? res : json_null());
			write_result_file(p);
			const char *e = json_string_value(json_object_get(res, "error"));
			if (e && !p->stopping)
				prun_fail(pr, p, "finished with an error: %s", e);
		}
	} else if (strcmp(type, "ERROR") == 0) {
		const char *msg = json_string_value(json_object_get(m, "message"));
		if (!p->stopping)
			prun_fail(pr, p, "reported an error: %s", msg ? msg : "(no message)");
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
		prun_fail(pr, NULL, "poll: %s", strerror(errno));

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
				prun_fail(pr, p, "%s", err);
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
		if (p->eof && !p->result && !p->stopping && !pr->failed)
			fail_ended(pr, p);
	}
	if (run_signal && !pr->failed)
		prun_fail(pr, NULL, "interrupted by SIG%s; every process of the point was stopped",
		     sigabbrev_np(run_signal) ? sigabbrev_np(run_signal) : "?");
}

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
int prun_wait_all(struct prun *pr, const char *role, int what, uint64_t deadline_ms,
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
					prun_fail(pr, p, "did not report ready (no HELLO) within %s; it is still running "
					     "(pid %d)%s", why, (int)p->pid,
					     pr->r->l.ops->direct ? "" :
					     "; if the host does not answer, check that it is up and "
					     "reachable and that the launcher can log in");
					break;
				}
				if (what == WANT_DONE && !p->result) {
					prun_fail(pr, p, "did not finish (no DONE) within %s (pid %d)", why, (int)p->pid);
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

int prun_start(struct prun *pr, struct proc *p, char **argv)
{
	char err[1024];

	if (!argv) {
		prun_fail(pr, p, "out of memory building its command line");
		return -1;
	}
	p->t_launch_ms = now_ms();
	if (launch_start(&pr->r->l, p->host, NULL, argv, p->log, &p->pid, err, sizeof err) < 0) {
		launch_argv_free(argv);
		prun_fail(pr, p, "could not be started: %s", err);
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
void prun_stop_all(struct prun *pr)
{
	const struct runconf *rc = &pr->r->rc;
	char err[256];
	size_t i;
	int stop_sent = 0;

	/* The launcher processes of a lost host (an ssh on a dead connection,
	 * an srun whose slurmstepd is gone) speak for nothing: they would
	 * wait on that host for minutes, so they end first, by PID, at once. */
	for (i = 0; i < pr->nprocs; i++) {
		struct proc *p = &pr->procs[i];
		if (!p->started || p->exited || !prun_host_lost(pr, p->host))
			continue;
		p->stopping = 1;
		if (kill(-p->pid, SIGKILL) != 0)
			kill(p->pid, SIGKILL);
		if (waitpid(p->pid, &p->status, 0) == p->pid)
			p->exited = 1;
	}

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
				char s[320] = "is still running";
				if (p->exited)
					status_text(s, sizeof s, p->status, VIA_SSH(pr));
				prun_fail(pr, p, "sent no DONE within %g s of STOP (timeouts.stop_s) and %s (pid %d)",
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
			if (!pr->warn[0]) {
				/* a host lost after its process's DONE: say so (the
				 * results are complete; its ssh or srun waited on it) */
				char why[600] = "", lost[800] = "";
				if (!pr->r->l.ops->direct && p->hello &&
				    launch_probe(&pr->r->l, p->host, why, sizeof why) == 0)
					snprintf(lost, sizeof lost, "; host %s no longer answers %s (%s): it was lost after "
						 "this process's DONE", p->host, pr->r->l.ops->name, why);
				snprintf(pr->warn, sizeof pr->warn, "[%s:%s:%u] did not exit within %g s "
					 "(timeouts.exit_s) after its control connection closed; sent %s to pid %d%s",
					 p->host, p->role, p->rank, rc->exit_s, sig == SIGTERM ? "SIGTERM" : "SIGKILL",
					 (int)p->pid, lost);
			}
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


void prun_free(struct prun *pr)
{
	for (size_t i = 0; i < pr->nprocs; i++) {
		json_decref(pr->procs[i].hello);
		json_decref(pr->procs[i].result);
	}
	free(pr->procs);
	json_decref(pr->checks);
}

/* Opens pr's control port (hosts.ctl_bind, hosts.ctl_port) and the
 * HOST:PORT its processes are told (hosts.ctl_addr): 0, or -1 failed. */
int prun_listen(struct prun *pr)
{
	const struct runconf *rc = pr->rc;
	unsigned port = (unsigned)rc->ctl_port;
	char err[512];
	pr->lfd = ctl_listen(rc->ctl_bind, &port, err, sizeof err);
	if (pr->lfd < 0) {
		prun_fail(pr, NULL, "%s (hosts.ctl_port)", err);
		return -1;
	}
	int v6 = strchr(rc->ctl_addr, ':') != NULL;
	snprintf(pr->ctl_hp, sizeof pr->ctl_hp, "%s%s%s:%u", v6 ? "[" : "", rc->ctl_addr, v6 ? "]" : "", port);
	return 0;
}
