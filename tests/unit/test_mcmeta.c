/*
 * test_mcmeta.c - memcached's meta protocol codec (bench/backends/mcmeta.c):
 * every reply kind, every malformed line, the key check and the encoders;
 * then the `memcached` back end against the packaged memcached, where it
 * is installed (skipped otherwise).
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "backend.h"
#include "mcmeta.h"

/* Parses s (all of it must be one reply); returns the parser's result. */
static long parse(const char *s, struct mcm_reply *r, char *why)
{
	return mcm_parse((const uint8_t *)s, strlen(s), r, why, 256);
}

static int msg_is(const struct mcm_reply *r, const char *want)
{
	return r->msg && r->msg_len == strlen(want) && memcmp(r->msg, want, r->msg_len) == 0;
}

TEST(every_reply_kind)
{
	static const struct { const char *s; enum mcm_kind k; } simple[] = {
		{ "HD\r\n", MCM_HD }, { "EN\r\n", MCM_EN }, { "NF\r\n", MCM_NF }, { "NS\r\n", MCM_NS },
		{ "EX\r\n", MCM_EX }, { "MN\r\n", MCM_MN }, { "ERROR\r\n", MCM_ERROR }, { "END\r\n", MCM_END },
	};
	struct mcm_reply r;
	char why[256];
	for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++) {
		long n = parse(simple[i].s, &r, why);
		CHECK(n == (long)strlen(simple[i].s) && r.kind == simple[i].k, "%s: n %ld kind %s", simple[i].s, n,
		      mcm_kind_name(r.kind));
		CHECK(!r.has_opaque);
	}
	CHECK(parse("NF O7\r\n", &r, why) == 7 && r.kind == MCM_NF && r.has_opaque && r.opaque_len == 1 &&
	      r.opaque[0] == '7');
	CHECK(parse("NS O123 k\r\n", &r, why) == 11 && r.kind == MCM_NS && r.opaque_len == 3);
	CHECK(parse("HD c5 t-1\r\n", &r, why) == 11 && r.kind == MCM_HD && !r.has_opaque);

	const char *va = "VA 3 O2\r\nabc\r\n";
	CHECK(parse(va, &r, why) == (long)strlen(va) && r.kind == MCM_VA && r.val_len == 3 &&
	      memcmp(r.val, "abc", 3) == 0 && r.opaque_len == 1 && r.opaque[0] == '2');
	CHECK(parse("VA 0\r\n\r\n", &r, why) == 8 && r.kind == MCM_VA && r.val_len == 0);
	/* a data block may hold \r\n and anything else */
	const char *bin = "VA 4\r\n\r\n\x01\x00\r\n";
	CHECK(mcm_parse((const uint8_t *)bin, 12, &r, why, sizeof why) == 12 && r.val_len == 4);

	CHECK(parse("CLIENT_ERROR bad data chunk\r\n", &r, why) > 0 && r.kind == MCM_CLIENT_ERROR &&
	      msg_is(&r, "bad data chunk"));
	CHECK(parse("SERVER_ERROR object too large for cache\r\n", &r, why) > 0 && r.kind == MCM_SERVER_ERROR &&
	      msg_is(&r, "object too large for cache"));
	CHECK(parse("SERVER_ERROR\r\n", &r, why) > 0 && r.kind == MCM_SERVER_ERROR && r.msg_len == 0);
	CHECK(parse("VERSION 1.6.18\r\n", &r, why) > 0 && r.kind == MCM_VERSION && msg_is(&r, "1.6.18"));
	CHECK(parse("STAT item_size_max 1048576\r\n", &r, why) > 0 && r.kind == MCM_STAT &&
	      msg_is(&r, "item_size_max") && r.val_len == 7 && memcmp(r.val, "1048576", 7) == 0);
	CHECK(parse("STAT inter NULL and more\r\n", &r, why) > 0 && r.val_len == 13, "a value with spaces");
	/* one reply at a time from a pipeline */
	const char *pipe = "NS O5\r\nMN\r\nVA 2\r\nhi\r\nEN\r\n";
	size_t off = 0;
	enum mcm_kind seq[] = { MCM_NS, MCM_MN, MCM_VA, MCM_EN };
	for (int i = 0; i < 4; i++) {
		long n = mcm_parse((const uint8_t *)pipe + off, strlen(pipe) - off, &r, why, sizeof why);
		REQUIRE(n > 0, "reply %d: %s", i, why);
		CHECK(r.kind == seq[i], "reply %d is %s", i, mcm_kind_name(r.kind));
		off += (size_t)n;
	}
	CHECK(off == strlen(pipe));
	CHECK(strcmp(mcm_kind_name(MCM_SERVER_ERROR), "SERVER_ERROR") == 0 && strcmp(mcm_kind_name(99), "?") == 0);
}

TEST(incomplete_replies_wait)
{
	struct mcm_reply r;
	char why[256];
	const char *parts[] = { "", "H", "HD", "HD\r", "VA 3\r\n", "VA 3\r\nab", "VA 3\r\nabc", "VA 3\r\nabc\r",
				"CLIENT_ERROR bad" };
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		CHECK(parse(parts[i], &r, why) == 0, "\"%s\" is only a start", parts[i]);
}

TEST(malformed_lines)
{
	static const struct { const char *s; const char *why; } bad[] = {
		{ "HD\n", "without \\r" },                       /* missing \r */
		{ "\n", "without \\r" },
		{ "XX\r\n", "unknown reply" },
		{ "hd\r\n", "unknown reply" },
		{ "HDX\r\n", "unknown reply" },
		{ "MN O1\r\n", "unknown reply" },
		{ "END x\r\n", "unknown reply" },
		{ "VERSION\r\n", "unknown reply" },
		{ "HD  O1\r\n", "empty flag" },
		{ "HD \r\n", "empty flag" },
		{ "NF 7\r\n", "does not start with a letter" },
		{ "HD O123456789012345678901234567890123\r\n", "longer than" },
		{ "HD\tO1\r\n", "control byte" },
		{ "EN\x01\r\n", "control byte" },
		{ "VA\r\n", "data length" },
		{ "VA x\r\nabc\r\n", "data length" },
		{ "VA -3\r\nabc\r\n", "data length" },
		{ "VA +3\r\nabc\r\n", "data length" },
		{ "VA 99999999999\r\n", "data length" },
		{ "VA 4294967296\r\n", "data length" },
		{ "VA 1073741825\r\n", "data length" },
		{ "VA 3\r\nabcd\r\n", "not followed by \\r\\n" },   /* block longer than declared */
		{ "VA 3\r\nab\r\n\r\n", "not followed by \\r\\n" }, /* shorter */
		{ "VA 3\r\nabcXY", "not followed by \\r\\n" },
		{ "STAT\r\n", "STAT line" },
		{ "STAT name\r\n", "STAT line" },
	};
	struct mcm_reply r;
	char why[256];
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why[0] = '\0';
		long n = parse(bad[i].s, &r, why);
		CHECK(n == -1 && strstr(why, bad[i].why), "case %zu: n %ld, why \"%s\", wanted \"%s\"", i, n, why,
		      bad[i].why);
	}
	/* an overlong line: no \n within MCM_LINE_MAX bytes */
	static char big[MCM_LINE_MAX + 10];
	memset(big, 'A', sizeof big);
	CHECK(mcm_parse((const uint8_t *)big, sizeof big, &r, why, sizeof why) == -1 && strstr(why, "longer than"));
	CHECK(mcm_parse((const uint8_t *)big, MCM_LINE_MAX - 1, &r, why, sizeof why) == 0, "short of the limit: wait");
	/* a tiny reason buffer still gets a terminated message */
	char small[8];
	CHECK(mcm_parse((const uint8_t *)"ZZ\r\n", 4, &r, small, sizeof small) == -1 && strlen(small) < sizeof small);
}

TEST(key_check)
{
	CHECK(mcm_key_check((const uint8_t *)"user123", 7) == NULL);
	CHECK(mcm_key_check((const uint8_t *)"", 0) != NULL);
	CHECK(mcm_key_check((const uint8_t *)"a b", 3) != NULL);
	CHECK(mcm_key_check((const uint8_t *)"a\nb", 3) != NULL);
	CHECK(mcm_key_check((const uint8_t *)"a\x7f", 2) != NULL);
	CHECK(mcm_key_check((const uint8_t *)"\xc3\xa9t\xc3\xa9", 5) == NULL, "bytes >= 0x80 are taken as they are");
	uint8_t k[MCM_KEY_MAX + 1];
	memset(k, 'k', sizeof k);
	CHECK(mcm_key_check(k, MCM_KEY_MAX) == NULL);
	CHECK(mcm_key_check(k, MCM_KEY_MAX + 1) != NULL);
}

TEST(encoders)
{
	char b[512];
	size_t n = mcm_enc_set(b, sizeof b, (const uint8_t *)"k1", 2, 3, 1, 42);
	CHECK(n == strlen("ms k1 3 q O42\r\n") && memcmp(b, "ms k1 3 q O42\r\n", n) == 0, "%.*s", (int)n, b);
	n = mcm_enc_set(b, sizeof b, (const uint8_t *)"k1", 2, 0, 0, 0);
	CHECK(n == 9 && memcmp(b, "ms k1 0\r\n", n) == 0);
	n = mcm_enc_del(b, sizeof b, (const uint8_t *)"k2", 2, 1, 7);
	CHECK(n == 12 && memcmp(b, "md k2 q O7\r\n", n) == 0, "%.*s", (int)n, b);
	n = mcm_enc_get(b, sizeof b, (const uint8_t *)"k3", 2, 18446744073709551615ull);
	CHECK(n && memcmp(b, "mg k3 v O18446744073709551615\r\n", n) == 0, "%.*s", (int)n, b);
	n = mcm_enc_incr(b, sizeof b, (const uint8_t *)"k4", 2, 5, 1);
	CHECK(n && memcmp(b, "ma k4 v D5 O1\r\n", n) == 0, "%.*s", (int)n, b);
	CHECK(mcm_enc_noop(b, sizeof b) == 4 && memcmp(b, "mn\r\n", 4) == 0);
	CHECK(mcm_enc_noop(b, 3) == 0);
	CHECK(mcm_enc_set(b, 10, (const uint8_t *)"k1", 2, 3, 1, 42) == 0, "does not fit");
	CHECK(mcm_enc_get(b, sizeof b, (const uint8_t *)"a b", 3, 1) == 0, "refused key");
}

/* ---- the back end against a real memcached ---- */

static uint8_t out[KV_MAX_VALUE];

static struct backend_out run(struct backend *b, unsigned op, const char *key, const char *val, uint64_t aux,
			      int async)
{
	struct backend_req r = { .op = op, .key = (const uint8_t *)key, .key_len = (uint32_t)strlen(key),
				 .val = (const uint8_t *)val, .val_len = val ? (uint32_t)strlen(val) : 0,
				 .aux = aux, .async = async };
	struct backend_out o = { .status = 99, .val = out, .val_cap = sizeof out };
	memcached_backend_ops.exec(b, &r, &o);
	return o;
}

static int have_memcached(void)
{
	return access("/usr/bin/memcached", X_OK) == 0 || access("/usr/local/bin/memcached", X_OK) == 0;
}

TEST(backend_live)
{
	if (!have_memcached())
		SKIP("memcached is not installed (make deps installs it)");
	struct backend_conf c = { .kind = "memcached", .set.memory_mb = 16, .set.max_item_mb = 1, .set.memcached_threads = 1,
				  .workers = 1, .worker = 0 };
	char err[2048];
	struct backend *b = memcached_backend_ops.open(&c, err, sizeof err);
	REQUIRE(b, "%s", err);
	CHECK(run(b, KV_OP_GET, "nokey", NULL, 0, 0).status == KV_NOT_FOUND);
	CHECK(run(b, KV_OP_SET, "k1", "abc", 0, 0).status == KV_OK);
	struct backend_out o = run(b, KV_OP_GET, "k1", NULL, 0, 0);
	CHECK(o.status == KV_OK && o.val_len == 3 && memcmp(out, "abc", 3) == 0);
	/* quiet, not waited for, then seen in order by a get */
	for (int i = 0; i < 500; i++) {
		char v[16];
		snprintf(v, sizeof v, "v%d", i);
		CHECK(run(b, KV_OP_SET, "k2", v, 0, 1).status == KV_OK);
	}
	o = run(b, KV_OP_GET, "k2", NULL, 0, 0);
	CHECK(o.status == KV_OK && o.val_len == 4 && memcmp(out, "v499", 4) == 0, "%.*s", (int)o.val_len, out);
	CHECK(run(b, KV_OP_DEL, "k2", NULL, 0, 0).status == KV_OK);
	CHECK(run(b, KV_OP_DEL, "k2", NULL, 0, 0).status == KV_NOT_FOUND);
	CHECK(run(b, KV_OP_DEL, "k2", NULL, 0, 1).status == KV_OK, "async: not waited for");
	CHECK(run(b, KV_OP_INCR, "n", NULL, 5, 0).status == KV_NOT_FOUND);
	CHECK(run(b, KV_OP_SET, "n", "10", 0, 1).status == KV_OK);
	o = run(b, KV_OP_INCR, "n", NULL, 5, 0);
	CHECK(o.status == KV_OK && o.val_len == 2 && memcmp(out, "15", 2) == 0);
	CHECK(run(b, KV_OP_INCR, "k1", NULL, 1, 0).status == KV_ERR_OP, "not a number");
	CHECK(run(b, KV_OP_SET, "bad key", "x", 0, 0).status == KV_ERR_BAD);
	CHECK(run(b, KV_OP_ECHO, "e", "hello", 0, 0).status == KV_OK);
	/* too large for -I 1m: memcached's SERVER_ERROR, attributed */
	static char big[1100000];
	memset(big, 'x', sizeof big - 1);
	CHECK(run(b, KV_OP_SET, "big", big, 0, 0).status == KV_ERR_NOSPACE);
	CHECK(run(b, KV_OP_SET, "big", big, 0, 1).status == KV_OK, "async: committed before");
	CHECK(run(b, KV_OP_GET, "k1", NULL, 0, 0).status == KV_OK, "the stream is still in step");
	json_t *j = memcached_backend_ops.stats_json(b);
	REQUIRE(j);
	CHECK(json_integer_value(json_object_get(j, "keys_refused")) == 1);
	CHECK(json_integer_value(json_object_get(json_object_get(j, "failed"), "SERVER_ERROR")) == 2);
	CHECK(json_integer_value(json_object_get(j, "del_not_found")) == 2, "one waited for, one not");
	CHECK(json_integer_value(json_object_get(j, "pipelined_max")) <= 64);
	json_t *mc = json_object_get(j, "memcached");
	CHECK(mc && strncmp(json_string_value(json_object_get(mc, "version")), "1.", 2) == 0);
	CHECK(json_object_get(json_object_get(mc, "settings"), "item_size_max") != NULL);
	CHECK(memcached_backend_ops.fatal(b) == NULL);
	json_decref(j);
	memcached_backend_ops.close(b);

	/* a binary that is not there: a clear error */
	c.set.memcached_path = "/nonexistent/memcached";
	CHECK(memcached_backend_ops.open(&c, err, sizeof err) == NULL && strstr(err, "memcached_path"), "%s", err);
	c.set.memcached_path = NULL;
	c.set.max_item_mb = 16;   /* more than half of 16 MiB */
	CHECK(memcached_backend_ops.open(&c, err, sizeof err) == NULL && strstr(err, "max_item_mb"), "%s", err);
}

UNIT_MAIN(every_reply_kind, incomplete_replies_wait, malformed_lines, key_check, encoders, backend_live)
