/*
 * shm_internal.h - the shared-memory transport, oqbench's embedded default:
 * its protocol, the server's structures and the calls between the files
 * of this folder (README.md maps them).  Private to bench/transports/shm.
 *
 * It maps the OQ rules onto memory shared by processes on one machine.
 *
 * Files, in a private run directory (mode 0700, files 0600; lib/rundir.h:
 * BASE/oqb-PID-XXXXXX, its owner.lock held for the server's life, so a
 * server killed with SIGKILL leaves it to the next server to remove):
 *   server.map   who the server is: version, system, workers, ring geometry,
 *                server pid, next client id
 *   ring-W       worker W's receive ring: a ticket counter (`tail`), one
 *                64-bit state word per slot, and the slot data (64 B aligned)
 *   mbox-C       client C's mailbox: one single-producer ring per worker,
 *                for software responses and ACKs
 *
 * Rule 1 (allocation in arrival order, ACK after allocation): a client
 * takes ticket t = fetch_add(tail, 1) -- the only step that orders clients,
 * and the server CPU takes no part in it -- writes its request into slot
 * t % N and publishes it.  For oq, the publish is the commit: the analogue
 * of the RNIC's hardware ACK, given only after the slot was allocated.
 *
 * Slot state, for ticket t (the slot's current "lap"):
 *   4t+0  FREE for ticket t      (claimable by the holder of ticket t)
 *   4t+1  WRITING by ticket t    (client CAS 4t -> 4t+1 before it writes)
 *   4t+2  PUBLISHED              (client CAS 4t+1 -> 4t+2, release)
 *   4t+3  QUARANTINED            (voided while being written; never reused)
 * After executing ticket t the worker stores 4(t+N): free for the next lap.
 * A client whose ticket's slot still holds an older lap waits: the ring is
 * full (the RNR analogue), and the wait is counted.
 *
 * A client that dies or stalls between its claim and its publish must not
 * block the worker.  After void_timeout the worker voids the ticket with a
 * CAS: FREE(t) -> FREE(t+N) (the client never started writing, so the slot
 * is reused at once), or, after 4 x void_timeout, WRITING(t) -> QUARANTINED
 * (the client may still write into it, so the slot is retired until the
 * server restarts; tickets that land on it later are skipped).  Either way
 * the client's publish CAS fails, so it learns the ticket is void and
 * retries with a new ticket.  A voided request was never committed: no
 * DELIVERED event was given for it.  A live client whose publish fails on
 * its own QUARANTINED(t) has stopped writing, and says so by setting
 * ST_GONE on it (the top bit, far above any ticket); when the worker's
 * scan next lands on that slot, for a later ticket t', it makes the slot
 * FREE(t') again.  Only the slot of a client that died mid-write stays
 * retired.  Without that, slow writers (a durable client's persist can
 * take longer than 4 x void_timeout on a loaded disk) retired slot after
 * slot until every ticket landed on a retired one and the ring stayed
 * full for good (test_shm: quarantined_slot_returns_when_its_writer_gives_up).
 *
 * Durable mode (--durable, paper §5.3): the ring files live in --pmem-path
 * and are mapped with libpmem; flushes use pmem_persist where the mapping is
 * real persistent memory and pmem_msync elsewhere (reported as "persist").
 * A client persists its request bytes, publishes, and persists the state
 * word before the publish counts as its commit: the analogue of RDMA
 * READ-after-SEND.  The worker persists ReqToExecute after executing a
 * request and before any response, and when it releases a slot it first
 * invalidates the request header, then persists SRQTail (= the end of the
 * tickets that may now be claimed; a slot freed by a void, with nothing
 * executed, extends it too: cover_ticket).  A restarted server finds the rings,
 * scans tickets [ReqToExecute, SRQTail) (recovery.h) and re-executes every
 * published, well-formed, idempotent nilext request in ticket order before
 * it lets clients in.  Each restart bumps the ring's generation; client ids
 * carry it, so a request or reply from before a restart is never mixed with
 * one after it.
 *
 * Rule 2 is not here: srv_poll reports published slots as arrivals, in the
 * order it finds them (a slot published late is reported after later
 * tickets), and the worker's executor (exec.h) runs them in ticket order.
 */
#ifndef OQB_SHM_INTERNAL_H
#define OQB_SHM_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "recovery.h"
#include "transport.h"

#include "shm_files.h"
#include "shm_layout.h"

struct srv_worker {
	struct ring_hdr *ring;
	_Atomic uint64_t *state;
	uint8_t *data;
	uint64_t scan;                 /* next ticket not yet examined */
	uint64_t tail_seen;            /* last value read from ring->tail */
	uint64_t frontier_polls;
	uint64_t *pend;                /* claimed-but-unpublished tickets */
	uint64_t *pend_since;
	unsigned npend;
	struct mbox_hdr **mbox;        /* client id -> mapping (lazy) */
	unsigned mbox_max;             /* highest id + 1 mapped so far */
	uint32_t last_id;              /* the client of the last reply ... */
	struct mbox_hdr *last_mbox;    /* ... and its mailbox */
	uint64_t released;             /* tickets below it released; published at flush */
	int is_pmem;                   /* durable: mapping is real PM */
	struct recovery_report rec;    /* durable: what the restart recovered */
	int recovered;                 /* 1 if a previous ring was scanned */
	int existed;                   /* durable: the ring file was there */
	/* counters */
	uint64_t arrivals, voided, quarantined, replies, reply_drops, reply_full_waits;
	uint64_t unknown_client, stale_generation;
};

struct tp_server {
	struct tp_srv_conf c;
	uint64_t generation;
	int lock_fd;                   /* flock on server.lock (durable) or owner.lock (rundir.h) */
	char dir[512];
	struct shm_hdr *hdr;
	size_t ring_size;
	struct srv_worker w[SHM_MAX_WORKERS];
};

/*
 * Durable mode: SRQTail must cover every ticket whose slot is free to be
 * claimed, or a request committed there lies outside the next server's
 * replay window [ReqToExecute, SRQTail).  The release of an executed slot
 * extends it (release_durable); so must every path that frees a slot
 * without executing anything in it: a void of an abandoned claim, and a
 * retired slot whose writer gave up.  Without this, a commit into such a
 * slot was lost by a crash before the next release (test_shm_durable).
 * It only grows: a later release of an earlier slot must not shrink it.
 * Persisted before the slot is freed.
 */
static inline void cover_ticket(struct tp_server *s, struct srv_worker *w, uint64_t t)
{
	if (!s->c.durable || w->ring->srq_tail > t)
		return;
	w->ring->srq_tail = t + 1;
	persist(&w->ring->srq_tail, 8, w->is_pmem);
}

/* shm_srv.c */
struct tp_server *shm_srv_open(const struct tp_srv_conf *c, char *err, size_t errlen);
const char *shm_srv_endpoint(struct tp_server *s);
json_t *shm_srv_stats(struct tp_server *s);
void shm_srv_close(struct tp_server *s);
void shm_ring_attach(struct tp_server *s, struct srv_worker *w, void *base);

/* shm_recover.c */
void shm_seal_ring(struct tp_server *s, struct srv_worker *w);
int shm_recover_ring(struct tp_server *s, unsigned wi, char *err, size_t errlen);
int shm_fresh_ring_file(struct tp_server *s, unsigned wi, char *err, size_t errlen);
int shm_ring_file_replace(struct tp_server *s, unsigned wi, char *err, size_t errlen);

/* shm_scan.c */
int shm_srv_poll(struct tp_server *s, unsigned wi, struct tp_arrival *a, int max);
const void *shm_srv_req(struct tp_server *s, unsigned wi, uint64_t slot, size_t *avail);

/* shm_release.c */
void shm_srv_executed(struct tp_server *s, unsigned wi, uint64_t slot);
void shm_srv_release(struct tp_server *s, unsigned wi, uint64_t slot);
void shm_srv_flush(struct tp_server *s, unsigned wi);

/* shm_mbox.c */
int shm_srv_reply(struct tp_server *s, unsigned wi, uint32_t client_id,
		  const struct wire_resp *r, const void *val);

/* shm_cli.c (shm_cli_claim and shm_cli_publish: tp_shm.h) */
struct tp_client *shm_cli_open(const struct tp_cli_conf *cc, char *err, size_t errlen);
uint32_t shm_cli_id(struct tp_client *c);
unsigned shm_cli_workers(struct tp_client *c);
int shm_cli_post(struct tp_client *c, unsigned wi, const void *req, uint32_t len,
		 uint64_t seq, char *err, size_t errlen);
int shm_cli_post_many(struct tp_client *c, unsigned wi, const struct tp_req *r, int n,
		      char *err, size_t errlen);
void shm_cli_flush(struct tp_client *c);
int shm_cli_poll(struct tp_client *c, struct tp_event *ev, int max);
json_t *shm_cli_stats(struct tp_client *c);
void shm_cli_close(struct tp_client *c);

#endif
