/*
 * check_text.c - the text form of a history, for golden histories and for
 * printing ops in violation reports (check.h).
 *
 * One op per line; '#' starts a comment; blank lines are ignored:
 *
 *   CLIENT INV RET OP KEY [ARG] [-> RESULT]
 *
 *   CLIENT  a client id (decimal)
 *   INV     invoke time (ns, decimal)
 *   RET     return time, or '?' if the op never committed (no RESULT then)
 *   OP      set | get | del | incr
 *   ARG     set: the value written: C:S (the unique tag of client C, seq S;
 *           C must be this line's client), #N (a decimal number), or xHEX
 *           (an opaque value by its digest); incr: the delta.  A tag may
 *           carry the digest of all the value's bytes: C:S/xHEX (what the
 *           recorder writes; a get's C:S/xHEX must then match it)
 *   RESULT  ok [VALUE] | nf (not found) | err (not a number) | nospace |
 *           - (committed, status not seen: a delivery or ACK commit)
 *           VALUE as ARG, for a get or incr that returned one
 *
 * A line "# expect: ok|violation|unknown" states the known verdict.
 * Each op's seq is its line number unless its tag gives one.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kvop.h"

static int parse_value(const char *s, uint8_t *kind, uint32_t *client, uint64_t *seq, uint64_t *v,
		       int *digest)
{
	char *end;
	*digest = 0;
	if (s[0] == '#') {
		*kind = HV_NUM;
		*v = strtoull(s + 1, &end, 10);
		return end == s + 1 || *end ? -1 : 0;
	}
	if (s[0] == 'x') {
		*kind = HV_DIGEST;
		*v = strtoull(s + 1, &end, 16);
		return end == s + 1 || *end ? -1 : 0;
	}
	unsigned long c = strtoul(s, &end, 10);
	if (end == s || *end != ':')
		return -1;
	const char *q = end + 1;
	*seq = strtoull(q, &end, 10);
	if (end == q || (*end && *end != '/'))
		return -1;
	*kind = HV_TAG;
	*client = (uint32_t)c;
	*v = 0;
	if (!*end)
		return 0;
	if (end[1] != 'x')
		return -1;
	q = end + 2;
	*v = strtoull(q, &end, 16);
	*digest = 1;
	return end == q || *end ? -1 : 0;
}

static int parse_line(char *line, unsigned lineno, struct history_op *o, char *why, size_t wl)
{
	char *tok[12];
	int nt = 0;
	for (char *p = strtok(line, " \t\r"); p && nt < 12; p = strtok(NULL, " \t\r"))
		tok[nt++] = p;
	if (nt < 5) {
		snprintf(why, wl, "expected CLIENT INV RET OP KEY [ARG] [-> RESULT], got %d fields", nt);
		return -1;
	}
	char *end;
	memset(o, 0, sizeof *o);
	o->client = (uint32_t)strtoul(tok[0], &end, 10);
	if (*end) {
		snprintf(why, wl, "client \"%s\" is not a number", tok[0]);
		return -1;
	}
	o->t_inv = strtoull(tok[1], &end, 10);
	if (*end) {
		snprintf(why, wl, "invoke time \"%s\" is not a number", tok[1]);
		return -1;
	}
	if (!strcmp(tok[2], "?")) {
		o->t_ret = HISTORY_T_UNKNOWN;
		o->status = HISTORY_ST_UNKNOWN;
	} else {
		o->t_ret = strtoull(tok[2], &end, 10);
		if (*end || o->t_ret < o->t_inv) {
			snprintf(why, wl, "return time \"%s\" is not a number >= the invoke time", tok[2]);
			return -1;
		}
	}
	int op = kv_op_from_name(tok[3]);
	if (op != KV_OP_SET && op != KV_OP_GET && op != KV_OP_DEL && op != KV_OP_INCR) {
		snprintf(why, wl, "op \"%s\": expected set, get, del or incr", tok[3]);
		return -1;
	}
	o->op = (uint8_t)op;
	size_t kl = strlen(tok[4]);
	o->key_len = (uint8_t)(kl > 250 ? 250 : kl);
	o->key_hash = history_key_hash(tok[4], kl);
	memcpy(o->key, tok[4], kl < HISTORY_KEY_SHOWN ? kl : HISTORY_KEY_SHOWN);
	o->seq = lineno;
	int i = 5;
	if (op == KV_OP_SET || op == KV_OP_INCR) {
		if (i >= nt) {
			snprintf(why, wl, "%s needs an argument", tok[3]);
			return -1;
		}
		if (op == KV_OP_SET) {
			uint32_t c = 0;
			uint64_t s = lineno;
			int dg;
			if (parse_value(tok[i], &o->wkind, &c, &s, &o->arg, &dg) != 0) {
				snprintf(why, wl, "value \"%s\": expected C:S, C:S/xHEX, #N or xHEX", tok[i]);
				return -1;
			}
			o->dflags = dg ? HISTORY_D_WRITTEN : 0;
			if (o->wkind == HV_TAG) {
				if (c != o->client) {
					snprintf(why, wl, "tag %s names client %u, but the line's client is %u",
						 tok[i], c, o->client);
					return -1;
				}
				o->seq = s;
			}
		} else {
			o->arg = strtoull(tok[i], &end, 10);
			if (*end) {
				snprintf(why, wl, "incr delta \"%s\" is not a number", tok[i]);
				return -1;
			}
		}
		i++;
	}
	if (o->t_ret == HISTORY_T_UNKNOWN) {
		if (i < nt) {
			snprintf(why, wl, "an op that never returned ('?') has no result");
			return -1;
		}
		return 0;
	}
	if (i + 1 >= nt || strcmp(tok[i], "->") != 0) {
		snprintf(why, wl, "expected '-> RESULT' after the op");
		return -1;
	}
	const char *res = tok[i + 1];
	if (!strcmp(res, "ok"))
		o->status = KV_OK;
	else if (!strcmp(res, "nf"))
		o->status = KV_NOT_FOUND;
	else if (!strcmp(res, "err"))
		o->status = KV_ERR_OP;
	else if (!strcmp(res, "nospace"))
		o->status = KV_ERR_NOSPACE;
	else if (!strcmp(res, "-"))
		o->status = HISTORY_ST_UNSEEN;
	else {
		snprintf(why, wl, "result \"%s\": expected ok, nf, err, nospace or -", res);
		return -1;
	}
	if (i + 2 < nt) {
		if (o->status != KV_OK || (op != KV_OP_GET && op != KV_OP_INCR)) {
			snprintf(why, wl, "only an ok get or incr returns a value");
			return -1;
		}
		uint8_t kind;
		int dg;
		if (parse_value(tok[i + 2], &kind, &o->rclient, &o->rseq, &o->rval, &dg) != 0) {
			snprintf(why, wl, "returned value \"%s\": expected C:S, C:S/xHEX, #N or xHEX",
				 tok[i + 2]);
			return -1;
		}
		o->rkind = kind;
		o->dflags = dg ? HISTORY_D_READ : 0;
	} else if (o->status == KV_OK && (op == KV_OP_GET || op == KV_OP_INCR)) {
		snprintf(why, wl, "an ok %s must say the value it returned", tok[3]);
		return -1;
	}
	return 0;
}

int check_text_parse(const char *text, const char *name, struct history_op **ops, size_t *n,
		     int *expect, char *err, size_t errlen)
{
	size_t cap = 64, cnt = 0;
	struct history_op *o = malloc(cap * sizeof *o);
	const char *p = text;
	unsigned lineno = 0;
	*expect = -1;
	if (!o) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[1024], why[256];
		lineno++;
		if (len >= sizeof line) {
			snprintf(err, errlen, "%s:%u: line longer than %zu bytes", name, lineno, sizeof line - 1);
			goto fail;
		}
		memcpy(line, p, len);
		line[len] = 0;
		p = nl ? nl + 1 : p + len;
		char expv[16];
		if (sscanf(line, " # expect: %15s", expv) == 1) {
			*expect = !strcmp(expv, "ok") ? CHECK_OK : !strcmp(expv, "violation") ? CHECK_VIOLATION
				  : !strcmp(expv, "unknown") ? CHECK_UNKNOWN : -2;
			if (*expect == -2) {
				snprintf(err, errlen, "%s:%u: expect \"%s\": use ok, violation or unknown",
					 name, lineno, expv);
				goto fail;
			}
			continue;
		}
		/* a comment is a '#' that starts a field and is followed by a
		 * blank or the end; "#5" is a value */
		for (char *h = strchr(line, '#'); h; h = strchr(h + 1, '#'))
			if ((h == line || isspace((unsigned char)h[-1])) &&
			    (h[1] == 0 || isspace((unsigned char)h[1]))) {
				*h = 0;
				break;
			}
		char *q = line;
		while (isspace((unsigned char)*q))
			q++;
		if (!*q)
			continue;
		if (cnt == cap) {
			struct history_op *no = realloc(o, 2 * cap * sizeof *o);
			if (!no) {
				snprintf(err, errlen, "%s: out of memory", name);
				goto fail;
			}
			o = no;
			cap *= 2;
		}
		if (parse_line(q, lineno, &o[cnt], why, sizeof why) != 0) {
			snprintf(err, errlen, "%s:%u: %s", name, lineno, why);
			goto fail;
		}
		cnt++;
	}
	*ops = o;
	*n = cnt;
	return 0;
fail:
	free(o);
	return -1;
}

static void value_text(char *b, size_t l, uint8_t kind, uint32_t c, uint64_t s, uint64_t v, int dg)
{
	if (kind == HV_TAG && dg)
		snprintf(b, l, "%" PRIu32 ":%" PRIu64 "/x%" PRIx64, c, s, v);
	else if (kind == HV_TAG)
		snprintf(b, l, "%" PRIu32 ":%" PRIu64, c, s);
	else if (kind == HV_NUM)
		snprintf(b, l, "#%" PRIu64, v);
	else
		snprintf(b, l, "x%" PRIx64, v);
}

void check_op_text(char *buf, size_t len, const struct history_op *o, uint64_t t0, int us)
{
	char key[HISTORY_KEY_SHOWN * 4 + 8], arg[64] = "", res[96], ret[32];
	size_t kl = o->key_len < HISTORY_KEY_SHOWN ? o->key_len : HISTORY_KEY_SHOWN, j = 0;
	for (size_t i = 0; i < kl; i++)
		j += (size_t)snprintf(key + j, sizeof key - j, isgraph(o->key[i]) && o->key[i] != '#'
				      ? "%c" : "\\x%02x", o->key[i]);
	if (o->key_len > HISTORY_KEY_SHOWN)
		snprintf(key + j, sizeof key - j, "...");
	if (o->op == KV_OP_SET)
		value_text(arg, sizeof arg, o->wkind, o->client, o->seq, o->arg,
			   o->dflags & HISTORY_D_WRITTEN);
	else if (o->op == KV_OP_INCR)
		snprintf(arg, sizeof arg, "%" PRIu64, o->arg);
	double div = us ? 1000.0 : 1.0;
	if (o->t_ret == HISTORY_T_UNKNOWN)
		snprintf(ret, sizeof ret, "?");
	else
		snprintf(ret, sizeof ret, us ? "%.3f" : "%.0f", (double)(o->t_ret - t0) / div);
	switch (o->status) {
	case HISTORY_ST_UNKNOWN: res[0] = 0; break;
	case HISTORY_ST_UNSEEN: snprintf(res, sizeof res, " -> -"); break;
	case KV_OK: {
		char v[64] = "";
		if (o->rkind != HV_NONE)
			value_text(v, sizeof v, o->rkind, o->rclient, o->rseq, o->rval,
				   o->dflags & HISTORY_D_READ);
		snprintf(res, sizeof res, " -> ok%s%s", *v ? " " : "", v);
		break;
	}
	case KV_NOT_FOUND: snprintf(res, sizeof res, " -> nf"); break;
	case KV_ERR_NOSPACE: snprintf(res, sizeof res, " -> nospace"); break;
	default: snprintf(res, sizeof res, " -> err"); break;
	}
	snprintf(buf, len, us ? "%" PRIu32 " %.3f %s %s %s%s%s%s" : "%" PRIu32 " %.0f %s %s %s%s%s%s",
		 o->client, (double)(o->t_inv - t0) / div, ret, kv_op_name(o->op), key,
		 *arg ? " " : "", arg, res);
}

void check_explain(FILE *f, const struct history_op *ops, size_t n,
		   const struct check_key_result *r, uint64_t t0)
{
	char line[400];
	if (r->bad < 0 || (size_t)r->bad >= n) {
		fprintf(f, "  %s\n", r->why);
		return;
	}
	const struct history_op *b = &ops[r->bad];
	check_op_text(line, sizeof line, b, t0, 1);
	fprintf(f, "  %s\n  cannot be placed:  %s\n", r->why, line);
	if (r->other >= 0 && (size_t)r->other < n) {
		check_op_text(line, sizeof line, &ops[r->other], t0, 1);
		fprintf(f, "  conflicts with:    %s\n", line);
	}
	/* the ops around it: those overlapping it, and the last few before */
	fprintf(f, "  around it (client inv_us ret_us op key [arg] -> result):\n");
	uint64_t lo = b->t_inv, hi = b->t_ret;
	size_t shown = 0, before = 0;
	for (size_t i = 0; i < n && shown < 40; i++) {
		const struct history_op *o = &ops[i];
		if (!check_is_state_op(o))
			continue;
		int overlap = o->t_inv <= hi && o->t_ret >= lo;
		int just_before = !overlap && o->t_ret < lo && o->t_ret + (hi - lo) / 2 + 1 >= lo && before < 6;
		if (!overlap && !just_before)
			continue;
		before += just_before;
		check_op_text(line, sizeof line, o, t0, 1);
		fprintf(f, "    %s%s\n", (size_t)r->bad == i ? "=> " : "   ", line);
		shown++;
	}
}
