/*
 * mcmeta.h - memcached's meta text protocol: request encoders, the key
 * check, and the reply parser, with no I/O (the `memcached` back end,
 * be_memcached.c, owns the connection).
 *
 * What is spoken (memcached 1.6.18's protocol.txt, "Meta Commands"):
 *
 *   ms <key> <datalen> [q] [O<opaque>]\r\n<data>\r\n   set          HD | NS | NF | EX
 *   md <key> [q] [O<opaque>]\r\n                        delete       HD | NF
 *   mg <key> v [O<opaque>]\r\n                          get          VA <n> ..\r\n<data>\r\n | EN
 *   ma <key> v D<delta> [O<opaque>]\r\n                 incr         VA <n> ..\r\n<digits>\r\n | NF
 *   mn\r\n                                              fence        MN
 *   version\r\n, stats settings\r\n                     start-up     VERSION <v> | STAT <k> <v> .. END
 *
 * With the q flag memcached leaves out only the nominal reply (HD of ms,
 * md, ma); a failure (NS, NF, EX) still comes back, with the opaque, and
 * an error line (CLIENT_ERROR, SERVER_ERROR, ERROR) carries no opaque at
 * all.  So the back end follows every quiet command with `mn`: the replies
 * form one group per request, ended by its MN, and a failure line is
 * attributed by the count of MNs before it, never by guessing.
 *
 * Keys are sent as they are (no base64 `b` flag): a key memcached would
 * reject (empty, longer than MCM_KEY_MAX, or holding a byte <= 0x20 or
 * 0x7f) is refused by mcm_key_check before anything is written.  In 1.6.18
 * a too-long key in `ms` makes memcached answer CLIENT_ERROR without
 * swallowing the data block, which it then parses as commands: sending one
 * would desynchronise the stream.
 *
 * The parser reads one reply from the front of a buffer and never reads
 * past its length: a line must end in \r\n within MCM_LINE_MAX bytes; a
 * VA's data block must be exactly its declared length followed by \r\n;
 * numbers are plain decimal without sign and must fit.  Anything else is
 * malformed, with a reason that says what was seen.
 */
#ifndef OQB_MCMETA_H
#define OQB_MCMETA_H

#include <stddef.h>
#include <stdint.h>

#define MCM_KEY_MAX      250u        /* memcached's key limit (protocol.txt "Keys") */
#define MCM_LINE_MAX     2048u       /* longest reply line accepted, \r\n included */
#define MCM_OPAQUE_MAX   32u         /* memcached refuses longer opaques */
#define MCM_VALUE_MAX    (1u << 30)  /* memcached's largest item (-I 1024m) */

enum mcm_kind {
	MCM_NONE = 0,
	MCM_HD,            /* success, no value */
	MCM_VA,            /* value follows: val, val_len */
	MCM_EN,            /* get miss */
	MCM_NF,            /* not found (md, ma) */
	MCM_NS,            /* not stored */
	MCM_EX,            /* exists (CAS mismatch) */
	MCM_MN,            /* the fence `mn` was reached */
	MCM_CLIENT_ERROR,  /* msg: memcached's text */
	MCM_SERVER_ERROR,  /* msg: memcached's text */
	MCM_ERROR,         /* unknown command */
	MCM_VERSION,       /* msg: the version */
	MCM_STAT,          /* msg: name, val: value (both within the line) */
	MCM_END,           /* end of a stats listing */
	MCM_KIND_MAX_
};

struct mcm_reply {
	enum mcm_kind kind;
	const uint8_t *val;     /* VA: the data block; STAT: the value */
	uint32_t val_len;
	const char *msg;        /* error text, VERSION or STAT name: points into the buffer */
	uint32_t msg_len;
	uint8_t opaque[MCM_OPAQUE_MAX];
	uint32_t opaque_len;    /* 0: no O flag in the reply */
	int has_opaque;
};

/*
 * Parses one reply at buf[0..len).  Returns the number of bytes it takes
 * (> 0, with *r filled), 0 if the buffer holds only the start of a reply
 * (read more and call again; never when len >= MCM_LINE_MAX and no line
 * end was found), or -1 if it is malformed, with the reason in why[cap].
 */
long mcm_parse(const uint8_t *buf, size_t len, struct mcm_reply *r, char *why, size_t cap);

/* "HD", "VA", ... "?" */
const char *mcm_kind_name(enum mcm_kind k);

/* NULL if memcached accepts the key as it is; else why not. */
const char *mcm_key_check(const uint8_t *key, size_t klen);

/*
 * Encoders: write the command line into buf[cap] and return its length,
 * or 0 if it does not fit (or the key is refused: check it first).  For
 * ms the caller sends the data block and "\r\n" after the line.  opaque is
 * written as O<decimal> when nonzero.
 */
size_t mcm_enc_set(char *buf, size_t cap, const uint8_t *key, size_t klen, uint32_t val_len,
		   int quiet, uint64_t opaque);
size_t mcm_enc_del(char *buf, size_t cap, const uint8_t *key, size_t klen, int quiet, uint64_t opaque);
size_t mcm_enc_get(char *buf, size_t cap, const uint8_t *key, size_t klen, uint64_t opaque);
size_t mcm_enc_incr(char *buf, size_t cap, const uint8_t *key, size_t klen, uint64_t delta, uint64_t opaque);
size_t mcm_enc_noop(char *buf, size_t cap);

#endif
