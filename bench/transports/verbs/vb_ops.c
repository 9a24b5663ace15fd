/*
 * vb_ops.c - the verbs transport's entry in transport.c's table: which
 * function of this folder serves each transport operation.  The folder's
 * map is README.md; transport.h says what each operation must do.
 */
#include "tp_verbs.h"
#include "vb_internal.h"

/* The receive modes and optional paths compiled into this build.  XRC is
 * always compiled (rdma-core has it); whether a device offers it is asked
 * at run time, and a server on one without it refuses --xrc. */
static json_t *vb_build(void)
{
	return json_pack("{s:[s,s,s*],s:s,s:b}", "recv_modes", "srq", "slot_ring",
#if OQB_HAVE_VERBS_EXP
			 "mp", "mp_srq", "compiled in (MLNX_OFED experimental verbs)",
#else
			 NULL, "mp_srq", "not compiled: no MLNX_OFED 4.6+ experimental verbs header at build time",
#endif
			 "xrc", 1);
}

const struct transport_ops tp_verbs_ops = {
	.name = "verbs",
	.version = TRANSPORT_OPS_VERSION,
	.build = vb_build,
	.srv_open = vb_srv_open,
	.srv_endpoint = vb_srv_endpoint,
	.srv_poll = vb_srv_poll,
	.srv_req = vb_srv_req,
	.srv_persist_req = vb_srv_persist_req,
	.srv_release = vb_srv_release,
	.srv_reply = vb_srv_reply,
	.srv_flush = vb_srv_flush,
	.srv_stats = vb_srv_stats,
	.srv_close = vb_srv_close,
	.cli_open = vb_cli_open,
	.cli_id = vb_cli_id,
	.cli_workers = vb_cli_workers,
	.cli_post = vb_cli_post,
	.cli_post_many = vb_cli_post_many,
	.cli_flush = vb_cli_flush,
	.cli_poll = vb_cli_poll,
	.cli_stats = vb_cli_stats,
	.cli_close = vb_cli_close,
};
