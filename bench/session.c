/*
 * session.c - one synchronous key-value session over any transport
 * (session.h).  One request is in flight at a time, so every event the
 * transport reports either belongs to it (matched by seq and by the kind of
 * event its commit rule waits for) or is a late event of an earlier request
 * (a DELIVERED before the RESP of a get, a software ACK before a response),
 * which is dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "clock.h"
#include "session.h"
#include "system.h"
#include "tp_shm.h"
#include "transport.h"
#include "wire.h"

#define KVS_EVENTS 32

struct kv_session {
	const struct transport_ops *tp;
	const struct system_def *sys;
	struct tp_client *c;
	unsigned workers;
	int durable;
	uint64_t seq;
	uint8_t *buf;
	size_t cap;
};

struct kv_session *kvs_open(const struct kv_session_conf *c, char *err, size_t errlen)
{
	const char *tname = c->transport ? c->transport : "shm";
	const struct transport_ops *tp = transport_find(tname);
	if (!tp) {
		snprintf(err, errlen, "transport '%s' is not in this build (it has: %s)", tname,
			 transport_names());
		return NULL;
	}
	const struct system_def *sys = system_find(c->system ? c->system : "");
	if (!sys) {
		snprintf(err, errlen, "unknown system '%s' (one of: %s)", c->system ? c->system : "",
			 system_names());
		return NULL;
	}
	struct kv_session *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->tp = tp;
	s->sys = sys;
	s->durable = c->durable;
	struct tp_cli_conf cc = { .endpoint = c->endpoint, .system = sys->name, .max_outstanding = 64,
				  .durable = c->durable, .connect_timeout_ms = c->connect_timeout_ms,
				  .delegation = c->delegation, .thread = c->thread };
	s->c = tp->cli_open(&cc, err, errlen);
	if (!s->c) {
		free(s);
		return NULL;
	}
	s->workers = tp->cli_workers(s->c);
	return s;
}

unsigned kvs_workers(const struct kv_session *s)
{
	return s->workers;
}

unsigned kvs_route(const struct kv_session *s, const char *key, unsigned key_len)
{
	return client_route(key, key_len, s->workers);
}

static enum commit_on event_rule(uint8_t kind)
{
	return kind == TP_EV_DELIVERED ? COMMIT_DELIVERY : kind == TP_EV_ACK ? COMMIT_ACK : COMMIT_RESPONSE;
}

/* Encodes, posts (retrying while busy), and waits for the event that
 * commits it.  On 0 the matching event is in *out (its val copied into
 * val/cap). */
static int call(struct kv_session *s, const struct wire_req *h, const void *key, const void *val,
		void *out_val, uint32_t cap, struct tp_event *out, uint64_t deadline_ns, char *err,
		size_t errlen)
{
	size_t need = wire_req_len(h->key_len, h->val_len);
	if (need > s->cap) {
		uint8_t *b = realloc(s->buf, need);
		if (!b) {
			snprintf(err, errlen, "out of memory for a %zu B request", need);
			return -1;
		}
		s->buf = b;
		s->cap = need;
	}
	struct wire_req r = *h;
	r.client_id = s->tp->cli_id(s->c);
	r.seq = ++s->seq;
	uint32_t len = wire_encode_req(s->buf, s->cap, &r, key, val);
	enum commit_on rule = system_commit_rule(s->sys, r.flags);
	struct tp_event ev[KVS_EVENTS];
	int pr;
	while ((pr = s->tp->cli_post(s->c, r.worker, s->buf, len, r.seq, err, errlen)) == 1) {
		while (s->tp->cli_poll(s->c, ev, KVS_EVENTS) > 0)
			;   /* queue full: drain late events, then try again */
		if (clock_ns() >= deadline_ns)
			return 1;
	}
	if (pr < 0)
		return -1;
	s->tp->cli_flush(s->c);
	for (;;) {
		int n = s->tp->cli_poll(s->c, ev, KVS_EVENTS);
		if (n < 0) {
			snprintf(err, errlen, "the connection to the server broke");
			return -1;
		}
		for (int i = 0; i < n; i++) {
			if (ev[i].seq != r.seq || event_rule(ev[i].kind) != rule)
				continue;
			*out = ev[i];
			if (out_val && cap)
				memcpy(out_val, ev[i].val, ev[i].val_len < cap ? ev[i].val_len : cap);
			out->val = NULL;
			return 0;
		}
		if (n == 0 && clock_ns() >= deadline_ns) {
			snprintf(err, errlen, "no %s for %s seq %llu by the deadline (server gone?)",
				 rule == COMMIT_DELIVERY ? "delivery ACK" : rule == COMMIT_ACK ? "software ACK"
				 : "response", kv_op_name(r.op), (unsigned long long)r.seq);
			return -1;
		}
	}
}

static int sizes_ok(unsigned key_len, uint32_t val_len, char *err, size_t errlen)
{
	if (key_len == 0 || key_len > KV_MAX_KEY || val_len > KV_MAX_VALUE) {
		snprintf(err, errlen, "a key of %u B or a value of %u B is out of range (keys 1-%u B, "
			 "values up to %u B)", key_len, val_len, KV_MAX_KEY, KV_MAX_VALUE);
		return 0;
	}
	return 1;
}

int kvs_put(struct kv_session *s, const char *key, unsigned key_len, const void *val,
	    uint32_t val_len, uint64_t deadline_ns, char *err, size_t errlen)
{
	if (!sizes_ok(key_len, val_len, err, errlen))
		return -1;
	/* durable: only a put that commits on delivery (oq) needs the
	 * client's READ after SEND; deferred's server persists before its ACK */
	int own = s->durable && system_commit_rule(s->sys, KV_F_NILEXT) == COMMIT_DELIVERY;
	struct wire_req h = { .op = KV_OP_SET, .flags = KV_F_NILEXT | (own ? WIRE_F_DURABLE : 0),
			      .key_len = (uint16_t)key_len, .val_len = val_len,
			      .worker = kvs_route(s, key, key_len) };
	struct tp_event ev;
	int rc = call(s, &h, key, val, NULL, 0, &ev, deadline_ns, err, errlen);
	if (rc == 0 && ev.kind != TP_EV_DELIVERED && ev.status != KV_OK) {
		snprintf(err, errlen, "set refused by the server: %s", kv_status_name(ev.status));
		return -1;
	}
	return rc;
}

int kvs_get(struct kv_session *s, const char *key, unsigned key_len, void *val, uint32_t cap,
	    uint32_t *val_len, uint32_t *status, uint64_t deadline_ns, char *err, size_t errlen)
{
	if (!sizes_ok(key_len, 0, err, errlen))
		return -1;
	struct wire_req h = { .op = KV_OP_GET, .key_len = (uint16_t)key_len,
			      .worker = kvs_route(s, key, key_len) };
	struct tp_event ev;
	int rc = call(s, &h, key, NULL, val, cap, &ev, deadline_ns, err, errlen);
	if (rc == 0) {
		*status = ev.status;
		*val_len = ev.val_len;
	}
	return rc;
}

void kvs_close(struct kv_session *s)
{
	if (!s)
		return;
	if (s->c)
		s->tp->cli_close(s->c);
	free(s->buf);
	free(s);
}

int kvs_describe_server(const struct kv_session_conf *c, char *out, size_t cap)
{
	const char *tname = c->transport ? c->transport : "shm";
	if (strcmp(tname, "shm") != 0) {
		snprintf(out, cap, "the %s transport's server state cannot be read from outside", tname);
		return -1;
	}
	shm_describe_rings(c->endpoint, out, cap);
	return 0;
}
