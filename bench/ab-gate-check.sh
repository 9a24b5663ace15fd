#!/usr/bin/env bash
# ab-gate-check.sh - does `oqb ab` decide right on this machine?  A
# benchmark for a quiet machine (not part of make test):
#   A/A:  the same binaries as BASE and NEW, PAIRS times: "no regression"
#         (exit 0) expected every time;
#   A/B:  NEW's server made slower by OQB_FAULT=server-delay-ns:N with N
#         = 20 % of BASE's rawrpc p50, PAIRS times: "regression" (exit 1);
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
gate() {   # gate NAME [--new-env ...]
	local name=$1; shift
	bin/oqb ab "$out/cfg.json" --base bin --new bin --quiet --out "$out/$name" "$@" >"$out/$name.out" 2>&1
	local rc=$?
	echo "$name: exit $rc ($(jq -r '.verdict' "$out/$name/ab.json" 2>/dev/null), $(jq -r '.rounds' "$out/$name/ab.json" 2>/dev/null) rounds; canary $(jq -r '"\(.noise.before.median_ns) -> \(.noise.after.median_ns) ns"' "$out/$name/ab.json" 2>/dev/null)) $(jq -r '[.comparison.points[]? | "\(.load):\(.verdict)"] | join(" ")' "$out/$name/ab.json" 2>/dev/null)"
}
for i in $(seq 1 "$pairs"); do gate "aa-$i"; done
for i in $(seq 1 "$pairs"); do gate "ab20-$i" --new-env "OQB_FAULT=server-delay-ns:$(jq -n "$p50 * 0.2 | floor")"; done
for i in $(seq 1 "$pairs"); do gate "ab2-$i" --new-env "OQB_FAULT=server-delay-ns:$(jq -n "$p50 * 0.02 | floor")"; done
