/*
 * merge.h - from per-process results to one measurement point.
 *
 * Latency percentiles of a point come from the client histograms merged
 * bin by bin (hist_merge), never from averaging per-client percentiles;
 * throughput and counters are sums.
 */
#ifndef OQB_MERGE_H
#define OQB_MERGE_H

#include <stddef.h>
#include <jansson.h>
#include "hist.h"
#include "runconf.h"

/* The clients' counters: copied per client, summed per point (merge.c)
 * and over a point's trials (trials.c). */
#define MERGE_NCOUNTERS 7
extern const char *const merge_counters[MERGE_NCOUNTERS];

#define MERGE_SATURATED 0.95   /* achieved below this fraction of offered */

/*
 * Reads a histogram out of a process's result (a hist_to_json object;
 * extra keys are ignored).  Returns 0, or -1 with err naming `what` and the field.
 */
int merge_hist_from(struct hist *h, const json_t *j, const char *what, char *err, size_t errlen);

/*
 * The server's service times (bench/server.h, "service_ns" of its DONE
 * result), each class ("all", "nilext", "non_nilext") summarised as a
 * latency class is (result_hist_summary: percentiles with their CIs and
 * the HdrHistogram encoding), in place.  A result without service_ns (a
 * build from before it, or service_sample 0) is left as it is.  Returns
 * 0, or -1 with err naming the class.
 */
int merge_service(json_t *server, char *err, size_t errlen);

/*
 * Builds the point object of run.json from the clients' DONE results
 * (each an "oqbench.client/1" object) and the server's (its service
 * times summarised by merge_service).  Returns a new object, or NULL
 * with err naming the client rank and the bad field.
 */
json_t *merge_point(const struct point *pt, json_t *const *clients, size_t nclients,
		    const json_t *server, char *err, size_t errlen);

#endif
