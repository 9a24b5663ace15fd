/*
 * doctor_checks.c - what `oqb doctor` concludes from one host's report
 * (doctor_internal.h): its binaries and their build, its limits against
 * what the config will open there (lib/proclimits.h through run/needs.h),
 * its RDMA device, port, link layer, GID, MTU and NUMA node for verbs,
 * hugepages for erpc, and the CPU and clock settings that move numbers
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

/* The textual GID an RoCE v2 device holds for address a, in buf. */
static int addr_gid(const char *a, char *buf, size_t len)
{
	struct in_addr v4;
	struct in6_addr v6;
	struct addrinfo hints, *res = NULL;

	if (inet_pton(AF_INET, a, &v4) == 1) {
		snprintf(buf, len, "::ffff:%s", a);
		return 0;
	}
	if (inet_pton(AF_INET6, a, &v6) == 1) {
		return inet_ntop(AF_INET6, &v6, buf, (socklen_t)len) ? 0 : -1;
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_INET;
	if (getaddrinfo(a, NULL, &hints, &res) != 0 || !res)
		return -1;
	char ip[64];
	inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, ip, sizeof ip);
	freeaddrinfo(res);
	snprintf(buf, len, "::ffff:%s", ip);
	return 0;
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

static void check_numa(struct dr_table *t, const struct runconf *rc, const struct dr_host *h, const char *dev,
		       int node)
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

/* The RDMA checks of one host: device, port, link layer, GID, MTU, NUMA. */
static void check_verbs(struct dr_table *t, const struct runconf *rc, const struct dr_host *h)
{
	const json_t *devs = json_object_get(h->facts, "rdma_devices"), *d, *p, *g;
	const char *host = h->need.host;
	char names[256] = "", want[80] = "", fix[400];
	size_t i, j, k, o = 0;
	/* the best match: a RoCE v2 GID of verbs.addr (server), else an
	 * ACTIVE port (client host) */
	const json_t *bd = NULL, *bp = NULL, *bg = NULL;

	if (!json_is_array(devs)) {
		dr_add(t, host, "rdma device", DR_FAIL,
		       "build with libibverbs-dev and librdmacm-dev installed (make deps), and copy bin/ there",
		       "this host's oqb-server was built without the verbs transport");
		return;
	}
	json_array_foreach(devs, i, d)
		if (o < sizeof names)
			o += (size_t)snprintf(names + o, sizeof names - o, "%s%s", i ? ", " : "", fstr(d, "name"));
	if (!json_array_size(devs)) {
		dr_add(t, host, "rdma device", DR_FAIL,
		       "load the NIC's driver (or for Soft-RoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev "
		       "IFACE), then check with oqb-server --list-devices",
		       "no RDMA device on this host");
		return;
	}
	if (h->need.servers && rc->verbs_addr && addr_gid(rc->verbs_addr, want, sizeof want) != 0) {
		dr_add(t, host, "rdma device", DR_FAIL, "set verbs.addr to an IP address of the server's RDMA interface",
		       "verbs.addr %s does not resolve to an address", rc->verbs_addr);
		return;
	}
	json_array_foreach(devs, i, d) {
		if (rc->device && strcmp(rc->device, fstr(d, "name")))
			continue;
		json_array_foreach(json_object_get(d, "ports"), j, p) {
			if (rc->ib_port > 0 && fint(p, "port") != rc->ib_port)
				continue;
			if (!want[0]) {
				if (!bp || (!strcmp(fstr(p, "state"), "ACTIVE") && strcmp(fstr(bp, "state"), "ACTIVE"))) {
					bd = d;
					bp = p;
				}
				continue;
			}
			json_array_foreach(json_object_get(p, "gids"), k, g)
				if (!strcmp(fstr(g, "gid"), want) &&
				    (!bg || (!strcmp(fstr(g, "type"), "RoCE v2") && strcmp(fstr(bg, "type"), "RoCE v2")))) {
					bd = d;
					bp = p;
					bg = g;
				}
		}
	}
	if (!bd) {
		if (rc->device)
			snprintf(fix, sizeof fix, "set verbs.device to one of: %s (or leave it out to use the device that "
				 "owns verbs.addr)", names);
		else
			snprintf(fix, sizeof fix, "set verbs.addr to an address of an RDMA interface (oqb-server "
				 "--list-devices on %s shows each GID's address), or bind a device to the interface that "
				 "has it (Soft-RoCE: rdma link add rxe0 type rxe netdev IFACE)", host);
		if (want[0])
			dr_add(t, host, "rdma device", DR_FAIL, fix, "verbs.addr %s is on no RDMA interface%s%s: no GID %s "
			       "on %s", rc->verbs_addr, rc->device ? " of " : "", rc->device ? rc->device : "", want, names);
		else
			dr_add(t, host, "rdma device", DR_FAIL, fix, "no RDMA device %s here (found: %s)",
			       rc->device ? rc->device : "", names);
		return;
	}
	const char *dev = fstr(bd, "name");
	int port = (int)fint(bp, "port");
	if (want[0])
		dr_add(t, host, "rdma device", DR_PASS, NULL, "%s port %d owns verbs.addr %s", dev, port, rc->verbs_addr);
	else
		dr_add(t, host, "rdma device", DR_PASS, NULL, "%s port %d%s", dev, port,
		       rc->device ? " (verbs.device)" : " (clients connect through the device rdma_cm routes to)");
	if (strcmp(fstr(bp, "state"), "ACTIVE"))
		dr_add(t, host, "port state", DR_FAIL, "bring the link up: ip link set IFACE up, and check the cable, "
		       "switch port or subnet manager (ibstat)", "%s port %d is %s", dev, port, fstr(bp, "state"));
	else
		dr_add(t, host, "port state", DR_PASS, NULL, "%s port %d is ACTIVE", dev, port);
	const char *ll = fstr(bp, "link_layer");
	dr_add(t, host, "link layer", DR_PASS, NULL, "%s%s", ll, !strcmp(ll, "Ethernet") ? " (RoCE)" : "");
	if (bg) {
		int idx = (int)fint(bg, "index");
		const char *type = fstr(bg, "type");
		if (!strcmp(ll, "Ethernet") && strcmp(type, "RoCE v2"))
			dr_add(t, host, "gid", DR_FAIL, "enable RoCE v2 for the device (the NIC's tools; cma_roce_mode "
			       "in configfs), or use an address with a RoCE v2 GID", "the GID of %s is index %d, type %s: "
			       "not RoCE v2", rc->verbs_addr, idx, type[0] ? type : "unknown");
		else if (rc->gid_index >= 0 && rc->gid_index != idx) {
			snprintf(fix, sizeof fix, "set verbs.gid_index to %d, or to -1 to find it from verbs.addr", idx);
			dr_add(t, host, "gid", DR_FAIL, fix, "verbs.gid_index is %lld, but %s (%s) is index %d",
			       rc->gid_index, want, type, idx);
		} else
			dr_add(t, host, "gid", DR_PASS, NULL, "index %d is %s, %s%s%s", idx, want, type,
			       fstr(bg, "netdev")[0] ? ", netdev " : "", fstr(bg, "netdev"));
	}
	long long mtu = fint(bp, "active_mtu");
	long long ss = rc->slot_size > 0 ? rc->slot_size : 2048;
	if (mtu < (ss < 4096 ? ss : 4096))
		dr_add(t, host, "mtu", DR_WARN, "raise the interface MTU (ip link set IFACE mtu 4200 gives RoCE MTU 4096) "
		       "and the switch's", "active MTU %lld B: a request of up to %lld B takes several packets", mtu, ss);
	else
		dr_add(t, host, "mtu", DR_PASS, NULL, "active MTU %lld B", mtu);
	check_numa(t, rc, h, dev, (int)fint(bd, "numa_node"));
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
