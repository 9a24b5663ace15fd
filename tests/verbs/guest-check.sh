#!/usr/bin/env bash
# guest-check.sh - `oqb check` on the verbs transport, inside the Soft-RoCE
# VM (tests/verbs/run-guests.sh starts it through tests/vm/rxe-vm; by hand on
# an RDMA host: RXE_IP=ADDR OQB_BIN=$PWD/bin bash tests/verbs/guest-check.sh).
#
# What it shows, per case one "ok" / "not ok" line:
#  - a multi-client verbs run (2 client processes x 2 threads, 2 server
#    workers, oq with nilext sets committed on the hardware ACK) recorded
#    with --history passes `oqb check`, with delegation off and on;
#  - each server-side fault of bench/fault.h that applies to verbs
#    (exec-out-of-order, get-bypass, drop-after-ack, incr-nonatomic) fires
#    and is caught (a violation) in every seed tried (CHECK_VERBS_SEEDS,
#    default 1: TCG is slow), and the correct server passes the same runs.
#    ack-before-alloc is an shm client fault (it stands in for an ACK before
#    the slot exists, which on verbs is the NIC's business): not run here.
# The runs are short and at most 4 clients share a key, so the checker's
# search stays small; nothing asserts a time.
source "$(dirname "$0")/../lib.sh"
: "${RXE_IP:?set RXE_IP to the address of the RDMA device (run through tests/vm/rxe-vm)}"
B=$OQB_BIN
PORT=${CHECK_VERBS_PORT:-7600}
SEEDS=${CHECK_VERBS_SEEDS:-1}
MIN_FIRED=10   # drop-after-ack fires ~3 times a second under TCG

# run NAME FAULT SEED PROCS THREADS OUTSTANDING DURATION WORKLOAD [client args]:
# a recorded verbs run and `oqb check`; sets VERDICT, OPS and FIRED (the
# faulty server's count from its "OQB_FAULT fired:" exit line).
run() {
	local name=$1 fault=$2 seed=$3 procs=$4 threads=$5 outst=$6 dur=$7 wl=$8 r rc=0 pids=()
	shift 8
	VERDICT=error OPS=0 FIRED=0
	PORT=$((PORT + 1))
	rm -rf "${T:?}/$name"
	mkdir -p "$T/$name"
	if ! OQB_FAULT=$fault launch_server "$name" 600 "$B/oqb-server" --transport verbs --addr "$RXE_IP" \
		--port "$PORT" --system oq --backend cache --memory-mb 16 --workers 2 --ring-slots 256; then
		return
	fi
	for r in $(seq 0 $((procs - 1))); do
		timeout -k 5 120 "$B/oqb-client" --transport verbs --server "$EP" --system oq --rank "$r" \
			--threads "$threads" --arrival closed --outstanding "$outst" --duration-s "$dur" \
			--warmup-s 0 --seed $((seed * 10 + r)) --workload "$wl" --history "$T/$name/history" \
			--out "$T/$name/client-$r.json" "$@" 2>"$T/$name/client-$r.err" &
		pids+=($!)
	done
	for r in "${pids[@]}"; do
		wait "$r" || rc=$?
	done
	kill -TERM "$SRV_PID" 2>/dev/null
	for r in $(seq 1 600); do
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$SRV_PID" 2>/dev/null && echo "  $name: the server did not exit within 60 s of SIGTERM" >&2
	kill -KILL "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	if [ -n "$fault" ]; then
		FIRED=$(sed -n "s/^OQB_FAULT fired:.* $fault=\([0-9]*\).*/\1/p" "$T/$name.srv.err" | tail -1)
		FIRED=${FIRED:-0}
		[ "$FIRED" = 0 ] && { echo "  $name: the server's last words:"; tail -5 "$T/$name.srv.err" |
			sed 's/^/    /'; } >&2
	fi
	if [ $rc -ne 0 ]; then
		echo "  $name: a client exited $rc: $(tail -2 "$T/$name"/client-*.err)" >&2
		return
	fi
	"$B/oqb" check --quiet --time-budget-s 20 "$T/$name" >"$T/$name.check.out" 2>&1
	VERDICT=$(jq -r .verdict "$T/$name/check.json" 2>/dev/null || echo error)
	OPS=$(jq -r .ops "$T/$name/check.json" 2>/dev/null || echo 0)
}

# ---- a correct multi-client run, delegation off and on -------------------
WL='{"kind":"kv","put_ratio":0.5,"del_ratio":0.02,"key_size":16,"value_size":64,"keys":50,"zipf":0.9}'
for d in ${CHECK_VERBS_DELEG-off on}; do
	flag=()
	[ $d = on ] && flag=(--delegation)
	run "deleg-$d" "" 1 2 2 4 3 "$WL" "${flag[@]}"
	share=$(jq -r '[.transport_stats[] | .threads_sharing_qps] | max' "$T/deleg-$d/client-0.json" 2>/dev/null)
	want=1
	[ $d = on ] && want=2
	if [ "$VERDICT" = ok ] && [ "$OPS" -ge 500 ] && [ "$share" = "$want" ]; then
		ok "check verbs, delegation $d: $OPS ops of 2 processes x 2 threads linearizable"
	else
		notok "check verbs, delegation $d: verdict $VERDICT, $OPS ops, threads sharing QPs $share (want ok, >= 500, $want)" \
			"$(tail -5 "$T/deleg-$d.check.out" "$T/deleg-$d.srv.err" 2>/dev/null)"
	fi
	echo "  check verbs, delegation $d: $(jq -c '{ops, keys, keys_fast_path, secs, peak_rss_mb}' \
		"$T/deleg-$d/check.json" 2>/dev/null)" >&2
done

# ---- the faults that apply to verbs --------------------------------------
KV='{"kind":"kv","put_ratio":0.5,"del_ratio":0.05,"key_size":8,"value_size":32,"keys":4}'
awk 'BEGIN { srand(7); for (i = 0; i < 4000; i++) { r = rand(); k = int(rand() * 3);
	op = r < 0.2 ? "set" : r < 0.7 ? "incr" : "get";
	printf "%d,key%d,4,%d,1,%s,0\n", i, k, op == "set" ? 8 : 0, op } }' >"$T/incr.csv"
INCR='{"kind":"trace","path":"'"$T"'/incr.csv"}'
for fault in ${CHECK_VERBS_FAULTS-exec-out-of-order get-bypass drop-after-ack incr-nonatomic}; do
	wl=$KV extra=()
	[ $fault = incr-nonatomic ] && wl=$INCR extra=(--history-numeric)
	caught=0 passed=0 row=
	for seed in $(seq 1 "$SEEDS"); do
		# as in check-faults.sh: a few firings may bend nothing anyone
		# read, so a run that fired fewer than MIN_FIRED times is run
		# again, twice as long, up to 8 s (TCG makes verbs runs slow)
		for dur in 1 2 4 8; do
			run "$fault-$seed" "$fault" "$seed" 1 4 1 "$dur" "$wl" "${extra[@]}"
			[ "$FIRED" -ge "$MIN_FIRED" ] && break
			echo "  $fault seed $seed: fired only $FIRED times in $dur s; longer" >&2
		done
		row="$row $FIRED/$VERDICT"
		[ "$FIRED" -ge "$MIN_FIRED" ] && [ "$VERDICT" = violation ] && caught=$((caught + 1))
		run "correct-$fault-$seed" "" "$seed" 1 4 1 "$dur" "$wl" "${extra[@]}"
		[ "$VERDICT" = ok ] && passed=$((passed + 1)) ||
			echo "  correct server, $fault workload, seed $seed: verdict $VERDICT" >&2
	done
	echo "  table verbs $fault seeds 1-$SEEDS (fired/verdict):$row" >&2
	[ $caught -eq "$SEEDS" ] && ok "check verbs: $fault fired and caught in $caught/$SEEDS seeds" ||
		notok "check verbs: $fault fired and caught in only $caught/$SEEDS seeds (fired/verdict:$row)"
	[ $passed -eq "$SEEDS" ] && ok "check verbs: the correct server passes the $fault runs ($passed/$SEEDS)" ||
		notok "check verbs: the correct server passes the $fault runs in only $passed/$SEEDS"
done
finish
