/*
 * test_ctl.c - the control channel: framing, version checks, large
 * messages, timeouts, and a process exiting when its driver goes away.
 * Everything runs on 127.0.0.1 with ports chosen by the kernel.
 */
#include "unit.h"
#include "ctl.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char cerr[512];

/* Waits up to ms for the next message on a driver-side connection. */
static json_t *drv_next(struct ctl *k, int ms, int *eof)
{
	json_t *m;

	*eof = 0;
	for (int waited = 0; waited <= ms; waited += 10) {
		if ((m = ctl_pop(k)) != NULL)
			return m;
		if (*eof)
			return NULL;
		struct pollfd p = { .fd = ctl_fd(k), .events = POLLIN };
		if (poll(&p, 1, 10) > 0) {
			int r = ctl_pump(k, cerr, sizeof cerr);
			if (r < 0)
				return NULL;
			if (r == 0)
				*eof = 1;
		}
	}
	return NULL;
}

static struct ctl *drv_accept(int lfd, int ms)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };

	if (poll(&p, 1, ms) <= 0)
		return NULL;
	return ctl_accept(lfd, cerr, sizeof cerr);
}

/* A raw TCP client, to send lines ctl_send would never produce. */
static int raw_connect(unsigned port)
{
	char hp[32];
	snprintf(hp, sizeof hp, "127.0.0.1:%u", port);
	struct ctl *c = ctl_connect(hp, "raw", 0, 1000, cerr, sizeof cerr);
	if (!c)
		return -1;
	int fd = dup(ctl_fd(c));
	ctl_close(c);
	return fd;
}

struct proc_arg {
	unsigned port;
	size_t big;       /* size of a string in the DONE result */
	int ok;
	char why[1024];
};

/* The process side of one point: HELLO, wait GO, DONE, wait BYE/EOF. */
static void *proc_main(void *a_)
{
	struct proc_arg *a = a_;
	char hp[32], e[256];
	struct ctl *c;
	json_t *m, *info, *res;
	char *blob;

	snprintf(hp, sizeof hp, "127.0.0.1:%u", a->port);
	c = ctl_connect(hp, "client", 3, 2000, e, sizeof e);
	if (!c) {
		snprintf(a->why, sizeof a->why, "connect: %s", e);
		return NULL;
	}
	info = json_pack("{s:s}", "endpoint", "ep-123");
	if (ctl_hello(c, info, e, sizeof e) < 0) {
		snprintf(a->why, sizeof a->why, "hello: %s", e);
		goto out;
	}
	m = ctl_recv(c, 2000, e, sizeof e);
	if (!m || strcmp(json_string_value(json_object_get(m, "type")), "GO") != 0 ||
	    json_integer_value(json_object_get(m, "start_in_ns")) != 5000) {
		snprintf(a->why, sizeof a->why, "expected GO, got %s", m ? "other" : e);
		json_decref(m);
		goto out;
	}
	json_decref(m);
	blob = malloc(a->big + 1);
	memset(blob, 'x', a->big);
	blob[a->big] = '\0';
	res = json_pack("{s:s, s:s}", "schema", "test/1", "blob", blob);
	free(blob);
	if (ctl_done(c, res, e, sizeof e) < 0) {
		json_decref(res);
		snprintf(a->why, sizeof a->why, "done: %s", e);
		goto out;
	}
	json_decref(res);
	m = ctl_recv(c, 2000, e, sizeof e);
	if (m && strcmp(json_string_value(json_object_get(m, "type")), "BYE") == 0) {
		json_decref(m);
		/* After BYE the driver closes: the next recv reports EOF. */
		m = ctl_recv(c, 2000, e, sizeof e);
		if (!m && strstr(e, "closed"))
			a->ok = 1;
		else
			snprintf(a->why, sizeof a->why, "expected EOF after BYE, got %s", m ? "message" : e);
	} else {
		snprintf(a->why, sizeof a->why, "expected BYE, got %s", m ? "other" : e);
	}
	json_decref(m);
out:
	json_decref(info);
	ctl_close(c);
	return NULL;
}

TEST(rendezvous_roundtrip)
{
	unsigned port = 0;
	int lfd = ctl_listen("127.0.0.1", &port, cerr, sizeof cerr);
	REQUIRE(lfd >= 0, "%s", cerr);
	REQUIRE(port > 0);

	struct proc_arg a = { .port = port, .big = 3u << 20 };  /* 3 MB: forces buffer growth */
	pthread_t t;
	pthread_create(&t, NULL, proc_main, &a);

	struct ctl *k = drv_accept(lfd, 2000);
	REQUIRE(k, "accept: %s", cerr);
	int eof;
	json_t *m = drv_next(k, 2000, &eof);
	REQUIRE(m, "no HELLO: %s", cerr);
	CHECK(strcmp(json_string_value(json_object_get(m, "type")), "HELLO") == 0);
	CHECK(strcmp(json_string_value(json_object_get(m, "role")), "client") == 0);
	CHECK(json_integer_value(json_object_get(m, "rank")) == 3);
	CHECK(json_integer_value(json_object_get(m, "pid")) == getpid());
	CHECK(strcmp(json_string_value(json_object_get(m, "endpoint")), "ep-123") == 0);
	CHECK(json_integer_value(json_object_get(m, "v")) == CTL_VERSION);
	json_decref(m);

	CHECK(ctl_send(k, json_pack("{s:s, s:I}", "type", "GO", "start_in_ns", (json_int_t)5000),
		       cerr, sizeof cerr) == 0, "%s", cerr);
	m = drv_next(k, 3000, &eof);
	REQUIRE(m, "no DONE: %s", cerr);
	CHECK(strcmp(json_string_value(json_object_get(m, "type")), "DONE") == 0);
	json_t *res = json_object_get(m, "result");
	CHECK(strcmp(json_string_value(json_object_get(res, "schema")), "test/1") == 0);
	CHECK(strlen(json_string_value(json_object_get(res, "blob"))) == (3u << 20));
	json_decref(m);

	CHECK(ctl_send(k, json_pack("{s:s}", "type", "BYE"), cerr, sizeof cerr) == 0);
	ctl_close(k);
	pthread_join(t, NULL);
	CHECK(a.ok, "%s", a.why);
	close(lfd);
}

TEST(rejects_bad_lines)
{
	unsigned port = 0;
	int lfd = ctl_listen("127.0.0.1", &port, cerr, sizeof cerr);
	REQUIRE(lfd >= 0, "%s", cerr);
	static const char *bad[] = {
		"{\"v\":2,\"type\":\"HELLO\"}\n",
		"{\"type\":\"HELLO\"}\n",
		"{\"v\":1}\n",
		"[1,2]\n",
		"hello there\n",
	};
	static const char *want[] = { "version", "version", "type", "object", "not JSON" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int fd = raw_connect(port);
		REQUIRE(fd >= 0, "%s", cerr);
		struct ctl *k = drv_accept(lfd, 2000);
		REQUIRE(k, "%s", cerr);
		REQUIRE(write(fd, bad[i], strlen(bad[i])) == (ssize_t)strlen(bad[i]));
		struct pollfd p = { .fd = ctl_fd(k), .events = POLLIN };
		poll(&p, 1, 2000);
		cerr[0] = '\0';
		int r = ctl_pump(k, cerr, sizeof cerr);
		CHECK(r == -1, "line %zu accepted", i);
		CHECK(strstr(cerr, want[i]) != NULL, "line %zu: error \"%s\" lacks \"%s\"", i, cerr, want[i]);
		CHECK(strstr(cerr, "127.0.0.1") != NULL, "error does not name the peer: %s", cerr);
		CHECK(ctl_pop(k) == NULL);
		ctl_close(k);
		close(fd);
	}
	close(lfd);
}

TEST(split_and_joined_lines)
{
	unsigned port = 0;
	int lfd = ctl_listen("127.0.0.1", &port, cerr, sizeof cerr);
	REQUIRE(lfd >= 0, "%s", cerr);
	int fd = raw_connect(port);
	REQUIRE(fd >= 0);
	struct ctl *k = drv_accept(lfd, 2000);
	REQUIRE(k);
	/* Two messages in one write, the second split across two writes. */
	const char *p1 = "{\"v\":1,\"type\":\"A\"}\n{\"v\":1,\"ty";
	const char *p2 = "pe\":\"B\"}\n";
	REQUIRE(write(fd, p1, strlen(p1)) > 0);
	int eof;
	json_t *m = drv_next(k, 2000, &eof);
	REQUIRE(m, "%s", cerr);
	CHECK(strcmp(json_string_value(json_object_get(m, "type")), "A") == 0);
	json_decref(m);
	CHECK(ctl_pop(k) == NULL);
	REQUIRE(write(fd, p2, strlen(p2)) > 0);
	close(fd);
	m = drv_next(k, 2000, &eof);
	REQUIRE(m, "%s", cerr);
	CHECK(strcmp(json_string_value(json_object_get(m, "type")), "B") == 0);
	json_decref(m);
	m = drv_next(k, 2000, &eof);
	CHECK(!m && eof, "EOF not reported");
	ctl_close(k);
	close(lfd);
}

TEST(connect_errors_and_timeouts)
{
	struct ctl *c = ctl_connect("no-port-here", "client", 0, 100, cerr, sizeof cerr);
	CHECK(!c);
	CHECK(strstr(cerr, "no-port-here") && strstr(cerr, "HOST:PORT"), "%s", cerr);

	/* A port nobody listens on: find one by listening and closing. */
	unsigned port = 0;
	int lfd = ctl_listen("127.0.0.1", &port, cerr, sizeof cerr);
	REQUIRE(lfd >= 0);
	close(lfd);
	char hp[32];
	snprintf(hp, sizeof hp, "127.0.0.1:%u", port);
	c = ctl_connect(hp, "client", 0, 150, cerr, sizeof cerr);
	CHECK(!c);
	CHECK(strstr(cerr, "cannot connect") && strstr(cerr, hp), "%s", cerr);

	/* recv timeout without and with a watcher */
	port = 0;
	lfd = ctl_listen("127.0.0.1", &port, cerr, sizeof cerr);
	REQUIRE(lfd >= 0);
	snprintf(hp, sizeof hp, "127.0.0.1:%u", port);
	c = ctl_connect(hp, "server", 0, 1000, cerr, sizeof cerr);
	REQUIRE(c, "%s", cerr);
	struct ctl *k = drv_accept(lfd, 1000);
	REQUIRE(k);
	json_t *m = ctl_recv(c, 50, cerr, sizeof cerr);
	CHECK(!m && strstr(cerr, "50 ms"), "%s", cerr);
	volatile int lost = 0;
	CHECK(ctl_start_watch(c, &lost, NULL, NULL) == 0);
	m = ctl_recv(c, 50, cerr, sizeof cerr);
	CHECK(!m && strstr(cerr, "50 ms"), "%s", cerr);
	CHECK(ctl_send(k, json_pack("{s:s}", "type", "STOP"), cerr, sizeof cerr) == 0);
	m = ctl_recv(c, 2000, cerr, sizeof cerr);
	CHECK(m && strcmp(json_string_value(json_object_get(m, "type")), "STOP") == 0, "%s", cerr);
	json_decref(m);
	CHECK(!lost);
	/* The owner closes first: no exit, no lost flag. */
	ctl_close(c);
	CHECK(!lost);
	ctl_close(k);
	close(lfd);
}

static int lost_pipe[2];

static void on_lost(void *arg)
{
	(void)arg;
	char b = 'L';
	if (write(lost_pipe[1], &b, 1) < 0)
		_exit(99);
}

TEST(process_exits_when_driver_goes)
{
	unsigned port = 0;
	int lfd = ctl_listen("127.0.0.1", &port, cerr, sizeof cerr);
	REQUIRE(lfd >= 0);
	REQUIRE(pipe(lost_pipe) == 0);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		char hp[32], e[256];
		static volatile int lost;
		snprintf(hp, sizeof hp, "127.0.0.1:%u", port);
		struct ctl *c = ctl_connect(hp, "client", 0, 2000, e, sizeof e);
		if (!c || ctl_hello(c, NULL, e, sizeof e) < 0)
			_exit(10);
		ctl_start_watch(c, &lost, on_lost, NULL);
		/* A stuck owner that never polls `lost`: the watcher must end it. */
		for (;;)
			pause();
	}
	close(lost_pipe[1]);
	struct ctl *k = drv_accept(lfd, 2000);
	REQUIRE(k, "%s", cerr);
	int eof;
	json_t *m = drv_next(k, 2000, &eof);
	CHECK(m != NULL);
	json_decref(m);
	ctl_close(k);          /* the driver "dies" */
	int st = 0, waited = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (waitpid(pid, &st, WNOHANG) == 0 && waited < 4000) {
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		waited = (int)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	}
	if (waited >= 4000) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	CHECK(waited < 4000, "process did not exit after its control socket closed");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == CTL_EXIT_LOST, "status %d", st);
	CHECK(waited >= CTL_LOST_GRACE_MS - 100, "exited after %d ms, before the grace", waited);
	char b = 0;
	CHECK(read(lost_pipe[0], &b, 1) == 1 && b == 'L', "on_lost was not called");
	close(lost_pipe[0]);
	close(lfd);
}

UNIT_MAIN(rendezvous_roundtrip, rejects_bad_lines, split_and_joined_lines,
	  connect_errors_and_timeouts, process_exits_when_driver_goes)
