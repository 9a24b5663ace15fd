/*
 * test_plugin.c - the plugin back end (be_plugin.c): the table checks on
 * tables made here, and the example plugin (plugins/example-kv, built by
 * make next to this binary's folder) through backend_ops: statuses, incr,
 * the declared limits, options the engine refuses, durable refused.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "be_plugin.h"

static int t_get(void *i, const uint8_t *k, uint32_t kl, uint8_t *v, uint32_t cap, uint32_t *vl)
{
	(void)i; (void)k; (void)kl; (void)v; (void)cap; (void)vl;
	return OQB_NOT_FOUND;
}
static int t_set(void *i, const uint8_t *k, uint32_t kl, const uint8_t *v, uint32_t vl)
{
	(void)i; (void)k; (void)kl; (void)v; (void)vl;
	return OQB_OK;
}
static int t_del(void *i, const uint8_t *k, uint32_t kl)
{
	(void)i; (void)k; (void)kl;
	return OQB_OK;
}
static int t_incr(void *i, const uint8_t *k, uint32_t kl, uint64_t d, uint64_t *r)
{
	(void)i; (void)k; (void)kl; (void)d; (void)r;
	return OQB_OK;
}
static void *t_open(const struct oqb_plugin_conf *c, char *e, size_t n)
{
	(void)c; (void)e; (void)n;
	return NULL;
}
static void t_close(void *i)
{
	(void)i;
}

static const struct oqb_plugin good = {
	.abi_version = OQB_PLUGIN_ABI_VERSION, .struct_size = sizeof(struct oqb_plugin), .name = "t",
	.caps = OQB_CAP_INCR, .open = t_open, .close = t_close, .get = t_get, .set = t_set, .del = t_del,
	.incr = t_incr,
};

static int refused(const struct oqb_plugin *p, const char *want)
{
	char err[512] = "";
	int rc = plugin_check_table(p, "t.so", err, sizeof err);
	if (rc == 0 || !strstr(err, want)) {
		fprintf(stderr, "  want \"%s\", got rc %d: %s\n", want, rc, err);
		return 0;
	}
	return 1;
}

TEST(table_checks)
{
	char err[512];
	struct oqb_plugin p = good;

	CHECK(plugin_check_table(&good, "t.so", err, sizeof err) == 0, "%s", err);
	p.abi_version = 7;
	CHECK(refused(&p, "plugin t.so was built for oqbench plugin ABI 7; this server speaks 1"));
	p = good;
	p.struct_size -= 8;
	CHECK(refused(&p, "modified header"));
	p = good;
	p.name = "";
	CHECK(refused(&p, "no name"));
	p = good;
	p.del = NULL;
	CHECK(refused(&p, ".del is NULL"));
	p = good;
	p.incr = NULL;
	CHECK(refused(&p, "caps has OQB_CAP_INCR but .incr is NULL"));
	p = good;
	p.caps = 0;
	CHECK(refused(&p, ".incr is set but caps lacks OQB_CAP_INCR"));
	p = good;
	p.caps |= 0x80;
	CHECK(refused(&p, "bits ABI 1 does not define"));
}

TEST(load_errors)
{
	struct plugin_lib lib;
	char err[1024];

	CHECK(plugin_load("/nonexistent/x.so", &lib, err, sizeof err) < 0 && strstr(err, "No such file"), "%s", err);
	CHECK(plugin_load("", &lib, err, sizeof err) < 0 && strstr(err, "no path"), "%s", err);
	CHECK(plugin_load("/proc/self/exe", &lib, err, sizeof err) < 0 && strstr(err, "cannot load it"), "%s", err);
	CHECK(lib.dl == NULL);
}

static char example[PATH_MAX];
static uint8_t outbuf[KV_MAX_VALUE];

static struct backend_out run(struct backend *b, unsigned op, const char *key, const char *val, uint64_t aux)
{
	struct backend_req r = {
		.op = op, .key = (const uint8_t *)key, .key_len = (uint32_t)strlen(key),
		.val = (const uint8_t *)val, .val_len = val ? (uint32_t)strlen(val) : 0, .aux = aux,
	};
	struct backend_out o = { .status = 99, .val = outbuf, .val_cap = sizeof outbuf };
	plugin_backend_ops.exec(b, &r, &o);
	return o;
}

/* The example plugin's path: ../plugins/example-kv.so from this binary. */
static int find_example(void)
{
	ssize_t n = readlink("/proc/self/exe", example, sizeof example - 40);
	if (n <= 0)
		return 0;
	example[n] = '\0';
	char *s = strrchr(example, '/');
	if (!s)
		return 0;
	strcpy(s, "/../plugins/example-kv.so");
	return access(example, R_OK) == 0;
}

TEST(example_through_adapter)
{
	if (!find_example())
		SKIP("no example plugin in ../plugins next to this binary; make builds it");
	struct backend_conf c = { .kind = "plugin", .plugin_path = example, .workers = 1,
				  .plugin_options = "{\"buckets\": 16}" };
	char err[1024];
	struct backend *b = plugin_backend_ops.open(&c, err, sizeof err);
	REQUIRE(b, "%s", err);
	CHECK(run(b, KV_OP_GET, "a", NULL, 0).status == KV_NOT_FOUND);
	CHECK(run(b, KV_OP_SET, "a", "41", 0).status == KV_OK);
	struct backend_out o = run(b, KV_OP_GET, "a", NULL, 0);
	CHECK(o.status == KV_OK && o.val_len == 2 && memcmp(outbuf, "41", 2) == 0);
	o = run(b, KV_OP_INCR, "a", NULL, 1);
	CHECK(o.status == KV_OK && o.val_len == 2 && memcmp(outbuf, "42", 2) == 0);
	o = run(b, KV_OP_GET, "a", NULL, 0);
	CHECK(o.status == KV_OK && memcmp(outbuf, "42", 2) == 0);
	CHECK(run(b, KV_OP_INCR, "zz", NULL, 1).status == KV_NOT_FOUND);
	CHECK(run(b, KV_OP_SET, "s", "x1", 0).status == KV_OK);
	CHECK(run(b, KV_OP_INCR, "s", NULL, 1).status == KV_ERR_OP);   /* not a number: OQB_ERROR */
	o = run(b, KV_OP_GET, "s", NULL, 0);
	CHECK(o.status == KV_OK && memcmp(outbuf, "x1", 2) == 0, "a failed incr changes nothing");
	CHECK(run(b, KV_OP_DEL, "a", NULL, 0).status == KV_OK);
	CHECK(run(b, KV_OP_DEL, "a", NULL, 0).status == KV_NOT_FOUND);
	for (int i = 0; i < 200; i++) {   /* chains longer than the 16 buckets */
		char k[16];
		snprintf(k, sizeof k, "k%d", i);
		CHECK(run(b, KV_OP_SET, k, k, 0).status == KV_OK);
	}
	o = run(b, KV_OP_GET, "k137", NULL, 0);
	CHECK(o.status == KV_OK && o.val_len == 4 && memcmp(outbuf, "k137", 4) == 0);
	json_t *st = plugin_backend_ops.stats_json(b);
	CHECK(json_integer_value(json_object_get(json_object_get(st, "engine"), "keys")) == 201);
	CHECK(json_integer_value(json_object_get(json_object_get(st, "status"), "error")) == 1);
	CHECK(strcmp(json_string_value(json_object_get(st, "plugin")), "example-kv") == 0);
	json_decref(st);
	plugin_backend_ops.close(b);
}

TEST(example_refusals)
{
	if (!find_example())
		SKIP("no example plugin in ../plugins next to this binary; make builds it");
	struct backend_conf c = { .kind = "plugin", .plugin_path = example, .workers = 1,
				  .plugin_options = "{\"buckets\": 1000}" };
	char err[1024];
	CHECK(!plugin_backend_ops.open(&c, err, sizeof err) &&
	      strstr(err, "(engine example-kv) failed to open: example-kv: option buckets: 1000 is not a power of two"),
	      "%s", err);
	c.plugin_options = "[1]";
	CHECK(!plugin_backend_ops.open(&c, err, sizeof err) && strstr(err, "expected a JSON object"), "%s", err);
	c.plugin_options = NULL;
	c.durable = 1;
	CHECK(!plugin_backend_ops.open(&c, err, sizeof err) && strstr(err, "does not declare OQB_CAP_DURABLE"),
	      "%s", err);
	c.durable = 0;
	struct backend *b = plugin_backend_ops.open(&c, err, sizeof err);
	REQUIRE(b, "%s", err);
	char longkey[300];
	memset(longkey, 'k', sizeof longkey - 1);
	longkey[sizeof longkey - 1] = '\0';
	CHECK(run(b, KV_OP_SET, longkey, "v", 0).status == KV_ERR_BAD);
	json_t *st = plugin_backend_ops.stats_json(b);
	CHECK(json_integer_value(json_object_get(st, "keys_refused")) == 1);
	json_decref(st);
	plugin_backend_ops.close(b);
}

UNIT_MAIN(table_checks, load_errors, example_through_adapter, example_refusals)
