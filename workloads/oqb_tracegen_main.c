/*
 * oqb_tracegen_main.c - bin/oqb-tracegen: synthetic traces in the public
 * Twitter cache-trace format, from the cluster models of twitter.h.
 *
 *   oqb-tracegen --cluster 12 --clients 8 --seconds 60 --rate 500 --seed 1 \
 *                -o traces/cluster12-sample.csv.zst
 *
 * Each of the --clients clients sends a Poisson stream of rate/clients
 * requests per second (generated as one merged Poisson stream of --rate
 * whose requests go to a uniformly chosen client, which is the same
 * process).  Lines are `timestamp,key,key size,value size,client id,op,TTL`
 * with the timestamp in whole seconds from 0, keys that look anonymized
 * (letters, digits, '-' and '_', as long as the key size field says),
 * the model's value size on every line (a get reports the size of the
 * object it reads), and the cluster's TTL on writes, 0 otherwise.  The
 * output is zstd-compressed when its name ends in .zst (or with --zstd).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <inttypes.h>
#include <zstd.h>

#include "opts.h"
#include "rng.h"
#include "twitter.h"

struct tg_opts {
	int cluster, clients, zstd, level;
	double seconds, rate;
	uint64_t seed, keys;
	const char *out;
};

static const struct opt tg_tab[] = {
	{ "cluster", OPT_INT, offsetof(struct tg_opts, cluster), "12", 1, 54, NULL,
	  "Twitter cluster model: 12, 19, 27 or 31" },
	{ "clients", OPT_INT, offsetof(struct tg_opts, clients), "8", 1, 1e6, NULL,
	  "client ids (0..clients-1)" },
	{ "seconds", OPT_DBL, offsetof(struct tg_opts, seconds), "60", 1e-3, 1e7, NULL,
	  "trace duration in seconds" },
	{ "rate", OPT_DBL, offsetof(struct tg_opts, rate), "500", 1e-3, 1e8, NULL,
	  "requests per second over all clients" },
	{ "seed", OPT_U64, offsetof(struct tg_opts, seed), "1", 0, 1.8e19, NULL,
	  "random seed (same seed, same trace)" },
	{ "keys", OPT_U64, offsetof(struct tg_opts, keys), "1000000", 1, 1e12, NULL,
	  "distinct keys of the model" },
	{ "output", OPT_STR, offsetof(struct tg_opts, out), NULL, 0, 0, NULL,
	  "output file (-o), - for stdout; zstd when it ends in .zst" },
	{ "zstd", OPT_BOOL, offsetof(struct tg_opts, zstd), "false", 0, 0, NULL,
	  "compress with zstd whatever the name" },
	{ "level", OPT_INT, offsetof(struct tg_opts, level), "19", 1, 22, NULL,
	  "zstd compression level" },
	{ NULL, 0, 0, NULL, 0, 0, NULL,
	  "write a synthetic trace in the public Twitter cache-trace format" },
};

struct tg_out {
	FILE *f;
	ZSTD_CCtx *cc;
	char buf[1 << 16];
	size_t len;
	unsigned char *z;
	size_t zcap;
	const char *path;
};

static int out_flush(struct tg_out *o, int end)
{
	if (!o->cc) {
		if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len)
			return -1;
		o->len = 0;
		return 0;
	}
	ZSTD_inBuffer in = { o->buf, o->len, 0 };
	for (;;) {
		ZSTD_outBuffer zo = { o->z, o->zcap, 0 };
		size_t r = ZSTD_compressStream2(o->cc, &zo, &in, end ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(r)) {
			errno = EIO;
			return -1;
		}
		if (zo.pos && fwrite(o->z, 1, zo.pos, o->f) != zo.pos)
			return -1;
		if (end ? r == 0 : in.pos == in.size)
			break;
	}
	o->len = 0;
	return 0;
}

static int out_write(struct tg_out *o, const char *s, size_t n)
{
	if (o->len + n > sizeof o->buf && out_flush(o, 0) < 0)
		return -1;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	return 0;
}

static const char anon_chars[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* The anonymized-looking key of key number k: the same k, the same key. */
static void anon_key(char *dst, uint64_t k, unsigned len, uint64_t salt)
{
	uint64_t x = k * 0x9E3779B97F4A7C15ull ^ salt, bits = 0;
	unsigned have = 0;

	for (unsigned i = 0; i < len; i++) {
		if (have < 6) {
			bits = splitmix64(&x);
			have = 64;
		}
		dst[i] = anon_chars[bits & 63];
		bits >>= 6;
		have -= 6;
	}
	dst[len] = '\0';
}

/* Trace op written for each model kind. */
static const char *const tg_opname[TW_NKIND] = { "get", "set", "add", "delete", "incr" };

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && strcmp(s + a - b, suf) == 0;
}

int main(int argc, char **argv)
{
	struct tg_opts op;
	struct twitter_model m;
	struct twitter_sampler s;
	struct tg_out o;
	struct rng r;
	char err[512], key[KV_MAX_KEY + 1], line[KV_MAX_KEY + 128];
	double t = 0;
	uint64_t lines = 0;
	int rc;

	/* -o is the one short option, as in most tools. */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "-o") == 0)
			argv[i] = (char *)"--output";
	rc = opts_parse(tg_tab, &op, argc, argv, NULL, err, sizeof err);
	if (rc == 1)
		return 0;
	if (rc < 0) {
		fprintf(stderr, "oqb-tracegen: %s\n", err);
		return 2;
	}
	if (!op.out) {
		fprintf(stderr, "oqb-tracegen: no output file; pass -o FILE (.csv or .csv.zst) or -o -\n");
		return 2;
	}
	if (twitter_cluster(op.cluster, op.keys, &m) < 0) {
		fprintf(stderr, "oqb-tracegen: --cluster %d is not modelled; use 12, 19, 27 or 31\n",
			op.cluster);
		return 2;
	}
	if (twitter_sampler_init(&s, &m, err, sizeof err) < 0) {
		fprintf(stderr, "oqb-tracegen: cluster %d: %s\n", op.cluster, err);
		return 2;
	}
	memset(&o, 0, sizeof o);
	o.path = op.out;
	o.f = strcmp(op.out, "-") == 0 ? stdout : fopen(op.out, "wb");
	if (!o.f) {
		fprintf(stderr, "oqb-tracegen: %s: cannot create: %s\n", op.out, strerror(errno));
		twitter_sampler_free(&s);
		return 1;
	}
	if (op.zstd || ends_with(op.out, ".zst")) {
		o.cc = ZSTD_createCCtx();
		o.zcap = ZSTD_CStreamOutSize();
		o.z = malloc(o.zcap);
		if (!o.cc || !o.z) {
			fprintf(stderr, "oqb-tracegen: out of memory for the zstd encoder\n");
			return 1;
		}
		ZSTD_CCtx_setParameter(o.cc, ZSTD_c_compressionLevel, op.level);
		ZSTD_CCtx_setParameter(o.cc, ZSTD_c_checksumFlag, 1);
	}
	rng_seed_multi(&r, op.seed, (uint64_t)op.cluster, 0x7472616365ull);    /* "trace" */
	for (;;) {
		enum twitter_kind k;
		uint64_t keynum, client;
		int n;

		t += -log1p(-rng_double(&r)) / op.rate;
		if (t >= op.seconds)
			break;
		client = rng_below(&r, (uint64_t)op.clients);
		twitter_sampler_next(&s, &r, &k, &keynum);
		anon_key(key, keynum, m.key_size, (uint64_t)op.cluster);
		n = snprintf(line, sizeof line, "%" PRIu64 ",%s,%u,%u,%" PRIu64 ",%s,%u\n",
			     (uint64_t)t, key, m.key_size, m.value_size, client,
			     tg_opname[k], k == TW_SET || k == TW_SETX ? m.ttl : 0);
		if (out_write(&o, line, (size_t)n) < 0)
			goto werr;
		lines++;
	}
	if (out_flush(&o, 1) < 0)
		goto werr;
	if (o.f != stdout ? fclose(o.f) != 0 : fflush(o.f) != 0) {
		o.f = NULL;
		goto werr;
	}
	fprintf(stderr, "oqb-tracegen: cluster %d: %" PRIu64 " requests from %d clients over %g s to %s\n",
		op.cluster, lines, op.clients, op.seconds, op.out);
	ZSTD_freeCCtx(o.cc);
	free(o.z);
	twitter_sampler_free(&s);
	return 0;
werr:
	fprintf(stderr, "oqb-tracegen: %s: write failed: %s\n", op.out, strerror(errno));
	if (o.f && o.f != stdout)
		fclose(o.f);
	ZSTD_freeCCtx(o.cc);
	free(o.z);
	twitter_sampler_free(&s);
	return 1;
}
