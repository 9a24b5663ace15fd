#!/usr/bin/env bash
# The three systems end to end on shm, through the real binaries started the
# way a person starts them by hand (README): each system on the null and the
# cache backend with sane JSON, then the paper's semantic claim on a slow
# backend, compared by ratios taken in one run.
source "$(dirname "$0")/../lib.sh"

# start_server NAME ARGS...: starts oqb-server, waits for its endpoint.
start_server() { local name=$1; shift; launch_server "$name" 200 "$OQB_BIN/oqb-server" "$@"; }

stop_server() {   # SIGTERM -> the server prints its counters and cleans up
	kill -TERM "$SRV_PID" 2>/dev/null
	wait "$SRV_PID"
}

for sys in oq rawrpc deferred; do
	for be in null cache; do
		name=$sys-$be
		if ! start_server "$name" --system "$sys" --backend "$be" --workers 2; then
			notok "$name: server start"; continue
		fi
		"$OQB_BIN/oqb-client" --system "$sys" --server "$EP" --threads 2 --rate 20000 \
			--duration-s 0.5 --warmup-s 0.2 \
			--workload '{"kind":"kv","put_ratio":0.5,"key_size":16,"value_size":100,"keys":1000}' \
			--out "$T/$name.json" 2>"$T/$name.cli.err"
		rc=$?
		stop_server
		if [ $rc -ne 0 ]; then notok "$name: client exit $rc" "$(cat "$T/$name.cli.err")"; continue; fi
		jcheck "$name: result is sane" "$T/$name.json" '
			.schema == "oqbench.client/1" and .system == "'"$sys"'" and
			.lat_ns.all.n > 5000 and .lat_ns.nilext.n > 1000 and .lat_ns.non_nilext.n > 1000 and
			.lat_ns.all.n == (.lat_ns.nilext.n + .lat_ns.non_nilext.n) and
			.unanswered == 0 and .errors == 0 and
			(.achieved_ops / .offered_ops) > 0.9 and (.achieved_ops / .offered_ops) < 1.1 and
			.lat_ns.all.min <= .lat_ns.all.max'
		# the server stopped cleanly and reported what it executed
		jcheck "$name: server counters" <(sed -n '/^{/,$p' "$T/$name.srv.out") \
			'.executed > 5000 and .rejected == 0 and .voided == 0'
		[ -d "$EP" ] && notok "$name: run directory left behind: $EP" || ok "$name: run directory removed"
	done
done

# The paper's claim (§4, §6.3) on a slow backend: 50 us per request, all
# sets, 70 % load.  oq commits on delivery, far below the service time;
# rawrpc waits for queueing plus execution; deferred's ACK waits for the
# queue but not for its own execution, so it sits between them.
#
# The claim is about time, so other load on a 2-core machine can blur it:
# a run whose three medians do not show it is repeated, up to 3 runs, and
# every run is printed.  An implementation that got the commit rules wrong
# fails all three.  Under sanitizers (make check) the timings mean nothing,
# so the check is skipped there, and says so.
p50() { jq -r '.summary_ns.nilext.p50 // empty' "$1" 2>/dev/null; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
semantic_run() {
	local sys
	for sys in oq rawrpc deferred; do
		start_server "sem-$sys" --system "$sys" --backend null --service-ns 50000 || return 1
		"$OQB_BIN/oqb-client" --system "$sys" --server "$EP" --rate 14000 --duration-s 1.5 --warmup-s 0.3 \
			--workload '{"kind":"kv","put_ratio":1.0,"key_size":16,"value_size":64,"keys":1000}' \
			--out "$T/sem-$sys.json" 2>"$T/sem-$sys.err"
		stop_server
	done
	oq=$(p50 "$T/sem-oq.json"); raw=$(p50 "$T/sem-rawrpc.json"); def=$(p50 "$T/sem-deferred.json")
	[ -n "$oq" ] && [ -n "$raw" ] && [ -n "$def" ]
}
if [ "${OQB_SANITIZE:-0}" = 1 ]; then
	skip "semantic" "latency ratios are not meaningful under ASan/UBSan (checked by make test)"
	finish
fi
for attempt in 1 2 3; do
	if ! semantic_run; then notok "semantic: run $attempt produced no results"; break; fi
	echo "  semantic run $attempt, nilext p50 (ns): oq=$oq deferred=$def rawrpc=$raw (service 50000 ns)"
	lt "$oq" 10000 && ! lt "$raw" 50000 && lt "$oq" "$def" && lt "$def" "$raw" && break
done
if [ -n "$oq" ] && [ -n "$raw" ] && [ -n "$def" ]; then
	lt "$oq" 10000 && ok "semantic: oq nilext p50 far below the service time" \
		|| notok "semantic: oq nilext p50 $oq ns is not far below 50 us"
	! lt "$raw" 50000 && ok "semantic: rawrpc nilext p50 at least the service time" \
		|| notok "semantic: rawrpc nilext p50 $raw ns < 50 us"
	lt "$oq" "$def" && lt "$def" "$raw" && ok "semantic: deferred between oq and rawrpc" \
		|| notok "semantic: expected oq < deferred < rawrpc, got $oq / $def / $raw"
else
	notok "semantic: missing results"
fi
finish
