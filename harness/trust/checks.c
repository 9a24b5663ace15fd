/*
 * checks.c - the self-checks on every measured point (checks.h).
 *
 * Every check is computed from merged histograms or from raw samples, never
 * from averaged percentiles.  Thresholds are the config's ("checks") or the
 * defaults below, and every check writes the threshold it used beside its
 * value, so a reader can judge a warning without the config at hand.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "hist.h"
#include "result.h"
#include "stall.h"
#include "stats.h"
#include "rng.h"
#include "stattest.h"

#define ARRIVAL_FLOOR_NS 2000   /* arrival fit of a client's actual gaps: those above it (memoryless) */

const struct conf_key checks_schema[] = {
	{ "lag_ns", CONF_NUM, 0, 0, 1e12, NULL, NULL, "schedule lag: a send this much later than intended lags (default 20000)" },
	{ "lag_share", CONF_NUM, 0, 0, 1, NULL, NULL, "schedule lag: warn above this share of lagging sends (default 0.05)" },
	{ "arrival_p", CONF_NUM, 0, 0, 1, NULL, NULL, "arrival fit: warn below this Bonferroni-corrected Anderson-Darling p (default 0.001)" },
	{ "ci_p99", CONF_NUM, 0, 0, 100, NULL, NULL, "warn above this relative width of the P99 95% CI (default 0.25, compare's p99 tolerance)" },
	{ "ci_p999", CONF_NUM, 0, 0, 100, NULL, NULL, "warn above this relative width of the P99.9 95% CI (default 0.5)" },
	{ "halves_p50", CONF_NUM, 0, 1, 1000, NULL, NULL, "stationarity: warn when the window's halves' p50 differ by more than this factor, CIs apart (default 1.25)" },
	{ "halves_p99", CONF_NUM, 0, 1, 1000, NULL, NULL, "stationarity: the same for p99 (default 10: one stall of a shared host moves a half's p99 by several times)" },
	{ "steal", CONF_NUM, 0, 0, 1, NULL, NULL, "interference: warn above this share of host CPU time stolen (default 0.02)" },
	{ "cpu_share", CONF_NUM, 0, 0, 1, NULL, NULL, "interference: warn when a spinning thread got less than this share of its CPU's time (default 0.9)" },
	{ "stall_share", CONF_NUM, 0, 0, 1, NULL, NULL, "stalls: warn when a spinning thread stood still (its loop's clock jumped) for more than this share of the window (default 0.008)" },
	{ "canary_drift", CONF_NUM, 0, 1, 1000, NULL, NULL, "warn when the point's canary is off the run's median canary by more than this factor (default 1.5)" },
	{ "trials_p50", CONF_NUM, 0, 0, 100, NULL, NULL, "trial agreement: warn above this relative width of the trials' p50 CI (default 0.10: a rerun within 7 %)" },
	{ "trials_p99", CONF_NUM, 0, 0, 100, NULL, NULL, "trial agreement: warn above this relative width of the trials' P99 CI (default 0.35: a rerun within compare's 25 % p99 tolerance)" },
	{ NULL, 0, 0, 0, 0, NULL, NULL, NULL },
};

void checks_defaults(struct check_conf *c)
{
	c->lag_ns = 20000;
	c->lag_share = 0.05;
	c->arrival_p = 0.001;
	c->ci_p99 = 0.25;
	c->ci_p999 = 0.50;
	c->halves_p50 = 1.25;
	c->halves_p99 = 10;
	c->steal = 0.02;
	c->cpu_share = 0.9;
	c->stall_share = 0.008;
	c->canary_drift = 1.5;
	/* A 95 % CI of relative width w means a run's value varies with a
	 * standard deviation of about w / 3.92; two runs' values then differ
	 * by less than 1.96 * sqrt(2) * w / 3.92 = 0.71 w in 95 % of reruns.
	 * So w <= 0.35 says a rerun lands within +-25 % (compare's p99
	 * tolerance), and w <= 0.10 within +-7 % for p50. */
	c->trials_p50 = 0.10;
	c->trials_p99 = 0.35;
}

static void num_from(const json_t *o, const char *k, double *v)
{
	const json_t *j = json_object_get(o, k);
	if (json_is_number(j))
		*v = json_number_value(j);
}

void checks_from_json(struct check_conf *c, const json_t *obj)
{
	checks_defaults(c);
	if (!json_is_object(obj))
		return;
	num_from(obj, "lag_ns", &c->lag_ns);
	num_from(obj, "lag_share", &c->lag_share);
	num_from(obj, "arrival_p", &c->arrival_p);
	num_from(obj, "ci_p99", &c->ci_p99);
	num_from(obj, "ci_p999", &c->ci_p999);
	num_from(obj, "halves_p50", &c->halves_p50);
	num_from(obj, "halves_p99", &c->halves_p99);
	num_from(obj, "steal", &c->steal);
	num_from(obj, "cpu_share", &c->cpu_share);
	num_from(obj, "stall_share", &c->stall_share);
	num_from(obj, "canary_drift", &c->canary_drift);
	num_from(obj, "trials_p50", &c->trials_p50);
	num_from(obj, "trials_p99", &c->trials_p99);
}

static const char *const concern_names[] = { "p50", "p99", "p999", "achieved_ops", "sys_p99" };
#define NCONCERNS (sizeof concern_names / sizeof concern_names[0])

unsigned checks_concerns(const json_t *row)
{
	const json_t *a = result_check_concerns(row), *x;
	size_t i;
	unsigned bits = 0;
	if (!json_is_array(a))
		return CHECK_ALL;
	json_array_foreach(a, i, x)
		for (unsigned k = 0; k < NCONCERNS; k++)
			if (json_is_string(x) && !strcmp(json_string_value(x), concern_names[k]))
				bits |= 1u << k;
	return bits;
}

void checks_set_concerns(json_t *row, unsigned bits)
{
	json_t *a = json_array();
	for (unsigned k = 0; k < NCONCERNS; k++)
		if (bits & (1u << k))
			json_array_append_new(a, json_string(concern_names[k]));
	json_object_set_new(row, "concerns", a);
}

json_t *checks_flagged_by(const json_t *checks)
{
	json_t *by = json_object(), *lists[NCONCERNS];
	const json_t *c;
	size_t i;
	for (unsigned k = 0; k < NCONCERNS; k++) {
		lists[k] = json_array();
		json_object_set_new(by, concern_names[k], lists[k]);
	}
	json_array_foreach(checks, i, c) {
		if (!result_check_warns(c))
			continue;
		unsigned bits = checks_concerns(c);
		for (unsigned k = 0; k < NCONCERNS; k++)
			if (bits & (1u << k))
				json_array_append_new(lists[k], json_string(result_check_name(c)));
	}
	return by;
}

/* Appends name to the comma-separated list in buf (*o: its length so
 * far), whole or not at all: once a name does not fit, the list stays as
 * it is and later names are left out too. */
static void list_name(char *buf, size_t len, size_t *o, const char *name)
{
	if (*o >= len)
		return;
	int w = snprintf(buf + *o, len - *o, "%s%s", *o ? "," : "", name ? name : "?");
	if (w < 0 || (size_t)w >= len - *o) {
		buf[*o] = '\0';
		*o = len;
		return;
	}
	*o += (size_t)w;
}

int checks_point_flagged(const json_t *p, const char *q, char *buf, size_t len)
{
	const json_t *by = result_flagged_for(p, q), *nm;
	size_t i, o = 0;
	if (!by)
		return checks_flagged(result_checks(p), buf, len);
	if (len)
		buf[0] = '\0';
	json_array_foreach(by, i, nm)
		list_name(buf, len, &o, json_string_value(nm));
	return json_array_size(by) > 0;
}

/* Appends a row; concerns: the numbers its warning makes unreliable
 * (checks.h), and for a row that passes the numbers it vouches for. */
static void add(json_t *arr, const char *name, double value, double threshold, int warn, unsigned concerns,
		const char *detail)
{
	/* a value without bound (a CI open at the top) is null, never a
	 * number that would read as a good one */
	json_t *c = json_pack("{s:s,s:o,s:f,s:s}", "name", name, "value", isfinite(value) ? json_real(value) : json_null(),
			      "threshold", threshold, "status", warn ? "warn" : "pass");
	checks_set_concerns(c, concerns);
	if (detail && *detail)
		json_object_set_new(c, "detail", json_string(detail));
	json_array_append_new(arr, c);
}

/* Count of values recorded above v (whole counters whose low end is > v). */
static uint64_t count_above(const struct hist *h, uint64_t v)
{
	uint64_t n = 0;
	for (unsigned i = v > HIST_MAX ? HIST_NCOUNTS : hist_index(v) + 1; i < HIST_NCOUNTS; i++)
		n += h->counts[i];
	return n;
}

/* Sums one histogram per client found at path (an object key, then an
 * optional array index >= 0) into h; the number of clients that had it. */
static size_t merge_trust(struct hist *h, json_t *const *clients, size_t n, const char *key, int idx)
{
	struct hist *one = hist_new();
	size_t got = 0;
	char e[128];
	if (!one)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *j = json_object_get(json_object_get(clients[i], "trust"), key);
		if (idx >= 0)
			j = json_array_get(j, (size_t)idx);
		if (j && hist_from_json(one, j, e, sizeof e) == 0) {
			hist_merge(h, one);
			got++;
		}
	}
	hist_free(one);
	return got;
}

/* The sends the clients left out of lag_ns (their
 * intended time met a host stall's interval of their thread: the client's
 * trust.lag_excluded), and the worst lag among them. */
static double lag_excluded(json_t *const *clients, size_t n, double *worst)
{
	double excl = 0;
	*worst = 0;
	for (size_t i = 0; i < n; i++) {
		const json_t *x = json_object_get(json_object_get(clients[i], "trust"), "lag_excluded");
		excl += json_number_value(json_object_get(x, "n"));
		*worst = fmax(*worst, json_number_value(json_object_get(x, "max_ns")));
	}
	return excl;
}

/*
 * Schedule lag, judged on the sends the host did not delay: a client
 * thread the host took off its CPU falls behind and catches up in a
 * burst, and those sends (intended within the stall's interval [start,
 * R]) were late for the host, which tagged their requests.  What lag is
 * left is the generator's own: it could not keep up.
 */
static void check_lag(const struct check_conf *c, json_t *out, json_t *const *clients, size_t n)
{
	struct hist *h = hist_new();
	char d[320];
	if (!h)
		return;
	double worst_x, excl = lag_excluded(clients, n, &worst_x);
	if (merge_trust(h, clients, n, "lag_ns", -1) && !h->n && excl > 0) {
		/* every send of the window was the host's: nothing of the
		 * generator's own to judge, and host_set says the rest */
		snprintf(d, sizeof d, "all %.0f sends left out: intended within a host stall's interval of their "
			 "thread (worst %.0f us late), their requests tagged", excl, worst_x / 1e3);
		add(out, "schedule_lag", 0, c->lag_share, 0, CHECK_ALL, d);
	} else if (h->n) {
		double share = (double)count_above(h, (uint64_t)c->lag_ns) / (double)h->n;
		int o = snprintf(d, sizeof d, "%llu of %llu sends later than %.0f ns; worst %.0f us, p99 %.1f us",
				 (unsigned long long)count_above(h, (uint64_t)c->lag_ns), (unsigned long long)h->n,
				 c->lag_ns, h->max / 1e3, hist_percentile(h, 99) / 1e3);
		if (excl > 0 && o > 0 && (size_t)o < sizeof d)
			snprintf(d + o, sizeof d - (size_t)o, "; %.0f sends left out: intended within a host stall's "
				 "interval of their thread (worst %.0f us late), their requests tagged", excl, worst_x / 1e3);
		add(out, "schedule_lag", share, c->lag_share, share > c->lag_share, CHECK_ALL, d);
	}
	hist_free(h);
}

/*
 * The schedule against the Poisson law: each client thread's gaps between
 * intended send times (trust.intended_gaps_ns), all of them, against the
 * configured exponential.  How far each send strayed from its intended
 * time is schedule_lag's; the two together say the sends were a Poisson
 * schedule, each displaced by at most lag_ns.  The actual inter-send
 * times cannot say more: a client the host held back (often in gaps too
 * short to be stalls, which nothing can attribute) catches up at its own
 * pace, and a test of those gaps judges the host again (docs/trust.md).  A
 * client from before intended_gaps_ns sent its actual gaps
 * (send_gaps_ns): tested as then, above ARRIVAL_FLOOR_NS less it.
 */
static void check_arrival(const struct check_conf *c, json_t *out, json_t *const *clients, size_t n)
{
	double minp = 1, a2_at_min = 0;
	size_t tested = 0, k, gaps = 0;
	int actual = 0;
	char d[400], e[128];

	for (size_t i = 0; i < n; i++) {
		const json_t *tr = json_object_get(clients[i], "trust"), *g, *all;
		double mean = json_number_value(json_object_get(tr, "mean_gap_ns"));
		if (mean <= 0)
			continue;     /* closed loop: no schedule to fit */
		double floor_ns = 0;
		if (!(all = json_object_get(tr, "intended_gaps_ns"))) {
			all = json_object_get(tr, "send_gaps_ns");
			floor_ns = ARRIVAL_FLOOR_NS;
			actual = 1;
		}
		json_array_foreach(all, k, g) {
			size_t m = json_array_size(g);
			if (m < 50)
				continue;
			double *x = malloc(m * sizeof *x), a2, p;
			size_t mx = 0;
			if (!x)
				continue;
			/* Actual gaps shorter than a few sends cannot follow the
			 * exponential: one post takes its time.  By the memoryless
			 * property gap - g0 given gap > g0 has the same law. */
			for (size_t j = 0; j < m; j++) {
				double gap = json_number_value(json_array_get(g, j)) + 0.5;   /* whole ns: midpoint */
				if (gap > floor_ns)
					x[mx++] = gap - floor_ns;
			}
			if (mx >= 50 && ad_exp_test(x, mx, mean, &a2, &p, e, sizeof e) == 0) {
				tested++;
				gaps += mx;
				if (p < minp) {
					minp = p;
					a2_at_min = a2;
				}
			}
			free(x);
		}
	}
	if (!tested)
		return;
	double adj = fmin(1, minp * (double)tested);
	if (actual)
		snprintf(d, sizeof d, "Anderson-Darling of the actual inter-send times above %.0f ns (less that floor) "
			 "against the configured exponential, %zu thread(s); smallest p %.3g (A2 %.2f), x%zu for the "
			 "threads tested (a client from before intended_gaps_ns)", (double)ARRIVAL_FLOOR_NS, tested, minp,
			 a2_at_min, tested);
	else
		snprintf(d, sizeof d, "Anderson-Darling of the %zu gaps between intended send times against the "
			 "configured exponential, %zu thread(s); smallest p %.3g (A2 %.2f), x%zu for the threads tested; "
			 "how far the sends strayed from them is schedule_lag's", gaps, tested, minp, a2_at_min, tested);
	add(out, "arrival_fit", adj, c->arrival_p, adj < c->arrival_p, CHECK_ALL, d);
}

void checks_ci(const struct check_conf *c, json_t *out, const struct hist *h)
{
	char d[160];
	if (h->n) {
		static const struct { const char *name; double p; } q[] = { { "ci_p99", 0.99 }, { "ci_p999", 0.999 } };
		for (int i = 0; i < 2; i++) {
			uint64_t lo, hi, v = hist_percentile(h, q[i].p * 100);
			stats_hist_pct_ci(h, q[i].p, STATS_Z95, &lo, &hi);
			double w = v ? (double)(hi - lo) / (double)v : 0;
			double thr = i ? c->ci_p999 : c->ci_p99;
			/* The CI's upper rank past the sample's end: nothing
			 * bounds the percentile from above (300 samples put the
			 * P99.9 at the largest one), however narrow the clamped
			 * interval looks. */
			if (!stats_pct_ci_bounded(h->n, q[i].p, STATS_Z95)) {
				w = INFINITY;
				snprintf(d, sizeof d, "only %.1f of %llu samples expected above it: its 95%% CI reaches past "
					 "the largest sample, so it has no upper bound; measure longer",
					 (double)h->n * (1 - q[i].p), (unsigned long long)h->n);
			} else {
				snprintf(d, sizeof d, "95%% CI [%.1f, %.1f] us around %.1f us from %llu samples", lo / 1e3,
					 hi / 1e3, v / 1e3, (unsigned long long)h->n);
			}
			/* the system's P99 has fewer samples, never more: what
			 * holds against the raw one holds against it */
			add(out, q[i].name, w, thr, w > thr, i ? CHECK_P999 : CHECK_P99 | CHECK_SYS99, d);
		}
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

#define BOOT_RESAMPLES 200

/* The 2.5 % and 97.5 % of v[0..BOOT_RESAMPLES) (sorted here), as a width
 * relative to m: INFINITY when m is not positive. */
static double boot_width(uint64_t *v, double m, uint64_t *lo, uint64_t *hi)
{
	qsort(v, BOOT_RESAMPLES, sizeof *v, cmp_u64);
	*lo = v[BOOT_RESAMPLES / 40];
	*hi = v[BOOT_RESAMPLES - 1 - BOOT_RESAMPLES / 40];
	return m > 0 ? (double)(*hi - *lo) / m : INFINITY;
}

int checks_trials(const struct check_conf *c, json_t *out, struct hist *const *trials, size_t n,
		  const struct hist *merged, struct hist *const *sys, const struct hist *sys_merged)
{
	if (n < 3 || !merged->n)
		return 0;         /* two trials give no interval worth judging */
	if (!sys_merged)
		sys = NULL;
	struct hist *h = hist_new(), *hs = sys ? hist_new() : NULL;
	uint64_t *b50 = malloc(BOOT_RESAMPLES * sizeof *b50), *b99 = malloc(BOOT_RESAMPLES * sizeof *b99);
	uint64_t *bs = sys ? malloc(BOOT_RESAMPLES * sizeof *bs) : NULL;
	int rc = -1;
	if (!h || !b50 || !b99 || (sys && (!hs || !bs)))
		goto out;
	/* Resample whole trials with replacement, merge, read p50 and p99
	 * (and the system's P99 of the same trials): the spread a rerun of
	 * the same trials would show.  Fixed seed: the same trials give the
	 * same verdict. */
	struct rng r;
	rng_seed(&r, 0x6f71627472696131ull);
	for (size_t k = 0; k < BOOT_RESAMPLES; k++) {
		hist_reset(h);
		if (hs)
			hist_reset(hs);
		for (size_t t = 0; t < n; t++) {
			size_t pick = rng_below(&r, n);
			hist_merge(h, trials[pick]);
			if (hs && sys[pick])
				hist_merge(hs, sys[pick]);
		}
		b50[k] = h->n ? hist_percentile(h, 50) : 0;
		b99[k] = h->n ? hist_percentile(h, 99) : 0;
		if (bs)
			bs[k] = hs->n ? hist_percentile(hs, 99) : 0;
	}
	uint64_t l50, h50, l99, h99, ls = 0, hsy = 0;
	double m50 = (double)hist_percentile(merged, 50), m99 = (double)hist_percentile(merged, 99);
	double w50 = boot_width(b50, m50, &l50, &h50), w99 = boot_width(b99, m99, &l99, &h99);
	double ms = sys && sys_merged->n ? (double)hist_percentile(sys_merged, 99) : 0;
	double ws = sys ? boot_width(bs, ms, &ls, &hsy) : w99;
	char d[520], ds[160] = "";
	if (sys)
		snprintf(ds, sizeof ds, ", the system P99's (the requests no host stall tagged) [%.1f, %.1f] us around "
			 "%.1f us (width %.2f, limit %.2f)", ls / 1e3, hsy / 1e3, ms / 1e3, ws, c->trials_p99);
	snprintf(d, sizeof d, "%zu trials resampled %d times: P99's 95%% CI [%.1f, %.1f] us around %.1f us (width %.2f, "
		 "limit %.2f)%s, p50's [%.2f, %.2f] us around %.2f us (width %.2f, limit %.2f); wider means the "
		 "trials disagree: they describe the machine's moments, not the system", n, BOOT_RESAMPLES,
		 l99 / 1e3, h99 / 1e3, m99 / 1e3, w99, c->trials_p99, ds, l50 / 1e3, h50 / 1e3, m50 / 1e3,
		 w50, c->trials_p50);
	/* the value shown is the one furthest past its limit */
	double f50 = w50 / c->trials_p50, f99 = w99 / c->trials_p99, fs = ws / c->trials_p99;
	double v = w50, thr = c->trials_p50;
	if (f99 >= f50 && f99 >= fs) {
		v = w99;
		thr = c->trials_p99;
	} else if (fs > f50) {
		v = ws;
		thr = c->trials_p99;
	}
	/* it speaks for the part that warned: trials that agree on the
	 * median and not on the tail leave the median standing, and trials
	 * whose raw P99s disagree for the host stalls in them (their tagged
	 * requests) leave the system's P99 standing when the untagged
	 * requests' P99s agree; without the trials' untagged histograms (a
	 * build before host tags) the raw P99 speaks for both */
	unsigned bad = (w50 <= c->trials_p50 ? 0 : CHECK_P50) | (w99 <= c->trials_p99 ? 0 : CHECK_P99) |
		       (ws <= c->trials_p99 ? 0 : CHECK_SYS99);
	add(out, "trial_agreement", v, thr, bad != 0, bad ? bad : CHECK_P50 | CHECK_P99 | CHECK_SYS99, d);
	rc = 0;
out:
	hist_free(h);
	hist_free(hs);
	free(b50);
	free(b99);
	free(bs);
	return rc;
}

static void check_ci(const struct check_conf *c, json_t *out, const json_t *pj)
{
	struct hist *h = hist_new();
	char e[128];
	if (h && result_hist(h, result_lat(pj, "all"), e, sizeof e) == 0)
		checks_ci(c, out, h);
	hist_free(h);
}

static void check_halves(const struct check_conf *c, json_t *out, json_t *const *clients, size_t n)
{
	struct hist *a = hist_new(), *b = hist_new();
	char d[240];
	if (a && b && merge_trust(a, clients, n, "halves_ns", 0) && merge_trust(b, clients, n, "halves_ns", 1) &&
	    a->n >= 100 && b->n >= 100) {
		int warn = 0, warn50 = 0;
		static const double ps[2] = { 0.5, 0.99 };
		double r[2];
		for (int i = 0; i < 2; i++) {
			uint64_t alo, ahi, blo, bhi;
			double va = (double)hist_percentile(a, ps[i] * 100), vb = (double)hist_percentile(b, ps[i] * 100);
			stats_hist_pct_ci(a, ps[i], STATS_Z95, &alo, &ahi);
			stats_hist_pct_ci(b, ps[i], STATS_Z95, &blo, &bhi);
			r[i] = va > 0 && vb > 0 ? fmax(va / vb, vb / va) : 1;
			int apart = ahi < blo || bhi < alo;
			if (apart && r[i] > (i ? c->halves_p99 : c->halves_p50)) {
				warn = 1;
				warn50 |= i == 0;
			}
		}
		snprintf(d, sizeof d, "first half p50 %.1f us p99 %.1f us, second half p50 %.1f us p99 %.1f us "
			 "(factors %.2f, %.2f; limits %.2f, %.2f when CIs do not overlap)",
			 hist_percentile(a, 50) / 1e3, hist_percentile(a, 99) / 1e3, hist_percentile(b, 50) / 1e3,
			 hist_percentile(b, 99) / 1e3, r[0], r[1], c->halves_p50, c->halves_p99);
		/* the value is the factor closer to its limit */
		int p99 = r[1] / c->halves_p99 >= r[0] / c->halves_p50;
		/* a median that moved within the window says the system or the
		 * machine changed: no latency of it holds; a tail that moved
		 * alone (one stall of the host) says that of the tails */
		add(out, "stationarity", r[p99], p99 ? c->halves_p99 : c->halves_p50, warn,
		    !warn || warn50 ? CHECK_LAT : CHECK_P99 | CHECK_P999, d);
	}
	hist_free(a);
	hist_free(b);
}

/*
 * A spinning thread that has its CPU to itself gets all of it: user plus
 * system time equal to wall time.  Another task on that CPU (a hog, a
 * neighbour, an interrupt storm) takes a share, and the thread's CPU time
 * falls below the wall time.  Involuntary context switches say how often
 * it lost the CPU; the share says how much it lost, which is what moves
 * latency, so the share is what the check holds to its threshold.  Host
 * steal (a hypervisor that reports it) counts against the same share.
 * A thread that naps when idle (lib/idle.h) gives its CPU away on
 * purpose: the time it asked to sleep is taken out of its wall time, so
 * only what it lost beyond its naps (oversleeping included) counts.
 *
 * What the lost share moved depends on whether attribution saw it: when
 * that thread's host stalls (lib/stall.h) cover at least half of what it
 * lost, their requests were tagged and the warning speaks for the raw
 * tails only; else (losses in slices too short to be stalls, or stalls
 * nobody vouched for) for every number, as does host steal.
 */
static void check_interference(const struct check_conf *c, json_t *out, json_t *const *clients, size_t n,
			       const json_t *server)
{
	double steal = 0, worst = 2, worst_sw = 0, worst_host = 0;
	int napped_any = 0;
	char who[64] = "", d[520];
	size_t k;
	const json_t *v;

	for (size_t i = 0; i < n; i++) {
		const json_t *tr = json_object_get(clients[i], "trust");
		double tot = json_number_value(json_object_get(tr, "total_ticks"));
		double st = json_number_value(json_object_get(tr, "steal_ticks"));
		/* counted from the start of warm-up to the end of the window */
		double secs = json_number_value(json_object_get(tr, "switch_window_ns")) / 1e9;
		if (tot > 0)
			steal = fmax(steal, st / tot);
		const json_t *nap = json_object_get(json_object_get(clients[i], "idle"), "napped_ns_per_thread");
		json_array_foreach(json_object_get(tr, "cpu_ns"), k, v) {
			double awake = secs - json_number_value(json_array_get(nap, k)) / 1e9;
			napped_any |= awake < secs;
			double share = awake > 0 ? json_number_value(v) / 1e9 / awake : 2;
			double sw = secs > 0 ? json_number_value(json_array_get(json_object_get(tr, "involuntary_switches"), k)) / secs : 0;
			if (share < worst) {
				/* its host stalls counted in the window only: as a
				 * share of the window */
				double win = json_number_value(json_object_get(tr, "window_ns"));
				const json_t *w = json_object_get(json_array_get(json_object_get(tr, "stalls"), k), "window");
				worst = share;
				worst_sw = sw;
				worst_host = win > 0 ? json_number_value(json_object_get(w, "host_ns")) / win : 0;
				snprintf(who, sizeof who, "client %zu thread %zu", i, k);
			}
		}
	}
	json_array_foreach(json_object_get(server, "per_worker"), k, v) {
		double life = json_number_value(json_object_get(v, "life_ns"));
		if (life <= 0 || !json_is_number(json_object_get(v, "cpu_ns")))
			continue;
		double awake = life - json_number_value(json_object_get(json_object_get(v, "idle_naps"), "requested_ns"));
		napped_any |= awake < life;
		double share = awake > 0 ? json_number_value(json_object_get(v, "cpu_ns")) / awake : 2;
		if (share < worst) {
			worst = share;
			worst_host = json_number_value(json_object_get(json_object_get(v, "stalls"), "host_ns")) / life;
			worst_sw = json_number_value(json_object_get(v, "involuntary_switches")) / (life / 1e9);
			snprintf(who, sizeof who, "server worker %zu", k);
		}
	}
	if (worst > 1.5)
		return;   /* no thread reported its CPU time */
	worst = fmin(worst, 1);
	int warn = steal > c->steal || worst < c->cpu_share;
	/* attributed: its host stalls cover at least half of what it lost */
	int attributed = steal <= c->steal && worst < 1 && worst_host * 2 >= 1 - worst;
	snprintf(d, sizeof d, "least CPU a spinning thread got: %s, %.1f%% of the time%s (limit %.0f%%; %.0f "
		 "involuntary switches/s; host stalls attributed %.1f%% of its time%s); host steal %.2f%% (limit "
		 "%.2f%%)", who, worst * 100, napped_any ? " it did not nap" : "", c->cpu_share * 100, worst_sw,
		 worst_host * 100, warn && attributed ? ", at least half of what it lost: their requests are tagged, "
		 "so this speaks for the raw tails only" : "", steal * 100, c->steal * 100);
	add(out, "interference", worst, c->cpu_share, warn,
	    warn && attributed ? CHECK_P99 | CHECK_P999 : CHECK_ALL, d);
}

/* The kept stall events of one stall_json() object, as stall_overlap()
 * takes them, those of the classes in mask only (bit 1 << STALL_HOST ...;
 * an event without a class: unattributed); returns how many. */
static unsigned stall_events(const json_t *sj, struct stall_event *ev, unsigned max, unsigned mask)
{
	size_t k;
	const json_t *e;
	unsigned n = 0;
	json_array_foreach(json_object_get(sj, "events"), k, e) {
		if (n == max)
			break;
		json_int_t cls = json_integer_value(json_array_get(e, 2));
		if (cls < 0 || cls >= STALL_NCLS || !(mask & (1u << cls)))
			continue;
		ev[n].wall_end_ns = (uint64_t)json_integer_value(json_array_get(e, 0));
		ev[n].len_ns = (uint64_t)json_integer_value(json_array_get(e, 1));
		n++;
	}
	return n;
}

/*
 * Stalls: the time a spinning thread stood still, seen from its own loop
 * (lib/stall.h): a vCPU the hypervisor descheduled, which getrusage
 * charges to the thread as if it ran, shows here and nowhere else.  A
 * client thread counts only its window's stalls; a server worker's are
 * intersected with the client's window (wall-clock time).
 *
 * Judged is what attribution could not remove: the unattributed stall
 * time.  A host stall's requests are tagged and out of the system's
 * tail (the raw tail's part is host_set's to judge), and a system stall
 * (the thread blocked or busy in its own code) is the system measured.
 * A client from before attribution (no class per stall) has all of its
 * stall time judged.  The share of the window the worst thread stood
 * still unattributed is held to stall_share.
 */
static void check_stalls(const struct check_conf *c, json_t *out, json_t *const *clients, size_t n,
			 const json_t *server)
{
	double worst = -1, worst_all = 0, worst_host = 0, worst_max = 0;
	char who[64] = "", d[400];
	uint64_t from = UINT64_MAX, to = 0;
	size_t k;
	const json_t *v;

	for (size_t i = 0; i < n; i++) {
		const json_t *tr = json_object_get(clients[i], "trust");
		const json_t *ww = json_object_get(tr, "window_wall_ns");
		double win = json_number_value(json_object_get(tr, "window_ns"));
		if (json_is_array(ww)) {
			uint64_t a = (uint64_t)json_integer_value(json_array_get(ww, 0));
			uint64_t b = (uint64_t)json_integer_value(json_array_get(ww, 1));
			from = a < from ? a : from;
			to = b > to ? b : to;
		}
		json_array_foreach(json_object_get(tr, "stalls"), k, v) {
			if (win <= 0)
				continue;
			const json_t *w = json_object_get(v, "window");
			double all = json_number_value(json_object_get(v, "total_ns")) / win;
			double un = json_is_object(w) ? json_number_value(json_object_get(w, "unattributed_ns")) / win : all;
			if (un > worst) {
				worst = un;
				worst_all = all;
				worst_host = json_is_object(w) ? json_number_value(json_object_get(w, "host_ns")) / win : 0;
				worst_max = json_number_value(json_object_get(v, "max_ns"));
				snprintf(who, sizeof who, "client %zu thread %zu", i, k);
			}
		}
	}
	if (worst < 0)
		return;   /* no client measured its stalls (an older binary) */
	json_array_foreach(json_object_get(server, "per_worker"), k, v) {
		struct stall_event ev[STALL_EVENTS];   /* 4 KB */
		const json_t *sj = json_object_get(v, "stalls");
		if (!json_is_object(sj) || to <= from)
			continue;
		double span = (double)(to - from);
		unsigned m = stall_events(sj, ev, STALL_EVENTS, 1u << STALL_UNATT);
		double un = (double)stall_overlap(ev, m, from, to) / span;
		if (un > worst) {
			worst = un;
			m = stall_events(sj, ev, STALL_EVENTS, 1u << STALL_HOST);
			worst_host = (double)stall_overlap(ev, m, from, to) / span;
			m = stall_events(sj, ev, STALL_EVENTS, (1u << STALL_NCLS) - 1);
			worst_all = (double)stall_overlap(ev, m, from, to) / span;
			worst_max = json_number_value(json_object_get(sj, "max_ns"));
			snprintf(who, sizeof who, "server worker %zu", k);
		}
	}
	int warn = worst > c->stall_share;
	snprintf(d, sizeof d, "most a spinning thread stood still unattributed: %s, %.3f%% of the window (limit "
		 "%.3f%%); it stood still %.3f%% in all, %.3f%% of it the host's (attributed: its requests tagged, "
		 "not judged here); longest stall %.0f us", who, worst * 100, c->stall_share * 100, worst_all * 100,
		 worst_host * 100, worst_max / 1e3);
	add(out, "stalls", worst, c->stall_share, warn, CHECK_P99 | CHECK_P999 | CHECK_SYS99, d);
}

/*
 * Host-set percentiles: a raw percentile more than half of whose
 * requests at or above it were tagged (host_tags.set_by_host) says how
 * the host stalled, not how the system answers.  It warns about that raw
 * number only; the system's P99 (the untagged requests') stands.  The
 * value is the tagged fraction of all requests.
 */
static void check_host_set(json_t *out, const json_t *pj)
{
	if (!result_host_tags(pj))
		return;   /* a run without attribution */
	static const struct { const char *q; unsigned bit; } qs[] = {
		{ "p50", CHECK_P50 }, { "p99", CHECK_P99 }, { "p999", CHECK_P999 },
	};
	unsigned bad = 0, nset = 0;
	char d[240], set[32] = "";
	size_t o = 0;
	for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
		if (result_set_by_host(pj, qs[i].q)) {
			bad |= qs[i].bit;
			nset++;
			list_name(set, sizeof set, &o, qs[i].q);
		}
	double tf = result_tagged_frac(pj, "all"), uf = result_unattributed_frac(pj, "all");
	snprintf(d, sizeof d, "%.3f%% of the requests tagged by a host stall, %.3f%% touched by an unattributed one; "
		 "raw percentiles set by the host (over half the requests above them tagged): %s", tf * 100, uf * 100,
		 bad ? set : "none");
	add(out, "host_set", nset, 0, bad != 0, bad ? bad : CHECK_P50 | CHECK_P99 | CHECK_P999, d);
}

/* Replies the server's transport dropped because a client took none for
 * a while (every transport counts them per worker): their requests are
 * among the unanswered, and this says why. */
static double reply_drops(const json_t *server)
{
	const json_t *ws = json_object_get(json_object_get(server, "transport"), "workers");
	double n = 0;
	size_t i;
	const json_t *w;
	json_array_foreach(ws, i, w)
		n += json_number_value(json_object_get(w, "reply_drops"));
	return n;
}

static void check_counts(const struct check_conf *c, json_t *out, const json_t *pj, const json_t *server,
			 json_t *const *clients, size_t nclients)
{
	char d[400];
	double sent = result_sent(pj);
	if (!isnan(result_achieved(pj))) {
		int sat = result_saturated(pj);
		snprintf(d, sizeof d, "achieved %.0f of %.0f ops/s offered", result_achieved(pj), result_offered(pj));
		add(out, "saturation", sat, 0, sat, CHECK_ALL, d);
	}
	/* Requests still unsent when the window closed: the client was that
	 * many inter-send gaps behind its schedule.  Up to lag_ns of them is
	 * the lag the schedule_lag check allows a single send (measured on
	 * cluster 12: 1-3 unsent at 587-640 Kops/s in points and probes whose
	 * client kept its schedule, which made the knee search stop short),
	 * and one more a client thread: the send its last pass had not yet
	 * made when the window closed (at 20 Kops/s lag_ns allows none, and
	 * one unsent request made knee probes there saturated: a search of
	 * configs/rnr-shm.json stopped at 11.9 Kops/s on a calm host).
	 * Where the clients say how long each unsent request had been due
	 * when their loop ended (trust.unsent_lag_ns), only those due longer
	 * than lag_ns count, as schedule_lag counts a send: the others were
	 * cut by the close.  A client loop that ended 35 us after the close
	 * (one pass held up) left two requests due 0.2 and 3 us
	 * unsent, and knee searches of 9 of 14 figure configs stopped at
	 * 31-37 Kops/s on it, their workers busy 1-3 % of the time.
	 * Unanswered requests and errors are allowed none. */
	double offered = result_offered(pj), nthreads = 0, unsent = result_unsent(pj), cut = 0;
	for (size_t i = 0; i < nclients; i++) {
		const json_t *th = json_object_get(clients[i], "threads");   /* oqbench.client/1 */
		nthreads += json_is_integer(th) && json_integer_value(th) > 0 ? (double)json_integer_value(th) : 1;
	}
	struct hist *ul = unsent > 0 ? hist_new() : NULL;
	if (ul && merge_trust(ul, clients, nclients, "unsent_lag_ns", -1) == nclients && (double)ul->n == unsent) {
		cut = unsent - (double)count_above(ul, (uint64_t)c->lag_ns);
		unsent -= cut;
	}
	hist_free(ul);
	char why_unsent[200];
	int w = snprintf(why_unsent, sizeof why_unsent, ", lag_ns of the schedule and one a client thread: the client "
			 "finishing its last send");
	if (cut > 0 && w > 0 && (size_t)w < sizeof why_unsent)
		snprintf(why_unsent + w, sizeof why_unsent - (size_t)w, "; %.0f more due under lag_ns when the window "
			 "closed, cut by it", cut);
	const struct { const char *name, *why; double limit, v; } rows[] = {
		{ "unanswered", " after the clients' drain, timeouts.drain_s", 0, result_unanswered(pj) },
		{ "unsent", why_unsent, offered > 0 ? floor(offered * c->lag_ns / 1e9) + nthreads : 0, unsent },
		{ "errors", "", 0, result_errors(pj) },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		double v = rows[i].v, limit = rows[i].limit;   /* NaN when missing: a null value, no warning */
		double drops = i == 0 ? reply_drops(server) : 0;
		if (drops > 0)
			snprintf(d, sizeof d, "%.0f of %.0f sent (allowed %.0f%s); the server dropped %.0f replies to clients "
				 "that took none for a while", v, sent, limit, rows[i].why, drops);
		else
			snprintf(d, sizeof d, "%.0f of %.0f sent (allowed %.0f%s)", v, sent, limit, rows[i].why);
		add(out, rows[i].name, v, limit, v > limit, CHECK_ALL, d);
	}
}

/* Every spinning thread on a CPU of its own (cpus.h): "shared" from any process warns. */
static void check_placement(json_t *out, json_t *const *clients, size_t n, const json_t *server)
{
	int shared = json_is_true(json_object_get(json_object_get(server, "placement"), "shared"));
	int unpinned = json_is_null(json_object_get(json_object_get(server, "placement"), "cpus"));
	for (size_t i = 0; i < n; i++) {
		shared |= json_is_true(json_object_get(json_object_get(clients[i], "placement"), "shared"));
		unpinned |= json_is_null(json_object_get(json_object_get(clients[i], "placement"), "cpus"));
	}
	add(out, "placement", shared, 0, shared, CHECK_ALL, shared ? "spinning threads share CPUs (more threads than CPUs "
	    "on a host): latencies include scheduling delays" : unpinned ? "some threads are not pinned "
	    "(cpus: none)" : "every spinning thread has a CPU of its own");
}

json_t *checks_point(const struct check_conf *c, const json_t *pj, json_t *const *clients,
		     size_t nclients, const json_t *server, double canary_ns, double canary_median)
{
	json_t *out = json_array();
	char d[160];

	check_lag(c, out, clients, nclients);
	check_arrival(c, out, clients, nclients);
	check_ci(c, out, pj);
	check_halves(c, out, clients, nclients);
	check_interference(c, out, clients, nclients, server);
	check_stalls(c, out, clients, nclients, server);
	check_host_set(out, pj);
	if (canary_ns > 0 && canary_median > 0) {
		double f = fmax(canary_ns / canary_median, canary_median / canary_ns);
		snprintf(d, sizeof d, "canary p50 %.0f ns, run median %.0f ns", canary_ns, canary_median);
		add(out, "canary_drift", f, c->canary_drift, f > c->canary_drift, CHECK_ALL, d);
	}
	check_placement(out, clients, nclients, server);
	check_counts(c, out, pj, server, clients, nclients);
	return out;
}

int checks_is_disturbance(const char *name)
{
	return name && (!strcmp(name, "interference") || !strcmp(name, "stalls"));
}

static int named(const char *name, const char *const *names)
{
	if (!names)
		return 1;
	for (; *names; names++)
		if (name && !strcmp(name, *names))
			return 1;
	return 0;
}

int checks_flagged(const json_t *checks, char *buf, size_t len)
{
	return checks_warned(checks, NULL, buf, len);
}

int checks_warned(const json_t *checks, const char *const *names, char *buf, size_t len)
{
	size_t i, o = 0;
	const json_t *c;
	int flagged = 0;
	if (len)
		buf[0] = '\0';
	json_array_foreach(checks, i, c) {
		if (!result_check_warns(c) || !named(result_check_name(c), names))
			continue;
		flagged = 1;
		list_name(buf, len, &o, result_check_name(c));
	}
	return flagged;
}
