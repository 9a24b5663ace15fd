/*
 * knee.h - finding the knee before a load sweep: `arrival.loads_ops` in
 * its automatic form, {"auto": true, "fractions": [...], "search": {...}}.
 *
 * A hand-made list of loads fits one machine on one day: on another it
 * either never reaches saturation or spends most points past it.  The
 * automatic form first finds the highest offered load that the SLOWEST of
 * the configured systems sustains, with short probes, and then sweeps
 * fixed fractions of that load, so the same config reaches its knee on a
 * 2-core VM and on a lab cluster.
 *
 * The search (knee_search) is an exponential ramp and a bisection:
 *
 *   1. probe start_ops; while every system sustains the load, multiply it
 *      by factor (at most max_ops); the first load some system does not
 *      sustain ends the ramp.  If start_ops itself is not sustained, the
 *      ramp runs downwards (divide by factor) until a load is sustained.
 *   2. `refine` bisection steps between the last sustained load lo and the
 *      first unsustained one hi, at their geometric mean (the ramp is
 *      geometric), so the bracket ends factor^(1/2^refine) wide: 1.09 for
 *      the defaults (factor 2, refine 3).
 *   3. the knee is lo, the highest load found sustained.
 *
 * At one load the systems are probed one after another, the one that last
 * failed first; the first that does not sustain it decides (the others
 * need no probe there), and names `slowest_system`.  A probe does not
 * sustain its load when the point says saturated (achieved < 95 % of
 * offered, harness/run/merge.c) or when a self-check says the client could
 * not keep up: schedule_lag, unsent or unanswered warn, unless
 * interference warns too (knee_verdict says why).  A shared host makes
 * single probes fail now and then at loads far below the knee, and noise
 * only ever makes a load look harder, never easier, so a system sustains
 * a load when any of 1 + confirm probes there does (default confirm 1).
 *
 * The sweep then runs loads fraction x knee, each rounded to three
 * significant digits; fractions above 1 lie past the knee.  With the
 * default fractions the last two (1.1, 1.25) exceed the bracket's upper
 * end, a load a probe saw unsustained, so they should come out flagged
 * saturated; a noisy host can still move the knee between the search and
 * the sweep, which run.json's probes let a reader judge.
 *
 * Shown by tests/unit/test_knee.c (the search against systems with a known
 * capacity: the knee lands within the bracket, the slowest system is
 * named, the probe count stays within the bound knee_max_probes states,
 * bad objects are refused naming the field) and tests/integration/knee.sh
 * (a real search on shm, run.json's knee, refused forms, dry runs).
 */
#ifndef OQB_KNEE_H
#define OQB_KNEE_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

#define KNEE_MAX_FRACTIONS 64
#define KNEE_MAX_DOWN 10          /* downward ramp steps below start_ops */

struct knee_conf {
	int on;                           /* loads_ops was the automatic form */
	double fractions[KNEE_MAX_FRACTIONS];
	size_t nfractions;
	double start_ops, factor, max_ops;
	double probe_s, warmup_s;         /* measured and warm-up seconds per probe */
	int refine;                       /* bisection steps */
	int confirm;                      /* probes more at a load not sustained */
};

/* One probe: a short point of one system at one offered load. */
struct knee_probe {
	const char *system;
	double offered_ops, achieved_ops;
	int saturated;
	int by_generator;         /* saturated while the server had room: the load generator's limit */
	double server_busy;       /* the workers' estimated busy share (knee_verdict), NaN unknown */
	double ring_full;         /* the share of the window due requests waited for ring room */
	char reason[240];
};

/*
 * Runs one probe of system at offered_ops and fills out (its system and
 * offered_ops are set by the caller of the function).  Returns 0, or -1
 * with err when the probe could not be run (the search stops).
 */
typedef int (*knee_probe_fn)(void *ctx, const char *system, double offered_ops,
			     struct knee_probe *out, char *err, size_t errlen);

struct knee_result {
	double ops;                       /* the knee: highest load sustained */
	double lo, hi;                    /* the final bracket; hi 0: never unsustained */
	const char *slowest;              /* the system that failed at hi, or NULL */
	int capped;                       /* max_ops was sustained: the knee is a lower bound */
	struct knee_probe *probes;        /* in the order run */
	size_t nprobes;
	double elapsed_s;
};

/*
 * Parses the automatic form v (a JSON object) of `where`.loads_ops into
 * kc, defaults filled in.  where is "FILE: arrival".  Returns 0, or -1 with
 * one message naming the file and the field (unknown key with the nearest
 * one, a fraction out of range, fractions empty or not increasing, auto
 * not true, max_ops below start_ops).
 */
int knee_conf_parse(const json_t *v, const char *where, struct knee_conf *kc, char *err, size_t errlen);

/*
 * The search described above.  progress (NULL: none) gets one line per
 * probe, "knee: rawrpc 160000 ops/s: saturated (achieved 71 %)".  Returns
 * 0 with res filled (free with knee_result_free), or -1 with err: a probe
 * failed, or even start_ops / factor^KNEE_MAX_DOWN was not sustained
 * (res keeps the probes run so far, for run.json).
 */
int knee_search(const struct knee_conf *kc, const char *const *systems, size_t nsystems,
		knee_probe_fn fn, void *ctx, FILE *progress, struct knee_result *res,
		char *err, size_t errlen);

void knee_result_free(struct knee_result *res);

/* The most probes a search can run (each load probes every system at most
 * once, with its confirm probes): nsystems x (ramp steps + refine) x
 * (1 + confirm), the ramp's steps being
 * ceil(log(max_ops/start_ops)/log(factor)) + 1 upwards or KNEE_MAX_DOWN + 1
 * downwards, whichever is more. */
size_t knee_max_probes(const struct knee_conf *kc, size_t nsystems);

/* x rounded down to three significant digits (143872 -> 143000). */
double knee_round(double x);

/* The sweep's loads: fractions[i] x knee, each rounded to three
 * significant digits (at least 1), into loads[0 .. nfractions). */
void knee_loads(const struct knee_conf *kc, double knee, double *loads);

/*
 * A probe's verdict from its point object (merge_point's, with
 * "saturated" and "achieved_ops") and the trial's self-checks: fills
 * out->achieved_ops, saturated and reason.
 */
void knee_verdict(const json_t *pj, const json_t *checks, struct knee_probe *out);

/*
 * run.json's "knee": {ops, found_by: "search", probes: [{system,
 * offered_ops, achieved_ops, saturated, reason}], fractions,
 * slowest_system, search: {start_ops, factor, max_ops, probe_s, warmup_s,
 * refine}, bracket_ops: [lo, hi], capped, elapsed_s, loads_ops, set_by}.
 * A probe that did not sustain its load while the server's workers were
 * busy under half the time (knee_verdict's estimate) has "by_generator":
 * true; set_by is "generator" when every probe of the slowest system at
 * hi was, "system" otherwise, null with no hi.  loads
 * (the sweep's, nfractions of them) may be NULL when the search failed.
 */
json_t *knee_json(const struct knee_conf *kc, const struct knee_result *res, const double *loads);

/* The same shape for a list of loads: found_by "fixed", ops null, no
 * probes, loads_ops the list. */
json_t *knee_json_fixed(const double *loads, size_t nloads);

/*
 * After the sweep: whether the loads past the knee (fractions above 1)
 * came out saturated, as they should.  Adds "past_knee": {loads, points,
 * saturated, note} to run.json's knee and, unless progress is NULL, says
 * it in a line; a note explains a sweep whose loads past the knee were
 * not saturated (the search ran while the host was busier, so the knee
 * came out low) or whose loads below it were (busier during the sweep).
 */
void knee_after_sweep(json_t *run, FILE *progress);

/* The plan of a search for --dry-run: what it will probe and sweep,
 * without numbers it has not measured. */
void knee_describe(FILE *f, const struct knee_conf *kc, const char *const *systems, size_t nsystems);

#endif
