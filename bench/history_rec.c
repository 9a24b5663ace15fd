/*
 * history_rec.c - per-thread history recorder (history_rec.h).
 *
 * Guarantees, which the checker's soundness rests on:
 *  - the invoke stamp is taken before the request is first posted and the
 *    return stamp after its commit event was polled, so each recorded
 *    interval contains the true one (wider is safe, narrower is not);
 *  - every operation on a sampled key is recorded, committed or not: a
 *    request that never committed is written with t_ret = all ones and
 *    status unknown (it may have taken effect at any later time, or never);
 *  - a SET with room for it carries the unique tag (client, seq) in its
 *    first 16 value bytes, so the value a get returns names its write, and
 *    records the digest of all the bytes it wrote, so the checker can tell
 *    that a get returned all of them (lib/history.h, "Read digests").
 * Cost per recorded op: one key hash, a digest of a returned value, and a
 * 96 B append to a 1 MiB buffer (plus a clock read with hrec_issue; none
 * with hrec_issue_at, which takes the caller's reading); a set made from
 * hrec_value's buffer needs no reseal, and its digest costs three mixes
 * (the filler's part is kept per length).  bench/history-cost.sh measures
 * the total.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "history.h"
#include "history_rec.h"
#include "wire.h"

struct hslot {
	struct history_op op;
	uint8_t busy;
};

struct hrec {
	struct history_writer w;
	struct hslot *pend;
	uint64_t mask;
	uint32_t client_id;
	double keys;
	int numeric;
	uint8_t *val;                /* hrec_value's buffer (a fixed filler) */
	uint32_t val_cap;
	uint64_t val_seq;            /* the seq whose tag val holds, or 0 */
	uint64_t val_kh;             /* its key's hash (hrec_issue reuses it) */
	uint32_t tail_len;           /* history_digest_tail of the filler after */
	uint64_t tail;               /* the tag, for a value of tail_len bytes */
};

const void *hrec_value(struct hrec *r, uint64_t seq, const struct gen_op *op)
{
	if (op->op != KV_OP_SET || op->val_len < HISTORY_TAG_SIZE || (r->numeric && op->val_len <= 19))
		return NULL;
	uint64_t kh = history_key_hash(op->key, op->key_len);
	if (!history_key_sampled(kh, r->keys))
		return NULL;
	if (op->val_len > r->val_cap) {
		uint8_t *nv = realloc(r->val, op->val_len);
		if (!nv)
			return NULL;
		/* a filler that is neither a tag nor a number past the tag */
		memset(nv + r->val_cap, 0x5a, op->val_len - r->val_cap);
		r->val = nv;
		r->val_cap = op->val_len;
	}
	history_tag_put(r->val, r->client_id, seq);
	r->val_seq = seq;
	r->val_kh = kh;
	if (r->tail_len != op->val_len) {   /* the filler is the same for every tag */
		r->tail = history_digest_tail(r->val + HISTORY_TAG_SIZE, op->val_len - HISTORY_TAG_SIZE);
		r->tail_len = op->val_len;
	}
	return r->val;
}

struct hrec *hrec_open(const struct hrec_conf *c, unsigned rank, unsigned thread,
		       uint32_t client_id, unsigned pcap, char *err, size_t errlen)
{
	char path[512];
	/* mkdir -p: every parent, then the directory itself */
	snprintf(path, sizeof path, "%s", c->dir);
	for (char *p = path + 1;; p++) {
		if (*p && *p != '/')
			continue;
		char was = *p;
		*p = 0;
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "history directory %s: cannot create %s: %s", c->dir, path,
				 strerror(errno));
			return NULL;
		}
		*p = was;
		if (!was)
			break;
	}
	struct hrec *r = calloc(1, sizeof *r);
	if (r)
		r->pend = calloc(pcap, sizeof *r->pend);
	if (!r || !r->pend) {
		snprintf(err, errlen, "history: out of memory for %u pending records", pcap);
		free(r);
		return NULL;
	}
	r->mask = pcap - 1;
	r->client_id = client_id;
	r->keys = c->keys > 0 && c->keys < 1 ? c->keys : 1.0;
	r->numeric = c->numeric;
	struct history_header h = {
		.clock_kind = HISTORY_CLOCK_MONOTONIC, .clock_bound_ns = c->clock_bound_ns,
		.client_id = client_id, .flags = r->keys < 1 ? HISTORY_F_SAMPLED : 0,
		.key_fraction = r->keys,
	};
	gethostname(h.host, sizeof h.host - 1);
	snprintf(path, sizeof path, "%s/history-r%u-t%u.bin", c->dir, rank, thread);
	if (history_writer_open(&r->w, path, &h, 1u << 20, err, errlen) != 0) {
		free(r->pend);
		free(r);
		return NULL;
	}
	return r;
}

static void issue(struct hrec *r, uint64_t seq, const struct gen_op *op, uint8_t *req, uint32_t len,
		  uint64_t t_inv)
{
	int from_val = r->val_seq == seq;   /* encoded from hrec_value's buffer */
	uint64_t kh = from_val ? r->val_kh : history_key_hash(op->key, op->key_len);
	if (!from_val && !history_key_sampled(kh, r->keys))
		return;
	struct hslot *s = &r->pend[seq & r->mask];
	if (s->busy)   /* never committed (a failed post): unknown outcome */
		history_writer_add(&r->w, &s->op);
	struct history_op *o = &s->op;
	memset(o, 0, sizeof *o);
	o->t_ret = HISTORY_T_UNKNOWN;
	o->status = HISTORY_ST_UNKNOWN;
	o->key_hash = kh;
	o->seq = seq;
	o->client = r->client_id;
	o->op = (uint8_t)op->op;
	o->key_len = (uint8_t)op->key_len;
	o->val_len = op->val_len;
	memcpy(o->key, op->key, op->key_len < HISTORY_KEY_SHOWN ? op->key_len : HISTORY_KEY_SHOWN);
	if (op->op == KV_OP_SET) {
		uint8_t *v = req + WIRE_HDR_SIZE + op->key_len;
		if (r->numeric && op->val_len >= 1 && op->val_len <= 19) {
			uint64_t x = seq;
			for (uint32_t i = op->val_len; i-- > 0; x /= 10)
				v[i] = (uint8_t)('0' + x % 10);
			wire_req_seal(req, len);
			uint32_t c;
			uint64_t sq;
			o->wkind = (uint8_t)history_value_kind(v, op->val_len, &c, &sq, &o->arg);
		} else if (op->val_len >= HISTORY_TAG_SIZE) {
			if (from_val) {
				o->arg = history_digest_join(v, r->tail, op->val_len);
			} else {
				history_tag_put(v, r->client_id, seq);
				wire_req_seal(req, len);
				o->arg = history_digest(v, op->val_len);
			}
			o->wkind = HV_TAG;
			o->dflags = HISTORY_D_WRITTEN;
		} else {
			uint32_t c;
			uint64_t sq;
			o->wkind = (uint8_t)history_value_kind(v, op->val_len, &c, &sq, &o->arg);
		}
	} else if (op->op == KV_OP_INCR) {
		o->arg = op->aux;
	}
	s->busy = 1;
	o->t_inv = t_inv ? t_inv : clock_ns();   /* last: before the post, after our own work */
}

void hrec_issue_at(struct hrec *r, uint64_t seq, const struct gen_op *op, uint8_t *req, uint32_t len,
		   uint64_t t_inv)
{
	issue(r, seq, op, req, len, t_inv);
}

void hrec_issue(struct hrec *r, uint64_t seq, const struct gen_op *op, uint8_t *req, uint32_t len)
{
	issue(r, seq, op, req, len, 0);
}

void hrec_commit(struct hrec *r, const struct tp_event *ev, uint64_t now)
{
	struct hslot *s = &r->pend[ev->seq & r->mask];
	if (!s->busy || s->op.seq != ev->seq)
		return;   /* not a sampled key */
	struct history_op *o = &s->op;
	o->t_ret = now;
	if (ev->kind != TP_EV_RESP) {
		o->status = HISTORY_ST_UNSEEN;
	} else {
		o->status = (uint8_t)ev->status;
		if (ev->status == KV_OK && (o->op == KV_OP_GET || o->op == KV_OP_INCR)) {
			o->val_len = ev->val_len;
			o->rkind = (uint8_t)history_value_kind(ev->val, ev->val_len, &o->rclient,
							       &o->rseq, &o->rval);
			if (o->rkind == HV_TAG)
				o->dflags = HISTORY_D_READ;
		}
	}
	history_writer_add(&r->w, o);
	s->busy = 0;
}

int hrec_close(struct hrec *r, char *err, size_t errlen)
{
	if (!r)
		return 0;
	for (uint64_t i = 0; i <= r->mask; i++)
		if (r->pend[i].busy)
			history_writer_add(&r->w, &r->pend[i].op);
	int rc = history_writer_close(&r->w, err, errlen);
	free(r->val);
	free(r->pend);
	free(r);
	return rc;
}
