/*
 * compare_match.c - matching BASE's points to NEW's, by load or by
 * fraction of each run's knee, and the two knees compared with their
 * brackets (compare_match.h).
 */
#include "compare_match.h"
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum match_by match_mode(const json_t *base, const json_t *nw)
{
	return isfinite(result_knee(base, NULL, NULL)) && isfinite(result_knee(nw, NULL, NULL)) ? MATCH_KNEE
											      : MATCH_LOAD;
}

/* Two strings alike, NULL only as NULL. */
static int same_str(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

/* Same system and sweep key and value (two points without a sweep are at
 * the same sweep value). */
static int same_place(const json_t *a, const json_t *b)
{
	const char *sa = result_system(a);
	const char *sb = result_system(b);
	return sa && sb && strcmp(sa, sb) == 0 && same_str(result_sweep_key(a), result_sweep_key(b)) &&
	       json_equal(result_sweep_value(a), result_sweep_value(b));
}

long match_point(const json_t *base, const json_t *nw, const json_t *bp, enum match_by by,
		 const unsigned char *used)
{
	const json_t *pts = result_points(nw), *p;
	double fb = by == MATCH_KNEE ? result_knee_fraction(base, bp) : NAN, best = INFINITY;
	long found = -1;
	size_t i;

	json_array_foreach(pts, i, p) {
		if ((used && used[i]) || !same_place(bp, p))
			continue;
		if (by == MATCH_KNEE) {
			double fn = result_knee_fraction(nw, p);
			if (result_fraction_same(fb, fn) && fabs(fn - fb) < best) {
				best = fabs(fn - fb);
				found = (long)i;
			}
			continue;
		}
		/* exact load: result_find_point's rule, on this one point */
		json_t *one = json_pack("[O]", p);
		int same = one && result_find_point(one, bp) != NULL;
		json_decref(one);
		if (same)
			return (long)i;
	}
	return found;
}

void match_load_text(char *buf, size_t len, const json_t *run, const json_t *p, enum match_by by)
{
	double frac = by == MATCH_KNEE ? result_knee_fraction(run, p) : NAN;
	if (isfinite(frac))
		snprintf(buf, len, "%.3gxknee", frac);
	else if (!isnan(result_offered(p)))
		snprintf(buf, len, "%.0f", result_offered(p));
	else
		snprintf(buf, len, "closed/%.0f", result_outstanding(p));
	if (result_has_sweep(p)) {
		char *v = json_dumps(result_sweep_value(p), JSON_COMPACT | JSON_ENCODE_ANY);
		size_t l = strlen(buf);
		snprintf(buf + l, len - l, "@%.20s", v ? v : "?");
		free(v);
	}
}

/* "[143000, 156000]" ("[143000, none failed]" for a capped search). */
static void bracket_text(char *buf, size_t len, double lo, double hi)
{
	if (isfinite(hi))
		snprintf(buf, len, "[%.0f, %.0f]", lo, hi);
	else
		snprintf(buf, len, "[%.0f, none failed]", lo);
}

static json_t *bracket_json(double lo, double hi)
{
	return json_pack("[f, o]", lo, isfinite(hi) ? json_real(hi) : json_null());
}

/* Why run's knee may have come out low on its own: its sweep sustained
 * loads past the knee, or single probes decided its loads.  "" if not. */
static void low_knee_reason(char *buf, size_t len, const json_t *run, const char *side)
{
	double past, sat, confirm = result_knee_confirm(run);

	result_knee_past(run, &past, &sat);

	buf[0] = '\0';
	if (past > 0 && sat < past)
		snprintf(buf, len, "%s's own sweep sustained %.0f of its %.0f points past its knee, so its search "
			 "ran while the host was busier and its knee came out low; run it again", side, past - sat,
			 past);
	else if (confirm == 0)
		snprintf(buf, len, "one probe decided each of %s's loads (search.confirm 0), and a busy host fails "
			 "single probes; set arrival.loads_ops.search.confirm to 1 or more", side);
}

json_t *knee_compare(const json_t *base, const json_t *nw, double tol_pct, const char *env, enum verdict *v,
		     char *line, size_t len)
{
	static const char *const names[] = { "same", "regression", "improvement", "inconclusive" };
	double blo, bhi, nlo, nhi, kb = result_knee(base, &blo, &bhi), kn = result_knee(nw, &nlo, &nhi);
	double change = kn / kb - 1;
	char why[840], bb[64], nb[64];

	bracket_text(bb, sizeof bb, blo, bhi);
	bracket_text(nb, sizeof nb, nlo, nhi);
	*v = SAME;
	if (blo <= nhi && nlo <= bhi) {
		snprintf(why, sizeof why, "the knees differ by %+.1f%%, inside the brackets their searches ended in "
			 "(BASE %s, NEW %s): within what the searches can tell apart", change * 100, bb, nb);
	} else if (fabs(change) * 100 <= tol_pct) {
		snprintf(why, sizeof why, "the brackets are apart (BASE %s, NEW %s), but the knees differ by "
			 "%+.1f%%, within the tolerance of %g%%", bb, nb, change * 100, tol_pct);
	} else {
		int worse = kn < kb;
		char low[320];
		low_knee_reason(low, sizeof low, worse ? nw : base, worse ? "NEW" : "BASE");
		if (low[0] || env) {
			*v = UNDECIDED;
			snprintf(why, sizeof why, "%s by %.0f%% beyond both brackets (BASE %s, NEW %s), but %s",
				 worse ? "lower" : "higher", fabs(change) * 100, bb, nb, low[0] ? low : env);
		} else {
			*v = worse ? WORSE : BETTER;
			snprintf(why, sizeof why, "%s by %.0f%%: %s's search saw %.0f ops/s unsustained, below the "
				 "%.0f ops/s %s sustained (BASE %s, NEW %s)", worse ? "lower" : "higher",
				 fabs(change) * 100, worse ? "NEW" : "BASE", worse ? nhi : bhi, worse ? blo : nlo,
				 worse ? "BASE" : "NEW", bb, nb);
		}
	}
	snprintf(line, len, "%-9s %12s  %.0f %s -> %.0f %s (%+.1f%%)  %s%s%s", "knee", "ops/s", kb, bb, kn, nb,
		 change * 100, *v == WORSE ? "REGRESSION: knee lower" : *v == BETTER ? "improved: knee higher" :
		 *v == UNDECIDED ? "inconclusive" : "same", *v == WORSE || *v == BETTER ? "; " : " (",
		 why);
	if (*v != WORSE && *v != BETTER) {
		size_t l = strlen(line);
		snprintf(line + l, len - l, ")");
	}
	return json_pack("{s:s, s:f, s:o, s:f, s:o, s:f, s:s}", "verdict", names[*v], "base_ops", kb,
			 "base_bracket_ops", bracket_json(blo, bhi), "new_ops", kn, "new_bracket_ops",
			 bracket_json(nlo, nhi), "change_pct", change * 100, "why", why);
}
