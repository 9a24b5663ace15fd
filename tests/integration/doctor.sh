#!/usr/bin/env bash
# doctor.sh - `oqb doctor` on this machine, and the processes' own refusal
# of a too-low open-file limit (issue 37, docs/doctor.md):
#  - a correct local shm config passes (exit 0, no FAIL line, JSON ok);
#  - each injected fault is found, on the host's line, with its fix and
#    exit 1: a wrong bin_dir; a binary of another build (a copy of
#    oqb-server whose embedded build id is patched, checked to print the
#    patched id: oqb-client beside it is then the other build, since the
#    server's build is the reference, never the driver's); a `ulimit -n` below what the config needs; a host that
#    refuses the connection (ssh to a closed loopback port) and one that
#    accepts and never answers (a silent listener on loopback), the latter
#    reported within the --timeout-s bound;
#  - `oqb run` under the same low `ulimit -n` fails with the server's
#    message naming the limit, the number and the fix, and under a low
#    soft limit only, the processes raise it themselves and run.json says so;
#  - a bad config is exit 2.
# Only loopback is used; only PIDs started here are ended.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
O=$OQB_BIN/oqb
CFG=$ROOT/configs/tiny.json
ONE=(--set duration_s=0.3 --set warmup_s=0.1 --set 'arrival.loads_ops=[5000]' --set 'systems=["oq"]')

# doctor NAME ARGS...: runs oqb doctor; sets RC, OUT (stdout) and ERR.
doctor() {
	local name=$1
	shift
	"$O" doctor "$@" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
	OUT=$(cat "$T/$name.out")
	ERR=$(cat "$T/$name.err")
}

# A FAIL line for host and check, followed by its fix line containing text.
has_fail() {
	awk -v h="$1" -v c="$2" -v f="$3" '
		$1 == h && index($0, " " c " ") && / FAIL / { hit = 1; next }
		hit && /fix: / { if (index($0, f)) found = 1; hit = 0 }
		END { exit !found }' "$4"
}

# 1. The correct config.
doctor pass "$CFG"
if [ $RC -eq 0 ] && ! grep -q ' FAIL ' "$T/pass.out" && grep -q 'the config can run' "$T/pass.out" &&
	grep -qE '^127\.0\.0\.1 +reachable +PASS' "$T/pass.out" &&
	grep -qE '^127\.0\.0\.1 +oqb-server +PASS .*the server' "$T/pass.out" &&
	grep -qE '^127\.0\.0\.1 +open files +PASS' "$T/pass.out"; then
	ok doctor_passes_local_shm
else
	notok doctor_passes_local_shm "exit $RC: $OUT $ERR"
fi
doctor passjson "$CFG" --json
if [ $RC -eq 0 ] && jq -e '.ok == true and ([.checks[] | select(.result == "FAIL")] | length == 0)
	and ([.checks[] | select(.check == "locked memory" and .result == "PASS")] | length == 2)' \
	"$T/passjson.out" >/dev/null; then
	ok doctor_json
else
	notok doctor_json "exit $RC: $OUT $ERR"
fi

# 2. A wrong bin_dir.
doctor bindir "$CFG" --set "hosts={\"bin_dir\":\"$T/nowhere\"}"
if [ $RC -eq 1 ] && has_fail 127.0.0.1 oqb-server hosts.bin_dir "$T/bindir.out" &&
	grep -q "$T/nowhere/oqb-server does not exist" "$T/bindir.out"; then
	ok doctor_wrong_bin_dir
else
	notok doctor_wrong_bin_dir "exit $RC: $OUT $ERR"
fi

# 3. A binary of another build: a copy with its embedded id patched.
mkdir -p "$T/other"
cp "$OQB_BIN/oqb-server" "$OQB_BIN/oqb-client" "$T/other/"
mine=$("$OQB_BIN/oqb-server" --build-id)
fake=0123456789abcdef
[ "$mine" = "$fake" ] && fake=fedcba9876543210
LC_ALL=C sed -i "s/oqb-build-id:$mine/oqb-build-id:$fake/" "$T/other/oqb-server"
if [ "$("$T/other/oqb-server" --build-id)" != "$fake" ]; then
	notok doctor_other_build "could not make a copy with another build id (it prints $("$T/other/oqb-server" --build-id))"
else
	doctor other "$CFG" --set "hosts={\"bin_dir\":\"$T/other\"}"
	# the reference is the server's build, never the driver's: the
	# patched server passes, the client beside it is the other build
	if [ $RC -eq 1 ] && has_fail 127.0.0.1 oqb-client "copy one build" "$T/other.out" &&
		grep -q "is another build: id $mine, the server's ($T/other/oqb-server on 127.0.0.1) is $fake" "$T/other.out" &&
		grep -qE "^127\.0\.0\.1 +oqb-server +PASS +$T/other/oqb-server, build $fake" "$T/other.out"; then
		ok doctor_other_build
	else
		notok doctor_other_build "exit $RC: $OUT $ERR"
	fi
fi

# 4. A low open-file limit: doctor finds it; the run's processes refuse it.
need=$("$O" run "$CFG" --dry-run | sed -n 's/.* server \([0-9]*\) open files.*/\1/p' | head -n 1)
low=$((need - 2))
(ulimit -n "$low" && "$O" doctor "$CFG" >"$T/nofile.out" 2>"$T/nofile.err")
RC=$?
if [ -n "$need" ] && [ $RC -eq 1 ] && has_fail 127.0.0.1 "open files" "ulimit -n $need" "$T/nofile.out" &&
	grep -q "needs $need open files (RLIMIT_NOFILE); the limit is $low" "$T/nofile.out"; then
	ok doctor_low_nofile
else
	notok doctor_low_nofile "need '$need', exit $RC: $(cat "$T/nofile.out" "$T/nofile.err")"
fi
(ulimit -n "$low" && "$O" run "$CFG" "${ONE[@]}" --quiet --out "$T/run-low" >"$T/runlow.out" 2>"$T/runlow.err")
RC=$?
if [ $RC -ne 0 ] && grep -q "this server needs $need open files (RLIMIT_NOFILE); the limit is $low" "$T/runlow.err" &&
	grep -q "fix: ulimit -n $need" "$T/runlow.err"; then
	ok run_refuses_low_nofile
else
	notok run_refuses_low_nofile "exit $RC: $(cat "$T/runlow.err")"
fi
(ulimit -Sn "$low" && "$O" run "$CFG" "${ONE[@]}" --quiet --out "$T/run-soft" >/dev/null 2>"$T/runsoft.err")
RC=$?
if [ $RC -eq 0 ] && jq -e --arg n "$need" '[.hosts.processes[] | select(.role == "server")
	| .limits_raised == "raised the soft open-file limit to \($n)"] | all and length > 0' \
	"$T/run-soft/run.json" >/dev/null; then
	ok run_raises_soft_nofile
else
	notok run_raises_soft_nofile "exit $RC: $(cat "$T/runsoft.err")"
fi

# 5. Hosts that do not answer, through the ssh launcher on loopback.
free_port() {
	local p
	for _ in $(seq 1 20); do
		p=$((20000 + RANDOM % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}
: >"$T/known_hosts"
ssh_cfg() {
	printf '{"server":"127.0.0.1","clients":["127.0.0.1"],"launcher":"ssh","bin_dir":"%s",
		"ssh":{"port":%s,"known_hosts":"%s"}}' "$OQB_BIN" "$1" "$T/known_hosts"
}
if ! command -v ssh >/dev/null; then
	skip doctor_host_refuses "no ssh client (make deps)"
	skip doctor_host_silent "no ssh client (make deps)"
else
	port=$(free_port)
	t0=$(date +%s)
	doctor refused "$CFG" --set "hosts=$(ssh_cfg "$port")" --timeout-s 10
	took=$(($(date +%s) - t0))
	if [ $RC -eq 1 ] && has_fail 127.0.0.1 reachable "ssh HOST true" "$T/refused.out" &&
		grep -qi "refused" "$T/refused.out" && [ "$took" -lt 10 ]; then
		ok doctor_host_refuses
	else
		notok doctor_host_refuses "exit $RC after ${took}s: $OUT $ERR"
	fi
	# A listener that accepts and never speaks: ssh waits for a banner.
	port=$(free_port)
	python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8); print("up", flush=True)
c=[]
while True: c.append(s.accept())' "$port" >"$T/silent.up" 2>&1 &
	track $!
	for _ in $(seq 1 50); do grep -q up "$T/silent.up" && break; sleep 0.1; done
	t0=$(date +%s)
	doctor silent "$CFG" --set "hosts=$(ssh_cfg "$port")" --timeout-s 3
	took=$(($(date +%s) - t0))
	if [ $RC -eq 1 ] && has_fail 127.0.0.1 reachable "ssh HOST true" "$T/silent.out" &&
		grep -q "no answer within 3 s" "$T/silent.out" && grep -q "still waiting for 127.0.0.1" "$T/silent.err" &&
		[ "$took" -lt 9 ]; then
		ok doctor_host_silent
	else
		notok doctor_host_silent "exit $RC after ${took}s: $OUT $ERR"
	fi
fi

# 6. Bad usage and a bad config: exit 2, nothing probed.
doctor nocfg "$T/none.json"
if [ $RC -eq 2 ] && grep -q "none.json" "$T/nocfg.err"; then ok doctor_bad_config; else notok doctor_bad_config "exit $RC: $ERR"; fi
doctor noarg
if [ $RC -eq 2 ] && grep -q "usage: oqb doctor" "$T/noarg.err"; then ok doctor_usage; else notok doctor_usage "exit $RC: $ERR"; fi
finish
