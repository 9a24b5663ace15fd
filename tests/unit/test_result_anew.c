/*
 * test_result_anew.c - result_store_anew (harness/result/result_anew.c):
 * a run.json of the previous writer stored as the current one stores it.
 *
 *   test_result_anew                     the cases below
 *   test_result_anew --anew IN OUTDIR    IN stored anew as OUTDIR/run.json
 *                                        (and OUTDIR/summary.csv), its size
 *                                        on stdout: how the writer is
 *                                        measured on a kept quiet run
 *                                        (docs/driver.md), and the /4 form
 *                                        of tests/data/run-v3-tiny.json that
 *                                        tests/integration/result-file.sh
 *                                        compares with it.
 */
#include "unit.h"
#include "result.h"

#include <sys/stat.h>

TEST(anew_refuses_older_versions)
{
	/* a /2 or /1 file keeps what it has: refused, naming its schema */
	json_t *r = json_pack("{s:s,s:[]}", "schema", RESULT_SCHEMA_V2, "points");
	char err[512] = "";
	REQUIRE(r);
	CHECK(result_store_anew(r, err, sizeof err) == -1 && strstr(err, RESULT_SCHEMA_V2) &&
	      strstr(err, RESULT_SCHEMA_V3), "%s", err);
	CHECK(!strcmp(json_string_value(json_object_get(r, "schema")), RESULT_SCHEMA_V2), "left as it was");
	json_decref(r);
}

TEST(anew_of_a_point_without_trials)
{
	/* a point without trials (a run.json from before them) stays as it
	 * is; the run's schema becomes the current one */
	json_t *r = json_pack("{s:s,s:[{s:s,s:{s:{s:i}}}]}", "schema", RESULT_SCHEMA_V3, "points", "system", "oq",
			      "lat_ns", "all", "n", 0);
	json_t *want = json_deep_copy(r);
	char err[512] = "";
	REQUIRE(r && want);
	CHECK(result_store_anew(r, err, sizeof err) == 0, "%s", err);
	CHECK(result_version(r) == 5);
	json_object_set_new(want, "schema", json_string(RESULT_SCHEMA));
	CHECK(json_equal(r, want), "nothing but the schema changed");
	json_decref(r);
	json_decref(want);
}

/* IN stored anew in OUTDIR; 0, 1 on failure. */
static int anew(const char *in, const char *dir)
{
	char err[1024], path[4096];
	struct stat st;
	json_t *r = result_load(in, err, sizeof err);

	if (!r || result_store_anew(r, err, sizeof err) < 0) {
		fprintf(stderr, "test_result_anew: %s%s%s\n", r ? in : "", r ? ": " : "", err);
		json_decref(r);
		return 1;
	}
	mkdir(dir, 0777);
	if (result_write(r, dir, 0, err, sizeof err) < 0) {
		fprintf(stderr, "test_result_anew: %s\n", err);
		json_decref(r);
		return 1;
	}
	json_decref(r);
	snprintf(path, sizeof path, "%s/run.json", dir);
	if (stat(path, &st) == 0)
		printf("%lld\n", (long long)st.st_size);
	return 0;
}

#define CASES anew_refuses_older_versions, anew_of_a_point_without_trials

int main(int argc, char **argv)
{
	static const struct unit_case cases[] = { UNIT_FOREACH_(UNIT_CASE_, CASES) };

	if (argc == 4 && !strcmp(argv[1], "--anew"))
		return anew(argv[2], argv[3]);
	return unit_run_(__FILE__, cases, sizeof cases / sizeof cases[0], argc, argv);
}
