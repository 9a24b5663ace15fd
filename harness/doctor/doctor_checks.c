/*
 * doctor_checks.c - what `oqb doctor` concludes from one host's report
 * (doctor_internal.h): its binaries and their build, its limits against
 * what the config will open there (lib/proclimits.h through run/needs.h),
 * whether its oqb-server has the verbs transport (the RDMA rows are
 * doctor_rdma.c's), the NUMA row, hugepages for erpc, and the CPU and clock settings that move numbers
 * without breaking a run (governor, SMT, turbo, clock source: warnings).
 *
 * Every FAIL carries a fix; a check that cannot be judged from what the
 * host reported fails with the reason, never passes.
 */
#include "doctor_internal.h"
#include "cpus.h"
#include "proclimits.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static const char *const bin_names[2] = { "oqb-server", "oqb-client" };

static const char *fstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static long long fint(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

/* Whether a config's processes on this host use transport tp. */
static int uses(const struct runconf *rc, const char *tp)
{
	for (size_t s = 0; s < rc->nsystems; s++) {
		const char *t = strcmp(rc->systems[s], "erpc") == 0 ? "erpc" : rc->transport;
		if (!strcmp(t, tp))
			return 1;
	}
	return 0;
}

static void check_bins(struct dr_table *t, const struct dr_host *h, const struct dr_ref *ref)
{
	for (int b = 0; b < 2; b++) {
		int needed = b == 0 ? h->need.servers > 0 : h->need.clients > 0;
		const char *st = h->bin_state[b];
		const char *check = bin_names[b];   /* static: the row keeps the pointer */
		if (!strcmp(st, "ok")) {
			if (ref->id[0] && !strcmp(h->bin_id[b], ref->id))
				dr_add(t, h->need.host, check, DR_PASS, NULL, "%s/%s, build %s (the server's)", h->bin_dir,
				       bin_names[b], h->bin_id[b]);
			else
				dr_add(t, h->need.host, check, needed ? DR_FAIL : DR_WARN,
				       "copy one build's bin/ to hosts.bin_dir on every host (make, then rsync or scp "
				       "bin/), or set hosts.bin_dir to where that build is",
				       "%s/%s is another build: id %s, the server's (%s/oqb-server on %s) is %s", h->bin_dir,
				       bin_names[b], h->bin_id[b][0] ? h->bin_id[b] : "(none printed: older than --build-id)",
				       ref->bin_dir, ref->host, ref->id[0] ? ref->id : "(unknown: no oqb-server answered)");
		} else {
			dr_add(t, h->need.host, check, needed ? DR_FAIL : DR_WARN,
			       "build with make and copy bin/ there, or set hosts.bin_dir to the directory that holds "
			       "oqb-server and oqb-client on every host",
			       "%s/%s %s%s", h->bin_dir, bin_names[b],
			       !strcmp(st, "notexec") ? "is not executable" : "does not exist",
			       needed ? "" : " (not needed by this host's processes)");
		}
	}
}

static void check_limits(struct dr_table *t, const struct runconf *rc, const struct dr_host *h)
{
	const json_t *l = json_object_get(h->facts, "limits");
	struct lim_have have = {
		.nofile_soft = fint(l, "nofile_soft"), .nofile_hard = fint(l, "nofile_hard"),
		.memlock_soft = fint(l, "memlock_soft"), .memlock_hard = fint(l, "memlock_hard"),
		.cap_ipc_lock = json_is_true(json_object_get(l, "cap_ipc_lock")),
	};
	static const char *const names[2] = { "open files", "locked memory" };

	if (!l) {
		dr_add(t, h->need.host, "limits", DR_FAIL, "install this build's oqb-server there (see above)",
		       "not reported (no oqb-server --host-facts)");
		return;
	}
	for (int which = 0; which < 2; which++) {
		for (int role = 0; role < 2; role++) {
			const struct lim_need *n = role == 0 ? &h->need.server : &h->need.client;
			char who[96], msg[600], fix[600];
			if (role == 0 ? !h->need.servers : !h->need.clients)
				continue;
			if (role == 0)
				snprintf(who, sizeof who, "the server");
			else
				snprintf(who, sizeof who, "each of %u client process(es)", h->need.clients);
			enum lim_verdict v = lim_judge(which, n, &have, who, h->need.delegation || !rc->threads,
						       msg, sizeof msg, fix, sizeof fix);
			dr_add(t, h->need.host, names[which], v == LIM_SHORT ? DR_FAIL : DR_PASS,
			       v == LIM_SHORT ? fix : NULL, "%s", msg);
		}
	}
}

/* The CPUs the config's placement uses on this host, into out; count. */
static int placed_cpus(const struct runconf *rc, const struct dr_host *h, int ncpu, int *out, int cap)
{
	int n = 0;
	char err[128];
	if (h->need.servers) {
		if (!strcmp(rc->srv_cpus, "auto"))
			for (int c = 0; c < rc->workers && c < ncpu && n < cap; c++)
				out[n++] = c;
		else if (strcmp(rc->srv_cpus, "none") != 0) {
			int k = cpus_parse(rc->srv_cpus, out + n, cap - n, err, sizeof err);
			n += k > 0 ? k : 0;
		}
	}
	if (h->need.clients) {
		int want = (int)(h->need.clients * (unsigned)rc->threads);
		if (!strcmp(rc->cli_cpus, "auto"))
			for (int c = ncpu - 1; c >= 0 && want-- > 0 && n < cap; c--)
				out[n++] = c;
		else if (strcmp(rc->cli_cpus, "none") != 0) {
			int k = cpus_parse(rc->cli_cpus, out + n, cap - n, err, sizeof err);
			n += k > 0 ? k : 0;
		}
	}
	return n;
}

void dr_check_numa(struct dr_table *t, const struct runconf *rc, const struct dr_host *h, const char *dev, int node)
{
	const json_t *nodes = json_object_get(h->facts, "cpu_nodes");
	int cpus[1024], ncpu = (int)json_array_size(nodes);
	int n = placed_cpus(rc, h, ncpu, cpus, 1024), off = 0, first_off = -1;

	if (node < 0) {
		dr_add(t, h->need.host, "numa", DR_PASS, NULL, "%s has no NUMA node (one-node host, a VM or Soft-RoCE)",
		       dev);
		return;
	}
	for (int i = 0; i < n; i++) {
		json_int_t cn = json_integer_value(json_array_get(nodes, (size_t)cpus[i]));
		if (cpus[i] < ncpu && cn >= 0 && cn != node) {
			off++;
			if (first_off < 0)
				first_off = cpus[i];
		}
	}
	if (!off) {
		dr_add(t, h->need.host, "numa", DR_PASS, NULL, "%s on node %d, and so are the %d CPU(s) the placement uses",
		       dev, node, n);
		return;
	}
	char fix[300];
	snprintf(fix, sizeof fix, "place the threads on node %d's CPUs (server.cpus / clients.cpus: a list such as "
		 "those in /sys/devices/system/node/node%d/cpulist)", node, node);
	dr_add(t, h->need.host, "numa", DR_WARN, fix,
	       "%s is on node %d but %d of the %d CPU(s) the placement uses are not (first: CPU %d): every request "
	       "crosses the interconnect", dev, node, off, n, first_off);
}

/* The RDMA rows (doctor_rdma.c), once the host's oqb-server is known to
 * have the verbs transport. */
static void check_verbs(struct dr_table *t, const struct runconf *rc, const struct dr_host *h)
{
	if (!json_is_array(json_object_get(h->facts, "rdma_devices"))) {
		dr_add(t, h->need.host, "rdma device", DR_FAIL,
		       "build with libibverbs-dev and librdmacm-dev installed (make deps), and copy bin/ there",
		       "this host's oqb-server was built without the verbs transport");
		return;
	}
	dr_check_rdma(t, rc, h);
}

/* Settings that change numbers, not whether a run works: warnings. */
static void check_cpu(struct dr_table *t, const struct dr_host *h)
{
	const char *host = h->need.host;
	const char *gov = fstr(h->facts, "governor"), *smt = fstr(h->facts, "smt");
	const char *turbo = fstr(h->facts, "turbo"), *cs = fstr(h->facts, "clocksource");

	if (!gov[0])
		dr_add(t, host, "governor", DR_PASS, NULL, "no cpufreq governor (a VM, or frequency fixed by firmware)");
	else if (strcmp(gov, "performance"))
		dr_add(t, host, "governor", DR_WARN, "cpupower frequency-set -g performance (as root)",
		       "%s: clock speed follows load, so latency moves with it", gov);
	else
		dr_add(t, host, "governor", DR_PASS, NULL, "performance");
	if (!strcmp(smt, "on"))
		dr_add(t, host, "smt", DR_WARN, "echo off > /sys/devices/system/cpu/smt/control (as root), or give "
		       "server.cpus / clients.cpus one hyperthread per core", "on: two polling threads may share a core");
	else
		dr_add(t, host, "smt", DR_PASS, NULL, "%s", smt[0] ? smt : "not reported");
	if (!strcmp(turbo, "on"))
		dr_add(t, host, "turbo", DR_WARN, "echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo, or echo 0 > "
		       "/sys/devices/system/cpu/cpufreq/boost (as root)",
		       "on: the clock rises and falls with temperature and load");
	else
		dr_add(t, host, "turbo", DR_PASS, NULL, "%s", turbo[0] ? turbo : "not exposed here");
	if (strcmp(cs, "tsc"))
		dr_add(t, host, "clock source", DR_WARN, "where the TSC is invariant (constant_tsc nonstop_tsc in "
		       "/proc/cpuinfo): boot with clocksource=tsc tsc=reliable",
		       "%s: every timestamp costs more than with tsc", cs[0] ? cs : "unknown");
	else
		dr_add(t, host, "clock source", DR_PASS, NULL, "tsc");
}

void dr_check_host(struct dr_table *t, const struct runconf *rc, const struct dr_host *h, const struct dr_ref *ref)
{
	check_bins(t, h, ref);
	if (!h->facts) {
		dr_add(t, h->need.host, "host facts", DR_FAIL, "install this build's oqb-server in hosts.bin_dir there",
		       "not reported: %s", h->tail[0] ? h->tail : "oqb-server --host-facts printed nothing");
		return;
	}
	check_limits(t, rc, h);
	if (uses(rc, "verbs"))
		check_verbs(t, rc, h);
	if (uses(rc, "erpc") && h->need.servers > 0) {
		/* asked of this host's oqb-server (its --host-facts), never of the driver */
		const json_t *tp;
		size_t i;
		int has = 0;
		json_array_foreach(json_object_get(h->facts, "transports"), i, tp)
			has |= json_is_string(tp) && !strcmp(json_string_value(tp), "erpc");
		if (has)
			dr_add(t, h->need.host, "erpc", DR_PASS, NULL, "%s/oqb-server has the eRPC transport", h->bin_dir);
		else
			dr_add(t, h->need.host, "erpc", DR_FAIL, "rebuild with make ERPC_DIR=/path/to/erpc (docs/erpc.md) "
			       "and copy bin/ there, or remove \"erpc\" from systems",
			       "%s/oqb-server is a build without eRPC (system erpc needs it)", h->bin_dir);
	}
	if (uses(rc, "erpc")) {
		const json_t *hp = json_object_get(h->facts, "hugepages");
		long long fr = fint(hp, "free"), sz = fint(hp, "size_kb");
		if (fr <= 0)
			dr_add(t, h->need.host, "hugepages", DR_FAIL, "echo 1024 > /proc/sys/vm/nr_hugepages (as root; "
			       "vm.nr_hugepages in /etc/sysctl.conf to keep it)",
			       "%lld free hugepages: eRPC allocates its buffers from them", fr < 0 ? 0 : fr);
		else
			dr_add(t, h->need.host, "hugepages", DR_PASS, NULL, "%lld free of %lld kB", fr, sz);
	}
	check_cpu(t, h);
}
