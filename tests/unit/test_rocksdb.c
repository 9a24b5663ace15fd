/*
 * test_rocksdb.c - the rocksdb back end through its backend_ops, on
 * Debian's librocksdb: set/get/del statuses as the other back ends give
 * them, incr through the merge operator (and after a reopen, when RocksDB
 * has replayed its log and merged operands itself), the options it
 * refuses by name, what its stats record, and that a private directory is
 * removed at close while the user's is kept.  Skipped in a build without
 * RocksDB (not ok under CI=true, where make deps installs it).
 */
#include <dirent.h>
#include <ftw.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "backend.h"
#include "rundir.h"

#if OQB_HAVE_ROCKSDB
static char tmp[256];

static void make_tmp(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(tmp, sizeof tmp, "%s/test_rocksdb-XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmp))
		tmp[0] = '\0';
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	return flag == FTW_DP ? rmdir(p) : unlink(p);
}

static struct backend_conf conf(const char *path)
{
	struct backend_conf c = { .kind = "rocksdb", .set.rdb_wal = 1, .set.write_buffer_mb = 4,
				  .set.max_write_buffers = 2, .set.rdb_path = path, .run_dir = tmp, .workers = 1 };
	return c;
}

static unsigned run(struct backend *b, unsigned op, const char *k, const char *v, uint64_t aux, int async,
		    char *out, uint32_t *out_len)
{
	static uint8_t buf[64];
	struct backend_req r = { .op = op, .key = (const uint8_t *)k, .key_len = (uint32_t)strlen(k),
				 .val = (const uint8_t *)v, .val_len = v ? (uint32_t)strlen(v) : 0, .aux = aux,
				 .async = async };
	struct backend_out o = { .val = buf, .val_cap = sizeof buf - 1 };
	rocksdb_backend_ops.exec(b, &r, &o);
	if (out) {
		memcpy(out, buf, o.val_len < sizeof buf ? o.val_len : 0);
		out[o.val_len < sizeof buf ? o.val_len : 0] = '\0';
	}
	if (out_len)
		*out_len = o.val_len;
	return o.status;
}
#define SKIP_IF_NO_TMP() do { if (!tmp[0] && (make_tmp(), !tmp[0])) SKIP("cannot make a directory"); } while (0)
#endif

TEST(set_get_del_statuses)
{
#if OQB_HAVE_ROCKSDB
	SKIP_IF_NO_TMP();
	char err[512], v[64];
	struct backend_conf c = conf(NULL);
	struct backend *b = rocksdb_backend_ops.open(&c, err, sizeof err);
	REQUIRE(b, "open: %s", err);
	CHECK(run(b, KV_OP_GET, "k1", NULL, 0, 0, v, NULL) == KV_NOT_FOUND);
	CHECK(run(b, KV_OP_SET, "k1", "hello", 0, 0, NULL, NULL) == KV_OK);
	CHECK(run(b, KV_OP_GET, "k1", NULL, 0, 0, v, NULL) == KV_OK && strcmp(v, "hello") == 0, "got %s", v);
	CHECK(run(b, KV_OP_SET, "k1", "", 0, 1, NULL, NULL) == KV_OK, "an empty value, async");
	uint32_t len = 99;
	CHECK(run(b, KV_OP_GET, "k1", NULL, 0, 0, v, &len) == KV_OK && len == 0);
	CHECK(run(b, KV_OP_DEL, "k1", NULL, 0, 0, NULL, NULL) == KV_OK);
	CHECK(run(b, KV_OP_DEL, "k1", NULL, 0, 0, NULL, NULL) == KV_NOT_FOUND, "a waited-for delete of a missing key");
	CHECK(run(b, KV_OP_DEL, "k1", NULL, 0, 1, NULL, NULL) == KV_OK, "an async delete does not look first");
	CHECK(run(b, KV_OP_ECHO, "e", "abc", 0, 0, v, NULL) == KV_OK && strcmp(v, "abc") == 0);
	CHECK(run(b, 77, "k", NULL, 0, 0, NULL, NULL) == KV_ERR_OP, "an unknown op");
	rocksdb_backend_ops.close(b);
#else
	SKIP("this build has no RocksDB (make deps installs librocksdb-dev)");
#endif
}

TEST(incr_is_a_merge_with_decimal_values)
{
#if OQB_HAVE_ROCKSDB
	SKIP_IF_NO_TMP();
	char err[512], v[64], dir[300];
	snprintf(dir, sizeof dir, "%s/user", tmp);
	struct backend_conf c = conf(dir);
	struct backend *b = rocksdb_backend_ops.open(&c, err, sizeof err);
	REQUIRE(b, "open: %s", err);
	CHECK(run(b, KV_OP_INCR, "n", NULL, 1, 0, v, NULL) == KV_NOT_FOUND, "incr of a missing key");
	CHECK(run(b, KV_OP_SET, "s", "abc", 0, 0, NULL, NULL) == KV_OK);
	CHECK(run(b, KV_OP_INCR, "s", NULL, 1, 0, v, NULL) == KV_ERR_OP, "incr of a value that is not a number");
	CHECK(run(b, KV_OP_SET, "n", "5", 0, 0, NULL, NULL) == KV_OK);
	CHECK(run(b, KV_OP_INCR, "n", NULL, 2, 0, v, NULL) == KV_OK && strcmp(v, "7") == 0, "5 + 2 = %s", v);
	CHECK(run(b, KV_OP_GET, "n", NULL, 0, 0, v, NULL) == KV_OK && strcmp(v, "7") == 0, "get after incr: %s", v);
	CHECK(run(b, KV_OP_INCR, "n", NULL, UINT64_MAX, 0, v, NULL) == KV_OK && strcmp(v, "6") == 0, "decr: %s", v);
	CHECK(run(b, KV_OP_SET, "z", "0", 0, 0, NULL, NULL) == KV_OK);
	CHECK(run(b, KV_OP_INCR, "z", NULL, UINT64_MAX, 0, v, NULL) == KV_OK && strcmp(v, "18446744073709551615") == 0,
	      "wraps: %s", v);
	for (int i = 0; i < 1000; i++)
		run(b, KV_OP_INCR, "n", NULL, 3, 0, NULL, NULL);
	CHECK(run(b, KV_OP_GET, "n", NULL, 0, 0, v, NULL) == KV_OK && strcmp(v, "3006") == 0, "1000 x 3 more: %s", v);
	json_t *st = rocksdb_backend_ops.stats_json(b);
	CHECK(json_integer_value(json_object_get(st, "merges")) == 1003, "merges counted");
	CHECK(json_integer_value(json_object_get(st, "incr_not_numeric")) == 1);
	json_decref(st);
	rocksdb_backend_ops.close(b);
	/* reopened: RocksDB replays its log (and merges the operands itself) */
	b = rocksdb_backend_ops.open(&c, err, sizeof err);
	REQUIRE(b, "reopen: %s", err);
	CHECK(run(b, KV_OP_GET, "n", NULL, 0, 0, v, NULL) == KV_OK && strcmp(v, "3006") == 0, "after reopen: %s", v);
	CHECK(run(b, KV_OP_INCR, "n", NULL, 4, 0, v, NULL) == KV_OK && strcmp(v, "3010") == 0, "%s", v);
	CHECK(run(b, KV_OP_GET, "s", NULL, 0, 0, v, NULL) == KV_OK && strcmp(v, "abc") == 0);
	rocksdb_backend_ops.close(b);
	struct stat sb;
	CHECK(stat(dir, &sb) == 0, "the user's directory is kept");
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
#else
	SKIP("this build has no RocksDB (make deps installs librocksdb-dev)");
#endif
}

TEST(bad_options_are_refused_by_name)
{
#if OQB_HAVE_ROCKSDB
	SKIP_IF_NO_TMP();
	char err[512] = "";
	struct backend_conf c = conf(NULL);
	c.set.rdb_wal = 0;
	c.set.rdb_sync = 1;
	CHECK(!rocksdb_backend_ops.open(&c, err, sizeof err) && strstr(err, "sync true needs wal true"), "%s", err);
	c.set.rdb_sync = 0;
	c.durable = 1;
	CHECK(!rocksdb_backend_ops.open(&c, err, sizeof err) && strstr(err, "durable server needs wal true"), "%s", err);
	c = conf(NULL);
	c.set.write_buffer_mb = 0;
	CHECK(!rocksdb_backend_ops.open(&c, err, sizeof err) && strstr(err, "write_buffer_mb 0"), "%s", err);
	c = conf("/proc/no-such-dir/db");
	CHECK(!rocksdb_backend_ops.open(&c, err, sizeof err) && strstr(err, "/proc/no-such-dir/db"), "%s", err);
#else
	SKIP("this build has no RocksDB (make deps installs librocksdb-dev)");
#endif
}

TEST(stats_record_build_and_options_and_private_dir_goes)
{
#if OQB_HAVE_ROCKSDB
	SKIP_IF_NO_TMP();
	char err[512];
	struct backend_conf c = conf(NULL);
	c.set.rdb_wal = 0;
	struct backend *b = rocksdb_backend_ops.open(&c, err, sizeof err);
	REQUIRE(b, "open: %s", err);
	json_t *st = rocksdb_backend_ops.stats_json(b);
	json_t *db = json_object_get(st, "rocksdb");
	json_t *lib = json_object_get(db, "library");
	const char *a = json_string_value(json_object_get(lib, "assertions"));
	const char *hv = json_string_value(json_object_get(lib, "header_version"));
	CHECK(a && (!strcmp(a, "on") || !strcmp(a, "off") || !strcmp(a, "unknown")), "assertions %s", a ? a : "-");
	CHECK(hv && hv[0] >= '1' && hv[0] <= '9' && strchr(hv, '.'), "header version %s", hv ? hv : "-");
	CHECK(json_string_value(json_object_get(lib, "assertions_how"))[0] != '\0', "says how it knows");
	CHECK(json_is_false(json_object_get(json_object_get(db, "options"), "wal")));
	/* the options are the rows' (be_rocksdb.def), each by its key and
	 * with the value it was opened with: a new row shows without code */
	json_t *opts = json_object_get(db, "options");
	for (const struct setting *s = settings_rows(); s->field; s++)
		if (!strcmp(s->section, "server.backend") && !strcmp(s->owner, "rocksdb") && s->type != SET_STR)
			CHECK(json_object_get(opts, s->key), "options.%s missing", s->key);
	CHECK(json_integer_value(json_object_get(opts, "write_buffer_mb")) == c.set.write_buffer_mb &&
	      json_integer_value(json_object_get(opts, "max_write_buffer_number")) == c.set.max_write_buffers &&
	      json_is_false(json_object_get(opts, "sync")), "%s", json_dumps(opts, JSON_COMPACT));
	CHECK(json_is_false(json_object_get(json_object_get(db, "survives"), "process_crash")),
	      "wal off survives no crash");
	/* the report names no file that is gone after the run: a private
	 * directory is said to be one, not named */
	CHECK(!json_object_get(db, "dir"), "a private directory is not named");
	CHECK(!strcmp(json_string_value(json_object_get(db, "dir_is")) ?: "", "private (removed at exit)"));
	json_decref(st);
	/* it is oqb-rdb-PID-XXXXXX under the run directory, locked (rundir.h) */
	char dir[600] = "", lock[700];
	DIR *d = opendir(tmp);
	struct dirent *e;
	pid_t owner = 0;
	while (d && (e = readdir(d)) != NULL)
		if (rundir_name_match(e->d_name, "rdb", &owner))
			snprintf(dir, sizeof dir, "%s/%s", tmp, e->d_name);
	if (d)
		closedir(d);
	REQUIRE(dir[0], "no oqb-rdb-PID-XXXXXX under the run directory %s", tmp);
	CHECK(owner == getpid(), "named for its server's pid: %s", dir);
	struct stat sb;
	CHECK(stat(dir, &sb) == 0, "private directory %s exists while open", dir);
	snprintf(lock, sizeof lock, "%s/" RUNDIR_LOCK, dir);
	CHECK(stat(lock, &sb) == 0, "%s is there", lock);
	CHECK(rundir_reap(tmp, "rdb", 0) == 0 && stat(dir, &sb) == 0, "a live owner's directory is not reaped");
	rocksdb_backend_ops.close(b);
	CHECK(stat(dir, &sb) != 0, "private directory %s removed at close", dir);
	rmdir(tmp);
#else
	SKIP("this build has no RocksDB (make deps installs librocksdb-dev)");
#endif
}

UNIT_MAIN(set_get_del_statuses, incr_is_a_merge_with_decimal_values, bad_options_are_refused_by_name,
	  stats_record_build_and_options_and_private_dir_goes)
