/*
 * oqb-vfloor - the verbs floor of two hosts: the round-trip time of a raw
 * RC SEND ping-pong between their RDMA devices, nothing of a system in its
 * path (bench/transports/verbs/vb_canary.c).  oqb-floor's counterpart for
 * transport verbs: `oqb run` measures it beside every trial (the canary,
 * docs/trust.md), and it says what the wire and the two hosts' verbs
 * stacks cost before any system adds its own.
 *
 * By hand:   oqb-vfloor --serve --addr IP        prints "ready: endpoint
 *            verbs:IP:PORT", echoes until SIGINT/SIGTERM (or --max-s),
 *            then prints its counters as JSON
 *            oqb-vfloor --ping verbs:IP:PORT     prints
 *            {"rtt_ns":{"p50":..,"p99":..,"min":..,"max":..},"rounds":N,...}
 * By driver: with --ctl HOST:PORT, the echoer is role "server" (HELLO with
 *            the endpoint, echoes until STOP, answers DONE with its
 *            counters) and the pinger role "client" (HELLO at once, pings
 *            on GO, answers DONE with the result); with --ping go the GO
 *            names the endpoint, so the driver can start both ends at
 *            once.
 *            Either exits by itself when the driver goes away.
 */
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildinfo.h"
#include "cpus.h"
#include "ctl.h"
#include "hist.h"
#include "log.h"
#include "opts.h"
#include "settings.h"
#if OQB_HAVE_VERBS_TRANSPORT
#include "tp_verbs.h"
#endif

struct vf_opts {
	int serve;
	const char *ping, *addr, *ctl, *log;
	int port, size, cpu, rank;
	uint64_t rounds, warmup;
	double max_ms, max_s, connect_s;
};

#define O(f) offsetof(struct vf_opts, f)
static struct opt vf_tab[] = {
	{ "serve", OPT_BOOL, O(serve), NULL, 0, -1, NULL, "echo: listen on --addr and answer every message" },
	{ "ping", OPT_STR, O(ping), NULL, 0, -1, NULL, "ping the echoer at this endpoint (verbs:ADDR:PORT; with --ctl, "
	  "\"go\": the endpoint the driver's GO names)" },
	{ "addr", OPT_STR, O(addr), NULL, 0, -1, NULL, "--serve: IP address of the RDMA device to listen on" },
	{ "port", OPT_INT, O(port), "0", 0, 65535, NULL, "--serve: rdma_cm port (0: any free one; the endpoint says)" },
	{ "max-s", OPT_DBL, O(max_s), "600", 0, 86400, NULL, "--serve: stop after this long (0: never)" },
	{ "size", OPT_INT, O(size), "64", 1, 4096, NULL, "--ping: bytes per message" },
	{ "rounds", OPT_U64, O(rounds), "2000", 1, 100000000, NULL, "--ping: round trips recorded" },
	{ "warmup", OPT_U64, O(warmup), "100", 0, 100000000, NULL, "--ping: round trips before them, not recorded" },
	{ "max-ms", OPT_DBL, O(max_ms), "0", 0, 3.6e6, NULL,
	  "--ping: stop recording after this long (0: no bound; the JSON says how many rounds ran)" },
	/* its default and bounds: timeouts.connect_s's row, filled by main() */
	{ "connect-timeout-s", OPT_DBL, O(connect_s), NULL, 0, 0, NULL, NULL },
	{ "cpu", OPT_INT, O(cpu), "-1", -1, 1023, NULL, "pin the thread that polls to this CPU (-1: leave it)" },
	{ "ctl", OPT_STR, O(ctl), NULL, 0, -1, NULL, "driver control channel HOST:PORT (set by bin/oqb run)" },
	{ "rank", OPT_INT, O(rank), "0", 0, 1 << 20, NULL, "rank (set by the driver)" },
	{ "log", OPT_STR, O(log), NULL, 0, -1, NULL, "log level: error, warn, info, debug" },
	{ NULL, OPT_INT, 0, NULL, 0, 0, NULL, "The verbs floor: a raw RC SEND ping-pong between two hosts' RDMA devices "
	  "(run --serve on one, --ping on the other)." },
};
#undef O

#if OQB_HAVE_VERBS_TRANSPORT
static volatile int stop_flag;

struct serve_arg {
	struct vb_canary_srv *s;
	double max_s;
	int cpu;
	struct vb_canary_stats st;
	char err[512];
	int rc;
	volatile int done;
};

static void *serve_thread(void *p)
{
	struct serve_arg *a = p;
	char e[128];
	if (a->cpu >= 0 && cpus_pin_self(a->cpu, e, sizeof e) < 0)
		log_msg(LOG_WARN, "--cpu %d: %s; the echoer runs unpinned", a->cpu, e);
	a->rc = vb_canary_serve(a->s, &stop_flag, a->max_s, &a->st, a->err, sizeof a->err);
	a->done = 1;
	return NULL;
}

static json_t *serve_stats(const struct serve_arg *a, const char *endpoint)
{
	json_t *j = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:i}", "schema", "oqbench.vfloor-serve/1", "endpoint",
			      endpoint, "echoed", (json_int_t)a->st.echoed, "pingers", (json_int_t)a->st.pingers,
			      "refused", (json_int_t)a->st.refused, "dropped", (json_int_t)a->st.dropped, "cpu", a->cpu);
	if (a->st.last_error[0])
		json_object_set_new(j, "last_error", json_string(a->st.last_error));
	if (a->rc)
		json_object_set_new(j, "error", json_string(a->err));
	return j;
}

static int serve(const struct vf_opts *o, struct ctl *ctl, sigset_t *sigs)
{
	char endpoint[160], err[512];
	struct serve_arg a = { .max_s = o->max_s, .cpu = o->cpu };
	a.s = vb_canary_listen(o->addr, (unsigned)o->port, endpoint, sizeof endpoint, err, sizeof err);
	if (!a.s) {
		log_msg(LOG_ERR, "%s", err);
		if (ctl)
			ctl_send(ctl, json_pack("{s:s,s:s}", "type", "ERROR", "message", err), err, sizeof err);
		return 1;
	}
	pthread_t th;
	if (pthread_create(&th, NULL, serve_thread, &a) != 0) {
		log_msg(LOG_ERR, "cannot start the echo thread");
		vb_canary_close(a.s);
		return 1;
	}
	static volatile int lost;
	if (!ctl) {
		printf("ready: endpoint %s\n", endpoint);
		fflush(stdout);
		struct timespec ts = { 0, 100 * 1000000L };
		while (!a.done && sigtimedwait(sigs, NULL, &ts) < 0)
			;
	} else {
		json_t *info = json_pack("{s:s,s:i,s:s}", "endpoint", endpoint, "pid", (int)getpid(),
					 "build_id", buildinfo_id());
		if (ctl_hello(ctl, info, err, sizeof err) != 0 || ctl_start_watch(ctl, &lost, NULL, NULL) != 0) {
			log_msg(LOG_ERR, "control channel: %s", err);
			lost = 1;
		}
		json_decref(info);
		while (!lost && !a.done) {
			json_t *m = ctl_recv(ctl, 100, err, sizeof err);
			const char *type = json_string_value(json_object_get(m, "type"));
			int stop = type && (!strcmp(type, "STOP") || !strcmp(type, "BYE"));
			json_decref(m);
			struct timespec ts = { 0, 0 };
			if (stop || sigtimedwait(sigs, NULL, &ts) > 0)
				break;
		}
	}
	stop_flag = 1;
	pthread_join(th, NULL);
	json_t *st = serve_stats(&a, endpoint);
	if (ctl && !lost) {
		if (ctl_done(ctl, st, err, sizeof err) != 0)
			log_msg(LOG_ERR, "control channel: %s", err);
	} else if (!ctl) {
		json_dumpf(st, stdout, JSON_INDENT(1));
		putchar('\n');
	}
	json_decref(st);
	vb_canary_close(a.s);
	if (a.rc)
		log_msg(LOG_ERR, "%s", a.err);
	return a.rc ? 1 : 0;
}

static int ping(const struct vf_opts *o, struct ctl *ctl)
{
	char err[512], endpoint[256];
	snprintf(endpoint, sizeof endpoint, "%s", o->ping);
	static volatile int lost;
	if (ctl) {
		/* ready at once; with --ping go, the GO names the echoer */
		json_t *info = json_pack("{s:i,s:s}", "pid", (int)getpid(), "build_id", buildinfo_id());
		int bad = ctl_hello(ctl, info, err, sizeof err) != 0 || ctl_start_watch(ctl, &lost, NULL, NULL) != 0;
		json_decref(info);
		if (bad) {
			log_msg(LOG_ERR, "control channel: %s", err);
			return 1;
		}
		for (;;) {
			json_t *m = ctl_recv(ctl, 1000, err, sizeof err);
			const char *type = json_string_value(json_object_get(m, "type"));
			int go = type && !strcmp(type, "GO"), bye = type && (!strcmp(type, "BYE") || !strcmp(type, "STOP"));
			if (go && json_is_string(json_object_get(m, "endpoint")))
				snprintf(endpoint, sizeof endpoint, "%s", json_string_value(json_object_get(m, "endpoint")));
			json_decref(m);
			if (go)
				break;
			if (bye || lost)
				return bye ? 0 : 1;
		}
	}
	if (!strcmp(endpoint, "go")) {
		snprintf(err, sizeof err, "--ping go: the driver's GO named no endpoint (oqb-vfloor and oqb from "
			 "different builds? run make)");
		log_msg(LOG_ERR, "%s", err);
		if (ctl)
			ctl_send(ctl, json_pack("{s:s,s:s}", "type", "ERROR", "message", err), err, sizeof err);
		return 1;
	}
	if (o->cpu >= 0 && cpus_pin_self(o->cpu, err, sizeof err) < 0)
		log_msg(LOG_WARN, "--cpu %d: %s; the pinger runs unpinned", o->cpu, err);
	struct hist *h = hist_new();
	struct vb_canary_conf cf = { .size = (unsigned)o->size, .rounds = (long)o->rounds, .warmup = (long)o->warmup,
				     .max_ms = o->max_ms, .connect_s = o->connect_s };
	struct vb_canary_info info;
	int rc = h ? vb_canary_ping(endpoint, &cf, h, &info, err, sizeof err) : -1;
	if (!h)
		snprintf(err, sizeof err, "out of memory");
	json_t *res;
	if (rc == 0 && h->n) {
		res = json_pack("{s:s,s:{s:I,s:I,s:I,s:I},s:I,s:i,s:s,s:s,s:b,s:i,s:f}", "schema", "oqbench.vfloor/1",
				"rtt_ns", "p50", (json_int_t)hist_percentile(h, 50), "p99", (json_int_t)hist_percentile(h, 99),
				"min", (json_int_t)h->min, "max", (json_int_t)h->max, "rounds", (json_int_t)info.rounds,
				"size", o->size, "endpoint", endpoint, "device", info.device, "inline", info.inline_send,
				"cpu", o->cpu, "took_ms", (double)info.took_ns / 1e6);
	} else {
		if (rc == 0)
			snprintf(err, sizeof err, "canary: no round was recorded (raise --max-ms)");
		log_msg(LOG_ERR, "%s", err);
		res = json_pack("{s:s,s:s}", "schema", "oqbench.vfloor/1", "error", err);
		rc = -1;
	}
	if (ctl) {
		if (!lost && ctl_done(ctl, res, err, sizeof err) != 0)
			log_msg(LOG_ERR, "control channel: %s", err);
		/* stay until the driver says BYE or goes away */
		json_decref(lost ? NULL : ctl_recv(ctl, 30000, err, sizeof err));
	} else {
		json_dumpf(res, stdout, JSON_INDENT(1));
		putchar('\n');
	}
	json_decref(res);
	hist_free(h);
	return rc ? 1 : 0;
}
#endif

int main(int argc, char **argv)
{
	struct vf_opts o;
	char err[1024];
	memset(&o, 0, sizeof o);
	for (struct opt *t = vf_tab; t->name; t++)
		if (!strcmp(t->name, "connect-timeout-s") &&
		    settings_opt_as("timeouts", "connect_s", t->name, t->off, "--ping: give up connecting after this long",
				    t) != 0) {
			fprintf(stderr, "oqb-vfloor: this build has no timeouts.connect_s row (lib/settings/timing.def)\n");
			return 1;
		}
	int r = opts_parse(vf_tab, &o, argc, argv, NULL, err, sizeof err);
	if (r == 1)
		return 0;
	if (r < 0) {
		fprintf(stderr, "oqb-vfloor: %s\n", err);
		return 2;
	}
	if (o.serve == !!o.ping) {
		fprintf(stderr, "oqb-vfloor: give --serve (on one host) or --ping verbs:ADDR:PORT (on the other), one "
			"of them\n");
		return 2;
	}
	if (o.ping && !strcmp(o.ping, "go") && !o.ctl) {
		fprintf(stderr, "oqb-vfloor: --ping go takes the endpoint from the driver's GO, so it needs --ctl; by hand, "
			"give the endpoint the echoer printed (--ping verbs:ADDR:PORT)\n");
		return 2;
	}
	if (o.serve && !o.addr) {
		fprintf(stderr, "oqb-vfloor: --serve needs --addr, an IP address of the RDMA device to listen on "
			"(oqb-server --list-devices shows them)\n");
		return 2;
	}
	log_set_prefix(NULL, o.serve ? "vfloor-serve" : "vfloor-ping", o.rank);
	if (log_level_option("oqb-vfloor", o.log) < 0)
		return 2;
#if OQB_HAVE_VERBS_TRANSPORT
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	struct ctl *ctl = NULL;
	if (o.ctl) {
		ctl = ctl_connect(o.ctl, o.serve ? "server" : "client", (unsigned)o.rank, 10000, err, sizeof err);
		if (!ctl) {
			log_msg(LOG_ERR, "cannot reach the driver at %s: %s", o.ctl, err);
			return 1;
		}
	}
	int rc = o.serve ? serve(&o, ctl, &sigs) : ping(&o, ctl);
	if (ctl)
		ctl_close(ctl);
	return rc;
#else
	fprintf(stderr, "oqb-vfloor: this build has no verbs transport; install libibverbs-dev and librdmacm-dev "
		"and rebuild (make deps && make)\n");
	return 2;
#endif
}
