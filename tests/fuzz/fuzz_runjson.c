/*
 * fuzz_runjson.c - the run.json reader (harness/result/result.c: result_load)
 * and what its two readers take from it: `oqb compare` (points matched by
 * system and load, histogram bins merged for the median's CI) and
 * `oqb plot` (the latency-throughput data file).
 *
 * Input: the bytes of a run.json, through a memfd path.  A file that
 * loads is compared with itself (compare_main) and plotted (plot_main).
 * The plot runs with OQB_PLOT_DIR at an empty script and its data file a
 * link to /dev/full: every point is read and written out, then the write
 * fails at fclose, so gnuplot is never started (no fork per input).
 * Output of both commands is silenced (fuzz_quiet).  Properties: a
 * failure has a message; compare of a loadable file exits 0, 1 or 3,
 * never 2 (an input error would contradict result_load); plot exits 1
 * here.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exitcodes.h"
#include "compare.h"
#include "plotcmd.h"
#include "result.h"
#include "runjson.h"
#include "fuzz.h"

static char tmpdir[PATH_MAX], outdir[PATH_MAX + 8], plotdir[PATH_MAX + 8];
static char script[PATH_MAX + 64], datalink[PATH_MAX + 64];

static void cleanup(void)
{
	unlink(datalink);
	unlink(script);
	rmdir(outdir);
	rmdir(plotdir);
	rmdir(tmpdir);
}

/* A private directory with plot/latency-throughput.gp and out/ -> /dev/full. */
static int setup(void)
{
	static int done;
	const char *t = getenv("TMPDIR");
	FILE *f;

	if (done)
		return done > 0 ? 0 : -1;
	done = -1;
	snprintf(tmpdir, sizeof tmpdir, "%s/oqb-fuzz-runjson.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(outdir, sizeof outdir, "%s/out", tmpdir);
	snprintf(plotdir, sizeof plotdir, "%s/plot", tmpdir);
	snprintf(script, sizeof script, "%s/latency-throughput.gp", plotdir);
	snprintf(datalink, sizeof datalink, "%s/latency-throughput.dat", outdir);
	atexit(cleanup);
	if (mkdir(outdir, 0700) != 0 || mkdir(plotdir, 0700) != 0 ||
	    symlink("/dev/full", datalink) != 0 || !(f = fopen(script, "w")))
		return -1;
	fclose(f);
	setenv("OQB_PLOT_DIR", plotdir, 1);
	done = 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[4096];
	json_t *run;
	int fd = fuzz_memfd(data, size, path, sizeof path), rc;

	if (fd < 0)
		return 0;
	err[0] = '\0';
	run = result_load(path, err, sizeof err);
	if (!run) {
		fuzz_check_msg(err, sizeof err);
		close(fd);
		return 0;
	}
	FUZZ_ASSERT(json_is_array(json_object_get(run, "points")), "no points array");
	json_decref(run);

	char *cmp[] = { "compare", path, path, NULL };
	char *cmpj[] = { "compare", path, path, "--json", NULL };
	fuzz_quiet(1);
	rc = compare_main(3, cmp);
	fuzz_quiet(0);
	FUZZ_ASSERT(rc >= 0 && rc != 2 && rc <= 3, "compare exited %d on a file result_load accepts", rc);
	fuzz_quiet(1);
	rc = compare_main(4, cmpj);
	fuzz_quiet(0);
	FUZZ_ASSERT(rc >= 0 && rc != 2 && rc <= 3, "compare --json exited %d", rc);
	if (setup() == 0) {
		char *plot[] = { "plot", path, "--out", outdir, NULL };

		fuzz_quiet(1);
		rc = plot_main(4, plot);
		fuzz_quiet(0);
		FUZZ_ASSERT(rc == OQB_EXIT_ERROR, "plot exited %d writing to /dev/full", rc);
	}
	close(fd);
	return 0;
}
