#!/usr/bin/env bash
# guest-crash.sh - the crash test on the verbs path, inside the Soft-RoCE VM
# (tests/verbs/run-crash.sh starts it through tests/vm/rxe-vm; by hand on
# an RDMA host: RXE_IP=ADDR OQB_BIN=$PWD/bin bash tests/verbs/guest-crash.sh).
#
# `oqb crashtest` with transport "verbs": a durable oqb-server (receive
# rings in libpmem-mapped files, clients committing a put by READ after
# SEND for oq, or by the server's software ACK for deferred) is killed
# with SIGKILL at random points under a write load, half of the kills after
# a SIGSTOP, restarted from its files, and every committed put is read
# back after every restart.  One "ok" / "not ok" line per check:
#  - oq and deferred, delegation off and on (configs/crashtest-verbs.json
#    with "system" and "delegation" set): every crash survived, commits
#    made, keys checked, 0 commits lost; for oq, the restarts re-executed
#    committed requests that the killed server had not run (the crashes
#    did hit committed, unexecuted work);
#  - the negative control: oq with recovery switched off
#    (OQB_FAULT=skip-recovery) must report lost commits;
#  - optionally the rocksdb backend (configs/crashtest-verbs-rocksdb.json).
# Counts: CRASH_VERBS_N crashes per combination (default 2),
# CRASH_VERBS_NEG for the negative control (default 3), CRASH_VERBS_ROCKSDB
# for rocksdb (default 0: not run), CRASH_VERBS_COMBOS (default
# "oq:off oq:on deferred:off deferred:on").  With CRASH_VERBS_OUT=DIR the
# reports and server logs are copied there.  Nothing here asserts a time.
source "$(dirname "$0")/../lib.sh"
: "${RXE_IP:?set RXE_IP to the address of the RDMA device (run through tests/vm/rxe-vm)}"
cd "${OQB_ROOT:-$(dirname "$0")/../..}" || exit 1
B=$OQB_BIN
PORT=${CRASH_VERBS_PORT:-7700}
N=${CRASH_VERBS_N:-2}
NEG=${CRASH_VERBS_NEG:-3}
RDB=${CRASH_VERBS_ROCKSDB:-0}
COMBOS=${CRASH_VERBS_COMBOS:-oq:off oq:on deferred:off deferred:on}
OUT=${CRASH_VERBS_OUT:-}
CYCLE_S=30   # the bound on one crash cycle (pmkv: about 8 s under TCG at load 10)
[ -n "$OUT" ] && mkdir -p "$OUT"

# crash NAME CONFIG CRASHES SYSTEM DELEGATION [VAR=VAL...]: one crash test,
# its report in $T/NAME.json, its progress in $T/NAME.err; sets RC.
crash() {
	local name=$1 cfg=$2 n=$3 sys=$4 deleg=$5 t0=$SECONDS
	shift 5
	PORT=$((PORT + 1))
	jq --arg a "$RXE_IP" --argjson p "$PORT" --arg s "$sys" --argjson d "$deleg" \
		'. + {system: $s, delegation: $d, verbs: ((.verbs // {}) + {addr: $a, port: $p})}' \
		"$cfg" >"$T/$name.cfg.json"
	env "$@" timeout -k 5 $((60 + n * CYCLE_S)) "$B/oqb-crashtest" "$T/$name.cfg.json" --crashes "$n" \
		--out "$T/$name.json" >/dev/null 2>"$T/$name.err"
	RC=$?
	echo "  $name: $(grep '^crashtest: [0-9]' "$T/$name.err" | tail -1 | cut -c12-), $((SECONDS - t0)) s" >&2
	if [ -n "$OUT" ]; then
		# the copy names the server log beside it (or none), never the
		# one in $T, which goes with the guest
		local log=
		cp "$T/$name.server.log" "$OUT/$name.server.log" 2>/dev/null && log=$OUT/$name.server.log
		[ -f "$T/$name.json" ] && jq --arg l "$log" '.server_log = (if $l == "" then null else $l end)' \
			"$T/$name.json" >"$OUT/$name.json"
		cp "$T/$name.err" "$OUT/$name.err" 2>/dev/null
	fi
}

# replayed NAME: requests the restarts re-executed, from the server's log
replayed() {
	sed -n 's/.*recovery: verbs ring .* re-executed \([0-9]*\),.*/\1/p' "$T/$1.server.log" |
		awk '{ s += $1 } END { print s + 0 }'
}

# passed NAME N SYSTEM DELEGATION: the checks of a correct run
passed() {
	local name=$1 n=$2 sys=$3 deleg=$4 f=$T/$1.json
	if [ "$RC" -ne 0 ]; then
		notok "$name: exit status $RC" "$(grep -E '^(oqb )?crashtest:' "$T/$name.err" | tail -6)"
	fi
	jcheck "$name: $n crashes survived, commits checked after each, 0 commits lost" "$f" "
		.transport == \"verbs\" and .system == \"$sys\" and .delegation == $deleg and
		.crashes_requested == $n and .crashes_survived == $n and .commits > 0 and .keys_checked > 0 and
		.commits_lost == 0 and .keys_with_loss == 0" &&
		echo >&2 "  ($name: $(jq -r '"\(.crashes_survived) crashes (\(.crashes_after_stall) after a stall), \(.commits) commits, \(.keys_checked) key checks, \(.commits_lost) lost, \(.reconnects) reconnects, \(.seconds | floor) s"' "$f"), $(replayed "$name") re-executed by the restarts)"
}

cfg=configs/crashtest-verbs.json
for c in $COMBOS; do
	sys=${c%%:*}
	d=${c#*:}
	deleg=false
	[ "$d" = on ] && deleg=true
	name=crash-$sys-deleg-$d
	crash "$name" "$cfg" "$N" "$sys" "$deleg"
	passed "$name" "$N" "$sys" "$deleg"
	# oq commits on the device's ACK, so a stalled server holds committed,
	# unexecuted requests when it dies: the restarts must have replayed some
	if [ "$sys" = oq ] && [ "$N" -ge 2 ]; then
		r=$(replayed "$name")
		if [ "$r" -gt 0 ]; then
			ok "$name: the restarts re-executed $r committed requests the killed server had not run"
		else
			notok "$name: no restart replayed anything (the crashes never hit committed, unexecuted puts)" \
				"$(grep 'recovery:' "$T/$name.server.log" | tail -5)"
		fi
	fi
done

# Negative control: recovery skipped, committed unexecuted puts are lost.
if [ "$NEG" -gt 0 ]; then
	name=crash-negative-skip-recovery
	crash "$name" "$cfg" "$NEG" oq false OQB_FAULT=skip-recovery
	if [ "$RC" -ne 0 ] && jq -e '.commits_lost > 0 and .keys_with_loss > 0' "$T/$name.json" >/dev/null 2>&1; then
		ok "$name: with recovery skipped the crash test reports lost commits ($(jq .commits_lost "$T/$name.json") lost, exit $RC)"
	else
		notok "$name: recovery was skipped and no loss was reported (exit $RC)" \
			"$(tail -5 "$T/$name.err"; [ -f "$T/$name.json" ] && jq -c '{crashes_survived, commits, commits_lost}' "$T/$name.json")"
	fi
	if grep -q "OQB_FAULT=skip-recovery: NOT replaying verbs ring" "$T/$name.server.log" 2>/dev/null; then
		ok "$name: the restarted servers said they skipped the replay"
	else
		notok "$name: the server log does not show the skipped replay" "$(grep -i fault "$T/$name.server.log" | head -3)"
	fi
fi

# The rocksdb backend (its write-ahead log on) behind the same rings.
if [ "$RDB" -gt 0 ]; then
	"$B/oqb-server" --system oq --backend rocksdb --cpus none --rocksdb-sync 1 --rocksdb-wal 0 \
		>"$T/rdb-probe.out" 2>"$T/rdb-probe.err"
	if grep -q "this build has no RocksDB" "$T/rdb-probe.err"; then
		if [ "${CI:-}" = true ]; then notok crash-rocksdb "this build has no RocksDB"
		else skip crash-rocksdb "this build has no RocksDB (make deps installs librocksdb-dev; rebuild)"; fi
	else
		name=crash-rocksdb-oq
		CYCLE_S=150   # a restart replays RocksDB's log: about 50 s under TCG at load 10
		crash "$name" configs/crashtest-verbs-rocksdb.json "$RDB" oq false
		passed "$name" "$RDB" oq false
	fi
fi
finish
