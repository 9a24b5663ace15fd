/*
 * runconf.c - the experiment config: one schema for the whole file, the
 * rules that span fields, and the sweep plan.
 *
 * Every check happens here, before the driver starts anything, so a typo
 * costs a second rather than a half-finished sweep.  The schema rows are
 * also the reference for docs/config.md.  A `sweep` is checked by building
 * one whole config per value (runconf.variants), so a value that breaks
 * the config (a value_size the wire cannot carry) fails up front too.
 */
#include "runconf.h"
#include "log.h"
#include "conf.h"
#include "gen.h"
#include "cpus.h"
#include "launch.h"
#include "hostsrc.h"
#include "trials.h"
#include "settings.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const k_transports[] = { "shm", "verbs", NULL };
static const char *const k_systems[] = { "oq", "rawrpc", "deferred", "erpc", "write1", "seqwrite", NULL };
static const char *const k_backends[] = { "null", "cache", "pmkv", "memcached", "rocksdb", "plugin", NULL };
static const char *const k_arrivals[] = { "poisson", "closed", NULL };
static const char *const k_launchers[] = { "local", "ssh", "slurm", NULL };
static const char *const k_host_sources[] = { "slurm", "cloudlab", NULL };

/*
 * The driver's own keys of the sections that also hold settings rows
 * (lib/settings/: the keys a binary takes as flags, with the binary's
 * default and bounds).  Each section's schema is these rows followed by
 * the settings rows of that section (build_schema); the docs' list of the
 * settings comes from the same rows (oqb-server --list-settings).
 */
static struct conf_key backend_keys[48], server_keys[32], clients_keys[24], verbs_keys[24], timeouts_keys[16],
	idle_keys[8];

/* timeouts and idle: the driver's own timeouts here; drain_s, connect_s
 * (the clients') and idle's keys (the server's and clients') are rows,
 * lib/settings/timing.def. */
static const struct conf_key timeouts_own[] = {
	{ "hello_s", CONF_NUM, 0, 0.1, 3600, NULL, NULL, "wait for each process to report ready (default 30)" },
	{ "start_delay_ms", CONF_NUM, 0, 0, 60000, NULL, NULL, "GO tells clients to start this much later (default 20 with launcher local, else 300)" },
	{ "grace_s", CONF_NUM, 0, 0, 3600, NULL, NULL, "slack after warmup+duration before a point times out (default 15)" },
	{ "stop_s", CONF_NUM, 0, 0.1, 3600, NULL, NULL, "wait for the server's DONE after STOP (default 15)" },
	{ "exit_s", CONF_NUM, 0, 0.1, 600, NULL, NULL, "wait for processes to exit before signals (default 5)" },
	{ NULL }
};

static const struct conf_key idle_own[] = { { NULL } };

static const struct conf_key backend_own[] = {
	{ "kind", CONF_STR, 1, 0, 0, k_backends, NULL, "KV backend: null, cache, pmkv, memcached, rocksdb or plugin" },
	{ "pmem_path", CONF_STR, 0, 0, 0, NULL, NULL, "pmkv: directory on the server host for the pools, the same as server.recv_pmem_path (default: a private one per point)" },
	{ "path", CONF_STR, 0, 0, 0, NULL, NULL, "plugin: the engine's shared object on the server host (docs/plugins.md), relative to the directory oqb runs in" },
	{ "options", CONF_ANY, 0, 0, 0, NULL, NULL, "plugin: an object passed to the engine as JSON text (default {})" },
	{ NULL }
};

/* Which kinds use backend_own's keys (kind: every one); another kind
 * refuses them, as it refuses a settings row it does not own. */
static const struct { const char *key, *kind; } backend_own_kind[] = {
	{ "pmem_path", "pmkv" }, { "path", "plugin" }, { "options", "plugin" },
};

static const struct conf_key server_own[] = {
	{ "backend", CONF_OBJ, 1, 0, 0, NULL, backend_keys, "the KV backend" },
	{ "recv_pmem_path", CONF_STR, 0, 0, 0, NULL, NULL, "durable/pmkv: directory on the server host for the persistent receive rings and pools; each point gets a fresh subdirectory (default: a private one per point)" },
	{ "extra_args", CONF_ARR_STR, 0, 0, 0, NULL, NULL, "more oqb-server flags, e.g. [\"--void-timeout-ms\", \"20\"]" },
	{ NULL }
};

static const struct conf_key clients_own[] = {
	{ "processes", CONF_INT, 0, 1, 1024, NULL, NULL, "client processes (default 1)" },
	{ "extra_args", CONF_ARR_STR, 0, 0, 0, NULL, NULL, "more oqb-client flags" },
	{ NULL }
};

static const struct conf_key verbs_own[] = {
	{ "addr", CONF_STR, 0, 0, 0, NULL, NULL, "server's address on the RDMA network (default: hosts.server; hosts.from \"cloudlab\": the server's LAN address)" },
	{ NULL }
};

/* own's rows, then section's settings rows, into out (cap rows with the
 * end).  A row whose key own already has (rocksdb's and plugin's `path`)
 * adds its help to own's row.  0, or -1 when out is too small. */
static int build_section(struct conf_key *out, size_t cap, const struct conf_key *own, const char *section)
{
	size_t n = 0;

	for (; own[n].name; n++) {
		if (n + 1 >= cap)
			return -1;
		out[n] = own[n];
	}
	for (const struct setting *s = settings_rows(); s->field; s++) {
		if (strcmp(s->section, section) != 0)
			continue;
		size_t k;
		for (k = 0; k < n && strcmp(out[k].name, s->key) != 0; k++)
			;
		if (k < n) {
			size_t len = strlen(out[k].help) + strlen(settings_help(s)) + 4;
			char *h = malloc(len);
			if (!h)
				return -1;
			snprintf(h, len, "%s; %s", out[k].help, settings_help(s));
			out[k].help = h;
			continue;
		}
		if (n + 1 >= cap)
			return -1;
		struct conf_key c = { .name = s->key, .min = s->min, .max = s->max, .choices = s->choices,
				      .help = settings_help(s) };
		switch (s->type) {
		case SET_INT: case SET_U64: c.type = CONF_INT; break;
		case SET_NUM: c.type = CONF_NUM; break;
		case SET_STR: case SET_ENUM: c.type = CONF_STR; break;
		case SET_BOOL: case SET_BOOL01: c.type = CONF_BOOL; break;
		}
		out[n++] = c;
	}
	out[n] = (struct conf_key){ .name = NULL };
	return 0;
}

/* A number the driver needs even when the config leaves it out: the
 * binary's default, from its row. */
static long long row_default(const char *section, const char *key)
{
	const struct setting *s = settings_find(section, key);
	return s && s->def ? strtoll(s->def, NULL, 10) : 0;
}

/* The same for a number that need not be whole. */
static double row_default_num(const char *section, const char *key)
{
	const struct setting *s = settings_find(section, key);
	return s && s->def ? strtod(s->def, NULL) : 0;
}

static void build_schema(void)
{
	static int built;

	if (built)
		return;
	built = 1;
	if (build_section(backend_keys, sizeof backend_keys / sizeof backend_keys[0], backend_own, "server.backend") ||
	    build_section(server_keys, sizeof server_keys / sizeof server_keys[0], server_own, "server") ||
	    build_section(clients_keys, sizeof clients_keys / sizeof clients_keys[0], clients_own, "clients") ||
	    build_section(verbs_keys, sizeof verbs_keys / sizeof verbs_keys[0], verbs_own, "verbs") ||
	    build_section(timeouts_keys, sizeof timeouts_keys / sizeof timeouts_keys[0], timeouts_own, "timeouts") ||
	    build_section(idle_keys, sizeof idle_keys / sizeof idle_keys[0], idle_own, "idle")) {
		/* a build with more rows than the arrays: a programming error */
		fprintf(stderr, "oqb: the config schema has more settings rows than runconf.c's arrays hold\n");
		abort();
	}
}

static const struct conf_key convergence_keys[] = {
	{ "ci_p99", CONF_NUM, 0, 0.001, 10, NULL, NULL, "stop when the P99's 95% CI is narrower than this share of it (default 0.05)" },
	{ "chunk_s", CONF_NUM, 0, 0.01, 3600, NULL, NULL, "measured seconds per chunk (default 1)" },
	{ "max_s", CONF_NUM, 0, 0.01, 86400, NULL, NULL, "stop at this many measured seconds whatever the CI (default 20)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

static const struct conf_key sweep_keys[] = {
	{ "key", CONF_STR, 1, 0, 0, NULL, NULL, "the config key to vary, a dotted path, e.g. workload.value_size" },
	{ "values", CONF_ANY, 1, 0, 0, NULL, NULL, "the values it takes, an array; each one makes its own points" },
	{ NULL }
};

static const struct conf_key arrival_keys[] = {
	{ "kind", CONF_STR, 1, 0, 0, k_arrivals, NULL, "poisson (open loop) or closed" },
	{ "loads_ops", CONF_ANY, 0, 0, 0, NULL, NULL, "poisson: total offered loads to sweep (ops/s), a number or an array, or {\"auto\": true, \"fractions\": [...], \"search\": {...}} to find the knee first and sweep fractions of it (docs/config.md)" },
	{ "outstanding", CONF_NUM_OR_ARR, 0, 1, 1e6, NULL, NULL, "closed: requests in flight per client thread (sweepable)" },
	{ NULL }
};

static const struct conf_key ssh_keys[] = {
	{ "user", CONF_STR, 0, 0, 0, NULL, NULL, "remote user (default: ssh's)" },
	{ "port", CONF_INT, 0, 1, 65535, NULL, NULL, "sshd port (default: ssh's)" },
	{ "identity", CONF_STR, 0, 0, 0, NULL, NULL, "private key file" },
	{ "known_hosts", CONF_STR, 0, 0, 0, NULL, NULL, "known_hosts file (default: the user's)" },
	{ "options", CONF_ARR_STR, 0, 0, 0, NULL, NULL, "more ssh -o options, \"Key=Value\"" },
	{ NULL }
};

static const struct conf_key hosts_keys[] = {
	{ "from", CONF_STR, 0, 0, 0, k_host_sources, NULL, "take the hosts from the Slurm allocation (SLURM_JOB_NODELIST) or a CloudLab/Emulab manifest (hosts.manifest): the server on the first node (or hosts.server), the clients on the others (shm: on the server's)" },
	{ "manifest", CONF_STR, 0, 0, 0, NULL, NULL, "from \"cloudlab\": the experiment's manifest RSpec file" },
	{ "lan", CONF_STR, 0, 0, 0, NULL, NULL, "from \"cloudlab\": the <link> client_id of the experiment LAN to use (default: the manifest's only link)" },
	{ "server", CONF_STR, 0, 0, 0, NULL, NULL, "server host (default 127.0.0.1; with from: the first node)" },
	{ "clients", CONF_ARR_STR, 0, 0, 0, NULL, NULL, "client hosts, used round-robin (default [server])" },
	{ "launcher", CONF_STR, 0, 0, 0, k_launchers, NULL, "local, ssh or slurm (default local; from slurm: slurm, from cloudlab: ssh)" },
	{ "ssh", CONF_OBJ, 0, 0, 0, NULL, ssh_keys, "ssh settings" },
	{ "bin_dir", CONF_STR, 0, 0, 0, NULL, NULL, "directory of oqb-server/oqb-client on the hosts (default: next to oqb)" },
	{ "ctl_addr", CONF_STR, 0, 0, 0, NULL, NULL, "address the hosts use to reach the driver (default: 127.0.0.1 or this host's name)" },
	{ "ctl_port", CONF_INT, 0, 0, 65535, NULL, NULL, "control port (default 0: any free port)" },
	{ "scratch_dir", CONF_STR, 0, 0, 0, NULL, NULL, "parent directory for the server's private run directory and the private pmem directories (default: the server's, /dev/shm)" },
	{ "shared_fs", CONF_BOOL, 0, 0, 0, NULL, NULL, "the results directory is at the same path on every host (NFS, a cluster's home): clients launched by ssh or slurm write their histories into it (default false)" },
	{ NULL }
};


static const struct conf_key top_keys[] = {
	{ "name", CONF_STR, 1, 0, 0, NULL, NULL, "experiment name (letters, digits, . _ -)" },
	{ "description", CONF_STR, 0, 0, 0, NULL, NULL, "free text" },
	{ "transport", CONF_STR, 1, 0, 0, k_transports, NULL, "shm or verbs" },
	{ "systems", CONF_ARR_STR, 1, 0, 0, k_systems, NULL, "systems to compare: oq, rawrpc, deferred, erpc (erpc: builds with ERPC_DIR, docs/erpc.md), write1 (verbs only, not linearizable by design), seqwrite (verbs only): docs/systems.md" },
	{ "server", CONF_OBJ, 1, 0, 0, NULL, server_keys, "server shape" },
	{ "clients", CONF_OBJ, 0, 0, 0, NULL, clients_keys, "client shape" },
	{ "workload", CONF_OBJ, 1, 0, 0, NULL, NULL, "operation generator, passed to the clients (kind: kv, ycsb, twitter, trace, echo)" },
	{ "arrival", CONF_OBJ, 1, 0, 0, NULL, arrival_keys, "arrival process and the loads to sweep" },
	{ "durable", CONF_ANY, 0, 0, 0, NULL, NULL, "durable mode (persistent receive rings, paper 5.3): true, false, or the systems that run it, e.g. [\"oq\"] (default false)" },
	{ "verbs", CONF_OBJ, 0, 0, 0, NULL, verbs_keys, "verbs transport settings (transport verbs only)" },
	{ "history", CONF_ANY, 0, 0, 0, NULL, NULL, "record client histories into POINT/history/: true, or {\"keys\": 0.1, \"numeric\": false} (docs/correctness.md; default false)" },
	{ "check", CONF_BOOL, 0, 0, 0, NULL, NULL, "oqb check every point's history after it ran (needs history; default false)" },
	{ "sweep", CONF_OBJ, 0, 0, 0, NULL, sweep_keys, "one more axis: {\"key\": \"workload.value_size\", \"values\": [100, 200]}" },
	{ "duration_s", CONF_ANY, 0, 0, 0, NULL, NULL, "measured seconds per point (default 5), or \"auto\": measure in chunks until the P99 CI is narrow enough (see convergence)" },
	{ "convergence", CONF_OBJ, 0, 0, 0, NULL, convergence_keys, "duration_s \"auto\": when to stop measuring a point" },
	{ "warmup_s", CONF_NUM, 0, 0, 86400, NULL, NULL, "unmeasured seconds before (default 1)" },
	{ "seed", CONF_INT, 0, 0, 9007199254740991.0, NULL, NULL, "random seed (default 1)" },
	{ "repeat", CONF_INT, 0, 1, 1000, NULL, NULL, "trials of every point, run in a randomised interleaved order across systems and loads (default 1)" },
	{ "rerun_disturbed", CONF_INT, 0, 0, 10, NULL, NULL, "a trial whose spinning thread lost its CPU (the interference check) is run again, at most this many times (default 2); the disturbed ones stay in the point's discarded_trials" },
	{ "rerun_budget", CONF_NUM, 0, 0, 10, NULL, NULL, "the most reruns in the whole run, as a share of its trials (0.3: 3 reruns per 10 trials; default no limit); once spent, disturbed trials are kept and stay flagged, so a run on a noisy host still ends on time" },
	{ "canary_regime_factor", CONF_NUM, 0, 0, 1000, NULL, NULL, "a trial whose canary is this factor or more off the point's other trials' (another floor of the host) is run again within the rerun budget and set aside in discarded_trials (default 2; 0: off; otherwise at least 1.1)" },
	{ "canary", CONF_BOOL, 0, 0, 0, NULL, NULL, "measure the machine's floor beside every trial (default true): on shm a cache-line ping-pong on the trial's CPUs (where the server runs on the driver's host), on verbs a raw RC SEND ping-pong between the server's and client 0's hosts (oqb-vfloor)" },
	{ "checks", CONF_OBJ, 0, 0, 0, NULL, checks_schema, "thresholds of the self-checks on every point (docs/trust.md)" },
	{ "hosts", CONF_OBJ, 0, 0, 0, NULL, hosts_keys, "where processes run and how they are started" },
	{ "timeouts", CONF_OBJ, 0, 0, 0, NULL, timeouts_keys, "rendezvous timeouts" },
	{ "idle", CONF_OBJ, 0, 0, 0, NULL, idle_keys, "what idle server workers and client threads do: spin (default) or {\"nap_us\": 100} for runs with far more threads than CPUs (docs/scale.md)" },
	{ NULL }
};

const struct conf_key *runconf_schema(void)
{
	build_schema();
	return top_keys;
}

/* Two host names that mean the same machine, as far as we can tell offline. */
static int same_host(const char *a, const char *b)
{
	if (host_is_local(a) && host_is_local(b))
		return 1;
	return strcmp(a, b) == 0;
}

/* Finds an executable named prog in PATH. */
static int in_path(const char *prog)
{
	const char *p = getenv("PATH");
	char buf[4096];

	if (!p)
		p = "/usr/bin:/bin";
	while (*p) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n > 0 && n + strlen(prog) + 2 < sizeof buf) {
			memcpy(buf, p, n);
			buf[n] = '/';
			strcpy(buf + n + 1, prog);
			if (access(buf, X_OK) == 0)
				return 1;
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return 0;
}

/* A key of obj that must not be there for this kind. */
static int forbid(const json_t *obj, const char *key, const char *where, const char *what,
		  char *err, size_t errlen)
{
	if (json_object_get(obj, key)) {
		err_set(err, errlen, "%s.%s: not used %s; remove it", where, key, what);
		return -1;
	}
	return 0;
}

/*
 * server.backend: each key must be used by its kind (a settings row's
 * owner, or backend_own_kind), and keep its row's rule; then the rules
 * that span keys.
 */
static int check_backend(struct runconf *rc, const json_t *b, char *err, size_t errlen)
{
	char where[1100];
	const char *key;
	json_t *val;

	snprintf(where, sizeof where, "%s: server.backend", rc->path);
	rc->backend = conf_str(b, "kind", "null");
	json_object_foreach((json_t *)b, key, val) {
		const struct setting *s = settings_find("server.backend", key);
		const char *only = s ? s->owner : NULL;
		int used = s && settings_owned_by(s, rc->backend);
		for (size_t i = 0; i < sizeof backend_own_kind / sizeof backend_own_kind[0]; i++)
			if (!strcmp(backend_own_kind[i].key, key)) {
				used |= !strcmp(backend_own_kind[i].kind, rc->backend);
				only = only ? only : backend_own_kind[i].kind;
			}
		if (only && !used) {
			err_set(err, errlen, "%s.%s: not used by kind \"%s\" (only by %s%s); remove it", where, key,
				rc->backend, only, s && strcmp(key, "path") == 0 ? " and plugin" : "");
			return -1;
		}
	}
	if (settings_check_json("server.backend", b, NULL, where, err, errlen) < 0)
		return -1;
	rc->pmkv = strcmp(rc->backend, "pmkv") == 0;
	if (strcmp(rc->backend, "plugin") == 0)
		return runconf_plugin_keys(rc, b, where, err, errlen);
	if (strcmp(rc->backend, "rocksdb") == 0) {
		const char *path = conf_str(b, "path", NULL);
		if (conf_bool(b, "sync", row_default_num("server.backend", "sync") != 0) &&
		    !conf_bool(b, "wal", row_default_num("server.backend", "wal") != 0)) {
			err_set(err, errlen, "%s.sync: true needs wal true (RocksDB refuses a synced write without its "
				"write-ahead log); set wal true or sync false", where);
			return -1;
		}
		if (path && path[0] != '/') {
			err_set(err, errlen, "%s.path: \"%s\" must be an absolute path (a directory on the server host)",
				where, path);
			return -1;
		}
	}
	return 0;
}

/*
 * loads_ops: a number or a list (checked as the schema would, so its
 * messages name the element), or the automatic form (knee.h), whose
 * fractions stand in rc->loads until the search has found the knee.
 */
static int check_loads(struct runconf *rc, const json_t *a, const char *where, size_t *n,
		       char *err, size_t errlen)
{
	static const struct conf_key row[] = {
		{ "loads_ops", CONF_NUM_OR_ARR, 0, 1, 1e10, NULL, NULL, "" },
		{ NULL, 0, 0, 0, 0, NULL, NULL, NULL }
	};
	const json_t *v = json_object_get(a, "loads_ops");
	int bad;

	*n = 0;
	if (!v)
		return 0;
	if (json_is_object(v)) {
		if (knee_conf_parse(v, where, &rc->knee, err, errlen) < 0)
			return -1;
		memcpy(rc->loads, rc->knee.fractions, rc->knee.nfractions * sizeof rc->loads[0]);
		*n = rc->knee.nfractions;
		return 0;
	}
	json_t *one = json_pack("{s:O}", "loads_ops", v);
	bad = conf_check(one, row, where, err, errlen) < 0;
	json_decref(one);
	if (bad)
		return -1;
	*n = conf_nums(a, "loads_ops", rc->loads, RUNCONF_MAX_LOADS);
	return 0;
}

static int check_arrival(struct runconf *rc, const json_t *a, char *err, size_t errlen)
{
	const char *kind = conf_str(a, "kind", "poisson");
	size_t n;
	char where[1100];

	snprintf(where, sizeof where, "%s: arrival", rc->path);
	if (strcmp(kind, "poisson") == 0) {
		rc->arrival = ARRIVAL_POISSON;
		if (forbid(a, "outstanding", where, "by kind \"poisson\" (that is for \"closed\")", err, errlen))
			return -1;
		if (check_loads(rc, a, where, &n, err, errlen) < 0)
			return -1;
		if (n == 0) {
			err_set(err, errlen, "%s.loads_ops: missing; kind \"poisson\" needs the offered "
				"loads to sweep, e.g. \"loads_ops\": [100000, 200000]", where);
			return -1;
		}
	} else {
		rc->arrival = ARRIVAL_CLOSED;
		if (forbid(a, "loads_ops", where, "by kind \"closed\" (the load is set by \"outstanding\")", err, errlen))
			return -1;
		n = conf_nums(a, "outstanding", rc->loads, RUNCONF_MAX_LOADS);
		if (n == 0) {
			err_set(err, errlen, "%s.outstanding: missing; kind \"closed\" needs the requests "
				"in flight per client thread, e.g. \"outstanding\": 8", where);
			return -1;
		}
		for (size_t i = 0; i < n && i < RUNCONF_MAX_LOADS; i++) {
			if (rc->loads[i] != floor(rc->loads[i])) {
				err_set(err, errlen, "%s.outstanding: %g is not a whole number", where, rc->loads[i]);
				return -1;
			}
		}
	}
	if (n > RUNCONF_MAX_LOADS) {
		err_set(err, errlen, "%s: %zu loads; at most %d per config (split the sweep)", where, n,
			RUNCONF_MAX_LOADS);
		return -1;
	}
	rc->nloads = n;
	return 0;
}

static int check_ssh(struct runconf *rc, char *err, size_t errlen)
{
	const json_t *opts = json_object_get(rc->ssh, "options");
	const char *files[] = { "identity", "known_hosts" };
	size_t i;
	json_t *o;

	if (!in_path("ssh")) {
		err_set(err, errlen, "%s: hosts.launcher is \"ssh\" but no ssh program is in PATH; "
			"install OpenSSH's client (Debian: openssh-client)", rc->path);
		return -1;
	}
	for (i = 0; i < 2; i++) {
		const char *f = conf_str(rc->ssh, files[i], NULL);
		if (f && access(f, R_OK) != 0) {
			err_set(err, errlen, "%s: hosts.ssh.%s: cannot read \"%s\": %s", rc->path, files[i],
				f, strerror(errno));
			return -1;
		}
	}
	json_array_foreach(opts, i, o) {
		const char *s = json_string_value(o);
		if (!strchr(s, '=') || s[0] == '-') {
			err_set(err, errlen, "%s: hosts.ssh.options[%zu]: \"%s\" is not Key=Value "
				"(e.g. \"ServerAliveInterval=5\")", rc->path, i, s);
			return -1;
		}
		/* Host keys are always checked: refuse the options that turn it off. */
		if (strncasecmp(s, "StrictHostKeyChecking", 21) == 0 ||
		    strncasecmp(s, "UserKnownHostsFile", 18) == 0 ||
		    strncasecmp(s, "GlobalKnownHostsFile", 20) == 0) {
			err_set(err, errlen, "%s: hosts.ssh.options[%zu]: \"%s\" is not allowed: oqb always "
				"verifies host keys; put the hosts' keys in a known_hosts file and name it "
				"in hosts.ssh.known_hosts", rc->path, i, s);
			return -1;
		}
		if (strncasecmp(s, "BatchMode", 9) == 0 || strncasecmp(s, "Control", 7) == 0) {
			err_set(err, errlen, "%s: hosts.ssh.options[%zu]: \"%s\" is set by oqb itself; remove it",
				rc->path, i, s);
			return -1;
		}
	}
	return 0;
}

static int check_hosts(struct runconf *rc, char *err, size_t errlen)
{
	const json_t *h = json_object_get(rc->root, "hosts");
	const json_t *cl = json_object_get(h, "clients");
	int all_local;
	size_t i;
	json_t *v;

	rc->launcher = conf_str(h, "launcher", "local");
	rc->server_host = conf_str(h, "server", "127.0.0.1");
	rc->nclient_hosts = 0;
	if (json_object_get(h, "from")) {
		if (hostsrc_resolve(rc, h, err, errlen) < 0)
			return -1;
		cl = NULL;
	}
	json_array_foreach(cl, i, v) {
		if (i >= RUNCONF_MAX_HOSTS) {
			err_set(err, errlen, "%s: hosts.clients: at most %d hosts", rc->path, RUNCONF_MAX_HOSTS);
			return -1;
		}
		rc->client_hosts[rc->nclient_hosts++] = json_string_value(v);
	}
	if (cl && rc->nclient_hosts == 0) {
		err_set(err, errlen, "%s: hosts.clients: empty; list at least one host or leave the "
			"key out to run clients on the server host", rc->path);
		return -1;
	}
	if (rc->nclient_hosts == 0)
		rc->client_hosts[rc->nclient_hosts++] = rc->server_host;
	for (i = 0; i < rc->nclient_hosts; i++) {
		if (!*rc->client_hosts[i]) {
			err_set(err, errlen, "%s: hosts.clients[%zu]: empty host name", rc->path, i);
			return -1;
		}
	}
	if (!*rc->server_host) {
		err_set(err, errlen, "%s: hosts.server: empty host name", rc->path);
		return -1;
	}
	rc->bin_dir = conf_str(h, "bin_dir", NULL);
	rc->scratch_dir = conf_str(h, "scratch_dir", NULL);
	rc->shared_fs = conf_bool(h, "shared_fs", 0);
	rc->ctl_port = conf_int(h, "ctl_port", 0);
	rc->ssh = json_object_get(h, "ssh");

	all_local = host_is_local(rc->server_host);
	for (i = 0; i < rc->nclient_hosts; i++)
		all_local &= host_is_local(rc->client_hosts[i]);

	if (strcmp(rc->transport, "shm") == 0) {
		for (i = 0; i < rc->nclient_hosts; i++) {
			if (!same_host(rc->client_hosts[i], rc->server_host) &&
			    !(strcmp(rc->launcher, "slurm") == 0 &&
			      slurm_same_machine(rc->client_hosts[i], rc->server_host))) {
				err_set(err, errlen, "%s: hosts.clients[%zu] is \"%s\" but hosts.server is \"%s\": "
					"transport \"shm\" runs on one machine; use the same host or "
					"transport \"verbs\"", rc->path, i, rc->client_hosts[i], rc->server_host);
				return -1;
			}
		}
	}
	if (strcmp(rc->launcher, "local") == 0 && !all_local) {
		const char *bad = host_is_local(rc->server_host) ? NULL : rc->server_host;
		for (i = 0; !bad && i < rc->nclient_hosts; i++)
			if (!host_is_local(rc->client_hosts[i]))
				bad = rc->client_hosts[i];
		err_set(err, errlen, "%s: host \"%s\" is not this machine, and hosts.launcher \"local\" "
			"only starts processes here; set hosts.launcher to \"ssh\" or \"slurm\"", rc->path, bad);
		return -1;
	}
	if (strcmp(rc->launcher, "slurm") == 0 && !getenv("SLURM_JOB_ID")) {
		err_set(err, errlen, "%s: hosts.launcher is \"slurm\" but SLURM_JOB_ID is not set: run oqb "
			"inside an allocation (salloc or sbatch), or use launcher \"ssh\" or \"local\"", rc->path);
		return -1;
	}
	if (strcmp(rc->launcher, "slurm") == 0 && !in_path("srun")) {
		err_set(err, errlen, "%s: hosts.launcher is \"slurm\" but srun is not in PATH", rc->path);
		return -1;
	}
	if (strcmp(rc->launcher, "ssh") == 0 && check_ssh(rc, err, errlen) < 0)
		return -1;
	if (rc->ssh && strcmp(rc->launcher, "ssh") != 0) {
		err_set(err, errlen, "%s: hosts.ssh is set but hosts.launcher is \"%s\"; set the launcher "
			"to \"ssh\" or remove hosts.ssh", rc->path, rc->launcher);
		return -1;
	}

	rc->ctl_addr = conf_str(h, "ctl_addr", NULL);
	if (!rc->ctl_addr) {
		static char me[256];
		if (all_local) {
			rc->ctl_addr = "127.0.0.1";
		} else {
			if (gethostname(me, sizeof me) != 0)
				snprintf(me, sizeof me, "localhost");
			me[sizeof me - 1] = '\0';
			rc->ctl_addr = me;
		}
	}
	/* Listen on loopback only when nobody else needs to reach us. */
	rc->ctl_bind = host_is_local(rc->ctl_addr) && all_local ? "127.0.0.1" : "0.0.0.0";
	return 0;
}

/* Two spellings of one directory ("/mnt/pm" and "/mnt/pm/"). */
static int same_dir(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (lb > 1 && b[lb - 1] == '/')
		lb--;
	return la == lb && strncmp(a, b, la) == 0;
}

/* A durable point's committed writes must survive the server's crash in
 * the store too: rocksdb without its log would lose its memtable. */
static int check_durable_backend(const struct runconf *rc, char *err, size_t errlen)
{
	if (rc->durable_mask && strcmp(rc->backend, "rocksdb") == 0 &&
	    !conf_bool(conf_path(rc->root, "server.backend"), "wal", row_default_num("server.backend", "wal") != 0)) {
		err_set(err, errlen, "%s: durable with server.backend.wal false: a committed write still in "
			"RocksDB's memtable would be lost when the server crashes; set server.backend.wal true "
			"(with sync true it survives a power loss too), or durable false", rc->path);
		return -1;
	}
	return 0;
}

/*
 * `durable`: true (every system), false, or the systems that run durable.
 * The list form exists because the paper's baselines keep their receive
 * buffers in DRAM while JuneBerry-D puts them in PM (section 6.4).
 */
static int check_durable(struct runconf *rc, char *err, size_t errlen)
{
	const json_t *d = json_object_get(rc->root, "durable");
	size_t i, s;
	json_t *v;

	rc->durable_mask = 0;
	if (!d || json_is_false(d))
		return 0;
	if (json_is_true(d)) {
		rc->durable_mask = (1u << rc->nsystems) - 1;
		return check_durable_backend(rc, err, errlen);
	}
	if (!json_is_array(d)) {
		err_set(err, errlen, "%s: durable: expected true, false or an array of systems "
			"(e.g. [\"oq\"]), got a %s", rc->path,
			json_is_object(d) ? "object" : json_is_string(d) ? "string" : "number or null");
		return -1;
	}
	json_array_foreach(d, i, v) {
		const char *name = json_string_value(v);
		if (!name) {
			err_set(err, errlen, "%s: durable[%zu]: expected a system name (one of the "
				"config's systems)", rc->path, i);
			return -1;
		}
		for (s = 0; s < rc->nsystems && strcmp(rc->systems[s], name) != 0; s++)
			;
		if (s == rc->nsystems) {
			const char *near = conf_nearest(name, rc->systems, rc->nsystems);
			err_set(err, errlen, "%s: durable[%zu]: \"%s\" is not one of this config's systems%s%s%s",
				rc->path, i, name, near ? "; did you mean \"" : "", near ? near : "",
				near ? "\"?" : " (add it to systems, or remove it here)");
			return -1;
		}
		rc->durable_mask |= 1u << s;
	}
	return check_durable_backend(rc, err, errlen);
}

/* `history`: true/false or {"keys": F, "numeric": B}; `check` needs it. */
static int check_history(struct runconf *rc, char *err, size_t errlen)
{
	const json_t *h = json_object_get(rc->root, "history");
	rc->history_keys = 1.0;
	rc->history = h && !json_is_false(h) && !json_is_null(h);
	if (json_is_object(h)) {
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)h, k, v) {
			if (strcmp(k, "keys") && strcmp(k, "numeric")) {
				err_set(err, errlen, "%s: history.%s: unknown key; history takes keys (share of "
					"keys recorded, (0, 1]) and numeric (true/false)", rc->path, k);
				return -1;
			}
		}
		const json_t *kv = json_object_get(h, "keys");
		if (kv && (!json_is_number(kv) || json_number_value(kv) <= 0 || json_number_value(kv) > 1)) {
			err_set(err, errlen, "%s: history.keys: expected a number in (0, 1], the share of keys "
				"recorded (e.g. 0.1)", rc->path);
			return -1;
		}
		if (kv)
			rc->history_keys = json_number_value(kv);
		const json_t *nv = json_object_get(h, "numeric");
		if (nv && !json_is_boolean(nv)) {
			err_set(err, errlen, "%s: history.numeric: expected true or false", rc->path);
			return -1;
		}
		rc->history_numeric = nv && json_is_true(nv);
	} else if (h && !json_is_boolean(h) && !json_is_null(h)) {
		err_set(err, errlen, "%s: history: expected true, false or {\"keys\": F, \"numeric\": B}",
			rc->path);
		return -1;
	}
	rc->check = conf_bool(rc->root, "check", 0);
	if (rc->check && !rc->history) {
		err_set(err, errlen, "%s: check: true needs \"history\": true (nothing is recorded to check)",
			rc->path);
		return -1;
	}
	if (rc->check && rc->backend && strcmp(rc->backend, "null") == 0) {
		err_set(err, errlen, "%s: check: true with server.backend \"null\", which keeps no data: every get "
			"returns the same value, so the check would report violations that are the backend's, not "
			"the system's; use kind \"cache\" (or pmkv, memcached, rocksdb, plugin) to check a history",
			rc->path);
		return -1;
	}
	if (rc->history && strcmp(rc->launcher, "local") != 0 && !rc->shared_fs) {
		err_set(err, errlen, "%s: history: the %s launcher would leave the files on the client "
			"hosts; set hosts.shared_fs to true when the results directory is at the same path "
			"on every host (NFS), record with launcher local, or run oqb-client --history by "
			"hand and oqb check the collected files", rc->path, rc->launcher);
		return -1;
	}
	return 0;
}

int runconf_durable(const struct runconf *rc, const char *system)
{
	for (size_t s = 0; s < rc->nsystems; s++)
		if (strcmp(rc->systems[s], system) == 0)
			return (rc->durable_mask >> s) & 1u;
	return 0;
}

int runconf_needs_pmem(const struct runconf *rc, const char *system)
{
	return rc->pmkv || runconf_durable(rc, system);
}

/*
 * The server's --pmem-path is one directory for the receive rings and the
 * pmkv pools, so the two keys that can name it must agree.  Without either
 * the driver makes a private directory per point, which it can only do on
 * this machine: on a remote server the place (a DAX mount, or tmpfs) is
 * the user's choice, since it decides which crashes a commit survives.
 */
static int check_pmem(struct runconf *rc, const json_t *srv, char *err, size_t errlen)
{
	const char *recv = conf_str(srv, "recv_pmem_path", NULL);
	const char *pool = conf_str(json_object_get(srv, "backend"), "pmem_path", NULL);

	if (recv && pool && !same_dir(recv, pool)) {
		err_set(err, errlen, "%s: server.recv_pmem_path \"%s\" and server.backend.pmem_path \"%s\" "
			"differ: the server has one --pmem-path, a directory that holds both the receive "
			"rings and the pmkv pools; give one of the two keys (or the same directory in both)",
			rc->path, recv, pool);
		return -1;
	}
	rc->pmem_dir = recv ? recv : pool;
	if (rc->pmem_dir && (!*rc->pmem_dir || rc->pmem_dir[0] != '/')) {
		err_set(err, errlen, "%s: server.%s: \"%s\" must be an absolute path (a directory on the "
			"server host)", rc->path, recv ? "recv_pmem_path" : "backend.pmem_path", rc->pmem_dir);
		return -1;
	}
	if (!rc->pmem_dir && (rc->durable_mask || rc->pmkv) && !host_is_local(rc->server_host)) {
		err_set(err, errlen, "%s: %s needs a directory on the server host %s: set "
			"server.recv_pmem_path (on a DAX-mounted persistent-memory file system for real "
			"persistence; tmpfs such as /dev/shm survives process crashes only)", rc->path,
			rc->durable_mask ? "durable" : "backend \"pmkv\"", rc->server_host);
		return -1;
	}
	return 0;
}

/*
 * System erpc runs over its own transport (the eRPC library, over RDMA), which
 * this build has only when it was made with ERPC_DIR (docs/erpc.md).  Its
 * server address and session port come from the verbs settings.
 */
static int check_erpc(const struct runconf *rc, char *err, size_t errlen)
{
	size_t s;
	for (s = 0; s < rc->nsystems && strcmp(rc->systems[s], "erpc") != 0; s++)
		;
	if (s == rc->nsystems)
		return 0;
	/* whether eRPC is built in: asked of oqb-server at start (binbuild.c) */
	if (strcmp(rc->transport, "verbs") != 0) {
		err_set(err, errlen, "%s: systems[%zu]: \"erpc\" runs over RDMA and takes its address "
			"from the verbs settings, and this config's transport is \"%s\"; set "
			"\"transport\": \"verbs\"", rc->path, s, rc->transport);
		return -1;
	}
	return 0;
}

/* A one-sided system with another transport than verbs.  The driver may
 * not include bench/system.h (the build's rooms); the binaries refuse the
 * same pair with the longer reason (system_check_transport). */
static int check_onesided(const struct runconf *rc, char *err, size_t errlen)
{
	for (size_t s = 0; s < rc->nsystems; s++) {
		const char *n = rc->systems[s];
		if ((strcmp(n, "write1") && strcmp(n, "seqwrite")) || !strcmp(rc->transport, "verbs"))
			continue;
		err_set(err, errlen, "%s: systems[%zu]: system %s runs only over transport verbs: its requests are "
			"RDMA WRITEs into server memory, a one-sided path transport %s does not have (docs/systems.md); "
			"set \"transport\": \"verbs\", or remove \"%s\" from systems", rc->path, s, n, rc->transport, n);
		return -1;
	}
	return 0;
}

static int check_verbs(struct runconf *rc, char *err, size_t errlen)
{
	const json_t *v = json_object_get(rc->root, "verbs");
	int is_verbs = strcmp(rc->transport, "verbs") == 0;

	rc->delegation = conf_bool(json_object_get(rc->root, "clients"), "delegation", 0);
	if (v && !is_verbs) {
		err_set(err, errlen, "%s: verbs: only used with transport \"verbs\", and this config's "
			"transport is \"%s\"; remove the verbs object or set \"transport\": \"verbs\"",
			rc->path, rc->transport);
		return -1;
	}
	if (rc->delegation && !is_verbs) {
		err_set(err, errlen, "%s: clients.delegation: client-side delegation shares RDMA QPs "
			"between threads, a verbs feature, and this config's transport is \"%s\"; remove it "
			"or set \"transport\": \"verbs\"", rc->path, rc->transport);
		return -1;
	}
	rc->verbs_addr = is_verbs ? conf_str(v, "addr", rc->lan_addr ? rc->lan_addr : rc->server_host) : NULL;
	rc->recv_mode = conf_str(v, "recv_mode", NULL);
	rc->device = conf_str(v, "device", NULL);
	rc->ib_port = conf_int(v, "ib_port", -1);
	rc->gid_index = json_object_get(v, "gid_index") ? conf_int(v, "gid_index", -1) : -2;
	if (rc->verbs_addr && !*rc->verbs_addr) {
		err_set(err, errlen, "%s: verbs.addr: empty; give the server's IP address on the RDMA "
			"network (or leave it out to use hosts.server)", rc->path);
		return -1;
	}
	return 0;
}

static int check_workload(struct runconf *rc, char *err, size_t errlen)
{
	char where[1100], dir[1024], *slash;
	const struct gen_ops *g;

	snprintf(where, sizeof where, "%s: workload", rc->path);
	g = gen_lookup(rc->workload, where, err, errlen);
	if (!g)
		return -1;
	/* Open one instance to let the generator check its own keys.  Only
	 * when the clients run here: a trace path may exist on them alone. */
	if (strcmp(rc->launcher, "local") == 0 && g->open) {
		struct gen_ctx c = { .seed = (uint64_t)rc->seed, .process = 0,
				     .nprocesses = (unsigned)rc->processes, .thread = 0,
				     .nthreads = (unsigned)rc->threads, .where = where };
		snprintf(dir, sizeof dir, "%s", rc->path);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		else
			snprintf(dir, sizeof dir, ".");
		c.config_dir = dir;
		struct gen *inst = g->open(rc->workload, &c, err, errlen);
		if (!inst)
			return -1;
		if (g->close)
			g->close(inst);
	}
	return 0;
}

/* ---------------------------------------------------------------- load */

static int parse(struct runconf *rc, json_t *root, int top, char *err, size_t errlen);

/* Keys a sweep may not vary: they shape the plan itself or every point. */
static const char *const k_unsweepable[] = {
	"name", "description", "transport", "systems", "arrival", "sweep", "hosts", "timeouts", NULL
};

static int check_sweep(struct runconf *rc, char *err, size_t errlen)
{
	const json_t *sw = json_object_get(rc->root, "sweep");
	char label[1100], inner[8192];
	size_t i, j, plen = strlen(rc->path);

	if (!sw)
		return 0;
	rc->sweep_key = conf_str(sw, "key", "");
	rc->sweep_values = json_object_get(sw, "values");
	snprintf(label, sizeof label, "%s: sweep.key", rc->path);
	if (runconf_check_key(rc->sweep_key, label, err, errlen) < 0)
		return -1;
	for (i = 0; k_unsweepable[i]; i++) {
		size_t n = strlen(k_unsweepable[i]);
		if (strncmp(rc->sweep_key, k_unsweepable[i], n) == 0 &&
		    (rc->sweep_key[n] == '\0' || rc->sweep_key[n] == '.')) {
			err_set(err, errlen, "%s: \"%s\" cannot be swept (%s); sweep a workload, server, "
				"clients, verbs or durable key, e.g. workload.value_size", label, rc->sweep_key,
				!strcmp(k_unsweepable[i], "arrival") ? "the loads are already an axis: list them in "
				"arrival" : !strcmp(k_unsweepable[i], "systems") ? "list the systems in systems" :
				"it applies to the whole run");
			return -1;
		}
	}
	if (!json_is_array(rc->sweep_values) || json_array_size(rc->sweep_values) == 0) {
		err_set(err, errlen, "%s: sweep.values: expected a non-empty array of the values %s "
			"takes, e.g. [100, 200, 400]", rc->path, rc->sweep_key);
		return -1;
	}
	rc->nsweep = json_array_size(rc->sweep_values);
	if (rc->nsweep > RUNCONF_MAX_SWEEP) {
		err_set(err, errlen, "%s: sweep.values: %zu values; at most %d (split the sweep)", rc->path,
			rc->nsweep, RUNCONF_MAX_SWEEP);
		return -1;
	}
	for (i = 0; i < rc->nsweep; i++)
		for (j = 0; j < i; j++)
			if (json_equal(json_array_get(rc->sweep_values, i), json_array_get(rc->sweep_values, j))) {
				err_set(err, errlen, "%s: sweep.values[%zu] repeats sweep.values[%zu]", rc->path, i, j);
				return -1;
			}
	rc->variants = calloc(rc->nsweep, sizeof *rc->variants);
	if (!rc->variants) {
		err_set(err, errlen, "out of memory");
		return -1;
	}
	/* Each value makes a whole config, checked like the file itself. */
	for (i = 0; i < rc->nsweep; i++) {
		json_t *copy = json_deep_copy(rc->root);
		json_t *val = json_deep_copy(json_array_get(rc->sweep_values, i));
		char *vs = json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY);

		int bad;

		json_object_del(copy, "sweep");
		snprintf(rc->variants[i].path, sizeof rc->variants[i].path, "%s", rc->path);
		bad = runconf_put(copy, rc->sweep_key, json_is_null(val) ? NULL : json_incref(val), label,
			       inner, sizeof inner) < 0;
		if (bad)
			json_decref(copy);
		else
			bad = parse(&rc->variants[i], copy, 0, inner, sizeof inner) < 0;
		if (bad) {
			const char *msg = inner;
			if (strncmp(msg, rc->path, plen) == 0 && msg[plen] == ':' && msg[plen + 1] == ' ')
				msg += plen + 2;
			err_set(err, errlen, "%s: sweep.values[%zu] (%s = %.60s): %s", rc->path, i,
				rc->sweep_key, vs ? vs : "?", msg);
			free(vs);
			json_decref(val);
			return -1;
		}
		free(vs);
		json_decref(val);
	}
	return 0;
}

/*
 * Checks root (reference stolen: rc owns it from here, also on failure)
 * and fills rc.  `top` is 0 for a sweep variant, which has no sweep of its
 * own.  rc->path must be set.  Returns 0, or -1 with rc freed.
 */
static int parse(struct runconf *rc, json_t *root, int top, char *err, size_t errlen)
{
	const json_t *v, *srv, *cli, *to;
	const char *path = rc->path;
	size_t i, j;

	rc->root = root;
	if (conf_check(root, runconf_schema(), path, err, errlen) < 0)
		goto fail;

	rc->name = conf_str(rc->root, "name", "");
	if (!*rc->name || strspn(rc->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789._-") != strlen(rc->name) || rc->name[0] == '.') {
		err_set(err, errlen, "%s: name: \"%s\" must be letters, digits, '.', '_' or '-' "
			"(it names the results directory)", path, rc->name);
		goto fail;
	}
	rc->transport = conf_str(rc->root, "transport", "shm");

	v = json_object_get(rc->root, "systems");
	if (json_array_size(v) == 0) {
		err_set(err, errlen, "%s: systems: empty; list at least one of oq, rawrpc, deferred", path);
		goto fail;
	}
	if (json_array_size(v) > RUNCONF_MAX_SYSTEMS) {
		err_set(err, errlen, "%s: systems: at most %d", path, RUNCONF_MAX_SYSTEMS);
		goto fail;
	}
	for (i = 0; i < json_array_size(v); i++) {
		rc->systems[i] = json_string_value(json_array_get(v, i));
		for (j = 0; j < i; j++) {
			if (strcmp(rc->systems[i], rc->systems[j]) == 0) {
				err_set(err, errlen, "%s: systems[%zu]: \"%s\" is listed twice", path, i,
					rc->systems[i]);
				goto fail;
			}
		}
	}
	rc->nsystems = i;
	if (check_onesided(rc, err, errlen) < 0 || check_erpc(rc, err, errlen) < 0)
		goto fail;

	srv = json_object_get(rc->root, "server");
	rc->workers = conf_int(srv, "workers", row_default("server", "workers"));
	rc->service_sample = conf_int(srv, "service_sample", -1);
	rc->ring_slots = conf_int(srv, "ring_slots", -1);
	rc->slot_size = conf_int(srv, "slot_size", -1);
	/* the rows' rules (ring_slots a power of two, slot_size a multiple of
	 * 64) beyond the bounds conf_check has seen */
	{
		static const char *const sections[] = { "server", "clients", "verbs" };
		char where[1100];
		for (i = 0; i < 3; i++) {
			snprintf(where, sizeof where, "%s: %s", path, sections[i]);
			if (settings_check_json(sections[i], json_object_get(rc->root, sections[i]), NULL, where, err,
						errlen) < 0)
				goto fail;
		}
	}
	rc->server_extra = json_object_get(srv, "extra_args");
	if (check_backend(rc, json_object_get(srv, "backend"), err, errlen) < 0)
		goto fail;

	cli = json_object_get(rc->root, "clients");
	rc->processes = conf_int(cli, "processes", 1);
	rc->threads = conf_int(cli, "threads", row_default("clients", "threads"));
	rc->client_extra = json_object_get(cli, "extra_args");
	rc->workload = json_object_get(rc->root, "workload");

	if (check_arrival(rc, json_object_get(rc->root, "arrival"), err, errlen) < 0)
		goto fail;
	{
		const json_t *d = json_object_get(rc->root, "duration_s");
		const json_t *cv = json_object_get(rc->root, "convergence");
		rc->converge = json_is_string(d) && strcmp(json_string_value(d), "auto") == 0;
		rc->conv_ci = conf_num(cv, "ci_p99", 0.05);
		rc->conv_max_s = conf_num(cv, "max_s", 20);
		if (d && !rc->converge && !json_is_number(d)) {
			err_set(err, errlen, "%s: duration_s: expected a number (seconds) or \"auto\", got %s%s%s%s",
				path, json_is_string(d) ? "string \"" : json_is_array(d) ? "an array" :
				json_is_object(d) ? "an object" : "another type", json_is_string(d) ? json_string_value(d) : "",
				json_is_string(d) ? "\"" : "", "");
			goto fail;
		}
		if (d && !rc->converge && (json_number_value(d) < 0.01 || json_number_value(d) > 86400)) {
			err_set(err, errlen, "%s: duration_s: %g is out of range (0.01 to 86400 seconds, or \"auto\")",
				path, json_number_value(d));
			goto fail;
		}
		if (cv && !rc->converge) {
			err_set(err, errlen, "%s: convergence: only used with \"duration_s\": \"auto\"; remove it "
				"or set duration_s to \"auto\"", path);
			goto fail;
		}
		rc->duration_s = rc->converge ? conf_num(cv, "chunk_s", 1) : conf_num(rc->root, "duration_s", 5);
	}
	rc->warmup_s = conf_num(rc->root, "warmup_s", 1);
	rc->seed = conf_int(rc->root, "seed", 1);
	rc->repeat = conf_int(rc->root, "repeat", 1);
	rc->rerun_disturbed = conf_int(rc->root, "rerun_disturbed", 2);
	rc->rerun_budget = conf_num(rc->root, "rerun_budget", -1);
	rc->canary = conf_bool(rc->root, "canary", 1);
	rc->canary_regime_factor = conf_num(rc->root, "canary_regime_factor", CANARY_REGIME_FACTOR);
	if (rc->canary_regime_factor > 0 && rc->canary_regime_factor < 1.1) {
		err_set(err, errlen, "%s: canary_regime_factor: %g would split one floor's own canaries (they "
			"spread by some 10 %%); use 0 to turn the rule off, or 1.1 or more (default 2)", rc->path,
			rc->canary_regime_factor);
		goto fail;
	}
	checks_from_json(&rc->checks, conf_path(rc->root, "checks"));   /* the section, NULL when absent */
	rc->srv_cpus = conf_str(json_object_get(rc->root, "server"), "cpus", "auto");
	rc->cli_cpus = conf_str(json_object_get(rc->root, "clients"), "cpus", "auto");
	{
		const char *specs[2] = { rc->srv_cpus, rc->cli_cpus };
		int tmp[CPUS_MAX];
		char e[256];
		for (int si = 0; si < 2; si++)
			if (strcmp(specs[si], "auto") && strcmp(specs[si], "none") &&
			    cpus_parse(specs[si], tmp, CPUS_MAX, e, sizeof e) < 0) {
				err_set(err, errlen, "%s: %s.cpus: %s", rc->path, si ? "clients" : "server", e);
				goto fail;
			}
	}

	to = json_object_get(rc->root, "timeouts");
	rc->hello_s = conf_num(to, "hello_s", 30);
	rc->start_delay_ms = conf_num(to, "start_delay_ms", -1);
	rc->grace_s = conf_num(to, "grace_s", 15);
	rc->stop_s = conf_num(to, "stop_s", 15);
	rc->exit_s = conf_num(to, "exit_s", 5);
	rc->drain_s = conf_num(to, "drain_s", row_default_num("timeouts", "drain_s"));
	rc->connect_s = conf_num(to, "connect_s", row_default_num("timeouts", "connect_s"));
	if (rc->drain_s >= rc->grace_s) {
		/* The clients drain inside the point's grace: a drain as long
		 * would time the point out instead of counting what is late. */
		err_set(err, errlen, "%s: timeouts.drain_s (%g s) must be below timeouts.grace_s (%g s): raise grace_s "
			"or lower drain_s", rc->path, rc->drain_s, rc->grace_s);
		goto fail;
	}

	if (check_hosts(rc, err, errlen) < 0)
		goto fail;
	/* The start delay only has to cover sending GO to every client.
	 * With launcher local that takes microseconds, and every trial pays
	 * the delay: 20 ms.  Over ssh or srun, GO crosses the network to
	 * each client in turn: 300 ms. */
	if (rc->start_delay_ms < 0)
		rc->start_delay_ms = strcmp(rc->launcher, "local") == 0 ? 20 : 300;
	if (check_durable(rc, err, errlen) < 0)
		goto fail;
	if (check_history(rc, err, errlen) < 0)
		goto fail;
	if (check_pmem(rc, srv, err, errlen) < 0)
		goto fail;
	if (check_verbs(rc, err, errlen) < 0)
		goto fail;
	if (check_workload(rc, err, errlen) < 0)
		goto fail;
	if (runconf_plugin_check(rc, err, errlen) < 0)
		goto fail;
	if (top && check_sweep(rc, err, errlen) < 0)
		goto fail;
	if (rc->knee.on && rc->nsweep) {
		err_set(err, errlen, "%s: arrival.loads_ops: the automatic form finds one knee, and with "
			"sweep each value (%s) would need its own; list the loads, or run one config per "
			"value with --set %s=VALUE", path, rc->sweep_key, rc->sweep_key);
		goto fail;
	}
	if (rc->nsystems * (rc->nsweep ? rc->nsweep : 1) * rc->nloads > RUNCONF_MAX_POINTS) {
		err_set(err, errlen, "%s: %zu systems x %zu sweep values x %zu loads is more than %d points; "
			"split the experiment into several configs", path, rc->nsystems,
			rc->nsweep ? rc->nsweep : 1, rc->nloads, RUNCONF_MAX_POINTS);
		goto fail;
	}
	return 0;
fail:
	runconf_free(rc);
	return -1;
}

int runconf_load_sets(const char *path, const char *const *sets, size_t nsets,
		      struct runconf *rc, char *err, size_t errlen)
{
	json_t *root, *ov;
	size_t i;

	memset(rc, 0, sizeof *rc);
	snprintf(rc->path, sizeof rc->path, "%s", path);
	if (access(path, R_OK) != 0) {
		err_set(err, errlen, "%s: cannot read the config: %s (configs/ has examples, e.g. "
			"configs/quickstart.json)", path, strerror(errno));
		return -1;
	}
	if (conf_load_file(path, &root, err, errlen) < 0)
		return -1;
	ov = json_array();
	for (i = 0; i < nsets; i++) {
		if (runconf_set(root, sets[i], err, errlen) < 0) {
			json_decref(root);
			json_decref(ov);
			return -1;
		}
		json_array_append_new(ov, json_string(sets[i]));
	}
	if (parse(rc, root, 1, err, errlen) < 0) {
		if (nsets) {
			size_t n = strlen(err);
			snprintf(err + n, errlen > n ? errlen - n : 0, " (the config as changed by %zu --set "
				 "override%s)", nsets, nsets == 1 ? "" : "s");
		}
		json_decref(ov);
		return -1;
	}
	rc->overrides = ov;
	return 0;
}

int runconf_load(const char *path, struct runconf *rc, char *err, size_t errlen)
{
	return runconf_load_sets(path, NULL, 0, rc, err, errlen);
}

void runconf_free(struct runconf *rc)
{
	if (rc->variants) {
		for (size_t i = 0; i < rc->nsweep; i++)
			runconf_free(&rc->variants[i]);
		free(rc->variants);
		rc->variants = NULL;
	}
	json_decref(rc->root);
	rc->root = NULL;
	json_decref(rc->hosts_from);
	rc->hosts_from = NULL;
	json_decref(rc->overrides);
	rc->overrides = NULL;
}

size_t runconf_plan(const struct runconf *rc, struct point *pts, size_t cap)
{
	size_t n = 0, nsw = rc->nsweep ? rc->nsweep : 1;

	/* Load-major: the systems take turns at each load, so slow drift of
	 * a shared machine (other tenants, thermal) hits them alike instead
	 * of favouring whichever system ran first. */
	for (size_t w = 0; w < nsw; w++) {
		for (size_t l = 0; l < rc->nloads; l++) {
			for (size_t s = 0; s < rc->nsystems; s++, n++) {
				if (n >= cap)
					continue;
				pts[n].idx = (unsigned)n;
				pts[n].system = rc->systems[s];
				pts[n].sweep = rc->nsweep ? (int)w : -1;
				if (rc->arrival == ARRIVAL_POISSON) {
					pts[n].offered_ops = rc->loads[l];
					pts[n].outstanding = 0;
				} else {
					pts[n].offered_ops = 0;
					pts[n].outstanding = (long long)rc->loads[l];
				}
			}
		}
	}
	return n;
}

const struct runconf *runconf_for(const struct runconf *rc, const struct point *pt)
{
	if (pt && pt->sweep >= 0 && rc->variants && (size_t)pt->sweep < rc->nsweep)
		return &rc->variants[pt->sweep];
	return rc;
}

const char *runconf_client_host(const struct runconf *rc, unsigned rank)
{
	return rc->client_hosts[rank % rc->nclient_hosts];
}
