/*
 * hostfacts.c - what this host offers a run, as one JSON object, for
 * `oqb-server --host-facts` (hostfacts.h).  `oqb doctor` runs it on every
 * host through that host's launcher, so the limits are those a process
 * started that way gets (an ssh session or a Slurm step has its own).
 *
 * It only reads /proc and /sys (and, with verbs, opens and queries the
 * RDMA devices); it changes nothing.  A fact that cannot be read is ""
 * or -1, never an error: the doctor judges what is missing.
 */
#include "hostfacts.h"
#include "buildinfo.h"
#include "proclimits.h"
#include "transport.h"
#include "usage.h"
#if OQB_HAVE_VERBS_TRANSPORT
#include "tp_verbs.h"
#endif

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* NUMA node of CPU c (the cpuC/nodeN link), -1 when none is shown. */
static int cpu_node(int c)
{
	char path[128];
	struct dirent *e;
	int node = -1;

	snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", c);
	DIR *d = opendir(path);
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "node", 4) && e->d_name[4] >= '0' && e->d_name[4] <= '9') {
			node = atoi(e->d_name + 4);
			break;
		}
	if (d)
		closedir(d);
	return node;
}

/* Turbo: "on", "off", or "" when this host does not expose it. */
static const char *turbo(char *buf, size_t len)
{
	if (file_first_line("/sys/devices/system/cpu/intel_pstate/no_turbo", buf, len)[0])
		return strcmp(buf, "0") == 0 ? "on" : "off";
	if (file_first_line("/sys/devices/system/cpu/cpufreq/boost", buf, len)[0])
		return strcmp(buf, "1") == 0 ? "on" : "off";
	return "";
}

static json_t *hugepages(void)
{
	char line[256];
	long long total = -1, freep = -1, size_kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");
	while (f && fgets(line, sizeof line, f)) {
		sscanf(line, "HugePages_Total: %lld", &total);
		sscanf(line, "HugePages_Free: %lld", &freep);
		sscanf(line, "Hugepagesize: %lld", &size_kb);
	}
	if (f)
		fclose(f);
	return json_pack("{s:I, s:I, s:I}", "total", total, "free", freep, "size_kb", size_kb);
}

json_t *hostfacts_json(void)
{
	char host[256], b1[128], b2[128], b3[128], b4[128];
	struct lim_have h;
	json_t *nodes = json_array(), *tps = json_array();
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "unknown");
	host[sizeof host - 1] = '\0';
	lim_read_self(&h);
	for (long c = 0; c < ncpu && c < 4096; c++)
		json_array_append_new(nodes, json_integer(cpu_node((int)c)));
	for (const char *const *t = transport_name_list; *t; t++)
		if (transport_find(*t))
			json_array_append_new(tps, json_string(*t));
	json_t *o = json_pack("{s:s, s:s, s:{s:I, s:I, s:I, s:I, s:b}, s:i, s:o, s:s, s:s, s:s, s:s, s:o, s:o}",
			      "build_id", buildinfo_id(), "hostname", host,
			      "limits", "nofile_soft", h.nofile_soft, "nofile_hard", h.nofile_hard,
			      "memlock_soft", h.memlock_soft, "memlock_hard", h.memlock_hard,
			      "cap_ipc_lock", h.cap_ipc_lock,
			      "cpus_online", (int)sysconf(_SC_NPROCESSORS_ONLN), "cpu_nodes", nodes,
			      "smt", file_first_line("/sys/devices/system/cpu/smt/control", b1, sizeof b1),
			      "governor", file_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", b2, sizeof b2),
			      "turbo", turbo(b3, sizeof b3),
			      "clocksource",
			      file_first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", b4, sizeof b4),
			      "hugepages", hugepages(), "transports", tps);
#if OQB_HAVE_VERBS_TRANSPORT
	json_object_set_new(o, "rdma_devices", tp_verbs_devices_json());
#endif
	return o;
}

int hostfacts_answer(int build_id, int host_facts)
{
	if (build_id) {
		printf("%s\n", buildinfo_id());
		return 1;
	}
	if (!host_facts)
		return 0;
	json_t *f = hostfacts_json();
	json_dumpf(f, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(f);
	return 1;
}
