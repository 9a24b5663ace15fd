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
# The run is configs/fig6-echo.json (Fig 6's microbenchmark: null backend,
# closed loop, one request in flight per client thread) with its hosts,
# workers and threads set here, and client-side delegation swept off and
# on: OQB_SCALE_HOSTS x OQB_SCALE_THREADS x OQB_SCALE_WORKERS server QPs without it,
# OQB_SCALE_HOSTS x OQB_SCALE_WORKERS with it.
#
# Prints "ok NAME" / "not ok NAME", and the measured figures as "# ..."
# lines (connect times, memory, the driver's time per point).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/two-vm-sshd.sh"   # sshd_write_config
: "${RXE_IP:?run through tests/vm/rxe-vm (tests/verbs/run-scale.sh)}"
: "${RXE_NETDEV:?run through tests/vm/rxe-vm}"
NH=${OQB_SCALE_HOSTS:-4} TH=${OQB_SCALE_THREADS:-16} W=${OQB_SCALE_WORKERS:-16}
DUR=${OQB_SCALE_DURATION_S:-1}
# ~NH x TH + W polling threads on the guest's 2 vCPUs: they nap when idle
# (lib/idle.h), or they starve each other and the connection manager
IDLE=${OQB_SCALE_IDLE:-'{"nap_us":500,"spin_us":200}'}
SSH_PORT=2222
SERVER=$RXE_IP
B=$OQB_BIN
shape="$NH hosts x $TH threads x $W workers"
qps_off=$((NH * TH * W)) qps_on=$((NH * W))

mem() { awk '/MemAvailable|VmallocUsed/ { printf "%s %d MiB ", $1, $2 / 1024 }' /proc/meminfo; }
echo "# scale: $shape: $qps_off server QPs without delegation, $qps_on with; idle $IDLE; guest $(nproc) CPUs, $(mem)"

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

# ---- the run ------------------------------------------------------------
hl=$(printf '"%s",' "${hosts[@]}"); hl="[${hl%,}]"
cat >"$T/hosts.json" <<EOF
{ "server": "$SERVER", "clients": $hl, "launcher": "ssh", "bin_dir": "$B", "ctl_addr": "$SERVER",
  "ssh": { "user": "root", "port": $SSH_PORT, "identity": "$D/id", "known_hosts": "$D/known_hosts",
	   "options": ["ConnectTimeout=30"] } }
EOF
t0=$SECONDS
timeout -k 10 "${OQB_SCALE_RUN_S:-900}" "$B/oqb" run configs/fig6-echo.json --out "$T/run" \
	--set transport='"verbs"' --set "verbs={\"addr\":\"$SERVER\",\"port\":7700}" \
	--set server.workers="$W" --set clients.processes="$NH" --set clients.threads="$TH" \
	--set 'arrival.outstanding=[1]' --set 'sweep={"key":"clients.delegation","values":[false,true]}' \
	--set workload.value_size=64 --set duration_s="$DUR" --set warmup_s=0.5 --set canary=false --set rerun_disturbed=0 \
	--set "hosts=$(cat "$T/hosts.json")" \
	--set "idle=$IDLE" --set 'timeouts={"hello_s":300,"grace_s":120,"stop_s":120,"connect_s":300}' 2>&1 |
	while IFS= read -r l; do echo "$((SECONDS - t0)) s: $l"; done >"$T/run.out"
rc=${PIPESTATUS[0]}
took=$((SECONDS - t0))
R=$T/run/run.json
if [ $rc -ne 0 ] || [ ! -s "$R" ]; then
	notok "scale: oqb run at $shape (exit $rc after $took s)" "$(tail -25 "$T/run.out")"
	finish
fi
ok "scale: oqb run at $shape finished in $took s"
jcheck "scale: two points, delegation off then on, status ok" "$R" \
	'.status == "ok" and (.points | length) == 2 and ([.points[].sweep.value] | sort) == [false, true]'
jcheck "scale: the server held $qps_off QPs without delegation and $qps_on with" "$R" "
	all(.points[]; (.sweep.value == false and .server.transport.qps_peak == $qps_off) or
		       (.sweep.value == true and .server.transport.qps_peak == $qps_on))"
jcheck "scale: every request committed or accounted for: none unanswered, no errors" "$R" '
	all(.points[]; .committed > 0 and .unanswered == 0 and .errors == 0 and .server.rejected == 0 and
		.server.executed >= .committed and (.clients | length) == '"$NH"')'
jcheck "scale: each client ran on its own logical host, the server on its own" "$R" '
	([.hosts.processes[] | select(.role == "client") | .launched_on] | unique | length) == '"$NH"' and
	([.hosts.processes[] | select(.role == "server") | .launched_on] | unique) == ["'"$SERVER"'"]'
# nothing left: every local PID the driver held (the ssh clients) is gone,
# and no benchmark process is still running in the guest
alive=$(procs_alive "$T/run/processes.tsv")
left=$(ps -eo pid=,comm= | awk '$2 ~ /^oqb-(server|client)$/ { printf " %s(%s)", $1, $2 }')
if [ -z "$alive$left" ]; then ok "scale: no process left behind"; else notok "scale: no process left behind" "$alive$left"; fi

# ---- the figures (printed, never asserted) ------------------------------
jq -r '.points[] | "# point delegation=\(.sweep.value): driver_s \(.driver_s | tostring), server QPs \(.server.transport.qps_peak), committed \(.committed), "
	+ "client connect: slowest process \((([.clients[].connect_ns.total] | max) / 1e7 | round) / 100) s, slowest thread \((([.clients[].connect_ns.slowest_thread] | max) / 1e7 | round) / 100) s"' "$R"
echo "# run.json: $(du -k "$R" | cut -f1) KiB; guest after: $(mem)"
sed 's/^/# driver at /' "$T/run.out" | cut -c1-200
kill -TERM "$SSHD_PID" 2>/dev/null
finish
