/*
 * doctor.h - `oqb doctor CONFIG`: the preflight of a config's hosts
 * (docs/doctor.md).  For every host of the config, through that host's
 * own launcher: reachable, binaries present and of the driver's build,
 * limits against what the config opens there, the RDMA device, port, GID,
 * MTU and NUMA node for verbs, hugepages for erpc, and the CPU and clock
 * settings that move numbers.  One table, one line per host and check.
 */
#ifndef OQB_DOCTOR_H
#define OQB_DOCTOR_H

#include <stddef.h>

struct doctor_opts {
	const char *config;
	const char *const *sets;   /* --set KEY=JSON, in order */
	size_t nsets;
	int json;                  /* the table as JSON on stdout */
	double timeout_s;          /* a host that has not answered by then fails */
};

/* Exit status: 0 the config can run (warnings allowed), 1 a check failed,
 * 2 bad usage or config (the message is on stderr). */
int doctor_run(const struct doctor_opts *o);

#endif
