/*
 * fuzz_runconf.c - the experiment config as `oqb run` loads it
 * (harness/run/runconf.c over lib/conf.c).
 *
 * Input: the bytes of a config file, given to runconf_load through a memfd
 * path (the API takes paths: the workload's files are found relative to
 * the config).  A config that passes is planned (runconf_plan) and every
 * point's variant is looked up.  Properties: a failure has a message; a
 * loaded config has 1..RUNCONF_MAX_SYSTEMS systems, at least one load, and
 * a plan of exactly systems x sweep values x loads points.
 */
#include <string.h>
#include <unistd.h>

#include "runconf.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct point pts[RUNCONF_MAX_POINTS];
	char path[64], err[8192];
	struct runconf rc;
	int fd = fuzz_memfd(data, size, path, sizeof path);

	if (fd < 0)
		return 0;
	err[0] = '\0';
	if (runconf_load(path, &rc, err, sizeof err) != 0) {
		fuzz_check_msg(err, sizeof err);
		close(fd);
		return 0;
	}
	FUZZ_ASSERT(rc.nsystems >= 1 && rc.nsystems <= RUNCONF_MAX_SYSTEMS, "%zu systems", rc.nsystems);
	FUZZ_ASSERT(rc.nloads >= 1 && rc.nloads <= RUNCONF_MAX_LOADS, "%zu loads", rc.nloads);
	size_t want = rc.nsystems * (rc.nsweep ? rc.nsweep : 1) * rc.nloads;
	size_t n = runconf_plan(&rc, pts, RUNCONF_MAX_POINTS);
	FUZZ_ASSERT(n == want && n <= RUNCONF_MAX_POINTS, "plan has %zu points, expected %zu", n, want);
	for (size_t i = 0; i < n; i++) {
		const struct runconf *v = runconf_for(&rc, &pts[i]);
		FUZZ_ASSERT(v != NULL && v->root != NULL, "point %zu has no config", i);
		(void)runconf_needs_pmem(v, pts[i].system);
	}
	for (unsigned r = 0; r < 4; r++)
		FUZZ_ASSERT(runconf_client_host(&rc, r) != NULL, "client host %u", r);
	runconf_free(&rc);
	close(fd);
	return 0;
}
