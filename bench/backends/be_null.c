/*
 * be_null.c - the `null` back end: no data, optional service time.
 *
 * For microbenchmarks (paper Fig 6) where the cost of the store itself must
 * not hide the cost of communication.  Every op succeeds: get returns an
 * empty value, set and del do nothing, echo returns the request's value,
 * incr returns its delta (aux) in decimal.  A service time can be added to
 * every op: fixed (busy-wait, since sleeping cannot hit microseconds) or
 * exponential with the configured mean, drawn from a per-instance
 * generator seeded from (seed, worker) so runs repeat.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "arrival.h"
#include "bits.h"
#include "clock.h"
#include "rng.h"

struct backend {
	uint64_t service_ns;
	int service_exp;
	struct rng rng;
	uint64_t ops[KV_OP_MAX_];
	uint64_t bad_ops;
	uint64_t service_ns_total;   /* time actually spent waiting */
	uint64_t service_ns_drawn;   /* sum of the service times asked for */
};

static struct backend *null_open(const struct backend_conf *c, char *err, size_t errlen)
{
	struct backend *b = calloc(1, sizeof *b);
	if (!b) {
		snprintf(err, errlen, "null backend: out of memory");
		return NULL;
	}
	b->service_ns = c->set.service_ns;
	b->service_exp = c->set.service_dist == 1;   /* service_dist's choices: fixed, exp */
	/* Stream 0x6e756c6c ("null") keeps these draws apart from any other
	 * generator seeded from the same run seed and worker. */
	rng_seed_multi(&b->rng, c->seed, 0x6e756c6cu, (uint64_t)(int64_t)c->worker);
	return b;
}

static void spend(struct backend *b)
{
	uint64_t ns = b->service_ns;

	if (ns == 0)
		return;
	if (b->service_exp)
		ns = (uint64_t)arrival_exp_draw(&b->rng, (double)ns);
	b->service_ns_drawn += ns;
	uint64_t t0 = clock_ns(), deadline = t0 + ns, t;
	do {
		cpu_relax();
		t = clock_ns();
	} while (t < deadline);
	b->service_ns_total += t - t0;
}

static void null_exec(struct backend *b, const struct backend_req *r, struct backend_out *o)
{
	o->status = KV_OK;
	o->val_len = 0;
	if (r->op >= KV_OP_MAX_) {
		b->bad_ops++;
		o->status = KV_ERR_OP;
		return;
	}
	b->ops[r->op]++;
	spend(b);
	switch (r->op) {
	case KV_OP_ECHO:
		backend_copy_out(o, r->val, r->val_len);
		break;
	case KV_OP_INCR: {
		char num[24];
		int n = snprintf(num, sizeof num, "%" PRIu64, r->aux);
		backend_copy_out(o, (const uint8_t *)num, (uint32_t)n);
		break;
	}
	default:   /* nop, get (empty value), set, del */
		break;
	}
}

static json_t *null_stats(struct backend *b)
{
	json_t *ops = json_object();
	for (unsigned i = 0; i < KV_OP_MAX_; i++)
		json_object_set_new(ops, kv_op_name(i), json_integer((json_int_t)b->ops[i]));
	json_object_set_new(ops, "unsupported", json_integer((json_int_t)b->bad_ops));
	return json_pack("{s:s, s:o, s:I, s:s, s:I, s:I}",
			 "backend", "null",
			 "ops", ops,
			 "service_ns_conf", (json_int_t)b->service_ns,
			 "service_dist", b->service_exp ? "exp" : "fixed",
			 "service_ns_drawn", (json_int_t)b->service_ns_drawn,
			 "service_ns_total", (json_int_t)b->service_ns_total);
}

static void null_close(struct backend *b)
{
	free(b);
}

const struct backend_ops null_backend_ops = {
	.name = "null",
	.version = BACKEND_OPS_VERSION,
	.open = null_open,
	.exec = null_exec,
	.stats_json = null_stats,
	.close = null_close,
};
