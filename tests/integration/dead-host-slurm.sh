#!/usr/bin/env bash
# dead-host-slurm.sh - a node lost in the middle of a point, under the
# slurm launcher (issue 39; docs/driver.md, "When a host is lost").
#
# A private Slurm cluster on this machine (tests/slurm/cluster.sh), one
# slurmd per node name: the server on n1, client process r alone on
# n(r+2), as slurm-scale.sh places them.  Every node is this machine, so
# the transport is shm.  For each case a fresh `salloc oqb run` of the
# two-point run of tests/dead-host-lib.sh; in the middle of its 60 s
# point, one node is killed: its slurmd, and every process of that node
# (the step's slurmstepd and the benchmark process below it) with SIGKILL
# at once.
#   client  the node of client process 1 (or 0 with one client)
#   server  the server's node, n1
# Checked (check_dead_run): exit 5 (error) within DEAD_BOUND_S of the kill, ONE
# error message naming the node and saying it is lost, run.json with the
# error (host_lost) and the finished point, no process of the run left;
# then, with the cluster's SlurmdTimeout short (a lab's is minutes),
# Slurm marks the node down and no job, step or process of the run is
# left, and nothing new is in the shared-memory folder
# (slurm_nothing_left).  The killed node's slurmd is started again before
# the next case (a rebooted node).
#
# DEAD_P, DEAD_TH, DEAD_W: client nodes, threads, workers (make test: 2 x
# 2 x 2; make test-dead-hosts: 8 x 24 x 18).  DEAD_CASES: make test
# "server" (dead-host-ssh.sh kills a client host); make test-dead-hosts
# "client server".
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/slurm/cluster.sh"
. "$ROOT/tests/dead-host-lib.sh"
trap 'slurm_cluster_stop; cleanup_' EXIT
DEAD_P=${DEAD_P:-2} DEAD_TH=${DEAD_TH:-2} DEAD_W=${DEAD_W:-2}
BOUND=${DEAD_BOUND_S:-30}

NODES=()
for i in $(seq 1 $((DEAD_P + 1))); do NODES+=("n$i"); done
# slurmctld gives up on a silent node after SlurmdTimeout (300 s by
# default) and on one message to it after MessageTimeout (10 s); here 6
# and 5 s, so the test sees the end of the story (the job of the lost
# node ended) in about 10-15 s (3 s made scontrol fail at load 90)
SLURM_CONF_EXTRA="SlurmdTimeout=6
MessageTimeout=5"
slurm_test_cluster dead "${NODES[@]}"
ok dead_host_slurm_cluster_up

cl=$(printf '"%s",' "${NODES[@]:1}")
dead_run_config "$T/base.json"
jq --arg bin "$OQB_BIN" --argjson cl "[${cl%,}]" '
	.hosts = { server: "n1", clients: $cl, launcher: "slurm", bin_dir: $bin, ctl_addr: "127.0.0.1" }' \
	"$T/base.json" >"$T/slurm.json"

# slurmd_pid NODE: the PID of NODE's slurmd (SLURM_PIDS: munged,
# slurmctld, then one slurmd per node in order)
slurmd_pid() {
	local i
	for i in "${!NODES[@]}"; do
		[ "${NODES[$i]}" = "$1" ] && echo "${SLURM_PIDS[$((i + 2))]}"
	done
}

# on_nodes: "PID NODE" for every process whose environment names the Slurm
# node it runs on (SLURMD_NODENAME: a step's tasks), in one pass of grep
on_nodes() {
	grep -a -z -H '^SLURMD_NODENAME=' /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' |
		sed -n 's|^/proc/\([0-9]*\)/environ:SLURMD_NODENAME=\(.*\)$|\1 \2|p'
}

# node_procs NODE: NODE's slurmd, every process that runs on NODE, the
# slurmstepd above each, and everything below those.
node_procs() {
	local node=$1 pid pp roots
	roots=$(slurmd_pid "$node")
	for pid in $(on_nodes | awk -v n="$node" '$2 == n { print $1 }'); do
		roots="$roots $pid"
		pp=$(ps -o ppid= -p "$pid" | tr -d ' ')
		[ -n "$pp" ] && [ "$(ps -o comm= -p "$pp" 2>/dev/null)" = slurmstepd ] && roots="$roots $pp"
	done
	tree_of $roots
}

# restart_node NODE: its slurmd again, and idle (a rebooted node)
restart_node() {
	local node=$1 i
	for i in "${!NODES[@]}"; do
		[ "${NODES[$i]}" = "$node" ] || continue
		setsid slurmd -D -N "$node" -f "$SLURM_CONF" </dev/null >>"$SLURM_DIR/log/slurmd-$node.out" 2>&1 &
		SLURM_PIDS[$((i + 2))]=$!
	done
	scontrol update nodename="$node" state=resume >/dev/null 2>&1
	slurm_poll 300 slurm_nodes_idle "${#NODES[@]}"
}

one_case() {
	local name=$1 node=$2 role=$3 rank=$4 out=$T/$1 shm0 n
	shm0=$(shm_run_dirs)
	local t0=$SECONDS
	run_driver "$out" salloc -N${#NODES[@]} -t 10 "$OQB_BIN/oqb" run "$T/slurm.json" --quiet
	if ! wait_point2 "$out" $((DEAD_P + 1)) 1200; then
		notok "${name}_point2_started" "point 2's processes did not all start: $(tail -5 "$out.err")"
		return
	fi
	# every process of point 2 is running on its node, then the point runs
	for _ in $(seq 1 600); do
		n=$(join <(on_nodes | sort) <(ps -eo pid=,comm= | awk '$2 ~ /^oqb-/ { print $1 }' | sort) |
			awk '{ print $2 }' | sort -u | wc -l)
		[ "$n" -ge ${#NODES[@]} ] && break
		sleep 0.1
	done
	kill_mid_point "$name" "$out" "$node" "$role" "$rank" node node_procs "$node" || return
	# Slurm ends the job once it has marked the node down
	t0=$(now)
	slurm_nothing_left "$name" "$out" "$shm0" 400
	echo "# $name: Slurm clean (no job, step or process) $(secs "$t0" "$(now)") s after the driver's exit; node $node: $(sinfo -h -N -n "$node" -o '%t' 2>&1)"
}

CASES=(${DEAD_CASES:-server})
for i in "${!CASES[@]}"; do
	[ "$i" -gt 0 ] && { restart_node "$LAST_NODE" || notok "dead_slurm_node_back" "$LAST_NODE did not come back: $(sinfo -h -N -o '%N %t' | tr '\n' ' ')"; }
	case ${CASES[$i]} in
	client) r=$((DEAD_P > 1 ? 1 : 0)); LAST_NODE=${NODES[$((r + 1))]}; one_case dead_slurm_client "$LAST_NODE" client "$r" ;;
	server) LAST_NODE=n1; one_case dead_slurm_server n1 server 0 ;;
	esac
done
finish
