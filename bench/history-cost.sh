#!/usr/bin/env bash
# history-cost.sh - what recording a history (oqb-client --history) costs:
# client throughput with recording on over recording off, against the same
# server, in interleaved rounds: each round runs both, in alternating order
# (off-on, then on-off), so that drift and machine noise hit both alike.
# Reports every round's ratio, their median and spread (min, quartiles,
# max), and the load average before and after.  Target: median >= 0.95
# (recording costs at most 5 % of the client's throughput).
#
# One client thread, closed loop with 64 requests in flight, cache backend
# with 1 worker, a Twitter-cluster-12-like mix (80 % sets of 1030 B, 44 B
# keys, gets return 1030 B values: each recorded set is tagged and its
# digest taken, each get's value digested).  A benchmark: it prints what it
# measured and exits 0 either way.  The machine should be quiet: on a
# shared 2-core VM the spread is wide; read the load averages beside it.
# Usage: bench/history-cost.sh [ROUNDS]  (default 12)
set -u
cd "$(dirname "$0")/.."
B=${OQB_BIN:-bin}
ROUNDS=${1:-12}
DUR=${HC_DURATION_S:-1.5}
tmp=$(mktemp -d)
SRV=
trap '[ -n "$SRV" ] && kill -TERM "$SRV" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP PIPE

"$B/oqb-server" --system oq --backend cache --workers 1 >"$tmp/srv.out" 2>"$tmp/srv.err" &
SRV=$!
for _ in $(seq 1 100); do
	EP=$(sed -n 's/^ready: endpoint //p' "$tmp/srv.out"); [ -n "$EP" ] && break; sleep 0.05
done
[ -n "$EP" ] || { echo "server did not start: $(cat "$tmp/srv.err")" >&2; exit 1; }
WL='{"kind":"kv","put_ratio":0.8,"key_size":44,"value_size":1030,"keys":10000,"zipf":0.3048}'
run() {  # run OUT [ARGS]: achieved ops/s
	local out=$1; shift
	"$B/oqb-client" --system oq --server "$EP" --threads 1 --arrival closed --outstanding 64 \
		--warmup-s 0.3 --duration-s "$DUR" --workload "$WL" --out "$out" "$@" 2>>"$tmp/cli.err" &&
		jq '.achieved_ops' "$out"
}
fail() { echo "client failed: $(tail -3 "$tmp/cli.err")" >&2; exit 1; }
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
ratios=()
for i in $(seq 1 "$ROUNDS"); do
	if [ $((i % 2)) = 1 ]; then
		off=$(run "$tmp/off$i.json") || fail
		on=$(run "$tmp/on$i.json" --history "$tmp/h$i") || fail
	else
		on=$(run "$tmp/on$i.json" --history "$tmp/h$i") || fail
		off=$(run "$tmp/off$i.json") || fail
	fi
	rec=$(( $(stat -c %s "$tmp"/h$i/*.bin | paste -sd+ | bc) / 96 ))
	r=$(echo "$on / $off" | bc -l)
	ratios+=("$r")
	rm -rf "$tmp/h$i"
	printf 'round %2d (%s): off %.0f ops/s, on %.0f ops/s (%d records), on/off %.3f\n' "$i" \
		"$([ $((i % 2)) = 1 ] && echo off-on || echo on-off)" "$off" "$on" "$rec" "$r"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
read -r mn q1 med q3 mx < <(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ a[NR] = $1 }
	END { printf "%s %s %s %s %s\n", a[1], a[int((NR + 3) / 4)], a[int((NR + 1) / 2)],
	      a[int((3 * NR + 3) / 4)], a[NR] }')
met=$(echo "$med >= 0.95" | bc -l)
printf 'history recording: median on/off throughput %.3f over %d rounds (cost %.1f %%); spread: min %.3f, quartiles %.3f-%.3f, max %.3f; target >= 0.95: %s\n' \
	"$med" "$ROUNDS" "$(echo "(1 - $med) * 100" | bc -l)" "$mn" "$q1" "$q3" "$mx" \
	"$([ "$met" = 1 ] && echo met || echo MISSED)"
