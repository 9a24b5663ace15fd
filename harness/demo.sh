#!/usr/bin/env bash
# demo.sh - `make demo`: run configs/quickstart.json (oq, rawrpc and
# deferred on a Memcached-like cache over shm, Twitter cluster 12's
# write-heavy shape), plot it, and print where everything went plus the
# median latency of each system at each load.  `make demo` builds first.
#
# Usage: harness/demo.sh [CONFIG] (default configs/quickstart.json)
set -eu
cd "$(dirname "$0")/.."
cfg=${1:-configs/quickstart.json}
oqb=bin/oqb

if [ ! -x "$oqb" ] || [ ! -x bin/oqb-server ] || [ ! -x bin/oqb-client ]; then
	echo "demo: bin/oqb, bin/oqb-server or bin/oqb-client is missing; run make first" >&2
	exit 1
fi

name=$(jq -r .name "$cfg")
out=results/$name-$(date -u +%Y%m%dT%H%M%SZ)
echo "demo: running $cfg into $out (about $(jq '(.systems|length) * (.arrival.loads_ops|length) * (.repeat // 1) * (.warmup_s + .duration_s + 0.6) | floor' "$cfg") s)"
start=$SECONDS
"$oqb" run "$cfg" --out "$out" >/dev/null
"$oqb" plot "$out" >/dev/null

echo
echo "median latency (us) by offered load (ops/s), the median over $(jq '.config.repeat // 1' "$out/run.json") trial(s) with the"
echo "trials' range; * = saturated, ! = flagged by a self-check (run.json says which), - = no samples"
jq -r '
	(.points | map(.offered_ops) | unique) as $loads |
	(["system"] + ($loads | map(tostring))) , (
	  .points | group_by(.system) | sort_by(.[0].index)[] |
	  [.[0].system] + [ .[] | (if .lat_ns.all.n > 0 then ((.lat_ns.all.p50 / 100 | round) / 10 | tostring) +
	      (if (.trials | length) > 1 and .spread.all.p50 then "[\((.spread.all.p50.min / 100 | round) / 10)-\((.spread.all.p50.max / 100 | round) / 10)]" else "" end)
	                           else "-" end) + (if .saturated then "*" else "" end) + (if .flagged and (.saturated | not) then "!" else "" end) ])
	| @tsv' "$out/run.json" | column -t
echo
echo "lowest median per load: $(jq -r '[.points | map(select(.lat_ns.all.n > 0)) |
	group_by(.offered_ops)[] | "\(.[0].offered_ops): \(min_by(.lat_ns.all.p50).system)"] |
	join(", ")' "$out/run.json")"
jq -r '"self-checks: \([.points[] | select(.flagged)] | length) of \(.points | length) points flagged (\([.points[] | select(.saturated | not) | select(.flagged | not)] | length) of \([.points[] | select(.saturated | not)] | length) below saturation are clean); most frequent: \([.points[].checks[] | select(.status == "warn") | .name] | group_by(.) | map("\(.[0]) \(length)") | join(", "))" +
	([.points[].checks[] | select(.name == "trial_agreement" and .cause)] | length | if . > 0 then
	  "; \(.) trial_agreement warning(s) from trials under different canaries (the machine'"'"'s floor changed mid-run: docs/trust.md)" else "" end)' "$out/run.json"
echo "took $((SECONDS - start)) s"
echo
echo "run.json: $out/run.json"
echo "plots:    $out/latency-throughput.svg"
echo "          $out/latency-throughput.png"
