/*
 * doctor_rdma.c - the RDMA checks of `oqb doctor` (doctor_internal.h):
 * which device and port carry verbs.addr, on either link layer, and
 * whether that port can run the config.
 *
 * The way there is the one rdma_cm takes: an IP address belongs to a
 * network interface, and the interface to an RDMA port.
 *   - the interface: on the server's host the one that holds verbs.addr
 *     (`ip -o addr show`), on a client host the one its route to
 *     verbs.addr leaves by (`ip -o route get`);
 *   - RoCE (link layer Ethernet: mlx5 in Ethernet mode, rxe): the port's
 *     GID table names the interface of each entry
 *     (ports/P/gid_attrs/ndevs/I), and the address's GID is the
 *     IPv4-mapped ::ffff:A.B.C.D (RoCE v2);
 *   - InfiniBand: the interface is IPoIB (ibN, type 32).  Its 20-byte
 *     hardware address ends with the port's GID (subnet prefix and port
 *     GUID, ports/P/gids/0), which names the port; the device is also
 *     under the interface's device/infiniband/.  There is no GID of the
 *     address itself: rdma_cm resolves it through IPoIB's ARP.
 * Then the port's state (ACTIVE), link layer (the interface's type must
 * agree: IPoIB on InfiniBand, an Ethernet interface on RoCE), rate, the
 * active MTU against the slot size, and the device's NUMA node.
 *
 * The probe (doctor.c) reads all of it on the host, under a root prefix
 * (OQB_SYSFS_ROOT, "/" by default; tests give a stand-in tree) and prints
 * it as lines this file parses: the driver never reads another host's
 * sysfs.  The active MTU is not in sysfs: it comes from oqb-server
 * --host-facts (ibv_query_port) when that lists the device, else from the
 * interface's MTU by the kernel's rules (IPoIB datagram: MTU + 4; RoCE:
 * the largest IB MTU below the interface's MTU less 96 B of headers).
 */
#include "doctor_internal.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define RD_NETS  64
#define RD_PORTS 32
#define RD_GIDS  512
#define RD_ADDRS 128
#define RD_DEVS  32

struct rd_net {
	char name[64];
	int type, mtu, dev_port;           /* -1 when not read */
	char address[80], mode[16];
	char ibdev[4][64];
	int nibdev;
};

struct rd_port {
	char dev[64];
	int port;
	char state[40], link_layer[32], rate[64], phys_state[40];
};

struct rd_gid {
	char dev[64];
	int port, index;
	char gid[64], ndev[64], type[64];
};

struct rd_addr {
	char ifname[64];
	char addr[80];
};

struct dr_rdma {
	struct rd_net nets[RD_NETS];
	struct rd_port ports[RD_PORTS];
	struct rd_gid gids[RD_GIDS];
	struct rd_addr addrs[RD_ADDRS];
	struct { char dev[64]; int node; } devs[RD_DEVS];
	size_t nnets, nports, ngids, naddrs, ndevs;
	char route_dev[64], route_src[80];   /* a client's way to verbs.addr */
	int noip;                          /* the host has no `ip` (iproute2) */
};

void dr_rdma_free(struct dr_rdma *r)
{
	free(r);
}

static struct rd_net *net_get(struct dr_rdma *r, const char *name)
{
	for (size_t i = 0; i < r->nnets; i++)
		if (!strcmp(r->nets[i].name, name))
			return &r->nets[i];
	if (r->nnets == RD_NETS)
		return NULL;
	struct rd_net *n = &r->nets[r->nnets++];
	snprintf(n->name, sizeof n->name, "%s", name);
	n->type = n->mtu = n->dev_port = -1;
	return n;
}

static struct rd_port *port_get(struct dr_rdma *r, const char *dev, int port)
{
	for (size_t i = 0; i < r->nports; i++)
		if (!strcmp(r->ports[i].dev, dev) && r->ports[i].port == port)
			return &r->ports[i];
	if (r->nports == RD_PORTS)
		return NULL;
	struct rd_port *p = &r->ports[r->nports++];
	snprintf(p->dev, sizeof p->dev, "%s", dev);
	p->port = port;
	return p;
}

/* `ip -o addr show` line: "IDX: NAME    inet A/LEN ..." (NAME may carry
 * "@PARENT"). */
static void parse_ipaddr(struct dr_rdma *r, const char *l)
{
	char name[64], fam[16], addr[80];
	if (r->naddrs == RD_ADDRS || sscanf(l, "%*d: %63s %15s %79s", name, fam, addr) != 3)
		return;
	if (strcmp(fam, "inet") && strcmp(fam, "inet6"))
		return;
	name[strcspn(name, "@:")] = '\0';
	addr[strcspn(addr, "/")] = '\0';
	struct rd_addr *a = &r->addrs[r->naddrs++];
	snprintf(a->ifname, sizeof a->ifname, "%s", name);
	snprintf(a->addr, sizeof a->addr, "%s", addr);
}

int dr_rdma_line(struct dr_rdma **rp, const char *l)
{
	static const char *const kinds[] = { "ipaddr ", "route ", "net ", "port ", "gid ", "dev ", "noip", NULL };
	int k;
	for (k = 0; kinds[k]; k++)
		if (!strncmp(l, kinds[k], strlen(kinds[k])))
			break;
	if (!kinds[k])
		return 0;
	if (!*rp && !(*rp = calloc(1, sizeof **rp)))
		return 1;
	struct dr_rdma *r = *rp;
	const char *v = l + strlen(kinds[k]);
	char a[64], b[64], c[64];
	int n = 0, i1 = 0;

	switch (k) {
	case 0:
		parse_ipaddr(r, v);
		break;
	case 1: {   /* "A dev NAME src ..." */
		const char *d = strstr(v, " dev ");
		const char *sr = strstr(v, " src ");
		if (d && sscanf(d + 5, "%63s", r->route_dev) != 1)
			r->route_dev[0] = '\0';
		if (sr && sscanf(sr + 5, "%79s", r->route_src) != 1)
			r->route_src[0] = '\0';
		break;
	}
	case 2: {   /* "NAME KEY VALUE" */
		if (sscanf(v, "%63s %63s %n", a, b, &n) != 2 || !n)
			break;
		struct rd_net *nt = net_get(r, a);
		const char *val = v + n;
		if (!nt)
			break;
		if (!strcmp(b, "type"))
			nt->type = atoi(val);
		else if (!strcmp(b, "mtu"))
			nt->mtu = atoi(val);
		else if (!strcmp(b, "dev_port"))
			nt->dev_port = atoi(val);
		else if (!strcmp(b, "address"))
			snprintf(nt->address, sizeof nt->address, "%s", val);
		else if (!strcmp(b, "mode"))
			snprintf(nt->mode, sizeof nt->mode, "%s", val);
		else if (!strcmp(b, "ibdev") && nt->nibdev < 4)
			snprintf(nt->ibdev[nt->nibdev++], sizeof nt->ibdev[0], "%s", val);
		break;
	}
	case 3: {   /* "DEV P KEY VALUE..." */
		if (sscanf(v, "%63s %d %63s %n", a, &i1, b, &n) != 3 || !n)
			break;
		struct rd_port *p = port_get(r, a, i1);
		const char *val = v + n;
		if (!p)
			break;
		if (!strcmp(b, "state"))
			snprintf(p->state, sizeof p->state, "%s", val);
		else if (!strcmp(b, "link_layer"))
			snprintf(p->link_layer, sizeof p->link_layer, "%s", val);
		else if (!strcmp(b, "rate"))
			snprintf(p->rate, sizeof p->rate, "%s", val);
		else if (!strcmp(b, "phys_state"))
			snprintf(p->phys_state, sizeof p->phys_state, "%s", val);
		break;
	}
	case 4: {   /* "DEV P I GID NDEV TYPE..." (NDEV "-": none) */
		int port = 0, idx = 0;
		if (r->ngids == RD_GIDS || sscanf(v, "%63s %d %d %63s %63s %n", a, &port, &idx, b, c, &n) != 5)
			break;
		struct rd_gid *g = &r->gids[r->ngids++];
		snprintf(g->dev, sizeof g->dev, "%s", a);
		g->port = port;
		g->index = idx;
		snprintf(g->gid, sizeof g->gid, "%s", b);
		snprintf(g->ndev, sizeof g->ndev, "%s", strcmp(c, "-") ? c : "");
		snprintf(g->type, sizeof g->type, "%s", n ? v + n : "");
		break;
	}
	case 6:     /* no `ip` on the host */
		r->noip = 1;
		break;
	case 5:     /* "DEV numa_node N" */
		if (r->ndevs < RD_DEVS && sscanf(v, "%63s numa_node %d", a, &i1) == 2) {
			snprintf(r->devs[r->ndevs].dev, sizeof r->devs[0].dev, "%s", a);
			r->devs[r->ndevs++].node = i1;
		}
		break;
	}
	return 1;
}

/* Whether two textual addresses are the same address. */
static int same_addr(const char *x, const char *y)
{
	unsigned char a[16], b[16];
	if (inet_pton(AF_INET, x, a) == 1)
		return inet_pton(AF_INET, y, b) == 1 && !memcmp(a, b, 4);
	if (inet_pton(AF_INET6, x, a) == 1)
		return inet_pton(AF_INET6, y, b) == 1 && !memcmp(a, b, 16);
	return 0;
}

int dr_numeric_addr(const char *a, char *buf, size_t len)
{
	unsigned char x[16];
	struct addrinfo hints, *res = NULL;

	if (inet_pton(AF_INET, a, x) == 1 || inet_pton(AF_INET6, a, x) == 1) {
		snprintf(buf, len, "%s", a);
		return 0;
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_INET;
	if (getaddrinfo(a, NULL, &hints, &res) != 0 || !res)
		return -1;
	inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, buf, (socklen_t)len);
	freeaddrinfo(res);
	return 0;
}

/* A sysfs GID ("fe80:0000:...:b2c3") as the text rdma tools print
 * ("fe80::2:c903:a1:b2c3", "::ffff:198.18.2.2"); 0, or -1. */
static int gid_text(const char *sys, char *buf, size_t len, unsigned char raw[16])
{
	static const unsigned char v4pre[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (inet_pton(AF_INET6, sys, raw) != 1)
		return -1;
	if (!memcmp(raw, v4pre, 12))
		snprintf(buf, len, "::ffff:%u.%u.%u.%u", raw[12], raw[13], raw[14], raw[15]);
	else
		inet_ntop(AF_INET6, raw, buf, (socklen_t)len);
	return 0;
}

/* The GID that ends an IPoIB hardware address (20 bytes: 4 of flags and
 * QPN, then the port's GID), into raw: 0, or -1 when addr is not one. */
static int ipoib_gid(const char *addr, unsigned char raw[16])
{
	unsigned b[20];
	int n = 0, used = 0;
	for (const char *p = addr; *p && n < 20; n++) {
		if (sscanf(p, "%2x%n", &b[n], &used) != 1)
			return -1;
		p += used;
		if (*p == ':')
			p++;
		else if (*p)
			return -1;
	}
	if (n != 20)
		return -1;
	for (int i = 0; i < 16; i++)
		raw[i] = (unsigned char)b[4 + i];
	return 0;
}

/* The state's name: "4: ACTIVE" -> "ACTIVE". */
static const char *state_name(const char *s)
{
	const char *c = strchr(s, ':');
	if (!c)
		return s;
	c++;
	while (*c == ' ')
		c++;
	return c;
}

static const json_t *facts_port(const struct dr_host *h, const char *dev, int port)
{
	size_t i, j;
	const json_t *d, *p;
	json_array_foreach(json_object_get(h->facts, "rdma_devices"), i, d)
		if (!strcmp(json_string_value(json_object_get(d, "name")) ?: "", dev))
			json_array_foreach(json_object_get(d, "ports"), j, p)
				if (json_integer_value(json_object_get(p, "port")) == port)
					return p;
	return NULL;
}

/* The IB MTU the kernel derives from an interface's MTU (see the top). */
static int derived_mtu(const struct rd_net *n, int ib)
{
	int m = ib ? n->mtu + 4 : n->mtu - 96;
	if (n->mtu <= 0 || (ib && !strcmp(n->mode, "connected")))
		return -1;
	for (int v = 4096; v >= 256; v /= 2)
		if (m >= v)
			return v;
	return 0;
}

/* The names of the RDMA devices and the interfaces they carry, for a
 * message: "rxe0 (eth0), mlx5_0 (ib0)". */
static void devices_seen(const struct dr_rdma *r, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < r->nports && o < len; i++) {
		const char *nd = "";
		for (size_t g = 0; g < r->ngids && !nd[0]; g++)
			if (!strcmp(r->gids[g].dev, r->ports[i].dev) && r->gids[g].port == r->ports[i].port)
				nd = r->gids[g].ndev;
		for (size_t k = 0; k < r->nnets && !nd[0]; k++)
			for (int d = 0; d < r->nets[k].nibdev; d++)
				if (!strcmp(r->nets[k].ibdev[d], r->ports[i].dev))
					nd = r->nets[k].name;
		o += (size_t)snprintf(buf + o, len - o, "%s%s port %d%s%s%s", o ? ", " : "", r->ports[i].dev,
				      r->ports[i].port, nd[0] ? " (" : "", nd, nd[0] ? ")" : "");
	}
	if (!o)
		snprintf(buf, len, "none");
}

/* Where the interface n leads: its RDMA port, and the GID that carries
 * addr (RoCE) or the port's GID (InfiniBand).  NULL when none. */
static const struct rd_port *port_of(const struct dr_rdma *r, const struct rd_net *n, const char *addr,
				     const struct rd_gid **gid)
{
	const struct rd_gid *best = NULL;
	unsigned char want[16], raw[16];
	char txt[64];
	int v4 = addr && inet_pton(AF_INET, addr, want + 12) == 1;

	if (v4) {
		memset(want, 0, 10);
		want[10] = want[11] = 0xff;
	} else if (!addr || inet_pton(AF_INET6, addr, want) != 1) {
		addr = NULL;
	}
	/* RoCE: a GID entry on this interface, the address's own first
	 * (RoCE v2 before v1), else any. */
	for (size_t i = 0; i < r->ngids; i++) {
		const struct rd_gid *g = &r->gids[i];
		if (strcmp(g->ndev, n->name) || gid_text(g->gid, txt, sizeof txt, raw))
			continue;
		int mine = addr && !memcmp(raw, want, 16);
		int bmine = 0;
		if (best && addr && !gid_text(best->gid, txt, sizeof txt, raw))
			bmine = !memcmp(raw, want, 16);
		if (!best || (mine && !bmine) ||
		    (mine == bmine && !strcmp(g->type, "RoCE v2") && strcmp(best->type, "RoCE v2")))
			best = g;
	}
	if (best) {
		*gid = best;
		for (size_t i = 0; i < r->nports; i++)
			if (!strcmp(r->ports[i].dev, best->dev) && r->ports[i].port == best->port)
				return &r->ports[i];
	}
	/* InfiniBand: the port whose GID ends the IPoIB hardware address. */
	if (!ipoib_gid(n->address, want)) {
		for (size_t i = 0; i < r->ngids; i++) {
			const struct rd_gid *g = &r->gids[i];
			if (!gid_text(g->gid, txt, sizeof txt, raw) && !memcmp(raw, want, 16))
				for (size_t p = 0; p < r->nports; p++)
					if (!strcmp(r->ports[p].dev, g->dev) && r->ports[p].port == g->port) {
						*gid = g;
						return &r->ports[p];
					}
		}
	}
	/* The interface's device (device/infiniband/) and port (dev_port
	 * counts from 0). */
	for (int d = 0; d < n->nibdev; d++)
		for (size_t p = 0; p < r->nports; p++)
			if (!strcmp(r->ports[p].dev, n->ibdev[d]) && r->ports[p].port == (n->dev_port < 0 ? 1 : n->dev_port + 1)) {
				*gid = NULL;
				return &r->ports[p];
			}
	return NULL;
}

/* The checks of one host (see the top).  Rows: rdma device, port state,
 * link layer, gid, rate, mtu, numa. */
void dr_check_rdma(struct dr_table *t, const struct runconf *rc, const struct dr_host *h)
{
	const struct dr_rdma *r = h->rdma;
	const char *host = h->need.host;
	const char *va = rc->verbs_addr ? rc->verbs_addr : rc->server_host;
	char addr[64] = "", seen[400], fix[600];
	const struct rd_net *n = NULL;
	const struct rd_gid *g = NULL;
	const char *why = "holds";

	if (!r || !r->nports) {
		dr_add(t, host, "rdma device", DR_FAIL,
		       "load the NIC's driver (or for Soft-RoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev "
		       "IFACE), then check with oqb-server --list-devices",
		       "no RDMA device on this host (nothing in /sys/class/infiniband)");
		return;
	}
	devices_seen(r, seen, sizeof seen);
	if (dr_numeric_addr(va, addr, sizeof addr) != 0) {
		dr_add(t, host, "rdma device", DR_FAIL, "set verbs.addr to an IP address of the server's RDMA interface",
		       "verbs.addr %s does not resolve to an address", va);
		return;
	}
	if (r->noip) {
		dr_add(t, host, "rdma device", DR_FAIL, "install iproute2 there (Debian: apt-get install iproute2)",
		       "cannot tell which interface has verbs.addr %s: no ip command on this host", va);
		return;
	}
	/* The interface: the one that holds the address on the server's
	 * host, the route's on a client's. */
	for (size_t i = 0; h->need.servers && i < r->naddrs && !n; i++)
		if (same_addr(r->addrs[i].addr, addr)) {
			for (size_t k = 0; k < r->nnets; k++)
				if (!strcmp(r->nets[k].name, r->addrs[i].ifname))
					n = &r->nets[k];
			why = "holds";
		}
	if (h->need.servers && !n) {
		snprintf(fix, sizeof fix, "set verbs.addr to an address of an RDMA interface (ip -o addr on %s; "
			 "oqb-server --list-devices shows each RoCE GID's address), or bind a device to the interface "
			 "that has it (Soft-RoCE: rdma link add rxe0 type rxe netdev IFACE)", host);
		dr_add(t, host, "rdma device", DR_FAIL, fix, "verbs.addr %s is on no RDMA interface: no interface of "
		       "this host holds it (ip -o addr); RDMA ports: %s", va, seen);
		return;
	}
	if (!h->need.servers) {
		why = "routes to";
		for (size_t k = 0; k < r->nnets && r->route_dev[0]; k++)
			if (!strcmp(r->nets[k].name, r->route_dev))
				n = &r->nets[k];
		if (!n) {
			dr_add(t, host, "rdma device", DR_WARN, "check that this host reaches verbs.addr over its RDMA "
			       "interface (ip route get ADDR)", "no route from here to verbs.addr %s was found "
			       "(ip -o route get); RDMA ports: %s", va, seen);
			return;
		}
	}
	/* the address whose RoCE GID this host's side uses: verbs.addr on
	 * the server's, the route's source on a client's */
	const char *gaddr = h->need.servers ? addr : r->route_src;
	const struct rd_port *p = port_of(r, n, gaddr[0] ? gaddr : NULL, &g);
	if (!p) {
		snprintf(fix, sizeof fix, h->need.servers ? "set verbs.addr to an address of an RDMA interface "
			 "(RDMA ports here: %s), or bind a device to %s (Soft-RoCE: rdma link add rxe0 type rxe netdev %s)" :
			 "route verbs.addr through an RDMA interface here (RDMA ports: %s), or bind a device to %s "
			 "(Soft-RoCE: rdma link add rxe0 type rxe netdev %s)", seen, n->name, n->name);
		dr_add(t, host, "rdma device", DR_FAIL, fix, "verbs.addr %s is on no RDMA interface: the interface "
		       "that %s it, %s, carries no RDMA port", va, why, n->name);
		return;
	}
	if ((rc->device && strcmp(rc->device, p->dev)) || (rc->ib_port > 0 && rc->ib_port != p->port)) {
		snprintf(fix, sizeof fix, "set verbs.device to %s and verbs.ib_port to %d, or leave both out to use the "
			 "port that owns verbs.addr", p->dev, p->port);
		dr_add(t, host, "rdma device", DR_FAIL, fix, "the config names %s port %lld, but %s %s verbs.addr %s "
		       "and is on %s port %d", rc->device ? rc->device : p->dev, rc->ib_port > 0 ? rc->ib_port : 1,
		       n->name, why, va, p->dev, p->port);
		return;
	}
	dr_add(t, host, "rdma device", DR_PASS, NULL, "%s port %d %s verbs.addr %s (interface %s)", p->dev, p->port,
	       h->need.servers ? "owns" : "routes to", va, n->name);

	const char *st = state_name(p->state);
	if (strcmp(st, "ACTIVE")) {
		const char *sfix = !strcmp(st, "INIT") && !strcmp(p->link_layer, "InfiniBand") ?
			"the link is up but no subnet manager configured the port: start one (opensm on a host of "
			"the fabric, or the switch's), then check with ibstat" :
			"bring the link up: ip link set IFACE up, and check the cable, switch port and, on InfiniBand, "
			"the subnet manager (ibstat)";
		dr_add(t, host, "port state", DR_FAIL, sfix, "%s port %d is %s%s%s", p->dev, p->port,
		       st[0] ? st : "not reported", p->phys_state[0] ? ", physical " : "", p->phys_state);
	} else {
		dr_add(t, host, "port state", DR_PASS, NULL, "%s port %d is ACTIVE", p->dev, p->port);
	}

	/* The interface's type and the port's link layer must agree:
	 * ARPHRD_INFINIBAND (32) is IPoIB, ARPHRD_ETHER (1) is RoCE. */
	int ib = !strcmp(p->link_layer, "InfiniBand");
	int eth = !strcmp(p->link_layer, "Ethernet");
	if ((ib && n->type >= 0 && n->type != 32) || (eth && n->type == 32) || (!ib && !eth)) {
		snprintf(fix, sizeof fix, "set verbs.addr to an address of the interface that port's link layer "
			 "carries (IPoIB ibN for InfiniBand, the Ethernet interface for RoCE), or set the port's link "
			 "type to match (mlxconfig LINK_TYPE_P%d, then reboot)", p->port);
		dr_add(t, host, "link layer", DR_FAIL, fix, "%s port %d's link layer is %s, but interface %s is %s",
		       p->dev, p->port, p->link_layer[0] ? p->link_layer : "not reported", n->name,
		       n->type == 32 ? "IPoIB (type 32)" : n->type == 1 ? "Ethernet (type 1)" : "of another type");
		return;   /* its GID and MTU would be judged by the wrong rules */
	} else {
		dr_add(t, host, "link layer", DR_PASS, NULL, "%s (%s)", p->link_layer,
		       ib ? (n->type == 32 ? "IPoIB interface over the HCA port" : "InfiniBand port") : "RoCE");
	}

	char gt[64];
	unsigned char raw[16];
	if (g && !gid_text(g->gid, gt, sizeof gt, raw)) {
		if (eth && gaddr[0] && !same_addr(gt + (strncmp(gt, "::ffff:", 7) ? 0 : 7), gaddr)) {
			snprintf(fix, sizeof fix, "give %s the address (ip addr add %s/LEN dev %s)%s", n->name, gaddr,
				 n->name, h->need.servers ? ", or set verbs.addr to one it has" : "");
			dr_add(t, host, "gid", DR_FAIL, fix, "no GID of %s is ::ffff:%s (RoCE v2 needs the address's "
			       "GID; found index %d %s)", p->dev, gaddr, g->index, gt);
		} else if (eth && gaddr[0] && strcmp(g->type, "RoCE v2")) {
			dr_add(t, host, "gid", DR_FAIL, "enable RoCE v2 for the device (the NIC's tools; cma_roce_mode "
			       "in configfs), or use an address with a RoCE v2 GID", "the GID of %s is index %d, type %s: "
			       "not RoCE v2", gaddr, g->index, g->type[0] ? g->type : "unknown");
		} else if (h->need.servers && rc->gid_index >= 0 && rc->gid_index != g->index &&
			   (eth || rc->gid_index != 0)) {
			snprintf(fix, sizeof fix, "set verbs.gid_index to %d, or to -1 to find it from verbs.addr",
				 g->index);
			dr_add(t, host, "gid", DR_FAIL, fix, "verbs.gid_index is %lld, but %s (%s) is index %d",
			       rc->gid_index, gt, g->type[0] ? g->type : p->link_layer, g->index);
		} else if (ib) {
			dr_add(t, host, "gid", DR_PASS, NULL, "index %d is %s (subnet prefix %.19s, port GUID %.19s), "
			       "InfiniBand: rdma_cm reaches verbs.addr through IPoIB", g->index, gt, g->gid, g->gid + 20);
		} else {
			dr_add(t, host, "gid", DR_PASS, NULL, "index %d is %s, %s%s%s", g->index, gt, g->type,
			       g->ndev[0] ? ", netdev " : "", g->ndev);
		}
	} else if (h->need.servers || ib) {
		dr_add(t, host, "gid", DR_FAIL, "check the port's GID table (ls /sys/class/infiniband/DEV/ports/P/"
		       "gids; on InfiniBand the subnet manager sets the prefix)",
		       "%s port %d has no GID for interface %s", p->dev, p->port, n->name);
	}

	dr_add(t, host, "rate", DR_PASS, NULL, "%s", p->rate[0] ? p->rate : "not reported");

	const json_t *fp = facts_port(h, p->dev, p->port);
	long long mtu = fp ? (long long)json_integer_value(json_object_get(fp, "active_mtu")) : derived_mtu(n, ib);
	long long ss = rc->slot_size > 0 ? rc->slot_size : 2048;
	char src[120];
	if (fp)
		snprintf(src, sizeof src, "ibv_query_port");
	else
		snprintf(src, sizeof src, "from %s's MTU %d%s", n->name, n->mtu,
			 ib ? ", IPoIB datagram mode" : ", RoCE headers 96 B");
	if (mtu < 0)
		dr_add(t, host, "mtu", DR_WARN, "build oqb-server with the verbs transport there, so --host-facts "
		       "reports the port's active MTU (ibv_devinfo shows it too)", "unknown: %s is in IPoIB connected "
		       "mode and the host did not report %s port %d", n->name, p->dev, p->port);
	else if (mtu < (ss < 4096 ? ss : 4096)) {
		snprintf(fix, sizeof fix, ib ? "raise the fabric's MTU to 4096 (the subnet manager's partition "
			 "config, e.g. opensm partitions.conf mtu=5), then the IPoIB MTU (ip link set %s mtu 4092)" :
			 "raise the interface MTU (ip link set %s mtu 4200 gives RoCE MTU 4096) and the switch's",
			 n->name);
		dr_add(t, host, "mtu", DR_WARN, fix, "active MTU %lld B (%s): a request of up to %lld B "
		       "(server.slot_size) takes several packets", mtu, src, ss);
	} else
		dr_add(t, host, "mtu", DR_PASS, NULL, "active MTU %lld B (%s)", mtu, src);

	int node = -1;
	for (size_t i = 0; i < r->ndevs; i++)
		if (!strcmp(r->devs[i].dev, p->dev))
			node = r->devs[i].node;
	dr_check_numa(t, rc, h, p->dev, node);
}
