/*
 * binbuild.h - the build of the binaries a run starts, asked of them.
 *
 * The driver links no transport or back end (docs/architecture.md,
 * "Rooms"), so it never describes its own build: it runs
 * `BIN_DIR/oqb-server --build-info` on the server's host and
 * `BIN_DIR/oqb-client --build-info` on every client host, through the
 * run's launcher, and records what they say.  The reference is the
 * server's build; a process of another build fails the run before any
 * point starts (and, should a binary change during the run, its point
 * before GO: rendezvous.c compares every HELLO's build_id).
 */
#ifndef OQB_BINBUILD_H
#define OQB_BINBUILD_H

#include <stddef.h>
#include <jansson.h>

#include "launch.h"
#include "runconf.h"

/*
 * Runs `bin_dir/prog --build-info` on host through l (at most timeout_ms)
 * and returns its JSON (buildinfo_json's shape, bench/buildinfo.h), or
 * NULL with err naming the host, the binary and what it said.
 */
json_t *binbuild_ask(struct launcher *l, const char *host, const char *bin_dir, const char *prog,
		     int timeout_ms, char *err, size_t errlen);

/* A build's id ("" when b has none). */
const char *binbuild_id(const json_t *b);

/* Whether build b has transport name compiled in. */
int binbuild_has_transport(const json_t *b, const char *name);

/* Build b's description of transport name (borrowed), or NULL. */
json_t *binbuild_transport(const json_t *b, const char *name);

/* Asked of `BIN_DIR/oqb-server` on the driver's host (`oqb ab`'s BASE and
 * NEW): its build JSON, or NULL with err. */
json_t *binbuild_local(const char *bin_dir, char *err, size_t errlen);

/*
 * Asks the binaries of a run (oqb-server on rc's server host, oqb-client on
 * each client host, all in bin_dir) for their build and checks them: one
 * build id for all (the server's; with expect_id, that one, which
 * expect_from names, e.g. "--base DIR's oqb-server"), with rc's transport
 * and, for system erpc, eRPC in it.  Returns the run's record
 * {build_id, server: the server's build, processes: [{host, role,
 * bin_dir, build_id}]}, or NULL with err naming both ids and bin_dirs;
 * then *no_answer (if not NULL) is 1 when a host gave no build at all (the
 * launcher, the host or its binary failed: an error, not bad input).
 */
json_t *binbuild_run(struct launcher *l, const struct runconf *rc, const char *bin_dir, const char *expect_id,
		     const char *expect_from, int *no_answer, char *err, size_t errlen);

#endif
