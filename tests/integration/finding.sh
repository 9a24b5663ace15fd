#!/usr/bin/env bash
# finding.sh - `oqb run` writes the run's finding into run.json
# (harness/trust/finding.h): on configs/tiny.json with two trials per
# point, a ratio of oq's median to rawrpc's with its 95 % CI and the
# per-load medians equal to the points' merged ones, or, when this host
# saturated a load, a text that says why there is no number; and a run
# with one system still ends well, with a finding that says there is
# nothing to compare.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}

OUT=${OQB_FINDING_KEEP:-$T/run}
if ! "$OQB_BIN/oqb" run "$ROOT/configs/tiny.json" --out "$OUT" --quiet --set repeat=2 --set duration_s=0.3 \
	--set rerun_disturbed=0 >"$T/stdout" 2>"$T/stderr"; then
	notok finding_run "oqb run failed: $(tail -5 "$T/stderr")"
	finish
fi
R=$OUT/run.json
jcheck finding_present "$R" '.finding | (.status == "ok" or .status == "insufficient") and (.text | length > 0)
	and (.caveat | length > 0) and (.method | test("bootstrap over trials")) and .reference == "oq"
	and (.class == "nilext" or .class == "all") and .statistic == "p50" and .resamples > 0
	and (.pairs | length == 1) and .pairs[0].system == "rawrpc"'
# with a number: at least 2 loads, the CI around the ratio, the text says it
jcheck finding_number_or_why "$R" '.finding as $f | $f.pairs[0] as $p |
	if $p.status == "ok" then
		($p.loads | length >= 2) and $p.ci95[0] <= $p.ratio and $p.ratio <= $p.ci95[1] and
		($f.text | test("oq.s (nilext|request) median is [0-9.]+x (lower|higher) than rawrpc.s \\(95 % CI [0-9.]+-[0-9.]+"))
	else
		($p | has("ratio") | not) and ($p.reason | length > 0) and ($f.text | startswith("no finding with a number"))
	end'
# per load: the medians are the points' merged ones where no round was
# left out (each load's rounds are paired: the same trial numbers on both
# sides, docs/trust.md "The finding"), and the ratio theirs
jcheck finding_medians_are_merged "$R" '.finding.class as $c | .points as $pts | (.finding.pairs[0] | .pairing == "rounds" or (.loads | length) == 0) and
	all(.finding.pairs[0].loads[];
	. as $l | ([$pts[] | select(.offered_ops == $l.offered_ops)] | map({(.system): .lat_ns[$c].p50}) | add) as $m |
	(if $l.rounds_left_out == 0 and $l.trials_unpaired == 0 then $l.reference_p50_ns == $m.oq and $l.p50_ns == $m.rawrpc
	 else $l.rounds >= 2 end) and (($l.ratio - $l.p50_ns / $l.reference_p50_ns) | fabs) < 1e-9)'
jcheck finding_loads_below_saturation "$R" '.points as $pts | all(.finding.pairs[0].loads[]; . as $l |
	all($pts[] | select(.offered_ops == $l.offered_ops); .saturated | not))'

# oqb compare and the figures report carry it: compare sets the two runs'
# findings side by side (the same run twice: no pair moved), the report
# lists it under Findings with the run's own text
"$OQB_BIN/oqb" compare "$R" "$R" --json >/dev/null 2>"$T/cmp.err"
if grep -qF "finding, base: $(jq -r .finding.text "$R")" "$T/cmp.err" && grep -q '^finding, compared: ' "$T/cmp.err" &&
	! grep -q 'moved, the CIs do not overlap' "$T/cmp.err"; then ok finding_in_compare
else notok finding_in_compare "$(cat "$T/cmp.err")"; fi
ftext=$(jq -r .finding.text "$R")
if [ -n "$ftext" ] && "$OQB_BIN/oqb" figures --runs "$OUT" --out "$T/rep" >/dev/null 2>"$T/fig.err" &&
	sed -n '/<ul id=findings>/,/<\/ul>/p' "$T/rep/index.html" | sed "s/&#39;/'/g" | grep -qF "$ftext"; then ok finding_in_report
else notok finding_in_report "$(cat "$T/fig.err"; grep -A3 'id=findings' "$T/rep/index.html")"; fi

# one system: nothing to compare, said so; the run still succeeds
OUT1=$T/one
if "$OQB_BIN/oqb" run "$ROOT/configs/tiny.json" --out "$OUT1" --quiet --set 'systems=["oq"]' \
	--set 'arrival.loads_ops=[5000]' --set duration_s=0.2 --set rerun_disturbed=0 >"$T/stdout1" 2>"$T/stderr1"; then
	jcheck finding_one_system "$OUT1/run.json" '.finding.status == "none" and (.finding.text | test("one system"))'
else
	notok finding_one_system "oqb run failed: $(tail -5 "$T/stderr1")"
fi
finish
