/*
 * erpc_shim.cc - the only C++ in oqbench: erpc_shim.h over eRPC's Nexus
 * and Rpc (https://github.com/erpc-io/eRPC, built by the user, docs/erpc.md).
 *
 * Owns the eRPC objects behind opaque handles and the client's buffer
 * pairs.  Guarantees that no exception leaves: every entry point catches
 * and turns it into a message naming the cause and the fix, because an
 * exception crossing into C code aborts the process.  The causes eRPC
 * reports only as a thrown string or a crash (a busy UDP port makes its
 * session thread die) are checked here first.  Shown by
 * tests/erpc/guest-erpc.sh (echo, set/get, the error cases).
 */
#include <rpc.h>
#include <infiniband/verbs.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <exception>
#include <string>
#include <vector>

#include "erpc_shim.h"

#ifndef OQB_ERPC_COMMIT
#define OQB_ERPC_COMMIT "unknown"
#define OQB_ERPC_DIRTY 0
#define OQB_ERPC_FLAGS ""
#endif

namespace {

const uint8_t kReqType = 1;

struct Pair {
	erpc::MsgBuffer req, resp;
};

}  // namespace

struct es_nexus {
	erpc::Nexus *nx;
};

struct es_rpc {
	erpc::Rpc<erpc::CTransport> *rpc = nullptr;
	void *ctx = nullptr;
	es_req_fn req_fn = nullptr;
	es_cont_fn cont_fn = nullptr;
	std::vector<Pair> pairs;
	size_t req_max = 0, resp_max = 0;
	int sm_err = 0;          /* last session event was a failure */
	int sm_connected = -1;   /* last session that connected */
	std::string sm_why;
};

static void say(char *err, size_t errlen, const std::string &m)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", m.c_str());
}

/* What to do about one of eRPC's exception messages. */
static std::string explain(const std::string &what)
{
	std::string hint;
	if (what.find("device list") != std::string::npos || what.find("Failed to open dev") != std::string::npos ||
	    what.find("device") != std::string::npos)
		hint = "no usable RDMA device: load rdma_rxe (rdma link add rxe0 type rxe netdev IFACE) or use a host with an RDMA NIC";
	else if (what.find("uge") != std::string::npos || what.find("SHM") != std::string::npos ||
		 what.find("shm") != std::string::npos || what.find("CQ") != std::string::npos)
		hint = "too few hugepages free (each Rpc maps about 24 MB of 2 MB pages): reserve more, "
		       "e.g. echo 512 > /proc/sys/vm/nr_hugepages (as root)";
	else if (what.find("RDTSC") != std::string::npos)
		hint = "eRPC times the CPU's TSC at start-up and found it outside 0.5-5 GHz; under emulation "
		       "(the TCG test VM) on a busy host that measurement fails: retry when the host is quieter";
	else if (what.find("root") != std::string::npos)
		hint = "eRPC needs root (it maps hugepages with shmget)";
	else
		hint = "see docs/erpc.md";
	return "eRPC: " + what + " (" + hint + ")";
}

static long huge_free(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long n = -1;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "HugePages_Free: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* 0 when UDP port p of addr can be bound (eRPC's session thread binds it
 * later and dies if it cannot). */
static int udp_port_free(unsigned p)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sa;
	int r;
	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(static_cast<uint16_t>(p));
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	r = bind(fd, reinterpret_cast<struct sockaddr *>(&sa), sizeof sa);
	close(fd);
	return r;
}

static void req_trampoline(erpc::ReqHandle *h, void *ctx)
{
	es_rpc *r = static_cast<es_rpc *>(ctx);
	const erpc::MsgBuffer *m = h->get_req_msgbuf();
	r->req_fn(r->ctx, h, m->buf_, m->get_data_size());
}

static void cont_trampoline(void *ctx, void *tag)
{
	es_rpc *r = static_cast<es_rpc *>(ctx);
	unsigned idx = static_cast<unsigned>(reinterpret_cast<uintptr_t>(tag));
	const erpc::MsgBuffer &m = r->pairs[idx].resp;
	r->cont_fn(r->ctx, idx, m.buf_, m.get_data_size());
}

static void sm_handler(int session, erpc::SmEventType ev, erpc::SmErrType e, void *ctx)
{
	es_rpc *r = static_cast<es_rpc *>(ctx);
	if (ev == erpc::SmEventType::kConnected && e == erpc::SmErrType::kNoError) {
		r->sm_connected = session;
		return;
	}
	r->sm_err = 1;
	r->sm_why = std::string(erpc::sm_event_type_str(ev)) + ": " + erpc::sm_err_type_str(e);
}

extern "C" {

int es_preflight(char *err, size_t errlen)
{
	int ndev = 0;
	struct ibv_device **l = ibv_get_device_list(&ndev);
	if (l)
		ibv_free_device_list(l);
	if (!l || ndev == 0) {
		say(err, errlen, "eRPC: no RDMA device on this host (ibv_get_device_list found none): "
			"load rdma_rxe and add one (rdma link add rxe0 type rxe netdev IFACE), or use a host "
			"with an RDMA NIC (docs/erpc.md)");
		return -1;
	}
	if (huge_free() <= 0) {
		say(err, errlen, "eRPC needs hugepages and none is free (HugePages_Free in /proc/meminfo): "
			"reserve some, e.g. echo 512 > /proc/sys/vm/nr_hugepages (as root; docs/erpc.md)");
		return -1;
	}
	return 0;
}

struct es_nexus *es_nexus_new(const char *addr, unsigned udp_port, int serve, char *err, size_t errlen)
{
	if (udp_port < erpc::kBaseSmUdpPort || udp_port >= erpc::kBaseSmUdpPort + erpc::kMaxNumERpcProcesses) {
		say(err, errlen, "eRPC session port " + std::to_string(udp_port) + " is outside eRPC's range " +
			std::to_string(erpc::kBaseSmUdpPort) + ".." +
			std::to_string(erpc::kBaseSmUdpPort + erpc::kMaxNumERpcProcesses - 1) + "; choose one in it");
		return nullptr;
	}
	if (udp_port_free(udp_port) != 0) {
		say(err, errlen, "eRPC session port UDP " + std::to_string(udp_port) + " is in use (" + strerror(errno) +
			"); stop what holds it (ss -lunp) or choose another port in " +
			std::to_string(erpc::kBaseSmUdpPort) + ".." +
			std::to_string(erpc::kBaseSmUdpPort + erpc::kMaxNumERpcProcesses - 1));
		return nullptr;
	}
	es_nexus *n = new (std::nothrow) es_nexus;
	if (!n) {
		say(err, errlen, "out of memory");
		return nullptr;
	}
	try {
		n->nx = new erpc::Nexus(std::string(addr) + ":" + std::to_string(udp_port), 0, 0);
		if (serve && n->nx->register_req_func(kReqType, req_trampoline) != 0)
			throw std::runtime_error("cannot register the request handler");
	} catch (const std::exception &e) {
		say(err, errlen, explain(e.what()));
		delete n;
		return nullptr;
	}
	return n;
}

void es_nexus_free(struct es_nexus *n)
{
	if (!n)
		return;
	try {
		delete n->nx;
	} catch (...) {
	}
	delete n;
}

struct es_rpc *es_rpc_new(struct es_nexus *n, unsigned rpc_id, void *ctx, es_req_fn req_fn, es_cont_fn cont_fn,
			  unsigned npairs, size_t req_max, size_t resp_max, char *err, size_t errlen)
{
	if (es_preflight(err, errlen) != 0)
		return nullptr;
	es_rpc *r = new (std::nothrow) es_rpc;
	if (!r) {
		say(err, errlen, "out of memory");
		return nullptr;
	}
	r->ctx = ctx;
	r->req_fn = req_fn;
	r->cont_fn = cont_fn;
	r->req_max = req_max;
	r->resp_max = resp_max;
	try {
		r->rpc = new erpc::Rpc<erpc::CTransport>(n->nx, r, static_cast<uint8_t>(rpc_id), sm_handler, 0);
		r->pairs.resize(npairs);
		for (auto &p : r->pairs) {
			p.req = r->rpc->alloc_msg_buffer(req_max);
			p.resp = r->rpc->alloc_msg_buffer(resp_max);
			if (!p.req.buf_ || !p.resp.buf_)
				throw std::runtime_error("out of hugepage memory for " + std::to_string(npairs) +
							 " message buffers");
		}
	} catch (const std::exception &e) {
		say(err, errlen, explain(e.what()));
		es_rpc_free(r);
		return nullptr;
	}
	return r;
}

void es_rpc_free(struct es_rpc *r)
{
	if (!r)
		return;
	try {
		if (r->rpc) {
			for (auto &p : r->pairs) {
				if (p.req.buf_)
					r->rpc->free_msg_buffer(p.req);
				if (p.resp.buf_)
					r->rpc->free_msg_buffer(p.resp);
			}
			delete r->rpc;
		}
	} catch (...) {
	}
	delete r;
}

int es_connect(struct es_rpc *r, const char *addr, unsigned udp_port, unsigned rpc_id, unsigned timeout_ms,
	       char *err, size_t errlen)
{
	std::string uri = std::string(addr) + ":" + std::to_string(udp_port);
	try {
		r->sm_err = 0;
		r->sm_connected = -1;
		int s = r->rpc->create_session(uri, static_cast<uint8_t>(rpc_id));
		if (s < 0) {
			say(err, errlen, "eRPC: cannot start a session to " + uri + " Rpc " + std::to_string(rpc_id) +
				": " + strerror(-s));
			return -1;
		}
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			r->rpc->run_event_loop_once();
			/* First: eRPC frees a refused session, and is_connected
			 * would read it. */
			if (r->sm_err) {
				say(err, errlen, "eRPC: session to " + uri + " Rpc " + std::to_string(rpc_id) +
					" refused (" + r->sm_why + "); is the server running with that many workers?");
				return -1;
			}
			if (r->sm_connected == s && r->rpc->is_connected(s))
				return s;
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > timeout_ms) {
				say(err, errlen, "eRPC: no session to " + uri + " Rpc " + std::to_string(rpc_id) +
					" within " + std::to_string(timeout_ms) + " ms; is the server running there "
					"(UDP port reachable, same RoCE subnet)?");
				return -1;
			}
		}
	} catch (const std::exception &e) {
		say(err, errlen, explain(e.what()));
		return -1;
	}
}

int es_request(struct es_rpc *r, int session, unsigned idx, const void *req, size_t len, char *err, size_t errlen)
{
	try {
		Pair &p = r->pairs[idx];
		if (len > r->req_max) {
			say(err, errlen, "request of " + std::to_string(len) + " bytes is larger than the adapter's " +
				std::to_string(r->req_max) + "-byte eRPC request buffers");
			return -1;
		}
		r->rpc->resize_msg_buffer(&p.req, len);
		memcpy(p.req.buf_, req, len);
		r->rpc->resize_msg_buffer(&p.resp, r->resp_max);
		r->rpc->enqueue_request(session, kReqType, &p.req, &p.resp, cont_trampoline,
					reinterpret_cast<void *>(static_cast<uintptr_t>(idx)));
	} catch (const std::exception &e) {
		say(err, errlen, explain(e.what()));
		return -1;
	}
	return 0;
}

int es_respond(struct es_rpc *r, void *handle, const void *a, size_t alen, const void *b, size_t blen)
{
	try {
		erpc::ReqHandle *h = static_cast<erpc::ReqHandle *>(handle);
		size_t n = alen + blen ? alen + blen : 1;
		erpc::MsgBuffer *m = &h->pre_resp_msgbuf_;
		if (n > r->rpc->get_max_data_per_pkt()) {
			h->dyn_resp_msgbuf_ = r->rpc->alloc_msg_buffer(n);
			if (!h->dyn_resp_msgbuf_.buf_)
				return -1;
			m = &h->dyn_resp_msgbuf_;
		} else {
			r->rpc->resize_msg_buffer(m, n);
		}
		if (alen)
			memcpy(m->buf_, a, alen);
		if (blen)
			memcpy(m->buf_ + alen, b, blen);
		if (!alen && !blen)
			m->buf_[0] = 0;
		r->rpc->enqueue_response(h, m);
	} catch (...) {
		return -1;
	}
	return 0;
}

void es_run_once(struct es_rpc *r)
{
	try {
		r->rpc->run_event_loop_once();
	} catch (...) {
	}
}

const char *es_transport(void)
{
	return "infiniband";
}

size_t es_max_data_per_pkt(void)
{
	return erpc::Rpc<erpc::CTransport>::get_max_data_per_pkt();
}

size_t es_max_msg_size(void)
{
	return erpc::Rpc<erpc::CTransport>::get_max_msg_size();
}

int es_is_roce(void)
{
	return erpc::kIsRoCE ? 1 : 0;
}

const char *es_build_commit(void)
{
	return OQB_ERPC_COMMIT;
}

int es_build_modified(void)
{
	return OQB_ERPC_DIRTY;
}

const char *es_build_flags(void)
{
	return OQB_ERPC_FLAGS;
}

}  // extern "C"
