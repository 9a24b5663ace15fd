/*
 * hostfacts.h - what this host offers a run (build, limits, CPUs, clocks,
 * hugepages, RDMA devices), as `oqb-server --host-facts` prints it for
 * `oqb doctor` (harness/doctor/).
 */
#ifndef OQB_HOSTFACTS_H
#define OQB_HOSTFACTS_H

#include <jansson.h>

/*
 * {build_id, hostname, limits: {nofile_soft, nofile_hard, memlock_soft,
 * memlock_hard (-1: unlimited), cap_ipc_lock}, cpus_online, cpu_nodes
 * (the NUMA node of each CPU, -1 unknown), smt, governor, turbo ("on",
 * "off", ""), clocksource, hugepages: {total, free, size_kb}, transports
 * (built in), rdma_devices (verbs builds: tp_verbs_devices_json)}.
 * New reference.
 */
json_t *hostfacts_json(void);

/* A binary's --build-id and --host-facts: prints the answer on stdout and
 * returns 1, or 0 when neither was asked for. */
int hostfacts_answer(int build_id, int host_facts);

#endif
