/*
 * oqb-icount - the harness's own cost per request, in instructions, for
 * bench/icount.sh to count under callgrind.
 *
 * What it owns: one process, one thread, a real shm server (null backend,
 * one worker, run by server_step instead of a thread) and a real client
 * (one thread's send and receive paths, run by client_step_issue/poll),
 * driven in lock step: send a batch, let the worker take all of it, let the
 * client take every event.  Nothing spins and nothing waits on another
 * thread, so the work done per request is the same on every run, whatever
 * else the machine does.  Callgrind's collection is switched on only
 * around the measured region (--measure):
 *   client  the client's generate-encode-post-record path: client_step_issue
 *           (generate, encode, post, lag record) and client_step_poll
 *           (poll, match, latency record) for every request
 *   worker  the server worker's poll-execute-reply path (server_step, the
 *           last, empty poll of each batch included), timing the backend
 *           call of one request in 16 as oqb-server does (--service-sample;
 *           callgrind counts the clock's glibc wrapper, not its vDSO body)
 *   hist    hist_record alone, on pregenerated latencies
 * The first --warmup requests are never measured (the first reply maps the
 * client's mailbox; lazy symbol binding).  Outside valgrind the toggles do
 * nothing and the program just runs (a smoke test).
 *
 * Guarantee: the same binary, seed and options give the same instruction
 * count; the only variable inputs are clock values (which pick a histogram
 * counter and the min/max updates), worth a few instructions in millions,
 * since latencies are taken from each batch's start (one_batch).
 * tests/integration/icount.sh runs it twice and compares.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_TOGGLE_COLLECT do { } while (0)   /* no valgrind: just run */
#endif

#include "backend.h"
#include "client.h"
#include "clock.h"
#include "gen.h"
#include "hist.h"
#include "opts.h"
#include "rng.h"
#include "server.h"
#include "system.h"
#include "transport.h"

enum { M_CLIENT, M_WORKER, M_HIST, M_NONE };

struct ic_opts {
	int measure;
	const char *system;
	const char *workload;
	int requests, warmup, batch;
	int service_sample;
	uint64_t seed;
};

static const char *const measure_names[] = { "client", "worker", "hist", "none", NULL };

static const struct opt ic_tab[] = {
	{ "measure", OPT_ENUM, offsetof(struct ic_opts, measure), "none", 0, 0, measure_names,
	  "which path callgrind counts: client, worker, hist (none: just run)" },
	{ "system", OPT_STR, offsetof(struct ic_opts, system), "oq", 0, 0, NULL,
	  "system of the server and client (oq, rawrpc, deferred)" },
	{ "workload", OPT_STR, offsetof(struct ic_opts, workload),
	  "{\"kind\":\"kv\",\"put_ratio\":0.5,\"key_size\":16,\"value_size\":64,\"keys\":1000,\"zipf\":0.99}",
	  0, 0, NULL, "workload object (JSON)" },
	{ "requests", OPT_INT, offsetof(struct ic_opts, requests), "20000", 1, 1e8, NULL,
	  "measured requests" },
	{ "warmup", OPT_INT, offsetof(struct ic_opts, warmup), "1000", 0, 1e8, NULL,
	  "requests before the measured ones" },
	{ "batch", OPT_INT, offsetof(struct ic_opts, batch), "16", 1, 64, NULL,
	  "requests sent before the worker runs" },
	{ "seed", OPT_U64, offsetof(struct ic_opts, seed), "1", 0, 1.8e19, NULL, "workload seed" },
	{ "service-sample", OPT_INT, offsetof(struct ic_opts, service_sample), SERVER_SERVICE_SAMPLE_STR, 0, 1 << 20,
	  NULL, "the worker times the backend call of one request in N (oqb-server's --service-sample; 0: none)" },
	{ NULL, 0, 0, NULL, 0, 0, NULL,
	  "instructions per request of the client, the worker and hist_record, under callgrind "
	  "(bench/icount.sh)" },
};

static int on_client, on_worker;

/* What the counts depend on besides the code: the compiler and its flags.
 * icount.sh refuses to compare counts of different builds. */
#if defined(__SANITIZE_ADDRESS__)
#define IC_SAN "address"
#else
#define IC_SAN "none"
#endif
#ifdef __OPTIMIZE__
#define IC_OPT 1
#else
#define IC_OPT 0
#endif
#define IC_BUILD "\"build\":{\"compiler\":\"gcc " __VERSION__ "\",\"optimize\":%d,\"sanitize\":\"" IC_SAN "\"}"

/* Callgrind counts only between the two toggles of a region. */
static void region(int on)
{
	if (on)
		CALLGRIND_TOGGLE_COLLECT;
}

/* One batch of n requests through client and worker; -1 with err.  The
 * batch is intended at its start (t0), so every recorded latency and lag
 * is microseconds, as in a real run.  (Intended at 0, the latencies were
 * the clock itself, the machine's uptime: past HIST_MAX, 18.3 minutes
 * after boot, each record took the clamped path and the client's count
 * moved by 2.5 %, so a test run soon after boot read another count than
 * the gate recorded later.) */
static int one_batch(struct client *cl, struct server *sv, int n, char *err, size_t errlen)
{
	uint64_t t0 = clock_ns();
	region(on_client);
	for (int i = 0; i < n; i++)
		if (client_step_issue(cl, t0) != 1) {
			region(on_client);
			snprintf(err, errlen, "request %d of a batch of %d was not sent (a full ring or "
				 "pending table, or a failed client)", i, n);
			return -1;
		}
	region(on_client);
	region(on_worker);
	while (server_step(sv, 0))
		;
	region(on_worker);
	region(on_client);
	while (client_step_poll(cl))
		;
	region(on_client);
	return 0;
}

static __attribute__((noinline)) void hist_batch(struct hist *h, const uint64_t *v, int n)
{
	for (int i = 0; i < n; i++)
		hist_record(h, v[i]);
}

static int run_hist(const struct ic_opts *o)
{
	struct hist *h = hist_new();
	uint64_t *v = malloc((size_t)o->requests * sizeof *v);
	struct rng r;
	if (!h || !v) {
		fprintf(stderr, "oqb-icount: out of memory\n");
		return 1;
	}
	rng_seed(&r, o->seed);
	/* latencies of 200 ns .. 2 ms, log-uniform: every magnitude's code path */
	for (int i = 0; i < o->requests; i++)
		v[i] = 200 + (rng_next(&r) >> (rng_next(&r) % 21 + 43));
	region(1);
	hist_batch(h, v, o->requests);
	region(1);
	printf("{\"measure\":\"hist\",\"requests\":%d,\"n\":%llu," IC_BUILD "}\n", o->requests,
	       (unsigned long long)h->n, IC_OPT);
	hist_free(h);
	free(v);
	return 0;
}

int main(int argc, char **argv)
{
	struct ic_opts o;
	char err[512];
	memset(&o, 0, sizeof o);
	int pr = opts_parse(ic_tab, &o, argc, argv, NULL, err, sizeof err);
	if (pr != 0) {
		if (pr > 0)
			return 0;   /* --help */
		fprintf(stderr, "oqb-icount: %s\n", err);
		return 2;
	}
	if (o.measure == M_HIST)
		return run_hist(&o);
	on_client = o.measure == M_CLIENT;
	on_worker = o.measure == M_WORKER;

	const struct system_def *sys = system_find(o.system);
	if (!sys) {
		fprintf(stderr, "oqb-icount: --system %s: unknown; use one of %s\n", o.system, system_names());
		return 2;
	}
	json_error_t je;
	json_t *wl = json_loads(o.workload, 0, &je);
	if (!wl) {
		fprintf(stderr, "oqb-icount: --workload: not JSON (%s at column %d)\n", je.text, je.column);
		return 2;
	}
	const struct gen_ops *gen = gen_lookup(wl, "--workload", err, sizeof err);
	if (!gen) {
		fprintf(stderr, "oqb-icount: %s\n", err);
		json_decref(wl);
		return 2;
	}
	struct server_conf sc = {
		.sys = sys, .tp = transport_find("shm"), .be = backend_find("null"),
		.tpc = { .workers = 1, .ring_slots = 1024, .slot_size = 1024, .system = sys->name,
			 .void_timeout_ns = 50000000ull },
		.bc = { .kind = "null", .seed = o.seed },
		.manual = 1, .service_sample = (unsigned)o.service_sample,
	};
	struct server *sv = server_start(&sc, err, sizeof err);
	if (!sv) {
		fprintf(stderr, "oqb-icount: server: %s\n", err);
		json_decref(wl);
		return 1;
	}
	struct client_conf cc = {
		.sys = sys, .tp = sc.tp, .endpoint = server_endpoint(sv), .threads = 1,
		.workload = wl, .gen = gen, .arrival = ARRIVAL_CLOSED, .outstanding = 64,
		.max_outstanding = 1024, .seed = o.seed, .nprocesses = 1, .manual = 1,
	};
	struct client *cl = client_prepare(&cc, err, sizeof err);
	int rc = 1;
	if (!cl) {
		fprintf(stderr, "oqb-icount: client: %s\n", err);
		goto out;
	}
	int saved_c = on_client, saved_w = on_worker;
	on_client = on_worker = 0;
	for (int done = 0; done < o.warmup; done += o.batch)
		if (one_batch(cl, sv, o.batch, err, sizeof err) != 0)
			goto fail;
	on_client = saved_c;
	on_worker = saved_w;
	for (int done = 0; done < o.requests; ) {
		int n = o.requests - done < o.batch ? o.requests - done : o.batch;
		if (one_batch(cl, sv, n, err, sizeof err) != 0)
			goto fail;
		done += n;
	}
	json_t *res = client_result(cl);
	json_t *s = json_object_get(res, "summary_ns");
	printf("{\"measure\":\"%s\",\"system\":\"%s\",\"requests\":%d,\"committed_all\":%lld,"
	       "\"unanswered\":%lld," IC_BUILD "}\n", measure_names[o.measure], sys->name, o.requests,
	       (long long)json_integer_value(json_object_get(json_object_get(s, "all"), "n")),
	       (long long)json_integer_value(json_object_get(res, "unanswered")), IC_OPT);
	json_decref(res);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "oqb-icount: %s\n", err);
out:
	client_destroy(cl);
	server_destroy(sv);
	json_decref(wl);
	return rc;
}
