/*
 * hosttags.h - a point's requests apart by host stall (issue 50;
 * docs/trust.md, "Host stalls, attributed").
 *
 * The processes tag each request of the window whose window met a host
 * stall's interval on its path (lib/stall.h) and report, per class, the
 * histogram of the untagged requests and the tagged and unattributed
 * counts; each spinning thread reports its window's stall time by class
 * and by the evidence that attributed it, and the host stalls' lengths.
 * Here they become run.json's "host_tags" object of a point and of each
 * trial:
 *
 *   sys_lat_ns    per class, the untagged requests: the system's tail
 *                 (a summary as lat_ns's; a trial's "all" as
 *                 result_trial_classes stores it)
 *   tagged, unattributed, worker   per class: requests a host stall
 *                 tagged, requests an unattributed stall touched (they
 *                 stay in sys_lat_ns: never counted the host's), and of
 *                 the tagged or unattributed those the worker's mark on
 *                 the reply tagged
 *   stall_ns      the window's stall time of every spinning thread on a
 *                 request's path: host, system, unattributed; kernel and
 *                 probe, the time each evidence vouched for (they may
 *                 overlap); complete false when a worker dropped events
 *   host_len_ns   the host stalls' lengths (the host's tail), or null
 *   tagged_frac, unattributed_frac   per class, of lat_ns's n
 *   set_by_host   p50, p99, p999: true when more than half the requests
 *                 at or above the raw percentile (its bin and those above)
 *                 are tagged
 *
 * Bins are kept, never percentiles, so trials merge (hosttags_over).
 */
#ifndef OQB_HOSTTAGS_H
#define OQB_HOSTTAGS_H

#include <stddef.h>
#include <jansson.h>

/*
 * The point's host_tags from the clients' results and the server's, and
 * the point's merged lat_ns (summaries).  NULL when no client reported
 * tags (a build from before them) or on a malformed histogram (err).
 */
json_t *hosttags_point(json_t *const *clients, size_t nclients, const json_t *server, const json_t *lat,
		       char *err, size_t errlen);

/* A trial's copy of a point's host_tags (sys_lat_ns stored once per
 * result_trial_classes; the derived fields left out); NULL if none. */
json_t *hosttags_trial(const json_t *ht);

/*
 * The trials' host_tags merged into point p (whose lat_ns is the trials'
 * merge): bins summed, counts and times added, the fractions and
 * set_by_host derived again.  Trials without host_tags leave p's out.
 * 0, or -1 with err.
 */
int hosttags_over(json_t *p, const json_t *entries, char *err, size_t errlen);

/* For tests: 1 when more than half of the requests of all at or above
 * its percentile q (that value's bin and the bins above) are not in sys
 * (tagged), else 0. */
struct hist;
int hosttags_set_by_host(const struct hist *all, const struct hist *sys, double q);

#endif
