/*
 * replay.c - the `trace` generator: replay a Twitter-format trace, or fit a
 * cluster model to it.
 *
 *   {"kind":"trace","path":"traces/cluster12-sample.csv.zst",
 *    "mode":"replay"|"model","skip_malformed":false,"loop":true}
 *
 * replay: thread g of N (over all client processes) sends the requests on
 * lines g, g+N, g+2N, ... in order (op, key, value size; see trace.h for
 * the op table), restarting at the end of the file when loop is true.  The
 * trace's timestamps are not used: when a request is sent is the arrival
 * process's business.  Every thread streams the file itself, so nothing is
 * shared and memory stays fixed.
 *
 * model: the whole trace is read once when the generator opens, and the
 * generator then behaves like a `twitter` custom cluster with the trace's
 * op mix, mean key size, mean write value size, distinct key count
 * (exact up to model_max_keys, else a HyperLogLog estimate) and Zipf alpha
 * (least-squares slope of log count against log rank over the most popular
 * keys).  describe() reports the
 * fitted model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <inttypes.h>
#include <unistd.h>

#include "gen.h"
#include "bits.h"
#include "conf.h"
#include "trace.h"
#include "twitter.h"

static const char *const replay_modes[] = { "replay", "model", NULL };

static const struct conf_key replay_schema[] = {
	{ "kind", CONF_STR, 1, 0, -1, NULL, NULL, "\"trace\"" },
	{ "path", CONF_STR, 1, 0, -1, NULL, NULL, "trace file (plain or zstd), relative to the config's directory or the working directory" },
	{ "mode", CONF_STR, 0, 0, -1, replay_modes, NULL, "replay (default) or model" },
	{ "skip_malformed", CONF_BOOL, 0, 0, -1, NULL, NULL, "skip and count lines that do not parse (default false)" },
	{ "loop", CONF_BOOL, 0, 0, -1, NULL, NULL, "replay: start again at the end of the file (default true)" },
	{ "max_lines", CONF_INT, 0, 0, 1e18, NULL, NULL, "read only the first N lines (0 = all, default)" },
	{ "fit_ranks", CONF_INT, 0, 3, 1e7, NULL, NULL, "model: most popular keys used to fit alpha (default 1000)" },
	{ "fit_min_count", CONF_INT, 0, 2, 1e12, NULL, NULL, "model: least count of a key used in the alpha fit (default 10)" },
	{ "model_max_keys", CONF_INT, 0, 1024, 1e9, NULL, NULL, "model: distinct keys counted exactly (default 2097152)" },
	{ "keys", CONF_INT, 0, 1, 1e15, NULL, NULL, "model: key count to use instead of the estimate" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

struct gen_replay {
	int model;
	/* replay */
	struct trace_reader *t;
	uint64_t tidx, tcount;
	int loop;
	uint64_t max_lines;
	struct trace_rec pending;   /* first record, read at open */
	int have_pending;
	uint64_t passes, records, records_this_pass, clamped;
	uint64_t count[TRACE_NOPS];
	/* model */
	struct gen *inner;
	json_t *fit;
	char path[1024];
	char err[1536];
};

/* A path as given, or relative to the config's directory if it is there. */
static void replay_resolve(const char *path, const struct gen_ctx *c, char *out, size_t cap)
{
	if (path[0] != '/' && c->config_dir && c->config_dir[0]) {
		snprintf(out, cap, "%s/%s", c->config_dir, path);
		if (access(out, R_OK) == 0)
			return;
	}
	snprintf(out, cap, "%s", path);
}

/* ---------------------------------------------------------- replay mode */

/* Line index of the current position modulo the pass: stops at max_lines. */
static int replay_at_limit(const struct gen_replay *g)
{
	return g->max_lines && trace_line(g->t) >= g->max_lines;
}

/*
 * Reads this thread's next record into *r: skips to its line, parses it.
 * Returns 1, 0 at the end of the pass, -1 with g->err.
 */
static int replay_read(struct gen_replay *g, struct trace_rec *r)
{
	for (;;) {
		int k;

		if (replay_at_limit(g))
			return 0;
		k = trace_next_line(g->t, r, g->err, sizeof g->err);
		if (k <= 0)
			return k;
		/* Skip the other threads' lines, leaving the reader before ours. */
		if (trace_skip(g->t, g->tcount - 1, g->err, sizeof g->err) < 0)
			return -1;
		if (k == 1)
			return 1;
		/* k == 2: our line was malformed and skipped; take the next one. */
	}
}

/* Starts a pass: rewinds (except the first time) and skips to line g. */
static int replay_start_pass(struct gen_replay *g)
{
	if (g->passes > 0 && trace_rewind(g->t, g->err, sizeof g->err) < 0)
		return -1;
	g->passes++;
	g->records_this_pass = 0;
	if (g->tidx > 0 && trace_skip(g->t, g->tidx, g->err, sizeof g->err) < 0)
		return -1;
	return 0;
}

/*
 * Next record of this thread, looping if asked.  Returns 1, 0 when
 * exhausted, -1 with g->err.
 */
static int replay_next_rec(struct gen_replay *g, struct trace_rec *r)
{
	int k;

	if (g->have_pending) {
		*r = g->pending;
		g->have_pending = 0;
		return 1;
	}
	for (int tries = 0; tries < 2; tries++) {
		k = replay_read(g, r);
		if (k != 0)
			return k;
		if (!g->loop)
			return 0;
		if (g->records_this_pass == 0 && g->passes > 0) {
			snprintf(g->err, sizeof g->err, "%s: no request for client thread %" PRIu64
				 " of %" PRIu64 " (the trace has fewer usable lines than threads); "
				 "use a longer trace or fewer client threads", g->path, g->tidx, g->tcount);
			return -1;
		}
		if (replay_start_pass(g) < 0)
			return -1;
	}
	snprintf(g->err, sizeof g->err, "%s: no request for client thread %" PRIu64 " of %" PRIu64
		 "; use a longer trace or fewer client threads", g->path, g->tidx, g->tcount);
	return -1;
}

static int replay_next(struct gen *gg, struct gen_op *op)
{
	struct gen_replay *g = (struct gen_replay *)gg;
	struct trace_rec r;
	int k;

	if (g->model)
		return gen_twitter_ops.next(g->inner, op);
	g->err[0] = '\0';
	k = replay_next_rec(g, &r);
	if (k <= 0)
		return k < 0 ? -1 : 1;
	g->records++;
	g->records_this_pass++;
	g->count[r.op]++;
	op->op = trace_op_kv(r.op, &op->flags);
	op->aux = r.op == TRACE_DECR ? UINT64_MAX : op->op == KV_OP_INCR ? 1 : 0;
	op->val_len = 0;
	if (op->op == KV_OP_SET) {
		op->val_len = r.value_size;
		if (op->val_len > KV_MAX_VALUE) {
			op->val_len = KV_MAX_VALUE;
			g->clamped++;
		}
	}
	memcpy(op->key, r.key, r.key_len + 1u);
	op->key_len = r.key_len;
	return 0;
}

/* ----------------------------------------------------------- model mode */

/* 64-bit hash of a key: FNV-1a, then a splitmix64 finaliser for HLL bits. */
static uint64_t key_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return mix64(h);
}

#define HLL_P 14
#define HLL_M (1u << HLL_P)

/* HyperLogLog (Flajolet et al. 2007) with linear counting for small sets. */
static double hll_estimate(const uint8_t *reg)
{
	double sum = 0, am = 0.7213 / (1 + 1.079 / HLL_M), e;
	unsigned zeros = 0;

	for (unsigned i = 0; i < HLL_M; i++) {
		sum += ldexp(1.0, -reg[i]);
		zeros += reg[i] == 0;
	}
	e = am * HLL_M * (double)HLL_M / sum;
	if (e <= 2.5 * HLL_M && zeros)
		e = HLL_M * log((double)HLL_M / zeros);
	return e;
}

static void hll_add(uint8_t *reg, uint64_t h)
{
	unsigned idx = (unsigned)(h >> (64 - HLL_P));
	uint64_t w = (h << HLL_P) | (1ull << (HLL_P - 1));
	uint8_t rho = (uint8_t)(__builtin_clzll(w) + 1);

	if (rho > reg[idx])
		reg[idx] = rho;
}

/* Open-addressing counts of key hashes, with a fixed capacity. */
struct keycount {
	uint64_t *h;
	uint64_t *n;
	uint64_t cap, used, limit, dropped;
};

static int kc_init(struct keycount *kc, uint64_t limit)
{
	kc->cap = 1024;
	while (kc->cap < limit * 2)
		kc->cap <<= 1;
	kc->h = calloc(kc->cap, sizeof *kc->h);
	kc->n = calloc(kc->cap, sizeof *kc->n);
	kc->used = 0;
	kc->limit = limit;
	kc->dropped = 0;
	return kc->h && kc->n ? 0 : -1;
}

static void kc_add(struct keycount *kc, uint64_t h)
{
	uint64_t i;

	if (h == 0)
		h = 1;    /* 0 marks an empty slot */
	for (i = h & (kc->cap - 1);; i = (i + 1) & (kc->cap - 1)) {
		if (kc->h[i] == h) {
			kc->n[i]++;
			return;
		}
		if (kc->h[i] == 0)
			break;
	}
	if (kc->used >= kc->limit) {
		kc->dropped++;    /* table full: this key is no longer counted */
		return;
	}
	kc->h[i] = h;
	kc->n[i] = 1;
	kc->used++;
}

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * Fits alpha: least squares of ln(count) on ln(rank) over the top keys with
 * count >= min_count (at most fit_ranks of them); alpha = -slope, clamped
 * to [0, 10].  Keys seen only a few times are left out because the top of
 * many such keys is inflated by chance, which flattens the slope (on a
 * 9000-request sample of an alpha 0.735 model, a floor of 2 fits 0.52 and
 * a floor of 10 fits 0.72).  Fewer than 3 such keys: alpha 0.
 */
static double fit_alpha(struct keycount *kc, uint64_t fit_ranks, uint64_t min_count,
			uint64_t *ranks_used, double *r2)
{
	uint64_t *v = kc->n, m = 0, k;
	double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, slope, den;

	for (uint64_t i = 0; i < kc->cap; i++)
		if (kc->h[i])
			v[m++] = kc->n[i];    /* compact the counts in place */
	qsort(v, m, sizeof *v, cmp_desc);
	for (k = 0; k < m && k < fit_ranks && v[k] >= min_count; k++) {
		double x = log((double)(k + 1)), y = log((double)v[k]);
		sx += x; sy += y; sxx += x * x; sxy += x * y; syy += y * y;
	}
	*ranks_used = k;
	*r2 = 0;
	if (k < 3)
		return 0;
	den = (double)k * sxx - sx * sx;
	if (den <= 0)
		return 0;
	slope = ((double)k * sxy - sx * sy) / den;
	{
		double vy = (double)k * syy - sy * sy;
		*r2 = vy > 0 ? (((double)k * sxy - sx * sy) * ((double)k * sxy - sx * sy)) / (den * vy) : 1;
	}
	if (-slope < 0)
		return 0;
	return -slope > 10 ? 10 : -slope;
}

static enum twitter_kind model_kind(enum trace_op op)
{
	switch (op) {
	case TRACE_GET:
	case TRACE_GETS:
		return TW_GET;
	case TRACE_SET:
		return TW_SET;
	case TRACE_DELETE:
		return TW_DEL;
	case TRACE_INCR:
	case TRACE_DECR:
		return TW_INCR;
	default:
		return TW_SETX;
	}
}

static int replay_model(struct gen_replay *g, const json_t *spec, const struct gen_ctx *c,
			char *err, size_t errlen)
{
	struct trace_rec r;
	struct twitter_model m;
	struct keycount kc;
	uint8_t *hll = calloc(HLL_M, 1);
	uint64_t n = 0, nkind[TW_NKIND] = { 0 }, nw = 0, ranks_used = 0, min_ks;
	uint64_t fit_ranks = (uint64_t)conf_int(spec, "fit_ranks", 1000);
	double key_sum = 0, wval_sum = 0, gval_sum = 0, gval_n = 0, est, r2;
	char source[1100];
	int k;
	json_t *ops;

	memset(&kc, 0, sizeof kc);
	if (!hll || kc_init(&kc, (uint64_t)conf_int(spec, "model_max_keys", 1 << 21)) < 0) {
		snprintf(err, errlen, "%s: out of memory for the trace model; lower model_max_keys",
			 g->path);
		goto fail;
	}
	while ((!g->max_lines || trace_line(g->t) < g->max_lines) &&
	       (k = trace_next(g->t, &r, err, errlen)) != 0) {
		if (k < 0)
			goto fail;
		n++;
		nkind[model_kind(r.op)]++;
		key_sum += r.key_size;
		if (model_kind(r.op) == TW_SET || model_kind(r.op) == TW_SETX) {
			wval_sum += r.value_size;
			nw++;
		} else if (r.value_size > 0) {
			gval_sum += r.value_size;
			gval_n++;
		}
		{
			uint64_t h = key_hash(r.key, r.key_len);
			hll_add(hll, h);
			kc_add(&kc, h);
		}
	}
	if (n == 0) {
		snprintf(err, errlen, "%s: no requests in the trace; a model needs at least one", g->path);
		goto fail;
	}
	memset(&m, 0, sizeof m);
	for (int i = 0; i < TW_NKIND; i++)
		m.ratio[i] = (double)nkind[i] / (double)n;
	est = hll_estimate(hll);
	/* Below the exact-table limit the count is exact; above, the estimate. */
	m.keys = kc.dropped == 0 ? kc.used : (uint64_t)llround(est);
	if (json_object_get(spec, "keys"))
		m.keys = (uint64_t)conf_int(spec, "keys", 1);
	if (m.keys == 0)
		m.keys = 1;
	m.key_size = (unsigned)llround(key_sum / (double)n);
	min_ks = gen_key_min_size(m.keys);
	if (m.key_size < min_ks)
		m.key_size = (unsigned)min_ks;
	if (m.key_size > KV_MAX_KEY)
		m.key_size = KV_MAX_KEY;
	m.value_size = (uint32_t)llround(nw ? wval_sum / (double)nw : gval_n ? gval_sum / gval_n : 0);
	if (m.value_size > KV_MAX_VALUE)
		m.value_size = KV_MAX_VALUE;
	m.alpha = fit_alpha(&kc, fit_ranks, (uint64_t)conf_int(spec, "fit_min_count", 10),
			    &ranks_used, &r2);
	snprintf(source, sizeof source, "trace model of %s", g->path);
	g->inner = twitter_open_model(&m, source, c, err, errlen);
	if (!g->inner)
		goto fail;

	ops = json_object();
	for (int i = 0; i < TW_NKIND; i++)
		json_object_set_new(ops, twitter_kind_name((enum twitter_kind)i),
				    json_integer((json_int_t)nkind[i]));
	g->fit = json_pack("{s:s, s:s, s:I, s:I, s:o, s:f, s:f, s:I, s:f, s:I, s:f, s:s, s:I, s:f, s:b}",
			   "path", g->path, "mode", "model",
			   "requests", (json_int_t)n,
			   "skipped_malformed", (json_int_t)trace_skipped(g->t),
			   "ops", ops,
			   "mean_key_size", key_sum / (double)n,
			   "mean_write_value_size", nw ? wval_sum / (double)nw : 0.0,
			   "distinct_keys_counted", (json_int_t)kc.used,
			   "distinct_keys_hll", est,
			   "alpha_ranks_used", (json_int_t)ranks_used,
			   "alpha_fit_r2", r2,
			   "alpha_method", "least squares of ln(count) on ln(rank) over the top keys with count >= fit_min_count",
			   "keys_not_counted", (json_int_t)kc.dropped,
			   "alpha", m.alpha,
			   "key_size_raised", m.key_size != (unsigned)llround(key_sum / (double)n));
	free(kc.h);
	free(kc.n);
	free(hll);
	trace_close(g->t);
	g->t = NULL;
	return 0;
fail:
	free(kc.h);
	free(kc.n);
	free(hll);
	return -1;
}

/* ------------------------------------------------------------- the ops */

static void replay_close(struct gen *gg)
{
	struct gen_replay *g = (struct gen_replay *)gg;

	if (!g)
		return;
	if (g->t)
		trace_close(g->t);
	if (g->inner)
		gen_twitter_ops.close(g->inner);
	json_decref(g->fit);
	free(g);
}

static struct gen *replay_open(const json_t *spec, const struct gen_ctx *c, char *err, size_t errlen)
{
	struct gen_replay *g;
	int k;

	if (gen_check(spec, replay_schema, c, err, errlen) < 0)
		return NULL;
	g = calloc(1, sizeof *g);
	if (!g) {
		snprintf(err, errlen, "%s: out of memory", gen_where(c));
		return NULL;
	}
	replay_resolve(conf_str(spec, "path", ""), c, g->path, sizeof g->path);
	g->model = strcmp(conf_str(spec, "mode", "replay"), "model") == 0;
	g->loop = conf_bool(spec, "loop", 1);
	g->max_lines = (uint64_t)conf_int(spec, "max_lines", 0);
	g->tidx = gen_thread_index(c);
	g->tcount = gen_thread_count(c);
	g->t = trace_open(g->path, conf_bool(spec, "skip_malformed", 0), err, errlen);
	if (!g->t) {
		if (strcmp(g->path, conf_str(spec, "path", "")) != 0 || !c->config_dir)
			goto fail;
		/* Say where we looked: relative paths are a common mistake. */
		{
			char e2[600];
			snprintf(e2, sizeof e2, "%s (also looked in %s/); %s.path is relative to the "
				 "config's directory or the working directory", err, c->config_dir,
				 gen_where(c));
			snprintf(err, errlen, "%s", e2);
		}
		goto fail;
	}
	if (g->model) {
		if (replay_model(g, spec, c, err, errlen) < 0)
			goto fail;
		return (struct gen *)g;
	}
	/* Read this thread's first request now, so a bad trace fails at open. */
	if (replay_start_pass(g) < 0) {
		snprintf(err, errlen, "%s", g->err);
		goto fail;
	}
	k = replay_read(g, &g->pending);
	if (k < 0) {
		snprintf(err, errlen, "%s", g->err);
		goto fail;
	}
	if (k == 0) {
		snprintf(err, errlen, "%s: no request for client thread %" PRIu64 " of %" PRIu64
			 " (the trace has fewer usable lines than threads); use a longer trace or "
			 "fewer client threads", g->path, g->tidx, g->tcount);
		goto fail;
	}
	g->have_pending = 1;
	g->records_this_pass = 1;    /* the pending record belongs to pass 1 */
	g->records = 0;
	return (struct gen *)g;
fail:
	replay_close((struct gen *)g);
	return NULL;
}

static json_t *replay_describe(struct gen *gg)
{
	struct gen_replay *g = (struct gen_replay *)gg;
	json_t *d, *ops;

	if (g->model) {
		d = gen_twitter_ops.describe(g->inner);
		json_object_set_new(d, "kind", json_string("trace"));
		json_object_set(d, "fit", g->fit);
		return d;
	}
	ops = json_object();
	for (int i = 0; i < TRACE_NOPS; i++)
		if (g->count[i])
			json_object_set_new(ops, trace_op_name((enum trace_op)i),
					    json_integer((json_int_t)g->count[i]));
	d = json_object();
	json_object_set_new(d, "kind", json_string("trace"));
	json_object_set_new(d, "mode", json_string("replay"));
	json_object_set_new(d, "path", json_string(g->path));
	json_object_set_new(d, "zstd", json_boolean(g->t && trace_is_zstd(g->t)));
	json_object_set_new(d, "loop", json_boolean(g->loop));
	json_object_set_new(d, "thread_index", json_integer((json_int_t)g->tidx));
	json_object_set_new(d, "thread_count", json_integer((json_int_t)g->tcount));
	json_object_set_new(d, "passes", json_integer((json_int_t)g->passes));
	json_object_set_new(d, "requests", json_integer((json_int_t)g->records));
	json_object_set_new(d, "skipped_malformed",
			    json_integer((json_int_t)(g->t ? trace_skipped(g->t) : 0)));
	json_object_set_new(d, "values_clamped", json_integer((json_int_t)g->clamped));
	json_object_set_new(d, "ops", ops);
	return d;
}

static const char *replay_error(struct gen *gg)
{
	struct gen_replay *g = (struct gen_replay *)gg;

	return g->err[0] ? g->err : NULL;
}

const struct gen_ops gen_trace_ops = {
	.name = "trace",
	.version = GEN_OPS_VERSION,
	.open = replay_open,
	.next = replay_next,
	.load = NULL,
	.describe = replay_describe,
	.close = replay_close,
	.error = replay_error,
};
