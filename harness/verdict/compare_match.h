/*
 * compare_match.h - which point of NEW `oqb compare` judges against a
 * point of BASE, and the comparison of two runs' knees (compare.h).
 * Internal to compare.c.
 *
 * Two runs that both searched their knees (run.json "knee", found_by
 * "search") sweep fractions of their own knees, so they share no offered
 * load: their points are matched by system, sweep value and fraction of
 * each run's knee (result_knee_fraction, the same within
 * RESULT_FRACTION_TOL, result.h).  Every other pair of runs, including a
 * searched BASE against a NEW whose loads were frozen from it (`oqb run
 * --loads-from`), is matched on exact offered load (closed loop:
 * outstanding).  A point that finds no partner is "unmatched", never a
 * regression: it says the runs planned different points, not that NEW
 * got worse.
 *
 * The knees themselves are compared with the brackets their searches
 * ended in: each search only knows its knee to within [lo, hi] (the last
 * load sustained, the first one not), so knees whose brackets overlap
 * (one knee lies inside the other's bracket) are "same" whatever their
 * difference.  Apart, beyond the tolerance, the lower knee is a
 * regression (NEW lower) or an improvement (BASE lower): that run's
 * search saw a load unsustained, confirm times over, below one the other
 * sustained.  It is inconclusive instead when the lower run's own sweep
 * sustained loads past its knee (its search ran while the host was
 * busier: knee.past_knee), when one probe decided each of its loads
 * (search.confirm 0, and a busy host fails single probes), or when the
 * runs' canaries say the machine changed between them.  A capped search
 * (no load failed up to max_ops) has an open bracket: its knee is a lower
 * bound, never the lower knee.
 */
#ifndef OQB_COMPARE_MATCH_H
#define OQB_COMPARE_MATCH_H

#include <stddef.h>
#include <jansson.h>

enum verdict { SAME, WORSE, BETTER, UNDECIDED };

enum match_by { MATCH_LOAD, MATCH_KNEE };

/* MATCH_KNEE when both runs searched their knees, else MATCH_LOAD. */
enum match_by match_mode(const json_t *base, const json_t *nw);

/*
 * The index in NEW's points of the partner of BASE's point bp, skipping
 * the points used[] marks (NULL: none); under MATCH_KNEE the nearest
 * fraction of those that match.  -1 when there is none.
 */
long match_point(const json_t *base, const json_t *nw, const json_t *bp, enum match_by by,
		 const unsigned char *used);

/* The load column of point p of run: the offered ops/s ("closed/N" for
 * closed loop), or under MATCH_KNEE its fraction ("0.5xknee"), then
 * "@VALUE" for a sweep value. */
void match_load_text(char *buf, size_t len, const json_t *run, const json_t *p, enum match_by by);

/*
 * Compares the runs' knees (above), both searched.  env (NULL: none) is
 * the note that the machine changed between the runs.  Returns the JSON
 * {verdict, base_ops, base_bracket_ops, new_ops, new_bracket_ops,
 * change_pct, why} and sets *v and the table line; NULL when out of
 * memory.
 */
json_t *knee_compare(const json_t *base, const json_t *nw, double tol_pct, const char *env, enum verdict *v,
		     char *line, size_t len);

#endif
