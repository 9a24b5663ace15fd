/*
 * needs.c - a run's per-host needs from its config (needs.h); the
 * formulas themselves are lib/proclimits.c's.
 */
#include "needs.h"
#include "launch.h"

#include <string.h>

static int same_host(const char *a, const char *b)
{
	return strcmp(a, b) == 0 || (host_is_local(a) && host_is_local(b));
}

/* rc and, with a sweep, each of its variants. */
static const struct runconf *variant(const struct runconf *rc, size_t i)
{
	return rc->nsweep ? &rc->variants[i] : rc;
}

static size_t nvariants(const struct runconf *rc)
{
	return rc->nsweep ? rc->nsweep : 1;
}

/* The transport system s runs over. */
static const char *sys_transport(const struct runconf *rc, size_t s)
{
	return strcmp(rc->systems[s], "erpc") == 0 ? "erpc" : rc->transport;
}

static unsigned long long conns(const struct runconf *v)
{
	unsigned long long w = (unsigned long long)v->workers, p = (unsigned long long)v->processes;
	return v->delegation ? p * w : p * (unsigned long long)v->threads * w;
}

unsigned long long needs_server_conns(const struct runconf *rc)
{
	unsigned long long m = 0;
	for (size_t i = 0; i < nvariants(rc); i++)
		if (conns(variant(rc, i)) > m)
			m = conns(variant(rc, i));
	return m;
}

static void take_max(struct lim_need *m, const struct lim_need *n)
{
	if (n->fds > m->fds)
		m->fds = n->fds;
	if (n->locked_bytes > m->locked_bytes)
		m->locked_bytes = n->locked_bytes;
	if (n->qps > m->qps)
		m->qps = n->qps;
}

static void host_fill(const struct runconf *rc, struct host_need *h)
{
	for (size_t i = 0; i < nvariants(rc); i++) {
		const struct runconf *v = variant(rc, i);
		for (size_t s = 0; s < v->nsystems; s++) {
			struct lim_need n;
			const char *tp = sys_transport(v, s);
			if (h->servers) {
				struct lim_server_shape ss = {
					.transport = tp, .workers = (unsigned)v->workers, .conns = conns(v),
					.ring_slots = v->ring_slots > 0 ? (unsigned)v->ring_slots : 0,
					.slot_size = v->slot_size > 0 ? (unsigned)v->slot_size : 0,
					.slot_ring = v->recv_mode && strcmp(v->recv_mode, "srq") != 0,
					.durable = runconf_durable(v, v->systems[s]),
				};
				lim_server_need(&ss, &n);
				take_max(&h->server, &n);
			}
			if (h->clients) {
				struct lim_client_shape cs = {
					.transport = tp, .threads = (unsigned)v->threads, .workers = (unsigned)v->workers,
					.slot_size = v->slot_size > 0 ? (unsigned)v->slot_size : 0,
					.delegation = v->delegation,
				};
				lim_client_need(&cs, &n);
				take_max(&h->client, &n);
			}
		}
		if (v->delegation)
			h->delegation = 1;
	}
	h->qps = (long long)h->servers * h->server.qps + (long long)h->clients * h->client.qps;
}

size_t needs_hosts(const struct runconf *rc, struct host_need *out, size_t cap)
{
	size_t n = 0;

	if (cap == 0)
		return 0;
	memset(out, 0, cap * sizeof *out);
	out[n].host = rc->server_host;
	out[n++].servers = 1;
	for (unsigned r = 0; r < (unsigned)rc->processes; r++) {
		const char *h = runconf_client_host(rc, r);
		size_t k;
		for (k = 0; k < n; k++)
			if (same_host(out[k].host, h))
				break;
		if (k == n) {
			if (n == cap)
				continue;
			out[n++].host = h;
		}
		out[k].clients++;
	}
	for (size_t k = 0; k < n; k++)
		host_fill(rc, &out[k]);
	return n;
}

void needs_print(FILE *f, const struct runconf *rc)
{
	struct host_need h[RUNCONF_MAX_HOSTS + 1];
	size_t n = needs_hosts(rc, h, sizeof h / sizeof h[0]);
	char sb[32], cb[32];

	for (size_t k = 0; k < n; k++) {
		fprintf(f, "needs on %s:", h[k].host);
		if (h[k].servers) {
			lim_fmt_bytes(sb, sizeof sb, h[k].server.locked_bytes);
			fprintf(f, " server %lld open files, %s locked, %lld QPs;", h[k].server.fds, sb, h[k].server.qps);
		}
		if (h[k].clients) {
			lim_fmt_bytes(cb, sizeof cb, h[k].client.locked_bytes);
			fprintf(f, " %u client process(es), each %lld open files, %s locked, %lld QPs;", h[k].clients,
				h[k].client.fds, cb, h[k].client.qps);
		}
		fprintf(f, " %lld QPs on the host (lib/proclimits.h; `oqb doctor` checks them)\n", h[k].qps);
	}
}
