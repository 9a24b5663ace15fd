/*
 * test_harness.c - the driver's pure parts: shell quoting of remote
 * commands (checked by running them through /bin/sh), the ssh command line
 * (host keys always checked), and merging client results (percentiles
 * from summed bins, never averaged).
 */
#include "unit.h"
#include "launch.h"
#include "merge.h"
#include "result.h"
#include "runconf.h"
#include "rng.h"
#include "trials.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs `sh -c script` and returns its stdout (static buffer). */
static const char *sh_out(const char *script)
{
	static char buf[4096];
	int pfd[2];
	size_t len = 0;
	ssize_t r;

	buf[0] = '\0';
	if (pipe(pfd) < 0)
		return buf;
	pid_t p = fork();
	if (p == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	while ((r = read(pfd[0], buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = '\0';
	close(pfd[0]);
	waitpid(p, NULL, 0);
	return buf;
}

TEST(script_quotes_every_word)
{
	char *argv[] = { "printf", "%s|", "a b", "it's", "{\"kind\":\"kv\",\"x\":[1,2]}", "$HOME",
			 "`id`", "back\\slash", "", "semi;colon", NULL };
	char *s = launch_script(NULL, argv);
	REQUIRE(s);
	CHECK(strncmp(s, "exec ", 5) == 0, "%s", s);
	const char *out = sh_out(s);
	CHECK(strcmp(out, "a b|it's|{\"kind\":\"kv\",\"x\":[1,2]}|$HOME|`id`|back\\slash||semi;colon|") == 0,
	      "got \"%s\" from %s", out, s);
	free(s);

	/* Quoting twice (ssh's "sh -c SCRIPT") still arrives intact. */
	char *argv2[] = { "printf", "%s", "it's \"x\"", NULL };
	s = launch_script("/", argv2);
	REQUIRE(s);
	char outer[1024];
	size_t len = 6;
	memcpy(outer, "sh -c ", 7);
	REQUIRE(shell_quote(outer, sizeof outer, &len, s) == 0);
	CHECK(strcmp(sh_out(outer), "it's \"x\"") == 0, "got %s from %s", sh_out(outer), outer);
	free(s);
}

TEST(shell_quote_keeps_plain_words)
{
	char b[64];
	size_t len = 0;
	REQUIRE(shell_quote(b, sizeof b, &len, "--rate") == 0);
	CHECK(strcmp(b, "--rate") == 0, "%s", b);
	len = 0;
	REQUIRE(shell_quote(b, sizeof b, &len, "a'b") == 0);
	CHECK(strcmp(b, "'a'\\''b'") == 0, "%s", b);
	len = 0;
	CHECK(shell_quote(b, 8, &len, "far too long for eight bytes") == -1);
}

TEST(ssh_command_checks_host_keys)
{
	struct launcher l;
	char err[256];
	json_t *ssh = json_pack("{s:s, s:i, s:s, s:s, s:[s]}", "user", "bench", "port", 2222,
				"identity", "/k/id", "known_hosts", "/k/kh", "options", "ServerAliveInterval=5");
	REQUIRE(launch_open(&l, "ssh", ssh, err, sizeof err) == 0, "%s", err);
	char *argv[] = { "/opt/oqb/bin/oqb-client", "--workload", "{\"a\": 1}", NULL };
	char *d = launch_describe(&l, "node7", NULL, argv);
	REQUIRE(d);
	CHECK(strstr(d, "BatchMode=yes") != NULL, "%s", d);
	CHECK(strstr(d, "StrictHostKeyChecking=yes") != NULL, "%s", d);
	CHECK(strstr(d, "StrictHostKeyChecking=no") == NULL, "%s", d);
	CHECK(strstr(d, "UserKnownHostsFile=/k/kh") != NULL, "%s", d);
	CHECK(strstr(d, "ControlMaster=auto") != NULL, "%s", d);
	CHECK(strstr(d, "ControlPath=") != NULL && strstr(d, "oqb-ssh-") != NULL, "%s", d);
	CHECK(strstr(d, "-p 2222") != NULL && strstr(d, "-l bench") != NULL, "%s", d);
	CHECK(strstr(d, "-i /k/id") != NULL, "%s", d);
	CHECK(strstr(d, "-- node7 ") != NULL, "%s", d);
	free(d);
	/* The private control directory exists while the launcher is open. */
	CHECK(access(l.ctl_dir, F_OK) == 0, "%s", l.ctl_dir);
	char dir[256];
	snprintf(dir, sizeof dir, "%s", l.ctl_dir);
	launch_close(&l);
	CHECK(access(dir, F_OK) != 0, "%s not removed", dir);
	json_decref(ssh);
}

TEST(local_start_reports_exec_failure)
{
	struct launcher l;
	char err[512], log[128];
	pid_t pid = 0;
	snprintf(log, sizeof log, "%s/oqb-test-harness-%d.log", P_tmpdir, (int)getpid());
	REQUIRE(launch_open(&l, "local", NULL, err, sizeof err) == 0, "%s", err);
	char *bad[] = { "/nonexistent/oqb-server", NULL };
	CHECK(launch_start(&l, "127.0.0.1", NULL, bad, log, &pid, err, sizeof err) == -1);
	CHECK(strstr(err, "/nonexistent/oqb-server") && strstr(err, "No such file"), "%s", err);
	char *good[] = { "sh", "-c", "echo hello; sleep 0.2; exit 3", NULL };
	REQUIRE(launch_start(&l, "127.0.0.1", NULL, good, log, &pid, err, sizeof err) == 0, "%s", err);
	/* Its own process group: a terminal's Ctrl-C reaches only the driver. */
	CHECK(getpgid(pid) == pid, "pgid %d, pid %d", (int)getpgid(pid), (int)pid);
	int st;
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3, "status %d", st);
	FILE *f = fopen(log, "r");
	char line[64] = "";
	REQUIRE(f);
	CHECK(fgets(line, sizeof line, f) && strcmp(line, "hello\n") == 0, "log has \"%s\"", line);
	fclose(f);
	unlink(log);
	launch_close(&l);
}

/* A client result with n values drawn from [lo, hi). */
static json_t *fake_client(unsigned rank, uint64_t n, uint64_t lo, uint64_t hi, struct hist *keep)
{
	struct hist *all = hist_new(), *nil = hist_new(), *non = hist_new();
	struct rng r;
	rng_seed(&r, 42 + rank);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v = lo + rng_below(&r, hi - lo);
		hist_record(all, v);
		hist_record(i % 5 ? nil : non, v);
		if (keep)
			hist_record(keep, v);
	}
	json_t *j = json_pack("{s:s, s:I, s:s, s:i, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I, s:{s:o, s:o, s:o}}",
			      "schema", "oqbench.client/1", "rank", (json_int_t)rank, "host", "h",
			      "threads", 1, "offered_ops", 1000.0, "achieved_ops", 990.0 + rank,
			      "measured_ns", (json_int_t)1000000000, "sent", (json_int_t)n,
			      "committed", (json_int_t)n, "unanswered", (json_int_t)rank,
			      "ring_full_waits", (json_int_t)0, "errors", (json_int_t)0,
			      "lat_ns", "all", hist_to_json(all), "nilext", hist_to_json(nil),
			      "non_nilext", hist_to_json(non));
	hist_free(all);
	hist_free(nil);
	hist_free(non);
	return j;
}

TEST(merge_sums_bins_never_averages)
{
	/* A fast client with many samples and a slow one with few: the merged
	 * median is the fast one's, while the mean of the two medians is not. */
	struct hist *ref = hist_new();
	json_t *c[2] = { fake_client(0, 9000, 1000, 2000, ref), fake_client(1, 1000, 100000, 200000, ref) };
	struct point pt = { .idx = 3, .system = "oq", .offered_ops = 2000 };
	char err[256];
	json_t *srv = json_pack("{s:s}", "schema", "oqbench.server/1");
	json_t *p = merge_point(&pt, c, 2, srv, err, sizeof err);
	REQUIRE(p, "%s", err);
	const json_t *all = json_object_get(json_object_get(p, "lat_ns"), "all");
	CHECK_EQ_U64(json_integer_value(json_object_get(all, "n")), 10000);
	CHECK_EQ_U64(json_integer_value(json_object_get(all, "p50")), hist_percentile(ref, 50));
	CHECK_EQ_U64(json_integer_value(json_object_get(all, "p99")), hist_percentile(ref, 99));
	CHECK(json_integer_value(json_object_get(all, "p50")) < 2000, "median should be a fast value");
	CHECK(json_integer_value(json_object_get(all, "p99")) > 100000, "p99 should be a slow value");
	const json_t *ci = json_object_get(all, "p99_ci");
	CHECK(json_integer_value(json_array_get(ci, 0)) <= json_integer_value(json_object_get(all, "p99")) &&
	      json_integer_value(json_object_get(all, "p99")) <= json_integer_value(json_array_get(ci, 1)));
	const json_t *lat = json_object_get(p, "lat_ns");
	CHECK_EQ_U64(json_integer_value(json_object_get(json_object_get(lat, "nilext"), "n")) +
		     json_integer_value(json_object_get(json_object_get(lat, "non_nilext"), "n")), 10000);
	CHECK_NEAR(json_number_value(json_object_get(p, "achieved_ops")), 1981, 1e-9);
	CHECK_EQ_U64(json_integer_value(json_object_get(p, "unanswered")), 1);
	CHECK(json_is_false(json_object_get(p, "saturated")));
	CHECK(json_array_size(json_object_get(p, "clients")) == 2);
	/* The summary (its HdrHistogram text and exact numbers) reads back
	 * into the same histogram, and holds no second encoding. */
	struct hist *back = hist_new();
	CHECK(result_hist(back, all, err, sizeof err) == 0, "%s", err);
	CHECK(!json_object_get(all, "bins") && !json_object_get(all, "ranges_ns"));
	CHECK(back->min == ref->min && back->max == ref->max && back->sum == ref->sum);
	CHECK_EQ_U64(back->n, ref->n);
	CHECK(memcmp(back->counts, ref->counts, sizeof ref->counts) == 0);
	hist_free(back);
	json_decref(p);

	/* Saturation: achieved below 95 % of offered. */
	pt.offered_ops = 3000;
	p = merge_point(&pt, c, 2, srv, err, sizeof err);
	REQUIRE(p, "%s", err);
	CHECK(json_is_true(json_object_get(p, "saturated")));
	json_decref(p);

	/* A result from another build is refused with a clear message. */
	json_object_set_new(c[1], "schema", json_string("oqbench.client/0"));
	p = merge_point(&pt, c, 2, srv, err, sizeof err);
	CHECK(!p && strstr(err, "oqbench.client/0"), "%s", err);
	json_object_set_new(c[1], "schema", json_string("oqbench.client/1"));
	json_object_set_new(json_object_get(c[1], "lat_ns"), "all", json_string("nope"));
	p = merge_point(&pt, c, 2, srv, err, sizeof err);
	CHECK(!p && strstr(err, "client 1") && strstr(err, "lat_ns.all"), "%s", err);

	json_decref(c[0]);
	json_decref(c[1]);
	json_decref(srv);
	hist_free(ref);
}

TEST(host_is_local_cases)
{
	CHECK(host_is_local("127.0.0.1"));
	CHECK(host_is_local("127.1.2.3"));
	CHECK(host_is_local("localhost"));
	CHECK(host_is_local("::1"));
	CHECK(!host_is_local("10.0.0.1"));
	CHECK(!host_is_local("node-that-is-not-here.example"));
}

/*
 * Feeds trials through the rerun policy: each character of runs is one run
 * of a trial, 'D' disturbed or 'c' calm; the policy's answer decides
 * whether the next character is a rerun of the same trial or the next
 * trial.  Writes one letter per decision into out: 'r' rerun, 'k' kept,
 * and after it 'F' futile stop, 'B' budget stop, 'R' resume.
 */
static void rerun_feed(struct rerun_policy *p, const char *runs, char *out)
{
	unsigned n = 0;
	for (const char *c = runs; *c; c++) {
		enum rerun_event ev;
		int again = rerun_decide(p, n, *c == 'D', &ev);
		*out++ = again ? 'r' : 'k';
		if (ev != RR_NONE)
			*out++ = ev == RR_FUTILE_STOP ? 'F' : ev == RR_BUDGET_STOP ? 'B' : 'R';
		n = again ? n + 1 : 0;
	}
	*out = 0;
}

TEST(rerun_policy_stops_and_resumes)
{
	struct rerun_policy p;
	char got[128];
	/* one rerun per trial: a calm trial is kept, a disturbed one is run
	 * again once, then kept */
	rerun_init(&p, 1, -1);
	rerun_feed(&p, "cDcDD", got);
	CHECK(strcmp(got, "krkrk") == 0, "%s", got);
	/* three trials in a row kept disturbed: reruns stop; the next
	 * disturbed trial is kept at once; a calm one resumes them */
	rerun_init(&p, 1, -1);
	rerun_feed(&p, "DDDDDDDcDD", got);
	CHECK(strcmp(got, "rkrkrkFkkRrk") == 0, "%s", got);
	CHECK(p.used == 4 && !p.stopped, "used %lld stopped %d", p.used, p.stopped);
	/* a calm trial between disturbed ones resets the count */
	rerun_init(&p, 1, -1);
	rerun_feed(&p, "DDDDcDDDD", got);
	CHECK(strcmp(got, "rkrkkrkrk") == 0, "%s", got);
	/* the budget: 2 reruns in the run, then disturbed trials are kept,
	 * and a calm trial does not resume them */
	rerun_init(&p, 2, 2);
	rerun_feed(&p, "DDcDDcD", got);
	CHECK(strcmp(got, "rrkkBkkk") == 0, "%s", got);
	CHECK(p.used == 2 && p.stopped == RR_BUDGET_STOP, "used %lld stopped %d", p.used, p.stopped);
	/* reruns off: everything is kept, nothing stops or resumes */
	rerun_init(&p, 0, -1);
	rerun_feed(&p, "DDDDcD", got);
	CHECK(strcmp(got, "kkkkkk") == 0, "%s", got);
}

/* Appends trial t of point pt to entries: one fake client with n values
 * in [lo, hi), the trial's canary and checks; the first trial's merged
 * point goes into *pj0 (the caller frees it).  0, or -1 with err set. */
static int add_trial(json_t *entries, json_t **pj0, const struct point *pt, const json_t *srv, unsigned t,
		     uint64_t hi, double canary, json_t *checks, char *err, size_t errlen)
{
	json_t *c = fake_client(t, 5000, 1000, hi, NULL);
	json_t *pj = merge_point(pt, &c, 1, srv, err, errlen);
	json_decref(c);
	if (!pj)
		return -1;
	json_array_append_new(entries, trials_entry(pj, t, t, canary, checks));
	if (!*pj0)
		*pj0 = pj;
	else
		json_decref(pj);
	return 0;
}

TEST(trial_agreement_names_a_changed_canary)
{
	/* Four trials, one with a tail forty times the others': the trials
	 * disagree.  When their canaries differ by more than canary_drift,
	 * the trial_agreement row says the machine changed between them;
	 * when the canaries agree, it says nothing of the kind. */
	struct check_conf cc;
	checks_defaults(&cc);
	struct point pt = { .idx = 0, .system = "oq", .offered_ops = 1000 };
	json_t *srv = json_pack("{s:s}", "schema", "oqbench.server/1");
	static const uint64_t hi[4] = { 2000, 2100, 80000, 2050 };
	static const double canary[2][4] = { { 100, 104, 500, 101 }, { 100, 104, 110, 101 } };
	char err[256];
	for (int v = 0; v < 2; v++) {
		json_t *entries = json_array(), *pj0 = NULL;
		for (unsigned t = 0; t < 4; t++) {
			json_t *none = json_array();
			int r = add_trial(entries, &pj0, &pt, srv, t, hi[t], canary[v][t], none, err, sizeof err);
			json_decref(none);
			REQUIRE(r == 0, "%s", err);
		}
		json_t *p = trials_point(pj0, entries, &cc, err, sizeof err), *row, *agree = NULL;
		REQUIRE(p, "%s", err);
		size_t i;
		json_array_foreach(json_object_get(p, "checks"), i, row)
			if (!strcmp(json_string_value(json_object_get(row, "name")), "trial_agreement"))
				agree = row;
		REQUIRE(agree, "no trial_agreement row");
		CHECK(!strcmp(json_string_value(json_object_get(agree, "status")), "warn"), "the trials disagree");
		const char *cause = json_string_value(json_object_get(agree, "cause"));
		if (v == 0)
			CHECK(cause && strstr(cause, "100 to 500 ns (5.0x") && strstr(cause, "floor changed"),
			      "%s", cause ? cause : "(no cause)");
		else
			CHECK(!cause, "canaries within 1.1x named as the cause: %s", cause);
		json_decref(p);
		json_decref(pj0);
		json_decref(entries);
	}
	json_decref(srv);
}

/* The names in point p's flagged_by list for number q, comma-separated. */
static void by_names(const json_t *p, const char *q, char *buf, size_t len)
{
	size_t i;
	const json_t *x;
	buf[0] = '\0';
	json_array_foreach(json_object_get(json_object_get(p, "flagged_by"), q), i, x)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? "," : "", json_string_value(x));
}

TEST(flagged_by_follows_what_each_warning_concerns)
{
	/* Four trials that agree.  Case 0: the host stalled a thread in two
	 * of them (a warning about the tails), and one lagged its schedule
	 * (one trial of four: not the point's).  Case 1: stationarity warned
	 * in two trials, once about the tail alone and once about the
	 * median: the point's row speaks for both. */
	struct check_conf cc;
	checks_defaults(&cc);
	struct point pt = { .idx = 0, .system = "rawrpc", .offered_ops = 1000 };
	json_t *srv = json_pack("{s:s}", "schema", "oqbench.server/1");
	char err[256], b50[128], b99[128], b999[128], btp[128];
	for (int v = 0; v < 2; v++) {
		json_t *entries = json_array(), *pj0 = NULL;
		for (unsigned t = 0; t < 4; t++) {
			json_t *ck;
			if (v == 0)
				ck = json_pack("[{s:s,s:s,s:[ss]},{s:s,s:s,s:[ssss]}]",
					       "name", "stalls", "status", t < 2 ? "warn" : "pass", "concerns", "p99", "p999",
					       "name", "schedule_lag", "status", t == 3 ? "warn" : "pass", "concerns", "p50",
					       "p99", "p999", "achieved_ops");
			else if (t == 0)
				ck = json_pack("[{s:s,s:s,s:[ss]}]", "name", "stationarity", "status", "warn",
					       "concerns", "p99", "p999");
			else
				ck = json_pack("[{s:s,s:s,s:[sss]}]", "name", "stationarity", "status",
					       t == 1 ? "warn" : "pass", "concerns", "p50", "p99", "p999");
			REQUIRE(ck);
			int r = add_trial(entries, &pj0, &pt, srv, t, 2000, 100, ck, err, sizeof err);
			json_decref(ck);
			REQUIRE(r == 0, "%s", err);
		}
		json_t *p = trials_point(pj0, entries, &cc, err, sizeof err);
		REQUIRE(p, "%s", err);
		by_names(p, "p50", b50, sizeof b50);
		by_names(p, "p99", b99, sizeof b99);
		by_names(p, "p999", b999, sizeof b999);
		by_names(p, "achieved_ops", btp, sizeof btp);
		CHECK(json_is_true(json_object_get(p, "flagged")), "case %d: the point is flagged", v);
		if (v == 0)
			CHECK(!strcmp(b50, "") && !strcmp(b99, "stalls") && !strcmp(b999, "stalls") && !strcmp(btp, ""),
			      "case 0: p50 [%s] p99 [%s] p999 [%s] achieved [%s]", b50, b99, b999, btp);
		else
			CHECK(!strcmp(b50, "stationarity") && !strcmp(b99, "stationarity") && !strcmp(btp, ""),
			      "case 1: p50 [%s] p99 [%s] achieved [%s]", b50, b99, btp);
		json_decref(p);
		json_decref(pj0);
		json_decref(entries);
	}
	json_decref(srv);
}

/* h and g hold the same values, counter by counter. */
static int hist_same(const struct hist *h, const struct hist *g)
{
	return h->n == g->n && h->min == g->min && h->max == g->max && h->sum == g->sum &&
	       h->overflow == g->overflow && !memcmp(h->counts, g->counts, sizeof h->counts);
}

TEST(point_histograms_live_in_trials)
{
	/* Three trials merged into a point: run.json keeps the point's
	 * numbers and not its encodings (result_point_compact), and
	 * result_point_hist merges the trials back into the histogram the
	 * point was built from, bit for bit.  A point whose trials do not
	 * add up to it keeps its encoding; a point whose encoding is gone
	 * and whose trials were changed is refused; a trial set aside keeps
	 * its numbers only. */
	struct check_conf cc;
	checks_defaults(&cc);
	struct point pt = { .idx = 0, .system = "oq", .offered_ops = 1000 };
	json_t *srv = json_pack("{s:s}", "schema", "oqbench.server/1");
	json_t *entries = json_array(), *pj0 = NULL;
	static const uint64_t hi[3] = { 2000, 9000, 40000 };
	static const char *const cls[3] = { "all", "nilext", "non_nilext" };
	struct hist *full[3] = { hist_new(), hist_new(), hist_new() }, *back = hist_new();
	char err[256];
	REQUIRE(full[0] && full[1] && full[2] && back);
	for (unsigned t = 0; t < 3; t++) {
		json_t *none = json_array();
		int r = add_trial(entries, &pj0, &pt, srv, t, hi[t], 100, none, err, sizeof err);
		json_decref(none);
		REQUIRE(r == 0, "%s", err);
	}
	json_t *p = trials_point(pj0, entries, &cc, err, sizeof err);
	REQUIRE(p, "%s", err);
	json_t *lat = json_object_get(p, "lat_ns");
	for (int c = 0; c < 3; c++) {
		REQUIRE(result_hist(full[c], json_object_get(lat, cls[c]), err, sizeof err) == 0, "%s", err);
		CHECK(full[c]->n > 0, "%s has samples", cls[c]);
	}
	result_point_compact(p);
	for (int c = 0; c < 3; c++) {
		json_t *s = json_object_get(lat, cls[c]);
		CHECK(!json_object_get(s, "hdr") && json_object_get(s, "p99"), "%s: numbers kept, encoding dropped",
		      cls[c]);
		CHECK(result_point_hist(back, p, "lat_ns", cls[c], err, sizeof err) == 0, "%s: %s", cls[c], err);
		CHECK(hist_same(back, full[c]), "%s: the trials merged are the point", cls[c]);
	}
	CHECK(result_point_hist(back, p, "bogus_ns", "all", err, sizeof err) == -1 && strstr(err, "bogus_ns"),
	      "%s", err);
	/* a trial lost after the fact: the point no longer adds up */
	json_object_set_new(p, "trials", json_deep_copy(entries));   /* trials_point shares entries */
	json_array_remove(json_object_get(p, "trials"), 2);
	CHECK(result_point_hist(back, p, "lat_ns", "nilext", err, sizeof err) == -1 && strstr(err, "damaged"),
	      "a point its trials do not make is refused: %s", err);
	json_decref(p);

	/* trials that do not add up to the point's stored histogram: it keeps its own */
	p = trials_point(pj0, entries, &cc, err, sizeof err);
	REQUIRE(p, "%s", err);
	json_object_set_new(p, "trials", json_deep_copy(entries));
	json_array_remove(json_object_get(p, "trials"), 2);
	result_point_compact(p);
	CHECK(json_is_string(json_object_get(json_object_get(json_object_get(p, "lat_ns"), "all"), "hdr")),
	      "a point that is not its trials' sum keeps its encoding");
	json_decref(p);

	/* a trial set aside */
	json_t *d = json_deep_copy(json_array_get(entries, 1));
	result_trial_set_aside(d);
	CHECK(!json_object_get(json_object_get(json_object_get(d, "lat_ns"), "nilext"), "hdr") &&
	      json_object_get(json_object_get(json_object_get(d, "lat_ns"), "nilext"), "p50"),
	      "a trial set aside keeps its numbers, not its encodings");
	json_decref(d);
	for (int c = 0; c < 3; c++)
		hist_free(full[c]);
	hist_free(back);
	json_decref(pj0);
	json_decref(entries);
	json_decref(srv);
}

/* A check row for a trial: name, status, and its own concerns and detail. */
static json_t *row_of(const char *name, int warn, unsigned concerns, const char *detail)
{
	json_t *r = json_pack("{s:s,s:f,s:f,s:s,s:s}", "name", name, "value", warn ? 0.9 : 0.1, "threshold", 0.5,
			      "status", warn ? "warn" : "pass", "detail", detail);
	checks_set_concerns(r, concerns);
	return r;
}

TEST(trials_stored_give_back_what_they_drop)
{
	/* A kept trial as run.json stores it (result_trial_stored, through
	 * result_point_compact): its summaries without the mean and CIs,
	 * its check rows without the concerns the point's row holds and
	 * without a passing row's detail.  result_trial_full gives back the
	 * trial the run held, all but those details, exactly; the rows the
	 * run merges from are not touched; a summary whose numbers are not
	 * its histogram's keeps them; the point's stall lengths are its
	 * trials' merged and keep the encoding, the trials their numbers. */
	struct check_conf cc;
	checks_defaults(&cc);
	struct point pt = { .idx = 0, .system = "oq", .offered_ops = 1000 };
	json_t *srv = json_pack("{s:s}", "schema", "oqbench.server/1");
	json_t *entries = json_array(), *pj0 = NULL, *p, *ck;
	struct hist *len = hist_new(), *lens = hist_new(), *back = hist_new();
	char err[256];
	size_t i, k;
	REQUIRE(len && lens && back);
	for (unsigned t = 0; t < 3; t++) {
		json_t *c = fake_client(t, 5000, 1000, 3000 + 1000 * t, NULL);
		json_t *pj = merge_point(&pt, &c, 1, srv, err, sizeof err);
		json_decref(c);
		REQUIRE(pj, "%s", err);
		/* host_tags as hosttags_point writes them: nothing tagged, and
		 * a few host stalls of the trial's own lengths */
		hist_reset(len);
		for (uint64_t v = 0; v < 40; v++)
			hist_record(len, 60000 + v * 977 * (t + 1));
		hist_merge(lens, len);
		json_t *zero = json_pack("{s:i,s:i,s:i}", "all", 0, "nilext", 0, "non_nilext", 0);
		json_object_set_new(pj, "host_tags", json_pack("{s:O,s:O,s:O,s:O,s:{s:b},s:o}", "sys_lat_ns",
			json_object_get(pj, "lat_ns"), "tagged", zero, "unattributed", zero, "worker", zero,
			"stall_ns", "complete", 1, "host_len_ns", result_hist_summary(len)));
		json_decref(zero);
		/* every trial passes "lag" (concerns all, as the point's row
		 * will); trial 1 warns "tail" about p99 alone */
		ck = json_pack("[o,o]", row_of("lag", 0, CHECK_ALL, "lag detail"),
			       row_of("tail", t == 1, t == 1 ? CHECK_P99 : CHECK_LAT, t == 1 ? "tail warned" : "tail calm"));
		json_array_append_new(entries, trials_entry(pj, t, t, 100, ck));
		json_decref(ck);
		if (!pj0)
			pj0 = pj;
		else
			json_decref(pj);
	}
	json_t *before = json_deep_copy(entries);
	p = trials_point(pj0, entries, &cc, err, sizeof err);
	REQUIRE(p && before, "%s", err);
	result_point_compact(p);
	CHECK(json_equal(entries, before), "the trials the run merges from are not changed");
	/* oqbench.run/4: the point keeps its stall lengths' encoding, its
	 * trials their numbers */
	const json_t *plen = json_object_get(json_object_get(p, "host_tags"), "host_len_ns");
	CHECK(json_is_object(plen) && json_is_string(json_object_get(plen, "hdr")),
	      "the point keeps its stall lengths' encoding");
	CHECK(result_point_hist(back, p, "host_len_ns", NULL, err, sizeof err) == 0 && hist_same(back, lens),
	      "the point's stall lengths are its trials' merged: %s", err);
	const json_t *st = json_object_get(p, "trials"), *t;
	REQUIRE(json_array_size(st) == 3);
	json_array_foreach(st, i, t) {
		const json_t *nil = json_object_get(json_object_get(t, "lat_ns"), "nilext"), *r;
		const json_t *tl = json_object_get(json_object_get(t, "host_tags"), "host_len_ns");
		CHECK(!json_object_get(nil, "mean") && !json_object_get(nil, "p99_ci") && json_object_get(nil, "p99") &&
		      json_object_get(nil, "hdr"), "trial %zu: its summary keeps p50/p99/p999 and its encoding", i);
		CHECK(!json_object_get(tl, "hdr") && result_num(tl, "n") == 40 && json_object_get(tl, "p99"),
		      "trial %zu: its stall lengths keep their numbers, not their encoding", i);
		json_array_foreach(json_object_get(t, "checks"), k, r) {
			int warn = !strcmp(json_string_value(json_object_get(r, "status")), "warn");
			CHECK(!json_object_get(r, "detail") == !warn, "trial %zu row %zu: a detail only when it warned", i, k);
			CHECK(!strcmp(json_string_value(json_object_get(r, "name")), "tail") ||
			      !json_object_get(r, "concerns"), "trial %zu: lag's concerns are the point's row's", i);
		}
		/* back as the run held it, all but a passing row's detail */
		json_t *full = result_trial_full(p, t), *want = json_deep_copy(json_array_get(before, i));
		REQUIRE(full && want);
		json_t *wr;
		json_array_foreach(json_object_get(want, "checks"), k, wr)
			if (!strcmp(json_string_value(json_object_get(wr, "status")), "pass"))
				json_object_del(wr, "detail");
		/* nor the stall lengths' encoding and CIs its point keeps (the
		 * mean comes back: sum / n) */
		json_t *wl = json_object_get(json_object_get(want, "host_tags"), "host_len_ns");
		json_object_del(wl, "hdr");
		json_object_del(wl, "p50_ci");
		json_object_del(wl, "p99_ci");
		json_object_del(wl, "p999_ci");
		CHECK(json_equal(full, want), "trial %zu comes back as it was", i);
		json_decref(full);
		json_decref(want);
	}
	/* a mean that is not its histogram's stays as it is */
	json_t *odd = json_deep_copy(json_array_get(entries, 0));
	json_object_set_new(json_object_get(json_object_get(odd, "lat_ns"), "nilext"), "mean", json_real(1.5));
	json_t *kept = result_trial_stored(odd, json_object_get(p, "checks"));
	CHECK(result_num(json_object_get(json_object_get(kept, "lat_ns"), "nilext"), "mean") == 1.5,
	      "a summary whose numbers its histogram does not give keeps them");
	json_decref(kept);
	json_decref(odd);
	json_decref(p);
	json_decref(before);
	json_decref(pj0);
	json_decref(entries);
	json_decref(srv);
	hist_free(len);
	hist_free(lens);
	hist_free(back);
}

UNIT_MAIN(script_quotes_every_word, shell_quote_keeps_plain_words, ssh_command_checks_host_keys,
	  local_start_reports_exec_failure, merge_sums_bins_never_averages, host_is_local_cases,
	  rerun_policy_stops_and_resumes, trial_agreement_names_a_changed_canary,
	  flagged_by_follows_what_each_warning_concerns, point_histograms_live_in_trials,
	  trials_stored_give_back_what_they_drop)
