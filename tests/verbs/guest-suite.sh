#!/usr/bin/env bash
# guest-suite.sh - the verbs transport's tests, run inside the Soft-RoCE VM
# (tests/verbs/run-verbs.sh starts it through tests/vm/rxe-vm; it can also be
# run by hand on any host with an RDMA device: RXE_IP=ADDR RXE_DEV=DEV
# OQB_BIN=$PWD/bin bash tests/verbs/guest-suite.sh).
#
# Prints "ok NAME" / "not ok NAME" / "skip NAME: why" per case.  Latencies
# under TCG are ~100x a real NIC's: runs are short, loads low, and nothing
# here asserts a latency; the numbers at the end (perftest comparison) are
# printed, never checked.
source "$(dirname "$0")/../lib.sh"
: "${RXE_IP:?set RXE_IP to the address of the RDMA device (run through tests/vm/rxe-vm)}"
DEV=${RXE_DEV:-rxe0}
VT=${OQB_VTEST:-}
PORT=7480
B=$OQB_BIN

next_port() { PORT=$((PORT + 1)); }

# section NAME: the time the previous section took, printed as an info line
# (where make test's minutes go), then NAME begins
SECT=; SECT_T0=$SECONDS
section() {
	[ -n "$SECT" ] && echo "  ($SECT: $((SECONDS - SECT_T0)) s)"
	SECT=$1; SECT_T0=$SECONDS
}

# start_server NAME ARGS...: starts oqb-server (verbs), waits for its endpoint.
start_server() {
	local name=$1; shift
	next_port
	launch_server "$name" 600 "$B/oqb-server" --transport verbs --addr "$RXE_IP" --port "$PORT" "$@"
}

# stop_server: SIGTERM, and the server prints its counters; bounded wait.
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
srv_json() { sed -n '/^{/,$p' "$T/$1.srv.out"; }

# client NAME ARGS...: runs oqb-client against $EP, bounded.
# Every client waits up to 20 s for its last answers (it stops as soon as
# all are in): unanswered == 0 is a count judged on every run, and beside
# a load of 20 the default 1 s left some of deleg-on's due.  A case may
# give its own --drain-s after the others.
client() {
	local name=$1; shift
	timeout -k 5 180 "$B/oqb-client" --transport verbs --server "$EP" --drain-s 20 "$@" \
		--out "$T/$name.json" 2>"$T/$name.cli.err"
}

WL='{"kind":"kv","put_ratio":0.5,"key_size":16,"value_size":100,"keys":200}'

# ---- devices -----------------------------------------------------------
section "devices"
"$B/oqb-server" --list-devices >"$T/devices.txt" 2>&1
if grep -q "^$DEV " "$T/devices.txt" && grep -q "xrc no" "$T/devices.txt" &&
   grep -q "::ffff:$RXE_IP" "$T/devices.txt" && grep -q "max_srq_wr" "$T/devices.txt"; then
	ok "list-devices: $DEV with its GIDs and caps"
else
	notok "list-devices" "$(cat "$T/devices.txt")"
fi

# ---- connect / disconnect ---------------------------------------------
section "connect / disconnect"
if start_server conn --system oq --backend null --workers 2 --ring-slots 256; then
	client conn1 --system oq --arrival closed --outstanding 1 --duration-s 0.3 --warmup-s 0.1 \
		--workload "$WL"
	r1=$?
	client conn2 --system oq --arrival closed --outstanding 1 --duration-s 0.3 --warmup-s 0.1 \
		--workload "$WL"
	r2=$?
	stop_server
	if [ $r1 -eq 0 ] && [ $r2 -eq 0 ]; then
		jcheck "connect: a client opens one QP per worker and completes requests" "$T/conn1.json" \
			'.transport_stats[0].qps == 2 and .committed > 0 and .unanswered == 0 and .errors == 0 and
			 .transport_stats[0].rnr_retry == 7 and .transport_stats[0].min_rnr_timer == 12'
		jcheck "disconnect: the server tore both clients' QPs down" <(srv_json conn) \
			'.transport.connections == 4 and .transport.disconnects >= 2 and .transport.connections_refused == 0'
	else
		notok "connect: clients exited $r1/$r2" "$(cat "$T/conn1.cli.err" "$T/conn2.cli.err")"
	fi
else
	notok "connect: server start" "$(cat "$T/conn.srv.err")"
fi

# ---- the three systems end to end ---------------------------------------
section "the three systems end to end"
for sys in oq rawrpc deferred; do
	name=sys-$sys
	if ! start_server "$name" --system "$sys" --backend cache --memory-mb 16 --workers 2 --ring-slots 256; then
		notok "$name: server start" "$(cat "$T/$name.srv.err")"; continue
	fi
	client "$name" --system "$sys" --threads 2 --rate 400 --duration-s 1 --warmup-s 0.3 --workload "$WL"
	rc=$?
	stop_server
	if [ $rc -ne 0 ]; then notok "$name: client exit $rc" "$(cat "$T/$name.cli.err")"; continue; fi
	jcheck "$name: every request committed, none lost" "$T/$name.json" '
		.system == "'"$sys"'" and .transport == "verbs" and .unanswered == 0 and .errors == 0 and
		.lat_ns.nilext.n > 50 and .lat_ns.non_nilext.n > 50 and
		.committed == (.sent + .loaded)'
	srv_json "$name" >"$T/$name.srv.json"
	case $sys in
	oq) rule='.acks_sent_total == 0 and .responses == $c.sent_non_nilext' ;;
	rawrpc) rule='.acks_sent_total == 0 and .responses == ($c.sent + $c.loaded)' ;;
	deferred) rule='.acks_sent_total == ($c.sent_nilext + $c.loaded) and .responses == $c.sent_non_nilext' ;;
	esac
	jcheck "$name: server executed all and answered by the $sys commit rule" <(jq -n \
		--slurpfile s "$T/$name.srv.json" --slurpfile c "$T/$name.json" '
		$s[0] as $s | $c[0] as $c |
		{ executed: $s.executed, rejected: $s.rejected, voided: $s.voided,
		  acks_sent_total: ([$s.per_worker[].acks_sent] | add),
		  responses: ([$s.per_worker[].responses_sent] | add) } as $x |
		$x | (.executed == ($c.sent + $c.loaded) and .rejected == 0 and .voided == 0) and ('"$rule"')') \
		'. == true'
done

# ---- hardware-ACK semantics and in-order execution (C checks) ----------
section "hardware-ACK semantics and in-order execution (C checks)"
if [ -n "$VT" ] && [ -x "$VT" ]; then
	for mode in srq slot_ring; do
		next_port
		timeout -k 5 120 "$VT" hwack "$RXE_IP" "$PORT" "$mode" 2>"$T/hwack-$mode.err" ||
			notok "hwack $mode: exited with $?" "$(tail -5 "$T/hwack-$mode.err")"
	done
	next_port
	timeout -k 5 240 "$VT" order "$RXE_IP" "$PORT" srq 8 100 2>"$T/order.err" ||
		notok "order srq: exited with $?" "$(tail -5 "$T/order.err")"
	next_port
	timeout -k 5 240 "$VT" order "$RXE_IP" "$PORT" slot_ring 6 60 deleg 2>"$T/order-deleg.err" ||
		notok "order slot_ring deleg: exited with $?" "$(tail -5 "$T/order-deleg.err")"
	next_port
	timeout -k 5 120 "$VT" stamps "$RXE_IP" "$PORT" 2>"$T/stamps.err" ||
		notok "stamps rawrpc: exited with $?" "$(tail -5 "$T/stamps.err")"
	mkdir -p "$T/pm"
	next_port
	timeout -k 5 180 "$VT" crash "$RXE_IP" "$PORT" "$T/pm/crash" 2>"$T/crash-rec.err" ||
		notok "crash: exited with $?" "$(tail -5 "$T/crash-rec.err")"
	PORT=$((PORT + 2))   # the restarts listen on the next two ports
else
	notok "hwack/order/stamps/crash: the test program was not built (OQB_VTEST=$VT)"
fi

# ---- delegation off / on ------------------------------------------------
section "delegation off / on"
for d in off on; do
	name=deleg-$d
	flag=; [ $d = on ] && flag=--delegation
	if ! start_server "$name" --system oq --backend cache --memory-mb 16 --workers 2 --ring-slots 256; then
		notok "$name: server start" "$(cat "$T/$name.srv.err")"; continue
	fi
	client "$name" --system oq --threads 4 $flag --rate 400 --duration-s 1 --warmup-s 0.3 --workload "$WL"
	rc=$?
	stop_server
	if [ $rc -ne 0 ]; then notok "$name: client exit $rc" "$(cat "$T/$name.cli.err")"; continue; fi
	jcheck "$name: all committed" "$T/$name.json" '.unanswered == 0 and .errors == 0 and .committed == (.sent + .loaded)'
	if [ $d = on ]; then want=2; share=4; else want=8; share=1; fi
	jcheck "$name: server QPs = $want (C x $([ $d = on ] && echo St || echo "Ct x St"))" <(srv_json "$name") \
		".transport.qps_peak == $want"
	jcheck "$name: client reports the sharing" "$T/$name.json" \
		"[.transport_stats[] | .threads_sharing_qps] | all(. == $share)"
	# one signaled WR per lane's run in a chain: never more than the
	# SENDs, and every signaled WR completed (its requests delivered)
	jcheck "$name: signaled WRs <= SENDs, each one completed" "$T/$name.json" \
		'[.transport_stats[] | .qp_totals | .signaled_wrs <= .sends and .send_completions == .signaled_wrs and
		  .signaled_wrs > 0] | all'
done

# ---- verbs calls per request: batched receive reposts -------------------
section "verbs calls per request: batched receive reposts"
# One request in flight, ring of 256: the worker reposts released tickets
# 32 at a time (8 posts at start, then one per 32 arrivals), where it used
# to post one per request.
for mode in srq slot_ring; do
	name=calls-$mode
	if ! start_server "$name" --system oq --backend null --workers 1 --ring-slots 256 --recv-mode "$mode"; then
		notok "$name: server start" "$(cat "$T/$name.srv.err")"; continue
	fi
	client "$name" --system oq --arrival closed --outstanding 1 --duration-s 0.5 --warmup-s 0.1 \
		--workload '{"kind":"kv","put_ratio":1.0,"key_size":16,"value_size":0,"keys":100}'
	rc=$?
	stop_server
	if [ $rc -ne 0 ]; then notok "$name: client exit $rc" "$(cat "$T/$name.cli.err")"; continue; fi
	jcheck "$name: all committed, one signaled SEND each (one in flight)" "$T/$name.json" '
		.unanswered == 0 and .errors == 0 and .committed == (.sent + .loaded) and .committed > 64 and
		.transport_stats[0].qp_totals.signaled_wrs == .transport_stats[0].qp_totals.sends'
	jcheck "$name: receive reposts batched (post calls <= 8 + arrivals / 16)" <(srv_json "$name") '
		.transport.workers[0] | .arrivals > 64 and .post_calls <= 8 + .arrivals / 16 and
		.tickets_posted >= .arrivals + 128 and .post_errors == 0'
done

# ---- slot_ring mode through the binaries --------------------------------
section "slot_ring mode through the binaries"
if start_server ring --system deferred --backend cache --memory-mb 16 --recv-mode slot_ring --ring-slots 128; then
	client ring --system deferred --threads 2 --rate 400 --duration-s 1 --warmup-s 0.3 --workload "$WL"
	rc=$?
	stop_server
	if [ $rc -eq 0 ]; then
		jcheck "slot_ring: all committed" "$T/ring.json" '.unanswered == 0 and .errors == 0'
		jcheck "slot_ring: labelled as the MP SRQ emulation, reposts batched, ring wrapped" <(srv_json ring) '
			.transport.recv_mode == "slot_ring (MP SRQ emulation: one WQE per slot)" and
			.transport.workers[0].post_calls < .transport.workers[0].tickets_posted and
			.transport.workers[0].tickets_posted > 3 * 128'
	else
		notok "slot_ring: client exit $rc" "$(cat "$T/ring.cli.err")"
	fi
else
	notok "slot_ring: server start" "$(cat "$T/ring.srv.err")"
fi

# ---- durable: READ after SEND, rings on a libpmem mapping ----------------
section "durable: READ after SEND, rings on a libpmem mapping"
mkdir -p "$T/pm"
for mode in slot_ring srq; do
	name=durable-$mode
	if ! start_server "$name" --system oq --backend cache --memory-mb 16 --durable --pmem-path "$T/pm/$mode" \
		--recv-mode "$mode" --ring-slots 64; then
		notok "$name: server start" "$(cat "$T/$name.srv.err")"; continue
	fi
	client "$name" --system oq --durable --threads 1 --rate 300 --duration-s 1 --warmup-s 0.2 --workload "$WL"
	rc=$?
	stop_server
	if [ $rc -ne 0 ]; then notok "$name: client exit $rc" "$(cat "$T/$name.cli.err")"; continue; fi
	jcheck "$name: every nilext SEND was followed by a durable READ" "$T/$name.json" '
		.unanswered == 0 and .errors == 0 and
		.transport_stats[0].qp_totals.durable_reads == (.sent_nilext + .loaded) and
		.transport_stats[0].qp_totals.durable_reads > 0'
	jcheck "$name: ring on the pmem file, ReqToExecute = executed" <(srv_json "$name") '
		.transport.durable and .transport.pmem and
		.transport.workers[0].req_to_execute == .executed'
	# a ring file is opened again, and scanned for requests to replay
	if [ -f "$T/pm/$mode/vring-0" ] && start_server "$name-again" --system oq --durable --pmem-path "$T/pm/$mode" \
		--recv-mode "$mode" --ring-slots 64; then
		stop_server
		jcheck "$name: a ring file is reopened and scanned" <(srv_json "$name-again") \
			'.transport.workers[0].recovery.scanned >= 0 and .transport.workers[0].recovery.skipped_invalid >= 0'
	else
		notok "$name: reopen the ring file" "$(cat "$T/$name-again.srv.err" 2>/dev/null)"
	fi
done
# durable deferred: the server persists a put before its software ACK, so
# the client adds no READ after the SEND (only oq's puts commit on delivery)
name=durable-deferred
if start_server "$name" --system deferred --backend cache --memory-mb 16 --durable --pmem-path "$T/pm/deferred" \
	--recv-mode srq --ring-slots 64; then
	client "$name" --system deferred --durable --threads 1 --rate 300 --duration-s 1 --warmup-s 0.2 --workload "$WL"
	rc=$?
	stop_server
	if [ $rc -ne 0 ]; then notok "$name: client exit $rc" "$(cat "$T/$name.cli.err")"
	else
		jcheck "$name: puts committed by the server's ACK, no durable READ" "$T/$name.json" '
			.unanswered == 0 and .errors == 0 and .sent_nilext > 0 and
			.transport_stats[0].qp_totals.durable_reads == 0'
	fi
else
	notok "$name: server start" "$(cat "$T/$name.srv.err")"
fi

# ---- clear errors ----------------------------------------------------------
section "clear errors"
# expect_err NAME MAX_SECONDS PATTERN CMD...: CMD fails within the bound and
# its stderr matches PATTERN (grep -E).
expect_err() {
	local name=$1 max=$2 pat=$3; shift 3
	local t0=$SECONDS
	timeout -k 5 $((max + 30)) "$@" >"$T/err.out" 2>"$T/err.txt" </dev/null
	local rc=$? dt=$((SECONDS - t0))
	if [ $rc -eq 0 ]; then
		notok "$name: succeeded instead of failing"
	elif [ $dt -gt "$max" ]; then
		notok "$name: took $dt s (bound $max s)" "$(cat "$T/err.txt")"
	elif grep -Eq -e "$pat" "$T/err.txt"; then
		ok "$name"
		echo "  ($(grep -E -e "$pat" "$T/err.txt" | head -1 | cut -c1-220))"
	else
		notok "$name: message does not match /$pat/" "$(cat "$T/err.txt")"
	fi
}
next_port
expect_err "error: wrong device names the available ones" 30 "device 'mlx9' not found; available: $DEV" \
	"$B/oqb-server" --transport verbs --addr "$RXE_IP" --port "$PORT" --device mlx9
expect_err "error: XRC on a device without it" 30 "device $DEV has no XRC support \(IBV_DEVICE_XRC\); run without verbs.xrc" \
	"$B/oqb-server" --transport verbs --addr "$RXE_IP" --port "$PORT" --xrc
expect_err "error: recv_mode mp without the OFED experimental verbs" 30 "recv_mode mp needs the MLNX_OFED 4.x experimental verbs.*use slot_ring" \
	"$B/oqb-server" --transport verbs --addr "$RXE_IP" --port "$PORT" --recv-mode mp
expect_err "error: a GID index that is not the address's" 30 "--gid-index 0: .* is GID index 1" \
	"$B/oqb-server" --transport verbs --addr "$RXE_IP" --port "$PORT" --gid-index 0
expect_err "error: no --addr" 30 "no address to listen on" \
	"$B/oqb-server" --transport verbs --port "$PORT"
# the bound the client is given is what the message must come within
expect_err "error: unreachable address" 32 "cannot connect to verbs:198\.18\.0\.9:7471: .*(ADDR_ERROR|UNREACHABLE|no answer within 2\.0 s)" \
	"$B/oqb-client" --transport verbs --server verbs:198.18.0.9:7471 --connect-timeout-s 2 --duration-s 0.1
expect_err "error: server down (nothing listens on the port)" 30 "cannot connect to verbs:$RXE_IP:7999: RDMA_CM_EVENT_REJECTED.*is oqb-server running there" \
	"$B/oqb-client" --transport verbs --server "verbs:$RXE_IP:7999" --connect-timeout-s 10 --duration-s 0.1
if start_server mism --system oq --workers 1 --ring-slots 64; then
	expect_err "error: system mismatch" 30 "runs system 'oq' but this client was started with --system rawrpc" \
		"$B/oqb-client" --transport verbs --server "$EP" --system rawrpc --duration-s 0.1
	expect_err "error: durable client, non-durable server" 30 "was not started with --durable" \
		"$B/oqb-client" --transport verbs --server "$EP" --system oq --durable --duration-s 0.1
	expect_err "error: port already taken" 30 "cannot listen on verbs:$RXE_IP:$PORT: .*(in use|another RDMA listener)" \
		"$B/oqb-server" --transport verbs --addr "$RXE_IP" --port "$PORT"
	stop_server
fi
# The server dies under load: the client fails with a message, in bounded time.
if start_server crash --system oq --backend null --ring-slots 64 --log debug; then
	timeout -k 5 120 "$B/oqb-client" --transport verbs --server "$EP" --system oq --rate 200 --duration-s 8 \
		--warmup-s 0 --workload "$WL" --out "$T/crash.json" 2>"$T/crash.err" &
	cpid=$!
	track "$cpid"
	# kill once the client is connected and its load phase is running
	for i in $(seq 1 600); do
		grep -q "accepted" "$T/crash.srv.err" && break
		kill -0 "$cpid" 2>/dev/null || break
		sleep 0.05
	done
	sleep 1
	t0=$SECONDS
	{ kill -KILL "$SRV_PID"; wait "$SRV_PID"; } 2>/dev/null
	wait "$cpid"
	rc=$?
	dt=$((SECONDS - t0))
	# bounded by the run's own end: the client drains until then (client.c)
	if [ $rc -ne 0 ] && [ $dt -le 30 ] && grep -Eq "verbs:$RXE_IP:$PORT.*(closed the connection|failed|acknowledged none)" "$T/crash.err"; then
		ok "error: a server killed under load fails the client within $dt s"
		echo "  ($(grep -E "closed the connection|failed|acknowledged none" "$T/crash.err" | head -1 | cut -c1-220))"
	else
		notok "error: killed server: client rc $rc after $dt s" "$(cat "$T/crash.err")"
	fi
fi

# ---- the verbs canary (oqb-vfloor) ---------------------------------------
section "the verbs canary (oqb-vfloor)"
# A raw RC SEND ping-pong: an echoer serves pingers one after another; a
# result has a round-trip time and says which device it went through.
next_port
if launch_server vfloor 600 "$B/oqb-vfloor" --serve --addr "$RXE_IP" --port "$PORT"; then
	VEP=$EP
	ok1=1
	for k in 1 2; do
		if ! timeout -k 5 60 "$B/oqb-vfloor" --ping "$VEP" --rounds 300 --warmup 20 --cpu 0 >"$T/vping$k.json" \
			2>"$T/vping$k.err"; then
			notok "canary: ping $k of the echoer" "$(cat "$T/vping$k.err")"
			ok1=0
		fi
	done
	if [ $ok1 = 1 ]; then
		jcheck "canary: a ping reports its round trips through $DEV" "$T/vping1.json" \
			'.schema == "oqbench.vfloor/1" and .rounds == 300 and .rtt_ns.min > 0 and .rtt_ns.min <= .rtt_ns.p50 and
			 .rtt_ns.p50 <= .rtt_ns.p99 and .rtt_ns.p99 <= .rtt_ns.max and .device == "'"$DEV"'" and .size == 64 and
			 .cpu == 0 and .error == null'
		# --max-ms bounds the rounds, and says how many ran
		timeout -k 5 60 "$B/oqb-vfloor" --ping "$VEP" --rounds 100000000 --max-ms 50 >"$T/vping3.json" 2>"$T/vping3.err"
		jcheck "canary: --max-ms stops the rounds early and says how many ran" "$T/vping3.json" \
			'.rounds > 0 and .rounds < 100000000 and .took_ms < 1000'
	fi
	# an oqb-client pointed at the echoer is told what it reached
	expect_err "canary: oqb-client at a canary echoer is told so" 30 "this is a canary echoer \(oqb-vfloor --serve\), not an oqb-server" \
		"$B/oqb-client" --transport verbs --server "$VEP" --system oq --duration-s 0.1
	kill -TERM "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	jcheck "canary: the echoer served the pingers one after another and counts them" <(srv_json vfloor) \
		'.pingers == 3 and .echoed >= 2 * 320 and .refused >= 1 and .dropped == 0 and (.error == null)'
else
	notok "canary: echoer start" "$(cat "$T/vfloor.srv.err")"
fi
if start_server vfmism --system oq --workers 1 --ring-slots 64; then
	expect_err "canary: a ping of an oqb-server is refused with the reason" 30 \
		"refused the connection: this is an oqb-server, not a canary echoer" \
		"$B/oqb-vfloor" --ping "$EP" --rounds 10 --connect-timeout-s 10
	stop_server
fi
expect_err "canary: nothing listens there" 30 "canary: cannot connect to verbs:$RXE_IP:7998: .*is oqb-vfloor --serve running there" \
	"$B/oqb-vfloor" --ping "verbs:$RXE_IP:7998" --connect-timeout-s 10
expect_err "canary: --serve without --addr" 10 "--serve needs --addr" "$B/oqb-vfloor" --serve

# ---- the driver with transport "verbs" ---------------------------------
section "the driver with transport verbs"
if [ -x "$B/oqb" ]; then
	next_port
	cat >"$T/verbs-run.json" <<EOF
{
	"name": "verbs-tiny",
	"transport": "verbs",
	"systems": ["oq", "rawrpc"],
	"verbs": { "addr": "$RXE_IP", "port": $PORT, "recv_mode": "slot_ring" },
	"server": { "workers": 2, "backend": { "kind": "cache", "memory_mb": 16 }, "ring_slots": 256 },
	"clients": { "processes": 1, "threads": 2, "delegation": true },
	"workload": { "kind": "kv", "put_ratio": 0.8, "key_size": 16, "value_size": 64, "keys": 200 },
	"arrival": { "kind": "poisson", "loads_ops": [200] },
	"warmup_s": 0.2,
	"duration_s": 0.5,
	"seed": 7
}
EOF
	if timeout -k 5 240 "$B/oqb" run "$T/verbs-run.json" --out "$T/verbs-run" --quiet >"$T/oqbrun.out" 2>&1; then
		jcheck "oqb run: a sweep over transport verbs (slot_ring, delegation)" "$T/verbs-run/run.json" \
			'.points | length == 2'
		# the canary beside every trial is the verbs ping-pong
		jcheck "oqb run: every verbs trial has a verbs canary (oqb-vfloor), its processes marked" \
			"$T/verbs-run/run.json" '(.canary_method | startswith("verbs: raw RC SEND ping-pong")) and
			all(.points[]; (.canary_ns | type) == "number" and .canary_ns > 0 and .canary_note == null and
			    all(.trials[]; .canary_ns > 0)) and
			([.hosts.processes[] | select(.purpose == "canary")] | length) as $n | $n >= 4 and $n % 2 == 0'
		for d in "$T"/verbs-run/p*/; do
			[ -s "$d/canary-ping.json" ] || { notok "oqb run: canary-ping.json in $d"; continue; }
		done
	else
		notok "oqb run with transport verbs" "$(tail -20 "$T/oqbrun.out")"
	fi
else
	skip "oqb run with transport verbs" "bin/oqb is not built"
fi

# ---- perftest-compare against a base build --------------------------------
section "perftest-compare against a base build"
# What is checked is the mode's plumbing, not a latency: the same build as
# its own base gives a ratio per round and a summary that counts them.
expect_err "perftest-compare: an OQB_BIN_BASE with no build in it is named" 10 \
	"OQB_BIN_BASE=$T/nobuild has no oqb-server and oqb-client" \
	env OQB_BIN="$B" OQB_BIN_BASE="$T/nobuild" bash bench/perftest-compare.sh "$RXE_IP"
# The two rounds against a base build take 35-40 s: make test-long
# runs them (OQB_VERBS_BENCH=1, beside the benchmark itself).
if [ "${OQB_VERBS_BENCH:-1}" != 1 ]; then
	echo "  (perftest-compare's rounds against a base build run in make test-long: OQB_VERBS_BENCH=1)"
elif command -v ib_send_lat >/dev/null && command -v jq >/dev/null; then
	timeout -k 5 300 env OQB_BIN="$B" OQB_BIN_BASE="$B" ROUNDS=2 DURATION_S=1 ITERS=200 PORT=18900 \
		bash bench/perftest-compare.sh "$RXE_IP" >"$T/ptc.out" 2>&1
	if [ "$(grep -Ec '^  (rawrpc|oq) p50, this build / base build +[0-9]+\.[0-9]{3}$' "$T/ptc.out")" = 4 ] &&
	   grep -Eq '^  rawrpc p50, this build / base build +[0-9.]+ +\([0-9.]+-[0-9.]+ over 2 rounds; below 1 in [0-2]\)$' "$T/ptc.out"; then
		ok "perftest-compare: OQB_BIN_BASE gives this build / base build per round and over the rounds"
	else
		notok "perftest-compare: OQB_BIN_BASE gives this build / base build per round and over the rounds" \
			"$(tail -30 "$T/ptc.out")"
	fi
	# each ratio's steps back to back, every second round backwards
	steps=$(awk '/^round / { r = $2 } /t_typical|echo p50|commit p50/ && !/base build/ {
		sub(/^  /, ""); sub(/ t_typical.*| echo p50.*| nilext.*/, ""); printf "%s%s:%s", sep, r, $0; sep = "," }' "$T/ptc.out")
	if [ "$steps" = "1:ib_send_lat,1:oqbench rawrpc,1:oqbench oq,1:ib_write_lat,2:ib_write_lat,2:oqbench oq,2:oqbench rawrpc,2:ib_send_lat" ]; then
		ok "perftest-compare: each ratio's steps run back to back, and round 2 runs backwards"
	else
		notok "perftest-compare: each ratio's steps run back to back, and round 2 runs backwards" "steps: $steps"
	fi
else
	skip "perftest-compare with OQB_BIN_BASE" "perftest or jq is not installed"
fi

# ---- perftest comparison (a benchmark: printed, never checked) -----------
section "perftest comparison (a benchmark: printed, never checked)"
# OQB_VERBS_BENCH: run-verbs.sh passes 0 in make test, 1 in make test-long.
if [ -x bench/perftest-compare.sh ] && [ "${OQB_VERBS_BENCH:-1}" = 1 ]; then
	echo "== perftest comparison (benchmark, not a test)"
	timeout -k 5 420 bash bench/perftest-compare.sh 2>&1 | sed -u 's/^/  /'
	[ "${PIPESTATUS[0]}" = 124 ] && echo "  perftest comparison: stopped after 420 s (a step hung; see above)"
fi
section ""
finish
