#!/usr/bin/env bash
# `oqb check` has teeth: short shm runs with history recording, few keys and
# at most 4 clients per key (4 client threads, closed loop with one request
# in flight each, 2 workers: a key never has more than 4 concurrent ops, so
# the general search stays cheap and a fault has no legal explanation).  For every
# test-only fault (bench/fault.h) and several seeds the checker must report a
# violation, and the correct server must pass the very same runs.  Then one
# run of at least 10^5 operations (several threads and workers) is checked
# and must pass; its checker time and memory are printed.
source "$(dirname "$0")/../lib.sh"

SEEDS=${CHECK_FAULT_SEEDS:-3}
KV='{"kind":"kv","put_ratio":0.5,"del_ratio":0.05,"key_size":8,"value_size":32,"keys":4}'
# incr needs decimal values: a trace of set/incr/get on 3 keys, and
# --history-numeric so the 8-byte set values are numbers
awk 'BEGIN { srand(7); for (i = 0; i < 4000; i++) { r = rand(); k = int(rand() * 3);
	op = r < 0.2 ? "set" : r < 0.7 ? "incr" : "get";
	printf "%d,key%d,4,%d,1,%s,0\n", i, k, op == "set" ? 8 : 0, op } }' > "$T/incr.csv"
INCR='{"kind":"trace","path":"'"$T"'/incr.csv"}'

# one NAME FAULT SYSTEM SEED WORKLOAD [client args]: a recorded run, then
# oqb check; sets VERDICT (ok, violation, unknown, or error)
one() {
	local name=$1 fault=$2 sys=$3 seed=$4 wl=$5
	shift 5
	VERDICT=error
	rm -rf "$T/$name"
	mkdir -p "$T/$name"
	: >"$T/$name.srv.out"
	if ! OQB_FAULT=$fault launch_server "$name" 200 "$OQB_BIN/oqb-server" --system "$sys" \
		--backend cache --workers 2; then
		return
	fi
	OQB_FAULT=$fault "$OQB_BIN/oqb-client" --system "$sys" --server "$EP" --threads 4 \
		--arrival closed --outstanding 1 --duration-s 0.3 --warmup-s 0 --seed "$seed" --workload "$wl" \
		--history "$T/$name/history" --out "$T/$name/client.json" "$@" 2>"$T/$name/client.err"
	local rc=$?
	kill -TERM "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	if [ $rc -ne 0 ]; then
		echo "  $name: client exit $rc: $(tail -2 "$T/$name/client.err")" >&2
		return
	fi
	"$OQB_BIN/oqb" check --quiet --time-budget-s 5 "$T/$name" >/dev/null 2>"$T/$name/check.err"
	VERDICT=$(jq -r .verdict "$T/$name/check.json" 2>/dev/null || echo error)
}

# fault SYSTEM WORKLOAD [client args]
for spec in "exec-out-of-order oq kv" "ack-before-alloc oq kv" "get-bypass oq kv" \
	    "drop-after-ack oq kv" "drop-after-ack deferred kv" "incr-nonatomic oq incr"; do
	set -- $spec
	fault=$1 sys=$2 wl=$3
	wlj=$KV extra=()
	[ "$wl" = incr ] && wlj=$INCR extra=(--history-numeric)
	caught=0 passed=0
	for seed in $(seq 1 "$SEEDS"); do
		one "$fault-$sys-$seed" "$fault" "$sys" "$seed" "$wlj" "${extra[@]}"
		[ "$VERDICT" = violation ] && caught=$((caught + 1)) ||
			echo "  $fault/$sys seed $seed: verdict $VERDICT" >&2
		one "correct-$fault-$sys-$seed" "" "$sys" "$seed" "$wlj" "${extra[@]}"
		[ "$VERDICT" = ok ] && passed=$((passed + 1)) ||
			echo "  correct server ($sys, $wl) seed $seed: verdict $VERDICT" >&2
	done
	[ $caught -eq "$SEEDS" ] && ok "$fault ($sys): violation in $caught/$SEEDS seeds" ||
		notok "$fault ($sys): violation in only $caught/$SEEDS seeds"
	[ $passed -eq "$SEEDS" ] && ok "correct server ($sys, $wl workload): ok in $passed/$SEEDS seeds" ||
		notok "correct server ($sys, $wl workload): ok in only $passed/$SEEDS seeds"
done

# negative control of the harness itself: server-delay-ns is not a bug
one "delay" "server-delay-ns:2000" oq 1 "$KV"
[ "$VERDICT" = ok ] && ok "server-delay-ns:2000 is slow, not wrong: ok" ||
	notok "server-delay-ns:2000: verdict $VERDICT"

# an unknown fault name is refused, never ignored
if OQB_FAULT=exec-out-of-ordr "$OQB_BIN/oqb-server" --system oq --workers 1 >/dev/null 2>"$T/badfault.err"; then
	notok "unknown fault name refused"
else
	grep -q 'unknown fault "exec-out-of-ordr"' "$T/badfault.err" && ok "unknown fault name refused" ||
		notok "unknown fault name refused" "$(cat "$T/badfault.err")"
fi

# the driver: "history" and "check" in a config record and check every point
"$OQB_BIN/oqb" run configs/quickstart.json --out "$T/run" --quiet --set history=true --set check=true --set repeat=1 \
	--set 'systems=["oq"]' --set 'arrival.loads_ops=[20000]' --set duration_s=0.3 --set warmup_s=0.1 \
	--set workload.keys=2000 >"$T/run.out" 2>&1
jcheck "oqb run with history and check: point verdict ok" "$T/run/run.json" \
	'.points[0].check.verdict == "ok" and .points[0].check.ops > 3000'
if "$OQB_BIN/oqb" run configs/quickstart.json --dry-run --set check=true >"$T/nohist.out" 2>&1; then
	notok "check without history refused"
else
	grep -q 'needs "history": true' "$T/nohist.out" && ok "check without history refused" ||
		notok "check without history refused" "$(cat "$T/nohist.out")"
fi

# >= 10^5 ops, 3 threads with 16 requests in flight each x 2 workers (shm
# has no delegation), checked and passing
if launch_server big 200 "$OQB_BIN/oqb-server" --system oq --backend cache --workers 2; then
	"$OQB_BIN/oqb-client" --system oq --server "$EP" --threads 3 --arrival closed --outstanding 16 \
		--duration-s 3 --warmup-s 0 --seed 9 --history "$T/big/history" --out "$T/big.json" \
		--workload '{"kind":"kv","put_ratio":0.5,"key_size":16,"value_size":64,"keys":1000,"zipf":0.99}' \
		2>"$T/big.err"
	kill -TERM "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	"$OQB_BIN/oqb" check "$T/big" | tail -1
	jcheck "big run: >= 10^5 ops checked, verdict ok" "$T/big/check.json" \
		'.verdict == "ok" and .ops >= 100000 and .keys_violation == 0 and .keys_unknown == 0'
	jq -c '{ops, keys, keys_fast_path, secs, peak_rss_mb}' "$T/big/check.json" >&2
else
	notok "big run: server start"
fi
finish
