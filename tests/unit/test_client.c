/*
 * test_client.c - where the client's latency ends.  A fake transport
 * answers every request at once and stamps (or does not stamp) its event
 * with tp_event.t_done; the client, driven by hand (client_step_issue and
 * client_step_poll, as oqb-icount drives it), must end each latency at the
 * stamp when there is one, and at its own clock read after cli_poll when
 * there is none.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "unit.h"
#include "clock.h"
#include "client.h"
#include "gen.h"
#include "system.h"
#include "transport.h"

/* The fake: requests posted and not yet answered, answered on the next
 * poll with RESP events whose t_done is `stamp_at` (0: no stamp). */
struct tp_client {
	uint64_t seq[64];
	unsigned n;
};
static uint64_t stamp_at;

static struct tp_client *fk_open(const struct tp_cli_conf *c, char *err, size_t errlen)
{
	(void)c; (void)err; (void)errlen;
	return calloc(1, sizeof(struct tp_client));
}
static uint32_t fk_id(struct tp_client *c) { (void)c; return 1; }
static unsigned fk_workers(struct tp_client *c) { (void)c; return 1; }
static int fk_post(struct tp_client *c, unsigned w, const void *req, uint32_t len, uint64_t seq, char *err,
		   size_t errlen)
{
	(void)w; (void)req; (void)len; (void)err; (void)errlen;
	if (c->n == 64)
		return 1;
	c->seq[c->n++] = seq;
	return 0;
}
static int fk_poll(struct tp_client *c, struct tp_event *ev, int max)
{
	int k = 0;
	for (; k < max && (unsigned)k < c->n; k++)
		ev[k] = (struct tp_event){ .seq = c->seq[k], .kind = TP_EV_RESP, .t_done = stamp_at };
	memmove(c->seq, c->seq + k, (c->n - (unsigned)k) * sizeof c->seq[0]);
	c->n -= (unsigned)k;
	return k;
}
static json_t *fk_stats(struct tp_client *c) { (void)c; return json_object(); }
static void fk_close(struct tp_client *c) { free(c); }

static const struct transport_ops fake = {
	.name = "fake", .version = 1,
	.cli_open = fk_open, .cli_id = fk_id, .cli_workers = fk_workers, .cli_post = fk_post,
	.cli_poll = fk_poll, .cli_stats = fk_stats, .cli_close = fk_close,
};

/* Sends `reqs` requests intended `ago_ns` before now and answers them
 * stamped `stamp_after_int` ns after that (< 0: unstamped); *p50 and *max
 * get the p50 and max of "all" (ns).  Returns how many were recorded, or
 * -1. */
static long run_one(uint64_t ago_ns, int64_t stamp_after_int, int reqs, uint64_t *p50, uint64_t *max)
{
	json_error_t je;
	json_t *wl = json_loads("{\"kind\":\"kv\",\"put_ratio\":0.5,\"key_size\":16,\"value_size\":64,"
				"\"keys\":100,\"zipf\":0}", 0, &je);
	char err[512];
	const struct gen_ops *gen = wl ? gen_lookup(wl, "workload", err, sizeof err) : NULL;
	if (!gen) {
		json_decref(wl);
		return -1;
	}
	struct client_conf cc = {
		.sys = system_find("rawrpc"), .tp = &fake, .endpoint = "fake", .threads = 1, .workload = wl,
		.gen = gen, .arrival = ARRIVAL_CLOSED, .outstanding = 16, .max_outstanding = 64, .seed = 7,
		.nprocesses = 1, .manual = 1,
	};
	struct client *cl = client_prepare(&cc, err, sizeof err);
	long n = -1;
	if (!cl) {
		fprintf(stderr, "  client_prepare: %s\n", err);
		json_decref(wl);
		return -1;
	}
	uint64_t t_int = clock_ns() - ago_ns;
	stamp_at = stamp_after_int < 0 ? 0 : t_int + (uint64_t)stamp_after_int;
	for (int i = 0; i < reqs; i++)
		if (client_step_issue(cl, t_int) != 1)
			goto out;
	while (client_step_poll(cl))
		;
	json_t *r = client_result(cl);
	json_t *all = json_object_get(json_object_get(r, "summary_ns"), "all");
	n = (long)json_integer_value(json_object_get(all, "n"));
	*p50 = (uint64_t)json_integer_value(json_object_get(all, "p50"));
	*max = (uint64_t)json_integer_value(json_object_get(all, "max"));
	json_decref(r);
out:
	client_destroy(cl);
	json_decref(wl);
	return n;
}

/* With a stamp the latency is t_done - t_int, however late the client
 * gets to the event. */
TEST(latency_ends_at_the_transport_stamp)
{
	uint64_t p50 = 0, max = 0;
	/* intended 50 ms ago, found by the transport 7 us after that */
	long n = run_one(50000000ull, 7000, 16, &p50, &max);
	REQUIRE(n == 16, "recorded %ld of 16", n);
	CHECK(p50 >= 6900 && p50 <= 7100, "p50 %llu ns, want 7000 (the stamp)", (unsigned long long)p50);
	CHECK(max >= 6900 && max <= 7100, "max %llu ns, want 7000", (unsigned long long)max);
}

/* Without one it is the client's clock after cli_poll: at least the 50 ms
 * since the intended time. */
TEST(latency_ends_at_the_clients_clock_without_a_stamp)
{
	uint64_t p50 = 0, max = 0;
	long n = run_one(50000000ull, -1, 16, &p50, &max);
	REQUIRE(n == 16, "recorded %ld of 16", n);
	CHECK(p50 >= 49000000ull, "p50 %llu ns, want >= 50 ms", (unsigned long long)p50);
}

/* A stamp from after the client's own clock read (a transport's bug)
 * is not believed: the client's clock ends the latency. */
TEST(a_stamp_from_the_future_is_not_taken)
{
	uint64_t p50 = 0, max = 0;
	long n = run_one(50000000ull, 3600ll * 1000000000ll, 16, &p50, &max);
	REQUIRE(n == 16, "recorded %ld of 16", n);
	CHECK(p50 >= 49000000ull && p50 < 3600ull * 1000000000ull, "p50 %llu ns, want the client's clock",
	      (unsigned long long)p50);
}

UNIT_MAIN(latency_ends_at_the_transport_stamp, latency_ends_at_the_clients_clock_without_a_stamp,
	  a_stamp_from_the_future_is_not_taken)
