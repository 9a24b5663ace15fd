/*
 * point.c - one point and one trial of `oqb run` (run_internal.h).
 *
 * Each point runs with a fresh server and a fresh control port (so nothing
 * from a previous point can talk into this one): server first (the clients
 * need its endpoint), then the clients, GO with one start time for all,
 * every DONE, the stop, and the merge of the clients' histograms
 * (merge.c).  Then, with every process gone, the canary beside the trial
 * (a cache-line ping-pong on shm, an oqb-vfloor RC ping-pong on verbs) and
 * the self-checks (checks.h); with "check": true, `oqb check` on the
 * point's history.
 *
 * Per point, in the results directory:
 *   pNN-SYSTEM[-KEY-VALUE]-LOAD/   ROLE-RANK.log (stdout+stderr), ROLE-RANK.json
 *                      (the result it sent in DONE), canary-*, history/
 *
 * A point whose server needs --pmem-path (durable, or the pmkv backend)
 * gets a fresh directory, PARENT/oqb-RUNID-PID-pNN, removed after the point:
 * a durable server would otherwise recover the previous point's rings,
 * pmkv would start from its data, and a second server on one directory is
 * refused (the server locks it).
 */
#include "run_internal.h"
#include "check_cmd.h"
#include "checks.h"
#include "ctl.h"
#include "merge.h"
#include "procargs.h"
#include "result.h"
#include "rmtree.h"
#include "rundir.h"
#include "stats.h"
#include "trials.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The sweep value of a point as compact JSON (malloc'd), or NULL. */
static char *sweep_value_text(const struct runconf *rc, const struct point *pt)
{
	if (pt->sweep < 0 || !rc->sweep_values)
		return NULL;
	return json_dumps(json_array_get(rc->sweep_values, (size_t)pt->sweep),
			  JSON_COMPACT | JSON_ENCODE_ANY);
}

/* "workload.value_size=200 load=5000 ops/s" (run_internal.h). */
void point_label(char *buf, size_t len, const struct runconf *rc, const struct point *pt)
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
void point_pmem(const struct run *r, const struct point *pt, char *buf, size_t len)
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
	/* the driver's PID too: two runs whose --out share a last component
	 * (two suites' $T/rf, say) must never share a server's pmem */
	snprintf(buf, len, "%s/oqb-%s-%d-p%02u", parent, r->run_id[0] ? r->run_id : "RUNID", (int)getpid(),
		 pt->idx + 1);
}

/*
 * Removes dir, a directory of this point's server on its host: here
 * directly, on another host through the launcher (`rm -rf -- DIR`, logged
 * to POINT/LOG).  A failure only warns: the measurements are already safe.
 */
static void server_dir_remove(struct prun *pr, const char *dir, const char *log_name)
{
	const char *host = pr->rc->server_host;
	char err[1024], log[PATH_MAX + 400];
	char *argv[] = { "rm", "-rf", "--", (char *)dir, NULL };
	pid_t pid;
	int st = 0, done = 0;

	if (launch_host_is_here(&pr->r->l, host)) {
		if (rm_tree(dir) != 0 && !pr->warn[0])
			snprintf(pr->warn, sizeof pr->warn, "cannot remove %s: %s; remove it by hand", dir,
				 strerror(errno));
		return;
	}
	/* A host the launcher lost cannot be reached: trying would wait on
	 * it.  Its shared-memory folder goes with its reboot; the next server
	 * start there removes a directory whose owner is gone (lib/rundir.h). */
	if (prun_host_lost(pr, host)) {
		if (!pr->warn[0])
			snprintf(pr->warn, sizeof pr->warn, "%s stays on host %s, which no longer answers; the next "
				 "server start there removes it", dir, host);
		return;
	}
	snprintf(log, sizeof log, "%s/%s", pr->pdir, log_name);
	if (launch_start(&pr->r->l, host, NULL, argv, log, &pid, err, sizeof err) < 0) {
		if (!pr->warn[0])
			snprintf(pr->warn, sizeof pr->warn, "cannot remove %s on %s: %s", dir, host, err);
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
			 "log: %s", dir, host, done ? "rm failed" : "rm did not finish in 30 s", log);
}

/*
 * After the point, with every process gone: the server's directories that
 * nothing else removes.  Its --pmem-path, always.  And the private run
 * directory of a volatile shm server (its endpoint, DIR/oqb-PID-XXXXXX,
 * holding its rings and map in shared memory) when the server did not end
 * by itself: one that exits removes its own, one that was killed (SIGKILL,
 * a cancelled Slurm step, a lost host) cannot, and on a lab machine those
 * would pile up in memory.
 */
static void server_dirs_remove(struct prun *pr)
{
	const struct proc *sp = &pr->procs[0];

	if (pr->pmem[0])
		server_dir_remove(pr, pr->pmem, "pmem-cleanup.log");
	if (!sp->started || (sp->exited && WIFEXITED(sp->status) && WEXITSTATUS(sp->status) == 0))
		return;
	const char *ep = json_string_value(json_object_get(sp->hello, "endpoint"));
	const char *base = ep ? strrchr(ep, '/') : NULL;
	if (ep && ep[0] == '/' && base && strncmp(base + 1, "oqb-", 4) == 0 && !pr->pmem[0])
		server_dir_remove(pr, ep, "shm-cleanup.log");
	/* Here, also its memcached's and RocksDB's private directories, and a
	 * run directory it made before it could say hello: every one whose
	 * owner is gone (lib/rundir.h; a live server's is never touched).  On
	 * another host the next server start there removes them. */
	if (launch_host_is_here(&pr->r->l, pr->rc->server_host)) {
		const char *rb = rundir_base(pr->rc->scratch_dir);
		rundir_reap(rb, "", 0);
		rundir_reap(rb, "mc", 0);
		rundir_reap(rb, "rdb", 0);
	}
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
	if (prun_start(cp, &cp->procs[0], procargs_vfloor(r->bin, rc, cp->ctl_hp, NULL, cpu_a)) < 0 ||
	    prun_start(cp, &cp->procs[1], procargs_vfloor(r->bin, rc, cp->ctl_hp, "go", cpu_b)) < 0 ||
	    prun_wait_all(cp, "server", WANT_HELLO, now_ms() + (uint64_t)(rc->hello_s * 1000), err) < 0 ||
	    prun_wait_all(cp, "client", WANT_HELLO, now_ms() + (uint64_t)(rc->hello_s * 1000), err) < 0)
		goto out;
	const char *ep = json_string_value(json_object_get(cp->procs[0].hello, "endpoint"));
	if (!ep || !*ep) {
		prun_fail(cp, &cp->procs[0], "sent a HELLO without an \"endpoint\" (oqb-vfloor and oqb from different "
		     "builds? run make)");
		goto out;
	}
	if (ctl_send(cp->procs[1].ctl, json_pack("{s:s, s:I, s:s}", "type", "GO", "start_in_ns", (json_int_t)0,
						 "endpoint", ep), err, sizeof err) < 0) {
		prun_fail(cp, &cp->procs[1], "GO could not be sent: %s", err);
		goto out;
	}
	/* connecting and the rounds, with the slack of a trial's end */
	double done_s = rc->connect_s + CANARY_MAX_MS / 1e3 + rc->grace_s;
	snprintf(err, sizeof err, "%g s (%g s to connect, timeouts.connect_s; %d ms of rounds; timeouts.grace_s)", done_s,
		 rc->connect_s, CANARY_MAX_MS);
	prun_wait_all(cp, "client", WANT_DONE, now_ms() + (uint64_t)(done_s * 1000), err);
out:
	prun_stop_all(cp);
	if (!cp->failed) {
		const json_t *res = cp->procs[1].result;
		const json_t *rtt = json_object_get(res, "rtt_ns");   /* oqb-vfloor's own, as a summary */
		p50 = result_num(rtt, "p50");
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
			double m = stats_median(c, r->ncanaries);
			if (!isnan(m))
				median = m;
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

/*
 * Every client thread's history file is in POINT/history/ (history-rR-tT.bin),
 * or the point fails naming the client and its host: a history with a
 * client missing would be checked as if that client had sent nothing, and
 * could pass.  Under ssh or slurm the files land there only when the
 * results directory is shared (hosts.shared_fs).
 */
static void history_present(struct prun *pr)
{
	char dir[sizeof pr->pdir + 16], path[sizeof pr->pdir + 64];
	snprintf(dir, sizeof dir, "%s/history", pr->pdir);
	for (size_t i = 1; i < pr->nprocs; i++) {
		struct proc *p = &pr->procs[i];
		json_int_t threads = json_integer_value(json_object_get(p->result, "threads"));
		json_int_t found = 0;
		for (json_int_t t = 0; t < threads; t++) {
			snprintf(path, sizeof path, "%s/history-r%u-t%lld.bin", dir, p->rank, (long long)t);
			found += access(path, R_OK) == 0;
		}
		if (found < threads) {
			prun_fail(pr, p, "recorded %lld of its %lld threads' histories in %s%s", (long long)found,
				  (long long)threads, dir,
				  strcmp(pr->r->rc.launcher, "local") == 0 ? "" :
				  " (hosts.shared_fs says that directory is at the same path on every host; it is not "
				  "on this one: share it, or record with launcher local)");
			return;
		}
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

/* Runs one point (run_internal.h): directory, pmem directory, server,
 * clients, GO, DONE, stop, merge, canary, self-checks, history check. */
json_t *run_point(struct run *r, struct prun *pr, const struct point *pt)
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
		prun_fail(pr, NULL, "out of memory");
		return NULL;
	}
	point_name(name, sizeof name, &r->rc, pt);
	snprintf(pr->pdir, sizeof pr->pdir, "%s/%s", r->dir, name);
	if (run_mkdirs(pr->pdir, err, sizeof err) < 0) {
		prun_fail(pr, NULL, "%s", err);
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
	/* The driver's time per phase (run.json's driver_s): what grows with
	 * hosts and QPs at scale (docs/scale.md). */
	uint64_t t_start = now_ms(), t_srv = 0, t_cli = 0, t_done = 0, t_stop = 0;

	/* A fresh --pmem-path: here we can make its parent and clear a
	 * leftover; a remote server makes it (its parent must exist). */
	point_pmem(r, pt, pr->pmem, sizeof pr->pmem);
	if (pr->pmem[0] && host_is_local(rc->server_host)) {
		char parent[PATH_MAX + 64];
		snprintf(parent, sizeof parent, "%s", pr->pmem);
		*strrchr(parent, '/') = '\0';
		rm_tree(pr->pmem);
		if (parent[0] && run_mkdirs(parent, err, sizeof err) < 0) {
			prun_fail(pr, NULL, "%s (server.recv_pmem_path / hosts.scratch_dir)", err);
			pr->pmem[0] = '\0';
			goto stop;
		}
	}

	/* Server first: clients need its endpoint. */
	if (prun_start(pr, &pr->procs[0], procargs_server(r->bin, &r->rc, pt, pr->ctl_hp, pr->pmem)) < 0)
		goto stop;
	snprintf(err, sizeof err, "%g s (timeouts.hello_s)", rc->hello_s);
	if (prun_wait_all(pr, "server", WANT_HELLO, now_ms() + (uint64_t)(rc->hello_s * 1000), err) < 0)
		goto stop;
	t_srv = now_ms();
	const char *endpoint = json_string_value(json_object_get(pr->procs[0].hello, "endpoint"));
	if (!endpoint || !*endpoint) {
		prun_fail(pr, &pr->procs[0], "sent a HELLO without an \"endpoint\"; the clients cannot "
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
		if (prun_start(pr, p, a) < 0)
			goto stop;
	}
	if (prun_wait_all(pr, "client", WANT_HELLO, now_ms() + (uint64_t)(rc->hello_s * 1000), err) < 0)
		goto stop;
	t_cli = now_ms();

	/* One start time for all: clients start start_delay after GO.  The
	 * server learns the same window, to leave the warm-up and the drain
	 * out of its service times (bench/server.h). */
	if (ctl_send(pr->procs[0].ctl, json_pack("{s:s, s:I, s:I, s:I}", "type", "GO", "start_in_ns",
						 (json_int_t)(rc->start_delay_ms * 1e6), "warmup_ns",
						 (json_int_t)(rc->warmup_s * 1e9), "duration_ns",
						 (json_int_t)(rc->duration_s * 1e9)), err, sizeof err) < 0) {
		prun_fail(pr, &pr->procs[0], "GO could not be sent: %s", err);
		goto stop;
	}
	for (i = 1; i < pr->nprocs; i++) {
		struct proc *p = &pr->procs[i];
		if (ctl_send(p->ctl, json_pack("{s:s, s:I}", "type", "GO", "start_in_ns",
					       (json_int_t)(rc->start_delay_ms * 1e6)), err, sizeof err) < 0) {
			prun_fail(pr, p, "GO could not be sent: %s", err);
			goto stop;
		}
	}
	double limit_s = rc->start_delay_ms / 1000 + rc->warmup_s + rc->duration_s + rc->grace_s;
	snprintf(err, sizeof err, "%g s (start delay + warmup_s + duration_s + timeouts.grace_s)", limit_s);
	prun_wait_all(pr, "client", WANT_DONE, now_ms() + (uint64_t)(limit_s * 1000), err);
	t_done = now_ms();

stop:
	prun_stop_all(pr);
	/* Every process has exited: nothing holds its directories now. */
	server_dirs_remove(pr);
	if (!pr->failed && rc->history)
		history_present(pr);
	t_stop = now_ms();
	if (!pr->failed) {
		json_t *cres[1024];
		size_t nc = 0;
		for (i = 1; i < pr->nprocs && nc < 1024; i++)
			cres[nc++] = pr->procs[i].result;
		pj = merge_point(pt, cres, nc, pr->procs[0].result, err, sizeof err);
		if (!pj) {
			prun_fail(pr, NULL, "%s", err);
		} else {
			json_object_set_new(pj, "dir", json_string(name));
			json_object_set_new(pj, "durable", json_boolean(runconf_durable(rc, pt->system)));
			if (pt->sweep >= 0)
				json_object_set_new(pj, "sweep", json_pack("{s:s, s:O, s:i}", "key",
						    r->rc.sweep_key, "value",
						    json_array_get(r->rc.sweep_values, (size_t)pt->sweep),
						    "index", pt->sweep));
			uint64_t t_merge = now_ms();
			self_check(r, pr, pj, cres, nc);
			if (rc->check)
				check_point(pr, pj);
			/* server_start: launch to its HELLO; clients_start: launch to
			 * every client's HELLO (their connections are made by then);
			 * measure: GO to the last DONE; stop: BYE/STOP to every
			 * exit; then merge, and the canary with the checks. */
			json_object_set_new(pj, "driver_s", json_pack("{s:f,s:f,s:f,s:f,s:f,s:f}",
				"server_start", (double)(t_srv - t_start) / 1e3, "clients_start", (double)(t_cli - t_srv) / 1e3,
				"measure", (double)(t_done - t_cli) / 1e3, "stop", (double)(t_stop - t_done) / 1e3,
				"merge", (double)(t_merge - t_stop) / 1e3, "canary_and_checks", (double)(now_ms() - t_merge) / 1e3));
		}
	}
	return pj;
}

/* Why a trial was disturbed (its interference or stalls check warned: a
 * spinning thread lost its CPU, the host stole it, or the thread stood
 * still), or NULL. */
const char *trial_disturbed(const json_t *checks)
{
	size_t i;
	const json_t *c;
	json_array_foreach(checks, i, c) {
		const char *name = result_check_name(c);
		if (checks_is_disturbance(name) && result_check_warns(c))
			return result_check_detail(c) ?: name;
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
json_t *run_trial(struct run *r, struct prun *pr, const struct point *pt0)
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
		const json_t *all = result_lat(merged, "all");
		double p99 = result_num(all, "p99"), lo, hi;
		/* a CI whose top rank is past the last sample bounds nothing */
		if (p99 > 0 && result_pct_ci(all, "p99", &lo, &hi) == 0 &&
		    stats_pct_ci_bounded((uint64_t)result_num(all, "n"), 0.99, STATS_Z95))
			width = (hi - lo) / p99;
		if (width <= rc->conv_ci || measured >= rc->conv_max_s - 1e-9 || run_signal)
			break;
	}
	json_object_set_new(merged, "convergence", json_pack("{s:s,s:i,s:f,s:f,s:f,s:f}", "stopped_by",
		width <= rc->conv_ci ? "ci_p99 reached" : run_signal ? "interrupted" : "max_s reached",
		"chunks", (int)json_array_size(chunks), "measured_s", measured, "ci_p99", isfinite(width) ? width : -1.0,
		"target_ci_p99", rc->conv_ci, "max_s", rc->conv_max_s));
	json_object_del(merged, "trials");
	json_object_set_new(merged, "chunks", chunks);
	/* the trial's checks: per check, in how many chunks it warned */
	json_decref(pr->checks);
	pr->checks = json_incref((json_t *)result_checks(merged));
	pr->canary_ns = isnan(result_canary_ns(merged)) ? -1 : result_canary_ns(merged);
	json_decref(pj0);
	return merged;
fail:
	json_decref(chunks);
	json_decref(pj0);
	json_decref(merged);
	return NULL;
}
