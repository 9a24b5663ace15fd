/*
 * shm_layout.h - the shared-memory transport's files as they lie in memory:
 * the server map, a worker ring's header and its slot state words, a
 * client's mailbox, and the size of each file (shm_internal.h explains the
 * protocol).  Private to bench/transports/shm: the other files of the
 * folder speak the protocol, shm_describe.c only reads it.
 */
#ifndef OQB_SHM_LAYOUT_H
#define OQB_SHM_LAYOUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "settings.h"

#define SHM_MAGIC        0x6f71622d73686d31ull   /* "oqb-shm1" */
#define SHM_VERSION      3                       /* 2: mailbox records without a head; 3: ST_GONE */
#define SHM_MAX_WORKERS  SETMAX_workers          /* server.workers' bound (server.def) */
#define SHM_MAX_CLIENTS  65536
#define ID_BITS          20                      /* client id = gen << 20 | n */
#define ID_MASK          ((1u << ID_BITS) - 1)
#define MBOX_CAP         (1u << 24)              /* bytes per (client, worker); sparse */
#define MBOX_WRAP        0xffffffffu
#define CL               64

#define ST_FREE  0u
#define ST_WRITE 1u
#define ST_PUB   2u
#define ST_QUAR  3u
#define ST(t, k) (((uint64_t)(t) << 2) | (k))
#define ST_GONE  (1ull << 63)   /* on QUARANTINED: its writer gave up */

struct shm_hdr {
	uint64_t magic;
	uint32_t version, workers, ring_slots, slot_size;
	uint32_t server_pid, durable;
	uint64_t generation;
	char system[16];
	_Atomic uint32_t next_client_id;
	_Atomic uint32_t stopping;
};

struct ring_hdr {
	uint64_t magic;
	uint32_t ring_slots, slot_size;
	uint64_t state_off, data_off;     /* offsets from the ring base */
	uint64_t generation;               /* bumped by every (re)start */
	uint32_t durable, pad;
	uint8_t pad0[CL - 48];
	_Atomic uint64_t tail;             /* next ticket (own cache line) */
	uint8_t pad1[CL - 8];
	uint64_t req_to_execute;           /* durable mode (§5.3) */
	uint64_t srq_tail;
	uint8_t pad2[CL - 16];
	_Atomic uint64_t released;         /* tickets below this are released
					      (own line: clients read it to see
					      a full ring without touching the
					      slot states the worker is using) */
	uint8_t pad3[CL - 8];
};

/* Each slot's state word has a cache line of its own, so the worker
 * releasing one slot and a client claiming the next do not share a line. */
#define ST_STRIDE (CL / 8)

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

static inline size_t ring_map_size(unsigned slots, unsigned slot_size)
{
	return sizeof(struct ring_hdr) + (size_t)slots * CL + (size_t)slots * slot_size + CL;
}

static inline size_t mbox_map_size(unsigned workers)
{
	return sizeof(struct mbox_hdr) + workers * sizeof(struct mbox_ring) + (size_t)workers * MBOX_CAP;
}

#endif
