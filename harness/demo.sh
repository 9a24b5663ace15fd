#!/usr/bin/env bash
# demo.sh - `make demo`: run configs/quickstart.json (oq, rawrpc and
# deferred on a Memcached-like cache over shm, Twitter cluster 12's
# write-heavy shape), plot it, and print where everything went, the
# median latency of each system at each load, and last the finding: oq's
# median against the others' below saturation, with its 95 % CI from the
# trials, and which numbers the checks warned about; then the two tails
# (raw and system P99) and the tagged and unattributed fractions.  `make
# demo` builds first.
#
# Usage: harness/demo.sh [CONFIG] (default configs/quickstart.json)
#        harness/demo.sh --report RUN_DIR   (the printout alone, of a run made before)
set -eu
cd "$(dirname "$0")/.."
oqb=bin/oqb
if [ "${1:-}" = --report ]; then
	out=${2:?"demo: --report needs the run's directory (the one holding run.json)"}
	if [ ! -f "$out/run.json" ]; then
		echo "demo: $out/run.json does not exist; give the directory oqb run wrote (its --out)" >&2
		exit 1
	fi
	report_only=1
else
	report_only=0
fi
cfg=${1:-configs/quickstart.json}

# a run needs the binaries; --report reads run.json alone (and so works
# from a checkout whose only build is make check's, build/san/bin)
if [ $report_only = 0 ] && { [ ! -x "$oqb" ] || [ ! -x bin/oqb-server ] || [ ! -x bin/oqb-client ]; }; then
	echo "demo: bin/oqb, bin/oqb-server or bin/oqb-client is missing; run make first" >&2
	exit 1
fi

start=$SECONDS
if [ $report_only = 0 ]; then
	name=$(jq -r .name "$cfg")
	out=results/$name-$(date -u +%Y%m%dT%H%M%SZ)
	echo "demo: running $cfg into $out (about $(jq '(.systems|length) * (.arrival.loads_ops|length) * (.repeat // 1) * (.warmup_s + .duration_s + 0.6) | floor' "$cfg") s)"
	"$oqb" run "$cfg" --out "$out" >/dev/null
	"$oqb" plot "$out" >/dev/null
fi

# table PCT: PCT (p50 or p99) of every point in us, the trials' range, and
# the marks; "!" when a check warned about that number (flagged_by; run
# files from before it: any warning).
table() {
	jq -r --arg q "$1" '
	(.points | map(.offered_ops) | unique) as $loads |
	def us: if . >= 100000 then (. / 1000 | round | tostring) else ((. / 100 | round) / 10 | tostring) end;
	(["system"] + ($loads | map(tostring))) , (
	  .points | group_by(.system) | sort_by(.[0].index)[] |
	  [.[0].system] + [ .[] | (if .lat_ns.all.n > 0 then (.lat_ns.all[$q] | us) +
	      (if (.trials | length) > 1 and .spread.all[$q] then "[\(.spread.all[$q].min | us)-\(.spread.all[$q].max | us)]" else "" end)
	                           else "-" end) + (if .saturated then "*" else "" end) +
	      (if (.saturated | not) and (if .flagged_by then (.flagged_by[$q] | length) > 0 else .flagged end) then "!" else "" end) ])
	| @tsv' "$out/run.json" | column -t
}
echo
echo "median latency (us) by offered load (ops/s), the median over $(jq '.config.repeat // 1' "$out/run.json") trial(s) with the"
echo "trials' range; * = saturated, ! = a self-check warned about this number (run.json's flagged_by says which),"
echo "- = no samples"
table p50
echo
echo "P99 latency (us), the same way"
table p99
echo
echo "lowest median per load: $(jq -r '[.points | map(select(.lat_ns.all.n > 0)) |
	group_by(.offered_ops)[] | "\(.[0].offered_ops): \(min_by(.lat_ns.all.p50).system)"] |
	join(", ")' "$out/run.json")"
jq -r '[.points[] | select(.saturated | not)] as $below |
	def clean($q): [$below[] | select(if .flagged_by then ((.flagged_by[$q] // .flagged_by.p99) | length) == 0 else (.flagged | not) end)] | length;
	"self-checks: \([.points[] | select(.flagged)] | length) of \(.points | length) points flagged (\([$below[] | select(.flagged | not)] | length) of \($below | length) below saturation are clean); most frequent: \([.points[].checks[] | select(.status == "warn") | .name] | group_by(.) | map("\(.[0]) \(length)") | join(", "))" +
	"\nby number, of the \($below | length) points below saturation: p50 clean at \(clean("p50")), P99 at \(clean("p99")), P99.9 at \(clean("p999")), system P99 at \(clean("sys_p99")); p50 and system P99 both at \([$below[] | select(if .flagged_by then ((.flagged_by.p50 | length) == 0 and ((.flagged_by.sys_p99 // .flagged_by.p99) | length) == 0) else (.flagged | not) end)] | length)" +
	([.points[].checks[] | select(.name == "trial_agreement" and .cause)] | length | if . > 0 then
	  "; \(.) trial_agreement warning(s) from trials under different canaries (the machine'"'"'s floor changed mid-run: docs/trust.md)" else "" end)' "$out/run.json"
# like with like: a point whose trials ran on two floors judged on its
# own floor's trials (its regime's trial_agreement, 3 or more trials) and
# the point's other checks as they stand; a point on one floor as above
jq -r '[.points[] | select(.saturated | not)] as $below |
	def flags($q): (.flagged_by[$q] // .flagged_by.p99 // []);
	def ok($q): if .canary_regime.regimes then
	    (.canary_regime.regimes[0].trial_agreement) as $a |
	    $a != null and ((flags($q) - ["trial_agreement"]) | length) == 0 and
	    ($a.status == "pass" or ((($a.concerns // []) | index($q)) | not))
	  elif .flagged_by then (flags($q) | length) == 0 else (.flagged | not) end;
	[$below[] | select(.canary_regime.regimes)] as $m |
	if ($m | length) == 0 then empty else
	"like with like (the \($m | length) point(s) on two floors judged on their own floor'"'"'s trials, 3 or more): p50 clean at \([$below[] | select(ok("p50"))] | length), system P99 at \([$below[] | select(ok("sys_p99"))] | length), both at \([$below[] | select(ok("p50") and ok("sys_p99"))] | length) of \($below | length)" end' "$out/run.json"
# the result, from the trials (run.json's finding, docs/trust.md "The
# finding"), then which of its numbers the checks warned about
echo
jq -r 'if .finding then "finding: \(.finding.text)\ncaveat:  \(.finding.caveat)"
	else "finding: none in this run.json (written by an oqb from before the finding existed)" end' "$out/run.json"
# last, the two tails (docs/trust.md, "Host stalls, attributed"): per
# point the raw P99 (every request) and the system's (the requests no
# host stall touched), and how many requests a host stall (tagged) or a
# stall nobody vouched for (unattributed) touched
echo
echo "P99 (us), raw / system (the requests no host stall touched), below saturation; ! = a check warned about it"
jq -r '
	(.points | map(.offered_ops) | unique) as $loads |
	def us: if . == null then "-" elif . >= 100000 then (. / 1000 | round | tostring) else ((. / 100 | round) / 10 | tostring) end;
	def fl($q): if .flagged_by then ((.flagged_by[$q] // .flagged_by.p99) | length) > 0 else .flagged end;
	(["system"] + ($loads | map(tostring))), (
	  .points | group_by(.system) | sort_by(.[0].index)[] |
	  [.[0].system] + [ .[] | if .saturated or .lat_ns.all.n == 0 then "*" else
	    (.lat_ns.all.p99 | us) + (if fl("p99") then "!" else "" end) + "/" +
	    (if (.host_tags.sys_lat_ns.all.n // 0) == 0 then "-" else (.host_tags.sys_lat_ns.all.p99 | us) +
	     (if fl("sys_p99") then "!" else "" end) end) end ])
	| @tsv' "$out/run.json" | column -t
jq -r '[.points[] | select((.saturated | not) and .host_tags)] as $b |
	def pct: (. * 1000 | round) / 10 | tostring + " %";
	def range(f): ($b | map(f) | if length == 0 then "-" else "\(min | pct)-\(max | pct)" end);
	if ($b | length) == 0 then "tags: none in this run.json (no host_tags)" else
	"requests tagged by a host stall: \(range(.host_tags.tagged_frac.all)) of a point'"'"'s; touched by an unattributed one: \(range(.host_tags.unattributed_frac.all)); raw P99 set by the host at \([$b[] | select(.host_tags.set_by_host.p99)] | length) of \($b | length) points" end' "$out/run.json"
# points whose kept trials ran on two floors of the machine (canary
# regimes, docs/trust.md): each regime's own median and system P99, since
# the point's merged numbers mix two machines
jq -r 'def us: if . == null then "-" elif . >= 100000 then "\(. / 1000 | round) us" else "\((. / 100 | round) / 10) us" end;
	[.points[] | select(.canary_regime.regimes)] as $m |
	if ($m | length) == 0 then "canary regimes: no point mixed two floors of the machine" else
	"canary regimes: \($m | length) point(s) kept trials on two floors; each regime'"'"'s own p50 and system P99:",
	($m[] | "  p\(.index + 1 | tostring | if length < 2 then "0" + . else . end) \(.system) \(.offered_ops // .outstanding): regimes " +
	  ([.canary_regime.regimes | to_entries[] | .key as $k | .value |
	    "\(.canary_ns | round) ns (\(.trials | length)\(if $k == 0 then " trials" else "" end)) p50 \(if .lat_ns.all.n > 0 then .lat_ns.all.p50 | us else "-" end) sysP99 \(if (.host_tags.sys_lat_ns.all.n // 0) > 0 then .host_tags.sys_lat_ns.all.p99 | us else "-" end)"] | join(" | ")))
	end' "$out/run.json"
echo "took $((SECONDS - start)) s"
echo
echo "run.json: $out/run.json ($(du -h "$out/run.json" | cut -f1); jq . indents it)"
echo "table:    $out/summary.csv (one row per point, for a spreadsheet)"
echo "plots:    $out/latency-throughput.svg"
echo "          $out/latency-throughput.png"
