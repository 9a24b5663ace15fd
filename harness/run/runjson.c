/*
 * runjson.c - run.json's metadata (harness/result/ writes and reads the file).
 *
 * Versions come from the libraries themselves where they expose one
 * (jansson, libzstd, libpmem's header) and from dpkg-query otherwise
 * (libibverbs has no version call); a missing tool yields "unknown", never
 * an error: metadata must not stop a run.
 */
#include "runjson.h"
#include "result.h"
#include "subproc.h"
#include "usage.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

int run_capture_within(char *const *argv, char *out, size_t cap, int timeout_ms)
{
	int st = subproc_capture(argv, 0, timeout_ms, out, cap);
	char *nl = cap ? strchr(out, '\n') : NULL;
	if (nl)
		*nl = '\0';
	if (st < 0)
		return st;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int run_capture(char *const *argv, char *out, size_t cap)
{
	return run_capture_within(argv, out, cap, 0) == 0 ? 0 : -1;
}

static json_t *dpkg_version(const char *pkg)
{
	char out[128];
	char *argv[] = { "dpkg-query", "-W", "-f=${Version}", (char *)pkg, NULL };

	if (run_capture_within(argv, out, sizeof out, 10000) == 0 && out[0])
		return json_string(out);
	return json_string("unknown");
}

json_t *runjson_versions(void)
{
	json_t *v = json_object();
	struct utsname u;

	/* the compiler and the libraries' headers: runjson_set_build, from
	 * the binaries' own build (the driver's is not what ran) */
	json_object_set_new(v, "kernel", json_string(uname(&u) == 0 ? u.release : "unknown"));
	json_object_set_new(v, "libpmem", dpkg_version("libpmem1"));
	json_object_set_new(v, "libibverbs", dpkg_version("libibverbs1"));
	json_object_set_new(v, "librdmacm", dpkg_version("librdmacm1"));
	return v;
}

/* The RDMA devices this host shows in sysfs: [{name, guid}] (the driver's
 * host; each host's own are in oqb doctor's host facts). */
static json_t *driver_devices(void)
{
	json_t *devs = json_array();
	struct dirent **names = NULL;
	int n = scandir("/sys/class/infiniband", &names, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		char path[512], guid[64] = "", hex[32];
		size_t k = 0;
		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof path, "/sys/class/infiniband/%s/node_guid", names[i]->d_name);
			FILE *f = fopen(path, "r");
			if (f) {
				if (!fgets(guid, sizeof guid, f))
					guid[0] = '\0';
				fclose(f);
			}
			/* "0011:2233:4455:6677" -> "0011223344556677" */
			for (const char *c = guid; *c && k < sizeof hex - 1; c++)
				if (*c != ':' && *c != '\n')
					hex[k++] = *c;
			hex[k] = '\0';
			json_array_append_new(devs, json_pack("{s:s, s:s}", "name", names[i]->d_name, "guid", hex));
		}
		free(names[i]);
	}
	free(names);
	return devs;
}

/* The transport block; for verbs, the devices this host sees (a hook for
 * richer device details: firmware, link layer, ...).  What the transport
 * was built with comes from the binaries (runjson_set_build). */
static json_t *transport_info(const struct runconf *rc)
{
	json_t *t = json_object();

	json_object_set_new(t, "name", json_string(rc->transport));
	if (strcmp(rc->transport, "verbs") == 0)
		json_object_set_new(t, "driver_host_devices", driver_devices());
	return t;
}

void runjson_set_build(json_t *run, const struct runconf *rc, const json_t *build)
{
	const json_t *server = json_object_get(build, "server");
	json_t *t = json_object_get(run, "transport"), *v = json_object_get(run, "versions");
	const json_t *tb = json_object_get(json_object_get(server, "transports"), rc->transport);

	if (!build)
		return;
	json_object_set_new(run, "build", json_deep_copy(build));
	/* What the transport was built with (its row of the transport table). */
	if (tb && json_object_size(tb))
		json_object_set_new(t, "build", json_deep_copy(tb));
	/* System erpc runs over transport erpc: which eRPC build (docs/erpc.md). */
	for (size_t s = 0; s < rc->nsystems; s++) {
		const json_t *eb = json_object_get(json_object_get(server, "transports"), "erpc");
		if (strcmp(rc->systems[s], "erpc") == 0 && eb)
			json_object_set_new(t, "erpc_build", json_deep_copy(eb));
	}
	json_object_set(v, "compiler", json_object_get(server, "compiler"));
	const char *key;
	json_t *val;
	json_object_foreach(json_object_get(server, "libraries"), key, val)
		json_object_set(v, key, val);
}

static json_t *hosts_info(const struct runconf *rc)
{
	json_t *h = json_object(), *cl = json_array();
	char me[256];

	if (gethostname(me, sizeof me) != 0)
		snprintf(me, sizeof me, "unknown");
	me[sizeof me - 1] = '\0';
	for (size_t i = 0; i < rc->nclient_hosts; i++)
		json_array_append_new(cl, json_string(rc->client_hosts[i]));
	json_object_set_new(h, "driver", json_string(me));
	json_object_set_new(h, "launcher", json_string(rc->launcher));
	json_object_set_new(h, "server", json_string(rc->server_host));
	json_object_set_new(h, "clients", cl);
	json_object_set_new(h, "ctl_addr", json_string(rc->ctl_addr));
	json_object_set_new(h, "processes", json_array());   /* filled from HELLOs */
	return h;
}

/*
 * The machine the driver runs on, at the start: CPU model, CPUs online,
 * SMT, the frequency governor of CPU 0 and the load average.  A lab
 * cluster's other hosts report their own placement with every point.
 */
json_t *runjson_environment(void)
{
	char model[256] = "", line[512], smt[64], gov[64], load[128];
	FILE *f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
			snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
	file_first_line("/sys/devices/system/cpu/smt/control", smt, sizeof smt);
	file_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", gov, sizeof gov);
	file_first_line("/proc/loadavg", load, sizeof load);
	double l1 = 0, l5 = 0, l15 = 0;
	sscanf(load, "%lf %lf %lf", &l1, &l5, &l15);
	return json_pack("{s:s,s:i,s:s,s:s,s:[fff]}", "cpu_model", model[0] ? model : "unknown",
			 "cpus_online", (int)sysconf(_SC_NPROCESSORS_ONLN), "smt", smt[0] ? smt : "unknown",
			 "governor", gov[0] ? gov : "none (no cpufreq: a VM, or the driver is not loaded)",
			 "loadavg_1_5_15", l1, l5, l15);
}

/* The bound on each git command of run.json's provenance: OQB_GIT_TIMEOUT_S
 * (seconds, default 10). */
static int git_timeout_ms(void)
{
	const char *e = getenv("OQB_GIT_TIMEOUT_S");
	double v = e && *e ? strtod(e, NULL) : 10;
	return v > 0 && v < 3600 ? (int)(v * 1000) : 10000;
}

json_t *runjson_new(const struct runconf *rc, const char *run_id, const char *src_dir)
{
	json_t *r = json_object();
	char buf[128], stamp[64];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(r, "schema", json_string(RESULT_SCHEMA));
	json_object_set_new(r, "name", json_string(rc->name));
	json_object_set_new(r, "run_id", json_string(run_id));
	json_object_set_new(r, "created_utc", json_string(stamp));
	json_object_set_new(r, "status", json_string("running"));
	json_object_set_new(r, "error", json_null());
	json_object_set_new(r, "config_path", json_string(rc->path));
	json_object_set(r, "config", rc->root);
	json_object_set_new(r, "hosts", hosts_info(rc));
	json_object_set_new(r, "environment", runjson_environment());
	/* what each trial's canary_ns measures (docs/trust.md) */
	json_object_set_new(r, "canary_method", json_string(
		!rc->canary ? "none (config canary: false)" :
		!strcmp(rc->transport, "verbs") ?
		"verbs: raw RC SEND ping-pong of 64 B between the server's host (verbs.addr, server worker 0's CPU) and "
		"client 0's host (client thread 0's CPU), round-trip p50 over up to 200 ms after each trial (oqb-vfloor); "
		"system erpc: as shm" :
		"shm: cache-line ping-pong between server worker 0's and client thread 0's CPUs, round-trip p50 over up "
		"to 200 ms after each trial (oqb-floor; only where the server runs on the driver's host)"));

	snprintf(buf, sizeof buf, "unknown");
	json_t *dirty = json_false();
	const char *dirty_note = NULL;
	if (src_dir) {
		/* Once per run, and bounded: on a checkout over 9p or NFS, git
		 * status re-reads every tracked file whose inode or ctime looks
		 * new (221 s on the first run in the verbs VM, issue 37).  Only
		 * mtime and size are compared (checkStat=minimal), the index is
		 * not rewritten, and what does not finish in time is "unknown". */
		char *rev[] = { "git", "-C", (char *)src_dir, "rev-parse", "HEAD", NULL };
		char *st[] = { "git", "--no-optional-locks", "-c", "core.checkStat=minimal", "-c",
			       "core.trustctime=false", "-C", (char *)src_dir, "status", "--porcelain",
			       "--untracked-files=no", NULL };
		char out[256];
		int t = git_timeout_ms();
		if (run_capture_within(rev, buf, sizeof buf, t) < 0 || !buf[0]) {
			snprintf(buf, sizeof buf, "unknown");
		} else {
			int rs = run_capture_within(st, out, sizeof out, t);
			if (rs == 0 && out[0]) {
				dirty = json_true();
			} else if (rs == -2) {
				dirty = json_null();
				dirty_note = "unknown: git status did not finish within OQB_GIT_TIMEOUT_S (a checkout on "
					     "a network or 9p file system?); the run went on without it. Set "
					     "OQB_GIT_TIMEOUT_S higher to wait longer";
			} else if (rs < 0) {
				dirty = json_null();
				dirty_note = "unknown: git status failed in the checkout oqb was built from; run it "
					     "there to see why";
			}
		}
	}
	json_object_set_new(r, "git_commit", json_string(buf));
	json_object_set_new(r, "git_dirty", dirty);
	if (dirty_note)
		json_object_set_new(r, "git_dirty_note", json_string(dirty_note));
	json_object_set_new(r, "versions", runjson_versions());
	json_object_set_new(r, "transport", transport_info(rc));
	json_object_set_new(r, "points", json_array());
	return r;
}
