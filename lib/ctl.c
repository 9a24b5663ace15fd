/*
 * ctl.c - the control channel (see ctl.h for the protocol).
 *
 * Framing is one JSON object per line.  Lines can be large (a client's
 * DONE carries three histograms), so the read buffer grows as needed up to
 * CTL_MAX_LINE.  Every message is checked on receipt: it must be an object
 * with "v" equal to CTL_VERSION and a string "type", so a driver and a
 * process built from different versions fail loudly instead of
 * misunderstanding each other.
 *
 * Both ends use struct ctl.  A process opens one with ctl_connect() and may
 * hand reading to a watcher thread (ctl_start_watch); the driver accepts
 * many with ctl_accept() and reads them from its own poll() loop with
 * ctl_pump() + ctl_pop(), so it never blocks on one slow peer.
 */
#include "clock.h"
#include "ctl.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CTL_MAX_LINE (256u << 20)   /* a sanity bound, far above any result */

struct ctl {
	int fd;
	char role[16];
	unsigned rank;
	char peer[80];
	int is_proc;            /* opened by ctl_connect (the process side) */

	/* bytes read but not yet split into lines */
	char *buf;
	size_t len, cap;

	/* parsed messages waiting for ctl_recv/ctl_pop; guarded by mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	json_t *queue;          /* JSON array, oldest first */
	int eof;                /* peer closed (or read error) */
	char qerr[256];         /* first protocol error seen by the watcher */

	/* watcher thread */
	int watching;
	int closing;            /* ctl_close in progress: EOF is expected */
	pthread_t thr;
	volatile int *lost_flag;
	void (*on_lost)(void *);
	void *lost_arg;

	pthread_mutex_t wmu;    /* one writer at a time */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static struct ctl *ctl_alloc(int fd)
{
	struct ctl *c = calloc(1, sizeof *c);
	pthread_condattr_t ca;

	if (!c)
		return NULL;
	c->fd = fd;
	c->queue = json_array();
	if (!c->queue) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->wmu, NULL);
	/* Monotonic, so timed waits survive wall-clock steps. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	snprintf(c->role, sizeof c->role, "?");
	return c;
}

static void fill_peer(struct ctl *c)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char host[INET6_ADDRSTRLEN + 2], port[8];

	if (getpeername(c->fd, (struct sockaddr *)&ss, &sl) == 0 &&
	    getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, port, sizeof port,
			NI_NUMERICHOST | NI_NUMERICSERV) == 0)
		snprintf(c->peer, sizeof c->peer, "%s:%s", host, port);
	else
		snprintf(c->peer, sizeof c->peer, "fd %d", c->fd);   /* not a socket */
}

/*
 * Splits "host:port" or "[v6addr]:port".  Returns 0, or -1 with err set.
 */
static int split_hostport(const char *hp, char *host, size_t hostlen, char *port,
			  size_t portlen, char *err, size_t errlen)
{
	const char *colon, *h = hp;
	size_t hl;

	if (!hp || !*hp) {
		err_set(err, errlen, "empty control address; expected HOST:PORT");
		return -1;
	}
	if (*hp == '[') {
		const char *rb = strchr(hp, ']');
		if (!rb || rb[1] != ':') {
			err_set(err, errlen, "control address \"%s\": expected [ADDR]:PORT", hp);
			return -1;
		}
		h = hp + 1;
		hl = (size_t)(rb - h);
		colon = rb + 1;
	} else {
		colon = strrchr(hp, ':');
		if (!colon) {
			err_set(err, errlen, "control address \"%s\": expected HOST:PORT", hp);
			return -1;
		}
		hl = (size_t)(colon - hp);
	}
	if (hl == 0 || hl >= hostlen || strlen(colon + 1) == 0 ||
	    strlen(colon + 1) >= portlen || strspn(colon + 1, "0123456789") != strlen(colon + 1)) {
		err_set(err, errlen, "control address \"%s\": expected HOST:PORT with a numeric port", hp);
		return -1;
	}
	memcpy(host, h, hl);
	host[hl] = '\0';
	snprintf(port, portlen, "%s", colon + 1);
	return 0;
}

/* Writes all of buf; MSG_NOSIGNAL so a dead peer is an error, not SIGPIPE. */
static int write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				struct pollfd p = { .fd = fd, .events = POLLOUT };
				poll(&p, 1, 1000);
				continue;
			}
			return -1;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Checks one received line and returns it as a message, or NULL with err
 * set (not JSON, not an object, wrong "v", no "type").
 */
static json_t *parse_line(const struct ctl *c, const char *line, size_t n, char *err,
			  size_t errlen)
{
	json_error_t je;
	json_t *m = json_loadb(line, n, 0, &je);
	json_t *v;

	if (!m) {
		err_set(err, errlen, "control message from %s is not JSON (%s at column %d)",
			c->peer, je.text, je.column);
		return NULL;
	}
	if (!json_is_object(m)) {
		err_set(err, errlen, "control message from %s is not a JSON object", c->peer);
		json_decref(m);
		return NULL;
	}
	v = json_object_get(m, "v");
	if (!json_is_integer(v) || json_integer_value(v) != CTL_VERSION) {
		char got[48];

		if (json_is_integer(v))
			snprintf(got, sizeof got, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		else
			snprintf(got, sizeof got, "%s", v ? "not an integer" : "missing");
		err_set(err, errlen,
			"control message from %s has protocol version \"v\" %s, expected %d: "
			"driver and binaries come from different builds; rebuild both (make)",
			c->peer, got, CTL_VERSION);
		json_decref(m);
		return NULL;
	}
	if (!json_is_string(json_object_get(m, "type"))) {
		err_set(err, errlen, "control message from %s has no string \"type\" (HELLO, DONE, "
			"ERROR, ...): not an oqb process, or a different build; rebuild both (make)",
			c->peer);
		json_decref(m);
		return NULL;
	}
	return m;
}

/*
 * Moves every complete line of c->buf into the queue (caller holds no
 * lock; takes mu).  Returns 0, or -1 with err set at the first bad line
 * (which is dropped; later lines are still queued).
 */
static int split_lines(struct ctl *c, char *err, size_t errlen)
{
	size_t start = 0;
	int rc = 0;

	for (;;) {
		char *nl = memchr(c->buf + start, '\n', c->len - start);
		if (!nl)
			break;
		size_t n = (size_t)(nl - (c->buf + start));
		if (n > 0) {
			json_t *m = parse_line(c, c->buf + start, n, rc ? NULL : err, errlen);
			if (m) {
				pthread_mutex_lock(&c->mu);
				json_array_append_new(c->queue, m);
				pthread_cond_broadcast(&c->cv);
				pthread_mutex_unlock(&c->mu);
			} else {
				rc = -1;
			}
		}
		start += n + 1;
	}
	if (start > 0) {
		memmove(c->buf, c->buf + start, c->len - start);
		c->len -= start;
	}
	return rc;
}

/*
 * One read() into the buffer.  Returns 1 if bytes arrived, 0 on EOF, -1 on
 * a read error or an over-long line (err set).  EAGAIN counts as 1 with no
 * data so callers simply poll again.
 */
static int read_once(struct ctl *c, char *err, size_t errlen)
{
	ssize_t r;

	if (c->cap - c->len < 65536) {
		size_t ncap = c->cap ? c->cap * 2 : 131072;
		if (ncap > CTL_MAX_LINE) {
			err_set(err, errlen, "control message from %s is longer than %u bytes",
				c->peer, CTL_MAX_LINE);
			return -1;
		}
		char *nb = realloc(c->buf, ncap);
		if (!nb) {
			err_set(err, errlen, "out of memory reading control messages from %s", c->peer);
			return -1;
		}
		c->buf = nb;
		c->cap = ncap;
	}
	do
		r = read(c->fd, c->buf + c->len, c->cap - c->len);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 1;
		err_set(err, errlen, "reading control connection %s: %s", c->peer, strerror(errno));
		return -1;
	}
	if (r == 0)
		return 0;
	c->len += (size_t)r;
	return 1;
}

struct ctl *ctl_connect(const char *hostport, const char *role, unsigned rank,
			int timeout_ms, char *err, size_t errlen)
{
	char host[256], port[16], why[400] = "no address";
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	uint64_t deadline = mono_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	unsigned backoff = 20;

	if (split_hostport(hostport, host, sizeof host, port, sizeof port, err, errlen) < 0)
		return NULL;
	for (;;) {
		struct addrinfo *ai = NULL, *p;
		int g = getaddrinfo(host, port, &hints, &ai);

		if (g != 0) {
			snprintf(why, sizeof why, "cannot resolve \"%s\": %s", host, gai_strerror(g));
		} else {
			for (p = ai; p; p = p->ai_next) {
				int fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
				if (fd < 0) {
					snprintf(why, sizeof why, "socket: %s", strerror(errno));
					continue;
				}
				if (connect(fd, p->ai_addr, p->ai_addrlen) == 0) {
					int one = 1;
					struct ctl *c;

					setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
					freeaddrinfo(ai);
					c = ctl_alloc(fd);
					if (!c) {
						close(fd);
						err_set(err, errlen, "out of memory");
						return NULL;
					}
					snprintf(c->role, sizeof c->role, "%s", role ? role : "?");
					c->is_proc = 1;
					c->rank = rank;
					fill_peer(c);
					return c;
				}
				snprintf(why, sizeof why, "%s", strerror(errno));
				close(fd);
			}
			freeaddrinfo(ai);
		}
		/* The driver may still be setting up; retry until the deadline. */
		if (mono_ms() >= deadline)
			break;
		struct timespec ts = { 0, (long)backoff * 1000000L };
		nanosleep(&ts, NULL);
		if (backoff < 200)
			backoff *= 2;
	}
	err_set(err, errlen, "cannot connect to the driver's control address %s: %s "
		"(is the driver running, and can this host reach it?)", hostport, why);
	return NULL;
}

int ctl_send(struct ctl *c, json_t *msg, char *err, size_t errlen)
{
	char *s;
	size_t n;
	int rc;

	if (!msg) {
		err_set(err, errlen, "ctl_send: no message");
		return -1;
	}
	if (!c) {
		json_decref(msg);
		err_set(err, errlen, "ctl_send: no control connection");
		return -1;
	}
	json_object_set_new(msg, "v", json_integer(CTL_VERSION));
	/* A process tags everything it sends, so the driver can tell who sent
	 * an ERROR that comes before HELLO. */
	if (c->is_proc) {
		if (!json_object_get(msg, "role"))
			json_object_set_new(msg, "role", json_string(c->role));
		if (!json_object_get(msg, "rank"))
			json_object_set_new(msg, "rank", json_integer(c->rank));
	}
	s = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (!s) {
		err_set(err, errlen, "ctl_send: cannot serialize message");
		return -1;
	}
	n = strlen(s);
	pthread_mutex_lock(&c->wmu);
	rc = write_all(c->fd, s, n);
	if (rc == 0)
		rc = write_all(c->fd, "\n", 1);
	pthread_mutex_unlock(&c->wmu);
	if (rc < 0)
		err_set(err, errlen, "writing control connection %s: %s", c->peer, strerror(errno));
	free(s);
	return rc;
}

/* When this process started (its first constructor), for HELLO's up_ns:
 * the driver takes it from its own launch-to-HELLO time to tell the
 * launcher's share (ssh login, srun, exec) from the process's own. */
static uint64_t proc_t0_ns;

__attribute__((constructor)) static void proc_t0_init(void)
{
	proc_t0_ns = clock_ns();
}

uint64_t ctl_uptime_ns(void)
{
	return clock_ns() - proc_t0_ns;
}

int ctl_hello(struct ctl *c, const json_t *info, char *err, size_t errlen)
{
	char host[256];
	json_t *m;

	if (gethostname(host, sizeof host) != 0)
		snprintf(host, sizeof host, "unknown");
	host[sizeof host - 1] = '\0';
	m = json_pack("{s:s, s:s, s:I, s:s, s:I, s:I}", "type", "HELLO", "role", c->role,
		      "rank", (json_int_t)c->rank, "host", host, "pid", (json_int_t)getpid(),
		      "up_ns", (json_int_t)ctl_uptime_ns());
	if (!m) {
		err_set(err, errlen, "out of memory");
		return -1;
	}
	if (info && json_is_object(info)) {
		/* The caller's keys win except the protocol's own. */
		json_t *copy = json_deep_copy(info);
		json_object_del(copy, "type");
		json_object_del(copy, "v");
		json_object_update(m, copy);
		json_decref(copy);
	}
	return ctl_send(c, m, err, errlen);
}

int ctl_done(struct ctl *c, const json_t *result, char *err, size_t errlen)
{
	json_t *m = json_object();

	json_object_set_new(m, "type", json_string("DONE"));
	json_object_set_new(m, "role", json_string(c->role));
	json_object_set_new(m, "rank", json_integer(c->rank));
	json_object_set_new(m, "result", result ? json_deep_copy(result) : json_null());
	return ctl_send(c, m, err, errlen);
}

/* Pops the oldest message; caller holds mu. */
static json_t *pop_locked(struct ctl *c)
{
	json_t *m;

	if (json_array_size(c->queue) == 0)
		return NULL;
	m = json_incref(json_array_get(c->queue, 0));
	json_array_remove(c->queue, 0);
	return m;
}

json_t *ctl_recv(struct ctl *c, int timeout_ms, char *err, size_t errlen)
{
	uint64_t deadline = timeout_ms >= 0 ? mono_ms() + (uint64_t)timeout_ms : UINT64_MAX;
	json_t *m;

	if (!c) {
		err_set(err, errlen, "ctl_recv: no control connection");
		return NULL;
	}
	if (c->watching) {
		pthread_mutex_lock(&c->mu);
		for (;;) {
			if ((m = pop_locked(c)) != NULL)
				break;
			if (c->qerr[0]) {
				err_set(err, errlen, "%s", c->qerr);
				c->qerr[0] = '\0';
				break;
			}
			if (c->eof) {
				err_set(err, errlen, "control connection to the driver (%s) closed", c->peer);
				break;
			}
			if (timeout_ms < 0) {
				pthread_cond_wait(&c->cv, &c->mu);
			} else {
				uint64_t now = mono_ms();
				if (now >= deadline) {
					err_set(err, errlen, "no control message from the driver within %d ms",
						timeout_ms);
					break;
				}
				struct timespec ts;
				clock_gettime(CLOCK_MONOTONIC, &ts);
				uint64_t ns = (uint64_t)ts.tv_nsec + (deadline - now) * 1000000u;
				ts.tv_sec += (time_t)(ns / 1000000000u);
				ts.tv_nsec = (long)(ns % 1000000000u);
				pthread_cond_timedwait(&c->cv, &c->mu, &ts);
			}
		}
		pthread_mutex_unlock(&c->mu);
		return m;
	}

	/* No watcher: read the socket here. */
	for (;;) {
		pthread_mutex_lock(&c->mu);
		m = pop_locked(c);
		pthread_mutex_unlock(&c->mu);
		if (m)
			return m;
		if (c->eof) {
			err_set(err, errlen, "control connection %s closed", c->peer);
			return NULL;
		}
		int wait = -1;
		if (timeout_ms >= 0) {
			uint64_t now = mono_ms();
			if (now >= deadline) {
				err_set(err, errlen, "no control message from %s within %d ms", c->peer,
					timeout_ms);
				return NULL;
			}
			wait = (int)(deadline - now);
		}
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int pr = poll(&p, 1, wait);
		if (pr < 0 && errno != EINTR) {
			err_set(err, errlen, "poll on control connection %s: %s", c->peer, strerror(errno));
			return NULL;
		}
		if (pr <= 0)
			continue;
		int r = read_once(c, err, errlen);
		if (r < 0)
			return NULL;
		if (r == 0)
			c->eof = 1;
		if (split_lines(c, err, errlen) < 0)
			return NULL;
	}
}

static void *watch_main(void *arg)
{
	struct ctl *c = arg;
	char err[256];

	for (;;) {
		err[0] = '\0';
		int r = read_once(c, err, sizeof err);
		if (r > 0) {
			if (split_lines(c, err, sizeof err) < 0) {
				pthread_mutex_lock(&c->mu);
				if (!c->qerr[0])
					snprintf(c->qerr, sizeof c->qerr, "%s", err);
				pthread_cond_broadcast(&c->cv);
				pthread_mutex_unlock(&c->mu);
			}
			continue;
		}
		break;  /* EOF or error: the driver is gone */
	}

	pthread_mutex_lock(&c->mu);
	c->eof = 1;
	pthread_cond_broadcast(&c->cv);
	if (c->closing) {
		pthread_mutex_unlock(&c->mu);
		return NULL;
	}
	if (c->lost_flag)
		*c->lost_flag = 1;

	/* Give the owner CTL_LOST_GRACE_MS to notice and exit cleanly. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += CTL_LOST_GRACE_MS / 1000;
	ts.tv_nsec += (CTL_LOST_GRACE_MS % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	while (!c->closing) {
		if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT)
			break;
	}
	if (c->closing) {
		pthread_mutex_unlock(&c->mu);
		return NULL;
	}
	pthread_mutex_unlock(&c->mu);
	if (c->on_lost)
		c->on_lost(c->lost_arg);
	_exit(CTL_EXIT_LOST);
}

int ctl_start_watch(struct ctl *c, volatile int *lost_flag, void (*on_lost)(void *), void *arg)
{
	if (!c || c->watching)
		return -1;
	c->lost_flag = lost_flag;
	c->on_lost = on_lost;
	c->lost_arg = arg;
	c->watching = 1;
	if (pthread_create(&c->thr, NULL, watch_main, c) != 0) {
		c->watching = 0;
		return -1;
	}
	return 0;
}

void ctl_close(struct ctl *c)
{
	if (!c)
		return;
	if (c->watching) {
		pthread_mutex_lock(&c->mu);
		c->closing = 1;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		/* Wakes the watcher's read() with EOF. */
		shutdown(c->fd, SHUT_RDWR);
		pthread_join(c->thr, NULL);
	}
	close(c->fd);
	json_decref(c->queue);
	pthread_mutex_destroy(&c->mu);
	pthread_mutex_destroy(&c->wmu);
	pthread_cond_destroy(&c->cv);
	free(c->buf);
	free(c);
}

/* ---- driver side ---- */

int ctl_listen(const char *host, unsigned *port, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *ai = NULL, *p;
	char portstr[16];
	int g, fd = -1, one = 1;

	snprintf(portstr, sizeof portstr, "%u", port ? *port : 0u);
	g = getaddrinfo(host, portstr, &hints, &ai);
	if (g != 0) {
		err_set(err, errlen, "control listen address \"%s\": %s", host ? host : "*",
			gai_strerror(g));
		return -1;
	}
	for (p = ai; p; p = p->ai_next) {
		fd = socket(p->ai_family, p->ai_socktype | SOCK_CLOEXEC, p->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, p->ai_addr, p->ai_addrlen) == 0 && listen(fd, 128) == 0)
			break;
		err_set(err, errlen, "cannot listen on %s port %s: %s", host ? host : "*", portstr,
			strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return -1;
	if (port) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		char ps[8];
		if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 &&
		    getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, ps, sizeof ps, NI_NUMERICSERV) == 0)
			*port = (unsigned)atoi(ps);
	}
	return fd;
}

struct ctl *ctl_accept(int lfd, char *err, size_t errlen)
{
	int fd, one = 1;

	do
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		err_set(err, errlen, "accept on the control socket: %s", strerror(errno));
		return NULL;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return ctl_from_fd(fd, err, errlen);
}

struct ctl *ctl_from_fd(int fd, char *err, size_t errlen)
{
	struct ctl *c = ctl_alloc(fd);

	if (!c) {
		close(fd);
		err_set(err, errlen, "out of memory");
		return NULL;
	}
	fill_peer(c);
	return c;
}

int ctl_fd(const struct ctl *c)
{
	return c ? c->fd : -1;
}

const char *ctl_peer(const struct ctl *c)
{
	return c ? c->peer : "?";
}

int ctl_pump(struct ctl *c, char *err, size_t errlen)
{
	int r = read_once(c, err, errlen);

	if (r < 0)
		return -1;
	if (split_lines(c, err, errlen) < 0)
		return -1;
	if (r == 0) {
		c->eof = 1;
		return 0;
	}
	return 1;
}

json_t *ctl_pop(struct ctl *c)
{
	json_t *m;

	pthread_mutex_lock(&c->mu);
	m = pop_locked(c);
	pthread_mutex_unlock(&c->mu);
	return m;
}
