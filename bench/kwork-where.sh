#!/usr/bin/env bash
# kwork-where.sh - where does Soft-RoCE's kernel work run, and does it make
# the stalls the tagger calls the host's?  A measurement for the Soft-RoCE
# VM (docs/trust.md, "Soft-RoCE's own work"), not part of make test.
#
# Runs the same calm rawrpc point (one worker, one client thread, Poisson
# load, the tagger's config: bench/tagger-validate.sh) RUNS times on shm
# and on verbs, alternating, and prints for each run: the requests, the
# client thread's gaps (count, median length), the window's stall time by
# class and by the evidence that vouched (lib/stall.h), how many of the
# client probe's wake-ups were late, and what the kernel did meanwhile:
# the CPU time of ksoftirqd/0 and /1 (/proc/PID/schedstat, first field)
# and the NET_RX and TASKLET softirqs raised (/proc/softirqs), summed over
# the CPUs.  shm moves no packet, so whatever a verbs run shows beyond the
# shm runs beside it is rxe's.
#
# Usage, from the checkout after make:
#   tests/vm/rxe-vm -e OQB_BIN=$PWD/bin -- bash bench/kwork-where.sh [RUNS (2)]
# Needs root for the probes' SCHED_FIFO (the VM runs it as root) and
# RXE_IP, the RDMA device's address (the VM sets it).
set -u
cd "$(dirname "$0")/.."
oqb=${OQB_BIN:-bin}/oqb
runs=${1:-2}
[ -n "${RXE_IP:-}" ] || { echo "kwork-where: needs RXE_IP, the RDMA device's address (tests/vm/rxe-vm sets it)" >&2; exit 2; }
[ -x "$oqb" ] || { echo "kwork-where: $oqb missing; run make first" >&2; exit 2; }
out=$(mktemp -d "${TMPDIR:-/tmp}/oqb-kwork.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$out"' EXIT

ksoft() {   # the summed CPU time (ns) of ksoftirqd/0 and ksoftirqd/1
	local t=0 c p
	for c in 0 1; do
		p=$(grep -lx "ksoftirqd/$c" /proc/[0-9]*/comm 2>/dev/null | head -1 | cut -d/ -f3)
		[ -n "$p" ] && t=$((t + $(cut -d' ' -f1 "/proc/$p/schedstat")))
	done
	echo "$t"
}
softirqs() {   # softirqs NAME: the count raised so far, all CPUs
	awk -v n="$1:" '$1 == n { s = 0; for (i = 2; i <= NF; i++) s += $i; print s }' /proc/softirqs
}

echo "kwork-where: $runs runs per transport, rawrpc at 500 ops/s for 3 s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$runs"); do
	for tp in shm verbs; do
		v=
		[ $tp = verbs ] && v=", \"verbs\": { \"addr\": \"$RXE_IP\" }"
		cat >"$out/$tp.json" <<JSON
{ "name": "kwork", "transport": "$tp", "systems": ["rawrpc"]$v,
  "server": { "workers": 1, "backend": { "kind": "null" } },
  "clients": { "processes": 1, "threads": 1 },
  "workload": { "kind": "kv", "put_ratio": 0.5, "key_size": 16, "value_size": 64, "keys": 1000 },
  "arrival": { "kind": "poisson", "loads_ops": [500] },
  "warmup_s": 0.3, "duration_s": 3.0, "repeat": 1, "rerun_budget": 0, "canary": false, "seed": 5 }
JSON
		d=$out/$tp-$i
		k0=$(ksoft) n0=$(softirqs NET_RX) t0=$(softirqs TASKLET)
		if ! "$oqb" run "$out/$tp.json" --out "$d" --quiet >/dev/null 2>"$d.err"; then
			echo "  $tp run $i: oqb run failed: $(grep -v '^oqb: warning' "$d.err" | tail -1)"
			continue
		fi
		k1=$(ksoft) n1=$(softirqs NET_RX) t1=$(softirqs TASKLET)
		c=$(ls "$d"/p01-*/client-0.json)
		printf '  %-5s run %s: %s requests; client gaps %s, median %s us; %s; probe late %s; ksoftirqd %d ms, NET_RX %d, TASKLET %d\n' \
			"$tp" "$i" "$(jq -r '.points[0].lat_ns.all.n' "$d/run.json")" \
			"$(jq -r '.trust.stalls[0].count' "$c")" \
			"$(jq -r '[.trust.stalls[0].events[] | .[1]] | sort | .[length / 2 | floor] / 1000 | floor' "$c")" \
			"$(jq -r '.points[0].host_tags | .stall_ns as $s | "stall ms host \($s.host / 1e6 | floor) (kernel \($s.kernel / 1e6 | floor), probe \($s.probe / 1e6 | floor)), system \($s.system / 1e6 | floor), unattributed \($s.unattributed / 1e6 | floor); tagged \(.tagged_frac.all * 100 | floor) %, unattributed \(.unattributed_frac.all * 100 | floor) %"' "$d/run.json")" \
			"$(jq -r '.host_tags.probe.cpus[0] | "\(.late)/\(.wakes)"' "$c")" \
			$(((k1 - k0) / 1000000)) $((n1 - n0)) $((t1 - t0))
	done
done
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)${KEEP:+; runs kept in $out}"
