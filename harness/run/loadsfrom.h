/*
 * loadsfrom.h - `oqb run CONFIG --loads-from BASE`: a run at the loads a
 * base run swept, instead of loads of its own.
 *
 * A config that searches its knee (knee.h) sweeps fractions of the knee
 * this run finds, so two of its runs share no offered load.  `oqb
 * compare` matches such runs by fraction of each run's knee; a gate that
 * wants the same loads on both sides freezes them instead: the new run
 * takes BASE's loads (its knee.loads_ops, else the offered loads of its
 * points) as a fixed list, exactly as `--set arrival.loads_ops=[...]`
 * would, and run.json's knee says where they came from
 * (knee.loads_from).  Then compare matches every point on exact load.
 *
 * Refused, naming BASE and what to do: a BASE that cannot be read, one
 * with no points or none with an offered load (a closed-loop run), and
 * one of another experiment: its config and this run's (after --set)
 * must agree in every key that changes what is measured
 * (result_config_measured, the keys the history's config fingerprint
 * hashes), arrival.loads_ops aside.  `--set arrival.loads_ops` beside
 * --loads-from is refused too: they would both set the loads.
 */
#ifndef OQB_LOADSFROM_H
#define OQB_LOADSFROM_H

#include <stddef.h>
#include <jansson.h>

/*
 * Reads BASE (a run directory or its run.json).  Returns it, with *set a
 * new "arrival.loads_ops=[...]" override (free it) to append to the
 * run's --set list, or NULL with err.  sets are the run's own overrides.
 */
json_t *loadsfrom_read(const char *path, const char *const *sets, size_t nsets, char **set, char *err,
		       size_t errlen);

/*
 * Whether config (the run's, after its overrides) is base's experiment
 * (above).  0, or -1 with err naming the first key that differs, both
 * values, and the fix.
 */
int loadsfrom_check(const json_t *base, const json_t *config, const char *path, const char *cfgpath, char *err,
		    size_t errlen);

/* run.json's knee.loads_from: {path, run_id, found_by, knee_ops,
 * bracket_ops, loads_ops} of base (knee_ops null for a base of fixed
 * loads). */
json_t *loadsfrom_json(const json_t *base, const char *path);

#endif
