#!/usr/bin/env bash
# doctor-ctl.sh - `oqb doctor`'s control-channel check (docs/doctor.md):
# doctor listens where `oqb run` would (hosts.ctl_bind, hosts.ctl_port) and
# each host's probe connects to hosts.ctl_addr and sends its token.
#  - on loopback the host's "control" row passes, with any free port and
#    with a fixed hosts.ctl_port;
#  - hosts.ctl_addr "::1" while a run listens on IPv4 only: the host cannot
#    connect, the row fails with the fix (set hosts.ctl_port and open it,
#    or set hosts.ctl_addr), naming the fixed port when one is set, exit 1;
#    and `oqb run` of the same config does fail at its first point (no
#    HELLO), so the check says what a run would meet;
#  - a fixed hosts.ctl_port that something else holds: the driver's own
#    "control port" row fails naming hosts.ctl_port.
# Only loopback is used; only PIDs started here are ended.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
O=$OQB_BIN/oqb
CFG=$ROOT/configs/tiny.json

doctor() {   # doctor NAME ARGS...: sets RC
	local name=$1
	shift
	"$O" doctor "$CFG" "$@" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
}
show() { echo "  exit $RC:"; sed 's/^/  | /' "$T/$1.out" "$T/$1.err"; }
# fix NAME HOST CHECK TEXT: the fix line under that FAIL row holds TEXT.
fix() { grep -A1 -E "^$2 +$3 +FAIL" "$T/$1.out" | grep -qF -- "fix: $4"; }
free_port() {
	local p
	for p in $(shuf -i 20000-60000 -n 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}

# 1. Loopback: any free port, then a fixed one.
doctor any
if [ $RC -eq 0 ] && grep -qE '^127\.0\.0\.1 +control +PASS +connected to the driver at 127\.0\.0\.1:[0-9]+ ' "$T/any.out"; then
	ok doctor_ctl_loopback
else
	notok doctor_ctl_loopback "$(show any)"
fi
port=$(free_port)
doctor fixed --set "hosts.ctl_port=$port"
if [ $RC -eq 0 ] && grep -qE "^127\.0\.0\.1 +control +PASS +connected to the driver at 127\.0\.0\.1:$port \(hosts.ctl_addr, hosts.ctl_port\)" "$T/fixed.out"; then
	ok doctor_ctl_fixed_port
else
	notok doctor_ctl_fixed_port "$(show fixed)"
fi

# 2. An address the host cannot connect to: ::1, while a run listens on
# IPv4 only.
doctor v6 --set 'hosts.ctl_addr="::1"'
if [ $RC -eq 1 ] && grep -qE '^127\.0\.0\.1 +control +FAIL +cannot connect to \[::1\]:[0-9]+: ' "$T/v6.out" &&
	fix v6 127.0.0.1 control "set hosts.ctl_port to a fixed port and open that TCP port from 127.0.0.1 to ::1" &&
	grep -qF 'or set hosts.ctl_addr to an address of this machine that 127.0.0.1 can reach' "$T/v6.out"; then
	ok doctor_ctl_unreachable
else
	notok doctor_ctl_unreachable "$(show v6)"
fi
port=$(free_port)
doctor v6fixed --set 'hosts.ctl_addr="::1"' --set "hosts.ctl_port=$port"
if [ $RC -eq 1 ] && fix v6fixed 127.0.0.1 control "open TCP port $port from 127.0.0.1 to ::1"; then
	ok doctor_ctl_unreachable_fixed_port
else
	notok doctor_ctl_unreachable_fixed_port "$(show v6fixed)"
fi
# what doctor predicts, a run meets
timeout -k 5 60 "$O" run "$CFG" --set 'hosts.ctl_addr="::1"' --set timeouts.hello_s=3 --set timeouts.exit_s=1 \
	--set 'arrival.loads_ops=[5000]' --set 'systems=["oq"]' --out "$T/run-v6" --quiet >"$T/run-v6.log" 2>&1
r=$?
if [ $r -ne 0 ] && grep -q 'did not report ready (no HELLO)' "$T/run-v6.log"; then
	ok doctor_ctl_run_agrees
else
	notok doctor_ctl_run_agrees "oqb run exit $r: $(tail -n 5 "$T/run-v6.log")"
fi

# 3. The fixed port taken on the driver's side.
port=$(free_port)
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); print("up", flush=True); time.sleep(60)' \
	"$port" >"$T/holder.out" 2>&1 &
holder=$!
track $holder
for _ in $(seq 1 100); do grep -q up "$T/holder.out" && break; sleep 0.05; done
doctor taken --set "hosts.ctl_port=$port"
if [ $RC -eq 1 ] && grep -qE "^\(driver\) +control port +FAIL +cannot listen where a run would \(127\.0\.0\.1, hosts.ctl_port $port\)" "$T/taken.out" &&
	fix taken '\(driver\)' "control port" "set hosts.ctl_port to a free port"; then
	ok doctor_ctl_port_taken
else
	notok doctor_ctl_port_taken "$(show taken)"
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
exit $TEST_FAILED
