/*
 * runconf.h - an experiment config, checked, and the sweep it plans.
 *
 * A config file (docs/config.md) names the systems to compare, one
 * server/client shape, one workload and an arrival process whose loads
 * make the sweep, plus at most one more axis (`sweep`: any other key and
 * the values it takes).  runconf_load() checks the whole file against one
 * schema (unknown keys are errors with a suggestion, via lib/conf) plus
 * the rules that span fields (shm needs one host, slurm needs an
 * allocation, verbs keys need transport verbs, ...), so a bad config fails
 * before any process starts.  `oqb run --set KEY=JSON` overrides are
 * applied to the file's JSON before that check (runconf_set).
 */
#ifndef OQB_RUNCONF_H
#define OQB_RUNCONF_H

#include <stddef.h>
#include <jansson.h>
#include "checks.h"
#include "knee.h"

#define RUNCONF_MAX_SYSTEMS 8
#define RUNCONF_MAX_LOADS   256
#define RUNCONF_MAX_HOSTS   256
#define RUNCONF_MAX_SWEEP   64
#define RUNCONF_MAX_POINTS  4096   /* systems x sweep values x loads */

enum arrival_kind { ARRIVAL_POISSON, ARRIVAL_CLOSED };

struct runconf {
	json_t *root;                  /* the file as loaded (echoed into run.json) */
	char path[1024];               /* as given */
	const char *name;
	const char *transport;
	const char *systems[RUNCONF_MAX_SYSTEMS];
	size_t nsystems;

	/* server.  Settings a binary only takes as a flag (a back end's
	 * memory_mb, write_buffer_mb, verbs.port ...) are not copied here:
	 * procargs.c emits them from their rows (lib/settings/) and root. */
	long long workers;
	long long service_sample;      /* server.service_sample, -1: the server's default */
	const char *backend;           /* null | cache | pmkv | memcached | rocksdb */
	const char *plugin_path;       /* plugin: as given, or plugin_file */
	char plugin_file[1024];        /* plugin: the path made absolute (local server) */
	const json_t *plugin_options;  /* plugin: the options object, or NULL */
	long long ring_slots;          /* -1: server default */
	long long slot_size;           /* -1: server default */
	const json_t *server_extra;    /* array of extra flags, or NULL */

	/* Durability.  The server's --pmem-path is a directory holding the
	 * persistent receive rings (ring-W) and the pmkv pools (pmkv.wW);
	 * the driver gives every point a fresh one under pmem_dir. */
	unsigned durable_mask;         /* bit s: systems[s] runs --durable */
	int pmkv;                      /* backend is pmkv (needs --pmem-path) */
	const char *pmem_dir;          /* server.recv_pmem_path / backend.pmem_path;
					  NULL: a private one per point (local runs) */

	/* verbs (NULL / -1: the server's default) */
	const char *verbs_addr;        /* --addr: verbs.addr, default hosts.server */
	const char *recv_mode, *device;
	long long ib_port;
	long long gid_index;           /* -2 when not given (-1 is "auto") */
	int delegation;

	/* correctness (docs/correctness.md) */
	int history;                   /* clients record histories into POINT/history/ */
	int history_numeric;           /* history.numeric: decimal set values (incr) */
	double history_keys;           /* history.keys: share of keys recorded */
	int check;                     /* run oqb check on every point */

	/* clients */
	long long processes, threads;
	const json_t *client_extra;
	const json_t *workload;        /* passed through to clients */

	/* arrival: poisson sweeps loads_ops, closed sweeps outstanding */
	enum arrival_kind arrival;
	double loads[RUNCONF_MAX_LOADS];
	size_t nloads;
	/* loads_ops {"auto": true, ...} (knee.h): until the search has run,
	 * loads[] holds the fractions and knee_ops is 0 */
	struct knee_conf knee;
	double knee_ops;

	double duration_s, warmup_s;
	long long seed;
	long long repeat;              /* trials per point */
	long long rerun_disturbed;     /* reruns of a trial the interference check flags */
	double rerun_budget;           /* the most reruns in the run, as a share of its trials; < 0: no limit */
	int converge;                  /* duration_s "auto": duration_s is the chunk */
	double conv_ci, conv_max_s;    /* stop at this P99 CI width, or this many seconds */
	int canary;                    /* floor beside every trial */
	double canary_regime_factor;   /* a trial this far off its point's canary is rerun (trials.h); 0 off */
	struct check_conf checks;      /* self-check thresholds */
	const char *srv_cpus, *cli_cpus; /* placement specs: auto, none, LIST */

	/* The extra axis: variants[i] is this config with sweep_key set to
	 * sweep.values[i], checked like a config of its own. */
	const char *sweep_key;         /* NULL: no sweep */
	const json_t *sweep_values;    /* array */
	size_t nsweep;                 /* 0 without a sweep */
	struct runconf *variants;      /* nsweep of them, or NULL */

	json_t *overrides;             /* the --set arguments as given (array) */

	/* hosts */
	const char *launcher;          /* local | ssh | slurm */
	const char *server_host;
	const char *client_hosts[RUNCONF_MAX_HOSTS];
	size_t nclient_hosts;
	const char *bin_dir;           /* NULL: next to the running oqb */
	const char *ctl_addr;          /* address processes connect to */
	const char *ctl_bind;          /* address the driver listens on */
	long long ctl_port;            /* 0: any free port */
	const char *scratch_dir;       /* --run-dir of the server, or NULL */
	int shared_fs;                 /* hosts.shared_fs: the results directory is on every host */
	const json_t *ssh;             /* hosts.ssh object, or NULL */
	json_t *hosts_from;            /* hosts.from: the nodes it named (hostsrc.h), or NULL */
	const char *lan_addr;          /* hosts.from "cloudlab": the server's LAN address, or NULL */

	/* timeouts (seconds unless named) */
	double hello_s, grace_s, stop_s, exit_s, start_delay_ms;
	double drain_s;                /* timeouts.drain_s (its row's), for the check against grace_s */
	double connect_s;              /* timeouts.connect_s (its row's): the clients' and the canary's bound on connecting */
};

/* One measurement point of the sweep. */
struct point {
	unsigned idx;                  /* 0-based */
	const char *system;
	double offered_ops;            /* poisson: total offered ops/s; closed: 0 */
	long long outstanding;         /* closed: per client thread; poisson: 0 */
	int sweep;                     /* index into sweep.values, -1 without a sweep */
	unsigned trial;                /* 0 .. repeat-1 */
	unsigned chunk;                /* duration_s "auto": 0, 1, ... */
	unsigned rerun;                /* 0, or the rerun of a disturbed trial */
};

/*
 * Loads and checks path.  Returns 0 with *rc filled (free with
 * runconf_free), or -1 with one message naming the file, the field and the
 * fix.
 */
int runconf_load(const char *path, struct runconf *rc, char *err, size_t errlen);

/*
 * The plugin back end's part of the check (runconf_plugin.c).  _keys reads
 * server.backend's path and options and refuses other kinds' keys; _check
 * (after durable and workload) loads the plugin when the server runs here
 * and refuses, before anything starts, a plugin of another ABI, one
 * without durability that a durable system needs, or one without incr, or
 * with smaller key or value limits, than the workload sends.  0 or -1.
 */
int runconf_plugin_keys(struct runconf *rc, const json_t *b, const char *where, char *err, size_t errlen);
int runconf_plugin_check(struct runconf *rc, char *err, size_t errlen);

/*
 * runconf_load() with `oqb run --set` overrides (each "KEY=VALUE", see
 * runconf_set) applied in order to the file's JSON before it is checked.
 * The overrides are kept in rc->overrides.  Returns 0 or -1 with err; an
 * override that is malformed or names an unknown key fails before the
 * file is checked, with a message that starts "--set KEY=...".
 */
int runconf_load_sets(const char *path, const char *const *sets, size_t nsets,
		      struct runconf *rc, char *err, size_t errlen);

/*
 * Applies one override "KEY=VALUE" to a config's JSON (runconf_set.c).
 * KEY is a path to any leaf: dotted object keys, an array element by its
 * index in brackets ("arrival.loads_ops.search.start_ops",
 * "hosts.clients[0]").  It is checked against the schema as far as the
 * schema goes (a misspelt part is an error naming the nearest valid key);
 * below a free-form key (workload, arrival.loads_ops) the owner's check
 * judges it.  VALUE is JSON ([2000], 0.3, true, {"kind":"ycsb"}, "text");
 * text that is not JSON is taken as a string, so plain words need no
 * quotes.  null removes the key.  Missing parent objects are created; an
 * index must name an existing element.  "@FILE" applies the overlay FILE
 * (runconf_set_file).  Types and ranges are left to the config check.
 * Returns 0, or -1 with err.
 */
int runconf_set(json_t *root, const char *spec, char *err, size_t errlen);

/*
 * Applies the overlay at path, {"about": TEXT, "set": PATCH}: PATCH merges
 * into root as an RFC 7386 merge patch (objects merge key by key, null
 * removes, other values replace), each of its keys checked as a --set key.
 * Returns 0, or -1 with err naming the file and the key.
 */
int runconf_set_file(json_t *root, const char *path, char *err, size_t errlen);

/*
 * Checks a key path (runconf_set's grammar) against the schema; `label`
 * starts the message ("--set x=1", "sweep.key").  Returns 0 or -1.
 */
int runconf_check_key(const char *key, const char *label, char *err, size_t errlen);

/*
 * Sets (value non-NULL, its reference taken even on failure) or removes
 * (NULL) the element at key (runconf_set's grammar, not checked against the
 * schema), making the parent objects the path needs; an index must name an
 * existing element.  Returns 0, or -1 with err starting with label.
 */
int runconf_put(json_t *root, const char *key, json_t *value, const char *label,
		char *err, size_t errlen);

void runconf_free(struct runconf *rc);

/*
 * Points in run order: for each sweep value, load-major (every system at
 * the first load, then the next load).  Returns the count; fills at most
 * cap (runconf_load refuses more than RUNCONF_MAX_POINTS).
 */
size_t runconf_plan(const struct runconf *rc, struct point *pts, size_t cap);

/* The config a point runs with: its sweep variant, or rc itself. */
const struct runconf *runconf_for(const struct runconf *rc, const struct point *pt);

/* Whether `system` runs in durable mode in rc. */
int runconf_durable(const struct runconf *rc, const char *system);

/* Whether the server of `system` needs a --pmem-path (durable or pmkv). */
int runconf_needs_pmem(const struct runconf *rc, const char *system);

/* Host of client process `rank` (round-robin over hosts.clients). */
const char *runconf_client_host(const struct runconf *rc, unsigned rank);

/* The schema, for docs and `oqb run --help-config`. */
const struct conf_key *runconf_schema(void);

#endif
