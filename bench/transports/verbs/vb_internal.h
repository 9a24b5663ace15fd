/*
 * vb_internal.h - what the files of the verbs transport share: the
 * private-data and ring-header constants, the server's and the client's
 * structures, and the functions one file calls in another.  Nothing outside
 * bench/transports/verbs/ includes it; the public face is tp_verbs.h.
 *
 * The folder's map -- the protocol, the private-data byte layouts, where
 * Rule 1 and Rule 2 live, the receive modes, XRC, durable mode, the threads
 * and which file holds what -- is README.md next to this header.
 *
 * Nothing here names MLNX_OFED's experimental verbs (verbs_exp.h): the
 * code that needs them (vb_mp_exp.c) reaches the shared code through what
 * is declared below, and the shared code reaches it only through
 * vb_mp_hooks, which is NULL in a build without it (vb_mp_none.c).  Every
 * file of the folder compiles against rdma-core's headers and, with
 * -DOQB_HAVE_VERBS_EXP=1, against MLNX_OFED 4.6's.
 */
#ifndef OQB_VB_INTERNAL_H
#define OQB_VB_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <linux/types.h>   /* rdma-core's rdma_cma.h uses __be16, which MLNX_OFED 4.x's verbs.h lacks */
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "bits.h"
#include "mpring.h"
#include "recovery.h"
#include "settings.h"
#include "transport.h"
#include "wire.h"

/* private data (README.md: "Connection set-up") */
#define VB_VERSION        1
#define VB_HELLO_MAGIC    0x4f514268u   /* "hBQO" on the wire */
#define VB_ACCEPT_MAGIC   0x4f514261u
#define VB_REJECT_MAGIC   0x4f514272u
#define VB_CANARY_MAGIC   0x4f514263u   /* "cBQO": a canary pinger's hello (vb_canary.c) */
#define VB_HELLO_LEN      32
#define VB_ACCEPT_LEN     96           /* 72 + write1's ring (vb_write1.c) */
#define VB_REJECT_LEN     128

#define VB_HF_DELEGATED   0x1
#define VB_HF_DURABLE     0x2
#define VB_AF_DURABLE     0x1
#define VB_AF_SLOT_RING   0x2
#define VB_AF_PMEM        0x4
#define VB_AF_XRC         0x8          /* requests go over XRC; this QP carries replies */
#define VB_AF_WRITE1      0x10         /* system write1: requests are WRITEs into this QP's ring */
#define VB_AF_SEQWRITE    0x20         /* system seqwrite: FAA on the worker's log tail, then WRITE */
#define VB_XRC_MAX_WORKERS 44          /* SRQ numbers in the 196-byte accept data */
#define VB_XACCEPT_LEN(w) (16 + 4 * (w))

/* server */
#define VB_MAX_WORKERS    SETMAX_workers   /* server.workers' bound (lib/settings/server.def) */
#define VB_LANE_BITS      10
#define VB_MAX_LANES      (1u << VB_LANE_BITS)
#define VB_MAX_BLOCK      ((1u << (32 - VB_LANE_BITS)) - 1)
#define VB_MAX_CONNS      16384
#define VB_INLINE         256          /* inline bytes asked for; devices may grant less */
/* Send-queue depths are 2^k - 1: a provider rounds depth + 1 up to a power
 * of two (rxe: slots of 512 B with 256 B inline), so 256 cost as much as
 * 511, and at the paper's 3,456 QPs a side the rings are most of the
 * guest's memory (docs/scale.md).  A QP carries at most VB_LANE_DEPTH
 * requests of a lane (and, durable, a READ after each), so 127 leaves room;
 * both sides wait for room when a queue is full (vb_reply_room, owner_post). */
#define VB_SRV_SQ         127          /* server send queue per QP (replies) */
#define VB_SRV_SQ_DELEG   1023
#define VB_SRV_SCQ        4096         /* signaled replies in flight per worker */
#define VB_SRV_SBUFS      256          /* registered reply buffers per worker */
#define VB_REPOST_BATCH   32
#define VB_REPLY_WAIT_NS  (200ull * 1000000)
#define VB_ZOMBIE_NS      (5ull * 1000000000)
#define VB_HDR_BYTES      4096
#define VB_RING_MAGIC     0x676e69722d62716full  /* "oqb-ring" */

/* client */
#define VB_LANE_DEPTH     64           /* request slots per lane per worker */
#define VB_CLI_SQ         127          /* client send queue per QP (WRs) */
#define VB_CLI_SQ_DELEG   1023
#define VB_STALL_NS       (30ull * 1000000000)  /* no ACK for this long: the QP is stuck */
#define VB_CM_CHECK_NS    (50ull * 1000000)
#define VB_CM_CHECK_EVERY 16           /* a lane's polls per look at the CM clock */
#define VB_IDLE_CLOCK     32           /* idle owner passes per watchdog clock read */
#define VB_HELD_MAX       256
#define VB_RECV_CHAIN     64           /* receive WRs posted in one call, at most */
#define VB_NOBUF          UINT32_MAX
#define VB_TAG_HEAD       0xfffeu      /* send_tag lane of a one-sided head READ */

/* one-sided systems (vb_write1.c) */
enum { VB_OS_NONE = 0, VB_OS_WRITE1 = 1, VB_OS_SEQWRITE = 2 };
#define VB_TAG_SW         0xfffdu      /* send_tag lane of a seqwrite FAA (vb_seqwrite_cli.c) */
#define VB_SW_INFLIGHT    40           /* seqwrite requests in flight per QP: 3 WRs each, and a READ */
/* seqwrite's region of worker w, which both sides address (the layout:
 * vb_seqwrite.c): its tail, its head, then the state words */
#define VB_SW_TAIL_OFF(w)   ((size_t)(w) * 32)
#define VB_SW_HEAD_OFF(w)   (2048 + (size_t)(w) * 32)
#define VB_SW_STATES_OFF    4096u
#define VB_W1_RINGS       64           /* write1 rings (connections) per worker */
#define VB_W1_SLOTS       64           /* entries per write1 ring (K) */
enum { W1_FREE = 0, W1_LIVE = 1, W1_CLOSING = 2 };
struct vb_w1ring {
	_Atomic int state;         /* W1_*: the CM thread takes and closes, the worker frees */
	uint64_t seen;             /* entries discovered (worker) */
	uint64_t consumed;         /* entries released (worker); published as the head word */
};

enum { RM_SRQ = 0, RM_SLOT_RING = 1, RM_MP = 2 };

/* Private-data fields are little-endian (never raw structs): put16/get16
 * and kin from lib/bits.h, like every other format in the tree. */

/* ------------------------------------------------------------------ */
/* server                                                              */

/*
 * The first page of every worker's receive ring.  In durable mode it is
 * the head of the ring file, so its layout is the recovery work's input:
 * ReqToExecute and SRQTail on cache lines of their own (§5.3).
 */
struct vb_ring_hdr {
	uint64_t magic;
	uint32_t version, worker;
	uint32_t ring_slots, slot_size;
	uint64_t data_off;             /* slots start here (slot_ring), or 0 */
	uint32_t clean;                /* 1 after a clean shutdown */
	uint32_t pad0;
	uint8_t pad1[64 - 40];
	uint64_t flush_word;           /* what clients' durable 8-byte READs read */
	uint8_t pad2[56];
	uint64_t req_to_execute;       /* first ticket not yet executed */
	uint8_t pad3[56];
	uint64_t srq_tail;             /* tickets posted to the SRQ so far */
	uint8_t pad4[56];
};

enum { CS_FREE = 0, CS_LIVE = 1, CS_CLOSING = 2 };

enum { CK_RC = 0, CK_XREPLY = 1, CK_XRECV = 2 };

struct vb_sconn {
	struct rdma_cm_id *id;
	uint8_t kind;                  /* CK_*: RC on a worker's SRQ, or the XRC pair */
	unsigned worker;
	uint32_t block, pid, thread;
	_Atomic uint32_t gen;          /* bumped on reuse; tags reply wr_ids */
	_Atomic uint32_t inflight;     /* replies posted, not yet completed */
	uint32_t sq_depth, max_inline;
	uint8_t state, delegated, established, stalled;
	int w1ring;                    /* write1: the ring this QP writes, or -1 */
	uint64_t serial;               /* order of acceptance (seqwrite's quarantine) */
	uint64_t sw_landed;            /* seqwrite: 1 + the last ticket this QP landed (worker) */
	/* seqwrite: the QP may still land a WRITE or an FAA in the log: set
	 * before the accept, cleared once rdma_disconnect has put it in the
	 * error state; written and read under its worker's mu, and the
	 * quarantine check reads worker, serial and sw_landed only while it
	 * is set (vb_seqwrite.c, quarantine_over) */
	uint8_t sw_open;
	uint64_t closing_since;
	/* CK_XREPLY: every worker replies on this QP, so it has its own lock,
	 * send CQ and reply buffers (one per send-queue entry) */
	pthread_mutex_t xmu;
	int xmu_init;
	struct ibv_cq *xcq;
	uint8_t *xbuf;
	struct ibv_mr *xmr;
	uint64_t xposted;
};

struct vb_worker {
	struct tp_server *s;
	unsigned idx;
	struct ibv_srq *srq;
	uint32_t srqn;                 /* XRC: the SRQ number clients send to */
	struct ibv_cq *rcq, *scq;
	/* receive ring */
	uint8_t *map;
	size_t map_len;
	int pmem_file, is_pmem, existed, recovered;
	struct recovery_report rec;    /* what the restart replayed from this ring */
	struct vb_ring_hdr *hdr;
	uint8_t *slots;                /* file- or ring-backed slots, contiguous */
	uint8_t **bufs;                /* srq mode in DRAM: one buffer per slot */
	struct ibv_mr *ring_mr, *hdr_mr, **buf_mr;
	uint32_t *len;                 /* per position: byte_len of the arrival */
	uint64_t *tick;                /* per position: ticket of the arrival */
	uint8_t *ok;                   /* per position: completion status was success */
	uint64_t next_post;            /* next ticket to post (mp: next WQE sequence) */
	struct mpring *mp;             /* mp: placement order of the striding ring */
	size_t *moff;                  /* mp: per position: byte offset of the message */
	size_t mp_wqe_bytes;
	uint64_t batch_first;          /* tickets released, not yet reposted */
	unsigned batch_n;
	/* replies */
	pthread_mutex_t mu;            /* conn table: worker vs the CM thread */
	uint32_t *by_block;            /* client block -> conn index + 1 */
	uint32_t nblock;
	uint8_t *sbuf;
	struct ibv_mr *sbuf_mr;
	uint16_t sfree[VB_SRV_SBUFS];
	unsigned nsfree, scq_out;
	/* counters */
	uint64_t arrivals, recv_errors, post_errors, post_calls, replies, reply_inline, reply_drops;
	uint64_t reply_too_big, unknown_client, send_errors, reply_waits, log_budget;
	_Atomic unsigned qps;
	const char *last_recv_error;
	/* write1 (vb_write1.c) */
	uint8_t *w1_mem;
	size_t w1_len;
	struct ibv_mr *w1_mr;
	struct vb_w1ring *w1;
	uint16_t *w1_ring;             /* per ticket & mask: ring of the entry */
	uint32_t *w1_pos;              /* per ticket & mask: slot in that ring */
	uint64_t w1_next, w1_released;
	unsigned w1_rr;
	/* seqwrite (vb_seqwrite.c) */
	uint8_t *sw_mem;
	size_t sw_len;
	struct ibv_mr *sw_mr;
	struct ibv_cq *sw_cq;
	struct ibv_qp *sw_lb[2];       /* the loopback pair: [0] posts, [1] answers */
	uint8_t *sw_fin;
	uint64_t *sw_void;             /* per position: 1 + conn_serial at the void, or 0 */
	uint64_t sw_next, sw_released, sw_rearm, sw_head_pub, sw_wait_since;
	unsigned sw_lb_out;
	int sw_void_done;
	uint64_t sw_voided, sw_void_lost, sw_quarantine_ended, sw_marker_late, sw_lb_errors;
};

/*
 * A receive mode whose data path is not the ticketed SRQ of srq and
 * slot_ring: the worker calls these instead of its own.  Today only mp
 * (vb_mp_exp.c); vb_mp_hooks is NULL where this build lacks it.
 */
struct vb_recv_hooks {
	/* the worker's ring, MRs, receive CQ and SRQ, WQEs posted */
	int (*worker_init)(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen);
	int (*poll)(struct tp_server *s, struct vb_worker *w, struct tp_arrival *a, int max);
	void (*release)(struct tp_server *s, struct vb_worker *w, uint64_t slot);
};
extern const struct vb_recv_hooks *const vb_mp_hooks;

struct tp_server {
	struct tp_srv_conf c;
	int mode;
	int os;                        /* VB_OS_*: a one-sided system's data path */
	const struct vb_recv_hooks *hooks;  /* mode's own data path, or NULL */
	char endpoint[160], host[128], devname[64], system[17];
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	struct rdma_cm_id *listen_x;   /* XRC: request connections (RDMA_PS_IB) */
	struct ibv_xrcd *xrcd;
	unsigned qps_xrecv, qps_xreply;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr da;
	uint8_t port_num;
	int gid_index;
	uint64_t mask;
	pthread_t cm_th;
	int cm_started;
	_Atomic int stop;
	/* connections: owned by the CM thread */
	struct vb_sconn *conns;
	uint32_t *cfree;
	unsigned ncfree, conns_hi;
	uint32_t next_block;
	_Atomic uint64_t conn_serial;  /* connections accepted (vb_sconn.serial) */
	uint64_t sys_hash;
	unsigned rnr_set_failed;
	uint64_t conn_total, conn_rejected, disconnects, conn_delegated;
	_Atomic unsigned qps_live;
	unsigned qps_peak;
	char last_reject[VB_REJECT_LEN];
	struct vb_worker *w;
	struct rdmactr_snap *ctr0;     /* the port's counters at open (vb_counters.c) */
};

static inline uint8_t *slot_buf(const struct tp_server *s, const struct vb_worker *w, uint64_t pos)
{
	return w->bufs ? w->bufs[pos] : w->slots + pos * s->c.slot_size;
}

static inline uint32_t slot_lkey(const struct vb_worker *w, uint64_t pos)
{
	return w->buf_mr ? w->buf_mr[pos]->lkey : w->ring_mr->lkey;
}

/* ------------------------------------------------------------------ */
/* client                                                              */

struct vb_ev {                 /* an event on its way from a QP's owner to a lane */
	uint64_t seq;
	uint32_t status, val_len;
	uint32_t buf;              /* receive buffer of a response, or VB_NOBUF */
	uint8_t kind, op;
	uint64_t t;                /* tp_event.t_done: the CQ poll's clock, or 0 */
};

struct vb_lq {                 /* one lane's traffic to one worker */
	_Atomic uint64_t head;     /* requests written (the lane) */
	uint64_t posted;           /* requests posted (the QP's owner) */
	uint64_t done;             /* requests whose send completed (owner) */
	_Atomic uint64_t done_pub; /* done, published to the lane */
	uint64_t *mseq;            /* per request slot: seq, length, durable */
	uint32_t *mlen;
	uint8_t *mdur;
	struct vb_ev *ev;          /* events for the lane (evcap) */
	_Atomic uint64_t ev_head;  /* owner */
	_Atomic uint64_t ev_tail;  /* lane */
	uint8_t full;              /* the lane found every slot in flight and has not posted since */
};

struct vb_lane {
	struct vb_group *g;
	unsigned idx, evcap;
	uint32_t client_id;
	uint8_t *sbuf;             /* workers x depth slots, then workers x 64 B READ targets */
	struct ibv_mr *mr;
	struct vb_lq *q;
	uint32_t held[VB_HELD_MAX];/* response buffers handed out by the last poll */
	unsigned nheld, rr, cm_tick;
	uint64_t posts, full_waits, busy_returns, delivered, acks, resps;   /* full_waits: episodes, as shm counts them */
};

struct vb_cqp {                /* the QP to one server worker */
	struct vb_group *g;
	unsigned w;
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	pthread_mutex_t mu;        /* held by the QP's current owner */
	pthread_mutex_t *lk;       /* &mu; with XRC every worker's shares the group's xmu */
	int mu_init, connected;
	int shared;                /* XRC: qp, scq and rcq belong to the group */
	uint32_t srqn;             /* XRC: remote_srqn of this worker's SRQ */
	uint32_t sq_depth, sq_used, max_inline;
	uint64_t read_addr;
	uint32_t read_rkey;
	unsigned rr, rnr_retry, min_rnr;
	uint64_t progress_ns;      /* last send completion, or when the SQ was empty */
	unsigned idle;             /* owner passes without progress (watchdog) */
	int sq_full;               /* the last post left requests for lack of room */
	/* counters, under mu */
	uint64_t sends, inline_sends, reads, post_calls, send_completions, responses, signaled, polls;
	uint64_t stray, bad, overflow;
	/* one-sided systems: the remote ring, its cached head (vb_write1.c) */
	uint64_t os_addr, os_head_addr, os_head;
	uint32_t os_rkey, os_k;
	int os_hread, os_waiting;
	uint64_t os_full_waits, os_head_reads;
	uint64_t os_slots_off;         /* seqwrite: where the log's slots start */
	uint64_t *sw_tick;             /* seqwrite, per request slot: its ticket */
	uint8_t *sw_stage;             /* seqwrite, per request slot: SW_* */
	uint8_t *sw_fin;               /* seqwrite, per request slot: 1 committed, not yet counted done;
				        * 2 the entry is shaped in the buffer (a retry) */
	uint64_t sw_retries, sw_commits;
};

struct vb_group {              /* QPs to every worker of one server */
	char endpoint[192];
	struct sockaddr_storage dst;
	unsigned port;
	int delegated, durable_srv;
	int stamp_sends;               /* owner_poll stamps send completions (set on connecting) */
	int os;                        /* VB_OS_*: the server's one-sided data path */
	unsigned refs;
	unsigned workers, slot_size, ring_slots, min_rnr, sflags, depth, rdepth, sq_depth;
	uint32_t block, server_pid;
	char server_system[17];
	struct rdma_event_channel *ch;
	struct ibv_context *ctx;
	struct ibv_device_attr da;
	struct ibv_pd *pd;
	struct ibv_srq *srq;
	uint8_t *rbuf;
	struct ibv_mr *rmr;
	struct vb_cqp *q;          /* VB_MAX_WORKERS */
	/* XRC (the server said VB_AF_XRC): q[0]'s RC QP only receives replies;
	 * requests to every worker go over one XRC_SEND QP */
	int xrc, xconnected, xmu_init;
	struct rdma_cm_id *xid;
	struct ibv_cq *xscq, *rep_scq, *rep_rcq;
	pthread_mutex_t xmu;
	_Atomic(struct vb_lane *) lanes[VB_MAX_LANES];
	_Atomic unsigned lanes_hi;
	_Atomic int broken;
	char err[400];
	pthread_mutex_t err_mu, cm_mu;
	_Atomic uint64_t next_cm_check;
};

struct tp_client {
	struct tp_cli_conf c;
	struct vb_group *g;
	struct vb_lane *l;
};

/* ------------------------------------------------------------------ */
/* between the files                                                   */

/* vb_util.c: helpers of both sides */
uint64_t vb_fnv64(const char *s);
unsigned vb_pow2_at_least(unsigned v);
int vb_wait_readable(int fd, int ms);
void vb_host_str(const struct sockaddr *sa, char *buf, size_t len);
int vb_set_min_rnr(struct ibv_qp *qp, unsigned code);
struct rdma_event_channel *vb_cm_channel(char *err, size_t errlen);
/* The next event on ch (non-blocking), waiting until deadline (clock_ns):
 * 0 with *ev (the caller acks it), 1 when the deadline passed, -1 with
 * errno when the channel could not be read. */
int vb_cm_next(struct rdma_event_channel *ch, uint64_t deadline, struct rdma_cm_event **ev);
/* Refuses a connect request with the reject private data (README.md:
 * u32 "rBQO", u16 version, u16 code, the reason as text). */
void vb_reject(struct rdma_cm_id *id, uint16_t version, uint16_t code, const char *why);
/* The reason in an oqbench reject (a REJECTED event with that private
 * data) into buf: 1, or 0 when the event carries none. */
int vb_reject_text(const struct rdma_cm_event *ev, char *buf, size_t len);
uint8_t *vb_alloc_pages(size_t bytes);
int vb_create_qp(struct rdma_cm_id *id, const struct ibv_qp_init_attr_ex *attr, uint32_t *max_inline);
int vb_create_rc_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
		    struct ibv_srq *srq, uint32_t sq_depth, uint32_t *max_inline);
void vb_destroy_id(struct rdma_cm_id *id);
void vb_destroy_cq(struct ibv_cq *cq);
void vb_dereg_mr(struct ibv_mr *mr);
void vb_destroy_srq(struct ibv_srq *srq);
void vb_dealloc_pd(struct ibv_pd *pd);
void vb_destroy_channel(struct rdma_event_channel *ch);
int vb_post_recv_chain(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_sge *sg, unsigned n);

/* vb_devices.c: what the device and its ports are */
const char *vb_port_state_str(enum ibv_port_state s);
int vb_mtu_bytes(enum ibv_mtu m);
void vb_gid_str(const union ibv_gid *g, char *buf, size_t len);
void vb_device_names(char *buf, size_t len);

/* vb_ring.c: a worker's receive ring (srq, slot_ring) and its data path */
typedef void vb_wqe_fn(const struct tp_server *s, const struct vb_worker *w, uint64_t q, struct ibv_sge *sg);
int vb_w_may_log(struct vb_worker *w);
int vb_post_wqes(struct tp_server *s, struct vb_worker *w, uint64_t first, unsigned n, vb_wqe_fn *fill,
		 const char *what);
struct ibv_mr *vb_reg_or_explain(struct tp_server *s, void *addr, size_t len, int access, const char *what,
				 unsigned wi, char *err, size_t errlen);
int vb_map_anon(struct vb_worker *w, size_t bytes, const char *what, size_t shown, char *err, size_t errlen);
int vb_ring_hdr_init(struct tp_server *s, struct vb_worker *w, uint64_t data_off, char *err, size_t errlen);
int vb_slot_records(struct tp_server *s, struct vb_worker *w, int offsets);
int vb_worker_init(struct tp_server *s, unsigned i, char *err, size_t errlen);
void vb_worker_free(struct tp_server *s, struct vb_worker *w);
int vb_srv_poll(struct tp_server *s, unsigned wi, struct tp_arrival *a, int max);
const void *vb_srv_req(struct tp_server *s, unsigned wi, uint64_t slot, size_t *avail);
void vb_srv_release(struct tp_server *s, unsigned wi, uint64_t slot);
void vb_srv_flush(struct tp_server *s, unsigned wi);

/* vb_durable.c: ring files and their recovery */
void vb_persist(struct vb_worker *w, const void *p, size_t n);
int vb_map_ring_file(struct tp_server *s, struct vb_worker *w, size_t bytes, char *err, size_t errlen);
int vb_recover_ring(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen);
void vb_srv_persist_req(struct tp_server *s, unsigned wi, uint64_t slot);

/* vb_reply.c: replies from a worker */
int vb_reap_sends(struct tp_server *s, struct vb_worker *w);
int vb_reply_room(struct vb_worker *w, struct vb_sconn *c, uint32_t client_id, uint32_t len);
void vb_encode_reply(uint8_t *b, const struct wire_resp *rr, const void *val);
int vb_post_reply(struct vb_worker *w, struct vb_sconn *c, uint32_t client_id, const void *b, uint32_t len,
		  uint32_t lkey, unsigned flags, uint64_t wr_id);
int vb_srv_reply(struct tp_server *s, unsigned wi, uint32_t client_id, const struct wire_resp *r, const void *val);

/* vb_srv_cm.c: the server's connection-manager thread */
void vb_accept_head(uint8_t *acc, uint32_t block, unsigned workers, unsigned flags);
void vb_accept_conn(struct tp_server *s, struct rdma_cm_event *ev, struct vb_sconn *c, const uint8_t *acc,
		    unsigned acc_len, const char *peer);
void vb_conn_close(struct tp_server *s, struct vb_sconn *c);
void vb_reap_zombies(struct tp_server *s, int force);
void *vb_cm_main(void *arg);

/* vb_counters.c: the device's port counters over a process's life */
struct rdmactr_snap;
struct rdmactr_snap *vb_ctr_begin(struct ibv_context *ctx, unsigned port);
json_t *vb_ctr_json(const struct rdmactr_snap *start);
void vb_ctr_cli_begin(const struct tp_client *c);
json_t *vb_ctr_cli_json(const struct tp_client *c);   /* NULL: c does not own the process's snapshot */
void vb_ctr_cli_end(const struct tp_client *c);

/* vb_srv.c: opening, stats and closing of a server */
struct tp_server *vb_srv_open(const struct tp_srv_conf *c, char *err, size_t errlen);
const char *vb_srv_endpoint(struct tp_server *s);
json_t *vb_srv_stats(struct tp_server *s);
void vb_srv_close(struct tp_server *s);

/* vb_xrc.c: the XRC path of both sides */
int vb_xreply_init(struct tp_server *s, struct vb_sconn *c);
void vb_xreply_free(struct vb_sconn *c);
void vb_xreply_reap(struct vb_sconn *c);
int vb_xrc_accept(struct tp_server *s, struct rdma_cm_event *ev, struct vb_sconn *c, const char *peer);
int vb_xrc_reply(struct tp_server *s, struct vb_worker *w, struct vb_sconn *c, uint32_t client_id,
		 const struct wire_resp *rr, const void *val, uint32_t len);
int vb_connect_xrc(struct vb_group *g, const struct tp_cli_conf *cc, uint64_t started, uint64_t deadline,
		   char *err, size_t errlen);

/* vb_write1.c: system write1's rings (server) and WRITEs (client) */
int vb_w1_init(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen);
void vb_w1_free(struct vb_worker *w);
int vb_w1_take(struct tp_server *s, struct vb_worker *w);
void vb_w1_close(struct vb_worker *w, int r);
void vb_w1_accept(struct tp_server *s, struct vb_worker *w, int r, uint8_t *acc);
int vb_w1_poll(struct tp_server *s, unsigned wi, struct tp_arrival *a, int max);
const void *vb_w1_req(struct tp_server *s, unsigned wi, uint64_t slot, size_t *avail);
void vb_w1_release(struct tp_server *s, unsigned wi, uint64_t slot);
int vb_w1_fill(struct vb_group *g, struct vb_cqp *q, struct vb_lane *L, uint64_t n, uint8_t *buf, uint32_t len,
	       struct ibv_send_wr *wr, struct ibv_sge *sg, int *rd_used);
void vb_os_entry(struct vb_group *g, struct vb_cqp *q, struct vb_lane *L, uint8_t *buf, uint32_t len,
		 int shaped, uint64_t raddr, uint64_t marker, struct ibv_send_wr *wr, struct ibv_sge *sg);
const void *vb_os_req(const uint8_t *slot, unsigned slot_size, size_t *avail);
void vb_w1_head_done(struct vb_group *g, struct vb_cqp *q);

/* vb_seqwrite.c: system seqwrite's log (server) */
int vb_sw_init(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen);
void vb_sw_free(struct vb_worker *w);
void vb_sw_accept(struct tp_server *s, struct vb_worker *w, uint8_t *acc);
int vb_sw_poll(struct tp_server *s, unsigned wi, struct tp_arrival *a, int max);
const void *vb_sw_req(struct tp_server *s, unsigned wi, uint64_t slot, size_t *avail);
void vb_sw_release(struct tp_server *s, unsigned wi, uint64_t slot);
json_t *vb_sw_stats(struct vb_worker *w);

/* vb_seqwrite_cli.c: system seqwrite's client side (the QP's owner) */
int vb_sw_post_new(struct vb_group *g, struct vb_cqp *q, struct vb_lane *L);
void vb_sw_done(struct vb_group *g, struct vb_cqp *q, const struct ibv_wc *wc, uint64_t t);
void vb_sw_room(struct vb_group *g, struct vb_cqp *q);
int vb_push_ev(struct vb_lane *L, unsigned w, const struct vb_ev *e);

/* vb_cli_conn.c: a client's connections */
int vb_canon_endpoint(const char *ep, struct sockaddr_storage *dst, unsigned *port, char *out, size_t outlen,
		      char *err, size_t errlen);
int vb_hello_connect(struct vb_group *g, const struct tp_cli_conf *cc, struct rdma_cm_id *id, unsigned w,
		     const char *doing, uint64_t started, uint64_t deadline, struct rdma_cm_event **ev,
		     char *err, size_t errlen);
struct ibv_mr *vb_cli_reg(struct vb_group *g, void *buf, size_t bytes, const char *what, char *err,
			  size_t errlen);
struct vb_group *vb_group_open(const struct tp_cli_conf *cc, int delegated, char *err, size_t errlen);
void vb_group_destroy(struct vb_group *g);

/* vb_cli_owner.c: the QP owner's work (flat combining) */
void vb_group_break(struct vb_group *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void vb_group_err(struct vb_group *g, char *err, size_t errlen);
void vb_repost_bufs(struct vb_group *g, const uint32_t *bi, unsigned n);
enum { VB_POST_ONLY = 0, VB_REAP = 1 };
int vb_combine(struct vb_group *g, unsigned w, int how);
int vb_post_direct(struct vb_group *g, struct vb_lane *L, unsigned w, const void *req, uint32_t len);
void vb_cm_check(struct vb_group *g);

/* vb_cli.c: client threads (lanes) and the client operations */
struct tp_client *vb_cli_open(const struct tp_cli_conf *cc, char *err, size_t errlen);
uint32_t vb_cli_id(struct tp_client *c);
unsigned vb_cli_workers(struct tp_client *c);
int vb_cli_post(struct tp_client *c, unsigned wi, const void *req, uint32_t len, uint64_t seq, char *err,
		size_t errlen);
int vb_cli_post_many(struct tp_client *c, unsigned wi, const struct tp_req *r, int n, char *err,
		     size_t errlen);
void vb_cli_flush(struct tp_client *c);
int vb_cli_poll(struct tp_client *c, struct tp_event *ev, int max);
json_t *vb_cli_stats(struct tp_client *c);
void vb_cli_close(struct tp_client *c);

#endif
