#!/usr/bin/env bash
# `oqb check` has teeth: short shm runs with history recording, few keys and
# at most 4 clients per key (4 client threads, closed loop with one request
# in flight each, 2 workers: a key never has more than 4 concurrent ops, so
# the general search stays cheap and a fault has no legal explanation).  For every
# test-only fault (bench/fault.h) and several seeds (CHECK_FAULT_SEEDS: 3 in make test, 5 in make test-long)
# the fault must have fired (the faulty process's "OQB_FAULT fired:" count
# is above zero: a fault that never bent the protocol proves nothing) and
# the checker must report a violation; the correct server must pass the very
# same runs.  A table of fault x seed (fired count / verdict) goes to
# stderr.  A recorded history whose read digest is corrupted must fail.
# Then one run of at least 10^5 operations (several threads and workers) is
# checked and must pass; its checker time and memory are printed.
source "$(dirname "$0")/../lib.sh"

SEEDS=${CHECK_FAULT_SEEDS:-3}
MIN_FIRED=20
KV='{"kind":"kv","put_ratio":0.5,"del_ratio":0.05,"key_size":8,"value_size":32,"keys":4}'
# incr needs decimal values: a trace of set/incr/get on 3 keys, and
# --history-numeric so the 8-byte set values are numbers
awk 'BEGIN { srand(7); for (i = 0; i < 4000; i++) { r = rand(); k = int(rand() * 3);
	op = r < 0.2 ? "set" : r < 0.7 ? "incr" : "get";
	printf "%d,key%d,4,%d,1,%s,0\n", i, k, op == "set" ? 8 : 0, op } }' > "$T/incr.csv"
INCR='{"kind":"trace","path":"'"$T"'/incr.csv"}'

# one NAME FAULT SYSTEM SEED WORKLOAD [client args]: a recorded run, then
# oqb check; sets VERDICT (ok, violation, unknown, or error) and FIRED (how
# often FAULT fired, from the faulty process's exit line; 0 without one)
one() {
	local name=$1 fault=$2 sys=$3 seed=$4 wl=$5
	shift 5
	VERDICT=error FIRED=0
	rm -rf "$T/$name"
	mkdir -p "$T/$name"
	: >"$T/$name.srv.out"
	if ! OQB_FAULT=$fault launch_server "$name" 200 "$OQB_BIN/oqb-server" --system "$sys" \
		--backend cache --workers 2; then
		return
	fi
	OQB_FAULT=$fault "$OQB_BIN/oqb-client" --system "$sys" --server "$EP" --threads 4 \
		--arrival closed --outstanding 1 --duration-s "${DUR:-0.3}" --warmup-s 0 --seed "$seed" --workload "$wl" \
		--history "$T/$name/history" --out "$T/$name/client.json" "$@" 2>"$T/$name/client.err"
	local rc=$?
	kill -TERM "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	if [ -n "$fault" ]; then   # the client counts ack-before-alloc, the server the rest
		FIRED=$(cat "$T/$name.srv.err" "$T/$name/client.err" |
			sed -n "s/^OQB_FAULT fired:.* ${fault%%:*}=\([0-9]*\).*/\1/p" | sort -n | tail -1)
		FIRED=${FIRED:-0}
	fi
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
	caught=0 passed=0 fired=0 row=
	for seed in $(seq 1 "$SEEDS"); do
		# A fault that fired a few times may have bent nothing anyone read
		# (a dropped set overwritten before a get): under a loaded machine
		# 0.3 s can be that short, so the run doubles until it fired
		# MIN_FIRED times (a dropped write goes unread with p ~ 1/2 each).
		for DUR in 0.3 0.6 1.2 2.4; do
			one "$fault-$sys-$seed" "$fault" "$sys" "$seed" "$wlj" "${extra[@]}"
			[ "$FIRED" -ge "$MIN_FIRED" ] && break
			echo "  $fault/$sys seed $seed: fired only $FIRED times in $DUR s; longer" >&2
		done
		row="$row $FIRED/${VERDICT:0:4}"
		[ "$FIRED" -ge "$MIN_FIRED" ] && fired=$((fired + 1)) ||
			echo "  $fault/$sys seed $seed: the fault fired only $FIRED times" >&2
		[ "$FIRED" -ge "$MIN_FIRED" ] && [ "$VERDICT" = violation ] && caught=$((caught + 1)) ||
			echo "  $fault/$sys seed $seed: fired $FIRED times, verdict $VERDICT" >&2
		one "correct-$fault-$sys-$seed" "" "$sys" "$seed" "$wlj" "${extra[@]}"
		[ "$VERDICT" = ok ] && passed=$((passed + 1)) ||
			echo "  correct server ($sys, $wl) seed $seed: verdict $VERDICT" >&2
		DUR=
	done
	printf '  table %-18s %-8s seeds 1-%s (fired/verdict):%s\n' "$fault" "$sys" "$SEEDS" "$row" >&2
	[ $caught -eq "$SEEDS" ] && ok "$fault ($sys): fired (>= $MIN_FIRED times) and caught in $caught/$SEEDS seeds" ||
		notok "$fault ($sys): fired in $fired/$SEEDS seeds, fired and caught in only $caught/$SEEDS"
	[ $passed -eq "$SEEDS" ] && ok "correct server ($sys, $wl workload): ok in $passed/$SEEDS seeds" ||
		notok "correct server ($sys, $wl workload): ok in only $passed/$SEEDS seeds"
done

# read digests: a correct run's history passes; the same file with one
# get's read digest changed (the right tag, other bytes: a torn value) fails.
# No dels, so every key takes the unique-value path, which names the cause.
one "digest" "" oq 1 '{"kind":"kv","put_ratio":0.5,"key_size":8,"value_size":32,"keys":4}'
f=$(ls "$T/digest/history/"*.bin 2>/dev/null | head -1)
# the first ok get (op 1, status 0) that carries a read digest (bit 5 of byte 39)
idx=$([ -n "$f" ] && od -An -v -tu1 -w96 -j128 "$f" |
	awk '$37 == 1 && $38 == 0 && int($40 / 32) % 2 == 1 { print NR - 1; exit }')
if [ "$VERDICT" != ok ] || [ -z "$idx" ]; then
	notok "read digest: a correct run passes and has a get with a read digest" "verdict $VERDICT, get ${idx:-none}"
else
	ok "read digest: a correct run passes and records read digests"
	off=$((128 + idx * 96 + 64))
	b=$(od -An -tu1 -j "$off" -N1 "$f" | tr -d ' ')
	printf "\\$(printf '%03o' $(( (b ^ 1) & 255 )))" | dd of="$f" bs=1 seek="$off" conv=notrunc 2>/dev/null
	"$OQB_BIN/oqb" check --quiet "$T/digest" >"$T/digest.out" 2>&1
	rc=$?
	[ $rc -eq 1 ] && jq -e '.violations[0].why | test("digests differ")' "$T/digest/check.json" >/dev/null &&
		ok "read digest: a get with its write's tag on other bytes is a violation" ||
		notok "read digest: torn value caught (exit $rc, want 1)" "$(jq -c .violations "$T/digest/check.json")"
fi

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

# >= 10^5 ops, checked and passing, on 2 workers: 3 threads with 16
# requests in flight each in one process, then 2 processes x 2 threads
# (shm has no delegation: that is a verbs knob, tests/verbs/guest-check.sh).
# The checker's time and peak memory are printed (/usr/bin/time -v if there).
# A loaded machine can make a run short of 10^5 ops: it is then run again,
# twice as long, up to 4 times (the run's length is not what is tested).
# big NAME PROCS THREADS OUTSTANDING DURATION
big() {
	local name=$1 procs=$2 threads=$3 outst=$4 dur=$5 try
	for try in 1 2 3 4; do
		big_run "$@"
		[ "$(jq -r .ops "$T/$name/check.json" 2>/dev/null || echo 0)" -ge 100000 ] && break
		echo "  $name: fewer than 10^5 ops in $dur s (a loaded machine); twice as long" >&2
		dur=$(echo "$dur * 2" | bc)
		set -- "$name" "$procs" "$threads" "$outst" "$dur"
	done
	jcheck "$name: >= 10^5 ops from $procs x $threads threads checked, verdict ok" "$T/$name/check.json" \
		'.verdict == "ok" and .ops >= 100000 and .keys_violation == 0 and .keys_unknown == 0'
	jq -c '{ops, keys, keys_fast_path, secs, peak_rss_mb}' "$T/$name/check.json" >&2
}
big_run() {
	local name=$1 procs=$2 threads=$3 outst=$4 dur=$5 r pids=()
	rm -rf "${T:?}/$name"
	if ! launch_server "$name" 200 "$OQB_BIN/oqb-server" --system oq --backend cache --workers 2; then
		notok "$name: server start"
		return
	fi
	for r in $(seq 0 $((procs - 1))); do
		"$OQB_BIN/oqb-client" --system oq --server "$EP" --rank "$r" --threads "$threads" --arrival closed \
			--outstanding "$outst" --duration-s "$dur" --warmup-s 0 --seed $((9 + r)) \
			--history "$T/$name/history" --out "$T/$name-$r.json" \
			--workload '{"kind":"kv","put_ratio":0.5,"key_size":16,"value_size":64,"keys":1000,"zipf":0.99}' \
			2>"$T/$name-$r.err" &
		pids+=($!)
	done
	wait "${pids[@]}"
	kill -TERM "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	local tv=()
	[ -x /usr/bin/time ] && tv=(/usr/bin/time -v)
	"${tv[@]}" "$OQB_BIN/oqb" check "$T/$name" 2>"$T/$name.time" | tail -1
	grep -E "Elapsed|Maximum resident" "$T/$name.time" | sed 's/^\s*/  /' >&2
}
big big 1 3 16 3
big big-procs 2 2 16 2
finish
