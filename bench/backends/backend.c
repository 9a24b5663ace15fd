/*
 * backend.c - the registry of KV back ends.
 *
 * One explicit table, in the order they are listed in help text; adding a
 * back end is one line here (plus its own file).  Lookups are by exact name.
 */
#include <pthread.h>
#include <string.h>

#include "backend.h"
#include "be_pmkv.h"
#include "be_plugin.h"

/* ---- the table: one line per back end ---- */
static const struct backend_ops *const backend_table[] = {
	&null_backend_ops,
	&cache_backend_ops,
	&pmkv_backend_ops,
	&memcached_backend_ops,
	&plugin_backend_ops,
	&rocksdb_backend_ops,
};
/* ---- end of table ---- */

#define NBACKENDS (sizeof backend_table / sizeof backend_table[0])

const struct backend_ops *backend_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < NBACKENDS; i++) {
		const struct backend_ops *b = backend_table[i];
		/* A back end built against another interface version is
		 * treated as absent rather than called with wrong arguments. */
		if (b->version == BACKEND_OPS_VERSION && strcmp(b->name, name) == 0)
			return b;
	}
	return NULL;
}

static char names_buf[256];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void build_names(void)
{
	size_t off = 0;

	for (size_t i = 0; i < NBACKENDS; i++) {
		const char *n = backend_table[i]->name;
		size_t len = strlen(n);
		if (off + len + 2 > sizeof names_buf)
			break;
		if (off)
			names_buf[off++] = ',';
		memcpy(names_buf + off, n, len);
		off += len;
	}
	names_buf[off] = '\0';
}

const char *backend_names(void)
{
	pthread_once(&names_once, build_names);
	return names_buf;
}

void backend_copy_out(struct backend_out *o, const uint8_t *v, uint32_t len)
{
	o->val_len = len;
	if (len == 0)
		return;
	if (!o->val || len > o->val_cap) {
		o->status = KV_ERR_NOSPACE;
		return;
	}
	memcpy(o->val, v, len);
}

int backend_exec_prologue(const struct backend_req *r, struct backend_out *o, uint64_t *ops, uint64_t *bad_ops)
{
	o->status = KV_OK;
	o->val_len = 0;
	if (r->op >= KV_OP_MAX_) {
		(*bad_ops)++;
		o->status = KV_ERR_OP;
		return 1;
	}
	ops[r->op]++;
	if (r->op == KV_OP_ECHO)
		backend_copy_out(o, r->val, r->val_len);
	return r->op == KV_OP_NOP || r->op == KV_OP_ECHO;
}

int backend_parse_u64(const uint8_t *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}
