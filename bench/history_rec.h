/*
 * history_rec.h - the client side of history recording (lib/history.h):
 * one recorder per client thread, called from one-line hooks in client.c.
 *
 *   hrec_issue()   after a request is encoded, before it is posted: takes
 *                  the invoke stamp, writes the value tag into a SET's value
 *                  (and reseals the request's checksum), remembers the op;
 *   hrec_commit()  when the event that commits the request was seen (the
 *                  caller's clock reading after the poll): stamps the
 *                  return, status and what a get/incr returned, and appends
 *                  the record;
 *   hrec_close()   after the thread ended: every request still pending is
 *                  written with an unknown outcome, the file is flushed.
 *
 * Keys are sampled by hash (history_key_sampled), never operations within
 * a key: every operation on a sampled key is recorded, including the load
 * phase's writes.  The cost is measured by bench/history-cost.sh.
 */
#ifndef OQB_HISTORY_REC_H
#define OQB_HISTORY_REC_H

#include <stddef.h>
#include <stdint.h>
#include "gen.h"
#include "transport.h"

struct hrec_conf {
	const char *dir;             /* directory of the history files */
	double keys;                 /* share of keys recorded, (0, 1] */
	uint64_t clock_bound_ns;     /* clock offset bound written in the header */
	int numeric;                 /* sets of 1-19 B write a decimal number
				      * (seq mod 10^len) instead of a tag, so
				      * that incr applies to them */
};

struct hrec;

/* Opens DIR/history-r<rank>-t<thread>.bin (DIR is created if missing).
 * pcap: the client's pending table size (a power of two). */
struct hrec *hrec_open(const struct hrec_conf *c, unsigned rank, unsigned thread,
		       uint32_t client_id, unsigned pcap, char *err, size_t errlen);

/* Before encoding: the value bytes to send for a SET on a sampled key
 * (a fixed filler with the tag of (client, seq) in its first 16 bytes), or
 * NULL (encode as usual).  Passing them to wire_encode_req saves resealing
 * the request after tagging it. */
const void *hrec_value(struct hrec *r, uint64_t seq, const struct gen_op *op);

/* After encoding, before posting: req/len is the encoded request (if its
 * value was not made by hrec_value, a SET is tagged here and resealed).
 * hrec_issue_at takes the invoke stamp from the caller: any clock_ns()
 * reading taken before the request is first posted (a send window's one
 * reading saves a clock read per op; earlier is safe, it only widens the
 * interval); hrec_issue reads the clock itself. */
void hrec_issue_at(struct hrec *r, uint64_t seq, const struct gen_op *op, uint8_t *req, uint32_t len,
		   uint64_t t_inv);
void hrec_issue(struct hrec *r, uint64_t seq, const struct gen_op *op, uint8_t *req, uint32_t len);

/* ev commits its request (the caller checked); now: clock_ns() after the
 * poll that returned it. */
void hrec_commit(struct hrec *r, const struct tp_event *ev, uint64_t now);

/* Writes pending records as unknown, flushes and frees.  0, or -1 with err
 * (a write failed).  NULL is a no-op. */
int hrec_close(struct hrec *r, char *err, size_t errlen);

#endif
