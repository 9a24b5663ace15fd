#!/usr/bin/env bash
# guest-engines.sh - the real storage engines over verbs, inside the
# Soft-RoCE VM (tests/verbs/run-guests.sh starts it through tests/vm/rxe-vm;
# by hand on an RDMA host: RXE_IP=ADDR OQB_BIN=$PWD/bin OQB_UNIT=$PWD/build/default/tests
# bash tests/verbs/guest-engines.sh).
#
# What it shows, one "ok" / "not ok" / "skip" line per case:
#  - configs/memcached-tiny.json, rocksdb-tiny.json and plugin-tiny.json
#    (Debian's memcached, Debian's librocksdb, the example plugin) run with
#    transport verbs through `oqb run`: oq, rawrpc and deferred each end
#    with status ok, a recorded history that `oqb check` finds
#    linearizable and that holds every committed request (the keys loaded
#    before the window and at least MIN_SENT of it), none unanswered or
#    failed, the server on verbs, and the backend's identity in run.json (memcached's
#    version and pid, RocksDB's build, the plugin's name and ABI, and each
#    plugin instance opened and served on its worker's own thread);
#  - durable oq on rocksdb over verbs (rings in server.recv_pmem_path,
#    a READ after every nilext SEND), recorded and checked the same way.
# An engine that is not installed is a "skip" (not ok under CI=true, where
# make deps installs it), never an "ok" without having run.
#
# The load is low (TCG makes a verbs request ~100x slower than a NIC's),
# idle threads nap (two vCPUs hold the workers, the client, the driver and
# the engine's own threads), clients wait up to 20 s for late answers
# before they count one unanswered (on a busy 2-core host the guest's
# answers took up to 1.4 s, and the default 1 s counted 155 of 767
# unanswered), a process has 90 s to say it is ready (a memcached server
# once missed the default 30 s in a guest starved by its host), and the
# canary is off (guest-suite.sh tests the verbs
# canary); nothing here asserts a latency.
source "$(dirname "$0")/../lib.sh"
: "${RXE_IP:?set RXE_IP to the address of the RDMA device (run through tests/vm/rxe-vm)}"
cd "${OQB_ROOT:-$(dirname "$0")/../..}" || exit 1
B=$OQB_BIN
PORT=${ENGINES_VERBS_PORT:-7800}
LOAD=${ENGINES_VERBS_LOAD:-400}      # ops/s offered, one client thread
MIN_SENT=50                          # requests of the measured window, at least

# missing NAME WHY: an engine this host lacks; "not ok" under CI
missing() {
	if [ "${CI:-}" = true ]; then notok "$1" "$2"; else skip "$1" "$2"; fi
}

# run_verbs NAME CONFIG [oqb run args]: the config over verbs; sets RC.
run_verbs() {
	local name=$1 cfg=$2 t0=$SECONDS
	shift 2
	PORT=$((PORT + 1))
	timeout -k 5 300 "$B/oqb" run "$cfg" --out "$T/$name" --quiet --set transport=verbs \
		--set "verbs.addr=\"$RXE_IP\"" --set "verbs.port=$PORT" --set canary=false \
		--set "arrival.loads_ops=[$LOAD]" --set 'idle={"nap_us": 100}' \
		--set timeouts.drain_s=20 --set timeouts.grace_s=60 --set timeouts.hello_s=90 \
		"$@" >"$T/$name.out" 2>&1
	RC=$?
	echo "  $name: oqb run exit $RC in $((SECONDS - t0)) s" >&2
}

# points_ok NAME LABEL SYSTEMS BACKEND-JQ: the run's status and every
# point's history, counts and backend identity (BACKEND-JQ on each of the
# point's per-worker backend objects).
points_ok() {
	local name=$1 label=$2 systems=$3 bejq=$4 run=$T/$1/run.json sys
	if [ "$RC" -ne 0 ] || [ ! -f "$run" ]; then
		notok "$label over verbs: oqb run" "exit $RC: $(tail -n 8 "$T/$name.out")"
		return
	fi
	jcheck "$label over verbs: run status ok, transport verbs, systems $systems" "$run" \
		".status == \"ok\" and .transport.name == \"verbs\" and ([.points[].system] | join(\",\")) == \"$systems\""
	for sys in ${systems//,/ }; do
		jcheck "$label over verbs, $sys: history linearizable, committed, nothing unanswered" "$run" "
			[.points[] | select(.system == \"$sys\")][0] |
			.check.verdict == \"ok\" and .check.ops == .committed and .sent >= $MIN_SENT and
			.committed > 0 and .unanswered == 0 and .errors == 0 and .server.transport.connections >= 1"
		jcheck "$label over verbs, $sys: the backend's identity in run.json" "$run" "
			[.points[] | select(.system == \"$sys\")][0].server |
			(.per_worker | length) > 0 and all(.per_worker[]; .backend | $bejq)"
	done
	echo "  $label: $(jq -c '{status, transport: .transport.name, points: [.points[] | {system, verdict: .check.verdict,
		ops: .check.ops, sent, committed, unanswered, errors, unsent, achieved_ops: (.achieved_ops | floor)}]}' \
		"$run" 2>/dev/null)" >&2
}

# ---- memcached ----------------------------------------------------------------
if command -v memcached >/dev/null 2>&1; then
	run_verbs memcached configs/memcached-tiny.json
	points_ok memcached memcached oq,rawrpc,deferred '
		.backend == "memcached" and .failed == {} and .keys_refused == 0 and .ops.set > 0 and .ops.get > 0 and
		(if .memcached then (.memcached.version | test("^1\\.")) and .memcached.pid > 0 else true end)'
	jcheck "memcached over verbs: worker 0 records memcached's version and pid" "$T/memcached/run.json" \
		'all(.points[]; .server.per_worker[0].backend.memcached | (.version | test("^1\\.")) and .pid > 0)'
else
	missing "memcached over verbs" "memcached is not installed (make deps, or apt-get install memcached)"
fi

# ---- rocksdb --------------------------------------------------------------------
"$B/oqb-server" --system oq --backend rocksdb --cpus none --rocksdb-sync 1 --rocksdb-wal 0 \
	>"$T/rdb-probe.out" 2>"$T/rdb-probe.err"
if grep -q "this build has no RocksDB" "$T/rdb-probe.err"; then
	missing "rocksdb over verbs" "this build has no RocksDB (make deps installs librocksdb-dev; rebuild)"
else
	RDB_ID='.backend == "rocksdb" and .errors == 0 and .ops.set > 0 and .ops.get > 0 and
		(.rocksdb.library.header_version | test("^[0-9]+\\.[0-9]+\\.[0-9]+$")) and
		(.rocksdb.library.library | test("^librocksdb\\.so")) and .rocksdb.options.wal == true'
	run_verbs rocksdb configs/rocksdb-tiny.json
	points_ok rocksdb rocksdb oq,rawrpc,deferred "$RDB_ID"

	# durable oq: the rings in a directory of the server host, a READ
	# after every nilext SEND (the READ's completion is the commit)
	mkdir -p "$T/pmem"
	run_verbs rocksdb-durable configs/rocksdb-tiny.json --set 'systems=["oq"]' --set 'durable=["oq"]' \
		--set "server.recv_pmem_path=\"$T/pmem\""
	points_ok rocksdb-durable "durable rocksdb" oq "$RDB_ID"
	jcheck "durable rocksdb over verbs: the point ran durable, rings on the pmem mapping, all executed" \
		"$T/rocksdb-durable/run.json" '.points[0] | .durable == true and .server.transport.durable == true and
		 .server.transport.pmem == true and
		 ([.server.transport.workers[].req_to_execute] | add) == .server.executed'
	if "$B/oqb" check --quiet "$T/rocksdb-durable" >"$T/durable-check.out" 2>&1; then
		ok "durable rocksdb over verbs: oqb check on the run directory finds no violation"
	else
		notok "durable rocksdb over verbs: oqb check on the run directory" "$(tail -n 5 "$T/durable-check.out")"
	fi
fi

# ---- the example plugin -----------------------------------------------------------
PLUGIN=$(cd "${OQB_UNIT:-$B/../build/default/tests}/../plugins" 2>/dev/null && pwd)/example-kv.so
if [ -f "$PLUGIN" ]; then
	run_verbs plugin configs/plugin-tiny.json --set "server.backend.path=\"$PLUGIN\""
	# one instance per worker, each opened and served on its worker's thread
	points_ok plugin "example plugin" oq,rawrpc,deferred '
		.backend == "plugin" and .plugin == "example-kv" and .abi == 1 and .plugin_faults == 0 and
		.status.error == 0 and .engine.calls_off_open_thread == 0 and .engine.open_tid > 0'
	jcheck "example plugin over verbs: each instance opened on its own worker's thread" "$T/plugin/run.json" \
		'all(.points[]; .server.per_worker | length == 2 and all(.[]; .backend.engine.open_tid == .tid) and
		 (map(.tid) | unique | length) == 2)'
else
	notok "example plugin over verbs" "no $PLUGIN: make builds it from plugins/example-kv"
fi
echo "  guest: the cases took $SECONDS s (the guest was up $(cut -d' ' -f1 /proc/uptime) s)" >&2
# OQB_KEEP_ENGINES=DIR keeps every run directory for a post-mortem (a
# directory the host sees: inside the checkout)
[ -n "${OQB_KEEP_ENGINES:-}" ] && mkdir -p "$OQB_KEEP_ENGINES" && cp -r "$T"/. "$OQB_KEEP_ENGINES"/
finish
