#!/usr/bin/env bash
# noise-gate.sh - does oqbench's verdict survive this machine's noise?
# A benchmark to run on a quiet machine (not part of make test): it runs
# the demo's config (configs/quickstart.json: repeat 5, shuffled rounds)
# as A/A pairs and A/B pairs and prints what `oqb compare` said.
#
#   A/A: the same binaries twice, back to back; the gate must report no
#        regression and no improvement.
#   A/B: a third run right after the pair, with OQB_FAULT=server-delay-ns:N,
#        N = 20 % of the first run's median rawrpc p50 below saturation,
#        compared with the second run; the gate must
#        report a regression where the delay reaches the commit path
#        (rawrpc, deferred; oq's nilext writes commit before execution,
#        so its all-ops p50 hides most of a server delay, as the paper
#        says it should).
#   Stability: per pair, the share of points unflagged in both runs whose
#        p50 is within 10 % and P99 within 25 %, and the share of points
#        below saturation that are unflagged; and per number, the points
#        whose p50 no check warned about in either run (flagged_by), and
#        how many of them agree within 10 %.
#
# Usage: bench/noise-gate.sh [PAIRS (5)] [CONFIG]   (from the checkout, after make)
set -u
cd "$(dirname "$0")/.."
pairs=${1:-5}
cfg=${2:-configs/quickstart.json}
oqb=bin/oqb
out=$(mktemp -d "${TMPDIR:-/tmp}/oqb-noise.XXXXXX")
echo "noise-gate: $pairs A/A and $pairs A/B pairs of $cfg ($((3 * pairs)) runs); runs kept in $out"

stability() {   # stability A B: "stable X/Y unflagged-below-saturation P/Q"
	jq -n --slurpfile a "$1/run.json" --slurpfile b "$2/run.json" -r '
		[$a[0].points, $b[0].points] | transpose | map({a: .[0], b: .[1]}) as $ps |
		[$ps[] | select((.a.flagged | not) and (.b.flagged | not) and .a.lat_ns.all.n > 0 and .b.lat_ns.all.n > 0)] as $both |
		[$both[] | select(((.b.lat_ns.all.p50 / .a.lat_ns.all.p50) - 1 | fabs) <= 0.10 and
				  ((.b.lat_ns.all.p99 / .a.lat_ns.all.p99) - 1 | fabs) <= 0.25)] as $ok |
		[$ps[] | .a, .b | select(.saturated | not)] as $below |
		[$ps[] | select((.a.saturated | not) and (.b.saturated | not) and (.a.flagged_by.p50 // [1] | length) == 0 and
				(.b.flagged_by.p50 // [1] | length) == 0)] as $c50 |
		"stable \($ok | length)/\($both | length) unflagged-below-saturation \([$below[] | select(.flagged | not)] | length)/\($below | length)" +
		"; p50 clean in both \($c50 | length)/\([$ps[] | select((.a.saturated | not) and (.b.saturated | not))] | length)," +
		" within 10 % \([$c50[] | select(((.b.lat_ns.all.p50 / .a.lat_ns.all.p50) - 1 | fabs) <= 0.10)] | length)"'
}

run() {   # run DIR [ENV...]: one run of the config, quiet; says how long it took
	local d=$1 t0=$SECONDS; shift
	env "$@" "$oqb" run "$cfg" --out "$d" --quiet >/dev/null 2>"$d.err" || { echo "run $d failed: $(tail -1 "$d.err")"; return 1; }
	echo "  $(basename "$d"): $((SECONDS - t0)) s, $(jq -r '"\([.points[] | .discarded_trials // [] | length] | add) disturbed trial(s) rerun"' "$d/run.json")"
}
verdict() {   # verdict KIND I A B NOTE: compare and print
	"$oqb" compare "$3/run.json" "$4/run.json" >"$out/$1-$2.cmp" 2>&1
	local rc=$?
	echo "$1 $2: exit $rc, $(tail -1 "$out/$1-$2.cmp" | cut -d, -f2-4)${5:+ ($5)}; $(stability "$3" "$4")"
}
# Each pair of pairs is three back-to-back runs a, b, f: A/A compares a
# with b, A/B compares b with f, which runs with the server delay.
for i in $(seq 1 "$pairs"); do
	a=$out/run-$i-a b=$out/run-$i-b f=$out/run-$i-f
	run "$a" && run "$b" || continue
	verdict AA "$i" "$a" "$b"
	p50=$(jq '[.points[] | select(.system == "rawrpc" and (.saturated | not)) | .lat_ns.all.p50] | sort | .[length / 2 | floor] // 0' "$a/run.json")
	fault="OQB_FAULT=server-delay-ns:$(jq -n "$p50 * 0.2 | floor")"
	run "$f" "$fault" || continue
	verdict AB "$i" "$b" "$f" "$fault"
	jq -r -n --slurpfile a "$b/run.json" '$a[0].points[] | select(.saturated | not) | "\(.system) \(.offered_ops)"' |
	while read -r sys load; do
		row=$(awk -v s="$sys" -v l="$load" '$1 == s && $2 == l' "$out/AB-$i.cmp")
		echo "    $sys $load: $(echo "$row" | grep -o 'REGRESSION[^;]*\|inconclusive.*\|same\|improved.*' | head -1)"
	done
done
