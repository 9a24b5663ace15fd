#!/usr/bin/env bash
# memcached.sh - the `memcached` back end end to end: Debian's memcached
# behind oq, rawrpc and deferred on shm, histories recorded and found
# linearizable by `oqb check`; its identity in run.json; and a memcached
# killed by its PID in the middle of a point fails the point within a few
# seconds with a message that names it, leaving no process, socket or file
# behind.  Without memcached installed the cases say skip (not ok under
# CI=true: make deps installs it).
. "$(dirname "$0")/../lib.sh"
cd "${OQB_ROOT:-.}"

if ! command -v memcached >/dev/null 2>&1; then
	if [ "${CI:-}" = true ]; then
		notok memcached-installed "memcached is not on PATH; make deps installs it"
	else
		skip memcached "memcached is not installed (make deps, or apt-get install memcached)"
	fi
	finish
fi

# leftovers RUN: what a run's servers left: memcached run directories
# (/dev/shm/oqb-mc-SERVERPID-*) and live processes of the run or their
# memcached (its PID from the server's log line); "" when nothing.
leftovers() {
	local run=$1 left="" pid log mcpid d
	while IFS=$'\t' read -r _ _ role _ _ pid log; do
		[ "$pid" = pid ] && continue
		kill -0 "$pid" 2>/dev/null && left="$left process:$pid"
		[ "$role" = server ] || continue
		for d in /dev/shm/oqb-mc-"$pid"-* "${TMPDIR:-/tmp}"/oqb-mc-"$pid"-*; do
			[ -e "$d" ] && left="$left dir:$d"
		done
		mcpid=$(sed -n 's/.*memcached .* ready in .*: pid \([0-9]*\),.*/\1/p' "$log" 2>/dev/null | head -n1)
		[ -n "$mcpid" ] && kill -0 "$mcpid" 2>/dev/null && left="$left memcached:$mcpid"
	done <"$run/processes.tsv"
	echo "$left"
}

# 1. oq, rawrpc, deferred with histories checked
out=$T/run
"$OQB_BIN/oqb" run configs/memcached-tiny.json --out "$out" --quiet >"$T/run.out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	notok "memcached run" "oqb run exited $rc: $(tail -n 5 "$T/run.out")"
else
	ok "memcached run (oq, rawrpc, deferred)"
fi
for sys in oq rawrpc deferred; do
	jcheck "$sys on memcached: history linearizable" "$out/run.json" \
		"[.points[] | select(.system == \"$sys\")][0] | .check.verdict == \"ok\" and .check.ops > 1000"
	jcheck "$sys on memcached: every set and get reached memcached, none failed" "$out/run.json" \
		"[.points[] | select(.system == \"$sys\")][0].server.per_worker[0].backend |
		 .backend == \"memcached\" and .ops.set > 500 and .ops.get > 500 and .failed == {} and .keys_refused == 0"
done
jcheck "run.json records memcached's version, pid and settings" "$out/run.json" \
	'.points[0].server.per_worker[0].backend.memcached |
	 (.version | test("^1\\.")) and .pid > 0 and .settings.item_size_max == "1048576" and
	 .settings.num_threads == "1" and .settings.maxbytes == "16777216" and .stats_at_end.cmd_set > 0'
jcheck "rawrpc waited for every fence, oq did not" "$out/run.json" \
	'([.points[] | select(.system == "rawrpc")][0].server.per_worker[0].backend.pipelined_max == 1) and
	 ([.points[] | select(.system == "oq")][0].server.per_worker[0].backend.fences > 0)'
left=$(leftovers "$out")
[ -z "$left" ] && ok "nothing left after the run" || notok "nothing left after the run" "$left"

# 2. memcached killed by its PID in the middle of a point
jq '.systems = ["rawrpc"] | .duration_s = 30 | .history = false | .check = false' \
	configs/memcached-tiny.json >"$T/kill.json"
kout=$T/kill
"$OQB_BIN/oqb" run "$T/kill.json" --out "$kout" --quiet >"$T/kill.out" 2>"$T/kill.err" &
run_pid=$!
track "$run_pid"
mcpid=""
for _ in $(seq 1 300); do
	log=$(ls "$kout"/p01-*/server-0.log 2>/dev/null | head -n1)
	if [ -n "$log" ] && [ -n "$(ls "$kout"/p01-*/client-0.log 2>/dev/null)" ]; then
		mcpid=$(sed -n 's/.*memcached .* ready in .*: pid \([0-9]*\),.*/\1/p' "$log" | head -n1)
		[ -n "$mcpid" ] && break
	fi
	sleep 0.05
done
if [ -z "$mcpid" ]; then
	notok "memcached pid in the server's log" "no 'memcached ... ready: pid N' line: $(cat "$T/kill.err")"
else
	ok "memcached pid in the server's log ($mcpid)"
	sleep 1   # into the measured window
	t0=$(date +%s.%N)
	kill -KILL "$mcpid"
	waited=0
	while kill -0 "$run_pid" 2>/dev/null && [ "$waited" -lt 200 ]; do
		sleep 0.05
		waited=$((waited + 1))
	done
	wait "$run_pid"
	rc=$?
	secs=$(echo "$(date +%s.%N) - $t0" | bc)
	msg=$(cat "$T/kill.err")
	if [ $rc -ne 0 ] && [ "$(echo "$secs < 5" | bc)" = 1 ]; then
		ok "killed memcached fails the point in ${secs} s (exit $rc)"
	else
		notok "killed memcached fails the point within 5 s" "exit $rc after $secs s: $msg"
	fi
	case $msg in
	*"memcached (pid $mcpid"*"killed by signal 9"*"last log lines"*) ok "the error names memcached, its pid, the signal and its log" ;;
	*) notok "the error names memcached, its pid, the signal and its log" "$msg" ;;
	esac
	left=$(leftovers "$kout")
	[ -z "$left" ] && ok "nothing left after the failed point" || notok "nothing left after the failed point" "$left"
fi

# 3. a server by hand: SIGTERM stops memcached and removes its directory
if launch_server hand 200 "$OQB_BIN/oqb-server" --system oq --backend memcached --memory-mb 8 --max-item-mb 1 \
	--cpus none; then
	mcpid=$(sed -n 's/.*memcached .* ready in .*: pid \([0-9]*\),.*/\1/p' "$T/hand.srv.err" | head -n1)
	dir=$(sed -n 's/.*socket \(.*\)\/memcached.sock,.*/\1/p' "$T/hand.srv.err" | head -n1)
	[ -S "$dir/memcached.sock" ] && [ "$(cat "$dir/memcached.pid")" = "$mcpid" ] &&
		ok "socket and pid file in the private run directory" ||
		notok "socket and pid file in the private run directory" "$dir: $(ls -la "$dir" 2>&1)"
	kill -TERM "$SRV_PID"
	wait "$SRV_PID"
	rc=$?
	if [ $rc -eq 0 ] && ! kill -0 "$mcpid" 2>/dev/null && [ ! -e "$dir" ]; then
		ok "SIGTERM: server exits 0, memcached stopped, run directory removed"
	else
		notok "SIGTERM: server exits 0, memcached stopped, run directory removed" \
			"rc $rc, memcached $(kill -0 "$mcpid" 2>/dev/null && echo alive || echo gone), $(ls -d "$dir" 2>&1)"
	fi
else
	notok "server by hand with memcached"
fi

# 4. a memcached that cannot start: a clear error, nothing left
"$OQB_BIN/oqb-server" --system oq --backend memcached --memory-mb 4 --max-item-mb 4 >"$T/bad.out" 2>"$T/bad.err"
rc=$?
grep -q "max_item_mb 4 must be at least 1 and at most half" "$T/bad.err" && [ $rc -ne 0 ] &&
	ok "max_item_mb too large: refused by name" || notok "max_item_mb too large: refused by name" "rc $rc: $(cat "$T/bad.err")"
"$OQB_BIN/oqb-server" --system oq --backend memcached --memcached-path /nonexistent/memcached \
	>"$T/bad2.out" 2>"$T/bad2.err"
rc=$?
grep -q "memcached binary /nonexistent/memcached" "$T/bad2.err" && [ $rc -ne 0 ] &&
	ok "missing binary: refused by path" || notok "missing binary: refused by path" "rc $rc: $(cat "$T/bad2.err")"
finish
