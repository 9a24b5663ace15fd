#!/usr/bin/env bash
# ab-gate-check.sh - does `oqb ab` decide right on this machine?  A
# benchmark for a quiet machine (not part of make test):
#   A/A:  the same binaries as BASE and NEW, PAIRS times: "no regression"
#         (exit 0) expected every time;
#   A/B:  NEW's server made slower by OQB_FAULT=server-delay-ns:N, PAIRS
#         times: "regression" (exit 1).  N is chosen by its effect: on
#         shm a server delay moves p50 by less than itself (docs/trust.md:
#         80 ns moved a 401 ns p50 by 2-25 ns), so N starts at 20 % of
#         BASE's rawrpc p50 and doubles (up to 4 times) until a 3-round
#         `oqb ab` gate with it measures p50 at least 20 % higher at every
#         load;
#   +2 %: the same with N = 2 % of p50: never "improvement" (a change this
#         small is below the 5 % tolerance: same or inconclusive).
# The config is small on purpose (rawrpc, null backend, three loads well
# below saturation) so that each gate takes about a minute.  Its points
# last 1 s, as configs/ci-regression.json's do: a trial's p99 sits in a
# sparse tail of timer ticks and host noise, and the spread of trial p99s
# shrinks with the trial's length as sampling noise does (measured here,
# 10 trials a point at 10, 30 and 60 Kops/s: log-sd 30-47 % at 0.3 s,
# 15-26 % at 1.2 s, in two alternations).
#
# Usage: bench/ab-gate-check.sh [PAIRS (5)]   (from the checkout, after make)
set -u
cd "$(dirname "$0")/.."
pairs=${1:-5}
out=$(mktemp -d "${TMPDIR:-/tmp}/oqb-abcheck.XXXXXX")
cat >"$out/cfg.json" <<CFG
{ "name": "ab-check", "transport": "shm", "systems": ["rawrpc"],
  "server": { "workers": 1, "backend": { "kind": "null" } },
  "clients": { "processes": 1, "threads": 1 },
  "workload": { "kind": "kv", "put_ratio": 0.8, "key_size": 16, "value_size": 256, "keys": 10000 },
  "arrival": { "kind": "poisson", "loads_ops": [10000, 30000, 60000] },
  "warmup_s": 0.2, "duration_s": 1, "seed": 5, "timeouts": { "start_delay_ms": 100 } }
CFG
bin/oqb run "$out/cfg.json" --out "$out/ref" --set repeat=3 --quiet >/dev/null 2>&1 || { echo "reference run failed"; exit 1; }
p50=$(jq '[.points[].lat_ns.all.p50] | sort | .[length / 2 | floor]' "$out/ref/run.json")
echo "ab-gate-check: rawrpc median p50 $p50 ns; runs in $out"
# rise DIR: the smallest p50 change over the loads an `oqb ab` gate
# measured, in %: from rounds whose two sides ran back to back on one floor
# (this VM's canary jumps between about 100 and 500 ns; a reference run
# and a delayed run taken one after the other can straddle the two)
rise() { jq '[.comparison.points[].p50.change_pct] | min' "$1/ab.json"; }
n20=$(jq -n "$p50 * 0.2 | floor")
for k in 1 2 3 4 5; do
	bin/oqb ab "$out/cfg.json" --base bin --new bin --quiet --trials 3 --max-trials 3 --out "$out/cal-$n20" \
		--new-env "OQB_FAULT=server-delay-ns:$n20" >"$out/cal-$n20.out" 2>&1
	rc=$?
	r=$(rise "$out/cal-$n20" 2>/dev/null)
	if [ "$rc" -eq 2 ] || [ "$rc" -ge 4 ] || [ -z "$r" ] || [ "$r" = null ]; then
		echo "ab-gate-check: the calibration gate with a $n20 ns delay measured nothing (oqb ab exit $rc);" \
			"its output is $out/cal-$n20.out"
		exit 1
	fi
	echo "ab-gate-check: a server delay of $n20 ns raised p50 by at least $(printf "%.1f" "$r") % over the loads (3 paired rounds)"
	[ "$(jq -n "$r >= 20")" = true ] && break
	[ $k = 5 ] && { echo "ab-gate-check: no delay up to $n20 ns raised p50 by 20 %; the A/B gates use it anyway"; break; }
	n20=$((n20 * 2))
done
gate() {   # gate NAME [--new-env ...]
	local name=$1; shift
	bin/oqb ab "$out/cfg.json" --base bin --new bin --quiet --out "$out/$name" "$@" >"$out/$name.out" 2>&1
	local rc=$?
	echo "$name: exit $rc ($(jq -r '.verdict' "$out/$name/ab.json" 2>/dev/null), $(jq -r '.rounds' "$out/$name/ab.json" 2>/dev/null) rounds; canary $(jq -r '"\(.noise.before.median_ns) -> \(.noise.after.median_ns) ns"' "$out/$name/ab.json" 2>/dev/null)) $(jq -r '[.comparison.points[]? | "\(.load):\(.verdict)"] | join(" ")' "$out/$name/ab.json" 2>/dev/null)"
}
for i in $(seq 1 "$pairs"); do gate "aa-$i"; done
for i in $(seq 1 "$pairs"); do gate "ab20-$i" --new-env "OQB_FAULT=server-delay-ns:$n20"; done
for i in $(seq 1 "$pairs"); do gate "ab2-$i" --new-env "OQB_FAULT=server-delay-ns:$(jq -n "$p50 * 0.02 | floor")"; done
