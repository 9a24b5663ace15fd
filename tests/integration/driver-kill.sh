#!/usr/bin/env bash
# driver-kill.sh - a client killed in the middle of a point: the driver
# names it ([host:client:rank], signal), ends every other process it
# started (checked by PID from processes.tsv), writes run.json with the
# error, and exits non-zero, well before the point would have ended.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
OUT=$T/run

# Long enough that the kill lands mid-point.
jq '.name = "kill" | .duration_s = 30 | .warmup_s = 0.2 | .systems = ["oq"] | .arrival.loads_ops = [5000]' \
	"$ROOT/configs/tiny.json" >"$T/kill.json"
"$OQB_BIN/oqb" run "$T/kill.json" --out "$OUT" >"$T/stdout" 2>"$T/stderr" &
drv=$!
track $drv

# processes.tsv lists each process as it starts (local launcher: its own
# PID); wait for client 1, then give it time to connect and start.
pid=""
for _ in $(seq 1 150); do
	pid=$(awk -F'\t' '$3 == "client" && $4 == 1 { print $6 }' "$OUT/processes.tsv" 2>/dev/null)
	[ -n "$pid" ] && break
	sleep 0.1
done
if [ -z "$pid" ]; then
	notok client_started "no client 1 in $OUT/processes.tsv after 15 s: $(cat "$T/stderr")"
	finish
fi
ok client_started
sleep 2
t0=$SECONDS
kill -KILL "$pid"

# The driver stops by itself.
for _ in $(seq 1 300); do
	kill -0 $drv 2>/dev/null || break
	sleep 0.1
done
if kill -0 $drv 2>/dev/null; then
	notok driver_stops "still running 30 s after the kill"
	finish
fi
wait $drv
rc=$?
took=$((SECONDS - t0))
if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then ok driver_exits_nonzero; else notok driver_exits_nonzero "exit status $rc"; fi
if [ $took -lt 20 ]; then ok driver_stops_early; else notok driver_stops_early "took $took s"; fi

msg=$(cat "$T/stderr")
if [[ $msg == *"[127.0.0.1:client:1]"* ]] && [[ $msg == *"signal 9"* ]] && [[ $msg == *"pid $pid"* ]]; then
	ok message_names_process
else
	notok message_names_process "$msg"
fi

# Nothing it started is left.
alive=$(procs_alive "$OUT/processes.tsv")
if [ -z "$alive" ]; then ok no_stray_processes; else notok no_stray_processes "still running:$alive"; fi
n=$(awk -F'\t' 'NR > 1' "$OUT/processes.tsv" | wc -l)
if [ "$n" -eq 3 ]; then ok processes_listed; else notok processes_listed "$n processes in processes.tsv, expected 3"; fi

jcheck error_recorded "$OUT/run.json" '.status == "failed" and .error.role == "client" and .error.rank == 1
	and .error.host == "127.0.0.1" and .error.system == "oq" and (.error.message | test("signal 9"))'
jcheck partial_points "$OUT/run.json" '.points | length == 0'
finish
