/*
 * procargs.c - the command lines of oqb-server and oqb-client for one
 * point of a run (procargs.h).  A config key that a binary takes as it is
 * comes from its row (lib/settings/): push_settings walks the rows of the
 * binary and emits "--flag value" for each key the config sets, so no key
 * is translated by hand.  What is left here are the flags the driver
 * works out per point (system, seed, rate, CPUs to skip, the pmem
 * directory, the control channel).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "needs.h"
#include "procargs.h"
#include "settings.h"
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

/*
 * The settings of binary `bin` that rc's config sets: a row of
 * server.backend only for its kind, a row of verbs only on verbs.  A key
 * the config leaves out gets no flag, so the binary's default (the row's)
 * holds.
 */
static int push_settings(char ***argv, unsigned bin, const struct runconf *rc)
{
	char val[1024], flag[128];
	int e = 0;

	for (const struct setting *s = settings_rows(); s->field; s++) {
		if (!(s->binaries & bin))
			continue;
		if (!strcmp(s->section, "server.backend") && !settings_owned_by(s, rc->backend))
			continue;
		if (!strcmp(s->section, "verbs") && !rc->verbs_addr)
			continue;
		const json_t *v = json_object_get(conf_path(rc->root, s->section), s->key);
		if (!v)
			continue;
		int n = settings_flag_value(s, v, val, sizeof val);
		if (n < 0)
			return -1;   /* the config check lets no such value through */
		snprintf(flag, sizeof flag, "--%s", s->flag);
		if (n >= 1)
			e |= argv_push(argv, flag);
		if (n == 2)
			e |= argv_push(argv, val);
	}
	return e;
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
	e |= push_kv(&a, "--backend", rc->backend);
	e |= push_settings(&a, SET_SERVER, rc);
	if (rc->plugin_path) {
		/* made absolute for a local server (runconf_plugin.c); options as JSON text */
		char *opts = rc->plugin_options ? json_dumps(rc->plugin_options, JSON_COMPACT) : NULL;
		e |= push_kv(&a, "--plugin-path", rc->plugin_path);
		e |= push_kv(&a, "--plugin-options", opts ? opts : "{}");
		free(opts);
	}
	if (runconf_durable(rc, pt->system))
		e |= argv_push(&a, "--durable");
	if (pmem && *pmem) {
		/* the point's own: the server removes it if we die first */
		e |= push_kv(&a, "--pmem-path", pmem);
		e |= argv_push(&a, "--pmem-scratch");
	}
	if (rc->scratch_dir)
		e |= push_kv(&a, "--run-dir", rc->scratch_dir);
	if (rc->verbs_addr)
		e |= push_kv(&a, "--addr", rc->verbs_addr);
	/* What its limits must hold (lib/proclimits.h); only where the need
	 * depends on it, so that a build from before the flag (oqb ab's BASE)
	 * still runs shm configs. */
	if (!strcmp(point_transport(rc, pt), "verbs"))
		e |= push_num(&a, "--expect-conns", (double)needs_server_conns(rc));
	e |= push_num(&a, "--seed", (double)trial_seed(rc, pt));
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
	e |= push_settings(&a, SET_CLIENT, rc);
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
	e |= push_num(&a, "--cpu-first", cpu_first(rc, rank));
	if (same_host(runconf_client_host(rc, rank), rc->server_host))
		e |= push_num(&a, "--cpu-reserved", (double)rc->workers);
	if (runconf_durable(rc, pt->system))
		e |= argv_push(&a, "--durable");
	if (!strcmp(point_transport(rc, pt), "verbs")) {
		e |= push_num(&a, "--expect-workers", (double)rc->workers);
		if (rc->slot_size >= 0)
			e |= push_num(&a, "--expect-slot-size", (double)rc->slot_size);
	}
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
		e |= push_num(&a, "--connect-timeout-s", rc->connect_s);
	}
	e |= push_num(&a, "--cpu", cpu);
	e |= push_kv(&a, "--ctl", ctl_hp);
	e |= push_kv(&a, "--rank", "0");
	if (e) {
		launch_argv_free(a);
		return NULL;
	}
	return a;
}
