/*
 * oqb-client - generates load against an oqb-server and measures it.
 *
 * By hand:   oqb-client --system oq --server DIR --rate 100000 --duration-s 5
 *            runs at once and prints its result JSON (or writes --out).
 * By driver: ... --ctl HOST:PORT --rank N: connects, loads, sends HELLO,
 *            waits for GO, runs, answers DONE with the result, and exits on
 *            BYE or when the driver goes away.
 */
#include <libgen.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"
#include "conf.h"
#include "buildinfo.h"
#include "ctl.h"
#include "gen.h"
#include "hostfacts.h"
#include "log.h"
#include "opts.h"
#include "settings.h"
#include "proclimits.h"

struct cli_opts {
	int system, transport, arrival;
	const char *server, *workload, *ctl, *out, *log;
	int outstanding, max_outstanding, rank, nprocesses;
	double rate, duration_s, warmup_s;
	uint64_t seed;
	int durable;
	const char *history;
	double history_keys, history_clock_bound_us;
	int history_numeric;
	int cpu_first, cpu_reserved;
	int build_id, host_facts, expect_workers, expect_slot_size;
	struct setting_vals set;   /* the config's settings: lib/settings/ rows */
};

static const char *const arrivals[] = { "poisson", "closed", NULL };

#define O(f) offsetof(struct cli_opts, f)
/* The client's own flags; the config's settings are appended from their
 * rows (lib/settings/) by main(). */
static const struct opt cli_own[] = {
	{ "system", OPT_ENUM, O(system), "oq", 0, -1, system_name_list, "system under test (must match the server)" },
	{ "transport", OPT_ENUM, O(transport), "shm", 0, -1, transport_name_list, "transport" },
	{ "server", OPT_STR, O(server), NULL, 0, -1, NULL, "server endpoint (shm: the run directory it printed)" },
	{ "workload", OPT_STR, O(workload), "{\"kind\":\"kv\"}", 0, -1, NULL,
	  "workload object as JSON text, or @FILE (see docs/workloads.md)" },
	{ "arrival", OPT_ENUM, O(arrival), "poisson", 0, -1, arrivals, "open-loop poisson, or closed loop" },
	{ "rate", OPT_DBL, O(rate), "10000", 1, 1e9, NULL, "poisson: offered ops/s of this process (all threads)" },
	{ "outstanding", OPT_INT, O(outstanding), "1", 1, 65536, NULL, "closed: requests in flight per thread" },
	{ "max-outstanding", OPT_INT, O(max_outstanding), "4096", 1, 1 << 20, NULL,
	  "open loop: most requests in flight per thread (more waits, and shows as latency)" },
	{ "duration-s", OPT_DBL, O(duration_s), "5", 0.01, 86400, NULL, "measured period (s)" },
	{ "warmup-s", OPT_DBL, O(warmup_s), "1", 0, 3600, NULL, "warm-up before it, not measured (s)" },
	{ "seed", OPT_U64, O(seed), "1", 0, -1, NULL, "random seed" },
	{ "cpu-first", OPT_INT, O(cpu_first), "0", 0, 1023, NULL,
	  "auto placement: how many usable CPUs, counted from the last, to skip (set by the driver per host)" },
	{ "cpu-reserved", OPT_INT, O(cpu_reserved), "0", 0, 1023, NULL,
	  "auto placement: CPUs taken from the first by a server on this host (to say when they would be shared)" },
	{ "durable", OPT_BOOL, O(durable), NULL, 0, -1, NULL, "durable commits (the server must be durable too)" },
	{ "history", OPT_STR, O(history), NULL, 0, -1, NULL,
	  "record every operation on the sampled keys into DIR/history-rR-tT.bin (oqb check reads them)" },
	{ "history-keys", OPT_DBL, O(history_keys), "1", 1e-9, 1, NULL,
	  "share of keys recorded, chosen by key hash (never a sample of one key's operations)" },
	{ "history-numeric", OPT_BOOL, O(history_numeric), NULL, 0, -1, NULL,
	  "with --history: short set values (1-19 B) are decimal numbers, so incr applies to them" },
	{ "history-clock-bound-us", OPT_DBL, O(history_clock_bound_us), "0", 0, 1e9, NULL,
	  "bound on this host's clock offset from the other client hosts (docs/correctness.md)" },
	{ "out", OPT_STR, O(out), NULL, 0, -1, NULL, "write the result JSON here (default: stdout when run by hand)" },
	{ "ctl", OPT_STR, O(ctl), NULL, 0, -1, NULL, "driver control channel HOST:PORT (set by bin/oqb run)" },
	{ "rank", OPT_INT, O(rank), "0", 0, 1 << 20, NULL, "rank of this client process" },
	{ "processes", OPT_INT, O(nprocesses), "1", 1, 1 << 20, NULL, "client processes in the run (workload sharding)" },
	{ "build-id", OPT_BOOL, O(build_id), NULL, 0, -1, NULL, "print this build's id and exit" },
	{ "host-facts", OPT_BOOL, O(host_facts), NULL, 0, -1, NULL,
	  "print this host's facts as JSON (as oqb-server --host-facts; for oqb doctor) and exit" },
	{ "log", OPT_STR, O(log), NULL, 0, -1, NULL, "log level: error, warn, info, debug" },
};
#undef O

#define NOWN (sizeof cli_own / sizeof cli_own[0])
static struct opt cli_tab[NOWN + 2 + 16];

/* cli_own; the server's settings a client is told of, under its own flag
 * names but with their rows' default and bounds; the rows of the settings
 * oqb-client takes; the end. */
static int build_tab(void)
{
	struct opt own[NOWN + 2];
	memcpy(own, cli_own, sizeof cli_own);
	if (settings_opt_as("server", "workers", "expect-workers", offsetof(struct cli_opts, expect_workers),
			    "the server's workers (set by the driver), for the start-up check of the open-file and "
			    "locked-memory limits (lib/proclimits.h): a client learns them only when it connects",
			    &own[NOWN]) != 0 ||
	    settings_opt_as("server", "slot_size", "expect-slot-size", offsetof(struct cli_opts, expect_slot_size),
			    "the server's slot size in bytes (set by the driver), for the same check", &own[NOWN + 1]) != 0)
		return -1;
	return settings_table(own, NOWN + 2, SET_CLIENT, offsetof(struct cli_opts, set), cli_tab,
			      sizeof cli_tab / sizeof cli_tab[0]);
}

static int write_result(const char *path, json_t *res)
{
	if (!path)
		return 0;
	if (json_dump_file(res, path, JSON_INDENT(1)) != 0) {
		log_msg(LOG_ERR, "cannot write the result to %s", path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cli_opts o;
	char err[1024];
	json_t *wl = NULL;
	struct client *cl = NULL;
	struct ctl *ctl = NULL;
	int rc = 1;
	char *cfgdir = NULL;

	/* --build-info, --check-plugin: answered before the options (buildinfo.h) */
	int q = binquery_answer("oqb-client", argc, argv);
	if (q >= 0)
		return q;

	memset(&o, 0, sizeof o);
	if (build_tab() < 0) {
		fprintf(stderr, "oqb-client: more settings rows than its option table holds; raise cli_tab's size\n");
		return 1;
	}
	int r = opts_parse(cli_tab, &o, argc, argv, NULL, err, sizeof err);
	if (r == 1)
		return 0;
	if (r < 0) {
		fprintf(stderr, "oqb-client: %s\n", err);
		return 2;
	}
	log_set_prefix(NULL, "client", o.rank);
	if (hostfacts_answer(o.build_id, o.host_facts))
		return 0;
	if (log_level_option("oqb-client", o.log) < 0)
		return 2;
	if (!o.server) {
		fprintf(stderr, "oqb-client: --server is required: the endpoint the server printed "
			"(\"ready: endpoint ...\")\n");
		return 2;
	}
	if (o.workload[0] == '@') {
		if (conf_load_file(o.workload + 1, &wl, err, sizeof err) != 0) {
			fprintf(stderr, "oqb-client: --workload %s\n", err);
			return 2;
		}
		char *tmp = strdup(o.workload + 1);
		cfgdir = strdup(dirname(tmp));
		free(tmp);
	} else {
		json_error_t je;
		wl = json_loads(o.workload, 0, &je);
		if (!wl || !json_is_object(wl)) {
			fprintf(stderr, "oqb-client: --workload: not a JSON object (%s at column %d); "
				"give e.g. '{\"kind\":\"kv\",\"put_ratio\":0.8}' or @FILE\n",
				wl ? "not an object" : je.text, je.column);
			json_decref(wl);
			return 2;
		}
	}

	struct client_conf cc;
	memset(&cc, 0, sizeof cc);
	cc.sys = system_find(system_name_list[o.system]);
	cc.tp = transport_find(transport_name_list[o.transport]);
	if (!cc.tp) {
		fprintf(stderr, "oqb-client: --transport %s is not built into this binary (available: %s)%s\n",
			transport_name_list[o.transport], transport_names(),
			transport_hint(transport_name_list[o.transport]));
		goto out;
	}
	if (system_check_transport(cc.sys, cc.tp->name, err, sizeof err) != 0) {
		fprintf(stderr, "oqb-client: %s\n", err);
		goto out;
	}
	if (cc.sys->label)
		fprintf(stderr, "oqb-client: system %s: %s\n", cc.sys->name, cc.sys->label);
	cc.gen = gen_lookup(wl, "--workload", err, sizeof err);
	if (!cc.gen) {
		fprintf(stderr, "oqb-client: %s\n", err);
		goto out;
	}
	cc.endpoint = o.server;
	cc.threads = (unsigned)o.set.threads;
	cc.workload = wl;
	cc.config_dir = cfgdir;
	cc.arrival = o.arrival == 0 ? ARRIVAL_POISSON : ARRIVAL_CLOSED;
	cc.rate = o.rate;
	cc.outstanding = (unsigned)o.outstanding;
	cc.max_outstanding = (unsigned)o.max_outstanding;
	cc.warmup_ns = (uint64_t)(o.warmup_s * 1e9);
	cc.duration_ns = (uint64_t)(o.duration_s * 1e9);
	cc.drain_ns = (uint64_t)(o.set.drain_s * 1e9);
	cc.seed = o.seed;
	cc.rank = (unsigned)o.rank;
	cc.nprocesses = (unsigned)o.nprocesses;
	cc.durable = o.durable;
	cc.delegation = o.set.delegation;
	cc.connect_timeout_ms = (unsigned)(o.set.connect_s * 1000);
	cc.idle.nap_ns = (uint64_t)(o.set.idle_nap_us * 1e3);
	cc.idle.spin_ns = (uint64_t)(o.set.idle_spin_us * 1e3);
	cc.history.dir = o.history;
	cc.history.keys = o.history_keys;
	cc.history.numeric = o.history_numeric;
	cc.history.clock_bound_ns = (uint64_t)(o.history_clock_bound_us * 1000);
	static struct cpu_plan cpus;
	if (cpus_plan(o.set.cli_cpus, (unsigned)o.cpu_first, (unsigned)o.set.threads, o.set.device, 1, (unsigned)o.cpu_reserved, &cpus, err, sizeof err) < 0) {
		fprintf(stderr, "oqb-client: --cpus: %s\n", err);
		rc = 2;
		goto out;
	}
	if (cpus.shared)
		log_msg(LOG_WARN, "placement: %d thread(s) from CPU index %d, but this process may use only %d CPU(s): "
			"spinning threads share CPUs, latencies will include scheduling delays", o.set.threads,
			o.cpu_first, cpus.available);
	cc.cpus = &cpus;
	cc.probe_ns = (uint64_t)o.set.cli_probe_us * 1000;

	/* The process's start, split for the driver's run.json (HELLO):
	 * reaching the driver, then client_prepare (connections, load). */
	uint64_t t_ctl = clock_ns();
	if (o.ctl) {
		ctl = ctl_connect(o.ctl, "client", (unsigned)o.rank, 10000, err, sizeof err);
		if (!ctl) {
			log_msg(LOG_ERR, "cannot reach the driver at %s: %s", o.ctl, err);
			goto out;
		}
	}
	/* The limits this shape needs, before anything is opened (issue 37). */
	struct lim_client_shape ls = {
		.transport = cc.tp->name, .threads = (unsigned)o.set.threads, .workers = (unsigned)o.expect_workers,
		.slot_size = (unsigned)o.expect_slot_size, .max_outstanding = (unsigned)o.max_outstanding,
		.delegation = o.set.delegation,
	};
	struct lim_need need;
	char lim_note[256];
	lim_client_need(&ls, &need);
	uint64_t t_prep = clock_ns();
	if (lim_check_self(&need, "this client", o.set.delegation, lim_note, sizeof lim_note, err, sizeof err) == 0) {
		if (lim_note[0])
			log_msg(LOG_INFO, "limits: %s", lim_note);
		cl = client_prepare(&cc, err, sizeof err);
	}
	uint64_t t_ready = clock_ns();
	if (!cl) {
		log_msg(LOG_ERR, "%s", err);
		if (ctl)
			ctl_send(ctl, json_pack("{s:s,s:s}", "type", "ERROR", "message", err), err, sizeof err);
		goto out;
	}

	/* Where it runs: the Slurm node inside a step (several can share one
	 * host name), else the host name (tests/integration/slurm.sh). */
	char node[256] = "";
	if (getenv("SLURMD_NODENAME"))
		snprintf(node, sizeof node, "%s", getenv("SLURMD_NODENAME"));
	else
		gethostname(node, sizeof node - 1);
	uint64_t start_in = 10 * 1000000ull;
	if (ctl) {
		static volatile int lost;
		json_t *info = json_pack("{s:i,s:s,s:{s:I,s:I}}", "pid", (int)getpid(), "node", node, "start_ns",
					 "ctl_connect", (json_int_t)(t_prep - t_ctl), "prepare", (json_int_t)(t_ready - t_prep));
		if (lim_note[0])
			json_object_set_new(info, "limits_raised", json_string(lim_note));
		json_object_set_new(info, "build_id", json_string(buildinfo_id()));   /* the driver checks it */
		if (ctl_hello(ctl, info, err, sizeof err) != 0 ||
		    ctl_start_watch(ctl, &lost, NULL, NULL) != 0) {
			json_decref(info);
			log_msg(LOG_ERR, "control channel: %s", err);
			goto out;
		}
		json_decref(info);
		for (;;) {
			json_t *m = ctl_recv(ctl, 1000, err, sizeof err);
			if (!m) {
				if (lost)
					goto out;
				continue;
			}
			const char *type = json_string_value(json_object_get(m, "type"));
			if (type && !strcmp(type, "GO")) {
				json_int_t s = json_integer_value(json_object_get(m, "start_in_ns"));
				start_in = s > 0 ? (uint64_t)s : 0;
				json_decref(m);
				break;
			}
			int bye = type && (!strcmp(type, "BYE") || !strcmp(type, "STOP"));
			json_decref(m);
			if (bye) {
				rc = 0;
				goto out;
			}
		}
	}
	int runrc = client_run(cl, start_in, err, sizeof err);
	json_t *res = client_result(cl);
	json_object_set_new(res, "needs", lim_need_json(&need));
	json_object_set_new(res, "placement", cpus_plan_json(&cpus, o.set.cli_cpus));
	json_object_set_new(res, "node", json_string(node));
	if (runrc != 0) {
		log_msg(LOG_ERR, "%s", err);
		json_object_set_new(res, "error", json_string(err));
	}
	write_result(o.out, res);
	if (ctl) {
		if (ctl_done(ctl, res, err, sizeof err) != 0)
			log_msg(LOG_ERR, "control channel: %s", err);
		/* stay until the driver says BYE or goes away */
		json_t *m = ctl_recv(ctl, 30000, err, sizeof err);
		json_decref(m);
	} else if (!o.out) {
		json_dumpf(res, stdout, JSON_INDENT(1));
		putchar('\n');
	}
	json_decref(res);
	rc = runrc == 0 ? 0 : 1;
out:
	client_destroy(cl);
	if (ctl)
		ctl_close(ctl);
	json_decref(wl);
	free(cfgdir);
	return rc;
}
