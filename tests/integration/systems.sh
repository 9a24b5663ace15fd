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
		shape_begin; shape_mark
		"$OQB_BIN/oqb-client" --system "$sys" --server "$EP" --threads 2 --rate 20000 \
			--duration-s 0.5 --warmup-s 0.2 --drain-s 30 \
			--workload '{"kind":"kv","put_ratio":0.5,"key_size":16,"value_size":100,"keys":1000}' \
			--out "$T/$name.json" 2>"$T/$name.cli.err"
		rc=$?
		shape_done
		stop_server
		if [ $rc -ne 0 ]; then notok "$name: client exit $rc" "$(cat "$T/$name.cli.err")"; continue; fi
		# counts, every run: the classes add up, nothing failed, and with
		# a 30 s drain every request sent is answered, busy host or not
		jcheck "$name: result is sane" "$T/$name.json" '
			.schema == "oqbench.client/1" and .system == "'"$sys"'" and
			.lat_ns.nilext.n > 0 and .lat_ns.non_nilext.n > 0 and
			.lat_ns.all.n == (.lat_ns.nilext.n + .lat_ns.non_nilext.n) and
			.unanswered == 0 and .errors == 0 and .lat_ns.all.min <= .lat_ns.all.max'
		# the rate, a timing shape: 20 Kops/s kept within 10 % (a load of
		# 20 on 2 CPUs made the client fall behind its schedule)
		SHAPE=("$name: the offered rate is kept" '.lat_ns.all.n > 5000 and
			(.achieved_ops / .offered_ops) > 0.9 and (.achieved_ops / .offered_ops) < 1.1')
		shape_check "$T/$name.json" "${SHAPE[@]}"
		# the server stopped cleanly and reported what it executed
		jcheck "$name: server counters" <(sed -n '/^{/,$p' "$T/$name.srv.out") \
			'.executed > 5000 and .rejected == 0 and .voided == 0'
		[ -d "$EP" ] && notok "$name: run directory left behind: $EP" || ok "$name: run directory removed"
	done
done

# Latency is counted from the time a request is due, and the client makes
# the next request while it waits (idle, or with requests in flight), so
# the generator's time is not in a latency when it fits in that wait.
# OQB_FAULT=client-gen-delay-ns makes generating each request take 200 us;
# the server takes 300 us per request.  Generating before the due time
# would add the 200 us to every latency (and cut a closed loop of one in
# flight from 3.3 to 2 Kops/s); made during the 300 us, it adds nothing.
# Judged against a client without the fault, run just before it against
# the same server: a machine busy with other work slows both alike
# (absolute bounds failed CI under load, issue 39).  A pair may still be
# disturbed, so up to three pairs are taken; the generator on the critical
# path would fail every one of them by 200 us.
GEN_KV='{"kind":"kv","put_ratio":0.5,"key_size":16,"value_size":32,"keys":1000}'
# gen_run NAME FAULT ARGS...: one client run, its JSON at $T/NAME.json
gen_run() {
	local name=$1 fault=$2
	shift 2
	OQB_FAULT=$fault "$OQB_BIN/oqb-client" --system rawrpc --server "$EP" --duration-s 0.6 --warmup-s 0.1 \
		--workload "$GEN_KV" --out "$T/$name.json" "$@" 2>"$T/$name.err"
}
# gen_judge ID TITLE JQ-TEST ARGS...: up to three (base, fault) pairs; ok
# at the first pair that passes JQ-TEST (given $b and $f, the two
# results), which includes a base p50 near the 300 us service (under
# 600 us).  Each pair's base p50 is at least the service time, whatever
# the host does (a causal bound: the server busy-waits 300 us per
# request), so an ignored --service-ns fails at once.  When no pair
# passes, the case is skipped only if every pair ran while other tasks
# took the CPU (tests/lib.sh: host_busy, the kernel's accounting less
# this test's processes); on a calm host it fails.
gen_judge() {
	local id=$1 name=$2 test=$3 i last="" evidence="" calm=0
	shift 3
	for i in 1 2 3; do
		host_mark
		gen_run "gen-$id-base" "" "$@" && gen_run "gen-$id" client-gen-delay-ns:200000 "$@" || {
			notok "gen-delay: $name: client failed" "$(tail -n 3 "$T/gen-$id-base.err" "$T/gen-$id.err")"
			return; }
		host_busy && evidence="$evidence pair $i: $HOST_EVIDENCE;" || calm=$((calm + 1))
		last="pair $i: without the fault $(jq -c '{p50: .summary_ns.all.p50, ops: .achieved_ops}' "$T/gen-$id-base.json"), with it $(jq -c '{p50: .summary_ns.all.p50, ops: .achieved_ops}' "$T/gen-$id.json")"
		jq -e '.summary_ns.all.p50 >= 295000' "$T/gen-$id-base.json" >/dev/null || {
			notok "gen-delay: $name: the base p50 is at least the 300 us service" "$last"; return; }
		if jq -e -n --slurpfile b "$T/gen-$id-base.json" --slurpfile f "$T/gen-$id.json" \
			"\$b[0] as \$b | \$f[0] as \$f | \$b.summary_ns.all.p50 < 600000 and $test" >/dev/null; then
			ok "gen-delay: $name (pair $i: p50 $(jq '.summary_ns.all.p50 / 1000 | round' "$T/gen-$id-base.json") us without the fault, $(jq '.summary_ns.all.p50 / 1000 | round' "$T/gen-$id.json") us with it)"
			return
		fi
	done
	if [ $calm = 0 ]; then
		skip_host "gen-delay: $name" "${evidence%;}" "no pair passed; $last"
	else
		notok "gen-delay: $name" "base p50 < 600 us and $test failed in 3 pairs, $calm of them on a calm host; $last"
	fi
}
if start_server "gen-delay" --system rawrpc --backend null --service-ns 300000; then
	gen_judge closed "closed loop: p50 and throughput as without the 200 us generator" \
		'$f.summary_ns.all.p50 < $b.summary_ns.all.p50 + 100000 and $f.achieved_ops > 0.8 * $b.achieved_ops' --arrival closed --outstanding 1
	gen_judge open "open loop at 1 Kops/s: p50 as without the 200 us generator" \
		'$f.lat_ns.all.n > 300 and $f.summary_ns.all.p50 < $b.summary_ns.all.p50 + 100000' --rate 1000
	stop_server
	grep -q "TEST-ONLY FAULT INJECTION ON: OQB_FAULT=client-gen-delay-ns:200000" "$T/gen-closed.err" &&
		ok "gen-delay: the client warns that the fault is on" ||
		notok "gen-delay: no fault warning" "$(cat "$T/gen-closed.err")"
else
	notok "gen-delay: server start"
fi
OQB_FAULT=client-gen-delay-ns:x "$OQB_BIN/oqb-client" --system rawrpc --server "$T/none" --rate 1000 \
	--duration-s 0.1 --workload "$GEN_KV" --out "$T/gen-bad.json" 2>"$T/gen-bad.err"
[ $? -ne 0 ] && grep -q 'unknown fault "client-gen-delay-ns:x".*client-gen-delay-ns:N' "$T/gen-bad.err" &&
	ok "gen-delay: a malformed delay is refused, naming the valid forms" ||
	notok "gen-delay: malformed delay accepted or unclear" "$(cat "$T/gen-bad.err")"

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
		# a 30 s drain, as above: a host that slows the worker far
		# behind the schedule delays the answers, it does not lose them
		"$OQB_BIN/oqb-client" --system "$sys" --server "$EP" --rate 14000 --duration-s 1.5 --warmup-s 0.3 \
			--drain-s 30 --workload '{"kind":"kv","put_ratio":1.0,"key_size":16,"value_size":64,"keys":1000}' \
			--out "$T/sem-$sys.json" 2>"$T/sem-$sys.err"
		stop_server
	done
	oq=$(p50 "$T/sem-oq.json"); raw=$(p50 "$T/sem-rawrpc.json"); def=$(p50 "$T/sem-deferred.json")
	# results: each client wrote its JSON with answered sets in it (how
	# many is the host's business: a load of 20 cut rawrpc below 1,000)
	jq -se 'all(.[]; .lat_ns.nilext.n > 0)' "$T/sem-oq.json" "$T/sem-rawrpc.json" "$T/sem-deferred.json" \
		>/dev/null 2>&1 && [ -n "$oq" ] && [ -n "$raw" ] && [ -n "$def" ]
}
if [ "${OQB_SANITIZE:-0}" = 1 ]; then
	skip "semantic" "latency ratios are not meaningful under ASan/UBSan (checked by make test)"
	finish
fi
# One bound is causal and judges every run, busy host or not: rawrpc
# replies after executing, so its nilext p50 is at least the 50 us
# service time (a stolen CPU can only make it slower).  oq far below the
# service time and deferred between oq and rawrpc are timing
# claims: a run that misses them is measured again, and after three runs
# a claim that still fails is skipped only when other tasks took the CPU
# in every run (host_busy: evidence from outside the processes judged).
evidence=""; calm=0; raw_low=""
for attempt in 1 2 3; do
	host_mark
	if ! semantic_run; then
		notok "semantic: run $attempt produced no results" "$(tail -n 3 "$T"/sem-*.err)
$(for f in "$T"/sem-*.json; do echo "${f##*/}: $(jq -c '{nilext_n: .lat_ns.nilext.n, unanswered, errors}' "$f" 2>&1)"; done)"
		break
	fi
	host_busy && evidence="$evidence run $attempt: $HOST_EVIDENCE;" || calm=$((calm + 1))
	echo "  semantic run $attempt, nilext p50 (ns): oq=$oq deferred=$def rawrpc=$raw (service 50000 ns)"
	lt "$raw" 50000 && raw_low="$raw_low run $attempt: $raw ns;"
	lt "$oq" 10000 && ! lt "$raw" 50000 && lt "$oq" "$def" && lt "$def" "$raw" && break
done
if [ -n "$oq" ] && [ -n "$raw" ] && [ -n "$def" ]; then
	[ -z "$raw_low" ] && ok "semantic: rawrpc nilext p50 at least the service time (every run)" ||
		notok "semantic: rawrpc nilext p50 at least the service time (every run)" "rawrpc nilext p50 < 50 us in$raw_low"
	claim() {   # claim NAME STATUS DETAIL
		if [ "$2" = 0 ]; then ok "$1"
		elif [ $calm = 0 ]; then skip_host "$1" "${evidence%;}" "$3"
		else notok "$1" "$3 ($calm of the runs on a calm host)"; fi
	}
	lt "$oq" 10000
	claim "semantic: oq nilext p50 far below the service time" $? "oq nilext p50 $oq ns is not far below 50 us"
	lt "$oq" "$def" && lt "$def" "$raw"
	claim "semantic: deferred between oq and rawrpc" $? "expected oq < deferred < rawrpc, got $oq / $def / $raw"
else
	notok "semantic: missing results"
fi
finish
