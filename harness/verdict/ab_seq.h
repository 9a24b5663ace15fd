/*
 * ab_seq.h - `oqb ab`'s sequential design: rounds are added until every
 * gated metric of every point is decided, with the false-alarm rate held
 * over all the looks.
 *
 * A look is a comparison (compare_eval) after round k; the gate looks
 * first when --trials rounds are kept and then after every round, up to
 * --max-trials.  Each look spends part of the gate's alpha (Lan-DeMets
 * alpha spending with the Pocock-type function
 *     alpha(t) = alpha ln(1 + (e - 1) t),
 * t the kept rounds over --max-trials, capped at 1): the look judges at
 * alpha(t_k) - alpha(t_k-1), Holm-corrected over its points and metrics.
 * By the union bound the chance that any look calls an A/A pair a
 * regression or an improvement is at most the sum of what the looks
 * spent, alpha(t_last) <= alpha, however the looks' tests depend on each
 * other (they share rounds).  The Pocock-type function spends most of
 * alpha early (62 % at half the budget), where an O'Brien-Fleming-type one
 * would spend almost none: with a few rounds a rank test can reach only so
 * small a p, so early looks need the larger share to decide at all.
 *
 * A gated metric (p50, p99, achieved_ops; the tagged share is reported,
 * never gated) is decided at the first look where compare calls it same,
 * regression or improvement; from then on its verdict and its numbers
 * are those of that look, and later rounds do not move it (a decided
 * metric consumes no more rounds; the gate stops when all are decided).
 * "same" is compare's tolerance rule (a move within the tolerance), which
 * spends no alpha: it is not a false alarm when wrong, a missed change,
 * and the tolerance sets how large a change it can miss.
 */
#ifndef OQB_AB_SEQ_H
#define OQB_AB_SEQ_H

#include <jansson.h>

/* alpha(t) above: 0 at t <= 0, alpha at t >= 1. */
double ab_spend(double alpha, double t);

struct ab_seq {
	double alpha;       /* the gate's, over every look */
	unsigned budget;    /* --max-trials: t = rounds / budget */
	double spent;       /* alpha(t) of the last look */
	json_t *decided;    /* "POINT/METRIC" -> the metric's row at its decision, with rounds_needed */
	json_t *looks;      /* [{rounds, alpha, undecided}] */
};

/* 0, or -1 when out of memory. */
int ab_seq_init(struct ab_seq *s, double alpha, unsigned budget);
void ab_seq_free(struct ab_seq *s);

/* The alpha the look after `rounds` kept rounds judges at; records it as
 * spent. */
double ab_seq_alpha(struct ab_seq *s, unsigned rounds);

/* Takes a look's comparison (compare_eval's document): records each gated
 * metric decided for the first time, at `rounds`.  Returns the gated
 * metrics of matched points still undecided (0: the gate can stop). */
size_t ab_seq_look(struct ab_seq *s, const json_t *doc, unsigned rounds);

/*
 * Puts the decisions into doc (the last look's comparison): each gated
 * metric gets its decided row (rounds_needed, decided true) or, when
 * never decided, the last look's with decided false and rounds_needed
 * null; each point's verdict follows its metrics again (regression,
 * improvement, inconclusive, same, as compare's), the summary's counts
 * too, summary.sequential describes the design and its looks, and the
 * table gets one "rounds needed" line per point.
 */
void ab_seq_final(struct ab_seq *s, json_t *doc);

#endif
