/*
 * vb_counters.c - the RDMA device's port counters over a verbs process's
 * measured life (lib/rdmactr.h reads and subtracts them; docs/verbs.md,
 * "Device counters").
 *
 * Server: a snapshot when srv_open has its device and port, another at
 * each srv_stats; the stats carry the difference as "rdma_counters".
 * Client: the counters belong to the device, not to a thread, so one
 * snapshot per process: the first cli_open that connects takes it and
 * owns it, and only the owner's cli_stats carries "rdma_counters"
 * (bench/client.c lifts it to the process's result); summing the threads'
 * would count the device once per thread.  When the owner closes, the next
 * open takes a fresh one.  Where the counters cannot be read the field is
 * "unavailable: WHY", never zeros.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "rdmactr.h"
#include "vb_internal.h"

struct rdmactr_snap *vb_ctr_begin(struct ibv_context *ctx, unsigned port)
{
	struct rdmactr_snap *s = malloc(sizeof *s);
	if (s)
		rdmactr_read(NULL, ctx ? ibv_get_device_name(ctx->device) : NULL, port, s);
	return s;
}

json_t *vb_ctr_json(const struct rdmactr_snap *start)
{
	if (!start)
		return json_string("unavailable: out of memory for the start snapshot");
	struct rdmactr_snap *end = malloc(sizeof *end);
	if (!end)
		return json_string("unavailable: out of memory for the end snapshot");
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	rdmactr_read(NULL, start->dev, start->port, end);
	json_t *j = rdmactr_delta_json(start, end, host);
	free(end);
	return j;
}

static pthread_mutex_t cli_mu = PTHREAD_MUTEX_INITIALIZER;
static struct rdmactr_snap *cli_start;
static const struct tp_client *cli_owner;

void vb_ctr_cli_begin(const struct tp_client *c)
{
	const struct vb_group *g = c->g;
	pthread_mutex_lock(&cli_mu);
	if (!cli_owner) {
		cli_start = vb_ctr_begin(g->ctx, g->q[0].id ? g->q[0].id->port_num : 1);
		cli_owner = c;
	}
	pthread_mutex_unlock(&cli_mu);
}

json_t *vb_ctr_cli_json(const struct tp_client *c)
{
	json_t *j = NULL;
	pthread_mutex_lock(&cli_mu);
	if (cli_owner == c)
		j = vb_ctr_json(cli_start);
	pthread_mutex_unlock(&cli_mu);
	return j;
}

void vb_ctr_cli_end(const struct tp_client *c)
{
	pthread_mutex_lock(&cli_mu);
	if (cli_owner == c) {
		free(cli_start);
		cli_start = NULL;
		cli_owner = NULL;
	}
	pthread_mutex_unlock(&cli_mu);
}
