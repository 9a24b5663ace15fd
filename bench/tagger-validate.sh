#!/usr/bin/env bash
# tagger-validate.sh - is the host-stall tagger right, request by request?
# A benchmark for a quiet machine (issue 50's validation; docs/trust.md,
# "Validating the tagger"), not part of make test.  Needs root (the hog
# runs SCHED_FIFO).  On shm, rawrpc (and oq), one worker and one client
# thread on their own CPUs, Poisson load; every run keeps each request's
# window and tag (OQB_TAG_TRACE, bench/tagtrace.h) and
# bench/tagger-judge.py compares them with the truth:
#
#  1. host stalls injected: PAIRS interleaved pairs of an undisturbed run
#     and a disturbed one, where tests/hog-burst.py spins BURST_MS in
#     every PERIOD_MS at SCHED_FIFO on the worker's CPU (then, a second
#     set, on the client's), logging each burst.  Targets, medians over
#     the pairs: raw P99 at least 5x the undisturbed run's; the system
#     P99 (untagged requests) within 1.5x; at least 95 % of the requests
#     whose window overlaps a burst tagged the host's.
#  2. negative controls: the worker delays 2 % of requests by 1 ms
#     (OQB_FAULT server-delay, busy and then sleep), and marks each reply
#     it delayed (WIRE_MARK_FAULT): the system P99 shows the delay
#     (at least 0.9 ms) and at most 5 % of the marked requests are
#     tagged the host's.
#  3. whose path: the worker hog again, oq and rawrpc in one run: rawrpc's
#     requests delayed by a burst are tagged, oq's nilext commits (which
#     the worker is not on the path of unless the ring filled) are not,
#     beyond the client thread's own stalls.
#  4. the probe's cost: interleaved calm pairs with the probes on (the
#     default period) and off (server.probe_us = clients.probe_us = 0):
#     rawrpc's p50 with over without, and the CPU the server's probe took
#     per wake-up and as a share of its CPU.
#
# Usage: bench/tagger-validate.sh [PAIRS (5)]   (from the checkout, after make)
# Environment: LOAD (ops/s: 10000 on shm, 500 on verbs), DURATION_S (the
# measured window: 1.0 s on shm, 3.0 on verbs), BURST_MS (5),
# PERIOD_MS (50), KEEP=1 keeps the runs; TRANSPORT=verbs with RXE_IP (the
# RDMA device's address) runs it on verbs: make bench-tagger-verbs does
# so in the Soft-RoCE VM, make bench-tagger on shm here.
set -u
cd "$(dirname "$0")/.."
oqb=${OQB_BIN:-bin}/oqb
pairs=${1:-5}
transport=${TRANSPORT:-shm}
case $transport in
(shm) load=${LOAD:-10000}; dur=${DURATION_S:-1.0}; verbs= ;;
(verbs) load=${LOAD:-500}; dur=${DURATION_S:-3.0}
	[ -n "${RXE_IP:-}" ] || { echo "tagger-validate: TRANSPORT=verbs needs RXE_IP, the RDMA device's address" >&2; exit 2; }
	verbs=", \"verbs\": { \"addr\": \"$RXE_IP\" }" ;;
(*) echo "tagger-validate: TRANSPORT=$transport: shm or verbs" >&2; exit 2 ;;
esac
burst=${BURST_MS:-5}
period=${PERIOD_MS:-50}
[ "$(id -u)" = 0 ] || { echo "tagger-validate: needs root (the hog runs SCHED_FIFO)" >&2; exit 2; }
[ -x "$oqb" ] || { echo "tagger-validate: $oqb missing; run make first" >&2; exit 2; }
out=$(mktemp -d "${TMPDIR:-/tmp}/oqb-tagger.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$out"' EXIT
echo "tagger-validate: $pairs pairs per case, $transport, load $load ops/s, bursts of $burst ms every $period ms; load average $(cut -d' ' -f1-3 /proc/loadavg)"

cfg() {   # cfg SYSTEMS > FILE
	cat <<JSON
{ "name": "tagger", "transport": "$transport", "systems": $1$verbs,
  "server": { "workers": 1, "backend": { "kind": "null" } },
  "clients": { "processes": 1, "threads": 1 },
  "workload": { "kind": "kv", "put_ratio": 0.5, "key_size": 16, "value_size": 64, "keys": 1000 },
  "arrival": { "kind": "poisson", "loads_ops": [$load] },
  "warmup_s": 0.3, "duration_s": $dur, "repeat": 1, "rerun_budget": 0, "canary": false, "seed": 5 }
JSON
}
cfg '["rawrpc"]' >"$out/rawrpc.json"

# run NAME CONFIG HOGCPU [ENV...] [--set ...]: one traced run, with a hog
# if HOGCPU is a CPU ("-" for none; the hog runs until the run ends);
# ENV (VAR=VALUE words) for oqb run, the rest its arguments.
run() {
	local name=$1 conf=$2 cpu=$3 d=$out/$1 hog= envs=()
	shift 3
	while [ $# -gt 0 ] && [[ $1 == *=* ]] && [[ $1 != --* ]]; do envs+=("$1"); shift; done
	mkdir -p "$d/trace"
	if [ "$cpu" != - ]; then
		# until the run ends: the driver's start-up (a verbs connect
		# under TCG takes seconds) must not outlast it
		python3 tests/hog-burst.py "$cpu" 3600 "$burst" "$period" "$d/bursts" >"$d/hog.out" 2>&1 &
		hog=$!
		# until it is pinned and real-time: under QEMU's TCG the
		# interpreter took 6 s to start, and a hog that began after
		# the window disturbed nothing
		local waited=0
		until grep -qx ready "$d/hog.out" 2>/dev/null; do
			if ! kill -0 "$hog" 2>/dev/null || [ $waited -ge 600 ]; then
				echo "  $name: the hog (tests/hog-burst.py on CPU $cpu) did not start within 60 s:" \
					"$(tail -1 "$d/hog.out" 2>/dev/null)" >&2
				kill -TERM "$hog" 2>/dev/null
				wait "$hog"
				return 1
			fi
			sleep 0.1
			waited=$((waited + 1))
		done
	fi
	env OQB_TAG_TRACE="$d/trace" "${envs[@]}" "$oqb" run "$conf" --out "$d/run" --quiet "$@" >/dev/null 2>"$d/err"
	local rc=$?
	if [ -n "$hog" ]; then
		kill -TERM "$hog" 2>/dev/null
		wait "$hog"
	fi
	if [ $rc -ne 0 ]; then
		echo "  $name: oqb run failed:" >&2
		grep -v '^oqb: warning' "$d/err" | tail -6 | sed 's/^/    /' >&2
		return 1
	fi
	python3 bench/tagger-judge.py "$d/trace" ${hog:+"$d/bursts"} >"$d/judge.json" || return 1
}

# p99 NAME SYSTEM KIND: a point's raw ("lat") or system ("sys") P99 in ns
p99() {
	local f='.lat_ns.all.p99'
	[ "$3" = sys ] && f='.host_tags.sys_lat_ns.all.p99'
	jq -r --arg s "$2" "[.points[] | select(.system == \$s) | $f] | .[0] // \"nan\"" "$out/$1/run/run.json"
}
# us NS: NS in whole microseconds, or "no value" (no pair ran: "nan")
us() { awk -v v="$1" 'BEGIN { if (v == "nan" || v == "") print "no value"; else printf "%d", v / 1000 }'; }
median() { sort -g | awk '{a[NR] = $1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
verdict() {   # verdict VALUE OP TARGET: met / missed
	awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN {
		if (v == "nan" || v == "") { print "no value"; exit }
		ok = (op == ">=") ? v >= t : v <= t; print ok ? "met" : "missed" }'
}

# Where the driver placed the worker and the client thread (placement auto).
run calm "$out/rawrpc.json" - || exit 1
wcpu=$(jq -r '.points[0].trials[0].placement.server.cpus[0] // empty' "$out/calm/run/run.json")
ccpu=$(jq -r '.points[0].trials[0].placement.clients[0].placement.cpus[0] // empty' "$out/calm/run/run.json")
[ -n "$wcpu" ] && [ -n "$ccpu" ] || { echo "tagger-validate: the calm run placed no CPU for the worker or the client" >&2; exit 1; }
echo "worker on CPU $wcpu, client thread on CPU $ccpu"

# --- 1. host stalls injected --------------------------------------------
for where in worker client; do
	cpu=$wcpu
	[ $where = client ] && cpu=$ccpu
	: >"$out/$where.tsv"
	for i in $(seq 1 "$pairs"); do
		u=$where-u$i d=$where-d$i
		# interleaved, the order alternating, so a drift of the host
		# weighs on both sides alike
		if [ $((i % 2)) = 1 ]; then
			run "$u" "$out/rawrpc.json" - && run "$d" "$out/rawrpc.json" "$cpu" || continue
		else
			run "$d" "$out/rawrpc.json" "$cpu" && run "$u" "$out/rawrpc.json" - || continue
		fi
		printf '%s\t%s\t%s\t%s\t%s\n' "$(p99 "$u" rawrpc lat)" "$(p99 "$u" rawrpc sys)" \
			"$(p99 "$d" rawrpc lat)" "$(p99 "$d" rawrpc sys)" \
			"$(jq -r '.burst_tagged_frac // "nan"' "$out/$d/judge.json")" >>"$out/$where.tsv"
		jq -r --arg n "$i" --arg w "$where" '"  \($w) pair \($n): \(.burst_delayed) requests delayed by \(.bursts) bursts, \(.burst_tagged) tagged the host'"'"'s; \(.host_tagged) of \(.requests) tagged in all"' "$out/$d/judge.json"
	done
	n=$(wc -l <"$out/$where.tsv")
	ru=$(cut -f1 "$out/$where.tsv" | median) su=$(cut -f2 "$out/$where.tsv" | median)
	rd=$(cut -f3 "$out/$where.tsv" | median) sd=$(cut -f4 "$out/$where.tsv" | median)
	tf=$(cut -f5 "$out/$where.tsv" | median)
	rr=$(awk -v a="$rd" -v b="$ru" 'BEGIN { printf "%.2f", a / b }')
	sr=$(awk -v a="$sd" -v b="$su" 'BEGIN { printf "%.2f", a / b }')
	echo "hog on the $where's CPU, medians of $n pairs: raw P99 $(us "$ru") -> $(us "$rd") us (x$rr, target >= 5: $(verdict "$rr" '>=' 5));" \
		"system P99 $(us "$su") -> $(us "$sd") us (x$sr, target <= 1.5: $(verdict "$sr" '<=' 1.5));" \
		"requests delayed by a burst tagged: $(awk -v f="$tf" 'BEGIN { printf "%.1f %%", 100 * f }') (target >= 95 %: $(verdict "$tf" '>=' 0.95))"
done

# --- 2. delays the system makes -----------------------------------------
for mode in busy sleep; do
	: >"$out/fault-$mode.tsv"
	for i in $(seq 1 "$pairs"); do
		f=fault-$mode-$i
		run "$f" "$out/rawrpc.json" - OQB_FAULT=server-delay-ns:1000000,server-delay-frac:0.02,server-delay-mode:$mode || continue
		printf '%s\t%s\t%s\t%s\t%s\n' "$(p99 "$f" rawrpc sys)" "$(jq -r '.fault_tagged_frac // "nan"' "$out/$f/judge.json")" \
			"$(jq -r '.fault_marked' "$out/$f/judge.json")" "$(jq -r '.fault_tagged' "$out/$f/judge.json")" \
			"$(jq -r '.base_tagged_frac // "nan"' "$out/$f/judge.json")" >>"$out/fault-$mode.tsv"
	done
	sp=$(cut -f1 "$out/fault-$mode.tsv" | median) ft=$(cut -f2 "$out/fault-$mode.tsv" | median)
	echo "server delay ($mode, 1 ms on 2 %), median of $(wc -l <"$out/fault-$mode.tsv") runs: system P99 $(us "$sp") us (target >= 900: $(verdict "$sp" '>=' 900000));" \
		"delayed requests tagged the host's: $(awk -v f="$ft" 'BEGIN { printf "%.1f %%", 100 * f }') (target <= 5 %: $(verdict "$ft" '<=' 0.05));" \
		"the other requests tagged (the host's base rate): $(cut -f5 "$out/fault-$mode.tsv" | median | awk '{ printf "%.1f %%", 100 * $1 }');" \
		"marked/tagged per run: $(cut -f3,4 "$out/fault-$mode.tsv" | tr '\t\n' '/ ')"
done

# --- 3. whose path: oq's nilext commit against rawrpc's -----------------
# oq and rawrpc run as separate points of one run (one trace directory per
# point is not kept apart), so each system runs alone here.
cfg '["oq"]' >"$out/oq.json"
: >"$out/path.tsv"
for i in $(seq 1 "$pairs"); do
	run path-oq-$i "$out/oq.json" "$wcpu" && run path-raw-$i "$out/rawrpc.json" "$wcpu" || continue
	printf '%s\t%s\t%s\t%s\n' "$(jq -r '.per_class.nilext.burst_tagged_frac // "nan"' "$out/path-oq-$i/judge.json")" \
		"$(jq -r '.per_class.nilext.burst_tagged_frac // "nan"' "$out/path-raw-$i/judge.json")" \
		"$(jq -r '.per_class.nilext.burst_delayed' "$out/path-oq-$i/judge.json")" \
		"$(jq -r '.per_class.nilext.base_tagged_frac // "nan"' "$out/path-oq-$i/judge.json")" >>"$out/path.tsv"
done
echo "hog on the worker's CPU, nilext requests delayed by a burst and tagged the host's, medians of $(wc -l <"$out/path.tsv") runs:" \
	"oq $(cut -f1 "$out/path.tsv" | median | awk '{ printf "%.1f %%", 100 * $1 }') of $(cut -f3 "$out/path.tsv" | median) (its other nilext requests: $(cut -f4 "$out/path.tsv" | median | awk '{ printf "%.1f %%", 100 * $1 }')), rawrpc $(cut -f2 "$out/path.tsv" | median | awk '{ printf "%.1f %%", 100 * $1 }')" \
	"(oq's commit does not wait for the worker: its tags come from the client thread's own stalls, and from ring-full waits)"
# --- 4. the probe's cost -------------------------------------------------
: >"$out/probe.tsv"
for i in $(seq 1 "$pairs"); do
	on=probe-on-$i off=probe-off-$i
	if [ $((i % 2)) = 1 ]; then
		run "$on" "$out/rawrpc.json" - && run "$off" "$out/rawrpc.json" - --set server.probe_us=0 --set clients.probe_us=0 || continue
	else
		run "$off" "$out/rawrpc.json" - --set server.probe_us=0 --set clients.probe_us=0 && run "$on" "$out/rawrpc.json" - || continue
	fi
	printf '%s\t%s\t%s\n' "$(jq -r '.points[0].lat_ns.all.p50' "$out/$on/run/run.json")" \
		"$(jq -r '.points[0].lat_ns.all.p50' "$out/$off/run/run.json")" \
		"$(jq -r '[.points[0].server.probe.cpus[]? | select(.wakes > 0) | .cpu_ns / .wakes] | (add / length) // "nan"' "$out/$on/run/run.json")" \
		>>"$out/probe.tsv"
done
pon=$(cut -f1 "$out/probe.tsv" | median) poff=$(cut -f2 "$out/probe.tsv" | median) pw=$(cut -f3 "$out/probe.tsv" | median)
per=$(jq -r '[.points[0].server.probe.cpus[]?.period_ns] | max // 1000000' "$out/calm/run/run.json")
asked=$(jq -r '.points[0].server.probe.period_ns // 1000000' "$out/calm/run/run.json")
echo "the probe's cost, medians of $(wc -l <"$out/probe.tsv") interleaved pairs: rawrpc p50 $poff ns without, $pon ns with" \
	"(x$(awk -v a="$pon" -v b="$poff" 'BEGIN { printf "%.3f", a / b }')); a wake-up $(awk -v w="$pw" 'BEGIN { printf "%.1f", w / 1000 }') us" \
	"of CPU every $(us "$per") us (asked $(us "$asked") us; the probe's budget, lib/probe.h), $(awk -v w="$pw" -v p="$per" 'BEGIN { printf "%.2f %%", 100 * w / p }') of the worker's CPU"
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)${KEEP:+; runs kept in $out}"
