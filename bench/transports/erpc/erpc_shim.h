/*
 * erpc_shim.h - the C face of the eRPC library (erpc_shim.cc), for tp_erpc.c.
 *
 * Owns: one opaque Nexus per process and one opaque Rpc per thread, as eRPC
 * requires.  Guarantees: no C++ exception crosses this interface; each one
 * becomes -1 or NULL with a message in err that names the cause (no RDMA
 * device, no hugepages, UDP port in use, session refused) and what to do.
 * An Rpc is used only by the thread that created it (eRPC's dispatch
 * thread); every call below on an es_rpc must come from that thread.
 * Tested end to end in the Soft-RoCE VM (tests/erpc/guest-erpc.sh).
 */
#ifndef OQB_ERPC_SHIM_H
#define OQB_ERPC_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct es_nexus;
struct es_rpc;

/* Server side: a request arrived; handle stays valid until es_respond. */
typedef void (*es_req_fn)(void *ctx, void *handle, const void *req, size_t len);
/* Client side: the response to the request posted on buffer pair idx. */
typedef void (*es_cont_fn)(void *ctx, unsigned idx, const void *resp, size_t len);

/* 0 when this host can run eRPC: an RDMA device and free hugepages;
 * otherwise -1 and what to do. */
int es_preflight(char *err, size_t errlen);

/* A Nexus on udp_port (31850 up to 31881) of host addr; with req_fn, it
 * serves requests (set before any Rpc exists, as eRPC requires). */
struct es_nexus *es_nexus_new(const char *addr, unsigned udp_port, int serve,
			      char *err, size_t errlen);
void es_nexus_free(struct es_nexus *n);

/* An Rpc with id rpc_id owned by the calling thread.  Servers pass req_fn;
 * clients pass cont_fn and npairs request/response buffer pairs of
 * req_max and resp_max bytes. */
struct es_rpc *es_rpc_new(struct es_nexus *n, unsigned rpc_id, void *ctx,
			  es_req_fn req_fn, es_cont_fn cont_fn, unsigned npairs,
			  size_t req_max, size_t resp_max, char *err, size_t errlen);
void es_rpc_free(struct es_rpc *r);

/* Connects to remote Rpc rpc_id at addr:udp_port; the session number, or
 * -1 (refused, or not connected within timeout_ms). */
int es_connect(struct es_rpc *r, const char *addr, unsigned udp_port, unsigned rpc_id,
	       unsigned timeout_ms, char *err, size_t errlen);
/* Sends len bytes on pair idx (free: the caller tracks that). */
int es_request(struct es_rpc *r, int session, unsigned idx, const void *req, size_t len,
	       char *err, size_t errlen);
/* Answers handle with a then b (either may be empty). */
int es_respond(struct es_rpc *r, void *handle, const void *a, size_t alen,
	       const void *b, size_t blen);
/* One turn of eRPC's event loop (receive, handlers, continuations, send). */
void es_run_once(struct es_rpc *r);

/* The build: transport name, MTU (bytes of data per packet), RoCE or not. */
const char *es_transport(void);
size_t es_max_data_per_pkt(void);
size_t es_max_msg_size(void);
int es_is_roce(void);
/* Where the linked eRPC came from (set by the Makefile for this file's
 * C++ side only): git commit ("none" outside git), whether its tree had
 * local changes, and the compile flags its CMake used. */
const char *es_build_commit(void);
int es_build_modified(void);
const char *es_build_flags(void);

#ifdef __cplusplus
}
#endif
#endif
