/*
 * kvop.c - names of the key-value ops and statuses (kvop.h).
 */
#include <stddef.h>
#include <strings.h>

#include "kvop.h"

static const char *const op_names[KV_OP_MAX_] = {
	[KV_OP_NOP] = "nop",
	[KV_OP_GET] = "get",
	[KV_OP_SET] = "set",
	[KV_OP_DEL] = "del",
	[KV_OP_INCR] = "incr",
	[KV_OP_ECHO] = "echo",
};

const char *kv_op_name(unsigned op)
{
	if (op >= KV_OP_MAX_ || !op_names[op])
		return "?";
	return op_names[op];
}

int kv_op_from_name(const char *name)
{
	if (!name)
		return -1;
	for (unsigned i = 0; i < KV_OP_MAX_; i++)
		if (op_names[i] && strcasecmp(op_names[i], name) == 0)
			return (int)i;
	return -1;
}

const char *kv_status_name(unsigned status)
{
	switch (status) {
	case KV_OK: return "ok";
	case KV_NOT_FOUND: return "not_found";
	case KV_ERR_BAD: return "bad_request";
	case KV_ERR_NOSPACE: return "no_space";
	case KV_ERR_OP: return "unsupported_op";
	}
	return "?";
}
