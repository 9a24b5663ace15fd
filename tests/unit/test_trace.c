/*
 * test_trace.c - the Twitter trace reader (plain, zstd by magic bytes,
 * multi-frame, truncated, malformed lines with line numbers, skip mode,
 * over-long lines) and the `trace` generator (replay stride across threads,
 * loop, op mapping and flags, errors at run time, model fit).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <inttypes.h>
#include <zstd.h>
#include <jansson.h>

#include "unit.h"
#include "gen.h"
#include "trace.h"
#include "twitter.h"
#include "rng.h"

static char tdir[512];

/* A fresh directory under $TMPDIR (or the C library's default). */
static const char *tmpdir(void)
{
	const char *base = getenv("TMPDIR");

	if (!tdir[0]) {
		snprintf(tdir, sizeof tdir, "%s/oqbtrace-XXXXXX", base && *base ? base : P_tmpdir);
		if (!mkdtemp(tdir))
			tdir[0] = '\0';
	}
	return tdir;
}

static void tpath(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", tmpdir(), name);
}

static int write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	if (fwrite(data, 1, n, f) != n) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

/* Compresses text as `frames` independent zstd frames into path. */
static int write_zstd(const char *path, const char *text, size_t n, int frames)
{
	FILE *f = fopen(path, "wb");
	size_t per = n / (size_t)frames + 1, off = 0;
	int rc = 0;

	if (!f)
		return -1;
	while (off < n) {
		size_t len = n - off < per ? n - off : per;
		size_t cap = ZSTD_compressBound(len);
		void *z = malloc(cap);
		size_t zn = ZSTD_compress(z, cap, text + off, len, 3);
		if (ZSTD_isError(zn) || fwrite(z, 1, zn, f) != zn)
			rc = -1;
		free(z);
		off += len;
	}
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

static const char good[] =
	"0,k:1:abc,9,100,7,get,0\n"
	"1,weird,key,with,commas,22,50,8,set,300\r\n"
	"\n"
	"2,nz:u:X,6,0,7,cas,0\n"
	"3,a,1,0,9,delete,0\n"
	"4,b,1,0,9,decr,0";                   /* no final newline */

TEST(parse_good_lines)
{
	char p[600], err[512];
	struct trace_rec r;
	struct trace_reader *t;

	tpath(p, sizeof p, "good.csv");
	REQUIRE(write_file(p, good, strlen(good)) == 0);
	t = trace_open(p, 0, err, sizeof err);
	REQUIRE(t, "%s", err);
	CHECK(!trace_is_zstd(t));
	REQUIRE(trace_next(t, &r, err, sizeof err) == 1, "%s", err);
	CHECK(r.ts == 0 && strcmp(r.key, "k:1:abc") == 0 && r.key_len == 7 && r.key_size == 9 &&
	      r.value_size == 100 && r.client == 7 && r.op == TRACE_GET && r.ttl == 0);
	REQUIRE(trace_next(t, &r, err, sizeof err) == 1, "%s", err);
	CHECK(strcmp(r.key, "weird,key,with,commas") == 0, "%s", r.key);
	CHECK(r.key_size == 22 && r.value_size == 50 && r.client == 8 && r.op == TRACE_SET && r.ttl == 300);
	REQUIRE(trace_next(t, &r, err, sizeof err) == 1, "%s", err);
	CHECK(r.op == TRACE_CAS && trace_line(t) == 4);
	REQUIRE(trace_next(t, &r, err, sizeof err) == 1, "%s", err);
	CHECK(r.op == TRACE_DELETE);
	REQUIRE(trace_next(t, &r, err, sizeof err) == 1, "%s", err);
	CHECK(r.op == TRACE_DECR && r.ts == 4 && strcmp(r.key, "b") == 0);
	CHECK(trace_next(t, &r, err, sizeof err) == 0);
	CHECK(trace_next(t, &r, err, sizeof err) == 0);
	REQUIRE(trace_rewind(t, err, sizeof err) == 0, "%s", err);
	REQUIRE(trace_next(t, &r, err, sizeof err) == 1);
	CHECK(r.ts == 0 && trace_line(t) == 1);
	trace_close(t);
}

TEST(op_table)
{
	static const struct { enum trace_op op; unsigned wire, flags; } want[] = {
		{ TRACE_GET, KV_OP_GET, 0 }, { TRACE_GETS, KV_OP_GET, 0 },
		{ TRACE_SET, KV_OP_SET, KV_F_NILEXT }, { TRACE_ADD, KV_OP_SET, 0 },
		{ TRACE_REPLACE, KV_OP_SET, 0 }, { TRACE_CAS, KV_OP_SET, 0 },
		{ TRACE_APPEND, KV_OP_SET, 0 }, { TRACE_PREPEND, KV_OP_SET, 0 },
		{ TRACE_DELETE, KV_OP_DEL, KV_F_NILEXT },
		{ TRACE_INCR, KV_OP_INCR, KV_F_NONIDEMP }, { TRACE_DECR, KV_OP_INCR, KV_F_NONIDEMP },
	};

	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		unsigned fl = 99;
		const char *name = trace_op_name(want[i].op);
		CHECK(trace_op_kv(want[i].op, &fl) == want[i].wire, "%s", name);
		CHECK(fl == want[i].flags, "%s flags %u", name, fl);
		CHECK(trace_op_parse(name, strlen(name)) == (int)want[i].op);
		CHECK(trace_op_nilext(want[i].op) == !!(want[i].flags & KV_F_NILEXT));
	}
	CHECK(trace_op_parse("GET", 3) == -1);
	CHECK(trace_op_parse("getx", 4) == -1);
}

TEST(malformed_lines_name_file_and_line)
{
	static const struct { const char *line, *what; } bad[] = {
		{ "1,a,1,1,1,get", "6 fields" },
		{ "x,a,1,1,1,get,0", "timestamp" },
		{ "1.5,a,1,1,1,get,0", "timestamp" },
		{ "1,,1,1,1,get,0", "key is empty" },
		{ "1,a,-1,1,1,get,0", "key size" },
		{ "1,a,1,99999999999,1,get,0", "value size" },
		{ "1,a,1,1,c7,get,0", "client id" },
		{ "1,a,1,1,1,fetch,0", "unknown operation \"fetch\"" },
		{ "1,a,1,1,1,set,", "TTL" },
	};
	char p[600], err[512], text[256];
	struct trace_rec r;

	tpath(p, sizeof p, "bad.csv");
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct trace_reader *t;
		char want[700];
		snprintf(text, sizeof text, "0,ok,2,1,1,get,0\n\n%s\n", bad[i].line);
		REQUIRE(write_file(p, text, strlen(text)) == 0);
		t = trace_open(p, 0, err, sizeof err);
		REQUIRE(t, "%s", err);
		CHECK(trace_next(t, &r, err, sizeof err) == 1);
		CHECK(trace_next(t, &r, err, sizeof err) == -1, "%s", bad[i].line);
		snprintf(want, sizeof want, "%s:3: ", p);
		CHECK(strncmp(err, want, strlen(want)) == 0, "%s", err);
		CHECK(strstr(err, bad[i].what) != NULL, "%s (wanted %s)", err, bad[i].what);
		CHECK(strstr(err, "skip_malformed") != NULL, "%s", err);
		trace_close(t);
	}
	/* A key longer than memcached's 250 bytes. */
	{
		char line[400];
		struct trace_reader *t;
		memset(line, 'k', sizeof line);
		memcpy(line, "0,", 2);
		snprintf(line + 253, sizeof line - 253, ",251,1,1,get,0\n");
		REQUIRE(write_file(p, line, strlen(line)) == 0);
		t = trace_open(p, 0, err, sizeof err);
		REQUIRE(t, "%s", err);
		CHECK(trace_next(t, &r, err, sizeof err) == -1);
		CHECK(strstr(err, "longer than 250") != NULL, "%s", err);
		trace_close(t);
	}
}

TEST(skip_mode_counts)
{
	const char text[] = "0,a,1,1,1,get,0\nbroken\n1,b,1,1,1,set,5\n2,c,1,1,1,nope,0\n3,d,1,1,1,get,0\n";
	char p[600], err[512];
	struct trace_rec r;
	struct trace_reader *t;
	int n = 0;

	tpath(p, sizeof p, "skip.csv");
	REQUIRE(write_file(p, text, strlen(text)) == 0);
	t = trace_open(p, 1, err, sizeof err);
	REQUIRE(t, "%s", err);
	while (trace_next(t, &r, err, sizeof err) == 1)
		n++;
	CHECK(n == 3);
	CHECK(trace_skipped(t) == 2);
	CHECK(strstr(trace_first_skip(t), ":2: 1 fields") != NULL, "%s", trace_first_skip(t));
	trace_close(t);
}

TEST(line_too_long)
{
	size_t n = TRACE_LINE_MAX + 100;
	char *text = malloc(n + 64);
	char p[600], err[512];
	struct trace_rec r;
	struct trace_reader *t;

	REQUIRE(text);
	memset(text, 'x', n);
	text[n] = '\n';
	strcpy(text + n + 1, "5,a,1,1,1,get,0\n");
	tpath(p, sizeof p, "long.csv");
	REQUIRE(write_file(p, text, strlen(text)) == 0);
	t = trace_open(p, 0, err, sizeof err);
	REQUIRE(t, "%s", err);
	CHECK(trace_next(t, &r, err, sizeof err) == -1);
	CHECK(strstr(err, ":1: line longer than") != NULL, "%s", err);
	trace_close(t);
	t = trace_open(p, 1, err, sizeof err);
	REQUIRE(t, "%s", err);
	CHECK(trace_next(t, &r, err, sizeof err) == 1, "%s", err);
	CHECK(r.ts == 5 && trace_line(t) == 2 && trace_skipped(t) == 1);
	trace_close(t);
	free(text);
}

/* A trace big enough to cross every buffer boundary several times. */
static char *big_trace(size_t lines, size_t *len)
{
	size_t cap = lines * 80 + 1, n = 0;
	char *s = malloc(cap);

	for (size_t i = 0; s && i < lines; i++)
		n += (size_t)snprintf(s + n, cap - n, "%zu,key%zu:%zx,%d,%zu,%zu,%s,%d\n", i / 100, i * 7919 % 5003,
				      i, 12, i % 2000, i % 13, i % 3 ? "get" : "set", i % 3 ? 0 : 60);
	*len = n;
	return s;
}

static uint64_t digest(struct trace_reader *t, uint64_t *count)
{
	struct trace_rec r;
	char err[512];
	uint64_t h = 1469598103934665603ull;
	int k;

	*count = 0;
	while ((k = trace_next(t, &r, err, sizeof err)) == 1) {
		h = (h ^ r.ts ^ (r.value_size << 20) ^ ((uint64_t)r.op << 40) ^ (r.client << 44)) * 1099511628211ull;
		for (unsigned i = 0; i < r.key_len; i++)
			h = (h ^ (unsigned char)r.key[i]) * 1099511628211ull;
		(*count)++;
	}
	return k < 0 ? 0 : h;
}

TEST(zstd_detected_by_magic_and_streamed)
{
	size_t len;
	char *text = big_trace(60000, &len);
	char plain[600], z1[600], z3[600], err[512];
	uint64_t n1, n2, n3, h1, h2, h3;
	struct trace_reader *t;

	REQUIRE(text);
	tpath(plain, sizeof plain, "big.zst");              /* plain text with a .zst name */
	tpath(z1, sizeof z1, "big-one-frame.csv");          /* zstd with a .csv name */
	tpath(z3, sizeof z3, "big-three-frames.csv.zst");
	REQUIRE(write_file(plain, text, len) == 0);
	REQUIRE(write_zstd(z1, text, len, 1) == 0);
	REQUIRE(write_zstd(z3, text, len, 3) == 0);

	t = trace_open(plain, 0, err, sizeof err);
	REQUIRE(t, "%s", err);
	CHECK(!trace_is_zstd(t));
	h1 = digest(t, &n1);
	trace_close(t);
	t = trace_open(z1, 0, err, sizeof err);
	REQUIRE(t, "%s", err);
	CHECK(trace_is_zstd(t));
	h2 = digest(t, &n2);
	/* rewind works on compressed input too */
	REQUIRE(trace_rewind(t, err, sizeof err) == 0, "%s", err);
	CHECK(digest(t, &n3) == h2);
	trace_close(t);
	t = trace_open(z3, 0, err, sizeof err);
	REQUIRE(t, "%s", err);
	h3 = digest(t, &n3);
	trace_close(t);
	CHECK(n1 == 60000 && n2 == 60000 && n3 == 60000, "%llu %llu %llu",
	      (unsigned long long)n1, (unsigned long long)n2, (unsigned long long)n3);
	CHECK(h1 != 0 && h1 == h2 && h2 == h3);
	free(text);
}

TEST(truncated_and_corrupt_zstd)
{
	size_t len;
	char *text = big_trace(20000, &len);
	char z[600], cut[600], err[512];
	struct trace_reader *t;
	uint64_t n;
	FILE *f;
	char *buf;
	long zn;

	REQUIRE(text);
	tpath(z, sizeof z, "t.zst");
	tpath(cut, sizeof cut, "cut.zst");
	REQUIRE(write_zstd(z, text, len, 1) == 0);
	f = fopen(z, "rb");
	REQUIRE(f);
	fseek(f, 0, SEEK_END);
	zn = ftell(f);
	rewind(f);
	buf = malloc((size_t)zn);
	REQUIRE(buf && fread(buf, 1, (size_t)zn, f) == (size_t)zn);
	fclose(f);
	REQUIRE(write_file(cut, buf, (size_t)zn / 2) == 0);
	t = trace_open(cut, 0, err, sizeof err);
	REQUIRE(t, "%s", err);
	CHECK(digest(t, &n) == 0);
	{
		struct trace_rec r;
		CHECK(trace_next(t, &r, err, sizeof err) == -1);
		CHECK(strstr(err, "truncated zstd") != NULL, "%s", err);
	}
	trace_close(t);
	/* Flip bytes in the middle: an error, never a crash. */
	for (long i = zn / 3; i < zn / 3 + 16; i++)
		buf[i] ^= 0x5a;
	REQUIRE(write_file(cut, buf, (size_t)zn) == 0);
	t = trace_open(cut, 1, err, sizeof err);
	REQUIRE(t, "%s", err);
	{
		struct trace_rec r;
		int k;
		while ((k = trace_next(t, &r, err, sizeof err)) == 1)
			;
		CHECK(k == -1);
		CHECK(strstr(err, "zstd") != NULL, "%s", err);
	}
	trace_close(t);
	free(buf);
	free(text);
	CHECK(trace_open("no/such/file.csv", 0, err, sizeof err) == NULL);
	CHECK(strstr(err, "no/such/file.csv") != NULL, "%s", err);
}

/* ------------------------------------------------------ trace generator */

static struct gen *open_replay(const char *path, const char *extra, unsigned thread, unsigned nthreads,
			       char *err, size_t errlen)
{
	char spec[1200];
	json_error_t e;
	json_t *j;
	struct gen *g;
	struct gen_ctx c = { .seed = 1, .nprocesses = 1, .thread = thread, .nthreads = nthreads };

	snprintf(spec, sizeof spec, "{\"kind\":\"trace\",\"path\":\"%s\"%s}", path, extra);
	j = json_loads(spec, 0, &e);
	if (!j) {
		snprintf(err, errlen, "bad test JSON: %s", e.text);
		return NULL;
	}
	g = gen_trace_ops.open(j, &c, err, errlen);
	json_decref(j);
	return g;
}

TEST(replay_stride_loop_and_ops)
{
	char p[600], err[2048], text[4096];
	size_t n = 0;
	struct gen_op op;

	for (int i = 0; i < 10; i++)
		n += (size_t)snprintf(text + n, sizeof text - n, "%d,key%d,5,%d,%d,%s,0\n", i, i, 10 + i, i % 4,
				      i == 3 ? "cas" : i == 4 ? "delete" : i == 5 ? "decr" : i % 2 ? "get" : "set");
	tpath(p, sizeof p, "replay.csv");
	REQUIRE(write_file(p, text, n) == 0);

	/* Thread 1 of 3 takes lines 2, 5, 8 (keys 1, 4, 7), then loops. */
	struct gen *g = open_replay(p, "", 1, 3, err, sizeof err);
	REQUIRE(g, "%s", err);
	static const char *const want[] = { "key1", "key4", "key7", "key1", "key4", "key7", "key1" };
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		REQUIRE(gen_trace_ops.next(g, &op) == 0, "%s", gen_trace_ops.error(g));
		CHECK(strcmp(op.key, want[i]) == 0, "step %zu: %s", i, op.key);
		if (strcmp(op.key, "key1") == 0)
			CHECK(op.op == KV_OP_GET && op.val_len == 0 && op.flags == 0);
		if (strcmp(op.key, "key4") == 0)
			CHECK(op.op == KV_OP_DEL && op.flags == KV_F_NILEXT);
		if (strcmp(op.key, "key7") == 0)
			CHECK(op.op == KV_OP_GET);
	}
	{
		json_t *d = gen_trace_ops.describe(g);
		CHECK(json_integer_value(json_object_get(d, "passes")) == 3);
		CHECK(json_integer_value(json_object_get(d, "requests")) == 7);
		json_decref(d);
	}
	gen_trace_ops.close(g);

	/* Thread 0 of 2, no loop: lines 1,3,5,7,9, then exhausted. */
	g = open_replay(p, ",\"loop\":false", 0, 2, err, sizeof err);
	REQUIRE(g, "%s", err);
	for (int i = 0; i < 5; i++) {
		REQUIRE(gen_trace_ops.next(g, &op) == 0);
		CHECK(op.key[3] == '0' + 2 * i, "%s", op.key);
		if (i == 0)
			CHECK(op.op == KV_OP_SET && op.val_len == 10 && op.flags == KV_F_NILEXT);
		if (i == 2)
			CHECK(op.op == KV_OP_DEL && op.flags == KV_F_NILEXT);
	}
	CHECK(gen_trace_ops.next(g, &op) == 1);
	gen_trace_ops.close(g);

	/* cas is a SET without the nilext flag; decr an INCR of -1. */
	g = open_replay(p, ",\"loop\":false", 0, 1, err, sizeof err);
	REQUIRE(g, "%s", err);
	for (int i = 0; i < 10; i++) {
		REQUIRE(gen_trace_ops.next(g, &op) == 0);
		if (i == 3)
			CHECK(op.op == KV_OP_SET && op.flags == 0 && op.val_len == 13);
		if (i == 5)
			CHECK(op.op == KV_OP_INCR && op.aux == UINT64_MAX && op.flags == KV_F_NONIDEMP);
	}
	CHECK(gen_trace_ops.next(g, &op) == 1);
	gen_trace_ops.close(g);

	/* More threads than lines: an error at open that says what to do. */
	CHECK(open_replay(p, "", 11, 12, err, sizeof err) == NULL);
	CHECK(strstr(err, "fewer client threads") != NULL, "%s", err);
}

TEST(replay_malformed_at_run_time)
{
	const char text[] = "0,a,1,1,1,get,0\n1,b,1,1,1,get,0\nbad line\n3,d,1,1,1,get,0\n4,e,1,1,1,get,0\n";
	char p[600], err[2048];
	struct gen_op op;
	struct gen *g;

	tpath(p, sizeof p, "replay-bad.csv");
	REQUIRE(write_file(p, text, strlen(text)) == 0);
	g = open_replay(p, ",\"loop\":false", 0, 1, err, sizeof err);
	REQUIRE(g, "%s", err);
	CHECK(gen_trace_ops.next(g, &op) == 0);
	CHECK(gen_trace_ops.next(g, &op) == 0);
	CHECK(gen_trace_ops.next(g, &op) == -1);
	CHECK(gen_trace_ops.error(g) && strstr(gen_trace_ops.error(g), ":3: ") &&
	      strstr(gen_trace_ops.error(g), "skip_malformed"), "%s", gen_trace_ops.error(g));
	gen_trace_ops.close(g);

	/* skip_malformed keeps each thread on its own lines. */
	g = open_replay(p, ",\"loop\":false,\"skip_malformed\":true", 0, 2, err, sizeof err);
	REQUIRE(g, "%s", err);
	CHECK(gen_trace_ops.next(g, &op) == 0 && strcmp(op.key, "a") == 0);
	CHECK(gen_trace_ops.next(g, &op) == 0 && strcmp(op.key, "e") == 0, "%s", op.key);
	CHECK(gen_trace_ops.next(g, &op) == 1);
	gen_trace_ops.close(g);
	g = open_replay(p, ",\"loop\":false,\"skip_malformed\":true", 1, 2, err, sizeof err);
	REQUIRE(g, "%s", err);
	CHECK(gen_trace_ops.next(g, &op) == 0 && strcmp(op.key, "b") == 0);
	CHECK(gen_trace_ops.next(g, &op) == 0 && strcmp(op.key, "d") == 0, "%s", op.key);
	CHECK(gen_trace_ops.next(g, &op) == 1);
	gen_trace_ops.close(g);

	CHECK(open_replay("missing.csv", "", 0, 1, err, sizeof err) == NULL);
	CHECK(strstr(err, "missing.csv") != NULL, "%s", err);
	CHECK(open_replay(p, ",\"mode\":\"replya\"", 0, 1, err, sizeof err) == NULL);
	CHECK(strstr(err, "mode") != NULL, "%s", err);
	CHECK(open_replay(p, ",\"skip_malformd\":true", 0, 1, err, sizeof err) == NULL);
	CHECK(strstr(err, "\"skip_malformed\"") != NULL, "%s", err);
}

/*
 * Model mode on a trace drawn from a known model: the fit must find its op
 * mix, sizes, key count and alpha.
 */
TEST(model_fit_recovers_the_model)
{
	struct twitter_model m = { .key_size = 30, .value_size = 200, .alpha = 0.9, .keys = 20000 };
	struct twitter_sampler s;
	struct rng r;
	char p[600], err[2048];
	FILE *f;
	struct gen *g;
	json_t *d, *fit;

	m.ratio[TW_SET] = 0.3;
	m.ratio[TW_GET] = 0.6;
	m.ratio[TW_DEL] = 0.1;
	REQUIRE(twitter_sampler_init(&s, &m, err, sizeof err) == 0, "%s", err);
	tpath(p, sizeof p, "model.csv");
	f = fopen(p, "w");
	REQUIRE(f);
	rng_seed(&r, 77);
	for (int i = 0; i < 200000; i++) {
		enum twitter_kind k;
		uint64_t key;
		twitter_sampler_next(&s, &r, &k, &key);
		fprintf(f, "%d,key%025llu,30,%d,%d,%s,0\n", i / 1000, (unsigned long long)key,
			k == TW_GET ? 0 : 200, i % 5, k == TW_SET ? "set" : k == TW_DEL ? "delete" : "get");
	}
	fclose(f);
	twitter_sampler_free(&s);

	g = open_replay(p, ",\"mode\":\"model\"", 0, 1, err, sizeof err);
	REQUIRE(g, "%s", err);
	d = gen_trace_ops.describe(g);
	fit = json_object_get(d, "fit");
	REQUIRE(fit);
	CHECK_NEAR(json_real_value(json_object_get(d, "alpha")), 0.9, 0.08);
	CHECK_NEAR(json_real_value(json_object_get(json_object_get(d, "mix"), "set")), 0.3, 0.01);
	CHECK_NEAR(json_real_value(json_object_get(json_object_get(d, "mix"), "delete")), 0.1, 0.01);
	CHECK(json_integer_value(json_object_get(d, "key_size")) == 30);
	CHECK(json_integer_value(json_object_get(d, "value_size")) == 200);
	/* distinct keys seen: not all 20000 are drawn in 200000 requests */
	CHECK(json_integer_value(json_object_get(d, "keys")) > 15000 &&
	      json_integer_value(json_object_get(d, "keys")) <= 20000);
	CHECK_NEAR(json_real_value(json_object_get(fit, "distinct_keys_hll")),
		   (double)json_integer_value(json_object_get(fit, "distinct_keys_counted")),
		   0.05 * (double)json_integer_value(json_object_get(fit, "distinct_keys_counted")));
	CHECK(strcmp(json_string_value(json_object_get(d, "kind")), "trace") == 0);
	json_decref(d);
	{
		struct gen_op op;
		int sets = 0;
		for (int i = 0; i < 10000; i++) {
			REQUIRE(gen_trace_ops.next(g, &op) == 0);
			sets += op.op == KV_OP_SET;
			CHECK(op.key_len == 30);
		}
		CHECK_NEAR(sets / 1e4, 0.3, 0.03);
	}
	gen_trace_ops.close(g);
}

static void cleanup(void)
{
	static const char *const names[] = {
		"good.csv", "bad.csv", "skip.csv", "long.csv", "big.zst", "big-one-frame.csv",
		"big-three-frames.csv.zst", "t.zst", "cut.zst", "replay.csv", "replay-bad.csv", "model.csv",
	};
	char p[600];

	if (!tdir[0])
		return;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		tpath(p, sizeof p, names[i]);
		unlink(p);
	}
	rmdir(tdir);
}

TEST(zz_cleanup)
{
	cleanup();
}

UNIT_MAIN(parse_good_lines, op_table, malformed_lines_name_file_and_line, skip_mode_counts,
	  line_too_long, zstd_detected_by_magic_and_streamed, truncated_and_corrupt_zstd,
	  replay_stride_loop_and_ops, replay_malformed_at_run_time, model_fit_recovers_the_model,
	  zz_cleanup)
