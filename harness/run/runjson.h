/*
 * runjson.h - run.json: the self-describing result of one `oqb run`.
 *
 *   {"schema":"oqbench.run/2" (result.h), "name", "run_id", "created_utc", "status":
 *    "ok"|"failed"|"interrupted", "error": null | {message, point, host,
 *    role, rank}, "config": <the config file, verbatim>, "config_path",
 *    "hosts": {...}, "git_commit", "git_dirty", "versions": {...},
 *    "transport": {"name", ...}, "points": [...]}
 *
 * It is rewritten after every point (atomically, by result_write), so
 * an interrupted run leaves the points it finished.  This file makes the
 * skeleton's metadata; harness/result/ writes and reads the file.
 */
#ifndef OQB_RUNJSON_H
#define OQB_RUNJSON_H

#include <stddef.h>
#include <jansson.h>
#include "runconf.h"

/*
 * The skeleton with metadata filled in and no points.  src_dir is the
 * source checkout to describe with git (NULL: unknown).
 */
json_t *runjson_new(const struct runconf *rc, const char *run_id, const char *src_dir);

/*
 * Records the binaries' build (binbuild_run's record; NULL: nothing) in
 * run: "build" (id, the server's build-info, each host's id and bin_dir),
 * transport.build and erpc_build from the server's transports, and the
 * compiler and library versions in "versions".
 */
void runjson_set_build(json_t *run, const struct runconf *rc, const json_t *build);

/*
 * Runs argv (no shell) and returns the first line of its stdout in out
 * (without the newline).  Returns 0 if it exited 0, else -1.
 */
int run_capture(char *const *argv, char *out, size_t cap);

/* run_capture with a bound: a child still running after timeout_ms (0:
 * no bound) is killed, by its PID and process group, and -2 comes back. */
int run_capture_within(char *const *argv, char *out, size_t cap, int timeout_ms);

/* The driver host's CPU model, CPUs, SMT, governor and load average. */
json_t *runjson_environment(void);

/* The versions object: compiler, kernel, library versions. */
json_t *runjson_versions(void);

#endif
