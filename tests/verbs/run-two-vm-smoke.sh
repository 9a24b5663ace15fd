#!/usr/bin/env bash
# Soft-RoCE smoke test across two VMs (tests/vm/rxe-vm -P DIR:1 / DIR:2),
# joined by a virtio-net link over a unix datagram socket pair.
#
# VM 1 serves, VM 2 connects: a TCP transfer (1.3 MB, checked by md5; the
# future ssh between the VMs needs TCP), rping over rdma_cm, and ib_send_lat
# over rdma_cm (-R).  The two boot in parallel: VM 1 opens a TCP "ready"
# port once its servers listen, and VM 2 waits for it before its clients
# start; every wait has a time limit.  Without a usable VM: "skip" here,
# "not ok" under CI=true.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
. tests/vm/vm-test-lib.sh

vm_preflight two-vm-smoke rping:rdmacm-utils ib_send_lat:perftest \
	rdma:iproute2 busybox:busybox-static timeout:coreutils stdbuf:coreutils || finish

# Shared by both guests: helpers, then the role picked by $RXE_PAIR_N.
guest=$(cat <<'EOF'
set -u
me=two-vm/vm$RXE_PAIR_N
result() { if [ "$2" = 0 ]; then echo "ok $me/$1"; else echo "not ok $me/$1"; fi; }
show() { local f; for f; do echo "--- vm$RXE_PAIR_N $f" >&2; tail -n 15 "$f" >&2; done; }
# retry, copied into the shared directory (the guest's cwd): a checkout
# under the host's /tmp is not visible in the guest, which mounts its own
. ./retry.sh || { echo "not ok $me/retry-helper: cannot read $PWD/retry.sh"; exit 1; }
# wait_for SECS CMD...: poll a local readiness check.
wait_for() {
	local end=$((SECONDS + $1)); shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}
# serve SECS LOG CMD...: run a one-client server until a run succeeds, for at
# most SECS seconds.  A server whose client died half-way through the
# rdma_cm handshake (a slow guest) never finishes: the per-run limit
# restarts it, and the client retries.  Beside a CPU hog (2026-11-29)
# Debian's ib_send_lat client segfaulted twice in its rdma_cm handshake and
# the old windows (240 s serving, 120 s retrying) ran out; they are now
# 480 s and 300 s, well inside the VMs' 900 s.
serve() {
	local end=$((SECONDS + $1)) log=$2; shift 2
	until timeout 60 stdbuf -oL "$@" >"$log" 2>&1; do
		[ $SECONDS -ge $end ] && return 1
		sleep 1
	done
}
cm_listening() { rdma resource show cm_id | grep -q "state LISTEN .*:$1 "; }
payload() { seq 1 200000; }
tcp_connect() { timeout 10 bash -c "exec 3<>/dev/tcp/$RXE_PEER_IP/$1" 2>/dev/null; }
tcp_send() { timeout 30 bash -c 'seq 1 200000 >"/dev/tcp/$RXE_PEER_IP/5001"' 2>/dev/null; }
rping_cli() { timeout 60 rping -c -a "$RXE_PEER_IP" -C 10 -v >/tmp/rping-cli 2>&1; }
lat_cli() { timeout 60 ib_send_lat -R -d "$RXE_DEV" -n 200 "$RXE_PEER_IP" >/tmp/lat-cli 2>&1; }

[ -n "${RXE_PEER_IP:-}" ] && [ "$RXE_IP" = "198.18.2.$RXE_PAIR_N" ]
result environment $?

if [ "$RXE_PAIR_N" = 1 ]; then
	# Servers first, then a TCP "ready" listener on port 5002 once both
	# rdma_cm servers listen: VM 2 starts its clients when it can connect.
	timeout 300 busybox nc -l -p 5001 >/tmp/tcp-in 2>/tmp/tcp-err &
	nc_pid=$!
	serve 480 /tmp/rping-srv rping -s -a "$RXE_IP" -C 10 -v &
	rping_pid=$!
	serve 480 /tmp/lat-srv ib_send_lat -R -d "$RXE_DEV" -n 200 &
	lat_pid=$!
	wait_for 60 cm_listening 7174 && wait_for 60 cm_listening 18515
	result servers-listening $?
	timeout 600 busybox nc -l -p 5002 </dev/null >/dev/null 2>&1 &
	ready_pid=$!

	wait $nc_pid; r=$?
	[ $r = 0 ] && [ "$(md5sum </tmp/tcp-in)" = "$(payload | md5sum)" ]
	r=$?; [ $r = 0 ] || show /tmp/tcp-err
	result tcp-receive-md5 $r
	wait $rping_pid; r=$?; [ $r = 0 ] || show /tmp/rping-srv
	result rping-server $r
	wait $lat_pid; r=$?; [ $r = 0 ] || show /tmp/lat-srv
	result ib_send_lat-server $r
	wait $ready_pid
else
	retry 240 tcp_connect 5002
	result peer-ready $?
	retry 60 tcp_send
	result tcp-send $?
	retry 240 rping_cli && [ "$(grep -c 'ping data: rdma-ping-' /tmp/rping-cli)" = 10 ]
	r=$?; [ $r = 0 ] || show /tmp/rping-cli
	result rping-client $r
	retry 300 lat_cli && grep -Eq '^ *2 +200 +[0-9.]+' /tmp/lat-cli
	r=$?; [ $r = 0 ] || show /tmp/lat-cli
	result ib_send_lat-rdma_cm $r
fi
EOF
)

pair=$T/pair
mkdir -p "$pair" "$T/share"
cp tests/verbs/retry.sh "$T/share/" || { notok two-vm-smoke "cannot copy tests/verbs/retry.sh to $T/share"; finish; }
vm_pids=()
stop_vms() {
	local p
	for p in "${vm_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${vm_pids[@]}"; do wait "$p" 2>/dev/null; done
	cleanup_
}
trap stop_vms EXIT

t0=$SECONDS
for n in 1 2; do
	"$VM_RUNNER" -P "$pair:$n" -C "$T/share" -t 900 -- bash -c "$guest" \
		>"$T/out$n" 2>"$T/err$n" &
	vm_pids+=($!)
done
rcs=()
for n in 1 2; do wait "${vm_pids[n - 1]}"; rcs+=($?); done
vm_pids=()
echo "# two-VM smoke (both boots and tests): $((SECONDS - t0)) s" >&2

if [ "${rcs[0]}" = 125 ] || [ "${rcs[1]}" = 125 ]; then
	cat "$T/err1" "$T/err2" >&2
	vm_unavailable two-vm-smoke "a VM did not start (rxe-vm exit ${rcs[*]}; console tail above)"
	finish
fi
for n in 1 2; do
	vm_relay "$T/out$n" || notok two-vm-smoke/vm$n "the guest printed no result (rxe-vm exit ${rcs[n - 1]})"
	if grep -q '^not ok' "$T/out$n"; then cat "$T/err$n" >&2; fi
done
[ "${rcs[*]}" = "0 0" ] && ok two-vm-smoke/exit-status || notok two-vm-smoke/exit-status "rxe-vm exit statuses ${rcs[*]}"
finish
