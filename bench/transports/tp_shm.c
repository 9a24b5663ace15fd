/*
 * tp_shm.c - the shared-memory transport, oqbench's embedded default.
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
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>

#include <libpmem.h>

#include "bits.h"
#include "clock.h"
#include "fault.h"
#include "log.h"
#include "recovery.h"
#include "rmtree.h"
#include "rundir.h"
#include "transport.h"
#include "tp_shm.h"

#include "shm_files.h"
#include "shm_layout.h"

struct mbox_ring {
	_Atomic uint64_t head;             /* producer (worker); the client never reads it */
	uint64_t tail_seen;                /* the worker's last read of `tail` */
	uint8_t pad0[CL - 16];
	_Atomic uint64_t tail;             /* consumer (client) */
	uint8_t pad1[CL - 8];
};

struct mbox_hdr {
	uint64_t magic;
	uint32_t workers, cap;
	uint32_t client_pid, client_id;
	uint8_t pad[CL - 24];
	/* then `workers` struct mbox_ring, then workers * cap data bytes */
};

static size_t ring_map_size(unsigned slots, unsigned slot_size)
{
	return sizeof(struct ring_hdr) + (size_t)slots * CL + (size_t)slots * slot_size + CL;
}

static size_t mbox_map_size(unsigned workers)
{
	return sizeof(struct mbox_hdr) + workers * sizeof(struct mbox_ring) + (size_t)workers * MBOX_CAP;
}

/* Asks for the cache line at p in a writable state, without waiting. */
static inline void prefetch_for_write(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/* ------------------------------------------------------------------ */
/* server                                                              */

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

/* Removes server.map and every client mailbox in dir (this server's, or a
 * crashed predecessor's, whatever their numbers). */
static void remove_map_and_mailboxes(const char *dir)
{
	char p[600];
	snprintf(p, sizeof p, "%s/server.map", dir);
	unlink(p);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "mbox-", 5) == 0) {
			snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
			unlink(p);
		}
	closedir(d);
}

static void srv_cleanup_files(struct tp_server *s)
{
	char p[600];
	remove_map_and_mailboxes(s->dir);
	if (s->c.durable)
		return;   /* the rings are the persistent state: keep them */
	for (unsigned i = 0; i < s->c.workers; i++) {
		snprintf(p, sizeof p, "%s/ring-%u", s->dir, i);
		unlink(p);
	}
	snprintf(p, sizeof p, "%s/" RUNDIR_LOCK, s->dir);
	unlink(p);   /* still locked: no reaper takes the directory meanwhile */
	/* and whatever a client made in it as we left (a mailbox), since
	 * without its owner.lock no reaper would ever take it */
	if (rmdir(s->dir) != 0 && errno != ENOENT)
		rm_tree(s->dir);
}

static void shm_srv_close(struct tp_server *s);

struct rec_arg {
	struct tp_server *s;
	unsigned w;
};

/* A ticket's request counts only if its slot's state says it was
 * published for that very ticket (not voided, retired, or reused). */
static int rec_slot_ok(void *arg, uint64_t t)
{
	struct rec_arg *ra = arg;
	struct srv_worker *w = &ra->s->w[ra->w];
	uint64_t v = atomic_load(&w->state[(t & (ra->s->c.ring_slots - 1)) * ST_STRIDE]);
	return v == ST(t, ST_PUB);
}

static void rec_exec(void *arg, const void *req, const struct wire_req *h)
{
	struct rec_arg *ra = arg;
	if (ra->s->c.recover_exec)
		ra->s->c.recover_exec(ra->s->c.recover_arg, ra->w, req, h);
}

/*
 * Makes every slot that is not PUBLISHED unclaimable and unpublishable:
 * FREE(t) and WRITING(t) become QUARANTINED(t), so a client of the dead
 * server still holding a ticket fails its claim or publish CAS and learns
 * that its request was not committed.  PUBLISHED slots stay as they are.
 */
static void seal_ring(struct tp_server *s, struct srv_worker *w)
{
	for (uint64_t i = 0; i < s->c.ring_slots; i++) {
		_Atomic uint64_t *st = &w->state[i * ST_STRIDE];
		uint64_t v = atomic_load(st);
		while ((v & 3) != ST_PUB && (v & 3) != ST_QUAR &&
		       !atomic_compare_exchange_weak(st, &v, ST(v >> 2, ST_QUAR)))
			;
	}
	persist(w->state, (size_t)s->c.ring_slots * CL, w->is_pmem);
}

/* Worker w's ring is the mapping at base: its geometry written into its
 * header, its state words and slot data found from it. */
static void ring_attach(struct tp_server *s, struct srv_worker *w, void *base)
{
	w->ring = base;
	w->ring->ring_slots = s->c.ring_slots;
	w->ring->slot_size = s->c.slot_size;
	w->ring->state_off = sizeof(struct ring_hdr);
	w->ring->data_off = sizeof(struct ring_hdr) + (size_t)s->c.ring_slots * CL;
	w->state = (_Atomic uint64_t *)((uint8_t *)base + w->ring->state_off);
	w->data = (uint8_t *)base + w->ring->data_off;
}

/*
 * A recovered ring starts its new generation in a new file, never in the
 * old one.  A client of the dead server that was stalled between its claim
 * and its write (a thread preempted on a loaded host) still has the old
 * file mapped, and writes into it when it wakes.  When the old file was
 * reset in place, those bytes landed in a slot of the new queue, over a
 * request committed there after the restart: the commit was lost, or torn
 * and never answered (issue 39's crash-test hang, "no response for get ...
 * by the deadline" at load 60; test_shm_durable:
 * a_writer_stalled_across_a_restart_cannot_touch_the_new_queue).  Now the
 * stale writer's bytes go to the old inode, which nobody reads again; it
 * learns of the new generation there and reconnects.
 *
 * fresh_ring_file maps a new ring-W.new in place of the recovered ring;
 * the caller initialises and persists it, and ring_file_replace renames it
 * over ring-W and syncs the directory.  A crash before the rename leaves
 * the old ring, replayed again by the next server (its requests are
 * idempotent); a crash after it, the fresh ring.
 */
static int fresh_ring_file(struct tp_server *s, unsigned wi, char *err, size_t errlen)
{
	struct srv_worker *w = &s->w[wi];
	char p[600];
	int existed = 0;
	snprintf(p, sizeof p, "%s/ring-%u.new", s->dir, wi);
	unlink(p);   /* left by a crash before its rename */
	void *base_p = pmap_file(p, s->ring_size, &existed, &w->is_pmem, err, errlen);
	if (!base_p)
		return -1;
	pmem_unmap(w->ring, s->ring_size);
	ring_attach(s, w, base_p);
	return 0;
}

static int ring_file_replace(struct tp_server *s, unsigned wi, char *err, size_t errlen)
{
	char from[600], to[600];
	snprintf(from, sizeof from, "%s/ring-%u.new", s->dir, wi);
	snprintf(to, sizeof to, "%s/ring-%u", s->dir, wi);
	return replace_file(from, to, s->dir, err, errlen);
}

/* Replays what a crashed server left in worker wi's ring (§5.3). */
static int recover_ring(struct tp_server *s, unsigned wi, char *err, size_t errlen)
{
	struct srv_worker *w = &s->w[wi];
	struct rec_arg ra = { s, wi };
	uint64_t from = w->ring->req_to_execute, to = w->ring->srq_tail;
	w->recovered = 1;
	/* Fault injection for the crash test's negative control only: proves
	 * that the test detects lost commits when recovery is skipped. */
	char ferr[300];
	if (fault_init("server", ferr, sizeof ferr) == 0 && fault_on(FAULT_SKIP_RECOVERY)) {
		log_msg(LOG_WARN, "OQB_FAULT=skip-recovery: NOT replaying ring %u (test-only fault)", wi);
		return 0;
	}
	if (recovery_scan_ring_checked(w->data, s->c.ring_slots, s->c.slot_size, from, to,
				       rec_slot_ok, &ra, rec_exec, &ra, &w->rec) != 0) {
		snprintf(err, errlen, "%s/ring-%u: ReqToExecute %llu and SRQTail %llu are inconsistent "
			 "(more than %u slots apart); the ring is corrupt: move the file aside to start "
			 "without its unexecuted requests, or restore it from a copy", s->dir, wi,
			 (unsigned long long)from, (unsigned long long)to, 2 * s->c.ring_slots);
		return -1;
	}
	log_msg(LOG_INFO, "recovery: ring %u: scanned %llu, valid %llu, re-executed %llu, skipped %llu, %.3f ms",
		wi, (unsigned long long)w->rec.scanned, (unsigned long long)w->rec.valid,
		(unsigned long long)w->rec.reexecuted,
		(unsigned long long)(w->rec.skipped_invalid + w->rec.skipped_non_nilext +
				     w->rec.skipped_nonidempotent), w->rec.ns / 1e6);
	return 0;
}

static struct tp_server *shm_srv_open(const struct tp_srv_conf *c, char *err, size_t errlen)
{
	if (c->workers < 1 || c->workers > SHM_MAX_WORKERS) {
		snprintf(err, errlen, "shm: workers = %u; expected 1 to %d", c->workers, SHM_MAX_WORKERS);
		return NULL;
	}
	if (c->ring_slots < 2 || (c->ring_slots & (c->ring_slots - 1))) {
		snprintf(err, errlen, "shm: ring slots = %u; expected a power of two >= 2", c->ring_slots);
		return NULL;
	}
	if (c->slot_size < WIRE_ALIGN || c->slot_size % WIRE_ALIGN) {
		snprintf(err, errlen, "shm: slot size = %u; expected a multiple of %u", c->slot_size, WIRE_ALIGN);
		return NULL;
	}
	struct tp_server *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "shm: out of memory");
		return NULL;
	}
	s->c = *c;
	char p[600];
	if (c->durable) {
		/* A fixed directory: a restarted server must find its rings. */
		if (!c->pmem_path || !*c->pmem_path) {
			snprintf(err, errlen, "shm: durable mode needs --pmem-path DIR (server.recv_pmem_path), "
				 "a directory on persistent memory or a file system");
			free(s);
			return NULL;
		}
		snprintf(s->dir, sizeof s->dir, "%s", c->pmem_path);
		if (mkdir(s->dir, 0700) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "shm: cannot create %s: %s", s->dir, strerror(errno));
			free(s);
			return NULL;
		}
		/* One server per directory: a lock held for the server's life
		 * (released by the kernel when it dies). */
		snprintf(p, sizeof p, "%s/server.lock", s->dir);
		s->lock_fd = open(p, O_RDWR | O_CREAT, 0600);
		if (s->lock_fd < 0 || flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
			snprintf(err, errlen, "shm: %s is in use by another oqb-server (or cannot be locked: %s); "
				 "stop it first or use another --pmem-path", s->dir, strerror(errno));
			if (s->lock_fd >= 0)
				close(s->lock_fd);
			free(s);
			return NULL;
		}
		/* Leftovers of a crashed server: its map and the clients' mailboxes. */
		remove_map_and_mailboxes(s->dir);
	} else {
		/* oqb-PID-XXXXXX, locked for the server's life; first the
		 * run directories of servers that died without removing theirs */
		const char *base = rundir_base(c->run_dir);
		rundir_reap(base, "", 0);
		if (rundir_create(base, "", s->dir, sizeof s->dir, &s->lock_fd, err, errlen) != 0) {
			free(s);
			return NULL;
		}
	}
	s->ring_size = ring_map_size(c->ring_slots, c->slot_size);
	s->generation = 1;
	for (unsigned i = 0; i < c->workers; i++) {
		struct srv_worker *w = &s->w[i];
		int existed = 0;
		void *base_p;
		snprintf(p, sizeof p, "%s/ring-%u", s->dir, i);
		if (c->durable)
			base_p = pmap_file(p, s->ring_size, &existed, &w->is_pmem, err, errlen);
		else
			base_p = map_file(p, s->ring_size, 1, err, errlen);
		if (!base_p)
			goto fail;
		w->ring = base_p;
		if (existed && (w->ring->magic != SHM_MAGIC || w->ring->ring_slots != c->ring_slots ||
				w->ring->slot_size != c->slot_size)) {
			snprintf(err, errlen, "%s: not a ring of %u slots of %u B written by this version; start "
				 "with the geometry it was written with, or remove it to discard its requests",
				 p, c->ring_slots, c->slot_size);
			goto fail;
		}
		ring_attach(s, w, base_p);
		w->existed = existed;
		if (existed && w->ring->generation + 1 > s->generation)
			s->generation = w->ring->generation + 1;
		w->pend = calloc(c->ring_slots, sizeof *w->pend);
		w->pend_since = calloc(c->ring_slots, sizeof *w->pend_since);
		w->mbox = calloc(SHM_MAX_CLIENTS, sizeof *w->mbox);
		if (!w->pend || !w->pend_since || !w->mbox) {
			snprintf(err, errlen, "shm: out of memory");
			goto fail;
		}
	}
	if (s->generation > (1u << (32 - ID_BITS)) - 1)
		s->generation = 1;   /* wrap: ids only need to differ from the last run's */
	/* Recovery of rings a previous server left: first tell its clients it
	 * is over (new generation) and seal every slot, so that no late client
	 * can claim or publish into the ring while it is scanned and reset;
	 * then replay. */
	for (unsigned i = 0; i < c->workers; i++) {
		struct srv_worker *w = &s->w[i];
		if (!w->existed)
			continue;
		w->ring->generation = s->generation;
		persist(&w->ring->generation, 8, w->is_pmem);
		seal_ring(s, w);
		if (recover_ring(s, i, err, errlen) != 0)
			goto fail;
	}
	/* Fresh rings (after recovery, or new): everything free, nothing to
	 * execute, tickets from 0, a new generation; a recovered ring in a
	 * new file (fresh_ring_file). */
	for (unsigned i = 0; i < c->workers; i++) {
		struct srv_worker *w = &s->w[i];
		if (w->existed && fresh_ring_file(s, i, err, errlen) != 0)
			goto fail;
		for (uint64_t t = 0; t < c->ring_slots; t++) {
			atomic_store_explicit(&w->state[t * ST_STRIDE], ST(t, ST_FREE), memory_order_relaxed);
			memset(w->data + t * (size_t)c->slot_size, 0, 16);
		}
		atomic_store(&w->ring->tail, 0);
		atomic_store(&w->ring->released, 0);
		w->ring->req_to_execute = 0;
		w->ring->srq_tail = c->ring_slots;
		w->ring->generation = s->generation;
		w->ring->durable = (uint32_t)c->durable;
		w->ring->magic = SHM_MAGIC;
		if (c->durable)
			persist(w->ring, s->ring_size, w->is_pmem);
		if (w->existed && ring_file_replace(s, i, err, errlen) != 0)
			goto fail;
	}
	snprintf(p, sizeof p, "%s/server.map", s->dir);
	s->hdr = map_file(p, sizeof(struct shm_hdr), 1, err, errlen);
	if (!s->hdr)
		goto fail;
	s->hdr->version = SHM_VERSION;
	s->hdr->workers = c->workers;
	s->hdr->ring_slots = c->ring_slots;
	s->hdr->slot_size = c->slot_size;
	s->hdr->server_pid = (uint32_t)getpid();
	s->hdr->durable = (uint32_t)c->durable;
	s->hdr->generation = s->generation;
	snprintf(s->hdr->system, sizeof s->hdr->system, "%s", c->system ? c->system : "");
	atomic_store(&s->hdr->next_client_id, 1);
	atomic_thread_fence(memory_order_release);
	s->hdr->magic = SHM_MAGIC;   /* last: clients check it */
	return s;
fail:
	shm_srv_close(s);
	return NULL;
}

static const char *shm_srv_endpoint(struct tp_server *s)
{
	return s->dir;
}

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
static void cover_ticket(struct tp_server *s, struct srv_worker *w, uint64_t t)
{
	if (!s->c.durable || w->ring->srq_tail > t)
		return;
	w->ring->srq_tail = t + 1;
	persist(&w->ring->srq_tail, 8, w->is_pmem);
}

/* Slots seen claimed earlier: published now, or timed out?  Adds their
 * arrivals to a[k..max); returns the new k.  Off the common path: it runs
 * only while some claim is outstanding. */
static __attribute__((noinline)) int poll_pending(struct tp_server *s, struct srv_worker *w,
						  struct tp_arrival *a, int k, int max, uint64_t *nowp)
{
	const uint64_t n = s->c.ring_slots, mask = n - 1;
	uint64_t now = *nowp;
	for (unsigned i = 0; i < w->npend && k < max; ) {
		uint64_t t = w->pend[i];
		uint64_t v = atomic_load_explicit(&w->state[(t & mask) * ST_STRIDE], memory_order_acquire);
		int done = 0;
		if (v == ST(t, ST_PUB)) {
			a[k].slot = t; a[k].voided = 0; k++;
			done = 1;
		} else {
			if (!now)
				now = clock_ns();
			uint64_t waited = now - w->pend_since[i];
			uint64_t expect = v;
			if (v == ST(t, ST_FREE) && waited > s->c.void_timeout_ns) {
				cover_ticket(s, w, t + n);
				if (atomic_compare_exchange_strong(&w->state[(t & mask) * ST_STRIDE], &expect, ST(t + n, ST_FREE))) {
					a[k].slot = t; a[k].voided = 1; k++;
					w->voided++;
					done = 1;
				}
			} else if (v == ST(t, ST_WRITE) && waited > 4 * s->c.void_timeout_ns) {
				if (atomic_compare_exchange_strong(&w->state[(t & mask) * ST_STRIDE], &expect, ST(t, ST_QUAR))) {
					a[k].slot = t; a[k].voided = 1; k++;
					w->voided++;
					w->quarantined++;
					done = 1;
				}
			}
		}
		if (done)
			w->pend[i] = w->pend[--w->npend], w->pend_since[i] = w->pend_since[w->npend];
		else
			i++;
	}
	*nowp = now;
	return k;
}

static int shm_srv_poll(struct tp_server *s, unsigned wi, struct tp_arrival *a, int max)
{
	struct srv_worker *w = &s->w[wi];
	const uint64_t mask = s->c.ring_slots - 1;
	int k = 0;
	uint64_t now = 0;

	if (w->npend)
		k = poll_pending(s, w, a, k, max, &now);

	/* New tickets.  The state word says what a ticket's slot holds; the
	 * shared `tail` (which every client increments) is read only when a
	 * slot looks untouched, to tell "claimed but not yet marked" from "not
	 * claimed", so the worker does not bounce the tail's cache line. */
	while (k < max) {
		uint64_t t = w->scan;
		uint64_t v = atomic_load_explicit(&w->state[(t & mask) * ST_STRIDE], memory_order_acquire);
		if (v == ST(t, ST_PUB)) {
			a[k].slot = t; a[k].voided = 0; k++;
		} else if (v == ST(t, ST_WRITE)) {
			if (!now)
				now = clock_ns();
			w->pend[w->npend] = t;
			w->pend_since[w->npend] = now;
			w->npend++;
		} else if ((v & ST_GONE) && (v & 3) == ST_QUAR) {
			/* retired by an earlier lap whose writer has since given
			 * up: free again from this ticket on.  A client that
			 * found it retired took another ticket; then this one is
			 * voided like any claimed-and-abandoned ticket. */
			cover_ticket(s, w, t);
			atomic_compare_exchange_strong(&w->state[(t & mask) * ST_STRIDE], &v, ST(t, ST_FREE));
			continue;   /* look again: FREE(t), or what a client made of it */
		} else if (v == ST(t, ST_FREE) || ((v & 3) == ST_QUAR && (v >> 2) < t)) {
			if (w->tail_seen <= t) {
				if ((++w->frontier_polls & 255) != 0)
					break;
				w->tail_seen = atomic_load_explicit(&w->ring->tail, memory_order_acquire);
				if (w->tail_seen <= t)
					break;   /* nothing claimed here yet */
			}
			if (v == ST(t, ST_FREE)) {
				/* claimed, not yet marked WRITING */
				if (!now)
					now = clock_ns();
				w->pend[w->npend] = t;
				w->pend_since[w->npend] = now;
				w->npend++;
			} else {
				/* retired slot from an earlier lap: skip this ticket */
				a[k].slot = t; a[k].voided = 1; k++;
				w->voided++;
			}
		} else {
			break;   /* the previous lap of this slot is not released yet */
		}
		w->scan++;
	}
	w->arrivals += (uint64_t)k;
	return k;
}

static const void *shm_srv_req(struct tp_server *s, unsigned wi, uint64_t slot, size_t *avail)
{
	struct srv_worker *w = &s->w[wi];
	*avail = s->c.slot_size;
	return w->data + (slot & (s->c.ring_slots - 1)) * (size_t)s->c.slot_size;
}

static void shm_srv_executed(struct tp_server *s, unsigned wi, uint64_t slot)
{
	struct srv_worker *w = &s->w[wi];
	if (!s->c.durable)
		return;
	/* §5.3 ①②③: executed, now ReqToExecute moves past it, then respond. */
	w->ring->req_to_execute = slot + 1;
	persist(&w->ring->req_to_execute, 8, w->is_pmem);
}

static __attribute__((noinline)) void release_durable(struct tp_server *s, struct srv_worker *w,
							     uint64_t slot, _Atomic uint64_t *st)
{
	const uint64_t n = s->c.ring_slots;
	/* "Repost the buffer": invalidate the old request first, so a later
	 * recovery can never take it for a new one, then extend SRQTail over
	 * the ticket that may now land here. */
	uint8_t *d = w->data + (slot & (n - 1)) * (size_t)s->c.slot_size;
	memset(d, 0, 16);
	persist(d, 16, w->is_pmem);
	cover_ticket(s, w, slot + n);
	atomic_store_explicit(st, ST(slot + n, ST_FREE), memory_order_release);
	persist(st, 8, w->is_pmem);
}

static void shm_srv_release(struct tp_server *s, unsigned wi, uint64_t slot)
{
	struct srv_worker *w = &s->w[wi];
	const uint64_t n = s->c.ring_slots;
	_Atomic uint64_t *st = &w->state[(slot & (n - 1)) * ST_STRIDE];
	/* Only a slot we executed is handed to the next lap here; a voided
	 * slot was already recycled (or retired) by the void CAS. */
	w->released = slot + 1;
	if (atomic_load_explicit(st, memory_order_relaxed) != ST(slot, ST_PUB))
		return;
	if (s->c.durable)
		release_durable(s, w, slot, st);
	else
		atomic_store_explicit(st, ST(slot + n, ST_FREE), memory_order_release);
}

static struct mbox_hdr *srv_mbox(struct tp_server *s, struct srv_worker *w, uint32_t full_id)
{
	uint32_t id = full_id & ID_MASK;
	if ((full_id >> ID_BITS) != (uint32_t)s->generation) {
		w->stale_generation++;   /* a client of the server before a restart */
		return NULL;
	}
	if (id == 0 || id >= SHM_MAX_CLIENTS)
		return NULL;
	if (w->mbox[id])
		return w->mbox[id];
	char p[600], err[256];
	snprintf(p, sizeof p, "%s/mbox-%u", s->dir, id);
	struct mbox_hdr *m = map_file(p, mbox_map_size(s->c.workers), 0, err, sizeof err);
	if (!m)
		return NULL;
	if (m->magic != SHM_MAGIC || m->workers != s->c.workers || m->client_id != full_id) {
		munmap(m, mbox_map_size(s->c.workers));
		return NULL;
	}
	w->mbox[id] = m;
	if (id + 1 > w->mbox_max)
		w->mbox_max = id + 1;
	return m;
}

/* Until the client's tail leaves `need` bytes free at head: 0, or -1 (the
 * reply is dropped) for a client that is gone or 1 s behind. */
static __attribute__((noinline)) int mbox_wait_room(struct srv_worker *w, struct mbox_hdr *m,
						     struct mbox_ring *mr, uint64_t head, uint64_t need)
{
	uint64_t waited_since = 0;
	for (;;) {
		mr->tail_seen = atomic_load_explicit(&mr->tail, memory_order_acquire);
		if (MBOX_CAP - (head - mr->tail_seen) >= need)
			return 0;
		/* Mailbox full: the client is slow or gone.  Wait a while for a
		 * live client; drop the reply for a dead one. */
		uint64_t now = clock_ns();
		if (!waited_since) {
			waited_since = now;
			w->reply_full_waits++;
		}
		if ((kill((pid_t)m->client_pid, 0) != 0 && errno == ESRCH) ||
		    now - waited_since > 1000000000ull) {
			w->reply_drops++;
			return -1;
		}
		sched_yield();
	}
}

/*
 * Mailbox record: an 8-byte header word (the record's length in bytes, a
 * multiple of 8, or MBOX_WRAP: continue at offset 0), the response header,
 * the value.  There is no head for the client to poll: the worker writes
 * the record, zeroes the header word that follows it, and only then stores
 * the record's own header (release), so the word a client reads next is
 * always either a complete record's header or 0.  The client needs one
 * line per response (the record), not the record and a head.  The worker
 * reads the client's `tail` only when its cached copy says the mailbox
 * may be full.
 */
static int shm_srv_reply(struct tp_server *s, unsigned wi, uint32_t client_id,
			 const struct wire_resp *r, const void *val)
{
	struct srv_worker *w = &s->w[wi];
	struct mbox_hdr *m = w->last_mbox;
	if (client_id != w->last_id || !m) {
		m = srv_mbox(s, w, client_id);
		if (!m) {
			w->unknown_client++;
			return -1;
		}
		w->last_id = client_id;
		w->last_mbox = m;
	}
	struct mbox_ring *mr = (struct mbox_ring *)(m + 1) + wi;
	uint8_t *data = (uint8_t *)((struct mbox_ring *)(m + 1) + m->workers) + (size_t)wi * MBOX_CAP;
	uint32_t len = (uint32_t)(8 + WIRE_RESP_HDR + r->val_len + 7) & ~7u;
	if (len > MBOX_CAP / 2) {
		w->reply_drops++;
		return -1;
	}
	uint64_t head = atomic_load_explicit(&mr->head, memory_order_relaxed);
	uint64_t pos = head & (MBOX_CAP - 1);
	/* the record, the zeroed header after it, and the skipped end of the
	 * buffer if it does not fit before the wrap */
	uint64_t need = len + 8 + ((MBOX_CAP - pos < len + 8) ? MBOX_CAP - pos : 0);
	if (MBOX_CAP - (head - mr->tail_seen) < need && mbox_wait_room(w, m, mr, head, need) != 0)
		return -1;
	_Atomic uint64_t *wrap = NULL;
	if (MBOX_CAP - pos < len + 8) {
		wrap = (_Atomic uint64_t *)(data + pos);
		head += MBOX_CAP - pos;
		pos = 0;
	}
	wire_encode_resp(data + pos + 8, r);
	if (r->val_len)
		memcpy(data + pos + 8 + WIRE_RESP_HDR, val, r->val_len);
	atomic_store_explicit((_Atomic uint64_t *)(data + pos + len), 0, memory_order_relaxed);
	if (wrap) {
		/* the record at 0 first, then the marker that leads to it */
		atomic_store_explicit((_Atomic uint64_t *)(data + pos), len, memory_order_relaxed);
		atomic_store_explicit(wrap, MBOX_WRAP, memory_order_release);
	} else {
		atomic_store_explicit((_Atomic uint64_t *)(data + pos), len, memory_order_release);
	}
	atomic_store_explicit(&mr->head, head + len, memory_order_relaxed);
	w->replies++;
	return 0;
}

/* Replies are visible once written.  What flush publishes is `released`,
 * once per batch rather than per slot: clients read it only when their
 * cached value says the ring is full, and a value that lags by a batch
 * only makes them say busy a little longer, never overwrite a slot (the
 * slot state decides that). */
static void shm_srv_flush(struct tp_server *s, unsigned wi)
{
	struct srv_worker *w = &s->w[wi];
	if (atomic_load_explicit(&w->ring->released, memory_order_relaxed) != w->released)
		atomic_store_explicit(&w->ring->released, w->released, memory_order_release);
}

static json_t *shm_srv_stats(struct tp_server *s)
{
	json_t *arr = json_array();
	for (unsigned i = 0; i < s->c.workers; i++) {
		struct srv_worker *w = &s->w[i];
		json_array_append_new(arr, json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			"stale_generation", (json_int_t)w->stale_generation,
			"tickets", (json_int_t)atomic_load(&w->ring->tail),
			"arrivals", (json_int_t)w->arrivals,
			"voided", (json_int_t)w->voided,
			"quarantined", (json_int_t)w->quarantined,
			"replies", (json_int_t)w->replies,
			"reply_drops", (json_int_t)w->reply_drops,
			"reply_full_waits", (json_int_t)w->reply_full_waits,
			"unknown_client", (json_int_t)w->unknown_client));
	}
	json_t *j = json_pack("{s:s,s:I,s:I,s:b,s:I,s:o}", "transport", "shm",
			      "ring_slots", (json_int_t)s->c.ring_slots,
			      "slot_size", (json_int_t)s->c.slot_size, "durable", s->c.durable,
			      "generation", (json_int_t)s->generation, "workers", arr);
	if (s->c.durable) {
		/* only a durable server's directory outlives it */
		json_object_set_new(j, "run_dir", json_string(s->dir));
		json_object_set_new(j, "persist", json_string(s->w[0].is_pmem ? "pmem_persist" : "pmem_msync"));
		json_t *rec = json_array();
		for (unsigned i = 0; i < s->c.workers; i++)
			json_array_append_new(rec, s->w[i].recovered ? recovery_report_json(&s->w[i].rec)
								      : json_null());
		json_object_set_new(j, "recovery", rec);
	}
	return j;
}

static void shm_srv_close(struct tp_server *s)
{
	if (!s)
		return;
	if (s->hdr)
		atomic_store(&s->hdr->stopping, 1);
	srv_cleanup_files(s);
	for (unsigned i = 0; i < s->c.workers; i++) {
		struct srv_worker *w = &s->w[i];
		if (w->mbox)
			for (unsigned id = 0; id < w->mbox_max; id++)
				if (w->mbox[id])
					munmap(w->mbox[id], mbox_map_size(s->c.workers));
		if (w->ring) {
			if (s->c.durable)
				pmem_unmap(w->ring, s->ring_size);
			else
				munmap(w->ring, s->ring_size);
		}
		free(w->mbox);
		free(w->pend);
		free(w->pend_since);
	}
	if (s->hdr)
		munmap(s->hdr, sizeof(struct shm_hdr));
	if (s->lock_fd > 0)
		close(s->lock_fd);
	free(s);
}

/* ------------------------------------------------------------------ */
/* client                                                              */

#define CLI_EVQ 4096   /* DELIVERED events not yet polled (power of two) */

struct tp_client {
	struct tp_cli_conf c;
	struct shm_hdr *hdr;
	unsigned workers, slots, slot_size;
	size_t ring_size;
	struct ring_hdr *ring[SHM_MAX_WORKERS];
	_Atomic uint64_t *state[SHM_MAX_WORKERS];
	uint8_t *data[SHM_MAX_WORKERS];
	struct mbox_hdr *mbox;
	uint32_t id;                       /* generation << ID_BITS | number */
	uint64_t gen;
	int durable, is_pmem;
	char dir[512];
	/* DELIVERED events produced by post, handed out by poll */
	struct tp_event evq[CLI_EVQ];
	uint64_t evq_head, evq_tail;
	uint64_t mtail[SHM_MAX_WORKERS];   /* consumed, not yet released */
	uint8_t busy[SHM_MAX_WORKERS];      /* last post found the ring full */
	uint64_t released_seen[SHM_MAX_WORKERS]; /* last value read of ring->released */
	uint64_t busy_checks;
	struct fault_deferq *fdq;          /* test-only: ack-before-alloc (fault.h) */
	/* counters */
	uint64_t posts, ring_full_waits, ring_full_ns, retries_voided, retries_quarantined;
};

static void shm_cli_close(struct tp_client *c);

static struct tp_client *shm_cli_open(const struct tp_cli_conf *cc, char *err, size_t errlen)
{
	struct tp_client *c = calloc(1, sizeof *c);
	char p[600];
	if (!c) {
		snprintf(err, errlen, "shm: out of memory");
		return NULL;
	}
	if (fault_init("client", err, errlen) != 0) {
		free(c);
		return NULL;
	}
	c->c = *cc;
	snprintf(c->dir, sizeof c->dir, "%s", cc->endpoint ? cc->endpoint : "");
	snprintf(p, sizeof p, "%s/server.map", c->dir);
	c->hdr = map_file(p, sizeof(struct shm_hdr), 0, err, errlen);
	if (!c->hdr) {
		size_t l = strlen(err);
		snprintf(err + l, errlen - l, " (is an oqb-server with --transport shm running, and is "
			 "--server its run directory?)");
		goto fail;
	}
	if (c->hdr->magic != SHM_MAGIC || c->hdr->version != SHM_VERSION) {
		snprintf(err, errlen, "%s: not an oqbench shm server of version %d (magic/version mismatch)",
			 p, SHM_VERSION);
		goto fail;
	}
	if (cc->system && strcmp(cc->system, c->hdr->system) != 0) {
		snprintf(err, errlen, "server at %s runs system '%s' but this client was started with "
			 "--system %s; use the same system on both", c->dir, c->hdr->system, cc->system);
		goto fail;
	}
	if (atomic_load(&c->hdr->stopping)) {
		snprintf(err, errlen, "server at %s is stopping", c->dir);
		goto fail;
	}
	c->workers = c->hdr->workers;
	c->slots = c->hdr->ring_slots;
	c->slot_size = c->hdr->slot_size;
	c->ring_size = ring_map_size(c->slots, c->slot_size);
	c->gen = c->hdr->generation;
	c->durable = (int)c->hdr->durable;
	if (cc->durable && !c->durable) {
		snprintf(err, errlen, "the client asked for durable commits but the server at %s is not "
			 "durable; start it with --durable --pmem-path DIR", c->dir);
		goto fail;
	}
	for (unsigned i = 0; i < c->workers; i++) {
		snprintf(p, sizeof p, "%s/ring-%u", c->dir, i);
		void *b;
		if (c->durable) {
			size_t mapped = 0;
			b = pmem_map_file(p, 0, 0, 0600, &mapped, &c->is_pmem);
			if (b && mapped < c->ring_size) {
				pmem_unmap(b, mapped);
				b = NULL;
			}
			if (!b)
				snprintf(err, errlen, "%s: cannot map the durable ring: %s", p, pmem_errormsg());
		} else {
			b = map_file(p, c->ring_size, 0, err, errlen);
		}
		if (!b)
			goto fail;
		c->ring[i] = b;
		c->state[i] = (_Atomic uint64_t *)((uint8_t *)b + c->ring[i]->state_off);
		c->data[i] = (uint8_t *)b + c->ring[i]->data_off;
	}
	uint32_t num = atomic_fetch_add(&c->hdr->next_client_id, 1);
	if (num >= SHM_MAX_CLIENTS) {
		snprintf(err, errlen, "shm: more than %d clients connected to %s over the server's life; "
			 "restart the server", SHM_MAX_CLIENTS - 1, c->dir);
		goto fail;
	}
	c->id = ((uint32_t)c->gen << ID_BITS) | num;
	snprintf(p, sizeof p, "%s/mbox-%u", c->dir, num);
	c->mbox = map_file(p, mbox_map_size(c->workers), 1, err, errlen);
	if (!c->mbox)
		goto fail;
	c->mbox->workers = c->workers;
	c->mbox->cap = MBOX_CAP;
	c->mbox->client_pid = (uint32_t)getpid();
	c->mbox->client_id = c->id;
	atomic_thread_fence(memory_order_release);
	c->mbox->magic = SHM_MAGIC;
	return c;
fail:
	shm_cli_close(c);
	return NULL;
}

static uint32_t shm_cli_id(struct tp_client *c) { return c->id; }
static unsigned shm_cli_workers(struct tp_client *c) { return c->workers; }

/* Most request lines a prefetch asks for: beyond a few, the hardware's
 * own prefetcher follows the copy anyway. */
#define PREFETCH_LINES_MAX 4u

static unsigned request_lines(uint32_t len)
{
	unsigned l = (len + CL - 1) / CL;
	return l < PREFETCH_LINES_MAX ? l : PREFETCH_LINES_MAX;
}

/* Starts moving the first `lines` lines of ticket t's request slot here,
 * writable.  Only a hint: it changes no value. */
static inline void prefetch_slot(struct tp_client *c, unsigned wi, uint64_t t, unsigned lines)
{
	const uint8_t *d = c->data[wi] + (t & (c->slots - 1)) * (size_t)c->slot_size;
	for (unsigned i = 0; i < lines; i++)
		prefetch_for_write(d + i * CL);
}

static int server_gone(struct tp_client *c)
{
	if (atomic_load_explicit(&c->hdr->stopping, memory_order_relaxed))
		return 1;
	return kill((pid_t)c->hdr->server_pid, 0) != 0 && errno == ESRCH;
}

/* claim_ticket when its first CAS failed: the slot is not FREE(t) yet
 * (ring full), or never will be (void).  Off the common path. */
static __attribute__((noinline)) int claim_wait(struct tp_client *c, unsigned wi, uint64_t t,
						 char *err, size_t errlen)
{
	_Atomic uint64_t *st = &c->state[wi][(t & (c->slots - 1)) * ST_STRIDE];
	uint64_t v, full_since = 0, spins = 0;
	int r = 0;
	for (;;) {
		v = atomic_load_explicit(st, memory_order_acquire);
		if (v == ST(t, ST_FREE)) {
			if (atomic_compare_exchange_weak_explicit(st, &v, ST(t, ST_WRITE),
					memory_order_acquire, memory_order_relaxed)) {
				r = 1;
				break;
			}
			continue;
		}
		if ((v >> 2) < t && (v & 3) != ST_QUAR) {
			/* The slot's previous lap is not executed yet: ring full. */
			if (!full_since) {
				full_since = clock_ns();
				c->ring_full_waits++;
			}
			cpu_relax();
			if ((++spins & 0xfff) == 0) {
				if (server_gone(c) || c->ring[wi]->generation != c->gen) {
					snprintf(err, errlen, "server at %s is gone or restarted (pid %u); "
						 "reconnect", c->dir, c->hdr->server_pid);
					r = -1;
					break;
				}
				sched_yield();
			}
			continue;
		}
		break;   /* voided under us, or a retired slot: new ticket */
	}
	if (full_since)
		c->ring_full_ns += clock_ns() - full_since;
	if (r == 0)
		c->retries_quarantined++;
	return r;
}

/*
 * Claims the slot of ticket t, already taken on worker wi's ring (FREE ->
 * WRITING), waiting while the slot still holds an older lap (the ring is
 * full).  Returns 1 claimed, 0 the ticket is void (voided under us, or it
 * landed on a retired slot: take a new one), -1 with err (the server is
 * gone or restarted).
 */
static inline int claim_ticket(struct tp_client *c, unsigned wi, uint64_t t, char *err, size_t errlen)
{
	_Atomic uint64_t *st = &c->state[wi][(t & (c->slots - 1)) * ST_STRIDE];
	/* The usual case first, as a CAS without a load before it: a load
	 * would fetch the line shared and the CAS fetch it again to write it. */
	uint64_t v = ST(t, ST_FREE);
	if (atomic_compare_exchange_strong_explicit(st, &v, ST(t, ST_WRITE),
			memory_order_acquire, memory_order_relaxed))
		return 1;
	return claim_wait(c, wi, t, err, errlen);
}

/*
 * Takes a ticket on worker wi's ring and claims its slot (FREE -> WRITING)
 * for a request of len bytes (0 if not known yet: only a prefetch hint).
 * Waits while the ring is full.  Returns 0 with *ticket set, or -1 with err
 * (the server is gone).
 */
int shm_cli_claim(struct tp_client *c, unsigned wi, uint32_t len, uint64_t *ticket, char *err,
		  size_t errlen)
{
	for (;;) {
		if (c->ring[wi]->generation != c->gen) {
			snprintf(err, errlen, "server at %s restarted; reconnect", c->dir);
			return -1;
		}
		/* Rule 1: the ticket is the request's place in the queue. */
		uint64_t t = atomic_fetch_add_explicit(&c->ring[wi]->tail, 1, memory_order_relaxed);
		/* The slot's request lines move to us while the claim's CAS
		 * waits for the state line, not after it. */
		prefetch_slot(c, wi, t, request_lines(len));
		int r = claim_ticket(c, wi, t, err, errlen);
		if (r > 0) {
			*ticket = t;
			return 0;
		}
		if (r < 0)
			return -1;
		/* void: a new ticket */
	}
}

/* claim-stall-ms (fault.h): every 64th nilext write of the process
 * sleeps between its claim and its write, like a writer thread preempted
 * on a loaded host; it fired when the server restarted meanwhile (the
 * write then goes to the old ring). */
static __attribute__((noinline)) void claim_stall(struct tp_client *c, unsigned wi, const void *req,
						   uint32_t len)
{
	static _Atomic uint64_t writes;
	struct wire_req h;
	if (wire_check(req, len, &h, NULL) != 0 || !(h.flags & KV_F_NILEXT) ||
	    (atomic_fetch_add_explicit(&writes, 1, memory_order_relaxed) + 1) % 64)
		return;
	struct timespec ts = { (time_t)(fault_claim_stall_ms / 1000), (long)(fault_claim_stall_ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	if (c->ring[wi]->generation != c->gen)
		fault_fired(FAULT_CLAIM_STALL);
}

/*
 * Writes len bytes into the claimed slot of ticket t and publishes it.
 * Returns 1 if published (committed for oq), 0 if the worker voided the
 * claim meanwhile (not committed: take a new ticket).
 */
int shm_cli_publish(struct tp_client *c, unsigned wi, uint64_t t, const void *req, uint32_t len)
{
	const uint64_t mask = c->slots - 1;
	_Atomic uint64_t *st = &c->state[wi][(t & mask) * ST_STRIDE];
	uint8_t *d = c->data[wi] + (t & mask) * (size_t)c->slot_size;
	if (fault_on(FAULT_CLAIM_STALL))
		claim_stall(c, wi, req, len);
	memcpy(d, req, len);
	if (c->durable)
		persist(d, len, c->is_pmem);       /* the request is in PM ... */
	uint64_t expect = ST(t, ST_WRITE);
	if (!atomic_compare_exchange_strong_explicit(st, &expect, ST(t, ST_PUB),
			memory_order_release, memory_order_relaxed)) {
		/* Quarantined while we wrote: we are done writing, so the slot
		 * may be reused (see ST_GONE above).  Release: our writes into
		 * the slot come before the next lap's. */
		if (expect == ST(t, ST_QUAR))
			atomic_compare_exchange_strong_explicit(st, &expect, ST(t, ST_QUAR) | ST_GONE,
				memory_order_release, memory_order_relaxed);
		c->retries_voided++;
		return 0;
	}
	if (c->durable)
		persist(st, 8, c->is_pmem);        /* ... and so is its place in the queue */
	return 1;
}

/*
 * Checks that up to n requests may be posted to worker wi now.  Returns how
 * many (1..n), 0 when the ring is full (busy: nothing taken), or -1 with
 * err.  Says "busy" before a ticket is taken, so the caller can keep
 * draining its mailbox (the server may be waiting for that) and come back:
 * a ticket, once taken, must be filled.
 */
static inline __attribute__((always_inline)) int post_room(struct tp_client *c, unsigned wi, int n, char *err, size_t errlen)
{
	if (wi >= c->workers) {
		snprintf(err, errlen, "shm: worker %u does not exist (server has %u)", wi, c->workers);
		return -1;
	}
	if (c->evq_head - c->evq_tail + (uint64_t)n > CLI_EVQ) {
		if (c->evq_head - c->evq_tail >= CLI_EVQ) {
			snprintf(err, errlen, "shm: %d deliveries not yet polled; poll before posting more",
				 CLI_EVQ);
			return -1;
		}
		n = (int)(CLI_EVQ - (c->evq_head - c->evq_tail));
	}
	if (c->ring[wi]->generation != c->gen) {
		snprintf(err, errlen, "server at %s restarted (generation %llu, this client joined %llu); "
			 "reconnect", c->dir, (unsigned long long)c->ring[wi]->generation,
			 (unsigned long long)c->gen);
		return -1;
	}
	/* `released` is written by the worker on its own cache line, once per
	 * batch (shm_srv_flush); polling the slot state here instead would
	 * steal the very line the worker must read and write next, and slow
	 * it down.  It only grows and may lag, so a value that says "room" is
	 * right, and the line is read again only when the cached value says
	 * there is too little. */
	uint64_t tail = atomic_load_explicit(&c->ring[wi]->tail, memory_order_relaxed);
	if (tail - c->released_seen[wi] + (uint64_t)n > c->slots)
		c->released_seen[wi] = atomic_load_explicit(&c->ring[wi]->released, memory_order_acquire);
	uint64_t used = tail - c->released_seen[wi];
	if (used >= c->slots) {
		for (int i = 0; i < 32; i++)
			cpu_relax();   /* and do not hammer even that line */
		if (!c->busy[wi]) {
			c->busy[wi] = 1;
			c->ring_full_waits++;
		}
		if ((++c->busy_checks & 1023) == 0 && server_gone(c)) {
			snprintf(err, errlen, "server at %s is gone (pid %u)", c->dir, c->hdr->server_pid);
			return -1;
		}
		return 0;
	}
	c->busy[wi] = 0;
	return used + (uint64_t)n > c->slots ? (int)(c->slots - used) : n;
}

static void delivered(struct tp_client *c, unsigned wi, uint64_t seq)
{
	/* Published: for oq this is the commit (the hardware-ACK analogue). */
	c->posts++;
	c->evq[c->evq_head++ & (CLI_EVQ - 1)] = (struct tp_event){
		.seq = seq, .kind = TP_EV_DELIVERED, .worker = (uint16_t)wi,
	};
}

/* One request into worker wi's ring: a ticket, the slot claimed, the
 * request written and published.  A publish the worker refused (it gave up
 * on a slow writer) committed nothing, so the request takes a new ticket.
 * 0, or -1 with err (the server went away, or the request is too large). */
static inline int claim_publish(struct tp_client *c, unsigned wi, const void *req, uint32_t len,
				char *err, size_t errlen)
{
	for (;;) {
		uint64_t t;
		if (shm_cli_claim(c, wi, len, &t, err, errlen) != 0)
			return -1;
		if (shm_cli_publish(c, wi, t, req, len))
			return 0;
	}
}

/* The ack-before-alloc fault's late allocation (fault.h): a request it
 * reported delivered earlier now takes its place in the queue. */
static int replay_deferred(void *arg, unsigned w, const void *req, uint32_t len)
{
	char err[256];
	return claim_publish(arg, w, req, len, err, sizeof err);
}

static int shm_cli_post(struct tp_client *c, unsigned wi, const void *req, uint32_t len,
			uint64_t seq, char *err, size_t errlen)
{
	if (len > c->slot_size) {
		snprintf(err, errlen, "request of %u B does not fit a %u B receive slot; start the server "
			 "with a larger --slot-size", len, c->slot_size);
		return -1;
	}
	int room = post_room(c, wi, 1, err, errlen);
	if (room <= 0)
		return room < 0 ? -1 : 1;
	/* test-only (fault.h): report the commit now, take the ticket later */
	if (fault_on(FAULT_ACK_BEFORE_ALLOC) && fault_defer(&c->fdq, wi, req, len) == 0) {
		delivered(c, wi, seq);
		return 0;
	}
	if (claim_publish(c, wi, req, len, err, errlen) != 0)
		return -1;
	delivered(c, wi, seq);
	return 0;
}

/*
 * Posts n requests to worker wi, in their order, as n cli_post calls would,
 * but takes their tickets with one fetch-and-add and starts moving all
 * their slots' lines here before the first claim, so that the line
 * transfers overlap instead of following one another.  (One client thread
 * on oq/null keeps up with 5 Mops/s offered with it, and not without:
 * docs/architecture.md.)  Rule 1 holds for each request: its ticket comes from
 * the fetch-and-add, and its commit (the publish) after its slot's claim.
 * A ticket that turns out void goes to nobody: the next request takes the
 * next ticket, and what is left over at the end takes new tickets one at a
 * time, so the order stays the order given (or is left unsent, and counted
 * so, when the ring has no room for it).
 */
#define POST_MANY_MAX 64

/* cli_post_many's answer for r[0..n) sent one cli_post at a time. */
static int post_each(struct tp_client *c, unsigned wi, const struct tp_req *r, int n, char *err,
		     size_t errlen)
{
	int k = 0;
	for (; k < n; k++) {
		int x = shm_cli_post(c, wi, r[k].buf, r[k].len, r[k].seq, err, errlen);
		if (x < 0)
			return k ? k : -1;
		if (x == 1)
			break;   /* busy */
	}
	return k;
}

static int shm_cli_post_many(struct tp_client *c, unsigned wi, const struct tp_req *r, int n,
			     char *err, size_t errlen)
{
	if (n <= 0)
		return 0;
	if (n > POST_MANY_MAX)
		n = POST_MANY_MAX;
	for (int i = 0; i < n; i++)
		if (r[i].len > c->slot_size) {
			n = i ? i : 1;   /* send those before it; it fails on its own */
			break;
		}
	if (n == 1 || fault_on(FAULT_ACK_BEFORE_ALLOC))
		return post_each(c, wi, r, n, err, errlen);
	int room = post_room(c, wi, n, err, errlen);
	if (room <= 0)
		return room;
	n = room;
	const uint64_t mask = c->slots - 1;
	uint64_t t0 = atomic_fetch_add_explicit(&c->ring[wi]->tail, (uint64_t)n, memory_order_relaxed);
	for (int i = 0; i < n; i++) {
		prefetch_for_write(&c->state[wi][((t0 + i) & mask) * ST_STRIDE]);
		prefetch_slot(c, wi, t0 + i, request_lines(r[i].len));
	}
	int j = 0;
	for (int i = 0; i < n; i++) {
		int x = claim_ticket(c, wi, t0 + i, err, errlen);
		if (x < 0)
			return j ? j : -1;   /* the rest is never sent; the worker voids their tickets */
		if (x > 0 && shm_cli_publish(c, wi, t0 + i, r[j].buf, r[j].len)) {
			delivered(c, wi, r[j].seq);
			j++;
		}
	}
	if (j == n)
		return n;
	/* in place of void tickets, one at a time (or the rest when there is
	 * room) */
	int k = post_each(c, wi, r + j, n - j, err, errlen);
	return k < 0 ? (j ? j : -1) : j + k;
}

static void shm_cli_flush(struct tp_client *c)
{
	(void)c;
}

static int shm_cli_poll(struct tp_client *c, struct tp_event *ev, int max)
{
	int k = 0;
	struct mbox_ring *rings = (struct mbox_ring *)(c->mbox + 1);
	uint8_t *data0 = (uint8_t *)(rings + c->workers);

	if (c->fdq)
		fault_defer_flush(c->fdq, 0, replay_deferred, c);
	/* Release what the previous poll handed out. */
	for (unsigned w = 0; w < c->workers; w++)
		if (c->mtail[w] != atomic_load_explicit(&rings[w].tail, memory_order_relaxed))
			atomic_store_explicit(&rings[w].tail, c->mtail[w], memory_order_release);

	while (c->evq_tail < c->evq_head && k < max)   /* DELIVERED, oldest first */
		ev[k++] = c->evq[c->evq_tail++ & (CLI_EVQ - 1)];
	for (unsigned w = 0; w < c->workers && k < max; w++) {
		uint8_t *data = data0 + (size_t)w * MBOX_CAP;
		uint64_t t = c->mtail[w];
		while (k < max) {
			uint64_t pos = t & (MBOX_CAP - 1);
			/* 0: nothing yet (the worker zeroes the word after each record) */
			uint64_t len = atomic_load_explicit((_Atomic uint64_t *)(data + pos), memory_order_acquire);
			if (!len)
				break;
			if (len == MBOX_WRAP) {
				t += MBOX_CAP - pos;
				continue;
			}
			struct wire_resp r;
			wire_decode_resp(data + pos + 8, &r);
			struct tp_event *e = &ev[k++];
			e->seq = r.seq;
			e->status = r.status;
			e->val_len = r.val_len;
			e->kind = r.kind == WIRE_ACK ? TP_EV_ACK : TP_EV_RESP;
			e->op = r.op;
			e->worker = (uint16_t)w;
			e->val = data + pos + 8 + WIRE_RESP_HDR;
			e->t_done = 0;
			t += len;
		}
		c->mtail[w] = t;
	}
	return k;
}

static json_t *shm_cli_stats(struct tp_client *c)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I}",
			 "posts", (json_int_t)c->posts,
			 "ring_full_waits", (json_int_t)c->ring_full_waits,
			 "ring_full_ns", (json_int_t)c->ring_full_ns,
			 "retries_voided", (json_int_t)c->retries_voided,
			 "retries_quarantined", (json_int_t)c->retries_quarantined);
}

static void shm_cli_close(struct tp_client *c)
{
	if (!c)
		return;
	if (c->fdq) {
		fault_defer_flush(c->fdq, 1, replay_deferred, c);
		fault_defer_free(c->fdq);
	}
	if (c->mbox) {
		char p[600];
		snprintf(p, sizeof p, "%s/mbox-%u", c->dir, c->id & ID_MASK);
		/* the server may still hold a mapping; unlinking is still safe */
		unlink(p);
		munmap(c->mbox, mbox_map_size(c->workers));
	}
	for (unsigned i = 0; i < c->workers; i++)
		if (c->ring[i]) {
			if (c->durable)
				pmem_unmap(c->ring[i], c->ring_size);
			else
				munmap(c->ring[i], c->ring_size);
		}
	if (c->hdr)
		munmap(c->hdr, sizeof(struct shm_hdr));
	free(c);
}

const struct transport_ops tp_shm_ops = {
	.name = "shm",
	.version = TRANSPORT_OPS_VERSION,
	.srv_open = shm_srv_open,
	.srv_endpoint = shm_srv_endpoint,
	.srv_poll = shm_srv_poll,
	.srv_req = shm_srv_req,
	.srv_executed = shm_srv_executed,
	.srv_release = shm_srv_release,
	.srv_reply = shm_srv_reply,
	.srv_flush = shm_srv_flush,
	.srv_stats = shm_srv_stats,
	.srv_close = shm_srv_close,
	.cli_open = shm_cli_open,
	.cli_id = shm_cli_id,
	.cli_workers = shm_cli_workers,
	.cli_post = shm_cli_post,
	.cli_post_many = shm_cli_post_many,
	.cli_flush = shm_cli_flush,
	.cli_poll = shm_cli_poll,
	.cli_stats = shm_cli_stats,
	.cli_close = shm_cli_close,
};
