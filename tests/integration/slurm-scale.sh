#!/usr/bin/env bash
# slurm-scale.sh - the paper's testbed shape under Slurm: a private cluster
# of 9 slurmd nodes on this host (tests/slurm/cluster.sh), and `oqb run`
# with the slurm launcher placing one process per node as on the paper's
# 9 machines: the server (18 workers) alone on n1, client process r
# (24 threads) alone on n(r+2), 8 of them.
#
# The run is configs/fig6-echo.json (null backend, closed loop, one
# request in flight per client thread) over shm, which the launcher allows
# across node names Slurm places on this one machine, with the config's own
# sweep: 64 B and 1 KiB echoes, Figs 6(a) and 6(b).  (Client-side
# delegation, which the verbs scale test sweeps, shares RDMA QPs: the
# driver refuses it on shm.)  192 client threads and 18 workers poll on
# this machine's CPUs, so they nap when idle (lib/idle.h), trials are not
# rerun (rerun_disturbed 0: every trial is disturbed) and no latency of it
# means anything (docs/scale.md); nothing here reads one.
#
# Checks: status ok with two points; every client thread connected; every
# request committed or accounted for (none unanswered, no errors, none
# rejected, executed >= committed); run.json's hosts.processes shows each
# client on its own node and the server alone on n1, from the node each
# process reported (SLURMD_NODENAME), and the same check fails on copies
# of run.json with two clients on one node and with a client on the
# server's node (negative controls); no job, step or process of the run or
# the cluster is left, nothing in the shared-memory folder, and every
# daemon is stopped.  Prints the measured figures as "# ..." lines.
# Packages missing: skip (under CI=true a cluster that cannot start is a
# failure).
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/slurm/cluster.sh"
trap 'slurm_cluster_stop; cleanup_' EXIT

P=8 TH=24 W=18
NODES=(n1 n2 n3 n4 n5 n6 n7 n8 n9)
SHM0=$(shm_run_dirs)
# since T0: seconds since a `date +%s.%N` stamp
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }

t0=$(date +%s.%N)
slurm_test_cluster nine "${NODES[@]}"
echo "# cluster of ${#NODES[@]} slurmd nodes idle after $(since "$t0") s"
ok slurm_scale_cluster

clients=$(printf '"%s",' "${NODES[@]:1}")
R=$T/run/run.json
t0=$(date +%s.%N)
# a run past its bound gets SIGINT (Ctrl-C: oqb stops every step)
salloc -N${#NODES[@]} -t 10 timeout -s INT -k 10 "${OQB_SLURM_SCALE_RUN_S:-300}" \
	"$OQB_BIN/oqb" run "$ROOT/configs/fig6-echo.json" --out "$T/run" --quiet \
	--set 'hosts.launcher="slurm"' --set 'hosts.ctl_addr="127.0.0.1"' \
	--set 'hosts.server="n1"' --set "hosts.clients=[${clients%,}]" \
	--set server.workers=$W --set clients.processes=$P --set clients.threads=$TH \
	--set 'arrival.outstanding=[1]' --set duration_s=1 --set warmup_s=0.3 \
	--set rerun_disturbed=0 --set canary=false \
	--set 'idle={"nap_us":500,"spin_us":200}' --set 'timeouts={"hello_s":120,"grace_s":60}' \
	>"$T/run.out" 2>&1
rc=$?
took=$(since "$t0")
if [ $rc -ne 0 ] || [ ! -s "$R" ]; then
	notok slurm_scale_run "salloc -N${#NODES[@]} oqb run at $P x $TH x $W exited $rc after $took s: $(tail -8 "$T/run.out")"
	slurm_nothing_left slurm_scale "$T/run" "$SHM0"
	finish
fi
ok slurm_scale_run

jcheck slurm_scale_two_points_ok "$R" \
	'.status == "ok" and (.points | length) == 2 and ([.points[].sweep.value] | sort) == [64, 1024]'
jcheck slurm_scale_every_thread_connected "$R" 'all(.points[]; (.clients | length) == '$P' and
	([.clients[].threads] | add) == '$((P * TH))' and .server.workers == '$W')'
jcheck slurm_scale_nothing_lost "$R" 'all(.points[]; .committed > 0 and .unanswered == 0 and .errors == 0 and
	.server.rejected == 0 and .server.executed >= .committed)'
jcheck slurm_scale_idle_recorded "$R" 'all(.points[]; .server.idle.mode == "nap")'

# Placement, from the node each process reported: per point, one server on
# n1, the 8 clients on 8 distinct nodes, none of them n1, client r on
# hosts.clients[r].
PLACED='. as $r | ([.hosts.processes[].point] | unique) as $pts | ($pts | length) == 2 and
	(.hosts.processes | length) == 2 * '$((P + 1))' and
	all($pts[]; . as $p | [$r.hosts.processes[] | select(.point == $p)] as $rows |
		([$rows[] | select(.role == "server") | .node] == ["n1"]) and
		([$rows[] | select(.role == "client") | .node] as $c |
			($c | length) == '$P' and ($c | unique | length) == '$P' and all($c[]; . != "n1")) and
		all($rows[] | select(.role == "client"); .node == $r.hosts.clients[.rank]))'
jcheck slurm_scale_one_process_per_node "$R" "$PLACED"
# negative controls: the same check on copies of run.json with client 1
# on client 0's node, and with client 0 on the server's node
placement_can_fail() {
	local name=$1 edit=$2
	if ! jq "$edit" "$R" >"$T/$name.json" 2>"$T/$name.err"; then
		notok "$name" "jq edit failed: $(cat "$T/$name.err")"
	elif ! jq -e "$PLACED" "$R" >/dev/null 2>&1; then
		notok "$name" "the check fails on the real run.json already"
	elif jq -e "$PLACED" "$T/$name.json" >/dev/null 2>&1; then
		notok "$name" "the placement check passed on $edit"
	else
		ok "$name"
	fi
}
placement_can_fail slurm_scale_two_clients_on_one_node_fail \
	'(.hosts.processes[] | select(.role == "client" and .rank == 1) | .node) = "n2"'
placement_can_fail slurm_scale_client_on_server_node_fails \
	'(.hosts.processes[] | select(.role == "client" and .rank == 0) | .node) = "n1"'
# the per-process results (pNN-.../client-R.json) carry the node too
n=0 bad=""
for f in "$T"/run/p*/client-*.json; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	r=$(basename "$f" .json)
	[ "$(jq -r .node "$f")" = "n$((${r#client-} + 2))" ] || bad="$bad $f:$(jq -r .node "$f")"
done
if [ "$n" -eq $((2 * P)) ] && [ -z "$bad" ]; then ok slurm_scale_results_name_their_node
else notok slurm_scale_results_name_their_node "$n client results (want $((2 * P))), on the wrong node:$bad"; fi

slurm_nothing_left slurm_scale "$T/run" "$SHM0"

# ---- the figures (printed, never asserted) ------------------------------
echo "# salloc -N${#NODES[@]} oqb run at $P processes x $TH threads x $W workers, both points: $took s"
jq -r '.points[] | "# point value_size=\(.sweep.value): driver_s \(.driver_s | tostring), committed \(.committed), "
	+ "client connect: slowest process \((([.clients[].connect_ns.total] | max) / 1e7 | round) / 100) s"' "$R"
echo "# run.json: $(du -k "$R" | cut -f1) KiB"

t0=$(date +%s.%N)
slurm_cluster_stop
echo "# cluster stopped in $(since "$t0") s"
alive=""
for p in "${SLURM_PIDS_ALL[@]}"; do slurm_pid_alive "$p" && alive="$alive $p"; done
if [ -z "$alive" ]; then ok slurm_scale_daemons_stopped; else notok slurm_scale_daemons_stopped "still running:$alive"; fi
finish
