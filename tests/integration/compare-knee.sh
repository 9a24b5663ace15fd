#!/usr/bin/env bash
# compare-knee.sh - `oqb compare` and `oqb history` across knee searches
# (harness/verdict/compare_match.h) and `oqb run --loads-from`
# (harness/run/loadsfrom.h).
#
# Two real runs of a small knee-searching shm config: compare matches
# every point by fraction of each run's knee (none unmatched, none
# "missing"), each with a verdict, and compares the knees with their
# brackets.  Then runs made from the first with jq, whose trials are
# fixed so the verdicts are decided by the logic alone: a knee inside the
# other's bracket is "same"; apart and beyond the tolerance it is a
# regression (exit 1), or inconclusive (exit 3) when the lower run's own
# sweep sustained loads past its knee or single probes decided its loads,
# and a capped search's knee is never the lower; a point only one side
# has is listed "unmatched", never a regression, against a searched or a
# fixed-load NEW; fractions match within 1 % and not beyond; nothing
# matched is inconclusive.  The history keys a searched run's points by
# fraction of its knee plus a "knee" series, a fixed run's by load, and
# still reads a line written before.  --loads-from runs at BASE's loads
# (compare then matches on load) and refuses a base with no points,
# another experiment, or a second source of loads.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
OQB=$OQB_BIN/oqb

# One system, one client process, two fractions, x4 ramp and one
# bisection step, one probe a load: a handful of 0.2 s probes, then two
# 0.2 s points.
jq '.name = "compare-knee" | .systems = ["oq"] | .clients.processes = 1 | .duration_s = 0.2 | .warmup_s = 0.1
    | .rerun_disturbed = 0 | .timeouts = {start_delay_ms: 100}
    | .arrival.loads_ops = {auto: true, fractions: [0.5, 1.0],
                            search: {start_ops: 20000, factor: 4, refine: 1, probe_s: 0.2, warmup_s: 0.1, confirm: 0}}' \
	"$ROOT/configs/tiny.json" >"$T/k.json"
if "$OQB" run "$T/k.json" --quiet --out "$T/a" >"$T/a.out" 2>&1 &&
   "$OQB" run "$T/k.json" --quiet --set seed=9 --out "$T/b" >"$T/b.out" 2>&1; then
	ok "two knee-searching runs"
else
	notok "two knee-searching runs" "$(tail -3 "$T/a.out" "$T/b.out")"
	finish
fi
A=$T/a/run.json B=$T/b/run.json

# --- two real runs: matched by fraction, every point judged -------------
"$OQB" compare "$A" "$B" --json >"$T/ab.json" 2>"$T/ab.err"
rc=$?
case $rc in 0|1|3) ok "compare of two searched runs exits with a verdict ($rc)" ;;
	*) notok "compare of two searched runs exits with a verdict" "exit $rc: $(tail -3 "$T/ab.err")" ;; esac
jcheck "every point matched by fraction of its run's knee, none unmatched or missing" "$T/ab.json" \
	'.summary.matched_by == "knee_fraction" and .summary.matched == 2 and .summary.unmatched == 0
	 and ([.points[].load] | sort) == ["0.5xknee", "1xknee"]
	 and all(.points[]; .verdict == "same" or .verdict == "regression" or .verdict == "improvement"
	         or .verdict == "inconclusive")'
ka=$(jq .knee.ops "$A") kb=$(jq .knee.ops "$B")
jcheck "each matched point ran at its fraction of its own run's knee" "$T/ab.json" \
	"all(.points[]; (.offered_ops_base - .fraction * $ka | fabs) <= 0.01 * .fraction * $ka
	                and (.offered_ops_new - .fraction * $kb | fabs) <= 0.01 * .fraction * $kb)"
jcheck "the knees are compared with their brackets" "$T/ab.json" \
	"(.summary.knee | .base_ops == $(jq .knee.ops "$A") and .new_ops == $(jq .knee.ops "$B")
	  and .base_bracket_ops == $(jq -c .knee.bracket_ops "$A") and .new_bracket_ops == $(jq -c .knee.bracket_ops "$B")
	  and (.verdict | test(\"^(same|regression|improvement|inconclusive)$\")) and (.why | length) > 0)"
n_reg=$(jq '[.points[] | select(.verdict == "regression")] | length' "$T/ab.json")
k_reg=$(jq '[.summary.knee | select(.verdict == "regression")] | length' "$T/ab.json")
if [ "$(jq .summary.regressions "$T/ab.json")" = $((n_reg + k_reg)) ]; then
	ok "regressions are only judged points and the knee"
else
	notok "regressions are only judged points and the knee" "$(jq -c .summary "$T/ab.json")"
fi

# --- the logic, on runs with fixed trials --------------------------------
# S: run A with six identical-shaped trials per point, no checks, no canary.
jq '.points |= [.[] | del(.canary_ns) | .checks = [] | .saturated = false
	| .trials = [range(6) as $i | {lat_ns: {all: {n: 1000, p50: (10000 + $i * 100), p99: (50000 + $i * 500)}},
	                               achieved_ops: (8000 + $i)}]]
    | .knee.past_knee = {loads: 0, points: 0, saturated: 0} | .knee.search.confirm = 1' "$A" >"$T/s.json"
# scale F: the same run with its knee, bracket and loads times F
scale() {
	jq --argjson f "$1" '.knee.ops *= $f | .knee.bracket_ops |= map(if . == null then null else . * $f end)
		| .knee.loads_ops |= map(. * $f) | .points |= map(.offered_ops *= $f)' "$T/s.json"
}
cmp_case() {   # cmp_case NAME BASE NEW WANT_RC JQ_CHECK
	"$OQB" compare "$2" "$3" --json >"$T/$1.json" 2>"$T/$1.err"
	local rc=$?
	if [ $rc -ne "$4" ]; then notok "$1" "exit $rc, expected $4: $(jq -c .summary "$T/$1.json" 2>/dev/null) $(tail -2 "$T/$1.err")"
	elif ! jq -e "$5" "$T/$1.json" >/dev/null 2>&1; then notok "$1" "$(jq -c '.summary' "$T/$1.json")"
	else ok "$1"; fi
}
scale 1.05 >"$T/s105.json"
cmp_case "a knee 5 % higher, inside the bracket, is the same knee" "$T/s.json" "$T/s105.json" 0 \
	'.summary.knee.verdict == "same" and (.summary.knee.why | test("inside the brackets")) and .summary.matched == 2
	 and all(.points[]; .verdict == "same")'
# the bracket is x2 wide (one bisection of a x4 step): 0.2 puts it below
scale 0.2 >"$T/s020.json"
cmp_case "a knee below the base's bracket is a regression (exit 1)" "$T/s.json" "$T/s020.json" 1 \
	'.summary.knee.verdict == "regression" and .summary.regressions == 1 and all(.points[]; .verdict == "same")'
cmp_case "and the reverse an improvement" "$T/s020.json" "$T/s.json" 0 \
	'.summary.knee.verdict == "improvement" and .summary.improvements == 1'
jq '.knee.past_knee = {loads: 1, points: 1, saturated: 0}' "$T/s020.json" >"$T/s020p.json"
cmp_case "a lower knee its own sweep outran is inconclusive (exit 3)" "$T/s.json" "$T/s020p.json" 3 \
	'.summary.knee.verdict == "inconclusive" and (.summary.knee.why | test("past its knee")) and .summary.regressions == 0'
jq '.knee.search.confirm = 0' "$T/s020.json" >"$T/s020u.json"
cmp_case "a lower knee that single probes decided is inconclusive (exit 3)" "$T/s.json" "$T/s020u.json" 3 \
	'.summary.knee.verdict == "inconclusive" and (.summary.knee.why | test("search.confirm"))'
jq '.knee.bracket_ops[1] = null | .knee.capped = true' "$T/s020.json" >"$T/s020c.json"
cmp_case "a capped search's knee is a lower bound, never the lower knee" "$T/s.json" "$T/s020c.json" 0 \
	'.summary.knee.verdict == "same"'
jq '.points |= .[1:]' "$T/s105.json" >"$T/drop.json"
cmp_case "a point only BASE has is unmatched, not a regression" "$T/s.json" "$T/drop.json" 0 \
	'.summary.unmatched == 1 and .summary.regressions == 0 and .summary.matched == 1
	 and ([.points[] | select(.verdict == "unmatched")] | length == 1 and .[0].side == "base"
	      and (.[0].detail | test("unmatched")))'
cmp_case "a point only NEW has is listed unmatched" "$T/drop.json" "$T/s105.json" 0 \
	'.summary.unmatched == 1 and ([.points[] | select(.verdict == "unmatched")][0].side == "new")'
# fractions read back from loads (no loads_ops list): within 1 % they match, beyond they do not
jq 'del(.knee.loads_ops) | .points |= map(.offered_ops *= 0.995)' "$T/s.json" >"$T/r995.json"
jq 'del(.knee.loads_ops) | .points |= map(.offered_ops *= 0.98)' "$T/s.json" >"$T/r980.json"
cmp_case "a fraction 0.5 % off (rounding) matches" "$T/s.json" "$T/r995.json" 0 '.summary.matched == 2'
cmp_case "a fraction 2 % off does not" "$T/s.json" "$T/r980.json" 3 \
	'.summary.matched == 0 and .summary.unmatched == 4 and .summary.regressions == 0
	 and (.summary.notes | any(test("nothing was judged")))'
# a fixed-load NEW missing a BASE point: unmatched/missing, not a regression
jq '.knee = {found_by: "fixed", ops: null, loads_ops: [.points[].offered_ops]} | .points |= .[1:]' \
	"$T/s.json" >"$T/fixed.json"
cmp_case "a base point missing from a fixed-load run is unmatched, not a regression" "$T/s.json" "$T/fixed.json" 0 \
	'.summary.matched_by == "load" and .summary.knee == null and .summary.unmatched == 1 and .summary.regressions == 0
	 and ([.points[] | select(.verdict == "unmatched")][0].detail | test("missing in"))
	 and (.summary.notes | any(test("--loads-from")))'
"$OQB" compare "$T/s.json" "$T/drop.json" >"$T/drop.out" 2>&1
if tail -1 "$T/drop.out" | grep -q '^compare: 2 points, 0 regressions, .*; matched by fraction of knee, 1 unmatched, knee same$'; then
	ok "the summary line counts the unmatched and names the knee's verdict"
else
	notok "the summary line counts the unmatched and names the knee's verdict" "$(tail -1 "$T/drop.out")"
fi

# --- history: keys by fraction of the knee --------------------------------
H=$T/h.jsonl
if "$OQB" history add "$T/a" --file "$H" >"$T/h.out" 2>&1 && "$OQB" history add "$T/b" --file "$H" >>"$T/h.out" 2>&1; then
	ok "history add of two searched runs"
else
	notok "history add of two searched runs" "$(cat "$T/h.out")"
fi
jcheck "history keys a searched run's points by fraction of its knee, and the knee as a series" "$H" \
	'([.points[].key] | sort) == ["knee", "oq@0.5xknee", "oq@1xknee"]
	 and (.points[] | select(.key == "knee") | .achieved_ops > 0 and (.bracket_ops | length) == 2)'
if [ "$(jq -r '[.points[].key] | sort | join(" ")' "$H" | sort -u | wc -l)" = 1 ]; then
	ok "both runs' points share their keys (one series each)"
else
	notok "both runs' points share their keys" "$(jq -c '[.points[].key]' "$H")"
fi
# a line written before fraction keys (exact loads, no knee series) still reads
head -1 "$H" | jq -c '.run_id = "old" | .created_utc = "2026-01-01T00:00:00Z"
	| .points = [.points[] | select(.key != "knee") | .key = "oq@\(.offered_ops | floor)"]' >>"$H"
if "$OQB" history show --file "$H" >"$T/show.out" 2>&1 && "$OQB" history detect --file "$H" >"$T/det.out" 2>&1; then
	ok "a history with a line from before still reads (show, detect)"
else
	notok "a history with a line from before still reads" "$(tail -3 "$T/show.out" "$T/det.out")"
fi

# --- --loads-from ---------------------------------------------------------
if "$OQB" run "$T/k.json" --quiet --loads-from "$T/a" --out "$T/c" >"$T/c.out" 2>&1; then
	ok "a run with --loads-from"
else
	notok "a run with --loads-from" "$(tail -3 "$T/c.out")"
fi
jcheck "--loads-from runs BASE's loads, fixed, and says where they came from" "$T/c/run.json" \
	"(.knee.found_by == \"fixed\" and .knee.loads_ops == $(jq -c .knee.loads_ops "$A")
	  and ([.points[].offered_ops] | sort) == ($(jq -c .knee.loads_ops "$A") | sort)
	  and .knee.loads_from.run_id == $(jq .run_id "$A") and .knee.loads_from.knee_ops == $(jq .knee.ops "$A")
	  and .knee.loads_from.found_by == \"search\")"
"$OQB" compare "$A" "$T/c/run.json" --json >"$T/ac.json" 2>/dev/null
jcheck "compare against the frozen run matches every point on load" "$T/ac.json" \
	'.summary.matched_by == "load" and .summary.matched == 2 and .summary.unmatched == 0'
"$OQB" history add "$T/c" --file "$H" >/dev/null 2>&1
jcheck "history keys the frozen run's points by load" <(tail -1 "$H") \
	"([.points[].key] | sort) == ([$(jq -c '.knee.loads_ops[]' "$A" | tr '\n' ',' | sed 's/,$//')] | map(\"oq@\\(. | floor)\") | sort)"
loads_refused() {   # loads_refused NAME BASE WORD... [-- RUN-ARGS...]
	local name=$1 base=$2 out rc w miss="" args=()
	shift 2
	local words=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do words+=("$1"); shift; done
	[ $# -gt 0 ] && { shift; args=("$@"); }
	out=$("$OQB" run "$T/k.json" --loads-from "$base" "${args[@]}" --out "$T/out-$name" 2>&1)
	rc=$?
	for w in "${words[@]}"; do case $out in *"$w"*) ;; *) miss="$miss [$w]" ;; esac; done
	if [ $rc -ne 2 ]; then notok "$name" "exit $rc, expected 2: $out"
	elif [ -n "$miss" ]; then notok "$name" "message lacks$miss: $out"
	elif [ -e "$T/out-$name" ]; then notok "$name" "a results directory was created"
	else ok "$name"; fi
}
jq '.points = []' "$A" >"$T/nopoints.json"
loads_refused "--loads-from a base with no points is refused" "$T/nopoints.json" "no points" "--loads-from"
loads_refused "--loads-from a base of another experiment is refused, naming the key" "$T/a" \
	"another experiment" "workload.value_size" "128" "256" -- --set workload.value_size=256
loads_refused "--loads-from beside --set arrival.loads_ops is refused" "$T/a" "both set the loads" \
	-- --set 'arrival.loads_ops=[1000]'
loads_refused "--loads-from a directory without run.json is refused" "$T/nowhere" "--loads-from" "nowhere"

finish
