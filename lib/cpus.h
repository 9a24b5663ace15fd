/*
 * cpus.h - thread placement: which CPU each spinning thread runs on.
 *
 * Server workers and client threads busy-poll.  Two of them on one CPU, or
 * the kernel moving one between CPUs mid-run, turns a microsecond latency
 * into a scheduler time slice, and nothing in the result would say so.  So
 * every spinning thread is pinned, and the CPUs are recorded.
 *
 * A placement spec is
 *   "auto"   distinct CPUs for the process's spinning threads, taken in
 *            order from the CPUs it may run on (sched_getaffinity), starting
 *            at an offset the driver gives each process on a host so that
 *            processes on one host do not overlap; servers count from the
 *            first CPU and clients from the last (from_end), so a server
 *            and a client started by hand on one host with the defaults
 *            (offset 0) do not share a CPU either; restricted to the NUMA
 *            node of the RDMA device when one is named and sysfs knows it.
 *            More threads than CPUs: the list wraps and `shared` is set.
 *   "none"   no pinning (the kernel places threads); recorded as such.
 *   "0-3,8"  an explicit list: thread i gets the i-th CPU, wrapping
 *            (`shared` when it wraps).
 */
#ifndef OQB_CPUS_H
#define OQB_CPUS_H

#include <stddef.h>
#include <jansson.h>

#define CPUS_MAX 1024

struct cpu_plan {
	int n;                /* threads placed; 0 for "none" */
	int cpu[CPUS_MAX];    /* thread i runs on cpu[i] */
	int shared;           /* some CPU has more than one of these threads, or
				 the host has fewer CPUs than the driver asked for */
	int available;        /* CPUs this process may run on */
	char source[64];      /* "affinity", "numa node N of DEV", "list", "none" */
};

/* Parses "0-3,8,10-11" into out (ascending order as written).  Returns the
 * count, or -1 with err naming the bad part. */
int cpus_parse(const char *s, int *out, int cap, char *err, size_t errlen);

/* The CPUs this process may run on, ascending; the count (>= 1). */
int cpus_allowed(int *out, int cap);

/*
 * Plans nthreads threads by spec, starting at offset `first` of the
 * candidate list (auto; counted from its end when from_end, with the first
 * `reserved` candidates taken by another process, the server's workers), with `rdma_dev` (may be NULL) restricting auto to
 * its NUMA node.  0, or -1 with err (a malformed spec, or a list naming a
 * CPU this process may not use).
 */
int cpus_plan(const char *spec, unsigned first, unsigned nthreads, const char *rdma_dev, int from_end,
	      unsigned reserved, struct cpu_plan *p, char *err, size_t errlen);

/* Pins the calling thread to cpu; 0 or -1 with err. */
int cpus_pin_self(int cpu, char *err, size_t errlen);

/* Lets the calling thread run on those of the CPUs it may run on now that
 * are on cpu's NUMA node (sysfs); where sysfs names no node, it keeps the
 * CPUs it has.  For work that should be placed on a node but not on one
 * CPU: a server worker opens its backend so, because memory is first
 * touched on the node and the threads and processes a store starts then
 * (RocksDB's background threads, memcached) inherit the set, not the
 * worker's one CPU.  0, or -1 with err. */
int cpus_pin_self_node(int cpu, char *err, size_t errlen);

/* {"spec":..,"cpus":[..] or null,"shared":bool,"available":N,"source":..}
 * for results: where the threads ran. */
json_t *cpus_plan_json(const struct cpu_plan *p, const char *spec);

/* "0,1,5" into buf. */
void cpus_format(const int *cpus, int n, char *buf, size_t len);

#endif
