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
#include "launch.h"
#include "log.h"
#include "run.h"
#include "ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
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
	/* verbs: the interfaces, their addresses and RDMA ports, read under
	 * the root prefix $2 (doctor_rdma.c parses it); a stand-in tree may
	 * bring its own bin/ip (tests only) */
	"R=${2%/}\n"
	"if [ \"$3\" != - ]; then\n"
	"  IP=ip; command -v ip >/dev/null 2>&1 || for c in /usr/sbin/ip /sbin/ip /usr/bin/ip; do\n"
	"    [ -x $c ] && IP=$c && break; done\n"
	"  [ -x \"$R/bin/ip\" ] && IP=\"$R/bin/ip\"\n"
	"  command -v \"$IP\" >/dev/null 2>&1 || echo 'oqb-doctor: noip'\n"
	"  \"$IP\" -o addr show 2>/dev/null | while IFS= read -r l; do echo \"oqb-doctor: ipaddr $l\"; done\n"
	"  \"$IP\" -o route get \"$3\" 2>/dev/null | while IFS= read -r l; do echo \"oqb-doctor: route $l\"; done\n"
	"  for n in \"$R\"/sys/class/net/*; do\n"
	"    [ -e \"$n\" ] || continue\n"
	"    for k in type mtu address dev_port mode; do\n"
	"      v=; { read -r v <\"$n/$k\"; } 2>/dev/null && echo \"oqb-doctor: net ${n##*/} $k $v\"\n"
	"    done\n"
	"    for d in \"$n\"/device/infiniband/*; do\n"
	"      [ -e \"$d\" ] && echo \"oqb-doctor: net ${n##*/} ibdev ${d##*/}\"\n"
	"    done\n"
	"  done\n"
	"  for d in \"$R\"/sys/class/infiniband/*; do\n"
	"    [ -e \"$d\" ] || continue\n"
	"    v=; { read -r v <\"$d/device/numa_node\"; } 2>/dev/null && echo \"oqb-doctor: dev ${d##*/} numa_node $v\"\n"
	"    for p in \"$d\"/ports/*; do\n"
	"      [ -e \"$p\" ] || continue\n"
	"      for k in state phys_state link_layer rate; do\n"
	"        v=; { read -r v <\"$p/$k\"; } 2>/dev/null && echo \"oqb-doctor: port ${d##*/} ${p##*/} $k $v\"\n"
	"      done\n"
	"      for g in \"$p\"/gids/*; do\n"
	"        v=; { read -r v <\"$g\"; } 2>/dev/null || continue\n"
	"        case $v in ''|0000:0000:0000:0000:0000:0000:0000:0000) continue;; esac\n"
	"        i=${g##*/}; nd=-; ty=\n"
	"        { read -r nd <\"$p/gid_attrs/ndevs/$i\"; } 2>/dev/null || nd=-\n"
	"        { read -r ty <\"$p/gid_attrs/types/$i\"; } 2>/dev/null\n"
	"        echo \"oqb-doctor: gid ${d##*/} ${p##*/} $i $v ${nd:--} $ty\"\n"
	"      done\n"
	"    done\n"
	"  done\n"
	"fi\n"
	/* the control channel: connect to $4 port $5 as a run's process
	 * will, and say who we are ($6); bounded by $7 s */
	"ctl() {\n"
	"  t=; command -v timeout >/dev/null 2>&1 && t=\"timeout $4\"\n"
	"  if command -v bash >/dev/null 2>&1; then\n"
	"    $t bash -c 'exec 3<>\"/dev/tcp/$1/$2\" && printf \"oqb-doctor-ctl %s\\n\" \"$3\" >&3' bash \"$1\" \"$2\" \"$3\"\n"
	"  elif command -v python3 >/dev/null 2>&1; then\n"
	"    $t python3 -c 'import socket,sys\n"
	"try:\n"
	"  s=socket.create_connection((sys.argv[1],int(sys.argv[2])),float(sys.argv[4]))\n"
	"  s.sendall((\"oqb-doctor-ctl %s\\n\"%sys.argv[3]).encode())\n"
	"except Exception as e:\n"
	"  print(e); sys.exit(1)' \"$1\" \"$2\" \"$3\" \"$4\"\n"
	"  else return 200; fi\n"
	"}\n"
	"if [ \"$4\" != - ]; then\n"
	"  m=$(ctl \"$4\" \"$5\" \"$6\" \"$7\" 2>&1); c=$?\n"
	"  m=$(printf '%s\\n' \"$m\" | head -n 1)\n"
	"  case $c in 0) echo 'oqb-doctor: ctl ok';; 200) echo 'oqb-doctor: ctl notool';;\n"
	"  *) echo \"oqb-doctor: ctl fail $c $m\";; esac\n"
	"fi\n"
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
		} else if (!strncmp(r, "ctl ", 4)) {
			snprintf(h->ctl_said, sizeof h->ctl_said, "%s", r + 4);
		} else if (dr_rdma_line(&h->rdma, r)) {
			/* taken */
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

/* The driver's side of the control-channel check: a listener where `oqb
 * run` would listen (hosts.ctl_bind, hosts.ctl_port), and the token each
 * host's probe sends once connected. */
struct dr_ctl {
	int fd;                    /* -1: not listening (see err) */
	unsigned port;
	char addr[300];            /* hosts.ctl_addr, as processes are told it */
	char nonce[40];
	char err[300];
};

/* Takes every connection waiting on c, reading each one's token line. */
static void dr_ctl_accept(struct dr_ctl *c, struct dr_host *hs, size_t n)
{
	int fd;
	while (c->fd >= 0 && (fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		struct timeval tv = { 0, 300000 };
		char buf[160] = "";
		size_t got = 0;
		ssize_t k;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
		while (got + 1 < sizeof buf && (k = read(fd, buf + got, sizeof buf - 1 - got)) > 0) {
			got += (size_t)k;
			buf[got] = '\0';
			if (strchr(buf, '\n'))
				break;
		}
		close(fd);
		char tok[64];
		size_t i, nl = strlen(c->nonce);
		if (sscanf(buf, "oqb-doctor-ctl %63s", tok) == 1 && !strncmp(tok, c->nonce, nl) && tok[nl] == '-' &&
		    sscanf(tok + nl + 1, "%zu", &i) == 1 && i < n)
			hs[i].ctl_heard = 1;
	}
}

/* Probes every host at once; a probe that could not start leaves its
 * host unreached, with the launcher's reason in its tail. */
static void probe_all(struct launcher *l, struct dr_host *hs, size_t n, const char *dir, double bound,
		      const char *sysroot, const char *vaddr, struct dr_ctl *c)
{
	pid_t pids[DR_MAX_HOSTS];
	char logs[DR_MAX_HOSTS][PATH_MAX];
	double t0 = now_s(), next_note = t0 + (bound / 2 < DR_PROGRESS_S ? bound / 2 : DR_PROGRESS_S);
	size_t left = 0;

	for (size_t i = 0; i < n; i++) {
		char tok[64], port[16], cto[16];
		snprintf(tok, sizeof tok, "%s-%zu", c->nonce, i);
		snprintf(port, sizeof port, "%u", c->port);
		snprintf(cto, sizeof cto, "%.0f", bound / 3 < 1 ? 1 : bound / 3 > 5 ? 5 : bound / 3);
		char *argv[] = { "sh", "-c", (char *)probe_script, "oqb-doctor", (char *)hs[i].bin_dir,
				 (char *)sysroot, (char *)(vaddr ? vaddr : "-"), c->fd >= 0 ? c->addr : "-", port, tok,
				 cto, NULL };
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
		dr_ctl_accept(c, hs, n);
		if (left)
			usleep(20000);
	}
	dr_ctl_accept(c, hs, n);
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

static json_t *table_json(const struct dr_table *t, const char *config, int ok, const char *build_id)
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
	return json_pack("{s:s, s:s, s:b, s:o}", "config", config, "build_id", build_id, "ok", ok, "checks", rows);
}

/* The control row of a host that answered: whether its probe reached the
 * driver's listener at hosts.ctl_addr, as a run's processes must. */
static void check_ctl(struct dr_table *t, const struct runconf *rc, const struct dr_ctl *c, const struct dr_host *h)
{
	const char *host = h->need.host, *said = h->ctl_said;
	int v6 = strchr(c->addr, ':') != NULL;
	char hp[340], fix[900], what[900];

	if (c->fd < 0)
		return;   /* the driver's own row says why */
	snprintf(hp, sizeof hp, "%s%s%s:%u", v6 ? "[" : "", c->addr, v6 ? "]" : "", c->port);
	if (h->ctl_heard) {
		dr_add(t, host, "control", DR_PASS, NULL, "connected to the driver at %s (hosts.ctl_addr%s)", hp,
		       rc->ctl_port ? ", hosts.ctl_port" : "; a run takes any free port");
		return;
	}
	if (!strcmp(said, "notool")) {
		snprintf(fix, sizeof fix, "install bash or python3 there, or check by hand that %s opens a TCP "
			 "connection to %s", host, hp);
		dr_add(t, host, "control", DR_WARN, fix, "not tested: neither bash nor python3 on this host");
		return;
	}
	if (rc->ctl_port)
		snprintf(fix, sizeof fix, "open TCP port %u from %s to %s (this machine's firewall and the network's), "
			 "or set hosts.ctl_addr to an address of this machine that %s can reach", c->port, host,
			 c->addr, host);
	else
		snprintf(fix, sizeof fix, "set hosts.ctl_port to a fixed port and open that TCP port from %s to %s "
			 "(a run takes any free port; this check used %u), or set hosts.ctl_addr to an address of this "
			 "machine that %s can reach", host, c->addr, c->port, host);
	if (!strcmp(said, "ok"))
		snprintf(what, sizeof what, "connected to %s, but not to this driver (another listener, or a proxy "
			 "or NAT in between)", hp);
	else if (!strncmp(said, "fail 124", 8))
		snprintf(what, sizeof what, "no answer from %s within the connect bound: a firewall that drops", hp);
	else if (!strncmp(said, "fail ", 5)) {
		const char *m = strchr(said + 5, ' ');
		snprintf(what, sizeof what, "cannot connect to %s: %s", hp, m && m[1] ? m + 1 : "(no message)");
	} else
		snprintf(what, sizeof what, "the probe did not report its connection to %s", hp);
	dr_add(t, host, "control", DR_FAIL, fix, "%s", what);
}

/* The rows of one host, the reachability first. */
static void check_one(struct dr_table *t, const struct runconf *rc, const struct dr_ctl *c, const struct dr_host *h,
		      const char *launcher, const struct dr_ref *ref)
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
	dr_check_host(t, rc, h, ref);
	check_ctl(t, rc, c, h);
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
		fprintf(stderr, "oqb doctor: %s: %zu host(s) through the %s launcher\n", rc.path, n, rc.launcher);
	/* Listen where a run will, for the hosts' connect-back. */
	struct dr_ctl c = { .fd = -1 };
	unsigned port = (unsigned)rc.ctl_port;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(c.nonce, sizeof c.nonce, "%lx%lx", (unsigned long)getpid(), (unsigned long)ts.tv_nsec);
	snprintf(c.addr, sizeof c.addr, "%s", rc.ctl_addr);
	c.fd = ctl_listen(rc.ctl_bind, &port, c.err, sizeof c.err);
	if (c.fd >= 0 && fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK) == 0)
		c.port = port;
	else if (c.fd >= 0) {
		snprintf(c.err, sizeof c.err, "cannot make the listener non-blocking: %s", strerror(errno));
		close(c.fd);
		c.fd = -1;
	}
	if (c.fd < 0)
		dr_add(&t, "(driver)", "control port", DR_FAIL, rc.ctl_port ? "set hosts.ctl_port to a free port of "
		       "this machine (or 0 for any), or end what holds it (ss -ltnp)" : "set hosts.ctl_addr to an "
		       "address of this machine", "cannot listen where a run would (%s, hosts.ctl_port %lld): %s",
		       rc.ctl_bind, rc.ctl_port, c.err);
	/* verbs: the address each host looks up its RDMA interface by */
	char vaddr[64];
	const char *va = rc.verbs_addr ? rc.verbs_addr : rc.server_host;
	int verbs = !strcmp(rc.transport, "verbs");
	if (verbs && dr_numeric_addr(va, vaddr, sizeof vaddr) != 0)
		snprintf(vaddr, sizeof vaddr, "%s", va);
	const char *root = getenv("OQB_SYSFS_ROOT");
	probe_all(&l, hs, n, dir, o->timeout_s > 0 ? o->timeout_s : 10, root && *root ? root : "/",
		  verbs ? vaddr : NULL, &c);
	if (c.fd >= 0)
		close(c.fd);
	/* the reference: the server host's oqb-server, as a run takes it */
	struct dr_ref ref = { .host = rc.server_host, .bin_dir = hs[0].bin_dir };
	for (size_t i = 0; i < n && !ref.id[0]; i++)
		if (hs[i].need.servers > 0 && !strcmp(hs[i].bin_state[0], "ok") && hs[i].bin_id[0][0]) {
			snprintf(ref.id, sizeof ref.id, "%s", hs[i].bin_id[0]);
			ref.host = hs[i].need.host;
			ref.bin_dir = hs[i].bin_dir;
		}
	if (!o->json && ref.id[0])
		fprintf(stderr, "oqb doctor: the server's build (%s/oqb-server on %s): %s\n", ref.bin_dir, ref.host, ref.id);
	for (size_t i = 0; i < n; i++)
		check_one(&t, &rc, &c, &hs[i], rc.launcher, &ref);

	size_t fails = 0, warns = 0;
	for (size_t i = 0; i < t.n; i++) {
		fails += t.rows[i].result == DR_FAIL;
		warns += t.rows[i].result == DR_WARN;
	}
	if (o->json) {
		json_t *j = table_json(&t, rc.path, fails == 0, ref.id);
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
		dr_rdma_free(hs[i].rdma);
	}
	rmdir(dir);
out:
	free(t.rows);
	launch_close(&l);
	runconf_free(&rc);
	return status;
}
