/*
 * crashtest.h - `oqb crashtest CONFIG`: kill a durable oq server over and
 * over under a write-heavy load and prove that no committed put is lost.
 */
#ifndef OQB_CRASHTEST_H
#define OQB_CRASHTEST_H

#include "exitcodes.h"
#include "opts.h"

/* Exit status (lib/exitcodes.h): 0 every crash survived with every commit,
 * 1 a commit lost or a crash not survived, 2 bad input, 5 the test could
 * not run (no server binary, its directory, the server did not start). */
int crashtest_main(int argc, char **argv);
extern const struct opts_cmd crashtest_cmd;

#endif
