/*
 * test_runconf.c - the config's newer parts: `oqb run --set` overrides
 * (parsing, key checks with suggestions, parents made, null removes),
 * the `sweep` axis (one checked config per value, plan order and size),
 * `durable` (all systems or a list), the one --pmem-path directory rule,
 * verbs-only keys refused on shm, and the start delay's default by launcher.
 */
#include "unit.h"
#include "conf.h"
#include "runconf.h"
#include "procargs.h"
#include "launch.h"

#include <jansson.h>
#include <stdarg.h>
#include <unistd.h>

/* Whether the server of rc's first point gets flag (followed by val,
 * unless val is NULL). */
static int server_flag(const struct runconf *rc, const char *flag, const char *val)
{
	struct point pt[4];
	int found = 0;

	if (runconf_plan(rc, pt, 4) == 0)
		return 0;
	char **a = procargs_server("/bin", rc, &pt[0], "127.0.0.1:1", NULL);
	for (size_t i = 0; a && a[i]; i++)
		if (!strcmp(a[i], flag) && (!val || (a[i + 1] && !strcmp(a[i + 1], val))))
			found = 1;
	launch_argv_free(a);
	return found;
}

/* Whether argv a holds flag (followed by val, unless val is NULL); frees a. */
static int argv_has(char **a, const char *flag, const char *val)
{
	int found = 0;
	for (size_t i = 0; a && a[i]; i++)
		if (!strcmp(a[i], flag) && (!val || (a[i + 1] && !strcmp(a[i + 1], val))))
			found = 1;
	launch_argv_free(a);
	return found;
}

/* The same for client 0 of rc's first point, and for its verbs canary. */
static int client_flag(const struct runconf *rc, const char *flag, const char *val)
{
	struct point pt[4];
	if (runconf_plan(rc, pt, 4) == 0)
		return 0;
	return argv_has(procargs_client("/bin", rc, &pt[0], "127.0.0.1:1", "ep", 0, NULL), flag, val);
}

static int vfloor_flag(const struct runconf *rc, const char *flag)
{
	return argv_has(procargs_vfloor("/bin", rc, "127.0.0.1:1", NULL, -1), flag, NULL);
}

/* A small valid config; tests change it with --set style overrides. */
static const char *base_cfg =
	"{\"name\":\"t\",\"transport\":\"shm\",\"systems\":[\"oq\",\"rawrpc\"],"
	"\"server\":{\"backend\":{\"kind\":\"cache\",\"memory_mb\":16}},"
	"\"workload\":{\"kind\":\"kv\",\"value_size\":64,\"keys\":100},"
	"\"arrival\":{\"kind\":\"poisson\",\"loads_ops\":[1000,2000,4000]}}";

static char g_path[512];

static const char *cfg_file(void)
{
	const char *dir = getenv("TMPDIR");
	FILE *f;
	int fd;

	if (g_path[0])
		return g_path;
	snprintf(g_path, sizeof g_path, "%s/oqb_runconf_XXXXXX", dir && *dir ? dir : P_tmpdir);
	fd = mkstemp(g_path);
	if (fd < 0) {
		g_path[0] = '\0';
		return g_path;
	}
	f = fdopen(fd, "w");
	fputs(base_cfg, f);
	fclose(f);
	return g_path;
}

/* Loads the base config with the overrides; returns runconf_load_sets'. */
static int load(struct runconf *rc, char *err, size_t errlen, size_t n, ...)
{
	const char *sets[16];
	va_list ap;

	va_start(ap, n);
	for (size_t i = 0; i < n && i < 16; i++)
		sets[i] = va_arg(ap, const char *);
	va_end(ap);
	return runconf_load_sets(cfg_file(), sets, n, rc, err, errlen);
}

TEST(set_parses_values)
{
	json_t *root = json_loads(base_cfg, 0, NULL);
	char err[1024];

	REQUIRE(root);
	CHECK(runconf_set(root, "duration_s=0.3", err, sizeof err) == 0, "%s", err);
	CHECK(json_real_value(json_object_get(root, "duration_s")) == 0.3);
	CHECK(runconf_set(root, "arrival.loads_ops=[2000]", err, sizeof err) == 0, "%s", err);
	CHECK(json_array_size(conf_path(root, "arrival.loads_ops")) == 1);
	/* Plain words need no JSON quotes; quoted strings work too. */
	CHECK(runconf_set(root, "transport=verbs", err, sizeof err) == 0, "%s", err);
	CHECK(strcmp(json_string_value(json_object_get(root, "transport")), "verbs") == 0);
	CHECK(runconf_set(root, "description=\"two words\"", err, sizeof err) == 0, "%s", err);
	CHECK(strcmp(json_string_value(json_object_get(root, "description")), "two words") == 0);
	CHECK(runconf_set(root, "description=", err, sizeof err) == 0, "%s", err);
	CHECK(strcmp(json_string_value(json_object_get(root, "description")), "") == 0);
	CHECK(runconf_set(root, "durable=true", err, sizeof err) == 0, "%s", err);
	CHECK(json_is_true(json_object_get(root, "durable")));
	/* Parents are made; below workload any key is taken (the generator
	 * checks it later); null removes. */
	CHECK(runconf_set(root, "verbs.recv_mode=slot_ring", err, sizeof err) == 0, "%s", err);
	CHECK(strcmp(json_string_value(conf_path(root, "verbs.recv_mode")), "slot_ring") == 0);
	CHECK(runconf_set(root, "workload.anything=1", err, sizeof err) == 0, "%s", err);
	CHECK(runconf_set(root, "workload={\"kind\":\"echo\"}", err, sizeof err) == 0, "%s", err);
	CHECK(json_object_size(json_object_get(root, "workload")) == 1);
	CHECK(runconf_set(root, "verbs=null", err, sizeof err) == 0, "%s", err);
	CHECK(json_object_get(root, "verbs") == NULL);
	CHECK(runconf_set(root, "sweep.values=null", err, sizeof err) == 0, "%s", err);
	CHECK(json_object_get(root, "sweep") == NULL, "removing under a missing parent makes nothing");
	json_decref(root);
}

TEST(set_errors_name_the_fix)
{
	json_t *root = json_loads(base_cfg, 0, NULL);
	char err[1024];

	REQUIRE(root);
	CHECK(runconf_set(root, "durabel=true", err, sizeof err) < 0);
	CHECK(strstr(err, "--set durabel=true: unknown key \"durabel\"; did you mean \"durable\"?"), "%s", err);
	CHECK(runconf_set(root, "server.backend.memory_m=1", err, sizeof err) < 0);
	CHECK(strstr(err, "did you mean \"server.backend.memory_mb\"?"), "%s", err);
	CHECK(runconf_set(root, "duration_s", err, sizeof err) < 0);
	CHECK(strstr(err, "expected KEY=VALUE"), "%s", err);
	CHECK(runconf_set(root, "=3", err, sizeof err) < 0);
	CHECK(runconf_set(root, "arrival.loads_ops=[1,", err, sizeof err) < 0);
	CHECK(strstr(err, "not valid JSON"), "%s", err);
	CHECK(runconf_set(root, "systems[2]=oq", err, sizeof err) < 0);
	CHECK(strstr(err, "\"systems\" has 2 elements, so there is no [2]; to make it longer give the "
		     "whole array"), "%s", err);
	CHECK(runconf_set(root, "systems[x]=oq", err, sizeof err) < 0);
	CHECK(strstr(err, "is not a key path"), "%s", err);
	CHECK(runconf_set(root, "arrival.loads_ops.search.start_ops=5", err, sizeof err) < 0);
	CHECK(strstr(err, "\"arrival.loads_ops\" is an array in the config, not an object"), "%s", err);
	CHECK(runconf_set(root, "hosts.clients[0]=a", err, sizeof err) < 0);
	CHECK(strstr(err, "\"hosts.clients\" is not in the config"), "%s", err);
	CHECK(runconf_set(root, "server.workers.x=1", err, sizeof err) < 0);
	CHECK(strstr(err, "is not an object"), "%s", err);
	CHECK(runconf_set(root, "arrival.=1", err, sizeof err) < 0);
	/* A key the schema knows whose value in the file is not an object. */
	json_object_set_new(root, "verbs", json_integer(1));
	CHECK(runconf_set(root, "verbs.xrc=true", err, sizeof err) < 0);
	CHECK(strstr(err, "\"verbs\" is a number in the config, not an object"), "%s", err);
	json_decref(root);
}

/* Any leaf: inside loads_ops' automatic form, and array elements by index. */
TEST(set_reaches_any_leaf)
{
	json_t *root = json_loads(base_cfg, 0, NULL);
	char err[1024];

	REQUIRE(root);
	CHECK(runconf_set(root, "arrival.loads_ops={\"auto\":true,\"search\":{\"probe_s\":1}}", err,
			  sizeof err) == 0, "%s", err);
	CHECK(runconf_set(root, "arrival.loads_ops.search.start_ops=500000", err, sizeof err) == 0, "%s", err);
	CHECK(json_number_value(conf_path(root, "arrival.loads_ops.search.start_ops")) == 500000);
	CHECK(json_number_value(conf_path(root, "arrival.loads_ops.search.probe_s")) == 1,
	      "the search's other keys stay");
	CHECK(runconf_set(root, "systems[1]=deferred", err, sizeof err) == 0, "%s", err);
	CHECK(strcmp(json_string_value(json_array_get(json_object_get(root, "systems"), 1)), "deferred") == 0);
	CHECK(json_array_size(json_object_get(root, "systems")) == 2);
	CHECK(runconf_set(root, "systems[0]=null", err, sizeof err) == 0, "%s", err);
	CHECK(json_array_size(json_object_get(root, "systems")) == 1, "null removes the element");
	json_decref(root);
}

/* An overlay merges (RFC 7386): objects key by key, null removes, the rest replaces. */
TEST(set_file_merges_and_checks_keys)
{
	json_t *root = json_loads(base_cfg, 0, NULL);
	char err[1024], path[512], spec[520];
	const char *dir = getenv("TMPDIR");
	FILE *f;
	int fd;

	REQUIRE(root);
	snprintf(path, sizeof path, "%s/oqb_overlay_XXXXXX", dir && *dir ? dir : P_tmpdir);
	fd = mkstemp(path);
	REQUIRE(fd >= 0);
	f = fdopen(fd, "w");
	fputs("{\"about\": \"t\", \"set\": {\"server\": {\"workers\": 4, \"backend\": {\"memory_mb\": 32}},"
	      " \"systems\": [\"oq\"], \"workload\": {\"keys\": null}}}", f);
	fclose(f);
	CHECK(runconf_set_file(root, path, err, sizeof err) == 0, "%s", err);
	CHECK(json_integer_value(conf_path(root, "server.workers")) == 4);
	CHECK(json_integer_value(conf_path(root, "server.backend.memory_mb")) == 32);
	CHECK(strcmp(json_string_value(conf_path(root, "server.backend.kind")), "cache") == 0, "merged, not replaced");
	CHECK(json_array_size(json_object_get(root, "systems")) == 1, "an array replaces");
	CHECK(conf_path(root, "workload.keys") == NULL, "null removes");
	CHECK(json_integer_value(conf_path(root, "workload.value_size")) == 64);
	f = fopen(path, "w");
	REQUIRE(f);
	fputs("{\"set\": {\"server\": {\"wokers\": 4}}}", f);
	fclose(f);
	snprintf(spec, sizeof spec, "@%s", path);
	CHECK(runconf_set(root, spec, err, sizeof err) < 0);
	CHECK(strstr(err, "unknown key \"server.wokers\"; did you mean \"server.workers\"?"), "%s", err);
	CHECK(strstr(err, "--set-file "), "%s", err);
	f = fopen(path, "w");
	REQUIRE(f);
	fputs("{\"server\": {\"workers\": 4}}", f);
	fclose(f);
	CHECK(runconf_set_file(root, path, err, sizeof err) < 0);
	CHECK(strstr(err, "unknown key \"server\"; an overlay has \"about\""), "%s", err);
	unlink(path);
	json_decref(root);
}

TEST(load_applies_and_records_overrides)
{
	struct runconf rc;
	char err[4096];

	REQUIRE(load(&rc, err, sizeof err, 2, "duration_s=0.3", "arrival.loads_ops=[2000]") == 0, "%s", err);
	CHECK(rc.duration_s == 0.3);
	CHECK(rc.nloads == 1 && rc.loads[0] == 2000);
	CHECK(json_array_size(rc.overrides) == 2);
	CHECK(strcmp(json_string_value(json_array_get(rc.overrides, 1)), "arrival.loads_ops=[2000]") == 0);
	/* The config rc echoes is the changed one. */
	CHECK(json_real_value(json_object_get(rc.root, "duration_s")) == 0.3);
	runconf_free(&rc);

	/* A value the check refuses: the file's message, plus a word on --set. */
	CHECK(load(&rc, err, sizeof err, 1, "duration_s=-1") < 0);
	CHECK(strstr(err, "duration_s: -1 is out of range") && strstr(err, "--set"), "%s", err);
	CHECK(load(&rc, err, sizeof err, 1, "duration_s=3s") < 0);
	CHECK(strstr(err, "expected a number"), "%s", err);
}

TEST(sweep_makes_checked_variants)
{
	struct runconf rc;
	struct point pts[64];
	char err[4096];
	size_t n;

	REQUIRE(load(&rc, err, sizeof err, 1,
		     "sweep={\"key\":\"workload.value_size\",\"values\":[100,200,400]}") == 0, "%s", err);
	CHECK(rc.nsweep == 3);
	n = runconf_plan(&rc, pts, 64);
	CHECK(n == 2 * 3 * 3, "systems x sweep values x loads, got %zu", n);
	/* Sweep value outermost, then load, then system. */
	CHECK(pts[0].sweep == 0 && pts[0].offered_ops == 1000 && !strcmp(pts[0].system, "oq"));
	CHECK(pts[1].sweep == 0 && pts[1].offered_ops == 1000 && !strcmp(pts[1].system, "rawrpc"));
	CHECK(pts[2].sweep == 0 && pts[2].offered_ops == 2000);
	CHECK(pts[6].sweep == 1 && pts[6].offered_ops == 1000);
	CHECK(pts[17].sweep == 2 && pts[17].offered_ops == 4000 && pts[17].idx == 17);
	CHECK(conf_int(runconf_for(&rc, &pts[6])->workload, "value_size", 0) == 200);
	CHECK(conf_int(runconf_for(&rc, &pts[17])->workload, "value_size", 0) == 400);
	CHECK(conf_int(rc.workload, "value_size", 0) == 64, "the base config is unchanged");
	runconf_free(&rc);

	/* Any schema key outside the plan's own: here the client count. */
	REQUIRE(load(&rc, err, sizeof err, 1,
		     "sweep={\"key\":\"clients.processes\",\"values\":[1,2]}") == 0, "%s", err);
	pts[0] = (struct point){ .sweep = 1 };
	CHECK(runconf_for(&rc, &pts[0])->processes == 2);
	runconf_free(&rc);

	CHECK(load(&rc, err, sizeof err, 1, "sweep={\"key\":\"workload.value_size\",\"values\":[100,99999999]}") < 0);
	CHECK(strstr(err, "sweep.values[1] (workload.value_size = 99999999)"), "%s", err);
	CHECK(load(&rc, err, sizeof err, 1, "sweep={\"key\":\"arrival.loads_ops\",\"values\":[1,2]}") < 0);
	CHECK(strstr(err, "cannot be swept"), "%s", err);
	CHECK(load(&rc, err, sizeof err, 1, "sweep={\"key\":\"server.wokers\",\"values\":[1,2]}") < 0);
	CHECK(strstr(err, "did you mean \"server.workers\"?"), "%s", err);
	CHECK(load(&rc, err, sizeof err, 1, "sweep={\"key\":\"server.workers\",\"values\":[]}") < 0);
	CHECK(strstr(err, "non-empty array"), "%s", err);
	CHECK(load(&rc, err, sizeof err, 1, "sweep={\"key\":\"server.workers\",\"values\":[1,1]}") < 0);
	CHECK(strstr(err, "repeats"), "%s", err);
}

TEST(durable_and_pmem_dir)
{
	struct runconf rc;
	char err[4096];

	REQUIRE(load(&rc, err, sizeof err, 1, "durable=true") == 0, "%s", err);
	CHECK(runconf_durable(&rc, "oq") && runconf_durable(&rc, "rawrpc"));
	CHECK(runconf_needs_pmem(&rc, "rawrpc"));
	CHECK(rc.pmem_dir == NULL, "a local run makes its own directories");
	runconf_free(&rc);

	REQUIRE(load(&rc, err, sizeof err, 1, "durable=[\"oq\"]") == 0, "%s", err);
	CHECK(runconf_durable(&rc, "oq") && !runconf_durable(&rc, "rawrpc"));
	CHECK(!runconf_needs_pmem(&rc, "rawrpc"), "cache backend, not durable");
	runconf_free(&rc);

	CHECK(load(&rc, err, sizeof err, 1, "durable=[\"oqq\"]") < 0);
	CHECK(strstr(err, "did you mean \"oq\"?"), "%s", err);
	CHECK(load(&rc, err, sizeof err, 1, "durable=[\"deferred\"]") < 0);
	CHECK(strstr(err, "not one of this config's systems"), "%s", err);
	CHECK(load(&rc, err, sizeof err, 1, "durable=yes") < 0);
	CHECK(strstr(err, "expected true, false or an array"), "%s", err);

	/* pmkv: one directory for rings and pools. */
	REQUIRE(load(&rc, err, sizeof err, 3, "server.backend={\"kind\":\"pmkv\"}", "durable=true",
		     "server.recv_pmem_path=/mnt/pm/") == 0, "%s", err);
	CHECK(runconf_needs_pmem(&rc, "oq") && strcmp(rc.pmem_dir, "/mnt/pm/") == 0);
	runconf_free(&rc);
	REQUIRE(load(&rc, err, sizeof err, 2, "server.backend={\"kind\":\"pmkv\",\"pmem_path\":\"/mnt/pm\"}",
		     "server.recv_pmem_path=/mnt/pm/") == 0, "%s", err);
	CHECK(rc.pmkv && runconf_needs_pmem(&rc, "rawrpc"));
	runconf_free(&rc);
	CHECK(load(&rc, err, sizeof err, 2, "server.backend={\"kind\":\"pmkv\",\"pmem_path\":\"/a\"}",
		   "server.recv_pmem_path=/b") < 0);
	CHECK(strstr(err, "differ") && strstr(err, "one --pmem-path"), "%s", err);
	CHECK(load(&rc, err, sizeof err, 2, "durable=true", "server.recv_pmem_path=pm") < 0);
	CHECK(strstr(err, "absolute path"), "%s", err);
	CHECK(load(&rc, err, sizeof err, 1, "server.backend={\"kind\":\"cache\",\"pmem_path\":\"/a\"}") < 0);
}

TEST(verbs_keys_need_verbs)
{
	struct runconf rc;
	char err[4096];

	CHECK(load(&rc, err, sizeof err, 1, "verbs.recv_mode=slot_ring") < 0);
	CHECK(strstr(err, "verbs: only used with transport \"verbs\""), "%s", err);
	CHECK(load(&rc, err, sizeof err, 1, "clients.delegation=true") < 0);
	CHECK(strstr(err, "clients.delegation") && strstr(err, "verbs"), "%s", err);
	CHECK(load(&rc, err, sizeof err, 2, "transport=verbs", "verbs.recv_mode=mpp") < 0);
	CHECK(strstr(err, "did you mean \"mp\"?"), "%s", err);

	REQUIRE(load(&rc, err, sizeof err, 4, "transport=verbs", "verbs.recv_mode=slot_ring",
		     "verbs.gid_index=-1", "clients.delegation=true") == 0, "%s", err);
	CHECK(strcmp(rc.verbs_addr, "127.0.0.1") == 0, "addr defaults to hosts.server");
	CHECK(strcmp(rc.recv_mode, "slot_ring") == 0 && rc.gid_index == -1 && rc.delegation);
	CHECK(rc.ib_port == -1);
	CHECK(server_flag(&rc, "--recv-mode", "slot_ring") && server_flag(&rc, "--gid-index", "-1"),
	      "the rows' keys become the server's flags");
	CHECK(!server_flag(&rc, "--port", NULL) && !server_flag(&rc, "--xrc", NULL), "not given: no flag");
	runconf_free(&rc);
	REQUIRE(load(&rc, err, sizeof err, 3, "transport=verbs", "verbs.xrc=true", "verbs.port=7000") == 0, "%s", err);
	CHECK(server_flag(&rc, "--xrc", NULL) && server_flag(&rc, "--port", "7000"), "a bare flag and a number");
	runconf_free(&rc);
	REQUIRE(load(&rc, err, sizeof err, 1, "transport=verbs") == 0, "%s", err);
	CHECK(rc.gid_index == -2, "not given: the server picks");
	runconf_free(&rc);
}

TEST(prefault_is_the_cache_backends)
{
	struct runconf rc;
	char err[4096];

	REQUIRE(load(&rc, err, sizeof err, 0) == 0, "%s", err);
	CHECK(!server_flag(&rc, "--prefault", NULL), "not given: the server's default");
	CHECK(server_flag(&rc, "--memory-mb", "16"));
	runconf_free(&rc);
	REQUIRE(load(&rc, err, sizeof err, 1, "server.backend.prefault=false") == 0, "%s", err);
	CHECK(server_flag(&rc, "--prefault", "0"), "a bool the server takes as 0 or 1");
	runconf_free(&rc);
	CHECK(load(&rc, err, sizeof err, 2, "server.backend={\"kind\":\"null\"}", "server.backend.prefault=true") < 0);
	CHECK(strstr(err, "prefault") && strstr(err, "null"), "%s", err);
	CHECK(load(&rc, err, sizeof err, 1, "server.backend.prefault=1") < 0, "a number is not a boolean");
}

TEST(start_delay_follows_the_launcher)
{
	struct runconf rc;
	char err[4096];

	REQUIRE(load(&rc, err, sizeof err, 0) == 0, "%s", err);
	CHECK(rc.start_delay_ms == 20, "launcher local: %g ms", rc.start_delay_ms);
	runconf_free(&rc);
	REQUIRE(load(&rc, err, sizeof err, 1, "timeouts.start_delay_ms=150") == 0, "%s", err);
	CHECK(rc.start_delay_ms == 150, "given: kept, %g ms", rc.start_delay_ms);
	runconf_free(&rc);
	REQUIRE(load(&rc, err, sizeof err, 1, "timeouts.start_delay_ms=0") == 0, "%s", err);
	CHECK(rc.start_delay_ms == 0, "0 is a value, not \"unset\": %g ms", rc.start_delay_ms);
	runconf_free(&rc);
	/* GO crosses the network to each client: the longer default (the
	 * ssh launcher needs an ssh client in PATH, as CI's machine has) */
	REQUIRE(load(&rc, err, sizeof err, 1, "hosts={\"launcher\":\"ssh\"}") == 0, "%s", err);
	CHECK(rc.start_delay_ms == 300, "launcher ssh: %g ms", rc.start_delay_ms);
	runconf_free(&rc);
}

TEST(cleanup)
{
	if (g_path[0])
		unlink(g_path);
}

TEST(timeouts_and_idle_are_rows)
{
	/* timeouts.drain_s and connect_s are the clients' rows, idle's keys
	 * the server's and the clients': bounded by the rows (drain_s's 600,
	 * the client's own), passed as flags only when set, and never to a
	 * binary that does not take them (the verbs canary) */
	struct runconf rc;
	char err[4096];

	REQUIRE(load(&rc, err, sizeof err, 0) == 0, "%s", err);
	CHECK(!client_flag(&rc, "--drain-s", NULL) && !client_flag(&rc, "--idle-nap-us", NULL) &&
	      !server_flag(&rc, "--idle-nap-us", NULL), "not given: the binaries' defaults");
	CHECK(rc.drain_s == 1, "the driver's drain_s is the row's default: %g", rc.drain_s);
	runconf_free(&rc);
	REQUIRE(load(&rc, err, sizeof err, 3, "timeouts.drain_s=2", "timeouts.connect_s=30", "idle.nap_us=50") == 0,
		"%s", err);
	CHECK(client_flag(&rc, "--drain-s", "2") && client_flag(&rc, "--connect-timeout-s", "30") &&
	      client_flag(&rc, "--idle-nap-us", "50") && server_flag(&rc, "--idle-nap-us", "50"),
	      "the rows' keys become the flags of the binaries that take them");
	CHECK(!server_flag(&rc, "--drain-s", NULL) && !vfloor_flag(&rc, "--idle-nap-us"),
	      "a binary that does not take a row gets no flag for it");
	runconf_free(&rc);
	CHECK(load(&rc, err, sizeof err, 2, "timeouts.drain_s=601", "timeouts.grace_s=3600") < 0 && strstr(err, "drain_s"),
	      "drain_s beyond the client's bound is refused before anything starts: %s", err);
	CHECK(load(&rc, err, sizeof err, 1, "idle.nap_us=-1") < 0 && strstr(err, "nap_us"), "%s", err);
}

UNIT_MAIN(set_parses_values, set_errors_name_the_fix, set_reaches_any_leaf, set_file_merges_and_checks_keys,
	  load_applies_and_records_overrides,
	  sweep_makes_checked_variants, durable_and_pmem_dir, verbs_keys_need_verbs, prefault_is_the_cache_backends,
	  start_delay_follows_the_launcher, timeouts_and_idle_are_rows, cleanup)
