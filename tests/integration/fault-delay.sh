#!/usr/bin/env bash
# A planted regression that hits a fraction of requests (bench/fault.h):
# OQB_FAULT=server-delay-ns:1000000,server-delay-frac:0.02 with
# server-delay-mode busy and sleep, on a rawrpc server with one worker and
# the null backend, driven by one closed-loop client (one request in
# flight, so the requests it measures are a run of the ones the worker
# executed, in order).
#
# The choice of requests is deterministic: of k executed, exactly
# floor(k F + 1/2) are delayed, so the server's count (its exit JSON's
# fault_delayed and the "OQB_FAULT fired: server-delay=K" line) must equal
# that, to the request.  Causal latency bound: any run of n >= 200
# consecutive requests holds at least n F - 1 >= 3 delayed ones, more than
# the 1 % above P99 (2 of 200; true from n > 100 on, 200 for margin), and
# each took at least 1 ms from send to answer, so
# the client's P99 is at least 1 ms (less the histogram's rounding, at most
# 1/2048 of the value: lib/hist.h) however busy the host; it never skips.
# The median is a normal request's; that one can only say so on a calm
# host (it skips with the kernel's evidence of a busy one).  Sleep mode is
# also checked by the kernel's word: the worker thread's
# voluntary_ctxt_switches (/proc) grew by at least one per sleep, since
# each clock_nanosleep blocks; a busy delay blocks for none of them.
# Last, the fault strings that do not make sense are refused with the fix.
source "$(dirname "$0")/../lib.sh"

N=1000000
F=0.02
KV='{"kind":"kv","put_ratio":0.5,"key_size":16,"value_size":32,"keys":1000}'

# vol_switches PID: "TID COUNT" for each thread of PID, from the kernel
vol_switches() {
	local t
	for t in /proc/"$1"/task/*; do
		echo "${t##*/} $(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "$t/status" 2>/dev/null)"
	done
}

for mode in sleep busy; do
	fault=server-delay-ns:$N,server-delay-frac:$F,server-delay-mode:$mode
	if ! OQB_FAULT=$fault launch_server "$mode" 200 "$OQB_BIN/oqb-server" --system rawrpc \
		--backend null --workers 1; then
		notok "$mode: server start"; continue
	fi
	vol_switches "$SRV_PID" >"$T/$mode.vol0"
	host_mark
	# enough consecutive requests for the bound (200, below): a host that
	# slows the client so far that 1.5 s holds fewer is given longer runs,
	# the same server counting on (never a skip: the bound is judged on
	# the run that has them)
	for dur in 1.5 4 10; do
		"$OQB_BIN/oqb-client" --system rawrpc --server "$EP" --threads 1 --arrival closed --outstanding 1 \
			--duration-s $dur --warmup-s 0 --workload "$KV" --out "$T/$mode.json" 2>"$T/$mode.cli.err"
		rc=$?
		[ $rc -ne 0 ] || [ "$(jq '.summary_ns.all.n' "$T/$mode.json" 2>/dev/null || echo 0)" -ge 200 ] && break
	done
	host_busy && busy=$HOST_EVIDENCE || busy=
	vol_switches "$SRV_PID" >"$T/$mode.vol1"
	kill -TERM "$SRV_PID" 2>/dev/null
	wait "$SRV_PID"
	if [ $rc -ne 0 ]; then notok "$mode: client exit $rc" "$(tail -3 "$T/$mode.cli.err")"; continue; fi
	sed -n '/^{/,$p' "$T/$mode.srv.out" >"$T/$mode.srv.json"
	exe=$(jq '.executed' "$T/$mode.srv.json")
	del=$(jq '.fault_delayed' "$T/$mode.srv.json")
	want=$(awk -v k="$exe" -v f="$F" 'BEGIN { printf "%d\n", int(k * f + 0.5) }')
	fired=$(sed -n 's/^OQB_FAULT fired:.* server-delay=\([0-9]*\).*/\1/p' "$T/$mode.srv.err" | tail -1)
	echo "  $mode: executed $exe, delayed $del (fired $fired, want $want), client $(jq -c \
		'.summary_ns.all | {n, p50, p99, max}' "$T/$mode.json")" >&2
	jcheck "$mode: delayed exactly floor(executed x $F + 1/2) requests ($del of $exe), counted per worker" \
		"$T/$mode.srv.json" ".executed > 1000 and .fault_delayed == $want and
		 .per_worker[0].fault_delayed == .fault_delayed and .per_worker[0].executed == .executed"
	[ "${fired:-x}" = "$del" ] && ok "$mode: exit line OQB_FAULT fired: server-delay=$fired" ||
		notok "$mode: exit line OQB_FAULT fired: server-delay=$del" "$(grep 'OQB_FAULT' "$T/$mode.srv.err")"
	jcheck "$mode: client P99 >= 1 ms (causal: >= 1 % of its requests were delayed 1 ms)" "$T/$mode.json" \
		".summary_ns.all.n >= 200 and .errors == 0 and .unanswered == 0 and
		 .summary_ns.all.p99 >= $N - $N / 2048"
	if jq -e ".summary_ns.all.p50 < $N / 2" "$T/$mode.json" >/dev/null; then
		ok "$mode: client median < 0.5 ms (only a fraction is delayed)"
	elif [ -n "$busy" ]; then
		skip_host "$mode: client median < 0.5 ms" "$busy" "median $(jq .summary_ns.all.p50 "$T/$mode.json") ns"
	else
		notok "$mode: client median < 0.5 ms" "median $(jq .summary_ns.all.p50 "$T/$mode.json") ns on a calm host"
	fi
	# the worker thread's voluntary switches over the client's run
	tid=$(jq '.per_worker[0].tid' "$T/$mode.srv.json")
	v0=$(awk -v t="$tid" '$1 == t { print $2 }' "$T/$mode.vol0")
	v1=$(awk -v t="$tid" '$1 == t { print $2 }' "$T/$mode.vol1")
	if [ -z "$v0" ] || [ -z "$v1" ]; then
		notok "$mode: worker thread $tid in /proc" "$(cat "$T/$mode.vol0")"
		continue
	fi
	dv=$((v1 - v0))
	echo "  $mode: worker thread $tid: voluntary_ctxt_switches +$dv over $del delays" >&2
	if [ "$mode" = sleep ]; then
		[ "$dv" -ge "$del" ] && ok "sleep: the worker blocked for each delay (voluntary switches +$dv >= $del)" ||
			notok "sleep: the worker blocked for each delay" "voluntary switches +$dv < $del delays"
	else
		[ $((2 * dv)) -lt "$del" ] && ok "busy: the worker spun through the delays (voluntary switches +$dv < $del / 2)" ||
			notok "busy: the worker spun through the delays" "voluntary switches +$dv, $del delays"
	fi
done

# refused: each names what is wrong and the fix
refuse() {   # refuse NAME FAULT WORD...
	local name=$1 fault=$2 w miss=""
	shift 2
	if OQB_FAULT=$fault timeout 20 "$OQB_BIN/oqb-server" --system rawrpc --backend null --workers 1 \
		>"$T/refuse.out" 2>"$T/refuse.err"; then
		notok "$name" "OQB_FAULT=$fault: the server started"; return
	fi
	for w in "$@"; do grep -qF -- "$w" "$T/refuse.err" || miss="$miss [$w]"; done
	[ -z "$miss" ] && ok "$name" || notok "$name" "message lacks$miss: $(cat "$T/refuse.err")"
}
refuse "a fraction without server-delay-ns is refused" server-delay-frac:0.02 \
	"server-delay-frac modifies server-delay-ns" "OQB_FAULT=server-delay-ns:"
refuse "a mode without server-delay-ns is refused" server-delay-mode:sleep \
	"server-delay-mode modifies server-delay-ns"
refuse "an unknown mode is refused" server-delay-ns:1,server-delay-mode:spin \
	'"server-delay-mode:spin": unknown mode' busy sleep
refuse "a fraction above 1 is refused" server-delay-ns:1,server-delay-frac:1.5 \
	'"server-delay-frac:1.5"' "0 < F <= 1"
refuse "a fraction of 0 is refused" server-delay-ns:1,server-delay-frac:0 \
	'"server-delay-frac:0"' "0 < F <= 1"

finish
