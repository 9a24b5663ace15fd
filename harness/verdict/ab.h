/*
 * ab.h - `oqb ab CONFIG --base BINDIR --new BINDIR`: the A/B regression
 * gate for CI (docs/ci.md).
 *
 * It runs the config with BASE's binaries and with NEW's on the same
 * hosts, alternating in rounds whose order is shuffled (randomised
 * multiple interleaved trials, RMIT): each round runs every point once
 * with each side, both sides with the round's seed, so the two see the
 * same schedules and the same drift of the machine.  Every round's run is
 * kept.  After --trials rounds it judges each point as `oqb compare`
 * does from the trials (Mann-Whitney U, Benjamini-Hochberg over all
 * tests, tolerance AND significance); while points are inconclusive it
 * adds rounds, up to --max-trials.  The two sides' trials are paired by
 * round, and a round whose two canaries differ is left out of that point.
 * A noise pre-check (the canary, oqb-floor, several times) before the
 * first round gives up when the machine is too noisy; the same check
 * after the last round records whether the machine changed meanwhile.
 *
 * Writes DIR/ab.json (everything), DIR/junit.xml (one test case per
 * point) and DIR/summary.md (a comment a CI job can post).
 *
 * Exit status (lib/exitcodes.h, the one table): 0 no regression (nothing
 * undecided), 1 a regression, 2 bad input, 3 inconclusive, 4 too noisy to
 * judge, 5 a run failed.  Until issue 49 inconclusive was 2, too noisy 3
 * and bad input 4 (docs/ci.md lists the change).
 */
#ifndef OQB_AB_H
#define OQB_AB_H

#include "opts.h"

int ab_main(int argc, char **argv);
extern const struct opts_cmd ab_cmd;

#endif
