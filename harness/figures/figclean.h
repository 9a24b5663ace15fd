/*
 * figclean.h - the clean load of a claim: the highest offered load at which
 * neither of the two numbers a claim compares is flagged and neither point
 * is saturated (the claims table, figclaims.c; docs/figures.md).
 *
 * Why.  The claims table compares OQ with a baseline at the run's peak (the
 * knee, where the systems saturate by definition) and at 80 % of it, where
 * on a small host the single client thread may fall behind its schedule.
 * Both cells can then be caveated at once, and the reader learns only that
 * nothing holds.  The clean load is the one comparison that no self-check
 * of either point warned about; where none exists, the reason says which
 * system was unclean at how many loads, and why.
 *
 * Rule.  Only loads at which both systems have a point with a number
 * (value >= 0, the baseline's > 0) count.  A point is clean when it is not
 * saturated and no self-check warned about the number compared (for a
 * median claim the p50, for a tail claim the P99: run.json's flagged_by).
 * Of the loads where both points are clean, the highest wins; there is no
 * upper bound at the peak (a load above the knee where neither system
 * saturated is as clean as one below it), and the fraction of the peak is
 * reported beside it.  Pure: no I/O, no run.json (tests/unit/test_figclean.c).
 */
#ifndef OQB_FIGCLEAN_H
#define OQB_FIGCLEAN_H

#include <stddef.h>

/* One system's point at one offered load, as the choice sees it. */
struct fc_point {
	double offered;    /* offered load, ops/s */
	double value;      /* the number compared (p50 or P99, ns) */
	int saturated;
	int flagged;       /* a self-check warned about the number compared */
	const char *warns; /* which, "a,b" (checks_point_flagged); NULL or "": unnamed */
};

struct fc_result {
	int found;        /* 1: a load where both points are clean */
	double load;      /* that load in ops/s; NAN when none */
	double frac;      /* load / peak; NAN when none or without a peak */
	double a, b;      /* the two numbers there (a: OQ, b: the baseline) */
	double change;    /* 100 (a / b - 1), percent; NAN when none */
	size_t nloads;    /* loads at which both systems have a number */
	size_t nclean;    /* of them, where both points are clean */
	char why[720];    /* when !found: why none, as a sentence's tail (two systems' descriptions) */
};

/*
 * Chooses the clean load of a claim that compares system name_a (points a,
 * na of them, any order) with name_b (points b) on a run whose peak is
 * peak ops/s (NAN: unknown).  Fills r; when there is none, r->why says so:
 * "no load where both oq and rawrpc have a number", or "no load where both
 * are clean (of 7 loads): oq flagged by schedule_lag at every load;
 * rawrpc clean at 5 of 7 loads (saturated at 2)".  A system unclean at
 * every load is "saturated at every load", "flagged by a, b at every
 * load" or "saturated at 2 loads and flagged by a at the other 5"; when
 * both read the same, "both saturated at every load".
 */
void fc_clean_load(const struct fc_point *a, size_t na, const struct fc_point *b, size_t nb, const char *name_a,
		   const char *name_b, double peak, struct fc_result *r);

/*
 * Like with like.  A point whose kept trials ran on two floors of the
 * machine (canary regimes: docs/trust.md) has numbers per regime; a claim
 * compares one floor's trials with the other point's on the same floor,
 * never a mix with a mix.  One regime of a point as the pairing sees it:
 * its canary (ns), its kept trials, and whether it was judged on its own
 * (a regime of a mixed point carries its own trial_agreement from 3
 * trials on; a point on one floor is one regime, judged by its checks).
 */
struct fc_regime {
	double canary;
	int trials;
	int judged;
};

/*
 * Chooses the regimes of points a (na regimes) and b (nb) to compare: a
 * judged pair on one floor (result_regime_same with factor, the rule the
 * run and the finding apply) whose smaller side holds the most trials;
 * ties go to more trials in all, then to the first.  Sets *ia and *ib
 * and returns 0, or returns -1 when no judged pair shares a floor: then
 * the points are compared as they stand, and their checks say why.
 */
int fc_pair_regimes(const struct fc_regime *a, size_t na, const struct fc_regime *b, size_t nb, double factor,
		    int *ia, int *ib);

/* Copies the check list "a,b,c" into buf as "a, b, c" (at most len bytes). */
void fc_list_spaced(char *buf, size_t len, const char *warns);

/* The check list "a,b,c" without the names of the list drop ("x" or "x,y"),
 * into buf (len bytes). */
void fc_list_without(char *buf, size_t len, const char *warns, const char *drop);

#endif
