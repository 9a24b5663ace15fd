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
#include "buildinfo.h"
#include "usage.h"

#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>
#ifdef OQB_HAVE_VERBS
#include <infiniband/verbs.h>
#endif

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
	char buf[64];

#if defined(__clang__)
	json_object_set_new(v, "compiler", json_string(__VERSION__));   /* "Clang x.y ..." */
#elif defined(__GNUC__)
	json_object_set_new(v, "compiler", json_string("gcc " __VERSION__));
#else
	json_object_set_new(v, "compiler", json_string(__VERSION__));
#endif
	json_object_set_new(v, "kernel", json_string(uname(&u) == 0 ? u.release : "unknown"));
	json_object_set_new(v, "jansson", json_string(JANSSON_VERSION));
	json_object_set_new(v, "libzstd", json_string(ZSTD_versionString()));
	snprintf(buf, sizeof buf, "%d.%d (API)", PMEM_MAJOR_VERSION, PMEM_MINOR_VERSION);
	json_object_set_new(v, "libpmem_api", json_string(buf));
	json_object_set_new(v, "libpmem", dpkg_version("libpmem1"));
	json_object_set_new(v, "libibverbs", dpkg_version("libibverbs1"));
	json_object_set_new(v, "librdmacm", dpkg_version("librdmacm1"));
	return v;
}

/* t[key] = transport name's build description, where it has one. */
static void set_build(json_t *t, const char *key, const char *name)
{
	json_t *b = buildinfo_transport(name);
	if (json_is_null(b))
		json_decref(b);
	else
		json_object_set_new(t, key, b);
}

/* The transport block; for verbs, the devices this host sees (a hook for
 * richer device details: firmware, link layer, ...). */
static json_t *transport_info(const struct runconf *rc)
{
	json_t *t = json_object();

	json_object_set_new(t, "name", json_string(rc->transport));
#ifdef OQB_HAVE_VERBS
	if (strcmp(rc->transport, "verbs") == 0) {
		int n = 0;
		struct ibv_device **list = ibv_get_device_list(&n);
		json_t *devs = json_array();
		for (int i = 0; list && i < n; i++) {
			char guid[32];
			snprintf(guid, sizeof guid, "%016llx",
				 (unsigned long long)be64toh(ibv_get_device_guid(list[i])));
			json_array_append_new(devs, json_pack("{s:s, s:s}", "name",
							      ibv_get_device_name(list[i]), "guid", guid));
		}
		if (list)
			ibv_free_device_list(list);
		json_object_set_new(t, "driver_host_devices", devs);
	}
#endif
	/* What the transport was built with (the transport table's row). */
	set_build(t, "build", rc->transport);
	/* System erpc runs over transport erpc: which eRPC build (docs/erpc.md). */
	for (size_t s = 0; s < rc->nsystems; s++)
		if (strcmp(rc->systems[s], "erpc") == 0)
			set_build(t, "erpc_build", "erpc");
	return t;
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
