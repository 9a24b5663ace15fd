/*
 * runconf.h - an experiment config, checked, and the sweep it plans.
 *
 * A config file (docs/config.md) names the systems to compare, one
 * server/client shape, one workload and an arrival process whose loads
 * make the sweep.  runconf_load() checks the whole file against one schema
 * (unknown keys are errors with a suggestion, via lib/conf) plus the rules
 * that span fields (shm needs one host, slurm needs an allocation, ...), so
 * a bad config fails before any process starts.
 */
#ifndef OQB_RUNCONF_H
#define OQB_RUNCONF_H

#include <stddef.h>
#include <jansson.h>

#define RUNCONF_MAX_SYSTEMS 8
#define RUNCONF_MAX_LOADS   256
#define RUNCONF_MAX_HOSTS   256

enum arrival_kind { ARRIVAL_POISSON, ARRIVAL_CLOSED };

struct runconf {
	json_t *root;                  /* the file as loaded (echoed into run.json) */
	char path[1024];               /* as given */
	const char *name;
	const char *transport;
	const char *systems[RUNCONF_MAX_SYSTEMS];
	size_t nsystems;

	/* server */
	long long workers;
	const char *backend;           /* null | cache | pmkv */
	long long service_ns;          /* null: -1 when not given */
	const char *service_dist;      /* null: NULL when not given */
	long long memory_mb;           /* cache, pmkv: -1 when not given */
	const char *pmem_path;         /* pmkv */
	long long pool_mb;             /* pmkv: -1 when not given */
	long long ring_slots;          /* -1: server default */
	const json_t *server_extra;    /* array of extra flags, or NULL */

	/* clients */
	long long processes, threads;
	const json_t *client_extra;
	const json_t *workload;        /* passed through to clients */

	/* arrival: poisson sweeps loads_ops, closed sweeps outstanding */
	enum arrival_kind arrival;
	double loads[RUNCONF_MAX_LOADS];
	size_t nloads;

	double duration_s, warmup_s;
	long long seed;

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
	const json_t *ssh;             /* hosts.ssh object, or NULL */

	/* timeouts (seconds unless named) */
	double hello_s, grace_s, stop_s, exit_s, start_delay_ms;
};

/* One measurement point of the sweep. */
struct point {
	unsigned idx;                  /* 0-based */
	const char *system;
	double offered_ops;            /* poisson: total offered ops/s; closed: 0 */
	long long outstanding;         /* closed: per client thread; poisson: 0 */
};

/*
 * Loads and checks path.  Returns 0 with *rc filled (free with
 * runconf_free), or -1 with one message naming the file, the field and the
 * fix.
 */
int runconf_load(const char *path, struct runconf *rc, char *err, size_t errlen);
void runconf_free(struct runconf *rc);

/* Points in run order (load-major: every system at the first load, then
 * the next load).  Returns the count; fills at most cap. */
size_t runconf_plan(const struct runconf *rc, struct point *pts, size_t cap);

/* Host of client process `rank` (round-robin over hosts.clients). */
const char *runconf_client_host(const struct runconf *rc, unsigned rank);

/* Whether s names this machine (localhost, 127.x, ::1, our host name). */
int host_is_local(const char *s);

/* The schema, for docs and `oqb run --help-config`. */
const struct conf_key *runconf_schema(void);

#endif
