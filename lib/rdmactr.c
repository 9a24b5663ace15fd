/*
 * rdmactr.c - see rdmactr.h.  Shown by tests/unit/test_rdmactr.c (a fake
 * sysfs tree: rxe's and mlx5's names, unreadable files, a missing port, a
 * counter that went down) and, on a real device, by the RNR runs of
 * tests/verbs/guest-rnr.sh.
 */
#include "rdmactr.h"
#include "clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const rdmactr_derived_names[RDMACTR_NDERIVED] = {
	"rnr_naks_sent", "rnr_naks_received", "retransmissions", "duplicates", "out_of_sequence",
};

/* The sources of each derived name, rxe's first, then mlx5's (rdmactr.h). */
static const char *const derived_src[RDMACTR_NDERIVED][5] = {
	{ "send_rnr_err", "out_of_buffer", NULL },
	{ "rcvd_rnr_err", "rnr_nak_retry_err", NULL },
	{ "completer_retry_err", "local_ack_timeout_err", "packet_seq_err", "implied_nak_seq_err", NULL },
	{ "duplicate_request", NULL },
	{ "out_of_seq_request", "out_of_sequence", NULL },
};

/* A file holding one unsigned decimal number (a newline may follow): 0
 * with *v, or -1. */
static int read_u64(const char *path, uint64_t *v)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *end;
	errno = 0;
	unsigned long long x = strtoull(buf, &end, 10);
	if (errno || end == buf || buf[0] == '-' || (*end && *end != '\n'))
		return -1;
	*v = x;
	return 0;
}

/* Adds the counters of one folder under prefix; -1 with errno when the
 * folder cannot be opened. */
static int read_dir(struct rdmactr_snap *s, const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	struct dirent *e;
	char path[1024];
	while ((e = readdir(d))) {
		uint64_t v;
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lifespan"))
			continue;
		size_t lp = strlen(prefix), ln = strlen(e->d_name);
		if (lp + ln >= RDMACTR_NAMELEN)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (read_u64(path, &v) < 0) {
			s->unreadable++;
			continue;
		}
		if (s->n == RDMACTR_MAX) {
			s->unreadable++;
			continue;
		}
		memcpy(s->name[s->n], prefix, lp);
		memcpy(s->name[s->n] + lp, e->d_name, ln + 1);
		s->val[s->n++] = v;
	}
	closedir(d);
	return 0;
}

int rdmactr_read(const char *root, const char *dev, unsigned port, struct rdmactr_snap *s)
{
	char hw[320], pc[320];
	int ehw = 0, epc = 0;

	if (!root)
		root = RDMACTR_ROOT;
	memset(s->dev, 0, sizeof s->dev);
	snprintf(s->dev, sizeof s->dev, "%s", dev ? dev : "");
	s->port = port;
	s->n = s->unreadable = 0;
	s->why[0] = '\0';
	s->t_ns = clock_ns();
	if (!dev || !*dev || strchr(dev, '/') || !port) {
		snprintf(s->why, sizeof s->why, "no RDMA device and port to read counters of");
		return -1;
	}
	snprintf(hw, sizeof hw, "%s/%s/ports/%u/hw_counters", root, dev, port);
	snprintf(pc, sizeof pc, "%s/%s/ports/%u/counters", root, dev, port);
	if (read_dir(s, hw, "") < 0)
		ehw = errno;
	if (read_dir(s, pc, "counters/") < 0)
		epc = errno;
	s->t_ns = clock_ns();
	if (s->n)
		return 0;
	if (ehw)
		snprintf(s->why, sizeof s->why, "%s: %s%s", hw, strerror(ehw),
			 ehw == ENOENT ? " (the driver exports no hardware counters, or sysfs is not mounted)" : "");
	else
		snprintf(s->why, sizeof s->why, "%s: no readable counter (%u file(s) could not be read)%s%s", hw,
			 s->unreadable, epc ? "; " : "", epc ? strerror(epc) : "");
	return -1;
}

json_t *rdmactr_derive(const json_t *counters)
{
	json_t *d = json_object();
	for (unsigned k = 0; k < RDMACTR_NDERIVED; k++) {
		json_int_t sum = 0;
		int found = 0;
		for (unsigned i = 0; derived_src[k][i]; i++) {
			const json_t *v = json_object_get(counters, derived_src[k][i]);
			if (json_is_integer(v)) {
				sum += json_integer_value(v);
				found = 1;
			}
		}
		json_object_set_new(d, rdmactr_derived_names[k], found ? json_integer(sum) : json_null());
	}
	return d;
}

json_t *rdmactr_delta_json(const struct rdmactr_snap *a, const struct rdmactr_snap *b, const char *host)
{
	char why[600];

	if (a->why[0] || b->why[0]) {
		snprintf(why, sizeof why, "unavailable: %s", a->why[0] ? a->why : b->why);
		return json_string(why);
	}
	json_t *c = json_object(), *reset = json_array();
	for (unsigned i = 0; i < b->n; i++) {
		unsigned j;
		for (j = 0; j < a->n && strcmp(a->name[j], b->name[i]); j++)
			;
		if (j == a->n)
			continue;   /* appeared in between: no start value */
		if (b->val[i] < a->val[j]) {
			json_array_append_new(reset, json_string(b->name[i]));
			continue;
		}
		json_object_set_new(c, b->name[i], json_integer((json_int_t)(b->val[i] - a->val[j])));
	}
	json_t *j = json_pack("{s:s,s:i,s:s?,s:I,s:o,s:o}", "device", b->dev, "port", (int)b->port, "host", host,
			      "window_ns", (json_int_t)(b->t_ns - a->t_ns), "derived", rdmactr_derive(c),
			      "counters", c);
	if (b->unreadable)
		json_object_set_new(j, "unreadable", json_integer(b->unreadable));
	if (json_array_size(reset))
		json_object_set_new(j, "reset", reset);
	else
		json_decref(reset);
	return j;
}
