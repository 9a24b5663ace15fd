/*
 * procargs.c - the command lines of oqb-server and oqb-client for one
 * point of a run (procargs.h): every config key that a process needs
 * becomes its flag here, and nowhere else.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "needs.h"
#include "procargs.h"
#include "trials.h"

static int push_extra(char ***argv, const json_t *extra)
{
	size_t i;
	json_t *v;
	int rc = 0;

	json_array_foreach(extra, i, v)
		rc |= argv_push(argv, json_string_value(v));
	return rc;
}

static int push_kv(char ***argv, const char *k, const char *v)
{
	return argv_push(argv, k) | argv_push(argv, v);
}

static int push_num(char ***argv, const char *k, double v)
{
	char b[64];
	snprintf(b, sizeof b, "%.10g", v);
	return push_kv(argv, k, b);
}

/* idle.nap_us: the same idle behaviour for workers and client threads. */
static int push_idle(char ***argv, const struct runconf *rc)
{
	if (rc->idle_nap_us <= 0)
		return 0;
	return push_num(argv, "--idle-nap-us", rc->idle_nap_us) | push_num(argv, "--idle-spin-us", rc->idle_spin_us);
}

static int same_host(const char *a, const char *b)
{
	return strcmp(a, b) == 0 || (host_is_local(a) && host_is_local(b));
}

/* Auto placement: clients take CPUs from the last one down, servers from
 * the first up.  How many CPUs, counted from the last, client process
 * `rank` skips: the threads of the lower ranks on the same host. */
static unsigned cpu_first(const struct runconf *rc, unsigned rank)
{
	const char *h = runconf_client_host(rc, rank);
	unsigned first = 0;
	for (unsigned k = 0; k < rank; k++)
		if (same_host(runconf_client_host(rc, k), h))
			first += (unsigned)rc->threads;
	return first;
}

/* Trials of one point use different arrival schedules and service times:
 * the config's seed for trial 0, then a seed per trial. */
static unsigned long long trial_seed(const struct runconf *rc, const struct point *pt)
{
	return (unsigned long long)rc->seed + 1000003ull * pt->trial;
}

/* System erpc has its own transport; the others use the config's. */
static const char *point_transport(const struct runconf *rc, const struct point *pt)
{
	return strcmp(pt->system, "erpc") == 0 ? "erpc" : rc->transport;
}

char **procargs_server(const char *bin, const struct runconf *top, const struct point *pt, const char *ctl_hp,
		       const char *pmem)
{
	const struct runconf *rc = runconf_for(top, pt);
	char **a = argv_new();
	char path[PATH_MAX + 32];
	int e = 0;

	snprintf(path, sizeof path, "%s/oqb-server", bin);
	e |= argv_push(&a, path);
	e |= push_kv(&a, "--system", pt->system);
	e |= push_kv(&a, "--transport", point_transport(rc, pt));
	e |= push_num(&a, "--workers", (double)rc->workers);
	e |= push_kv(&a, "--backend", rc->backend);
	if (rc->service_ns >= 0)
		e |= push_num(&a, "--service-ns", (double)rc->service_ns);
	if (rc->service_dist)
		e |= push_kv(&a, "--service-dist", rc->service_dist);
	if (rc->memory_mb >= 0)
		e |= push_num(&a, "--memory-mb", (double)rc->memory_mb);
	if (rc->prefault >= 0)
		e |= push_num(&a, "--prefault", (double)rc->prefault);
	if (rc->pool_mb >= 0)
		e |= push_num(&a, "--pool-mb", (double)rc->pool_mb);
	if (rc->memcached_path)
		e |= push_kv(&a, "--memcached-path", rc->memcached_path);
	if (rc->mc_threads >= 0)
		e |= push_num(&a, "--memcached-threads", (double)rc->mc_threads);
	if (rc->max_item_mb >= 0)
		e |= push_num(&a, "--max-item-mb", (double)rc->max_item_mb);
	if (rc->plugin_path) {
		char *opts = rc->plugin_options ? json_dumps(rc->plugin_options, JSON_COMPACT) : NULL;
		e |= push_kv(&a, "--plugin-path", rc->plugin_path);
		e |= push_kv(&a, "--plugin-options", opts ? opts : "{}");
		free(opts);
	}
	if (rc->rdb_wal >= 0)
		e |= push_num(&a, "--rocksdb-wal", (double)rc->rdb_wal);
	if (rc->rdb_sync >= 0)
		e |= push_num(&a, "--rocksdb-sync", (double)rc->rdb_sync);
	if (rc->rdb_write_buffer_mb >= 0)
		e |= push_num(&a, "--write-buffer-mb", (double)rc->rdb_write_buffer_mb);
	if (rc->rdb_max_write_buffers >= 0)
		e |= push_num(&a, "--max-write-buffers", (double)rc->rdb_max_write_buffers);
	if (rc->rdb_path)
		e |= push_kv(&a, "--rocksdb-path", rc->rdb_path);
	if (runconf_durable(rc, pt->system))
		e |= argv_push(&a, "--durable");
	if (pmem && *pmem) {
		/* the point's own: the server removes it if we die first */
		e |= push_kv(&a, "--pmem-path", pmem);
		e |= argv_push(&a, "--pmem-scratch");
	}
	if (rc->ring_slots >= 0)
		e |= push_num(&a, "--ring-slots", (double)rc->ring_slots);
	if (rc->slot_size >= 0)
		e |= push_num(&a, "--slot-size", (double)rc->slot_size);
	if (rc->scratch_dir)
		e |= push_kv(&a, "--run-dir", rc->scratch_dir);
	if (rc->verbs_addr) {
		e |= push_kv(&a, "--addr", rc->verbs_addr);
		if (rc->verbs_port >= 0)
			e |= push_num(&a, "--port", (double)rc->verbs_port);
		if (rc->device)
			e |= push_kv(&a, "--device", rc->device);
		if (rc->ib_port >= 0)
			e |= push_num(&a, "--ib-port", (double)rc->ib_port);
		if (rc->gid_index >= -1)
			e |= push_num(&a, "--gid-index", (double)rc->gid_index);
		if (rc->recv_mode)
			e |= push_kv(&a, "--recv-mode", rc->recv_mode);
		if (rc->min_rnr_timer >= 0)
			e |= push_num(&a, "--min-rnr-timer", (double)rc->min_rnr_timer);
		if (rc->xrc)
			e |= argv_push(&a, "--xrc");
	}
	/* What its limits must hold (lib/proclimits.h); only where the need
	 * depends on it, so that a build from before the flag (oqb ab's BASE)
	 * still runs shm configs. */
	if (!strcmp(point_transport(rc, pt), "verbs"))
		e |= push_num(&a, "--expect-conns", (double)needs_server_conns(rc));
	e |= push_num(&a, "--seed", (double)trial_seed(rc, pt));
	/* only when set, so a build from before the flag still runs a config
	 * without it (oqb ab's BASE) */
	if (rc->service_sample >= 0)
		e |= push_num(&a, "--service-sample", (double)rc->service_sample);
	e |= push_kv(&a, "--cpus", rc->srv_cpus);
	e |= push_idle(&a, rc);
	e |= push_kv(&a, "--ctl", ctl_hp);
	e |= push_kv(&a, "--rank", "0");
	e |= push_extra(&a, rc->server_extra);
	if (e) {
		launch_argv_free(a);
		return NULL;
	}
	return a;
}

char **procargs_client(const char *bin, const struct runconf *top, const struct point *pt, const char *ctl_hp,
		       const char *endpoint, unsigned rank, const char *out)
{
	const struct runconf *rc = runconf_for(top, pt);
	char **a = argv_new();
	char path[PATH_MAX + 32];
	char *wl = json_dumps(rc->workload, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	int e = !wl;

	snprintf(path, sizeof path, "%s/oqb-client", bin);
	e |= argv_push(&a, path);
	e |= push_kv(&a, "--system", pt->system);
	e |= push_kv(&a, "--transport", point_transport(rc, pt));
	e |= push_kv(&a, "--server", endpoint);
	e |= push_num(&a, "--threads", (double)rc->threads);
	e |= push_kv(&a, "--workload", wl ? wl : "{}");
	if (pt->outstanding > 0) {
		e |= push_kv(&a, "--arrival", "closed");
		e |= push_num(&a, "--outstanding", (double)pt->outstanding);
	} else {
		/* The point's load is split evenly over the processes; each
		 * process splits its share over its threads. */
		e |= push_kv(&a, "--arrival", "poisson");
		e |= push_num(&a, "--rate", pt->offered_ops / (double)rc->processes);
	}
	e |= push_num(&a, "--duration-s", rc->duration_s);
	e |= push_num(&a, "--warmup-s", rc->warmup_s);
	e |= push_num(&a, "--seed", (double)trial_seed(rc, pt));
	e |= push_num(&a, "--processes", (double)rc->processes);
	e |= push_kv(&a, "--cpus", rc->cli_cpus);
	e |= push_num(&a, "--cpu-first", cpu_first(rc, rank));
	if (same_host(runconf_client_host(rc, rank), rc->server_host))
		e |= push_num(&a, "--cpu-reserved", (double)rc->workers);
	if (rc->device)
		e |= push_kv(&a, "--device", rc->device);
	if (runconf_durable(rc, pt->system))
		e |= argv_push(&a, "--durable");
	if (rc->delegation)
		e |= argv_push(&a, "--delegation");
	if (!strcmp(point_transport(rc, pt), "verbs")) {
		e |= push_num(&a, "--expect-workers", (double)rc->workers);
		if (rc->slot_size >= 0)
			e |= push_num(&a, "--expect-slot-size", (double)rc->slot_size);
	}
	if (rc->connect_s > 0)
		e |= push_num(&a, "--connect-timeout-s", rc->connect_s);
	e |= push_num(&a, "--drain-s", rc->drain_s);
	e |= push_idle(&a, rc);
	e |= push_kv(&a, "--ctl", ctl_hp);
	e |= push_num(&a, "--rank", rank);
	if (out)
		e |= push_kv(&a, "--out", out);
	e |= push_extra(&a, rc->client_extra);
	free(wl);
	if (e) {
		launch_argv_free(a);
		return NULL;
	}
	return a;
}

char **procargs_vfloor(const char *bin, const struct runconf *rc, const char *ctl_hp, const char *ping_endpoint,
		       int cpu)
{
	char **a = argv_new();
	char path[PATH_MAX + 32];
	int e = 0;

	snprintf(path, sizeof path, "%s/oqb-vfloor", bin);
	e |= argv_push(&a, path);
	if (!ping_endpoint) {
		/* any free port: the trial's server may still hold its own */
		e |= argv_push(&a, "--serve");
		e |= push_kv(&a, "--addr", rc->verbs_addr ? rc->verbs_addr : "");
		e |= push_kv(&a, "--port", "0");
		e |= push_num(&a, "--max-s", rc->hello_s + 60);
	} else {
		/* as oqb-floor beside a shm trial */
		e |= push_kv(&a, "--ping", ping_endpoint);
		e |= push_kv(&a, "--rounds", "2000");
		e |= push_kv(&a, "--warmup", "100");
		e |= push_num(&a, "--max-ms", CANARY_MAX_MS);
		e |= push_num(&a, "--connect-timeout-s", CANARY_CONNECT_S);
	}
	e |= push_num(&a, "--cpu", cpu);
	e |= push_idle(&a, rc);
	e |= push_kv(&a, "--ctl", ctl_hp);
	e |= push_kv(&a, "--rank", "0");
	if (e) {
		launch_argv_free(a);
		return NULL;
	}
	return a;
}
