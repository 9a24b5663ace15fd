#!/usr/bin/env bash
# guest-erpc.sh - the eRPC adapter end to end, inside the Soft-RoCE VM
# (tests/erpc/run-erpc.sh starts it through tests/vm/rxe-vm; by hand on a
# host with an RDMA device: RXE_IP=ADDR OQB_BIN=DIR bash tests/erpc/guest-erpc.sh).
#
# Covers: the clear errors (no hugepages; too few for a worker's Rpc, which
# must fail the server before "ready" and fail `oqb run` with the cause, not
# hang it; UDP port in use; session refused),
# echo on the null backend, a set/get workload whose history `oqb check`
# finds linearizable (read-your-writes included), and `oqb run` with all
# four systems.  Then, unless OQB_ERPC_BENCH=0, the side-by-side benchmark
# (tests/erpc/bench-erpc.sh), printed, never checked.
source "$(dirname "$0")/../lib.sh"
: "${RXE_IP:?set RXE_IP to the address of the RDMA device (run through tests/vm/rxe-vm)}"
B=$OQB_BIN
PORT=31850

# expect_err NAME PATTERN CMD...: CMD fails, within 60 s, saying PATTERN.
expect_err() {
	local name=$1 pat=$2 out rc
	shift 2
	out=$(timeout -k 5 60 "$@" 2>&1 </dev/null)
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -Eq "$pat" <<<"$out"; then ok "$name"
	else notok "$name" "rc=$rc: $out"; fi
}

stop_server() {
	kill -TERM "$SRV_PID" 2>/dev/null
	local i
	for i in $(seq 1 300); do
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
}

start_server() {   # start_server NAME ARGS...
	local name=$1; shift
	launch_server "$name" 2400 "$B/oqb-server" --system erpc --transport erpc --addr "$RXE_IP" --port "$PORT" "$@"
}

# small_config FILE SYSTEMS: this suite's oqb run config, on $PORT.
small_config() {
	cat >"$1" <<EOF
{
	"name": "erpc-suite",
	"transport": "verbs",
	"systems": $2,
	"verbs": { "addr": "$RXE_IP", "port": $PORT },
	"server": { "workers": 2, "backend": { "kind": "cache", "memory_mb": 16 }, "ring_slots": 256 },
	"clients": { "processes": 1, "threads": 2 },
	"workload": { "kind": "kv", "put_ratio": 0.8, "key_size": 16, "value_size": 64, "keys": 200 },
	"arrival": { "kind": "poisson", "loads_ops": [200] },
	"warmup_s": 0.3,
	"duration_s": 0.6,
	"seed": 7,
	"timeouts": { "hello_s": 180 }
}
EOF
}

# ---- no hugepages -------------------------------------------------------
echo 0 >/proc/sys/vm/nr_hugepages
expect_err "error: no hugepages" "hugepages.*nr_hugepages" \
	"$B/oqb-server" --system erpc --transport erpc --addr "$RXE_IP" --port "$PORT"

# ---- too few hugepages: the preflight passes, a worker's Rpc cannot be made
# (its 4.25 MB receive ring needs 3 pages).  The server must not say ready
# (the echo case below, with 512 pages, is the control that it does).
echo 2 >/proc/sys/vm/nr_hugepages
out=$(timeout -k 5 120 "$B/oqb-server" --system erpc --transport erpc --addr "$RXE_IP" --port "$PORT" \
	--workers 2 2>&1 </dev/null)
rc=$?
if [ $rc -eq 1 ] && [[ $out != *"ready:"* ]] &&
   grep -Eq "worker [01] cannot serve: .*huge ?pages" <<<"$out"; then
	ok "error: a worker without its eRPC Rpc fails the server before ready"
else
	notok "error: a worker without its eRPC Rpc fails the server before ready" "rc=$rc: $out"
fi
small_config "$T/erpc-only.json" '["erpc"]'
timeout -k 5 300 "$B/oqb" run "$T/erpc-only.json" --out "$T/erpc-only" --quiet >"$T/erpc-only.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -Eq "cannot serve: .*huge ?pages" "$T/erpc-only.out"; then
	ok "error: oqb run fails, naming the worker's cause (too few hugepages)"
else
	notok "error: oqb run with a worker that cannot serve" "rc=$rc: $(tail -8 "$T/erpc-only.out")"
fi
echo 512 >/proc/sys/vm/nr_hugepages
if [ "$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)" -lt 64 ]; then
	notok "hugepages: cannot reserve 512 x 2 MB in the guest" "$(grep Huge /proc/meminfo)"
	finish
fi

WL='{"kind":"kv","put_ratio":0.5,"key_size":16,"value_size":64,"keys":100}'

# ---- echo, and the errors that need a running server ---------------------
if start_server echo --backend null --workers 2 --ring-slots 256; then
	expect_err "error: UDP session port in use" "port UDP $PORT is in use" \
		"$B/oqb-server" --system erpc --transport erpc --addr "$RXE_IP" --port "$PORT"
	expect_err "error: session refused (no such worker Rpc)" "refused" \
		"$B/oqb-client" --system erpc --transport erpc --server "${EP%:*}:4" --threads 1 \
		--duration-s 0.2 --warmup-s 0 --workload "$WL"
	timeout -k 5 180 "$B/oqb-client" --system erpc --transport erpc --server "$EP" --threads 2 \
		--arrival closed --outstanding 1 --duration-s 1 --warmup-s 0.3 --workload "$WL" \
		--out "$T/echo.json" 2>"$T/echo.err"
	rc=$?
	stop_server
	if [ $rc -eq 0 ]; then
		jcheck "echo: requests to both workers answered, none lost" "$T/echo.json" \
			'.system == "erpc" and .transport == "erpc" and .committed > 20 and .unanswered == 0 and
			 .errors == 0 and .transport_stats[0].bad_responses == 0'
		sed -n '/^{/,$p' "$T/echo.srv.out" >"$T/echo.srv.json"
		jcheck "echo: the server executed each request once and answered each" "$T/echo.srv.json" \
			'.executed > 20 and .rejected == 0 and ([.per_worker[].responses_sent] | add) == .executed and
			 ([.transport.per_worker[].empty_answers] | add) == 0 and .transport.erpc_build.transport == "infiniband"'
	else
		notok "echo: client exit $rc" "$(cat "$T/echo.err")"
	fi
else
	notok "echo: server start" "$(cat "$T/echo.srv.err")"
fi

# ---- set/get, history checked (linearizable, so read-your-writes) -------
PORT=$((PORT + 1))
if start_server kv --backend cache --memory-mb 16 --workers 2 --ring-slots 256; then
	mkdir -p "$T/kv"
	timeout -k 5 180 "$B/oqb-client" --system erpc --transport erpc --server "$EP" --threads 2 \
		--arrival closed --outstanding 1 --duration-s 1 --warmup-s 0 --seed 3 \
		--workload '{"kind":"kv","put_ratio":0.5,"key_size":16,"value_size":8,"keys":8}' \
		--history "$T/kv/history" --out "$T/kv/client.json" 2>"$T/kv.err"
	rc=$?
	stop_server
	if [ $rc -eq 0 ] && "$B/oqb" check --quiet --time-budget-s 20 "$T/kv" >/dev/null 2>"$T/kv.check.err"; then
		jcheck "set/get: history checked, every read saw the latest write" "$T/kv/check.json" \
			'.verdict == "ok" and .ops > 20'
	else
		notok "set/get: client exit $rc / check" "$(cat "$T/kv.err" "$T/kv.check.err" 2>/dev/null | tail -5)"
	fi
else
	notok "set/get: server start" "$(cat "$T/kv.srv.err")"
fi

# ---- oqb run: the four systems in one config ----------------------------
PORT=$((PORT + 1))
small_config "$T/four.json" '["oq", "rawrpc", "deferred", "erpc"]'
if timeout -k 5 400 "$B/oqb" run "$T/four.json" --out "$T/four" --quiet >"$T/four.out" 2>&1; then
	jcheck "oqb run: oq, rawrpc, deferred and erpc in one sweep" "$T/four/run.json" \
		'(.points | length) == 4 and ([.points[].system] | sort) == ["deferred","erpc","oq","rawrpc"] and
		 .transport.erpc_build.transport == "infiniband" and .transport.erpc_build.commit != "unknown"'
	if timeout -k 5 120 "$B/oqb" plot "$T/four" >"$T/plot.out" 2>&1; then ok "oqb plot: the four-system run plots"
	else notok "oqb plot of the four-system run" "$(tail -5 "$T/plot.out")"; fi
else
	notok "oqb run with the four systems" "$(tail -20 "$T/four.out")"
fi

# ---- the benchmark (printed, never checked) ------------------------------
if [ "${OQB_ERPC_BENCH:-1}" = 1 ]; then
	echo "== eRPC side by side (benchmark, not a test)"
	# Unpinned: under TCG a pinned spinning thread starves the rxe kernel
	# work queued on its vCPU, which costs milliseconds per response.
	CPUS=${OQB_ERPC_BENCH_CPUS:-none} timeout -k 5 600 bash tests/erpc/bench-erpc.sh "$RXE_IP" 2>&1 |
		sed -u 's/^/  /'
fi
finish
