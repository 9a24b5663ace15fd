#!/usr/bin/env bash
# leftovers.sh - nothing left behind (issue 39).  A server killed with
# SIGKILL under the driver (cache, memcached, rocksdb back ends) leaves no
# run directory in the shared-memory folder and no process; a driver
# killed with SIGKILL leaves no process and no pmem directory of a durable
# point; a server killed by hand leaves its directory to the next server, which removes it and never
# a live server's; the crash tester's own directory is gone after a passing
# and after a failing run, its report names a server log that is there
# (beside the report), and a crash tester killed with SIGKILL takes its
# server with it and leaves its directory to the next crash test.  run.json
# and the point files name only files that exist.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../crashkill-lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SHM=/dev/shm
if [ ! -d "$SHM" ] || [ ! -w "$SHM" ]; then
	skip leftovers "no writable $SHM here: the run directories go elsewhere"
	finish
fi

# dirs_of PID: the run directories named for PID in the shared-memory folder
dirs_of() { ls -d "$SHM"/oqb-"$1"-?????? "$SHM"/oqb-mc-"$1"-?????? "$SHM"/oqb-rdb-"$1"-?????? 2>/dev/null | tr '\n' ' '; }

# missing_paths FILE...: the absolute paths named in the JSON files that
# do not exist ("" when all do); config_path, the user's config, included.
missing_paths() {
	local p miss=""
	while IFS= read -r p; do
		[ -e "$p" ] || miss="$miss $p"
	done < <(jq -r '.. | strings | select(startswith("/") and (contains(" ") | not))' "$@" 2>/dev/null | sort -u)
	echo "$miss"
}

# wait_gone PID SECONDS: 0 once PID has exited
wait_gone() {
	local i
	for i in $(seq 1 $(($2 * 10))); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# 1. kill -9 of the server under the driver: NAME BACKEND-JSON KINDS
#    (the directories, beside the shm run directory, the back end makes)
server_killed() {
	local name=$1 be=$2 kinds=$3 out=$T/$1 drv pid="" mcpid before k
	jq --argjson be "$be" '.name = "left" | .duration_s = 30 | .warmup_s = 0.2 | .systems = ["oq"] |
		.arrival.loads_ops = [5000] | .server.backend = $be | .repeat = 1 | .rerun_disturbed = 0 |
		.history = false | .check = false' "$ROOT/configs/tiny.json" >"$T/$name.json"
	"$OQB_BIN/oqb" run "$T/$name.json" --out "$out" >"$T/$name.out" 2>"$T/$name.err" &
	drv=$!
	track "$drv"
	for _ in $(seq 1 200); do
		pid=$(awk -F'\t' '$3 == "server" { print $6 }' "$out/processes.tsv" 2>/dev/null | head -n1)
		[ -n "$pid" ] && [ -n "$(awk -F'\t' '$3 == "client"' "$out/processes.tsv" 2>/dev/null)" ] && break
		pid=""
		sleep 0.1
	done
	if [ -z "$pid" ]; then
		notok "$name: server and clients started" "$(tail -n 5 "$T/$name.err")"
		return
	fi
	sleep 1
	# what it made, seen before the kill (so the check below can fail)
	before=$(dirs_of "$pid")
	for k in "" $kinds; do
		case $before in
		*"/oqb-$k$pid-"*) ;;
		*) notok "$name: its directories exist while it runs" "no $SHM/oqb-$k$pid-* in: $before"; return ;;
		esac
	done
	ok "$name: its directories exist while it runs ($(echo "$before" | wc -w))"
	mcpid=$(sed -n 's/.*memcached .* ready in .*: pid \([0-9]*\),.*/\1/p' "$out"/p01-*/server-0.log 2>/dev/null | head -n1)
	kill -KILL "$pid"
	if ! wait_gone "$drv" 30; then
		notok "$name: the driver ends after the server's kill" "still running 30 s later"
		return
	fi
	wait "$drv"
	local rc=$? left alive
	if [ $rc -ne 0 ] && grep -q "signal 9" "$T/$name.err"; then
		ok "$name: the driver fails the point, naming signal 9 (exit $rc)"
	else
		notok "$name: the driver fails the point" "exit $rc: $(tail -n 3 "$T/$name.err")"
	fi
	left=$(dirs_of "$pid")
	if [ -z "$left" ]; then ok "$name: no directory of the killed server is left"
	else notok "$name: no directory of the killed server is left" "left: $left"; fi
	alive=$(procs_alive "$out/processes.tsv")
	if [ -n "$mcpid" ] && ! wait_gone "$mcpid" 5; then alive="$alive memcached:$mcpid"; fi
	if [ -z "$alive" ]; then ok "$name: no process is left${mcpid:+ (memcached $mcpid included)}"
	else notok "$name: no process is left" "still running:$alive"; fi
}
server_killed kill9-cache '{"kind": "cache", "memory_mb": 16}' ""
if command -v memcached >/dev/null 2>&1; then
	server_killed kill9-memcached '{"kind": "memcached", "memory_mb": 16, "threads": 1, "max_item_mb": 1}' "mc-"
else
	skip kill9-memcached "memcached is not installed (make deps)"
fi
if "$OQB_BIN/oqb-server" --help 2>&1 | grep -q rocksdb; then
	server_killed kill9-rocksdb '{"kind": "rocksdb", "wal": true, "sync": false, "write_buffer_mb": 8}' "rdb-"
else
	skip kill9-rocksdb "this build has no RocksDB"
fi

# 1b. kill -9 of the driver in a durable point: its server and clients end
#     (their control connection closed), and the server removes the
#     point's pmem directory, which the driver would have removed
jq '.name = "drvkill" | .duration_s = 30 | .warmup_s = 0.2 | .systems = ["oq"] | .durable = ["oq"] |
	.arrival.loads_ops = [5000] | .repeat = 1 | .rerun_disturbed = 0' "$ROOT/configs/tiny.json" >"$T/drvkill.json"
"$OQB_BIN/oqb" run "$T/drvkill.json" --out "$T/drvkill" >/dev/null 2>"$T/drvkill.err" &
drv=$!
track "$drv"
for _ in $(seq 1 200); do
	[ -n "$(awk -F'\t' '$3 == "client"' "$T/drvkill/processes.tsv" 2>/dev/null)" ] && break
	sleep 0.1
done
sleep 1
pm="$SHM/oqb-drvkill-$drv-p01"
if [ -d "$pm" ]; then
	kill -KILL "$drv"
	wait "$drv" 2>/dev/null
	for _ in $(seq 1 100); do
		[ -z "$(procs_alive "$T/drvkill/processes.tsv")" ] && [ ! -e "$pm" ] && break
		sleep 0.1
	done
	alive=$(procs_alive "$T/drvkill/processes.tsv")
	if [ -z "$alive" ] && [ ! -e "$pm" ]; then
		ok "driver killed: its processes end and the point's pmem directory goes"
	else
		notok "driver killed: nothing left" "running:$alive; $pm: $(ls -A "$pm" 2>&1 | tr '\n' ' ')"
	fi
else
	notok "driver killed: the durable point's pmem directory $pm exists while it runs" "$(tail -n 3 "$T/drvkill.err")"
fi

# 2. by hand: a server killed with SIGKILL leaves its directory; the next
#    server start removes it, and never a live server's
if launch_server a 200 "$OQB_BIN/oqb-server" --system oq --backend null --workers 1 &&
	A_PID=$SRV_PID && A_EP=$EP &&
	launch_server b 200 "$OQB_BIN/oqb-server" --system oq --backend null --workers 1; then
	B_PID=$SRV_PID B_EP=$EP
	kill -KILL "$A_PID"
	wait "$A_PID" 2>/dev/null
	if [ -d "$A_EP" ]; then ok "by hand: a killed server's directory stays until someone removes it"
	else notok "by hand: a killed server's directory stays" "$A_EP is gone already"; fi
	if launch_server c 200 "$OQB_BIN/oqb-server" --system oq --backend null --workers 1; then
		C_PID=$SRV_PID C_EP=$EP
		if [ ! -e "$A_EP" ]; then ok "by hand: the next server start removes it"
		else notok "by hand: the next server start removes it" "$A_EP: $(ls -A "$A_EP" | tr '\n' ' ')"; fi
		if [ -d "$B_EP" ] && kill -0 "$B_PID" 2>/dev/null && "$OQB_BIN/oqb-client" --system oq --server "$B_EP" \
			--rate 2000 --duration-s 0.3 --warmup-s 0 --threads 1 >"$T/b.json" 2>"$T/b.err" &&
			jq -e '.summary_ns.all.n > 0' "$T/b.json" >/dev/null; then
			ok "by hand: a live server's directory is kept, and it still serves"
		else
			notok "by hand: a live server's directory is kept" "$B_EP: $(ls -A "$B_EP" 2>&1 | tr '\n' ' ') $(tail -n 2 "$T/b.err")"
		fi
		kill -TERM "$B_PID" "$C_PID"
		wait_gone "$B_PID" 10
		wait_gone "$C_PID" 10
		if [ ! -e "$B_EP" ] && [ ! -e "$C_EP" ]; then ok "by hand: a server stopped by SIGTERM removes its own"
		else notok "by hand: a server stopped by SIGTERM removes its own" "left: $(ls -d "$B_EP" "$C_EP" 2>/dev/null)"; fi
	else
		notok "by hand: a third server starts" "$(cat "$T/c.srv.err")"
	fi
else
	notok "by hand: two servers start" "$(cat "$T"/a.srv.err "$T"/b.srv.err 2>/dev/null)"
fi

# 3. the crash tester in its own directory (no "dir" in its config)
jq 'del(.dir) | .crashes = 3 | .kill_after_ms = [5, 40]' "$ROOT/configs/crashtest-quick.json" >"$T/ct.json"
# crash NAME ARGS...: runs the crash tester in the background; CT_PID, and
# CT_SEEN: its directory, as seen while it ran; CT_RC its exit status
crash() {
	local name=$1
	shift
	mkdir -p "$T/$name"
	"$@" >"$T/$name/stdout" 2>"$T/$name/stderr" &
	CT_PID=$!
	track "$CT_PID"
	CT_SEEN=""
	while kill -0 "$CT_PID" 2>/dev/null; do
		[ -z "$CT_SEEN" ] && CT_SEEN=$(ls -d "$SHM"/oqb-crash-"$CT_PID"-?????? 2>/dev/null)
		sleep 0.05
	done
	wait "$CT_PID"
	CT_RC=$?
}
crash pass "$OQB_BIN/oqb-crashtest" "$T/ct.json" --out "$T/pass/crash.json"
log=$(jq -r .server_log "$T/pass/crash.json" 2>/dev/null)
# (whether it passed is crashtest.sh's to judge: a loaded host can fail it)
if [ $CT_RC -le 1 ] && [ -n "$CT_SEEN" ] && [ ! -e "$CT_SEEN" ] && [ -z "$(ls -d "$SHM"/oqb-crash-"$CT_PID"-* 2>/dev/null)" ]; then
	ok "crash tester: its directory ($CT_SEEN) is gone after the run (exit $CT_RC)"
else
	notok "crash tester: its directory is gone after the run" "exit $CT_RC, seen '$CT_SEEN', left: $(ls -d "$SHM"/oqb-crash-"$CT_PID"-* 2>/dev/null); $(tail -n 3 "$T/pass/stderr")"
fi
if [ "$log" = "$T/pass/crash.server.log" ] && [ -s "$log" ] && grep -q "recovery" "$log" && [ -z "$(missing_paths "$T/pass/crash.json")" ]; then
	ok "crash tester: the report names its server log, beside it, and it is there"
else
	notok "crash tester: the report's server log" "server_log '$log'; missing:$(missing_paths "$T/pass/crash.json")"
fi

# a failing run (recovery switched off: lost commits) keeps the log too
OQB_FAULT=skip-recovery crash fail "$OQB_BIN/oqb-crashtest" "$T/ct.json" --crashes 8 --out "$T/fail/crash.json"
log=$(jq -r .server_log "$T/fail/crash.json" 2>/dev/null)
if [ $CT_RC -eq 1 ] && [ -n "$CT_SEEN" ] && [ -z "$(ls -d "$SHM"/oqb-crash-"$CT_PID"-* 2>/dev/null)" ]; then
	ok "crash tester: its directory is gone after a failing run too (commits lost: $(jq .commits_lost "$T/fail/crash.json"))"
else
	notok "crash tester: its directory is gone after a failing run" "exit $CT_RC, seen '$CT_SEEN', left: $(ls -d "$SHM"/oqb-crash-"$CT_PID"-* 2>/dev/null)"
fi
if [ "$log" = "$T/fail/crash.server.log" ] && [ -s "$log" ] && grep -q "skip-recovery" "$log" &&
	[ -z "$(missing_paths "$T/fail/crash.json")" ]; then
	ok "crash tester: a failing run's server log is kept beside the report"
else
	notok "crash tester: a failing run's server log" "server_log '$log'; missing:$(missing_paths "$T/fail/crash.json")"
fi

# kill -9 of the crash tester while its server runs: no process of it is
# left (tests/crashkill-lib.sh: found by command line, so a server
# re-parented to init counts and a dead one that init has not reaped yet
# does not; crashtest-killed.sh kills at every point of the cycle); the
# next crash test removes the directory it left
ck_start "$T/killed" "$T/ct.json" --crashes 100000 --out "$T/killed/crash.json"
K_PID=$CK_PID kdir="" srv="" kids=""
for _ in $(seq 1 400); do
	kdir=$(ls -d "$SHM"/oqb-crash-"$K_PID"-?????? 2>/dev/null)
	srv=$(ck_procs "$T/killed" oqb-server)
	[ -n "$kdir" ] && [ -n "$srv" ] && break
	kill -0 "$K_PID" 2>/dev/null || break
	sleep 0.05
done
# (what runs under it at the kill, for the record: the tester kills and
# restarts its server all the time)
kids=$(ps -o pid=,stat=,args= --ppid "$K_PID" 2>/dev/null | cut -c1-60 | tr -s ' \n' ' ')
{ kill -KILL "$K_PID"; wait "$K_PID"; } 2>/dev/null
if [ -z "$kdir" ] || [ -z "$srv" ]; then
	notok "crash tester killed: its server ran before the kill" "dir '$kdir', server '$srv': $(tail -n 3 "$T/killed/stderr")"
elif ck_left "$T/killed" 5; then
	ok "crash tester killed: its server ends with it (at the kill: ${kids:-none, between two servers})"
else
	notok "crash tester killed: its server ends with it" "at the kill: $kids; 5 s later:
$CK_LEFT"
	kill -KILL $(ck_procs "$T/killed") 2>/dev/null
fi
crash next "$OQB_BIN/oqb-crashtest" "$T/ct.json" --crashes 1 --out "$T/next/crash.json"
if [ -n "$kdir" ] && [ ! -e "$kdir" ] && [ $CT_RC -le 1 ]; then
	ok "crash tester: the next run removes the directory a killed one left"
else
	notok "crash tester: the next run removes a killed one's directory" "exit $CT_RC; $kdir: $(ls -A "$kdir" 2>&1 | tr '\n' ' ')"
fi

# 4. run.json and the point files name only files that exist: a durable
#    oq point (the driver's pmem directory, removed after it) and a
#    volatile rawrpc one (the server's run directory, removed at its exit)
jq '.name = "names" | .durable = ["oq"] | .arrival.loads_ops = [5000] | .rerun_disturbed = 0 | .repeat = 1' \
	"$ROOT/configs/tiny.json" >"$T/names.json"
if "$OQB_BIN/oqb" run "$T/names.json" --out "$T/names" --quiet >"$T/names.out" 2>&1; then
	miss=$(missing_paths "$T/names/run.json" "$T"/names/p*/*.json)
	if [ -z "$miss" ] && jq -e '[.points[].durable] | sort == [false, true]' "$T/names/run.json" >/dev/null; then
		ok "run.json and the point files name only files that exist (durable and volatile points)"
	else
		notok "run.json names only files that exist" "missing:$miss"
	fi
else
	notok "run.json names only files that exist: the run" "$(tail -n 5 "$T/names.out")"
fi
# and with the back ends that make private directories of their own
for be in memcached rocksdb; do
	case $be in
	memcached) command -v memcached >/dev/null 2>&1 || { skip "run.json names ($be)" "memcached is not installed"; continue; } ;;
	rocksdb) "$OQB_BIN/oqb-server" --help 2>&1 | grep -q rocksdb || { skip "run.json names ($be)" "no RocksDB in this build"; continue; } ;;
	esac
	jq '.systems = ["oq"] | .history = false | .check = false' "$ROOT/configs/$be-tiny.json" >"$T/names-$be.json"
	if "$OQB_BIN/oqb" run "$T/names-$be.json" --out "$T/names-$be" --quiet >"$T/names-$be.out" 2>&1; then
		miss=$(missing_paths "$T/names-$be/run.json" "$T/names-$be"/p*/*.json)
		if [ -z "$miss" ]; then ok "run.json names only files that exist ($be)"
		else notok "run.json names only files that exist ($be)" "missing:$miss"; fi
	else
		notok "run.json names only files that exist ($be): the run" "$(tail -n 5 "$T/names-$be.out")"
	fi
done
finish
