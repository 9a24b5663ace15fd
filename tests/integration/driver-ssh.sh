#!/usr/bin/env bash
# driver-ssh.sh - the ssh launcher for real: a private sshd on 127.0.0.1
# (its own host key, authorized key and known_hosts, all in $T), and a tiny
# sweep whose server and clients are started through it.  Also: a host
# whose key is not in known_hosts is refused (host keys stay checked), and
# the run fails fast with ssh's message.  Only the sshd PID started here
# is ended.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}

ssh_test_keys driver_ssh

# A free port: sshd tells us by failing to bind when it is not.
port=""
for _ in 1 2 3 4 5 6 7 8; do
	p=$((20000 + RANDOM % 40000))
	ssh_test_config "$p" 127.0.0.1 sshd >"$T/sshd_config"
	"$SSHD" -D -e -f "$T/sshd_config" 2>"$T/sshd.log" &
	sp=$!
	track $sp
	for _ in $(seq 1 50); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
		kill -0 $sp 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$port" ] && break
	kill $sp 2>/dev/null
	wait $sp 2>/dev/null
done
if [ -z "$port" ]; then
	notok sshd_started "sshd did not start: $(tail -5 "$T/sshd.log")"
	finish
fi
ok sshd_started
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$T/host_key.pub")" >"$T/known_hosts"

# The ssh setup itself, before the driver uses it.
if ssh -T -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$T/known_hosts" \
	-i "$T/id" -o IdentitiesOnly=yes -p "$port" -l "$user" 127.0.0.1 true 2>"$T/ssh.err"; then
	ok ssh_login
else
	notok ssh_login "$(cat "$T/ssh.err"; tail -5 "$T/sshd.log")"
	finish
fi

jq --arg kh "$T/known_hosts" --arg id "$T/id" --arg user "$user" --argjson port "$port" \
	--arg bin "$OQB_BIN" '
	.name = "ssh" | .systems = ["oq"] | .arrival.loads_ops = [5000] |
	.hosts = { server: "127.0.0.1", clients: ["127.0.0.1"], launcher: "ssh", bin_dir: $bin,
		   ssh: { user: $user, port: $port, identity: $id, known_hosts: $kh,
			  options: ["ConnectTimeout=10"] } }' \
	"$ROOT/configs/tiny.json" >"$T/ssh.json"

# TMPDIR: the driver's ControlPath directory lands in $T, so we can check
# that the ControlMaster it started is gone afterwards.
OUT=$T/run
if TMPDIR=$T "$OQB_BIN/oqb" run "$T/ssh.json" --out "$OUT" >"$T/stdout" 2>"$T/stderr"; then
	ok ssh_run
else
	notok ssh_run "$(tail -20 "$T/stderr")"
fi
if [ -f "$OUT/run.json" ]; then
	jcheck ssh_run_json "$OUT/run.json" '.schema == "oqbench.run/5" and .status == "ok"
		and .hosts.launcher == "ssh" and (.points | length) == 1'
	jcheck ssh_points_have_samples "$OUT/run.json" 'all(.points[]; .lat_ns.all.n > 0
		and .lat_ns.all.p50 <= .lat_ns.all.p99
		and .lat_ns.all.n == ([.clients[].n.all] | add))'
	# The PIDs in HELLO are the remote processes, not the ssh clients.
	jcheck ssh_remote_pids "$OUT/run.json" 'all(.hosts.processes[]; .pid != .local_pid)'
fi
if grep -q "Accepted publickey" "$T/sshd.log"; then ok went_through_sshd
else notok went_through_sshd "sshd log shows no login"; fi
sleep 0.5
# shellcheck disable=SC2009
left=$(ps -eo pid=,args= | grep -F "$T/oqb-ssh" | grep -v grep)
if [ -z "$left" ]; then ok ssh_master_ended; else notok ssh_master_ended "$left"; fi
# Remote processes: HELLO pids must be gone.
alive=""
for p in $(jq -r '.hosts.processes[].pid' "$OUT/run.json" 2>/dev/null); do
	kill -0 "$p" 2>/dev/null && alive="$alive $p"
done
if [ -z "$alive" ]; then ok no_stray_remote_processes; else notok no_stray_remote_processes "$alive"; fi

# A host key that is not known: ssh refuses the first thing the driver runs
# there (the server's --build-info), the driver says so and stops (exit 5).
: >"$T/empty_known_hosts"
jq --arg kh "$T/empty_known_hosts" '.hosts.ssh.known_hosts = $kh' "$T/ssh.json" >"$T/unknown.json"
t0=$SECONDS
TMPDIR=$T "$OQB_BIN/oqb" run "$T/unknown.json" --out "$T/run2" >/dev/null 2>"$T/stderr2"
rc=$?
msg=$(cat "$T/stderr2")
if [ $rc -eq 5 ] && [[ $msg == *"oqb-server --build-info on 127.0.0.1"* ]] && [[ $msg == *"Host key verification failed"* ]] &&
	[ $((SECONDS - t0)) -lt 20 ]; then
	ok unknown_host_key_refused
else
	notok unknown_host_key_refused "rc=$rc after $((SECONDS - t0)) s: $msg"
fi

# History under ssh: refused unless the results directory is shared, and
# then recorded and checked (here every "host" is this machine, so the
# directory is shared indeed).
TMPDIR=$T "$OQB_BIN/oqb" run "$T/ssh.json" --set history=true --out "$T/run3" >/dev/null 2>"$T/stderr3"
rc=$?
if [ $rc -eq 2 ] && grep -q "hosts.shared_fs" "$T/stderr3"; then
	ok ssh_history_needs_shared_fs
else
	notok ssh_history_needs_shared_fs "rc=$rc: $(cat "$T/stderr3")"
fi
if TMPDIR=$T "$OQB_BIN/oqb" run "$T/ssh.json" --set history=true --set check=true --set hosts.shared_fs=true \
	--out "$T/run4" >/dev/null 2>"$T/stderr4"; then
	jcheck ssh_history_shared_fs_checked "$T/run4/run.json" 'all(.points[]; .check.verdict == "ok" and .check.ops > 0)'
else
	notok ssh_history_shared_fs_checked "$(tail -5 "$T/stderr4")"
fi

kill "$sp" 2>/dev/null
wait "$sp" 2>/dev/null
finish
