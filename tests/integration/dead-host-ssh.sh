#!/usr/bin/env bash
# dead-host-ssh.sh - a host lost in the middle of a point, under the ssh
# launcher (issue 39; docs/driver.md, "When a host is lost").
#
# Logical hosts on loopback: the server on 127.0.0.10, client process r
# on 127.0.0.(11+r), each answered by an sshd of its own (its own PID,
# so one host can die alone), all with one host key, one client key and a
# known_hosts made here.  Every address is this machine, so the transport
# is shm.  For each case a fresh `oqb run` of the two-point run of
# tests/dead-host-lib.sh; in the middle of its 60 s point, one host is
# killed: its sshd and everything below it (the session's sshd, the shell,
# the benchmark process) with SIGKILL at once.
#   client  the host of client process 1 (or 0 with one client)
#   server  the server's host
# Checked (check_dead_run): exit 5 (error) within DEAD_BOUND_S of the kill (the
# point had most of its 60 s to go), ONE error message naming the host as the config
# does and saying it is lost, run.json with the error (host_lost) and the
# finished point, no process of the run left (local ssh PIDs, remote
# PIDs), nothing below any surviving sshd but the sshd itself, no ssh
# master left, nothing new in the shared-memory folder.
#
# DEAD_P, DEAD_TH, DEAD_W: client hosts, threads, workers (make test: 2 x
# 2 x 2; make test-dead-hosts: 8 x 24 x 18, the paper's shape).
# DEAD_CASES: which cases (make test: "client", and dead-host-slurm.sh
# kills a server; make test-dead-hosts: "client server" in both).
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/dead-host-lib.sh"
DEAD_P=${DEAD_P:-2} DEAD_TH=${DEAD_TH:-2} DEAD_W=${DEAD_W:-2}
BOUND=${DEAD_BOUND_S:-30}

ssh_test_keys dead_host_ssh
# an empty home for the sessions: sshd runs each command through the
# user's shell, which would read the user's start-up files on every
# launch (docs/scale.md: pyenv cost seconds per launch there)
mkdir -p "$T/home"

SERVER=127.0.0.10
CLIENTS=()
for r in $(seq 0 $((DEAD_P - 1))); do CLIENTS+=("127.0.0.$((11 + r))"); done
declare -A SSHD_PID

# start_sshd ADDR PORT: an sshd on ADDR:PORT; 0 once it answers.
start_sshd() {
	local a=$1 port=$2 i
	ssh_test_config "$port" "$a" "sshd-$a" "SetEnv HOME=$T/home" >"$T/sshd-$a.conf"
	"$SSHD" -D -e -f "$T/sshd-$a.conf" 2>"$T/sshd-$a.log" &
	SSHD_PID[$a]=$!
	track $!
	for i in $(seq 1 50); do
		(exec 3<>"/dev/tcp/$a/$port") 2>/dev/null && return 0
		kill -0 "${SSHD_PID[$a]}" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# one port for every host: free on all of their addresses
port=""
for _ in 1 2 3 4 5 6 7 8; do
	p=$((20000 + RANDOM % 40000))
	ss -Htln "sport = :$p" 2>/dev/null | grep -q . && continue
	port=$p
	break
done
hosts_up() {
	local a
	for a in "$SERVER" "${CLIENTS[@]}"; do
		if [ -z "${SSHD_PID[$a]:-}" ] || ! kill -0 "${SSHD_PID[$a]}" 2>/dev/null; then
			start_sshd "$a" "$port" || { notok dead_host_ssh_sshd "sshd on $a:$port: $(tail -3 "$T/sshd-$a.log")"; return 1; }
		fi
	done
}
[ -n "$port" ] && hosts_up || finish
for a in "$SERVER" "${CLIENTS[@]}"; do echo "[$a]:$port $(cut -d' ' -f1,2 "$T/host_key.pub")"; done >"$T/known_hosts"
ok dead_host_ssh_hosts_up

cl=$(printf '"%s",' "${CLIENTS[@]}")
dead_run_config "$T/base.json"
jq --arg kh "$T/known_hosts" --arg id "$T/id" --arg user "$user" --argjson port "$port" \
	--arg bin "$OQB_BIN" --arg srv "$SERVER" --argjson cl "[${cl%,}]" '
	.hosts = { server: $srv, clients: $cl, launcher: "ssh", bin_dir: $bin, ctl_addr: "127.0.0.1",
		   ssh: { user: $user, port: $port, identity: $id, known_hosts: $kh,
			  options: ["ConnectTimeout=10"] } }' "$T/base.json" >"$T/ssh.json"

# one_case NAME HOST ROLE RANK: the run, HOST killed mid point 2, checks.
one_case() {
	local name=$1 host=$2 role=$3 rank=$4 out=$T/$1 shm0 tree left a
	shm0=$(shm_run_dirs)
	hosts_up || return
	local t0=$SECONDS
	TMPDIR=$T run_driver "$out" "$OQB_BIN/oqb" run "$T/ssh.json" --quiet
	if ! wait_point2 "$out" $((DEAD_P + 1)) 1200; then
		notok "${name}_point2_started" "point 2's processes did not all start: $(tail -5 "$out.err")"
		return
	fi
	# every process of point 2 is up below its sshd, then the point runs
	for _ in $(seq 1 600); do
		[ "$(roots_with_oqb "${SSHD_PID[@]}")" -ge $((DEAD_P + 1)) ] && break
		sleep 0.1
	done
	kill_mid_point "$name" "$out" "$host" "$role" "$rank" host tree_of "${SSHD_PID[$host]}" || return
	# the surviving hosts: nothing below their sshd (bounded poll: a
	# session's sshd ends a moment after its process)
	for _ in $(seq 1 100); do
		left=""
		for a in "$SERVER" "${CLIENTS[@]}"; do
			[ "$a" = "$host" ] && continue
			tree=$(tree_of "${SSHD_PID[$a]}" | grep -vx "${SSHD_PID[$a]}" | tr '\n' ' ')
			[ -n "$tree" ] && left="$left $a:[$tree]"
		done
		[ -z "$left" ] && break
		sleep 0.1
	done
	if [ -z "$left" ]; then ok "${name}_surviving_hosts_have_nothing_left"
	else notok "${name}_surviving_hosts_have_nothing_left" "below their sshd:$left"; fi
	# shellcheck disable=SC2009
	left=$(ps -eo pid=,args= | grep -F "$T/oqb-ssh" | grep -v grep)
	if [ -z "$left" ]; then ok "${name}_ssh_masters_ended"; else notok "${name}_ssh_masters_ended" "$left"; fi
	left=$(shm_left_since "$shm0")
	if [ -z "$left" ]; then ok "${name}_no_shm_left"; else notok "${name}_no_shm_left" "left in the shared-memory folder: $left"; fi
}

for c in ${DEAD_CASES:-client}; do
	case $c in
	client) r=$((DEAD_P > 1 ? 1 : 0)); one_case dead_ssh_client "${CLIENTS[$r]}" client "$r" ;;
	server) one_case dead_ssh_server "$SERVER" server 0 ;;
	esac
done
finish
