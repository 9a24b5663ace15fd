/*
 * vb_devices.c - what the RDMA devices of this host are: the listing behind
 * `oqb-server --list-devices` (tp_verbs_list_devices), and the names, port
 * states, MTUs and GID strings the server's error messages quote.
 *
 * Guarantees: the listing only opens and queries devices (a throw-away PD,
 * CQ and QPs probe the inline size) and never changes one; a host without
 * devices gets a hint on how to make a Soft-RoCE one.  Shown by the verbs
 * suite's device-listing case (tests/verbs/guest-suite.sh).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <endian.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "vb_internal.h"
#include "tp_verbs.h"

/* Appends ", name" for every RDMA device to buf (or " (none)"). */
void vb_device_names(char *buf, size_t len)
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

/* A GID as text: ::ffff:A.B.C.D for an IPv4-mapped one. */
void vb_gid_str(const union ibv_gid *g, char *buf, size_t len)
{
	static const uint8_t v4pre[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (!memcmp(g->raw, v4pre, 12))
		snprintf(buf, len, "::ffff:%u.%u.%u.%u", g->raw[12], g->raw[13], g->raw[14], g->raw[15]);
	else if (!inet_ntop(AF_INET6, g->raw, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

const char *vb_port_state_str(enum ibv_port_state s)
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

int vb_mtu_bytes(enum ibv_mtu m)
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

/*
 * GID g of port p as text, its type ("RoCE v2", "RoCE v1", "IB"; "" when
 * unknown) and its netdev ("" when none).  0, or -1 for an empty entry.
 */
static int gid_entry(struct ibv_context *ctx, uint8_t p, int g, char *gs, size_t gslen, char *type, size_t tlen,
		     char ifn[IF_NAMESIZE + 1])
{
	union ibv_gid gid, zero;

	memset(&zero, 0, sizeof zero);
	ifn[0] = type[0] = 0;
#if OQB_HAVE_GID_EX
	struct ibv_gid_entry ge;
	if (ibv_query_gid_ex(ctx, p, (uint32_t)g, &ge, 0))
		return -1;   /* empty entry */
	gid = ge.gid;
	if (ge.ndev_ifindex && !if_indextoname(ge.ndev_ifindex, ifn))
		ifn[0] = 0;
	snprintf(type, tlen, "%s", ge.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" :
		 ge.gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1" : "IB");
#else
	/* libibverbs before rdma-core v32 (MLNX_OFED 4.x): the GID's type is
	 * only in sysfs */
	if (ibv_query_gid(ctx, p, g, &gid))
		return -1;
	char path[256];
	snprintf(path, sizeof path, "/sys/class/infiniband/%s/ports/%u/gid_attrs/types/%d",
		 ibv_get_device_name(ctx->device), p, g);
	FILE *tf = fopen(path, "r");
	if (tf) {
		if (!fgets(type, (int)tlen, tf))
			type[0] = 0;
		type[strcspn(type, "\n")] = 0;
		fclose(tf);
	}
#endif
	if (!memcmp(&gid, &zero, sizeof zero))
		return -1;
	vb_gid_str(&gid, gs, gslen);
	return 0;
}

static const char *link_layer_str(uint8_t ll)
{
	return ll == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : ll == IBV_LINK_LAYER_INFINIBAND ? "InfiniBand" :
	       "unspecified";
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
				vb_port_state_str(pa.state), vb_mtu_bytes(pa.active_mtu),
				link_layer_str(pa.link_layer),
				pa.gid_tbl_len);
			for (int g = 0; g < pa.gid_tbl_len && g < 256; g++) {
				char gs[64], ifn[IF_NAMESIZE + 1], type[32];
				if (gid_entry(ctx, p, g, gs, sizeof gs, type, sizeof type, ifn) == 0)
					fprintf(out, "    gid %3d  %-40s %s%s%s\n", g, gs, type[0] ? type : "?",
						ifn[0] ? "  netdev " : "", ifn);
			}
		}
		ibv_close_device(ctx);
	}
	ibv_free_device_list(l);
	return n;
}

/* The device's NUMA node from sysfs; -1 when it has none (a VM, rxe). */
static int dev_numa_node(const char *name)
{
	char path[256];
	int node = -1;
	snprintf(path, sizeof path, "/sys/class/infiniband/%s/device/numa_node", name);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &node) != 1)
			node = -1;
		fclose(f);
	}
	return node;
}

json_t *tp_verbs_devices_json(void)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);
	json_t *out = json_array();

	for (int i = 0; l && i < n; i++) {
		const char *name = ibv_get_device_name(l[i]);
		json_t *d = json_pack("{s:s, s:i}", "name", name, "numa_node", dev_numa_node(name));
		json_t *ports = json_array();
		struct ibv_context *ctx = ibv_open_device(l[i]);
		struct ibv_device_attr da;
		json_object_set_new(d, "ports", ports);
		json_array_append_new(out, d);
		if (!ctx) {
			json_object_set_new(d, "error", json_sprintf("cannot open: %s", strerror(errno)));
			continue;
		}
		if (ibv_query_device(ctx, &da)) {
			json_object_set_new(d, "error", json_sprintf("cannot query: %s", strerror(errno)));
			ibv_close_device(ctx);
			continue;
		}
		for (uint8_t p = 1; p <= da.phys_port_cnt; p++) {
			struct ibv_port_attr pa;
			if (ibv_query_port(ctx, p, &pa))
				continue;
			json_t *gids = json_array();
			for (int g = 0; g < pa.gid_tbl_len && g < 256; g++) {
				char gs[64], ifn[IF_NAMESIZE + 1], type[32];
				if (gid_entry(ctx, p, g, gs, sizeof gs, type, sizeof type, ifn) == 0)
					json_array_append_new(gids, json_pack("{s:i, s:s, s:s, s:s}", "index", g, "gid", gs,
									      "type", type, "netdev", ifn));
			}
			json_array_append_new(ports, json_pack("{s:i, s:s, s:i, s:s, s:o}", "port", p,
							       "state", vb_port_state_str(pa.state), "active_mtu",
							       vb_mtu_bytes(pa.active_mtu), "link_layer",
							       link_layer_str(pa.link_layer), "gids", gids));
		}
		ibv_close_device(ctx);
	}
	if (l)
		ibv_free_device_list(l);
	return out;
}
