/*
 * rdmactr.h - an RDMA port's counters, read from sysfs, as deltas over a
 * process's measured life, and the five derived names every run.json
 * point carries (docs/verbs.md, "Device counters").
 *
 * What it reads: every file of ROOT/DEV/ports/PORT/hw_counters/ (the
 * driver's own counters: rxe's send_rnr_err, rcvd_rnr_err,
 * completer_retry_err, ...; mlx5's out_of_buffer, rnr_nak_retry_err,
 * local_ack_timeout_err, ...) and of ROOT/DEV/ports/PORT/counters/ (the
 * IBTA port counters, named "counters/NAME" so that counters/link_downed
 * and rxe's hw_counters/link_downed stay apart).  ROOT is
 * /sys/class/infiniband on a real host; a test passes its own tree.  No
 * list of names is built in: a device shows what it has.  "lifespan" (the
 * kernel's cache time for hw_counters, a setting) is not a counter and is
 * left out; a file that cannot be read or does not hold a number (rxe has
 * port counters it cannot answer) is left out and counted in "unreadable".
 *
 * The derived names are stable (tests and other tools assert on them):
 *   rnr_naks_sent      RNR NAKs this port answered with (its receive
 *                      queue was empty): rxe send_rnr_err, mlx5 out_of_buffer
 *   rnr_naks_received  RNR NAKs that came back to this port's requests:
 *                      rxe rcvd_rnr_err, mlx5 rnr_nak_retry_err
 *   retransmissions    go-back-N retries of a send queue after an ACK
 *                      timeout or a sequence-error NAK: rxe
 *                      completer_retry_err (rxe_comp.c counts it where
 *                      either cause restarts the send queue, so its
 *                      rcvd_seq_err is one of the causes, not added
 *                      again), mlx5 local_ack_timeout_err + packet_seq_err
 *                      + implied_nak_seq_err.  A resend after an RNR NAK
 *                      is not counted here (it is rnr_naks_received).
 *   duplicates         requests received again (already executed):
 *                      duplicate_request (both)
 *   out_of_sequence    requests received past a gap in the PSNs: rxe
 *                      out_of_seq_request, mlx5 out_of_sequence
 * Each is the sum of the sources the device has, or JSON null when it has
 * none of them (never 0 for "not counted").
 */
#ifndef OQB_RDMACTR_H
#define OQB_RDMACTR_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define RDMACTR_ROOT    "/sys/class/infiniband"
#define RDMACTR_MAX     256          /* counters kept per snapshot */
#define RDMACTR_NAMELEN 64
#define RDMACTR_NDERIVED 5

extern const char *const rdmactr_derived_names[RDMACTR_NDERIVED];

struct rdmactr_snap {
	char dev[64];
	unsigned port;
	uint64_t t_ns;                   /* clock_ns() when read */
	unsigned n, unreadable;
	char name[RDMACTR_MAX][RDMACTR_NAMELEN];
	uint64_t val[RDMACTR_MAX];
	char why[512];                   /* set: nothing could be read, and why */
};

/*
 * Reads every counter of port PORT of device DEV under root (NULL:
 * RDMACTR_ROOT) into *s.  Returns 0 with at least one counter, or -1 with
 * s->why saying which folder was missing or unreadable and the error.
 */
int rdmactr_read(const char *root, const char *dev, unsigned port, struct rdmactr_snap *s);

/*
 * What happened between two snapshots of one port, for a process's result:
 * {"device", "port", "host", "window_ns", "counters": {NAME: end - start},
 * "derived": {the five}, "unreadable"?, "reset"?}; a counter that went
 * down (the device was re-created) is left out and named in "reset".  When
 * either snapshot failed: the string "unavailable: WHY".  host may be NULL.
 */
json_t *rdmactr_delta_json(const struct rdmactr_snap *a, const struct rdmactr_snap *b, const char *host);

/* The five derived names from a {NAME: value} object (module comment). */
json_t *rdmactr_derive(const json_t *counters);

#endif
