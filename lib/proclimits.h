/*
 * proclimits.h - what one benchmark process needs from its host's per-process
 * limits, and the check each process makes of its own at startup.
 *
 * Two limits meet a run at scale (issue 37, docs/doctor.md):
 *   open files (RLIMIT_NOFILE): every fd the process holds: its standard
 *       streams, the control socket, and on verbs the device, the rdma_cm
 *       event channels and what the providers open per context;
 *   locked memory (RLIMIT_MEMLOCK): what ibv_reg_mr pins, counted per
 *       memory region in whole pages (the kernel's pinned_vm, VmPin in
 *       /proc/PID/status).  Only the verbs and erpc transports register
 *       memory; shm needs fds only.  A process with CAP_IPC_LOCK (root) is
 *       not held to the limit by the kernel, so it is not held here either.
 *
 * The formulas are here and nowhere else: the server and the client call
 * lim_check_self with their own parameters before they open anything, the
 * driver's `oqb run --dry-run` prints them per host, and `oqb doctor`
 * compares them with the limits a process started by each host's launcher
 * sees.  Each constant in limits.c says where it was measured.
 */
#ifndef OQB_PROCLIMITS_H
#define OQB_PROCLIMITS_H

#include <stddef.h>
#include <jansson.h>

/* What one process needs. */
struct lim_need {
	long long fds;            /* open files at the peak */
	long long locked_bytes;   /* registered (pinned) bytes, page-rounded; 0 on shm */
	long long qps;            /* RC QPs it holds (0 on shm) */
};

/* A server process: its own options plus the connections the run will
 * make to it (0 when unknown: started by hand). */
struct lim_server_shape {
	const char *transport;    /* "shm", "verbs", "erpc" */
	unsigned workers;
	unsigned long long conns; /* QPs the clients will open to it */
	unsigned ring_slots, slot_size;
	int slot_ring;            /* recv_mode slot_ring or mp: one region per ring */
	int durable;
};

/* A client process: its options, and the server's workers and slot size
 * as the driver knows them (the client learns them only on connecting). */
struct lim_client_shape {
	const char *transport;
	unsigned threads;
	unsigned workers;         /* the server's; 1 when unknown */
	unsigned slot_size;       /* the server's; its default when unknown */
	unsigned max_outstanding; /* --max-outstanding */
	int delegation;
};

void lim_server_need(const struct lim_server_shape *s, struct lim_need *n);
/* {"fds", "locked_bytes", "qps"}: what the process expected, beside its
 * usage_json() in its result, so a test can hold the formulas to what
 * was measured (tests/verbs/guest-scale.sh). */
json_t *lim_need_json(const struct lim_need *n);
void lim_client_need(const struct lim_client_shape *c, struct lim_need *n);

/* A process's limits as it sees them; -1 = unlimited. */
struct lim_have {
	long long nofile_soft, nofile_hard;
	long long memlock_soft, memlock_hard;
	int cap_ipc_lock;         /* the kernel does not apply RLIMIT_MEMLOCK */
};

/* This process's limits. */
void lim_read_self(struct lim_have *h);

enum lim_verdict { LIM_OK = 0, LIM_RAISE = 1, LIM_SHORT = 2 };

/*
 * Judges one limit (fds: which = 0, locked memory: which = 1) for need:
 * LIM_OK when the soft limit covers it, LIM_RAISE when only the hard limit
 * does (a process can raise its soft limit itself), LIM_SHORT when neither.
 * msg gets what was found; fix (LIM_SHORT only, else "") the command that
 * helps, naming the number needed.  who names the process ("this server",
 * "client process 3 on HOST").
 */
enum lim_verdict lim_judge(int which, const struct lim_need *n, const struct lim_have *h, const char *who,
			   int delegation, char *msg, size_t msglen, char *fix, size_t fixlen);

/*
 * A process's own check, before it opens anything: raises its soft limits
 * up to the hard ones where that covers need (noted in note, "" when
 * nothing was raised), else returns -1 with err naming the limit, the
 * number needed and the fix.
 */
int lim_check_self(const struct lim_need *n, const char *who, int delegation, char *note, size_t notelen,
		   char *err, size_t errlen);

/* "12.0 MiB", "unlimited" for -1. */
void lim_fmt_bytes(char *buf, size_t len, long long b);

#endif
