/*
 * vb_srv.c - a verbs server as a whole: srv_open (checks the options
 * against the device, opens the PD, the XRC domain and every worker,
 * listens, starts the connection-manager thread), srv_endpoint, srv_stats
 * and srv_close.  The worker's data path is vb_ring.c (and vb_mp_exp.c),
 * replies are vb_reply.c, connections vb_srv_cm.c.
 *
 * Guarantees: every option is checked before anything is created, and a
 * value the device cannot take (ring slots over max_srq_wr or max_cqe,
 * workers over max_srq, a GID index that is not the address's, XRC on a
 * device without it, recv_mode mp in a build without MLNX_OFED's
 * experimental verbs) is refused with a message naming the option, the
 * limit and what to use instead; a failed open releases everything it
 * made (srv_close takes any partly opened server).  The stats JSON
 * (transport.*) is what the verbs suite and the ablations read; its
 * rdma_counters are the device port's counters since srv_open
 * (vb_counters.c).  Shown by
 * the verbs suite's error-message cases and every case that reads stats.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "vb_internal.h"

static const char *const rm_label[] = {
	"srq", "slot_ring (MP SRQ emulation: one WQE per slot)",
	"mp (multi-packet SRQ, MLNX_OFED experimental verbs)",
};

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
	if (!strcmp(m, "mp") && vb_mp_hooks) {
		*mode = RM_MP;
		return 0;
	}
	if (!strcmp(m, "mp")) {
		snprintf(err, errlen, "recv_mode mp needs the MLNX_OFED 4.x experimental verbs "
			 "(infiniband/verbs_exp.h with multi-packet SRQ support, 4.6 or later), which this build "
			 "does not have; use slot_ring for the portable emulation");
		return -1;
	}
	snprintf(err, errlen, "recv_mode '%s': expected srq, slot_ring or mp", m);
	return -1;
}

struct tp_server *vb_srv_open(const struct tp_srv_conf *c, char *err, size_t errlen)
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
	int os = !c->system ? VB_OS_NONE : !strcmp(c->system, "write1") ? VB_OS_WRITE1 :
		 !strcmp(c->system, "seqwrite") ? VB_OS_SEQWRITE : VB_OS_NONE;
	if (os && (c->durable || c->xrc || mode == RM_MP)) {
		snprintf(err, errlen, "system %s: requests are RDMA WRITEs into server memory, which %s does not "
			 "have; run %s without %s", c->system, c->durable ? "durable mode (--durable)" :
			 c->xrc ? "XRC (--xrc)" : "recv_mode mp", c->system,
			 c->durable ? "--durable" : c->xrc ? "--xrc" : "--recv-mode mp");
		return NULL;
	}
	if (os && c->slot_size < WIRE_HDR_SIZE + 16) {
		snprintf(err, errlen, "system %s: a slot ends in a 16-byte length and marker, so --slot-size %u is too "
			 "small; use at least %u", c->system, c->slot_size, (unsigned)(WIRE_HDR_SIZE + 16 + WIRE_ALIGN - 1) /
			 WIRE_ALIGN * WIRE_ALIGN);
		return NULL;
	}
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
	s->os = os;
	s->hooks = mode == RM_MP ? vb_mp_hooks : NULL;
	s->mask = c->ring_slots - 1;
	s->next_block = 1;
	s->gid_index = -1;
	snprintf(s->system, sizeof s->system, "%s", c->system ? c->system : "");
	s->sys_hash = vb_fnv64(s->system);
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

	s->ch = vb_cm_channel(err, errlen);
	if (!s->ch)
		goto fail;
	char portstr[16];
	snprintf(portstr, sizeof portstr, "%u", c->port);
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE },
			*ai = NULL;
	int ge = getaddrinfo(c->addr, portstr, &hints, &ai);
	if (ge || !ai) {
		snprintf(err, errlen, "--addr %s: cannot resolve: %s", c->addr, gai_strerror(ge));
		goto fail;
	}
	vb_host_str(ai->ai_addr, s->host, sizeof s->host);
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
		vb_device_names(avail, sizeof avail);
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
		vb_device_names(avail, sizeof avail);
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
			s->devname, vb_port_state_str(pa.state));
	int gi = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? find_gid(s->ctx, s->port_num, &want, pa.gid_tbl_len) : -1;
	s->gid_index = gi;
	if (c->gid_index >= 0 && gi >= 0 && c->gid_index != gi) {
		union ibv_gid g;
		char gs[64] = "(empty)";
		if (!ibv_query_gid(s->ctx, s->port_num, c->gid_index, &g))
			vb_gid_str(&g, gs, sizeof gs);
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
			 s->devname, s->da.max_srq_wr, vb_pow2_at_least((unsigned)s->da.max_srq_wr + 1) / 2);
		goto fail;
	}
	if (mode != RM_MP && c->ring_slots + 16 > (unsigned)s->da.max_cqe) {
		snprintf(err, errlen, "--ring-slots %u: a worker's receive CQ must hold every slot, and %s's max_cqe is %d; "
			 "use --ring-slots %u or less", c->ring_slots, s->devname, s->da.max_cqe,
			 vb_pow2_at_least((unsigned)s->da.max_cqe - 15) / 2);
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
		if (vb_worker_init(s, i, err, errlen) != 0 ||
		    (s->os == VB_OS_WRITE1 && vb_w1_init(s, &s->w[i], err, errlen) != 0) ||
		    (s->os == VB_OS_SEQWRITE && vb_sw_init(s, &s->w[i], err, errlen) != 0))
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
	int e = pthread_create(&s->cm_th, NULL, vb_cm_main, s);
	if (e) {
		snprintf(err, errlen, "cannot start the connection thread: %s", strerror(e));
		goto fail;
	}
	s->cm_started = 1;
	/* the measured life starts here: no client can have connected yet */
	s->ctr0 = vb_ctr_begin(s->ctx, s->port_num);
	log_msg(LOG_INFO, "verbs: listening on %s (device %s port %u, GID index %d, %s, %u worker(s) x %u slots of %u B)",
		s->endpoint, s->devname, s->port_num, s->gid_index, rm_label[s->mode], c->workers, c->ring_slots,
		c->slot_size);
	return s;
fail:
	vb_srv_close(s);
	return NULL;
}

const char *vb_srv_endpoint(struct tp_server *s)
{
	return s->endpoint;
}
json_t *vb_srv_stats(struct tp_server *s)
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
		if (w->sw_mem)
			json_object_set_new(o, "seqwrite", vb_sw_stats(w));
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
	/* the port's counters since srv_open (vb_counters.c): RNR NAKs this
	 * server answered with show as rnr_naks_sent */
	json_object_set_new(j, "rdma_counters", vb_ctr_json(s->ctr0));
	return j;
}

void vb_srv_close(struct tp_server *s)
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
				vb_conn_close(s, &s->conns[i]);
		vb_reap_zombies(s, 1);
	}
	free(s->conns);
	free(s->cfree);
	vb_destroy_id(s->listen);
	vb_destroy_id(s->listen_x);
	for (unsigned i = 0; s->w && i < s->c.workers; i++)
		if (s->w[i].s)
			vb_worker_free(s, &s->w[i]);
	free(s->w);
	if (s->xrcd)
		ibv_close_xrcd(s->xrcd);
	vb_dealloc_pd(s->pd);
	vb_destroy_channel(s->ch);
	free(s->ctr0);
	free(s);
}

