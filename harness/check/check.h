/*
 * check.h - linearizability of recorded key-value histories (lib/history.h)
 * against the key-value model, one key at a time.
 *
 * The model (what the backends implement, bench/backends): a key is absent
 * or holds a value.  set writes it; get returns it or NOT_FOUND; del
 * removes it (OK if it was there, NOT_FOUND if not); incr adds its delta to
 * a decimal value and returns the sum, answers NOT_FOUND on an absent key
 * and an error (ERR_OP or ERR_BAD) on a non-numeric value, changing
 * nothing.  A set that failed for room (ERR_NOSPACE) leaves the key absent
 * (memcached drops the old value).  nop and echo are not state operations
 * and are ignored.  An operation whose status was not seen (a commit by
 * delivery or ACK) has its output unchecked; one that never committed has
 * return time infinity and its output unchecked: it may take effect at any
 * later time or never.
 *
 * Linearizability is compositional (Herlihy & Wing): a history is
 * linearizable iff each key's sub-history is, so keys are checked
 * separately.  Two algorithms:
 *  - the unique-value fast path (Gibbons & Korach): when a key has only
 *    sets of uniquely tagged values and gets that name the tag they saw,
 *    each write and its reads form a cluster, and the history is
 *    linearizable iff no read returns before its write is invoked, no two
 *    clusters' forward zones overlap, and no backward zone lies inside a
 *    forward zone; O(n log n);
 *  - otherwise Wing & Gong's search with Lowe's memoization (a cache of
 *    (set of linearized ops, model state)), within a time and memory
 *    budget; a key that runs out of budget is UNKNOWN, never OK.
 * Both are cross-checked against a brute-force enumeration of every
 * real-time-consistent order on thousands of random small histories
 * (tests/unit/test_check.c), and against golden histories
 * (tests/check/golden/).
 *
 * Intervals are closed: a precedes b iff a.t_ret < b.t_inv.
 */
#ifndef OQB_CHECK_H
#define OQB_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "history.h"

enum check_verdict { CHECK_OK = 0, CHECK_VIOLATION = 1, CHECK_UNKNOWN = 2 };

const char *check_verdict_name(enum check_verdict v);

/* The model's state of one key.  A tagged value's identity is its tag;
 * when its set recorded the digest of its bytes (HISTORY_D_WRITTEN), a get
 * that recorded the digest of what it got (HISTORY_D_READ) must match that
 * too: the right tag on other bytes is a value nobody wrote. */
struct check_state {
	uint8_t present, kind;       /* kind: enum history_vkind of the value */
	uint8_t hasd;                /* d holds the written bytes' digest */
	uint64_t v;                  /* value identity (check_value_id) */
	uint64_t d;
};

/* Identity of the value an op wrote (set) or returned (get/incr): the tag
 * mixed into 64 bits for TAG, the number for NUM, the digest for DIGEST. */
uint64_t check_written_id(const struct history_op *o);
uint64_t check_returned_id(const struct history_op *o);

/* Applies o to *s: 1 if o's recorded output is what the model gives in
 * state *s (or is unchecked), with *s updated; 0 if not (*s unchanged). */
int check_step(const struct history_op *o, struct check_state *s);

/* Whether get returned a tagged value whose recorded digest differs from
 * `written`, the digest its set recorded (hasd: the set recorded one). */
int check_digest_differs(int hasd, uint64_t written, const struct history_op *get);

/* Whether an op takes part in the model (not nop/echo). */
int check_is_state_op(const struct history_op *o);

struct check_budget {
	double time_s;               /* per key; 0 = unlimited */
	size_t mem_bytes;            /* per key, memoization cache; 0 = unlimited */
	int no_fast;                 /* tests: always use the general search */
};

struct check_key_result {
	enum check_verdict verdict;
	int fast;                    /* decided by the unique-value fast path */
	size_t nops;                 /* state ops checked */
	size_t peak_bytes;           /* the search's cache at its largest */
	double secs;
	long bad;                    /* violation: index (in the caller's array)
				      * of the op that cannot be placed, or -1 */
	long other;                  /* an op it conflicts with, or -1 */
	char why[256];               /* violation or unknown: the reason */
};

/*
 * Checks the n ops of one key (all with the same key_hash; ops that are not
 * state ops are skipped).  Does not modify ops.  Fills *r; returns 0, or -1
 * if memory ran out before a verdict (then r->verdict is UNKNOWN).
 */
int check_key(const struct history_op *ops, size_t n, const struct check_budget *b,
	      struct check_key_result *r);

/*
 * Prints a violation: the key, the op that cannot be placed and the ops
 * around it (times relative to t0 in microseconds, client, op, values), to f.
 */
void check_explain(FILE *f, const struct history_op *ops, size_t n,
		   const struct check_key_result *r, uint64_t t0);

/* One op as text, in the golden-history syntax (check_text.c). */
void check_op_text(char *buf, size_t len, const struct history_op *o, uint64_t t0, int us);

/*
 * Parses a history in the text form (tests/check/golden/README):
 *   CLIENT INV RET OP KEY [ARG] [-> RESULT]
 * into a malloc'd array.  Returns 0, or -1 with err naming the line.
 * A first line "# expect: ok|violation|unknown" is returned in *expect
 * (-1 if absent).
 */
int check_text_parse(const char *text, const char *name, struct history_op **ops, size_t *n,
		     int *expect, char *err, size_t errlen);

#endif
