/*
 * shm_ops.c - tp_shm_ops: which function of this folder serves each
 * transport operation (README.md maps the files).
 */
#include "tp_shm.h"

#include "shm_internal.h"

const struct transport_ops tp_shm_ops = {
	.name = "shm",
	.version = TRANSPORT_OPS_VERSION,
	.srv_open = shm_srv_open,
	.srv_endpoint = shm_srv_endpoint,
	.srv_poll = shm_srv_poll,
	.srv_req = shm_srv_req,
	.srv_executed = shm_srv_executed,
	.srv_release = shm_srv_release,
	.srv_reply = shm_srv_reply,
	.srv_flush = shm_srv_flush,
	.srv_stats = shm_srv_stats,
	.srv_close = shm_srv_close,
	.cli_open = shm_cli_open,
	.cli_id = shm_cli_id,
	.cli_workers = shm_cli_workers,
	.cli_post = shm_cli_post,
	.cli_post_many = shm_cli_post_many,
	.cli_flush = shm_cli_flush,
	.cli_poll = shm_cli_poll,
	.cli_stats = shm_cli_stats,
	.cli_close = shm_cli_close,
};
