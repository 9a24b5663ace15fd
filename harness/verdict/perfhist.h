/*
 * perfhist.h - `oqb history`: an append-only performance history, one JSON
 * line per run, and change-point detection over it (docs/history.md).
 *
 *   oqb history add RUN_DIR|run.json [--file H] [--commit SHA]
 *   oqb history show [--file H] [--config FP] [--testbed FP]
 *   oqb history detect [--file H] [--metric M] [--window N] [--pvalue P]
 *                      [--min-segment N] [--ack FILE] [--json]
 *   oqb history export-otava [--file H] [--config FP] [--testbed FP] [--out DIR]
 *   oqb history plot [--file H] --metric M [--point SYSTEM@LOAD] --out F.svg|F.png
 *
 * What it guarantees:
 *  - A line is written whole, with one write(2) in O_APPEND mode, and only
 *    after the file's last line was checked to be complete; lines are
 *    never rewritten.  Adding the same run (run_id and created_utc) twice
 *    is refused.
 *  - Every line carries a config fingerprint and a testbed fingerprint
 *    (16 hex digits each, below); detect, export and plot only ever put
 *    runs with the same two fingerprints into one series.  Runs of
 *    different testbeds are never compared.
 *  - A malformed line stops every command with FILE:LINE and what is
 *    wrong there; nothing is guessed.
 *
 * Config fingerprint: a hash of run.json's "config" (the config after its
 * --set overrides) with the keys that do not change what is measured
 * removed: name, description, seed, repeat, canary, checks, check,
 * timeouts, hosts, and the keys that belong to the testbed (server.cpus,
 * clients.cpus, verbs.addr, verbs.port, verbs.device).  Objects are
 * serialised with sorted keys and whole-valued reals as integers, so
 * reformatting a config or reordering its keys keeps the fingerprint.
 *
 * Testbed fingerprint: a hash of the "testbed" object stored on the line:
 * the server and client hosts, the driver host's CPU model, CPUs online,
 * SMT and governor, the kernel, the transport's name and device details
 * (name, GUID, model, firmware, link rate, MTU where run.json has them),
 * and the placement specs (server.cpus, clients.cpus, verbs.device).
 */
#ifndef OQB_PERFHIST_H
#define OQB_PERFHIST_H

#include "exitcodes.h"
#include <stddef.h>
#include <jansson.h>

#define PERFHIST_SCHEMA "oqbench.history/1"
#define PERFHIST_DEFAULT_FILE "results/history.jsonl"

/*
 * One history line made from a loaded run.json: commit overrides its
 * git_commit when not NULL.  Returns a new object, or NULL with err (a
 * run that did not finish, a run with no points).
 */
json_t *perfhist_record(const json_t *run, const char *commit, char *err, size_t errlen);

/* The config fingerprint of a config object (16 hex digits and a NUL). */
void perfhist_config_fp(const json_t *config, char fp[17]);

/*
 * Every line of a history file, in order, as a JSON array; a missing file
 * is an empty history when missing_ok.  NULL with err naming FILE:LINE
 * and the field for a malformed line.
 */
json_t *perfhist_load(const char *path, int missing_ok, char *err, size_t errlen);

/* The `oqb history` command; exit status (lib/exitcodes.h) 0, 1 (detect:
 * an unacknowledged regression), 2 (bad input; add: the run is in the
 * history already, nothing added), 5 (a file could not be written, or
 * gnuplot failed).  Until issue 49 a refused add was 1. */
int perfhist_main(int argc, char **argv);
#define PERFHIST_EXITS (OQB_EXITS_BASE | OQB_EXITS(OQB_EXIT_FAIL) | OQB_EXITS(OQB_EXIT_ERROR))

#endif
