#!/usr/bin/env bash
# two-vm-server.sh SHARE SSH_PORT - VM 2 of tests/verbs/run-two-vm-driver.sh
# (run by tests/vm/rxe-vm -P DIR:2): the server host.  Starts a private
# sshd on 198.18.2.2 so that the driver in VM 1 can start oqb-server here
# through its ssh launcher, opens TCP port 5002 once sshd is up (VM 1's
# "ready" signal), and stays up until VM 1 reports on port 5003 that its
# run is over (or the run's bound, OQB_TWO_VM_RUN_S, and 30 s more pass).
# Prints "ok NAME" / "not ok NAME" lines, which the host relays (NAME
# starts with $OQB_TWO_VM_NAME, two-vm-driver by default; run-netem.sh uses
# this VM too).  Ends only the PIDs it started.
set -u
SHARE=$1 SSH_PORT=$2
me=${OQB_TWO_VM_NAME:-two-vm-driver}/vm2
result() { if [ "$2" = 0 ]; then echo "ok $me/$1"; else echo "not ok $me/$1"; fi; }
show() { local f; for f; do echo "--- vm2 $f" >&2; tail -n 20 "$f" >&2; done; }
. "$(dirname "$0")/two-vm-sshd.sh"

pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	sshd_stop
}
trap cleanup EXIT

[ "$RXE_PAIR_N" = 2 ] && [ "$RXE_IP" = 198.18.2.2 ] && [ "${RXE_PEER_IP:-}" = 198.18.2.1 ]
result environment $?

# The "done" listener first, so that VM 1 can always report, even when
# sshd failed here.
# Waits as long as VM 1's run may take, and a little more: leaving earlier
# powers this VM off under a server still in the run.
wait_s=$(( ${OQB_TWO_VM_RUN_S:?set by run-two-vm-driver.sh} + ${OQB_TWO_VM_DOCTOR_S:-0} + 30 ))
timeout "$wait_s" busybox nc -l -p 5003 </dev/null >/tmp/done-msg 2>/dev/null &
done_pid=$!
pids+=("$done_pid")

sshd_start
r=$?; [ $r = 0 ] || show "$SSHD_LOG"
result sshd-started $r
if [ $r = 0 ]; then
	timeout "$wait_s" busybox nc -l -p 5002 </dev/null >/dev/null 2>&1 &
	pids+=($!)
fi

wait "$done_pid"
grep -q '^done' /tmp/done-msg
result driver-finished $?
# The driver logged in here with the test's key, as root.
grep -q 'Accepted publickey for root from 198.18.2.1' "$SSHD_LOG"
r=$?; [ $r = 0 ] || show "$SSHD_LOG"
result driver-logged-in-by-ssh $r
# Every oqb-server the driver started here has exited.
sleep 0.5
left=$(ps -eo pid=,args= | grep -F "${OQB_BIN:-/nonexistent}/oqb-server" | grep -v grep)
[ -z "$left" ]
r=$?; [ $r = 0 ] || echo "--- vm2 left running: $left" >&2
result no-server-left $r
