/*
 * buildinfo.h - what this build of oqbench has, for the driver.
 *
 * The driver (harness/) links no transport or back end: it asks the
 * binaries it starts what they are, by running `oqb-server --build-info`
 * and `oqb-client --build-info` through its launcher on every host of a
 * run, from that host's bin_dir, and compares their build ids (docs/
 * architecture.md, "Rooms").  Everything here is read from the transport
 * and back-end tables, so no transport is named in this module.
 */
#ifndef OQB_BUILDINFO_H
#define OQB_BUILDINFO_H

#include <jansson.h>

/* Whether transport `name` ("shm", "verbs", "erpc") is built in. */
int buildinfo_has_transport(const char *name);

/* Transport `name`'s build description from the transport table (for
 * erpc: the eRPC build it links; for verbs: its receive modes, MP SRQ and
 * XRC), or null JSON when it is not built or has none.  New reference. */
json_t *buildinfo_transport(const char *name);

/*
 * This build's id: 16 hex digits, a hash of every source, header and
 * compiler flag (the Makefile's BUILD_ID), the same in every binary of one
 * build.  Stored after the marker "oqb-build-id:" so that a copy of a
 * binary shows which build it is (`oqb-server --build-id`).
 */
const char *buildinfo_id(void);

/*
 * Everything the driver records of a build: {build_id, program, compiler,
 * flags, transports: {NAME: its build description or {}}, backends: [...],
 * libraries: {jansson, libzstd, libpmem_api}}.  program is argv[0]'s
 * last part.  New reference.
 */
json_t *buildinfo_json(const char *program);

/*
 * The questions a binary answers before it parses its options, so that
 * they work on any build whatever its option table (bench/binquery.c):
 *   --build-info                    buildinfo_json() on stdout, exit 0;
 *   --check-plugin (oqb-server, with --plugin-path PATH): loads the
 *     plugin as the server would and prints its identity as JSON, exit
 *     0, or the loader's error on stderr, exit 2.
 * Returns -1 when argv asks none of them, else the exit status.
 */
int binquery_answer(const char *program, int argc, char **argv);

#endif
