/*
 * fault.h - test-only faults, to prove that `oqb check` catches real bugs
 * (tests/integration/check-faults.sh) and to slow a server on purpose.
 *
 * OQB_FAULT is read once, at the first fault_init() (server start, client
 * connect): a comma-separated list of
 *
 *   exec-out-of-order  the worker runs each batch of ready slots in reverse
 *                      (breaks Rule 2: execution in queue order)
 *   ack-before-alloc   shm client: the publish (the oq commit) of a nilext
 *                      request is reported at once and its ticket is taken
 *                      ~50 us later, as if a NIC ACKed a SEND before the SRQ
 *                      slot was allocated; other requests go at once and
 *                      can take earlier slots (breaks Rule 1)
 *   get-bypass         a get that arrives behind unexecuted slots is served
 *                      at once, bypassing the earlier puts in the queue
 *   drop-after-ack     every 8th nilext request a worker executes is dropped
 *                      (its commit, by delivery or ACK, has already happened)
 *   incr-nonatomic     incr reads, answers, and writes its sum back only
 *                      after the worker's next request (a lost update)
 *   server-delay-ns:N  busy-wait N ns extra in every request the server
 *                      executes (A/B regression tests; not a correctness bug;
 *                      from FAULT_DELAY_CLOCK_NS on, never less than N)
 *   server-delay-frac:F  with server-delay-ns: delay only a fraction F of the
 *                      requests (a decimal, 0 < F <= 1, at most 9 decimals;
 *                      default 1).  Which ones is deterministic and even: of
 *                      the first k requests a worker executes, exactly
 *                      floor(k F + 1/2) are delayed (fault_delay_pick), so
 *                      F = 0.02 delays the 25th, 75th, 125th, ...
 *   server-delay-mode:M  with server-delay-ns: busy (the default: the
 *                      thread spins on its CPU) or sleep (it blocks in
 *                      clock_nanosleep until N ns have passed, so it gives
 *                      the CPU away and wakes late by the timer slack, 50 us
 *                      by default, and the scheduler's wake-up)
 *   client-gen-delay-ns:N  busy-wait N ns extra in every request the client
 *                      generates (shows that generation, done before a
 *                      request is due, is not in its latency)
 *   skip-recovery      durable shm and verbs: do not replay rings (shm_recover.c, vb_durable.c)
 *   claim-stall-ms:N   shm client (and verbs seqwrite: between its FAA and
 *                      its WRITE, vb_seqwrite_cli.c; every 64th write
 *                      there): every 64th nilext write sleeps N ms between
 *                      claiming its slot and writing into it, as a thread
 *                      preempted on a loaded host does (not a protocol bug:
 *                      a correct server loses nothing); it counts as fired
 *                      when the server restarted during the sleep, the case
 *                      of issue 39's crash-test hang (shm_cli.c)
 *   commit-on-error    verbs client: a send completion with an error status
 *                      (retries exhausted, flushed) commits the requests it
 *                      stands for, as if the server had ACKed them
 *                      (vb_cli_owner.c); breaks the hardware-ACK rule
 *
 * No fault is ever on unless named there; an unknown name is an error; the
 * process prints a loud warning naming every fault that is on.
 *
 * A fault that is on but never changed what happened proves nothing, so
 * each hook calls fault_fired() where the fault actually bent the protocol,
 * and a process with faults on prints, as it exits, one line on stderr:
 *   OQB_FAULT fired: get-bypass=123
 * (every correctness fault that is on, 0 included).  check-faults.sh
 * requires a count above zero before it requires `oqb check` to catch it.
 * The server's delay is on that line too, as server-delay=K (the requests
 * delayed), but only in a process that ran a server to its stop: each
 * worker counts its own delays (fault_worker.delayed, also the server's
 * exit JSON "fault_delayed") and server_stop adds them up
 * (fault_fired_add), since a shared atomic per request would lengthen a
 * delay of a few ns that the A/B gate calibrates.
 */
#ifndef OQB_FAULT_H
#define OQB_FAULT_H

#include <stddef.h>
#include <stdint.h>

enum {
	FAULT_EXEC_OOO        = 1u << 0,
	FAULT_ACK_BEFORE_ALLOC = 1u << 1,
	FAULT_GET_BYPASS      = 1u << 2,
	FAULT_DROP_AFTER_ACK  = 1u << 3,
	FAULT_INCR_NONATOMIC  = 1u << 4,
	FAULT_SERVER_DELAY    = 1u << 5,
	FAULT_SKIP_RECOVERY   = 1u << 6,
	FAULT_CLIENT_GEN_DELAY = 1u << 7,
	FAULT_COMMIT_ON_ERROR = 1u << 8,
	FAULT_CLAIM_STALL     = 1u << 9,
};

/* The faults that run slots out of their turn: the faults' pass marks
 * every arrival before it runs any only when one of these is on
 * (fault_hook); the others act inside the run of one slot. */
#define FAULTS_REORDER ((unsigned)(FAULT_EXEC_OOO | FAULT_GET_BYPASS))
#define FAULTS_ANY     (~0u)

extern unsigned fault_mask;          /* set once by fault_init */
extern uint64_t fault_delay_ns;      /* server-delay-ns:N */
extern uint32_t fault_delay_frac_ppb; /* server-delay-frac:F, in FAULT_FRAC_ONE */
extern int fault_delay_sleep;        /* server-delay-mode:sleep */
extern uint64_t fault_gen_delay_ns;  /* client-gen-delay-ns:N */
extern uint64_t fault_claim_stall_ms; /* claim-stall-ms:N */

/* F = 1 for server-delay-frac: fractions are parts per billion. */
#define FAULT_FRAC_ONE 1000000000u

/* A fault list's numbers: server-delay-ns (with its fraction, in
 * FAULT_FRAC_ONE, and mode), client-gen-delay-ns and claim-stall-ms. */
struct fault_params {
	uint64_t delay_ns, gen_delay_ns, claim_stall_ms;
	uint32_t delay_frac_ppb;   /* FAULT_FRAC_ONE unless server-delay-frac */
	int delay_sleep;           /* 1: server-delay-mode:sleep */
};

/* Parses a fault list (as in OQB_FAULT) into *mask and *fp; 0, or -1 with
 * err naming the bad item and the valid names. */
int fault_parse(const char *s, unsigned *mask, struct fault_params *fp, char *err, size_t errlen);

/* Reads OQB_FAULT once (later calls return the first result); `who`
 * names the process in the warning.  0, or -1 with err. */
int fault_init(const char *who, char *err, size_t errlen);

static inline int fault_on(unsigned f)
{
	return __builtin_expect((fault_mask & f) != 0, 0);
}

/* Counts one firing of fault f (one FAULT_* bit); thread-safe. */
void fault_fired(unsigned f);

/* Counts n firings of fault f at once (the server's delays, counted by
 * each worker: see above); the exit line names server-delay only once
 * this was called for it. */
void fault_fired_add(unsigned f, uint64_t n);

/* How often fault f fired so far in this process. */
uint64_t fault_fired_count(unsigned f);

/* ---- the worker's faults (bench/server.c) ----
 * The worker loop has one branch for them: with any fault on, each pass
 * is fault_hook's, made of the worker's own steps that it lends through a
 * struct fault_host.  With no reordering fault that is the worker's own
 * pass with fault_exec at the backend call (server-delay-ns,
 * drop-after-ack, incr-nonatomic act there), so a delay of a few ns costs
 * what it says: two calls more per pass (fault_hook, then the worker's
 * pass), and per request the one call to fault_exec (a pass through the
 * reordering faults' steps read +3 to +6 % for a 22 ns delay, 2 % of
 * rawrpc's p50, in the A/B gate).  With exec-out-of-order or get-bypass
 * on, every arrival is marked first, then those faults run slots out of
 * their turn, then the rest in order. */

struct tp_arrival;
struct exec;
struct backend;
struct backend_ops;
struct backend_req;
struct backend_out;

/* The worker's steps (server.c), each on the worker w. */
struct fault_host {
	/* the worker's pass over n arrivals, fault_exec at its backend
	 * call; how many slots it ran or released */
	int (*pass)(void *w, struct tp_arrival *arr, int n);
	/* marks an arrival in the executor: 0, or -1 (logged) */
	int (*arrive)(void *w, const struct tp_arrival *a);
	/* runs one slot's request (checks, ACK, backend, reply) */
	void (*run)(void *w, uint64_t slot);
	/* the slot whose turn it is: run (or passed over if void), released */
	void (*finish)(void *w, uint64_t slot);
	void (*release)(void *w, uint64_t slot);
	/* the slot's request and the bytes it may span */
	const void *(*req)(void *w, uint64_t slot, size_t *avail);
};

#define FAULT_HOLD_MAX 8
struct fault_worker {
	const struct fault_host *host;
	void *w;                           /* the worker, for host's calls */
	struct exec *x;                    /* its executor (exec.h) */
	const uint8_t *isvoid;             /* per ring position: a void arrival */
	uint8_t *early;                    /* get-bypass: executed before its turn */
	uint64_t mask;                     /* ring slots - 1 */
	uint64_t n;                        /* nilext requests seen (drop-after-ack) */
	uint64_t held[FAULT_HOLD_MAX];     /* exec-out-of-order: slots held back */
	unsigned nheld;
	uint64_t held_since;
	int incr_pend;                     /* incr-nonatomic: a write-back is due */
	uint16_t klen;
	uint8_t vlen;
	uint8_t key[256];
	char val[24];
	int64_t delay_acc;                 /* server-delay-frac: fault_delay_pick */
	uint64_t delayed;                  /* requests server-delay delayed */
	uint8_t just_delayed;              /* the last fault_exec delayed its request */
};

/* Sets up worker w's fault state (x and isvoid are the worker's, of
 * ring_slots positions); 0, or -1 out of memory. */
int fault_worker_init(struct fault_worker *f, const struct fault_host *host, void *w,
		      struct exec *x, const uint8_t *isvoid, uint64_t ring_slots);
void fault_worker_free(struct fault_worker *f);

/* One pass of a worker with a fault on, over the n arrivals its poll
 * returned; how many slots it ran or released. */
int fault_hook(struct fault_worker *f, struct tp_arrival *arr, int n);

/* fault_exec's answers: run the backend as usual; the request was dropped
 * (committed already, never executed, not counted); the fault executed it
 * (counted as executed). */
enum { FAULT_EXEC_NONE, FAULT_EXEC_DROPPED, FAULT_EXEC_DONE };

/* At the backend call of one request (br, with br->async for a request
 * whose commit was a delivery or an ACK): server-delay-ns,
 * drop-after-ack and incr-nonatomic.  The delay is counted here, per
 * worker, as it happens (f->delayed: the requests a later reader must
 * not take for the system's own latency), and summed into the fault's
 * exit line by server_stop. */
int fault_exec(struct fault_worker *f, const struct backend_ops *ops, struct backend *be,
	       const struct backend_req *br, struct backend_out *out);

/* server-delay-frac: 1 if the worker's next request is to be delayed.
 * *acc (0 at first) gains F each request and pays 1 for each delay,
 * delaying as soon as it reaches 1/2, so it stays in [-1/2, 1/2) and
 * after k requests the delays number k F - acc, i.e. exactly
 * floor(k F + 1/2); with F = 1 every request. */
static inline int fault_delay_pick(int64_t *acc, uint32_t frac_ppb)
{
	*acc += frac_ppb;
	if (*acc < (int64_t)(FAULT_FRAC_ONE / 2))
		return 0;
	*acc -= FAULT_FRAC_ONE;
	return 1;
}

/* The delay faults: spins about ns nanoseconds (fault_delay_ns for
 * server-delay-ns, fault_gen_delay_ns for client-gen-delay-ns); from
 * FAULT_DELAY_CLOCK_NS on, at least ns (fault.c says why). */
#define FAULT_DELAY_CLOCK_NS 20000ull
void fault_delay(uint64_t ns);

/* server-delay-mode:sleep: blocks the thread (clock_nanosleep on the
 * monotonic clock, to an absolute deadline, so a signal does not cut it
 * short) until at least ns nanoseconds have passed. */
void fault_sleep(uint64_t ns);

/* ---- ack-before-alloc (shm client) ----
 * The fault keeps the requests and their timing; the transport sends them.
 * This module calls no transport: the shm client hands it `send`, which
 * takes a request's place in the queue the normal way (shm_cli.c). */

struct fault_deferq;

/* Sends one deferred request to worker w; 0, or -1 if the server is gone. */
typedef int (*fault_send_fn)(void *arg, unsigned w, const void *req, uint32_t len);

/* For a nilext request: keeps a copy to send later to worker w, and
 * returns 0 (the caller reports it delivered now).  -1 for any other
 * request, or if the queue is full: the caller posts it normally. */
int fault_defer(struct fault_deferq **q, unsigned w, const void *req, uint32_t len);

/* Sends, in order, the deferred requests older than the delay (all if
 * `all`), each with send(arg, ...).  -1 if a send failed. */
int fault_defer_flush(struct fault_deferq *q, int all, fault_send_fn send, void *arg);

void fault_defer_free(struct fault_deferq *q);

#endif
