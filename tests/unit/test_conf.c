/*
 * test_conf.c - config loading, schema checking and the messages it gives.
 *
 * The messages are the product here: each error class is checked for the
 * file name, the dotted path and the suggested fix, several verbatim.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <math.h>

#include "conf.h"
#include "unit.h"

/* Writes text to a fresh temporary file; returns its path in buf, or "" on failure. */
static const char *write_tmp(const char *text, char *buf, size_t len)
{
	const char *dir = getenv("TMPDIR");
	FILE *f;
	int fd;

	snprintf(buf, len, "%s/oqb_conf_XXXXXX", dir && *dir ? dir : P_tmpdir);
	fd = mkstemp(buf);
	if (fd < 0) {
		buf[0] = '\0';
		return buf;
	}
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return buf;
}

static const char *const transports[] = { "shm", "verbs", NULL };
static const char *const systems[] = { "oq", "rpc", "herd", NULL };

static const struct conf_key server_schema[] = {
	{ "workers", CONF_INT, 1, 1, 64, NULL, NULL, "server worker threads" },
	{ "ring_bytes", CONF_INT, 0, 4096, INFINITY, NULL, NULL, "receive ring size" },
	{ "durable", CONF_BOOL, 0, 0, 0, NULL, NULL, "persist requests" },
	{ "backend", CONF_OBJ, 0, 0, 0, NULL, NULL, "backend-specific settings" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

static const struct conf_key arrival_schema[] = {
	{ "loads_ops", CONF_ARR_NUM, 1, 0, 1e9, NULL, NULL, "offered loads" },
	{ "dist", CONF_STR, 0, 0, 0, (const char *const[]){ "poisson", "uniform", NULL },
	  NULL, "inter-arrival distribution" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

static const struct conf_key workload_schema[] = {
	{ "kind", CONF_STR, 1, 0, 0, NULL, NULL, NULL },
	{ "put_ratio", CONF_NUM, 0, 0, 1, NULL, NULL, "share of puts" },
	{ "value_bytes", CONF_NUM_OR_ARR, 0, 1, 1048576, NULL, NULL, "value sizes" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

static const struct conf_key top_schema[] = {
	{ "transport", CONF_STR, 0, 0, 0, transports, NULL, "how requests travel" },
	{ "systems", CONF_ARR_STR, 0, 0, 0, systems, NULL, "systems to compare" },
	{ "server", CONF_OBJ, 1, 0, 0, NULL, server_schema, "server settings" },
	{ "arrival", CONF_OBJ, 0, 0, 0, NULL, arrival_schema, "arrival process" },
	{ "workload", CONF_OBJ, 0, 0, 0, NULL, workload_schema, "request mix" },
	{ "notes", CONF_ANY, 0, 0, 0, NULL, NULL, "free-form" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

static const char *good_json =
	"{\n"
	"  \"transport\": \"shm\",\n"
	"  \"systems\": [\"oq\", \"rpc\"],\n"
	"  \"server\": {\"workers\": 4, \"ring_bytes\": 65536, \"durable\": false,\n"
	"             \"backend\": {\"kind\": \"cache\", \"anything\": [1, \"x\"]}},\n"
	"  \"arrival\": {\"loads_ops\": [1000, 2e5, 3.5], \"dist\": \"poisson\"},\n"
	"  \"workload\": {\"kind\": \"ycsb-a\", \"put_ratio\": 0.5, \"value_bytes\": [64, 1024]},\n"
	"  \"notes\": {\"who\": [null, true]}\n"
	"}\n";

/* Parses text as a config (no file) and checks it; returns conf_check's result. */
static int check_text(const char *text, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *j = json_loads(text, 0, &jerr);
	int rc;

	if (j == NULL) {
		snprintf(err, errlen, "test bug: bad JSON: %s", jerr.text);
		return -2;
	}
	rc = conf_check(j, top_schema, "x.json", err, errlen);
	json_decref(j);
	return rc;
}

TEST(load_missing_file)
{
	char err[512];
	json_t *j = (json_t *)1;

	REQUIRE(conf_load_file("no/such/dir/oqb.json", &j, err, sizeof err) == -1);
	CHECK(j == NULL);
	CHECK(strcmp(err, "no/such/dir/oqb.json: cannot open: No such file or directory") == 0,
	      "got: %s", err);
}

TEST(load_syntax_error_has_line_and_column)
{
	char path[256], err[512], want[300];
	json_t *j = NULL;

	write_tmp("{\n  \"a\": 1,\n  \"b\": tru\n}\n", path, sizeof path);
	REQUIRE(*path);
	CHECK(conf_load_file(path, &j, err, sizeof err) == -1);
	CHECK(j == NULL);
	snprintf(want, sizeof want, "%s:3:", path);
	CHECK(strncmp(err, want, strlen(want)) == 0, "got: %s", err);
	CHECK(strstr(err, "invalid token") != NULL, "got: %s", err);
	unlink(path);
}

TEST(load_hints_for_common_mistakes)
{
	char path[256], err[512];
	json_t *j = NULL;

	write_tmp("{\"a\": 1,}\n", path, sizeof path);
	CHECK(conf_load_file(path, &j, err, sizeof err) == -1);
	CHECK(strstr(err, "trailing comma") != NULL, "got: %s", err);
	unlink(path);

	write_tmp("{\"a\": 1 // why\n}\n", path, sizeof path);
	CHECK(conf_load_file(path, &j, err, sizeof err) == -1);
	CHECK(strstr(err, "no comments") != NULL, "got: %s", err);
	unlink(path);

	write_tmp("{\"a\": 1, \"a\": 2}\n", path, sizeof path);
	CHECK(conf_load_file(path, &j, err, sizeof err) == -1);
	CHECK(strstr(err, "duplicate") != NULL, "got: %s", err);
	unlink(path);

	write_tmp("", path, sizeof path);
	CHECK(conf_load_file(path, &j, err, sizeof err) == -1);
	CHECK(strstr(err, "empty") != NULL, "got: %s", err);
	unlink(path);
}

TEST(load_top_level_must_be_object)
{
	char path[256], err[512];
	json_t *j = NULL;

	write_tmp("[1, 2, 3]\n", path, sizeof path);
	CHECK(conf_load_file(path, &j, err, sizeof err) == -1);
	CHECK(strstr(err, path) == err, "got: %s", err);
	CHECK(strstr(err, "must be a JSON object") != NULL, "got: %s", err);
	CHECK(strstr(err, "an array") != NULL, "got: %s", err);
	unlink(path);

	write_tmp("42\n", path, sizeof path);
	CHECK(conf_load_file(path, &j, err, sizeof err) == -1);
	CHECK(strstr(err, "must be a JSON object") != NULL, "got: %s", err);
	unlink(path);
}

TEST(load_and_check_good_file)
{
	char path[256], err[512] = "";
	json_t *j = NULL;

	write_tmp(good_json, path, sizeof path);
	REQUIRE(*path);
	CHECK(conf_load_checked(path, top_schema, &j, err, sizeof err) == 0, "err: %s", err);
	REQUIRE(j != NULL);
	CHECK(conf_int(j, "server.workers", 0) == 4);
	json_decref(j);
	unlink(path);
}

TEST(unknown_key_suggests_nearest)
{
	char err[512];

	CHECK(check_text("{\"server\": {\"wokers\": 4}}", err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: server.wokers: unknown key; did you mean \"workers\"?") == 0,
	      "got: %s", err);

	CHECK(check_text("{\"server\": {\"workers\": 1}, \"workload\": {\"kind\": \"a\", "
			 "\"put_ratoi\": 0.5}}", err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: workload.put_ratoi: unknown key; did you mean "
		     "\"put_ratio\"?") == 0, "got: %s", err);
}

TEST(unknown_key_without_near_match_lists_keys)
{
	char err[512];

	CHECK(check_text("{\"server\": {\"workers\": 1, \"xyz\": 1}}", err, sizeof err) == -1);
	CHECK(strstr(err, "x.json: server.xyz: unknown key; valid keys are: ") == err,
	      "got: %s", err);
	CHECK(strstr(err, "did you mean") == NULL, "got: %s", err);
	CHECK(strstr(err, "workers, ring_bytes, durable, backend") != NULL, "got: %s", err);
}

TEST(wrong_type_in_array_names_index)
{
	char err[512];

	CHECK(check_text("{\"server\": {\"workers\": 1}, \"arrival\": {\"loads_ops\": "
			 "[1, 2, \"fast\"]}}", err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: arrival.loads_ops[2]: expected a number, got string "
		     "\"fast\"") == 0, "got: %s", err);

	CHECK(check_text("{\"server\": {\"workers\": 1}, \"systems\": [\"oq\", \"oqq\"]}",
			 err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: systems[1]: \"oqq\" is not one of: oq, rpc, herd; "
		     "did you mean \"oq\"?") == 0, "got: %s", err);

	CHECK(check_text("{\"server\": {\"workers\": 1}, \"arrival\": {\"loads_ops\": "
			 "[1, -5]}}", err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: arrival.loads_ops[1]: -5 is out of range; expected 0 to "
		     "1000000000") == 0, "got: %s", err);
}

TEST(wrong_type_messages)
{
	char err[512];

	CHECK(check_text("{\"server\": {\"workers\": \"4\"}}", err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: server.workers: expected an integer, got string \"4\"") == 0,
	      "got: %s", err);
	CHECK(check_text("{\"server\": {\"workers\": 1, \"durable\": 1}}", err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: server.durable: expected true or false, got number 1") == 0,
	      "got: %s", err);
	CHECK(check_text("{\"server\": [1]}", err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: server: expected an object {...}, got an array") == 0,
	      "got: %s", err);
	/* null is a wrong type, not "absent" */
	CHECK(check_text("{\"server\": {\"workers\": null}}", err, sizeof err) == -1);
	CHECK(strstr(err, "server.workers: expected an integer, got null") != NULL,
	      "got: %s", err);
	CHECK(check_text("{\"server\": {\"workers\": 1}, \"systems\": \"oq\"}",
			 err, sizeof err) == -1);
	CHECK(strstr(err, "systems: expected an array of strings, got string \"oq\"") != NULL,
	      "got: %s", err);
}

TEST(out_of_range)
{
	char err[512];

	CHECK(check_text("{\"server\": {\"workers\": 0}}", err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: server.workers: 0 is out of range; expected 1 to 64") == 0,
	      "got: %s", err);
	CHECK(check_text("{\"server\": {\"workers\": 65}}", err, sizeof err) == -1);
	CHECK(strstr(err, "65 is out of range") != NULL, "got: %s", err);
	CHECK(check_text("{\"server\": {\"workers\": 64, \"ring_bytes\": 100}}",
			 err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: server.ring_bytes: 100 is out of range; expected at "
		     "least 4096") == 0, "got: %s", err);
	CHECK(check_text("{\"server\": {\"workers\": 1}, \"workload\": {\"kind\": \"a\", "
			 "\"put_ratio\": 1.25}}", err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: workload.put_ratio: 1.25 is out of range; expected 0 to 1")
	      == 0, "got: %s", err);
}

TEST(bad_enum)
{
	char err[512];

	CHECK(check_text("{\"transport\": \"shmm\", \"server\": {\"workers\": 1}}",
			 err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: transport: \"shmm\" is not one of: shm, verbs; did you "
		     "mean \"shm\"?") == 0, "got: %s", err);
	CHECK(check_text("{\"transport\": \"tcp\", \"server\": {\"workers\": 1}}",
			 err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: transport: \"tcp\" is not one of: shm, verbs") == 0,
	      "got: %s", err);
}

TEST(missing_required)
{
	char err[512];

	CHECK(check_text("{\"server\": {\"workers\": 1}, \"workload\": {}}",
			 err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: workload.kind: missing (required)") == 0, "got: %s", err);
	CHECK(check_text("{}", err, sizeof err) == -1);
	CHECK(strstr(err, "x.json: server: missing (required)") == err, "got: %s", err);
	CHECK(strstr(err, "server settings") != NULL, "help is shown: %s", err);
}

TEST(int_rejects_reals)
{
	char err[512];

	CHECK(check_text("{\"server\": {\"workers\": 1.5}}", err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: server.workers: expected an integer, got number 1.5") == 0,
	      "got: %s", err);
	CHECK(check_text("{\"server\": {\"workers\": 2.0}}", err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: server.workers: expected an integer, got 2.0; write it "
		     "as 2") == 0, "got: %s", err);
	/* CONF_NUM takes both */
	CHECK(check_text("{\"server\": {\"workers\": 2}, \"workload\": {\"kind\": \"a\", "
			 "\"put_ratio\": 1}}", err, sizeof err) == 0, "got: %s", err);
}

TEST(num_or_arr)
{
	char err[512];
	const char *pre = "{\"server\": {\"workers\": 2}, \"workload\": {\"kind\": \"a\", "
			  "\"value_bytes\": ";
	char buf[512];

	snprintf(buf, sizeof buf, "%s64}}", pre);
	CHECK(check_text(buf, err, sizeof err) == 0, "got: %s", err);
	snprintf(buf, sizeof buf, "%s[64, 128.5, 4096]}}", pre);
	CHECK(check_text(buf, err, sizeof err) == 0, "got: %s", err);
	snprintf(buf, sizeof buf, "%s\"big\"}}", pre);
	CHECK(check_text(buf, err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: workload.value_bytes: expected a number or an array of "
		     "numbers, got string \"big\"") == 0, "got: %s", err);
	snprintf(buf, sizeof buf, "%s[]}}", pre);
	CHECK(check_text(buf, err, sizeof err) == -1);
	CHECK(strstr(err, "workload.value_bytes: expected a number or a non-empty array") != NULL,
	      "got: %s", err);
	snprintf(buf, sizeof buf, "%s[64, true]}}", pre);
	CHECK(check_text(buf, err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: workload.value_bytes[1]: expected a number, got boolean "
		     "true") == 0, "got: %s", err);
	snprintf(buf, sizeof buf, "%s0}}", pre);
	CHECK(check_text(buf, err, sizeof err) == -1);
	CHECK(strstr(err, "workload.value_bytes: 0 is out of range; expected 1 to 1048576")
	      != NULL, "got: %s", err);
}

TEST(obj_without_sub_accepts_any_object)
{
	char err[512];

	CHECK(check_text("{\"server\": {\"workers\": 2, \"backend\": {\"x\": {\"y\": [1]}}}}",
			 err, sizeof err) == 0, "got: %s", err);
	CHECK(check_text("{\"server\": {\"workers\": 2, \"backend\": \"cache\"}}",
			 err, sizeof err) == -1);
	CHECK(strcmp(err, "x.json: server.backend: expected an object {...}, got string "
		     "\"cache\"") == 0, "got: %s", err);
}

TEST(valid_config_passes)
{
	char err[512] = "";

	CHECK(check_text(good_json, err, sizeof err) == 0, "got: %s", err);
	CHECK(check_text("{\"server\": {\"workers\": 1}}", err, sizeof err) == 0, "got: %s", err);
}

TEST(where_with_parent_path)
{
	char err[512];
	json_t *j = json_loads("{\"wokers\": 3}", 0, NULL);

	REQUIRE(j != NULL);
	CHECK(conf_check(j, server_schema, "configs/a.json: server", err, sizeof err) == -1);
	CHECK(strcmp(err, "configs/a.json: server.wokers: unknown key; did you mean "
		     "\"workers\"?") == 0, "got: %s", err);
	CHECK(conf_check(j, server_schema, NULL, err, sizeof err) == -1);
	CHECK(strcmp(err, "wokers: unknown key; did you mean \"workers\"?") == 0, "got: %s", err);
	json_decref(j);

	j = json_loads("[1]", 0, NULL);
	REQUIRE(j != NULL);
	CHECK(conf_check(j, server_schema, "a.json", err, sizeof err) == -1);
	CHECK(strcmp(err, "a.json: expected an object {...}, got an array") == 0, "got: %s", err);
	json_decref(j);
	CHECK(conf_check(NULL, server_schema, "a.json", err, sizeof err) == -1);
}

TEST(nearest)
{
	static const char *const keys[] = { "workers", "ring_bytes", "put_ratio", "durable",
					    "transport", NULL };

	CHECK(conf_nearest("wokers", keys, 5) != NULL &&
	      strcmp(conf_nearest("wokers", keys, 5), "workers") == 0);
	CHECK(conf_nearest("put_ratoi", keys, 5) != NULL &&
	      strcmp(conf_nearest("put_ratoi", keys, 5), "put_ratio") == 0);
	CHECK(conf_nearest("WORKERS", keys, 5) != NULL &&
	      strcmp(conf_nearest("WORKERS", keys, 5), "workers") == 0);
	CHECK(conf_nearest("xyz", keys, 5) == NULL);
	CHECK(conf_nearest("", keys, 5) == NULL);
	CHECK(conf_nearest("a", keys, 5) == NULL);
	CHECK(conf_nearest("trnasprot", keys, SIZE_MAX) != NULL &&
	      strcmp(conf_nearest("trnasprot", keys, SIZE_MAX), "transport") == 0);
	/* unambiguous prefix */
	CHECK(conf_nearest("dur", keys, SIZE_MAX) != NULL &&
	      strcmp(conf_nearest("dur", keys, SIZE_MAX), "durable") == 0);
	/* n limits the candidates */
	CHECK(conf_nearest("durabel", keys, 2) == NULL);
	CHECK(conf_nearest("wokers", NULL, 0) == NULL);
}

TEST(getters_and_paths)
{
	json_t *j = json_loads(good_json, 0, NULL);
	double v[4];

	REQUIRE(j != NULL);
	CHECK(conf_int(j, "server.workers", 9) == 4);
	CHECK(conf_int(j, "server.nope", 9) == 9);
	CHECK(conf_int(j, "transport", 9) == 9, "wrong type gives the default");
	CHECK(strcmp(conf_str(j, "transport", "x"), "shm") == 0);
	CHECK(strcmp(conf_str(j, "nope", "x"), "x") == 0);
	CHECK(conf_bool(j, "server.durable", 1) == 0);
	CHECK(conf_bool(j, "server.missing", 1) == 1);
	CHECK_NEAR(conf_num(j, "workload.put_ratio", 0), 0.5, 0);
	CHECK_NEAR(conf_num(j, "server.workers", 0), 4, 0);
	CHECK_NEAR(conf_num(j, "arrival.loads_ops[1]", 0), 2e5, 0);
	CHECK(conf_int(j, "arrival.loads_ops[2]", 0) == 3, "reals truncate");

	CHECK(conf_path(j, "server.backend.kind") != NULL);
	CHECK(strcmp(json_string_value(conf_path(j, "server.backend.kind")), "cache") == 0);
	CHECK(json_integer_value(conf_path(j, "server.backend.anything[0]")) == 1);
	CHECK(conf_path(j, "server.backend.anything[2]") == NULL);
	CHECK(conf_path(j, "server..workers") == NULL);
	CHECK(conf_path(j, "server.workers.x") == NULL);
	CHECK(conf_path(j, "server[0]") == NULL);
	CHECK(conf_path(j, "arrival.loads_ops[x]") == NULL);
	CHECK(conf_path(j, "") == j);
	CHECK(conf_path(NULL, "a") == NULL);

	CHECK(conf_nums(j, "arrival.loads_ops", v, 4) == 3);
	CHECK_NEAR(v[0], 1000, 0);
	CHECK_NEAR(v[2], 3.5, 0);
	CHECK(conf_nums(j, "arrival.loads_ops", v, 1) == 3, "count even past cap");
	CHECK(conf_nums(j, "server.workers", v, 4) == 1);
	CHECK_NEAR(v[0], 4, 0);
	CHECK(conf_nums(j, "transport", v, 4) == 0);
	CHECK(conf_nums(j, "missing", v, 4) == 0);
	json_decref(j);

	/* a key that itself contains a dot is found before the path reading */
	j = json_loads("{\"a.b\": 7, \"a\": {\"b\": 8}}", 0, NULL);
	REQUIRE(j != NULL);
	CHECK(conf_int(j, "a.b", 0) == 7);
	json_decref(j);
}

TEST(print_schema_lists_nested_keys)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	REQUIRE(f != NULL);
	conf_print_schema(f, top_schema);
	fclose(f);
	CHECK(strstr(buf, "server.workers (integer, required): server worker threads; 1 to 64")
	      != NULL, "got: %s", buf);
	CHECK(strstr(buf, "transport (string): how requests travel; one of: shm, verbs") != NULL,
	      "got: %s", buf);
	CHECK(strstr(buf, "arrival.dist (string)") != NULL, "got: %s", buf);
	free(buf);
}

UNIT_MAIN(load_missing_file, load_syntax_error_has_line_and_column,
	  load_hints_for_common_mistakes, load_top_level_must_be_object,
	  load_and_check_good_file, unknown_key_suggests_nearest,
	  unknown_key_without_near_match_lists_keys, wrong_type_in_array_names_index,
	  wrong_type_messages, out_of_range, bad_enum, missing_required, int_rejects_reals,
	  num_or_arr, obj_without_sub_accepts_any_object, valid_config_passes,
	  where_with_parent_path, nearest, getters_and_paths, print_schema_lists_nested_keys)
