#!/usr/bin/env bash
# guest-scale.sh - the paper's testbed shape, in one Soft-RoCE guest
# (tests/verbs/run-scale.sh boots it; docs/scale.md has the figures).
#
# One rxe device, logical hosts: the server on $RXE_IP, and OQB_SCALE_HOSTS
# client hosts, each a further address on the netdev rxe is bound to
# (198.18.0.11, .12, ...).  A private sshd answers on every address, and
# `oqb run` reaches each host through its ssh launcher, so run.json's
# hosts.processes says which logical host ran which process (launched_on).
# rxe on Linux 6.1 cannot be split by network namespace (scale-on-rxe
# notes), so the hosts share the guest's CPUs and kernel: this shows that
# every connection is made, every request is committed or accounted for
# and the run ends cleanly, not what latency a cluster would see.
#
# With far more polling threads than vCPUs every trial is disturbed (the
# interference check warns), so trials are not rerun (rerun_disturbed 0):
# the checks stay in run.json, and nothing here reads a latency.
#
# OQB_SCALE_PHASES names the runs, each an `oqb run` of a paper config
# with only its hosts, shape and rates set here:
#   fig6     configs/fig6-echo.json (Fig 6's microbenchmark: null backend,
#            closed loop, one request in flight per client thread) at
#            OQB_SCALE_HOSTS hosts, delegation swept off and on (make test)
#   growth   the same, client hosts swept 1, 2, 4 .. OQB_SCALE_HOSTS without
#            delegation, then all hosts with it (the growth table)
#   fig78    configs/fig7-8-cluster12-verbs.json as it is (16 workers,
#            delegation, oq, rawrpc and deferred, Poisson arrivals) at
#            OQB_SCALE_LOAD_OPS, histories recorded and checked; only the
#            cache's memory is smaller (OQB_SCALE_CACHE_MB per worker)
#   durable  durable oq (persistent receive rings, READ-after-SEND
#            commits) at the Fig 6 shape with delegation, on a put-heavy
#            kv workload over the cache backend (null keeps no data, so its
#            gets cannot be checked), histories recorded and checked, and
#            `oqb check` run again on the run directory
# Server QPs: hosts x threads x workers without delegation, hosts x
# workers with it; each point's peak (server.transport.qps_peak) must
# match.
#
# Prints "ok NAME" / "not ok NAME", and the measured figures as "# ..."
# lines (connect times, memory, the driver's time per point).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/two-vm-sshd.sh"   # sshd_write_config
: "${RXE_IP:?run through tests/vm/rxe-vm (tests/verbs/run-scale.sh)}"
: "${RXE_NETDEV:?run through tests/vm/rxe-vm}"
NH=${OQB_SCALE_HOSTS:-4} TH=${OQB_SCALE_THREADS:-16} W=${OQB_SCALE_WORKERS:-16}
DUR=${OQB_SCALE_DURATION_S:-1}
PHASES=${OQB_SCALE_PHASES:-fig6}
LOAD78=${OQB_SCALE_LOAD_OPS:-2000}
# ~NH x TH + W polling threads on the guest's 2 vCPUs: they nap when idle
# (lib/idle.h), or they starve each other and the connection manager
IDLE=${OQB_SCALE_IDLE:-'{"nap_us":500,"spin_us":200}'}
SSH_PORT=2222
SERVER=$RXE_IP
B=$OQB_BIN
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

mem() { awk '/MemAvailable|VmallocUsed/ { printf "%s %d MiB ", $1, $2 / 1024 }' /proc/meminfo; }
echo "# scale: $NH client hosts x $TH threads, $W workers; runs: $PHASES; idle $IDLE; guest $(nproc) CPUs, $(mem)"

# ---- logical hosts: one address each on the rxe netdev ------------------
hosts=()
for i in $(seq 1 "$NH"); do
	a=198.18.0.$((10 + i))
	ip addr add "$a/24" dev "$RXE_NETDEV" 2>"$T/ip.err" || { notok "scale: address $a on $RXE_NETDEV" "$(cat "$T/ip.err")"; finish; }
	hosts+=("$a")
done
ok "scale: $NH client host addresses on $RXE_NETDEV"

# ---- sshd on every address, keys made here --------------------------------
D=$T/sshd
mkdir -p "$D" /run/sshd && chmod 0700 "$D"
sshd_clean_home || { notok "scale: an empty home for root in the guest"; finish; }
ssh-keygen -q -t ed25519 -N '' -f "$D/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$D/id" || {
	notok "scale: ssh keys"; finish; }
cp "$D/id.pub" "$D/authorized_keys"
sshd_write_config "$D" "$SSH_PORT" "$SERVER" "${hosts[@]}" >"$D/sshd_config"
for a in "$SERVER" "${hosts[@]}"; do
	echo "[$a]:$SSH_PORT $(cut -d' ' -f1,2 "$D/host_key.pub")"
done >"$D/known_hosts"
/usr/sbin/sshd -D -e -f "$D/sshd_config" 2>"$D/sshd.log" &
SSHD_PID=$!
track "$SSHD_PID"
up=0
for _ in $(seq 1 300); do
	(exec 3<>"/dev/tcp/$SERVER/$SSH_PORT") 2>/dev/null && { up=1; break; }
	kill -0 "$SSHD_PID" 2>/dev/null || break
	sleep 0.1
done
[ $up = 1 ] || { notok "scale: sshd" "$(tail -5 "$D/sshd.log")"; finish; }
ok "scale: sshd answers on every logical host"

hl=$(printf '"%s",' "${hosts[@]}"); hl="[${hl%,}]"
# shared_fs: the logical hosts share the guest's file system, so the
# clients' histories land in the results directory as on a lab's NFS
HOSTS_JSON="{ \"server\": \"$SERVER\", \"clients\": $hl, \"launcher\": \"ssh\", \"bin_dir\": \"$B\", \"ctl_addr\": \"$SERVER\", \"shared_fs\": true,
  \"ssh\": { \"user\": \"root\", \"port\": $SSH_PORT, \"identity\": \"$D/id\", \"known_hosts\": \"$D/known_hosts\",
	   \"options\": [\"ConnectTimeout=30\"] } }"

# ---- one run --------------------------------------------------------------
# The guest's kernel memory (vmalloc: the QPs' rings) and free memory,
# sampled every second while a run goes: its peak and its low.
mem_sampler() {
	while :; do
		awk '/VmallocUsed/ { v = $2 } /MemAvailable/ { a = $2 } END { print v, a }' /proc/meminfo
		sleep 1
	done >"$1"
}

# scale_run NAME CONFIG DELEGATION SET...: `oqb run CONFIG` over the
# logical hosts with the SETs; DELEGATION is the config's clients.delegation
# unless a point sweeps it.  Leaves $T/NAME/run.json; 1 when the run failed.
scale_run() {
	local name=$1 cfg=$2 deleg=$3 t0=$SECONDS rc took R sp
	shift 3
	R=$T/$name/run.json
	mem_sampler "$T/$name.mem" &
	sp=$!
	track "$sp"
	timeout -k 10 "${OQB_SCALE_RUN_S:-900}" "$B/oqb" run "$cfg" --out "$T/$name" \
		--set transport='"verbs"' --set "verbs.addr=\"$SERVER\"" --set verbs.port=7700 \
		--set "hosts=$HOSTS_JSON" --set "idle=$IDLE" \
		--set 'timeouts={"hello_s":300,"grace_s":120,"stop_s":120,"connect_s":300,"drain_s":60}' \
		--set duration_s="$DUR" --set warmup_s=0.5 --set canary=false --set rerun_disturbed=0 "$@" 2>&1 |
		while IFS= read -r l; do echo "$((SECONDS - t0)) s: $l"; done >"$T/$name.out"
	rc=${PIPESTATUS[0]}
	took=$((SECONDS - t0))
	kill "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	if [ $rc -ne 0 ] || [ ! -s "$R" ]; then
		notok "scale $name: oqb run (exit $rc after $took s)" "$(tail -25 "$T/$name.out")"
		return 1
	fi
	ok "scale $name: oqb run finished in $took s"
	scale_checks "$name" "$R" "$deleg"
	scale_figures "$name" "$R" "$took"
}

# scale_checks NAME RUN.JSON DELEGATION: what every run must show.
scale_checks() {
	local name=$1 R=$2 deleg=$3
	jcheck "scale $name: status ok" "$R" '.status == "ok" and (.points | length) > 0'
	jcheck "scale $name: every point's server held hosts x threads x workers QPs (hosts x workers with delegation)" "$R" "
		all(.points[]; (if .sweep.key == \"clients.delegation\" then .sweep.value else $deleg end) as \$d |
			(.clients | length) as \$h | .clients[0].threads as \$t | .server.workers as \$w |
			.server.transport.qps_peak == (if \$d then \$h * \$w else \$h * \$t * \$w end))"
	jcheck "scale $name: every request committed or accounted for: none unanswered, no errors, none rejected" "$R" '
		all(.points[]; .committed > 0 and .unanswered == 0 and .errors == 0 and .server.rejected == 0 and
			.server.executed >= .committed)'
	jcheck "scale $name: each client ran on its own logical host, the server on its own" "$R" '
		.hosts.processes as $p | all(.points[]; .index as $i | (.clients | length) as $h |
			([$p[] | select(.point == $i and .role == "client") | .launched_on] | unique | length) == $h) and
		([$p[] | select(.role == "server") | .launched_on] | unique) == ["'"$SERVER"'"]'
	# lib/proclimits.c's formulas against the measurement: what each
	# process pinned (VmPin) and its descriptors within what it computed
	# (each excess is named: process, quantity, measured and computed)
	local over
	over=$(jq -r '.points[] | .index as $i |
		(if .server.usage.pinned_kb * 1024 > .server.needs.locked_bytes then "point \($i) server: pinned \(.server.usage.pinned_kb) KiB > \(.server.needs.locked_bytes / 1024) KiB computed" else empty end),
		(if .server.usage.fds > .server.needs.fds then "point \($i) server: fds \(.server.usage.fds) > \(.server.needs.fds)" else empty end),
		(if .server.transport.qps_peak > .server.needs.qps then "point \($i) server: QPs \(.server.transport.qps_peak) > \(.server.needs.qps)" else empty end),
		(.clients | to_entries[] | .key as $c | .value |
			(if .usage.pinned_kb * 1024 > .needs.locked_bytes then "point \($i) client \($c): pinned \(.usage.pinned_kb) KiB > \(.needs.locked_bytes / 1024) KiB computed" else empty end),
			(if .usage.fds > .needs.fds then "point \($i) client \($c): fds \(.usage.fds) > \(.needs.fds)" else empty end))' "$R" 2>&1)
	if [ $? -eq 0 ] && [ -z "$over" ]; then
		ok "scale $name: every process within the needs it computed (pinned memory, open files, QPs)"
	else
		notok "scale $name: every process within the needs it computed (pinned memory, open files, QPs)" "$(echo "$over" | head -8 | tr '\n' ';')"
	fi
	# nothing left: every local PID the driver held (the ssh clients) is
	# gone, and no benchmark process is still running in the guest
	local alive left
	alive=$(procs_alive "$T/$name/processes.tsv")
	left=$(ps -eo pid=,comm= | awk '$2 ~ /^oqb-(server|client)$/ { printf " %s(%s)", $1, $2 }')
	if [ -z "$alive$left" ]; then ok "scale $name: no process left behind"; else notok "scale $name: no process left behind" "$alive$left"; fi
}

# scale_figures NAME RUN.JSON SECONDS: the measured figures, printed as
# "# ..." lines, never asserted (docs/scale.md).
scale_figures() {
	local name=$1 R=$2 took=$3
	jq -r --arg name "$name" '.points[] |
		(.clients | length) as $h | .server.transport.qps_peak as $q |
		([.clients[].connect_ns.total] | max / 1e9) as $conn |
		"# \($name) \(.system) hosts \($h) x \(.clients[0].threads) threads, \(.server.workers) workers" +
		(if .sweep.key == "clients.delegation" then ", delegation \(.sweep.value)" else "" end) +
		": server QPs \($q), committed \(.committed), unanswered \(.unanswered) (server reply drops \([.server.transport.workers[]?.reply_drops // 0] | add // 0)), errors \(.errors), rejected \(.server.rejected), executed \(.server.executed); connect: slowest process \($conn * 100 | round / 100) s" +
		" (\($conn / $q * 1e5 | round / 100) ms per server QP); driver_s " +
		(.driver_s | to_entries | map("\(.key) \(.value * 100 | round / 100)") | join(", ")) +
		"; server RSS \((.server.usage.maxrss_kb // 0) / 1024 | round) MiB, fds \(.server.usage.fds // "?"), threads \(.server.usage.threads // "?")" +
		"; server CPU \(((.server.usage.user_s // 0) + (.server.usage.sys_s // 0)) * 10 | round / 10) s in \([.driver_s.clients_start, .driver_s.measure, .driver_s.stop] | add | round) s from its HELLO to its stop" +
		"; client RSS max \(([.clients[].usage.maxrss_kb // 0] | max) / 1024 | round) MiB, fds max \([.clients[].usage.fds // 0] | max)" +
		"; pinned: server \((.server.usage.pinned_kb // 0) / 1024 | round) MiB of \((.server.needs.locked_bytes // 0) / 1048576 | round) computed, " +
		"client max \(([.clients[].usage.pinned_kb // 0] | max) / 1024 | round) MiB of \(([.clients[].needs.locked_bytes // 0] | max) / 1048576 | round)"' "$R"
	jq -r --arg name "$name" '.hosts.processes | group_by(.point)[] |
		"# \($name) point \(.[0].point) start: server launch to HELLO \([.[] | select(.role == "server") | .start_s.launch_to_hello] | max) s; " +
		"clients launch to HELLO max \([.[] | select(.role == "client") | .start_s.launch_to_hello] | max) s, " +
		"of which in the process max \([.[] | select(.role == "client") | .start_s.in_process] | max * 100 | round / 100) s " +
		"(prepare \([.[] | select(.role == "client") | .start_s.prepare] | max * 100 | round / 100) s)"' "$R"
	echo "# $name: whole run $took s, run.json $(du -k "$R" | cut -f1) KiB; guest vmalloc peak $(sort -n "$T/$name.mem" | tail -1 | awk '{ printf "%d", $1 / 1024 }') MiB, MemAvailable low $(sort -k2 -n "$T/$name.mem" | head -1 | awk '{ printf "%d", $2 / 1024 }') MiB"
}

# ---- the runs -----------------------------------------------------------
pow2s() {   # 1 2 4 .. $1 (and $1 itself)
	local v=1 out=""
	while [ $v -lt "$1" ]; do out="$out$v,"; v=$((v * 2)); done
	echo "[$out$1]"
}
FIG6=(--set server.workers="$W" --set clients.threads="$TH" --set 'arrival.outstanding=[1]' --set workload.value_size=64)
for phase in $PHASES; do
	case $phase in
	fig6)
		scale_run fig6 configs/fig6-echo.json false "${FIG6[@]}" --set clients.processes="$NH" \
			--set 'sweep={"key":"clients.delegation","values":[false,true]}'
		jcheck "scale fig6: two points, delegation off then on" "$T/fig6/run.json" \
			'([.points[].sweep.value] | sort) == [false, true]'
		;;
	growth)
		scale_run growth configs/fig6-echo.json false "${FIG6[@]}" \
			--set "sweep={\"key\":\"clients.processes\",\"values\":$(pow2s "$NH")}"
		jcheck "scale growth: one point per host count $(pow2s "$NH")" "$T/growth/run.json" \
			"[.points[].clients | length] == $(pow2s "$NH")"
		scale_run growth-delegation configs/fig6-echo.json true "${FIG6[@]}" --set clients.processes="$NH" \
			--set clients.delegation=true --set sweep=null
		;;
	fig78)
		# the cache's memory is per worker: the config's 1 GiB x 16 workers
		# is a lab server's, not a 4 GiB guest's
		scale_run fig78 configs/fig7-8-cluster12-verbs.json true --set clients.processes="$NH" \
			--set clients.threads="$TH" --set "arrival.loads_ops=[$LOAD78]" --set history=true --set check=true \
			--set server.backend.memory_mb="${OQB_SCALE_CACHE_MB:-16}"
		jcheck "scale fig78: oq, rawrpc and deferred on the cache backend, Poisson" "$T/fig78/run.json" \
			'([.points[].system] | sort) == ["deferred", "oq", "rawrpc"] and all(.points[]; .server.backend == "cache" and .workload.kind == "twitter")'
		jcheck "scale fig78: every point's history checked linearizable" "$T/fig78/run.json" \
			'(.points | length) == 3 and all(.points[]; .check.verdict == "ok")'
		;;
	durable)
		mkdir -p "$T/pmem"   # the server host's directory for the rings (server.recv_pmem_path)
		scale_run durable configs/fig6-echo-durable.json true "${FIG6[@]}" --set clients.processes="$NH" \
			--set clients.delegation=true --set sweep=null --set 'systems=["oq"]' \
			--set 'workload={"kind":"kv","put_ratio":0.9,"key_size":16,"value_size":64,"keys":4096}' \
			--set history=true --set check=true --set "server.recv_pmem_path=\"$T/pmem\"" \
			--set 'server.backend={"kind":"cache","memory_mb":16}'
		jcheck "scale durable: durable oq, nilext writes committed, history linearizable" "$T/durable/run.json" \
			'(.points | length) == 1 and all(.points[]; .durable == true and .system == "oq" and .check.verdict == "ok")'
		if "$B/oqb" check "$T/durable" >"$T/check.out" 2>&1; then
			ok "scale durable: oqb check on the run directory finds no violation"
		else
			notok "scale durable: oqb check on the run directory" "$(tail -5 "$T/check.out")"
		fi
		;;
	*)
		notok "scale: unknown run '$phase' in OQB_SCALE_PHASES (fig6, growth, fig78, durable)"
		;;
	esac
done
# Every run's processes were ssh'd to the hosts; one more look for a leftover
left=$(ps -eo pid=,comm= | awk '$2 ~ /^oqb/ { printf " %s(%s)", $1, $2 }')
if [ -z "$left" ]; then ok "scale: nothing of oqbench left running in the guest"; else notok "scale: nothing of oqbench left running in the guest" "$left"; fi
echo "# guest after: $(mem)"
kill -TERM "$SSHD_PID" 2>/dev/null
finish
