/*
 * test_backend_null.c - the back-end registry and the `null` back end:
 * lookup by name, op semantics, service-time draws and counters.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "backend.h"

static uint8_t outbuf[KV_MAX_VALUE];

static struct backend_out run(const struct backend_ops *ops, struct backend *b, unsigned op,
			      const char *key, const void *val, uint32_t vlen, uint64_t aux)
{
	struct backend_req r = {
		.op = op, .key = (const uint8_t *)key, .key_len = key ? (uint32_t)strlen(key) : 0,
		.val = val, .val_len = vlen, .aux = aux,
	};
	struct backend_out o = { .status = 99, .val = outbuf, .val_cap = sizeof outbuf, .val_len = 999 };
	ops->exec(b, &r, &o);
	return o;
}

TEST(registry)
{
	const struct backend_ops *n = backend_find("null"), *c = backend_find("cache");
	REQUIRE(n && c);
	CHECK(strcmp(n->name, "null") == 0 && n == &null_backend_ops);
	CHECK(strcmp(c->name, "cache") == 0 && c == &cache_backend_ops);
	CHECK(n->version == BACKEND_OPS_VERSION && c->version == BACKEND_OPS_VERSION);
	CHECK(n->open && n->exec && n->stats_json && n->close);
	CHECK(backend_find("nope") == NULL);
	CHECK(backend_find("") == NULL);
	CHECK(backend_find("NULL") == NULL, "names are exact");
	CHECK(backend_find(NULL) == NULL);
	const char *names = backend_names();
	REQUIRE(names);
	CHECK(strncmp(names, "null,cache", 10) == 0, "backend_names() = \"%s\"", names);
	CHECK(backend_names() == names, "one stable string");
	/* Every listed name can be found. */
	char buf[256];
	snprintf(buf, sizeof buf, "%s", names);
	for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		CHECK(backend_find(t) != NULL, "listed backend \"%s\" not found", t);
}

TEST(null_semantics)
{
	const struct backend_ops *ops = &null_backend_ops;
	struct backend_conf c = { .kind = "null" };
	char err[128];
	struct backend *b = ops->open(&c, err, sizeof err);
	REQUIRE(b, "%s", err);

	struct backend_out o = run(ops, b, KV_OP_GET, "k", NULL, 0, 0);
	CHECK(o.status == KV_OK && o.val_len == 0, "get: ok and empty");
	o = run(ops, b, KV_OP_SET, "k", "value", 5, 0);
	CHECK(o.status == KV_OK && o.val_len == 0);
	o = run(ops, b, KV_OP_GET, "k", NULL, 0, 0);
	CHECK(o.status == KV_OK && o.val_len == 0, "null stores nothing");
	o = run(ops, b, KV_OP_DEL, "k", NULL, 0, 0);
	CHECK(o.status == KV_OK && o.val_len == 0);
	o = run(ops, b, KV_OP_NOP, NULL, NULL, 0, 0);
	CHECK(o.status == KV_OK && o.val_len == 0);
	o = run(ops, b, KV_OP_ECHO, "k", "hello world", 11, 0);
	CHECK(o.status == KV_OK && o.val_len == 11 && memcmp(outbuf, "hello world", 11) == 0);
	o = run(ops, b, KV_OP_INCR, "k", NULL, 0, 12345678901ull);
	CHECK(o.status == KV_OK && o.val_len == 11 && memcmp(outbuf, "12345678901", 11) == 0);
	o = run(ops, b, KV_OP_INCR, "k", NULL, 0, 0);
	CHECK(o.status == KV_OK && o.val_len == 1 && outbuf[0] == '0');
	o = run(ops, b, KV_OP_MAX_, "k", NULL, 0, 0);
	CHECK(o.status == KV_ERR_OP && o.val_len == 0);

	/* A 1 MiB echo fits the documented buffer; a small buffer is refused. */
	uint8_t *big = malloc(KV_MAX_VALUE);
	REQUIRE(big);
	memset(big, 0x5A, KV_MAX_VALUE);
	o = run(ops, b, KV_OP_ECHO, "k", big, KV_MAX_VALUE, 0);
	CHECK(o.status == KV_OK && o.val_len == KV_MAX_VALUE && outbuf[KV_MAX_VALUE - 1] == 0x5A);
	struct backend_req r = { .op = KV_OP_ECHO, .val = big, .val_len = 10 };
	uint8_t small[4] = { 1, 2, 3, 4 };
	struct backend_out o2 = { .val = small, .val_cap = sizeof small };
	ops->exec(b, &r, &o2);
	CHECK(o2.status == KV_ERR_NOSPACE && o2.val_len == 10 && small[0] == 1);
	free(big);

	json_t *j = ops->stats_json(b);
	REQUIRE(j);
	json_t *jo = json_object_get(j, "ops");
	CHECK(json_integer_value(json_object_get(jo, "get")) == 2);
	CHECK(json_integer_value(json_object_get(jo, "set")) == 1);
	CHECK(json_integer_value(json_object_get(jo, "echo")) == 3);
	CHECK(json_integer_value(json_object_get(jo, "incr")) == 2);
	CHECK(json_integer_value(json_object_get(jo, "unsupported")) == 1);
	CHECK(json_integer_value(json_object_get(j, "service_ns_total")) == 0);
	CHECK(strcmp(json_string_value(json_object_get(j, "backend")), "null") == 0);
	json_decref(j);
	ops->close(b);
}

static json_int_t stat_of(const struct backend_ops *ops, struct backend *b, const char *key)
{
	json_t *j = ops->stats_json(b);
	json_int_t v = json_integer_value(json_object_get(j, key));
	json_decref(j);
	return v;
}

/* Spends ops requests on b and returns the drawn service time in total. */
static json_int_t spend(struct backend *b, int ops)
{
	for (int i = 0; i < ops; i++)
		run(&null_backend_ops, b, KV_OP_SET, "k", "v", 1, 0);
	return stat_of(&null_backend_ops, b, "service_ns_drawn");
}

TEST(fixed_service_time)
{
	struct backend_conf c = { .kind = "null", .set.service_ns = 20000 };
	char err[128];
	struct backend *b = null_backend_ops.open(&c, err, sizeof err);
	REQUIRE(b, "%s", err);
	CHECK(spend(b, 50) == 50 * 20000);
	/* A busy-wait lasts at least as long as asked (a lower bound only:
	 * this machine is shared, so no upper bound is asserted). */
	CHECK(stat_of(&null_backend_ops, b, "service_ns_total") >= 50 * 20000);
	null_backend_ops.close(b);
}

TEST(exponential_service_time)
{
	struct backend_conf c = { .kind = "null", .set.service_ns = 2000, .set.service_dist = 1,
				  .seed = 42, .worker = 3 };
	char err[128];
	const int n = 20000;
	struct backend *b1 = null_backend_ops.open(&c, err, sizeof err);
	struct backend *b2 = null_backend_ops.open(&c, err, sizeof err);
	c.worker = 4;
	struct backend *b3 = null_backend_ops.open(&c, err, sizeof err);
	REQUIRE(b1 && b2 && b3);
	json_int_t d1 = spend(b1, n), d2 = spend(b2, n), d3 = spend(b3, n);
	/* Mean within 5 % (the standard error is 0.7 % at n = 20000). */
	CHECK_NEAR((double)d1 / n, 2000.0, 100.0);
	CHECK(d1 == d2, "same seed and worker, same draws");
	CHECK(d1 != d3, "another worker draws another sequence");
	CHECK(stat_of(&null_backend_ops, b1, "service_ns_total") >= d1);
	null_backend_ops.close(b1);
	null_backend_ops.close(b2);
	null_backend_ops.close(b3);
}

TEST(instances_via_registry)
{
	/* Each registered back end opens with a zeroed config (plus its
	 * kind) and answers a nop. */
	const char *list[] = { "null", "cache" };
	for (size_t i = 0; i < 2; i++) {
		const struct backend_ops *ops = backend_find(list[i]);
		REQUIRE(ops);
		struct backend_conf c = { .kind = list[i] };
		char err[256] = "";
		struct backend *b = ops->open(&c, err, sizeof err);
		REQUIRE(b, "%s: %s", list[i], err);
		struct backend_out o = run(ops, b, KV_OP_NOP, NULL, NULL, 0, 0);
		CHECK(o.status == KV_OK && o.val_len == 0, "%s nop", list[i]);
		json_t *j = ops->stats_json(b);
		CHECK(j && strcmp(json_string_value(json_object_get(j, "backend")), list[i]) == 0);
		json_decref(j);
		ops->close(b);
	}
}

UNIT_MAIN(registry, null_semantics, fixed_service_time, exponential_service_time,
	  instances_via_registry)
