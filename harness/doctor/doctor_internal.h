/*
 * doctor_internal.h - what doctor.c (the probe of each host and the
 * table) and doctor_checks.c (the checks on what a host reported) share.
 * Nothing else includes it.
 */
#ifndef OQB_DOCTOR_INTERNAL_H
#define OQB_DOCTOR_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "needs.h"
#include "runconf.h"

struct dr_rdma;

enum dr_result { DR_PASS, DR_WARN, DR_FAIL };

/* One line of the table. */
struct dr_row {
	char host[128];
	const char *check;
	enum dr_result result;
	char found[600];
	char fix[600];
};

struct dr_table {
	struct dr_row *rows;
	size_t n, cap;
};

/* Adds a row: found from fmt, fix as given (NULL: none). */
void dr_add(struct dr_table *t, const char *host, const char *check, enum dr_result r, const char *fix,
		      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* What one host reported through its launcher. */
struct dr_host {
	struct host_need need;
	const char *bin_dir;
	int reached;               /* the remote shell ran */
	double took_s;             /* until it answered, or the bound */
	int timed_out;
	char bin_state[2][32];     /* oqb-server, oqb-client: "ok", "missing", "notexec" */
	char bin_id[2][64];        /* what --build-id printed */
	json_t *facts;             /* oqb-server --host-facts, or NULL */
	struct dr_rdma *rdma;      /* its interfaces and RDMA ports (verbs), or NULL */
	char ctl_said[300];        /* the probe's connect to the control address: "ok", "fail RC MSG", "notool" */
	int ctl_heard;             /* the driver's listener got this host's token */
	char tail[600];            /* the last lines of its output, for a failure */
	char start_err[520];       /* the launcher could not start the probe */
	char how[1024];            /* the launcher's command line for `true` there */
};

/* The build every binary must be: what oqb-server on the server's host
 * printed (the driver's own build is never the reference; it links no
 * transport).  id "" when no server answered. */
struct dr_ref {
	char id[64];
	const char *host, *bin_dir;
};
/* What the probe read of a host's interfaces and RDMA ports (its lines
 * "ipaddr", "route", "net", "port", "gid", "dev"), doctor_rdma.c. */
/* Takes one report line (without "oqb-doctor: "): 1 when it was one of
 * those, 0 when not; *r is allocated on the first. */
int dr_rdma_line(struct dr_rdma **r, const char *line);
void dr_rdma_free(struct dr_rdma *r);
/* The RDMA rows of a host that answered (verbs configs). */
void dr_check_rdma(struct dr_table *t, const struct runconf *rc, const struct dr_host *h);
/* verbs.addr as a numeric address (a name resolved here, as the server
 * resolves it), into buf: 0, or -1. */
int dr_numeric_addr(const char *a, char *buf, size_t len);
/* The numa row: the CPUs the placement uses against dev's node (-1: none). */
void dr_check_numa(struct dr_table *t, const struct runconf *rc, const struct dr_host *h, const char *dev,
		   int node);

/* The checks of one host that answered: binaries, build, limits, RDMA,
 * hugepages, CPU and clock settings. */
void dr_check_host(struct dr_table *t, const struct runconf *rc, const struct dr_host *h, const struct dr_ref *ref);

#endif
