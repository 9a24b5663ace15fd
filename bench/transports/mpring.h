/*
 * mpring.h - bookkeeping of a multi-packet (striding) receive ring: the
 * part of recv_mode "mp" that needs no NIC, so that it can be tested here.
 *
 * The ring is `wqes` receive WQEs, each 2^log_strides strides of
 * 2^log_stride bytes, contiguous and in address order; the WQE posted with
 * sequence number q (its wr_id) uses buffer q % wqes.  The NIC fills WQEs
 * in posting order and, inside one WQE, strides in order; a message takes
 * ceil(len / stride) consecutive strides of a single WQE.  When the next
 * message does not fit, the NIC closes the WQE: either the completion of
 * the WQE's last message carries a "consumed" flag, or a filler completion
 * (no message) says from which stride on the WQE is unused.  A WQE whose
 * strides are all used is closed whether or not either of those comes.
 *
 * Completions name (WQE, first stride, length) but can come in another
 * order than the NIC placed the messages (completions of different QPs on
 * one CQ).  mpring puts them back in placement order -- which is the SRQ's
 * order, Rule 1 -- and hands them out with dense tickets 0, 1, 2, ...: the
 * executor's slot numbers.  Tickets are released in order; a WQE may be
 * posted again once it is closed and every message in it was released.
 *
 * Initially WQEs 0 .. wqes-1 are taken to be posted (the caller posts them
 * right after mpring_new).  Not thread-safe: one worker owns a ring.
 */
#ifndef OQB_MPRING_H
#define OQB_MPRING_H

#include <stddef.h>
#include <stdint.h>

struct mpring_conf {
	unsigned log_stride;     /* bytes per stride = 2^log_stride, 6..16 */
	unsigned log_strides;    /* strides per WQE = 2^log_strides, 1..16 */
	unsigned wqes;           /* WQEs in the ring, a power of two >= 2 */
	unsigned max_out;        /* tickets handed out and not yet released, >= 1 */
};

struct mpring_msg {
	uint64_t ticket;         /* dense, from 0, in placement order */
	uint64_t wqe;            /* sequence number of the WQE it is in */
	unsigned stride;         /* first stride inside that WQE */
	uint32_t len;            /* bytes */
	size_t off;              /* byte offset of the message in the ring */
};

struct mpring_stats {
	uint64_t messages;       /* message completions accepted */
	uint64_t fillers;        /* WQEs closed by a filler completion */
	uint64_t consumed;       /* WQEs closed by a message's consumed flag */
	uint64_t strides_used;   /* strides holding messages */
	uint64_t strides_wasted; /* strides left empty by a WQE's close */
	uint64_t reposts;        /* WQEs handed back for posting */
	uint64_t rejected;       /* impossible reports refused */
};

struct mpring;

/* NULL with err filled for a bad geometry or no memory. */
struct mpring *mpring_new(const struct mpring_conf *c, char *err, size_t errlen);
void mpring_free(struct mpring *r);

/*
 * A message completion: len bytes at stride `stride` of WQE `wqe`;
 * consumed != 0 when the NIC closed the WQE after it.  0, or -1 for an
 * impossible report -- a WQE that is not posted, a stride outside the WQE,
 * len 0 or running past the WQE's end, overlap with a message already
 * reported, a stride at or after the WQE's close -- in which case nothing
 * changes and mpring_error() says what was wrong.
 */
int mpring_arrive(struct mpring *r, uint64_t wqe, unsigned stride, uint32_t len, int consumed);

/* A filler completion: WQE `wqe` holds no message at `stride` or after
 * (stride may be 2^log_strides: closed exactly at its end; for a WQE that
 * is full, and so closed already, that changes nothing and returns 0 even
 * after the WQE was posted again).  0 or -1 as for mpring_arrive, also
 * for a close before a message already reported in that WQE or a second
 * close. */
int mpring_fill(struct mpring *r, uint64_t wqe, unsigned stride);

/* The next message in placement order, if everything before it is known
 * and fewer than max_out tickets are out: 1 and *m; else 0. */
int mpring_next(struct mpring *r, struct mpring_msg *m);

/* Releases a ticket; tickets are released in the order handed out (the
 * oldest first).  0, or -1 for any other ticket (nothing changes). */
int mpring_release(struct mpring *r, uint64_t ticket);

/* The next WQE to post again, in posting order: 1 and *wqe = its new
 * sequence number (the old one + wqes; same buffer); else 0.  Each call
 * that returns 1 counts the WQE as posted. */
int mpring_repost(struct mpring *r, uint64_t *wqe);

/* Byte offset of (wqe, stride) in the ring. */
size_t mpring_offset(const struct mpring *r, uint64_t wqe, unsigned stride);

size_t mpring_bytes(const struct mpring *r);       /* wqes << (log_stride + log_strides) */
size_t mpring_wqe_bytes(const struct mpring *r);
uint64_t mpring_posted(const struct mpring *r);    /* WQE sequence numbers posted so far */
void mpring_get_stats(const struct mpring *r, struct mpring_stats *st);
const char *mpring_error(const struct mpring *r);  /* the last refusal, "" if none */

#endif
