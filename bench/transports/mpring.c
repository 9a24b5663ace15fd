/*
 * mpring.c - placement-order bookkeeping of a multi-packet receive ring
 * (see mpring.h).  Per stride it remembers what was reported there; per
 * WQE where the NIC closed it and how many of its messages are still out.
 * The head cursor walks strides in placement order and hands out a ticket
 * whenever the message at the cursor is known.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

#include "mpring.h"

enum { ST_EMPTY = 0, ST_START = 1, ST_BODY = 2 };

struct mp_wqe {
	uint64_t seq;            /* sequence number posted into this buffer */
	unsigned close;          /* first unused stride; S = open (or full) */
	unsigned hi;             /* end of the furthest message reported */
	int closed;              /* a consumed flag or a filler was seen */
	int passed;              /* the head has moved past this WQE */
	uint64_t emitted, released;
};

struct mpring {
	struct mpring_conf c;
	unsigned S;              /* strides per WQE */
	uint8_t *st;             /* wqes x S: ST_* */
	uint32_t *len;           /* wqes x S: length of the message starting here */
	struct mp_wqe *w;
	uint64_t posted;         /* next WQE sequence number to post */
	uint64_t head_wqe;       /* the head cursor: WQE sequence and stride */
	unsigned head_stride;
	uint64_t next_ticket, oldest_out;
	uint64_t *outq;          /* max_out: WQE of each ticket out, by ticket % max_out */
	struct mpring_stats s;
	char err[160];
};

static int refuse(struct mpring *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct mpring *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof r->err, fmt, ap);
	va_end(ap);
	r->s.rejected++;
	return -1;
}

struct mpring *mpring_new(const struct mpring_conf *c, char *err, size_t errlen)
{
	if (c->log_stride < 6 || c->log_stride > 16) {
		snprintf(err, errlen, "multi-packet ring: stride of 2^%u bytes; expected 2^6 (64 B) to 2^16",
			 c->log_stride);
		return NULL;
	}
	if (c->log_strides < 1 || c->log_strides > 16) {
		snprintf(err, errlen, "multi-packet ring: 2^%u strides per WQE; expected 2^1 to 2^16", c->log_strides);
		return NULL;
	}
	if (c->wqes < 2 || (c->wqes & (c->wqes - 1)) || c->wqes > (1u << 20)) {
		snprintf(err, errlen, "multi-packet ring: %u WQEs; expected a power of two from 2 to 2^20", c->wqes);
		return NULL;
	}
	if (c->max_out < 1) {
		snprintf(err, errlen, "multi-packet ring: max_out must be at least 1");
		return NULL;
	}
	struct mpring *r = calloc(1, sizeof *r);
	if (!r) {
		snprintf(err, errlen, "multi-packet ring: out of memory");
		return NULL;
	}
	r->c = *c;
	r->S = 1u << c->log_strides;
	size_t n = (size_t)c->wqes * r->S;
	r->st = calloc(n, 1);
	r->len = calloc(n, sizeof *r->len);
	r->w = calloc(c->wqes, sizeof *r->w);
	r->outq = calloc(c->max_out, sizeof *r->outq);
	if (!r->st || !r->len || !r->w || !r->outq) {
		mpring_free(r);
		snprintf(err, errlen, "multi-packet ring: out of memory for %zu strides", n);
		return NULL;
	}
	for (unsigned i = 0; i < c->wqes; i++) {
		r->w[i].seq = i;
		r->w[i].close = r->S;
		r->w[i].hi = 0;
	}
	r->posted = c->wqes;
	return r;
}

void mpring_free(struct mpring *r)
{
	if (!r)
		return;
	free(r->st);
	free(r->len);
	free(r->w);
	free(r->outq);
	free(r);
}

/* The WQE a report names, if the report may name it. */
static struct mp_wqe *live_wqe(struct mpring *r, uint64_t wqe, const char *what)
{
	if (wqe >= r->posted) {
		refuse(r, "%s for WQE %" PRIu64 ", which was never posted (%" PRIu64 " posted)", what, wqe, r->posted);
		return NULL;
	}
	struct mp_wqe *w = &r->w[wqe & (r->c.wqes - 1)];
	if (w->seq != wqe || w->passed) {
		refuse(r, "%s for WQE %" PRIu64 ", which is no longer in the ring", what, wqe);
		return NULL;
	}
	return w;
}

int mpring_arrive(struct mpring *r, uint64_t wqe, unsigned stride, uint32_t len, int consumed)
{
	struct mp_wqe *w = live_wqe(r, wqe, "a message");
	if (!w)
		return -1;
	if (stride >= r->S)
		return refuse(r, "a message at stride %u of WQE %" PRIu64 ", which has %u strides", stride, wqe, r->S);
	if (len == 0)
		return refuse(r, "a message of 0 bytes at stride %u of WQE %" PRIu64, stride, wqe);
	uint64_t k = ((uint64_t)len + (1u << r->c.log_stride) - 1) >> r->c.log_stride;
	if (stride + k > r->S)
		return refuse(r, "a message of %u bytes at stride %u runs past the end of WQE %" PRIu64, len, stride,
			      wqe);
	if (w->closed && stride + k > w->close)
		return refuse(r, "a message at stride %u of WQE %" PRIu64 ", which was closed at stride %u", stride,
			      wqe, w->close);
	size_t base = (size_t)(wqe & (r->c.wqes - 1)) * r->S;
	for (uint64_t i = 0; i < k; i++)
		if (r->st[base + stride + i] != ST_EMPTY)
			return refuse(r, "a message at stride %u of WQE %" PRIu64 " overlaps one reported before",
				      stride, wqe);
	unsigned end = (unsigned)(stride + k);
	if (consumed) {
		if (w->closed)
			return refuse(r, "WQE %" PRIu64 " closed a second time", wqe);
		if (w->hi > end)
			return refuse(r, "WQE %" PRIu64 " closed at stride %u, before a message reported at %u", wqe,
				      end, w->hi);
	}
	r->st[base + stride] = ST_START;
	for (uint64_t i = 1; i < k; i++)
		r->st[base + stride + i] = ST_BODY;
	r->len[base + stride] = len;
	if (end > w->hi)
		w->hi = end;
	if (consumed) {
		w->closed = 1;
		w->close = end;
		r->s.consumed++;
	}
	r->s.messages++;
	r->s.strides_used += k;
	return 0;
}

int mpring_fill(struct mpring *r, uint64_t wqe, unsigned stride)
{
	if (stride == r->S && wqe < r->posted) {
		const struct mp_wqe *o = &r->w[wqe & (r->c.wqes - 1)];
		if (o->seq != wqe || o->passed)
			return 0;   /* it was full, hence closed already: nothing changes */
	}
	struct mp_wqe *w = live_wqe(r, wqe, "a filler");
	if (!w)
		return -1;
	if (stride > r->S)
		return refuse(r, "a filler at stride %u of WQE %" PRIu64 ", which has %u strides", stride, wqe, r->S);
	if (w->closed)
		return refuse(r, "WQE %" PRIu64 " closed a second time", wqe);
	if (w->hi > stride)
		return refuse(r, "WQE %" PRIu64 " closed at stride %u, before a message reported at %u", wqe, stride,
			      w->hi);
	w->closed = 1;
	w->close = stride;
	r->s.fillers++;
	return 0;
}

/* Moves the head past every WQE that is closed where the head stands: all
 * its messages were handed out.  A WQE whose strides are all used is
 * closed whether or not a flag or filler said so. */
static void advance(struct mpring *r)
{
	while (r->head_wqe < r->posted) {
		struct mp_wqe *w = &r->w[r->head_wqe & (r->c.wqes - 1)];
		if (r->head_stride < w->close)
			return;
		r->s.strides_wasted += r->S - w->close;
		w->passed = 1;
		r->head_wqe++;
		r->head_stride = 0;
	}
}

int mpring_next(struct mpring *r, struct mpring_msg *m)
{
	advance(r);
	if (r->head_wqe >= r->posted)
		return 0;
	struct mp_wqe *w = &r->w[r->head_wqe & (r->c.wqes - 1)];
	size_t at = (size_t)(r->head_wqe & (r->c.wqes - 1)) * r->S + r->head_stride;
	if (r->st[at] != ST_START)
		return 0;   /* the next message is not reported yet */
	if (r->next_ticket - r->oldest_out >= r->c.max_out)
		return 0;
	uint32_t len = r->len[at];
	m->ticket = r->next_ticket;
	m->wqe = r->head_wqe;
	m->stride = r->head_stride;
	m->len = len;
	m->off = mpring_offset(r, m->wqe, m->stride);
	r->outq[r->next_ticket % r->c.max_out] = r->head_wqe;
	r->next_ticket++;
	w->emitted++;
	r->head_stride += (unsigned)(((uint64_t)len + (1u << r->c.log_stride) - 1) >> r->c.log_stride);
	advance(r);
	return 1;
}

int mpring_release(struct mpring *r, uint64_t ticket)
{
	if (ticket != r->oldest_out || ticket >= r->next_ticket) {
		if (ticket >= r->next_ticket)
			return refuse(r, "release of ticket %" PRIu64 ", which was not handed out (next is %" PRIu64 ")",
				      ticket, r->next_ticket);
		return refuse(r, "release of ticket %" PRIu64 " out of order (the oldest out is %" PRIu64 ")", ticket,
			      r->oldest_out);
	}
	uint64_t wqe = r->outq[ticket % r->c.max_out];
	r->w[wqe & (r->c.wqes - 1)].released++;
	r->oldest_out++;
	return 0;
}

int mpring_repost(struct mpring *r, uint64_t *wqe)
{
	advance(r);
	uint64_t old = r->posted - r->c.wqes;
	unsigned i = (unsigned)(old & (r->c.wqes - 1));
	struct mp_wqe *w = &r->w[i];
	if (!w->passed || w->released != w->emitted)
		return 0;
	memset(r->st + (size_t)i * r->S, ST_EMPTY, r->S);
	memset(r->len + (size_t)i * r->S, 0, (size_t)r->S * sizeof *r->len);
	memset(w, 0, sizeof *w);
	w->seq = r->posted;
	w->close = r->S;
	*wqe = r->posted++;
	r->s.reposts++;
	return 1;
}

size_t mpring_offset(const struct mpring *r, uint64_t wqe, unsigned stride)
{
	return ((size_t)(wqe & (r->c.wqes - 1)) << (r->c.log_stride + r->c.log_strides)) +
		((size_t)stride << r->c.log_stride);
}

size_t mpring_bytes(const struct mpring *r)
{
	return (size_t)r->c.wqes << (r->c.log_stride + r->c.log_strides);
}

size_t mpring_wqe_bytes(const struct mpring *r)
{
	return (size_t)1 << (r->c.log_stride + r->c.log_strides);
}

uint64_t mpring_posted(const struct mpring *r)
{
	return r->posted;
}

void mpring_get_stats(const struct mpring *r, struct mpring_stats *st)
{
	*st = r->s;
}

const char *mpring_error(const struct mpring *r)
{
	return r->err;
}
