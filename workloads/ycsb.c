/*
 * ycsb.c - YCSB-like generator: the core workloads A-F, any read/update/
 * insert/scan/read-modify-write mix, or a plain put ratio (paper §6.4).
 *
 * Follows YCSB's CoreWorkload where it matters for the request stream:
 * keys are "user" + decimal(fnvhash64(keynum)) (insertorder=hashed); the
 * zipfian chooser is YCSB's ScrambledZipfian (a rank over 10^10 items
 * hashed modulo record_count + expected new keys, the latter
 * 2 * operation_count * insert_proportion) and re-draws key numbers not
 * inserted yet; "latest" is YCSB's SkewedLatest (newest key minus a
 * Zipfian rank over the keys inserted so far); uniform is uniform over the
 * inserted keys.  What the KV wire cannot express is mapped and counted:
 *   - scan: a GET of the scan's first key (counted as "scan" in describe());
 *   - read-modify-write: two consecutive ops from next(), a GET then a SET
 *     of the same key;
 *   - every write (insert, update, RMW's write) carries the whole record,
 *     field_count * field_length bytes (or value_size).
 * Threads never share state: thread g of N (over all client processes)
 * loads records g, g+N, ... and inserts key numbers record_count + g + k*N
 * during the run, so the threads' inserts are disjoint.  A thread assumes
 * the others have inserted as many keys as it has (they run at the same
 * rate), which is what bounds its choice of existing keys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <math.h>

#include "gen.h"
#include "conf.h"
#include "rng.h"
#include "zipf.h"

enum ycsb_kind { Y_READ, Y_UPDATE, Y_INSERT, Y_SCAN, Y_RMW, Y_NKIND };
static const char *const ycsb_kind_name[Y_NKIND] = { "read", "update", "insert", "scan", "rmw" };
static const char *const ycsb_prop_key[Y_NKIND] = {
	"read_proportion", "update_proportion", "insert_proportion", "scan_proportion",
	"rmw_proportion",
};

enum ycsb_dist { D_ZIPFIAN, D_LATEST, D_UNIFORM };
static const char *const ycsb_dist_names[] = { "zipfian", "latest", "uniform", NULL };

/* YCSB's workloads/workloada..f: proportions and request distribution. */
static const struct {
	char letter;
	double p[Y_NKIND];
	enum ycsb_dist dist;
} ycsb_core[] = {
	{ 'a', { 0.50, 0.50, 0, 0, 0 }, D_ZIPFIAN },
	{ 'b', { 0.95, 0.05, 0, 0, 0 }, D_ZIPFIAN },
	{ 'c', { 1.00, 0, 0, 0, 0 }, D_ZIPFIAN },
	{ 'd', { 0.95, 0, 0.05, 0, 0 }, D_LATEST },
	{ 'e', { 0, 0, 0.05, 0.95, 0 }, D_ZIPFIAN },
	{ 'f', { 0.50, 0, 0, 0, 0.50 }, D_ZIPFIAN },
};
static const char *const ycsb_letters[] = { "a", "b", "c", "d", "e", "f",
	"A", "B", "C", "D", "E", "F", NULL };

/* Re-draws of a not-yet-inserted key before falling back to a modulo. */
#define YCSB_REDRAW_MAX 64

struct gen_ycsb {
	char letter;                /* core workload, or 0 */
	double p[Y_NKIND];          /* normalised proportions */
	double cum[Y_NKIND];        /* cumulative, for the op draw */
	enum ycsb_dist dist;
	double theta;
	uint64_t record_count, operation_count, expected_new;
	uint32_t field_length, field_count, value_size;
	uint64_t tidx, tcount;      /* global thread index and count */
	uint64_t inserted;          /* this thread's inserts so far */
	struct zipf z;              /* zipfian key chooser (fixed size) */
	struct zipf zl;             /* latest: Zipfian over the inserted keys */
	int have_z, have_zl;
	uint64_t zl_items;          /* items zl currently covers */
	int rmw_pending;            /* next() owes the SET of a read-modify-write */
	uint64_t rmw_key;
	struct rng r;
	uint64_t count[Y_NKIND];
	char err[256];
};

static const struct conf_key ycsb_schema[] = {
	{ "kind", CONF_STR, 1, 0, -1, NULL, NULL, "\"ycsb\"" },
	{ "workload", CONF_STR, 0, 0, -1, ycsb_letters, NULL, "core workload a..f" },
	{ "read_proportion", CONF_NUM, 0, 0, 1, NULL, NULL, "share of reads (GET)" },
	{ "update_proportion", CONF_NUM, 0, 0, 1, NULL, NULL, "share of updates (SET)" },
	{ "insert_proportion", CONF_NUM, 0, 0, 1, NULL, NULL, "share of inserts of new keys (SET)" },
	{ "scan_proportion", CONF_NUM, 0, 0, 1, NULL, NULL, "share of scans (sent as a GET of the first key)" },
	{ "rmw_proportion", CONF_NUM, 0, 0, 1, NULL, NULL, "share of read-modify-writes (GET then SET)" },
	{ "put_ratio", CONF_NUM, 0, 0, 1, NULL, NULL, "shorthand: updates with this share, reads otherwise" },
	{ "request_distribution", CONF_STR, 0, 0, -1, ycsb_dist_names, NULL, "zipfian (default), latest or uniform" },
	{ "zipf", CONF_NUM, 0, 0, 10, NULL, NULL, "Zipf theta (default 0.99)" },
	{ "record_count", CONF_INT, 0, 1, 1e15, NULL, NULL, "records loaded before the run (default 1000)" },
	{ "operation_count", CONF_INT, 0, 1, 1e15, NULL, NULL, "sizes the zipfian key space for inserts as YCSB does (default record_count)" },
	{ "field_length", CONF_INT, 0, 0, KV_MAX_VALUE, NULL, NULL, "bytes per field (default 100)" },
	{ "field_count", CONF_INT, 0, 1, 1000, NULL, NULL, "fields per record (default 1)" },
	{ "value_size", CONF_INT, 0, 0, KV_MAX_VALUE, NULL, NULL, "bytes per write (default field_count * field_length)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

/* YCSB buildKeyName with insertorder=hashed and zeropadding=1. */
static void ycsb_key(struct gen_op *op, uint64_t keynum)
{
	int n = snprintf(op->key, sizeof op->key, "user%" PRIu64, fnv1a64_u64(keynum));

	op->key_len = (uint16_t)n;
}

/* Key numbers known to exist: the loaded records plus every thread's
 * inserts, assuming the others have inserted as many as this one. */
static uint64_t ycsb_limit(const struct gen_ycsb *g)
{
	return g->record_count + g->inserted * g->tcount;
}

/* The newest key number this thread inserted, or the last loaded one. */
static uint64_t ycsb_newest(const struct gen_ycsb *g)
{
	if (g->inserted == 0)
		return g->record_count - 1;
	return g->record_count + g->tidx + (g->inserted - 1) * g->tcount;
}

/*
 * Extends the latest-distribution Zipfian to n items the way YCSB's
 * ZipfianGenerator does when its item count grows: zeta(n) is extended
 * incrementally and eta recomputed; the other constants do not depend on n.
 * An exact table (theta == 1) is rebuilt instead.
 */
static int ycsb_grow_latest(struct gen_ycsb *g, uint64_t n)
{
	if (n <= g->zl_items)
		return 0;
	if (g->zl.cdf) {
		zipf_free(&g->zl);
		g->have_zl = 0;
		if (zipf_init(&g->zl, n, g->theta, 0, g->err, sizeof g->err) < 0)
			return -1;
		g->have_zl = 1;
	} else {
		double zetan = g->zl.zetan;
		for (uint64_t i = g->zl_items + 1; i <= n; i++)
			zetan += pow((double)i, -g->theta);
		g->zl.zetan = zetan;
		g->zl.n = n;
		g->zl.items = n;
		g->zl.eta = (1 - pow(2.0 / (double)n, 1 - g->theta)) /
			    (1 - g->zl.zeta2theta / zetan);
	}
	g->zl_items = n;
	return 0;
}

static int ycsb_choose(struct gen_ycsb *g, uint64_t *keynum)
{
	uint64_t limit = ycsb_limit(g), k = 0;

	switch (g->dist) {
	case D_UNIFORM:
		k = rng_below(&g->r, limit);
		break;
	case D_ZIPFIAN:
		for (int i = 0; i < YCSB_REDRAW_MAX; i++) {
			k = g->have_z ? zipf_scrambled_next(&g->z, &g->r)
				      : rng_below(&g->r, g->record_count + g->expected_new);
			if (k < limit)
				break;
		}
		if (k >= limit)
			k %= limit;
		break;
	case D_LATEST: {
		uint64_t newest = ycsb_newest(g);
		if (ycsb_grow_latest(g, newest + 1) < 0)
			return -1;
		k = newest - zipf_next(&g->zl, &g->r);
		break;
	}
	}
	*keynum = k;
	return 0;
}

static struct gen *ycsb_open(const json_t *spec, const struct gen_ctx *c, char *err, size_t errlen)
{
	struct gen_ycsb *g;
	const char *w, *dist;
	int explicit = 0;
	double sum = 0;
	uint64_t zn;

	if (gen_check(spec, ycsb_schema, c, err, errlen) < 0)
		return NULL;
	for (int k = 0; k < Y_NKIND; k++)
		if (json_object_get(spec, ycsb_prop_key[k]))
			explicit = 1;
	if (explicit && json_object_get(spec, "put_ratio")) {
		snprintf(err, errlen, "%s: put_ratio and *_proportion keys both given; "
			 "use put_ratio alone or list the proportions", gen_where(c));
		return NULL;
	}
	g = calloc(1, sizeof *g);
	if (!g) {
		snprintf(err, errlen, "%s: out of memory", gen_where(c));
		return NULL;
	}
	/* Start from the core workload (or A's 50/50 mix), then override. */
	g->p[Y_READ] = 0.5;
	g->p[Y_UPDATE] = 0.5;
	g->dist = D_ZIPFIAN;
	w = conf_str(spec, "workload", NULL);
	if (w) {
		char l = (char)(w[0] | 0x20);
		for (size_t i = 0; i < sizeof ycsb_core / sizeof ycsb_core[0]; i++)
			if (ycsb_core[i].letter == l) {
				memcpy(g->p, ycsb_core[i].p, sizeof g->p);
				g->dist = ycsb_core[i].dist;
				g->letter = l;
			}
	}
	if (json_object_get(spec, "put_ratio")) {
		memset(g->p, 0, sizeof g->p);
		g->p[Y_UPDATE] = conf_num(spec, "put_ratio", 0);
		g->p[Y_READ] = 1 - g->p[Y_UPDATE];
	} else if (explicit) {
		/* Explicit proportions replace the whole mix: an unlisted kind is 0. */
		for (int k = 0; k < Y_NKIND; k++)
			g->p[k] = conf_num(spec, ycsb_prop_key[k], 0);
	}
	for (int k = 0; k < Y_NKIND; k++)
		sum += g->p[k];
	if (sum <= 0) {
		snprintf(err, errlen, "%s: all proportions are 0; give at least one of "
			 "read_proportion, update_proportion, insert_proportion, scan_proportion, "
			 "rmw_proportion a positive value", gen_where(c));
		free(g);
		return NULL;
	}
	for (int k = 0; k < Y_NKIND; k++) {
		g->p[k] /= sum;
		g->cum[k] = (k ? g->cum[k - 1] : 0) + g->p[k];
	}
	g->cum[Y_NKIND - 1] = 1.0;

	dist = conf_str(spec, "request_distribution", NULL);
	if (dist)
		g->dist = strcmp(dist, "latest") == 0 ? D_LATEST :
			  strcmp(dist, "uniform") == 0 ? D_UNIFORM : D_ZIPFIAN;
	g->theta = conf_num(spec, "zipf", 0.99);
	g->record_count = (uint64_t)conf_int(spec, "record_count", 1000);
	g->operation_count = (uint64_t)conf_int(spec, "operation_count", (long long)g->record_count);
	g->field_length = (uint32_t)conf_int(spec, "field_length", 100);
	g->field_count = (uint32_t)conf_int(spec, "field_count", 1);
	if (json_object_get(spec, "value_size")) {
		g->value_size = (uint32_t)conf_int(spec, "value_size", 0);
	} else if ((uint64_t)g->field_count * g->field_length > KV_MAX_VALUE) {
		snprintf(err, errlen, "%s: field_count %u * field_length %u = %llu bytes exceeds "
			 "the %u-byte value limit; lower one of them or set value_size",
			 gen_where(c), g->field_count, g->field_length,
			 (unsigned long long)g->field_count * g->field_length, KV_MAX_VALUE);
		free(g);
		return NULL;
	} else {
		g->value_size = g->field_count * g->field_length;
	}
	g->tidx = gen_thread_index(c);
	g->tcount = gen_thread_count(c);
	g->expected_new = (uint64_t)(2.0 * (double)g->operation_count * g->p[Y_INSERT]);
	gen_seed(&g->r, c, 2);

	zn = g->record_count + g->expected_new;
	if (g->dist == D_ZIPFIAN && g->theta > 0) {
		if (zipf_init_ycsb_scrambled(&g->z, zn, g->theta, err, errlen) < 0) {
			free(g);
			return NULL;
		}
		g->have_z = 1;
	} else if (g->dist == D_LATEST) {
		/* No exact table: it would have to be rebuilt on every insert. */
		if (zipf_init(&g->zl, g->record_count, g->theta, 0, err, errlen) < 0) {
			free(g);
			return NULL;
		}
		g->have_zl = 1;
		g->zl_items = g->record_count;
	}
	return (struct gen *)g;
}

static void ycsb_fill(struct gen_ycsb *g, struct gen_op *op, unsigned wop, uint64_t keynum)
{
	op->op = wop;
	op->val_len = wop == KV_OP_SET ? g->value_size : 0;
	op->aux = 0;
	op->flags = gen_op_flags(wop);
	ycsb_key(op, keynum);
}

static int ycsb_next(struct gen *gg, struct gen_op *op)
{
	struct gen_ycsb *g = (struct gen_ycsb *)gg;
	double u;
	int kind = 0;
	uint64_t k;

	g->err[0] = '\0';
	if (g->rmw_pending) {
		g->rmw_pending = 0;
		ycsb_fill(g, op, KV_OP_SET, g->rmw_key);
		return 0;
	}
	u = rng_double(&g->r);
	while (kind < Y_NKIND - 1 && u >= g->cum[kind])
		kind++;
	g->count[kind]++;
	if (kind == Y_INSERT) {
		k = g->record_count + g->tidx + g->inserted * g->tcount;
		g->inserted++;
		ycsb_fill(g, op, KV_OP_SET, k);
		return 0;
	}
	if (ycsb_choose(g, &k) < 0)
		return -1;
	switch (kind) {
	case Y_UPDATE:
		ycsb_fill(g, op, KV_OP_SET, k);
		break;
	case Y_RMW:
		g->rmw_pending = 1;
		g->rmw_key = k;
		ycsb_fill(g, op, KV_OP_GET, k);
		break;
	default:    /* read, scan */
		ycsb_fill(g, op, KV_OP_GET, k);
		break;
	}
	return 0;
}

static int ycsb_load(struct gen *gg, uint64_t i, struct gen_op *op)
{
	struct gen_ycsb *g = (struct gen_ycsb *)gg;
	uint64_t k = g->tidx + i * g->tcount;

	if (i >= g->record_count || k >= g->record_count)
		return 1;
	ycsb_fill(g, op, KV_OP_SET, k);
	return 0;
}

static json_t *ycsb_describe(struct gen *gg)
{
	struct gen_ycsb *g = (struct gen_ycsb *)gg;
	json_t *d = json_object(), *p = json_object(), *n = json_object();
	char l[2] = { g->letter, 0 };

	for (int k = 0; k < Y_NKIND; k++) {
		json_object_set_new(p, ycsb_kind_name[k], json_real(g->p[k]));
		json_object_set_new(n, ycsb_kind_name[k], json_integer((json_int_t)g->count[k]));
	}
	json_object_set_new(d, "kind", json_string("ycsb"));
	json_object_set_new(d, "workload", g->letter ? json_string(l) : json_null());
	json_object_set_new(d, "proportions", p);
	json_object_set_new(d, "request_distribution", json_string(ycsb_dist_names[g->dist]));
	json_object_set_new(d, "zipf", json_real(g->theta));
	json_object_set_new(d, "record_count", json_integer((json_int_t)g->record_count));
	json_object_set_new(d, "operation_count", json_integer((json_int_t)g->operation_count));
	json_object_set_new(d, "value_size", json_integer(g->value_size));
	json_object_set_new(d, "field_count", json_integer(g->field_count));
	json_object_set_new(d, "field_length", json_integer(g->field_length));
	json_object_set_new(d, "scan_as", json_string("get of the first key"));
	json_object_set_new(d, "rmw_as", json_string("get then set"));
	json_object_set_new(d, "ops", n);
	json_object_set_new(d, "inserted_keys", json_integer((json_int_t)g->inserted));
	return d;
}

static const char *ycsb_error(struct gen *gg)
{
	struct gen_ycsb *g = (struct gen_ycsb *)gg;

	return g->err[0] ? g->err : NULL;
}

static void ycsb_close(struct gen *gg)
{
	struct gen_ycsb *g = (struct gen_ycsb *)gg;

	if (!g)
		return;
	if (g->have_z)
		zipf_free(&g->z);
	if (g->have_zl)
		zipf_free(&g->zl);
	free(g);
}

const struct gen_ops gen_ycsb_ops = {
	.name = "ycsb",
	.version = GEN_OPS_VERSION,
	.open = ycsb_open,
	.next = ycsb_next,
	.load = ycsb_load,
	.describe = ycsb_describe,
	.close = ycsb_close,
	.error = ycsb_error,
};
