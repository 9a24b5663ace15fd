/*
 * tagtrace.h - test-only: every measured request's window and tag, to
 * validate the tagger against the stalls a test made (docs/trust.md,
 * "Validating the tagger"; bench/tagger-validate.sh).
 *
 * Off unless OQB_TAG_TRACE names a directory; then each client thread
 * keeps, for every request whose intended send is in the measured window,
 * its intended send and its end (CLOCK_MONOTONIC ns, the clock of
 * lib/clock.h and of Python's time.monotonic), its tag (lib/stall.h
 * STALL_TAG_* bits, as the client judged it), the worker's mark on the
 * reply (bench/wire.h, WIRE_MARK_FAULT included) and its class, and
 * writes them when the client ends, to
 * DIR/tagtrace-<rank>-<thread>.tsv.  Costs the request path one load and
 * one branch when off.
 */
#ifndef OQB_TAGTRACE_H
#define OQB_TAGTRACE_H

#include <stddef.h>
#include <stdint.h>

struct tagtrace;

/* The trace of client rank's thread, or NULL: when OQB_TAG_TRACE is not
 * set (err left empty), or with err saying why it cannot be kept. */
struct tagtrace *tagtrace_open(unsigned rank, unsigned thread, char *err, size_t errlen);

/* One request (the rare path: only when tracing). */
void tagtrace_add(struct tagtrace *tt, uint64_t t_int, uint64_t end, unsigned tag, unsigned mark, unsigned cls);

/* Writes the file and frees; 0, or -1 with err.  NULL is a no-op. */
int tagtrace_close(struct tagtrace *tt, char *err, size_t errlen);

#endif
