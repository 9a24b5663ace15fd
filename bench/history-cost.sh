#!/usr/bin/env bash
# history-cost.sh - what recording a history (oqb-client --history) costs:
# client throughput with recording on over recording off, measured in the
# same run against the same server, in alternating pairs (off, on) so that
# machine noise hits both alike.  Target: the ratio's median >= 0.95
# (recording costs at most 5 %).
#
# One client thread, closed loop with 64 requests in flight, cache backend
# with 1 worker, a Twitter-cluster-12-like mix (80 % sets of 1030 B, 44 B
# keys, gets return 1030 B values: each recorded set is tagged and resealed,
# each get's value digested).  A benchmark: it prints what it measured and
# exits 0 either way.  Usage: bench/history-cost.sh [PAIRS]  (default 5)
set -u
cd "$(dirname "$0")/.."
B=${OQB_BIN:-bin}
PAIRS=${1:-5}
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
		--warmup-s 0.3 --duration-s 1.5 --workload "$WL" --out "$out" "$@" 2>>"$tmp/cli.err" &&
		jq '.achieved_ops' "$out"
}
ratios=()
for i in $(seq 1 "$PAIRS"); do
	off=$(run "$tmp/off$i.json") || { echo "client failed: $(tail -3 "$tmp/cli.err")" >&2; exit 1; }
	on=$(run "$tmp/on$i.json" --history "$tmp/h$i") || { echo "client failed: $(tail -3 "$tmp/cli.err")" >&2; exit 1; }
	rec=$(( $(stat -c %s "$tmp"/h$i/*.bin | paste -sd+ | bc) / 96 ))
	r=$(echo "$on / $off" | bc -l)
	ratios+=("$r")
	rm -rf "$tmp/h$i"
	printf 'pair %d: off %.0f ops/s, on %.0f ops/s (%d records), on/off %.3f\n' "$i" "$off" "$on" "$rec" "$r"
done
med=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
met=$(echo "$med >= 0.95" | bc -l)
printf 'history recording: median on/off throughput %.3f (cost %.1f %%), target >= 0.95: %s\n' \
	"$med" "$(echo "(1 - $med) * 100" | bc -l)" "$([ "$met" = 1 ] && echo met || echo MISSED)"
