/*
 * tp_verbs.c - the verbs transport: requests travel as RDMA SENDs on
 * reliable-connected (RC) QPs into one shared receive queue (SRQ) per server
 * worker (paper §5.1), over rdma-core: librdmacm connects, libibverbs moves
 * the data.  It runs unchanged on ConnectX NICs and on Soft-RoCE (rxe).
 *
 * Endpoint "verbs:ADDR:PORT" (IPv6 as "verbs:[ADDR]:PORT"): the address and
 * rdma_cm port the server listens on.  The address picks the device.
 *
 * Connection set-up (rdma_cm, RDMA_PS_TCP).  A client thread connects one
 * QP to every server worker (C x Ct x St QPs in all); with delegation the
 * threads of a process share one QP per worker (C x St, §5.2.2).  The
 * connect private data is a versioned hello, the accept private data the
 * server's geometry; both are little-endian byte layouts (never raw structs):
 *
 *   off  hello (32 B of the 56 allowed)   accept (72 B of 196)
 *     0  u32 magic "hBQO"                 u32 magic "aBQO"
 *     4  u16 version                      u16 version
 *     6  u16 flags: DELEGATED, DURABLE    u16 status (0)
 *     8  u32 client block (0 = assign)    u32 client block
 *    12  u16 worker                       u16 workers
 *    14  u16 lanes                        u16 flags: DURABLE, SLOT_RING, PMEM
 *    16  u32 receive depth                u32 slot_size
 *    20  u32 pid                          u32 ring_slots
 *    24  u32 thread                       u64 READ region address
 *    32                                   u32 READ region rkey
 *    36                                   u8  min_rnr_timer
 *    40                                   u64 system name hash (FNV-1a)
 *    48                                   char[16] system name
 *    64                                   u32 server pid
 * A refused connection carries "rBQO", version, a u16 code and a text
 * reason (<= 120 B) in the reject private data, shown to the user verbatim.
 *
 * Client ids.  The server hands each client (thread, or delegated process)
 * a block number on its first connection; client_id = block << 10 | lane,
 * where lane is the thread (0 without delegation).  The server routes a
 * reply by block to the QP that client opened to that worker; the client
 * routes it by lane to the thread that sent the request.
 *
 * Rule 1 (allocation in order, ACK after allocation).  Each worker posts
 * receive WQEs to its SRQ with wr_id = a ticket t that grows by one per
 * post, into buffer t % ring_slots.  SRQ WQEs are consumed in posting
 * order (mlx5: "taken from the head"; rxe: queue head), so the ticket in a
 * receive completion IS the request's place in the queue, and the RC
 * hardware ACK of the SEND comes only after a WQE was taken (no WQE: RNR
 * NAK, and the client retries forever, rnr_retry = 7).  For an oq nilext
 * request that ACK -- the signaled SEND's completion at the client -- is the
 * commit: TP_EV_DELIVERED.
 *
 * Rule 2 is the worker's: srv_poll reports arrivals {slot = ticket} in CQ
 * order, which across QPs may differ from slot order; the executor (exec.h)
 * runs them in slot order and srv_release reposts ticket t + ring_slots into
 * the same buffer.  Release happens in slot order, so posting order stays
 * ticket order.  A receive completion with an error status is counted,
 * logged and reported as a voided arrival (never executed).
 *
 * Receive-buffer modes (tp_srv_conf.recv_mode):
 *   srq        one separately allocated and registered buffer per slot,
 *              reposted one WQE at a time (an RPC framework's usual shape);
 *   slot_ring  one contiguous registered ring; WQEs point at consecutive
 *              slots in address order and are reposted in linked batches:
 *              the portable stand-in for the multi-packet SRQ, which it is
 *              not (one WQE per message; labelled so in the stats);
 *   mp         the real multi-packet SRQ of MLNX_OFED 4.x (verbs_exp.h),
 *              compiled in only where that header has it; never run here
 *              (see "recv_mode mp" below and docs/verbs.md).
 *
 * XRC (--xrc on the server; clients follow).  Each client unit opens an RC
 * connection, which becomes the QP every worker replies on, and one XRC
 * connection (RDMA_PS_IB) whose SENDs name a worker's XRC SRQ: 2 server QPs
 * per unit instead of one per unit and worker.  Never run here (rxe has no
 * XRC); see connect_xrc, xrc_accept and xrc_reply.
 *
 * Durable mode (§5.3).  The ring lives in a libpmem-mapped file
 * (<pmem_path>/vring-<W>) whose first page holds ReqToExecute (first ticket
 * not yet executed, updated on release) and SRQTail (tickets posted), for
 * the recovery scan.  A client marks durable nilext requests WIRE_F_DURABLE;
 * the transport then posts the SEND unsignaled followed on the same QP by a
 * signaled 8-byte RDMA READ of the worker's ring header: the READ's
 * completion (which cannot overtake the SEND's placement) is the commit.
 *
 * Replies (software ACKs and responses) are SENDs from the server QP into
 * receive buffers the client keeps posted on its own SRQ (one per client
 * thread or delegated process), slot_size bytes each: a response is at most
 * a request's size, and a larger one is replaced by a KV_ERR_NOSPACE
 * status rather than breaking the client's QP with a length error.
 *
 * Threads.  Server: each worker thread owns its SRQ, CQs and reposts; one
 * connection-manager thread accepts and tears down QPs and is the only
 * other thread that touches a worker's connection table (under its mutex).
 * Client: one lane per thread; requests go through a per-lane ring that the
 * QP's current owner (whoever holds the QP's lock: flat combining) posts,
 * and the owner routes completions and responses back to the lanes.
 * Without delegation a tp_client has one lane and always owns its QPs.
 * Every wait has a deadline; nothing spins forever.
 */
#if OQB_HAVE_VERBS_TRANSPORT
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#if OQB_HAVE_VERBS_EXP
#include <infiniband/verbs_exp.h>
#endif
#include <rdma/rdma_cma.h>
#include <libpmem.h>

#include "clock.h"
#include "log.h"
#include "mpring.h"
#include "recovery.h"
#include "transport.h"
#include "tp_verbs.h"
#include "wire.h"

#define VB_VERSION        1
#define VB_HELLO_MAGIC    0x4f514268u   /* "hBQO" on the wire */
#define VB_ACCEPT_MAGIC   0x4f514261u
#define VB_REJECT_MAGIC   0x4f514272u
#define VB_HELLO_LEN      32
#define VB_ACCEPT_LEN     72
#define VB_REJECT_LEN     128

#define VB_HF_DELEGATED   0x1
#define VB_HF_DURABLE     0x2
#define VB_AF_DURABLE     0x1
#define VB_AF_SLOT_RING   0x2
#define VB_AF_PMEM        0x4
#define VB_AF_XRC         0x8          /* requests go over XRC; this QP carries replies */
#define VB_XRC_MAX_WORKERS 44          /* SRQ numbers in the 196-byte accept data */
#define VB_XACCEPT_LEN(w) (16 + 4 * (w))

#define VB_MAX_WORKERS    64
#define VB_LANE_BITS      10
#define VB_MAX_LANES      (1u << VB_LANE_BITS)
#define VB_MAX_BLOCK      ((1u << (32 - VB_LANE_BITS)) - 1)
#define VB_MAX_CONNS      16384
#define VB_INLINE         256          /* inline bytes asked for; devices may grant less */
#define VB_SRV_SQ         256          /* server send queue per QP (replies) */
#define VB_SRV_SQ_DELEG   1024
#define VB_SRV_SCQ        4096         /* signaled replies in flight per worker */
#define VB_SRV_SBUFS      256          /* registered reply buffers per worker */
#define VB_REPOST_BATCH   32
#define VB_REPLY_WAIT_NS  (200ull * 1000000)
#define VB_ZOMBIE_NS      (5ull * 1000000000)
#define VB_HDR_BYTES      4096
#define VB_RING_MAGIC     0x676e69722d62716full  /* "oqb-ring" */

#define VB_LANE_DEPTH     64           /* request slots per lane per worker */
#define VB_CLI_SQ         256          /* client send queue per QP (WRs) */
#define VB_CLI_SQ_DELEG   1024
#define VB_STALL_NS       (30ull * 1000000000)  /* no ACK for this long: the QP is stuck */
#define VB_CONNECT_MS     15000
#define VB_CM_CHECK_NS    (50ull * 1000000)
#define VB_HELD_MAX       256

enum { RM_SRQ = 0, RM_SLOT_RING = 1, RM_MP = 2 };
static const char *const rm_label[] = {
	"srq", "slot_ring (MP SRQ emulation: one WQE per slot)",
	"mp (multi-packet SRQ, MLNX_OFED experimental verbs)",
};
#define VB_MP_LOG_STRIDE  6            /* 64 B strides: WIRE_ALIGN, Rowan's choice */
#define VB_MP_LOG_STRIDES 10           /* 1024 strides = 64 KiB per WQE */

/* ------------------------------------------------------------------ */
/* small helpers                                                       */

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const uint8_t *p) { return get16(p) | (uint32_t)get16(p + 2) << 16; }
static uint64_t get64(const uint8_t *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }

static uint64_t fnv64(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; s && *s; s++) {
		h ^= (uint8_t)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

static unsigned pow2_at_least(unsigned v)
{
	unsigned p = 1;
	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Appends ", name" for every RDMA device to buf (or " (none)"). */
static void device_names(char *buf, size_t len)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; l && i < n && o + 2 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", ibv_get_device_name(l[i]));
	if (!n)
		snprintf(buf, len, "none (no RDMA device on this host; for Soft-RoCE: "
			 "rdma link add rxe0 type rxe netdev IFACE)");
	if (l)
		ibv_free_device_list(l);
}

static const char *cm_reject_reason(int status)
{
	/* IBTA CM REJ reason codes that a connecting client can meet. */
	switch (status) {
	case 1: return "no QP available at the server";
	case 3: return "the server has no resources";
	case 4: return "timeout";
	case 8: return "nothing listens on that port (invalid service ID)";
	case 10: return "stale connection";
	case 28: return "refused by the server";
	default: return "see the IBTA CM REJ reason codes";
	}
}

/* Parses "verbs:ADDR:PORT" (or "ADDR:PORT", "[V6]:PORT") into dst. */
static int parse_endpoint(const char *ep, struct sockaddr_storage *dst, char *host, size_t hostlen,
			  unsigned *port, char *err, size_t errlen)
{
	const char *p = ep ? ep : "";
	if (!strncmp(p, "verbs:", 6))
		p += 6;
	const char *colon;
	size_t hl;
	if (*p == '[') {
		const char *rb = strchr(p, ']');
		if (!rb || rb[1] != ':')
			goto bad;
		p++;
		hl = (size_t)(rb - p);
		colon = rb + 1;
	} else {
		colon = strrchr(p, ':');
		if (!colon)
			goto bad;
		hl = (size_t)(colon - p);
	}
	if (hl == 0 || hl >= hostlen)
		goto bad;
	memcpy(host, p, hl);
	host[hl] = 0;
	char *end;
	unsigned long pv = strtoul(colon + 1, &end, 10);
	if (*end || pv == 0 || pv > 65535)
		goto bad;
	*port = (unsigned)pv;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int e = getaddrinfo(host, colon + 1, &hints, &ai);
	if (e || !ai) {
		snprintf(err, errlen, "endpoint %s: cannot resolve '%s': %s", ep, host, gai_strerror(e));
		return -1;
	}
	memset(dst, 0, sizeof *dst);
	memcpy(dst, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
bad:
	snprintf(err, errlen, "endpoint '%s' is not of the form verbs:ADDR:PORT (e.g. verbs:198.18.0.1:7471, "
		 "or verbs:[fe80::1]:7471); give the endpoint the server printed", ep ? ep : "");
	return -1;
}

/* Waits up to ms for fd to become readable: 1 ready, 0 timeout, -1 error. */
static int wait_readable(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	for (;;) {
		int r = poll(&pfd, 1, ms < 0 ? 0 : ms);
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -1 : r > 0;
	}
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* The RoCE GID of an IPv4/IPv6 address (IPv4-mapped for IPv4). */
static void addr_gid(const struct sockaddr *sa, union ibv_gid *g)
{
	memset(g, 0, sizeof *g);
	if (sa->sa_family == AF_INET) {
		g->raw[10] = 0xff;
		g->raw[11] = 0xff;
		memcpy(g->raw + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(g->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

static void gid_str(const union ibv_gid *g, char *buf, size_t len)
{
	static const uint8_t v4pre[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (!memcmp(g->raw, v4pre, 12))
		snprintf(buf, len, "::ffff:%u.%u.%u.%u", g->raw[12], g->raw[13], g->raw[14], g->raw[15]);
	else if (!inet_ntop(AF_INET6, g->raw, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* Index of gid in the port's table, or -1. */
static int find_gid(struct ibv_context *ctx, uint8_t port, const union ibv_gid *want, int tbl_len)
{
	for (int i = 0; i < tbl_len && i < 1024; i++) {
		union ibv_gid g;
		if (ibv_query_gid(ctx, port, i, &g))
			break;
		if (!memcmp(&g, want, sizeof g))
			return i;
	}
	return -1;
}

/* Sets the QP's min RNR NAK timer (allowed RTS -> RTS); 0 or errno. */
static int set_min_rnr(struct ibv_qp *qp, unsigned code)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof a);
	a.min_rnr_timer = (uint8_t)code;
	return ibv_modify_qp(qp, &a, IBV_QP_MIN_RNR_TIMER);
}

/* ------------------------------------------------------------------ */
/* device listing                                                      */

static const char *port_state_str(enum ibv_port_state s)
{
	switch (s) {
	case IBV_PORT_DOWN: return "DOWN";
	case IBV_PORT_INIT: return "INIT";
	case IBV_PORT_ARMED: return "ARMED";
	case IBV_PORT_ACTIVE: return "ACTIVE";
	case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
	default: return "?";
	}
}

static int mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

/* Largest inline size an RC QP on this device accepts (probed). */
static unsigned probe_inline(struct ibv_context *ctx, struct ibv_pd *pd)
{
	static const unsigned tries[] = { 1024, 512, 256, 128, 64, 0 };
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	unsigned got = 0;
	if (!cq)
		return 0;
	for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
		struct ibv_qp_init_attr a = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1,
				 .max_inline_data = tries[i] },
		};
		struct ibv_qp *qp = ibv_create_qp(pd, &a);
		if (qp) {
			got = a.cap.max_inline_data;
			ibv_destroy_qp(qp);
			break;
		}
	}
	ibv_destroy_cq(cq);
	return got;
}

int tp_verbs_list_devices(FILE *out, char *err, size_t errlen)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);
	if (!l) {
		snprintf(err, errlen, "cannot list RDMA devices: %s (is the ib_uverbs module loaded?)",
			 strerror(errno));
		return -1;
	}
	if (n == 0)
		fprintf(out, "no RDMA devices found.  Load a driver; for Soft-RoCE: "
			"modprobe rdma_rxe; rdma link add rxe0 type rxe netdev IFACE\n");
	for (int i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(l[i]);
		struct ibv_context *ctx = ibv_open_device(l[i]);
		if (!ctx) {
			fprintf(out, "%s: cannot open: %s\n", name, strerror(errno));
			continue;
		}
		struct ibv_device_attr da;
		if (ibv_query_device(ctx, &da)) {
			fprintf(out, "%s: cannot query: %s\n", name, strerror(errno));
			ibv_close_device(ctx);
			continue;
		}
		uint64_t guid = be64toh(ibv_get_device_guid(l[i]));
		struct ibv_pd *pd = ibv_alloc_pd(ctx);
		unsigned inl = pd ? probe_inline(ctx, pd) : 0;
		if (pd)
			ibv_dealloc_pd(pd);
		fprintf(out, "%s  node_guid %04x:%04x:%04x:%04x  fw %s  ports %u\n", name,
			(unsigned)(guid >> 48) & 0xffff, (unsigned)(guid >> 32) & 0xffff,
			(unsigned)(guid >> 16) & 0xffff, (unsigned)guid & 0xffff, da.fw_ver, da.phys_port_cnt);
		fprintf(out, "  caps: max_qp %d  max_qp_wr %d  max_srq %d  max_srq_wr %d  max_cqe %d  "
			"max_qp_rd_atom %d  xrc %s  max_inline %u\n",
			da.max_qp, da.max_qp_wr, da.max_srq, da.max_srq_wr, da.max_cqe, da.max_qp_rd_atom,
			(da.device_cap_flags & IBV_DEVICE_XRC) ? "yes" : "no", inl);
		for (uint8_t p = 1; p <= da.phys_port_cnt; p++) {
			struct ibv_port_attr pa;
			if (ibv_query_port(ctx, p, &pa)) {
				fprintf(out, "  port %u: cannot query: %s\n", p, strerror(errno));
				continue;
			}
			fprintf(out, "  port %u: state %s  active_mtu %d  link_layer %s  gid_tbl_len %d\n", p,
				port_state_str(pa.state), mtu_bytes(pa.active_mtu),
				pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" :
				pa.link_layer == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" : "unspecified",
				pa.gid_tbl_len);
			for (int g = 0; g < pa.gid_tbl_len && g < 256; g++) {
				union ibv_gid gid, zero;
				char gs[64], ifn[IF_NAMESIZE + 1] = "", type[32] = "";
				memset(&zero, 0, sizeof zero);
#if OQB_HAVE_GID_EX
				struct ibv_gid_entry ge;
				if (ibv_query_gid_ex(ctx, p, (uint32_t)g, &ge, 0))
					continue;   /* empty entry */
				gid = ge.gid;
				if (ge.ndev_ifindex && !if_indextoname(ge.ndev_ifindex, ifn))
					ifn[0] = 0;
				snprintf(type, sizeof type, "%s", ge.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" :
					 ge.gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1" : "IB");
#else
				/* libibverbs before rdma-core v32 (MLNX_OFED 4.x): the
				 * GID's type is only in sysfs */
				if (ibv_query_gid(ctx, p, g, &gid))
					continue;
				char path[256];
				snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%u/gid_attrs/types/%d",
					 ibv_get_device_name(l[i]), p, g);
				FILE *tf = fopen(path, "r");
				if (tf) {
					if (!fgets(type, sizeof type, tf))
						type[0] = 0;
					type[strcspn(type, "\n")] = 0;
					fclose(tf);
				}
#endif
				if (!memcmp(&gid, &zero, sizeof zero))
					continue;
				gid_str(&gid, gs, sizeof gs);
				fprintf(out, "    gid %3d  %-40s %s%s%s\n", g, gs, type[0] ? type : "?",
					ifn[0] ? "  netdev " : "", ifn);
			}
		}
		ibv_close_device(ctx);
	}
	ibv_free_device_list(l);
	return n;
}

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
	uint64_t batch_first;          /* slot_ring: tickets released, not yet reposted */
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
};

struct tp_server {
	struct tp_srv_conf c;
	int mode;
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
	uint64_t sys_hash;
	unsigned rnr_set_failed;
	uint64_t conn_total, conn_rejected, disconnects, conn_delegated;
	_Atomic unsigned qps_live;
	unsigned qps_peak;
	char last_reject[VB_REJECT_LEN];
	struct vb_worker *w;
};

static inline uint8_t *slot_buf(struct tp_server *s, struct vb_worker *w, uint64_t pos)
{
	return w->bufs ? w->bufs[pos] : w->slots + pos * s->c.slot_size;
}

static inline uint32_t slot_lkey(struct vb_worker *w, uint64_t pos)
{
	return w->buf_mr ? w->buf_mr[pos]->lkey : w->ring_mr->lkey;
}

static void w_persist(struct vb_worker *w, const void *p, size_t n)
{
	if (!w->pmem_file)
		return;
	if (w->is_pmem)
		pmem_persist(p, n);
	else
		pmem_msync(p, n);
}

/* Logs at most a few lines per worker, then every power of two. */
static int w_may_log(struct vb_worker *w)
{
	uint64_t n = ++w->log_budget;
	return n <= 5 || (n & (n - 1)) == 0;
}

/*
 * Posts n receive WQEs for tickets first.. into their slots, in linked
 * batches.  first must be the next ticket to post: posting order is the
 * order the SRQ hands WQEs out (Rule 1).  0, or -1 (logged, counted).
 */
static int post_recv(struct tp_server *s, struct vb_worker *w, uint64_t first, unsigned n)
{
	struct ibv_recv_wr wr[VB_REPOST_BATCH], *bad = NULL;
	struct ibv_sge sg[VB_REPOST_BATCH];
	if (first != w->next_post) {
		log_msg(LOG_ERR, "worker %u: repost of ticket %" PRIu64 " but the next ticket to post is %" PRIu64
			"; this is a transport bug", w->idx, first, w->next_post);
		return -1;
	}
	/* SRQTail first: a request can land in a WQE as soon as it is
	 * posted, and recovery scans only up to SRQTail. */
	w->hdr->srq_tail = first + n;
	w_persist(w, &w->hdr->srq_tail, sizeof w->hdr->srq_tail);
	while (n) {
		unsigned k = n < VB_REPOST_BATCH ? n : VB_REPOST_BATCH;
		for (unsigned i = 0; i < k; i++) {
			uint64_t t = first + i, pos = t & s->mask;
			sg[i].addr = (uintptr_t)slot_buf(s, w, pos);
			sg[i].length = s->c.slot_size;
			sg[i].lkey = slot_lkey(w, pos);
			wr[i].wr_id = t;
			wr[i].sg_list = &sg[i];
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < k ? &wr[i + 1] : NULL;
		}
		int e = ibv_post_srq_recv(w->srq, wr, &bad);
		if (e) {
			w->post_errors++;
			if (w_may_log(w))
				log_msg(LOG_ERR, "worker %u: ibv_post_srq_recv of tickets %" PRIu64 "..%" PRIu64 ": %s",
					w->idx, first, first + k - 1, strerror(e));
			return -1;
		}
		w->post_calls++;
		first += k;
		n -= k;
		w->next_post = first;
	}
	return 0;
}

static void flush_reposts(struct tp_server *s, struct vb_worker *w)
{
	if (w->batch_n) {
		post_recv(s, w, w->batch_first, w->batch_n);
		w->batch_n = 0;
	}
}

/* Reaps reply completions; returns how many. */
static int reap_sends(struct tp_server *s, struct vb_worker *w)
{
	struct ibv_wc wc[32];
	int n = ibv_poll_cq(w->scq, 32, wc);
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++) {
		uint32_t ci = (uint32_t)(wc[i].wr_id >> 32);
		uint32_t gen = (uint32_t)(wc[i].wr_id >> 16) & 0xffff;
		uint32_t sb = (uint32_t)wc[i].wr_id & 0xffff;
		if (sb < VB_SRV_SBUFS)
			w->sfree[w->nsfree++] = (uint16_t)sb;
		if (w->scq_out)
			w->scq_out--;
		if (ci < VB_MAX_CONNS) {
			struct vb_sconn *c = &s->conns[ci];
			if ((atomic_load(&c->gen) & 0xffff) == gen)
				atomic_fetch_sub(&c->inflight, 1);
		}
		if (wc[i].status != IBV_WC_SUCCESS && wc[i].status != IBV_WC_WR_FLUSH_ERR) {
			w->send_errors++;
			if (w_may_log(w))
				log_msg(LOG_WARN, "worker %u: a reply to a client failed: %s (vendor error 0x%x); "
					"the client's connection is broken", w->idx,
					ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
		}
	}
	return n;
}

static void make_host_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";
	if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, a, sizeof a);
		snprintf(buf, len, "%s", a);
	} else if (sa->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, a, sizeof a);
		snprintf(buf, len, "[%s]", a);
	} else {
		snprintf(buf, len, "?");
	}
}

/* Maps (or creates) worker w's durable ring file. */
static int map_ring_file(struct tp_server *s, struct vb_worker *w, size_t bytes, char *err, size_t errlen)
{
	char path[4096];
	size_t mapped = 0;
	int is_pmem = 0;
	snprintf(path, sizeof path, "%s/vring-%u", s->c.pmem_path, w->idx);
	void *p = pmem_map_file(path, bytes, PMEM_FILE_CREATE | PMEM_FILE_EXCL, 0600, &mapped, &is_pmem);
	if (!p && errno == EEXIST) {
		p = pmem_map_file(path, 0, 0, 0, &mapped, &is_pmem);
		if (!p) {
			snprintf(err, errlen, "durable ring file %s: %s", path, pmem_errormsg());
			return -1;
		}
		const struct vb_ring_hdr *h = p;
		if (mapped < bytes || h->magic != VB_RING_MAGIC || h->ring_slots != s->c.ring_slots ||
		    h->slot_size != s->c.slot_size) {
			pmem_unmap(p, mapped);
			snprintf(err, errlen, "durable ring file %s exists with another layout (not %u slots of %u B); "
				 "remove it, or start with the --ring-slots and --slot-size it was made with",
				 path, s->c.ring_slots, s->c.slot_size);
			return -1;
		}
		w->existed = 1;
	} else if (!p) {
		snprintf(err, errlen, "cannot create the durable ring file %s: %s (--pmem-path is a writable "
			 "directory, e.g. on a DAX-mounted PM file system)", path, pmem_errormsg());
		return -1;
	}
	w->map = p;
	w->map_len = mapped;
	w->pmem_file = 1;
	w->is_pmem = is_pmem;
	return 0;
}

struct rec_arg { struct tp_server *s; unsigned w; };

static void rec_exec(void *arg, const void *req, const struct wire_req *h)
{
	struct rec_arg *ra = arg;
	if (ra->s->c.recover_exec)
		ra->s->c.recover_exec(ra->s->c.recover_arg, ra->w, req, h);
}

/*
 * Replays the ring file a previous server left (§5.3): the requests between
 * ReqToExecute and SRQTail that are whole, nilext and idempotent may have
 * been committed by their ACK, so they are executed again, in ticket order,
 * before any client can connect.  Released slots were invalidated before
 * their WQE was reposted, and SRQTail was persisted before the post, so the
 * range holds every committed request and nothing stale.  Then the ring is
 * reset (all slots invalid, tickets from 0).  0, or -1 with err set.
 */
static int recover_ring(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen)
{
	const struct vb_ring_hdr *h = w->hdr;
	struct rec_arg ra = { s, w->idx };
	uint64_t from = h->req_to_execute, to = h->srq_tail;
	w->recovered = 1;
	if (recovery_scan_ring(w->slots, s->c.ring_slots, s->c.slot_size, from, to, rec_exec, &ra, &w->rec) != 0) {
		snprintf(err, errlen, "durable ring file %s/vring-%u: ReqToExecute %llu and SRQTail %llu are more than "
			 "%u slots apart; the ring is corrupt (remove it to discard its requests)", s->c.pmem_path,
			 w->idx, (unsigned long long)from, (unsigned long long)to, s->c.ring_slots);
		return -1;
	}
	log_msg(LOG_INFO, "recovery: verbs ring %u (%s): tickets %llu..%llu scanned %llu, valid %llu, "
		"re-executed %llu, %.3f ms", w->idx, h->clean ? "clean shutdown" : "crashed",
		(unsigned long long)from, (unsigned long long)to, (unsigned long long)w->rec.scanned,
		(unsigned long long)w->rec.valid, (unsigned long long)w->rec.reexecuted, w->rec.ns / 1e6);
	for (size_t k = 0; k < s->c.ring_slots; k++)
		memset(w->slots + k * s->c.slot_size, 0, 16);
	w_persist(w, w->slots, (size_t)s->c.ring_slots * s->c.slot_size);
	return 0;
}

static struct ibv_mr *reg_or_explain(struct tp_server *s, void *addr, size_t len, int access,
				     const char *what, unsigned wi, char *err, size_t errlen)
{
	struct ibv_mr *mr = ibv_reg_mr(s->pd, addr, len, access);
	if (!mr) {
		int e = errno;
		snprintf(err, errlen, "cannot register %s of worker %u (%zu bytes) with %s: %s%s", what, wi, len,
			 s->devname, strerror(e),
			 e == ENOMEM ? " (raise the locked-memory limit: ulimit -l unlimited, or fewer/smaller slots)" :
			 e == EOPNOTSUPP || e == EINVAL ? " (a file on an fsdax file system cannot be pinned for "
			 "RDMA: use a device-DAX path /dev/daxN.M or tmpfs for --pmem-path)" : "");
	}
	return mr;
}

/* The send CQ and registered reply buffers of worker w. */
static int worker_init_replies(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen)
{
	const size_t ss = s->c.slot_size;
	w->scq = ibv_create_cq(s->ctx, VB_SRV_SCQ + 16, NULL, NULL, 0);
	if (!w->scq) {
		snprintf(err, errlen, "worker %u: cannot create a send CQ on %s: %s (max_cqe %d)", w->idx,
			 s->devname, strerror(errno), s->da.max_cqe);
		return -1;
	}
	if (posix_memalign((void **)&w->sbuf, 4096, (size_t)VB_SRV_SBUFS * ss) != 0) {
		w->sbuf = NULL;
		snprintf(err, errlen, "worker %u: out of memory for %u reply buffers of %zu B", w->idx, VB_SRV_SBUFS, ss);
		return -1;
	}
	w->sbuf_mr = reg_or_explain(s, w->sbuf, (size_t)VB_SRV_SBUFS * ss, IBV_ACCESS_LOCAL_WRITE,
				    "the reply buffers", w->idx, err, errlen);
	if (!w->sbuf_mr)
		return -1;
	for (unsigned k = 0; k < VB_SRV_SBUFS; k++)
		w->sfree[k] = (uint16_t)(VB_SRV_SBUFS - 1 - k);
	w->nsfree = VB_SRV_SBUFS;
	return 0;
}

#if OQB_HAVE_VERBS_EXP
/*
 * recv_mode mp: the real multi-packet SRQ (§5.1) through MLNX_OFED 4.x's
 * experimental verbs.  Written from MLNX_OFED 4.6's verbs_exp.h and
 * compile-checked against it; no NIC that can run it was available, so it
 * has never run (docs/verbs.md says what to check on first use).
 *
 * MLNX_OFED offers multi-packet WQEs on an SRQ only for a tag-matching SRQ
 * (mp_rq_caps.supported_qps & IBV_EXP_MP_RQ_SUP_TYPE_SRQ_TM).  No tag is
 * ever added, so every message is "unexpected" and goes to the next free
 * strides of the current WQE.  WQEs are 2^log_strides strides of
 * 2^log_stride bytes over one contiguous ring, posted in address order with
 * wr_id = WQE sequence number.  A completion names (wr_id, strides_offset,
 * byte_len) and flags the last message of a WQE (MP_WR_CONSUMED); a
 * RECV_NOP completion is a filler that closes a WQE.  mpring.c puts those
 * back in placement order and numbers the messages 0, 1, 2, ...: the
 * executor's slots, exactly as the ticket is in srq mode.  A WQE is posted
 * again once every message in it was released.  Rule 1 holds as in srq
 * mode: with no WQE left the RNIC sends an RNR NAK, and a message is ACKed
 * only after it was placed.
 */
static int mp_geometry(struct tp_server *s, struct mpring_conf *mc, char *err, size_t errlen)
{
	struct ibv_exp_device_attr xa;
	memset(&xa, 0, sizeof xa);
	xa.comp_mask = (uint32_t)(IBV_EXP_DEVICE_ATTR_RESERVED - 1);
	int e = ibv_exp_query_device(s->ctx, &xa);
	if (e) {
		snprintf(err, errlen, "recv_mode mp: ibv_exp_query_device on %s failed: %s (the multi-packet SRQ "
			 "needs MLNX_OFED 4.x's libibverbs and libmlx5)", s->devname, strerror(e));
		return -1;
	}
	if (!(xa.comp_mask & IBV_EXP_DEVICE_ATTR_MP_RQ) ||
	    !(xa.mp_rq_caps.supported_qps & IBV_EXP_MP_RQ_SUP_TYPE_SRQ_TM)) {
		snprintf(err, errlen, "recv_mode mp: device %s offers no multi-packet SRQ for RC QPs "
			 "(mp_rq_caps.supported_qps = 0x%x); that needs a ConnectX-5 or newer with the link layer "
			 "set to InfiniBand under MLNX_OFED 4.x; use recv_mode slot_ring for the portable emulation",
			 s->devname, (xa.comp_mask & IBV_EXP_DEVICE_ATTR_MP_RQ) ? xa.mp_rq_caps.supported_qps : 0);
		return -1;
	}
	const struct ibv_exp_mp_rq_caps *mc_caps = &xa.mp_rq_caps;
	unsigned ls = VB_MP_LOG_STRIDE, lS = VB_MP_LOG_STRIDES;
	if (ls < mc_caps->min_single_stride_log_num_of_bytes)
		ls = mc_caps->min_single_stride_log_num_of_bytes;
	if (ls > mc_caps->max_single_stride_log_num_of_bytes)
		ls = mc_caps->max_single_stride_log_num_of_bytes;
	if (lS < mc_caps->min_single_wqe_log_num_of_strides)
		lS = mc_caps->min_single_wqe_log_num_of_strides;
	if (lS > mc_caps->max_single_wqe_log_num_of_strides)
		lS = mc_caps->max_single_wqe_log_num_of_strides;
	/* every message must fit one WQE */
	while (((size_t)1 << (ls + lS)) < s->c.slot_size && lS < mc_caps->max_single_wqe_log_num_of_strides)
		lS++;
	size_t wqe_bytes = (size_t)1 << (ls + lS);
	if (wqe_bytes < s->c.slot_size) {
		snprintf(err, errlen, "recv_mode mp: %s's strides (2^%u..2^%u B, 2^%u..2^%u per WQE) cannot hold a "
			 "%u-byte message in one WQE; lower --slot-size", s->devname,
			 mc_caps->min_single_stride_log_num_of_bytes, mc_caps->max_single_stride_log_num_of_bytes,
			 mc_caps->min_single_wqe_log_num_of_strides, mc_caps->max_single_wqe_log_num_of_strides,
			 s->c.slot_size);
		return -1;
	}
	/* the same memory as slot_ring would use, at least two WQEs */
	size_t ring = (size_t)s->c.ring_slots * s->c.slot_size;
	unsigned wqes = 2;
	while ((size_t)wqes * 2 * wqe_bytes <= ring && wqes < (1u << 20))
		wqes *= 2;
	if (wqes > (unsigned)s->da.max_srq_wr) {
		snprintf(err, errlen, "recv_mode mp: %u WQEs of %zu B exceed %s's max_srq_wr %d; lower --ring-slots",
			 wqes, wqe_bytes, s->devname, s->da.max_srq_wr);
		return -1;
	}
	/* A message of several packets gives one completion per packet
	 * (MP_WR_MORE_IN_MSG), which this path does not put together. */
	struct ibv_port_attr pa;
	if (ibv_query_port(s->ctx, s->port_num, &pa) == 0 && (int)s->c.slot_size > mtu_bytes(pa.active_mtu)) {
		snprintf(err, errlen, "recv_mode mp: --slot-size %u exceeds the active MTU of %s port %u (%d B); a "
			 "request must be one packet here; lower --slot-size", s->c.slot_size, s->devname, s->port_num,
			 mtu_bytes(pa.active_mtu));
		return -1;
	}
	mc->log_stride = ls;
	mc->log_strides = lS;
	mc->wqes = wqes;
	mc->max_out = s->c.ring_slots;     /* the executor's window */
	return 0;
}

/* Posts the WQEs mpring hands back (or, first, WQEs 0 .. wqes-1). */
static int mp_post(struct vb_worker *w, uint64_t first, unsigned n)
{
	struct ibv_recv_wr wr[VB_REPOST_BATCH], *bad = NULL;
	struct ibv_sge sg[VB_REPOST_BATCH];
	while (n) {
		unsigned k = n < VB_REPOST_BATCH ? n : VB_REPOST_BATCH;
		for (unsigned i = 0; i < k; i++) {
			uint64_t q = first + i;
			sg[i].addr = (uintptr_t)(w->slots + mpring_offset(w->mp, q, 0));
			sg[i].length = (uint32_t)w->mp_wqe_bytes;
			sg[i].lkey = w->ring_mr->lkey;
			wr[i].wr_id = q;
			wr[i].sg_list = &sg[i];
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < k ? &wr[i + 1] : NULL;
		}
		int e = ibv_post_srq_recv(w->srq, wr, &bad);
		if (e) {
			w->post_errors++;
			if (w_may_log(w))
				log_msg(LOG_ERR, "worker %u: ibv_post_srq_recv of multi-packet WQEs %" PRIu64 "..%" PRIu64
					": %s", w->idx, first, first + k - 1, strerror(e));
			return -1;
		}
		w->post_calls++;
		first += k;
		n -= k;
		w->next_post = first;
	}
	return 0;
}

/* Ring, MR, CQ and the tag-matching multi-packet SRQ of worker w. */
static int mp_worker_init(struct tp_server *s, struct vb_worker *w, char *err, size_t errlen)
{
	struct mpring_conf mc;
	if (mp_geometry(s, &mc, err, errlen) != 0)
		return -1;
	w->mp = mpring_new(&mc, err, errlen);
	if (!w->mp)
		return -1;
	w->mp_wqe_bytes = mpring_wqe_bytes(w->mp);
	size_t bytes = mpring_bytes(w->mp);
	w->map_len = VB_HDR_BYTES + bytes;
	w->map = mmap(NULL, w->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->map == MAP_FAILED) {
		w->map = NULL;
		snprintf(err, errlen, "worker %u: cannot map a %zu-byte multi-packet ring: %s", w->idx, bytes,
			 strerror(errno));
		return -1;
	}
	w->hdr = (struct vb_ring_hdr *)w->map;
	w->slots = w->map + VB_HDR_BYTES;
	w->hdr->magic = VB_RING_MAGIC;
	w->hdr->version = VB_VERSION;
	w->hdr->worker = w->idx;
	w->hdr->ring_slots = s->c.ring_slots;
	w->hdr->slot_size = s->c.slot_size;
	w->hdr->data_off = VB_HDR_BYTES;
	w->hdr_mr = reg_or_explain(s, w->map, VB_HDR_BYTES, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
				   "the ring header", w->idx, err, errlen);
	if (!w->hdr_mr)
		return -1;
	w->ring_mr = reg_or_explain(s, w->slots, bytes, IBV_ACCESS_LOCAL_WRITE, "the multi-packet ring", w->idx,
				    err, errlen);
	if (!w->ring_mr)
		return -1;
	size_t n = s->c.ring_slots;
	w->len = calloc(n, sizeof *w->len);
	w->tick = calloc(n, sizeof *w->tick);
	w->ok = calloc(n, 1);
	w->moff = calloc(n, sizeof *w->moff);
	if (!w->len || !w->tick || !w->ok || !w->moff) {
		snprintf(err, errlen, "worker %u: out of memory for %zu slot records; lower --ring-slots", w->idx, n);
		return -1;
	}
	for (size_t k = 0; k < n; k++)
		w->tick[k] = UINT64_MAX;
	/* one completion per message: at most one per stride in the ring */
	size_t cqe = (size_t)mc.wqes << mc.log_strides;
	if (cqe + 16 > (size_t)s->da.max_cqe)
		cqe = (size_t)s->da.max_cqe - 16;
	w->rcq = ibv_create_cq(s->ctx, (int)cqe + 16, NULL, NULL, 0);
	if (!w->rcq) {
		snprintf(err, errlen, "worker %u: cannot create a receive CQ of %zu entries on %s: %s", w->idx,
			 cqe + 16, s->devname, strerror(errno));
		return -1;
	}
	struct ibv_exp_create_srq_attr sa;
	memset(&sa, 0, sizeof sa);
	sa.base.attr.max_wr = mc.wqes;
	sa.base.attr.max_sge = 1;
	sa.srq_type = IBV_EXP_SRQT_TAG_MATCHING;
	sa.pd = s->pd;
	sa.cq = w->rcq;
	sa.tm_cap.max_num_tags = 1;    /* none is ever added */
	sa.tm_cap.max_ops = 1;
	sa.mp_wr.log_num_of_strides = (uint8_t)mc.log_strides;
	sa.mp_wr.log_stride_size = (uint8_t)mc.log_stride;
	sa.comp_mask = IBV_EXP_CREATE_SRQ_CQ | IBV_EXP_CREATE_SRQ_TM | IBV_EXP_CREATE_SRQ_MP_WR;
	w->srq = ibv_exp_create_srq(s->ctx, &sa);
	if (!w->srq) {
		snprintf(err, errlen, "worker %u: ibv_exp_create_srq (tag matching, %u multi-packet WQEs of 2^%u x %u B) "
			 "failed on %s: %s", w->idx, mc.wqes, mc.log_strides, 1u << mc.log_stride, s->devname,
			 strerror(errno));
		return -1;
	}
	if (mp_post(w, 0, mc.wqes) != 0) {
		snprintf(err, errlen, "worker %u: cannot post %u multi-packet WQEs (see the log above)", w->idx, mc.wqes);
		return -1;
	}
	log_msg(LOG_INFO, "worker %u: multi-packet SRQ, %u WQEs x %u strides x %u B", w->idx, mc.wqes,
		1u << mc.log_strides, 1u << mc.log_stride);
	return 0;
}

/* Completions into mpring, then whatever is next in placement order out. */
static int mp_poll(struct tp_server *s, struct vb_worker *w, struct tp_arrival *a, int max)
{
	struct ibv_exp_wc wc[32];
	int n = ibv_exp_poll_cq(w->rcq, 32, wc, sizeof wc[0]);
	if (n < 0 && w_may_log(w))
		log_msg(LOG_ERR, "worker %u: ibv_exp_poll_cq on the receive CQ failed (%d)", w->idx, n);
	for (int i = 0; i < n; i++) {
		const struct ibv_exp_wc *c = &wc[i];
		int r;
		if (c->status != IBV_WC_SUCCESS) {
			/* nothing was placed that the ring could order */
			w->recv_errors++;
			w->last_recv_error = ibv_wc_status_str(c->status);
			if (c->status != IBV_WC_WR_FLUSH_ERR && w_may_log(w))
				log_msg(LOG_WARN, "worker %u: a multi-packet receive (WQE %" PRIu64 ", QP 0x%x) completed "
					"with %s (vendor error 0x%x)", w->idx, c->wr_id, c->qp_num, w->last_recv_error,
					c->vendor_err);
			continue;
		}
		if (c->exp_opcode == IBV_EXP_WC_RECV_NOP)
			r = mpring_fill(w->mp, c->wr_id, c->mp_wr.strides_offset);
		else if (c->exp_wc_flags & IBV_EXP_WC_MP_WR_MORE_IN_MSG)
			r = -2;
		else
			r = mpring_arrive(w->mp, c->wr_id, c->mp_wr.strides_offset, c->mp_wr.byte_len,
					  (c->exp_wc_flags & IBV_EXP_WC_MP_WR_CONSUMED) != 0);
		if (r != 0) {
			w->recv_errors++;
			w->last_recv_error = r == -2 ? "a request of several packets" : "an impossible completion";
			if (w_may_log(w))
				log_msg(LOG_ERR, "worker %u: multi-packet completion (opcode %d, WQE %" PRIu64 ", stride %u, "
					"%u B, flags 0x%" PRIx64 ") not placed: %s", w->idx, (int)c->exp_opcode, c->wr_id,
					c->mp_wr.strides_offset, c->mp_wr.byte_len, (uint64_t)c->exp_wc_flags,
					r == -2 ? "requests must be one packet (slot size <= MTU)" : mpring_error(w->mp));
		}
	}
	int k = 0;
	struct mpring_msg m;
	while (k < max && mpring_next(w->mp, &m)) {
		uint64_t pos = m.ticket & s->mask;
		w->tick[pos] = m.ticket;
		w->ok[pos] = 1;
		w->len[pos] = m.len;
		w->moff[pos] = m.off;
		a[k].slot = m.ticket;
		a[k].voided = 0;
		k++;
	}
	w->arrivals += (uint64_t)k;
	return k;
}

static void mp_release(struct tp_server *s, struct vb_worker *w, uint64_t slot)
{
	w->tick[slot & s->mask] = UINT64_MAX;
	if (mpring_release(w->mp, slot) != 0) {
		if (w_may_log(w))
			log_msg(LOG_ERR, "worker %u: %s; this is a transport bug", w->idx, mpring_error(w->mp));
		return;
	}
	uint64_t q;
	while (mpring_repost(w->mp, &q))
		if (mp_post(w, q, 1) != 0)
			break;
}
#endif /* OQB_HAVE_VERBS_EXP */

static int worker_init(struct tp_server *s, unsigned i, char *err, size_t errlen)
{
	struct vb_worker *w = &s->w[i];
	const size_t n = s->c.ring_slots, ss = s->c.slot_size;
	int file_slots = s->c.durable && s->c.pmem_path && *s->c.pmem_path;
	int contiguous = s->mode == RM_SLOT_RING || file_slots;
	size_t bytes = VB_HDR_BYTES + (contiguous ? n * ss : 0);

	w->s = s;
	w->idx = i;
	pthread_mutex_init(&w->mu, NULL);
#if OQB_HAVE_VERBS_EXP
	if (s->mode == RM_MP)
		return mp_worker_init(s, w, err, errlen) == 0 ? worker_init_replies(s, w, err, errlen) : -1;
#endif
	if (file_slots) {
		if (map_ring_file(s, w, bytes, err, errlen) != 0)
			return -1;
	} else {
		w->map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (w->map == MAP_FAILED) {
			w->map = NULL;
			snprintf(err, errlen, "worker %u: cannot map a %zu-byte receive ring: %s", i, bytes, strerror(errno));
			return -1;
		}
		w->map_len = bytes;
	}
	w->hdr = (struct vb_ring_hdr *)w->map;
	if (contiguous)
		w->slots = w->map + VB_HDR_BYTES;
	if (w->existed && recover_ring(s, w, err, errlen) != 0)
		return -1;
	memset(w->hdr, 0, sizeof *w->hdr);
	w->hdr->version = VB_VERSION;
	w->hdr->worker = i;
	w->hdr->ring_slots = (uint32_t)n;
	w->hdr->slot_size = (uint32_t)ss;
	w->hdr->data_off = contiguous ? VB_HDR_BYTES : 0;
	w->hdr->magic = VB_RING_MAGIC;
	w_persist(w, w->hdr, sizeof *w->hdr);

	w->hdr_mr = reg_or_explain(s, w->map, VB_HDR_BYTES, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
				   "the ring header", i, err, errlen);
	if (!w->hdr_mr)
		return -1;
	if (s->mode == RM_SLOT_RING) {
		w->ring_mr = reg_or_explain(s, w->slots, n * ss, IBV_ACCESS_LOCAL_WRITE, "the receive ring", i,
					    err, errlen);
		if (!w->ring_mr)
			return -1;
	} else {
		/* srq: every slot is its own buffer and memory region */
		w->buf_mr = calloc(n, sizeof *w->buf_mr);
		if (!contiguous)
			w->bufs = calloc(n, sizeof *w->bufs);
		if (!w->buf_mr || (!contiguous && !w->bufs))
			goto oom;
		for (size_t k = 0; k < n; k++) {
			if (!contiguous) {
				void *b = NULL;
				if (posix_memalign(&b, WIRE_ALIGN, ss) != 0)
					goto oom;
				memset(b, 0, ss);
				w->bufs[k] = b;
			}
			w->buf_mr[k] = reg_or_explain(s, slot_buf(s, w, k), ss, IBV_ACCESS_LOCAL_WRITE,
						      "a receive buffer", i, err, errlen);
			if (!w->buf_mr[k])
				return -1;
		}
	}
	w->len = calloc(n, sizeof *w->len);
	w->tick = calloc(n, sizeof *w->tick);
	w->ok = calloc(n, 1);
	if (!w->len || !w->tick || !w->ok)
		goto oom;
	for (size_t k = 0; k < n; k++)
		w->tick[k] = UINT64_MAX;

	w->rcq = ibv_create_cq(s->ctx, (int)n + 16, NULL, NULL, 0);
	if (!w->rcq) {
		snprintf(err, errlen, "worker %u: cannot create a receive CQ on %s: %s (max_cqe %d)", i,
			 s->devname, strerror(errno), s->da.max_cqe);
		return -1;
	}
	if (s->xrcd) {
		/* XRC: clients' requests name this SRQ by number; its
		 * completions go to the worker's receive CQ as before. */
		struct ibv_srq_init_attr_ex xa;
		memset(&xa, 0, sizeof xa);
		xa.attr.max_wr = (uint32_t)n;
		xa.attr.max_sge = 1;
		xa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
			       IBV_SRQ_INIT_ATTR_CQ;
		xa.srq_type = IBV_SRQT_XRC;
		xa.pd = s->pd;
		xa.xrcd = s->xrcd;
		xa.cq = w->rcq;
		w->srq = ibv_create_srq_ex(s->ctx, &xa);
		if (w->srq && ibv_get_srq_num(w->srq, &w->srqn) != 0) {
			snprintf(err, errlen, "worker %u: cannot read the XRC SRQ's number on %s: %s", i, s->devname,
				 strerror(errno));
			return -1;
		}
	} else {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = (uint32_t)n, .max_sge = 1 } };
		w->srq = ibv_create_srq(s->pd, &sa);
	}
	if (!w->srq) {
		snprintf(err, errlen, "worker %u: cannot create %s SRQ of %zu WQEs on %s: %s", i, s->xrcd ? "an XRC" : "an",
			 n, s->devname, strerror(errno));
		return -1;
	}
	if (worker_init_replies(s, w, err, errlen) != 0)
		return -1;
	if (post_recv(s, w, 0, (unsigned)n) != 0) {
		snprintf(err, errlen, "worker %u: cannot post %zu receive buffers to its SRQ (see the log above)", i, n);
		return -1;
	}
	return 0;
oom:
	snprintf(err, errlen, "worker %u: out of memory for %zu receive slots of %zu B", i, n, ss);
	return -1;
}

static void worker_free(struct tp_server *s, struct vb_worker *w)
{
	if (w->srq)
		ibv_destroy_srq(w->srq);
	if (w->rcq)
		ibv_destroy_cq(w->rcq);
	if (w->scq)
		ibv_destroy_cq(w->scq);
	if (w->buf_mr)
		for (size_t k = 0; k < s->c.ring_slots; k++)
			if (w->buf_mr[k])
				ibv_dereg_mr(w->buf_mr[k]);
	if (w->bufs)
		for (size_t k = 0; k < s->c.ring_slots; k++)
			free(w->bufs[k]);
	if (w->ring_mr)
		ibv_dereg_mr(w->ring_mr);
	if (w->hdr_mr)
		ibv_dereg_mr(w->hdr_mr);
	if (w->sbuf_mr)
		ibv_dereg_mr(w->sbuf_mr);
	free(w->sbuf);
	if (w->map) {
		if (w->pmem_file) {
			w->hdr->clean = 1;
			w_persist(w, &w->hdr->clean, sizeof w->hdr->clean);
			pmem_unmap(w->map, w->map_len);
		} else {
			munmap(w->map, w->map_len);
		}
	}
	free(w->buf_mr);
	free(w->bufs);
	free(w->len);
	free(w->tick);
	free(w->ok);
	free(w->moff);
	mpring_free(w->mp);
	free(w->by_block);
	pthread_mutex_destroy(&w->mu);
}

/* The workers whose reply tables list c: [*first, *last).  An XRC reply
 * QP is in every worker's table, an RC QP in its own worker's, an XRC
 * receive QP in none. */
static void conn_tables(const struct tp_server *s, const struct vb_sconn *c, unsigned *first, unsigned *last)
{
	*first = c->kind == CK_XREPLY ? 0 : c->worker;
	*last = c->kind == CK_XREPLY ? s->c.workers : c->kind == CK_RC ? c->worker + 1 : c->worker;
}

/* Removes c from its worker's table and starts its teardown. */
static void conn_close(struct tp_server *s, struct vb_sconn *c)
{
	if (c->state != CS_LIVE)
		return;
	uint32_t ci = (uint32_t)(c - s->conns);
	unsigned first, last;
	conn_tables(s, c, &first, &last);
	for (unsigned i = first; i < last; i++) {
		struct vb_worker *w = &s->w[i];
		pthread_mutex_lock(&w->mu);
		if (c->block < w->nblock && w->by_block[c->block] == ci + 1)
			w->by_block[c->block] = 0;
		pthread_mutex_unlock(&w->mu);
	}
	c->state = CS_CLOSING;
	/* Moves the QP to the error state: replies still queued complete
	 * with a flush status, which returns their buffers to the worker. */
	rdma_disconnect(c->id);
	c->closing_since = clock_ns();
	s->disconnects++;
	atomic_fetch_sub(&s->qps_live, 1);
	if (c->kind == CK_RC)
		atomic_fetch_sub(&s->w[c->worker].qps, 1);
	else if (c->kind == CK_XREPLY)
		s->qps_xreply--;
	else
		s->qps_xrecv--;
}

/* XRC reply QP: reaps its send completions (under c->xmu). */
static void xreply_reap(struct vb_sconn *c)
{
	struct ibv_wc wc[32];
	int n;
	while ((n = ibv_poll_cq(c->xcq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			if (atomic_load(&c->inflight))
				atomic_fetch_sub(&c->inflight, 1);
			if (wc[i].status != IBV_WC_SUCCESS && wc[i].status != IBV_WC_WR_FLUSH_ERR)
				log_msg(LOG_WARN, "a reply to client block %u failed: %s (vendor error 0x%x); the client's "
					"connection is broken", c->block, ibv_wc_status_str(wc[i].status), wc[i].vendor_err);
		}
	}
}

/* XRC reply QP: its lock, send CQ, and one registered reply buffer per
 * send-queue entry.  0, or -1 with errno set. */
static int xreply_init(struct tp_server *s, struct vb_sconn *c)
{
	pthread_mutex_init(&c->xmu, NULL);
	c->xmu_init = 1;
	c->xposted = 0;
	c->xcq = ibv_create_cq(s->ctx, (int)c->sq_depth + 16, NULL, NULL, 0);
	if (!c->xcq)
		return -1;
	size_t bytes = (size_t)c->sq_depth * s->c.slot_size;
	if (posix_memalign((void **)&c->xbuf, 4096, bytes) != 0) {
		c->xbuf = NULL;
		errno = ENOMEM;
		return -1;
	}
	c->xmr = ibv_reg_mr(s->pd, c->xbuf, bytes, IBV_ACCESS_LOCAL_WRITE);
	return c->xmr ? 0 : -1;
}

static void xreply_free(struct vb_sconn *c)
{
	if (c->xmr)
		ibv_dereg_mr(c->xmr);
	free(c->xbuf);
	if (c->xcq)
		ibv_destroy_cq(c->xcq);
	if (c->xmu_init)
		pthread_mutex_destroy(&c->xmu);
	c->xmr = NULL;
	c->xbuf = NULL;
	c->xcq = NULL;
	c->xmu_init = 0;
	c->xposted = 0;
}

/* Destroys closing connections whose replies have drained (or after
 * VB_ZOMBIE_NS, or all of them when force is set). */
static void reap_zombies(struct tp_server *s, int force)
{
	uint64_t now = clock_ns();
	for (unsigned i = 0; i < s->conns_hi; i++) {
		struct vb_sconn *c = &s->conns[i];
		if (c->state != CS_CLOSING)
			continue;
		if (c->kind == CK_XREPLY) {
			/* no worker finds it any more: the CM thread reaps it */
			pthread_mutex_lock(&c->xmu);
			xreply_reap(c);
			pthread_mutex_unlock(&c->xmu);
		}
		if (!force && atomic_load(&c->inflight) && now - c->closing_since < VB_ZOMBIE_NS)
			continue;
		if (!force && atomic_load(&c->inflight))
			log_msg(LOG_WARN, "worker %u: %u replies to client block %u never completed after its "
				"disconnect; destroying its QP anyway", c->worker, atomic_load(&c->inflight), c->block);
		rdma_destroy_qp(c->id);
		rdma_destroy_id(c->id);
		c->id = NULL;
		if (c->kind == CK_XREPLY)
			xreply_free(c);
		atomic_fetch_add(&c->gen, 1);
		atomic_store(&c->inflight, 0);
		c->state = CS_FREE;
		s->cfree[s->ncfree++] = i;
	}
}

static void peer_str(struct rdma_cm_id *id, char *buf, size_t len)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	if (sa)
		make_host_str(sa, buf, len);
	else
		snprintf(buf, len, "?");
}

/*
 * Accepts c (its QP exists and is published) with acc as the accept data,
 * sets the responder's RNR timer and counts it; a failed accept closes c.
 */
static void accept_conn(struct tp_server *s, struct rdma_cm_event *ev, struct vb_sconn *c, const uint8_t *acc,
			unsigned acc_len, const char *peer)
{
	struct rdma_cm_id *id = ev->id;
	/* The CM reports the request from this side's point of view: the
	 * client's initiator depth arrives as our responder_resources.  Zero
	 * here would leave the client's durable READs queued forever. */
	unsigned rr = ev->param.conn.responder_resources;
	if (rr > (unsigned)s->da.max_qp_rd_atom)
		rr = (unsigned)s->da.max_qp_rd_atom;
	struct rdma_conn_param cp = {
		.private_data = acc, .private_data_len = (uint8_t)acc_len,
		.responder_resources = (uint8_t)rr, .initiator_depth = 0,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	if (rdma_accept(id, &cp) != 0) {
		log_msg(LOG_ERR, "rdma_accept for %s failed: %s", peer, strerror(errno));
		conn_close(s, c);
		return;
	}
	/* rdma_cm leaves min_rnr_timer at 0 (655 ms); RTS -> RTS may set it.
	 * It matters on the responder: an RC QP, or an XRC receive QP. */
	int e = set_min_rnr(id->qp, s->c.min_rnr_timer);
	if (e && !s->rnr_set_failed++)
		log_msg(LOG_WARN, "cannot set min_rnr_timer %u on the server QPs (%s); RNR waits use the "
			"device default", s->c.min_rnr_timer, strerror(e));
	s->conn_total++;
	if (c->delegated)
		s->conn_delegated++;
	unsigned live = atomic_load(&s->qps_live);
	if (live > s->qps_peak)
		s->qps_peak = live;
	log_msg(LOG_DEBUG, "accepted %s: %s, client block %u, pid %u%s", peer,
		c->kind == CK_XRECV ? "XRC requests" : c->kind == CK_XREPLY ? "XRC replies" : "RC", c->block, c->pid,
		c->delegated ? " (delegated)" : "");
}

/*
 * Accepts an XRC request connection whose receive QP exists: the accept
 * data carries the SRQ number of every worker (little-endian):
 *   off 0 u32 magic "aBQO", 4 u16 version, 6 u16 status, 8 u32 client block,
 *   12 u16 workers, 14 u16 flags (VB_AF_XRC), 16 u32 srqn[workers]
 * The client sends to worker w with remote_srqn = srqn[w].
 */
static int xrc_accept(struct tp_server *s, struct rdma_cm_event *ev, struct vb_sconn *c, const char *peer)
{
	uint8_t acc[VB_XACCEPT_LEN(VB_XRC_MAX_WORKERS)];
	memset(acc, 0, sizeof acc);
	put32(acc, VB_ACCEPT_MAGIC);
	put16(acc + 4, VB_VERSION);
	put32(acc + 8, c->block);
	put16(acc + 12, (uint16_t)s->c.workers);
	put16(acc + 14, VB_AF_XRC | (s->c.durable ? VB_AF_DURABLE : 0));
	for (unsigned i = 0; i < s->c.workers; i++)
		put32(acc + 16 + 4 * i, s->w[i].srqn);
	accept_conn(s, ev, c, acc, VB_XACCEPT_LEN(s->c.workers), peer);
	return 0;
}

/*
 * Handles a connect request: checks the hello, creates the QP on the
 * named worker's SRQ and CQs, publishes it to the worker and accepts.
 * Returns 1 if the request was refused (the caller destroys the id after
 * acking the event), 0 if accepted.
 */
static int cm_request(struct tp_server *s, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	const uint8_t *h = ev->param.conn.private_data;
	unsigned hl = ev->param.conn.private_data_len;
	char why[VB_REJECT_LEN - 8] = "", peer[64];
	uint16_t code = 0;
	unsigned worker = 0;
	uint32_t block = 0, ci = 0;
	struct vb_sconn *c = NULL;

	peer_str(id, peer, sizeof peer);
	if (!h || hl < VB_HELLO_LEN || get32(h) != VB_HELLO_MAGIC) {
		code = 1;
		snprintf(why, sizeof why, "not an oqbench verbs client (the connect request has no oqbench hello)");
		goto reject;
	}
	if (get16(h + 4) != VB_VERSION) {
		code = 2;
		snprintf(why, sizeof why, "client speaks verbs protocol %u, this server %u; use the same oqbench "
			 "build on both sides", get16(h + 4), VB_VERSION);
		goto reject;
	}
	unsigned flags = get16(h + 6);
	worker = get16(h + 12);
	block = get32(h + 8);
	/* With XRC a client unit opens two connections: an RC one here (the
	 * QP every worker replies on; it comes first and gets the client id)
	 * and an XRC one on listen_x, whose SENDs name a worker's SRQ. */
	int xreq = s->listen_x && ev->listen_id == s->listen_x;
	int xreply = !xreq && s->xrcd;
	if (xreq || xreply)
		worker = 0;
	if (xreq && block == 0) {
		code = 8;
		snprintf(why, sizeof why, "an XRC request connection must name the client id its reply connection got");
		goto reject;
	}
	if (worker >= s->c.workers) {
		code = 3;
		snprintf(why, sizeof why, "worker %u does not exist: this server has %u worker(s)", worker,
			 s->c.workers);
		goto reject;
	}
	if (block == 0) {
		if (s->next_block > VB_MAX_BLOCK) {
			code = 4;
			snprintf(why, sizeof why, "client ids are used up; restart the server");
			goto reject;
		}
		block = s->next_block++;
	} else if (block >= s->next_block) {
		code = 5;
		snprintf(why, sizeof why, "unknown client id block %u (was the server restarted? reconnect)", block);
		goto reject;
	}
	if (!s->ncfree) {
		code = 6;
		snprintf(why, sizeof why, "too many connections (%d); close some clients or use --delegation",
			 VB_MAX_CONNS);
		goto reject;
	}
	ci = s->cfree[--s->ncfree];
	if (ci + 1 > s->conns_hi)
		s->conns_hi = ci + 1;
	c = &s->conns[ci];
	struct vb_worker *w = &s->w[worker];
	c->kind = xreq ? CK_XRECV : xreply ? CK_XREPLY : CK_RC;
	c->worker = worker;
	c->block = block;
	c->pid = get32(h + 20);
	c->thread = get32(h + 24);
	c->delegated = (flags & VB_HF_DELEGATED) != 0;
	c->sq_depth = c->delegated ? VB_SRV_SQ_DELEG : VB_SRV_SQ;
	if (c->sq_depth > (uint32_t)s->da.max_qp_wr)
		c->sq_depth = (uint32_t)s->da.max_qp_wr;
	c->established = 0;
	c->stalled = 0;
	atomic_store(&c->inflight, 0);

	int made = -1, qerr = 0;
	if (c->kind == CK_XRECV) {
		/* the target QP: no queues of its own, the XRC domain's SRQs */
		struct ibv_qp_init_attr_ex xa;
		memset(&xa, 0, sizeof xa);
		xa.qp_type = IBV_QPT_XRC_RECV;
		xa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD;
		xa.pd = s->pd;
		xa.xrcd = s->xrcd;
		made = rdma_create_qp_ex(id, &xa);
		if (made)
			qerr = errno;
		c->max_inline = 0;
	} else {
		struct ibv_cq *scq = w->scq, *rcq = w->rcq;
		struct ibv_srq *srq = w->srq;
		if (c->kind == CK_XREPLY) {
			if (xreply_init(s, c) != 0) {
				qerr = errno ? errno : ENOMEM;
				goto qp_failed;
			}
			scq = rcq = c->xcq;
			srq = NULL;   /* it receives nothing; an RC QP cannot use an XRC SRQ */
		}
		static const unsigned inl[] = { VB_INLINE, 64, 0 };
		for (size_t k = 0; k < sizeof inl / sizeof inl[0] && made; k++) {
			struct ibv_qp_init_attr qa = {
				.send_cq = scq, .recv_cq = rcq, .srq = srq, .qp_type = IBV_QPT_RC,
				.cap = { .max_send_wr = c->sq_depth, .max_recv_wr = srq ? 0 : 1, .max_send_sge = 1,
					 .max_recv_sge = 1, .max_inline_data = inl[k] },
			};
			made = rdma_create_qp(id, s->pd, &qa);
			if (made)
				qerr = errno;
			else
				c->max_inline = qa.cap.max_inline_data;
		}
	}
qp_failed:
	if (made) {
		if (c->kind == CK_XREPLY)
			xreply_free(c);
		s->cfree[s->ncfree++] = ci;
		code = 7;
		snprintf(why, sizeof why, "the server cannot create a%s QP: %s", c->kind == CK_XRECV ? "n XRC receive" :
			 c->kind == CK_XREPLY ? "n XRC reply" : "", strerror(qerr));
		log_msg(LOG_ERR, "worker %u: creating a QP for %s failed: %s (max_qp %d)", worker, peer,
			strerror(qerr), s->da.max_qp);
		goto reject;
	}
	c->id = id;
	id->context = c;

	/* Publish before accepting: the client may send (and expect a reply)
	 * as soon as it sees the accept. */
	int mapped = 1;
	unsigned first, last;
	conn_tables(s, c, &first, &last);
	for (unsigned i = first; i < last; i++) {
		struct vb_worker *wi = &s->w[i];
		pthread_mutex_lock(&wi->mu);
		if (block >= wi->nblock) {
			uint32_t nb = wi->nblock ? wi->nblock : 64;
			while (nb <= block)
				nb *= 2;
			uint32_t *p = realloc(wi->by_block, (size_t)nb * sizeof *p);
			if (p) {
				memset(p + wi->nblock, 0, (size_t)(nb - wi->nblock) * sizeof *p);
				wi->by_block = p;
				wi->nblock = nb;
			}
		}
		if (block < wi->nblock)
			wi->by_block[block] = ci + 1;
		else
			mapped = 0;
		pthread_mutex_unlock(&wi->mu);
	}
	c->state = CS_LIVE;
	if (c->kind == CK_RC)
		atomic_fetch_add(&w->qps, 1);
	else if (c->kind == CK_XREPLY)
		s->qps_xreply++;
	else
		s->qps_xrecv++;
	atomic_fetch_add(&s->qps_live, 1);
	if (!mapped) {
		conn_close(s, c);
		log_msg(LOG_ERR, "out of memory for the connection table of worker %u", worker);
		return 0;   /* the id is destroyed by the zombie reaper */
	}
	if (c->kind == CK_XRECV)
		return xrc_accept(s, ev, c, peer);

	uint8_t acc[VB_ACCEPT_LEN];
	memset(acc, 0, sizeof acc);
	put32(acc, VB_ACCEPT_MAGIC);
	put16(acc + 4, VB_VERSION);
	put16(acc + 6, 0);
	put32(acc + 8, block);
	put16(acc + 12, (uint16_t)s->c.workers);
	put16(acc + 14, (uint16_t)((s->c.durable ? VB_AF_DURABLE : 0) | (s->mode == RM_SLOT_RING ? VB_AF_SLOT_RING : 0) |
				   (w->pmem_file ? VB_AF_PMEM : 0) | (c->kind == CK_XREPLY ? VB_AF_XRC : 0)));
	put32(acc + 16, s->c.slot_size);
	put32(acc + 20, s->c.ring_slots);
	put64(acc + 24, (uint64_t)(uintptr_t)&w->hdr->flush_word);
	put32(acc + 32, w->hdr_mr->rkey);
	acc[36] = (uint8_t)s->c.min_rnr_timer;
	put64(acc + 40, s->sys_hash);
	memcpy(acc + 48, s->system, 16);
	put32(acc + 64, (uint32_t)getpid());
	accept_conn(s, ev, c, acc, VB_ACCEPT_LEN, peer);
	return 0;

reject:
	s->conn_rejected++;
	snprintf(s->last_reject, sizeof s->last_reject, "%s", why);
	log_msg(LOG_WARN, "refused a connection from %s: %s", peer, why);
	uint8_t rj[VB_REJECT_LEN];
	memset(rj, 0, sizeof rj);
	put32(rj, VB_REJECT_MAGIC);
	put16(rj + 4, VB_VERSION);
	put16(rj + 6, code);
	snprintf((char *)rj + 8, VB_REJECT_LEN - 8, "%s", why);
	rdma_reject(id, rj, VB_REJECT_LEN);
	return 1;
}

static void cm_event(struct tp_server *s, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	enum rdma_cm_event_type type = ev->event;
	int status = ev->status;
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		int refused = cm_request(s, ev);
		rdma_ack_cm_event(ev);
		if (refused)
			rdma_destroy_id(id);
		return;
	}
	struct vb_sconn *c = id && id != s->listen && id->context != (void *)s ? id->context : NULL;
	rdma_ack_cm_event(ev);
	switch (type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c)
			c->established = 1;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		if (c) {
			if (type != RDMA_CM_EVENT_DISCONNECTED)
				log_msg(LOG_WARN, "connection of client block %u to worker %u failed: %s (status %d)",
					c->block, c->worker, rdma_event_str(type), status);
			conn_close(s, c);
		}
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		log_msg(LOG_ERR, "RDMA device %s was removed; the server cannot go on", s->devname);
		break;
	default:
		log_msg(LOG_DEBUG, "rdma_cm event %s (status %d)", rdma_event_str(type), status);
		break;
	}
}

static void *cm_main(void *arg)
{
	struct tp_server *s = arg;
	while (!atomic_load(&s->stop)) {
		if (wait_readable(s->ch->fd, 100) > 0) {
			struct rdma_cm_event *ev;
			while (!atomic_load(&s->stop) && rdma_get_cm_event(s->ch, &ev) == 0)
				cm_event(s, ev);
		}
		reap_zombies(s, 0);
	}
	return NULL;
}

static void vb_srv_close(struct tp_server *s);

static int parse_recv_mode(const char *m, int *mode, char *err, size_t errlen)
{
	if (!m || !*m || !strcmp(m, "srq")) {
		*mode = RM_SRQ;
		return 0;
	}
	if (!strcmp(m, "slot_ring")) {
		*mode = RM_SLOT_RING;
		return 0;
	}
	if (!strcmp(m, "mp")) {
#if OQB_HAVE_VERBS_EXP
		*mode = RM_MP;
		return 0;
#else
		snprintf(err, errlen, "recv_mode mp needs the MLNX_OFED 4.x experimental verbs "
			 "(infiniband/verbs_exp.h with multi-packet SRQ support, 4.6 or later), which this build "
			 "does not have; use slot_ring for the portable emulation");
		return -1;
#endif
	}
	snprintf(err, errlen, "recv_mode '%s': expected srq, slot_ring or mp", m);
	return -1;
}

static struct tp_server *vb_srv_open(const struct tp_srv_conf *c, char *err, size_t errlen)
{
	int mode;
	if (c->workers < 1 || c->workers > VB_MAX_WORKERS) {
		snprintf(err, errlen, "verbs: workers = %u; expected 1 to %d", c->workers, VB_MAX_WORKERS);
		return NULL;
	}
	if (c->ring_slots < 2 || (c->ring_slots & (c->ring_slots - 1))) {
		snprintf(err, errlen, "verbs: ring slots = %u; expected a power of two >= 2", c->ring_slots);
		return NULL;
	}
	if (c->slot_size < WIRE_ALIGN || c->slot_size % WIRE_ALIGN || c->slot_size > (1u << 24)) {
		snprintf(err, errlen, "verbs: slot size = %u; expected a multiple of %u up to 16 MiB", c->slot_size,
			 WIRE_ALIGN);
		return NULL;
	}
	if (c->min_rnr_timer > 31) {
		snprintf(err, errlen, "verbs: min_rnr_timer = %u; expected an IBTA timer code 0..31", c->min_rnr_timer);
		return NULL;
	}
	if (parse_recv_mode(c->recv_mode, &mode, err, errlen) != 0)
		return NULL;
	if (!c->addr || !*c->addr) {
		snprintf(err, errlen, "verbs: no address to listen on; give --addr with the IP address of the "
			 "RDMA device's network interface (oqb-server --list-devices shows the GIDs)");
		return NULL;
	}
	/* libmlx5 may place small messages in the CQE and copy them into the
	 * buffer only when the CQ is polled; the buffer (and, durable, the
	 * PM) must hold them at ACK time.  Read when the device is opened. */
	setenv("MLX5_SCATTER_TO_CQE", "0", 1);

	struct tp_server *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "verbs: out of memory");
		return NULL;
	}
	s->c = *c;
	s->mode = mode;
	s->mask = c->ring_slots - 1;
	s->next_block = 1;
	s->gid_index = -1;
	snprintf(s->system, sizeof s->system, "%s", c->system ? c->system : "");
	s->sys_hash = fnv64(s->system);
	s->w = calloc(c->workers, sizeof *s->w);
	s->conns = calloc(VB_MAX_CONNS, sizeof *s->conns);
	s->cfree = calloc(VB_MAX_CONNS, sizeof *s->cfree);
	if (!s->w || !s->conns || !s->cfree) {
		snprintf(err, errlen, "verbs: out of memory");
		goto fail;
	}
	for (unsigned i = 0; i < VB_MAX_CONNS; i++)
		s->cfree[i] = VB_MAX_CONNS - 1 - i;
	s->ncfree = VB_MAX_CONNS;

	s->ch = rdma_create_event_channel();
	if (!s->ch) {
		snprintf(err, errlen, "cannot open the RDMA connection manager: %s (load rdma_ucm: modprobe rdma_ucm; "
			 "a host without RDMA can run the verbs tests in the Soft-RoCE VM, tests/vm/rxe-vm)",
			 strerror(errno));
		goto fail;
	}
	if (set_nonblock(s->ch->fd) != 0) {
		snprintf(err, errlen, "verbs: cannot make the CM channel non-blocking: %s", strerror(errno));
		goto fail;
	}
	char portstr[16];
	snprintf(portstr, sizeof portstr, "%u", c->port);
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE },
			*ai = NULL;
	int ge = getaddrinfo(c->addr, portstr, &hints, &ai);
	if (ge || !ai) {
		snprintf(err, errlen, "--addr %s: cannot resolve: %s", c->addr, gai_strerror(ge));
		goto fail;
	}
	make_host_str(ai->ai_addr, s->host, sizeof s->host);
	snprintf(s->endpoint, sizeof s->endpoint, "verbs:%s:%u", s->host, c->port);
	if (rdma_create_id(s->ch, &s->listen, s, RDMA_PS_TCP) != 0) {
		freeaddrinfo(ai);
		snprintf(err, errlen, "rdma_create_id: %s", strerror(errno));
		goto fail;
	}
	if (rdma_bind_addr(s->listen, ai->ai_addr) != 0) {
		int e = errno;
		freeaddrinfo(ai);
		snprintf(err, errlen, "cannot listen on %s: %s%s", s->endpoint, strerror(e),
			 e == EADDRINUSE ? " (another RDMA listener, e.g. another oqb-server, has this port; "
			 "pick another --port)" :
			 e == EADDRNOTAVAIL || e == ENODEV ? " (the address is not configured on any interface "
			 "here; give the IP address of the RDMA device's interface)" : "");
		goto fail;
	}
	union ibv_gid want;
	addr_gid(ai->ai_addr, &want);
	freeaddrinfo(ai);

	char avail[256];
	if (!s->listen->verbs) {
		device_names(avail, sizeof avail);
		snprintf(err, errlen, "address %s is not on an RDMA device (no device owns it); give the address of "
			 "an RDMA-capable interface.  Devices here: %s", s->host, avail);
		goto fail;
	}
	s->ctx = s->listen->verbs;
	s->port_num = s->listen->port_num;
	snprintf(s->devname, sizeof s->devname, "%s", ibv_get_device_name(s->ctx->device));
	if (c->device && *c->device && strcmp(c->device, s->devname) != 0) {
		int n = 0, found = 0;
		struct ibv_device **l = ibv_get_device_list(&n);
		for (int i = 0; l && i < n; i++)
			found |= !strcmp(ibv_get_device_name(l[i]), c->device);
		if (l)
			ibv_free_device_list(l);
		device_names(avail, sizeof avail);
		if (!found)
			snprintf(err, errlen, "device '%s' not found; available: %s", c->device, avail);
		else
			snprintf(err, errlen, "address %s belongs to device %s, not --device %s; give an address of "
				 "%s's interface, or leave --device out", s->host, s->devname, c->device, c->device);
		goto fail;
	}
	if (ibv_query_device(s->ctx, &s->da) != 0) {
		snprintf(err, errlen, "cannot query device %s: %s", s->devname, strerror(errno));
		goto fail;
	}
	struct ibv_port_attr pa;
	if (ibv_query_port(s->ctx, s->port_num, &pa) != 0) {
		snprintf(err, errlen, "cannot query port %u of %s: %s", s->port_num, s->devname, strerror(errno));
		goto fail;
	}
	if (c->ib_port && c->ib_port != s->port_num)
		log_msg(LOG_WARN, "address %s is on port %u of %s; --ib-port %u is ignored (rdma_cm picks the port "
			"that owns the address)", s->host, s->port_num, s->devname, c->ib_port);
	if (pa.state != IBV_PORT_ACTIVE)
		log_msg(LOG_WARN, "port %u of %s is %s, not ACTIVE; clients will not reach it", s->port_num,
			s->devname, port_state_str(pa.state));
	int gi = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? find_gid(s->ctx, s->port_num, &want, pa.gid_tbl_len) : -1;
	s->gid_index = gi;
	if (c->gid_index >= 0 && gi >= 0 && c->gid_index != gi) {
		union ibv_gid g;
		char gs[64] = "(empty)";
		if (!ibv_query_gid(s->ctx, s->port_num, c->gid_index, &g))
			gid_str(&g, gs, sizeof gs);
		snprintf(err, errlen, "--gid-index %d: GID %d of %s port %u is %s, but address %s is GID index %d, "
			 "which rdma_cm uses; give --gid-index %d or -1 (auto)", c->gid_index, c->gid_index, s->devname,
			 s->port_num, gs, s->host, gi, gi);
		goto fail;
	}
	if (c->xrc) {
		if (!(s->da.device_cap_flags & IBV_DEVICE_XRC)) {
			snprintf(err, errlen, "device %s has no XRC support (IBV_DEVICE_XRC); run without verbs.xrc "
				 "(--xrc), or use clients.delegation (--delegation) to cut QPs", s->devname);
			goto fail;
		}
		if (mode == RM_MP) {
			snprintf(err, errlen, "verbs.xrc with recv_mode mp: MLNX_OFED's multi-packet SRQ is a "
				 "tag-matching SRQ, which is not an XRC SRQ; use one or the other");
			goto fail;
		}
		if (c->workers > VB_XRC_MAX_WORKERS) {
			snprintf(err, errlen, "verbs.xrc with %u workers: the accept data holds the SRQ numbers of at "
				 "most %d workers; use fewer workers", c->workers, VB_XRC_MAX_WORKERS);
			goto fail;
		}
	}
	if (mode != RM_MP && c->ring_slots > (unsigned)s->da.max_srq_wr) {
		snprintf(err, errlen, "--ring-slots %u exceeds %s's max_srq_wr %d; use at most %u", c->ring_slots,
			 s->devname, s->da.max_srq_wr, pow2_at_least((unsigned)s->da.max_srq_wr + 1) / 2);
		goto fail;
	}
	if (mode != RM_MP && c->ring_slots + 16 > (unsigned)s->da.max_cqe) {
		snprintf(err, errlen, "--ring-slots %u: a worker's receive CQ must hold every slot, and %s's max_cqe is %d; "
			 "use --ring-slots %u or less", c->ring_slots, s->devname, s->da.max_cqe,
			 pow2_at_least((unsigned)s->da.max_cqe - 15) / 2);
		goto fail;
	}
	if ((int)c->workers > s->da.max_srq) {
		snprintf(err, errlen, "--workers %u exceeds %s's max_srq %d", c->workers, s->devname, s->da.max_srq);
		goto fail;
	}
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd) {
		snprintf(err, errlen, "cannot allocate a protection domain on %s: %s", s->devname, strerror(errno));
		goto fail;
	}
	if (c->xrc) {
		struct ibv_xrcd_init_attr xa;
		memset(&xa, 0, sizeof xa);
		xa.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
		xa.fd = -1;              /* a domain of this process only */
		xa.oflags = O_CREAT;
		s->xrcd = ibv_open_xrcd(s->ctx, &xa);
		if (!s->xrcd) {
			snprintf(err, errlen, "cannot open an XRC domain on %s: %s; run without verbs.xrc (--xrc)",
				 s->devname, strerror(errno));
			goto fail;
		}
	}
	for (unsigned i = 0; i < c->workers; i++)
		if (worker_init(s, i, err, errlen) != 0)
			goto fail;
	if (rdma_listen(s->listen, 1024) != 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", s->endpoint, strerror(errno));
		goto fail;
	}
	if (c->xrc) {
		/* XRC request connections: the same address and port number in
		 * the IB port space (rdma_cm makes XRC connections there) */
		struct sockaddr_storage xs;
		memcpy(&xs, rdma_get_local_addr(s->listen), sizeof xs);
		if (rdma_create_id(s->ch, &s->listen_x, s, RDMA_PS_IB) != 0 ||
		    rdma_bind_addr(s->listen_x, (struct sockaddr *)&xs) != 0 || rdma_listen(s->listen_x, 1024) != 0) {
			snprintf(err, errlen, "cannot listen for XRC connections on %s (port space IB): %s%s", s->endpoint,
				 strerror(errno), errno == EADDRINUSE ? " (another listener has that port in the IB port "
				 "space; pick another --port)" : "");
			goto fail;
		}
	}
	int e = pthread_create(&s->cm_th, NULL, cm_main, s);
	if (e) {
		snprintf(err, errlen, "cannot start the connection thread: %s", strerror(e));
		goto fail;
	}
	s->cm_started = 1;
	log_msg(LOG_INFO, "verbs: listening on %s (device %s port %u, GID index %d, %s, %u worker(s) x %u slots of %u B)",
		s->endpoint, s->devname, s->port_num, s->gid_index, rm_label[s->mode], c->workers, c->ring_slots,
		c->slot_size);
	return s;
fail:
	vb_srv_close(s);
	return NULL;
}

static const char *vb_srv_endpoint(struct tp_server *s)
{
	return s->endpoint;
}

static int vb_srv_poll(struct tp_server *s, unsigned wi, struct tp_arrival *a, int max)
{
	struct vb_worker *w = &s->w[wi];
	struct ibv_wc wc[64];
	flush_reposts(s, w);
	if (w->scq_out)
		reap_sends(s, w);
	if (max > 64)
		max = 64;
#if OQB_HAVE_VERBS_EXP
	if (s->mode == RM_MP)
		return mp_poll(s, w, a, max);
#endif
	int n = ibv_poll_cq(w->rcq, max, wc);
	if (n <= 0) {
		if (n < 0 && w_may_log(w))
			log_msg(LOG_ERR, "worker %u: ibv_poll_cq on the receive CQ failed", wi);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		uint64_t t = wc[i].wr_id, pos = t & s->mask;
		w->tick[pos] = t;
		w->ok[pos] = wc[i].status == IBV_WC_SUCCESS;
		w->len[pos] = wc[i].byte_len;
		a[i].slot = t;
		a[i].voided = !w->ok[pos];
		if (!w->ok[pos]) {
			w->recv_errors++;
			w->last_recv_error = ibv_wc_status_str(wc[i].status);
			if (w_may_log(w))
				log_msg(LOG_WARN, "worker %u: receive in slot %" PRIu64 " (QP 0x%x) completed with %s "
					"(vendor error 0x%x); the slot is voided, never executed", wi, t, wc[i].qp_num,
					w->last_recv_error, wc[i].vendor_err);
		}
	}
	w->arrivals += (uint64_t)n;
	return n;
}

static const void *vb_srv_req(struct tp_server *s, unsigned wi, uint64_t slot, size_t *avail)
{
	struct vb_worker *w = &s->w[wi];
	uint64_t pos = slot & s->mask;
	if (w->tick[pos] != slot || !w->ok[pos]) {
		*avail = 0;
		return NULL;
	}
	*avail = w->len[pos] < s->c.slot_size ? w->len[pos] : s->c.slot_size;
	if (w->mp)
		return w->slots + w->moff[pos];
	return slot_buf(s, w, pos);
}

static void vb_srv_release(struct tp_server *s, unsigned wi, uint64_t slot)
{
	struct vb_worker *w = &s->w[wi];
#if OQB_HAVE_VERBS_EXP
	if (s->mode == RM_MP) {
		mp_release(s, w, slot);
		return;
	}
#endif
	w->hdr->req_to_execute = slot + 1;
	w_persist(w, &w->hdr->req_to_execute, sizeof w->hdr->req_to_execute);
	w->tick[slot & s->mask] = UINT64_MAX;
	if (w->pmem_file) {
		/* Invalidate before the repost: after a crash the scan must
		 * not find this executed request in a slot posted again. */
		uint8_t *b = slot_buf(s, w, slot & s->mask);
		memset(b, 0, 16);
		w_persist(w, b, 16);
	}
	uint64_t t = slot + s->c.ring_slots;
	if (s->mode == RM_SRQ) {
		post_recv(s, w, t, 1);
		return;
	}
	if (w->batch_n && w->batch_first + w->batch_n != t)
		flush_reposts(s, w);
	if (!w->batch_n)
		w->batch_first = t;
	if (++w->batch_n >= VB_REPOST_BATCH)
		flush_reposts(s, w);
}

/*
 * A reply on an XRC client's reply QP, which every worker shares: under
 * the connection's lock, with its own send CQ and buffers.  Buffer k of
 * the ring is reused only after the WR that used it completed: at most
 * sq_depth - 1 replies are in flight and completions come in order.
 * Called with w->mu held (it keeps c alive); unlocks it.
 */
static int xrc_reply(struct tp_server *s, struct vb_worker *w, struct vb_sconn *c, uint32_t client_id,
		     const struct wire_resp *rr, const void *val, uint32_t len)
{
	int ret = -1;
	pthread_mutex_lock(&c->xmu);
	xreply_reap(c);
	if (atomic_load(&c->inflight) + 1 >= c->sq_depth) {
		uint64_t t0 = clock_ns();
		w->reply_waits++;
		while (atomic_load(&c->inflight) + 1 >= c->sq_depth) {
			xreply_reap(c);
			if (c->stalled || clock_ns() - t0 > VB_REPLY_WAIT_NS) {
				if (!c->stalled && w_may_log(w))
					log_msg(LOG_WARN, "worker %u: client %u (pid %u) takes no replies (its XRC reply queue "
						"stayed full for %llu ms); dropping replies to it until it drains", w->idx,
						client_id, c->pid, VB_REPLY_WAIT_NS / 1000000);
				c->stalled = 1;
				w->reply_drops++;
				goto out;
			}
			cpu_relax();
		}
	}
	c->stalled = 0;
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof wr);
	uint8_t *b = c->xbuf + (size_t)(c->xposted % c->sq_depth) * s->c.slot_size;
	wire_encode_resp(b, rr);
	if (rr->val_len)
		memcpy(b + WIRE_RESP_HDR, val, rr->val_len);
	sge.addr = (uintptr_t)b;
	sge.length = len;
	sge.lkey = c->xmr->lkey;
	wr.send_flags = IBV_SEND_SIGNALED | (len <= c->max_inline ? IBV_SEND_INLINE : 0);
	w->reply_inline += len <= c->max_inline;
	wr.wr_id = c->xposted;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	int e = ibv_post_send(c->id->qp, &wr, &bad);
	if (e) {
		w->send_errors++;
		if (w_may_log(w))
			log_msg(LOG_WARN, "worker %u: posting a reply to client %u failed: %s", w->idx, client_id,
				strerror(e));
		goto out;
	}
	c->xposted++;
	atomic_fetch_add(&c->inflight, 1);
	w->replies++;
	ret = 0;
out:
	pthread_mutex_unlock(&c->xmu);
	pthread_mutex_unlock(&w->mu);
	return ret;
}

static int vb_srv_reply(struct tp_server *s, unsigned wi, uint32_t client_id,
			const struct wire_resp *r, const void *val)
{
	struct vb_worker *w = &s->w[wi];
	uint32_t block = client_id >> VB_LANE_BITS;
	struct wire_resp rr = *r;
	if (WIRE_RESP_HDR + (uint64_t)rr.val_len > s->c.slot_size) {
		/* The client's receive buffers hold slot_size bytes. */
		rr.status = KV_ERR_NOSPACE;
		rr.val_len = 0;
		val = NULL;
		w->reply_too_big++;
	}
	uint32_t len = WIRE_RESP_HDR + rr.val_len;

	pthread_mutex_lock(&w->mu);
	uint32_t ci = block < w->nblock ? w->by_block[block] : 0;
	struct vb_sconn *c = ci ? &s->conns[ci - 1] : NULL;
	if (!c || c->state != CS_LIVE) {
		w->unknown_client++;
		pthread_mutex_unlock(&w->mu);
		return -1;
	}
	ci--;
	if (c->kind == CK_XREPLY)
		return xrc_reply(s, w, c, client_id, &rr, val, len);   /* unlocks w->mu */
	if (atomic_load(&c->inflight) >= c->sq_depth || w->scq_out >= VB_SRV_SCQ ||
	    (len > c->max_inline && !w->nsfree)) {
		/* A client that stopped taking replies must not stall the
		 * worker for everyone: wait a while once, then drop. */
		uint64_t t0 = clock_ns();
		w->reply_waits++;
		while (atomic_load(&c->inflight) >= c->sq_depth || w->scq_out >= VB_SRV_SCQ ||
		       (len > c->max_inline && !w->nsfree)) {
			if (reap_sends(s, w))
				continue;
			if (c->stalled || clock_ns() - t0 > VB_REPLY_WAIT_NS) {
				if (!c->stalled && w_may_log(w))
					log_msg(LOG_WARN, "worker %u: client %u (pid %u) takes no replies (its send queue "
						"stayed full for %llu ms); dropping replies to it until it drains", wi,
						client_id, c->pid, VB_REPLY_WAIT_NS / 1000000);
				c->stalled = 1;
				w->reply_drops++;
				pthread_mutex_unlock(&w->mu);
				return -1;
			}
			cpu_relax();
		}
	}
	c->stalled = 0;
	uint8_t tmp[VB_INLINE];
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad = NULL;
	uint32_t sb = 0xffff;
	memset(&wr, 0, sizeof wr);
	if (len <= c->max_inline && len <= sizeof tmp) {
		wire_encode_resp(tmp, &rr);
		if (rr.val_len)
			memcpy(tmp + WIRE_RESP_HDR, val, rr.val_len);
		sge.addr = (uintptr_t)tmp;
		sge.lkey = 0;
		wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
		w->reply_inline++;
	} else {
		sb = w->sfree[--w->nsfree];
		uint8_t *b = w->sbuf + (size_t)sb * s->c.slot_size;
		wire_encode_resp(b, &rr);
		if (rr.val_len)
			memcpy(b + WIRE_RESP_HDR, val, rr.val_len);
		sge.addr = (uintptr_t)b;
		sge.lkey = w->sbuf_mr->lkey;
		wr.send_flags = IBV_SEND_SIGNALED;
	}
	sge.length = len;
	wr.wr_id = (uint64_t)ci << 32 | (uint64_t)(atomic_load(&c->gen) & 0xffff) << 16 | sb;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	int e = ibv_post_send(c->id->qp, &wr, &bad);
	if (e) {
		if (sb != 0xffff)
			w->sfree[w->nsfree++] = (uint16_t)sb;
		w->send_errors++;
		if (w_may_log(w))
			log_msg(LOG_WARN, "worker %u: posting a reply to client %u failed: %s", wi, client_id, strerror(e));
		pthread_mutex_unlock(&w->mu);
		return -1;
	}
	atomic_fetch_add(&c->inflight, 1);
	w->scq_out++;
	w->replies++;
	pthread_mutex_unlock(&w->mu);
	return 0;
}

static void vb_srv_flush(struct tp_server *s, unsigned wi)
{
	struct vb_worker *w = &s->w[wi];
	flush_reposts(s, w);
	if (w->scq_out)
		reap_sends(s, w);
}

static json_t *vb_srv_stats(struct tp_server *s)
{
	json_t *arr = json_array();
	for (unsigned i = 0; i < s->c.workers; i++) {
		struct vb_worker *w = &s->w[i];
		json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:i,s:I}",
			"tickets_posted", (json_int_t)w->next_post, "arrivals", (json_int_t)w->arrivals,
			"recv_errors", (json_int_t)w->recv_errors, "post_errors", (json_int_t)w->post_errors,
			"post_calls", (json_int_t)w->post_calls, "replies", (json_int_t)w->replies,
			"reply_inline", (json_int_t)w->reply_inline, "reply_drops", (json_int_t)w->reply_drops,
			"reply_waits", (json_int_t)w->reply_waits, "reply_too_big", (json_int_t)w->reply_too_big,
			"unknown_client", (json_int_t)w->unknown_client, "send_errors", (json_int_t)w->send_errors,
			"qps", (int)atomic_load(&w->qps),
			"req_to_execute", (json_int_t)(w->hdr ? w->hdr->req_to_execute : 0));
		if (w->last_recv_error)
			json_object_set_new(o, "last_recv_error", json_string(w->last_recv_error));
		if (w->recovered)
			json_object_set_new(o, "recovery", recovery_report_json(&w->rec));
		if (w->mp) {
			struct mpring_stats ms;
			mpring_get_stats(w->mp, &ms);
			json_object_set_new(o, "multi_packet", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
				"wqe_bytes", (json_int_t)w->mp_wqe_bytes, "messages", (json_int_t)ms.messages,
				"closed_by_filler", (json_int_t)ms.fillers, "closed_by_message", (json_int_t)ms.consumed,
				"strides_used", (json_int_t)ms.strides_used, "strides_wasted", (json_int_t)ms.strides_wasted,
				"wqe_reposts", (json_int_t)ms.reposts, "refused_completions", (json_int_t)ms.rejected));
		}
		json_array_append_new(arr, o);
	}
	json_t *j = json_pack("{s:s,s:s,s:s,s:i,s:i,s:s,s:I,s:I,s:b,s:b,s:i,s:i,s:i,s:I,s:I,s:I,s:I,s:o}",
		"transport", "verbs", "endpoint", s->endpoint, "device", s->devname, "port", (int)s->port_num,
		"gid_index", s->gid_index, "recv_mode", rm_label[s->mode],
		"ring_slots", (json_int_t)s->c.ring_slots, "slot_size", (json_int_t)s->c.slot_size,
		"durable", s->c.durable, "pmem", s->w && s->w[0].pmem_file,
		"min_rnr_timer", (int)s->c.min_rnr_timer,
		"qps", (int)atomic_load(&s->qps_live), "qps_peak", (int)s->qps_peak,
		"connections", (json_int_t)s->conn_total, "connections_delegated", (json_int_t)s->conn_delegated,
		"connections_refused", (json_int_t)s->conn_rejected, "disconnects", (json_int_t)s->disconnects,
		"workers", arr);
	if (s->xrcd)
		json_object_set_new(j, "xrc", json_pack("{s:i,s:i}", "receive_qps", (int)s->qps_xrecv,
							"reply_qps", (int)s->qps_xreply));
	if (s->last_reject[0])
		json_object_set_new(j, "last_refusal", json_string(s->last_reject));
	if (s->rnr_set_failed)
		json_object_set_new(j, "min_rnr_timer_set", json_false());
	return j;
}

static void vb_srv_close(struct tp_server *s)
{
	if (!s)
		return;
	if (s->cm_started) {
		atomic_store(&s->stop, 1);
		pthread_join(s->cm_th, NULL);
	}
	if (s->conns) {
		for (unsigned i = 0; i < s->conns_hi; i++)
			if (s->conns[i].state == CS_LIVE)
				conn_close(s, &s->conns[i]);
		reap_zombies(s, 1);
	}
	if (s->listen)
		rdma_destroy_id(s->listen);
	if (s->listen_x)
		rdma_destroy_id(s->listen_x);
	if (s->w)
		for (unsigned i = 0; i < s->c.workers; i++)
			if (s->w[i].s)
				worker_free(s, &s->w[i]);
	if (s->xrcd)
		ibv_close_xrcd(s->xrcd);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->ch)
		rdma_destroy_event_channel(s->ch);
	free(s->w);
	free(s->conns);
	free(s->cfree);
	free(s);
}

/* ------------------------------------------------------------------ */
/* client                                                              */

#define VB_NOBUF UINT32_MAX

struct vb_ev {                 /* an event on its way from a QP's owner to a lane */
	uint64_t seq;
	uint32_t status, val_len;
	uint32_t buf;              /* receive buffer of a response, or VB_NOBUF */
	uint8_t kind, op;
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
};

struct vb_lane {
	struct vb_group *g;
	unsigned idx, evcap;
	uint32_t client_id;
	uint8_t *sbuf;             /* workers x depth slots, then workers x 64 B READ targets */
	struct ibv_mr *mr;
	struct vb_lq *q;
	uint32_t held[VB_HELD_MAX];/* response buffers handed out by the last poll */
	unsigned nheld, rr;
	uint64_t posts, full_waits, delivered, acks, resps;
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
	/* counters, under mu */
	uint64_t sends, inline_sends, reads, post_calls, send_completions, responses;
	uint64_t stray, bad, overflow;
};

struct vb_group {              /* QPs to every worker of one server */
	char endpoint[192];
	struct sockaddr_storage dst;
	unsigned port;
	int delegated, durable_srv;
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

static pthread_mutex_t deleg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct vb_group *deleg_group;

static void group_break(struct vb_group *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void group_break(struct vb_group *g, const char *fmt, ...)
{
	int was = atomic_exchange(&g->broken, 1);
	if (was)
		return;
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&g->err_mu);
	vsnprintf(g->err, sizeof g->err, fmt, ap);
	pthread_mutex_unlock(&g->err_mu);
	va_end(ap);
	log_msg(LOG_ERR, "%s", g->err);
}

static void group_err(struct vb_group *g, char *err, size_t errlen)
{
	pthread_mutex_lock(&g->err_mu);
	snprintf(err, errlen, "%s", g->err);
	pthread_mutex_unlock(&g->err_mu);
}

static void break_wc(struct vb_group *g, const struct vb_cqp *q, const struct ibv_wc *wc)
{
	const char *why;
	switch (wc->status) {
	case IBV_WC_RETRY_EXC_ERR:
		why = "transport retries exhausted: the server stopped answering (it crashed or the network is down)";
		break;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		why = "RNR retries exhausted: the server posted no receive buffer in time";
		break;
	case IBV_WC_WR_FLUSH_ERR:
		why = "flushed: the connection was already broken or closed";
		break;
	case IBV_WC_REM_INV_REQ_ERR:
		why = "the server refused the request (larger than its receive slot?)";
		break;
	case IBV_WC_REM_ACCESS_ERR:
		why = "the server refused the durable READ (wrong region or rkey)";
		break;
	default:
		why = "see the verbs status";
		break;
	}
	group_break(g, "request to worker %u of %s failed: %s: %s (vendor error 0x%x)", q->w, g->endpoint,
		    ibv_wc_status_str(wc->status), why, wc->vendor_err);
}

/* Posts n response buffers back to the client SRQ. */
static void repost_bufs(struct vb_group *g, const uint32_t *bi, unsigned n)
{
	struct ibv_recv_wr wr[64], *bad = NULL;
	struct ibv_sge sg[64];
	while (n) {
		unsigned k = n < 64 ? n : 64;
		for (unsigned i = 0; i < k; i++) {
			sg[i].addr = (uintptr_t)(g->rbuf + (size_t)bi[i] * g->slot_size);
			sg[i].length = g->slot_size;
			sg[i].lkey = g->rmr->lkey;
			wr[i].wr_id = bi[i];
			wr[i].sg_list = &sg[i];
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < k ? &wr[i + 1] : NULL;
		}
		int e = ibv_post_srq_recv(g->srq, wr, &bad);
		if (e) {
			group_break(g, "cannot repost response buffers on %s: %s", g->endpoint, strerror(e));
			return;
		}
		bi += k;
		n -= k;
	}
}

/* Hands an event to lane L (owner side); -1 if its ring is full. */
static int push_ev(struct vb_lane *L, unsigned w, const struct vb_ev *e)
{
	struct vb_lq *lq = &L->q[w];
	uint64_t h = atomic_load_explicit(&lq->ev_head, memory_order_relaxed);
	if (h - atomic_load_explicit(&lq->ev_tail, memory_order_acquire) >= L->evcap)
		return -1;
	lq->ev[h & (L->evcap - 1)] = *e;
	atomic_store_explicit(&lq->ev_head, h + 1, memory_order_release);
	return 0;
}

/* Owner: reaps send completions (DELIVERED) and responses of QP q. */
static int owner_poll(struct vb_group *g, struct vb_cqp *q)
{
	struct ibv_wc wc[32];
	const unsigned D = g->depth;
	int did = 0;
	int n = ibv_poll_cq(q->scq, 32, wc);
	for (int i = 0; i < n; i++) {
		/* wr_id: lane | worker << 16 | WRs completed << 32.  With XRC
		 * one CQ serves every worker's requests (all under one lock). */
		unsigned li = (unsigned)(wc[i].wr_id & 0xffffu), nwr = (unsigned)(wc[i].wr_id >> 32);
		unsigned wq = (unsigned)(wc[i].wr_id >> 16) & 0xffffu;
		struct vb_cqp *qq = wq < g->workers ? &g->q[wq] : q;
		qq->sq_used -= nwr <= qq->sq_used ? nwr : qq->sq_used;
		if (wc[i].status != IBV_WC_SUCCESS) {
			break_wc(g, qq, &wc[i]);
			continue;
		}
		struct vb_lane *L = li < VB_MAX_LANES ? atomic_load_explicit(&g->lanes[li], memory_order_acquire) : NULL;
		if (!L || !nwr)
			continue;
		struct vb_lq *lq = &L->q[qq->w];
		uint64_t k = lq->done & (D - 1);
		struct vb_ev e = { .seq = lq->mseq[k], .kind = TP_EV_DELIVERED, .buf = VB_NOBUF };
		lq->done++;
		atomic_store_explicit(&lq->done_pub, lq->done, memory_order_release);
		qq->send_completions++;
		if (push_ev(L, qq->w, &e) != 0)
			qq->overflow++;
	}
	if (n > 0)
		did += n;
	n = ibv_poll_cq(q->rcq, 32, wc);
	for (int i = 0; i < n; i++) {
		uint32_t bi = (uint32_t)wc[i].wr_id;
		if (wc[i].status != IBV_WC_SUCCESS) {
			q->bad++;
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR) {
				log_msg(LOG_WARN, "a response from worker %u of %s arrived with %s", q->w, g->endpoint,
					ibv_wc_status_str(wc[i].status));
				repost_bufs(g, &bi, 1);
			}
			continue;
		}
		const uint8_t *p = g->rbuf + (size_t)bi * g->slot_size;
		struct wire_resp r;
		if (wc[i].byte_len < WIRE_RESP_HDR) {
			q->bad++;
			repost_bufs(g, &bi, 1);
			continue;
		}
		wire_decode_resp(p, &r);
		if ((uint64_t)WIRE_RESP_HDR + r.val_len > wc[i].byte_len) {
			q->bad++;
			repost_bufs(g, &bi, 1);
			continue;
		}
		unsigned li = r.client_id & (VB_MAX_LANES - 1);
		struct vb_lane *L = (r.client_id >> VB_LANE_BITS) == g->block ?
			atomic_load_explicit(&g->lanes[li], memory_order_acquire) : NULL;
		if (!L) {
			q->stray++;
			repost_bufs(g, &bi, 1);
			continue;
		}
		struct vb_ev e = {
			.seq = r.seq, .status = r.status, .val_len = r.val_len, .buf = bi,
			.kind = r.kind == WIRE_ACK ? TP_EV_ACK : TP_EV_RESP, .op = r.op,
		};
		/* with XRC every worker replies on one QP: the reply names it */
		unsigned rw = q->shared && r.worker < g->workers ? r.worker : q->w;
		q->responses++;
		if (push_ev(L, rw, &e) != 0) {
			q->overflow++;
			repost_bufs(g, &bi, 1);
		}
	}
	if (n > 0)
		did += n;
	return did;
}

/* Owner: posts every lane's written requests that fit the send queue. */
static int owner_post(struct vb_group *g, struct vb_cqp *q)
{
	struct ibv_send_wr wr[32], *bad = NULL;
	struct ibv_sge sg[32];
	const unsigned D = g->depth, W = g->workers;
	unsigned nwr = 0, reqs = 0;
	int full = 0;
	unsigned hi = atomic_load_explicit(&g->lanes_hi, memory_order_acquire);
	for (unsigned k = 0; k < hi && !full; k++) {
		unsigned li = (q->rr + k) % hi;
		struct vb_lane *L = atomic_load_explicit(&g->lanes[li], memory_order_acquire);
		if (!L)
			continue;
		struct vb_lq *lq = &L->q[q->w];
		uint64_t head = atomic_load_explicit(&lq->head, memory_order_acquire);
		while (lq->posted < head) {
			unsigned slot = (unsigned)(lq->posted & (D - 1));
			int dur = lq->mdur[slot];
			unsigned need = dur ? 2 : 1;
			if (q->sq_used + need > q->sq_depth) {
				full = 1;
				break;
			}
			if (nwr + need > 32)
				break;   /* chain full: post it, come back next time */
			uint32_t len = lq->mlen[slot];
			uint8_t *buf = L->sbuf + ((size_t)q->w * D + slot) * g->slot_size;
			sg[nwr].addr = (uintptr_t)buf;
			sg[nwr].length = len;
			sg[nwr].lkey = L->mr->lkey;
			memset(&wr[nwr], 0, sizeof wr[nwr]);
			wr[nwr].wr_id = (uint64_t)li | (uint64_t)q->w << 16 | (uint64_t)(dur ? 0 : 1) << 32;
			if (q->shared)
				wr[nwr].qp_type.xrc.remote_srqn = q->srqn;
			wr[nwr].sg_list = &sg[nwr];
			wr[nwr].num_sge = 1;
			wr[nwr].opcode = IBV_WR_SEND;
			wr[nwr].send_flags = (len <= q->max_inline ? IBV_SEND_INLINE : 0) | (dur ? 0 : IBV_SEND_SIGNALED);
			q->inline_sends += len <= q->max_inline;
			nwr++;
			if (dur) {
				/* §5.3: the READ's completion implies the SEND before it
				 * on this QP was placed; it replaces the SEND's CQE. */
				sg[nwr].addr = (uintptr_t)(L->sbuf + (size_t)W * D * g->slot_size + (size_t)q->w * 64);
				sg[nwr].length = 8;
				sg[nwr].lkey = L->mr->lkey;
				memset(&wr[nwr], 0, sizeof wr[nwr]);
				wr[nwr].wr_id = (uint64_t)li | (uint64_t)q->w << 16 | 2ull << 32;
				if (q->shared)
					wr[nwr].qp_type.xrc.remote_srqn = q->srqn;
				wr[nwr].sg_list = &sg[nwr];
				wr[nwr].num_sge = 1;
				wr[nwr].opcode = IBV_WR_RDMA_READ;
				wr[nwr].send_flags = IBV_SEND_SIGNALED;
				wr[nwr].wr.rdma.remote_addr = q->read_addr;
				wr[nwr].wr.rdma.rkey = q->read_rkey;
				nwr++;
				q->reads++;
			}
			q->sq_used += need;
			lq->posted++;
			reqs++;
		}
		if (nwr + 2 > 32)
			break;
	}
	q->rr++;
	if (!nwr)
		return 0;
	for (unsigned i = 0; i + 1 < nwr; i++)
		wr[i].next = &wr[i + 1];
	wr[nwr - 1].next = NULL;
	int e = ibv_post_send(q->qp, wr, &bad);
	if (e) {
		group_break(g, "posting requests to worker %u of %s failed: %s", q->w, g->endpoint, strerror(e));
		return 0;
	}
	q->post_calls++;
	q->sends += reqs;
	return (int)reqs;
}

/* Does the owner's work on QP w if nobody else is doing it. */
static int combine(struct vb_group *g, unsigned w)
{
	struct vb_cqp *q = &g->q[w];
	if (pthread_mutex_trylock(q->lk) != 0)
		return 0;
	int did = owner_poll(g, q);
	/* one chain holds up to 32 WRs (>= 16 requests); post more chains
	 * while they come full, so a burst leaves in one go */
	for (int k = 0; k < 8 && !atomic_load_explicit(&g->broken, memory_order_relaxed); k++) {
		int p = owner_post(g, q);
		did += p;
		if (p < 16)
			break;
	}
	if (!q->sq_used || did) {
		q->progress_ns = 0;
	} else {
		/* Requests in flight and nothing completes: with rnr_retry 7
		 * a server that stopped consuming would stall us forever. */
		uint64_t now = clock_ns();
		if (!q->progress_ns)
			q->progress_ns = now;
		else if (now - q->progress_ns > VB_STALL_NS)
			group_break(g, "worker %u of %s acknowledged none of %u requests in flight for %.0f s: the "
				    "server is not consuming requests (hung or overloaded), or the connection is stuck",
				    w, g->endpoint, q->sq_used, (double)(now - q->progress_ns) / 1e9);
	}
	pthread_mutex_unlock(q->lk);
	return did;
}

/* Notices a server that closed or lost the connection (every 50 ms). */
static void cm_check(struct vb_group *g)
{
	uint64_t now = clock_ns();
	if (now < atomic_load_explicit(&g->next_cm_check, memory_order_relaxed))
		return;
	if (pthread_mutex_trylock(&g->cm_mu) != 0)
		return;
	atomic_store(&g->next_cm_check, now + VB_CM_CHECK_NS);
	struct rdma_cm_event *ev;
	while (rdma_get_cm_event(g->ch, &ev) == 0) {
		enum rdma_cm_event_type t = ev->event;
		struct vb_cqp *q = ev->id ? ev->id->context : NULL;
		unsigned w = q ? q->w : 0;
		rdma_ack_cm_event(ev);
		if (t == RDMA_CM_EVENT_DISCONNECTED || t == RDMA_CM_EVENT_DEVICE_REMOVAL ||
		    t == RDMA_CM_EVENT_TIMEWAIT_EXIT)
			group_break(g, "the server at %s closed the connection to worker %u (%s): it stopped or "
				    "crashed", g->endpoint, w, rdma_event_str(t));
	}
	pthread_mutex_unlock(&g->cm_mu);
}

static void format_cm_error(struct vb_group *g, unsigned w, struct rdma_cm_event *ev, const char *doing,
			    char *err, size_t errlen)
{
	int st = ev->status;
	char sts[96];
	if (st < 0)
		snprintf(sts, sizeof sts, "%s", strerror(-st));
	else
		snprintf(sts, sizeof sts, "status %d", st);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		snprintf(err, errlen, "cannot connect to %s: RDMA_CM_EVENT_ADDR_ERROR (%s) while %s: no RDMA device "
			 "routes to that address, or nothing answered ARP for it (is the address right, and is "
			 "oqb-server running there?)", g->endpoint, sts, doing);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		snprintf(err, errlen, "cannot connect to %s: RDMA_CM_EVENT_ROUTE_ERROR (%s) while %s (is oqb-server "
			 "running there, and is the address reachable over RDMA?)", g->endpoint, sts, doing);
		break;
	case RDMA_CM_EVENT_REJECTED: {
		const uint8_t *p = ev->param.conn.private_data;
		if (p && ev->param.conn.private_data_len >= 9 && get32(p) == VB_REJECT_MAGIC) {
			char msg[VB_REJECT_LEN];
			size_t ml = ev->param.conn.private_data_len - 8;
			if (ml > sizeof msg - 1)
				ml = sizeof msg - 1;
			memcpy(msg, p + 8, ml);
			msg[ml] = 0;
			snprintf(err, errlen, "cannot connect to %s (worker %u): the server refused: %s", g->endpoint, w, msg);
		} else {
			snprintf(err, errlen, "cannot connect to %s: RDMA_CM_EVENT_REJECTED (reason %d: %s) (is oqb-server "
				 "running there, on port %u?)", g->endpoint, st, cm_reject_reason(st), g->port);
		}
		break;
	}
	case RDMA_CM_EVENT_UNREACHABLE:
		snprintf(err, errlen, "cannot connect to %s: RDMA_CM_EVENT_UNREACHABLE (%s) (is oqb-server running "
			 "there?)", g->endpoint, sts);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		snprintf(err, errlen, "cannot connect to %s: RDMA_CM_EVENT_CONNECT_ERROR (%s) while %s (is oqb-server "
			 "running there?)", g->endpoint, sts, doing);
		break;
	default:
		snprintf(err, errlen, "cannot connect to %s: unexpected %s (%s) while %s", g->endpoint,
			 rdma_event_str(ev->event), sts, doing);
		break;
	}
}

/*
 * Waits for the rdma_cm event `want` on id until deadline.  0 with *out
 * set (the caller acks it), or -1 with err set (a failure event, or the
 * deadline passed).
 */
static int cm_wait(struct vb_group *g, unsigned w, struct rdma_cm_id *id, enum rdma_cm_event_type want,
		   uint64_t deadline, uint64_t started, const char *doing, struct rdma_cm_event **out,
		   char *err, size_t errlen)
{
	for (;;) {
		struct rdma_cm_event *ev;
		if (rdma_get_cm_event(g->ch, &ev) == 0) {
			if (ev->id != id) {
				/* an earlier QP of this client: only a disconnect matters */
				int bye = ev->event == RDMA_CM_EVENT_DISCONNECTED;
				rdma_ack_cm_event(ev);
				if (bye) {
					snprintf(err, errlen, "the server at %s closed a connection while this client was "
						 "still connecting (it is stopping?)", g->endpoint);
					return -1;
				}
				continue;
			}
			if (ev->event == want && ev->status == 0) {
				*out = ev;
				return 0;
			}
			format_cm_error(g, w, ev, doing, err, errlen);
			rdma_ack_cm_event(ev);
			return -1;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			snprintf(err, errlen, "cannot read rdma_cm events while %s: %s", doing, strerror(errno));
			return -1;
		}
		uint64_t now = clock_ns();
		if (now >= deadline) {
			snprintf(err, errlen, "cannot connect to %s: no answer within %.1f s while %s (is oqb-server "
				 "running there, and is the address reachable over RDMA?)", g->endpoint,
				 (double)(now - started) / 1e9, doing);
			return -1;
		}
		uint64_t left = (deadline - now) / 1000000 + 1;
		wait_readable(g->ch->fd, left > 1000 ? 1000 : (int)left);
	}
}

static int ms_left(uint64_t deadline)
{
	uint64_t now = clock_ns();
	if (now >= deadline)
		return 1;
	uint64_t ms = (deadline - now) / 1000000;
	return ms > 5000 ? 5000 : ms < 1 ? 1 : (int)ms;
}

/* PD, SRQ and limits, once the first QP told us the device. */
static int group_init_verbs(struct vb_group *g, struct ibv_context *ctx, unsigned max_outstanding,
			    char *err, size_t errlen)
{
	g->ctx = ctx;
	if (ibv_query_device(ctx, &g->da) != 0) {
		snprintf(err, errlen, "cannot query RDMA device %s: %s", ibv_get_device_name(ctx->device), strerror(errno));
		return -1;
	}
	g->pd = ibv_alloc_pd(ctx);
	if (!g->pd) {
		snprintf(err, errlen, "cannot allocate a protection domain on %s: %s", ibv_get_device_name(ctx->device),
			 strerror(errno));
		return -1;
	}
	unsigned rd = g->delegated ? 4096 : pow2_at_least(max_outstanding ? max_outstanding : 1024);
	if (rd < 64)
		rd = 64;
	if (!g->delegated && rd > 1024)
		rd = 1024;
	while (rd > 64 && rd > (unsigned)g->da.max_srq_wr)
		rd /= 2;
	g->rdepth = rd;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = rd, .max_sge = 1 } };
	g->srq = ibv_create_srq(g->pd, &sa);
	if (!g->srq) {
		snprintf(err, errlen, "cannot create the client's response SRQ (%u WQEs) on %s: %s", rd,
			 ibv_get_device_name(ctx->device), strerror(errno));
		return -1;
	}
	g->sq_depth = g->delegated ? VB_CLI_SQ_DELEG : VB_CLI_SQ;
	if (g->sq_depth > (unsigned)g->da.max_qp_wr)
		g->sq_depth = (unsigned)g->da.max_qp_wr;
	return 0;
}

/* Response buffers, once the first accept told us the slot size. */
static int group_init_bufs(struct vb_group *g, char *err, size_t errlen)
{
	/* bound the pinned memory: at most 64 MiB of response buffers */
	while (g->rdepth > 16 && (size_t)g->rdepth * g->slot_size > (64u << 20))
		g->rdepth /= 2;
	size_t bytes = (size_t)g->rdepth * g->slot_size;
	if (posix_memalign((void **)&g->rbuf, 4096, bytes) != 0) {
		g->rbuf = NULL;
		snprintf(err, errlen, "out of memory for %u response buffers of %u B", g->rdepth, g->slot_size);
		return -1;
	}
	memset(g->rbuf, 0, bytes);
	g->rmr = ibv_reg_mr(g->pd, g->rbuf, bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!g->rmr) {
		snprintf(err, errlen, "cannot register %zu bytes of response buffers: %s%s", bytes, strerror(errno),
			 errno == ENOMEM ? " (raise the locked-memory limit: ulimit -l unlimited)" : "");
		return -1;
	}
	uint32_t idx[64];
	for (unsigned i = 0; i < g->rdepth; i += 64) {
		unsigned k = g->rdepth - i < 64 ? g->rdepth - i : 64;
		for (unsigned j = 0; j < k; j++)
			idx[j] = i + j;
		repost_bufs(g, idx, k);
	}
	if (atomic_load(&g->broken)) {
		group_err(g, err, errlen);
		return -1;
	}
	/* request slots per lane per worker: bound pinned memory too */
	unsigned d = VB_LANE_DEPTH;
	while (d > 2 && (size_t)d * g->slot_size * g->workers > (16u << 20))
		d /= 2;
	g->depth = d;
	return 0;
}

static int parse_accept(struct vb_group *g, unsigned w, const struct rdma_cm_event *ev,
			const struct tp_cli_conf *cc, char *err, size_t errlen)
{
	const uint8_t *a = ev->param.conn.private_data;
	unsigned len = ev->param.conn.private_data_len;
	if (!a || len < VB_ACCEPT_LEN || get32(a) != VB_ACCEPT_MAGIC) {
		snprintf(err, errlen, "%s accepted the connection but is not an oqbench verbs server (no accept "
			 "data); is another program listening on that port?", g->endpoint);
		return -1;
	}
	if (get16(a + 4) != VB_VERSION) {
		snprintf(err, errlen, "the server at %s speaks verbs protocol %u, this client %u; use the same "
			 "oqbench build on both sides", g->endpoint, get16(a + 4), VB_VERSION);
		return -1;
	}
	char sys[17];
	memcpy(sys, a + 48, 16);
	sys[16] = 0;
	uint32_t block = get32(a + 8);
	unsigned workers = get16(a + 12), flags = get16(a + 14);
	unsigned slot = get32(a + 16);
	if (w == 0) {
		if (workers < 1 || workers > VB_MAX_WORKERS || slot < WIRE_ALIGN || slot % WIRE_ALIGN || !block ||
		    block > VB_MAX_BLOCK) {
			snprintf(err, errlen, "the server at %s sent an invalid geometry (%u workers, %u B slots)",
				 g->endpoint, workers, slot);
			return -1;
		}
		g->block = block;
		g->workers = workers;
		g->sflags = flags;
		g->slot_size = slot;
		g->ring_slots = get32(a + 20);
		g->min_rnr = a[36] & 31;
		g->server_pid = get32(a + 64);
		memcpy(g->server_system, sys, sizeof sys);
		g->durable_srv = (flags & VB_AF_DURABLE) != 0;
		if (cc->system && strcmp(cc->system, sys) != 0) {
			snprintf(err, errlen, "server at %s runs system '%s' but this client was started with --system %s; "
				 "use the same system on both", g->endpoint, sys, cc->system);
			return -1;
		}
		if (fnv64(sys) != get64(a + 40)) {
			snprintf(err, errlen, "the server at %s sent a system name that does not match its hash; "
				 "version mismatch?", g->endpoint);
			return -1;
		}
		if (cc->durable && !g->durable_srv) {
			snprintf(err, errlen, "server at %s was not started with --durable, but this client was; start both "
				 "with --durable or neither", g->endpoint);
			return -1;
		}
	} else if (block != g->block || workers != g->workers || slot != g->slot_size) {
		snprintf(err, errlen, "worker %u of %s answered with another client id or geometry (block %u, %u "
			 "workers); was the server restarted while this client connected?", w, g->endpoint, block, workers);
		return -1;
	}
	g->q[w].read_addr = get64(a + 24);
	g->q[w].read_rkey = get32(a + 32);
	return 0;
}

/*
 * Sends the hello for worker w on id (rdma_connect) and waits for the
 * ESTABLISHED event, which *ev returns (the caller acks it).  0 or -1.
 */
static int hello_connect(struct vb_group *g, const struct tp_cli_conf *cc, struct rdma_cm_id *id, unsigned w,
			 const char *doing, uint64_t started, uint64_t deadline, struct rdma_cm_event **ev,
			 char *err, size_t errlen)
{
	uint8_t hello[VB_HELLO_LEN];
	memset(hello, 0, sizeof hello);
	put32(hello, VB_HELLO_MAGIC);
	put16(hello + 4, VB_VERSION);
	put16(hello + 6, (uint16_t)((g->delegated ? VB_HF_DELEGATED : 0) | (cc->durable ? VB_HF_DURABLE : 0)));
	put32(hello + 8, g->block);
	put16(hello + 12, (uint16_t)w);
	put16(hello + 14, (uint16_t)(g->delegated ? VB_MAX_LANES : 1));
	put32(hello + 16, g->rdepth);
	put32(hello + 20, (uint32_t)getpid());
	put32(hello + 24, g->delegated ? UINT32_MAX : cc->thread);
	unsigned rd = g->da.max_qp_init_rd_atom < 16 ? (unsigned)g->da.max_qp_init_rd_atom : 16;
	struct rdma_conn_param cp = {
		.private_data = hello, .private_data_len = VB_HELLO_LEN,
		.initiator_depth = (uint8_t)rd, .responder_resources = 0,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	if (rdma_connect(id, &cp) != 0) {
		snprintf(err, errlen, "cannot connect to %s: rdma_connect: %s", g->endpoint, strerror(errno));
		return -1;
	}
	return cm_wait(g, w, id, RDMA_CM_EVENT_ESTABLISHED, deadline, started, doing, ev, err, errlen);
}

/* Connects QP w: resolve, create, connect, check the accept. */
static int connect_one(struct vb_group *g, unsigned w, const struct tp_cli_conf *cc, uint64_t started,
		       uint64_t deadline, char *err, size_t errlen)
{
	struct vb_cqp *q = &g->q[w];
	struct rdma_cm_event *ev = NULL;
	q->g = g;
	q->w = w;
	pthread_mutex_init(&q->mu, NULL);
	q->mu_init = 1;
	q->lk = &q->mu;
	if (rdma_create_id(g->ch, &q->id, q, RDMA_PS_TCP) != 0) {
		snprintf(err, errlen, "rdma_create_id: %s", strerror(errno));
		return -1;
	}
	if (rdma_resolve_addr(q->id, NULL, (struct sockaddr *)&g->dst, ms_left(deadline)) != 0) {
		snprintf(err, errlen, "cannot connect to %s: rdma_resolve_addr: %s (is the address on a network an RDMA "
			 "device can reach?)", g->endpoint, strerror(errno));
		return -1;
	}
	if (cm_wait(g, w, q->id, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, started, "resolving the address", &ev,
		    err, errlen) != 0)
		return -1;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(q->id, ms_left(deadline)) != 0) {
		snprintf(err, errlen, "cannot connect to %s: rdma_resolve_route: %s", g->endpoint, strerror(errno));
		return -1;
	}
	if (cm_wait(g, w, q->id, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, started, "resolving the route", &ev,
		    err, errlen) != 0)
		return -1;
	rdma_ack_cm_event(ev);
	if (!g->ctx) {
		if (group_init_verbs(g, q->id->verbs, cc->max_outstanding, err, errlen) != 0)
			return -1;
	} else if (q->id->verbs != g->ctx) {
		snprintf(err, errlen, "worker %u of %s resolved to another RDMA device than worker 0", w, g->endpoint);
		return -1;
	}
	q->scq = ibv_create_cq(g->ctx, (int)g->sq_depth + 16, NULL, NULL, 0);
	q->rcq = ibv_create_cq(g->ctx, (int)g->rdepth + 16, NULL, NULL, 0);
	if (!q->scq || !q->rcq) {
		snprintf(err, errlen, "cannot create completion queues on %s: %s", ibv_get_device_name(g->ctx->device),
			 strerror(errno));
		return -1;
	}
	static const unsigned inl[] = { VB_INLINE, 64, 0 };
	int made = -1, qerr = 0;
	for (size_t k = 0; k < sizeof inl / sizeof inl[0] && made; k++) {
		struct ibv_qp_init_attr qa = {
			.send_cq = q->scq, .recv_cq = q->rcq, .srq = g->srq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = g->sq_depth, .max_recv_wr = 0, .max_send_sge = 1, .max_recv_sge = 1,
				 .max_inline_data = inl[k] },
		};
		made = rdma_create_qp(q->id, g->pd, &qa);
		if (made)
			qerr = errno;
		else
			q->max_inline = qa.cap.max_inline_data;
	}
	if (made) {
		snprintf(err, errlen, "cannot create a QP on %s: %s", ibv_get_device_name(g->ctx->device), strerror(qerr));
		return -1;
	}
	q->qp = q->id->qp;
	q->sq_depth = g->sq_depth;

	if (hello_connect(g, cc, q->id, w, "connecting", started, deadline, &ev, err, errlen) != 0)
		return -1;
	q->connected = 1;
	int r = parse_accept(g, w, ev, cc, err, errlen);
	rdma_ack_cm_event(ev);
	if (r != 0)
		return -1;
	if (w == 0 && group_init_bufs(g, err, errlen) != 0)
		return -1;
	/* The client's own RNR timer matters when the server replies faster
	 * than responses are consumed: use the server's setting. */
	set_min_rnr(q->qp, g->min_rnr);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	if (ibv_query_qp(q->qp, &qa, IBV_QP_RNR_RETRY | IBV_QP_MIN_RNR_TIMER, &qi) == 0) {
		q->rnr_retry = qa.rnr_retry;
		q->min_rnr = qa.min_rnr_timer;
	}
	return 0;
}

/*
 * XRC: the server's accept on QP 0 said VB_AF_XRC, so QP 0 is the RC QP
 * every worker replies on.  Requests to all workers go over one XRC_SEND
 * QP, connected here in the IB port space; each SEND names its worker's
 * SRQ number (remote_srqn), which the accept data lists.  The server then
 * holds one XRC receive QP and one reply QP per client unit instead of one
 * QP per unit and worker.  Every worker's vb_cqp points at the shared QP
 * and CQs under one lock, so one owner at a time posts and polls.
 */
static int connect_xrc(struct vb_group *g, const struct tp_cli_conf *cc, uint64_t started, uint64_t deadline,
		       char *err, size_t errlen)
{
	const unsigned W = g->workers;
	struct rdma_cm_event *ev = NULL;
	if (W > VB_XRC_MAX_WORKERS) {
		snprintf(err, errlen, "the server at %s runs XRC with %u workers; at most %d are supported", g->endpoint,
			 W, VB_XRC_MAX_WORKERS);
		return -1;
	}
	if (!(g->da.device_cap_flags & IBV_DEVICE_XRC)) {
		snprintf(err, errlen, "the server at %s runs with verbs.xrc, but this client's device %s has no XRC "
			 "support; start the server without --xrc", g->endpoint, ibv_get_device_name(g->ctx->device));
		return -1;
	}
	char host[INET6_ADDRSTRLEN + 1], port[16];
	if (getnameinfo((struct sockaddr *)&g->dst, sizeof g->dst, host, sizeof host, NULL, 0, NI_NUMERICHOST) != 0) {
		snprintf(err, errlen, "cannot format the address of %s", g->endpoint);
		return -1;
	}
	snprintf(port, sizeof port, "%u", g->port);
	struct rdma_addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_flags = RAI_NUMERICHOST;
	hints.ai_port_space = RDMA_PS_IB;
	hints.ai_qp_type = IBV_QPT_XRC_SEND;   /* the CM's REQ then asks for an XRC target */
	int e = rdma_getaddrinfo(host, port, &hints, &res);
	if (e) {
		snprintf(err, errlen, "cannot resolve %s for its XRC connection: rdma_getaddrinfo: %s", g->endpoint,
			 gai_strerror(e));
		return -1;
	}
	/* resolves address and route synchronously (2 s each), then async */
	e = rdma_create_ep(&g->xid, res, NULL, NULL);
	rdma_freeaddrinfo(res);
	if (e) {
		g->xid = NULL;
		snprintf(err, errlen, "cannot reach %s for its XRC connection: %s", g->endpoint, strerror(errno));
		return -1;
	}
	if (g->xid->verbs != g->ctx) {
		snprintf(err, errlen, "the XRC connection to %s resolved to another RDMA device than its reply QP; "
			 "give the server an address that only one RDMA device of this host reaches", g->endpoint);
		return -1;
	}
	if (rdma_migrate_id(g->xid, g->ch) != 0) {
		snprintf(err, errlen, "rdma_migrate_id for the XRC connection: %s", strerror(errno));
		return -1;
	}
	unsigned sq = g->sq_depth < 2 * W ? 2 * W : g->sq_depth;
	if (sq > (unsigned)g->da.max_qp_wr)
		sq = (unsigned)g->da.max_qp_wr;
	g->xscq = ibv_create_cq(g->ctx, (int)sq + 16, NULL, NULL, 0);
	if (!g->xscq) {
		snprintf(err, errlen, "cannot create the XRC send CQ on %s: %s", ibv_get_device_name(g->ctx->device),
			 strerror(errno));
		return -1;
	}
	static const unsigned inl[] = { VB_INLINE, 64, 0 };
	int made = -1, qerr = 0;
	unsigned xinl = 0;
	for (size_t k = 0; k < sizeof inl / sizeof inl[0] && made; k++) {
		struct ibv_qp_init_attr_ex xa;
		memset(&xa, 0, sizeof xa);
		xa.qp_type = IBV_QPT_XRC_SEND;
		xa.send_cq = g->xscq;
		xa.recv_cq = g->xscq;
		xa.comp_mask = IBV_QP_INIT_ATTR_PD;
		xa.pd = g->pd;
		xa.cap.max_send_wr = sq;
		xa.cap.max_send_sge = 1;
		xa.cap.max_inline_data = inl[k];
		made = rdma_create_qp_ex(g->xid, &xa);
		if (made)
			qerr = errno;
		else
			xinl = xa.cap.max_inline_data;
	}
	if (made) {
		snprintf(err, errlen, "cannot create an XRC send QP on %s: %s", ibv_get_device_name(g->ctx->device),
			 strerror(qerr));
		return -1;
	}
	if (hello_connect(g, cc, g->xid, 0, "connecting the XRC QP", started, deadline, &ev, err, errlen) != 0)
		return -1;
	g->xconnected = 1;
	const uint8_t *a = ev->param.conn.private_data;
	unsigned alen = ev->param.conn.private_data_len;
	uint32_t srqn[VB_XRC_MAX_WORKERS];
	int bad = !a || alen < VB_XACCEPT_LEN(W) || get32(a) != VB_ACCEPT_MAGIC || get16(a + 4) != VB_VERSION ||
		  get32(a + 8) != g->block || get16(a + 12) != W || !(get16(a + 14) & VB_AF_XRC);
	for (unsigned w = 0; !bad && w < W; w++)
		srqn[w] = get32(a + 16 + 4 * w);
	rdma_ack_cm_event(ev);
	if (bad) {
		snprintf(err, errlen, "the server at %s accepted the XRC connection with unexpected data (client id, "
			 "worker count or SRQ numbers); was it restarted while this client connected?", g->endpoint);
		return -1;
	}
	unsigned rnr_retry = 7, min_rnr = 0;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	if (ibv_query_qp(g->xid->qp, &qa, IBV_QP_RNR_RETRY, &qi) == 0)
		rnr_retry = qa.rnr_retry;
	min_rnr = g->min_rnr;   /* the server's receive QP sets the RNR timer */

	/* share: every worker's cqp uses the XRC QP; replies come on q[0]'s QP */
	struct vb_cqp *q0 = &g->q[0];
	g->rep_scq = q0->scq;
	g->rep_rcq = q0->rcq;
	pthread_mutex_init(&g->xmu, NULL);
	g->xmu_init = 1;
	g->xrc = 1;
	uint64_t ra = q0->read_addr;
	uint32_t rk = q0->read_rkey;
	for (unsigned w = 0; w < W; w++) {
		struct vb_cqp *q = &g->q[w];
		q->g = g;
		q->w = w;
		if (!q->mu_init) {
			pthread_mutex_init(&q->mu, NULL);
			q->mu_init = 1;
		}
		q->lk = &g->xmu;
		q->shared = 1;
		q->qp = g->xid->qp;
		q->scq = g->xscq;
		q->rcq = g->rep_rcq;
		q->srqn = srqn[w];
		q->sq_depth = sq / W;
		q->max_inline = xinl;
		q->read_addr = ra;      /* any registered server region serves the READ */
		q->read_rkey = rk;
		q->rnr_retry = rnr_retry;
		q->min_rnr = min_rnr;
	}
	return 0;
}

static void group_destroy(struct vb_group *g)
{
	if (!g)
		return;
	if (g->q) {
		for (unsigned w = 0; w < VB_MAX_WORKERS; w++)
			if (g->q[w].id && g->q[w].connected)
				rdma_disconnect(g->q[w].id);
		if (g->xid && g->xconnected)
			rdma_disconnect(g->xid);
		for (unsigned w = 0; w < VB_MAX_WORKERS; w++) {
			struct vb_cqp *q = &g->q[w];
			if (q->id && q->id->qp)
				rdma_destroy_qp(q->id);
			if (q->id)
				rdma_destroy_id(q->id);
			if (!q->shared && q->scq)
				ibv_destroy_cq(q->scq);
			if (!q->shared && q->rcq)
				ibv_destroy_cq(q->rcq);
			if (q->mu_init)
				pthread_mutex_destroy(&q->mu);
		}
	}
	if (g->xid) {
		if (g->xid->qp)
			rdma_destroy_qp(g->xid);
		rdma_destroy_id(g->xid);
	}
	if (g->xscq)
		ibv_destroy_cq(g->xscq);
	if (g->rep_scq)
		ibv_destroy_cq(g->rep_scq);
	if (g->rep_rcq)
		ibv_destroy_cq(g->rep_rcq);
	if (g->xmu_init)
		pthread_mutex_destroy(&g->xmu);
	if (g->rmr)
		ibv_dereg_mr(g->rmr);
	free(g->rbuf);
	if (g->srq)
		ibv_destroy_srq(g->srq);
	if (g->pd)
		ibv_dealloc_pd(g->pd);
	if (g->ch)
		rdma_destroy_event_channel(g->ch);
	pthread_mutex_destroy(&g->err_mu);
	pthread_mutex_destroy(&g->cm_mu);
	free(g->q);
	free(g);
}

static struct vb_group *group_open(const struct tp_cli_conf *cc, int delegated, char *err, size_t errlen)
{
	struct vb_group *g = calloc(1, sizeof *g);
	char host[128];
	if (!g) {
		snprintf(err, errlen, "verbs: out of memory");
		return NULL;
	}
	pthread_mutex_init(&g->err_mu, NULL);
	pthread_mutex_init(&g->cm_mu, NULL);
	g->delegated = delegated;
	g->q = calloc(VB_MAX_WORKERS, sizeof *g->q);
	if (!g->q) {
		snprintf(err, errlen, "verbs: out of memory");
		goto fail;
	}
	if (parse_endpoint(cc->endpoint, &g->dst, host, sizeof host, &g->port, err, errlen) != 0)
		goto fail;
	make_host_str((struct sockaddr *)&g->dst, host, sizeof host);
	snprintf(g->endpoint, sizeof g->endpoint, "verbs:%s:%u", host, g->port);
	g->ch = rdma_create_event_channel();
	if (!g->ch) {
		snprintf(err, errlen, "cannot open the RDMA connection manager: %s (load rdma_ucm: modprobe rdma_ucm; "
			 "a host without RDMA can run the verbs tests in the Soft-RoCE VM, tests/vm/rxe-vm)",
			 strerror(errno));
		goto fail;
	}
	if (set_nonblock(g->ch->fd) != 0) {
		snprintf(err, errlen, "verbs: cannot make the CM channel non-blocking: %s", strerror(errno));
		goto fail;
	}
	uint64_t started = clock_ns();
	uint64_t deadline = started + (uint64_t)(cc->connect_timeout_ms ? cc->connect_timeout_ms : VB_CONNECT_MS) * 1000000;
	if (connect_one(g, 0, cc, started, deadline, err, errlen) != 0)
		goto fail;
	if (g->sflags & VB_AF_XRC) {
		if (connect_xrc(g, cc, started, deadline, err, errlen) != 0)
			goto fail;
		return g;
	}
	for (unsigned w = 1; w < g->workers; w++)
		if (connect_one(g, w, cc, started, deadline, err, errlen) != 0)
			goto fail;
	return g;
fail:
	group_destroy(g);
	return NULL;
}

static void lane_free(struct vb_lane *L, unsigned workers)
{
	if (!L)
		return;
	if (L->mr)
		ibv_dereg_mr(L->mr);
	free(L->sbuf);
	if (L->q)
		for (unsigned w = 0; w < workers; w++) {
			free(L->q[w].mseq);
			free(L->q[w].mlen);
			free(L->q[w].mdur);
			free(L->q[w].ev);
		}
	free(L->q);
	free(L);
}

static struct vb_lane *lane_open(struct vb_group *g, unsigned idx, unsigned max_outstanding, char *err, size_t errlen)
{
	const unsigned W = g->workers, D = g->depth;
	struct vb_lane *L = calloc(1, sizeof *L);
	if (!L)
		goto oom;
	L->g = g;
	L->idx = idx;
	L->client_id = g->block << VB_LANE_BITS | idx;
	L->evcap = pow2_at_least(2 * (max_outstanding ? max_outstanding : 1024) + 2 * D + 64);
	size_t bytes = (size_t)W * D * g->slot_size + (size_t)W * 64;
	if (posix_memalign((void **)&L->sbuf, 4096, bytes) != 0) {
		L->sbuf = NULL;
		goto oom;
	}
	memset(L->sbuf, 0, bytes);
	L->mr = ibv_reg_mr(g->pd, L->sbuf, bytes, IBV_ACCESS_LOCAL_WRITE);
	if (!L->mr) {
		snprintf(err, errlen, "cannot register %zu bytes of request buffers: %s%s", bytes, strerror(errno),
			 errno == ENOMEM ? " (raise the locked-memory limit: ulimit -l unlimited)" : "");
		lane_free(L, W);
		return NULL;
	}
	L->q = calloc(W, sizeof *L->q);
	if (!L->q)
		goto oom;
	for (unsigned w = 0; w < W; w++) {
		L->q[w].mseq = calloc(D, sizeof *L->q[w].mseq);
		L->q[w].mlen = calloc(D, sizeof *L->q[w].mlen);
		L->q[w].mdur = calloc(D, 1);
		L->q[w].ev = calloc(L->evcap, sizeof *L->q[w].ev);
		if (!L->q[w].mseq || !L->q[w].mlen || !L->q[w].mdur || !L->q[w].ev)
			goto oom;
	}
	return L;
oom:
	snprintf(err, errlen, "verbs: out of memory for a client thread's buffers");
	lane_free(L, W);
	return NULL;
}

static void lane_publish(struct vb_group *g, struct vb_lane *L)
{
	atomic_store_explicit(&g->lanes[L->idx], L, memory_order_release);
	unsigned hi = atomic_load(&g->lanes_hi);
	while (L->idx + 1 > hi && !atomic_compare_exchange_weak(&g->lanes_hi, &hi, L->idx + 1))
		;
}

/* Unpublishes L after its requests completed (or 2 s), waits until no
 * owner can still see it, and returns its buffers. */
static void lane_close(struct vb_group *g, struct vb_lane *L)
{
	const unsigned W = g->workers;
	uint64_t deadline = clock_ns() + 2000000000ull;
	while (!atomic_load(&g->broken) && clock_ns() < deadline) {
		int busy = 0;
		for (unsigned w = 0; w < W; w++) {
			combine(g, w);
			struct vb_lq *lq = &L->q[w];
			busy |= atomic_load(&lq->done_pub) != atomic_load(&lq->head);
		}
		if (!busy)
			break;
		sched_yield();
	}
	atomic_store(&g->lanes[L->idx], NULL);
	for (unsigned w = 0; w < W; w++) {
		pthread_mutex_lock(g->q[w].lk);   /* no owner still holds L */
		pthread_mutex_unlock(g->q[w].lk);
	}
	if (!atomic_load(&g->broken)) {
		repost_bufs(g, L->held, L->nheld);
		for (unsigned w = 0; w < W; w++) {
			struct vb_lq *lq = &L->q[w];
			for (uint64_t t = atomic_load(&lq->ev_tail); t < atomic_load(&lq->ev_head); t++)
				if (lq->ev[t & (L->evcap - 1)].buf != VB_NOBUF)
					repost_bufs(g, &lq->ev[t & (L->evcap - 1)].buf, 1);
		}
	}
	lane_free(L, W);
}

static void vb_cli_close(struct tp_client *c);

static struct tp_client *vb_cli_open(const struct tp_cli_conf *cc, char *err, size_t errlen)
{
	struct tp_client *c = calloc(1, sizeof *c);
	if (!c) {
		snprintf(err, errlen, "verbs: out of memory");
		return NULL;
	}
	c->c = *cc;
	if (!cc->delegation) {
		c->g = group_open(cc, 0, err, errlen);
		if (!c->g)
			goto fail;
		c->g->refs = 1;
		c->l = lane_open(c->g, 0, cc->max_outstanding, err, errlen);
		if (!c->l)
			goto fail;
		lane_publish(c->g, c->l);
		return c;
	}
	if (cc->thread >= VB_MAX_LANES) {
		snprintf(err, errlen, "delegation shares QPs among at most %u threads per process; thread %u is one too many",
			 VB_MAX_LANES, cc->thread);
		goto fail;
	}
	pthread_mutex_lock(&deleg_mu);
	if (deleg_group) {
		char host[128], ep[192];
		struct sockaddr_storage dst;
		unsigned port;
		if (parse_endpoint(cc->endpoint, &dst, host, sizeof host, &port, err, errlen) != 0) {
			pthread_mutex_unlock(&deleg_mu);
			goto fail;
		}
		make_host_str((struct sockaddr *)&dst, host, sizeof host);
		snprintf(ep, sizeof ep, "verbs:%s:%u", host, port);
		if (strcmp(ep, deleg_group->endpoint) != 0) {
			snprintf(err, errlen, "delegation: this process already shares its QPs with %s; all client threads of "
				 "a process must use the same server (%s asked)", deleg_group->endpoint, ep);
			pthread_mutex_unlock(&deleg_mu);
			goto fail;
		}
		if (atomic_load(&deleg_group->broken)) {
			group_err(deleg_group, err, errlen);
			pthread_mutex_unlock(&deleg_mu);
			goto fail;
		}
	} else {
		deleg_group = group_open(cc, 1, err, errlen);
		if (!deleg_group) {
			pthread_mutex_unlock(&deleg_mu);
			goto fail;
		}
	}
	if (atomic_load(&deleg_group->lanes[cc->thread])) {
		snprintf(err, errlen, "delegation: client thread %u is already open on the shared QPs", cc->thread);
		if (!deleg_group->refs) {
			group_destroy(deleg_group);
			deleg_group = NULL;
		}
		pthread_mutex_unlock(&deleg_mu);
		goto fail;
	}
	c->l = lane_open(deleg_group, cc->thread, cc->max_outstanding, err, errlen);
	if (!c->l) {
		if (!deleg_group->refs) {
			group_destroy(deleg_group);
			deleg_group = NULL;
		}
		pthread_mutex_unlock(&deleg_mu);
		goto fail;
	}
	c->g = deleg_group;
	c->g->refs++;
	lane_publish(c->g, c->l);
	pthread_mutex_unlock(&deleg_mu);
	return c;
fail:
	vb_cli_close(c);
	return NULL;
}

static uint32_t vb_cli_id(struct tp_client *c)
{
	return c->l->client_id;
}

static unsigned vb_cli_workers(struct tp_client *c)
{
	return c->g->workers;
}

static int vb_cli_post(struct tp_client *c, unsigned wi, const void *req, uint32_t len,
		       uint64_t seq, char *err, size_t errlen)
{
	struct vb_group *g = c->g;
	struct vb_lane *L = c->l;
	if (atomic_load_explicit(&g->broken, memory_order_relaxed)) {
		group_err(g, err, errlen);
		return -1;
	}
	if (wi >= g->workers) {
		snprintf(err, errlen, "verbs: worker %u does not exist (the server has %u)", wi, g->workers);
		return -1;
	}
	if (len > g->slot_size) {
		snprintf(err, errlen, "request of %u B does not fit a %u B receive slot; start the server with a larger "
			 "--slot-size", len, g->slot_size);
		return -1;
	}
	const unsigned D = g->depth;
	struct vb_lq *lq = &L->q[wi];
	uint64_t h = atomic_load_explicit(&lq->head, memory_order_relaxed);
	if (h - atomic_load_explicit(&lq->done_pub, memory_order_acquire) >= D) {
		/* Every request slot to this worker is in flight, not yet
		 * ACKed (the server's ring is full: RNR).  Say busy, so the
		 * caller keeps consuming responses (which return receive
		 * buffers) and posts again; a QP that makes no progress at all
		 * is broken by the watchdog in combine(). */
		combine(g, wi);
		if (h - atomic_load_explicit(&lq->done_pub, memory_order_acquire) >= D) {
			L->full_waits++;
			cm_check(g);
			if (atomic_load_explicit(&g->broken, memory_order_relaxed)) {
				group_err(g, err, errlen);
				return -1;
			}
			return 1;
		}
	}
	unsigned slot = (unsigned)(h & (D - 1));
	memcpy(L->sbuf + ((size_t)wi * D + slot) * g->slot_size, req, len);
	lq->mseq[slot] = seq;
	lq->mlen[slot] = len;
	lq->mdur[slot] = g->durable_srv && len >= WIRE_HDR_SIZE &&
			 (get16((const uint8_t *)req + 16) & WIRE_F_DURABLE);
	atomic_store_explicit(&lq->head, h + 1, memory_order_release);
	L->posts++;
	combine(g, wi);
	return 0;
}

static void vb_cli_flush(struct tp_client *c)
{
	for (unsigned w = 0; w < c->g->workers; w++)
		combine(c->g, w);
}

static int vb_cli_poll(struct tp_client *c, struct tp_event *ev, int max)
{
	struct vb_group *g = c->g;
	struct vb_lane *L = c->l;
	const unsigned W = g->workers;
	if (L->nheld) {
		repost_bufs(g, L->held, L->nheld);
		L->nheld = 0;
	}
	cm_check(g);
	for (unsigned w = 0; w < W; w++)
		combine(g, w);
	if (max > VB_HELD_MAX)
		max = VB_HELD_MAX;
	int k = 0;
	for (unsigned i = 0; i < W && k < max; i++) {
		unsigned w = (L->rr + i) % W;
		struct vb_lq *lq = &L->q[w];
		uint64_t t = atomic_load_explicit(&lq->ev_tail, memory_order_relaxed);
		uint64_t h = atomic_load_explicit(&lq->ev_head, memory_order_acquire);
		while (t < h && k < max) {
			const struct vb_ev *e = &lq->ev[t & (L->evcap - 1)];
			struct tp_event *o = &ev[k++];
			o->seq = e->seq;
			o->status = e->status;
			o->val_len = e->val_len;
			o->kind = e->kind;
			o->op = e->op;
			o->worker = (uint16_t)w;
			o->val = NULL;
			if (e->buf != VB_NOBUF) {
				L->held[L->nheld++] = e->buf;
				o->val = g->rbuf + (size_t)e->buf * g->slot_size + WIRE_RESP_HDR;
			}
			if (e->kind == TP_EV_DELIVERED)
				L->delivered++;
			else if (e->kind == TP_EV_ACK)
				L->acks++;
			else
				L->resps++;
			t++;
		}
		atomic_store_explicit(&lq->ev_tail, t, memory_order_release);
	}
	L->rr++;
	return k;
}

static json_t *vb_cli_stats(struct tp_client *c)
{
	struct vb_group *g = c->g;
	struct vb_lane *L = c->l;
	uint64_t sends = 0, inl = 0, reads = 0, calls = 0, stray = 0, bad = 0, ovf = 0;
	unsigned rnr_retry = 7, min_rnr = 31, inline_max = 0;
	for (unsigned w = 0; w < g->workers; w++) {
		struct vb_cqp *q = &g->q[w];
		pthread_mutex_lock(q->lk);
		sends += q->sends; inl += q->inline_sends; reads += q->reads; calls += q->post_calls;
		stray += q->stray; bad += q->bad; ovf += q->overflow;
		pthread_mutex_unlock(q->lk);
		if (q->rnr_retry < rnr_retry)
			rnr_retry = q->rnr_retry;
		if (q->min_rnr < min_rnr)
			min_rnr = q->min_rnr;
		inline_max = q->max_inline;
	}
	json_t *j = json_pack("{s:s,s:s,s:I,s:i,s:b,s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:i,s:i,s:i,s:i,s:i}",
		"transport", "verbs", "endpoint", g->endpoint, "client_id", (json_int_t)L->client_id,
		"qps", g->xrc ? 2 : (int)g->workers, "delegation", g->delegated,
		"threads_sharing_qps", g->delegated ? (int)g->refs : 1,
		"posts", (json_int_t)L->posts, "ring_full_waits", (json_int_t)L->full_waits,
		"busy_returns", (json_int_t)L->full_waits, "delivered", (json_int_t)L->delivered,
		"acks", (json_int_t)L->acks, "responses", (json_int_t)L->resps,
		"response_buffers", (json_int_t)g->rdepth,
		"rnr_retry", (int)rnr_retry, "min_rnr_timer", (int)min_rnr, "max_inline", (int)inline_max,
		"request_slots_per_worker", (int)g->depth, "durable_reads_possible", g->durable_srv);
	if (g->xrc)
		json_object_set_new(j, "xrc", json_true());
	/* QP-level counters are the group's: with delegation every thread
	 * reports the same shared totals. */
	json_object_set_new(j, "qp_totals", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"sends", (json_int_t)sends, "inline_sends", (json_int_t)inl, "durable_reads", (json_int_t)reads,
		"post_calls", (json_int_t)calls, "stray_responses", (json_int_t)stray,
		"bad_responses", (json_int_t)bad, "event_overflows", (json_int_t)ovf));
	if (atomic_load(&g->broken)) {
		char e[400];
		group_err(g, e, sizeof e);
		json_object_set_new(j, "error", json_string(e));
	}
	return j;
}

static void vb_cli_close(struct tp_client *c)
{
	if (!c)
		return;
	struct vb_group *g = c->g;
	if (!g) {
		free(c);
		return;
	}
	if (!g->delegated) {
		if (c->l)
			lane_close(g, c->l);
		group_destroy(g);
		free(c);
		return;
	}
	pthread_mutex_lock(&deleg_mu);
	if (c->l)
		lane_close(g, c->l);
	if (--g->refs == 0) {
		group_destroy(g);
		if (deleg_group == g)
			deleg_group = NULL;
	}
	pthread_mutex_unlock(&deleg_mu);
	free(c);
}

const struct transport_ops tp_verbs_ops = {
	.name = "verbs",
	.version = TRANSPORT_OPS_VERSION,
	.srv_open = vb_srv_open,
	.srv_endpoint = vb_srv_endpoint,
	.srv_poll = vb_srv_poll,
	.srv_req = vb_srv_req,
	.srv_release = vb_srv_release,
	.srv_reply = vb_srv_reply,
	.srv_flush = vb_srv_flush,
	.srv_stats = vb_srv_stats,
	.srv_close = vb_srv_close,
	.cli_open = vb_cli_open,
	.cli_id = vb_cli_id,
	.cli_workers = vb_cli_workers,
	.cli_post = vb_cli_post,
	.cli_flush = vb_cli_flush,
	.cli_poll = vb_cli_poll,
	.cli_stats = vb_cli_stats,
	.cli_close = vb_cli_close,
};

#endif /* OQB_HAVE_VERBS_TRANSPORT */
