/*
 * doctor.c - `oqb doctor CONFIG` (doctor.h): one probe per host of the
 * config, all at once, each through that host's launcher (launch.h), so
 * that what it sees (limits, binaries, devices) is what a process of the
 * run will see; then the table.
 *
 * The probe is one POSIX sh script run as `sh -c SCRIPT oqb-doctor
 * BIN_DIR`: it says it ran, reports whether each binary is there and
 * executable and its --build-id, and prints `oqb-server --host-facts`
 * (bench/hostfacts.c).  Each line it prints starts with "oqb-doctor: ", so
 * a login banner or an ssh warning in the same log cannot be mistaken for
 * a report.  A host that has not answered within the bound (--timeout-s,
 * 10 s by default) is ended through the PID the launcher gave us (its own
 * process group) and fails "reachable"; slow hosts are named on stderr
 * every few seconds while the others are waited for.
 */
#include "doctor.h"
#include "doctor_internal.h"
#include "exitcodes.h"
#include "buildinfo.h"
#include "launch.h"
#include "log.h"
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DR_MAX_HOSTS   (RUNCONF_MAX_HOSTS + 1)
#define DR_PROGRESS_S  3.0

static const char probe_script[] =
	"echo 'oqb-doctor: reached'\n"
	"for b in oqb-server oqb-client; do\n"
	"  if [ -f \"$1/$b\" ] && [ -x \"$1/$b\" ]; then\n"
	"    printf 'oqb-doctor: bin %s ok %s\\n' \"$b\" \"$(\"$1/$b\" --build-id 2>/dev/null | head -n 1)\"\n"
	"  elif [ -e \"$1/$b\" ]; then echo \"oqb-doctor: bin $b notexec\"\n"
	"  else echo \"oqb-doctor: bin $b missing\"; fi\n"
	"done\n"
	"for b in oqb-server oqb-client; do\n"
	"  if [ -x \"$1/$b\" ]; then\n"
	"    f=$(\"$1/$b\" --host-facts 2>&1) && { printf 'oqb-doctor: facts %s\\n' \"$f\"; break; }\n"
	"  fi\n"
	"done\n"
	"exit 0\n";

void dr_add(struct dr_table *t, const char *host, const char *check, enum dr_result r, const char *fix,
	    const char *fmt, ...)
{
	va_list ap;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct dr_row *n = realloc(t->rows, cap * sizeof *n);
		if (!n)
			return;
		t->rows = n;
		t->cap = cap;
	}
	struct dr_row *w = &t->rows[t->n++];
	memset(w, 0, sizeof *w);
	snprintf(w->host, sizeof w->host, "%s", host);
	w->check = check;
	w->result = r;
	va_start(ap, fmt);
	vsnprintf(w->found, sizeof w->found, fmt, ap);
	va_end(ap);
	if (fix)
		snprintf(w->fix, sizeof w->fix, "%s", fix);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The last lines of the log that are not the probe's own, joined by " | ". */
static void log_tail(const char *path, char *out, size_t len)
{
	char lines[4][200], line[180];
	int n = 0;
	FILE *f = fopen(path, "r");

	out[0] = '\0';
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || !strncmp(line, "oqb-doctor: ", 12))
			continue;
		snprintf(lines[n % 4], sizeof lines[0], "%s", line);
		n++;
	}
	if (f)
		fclose(f);
	size_t o = 0;
	for (int i = n > 4 ? n - 4 : 0; i < n && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%s", o ? " | " : "", lines[i % 4]);
}

/* Reads the probe's report from its log into h. */
static void parse_report(struct dr_host *h, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;

	while (f && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "oqb-doctor: ", 12))
			continue;
		const char *r = line + 12;
		if (!strcmp(r, "reached")) {
			h->reached = 1;
		} else if (!strncmp(r, "bin ", 4)) {
			char name[32] = "", st[32] = "", id[64] = "";
			if (sscanf(r + 4, "%31s %31s %63s", name, st, id) >= 2)
				for (int b = 0; b < 2; b++)
					if (!strcmp(name, b == 0 ? "oqb-server" : "oqb-client")) {
						snprintf(h->bin_state[b], sizeof h->bin_state[b], "%s", st);
						snprintf(h->bin_id[b], sizeof h->bin_id[b], "%s", id);
					}
		} else if (!strncmp(r, "facts ", 6) && !h->facts) {
			json_error_t je;
			h->facts = json_loads(r + 6, 0, &je);
			if (h->facts && !json_is_object(h->facts)) {
				json_decref(h->facts);
				h->facts = NULL;
			}
		}
	}
	free(line);
	if (f)
		fclose(f);
	log_tail(path, h->tail, sizeof h->tail);
}

/* Ends probe pid (its own process group, launch_start) and reaps it. */
static void end_probe(pid_t pid)
{
	kill(-pid, SIGTERM);
	kill(pid, SIGTERM);
	for (int i = 0; i < 20; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return;
		usleep(50000);
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Probes every host at once; a probe that could not start leaves its
 * host unreached, with the launcher's reason in its tail. */
static void probe_all(struct launcher *l, struct dr_host *hs, size_t n, const char *dir, double bound)
{
	pid_t pids[DR_MAX_HOSTS];
	char logs[DR_MAX_HOSTS][PATH_MAX];
	double t0 = now_s(), next_note = t0 + (bound / 2 < DR_PROGRESS_S ? bound / 2 : DR_PROGRESS_S);
	size_t left = 0;

	for (size_t i = 0; i < n; i++) {
		char *argv[] = { "sh", "-c", (char *)probe_script, "oqb-doctor", (char *)hs[i].bin_dir, NULL };
		char err[512];
		/* What a user can run to try the host the same way. */
		char *tryv[] = { "true", NULL };
		char *how = launch_describe(l, hs[i].need.host, NULL, tryv);
		snprintf(hs[i].how, sizeof hs[i].how, "%s", how ? how : "?");
		free(how);
		snprintf(logs[i], sizeof logs[i], "%s/host-%zu.log", dir, i);
		pids[i] = -1;
		if (launch_start(l, hs[i].need.host, NULL, argv, logs[i], &pids[i], err, sizeof err) < 0) {
			snprintf(hs[i].start_err, sizeof hs[i].start_err, "%s", err);
			pids[i] = -1;
			continue;
		}
		left++;
	}
	while (left) {
		double now = now_s();
		for (size_t i = 0; i < n; i++) {
			int st;
			if (pids[i] <= 0)
				continue;
			pid_t r = waitpid(pids[i], &st, WNOHANG);
			if (r == pids[i] || (r < 0 && errno == ECHILD)) {
				hs[i].took_s = now - t0;
				pids[i] = 0;
				left--;
			} else if (now - t0 >= bound) {
				end_probe(pids[i]);
				hs[i].timed_out = 1;
				hs[i].took_s = now - t0;
				pids[i] = 0;
				left--;
			}
		}
		if (left && now >= next_note) {
			fprintf(stderr, "oqb doctor: %.0f s, still waiting for", now - t0);
			for (size_t i = 0; i < n; i++)
				if (pids[i] > 0)
					fprintf(stderr, " %s", hs[i].need.host);
			fprintf(stderr, " (each gets %.0f s)\n", bound);
			next_note = now + DR_PROGRESS_S;
		}
		if (left)
			usleep(20000);
	}
	for (size_t i = 0; i < n; i++)
		if (!hs[i].start_err[0])
			parse_report(&hs[i], logs[i]);
}

static const char *result_name(enum dr_result r)
{
	return r == DR_PASS ? "PASS" : r == DR_WARN ? "WARN" : "FAIL";
}

static void print_table(const struct dr_table *t, FILE *f)
{
	int hw = 4;
	for (size_t i = 0; i < t->n; i++)
		if ((int)strlen(t->rows[i].host) > hw)
			hw = (int)strlen(t->rows[i].host);
	fprintf(f, "%-*s  %-14s %-6s %s\n", hw, "HOST", "CHECK", "RESULT", "FOUND");
	for (size_t i = 0; i < t->n; i++) {
		const struct dr_row *w = &t->rows[i];
		fprintf(f, "%-*s  %-14s %-6s %s\n", hw, w->host, w->check, result_name(w->result), w->found);
		if (w->fix[0] && w->result != DR_PASS)
			fprintf(f, "%-*s  %-14s %-6s fix: %s\n", hw, "", "", "", w->fix);
	}
}

static json_t *table_json(const struct dr_table *t, const char *config, int ok)
{
	json_t *rows = json_array();
	for (size_t i = 0; i < t->n; i++) {
		const struct dr_row *w = &t->rows[i];
		json_t *r = json_pack("{s:s, s:s, s:s, s:s}", "host", w->host, "check", w->check, "result",
				      result_name(w->result), "found", w->found);
		if (w->fix[0])
			json_object_set_new(r, "fix", json_string(w->fix));
		json_array_append_new(rows, r);
	}
	return json_pack("{s:s, s:s, s:b, s:o}", "config", config, "build_id", buildinfo_id(), "ok", ok, "checks", rows);
}

/* The rows of one host, the reachability first. */
static void check_one(struct dr_table *t, const struct runconf *rc, const struct dr_host *h, const char *launcher)
{
	const char *host = h->need.host;
	if (h->timed_out || !h->reached) {
		char found[900];
		if (h->start_err[0]) {
			dr_add(t, host, "reachable", DR_FAIL, "install the program hosts.launcher needs on the driver's "
			       "host (ssh: OpenSSH's client; slurm: srun, inside an allocation)",
			       "the %s launcher could not start: %s", launcher, h->start_err);
			return;
		}
		if (h->timed_out)
			snprintf(found, sizeof found, "no answer within %.0f s through the %s launcher", h->took_s, launcher);
		else
			snprintf(found, sizeof found, "the %s launcher could not run a command there", launcher);
		dr_add(t, host, "reachable", DR_FAIL,
		       !strcmp(launcher, "ssh") ? "check that the host is up and that `ssh HOST true` works without a "
		       "prompt (BatchMode: a key, and its host key in known_hosts or hosts.ssh.known_hosts)" :
		       !strcmp(launcher, "slurm") ? "run oqb doctor inside the allocation (salloc), with the config's "
		       "hosts among its nodes" : "check the host name in hosts.server / hosts.clients",
		       "%s%s%s; to try it by hand: %s", found, h->tail[0] ? "; said: " : "", h->tail, h->how);
		return;
	}
	dr_add(t, host, "reachable", DR_PASS, NULL, "answered in %.2f s through the %s launcher", h->took_s, launcher);
	dr_check_host(t, rc, h, buildinfo_id());
}

int doctor_run(const struct doctor_opts *o)
{
	struct runconf rc;
	struct launcher l;
	struct dr_table t = { 0 };
	static struct dr_host hs[DR_MAX_HOSTS];
	struct host_need need[DR_MAX_HOSTS];
	char err[4096], dir[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	int status = OQB_EXIT_USAGE;

	if (runconf_load_sets(o->config, o->sets, o->nsets, &rc, err, sizeof err) != 0) {
		fprintf(stderr, "oqb doctor: %s\n", err);
		return OQB_EXIT_USAGE;
	}
	if (launch_open(&l, rc.launcher, rc.ssh, err, sizeof err) != 0) {
		fprintf(stderr, "oqb doctor: hosts.launcher %s: %s\n", rc.launcher, err);
		runconf_free(&rc);
		return OQB_EXIT_USAGE;
	}
	snprintf(dir, sizeof dir, "%s/oqb-doctor-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "oqb doctor: cannot create a directory for the probes' logs in %s: %s (set TMPDIR)\n",
			tmp && *tmp ? tmp : "/tmp", strerror(errno));
		goto out;
	}
	size_t n = needs_hosts(&rc, need, DR_MAX_HOSTS);
	for (size_t i = 0; i < n; i++) {
		memset(&hs[i], 0, sizeof hs[i]);
		hs[i].need = need[i];
		hs[i].bin_dir = rc.bin_dir ? rc.bin_dir : self_bin_dir();
	}
	if (!o->json)
		fprintf(stderr, "oqb doctor: %s: %zu host(s) through the %s launcher, build %s\n", rc.path, n, rc.launcher,
			buildinfo_id());
	probe_all(&l, hs, n, dir, o->timeout_s > 0 ? o->timeout_s : 10);
	for (size_t i = 0; i < n; i++)
		check_one(&t, &rc, &hs[i], rc.launcher);

	size_t fails = 0, warns = 0;
	for (size_t i = 0; i < t.n; i++) {
		fails += t.rows[i].result == DR_FAIL;
		warns += t.rows[i].result == DR_WARN;
	}
	if (o->json) {
		json_t *j = table_json(&t, rc.path, fails == 0);
		json_dumpf(j, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(j);
	} else {
		print_table(&t, stdout);
		printf("%s: %zu host(s), %zu check(s): %zu failed, %zu warned: %s\n", rc.path, n, t.n, fails, warns,
		       fails ? "this config cannot run as the hosts are; fix the FAIL lines" :
		       "the config can run");
	}
	status = fails ? OQB_EXIT_FAIL : OQB_EXIT_OK;
	for (size_t i = 0; i < n; i++) {
		char p[PATH_MAX + 32];
		snprintf(p, sizeof p, "%s/host-%zu.log", dir, i);
		unlink(p);
		json_decref(hs[i].facts);
	}
	rmdir(dir);
out:
	free(t.rows);
	launch_close(&l);
	runconf_free(&rc);
	return status;
}
