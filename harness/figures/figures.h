/*
 * figures.h - `oqb figures [--runs DIR] [--out DIR] [--check]`: the
 * paper's figures (2, 6-11) in the paper's layout from the runs of one
 * reproduction, and one static HTML report with the paper's claims beside
 * what the runs measured (docs/figures.md).
 */
#ifndef OQB_FIGURES_H
#define OQB_FIGURES_H

/*
 * The `oqb figures` command.  0: report written (or, with --check, every
 * qualitative claim holds); 1: a claim fails or a figure could not be
 * drawn; 2: usage or input errors (no runs, a run a check needs missing).
 */
int figures_main(int argc, char **argv);

#endif
