/*
 * oqb-server - serves one system (oq, rawrpc, deferred) over one transport.
 *
 * By hand:   oqb-server --system oq --backend cache
 *            prints "ready: endpoint DIR" and serves until SIGINT/SIGTERM,
 *            then prints its counters as JSON on stdout.
 * By driver: oqb-server ... --ctl HOST:PORT --rank N
 *            sends HELLO with the endpoint, serves until STOP, answers DONE
 *            with its counters, and exits by itself if the driver goes away.
 */
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "clock.h"
#include "buildinfo.h"
#include "ctl.h"
#include "hostfacts.h"
#include "proclimits.h"
#include "rmtree.h"
#include "log.h"
#include "opts.h"
#include "server.h"
#include "settings.h"
#include "system.h"
#include "transport.h"
#if OQB_HAVE_VERBS_TRANSPORT
#include "tp_verbs.h"
#endif

struct srv_opts {
	int system, transport;
	const char *backend, *plugin_path, *plugin_options;
	uint64_t seed;
	const char *pmem_path, *run_dir, *ctl, *log;
	int rank;
	double void_timeout_ms;
	int durable, pmem_scratch;
	const char *addr;
	int list_devices, list_settings, build_id, host_facts;
	uint64_t expect_conns;
	int cpu_first;
	struct setting_vals set;   /* the config's settings: lib/settings/ rows */
};

#define O(f) offsetof(struct srv_opts, f)
/* The server's own flags; the config's settings are appended from their
 * rows (lib/settings/) by main(). */
static const struct opt srv_own[] = {
	{ "system", OPT_ENUM, O(system), "oq", 0, -1, system_name_list, "system under test" },
	{ "transport", OPT_ENUM, O(transport), "shm", 0, -1, transport_name_list, "transport" },
	{ "backend", OPT_STR, O(backend), "null", 0, -1, NULL, "KV backend: null, cache, pmkv, memcached, rocksdb or plugin" },
	{ "plugin-path", OPT_STR, O(plugin_path), NULL, 0, -1, NULL,
	  "plugin backend: the engine's shared object (docs/plugins.md)" },
	{ "plugin-options", OPT_STR, O(plugin_options), "{}", 0, -1, NULL,
	  "plugin backend: options for the engine, as JSON text" },
	{ "pmem-path", OPT_STR, O(pmem_path), NULL, 0, -1, NULL,
	  "pmkv / durable: directory for the persistent rings and pools" },
	{ "pmem-scratch", OPT_BOOL, O(pmem_scratch), NULL, 0, -1, NULL,
	  "--pmem-path is the driver's for one point (set by bin/oqb run): removed here if the driver goes away "
	  "first, since it then cannot" },
	{ "void-timeout-ms", OPT_DBL, O(void_timeout_ms), "50", 0.01, 60000, NULL,
	  "shm: void a claimed ring slot whose client has not published it after this long; verbs, system "
	  "seqwrite: give up a log slot taken by fetch-and-add and not written after this long (the worker "
	  "waits no longer for one slot)" },
	{ "durable", OPT_BOOL, O(durable), NULL, 0, -1, NULL, "durable mode (persistent receive rings)" },
	{ "run-dir", OPT_STR, O(run_dir), NULL, 0, -1, NULL, "shm: parent directory of the private run directory "
	  "(default /dev/shm, or $OQB_RUN_DIR)" },
	{ "addr", OPT_STR, O(addr), NULL, 0, -1, NULL, "verbs: address to listen on" },
	{ "list-devices", OPT_BOOL, O(list_devices), NULL, 0, -1, NULL,
	  "verbs: list RDMA devices, ports, GIDs and capabilities, then exit" },
	{ "expect-conns", OPT_U64, O(expect_conns), "0", 0, 1 << 30, NULL,
	  "the connections the run will open to this server (set by the driver), for the start-up check of the "
	  "open-file and locked-memory limits (lib/proclimits.h)" },
	{ "list-settings", OPT_BOOL, O(list_settings), NULL, 0, -1, NULL,
	  "print every setting's row (config key, type, default, bounds, flag) as docs/config.md's table, and exit" },
	{ "build-id", OPT_BOOL, O(build_id), NULL, 0, -1, NULL, "print this build's id and exit" },
	{ "host-facts", OPT_BOOL, O(host_facts), NULL, 0, -1, NULL,
	  "print this host's facts as JSON (build, limits, CPUs, clocks, RDMA devices; for oqb doctor) and exit" },
	{ "seed", OPT_U64, O(seed), "1", 0, -1, NULL, "random seed (service times)" },
	{ "cpu-first", OPT_INT, O(cpu_first), "0", 0, 1023, NULL,
	  "auto placement: index of the first usable CPU to take (set by the driver per host)" },
	{ "ctl", OPT_STR, O(ctl), NULL, 0, -1, NULL, "driver control channel HOST:PORT (set by bin/oqb run)" },
	{ "rank", OPT_INT, O(rank), "0", 0, 1 << 20, NULL, "rank of this server (set by the driver)" },
	{ "log", OPT_STR, O(log), NULL, 0, -1, NULL, "log level: error, warn, info, debug" },
};
#undef O

/* srv_own, then the rows of the settings oqb-server takes, then the end. */
static struct opt srv_tab[sizeof srv_own / sizeof srv_own[0] + 64];

static int build_tab(void)
{
	return settings_table(srv_own, sizeof srv_own / sizeof srv_own[0], SET_SERVER, offsetof(struct srv_opts, set),
			      srv_tab, sizeof srv_tab / sizeof srv_tab[0]);
}

static volatile int ctl_lost;
static struct server *the_server;

static void on_ctl_lost(void *arg)
{
	(void)arg;
	/* The driver is gone: remove our shared-memory files on the way out. */
	if (the_server)
		server_destroy(the_server);
	the_server = NULL;
}

int main(int argc, char **argv)
{
	struct srv_opts o;
	char err[1024];
	int rc = 1;
	struct ctl *ctl = NULL;

	/* --build-info, --check-plugin: answered before the options (buildinfo.h) */
	int q = binquery_answer("oqb-server", argc, argv);
	if (q >= 0)
		return q;

	memset(&o, 0, sizeof o);
	if (build_tab() < 0) {
		fprintf(stderr, "oqb-server: more settings rows than its option table holds; raise srv_tab's size\n");
		return 1;
	}
	int r = opts_parse(srv_tab, &o, argc, argv, NULL, err, sizeof err);
	if (r == 1)
		return 0;
	if (r < 0) {
		fprintf(stderr, "oqb-server: %s\n", err);
		return 2;
	}
	log_set_prefix(NULL, "server", o.rank);
	if (o.list_settings) {
		settings_print_markdown(stdout);
		return 0;
	}
	if (settings_check_vals(SET_SERVER, &o.set, err, sizeof err) < 0) {
		fprintf(stderr, "oqb-server: %s\n", err);
		return 2;
	}
	if (hostfacts_answer(o.build_id, o.host_facts))
		return 0;
	if (o.list_devices) {
#if OQB_HAVE_VERBS_TRANSPORT
		int n = tp_verbs_list_devices(stdout, err, sizeof err);
		if (n < 0)
			fprintf(stderr, "oqb-server: %s\n", err);
		return n < 0 ? 1 : 0;
#else
		fprintf(stderr, "oqb-server: --list-devices needs the verbs transport, which this build does not have; "
			"install libibverbs-dev and librdmacm-dev and rebuild\n");
		return 2;
#endif
	}
	if (log_level_option("oqb-server", o.log) < 0)
		return 2;

	struct server_conf sc;
	memset(&sc, 0, sizeof sc);
	sc.sys = system_find(system_name_list[o.system]);
	sc.tp = transport_find(transport_name_list[o.transport]);
	if (!sc.tp) {
		log_msg(LOG_ERR, "--transport %s is not built into this binary (available: %s)%s",
			transport_name_list[o.transport], transport_names(),
			transport_hint(transport_name_list[o.transport]));
		return 2;
	}
	if (system_check_transport(sc.sys, sc.tp->name, err, sizeof err) != 0) {
		log_msg(LOG_ERR, "%s", err);
		return 2;
	}
	sc.be = backend_find(o.backend);
	if (!sc.be) {
		log_msg(LOG_ERR, "--backend %s: unknown backend; expected one of: %s", o.backend, backend_names());
		return 2;
	}
	const char *recv_mode = settings_choice("verbs", "recv_mode", o.set.recv_mode);
	sc.tpc.workers = (unsigned)o.set.workers;
	sc.probe_ns = (uint64_t)o.set.srv_probe_us * 1000;
	sc.idle.nap_ns = (uint64_t)(o.set.idle_nap_us * 1e3);
	sc.idle.spin_ns = (uint64_t)(o.set.idle_spin_us * 1e3);
	sc.tpc.ring_slots = (unsigned)o.set.ring_slots;
	sc.tpc.slot_size = (unsigned)o.set.slot_size;
	sc.tpc.run_dir = o.run_dir;
	sc.tpc.system = sc.sys->name;
	sc.tpc.void_timeout_ns = (uint64_t)(o.void_timeout_ms * 1e6);
	sc.tpc.durable = o.durable;
	sc.tpc.pmem_path = o.pmem_path;
	sc.tpc.addr = o.addr;
	sc.tpc.device = o.set.device;
	sc.tpc.port = (unsigned)o.set.port;
	sc.tpc.ib_port = (unsigned)o.set.ib_port;
	sc.tpc.gid_index = o.set.gid_index;
	sc.tpc.recv_mode = recv_mode;
	sc.tpc.min_rnr_timer = (unsigned)o.set.min_rnr_timer;
	sc.tpc.xrc = o.set.xrc;
	sc.bc.kind = sc.be->name;
	sc.bc.set = o.set;   /* the back ends' settings, by their rows' fields */
	sc.bc.run_dir = o.run_dir;
	sc.bc.persist_dir = o.pmem_path;
	sc.bc.durable = o.durable;
	sc.bc.plugin_path = o.plugin_path;
	sc.bc.plugin_options = o.plugin_options;
	if ((strcmp(sc.be->name, "plugin") == 0) != (o.plugin_path != NULL)) {
		log_msg(LOG_ERR, "%s", o.plugin_path ? "--plugin-path is for --backend plugin only" :
			"--backend plugin needs --plugin-path FILE.so: the engine's shared object (docs/plugins.md)");
		return 2;
	}
	/* --pmem-path is a directory: receive rings (durable) and pmkv pools
	 * live in it side by side. */
	char pool_prefix[1024];
	if (o.pmem_path) {
		if (mkdir(o.pmem_path, 0700) != 0 && errno != EEXIST) {
			log_msg(LOG_ERR, "--pmem-path %s: cannot create: %s", o.pmem_path, strerror(errno));
			return 1;
		}
		snprintf(pool_prefix, sizeof pool_prefix, "%s/pmkv", o.pmem_path);
		sc.bc.path = pool_prefix;
	} else if (!strcmp(sc.be->name, "pmkv") || o.durable) {
		log_msg(LOG_ERR, "%s needs --pmem-path DIR: a directory for the persistent %s",
			o.durable ? "--durable" : "--backend pmkv", o.durable ? "receive rings" : "pools");
		return 2;
	}
	sc.bc.seed = o.seed;
	static struct cpu_plan cpus;
	if (cpus_plan(o.set.srv_cpus, (unsigned)o.cpu_first, (unsigned)o.set.workers, o.set.device, 0, 0, &cpus, err, sizeof err) < 0) {
		log_msg(LOG_ERR, "--cpus: %s", err);
		return 2;
	}
	if (cpus.shared)
		log_msg(LOG_WARN, "placement: %d worker(s) from CPU index %d, but this process may use only %d CPU(s): "
			"spinning threads share CPUs, latencies will include scheduling delays", o.set.workers,
			o.cpu_first, cpus.available);
	sc.cpus = &cpus;
	sc.service_sample = (unsigned)o.set.service_sample;
	sc.window_from_go = o.ctl != NULL;

	/* Signals are taken synchronously by the main thread (sigwait below);
	 * workers inherit the mask. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	if (o.ctl) {
		ctl = ctl_connect(o.ctl, "server", (unsigned)o.rank, 10000, err, sizeof err);
		if (!ctl) {
			log_msg(LOG_ERR, "cannot reach the driver at %s: %s", o.ctl, err);
			return 1;
		}
	}
	/* The limits this shape needs, before anything is opened (issue 37). */
	struct lim_server_shape ls = {
		.transport = sc.tp->name, .workers = (unsigned)o.set.workers, .conns = (unsigned long long)o.expect_conns,
		.ring_slots = (unsigned)o.set.ring_slots, .slot_size = (unsigned)o.set.slot_size,
		.slot_ring = strcmp(recv_mode, "srq") != 0, .durable = o.durable,
	};
	struct lim_need need;
	char lim_note[256];
	lim_server_need(&ls, &need);
	if (lim_check_self(&need, "this server", 0, lim_note, sizeof lim_note, err, sizeof err) == 0) {
		if (lim_note[0])
			log_msg(LOG_INFO, "limits: %s", lim_note);
		the_server = server_start(&sc, err, sizeof err);
	}
	if (!the_server) {
		log_msg(LOG_ERR, "%s", err);
		if (ctl) {
			ctl_send(ctl, json_pack("{s:s,s:s}", "type", "ERROR", "message", err), err, sizeof err);
			ctl_close(ctl);
		}
		return 1;
	}

	if (!ctl) {
		printf("ready: endpoint %s\n", server_endpoint(the_server));
		fflush(stdout);
		/* Until a signal, or a backend's store dies (server_fatal). */
		for (;;) {
			struct timespec ts = { 0, 200 * 1000000L };
			if (sigtimedwait(&sigs, NULL, &ts) > 0)
				break;
			if (server_fatal(the_server, err, sizeof err) != 0) {
				log_msg(LOG_ERR, "%s", err);
				server_destroy(the_server);
				return 1;
			}
		}
		server_stop(the_server);
		json_t *st = server_stats(the_server);
		json_object_set_new(st, "placement", cpus_plan_json(&cpus, o.set.srv_cpus));
		json_dumpf(st, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(st);
		server_destroy(the_server);
		return 0;
	}

	/* Where it runs: the Slurm node inside a step (several can share one
	 * host name), else the host name (tests/integration/slurm.sh). */
	char node[256] = "";
	if (getenv("SLURMD_NODENAME"))
		snprintf(node, sizeof node, "%s", getenv("SLURMD_NODENAME"));
	else
		gethostname(node, sizeof node - 1);
	json_t *info = json_pack("{s:s,s:s,s:s,s:i,s:i,s:s}", "endpoint", server_endpoint(the_server),
				 "system", sc.sys->name, "transport", sc.tp->name,
				 "workers", o.set.workers, "pid", (int)getpid(), "node", node);
	if (lim_note[0])
		json_object_set_new(info, "limits_raised", json_string(lim_note));
	json_object_set_new(info, "build_id", json_string(buildinfo_id()));   /* the driver checks it */
	if (ctl_hello(ctl, info, err, sizeof err) != 0 ||
	    ctl_start_watch(ctl, &ctl_lost, on_ctl_lost, NULL) != 0) {
		json_decref(info);
		log_msg(LOG_ERR, "control channel: %s", err);
		goto out;
	}
	json_decref(info);
	for (;;) {
		json_t *m = ctl_recv(ctl, 200, err, sizeof err);
		if (!m) {
			if (ctl_lost)
				goto out;
			if (server_fatal(the_server, err, sizeof err) != 0) {
				/* The point fails now, naming the store, instead of
				 * timing out on clients that get no answers. */
				log_msg(LOG_ERR, "%s", err);
				char e2[256];
				ctl_send(ctl, json_pack("{s:s,s:s}", "type", "ERROR", "message", err), e2, sizeof e2);
				goto out;
			}
			struct timespec ts = { 0, 0 };
			int sig = sigtimedwait(&sigs, NULL, &ts);
			if (sig > 0)
				goto out;
			continue;
		}
		const char *type = json_string_value(json_object_get(m, "type"));
		int stop = type && (!strcmp(type, "STOP") || !strcmp(type, "BYE"));
		int bye = type && !strcmp(type, "BYE");
		if (type && !strcmp(type, "GO")) {
			/* The clients' measured window, as they compute it from
			 * their GO: service times outside it are left out. */
			uint64_t from = clock_ns() + (uint64_t)json_integer_value(json_object_get(m, "start_in_ns")) +
					(uint64_t)json_integer_value(json_object_get(m, "warmup_ns"));
			uint64_t dur = (uint64_t)json_integer_value(json_object_get(m, "duration_ns"));
			server_window(the_server, from, dur ? from + dur : UINT64_MAX);
		}
		json_decref(m);
		if (stop) {
			server_stop(the_server);
			if (!bye) {
				json_t *st = server_stats(the_server);
				json_object_set_new(st, "placement", cpus_plan_json(&cpus, o.set.srv_cpus));
				json_object_set_new(st, "node", json_string(node));
				json_object_set_new(st, "needs", lim_need_json(&need));
				if (ctl_done(ctl, st, err, sizeof err) != 0)
					log_msg(LOG_ERR, "control channel: %s", err);
				json_decref(st);
			}
			rc = 0;
			break;
		}
	}
out:
	if (the_server)
		server_destroy(the_server);
	the_server = NULL;
	if (ctl)
		ctl_close(ctl);
	/* The driver removes a point's --pmem-path after the point; one that
	 * is gone (killed, its host lost) cannot, and nothing else will. */
	if (ctl_lost && o.pmem_scratch && o.pmem_path && rm_tree(o.pmem_path) != 0)
		log_msg(LOG_WARN, "--pmem-path %s: the driver is gone and it cannot be removed: %s; remove it by hand",
			o.pmem_path, strerror(errno));
	return rc;
}
