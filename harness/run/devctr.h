/*
 * devctr.h - a point's RDMA device counters (run.json points[].rdma_counters,
 * docs/driver.md), from the deltas its processes report (lib/rdmactr.h).
 *
 *   {"device": "rxe0", "port": 1, "shared_device": true,
 *    "server": {NAME: delta} | "unavailable: WHY",
 *    "client": {NAME: delta} | "unavailable: WHY",
 *    "derived": {"server": {five} | null, "client": {five} | null},
 *    "rnr_naks_sent": N, "rnr_naks_received": N, "retransmissions": N,
 *    "duplicates": N, "out_of_sequence": N}
 *
 * client: the client processes' deltas, summed over the distinct devices
 * they ran on (host, device, port); processes that share one device each
 * saw all of its traffic, so that device counts once, with the largest
 * delta any of them saw (their lives nearly coincide).  shared_device: the
 * server and every client on one device (Soft-RoCE logical hosts): both
 * sides then count the same events, and the five totals are the server's,
 * whose life (open to stats) encloses the clients'.  Otherwise the totals
 * are server + client.  A total no side could count is null.
 */
#ifndef OQB_DEVCTR_H
#define OQB_DEVCTR_H

#include <stddef.h>
#include <jansson.h>

/* The point's rdma_counters, or NULL when no process reported any (shm,
 * or a build without verbs). */
json_t *devctr_point(const json_t *server, json_t *const *clients, size_t nclients);

/*
 * Trials (or convergence chunks) of one point: the sum of each trial's
 * rdma_counters (every number added, a side unavailable in any trial stays
 * the first such reason), with "trials": how many were summed.  NULL when
 * no entry has rdma_counters.
 */
json_t *devctr_over(const json_t *entries);

#endif
