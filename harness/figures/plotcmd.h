/*
 * plotcmd.h - `oqb plot RUN_DIR`: figures from a run.json.
 *
 * Extracts the data each gnuplot script in plot/ needs into a text file
 * next to run.json and runs `gnuplot -c plot/SCRIPT.gp DATA OUT ...` for
 * SVG and PNG.  The scripts never read run.json themselves, so they can be
 * reused on data from elsewhere.
 */
#ifndef OQB_PLOTCMD_H
#define OQB_PLOTCMD_H

#include "exitcodes.h"
#include "opts.h"
#include <stddef.h>

/*
 * The plot/ directory: $OQB_PLOT_DIR, else the first plot/ found going up
 * from the binary's directory.  0, or -1 when there is none.
 */
int plot_find_dir(char *out, size_t cap);

/* The `oqb plot` command: 0 drawn, 2 bad input (no readable run.json),
 * 5 gnuplot or a file write failed (lib/exitcodes.h). */
int plot_main(int argc, char **argv);
extern const struct opts_cmd plot_cmd;   /* its table and exit statuses */

#endif
