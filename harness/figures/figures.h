/*
 * figures.h - `oqb figures [--runs DIR] [--out DIR] [--check]`: the
 * paper's figures (2, 6-11) in the paper's layout from the runs of one
 * reproduction, and one static HTML report with the paper's claims beside
 * what the runs measured (docs/figures.md).
 */
#ifndef OQB_FIGURES_H
#define OQB_FIGURES_H

#include "exitcodes.h"
#include "opts.h"

/*
 * The `oqb figures` command (lib/exitcodes.h).  0: report written (or,
 * with --check, every qualitative claim holds); 1: with --check, a claim
 * fails; 2: bad input (no runs, a run a check needs missing, an unreadable
 * claims file); 5: a figure or the report could not be drawn or written.
 */
int figures_main(int argc, char **argv);
extern const struct opts_cmd figures_cmd;   /* its table and exit statuses */

#endif
