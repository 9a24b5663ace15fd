/*
 * shm_srv.c - the shm server's life: its checks of the geometry, the run
 * directory (or durable mode's fixed one, locked), the worker rings mapped,
 * a previous server's rings sealed and recovered (shm_recover.c) before
 * fresh ones are made, server.map written last for clients to find; stats
 * and close.  The protocol: shm_internal.h; the folder's map: README.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem.h>

#include "rmtree.h"
#include "rundir.h"

#include "shm_internal.h"

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

/* Worker w's ring is the mapping at base: its geometry written into its
 * header, its state words and slot data found from it. */
void shm_ring_attach(struct tp_server *s, struct srv_worker *w, void *base)
{
	w->ring = base;
	w->ring->ring_slots = s->c.ring_slots;
	w->ring->slot_size = s->c.slot_size;
	w->ring->state_off = sizeof(struct ring_hdr);
	w->ring->data_off = sizeof(struct ring_hdr) + (size_t)s->c.ring_slots * CL;
	w->state = (_Atomic uint64_t *)((uint8_t *)base + w->ring->state_off);
	w->data = (uint8_t *)base + w->ring->data_off;
}

struct tp_server *shm_srv_open(const struct tp_srv_conf *c, char *err, size_t errlen)
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
		shm_ring_attach(s, w, base_p);
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
		shm_seal_ring(s, w);
		if (shm_recover_ring(s, i, err, errlen) != 0)
			goto fail;
	}
	/* Fresh rings (after recovery, or new): everything free, nothing to
	 * execute, tickets from 0, a new generation; a recovered ring in a
	 * new file (shm_fresh_ring_file). */
	for (unsigned i = 0; i < c->workers; i++) {
		struct srv_worker *w = &s->w[i];
		if (w->existed && shm_fresh_ring_file(s, i, err, errlen) != 0)
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
		if (w->existed && shm_ring_file_replace(s, i, err, errlen) != 0)
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

const char *shm_srv_endpoint(struct tp_server *s)
{
	return s->dir;
}

json_t *shm_srv_stats(struct tp_server *s)
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

void shm_srv_close(struct tp_server *s)
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
