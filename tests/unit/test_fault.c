/*
 * test_fault.c - the OQB_FAULT parser (bench/fault.h): the items it
 * accepts, the errors that name the fix, server-delay-frac's even and
 * exact choice of requests, the two delay modes, and the exit line that
 * carries the server's delay count.
 */
#include "unit.h"
#include "clock.h"
#include "fault.h"

#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned m;
static struct fault_params fp;
static char err[400];

static int parse(const char *s)
{
	err[0] = 0;
	return fault_parse(s, &m, &fp, err, sizeof err);
}

TEST(existing_items_parse_as_before)
{
	REQUIRE(parse("") == 0);
	CHECK(m == 0);
	REQUIRE(parse(NULL) == 0);
	CHECK(m == 0);
	REQUIRE(parse("server-delay-ns:400") == 0, "%s", err);
	CHECK(m == FAULT_SERVER_DELAY);
	CHECK_EQ_U64(fp.delay_ns, 400);
	/* every request, busy: what the A/B tests rely on */
	CHECK_EQ_U64(fp.delay_frac_ppb, FAULT_FRAC_ONE);
	CHECK(fp.delay_sleep == 0);
	REQUIRE(parse("exec-out-of-order,,client-gen-delay-ns:7,claim-stall-ms:3,drop-after-ack") == 0, "%s", err);
	CHECK(m == (FAULT_EXEC_OOO | FAULT_CLIENT_GEN_DELAY | FAULT_CLAIM_STALL | FAULT_DROP_AFTER_ACK));
	CHECK_EQ_U64(fp.gen_delay_ns, 7);
	CHECK_EQ_U64(fp.claim_stall_ms, 3);
	CHECK(parse("exec-out-of-ordr") == -1);
	CHECK(strstr(err, "unknown fault \"exec-out-of-ordr\"") && strstr(err, "server-delay-frac:F"), "%s", err);
}

TEST(delay_fraction_and_mode_parse)
{
	REQUIRE(parse("server-delay-ns:1000000,server-delay-frac:0.02,server-delay-mode:sleep") == 0, "%s", err);
	CHECK(m == FAULT_SERVER_DELAY);
	CHECK_EQ_U64(fp.delay_ns, 1000000);
	CHECK_EQ_U64(fp.delay_frac_ppb, 20000000);
	CHECK(fp.delay_sleep == 1);
	/* the modifiers may come first; the last of each counts */
	REQUIRE(parse("server-delay-mode:sleep,server-delay-frac:.5,server-delay-mode:busy,server-delay-ns:9") == 0, "%s", err);
	CHECK_EQ_U64(fp.delay_frac_ppb, FAULT_FRAC_ONE / 2);
	CHECK(fp.delay_sleep == 0);
	static const struct { const char *f; uint32_t ppb; } ok[] = {
		{ "1", FAULT_FRAC_ONE }, { "1.0", FAULT_FRAC_ONE }, { "1.000000000", FAULT_FRAC_ONE },
		{ "0.000000001", 1 }, { "0.999999999", FAULT_FRAC_ONE - 1 }, { "0.25", 250000000 },
		{ "00.1", 100000000 },
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		char s[80];
		snprintf(s, sizeof s, "server-delay-ns:1,server-delay-frac:%s", ok[i].f);
		CHECK(parse(s) == 0 && fp.delay_frac_ppb == ok[i].ppb, "%s: %s, ppb %u", s, err,
		      (unsigned)fp.delay_frac_ppb);
	}
}

TEST(bad_fraction_or_mode_is_refused_with_the_fix)
{
	static const char *bad[] = { "0", "0.0", "1.5", "2", "10", "-0.1", "abc", "", ".", "0.02x",
				     "0.0000000001", "1e-2", " 0.5" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char s[80];
		snprintf(s, sizeof s, "server-delay-ns:1,server-delay-frac:%s", bad[i]);
		CHECK(parse(s) == -1, "%s accepted", s);
		CHECK(strstr(err, s + 18) && strstr(err, "0 < F <= 1") && strstr(err, "server-delay-frac:0.02"),
		      "%s: %s", s, err);
	}
	CHECK(parse("server-delay-ns:1,server-delay-mode:spin") == -1);
	CHECK(strstr(err, "\"server-delay-mode:spin\": unknown mode") && strstr(err, "busy") &&
	      strstr(err, "sleep"), "%s", err);
	CHECK(parse("server-delay-ns:1,server-delay-mode:") == -1);
	CHECK(parse("server-delay-ns:1,server-delay-mode:Sleep") == -1);
	/* a modifier alone would silently do nothing: refused, naming the fix */
	CHECK(parse("server-delay-frac:0.02") == -1);
	CHECK(strstr(err, "server-delay-frac modifies server-delay-ns") &&
	      strstr(err, "OQB_FAULT=server-delay-ns:"), "%s", err);
	CHECK(parse("get-bypass,server-delay-mode:sleep") == -1);
	CHECK(strstr(err, "server-delay-mode modifies server-delay-ns"), "%s", err);
	CHECK(parse("client-gen-delay-ns:5,server-delay-frac:0.5") == -1);
}

/* Of the first k requests exactly floor(k F + 1/2) are delayed, for every
 * k, so any run of requests is delayed within one of its share. */
TEST(delay_pick_is_exact_and_even)
{
	static const uint32_t fr[] = { FAULT_FRAC_ONE, FAULT_FRAC_ONE / 2, 20000000, 333333333, 1,
				       FAULT_FRAC_ONE - 1, 987654321 };
	for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++) {
		int64_t acc = 0;
		uint64_t n = 0, bad = 0;
		for (uint64_t k = 1; k <= 300000; k++) {
			n += (uint64_t)fault_delay_pick(&acc, fr[i]);
			if (n != (k * fr[i] + FAULT_FRAC_ONE / 2) / FAULT_FRAC_ONE && !bad++)
				CHECK(0, "F = %u ppb: %llu delays in the first %llu", (unsigned)fr[i],
				      (unsigned long long)n, (unsigned long long)k);
		}
	}
	/* F = 0.02: the 25th, 75th, 125th ... request, 50 apart */
	int64_t acc = 0;
	uint64_t prev = 0;
	for (uint64_t k = 1; k <= 1000; k++)
		if (fault_delay_pick(&acc, 20000000)) {
			CHECK(prev ? k - prev == 50 : k == 25, "delayed request %llu after %llu",
			      (unsigned long long)k, (unsigned long long)prev);
			prev = k;
		}
}

/* The thread's voluntary context switches (the kernel's count of the
 * times it blocked), -1 if unknown. */
static long voluntary_switches(void)
{
	FILE *f = fopen("/proc/thread-self/status", "r");
	char line[128];
	long v = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

TEST(sleep_blocks_and_long_busy_delays_are_never_short)
{
	const uint64_t ns = 200000;
	long v0 = voluntary_switches();
	for (int i = 0; i < 20; i++) {
		uint64_t t0 = clock_ns();
		fault_sleep(ns);
		uint64_t dt = clock_ns() - t0;
		CHECK(dt >= ns, "slept %llu ns of %llu", (unsigned long long)dt, (unsigned long long)ns);
	}
	long v1 = voluntary_switches();
	if (v0 < 0 || v1 < 0)
		SKIP("no /proc/thread-self/status here");
	CHECK(v1 - v0 >= 20, "20 sleeps, %ld voluntary switches", v1 - v0);
	/* busy: on the clock from FAULT_DELAY_CLOCK_NS, and it does not block */
	for (uint64_t d = FAULT_DELAY_CLOCK_NS; d <= 8 * FAULT_DELAY_CLOCK_NS; d *= 2) {
		uint64_t t0 = clock_ns();
		fault_delay(d);
		uint64_t dt = clock_ns() - t0;
		CHECK(dt >= d, "busy delay of %llu ns took %llu", (unsigned long long)d, (unsigned long long)dt);
	}
}

/* The exit line of a child process with OQB_FAULT=fault that counted
 * `add` server delays (-1: none), into line; 0, or -1. */
static int exit_line(const char *fault, long add, char *line, size_t cap)
{
	int p[2];
	if (pipe(p) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		setenv("OQB_FAULT", fault, 1);
		char e[300];
		if (fault_init("server", e, sizeof e) != 0)
			_exit(3);
		if (add >= 0)
			fault_fired_add(FAULT_SERVER_DELAY, (uint64_t)add);
		exit(0);   /* atexit: the line */
	}
	close(p[1]);
	FILE *f = fdopen(p[0], "r");
	char buf[600];
	line[0] = 0;
	while (f && fgets(buf, sizeof buf, f))
		if (!strncmp(buf, "OQB_FAULT fired:", 16))
			snprintf(line, cap, "%s", buf);
	if (f)
		fclose(f);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

TEST(exit_line_carries_the_server_delay_count)
{
	char line[600];
	REQUIRE(exit_line("server-delay-ns:5,server-delay-frac:0.5", 1234, line, sizeof line) == 0);
	CHECK(!strcmp(line, "OQB_FAULT fired: server-delay=1234\n"), "%s", line);
	/* a process that ran no server (a client with the server's OQB_FAULT) */
	REQUIRE(exit_line("server-delay-ns:5", -1, line, sizeof line) == 0);
	CHECK(!line[0], "%s", line);
	REQUIRE(exit_line("drop-after-ack,server-delay-ns:5", 0, line, sizeof line) == 0);
	CHECK(!strcmp(line, "OQB_FAULT fired: drop-after-ack=0 server-delay=0\n"), "%s", line);
}

UNIT_MAIN(existing_items_parse_as_before, delay_fraction_and_mode_parse,
	  bad_fraction_or_mode_is_refused_with_the_fix, delay_pick_is_exact_and_even,
	  sleep_blocks_and_long_busy_delays_are_never_short, exit_line_carries_the_server_delay_count)
