/*
 * test_history.c - the history file format (lib/history.h): records round
 * trip through the writer and the reader; truncated and corrupted files are
 * refused with a message naming the offset, never parsed into wrong ops;
 * value classification (tag, number, digest) and key sampling.
 */
#include <stdint.h>
#include <unistd.h>

#include "unit.h"
#include "history.h"
#include "kvop.h"
#include "rng.h"

static struct history_op sample_op(uint64_t i)
{
	struct history_op o;
	memset(&o, 0, sizeof o);
	o.t_inv = 1000 + i * 10;
	o.t_ret = i % 7 == 0 ? HISTORY_T_UNKNOWN : o.t_inv + 5 + i;
	o.status = i % 7 == 0 ? HISTORY_ST_UNKNOWN : (uint8_t)(i % 2);
	o.key_hash = history_key_hash("key", 3) + i % 3;
	o.seq = i;
	o.client = 42;
	o.op = i % 2 ? KV_OP_GET : KV_OP_SET;
	o.wkind = o.op == KV_OP_SET ? HV_TAG : HV_NONE;
	o.rkind = o.op == KV_OP_GET ? HV_TAG : HV_NONE;
	o.rclient = 7;
	o.rseq = i * 3;
	o.rval = i * 0x9e3779b97f4a7c15ull;
	o.val_len = 100;
	o.key_len = 3;
	memcpy(o.key, "key", 3);
	return o;
}

static char tmpdir_[512];

static const char *tmp_path(const char *name)
{
	static char p[700];
	if (!tmpdir_[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(tmpdir_, sizeof tmpdir_, "%s/oqb-test-history-XXXXXX", t ? t : "/tmp");
		if (!mkdtemp(tmpdir_))
			return NULL;
	}
	snprintf(p, sizeof p, "%s/%s", tmpdir_, name);
	return p;
}

TEST(roundtrip_through_the_writer)
{
	const char *path = tmp_path("h.bin");
	REQUIRE(path != NULL);
	struct history_header h = { .clock_kind = HISTORY_CLOCK_MONOTONIC, .clock_bound_ns = 1234,
				    .client_id = 42, .key_fraction = 0.5, .flags = HISTORY_F_SAMPLED };
	snprintf(h.host, sizeof h.host, "hostA");
	struct history_writer w;
	char err[512];
	/* a small buffer forces many flushes */
	REQUIRE(history_writer_open(&w, path, &h, 1000, err, sizeof err) == 0, "%s", err);
	for (uint64_t i = 0; i < 5000; i++) {
		struct history_op o = sample_op(i);
		history_writer_add(&w, &o);
	}
	REQUIRE(history_writer_close(&w, err, sizeof err) == 0, "%s", err);
	struct history_header g;
	struct history_op *ops;
	size_t n;
	REQUIRE(history_read_file(path, &g, &ops, &n, err, sizeof err) == 0, "%s", err);
	CHECK(n == 5000, "%zu", n);
	CHECK(g.clock_bound_ns == 1234 && g.client_id == 42 && g.key_fraction == 0.5 &&
	      !strcmp(g.host, "hostA") && g.record_size == HISTORY_REC_SIZE);
	int same = 1;
	for (uint64_t i = 0; i < n && same; i++) {
		/* compare field by field (through the encoding), not padding */
		struct history_op e = sample_op(i);
		uint8_t x[HISTORY_REC_SIZE], y[HISTORY_REC_SIZE];
		history_encode(x, &e);
		history_encode(y, &ops[i]);
		same = !memcmp(x, y, sizeof x) && e.t_ret == ops[i].t_ret && e.rkind == ops[i].rkind &&
		       e.wkind == ops[i].wkind && e.rval == ops[i].rval;
		CHECK(same, "record %llu differs", (unsigned long long)i);
	}
	free(ops);
	unlink(path);
	rmdir(tmpdir_);
}

static uint8_t *make_file(size_t nrec, size_t *len)
{
	*len = HISTORY_HDR_SIZE + nrec * HISTORY_REC_SIZE;
	uint8_t *b = calloc(1, *len);
	struct history_header h = { .clock_kind = HISTORY_CLOCK_MONOTONIC, .key_fraction = 1 };
	history_encode_header(b, &h);
	for (size_t i = 0; i < nrec; i++) {
		struct history_op o = sample_op(i);
		history_encode(b + HISTORY_HDR_SIZE + i * HISTORY_REC_SIZE, &o);
	}
	return b;
}

TEST(truncated_and_corrupt_files_are_refused)
{
	size_t len;
	uint8_t *b = make_file(10, &len);
	struct history_header h;
	struct history_op *ops;
	size_t n;
	char err[512];
	REQUIRE(history_read(b, len, "f", &h, &ops, &n, err, sizeof err) == 0, "%s", err);
	CHECK(n == 10);
	free(ops);
	/* every truncation that is not on a record boundary is refused */
	for (size_t l = 0; l < len; l++) {
		int rc = history_read(b, l, "f", &h, &ops, &n, err, sizeof err);
		int boundary = l >= HISTORY_HDR_SIZE && (l - HISTORY_HDR_SIZE) % HISTORY_REC_SIZE == 0;
		CHECK(rc == (boundary ? 0 : -1), "length %zu: rc %d", l, rc);
		if (rc == 0)
			free(ops);
		else if (l > HISTORY_HDR_SIZE)
			CHECK(strstr(err, "truncated") != NULL, "%s", err);
	}
	/* field corruptions, each named */
	struct { size_t off; uint8_t v; const char *what; } bad[] = {
		{ 0, 'X', "magic" }, { 8, 9, "version" }, { 12, 10, "record size" },
		{ 14, 7, "clock kind" },
		{ HISTORY_HDR_SIZE + 36, 99, "op" },
		{ HISTORY_HDR_SIZE + 37, 77, "status" },
		{ HISTORY_HDR_SIZE + 96 + 38, 251, "key_len" },
		{ HISTORY_HDR_SIZE + 96 * 2 + 15, 0, "returns" },   /* t_ret < t_inv */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint8_t *c = malloc(len);
		memcpy(c, b, len);
		c[bad[i].off] = bad[i].v;
		if (i == 7)   /* zero the whole t_ret of record 2: before its t_inv */
			memset(c + HISTORY_HDR_SIZE + 96 * 2 + 8, 0, 8);
		int rc = history_read(c, len, "f", &h, &ops, &n, err, sizeof err);
		CHECK(rc == -1, "%s corruption accepted", bad[i].what);
		if (rc == 0)
			free(ops);
		else
			CHECK(strstr(err, bad[i].what) != NULL || strstr(err, "offset") != NULL,
			      "%s: message \"%s\"", bad[i].what, err);
		free(c);
	}
	free(b);
}

TEST(random_bytes_never_crash)
{
	struct rng r;
	rng_seed(&r, 5);
	size_t len;
	uint8_t *good = make_file(4, &len);
	unsigned accepted = 0;
	for (int it = 0; it < 20000; it++) {
		uint8_t *c = malloc(len);
		memcpy(c, good, len);
		int flips = 1 + (int)rng_below(&r, 4);
		for (int f = 0; f < flips; f++)
			c[rng_below(&r, len)] = (uint8_t)rng_next(&r);
		struct history_header h;
		struct history_op *ops;
		size_t n;
		char err[256];
		size_t l = rng_below(&r, 4) ? len : rng_below(&r, len + 1);
		if (history_read(c, l, "f", &h, &ops, &n, err, sizeof err) == 0) {
			accepted++;
			for (size_t i = 0; i < n; i++)
				CHECK(ops[i].op < KV_OP_MAX_ && ops[i].key_len <= KV_MAX_KEY &&
				      (ops[i].t_ret == HISTORY_T_UNKNOWN || ops[i].t_ret >= ops[i].t_inv));
			free(ops);
		}
		free(c);
	}
	CHECK(accepted > 0 && accepted < 20000, "accepted %u", accepted);
	free(good);
}

TEST(value_kinds)
{
	uint8_t v[64];
	uint32_t c;
	uint64_t s, num;
	memset(v, 'z', sizeof v);
	history_tag_put(v, 77, 123456789012ull);
	CHECK(history_value_kind(v, sizeof v, &c, &s, &num) == HV_TAG && c == 77 && s == 123456789012ull);
	CHECK(history_value_kind(v, 15, &c, &s, &num) == HV_DIGEST, "a cut tag is not a tag");
	CHECK(history_value_kind((const uint8_t *)"0042", 4, &c, &s, &num) == HV_NUM && num == 42);
	CHECK(history_value_kind((const uint8_t *)"18446744073709551615", 20, &c, &s, &num) == HV_NUM &&
	      num == UINT64_MAX);
	CHECK(history_value_kind((const uint8_t *)"18446744073709551616", 20, &c, &s, &num) == HV_DIGEST,
	      "overflow is not a number");
	CHECK(history_value_kind((const uint8_t *)"12a", 3, &c, &s, &num) == HV_DIGEST);
	uint64_t d1 = history_digest("abcdefghij", 10), d2 = history_digest("abcdefghik", 10);
	CHECK(d1 != d2);
	CHECK(history_digest("", 0) != history_digest("\0", 1));
}

TEST(key_sampling_is_by_key)
{
	unsigned in = 0;
	for (int i = 0; i < 20000; i++) {
		char k[16];
		int l = snprintf(k, sizeof k, "k%d", i);
		uint64_t h = history_key_hash(k, (size_t)l);
		int a = history_key_sampled(h, 0.1), b = history_key_sampled(history_key_hash(k, (size_t)l), 0.1);
		CHECK(a == b);
		in += (unsigned)a;
		CHECK(history_key_sampled(h, 1.0));
	}
	CHECK(in > 1600 && in < 2400, "%u of 20000 keys in a 10 %% sample", in);
}

UNIT_MAIN(roundtrip_through_the_writer, truncated_and_corrupt_files_are_refused, random_bytes_never_crash,
	  value_kinds, key_sampling_is_by_key)
