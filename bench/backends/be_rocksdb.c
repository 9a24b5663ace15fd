/*
 * be_rocksdb.c - the `rocksdb` back end: Debian's librocksdb, in process,
 * through its C API (rocksdb/c.h).
 *
 * One DB per worker (DIR/rocksdb.w<worker>), used only by that worker's
 * thread.  Why not one DB for the server: keys are partitioned by worker
 * anyway, and RocksDB applies the writes of one calling thread in call
 * order, but writes of several threads into one DB form write groups whose
 * leader writes the others' WAL records and memtable entries: a worker's
 * put would then wait for, and pay for, other workers' writes.  With one DB
 * per worker the only caller of a DB is the worker that runs its slots in
 * order, each call returns after RocksDB applied it, so the paper's Rule 2
 * (slot order is execution order) holds from the ring to the store, and
 * the workers stay as independent as their partitions.  (Background flush
 * and compaction threads are RocksDB's shared default pool.)
 *
 * Requests:
 *   set    rocksdb_put
 *   del    rocksdb_delete; when the caller waits for the status (rawrpc) a
 *          get first, so a missing key answers KV_NOT_FOUND as the other
 *          back ends do; when it does not (oq, deferred: async) only the
 *          delete
 *   get    rocksdb_get_pinned, copied out
 *   incr   a get (a missing key answers KV_NOT_FOUND, a value that is not a
 *          decimal number KV_ERR_OP, as cache and memcached do), then
 *          rocksdb_merge of the delta through the add operator of
 *          rdb_merge.h.  The answer is the old value plus the delta: the
 *          worker is its key's only writer and nothing runs between the
 *          get and the merge, so that is what the merge makes.  incr is
 *          non-idempotent; its commit path (system.c) is always the
 *          software response after execution (paper §5.3), and a durable
 *          restart never runs it again (recovery.c skips it).
 *   echo   its value back, without RocksDB.
 * A write RocksDB refuses (an I/O error, a full disk) makes the instance
 * fail: it answers KV_ERR_OP from then on and `fatal` names RocksDB and its
 * message, because a set that oq committed on delivery and RocksDB then
 * dropped is a lost commit.
 *
 * What survives what (options, docs/config.md):
 *   wal on, sync off   a process crash (kill -9): each write is in the
 *                      WAL file, in the kernel's page cache, before the
 *                      call returns; not a power loss or OS crash.
 *   wal on, sync on    both: the WAL is fdatasync'd before the call
 *                      returns, on a file system with a stable device
 *                      (on tmpfs, such as /dev/shm, nothing survives a
 *                      power loss; stats say which file system it was).
 *   wal off            neither, for what is still in the memtable.
 * A durable server (--durable) refuses wal off at open.
 *
 * Where the DBs live: --rocksdb-path DIR (the user's; kept), else the
 * server's --pmem-path (its persistent directory, with the rings; the
 * driver or the crash test removes it), else a private directory
 * RUNDIR/oqb-rdb-PID-XXXXXX made at the first open and removed with its
 * DBs when the last instance closes.
 *
 * Debian's librocksdb is built with assertions on (rdb_facts says how that
 * is found out); every figure taken with it says so (stats "rocksdb").
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "log.h"
#include "settings.h"

#if OQB_HAVE_ROCKSDB
#include <sys/vfs.h>
#include <rocksdb/c.h>

#include "rdb_facts.h"
#include "rdb_merge.h"
#include "rundir.h"

#define RDB_TMPFS_MAGIC 0x01021994   /* statfs f_type of tmpfs (linux/magic.h) */

/* The private directory, shared by the instances of this process. */
static pthread_mutex_t dir_lock = PTHREAD_MUTEX_INITIALIZER;
static char priv_dir[PATH_MAX];
static unsigned priv_refs;
static int priv_lock = -1;     /* holds priv_dir's owner.lock (rundir.h) */

struct backend {
	rocksdb_t *db;
	rocksdb_writeoptions_t *wo;
	rocksdb_readoptions_t *ro;
	int worker, priv, tmpfs;
	struct setting_vals set;    /* the settings it was opened with (its rows': wal, sync, ...) */
	char path[PATH_MAX];
	_Atomic int dead;           /* set (release) after why[] is written */
	char why[1024];             /* path and message, truncated to fit */
	/* counters */
	uint64_t ops[KV_OP_MAX_], bad_ops, merges, del_not_found, incr_not_numeric, errors;
	char last_error[512];
};

/* ---- the add operator (rdb_merge.h) ---- */

static void mo_destroy(void *state)
{
	(void)state;
}

static const char *mo_name(void *state)
{
	(void)state;
	return "oqb-add-u64-decimal";
}

static void mo_free(void *state, const char *v, size_t len)
{
	(void)state;
	(void)len;
	free((void *)v);
}

static char *mo_full(void *state, const char *key, size_t klen, const char *base, size_t base_len,
		     const char *const *ops, const size_t *lens, int n, unsigned char *success, size_t *new_len)
{
	char num[RDB_NUM_MAX + 1];
	int len = rdb_full_merge(base, base_len, ops, lens, n, num);
	char *v = len > 0 ? malloc((size_t)len) : NULL;
	*new_len = 0;
	*success = v != NULL;
	if (v) {
		memcpy(v, num, (size_t)len);
		*new_len = (size_t)len;
	}
	return v;
}

static char *mo_partial(void *state, const char *key, size_t klen, const char *const *ops, const size_t *lens,
			int n, unsigned char *success, size_t *new_len)
{
	uint8_t d[RDB_OPERAND_LEN];
	char *v = rdb_partial_merge(ops, lens, n, d) == 0 ? malloc(RDB_OPERAND_LEN) : NULL;
	*new_len = 0;
	*success = v != NULL;
	if (v) {
		memcpy(v, d, RDB_OPERAND_LEN);
		*new_len = RDB_OPERAND_LEN;
	}
	return v;
}

/* ---- failure ---- */

static void __attribute__((format(printf, 2, 3))) fail(struct backend *b, const char *fmt, ...)
{
	char what[700];
	va_list ap;
	if (atomic_load(&b->dead))
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	snprintf(b->why, sizeof b->why, "rocksdb (DB %.200s, worker %d): %.700s", b->path, b->worker, what);
	atomic_store_explicit(&b->dead, 1, memory_order_release);
	log_msg(LOG_ERR, "%s", b->why);
}

/* A refused read: counted and answered KV_ERR_OP; nothing was lost. */
static void read_error(struct backend *b, const char *what, char *e)
{
	b->errors++;
	snprintf(b->last_error, sizeof b->last_error, "%s: %s", what, e);
	if (b->errors <= 5 || (b->errors & (b->errors - 1)) == 0)
		log_msg(LOG_WARN, "rocksdb, worker %d: %s (%" PRIu64 " errors so far)", b->worker, b->last_error,
			b->errors);
	rocksdb_free(e);
}

/* ---- requests ---- */

/* Reads key into o (copy = 1) or only learns whether it is there.
 * KV_OK, KV_NOT_FOUND or KV_ERR_OP. */
static unsigned lookup(struct backend *b, const struct backend_req *r, struct backend_out *o, int copy,
		       uint64_t *num, int *numeric)
{
	char *e = NULL;
	rocksdb_pinnableslice_t *p = rocksdb_get_pinned(b->db, b->ro, (const char *)r->key, r->key_len, &e);
	if (e) {
		read_error(b, "get", e);
		return KV_ERR_OP;
	}
	if (!p)
		return KV_NOT_FOUND;
	size_t len;
	const char *v = rocksdb_pinnableslice_value(p, &len);
	if (copy)
		backend_copy_out(o, (const uint8_t *)v, (uint32_t)len);
	if (numeric)
		*numeric = backend_parse_u64((const uint8_t *)v, len, num) == 0;
	rocksdb_pinnableslice_destroy(p);
	return KV_OK;
}

/* A write's outcome: KV_OK, or the instance fails (see the header). */
static unsigned written(struct backend *b, const char *what, char *e)
{
	if (!e)
		return KV_OK;
	b->errors++;
	fail(b, "%s refused: %s", what, e);
	rocksdb_free(e);
	return KV_ERR_OP;
}

static void rdb_exec(struct backend *b, const struct backend_req *r, struct backend_out *o)
{
	char *e = NULL;
	if (backend_exec_prologue(r, o, b->ops, &b->bad_ops))
		return;
	if (atomic_load_explicit(&b->dead, memory_order_relaxed)) {
		o->status = KV_ERR_OP;
		return;
	}
	switch (r->op) {
	case KV_OP_SET:
		rocksdb_put(b->db, b->wo, (const char *)r->key, r->key_len, (const char *)r->val, r->val_len, &e);
		o->status = written(b, "put", e);
		break;
	case KV_OP_GET:
		o->status = lookup(b, r, o, 1, NULL, NULL);
		break;
	case KV_OP_DEL:
		if (!r->async) {
			o->status = lookup(b, r, o, 0, NULL, NULL);
			if (o->status == KV_NOT_FOUND)
				b->del_not_found++;
			if (o->status != KV_OK)
				break;
		}
		rocksdb_delete(b->db, b->wo, (const char *)r->key, r->key_len, &e);
		o->status = written(b, "delete", e);
		break;
	case KV_OP_INCR: {
		uint64_t v = 0;
		int numeric = 0;
		o->status = lookup(b, r, o, 0, &v, &numeric);
		if (o->status != KV_OK)
			break;
		if (!numeric) {
			b->incr_not_numeric++;
			o->status = KV_ERR_OP;
			break;
		}
		uint8_t d[RDB_OPERAND_LEN];
		rdb_operand(d, r->aux);
		rocksdb_merge(b->db, b->wo, (const char *)r->key, r->key_len, (const char *)d, sizeof d, &e);
		o->status = written(b, "merge", e);
		if (o->status != KV_OK)
			break;
		b->merges++;
		char num[RDB_NUM_MAX + 1];
		int n = snprintf(num, sizeof num, "%" PRIu64, v + r->aux);
		backend_copy_out(o, (const uint8_t *)num, (uint32_t)n);
		break;
	}
	default:
		b->bad_ops++;
		o->status = KV_ERR_OP;
		break;
	}
}

/* ---- where the DBs live ---- */

static void priv_release(void)
{
	pthread_mutex_lock(&dir_lock);
	if (priv_refs && --priv_refs == 0) {
		rundir_remove(priv_dir, priv_lock);
		priv_lock = -1;
		priv_dir[0] = '\0';
	}
	pthread_mutex_unlock(&dir_lock);
}

/* The directory for worker's DB into b->path; 0 or -1 with err. */
static int place(struct backend *b, const struct backend_conf *c, char *err, size_t errlen)
{
	const char *base = c->set.rdb_path && *c->set.rdb_path ? c->set.rdb_path : c->persist_dir;
	if (base) {
		if (mkdir(base, 0700) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "rocksdb: cannot create the directory %s for its DBs: %s; give a "
				 "writable one (server.backend.path, --rocksdb-path)", base, strerror(errno));
			return -1;
		}
	} else {
		pthread_mutex_lock(&dir_lock);
		if (!priv_refs) {
			/* oqb-rdb-SERVERPID-XXXXXX, locked for the server's life
			 * (rundir.h); first those of killed servers */
			const char *parent = rundir_base(c->run_dir);
			char e2[600];
			rundir_reap(parent, "rdb", 0);
			if (rundir_create(parent, "rdb", priv_dir, sizeof priv_dir, &priv_lock, e2, sizeof e2) != 0) {
				snprintf(err, errlen, "rocksdb: %s (server.scratch_dir), or give server.backend.path", e2);
				priv_dir[0] = '\0';
				pthread_mutex_unlock(&dir_lock);
				return -1;
			}
		}
		priv_refs++;
		b->priv = 1;
		base = priv_dir;
		pthread_mutex_unlock(&dir_lock);
	}
	if ((size_t)snprintf(b->path, sizeof b->path, "%s/rocksdb.w%d", base, c->worker) >= sizeof b->path) {
		snprintf(err, errlen, "rocksdb: directory name too long: %s", base);
		return -1;
	}
	struct statfs sf;
	b->tmpfs = statfs(base, &sf) == 0 && sf.f_type == RDB_TMPFS_MAGIC;
	return 0;
}

/* ---- backend_ops ---- */

static void rdb_close(struct backend *b)
{
	if (!b)
		return;
	if (b->db)
		rocksdb_close(b->db);   /* flushes memtables that hold unpersisted writes */
	if (b->wo)
		rocksdb_writeoptions_destroy(b->wo);
	if (b->ro)
		rocksdb_readoptions_destroy(b->ro);
	if (b->priv)
		priv_release();
	free(b);
}

static struct backend *rdb_open(const struct backend_conf *c, char *err, size_t errlen)
{
	if (c->set.rdb_sync && !c->set.rdb_wal) {
		snprintf(err, errlen, "rocksdb: sync true needs wal true (RocksDB refuses a synced write without "
			 "its write-ahead log); set server.backend.wal true (--rocksdb-wal 1) or sync false");
		return NULL;
	}
	if (c->durable && !c->set.rdb_wal) {
		snprintf(err, errlen, "rocksdb: a durable server needs wal true: with wal false a committed write "
			 "that is still in the memtable is lost when the server crashes; set server.backend.wal "
			 "true (--rocksdb-wal 1), or run without durable");
		return NULL;
	}
	/* The bounds are the rows' (lib/settings/be_rocksdb.def): a caller
	 * other than oqb-server's flags (a test, an embedding) gets the same. */
	char why[200];
	if (settings_check_num("server.backend", "write_buffer_mb", c->set.write_buffer_mb, why, sizeof why) < 0 ||
	    settings_check_num("server.backend", "max_write_buffer_number", c->set.max_write_buffers, why,
			       sizeof why) < 0) {
		snprintf(err, errlen, "rocksdb: %s", why);
		return NULL;
	}
	struct backend *b = calloc(1, sizeof *b);
	if (!b) {
		snprintf(err, errlen, "rocksdb: out of memory");
		return NULL;
	}
	b->worker = c->worker;
	b->set = c->set;
	if (place(b, c, err, errlen) != 0) {
		rdb_close(b);
		return NULL;
	}
	rocksdb_options_t *opt = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(opt, 1);
	rocksdb_options_set_write_buffer_size(opt, (size_t)c->set.write_buffer_mb << 20);
	rocksdb_options_set_max_write_buffer_number(opt, (int)c->set.max_write_buffers);
	rocksdb_options_set_compression(opt, rocksdb_no_compression);
	rocksdb_options_set_keep_log_file_num(opt, 4);   /* its LOG files: a crash test restarts it often */
	/* the options take ownership of the operator */
	rocksdb_options_set_merge_operator(opt, rocksdb_mergeoperator_create(NULL, mo_destroy, mo_full, mo_partial,
									    mo_free, mo_name));
	char *e = NULL;
	b->db = rocksdb_open(opt, b->path, &e);
	rocksdb_options_destroy(opt);
	if (!b->db) {
		snprintf(err, errlen, "rocksdb: cannot open the DB %s: %s", b->path, e ? e : "(no message)");
		rocksdb_free(e);
		rdb_close(b);
		return NULL;
	}
	b->wo = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(b->wo, (unsigned char)(c->set.rdb_sync != 0));
	rocksdb_writeoptions_disable_WAL(b->wo, c->set.rdb_wal ? 0 : 1);
	b->ro = rocksdb_readoptions_create();
	return b;
}

static json_t *rdb_stats(struct backend *b)
{
	json_t *ops = json_object();
	for (unsigned i = 0; i < KV_OP_MAX_; i++)
		json_object_set_new(ops, kv_op_name(i), json_integer((json_int_t)b->ops[i]));
	json_object_set_new(ops, "unsupported", json_integer((json_int_t)b->bad_ops));
	/* the options: every rocksdb row's value by its key (be_rocksdb.def),
	 * then the fixed ones */
	json_t *opts = settings_json("server.backend", "rocksdb", &b->set);
	json_object_set_new(opts, "compression", json_string("none"));
	json_object_set_new(opts, "merge_operator", json_string("oqb-add-u64-decimal"));
	int wal = b->set.rdb_wal, sync = b->set.rdb_sync;
	json_t *surv = json_pack("{s:b,s:b}", "process_crash", wal, "power_loss", wal && sync && !b->tmpfs);
	json_t *db = json_pack("{s:o,s:o,s:s,s:o}", "options", opts, "survives", surv,
			       "dir_is", b->priv ? "private (removed at exit)" : "kept",
			       "library", rdb_facts_json());
	if (!b->priv)   /* a report names only files that are still there */
		json_object_set_new(db, "dir", json_string(b->path));
	json_object_set_new(db, "dir_fs", json_string(b->tmpfs ? "tmpfs" : "other"));
	json_t *j = json_pack("{s:s,s:o,s:I,s:I,s:I,s:I,s:o}", "backend", "rocksdb", "ops", ops, "merges",
			      (json_int_t)b->merges, "del_not_found", (json_int_t)b->del_not_found,
			      "incr_not_numeric", (json_int_t)b->incr_not_numeric, "errors", (json_int_t)b->errors,
			      "rocksdb", db);
	if (b->last_error[0])
		json_object_set_new(j, "last_error", json_string(b->last_error));
	if (atomic_load(&b->dead))
		json_object_set_new(j, "error", json_string(b->why));
	return j;
}

static const char *rdb_fatal(struct backend *b)
{
	return atomic_load_explicit(&b->dead, memory_order_acquire) ? b->why : NULL;
}

#else /* no RocksDB in this build */

struct backend {
	int unused;
};

static struct backend *rdb_open(const struct backend_conf *c, char *err, size_t errlen)
{
	(void)c;
	snprintf(err, errlen, "rocksdb: this build has no RocksDB (librocksdb-dev was not installed when it was "
		 "built); run make deps (or apt-get install librocksdb-dev) and rebuild");
	return NULL;
}

static void rdb_exec(struct backend *b, const struct backend_req *r, struct backend_out *o)
{
	(void)b;
	(void)r;
	o->val_len = 0;
	o->status = KV_ERR_OP;
}

static json_t *rdb_stats(struct backend *b)
{
	(void)b;
	return NULL;
}

static void rdb_close(struct backend *b)
{
	free(b);
}

static const char *rdb_fatal(struct backend *b)
{
	(void)b;
	return NULL;
}

#endif

const struct backend_ops rocksdb_backend_ops = {
	.name = "rocksdb",
	.version = BACKEND_OPS_VERSION,
	.open = rdb_open,
	.exec = rdb_exec,
	.stats_json = rdb_stats,
	.close = rdb_close,
	.fatal = rdb_fatal,
};
