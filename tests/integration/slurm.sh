#!/usr/bin/env bash
# slurm.sh - the slurm launcher against real Slurm daemons on this host
# (tests/slurm/cluster.sh: private munged, slurmctld and one slurmd per
# node, on free ports, with a generated slurm.conf in $T).
#
# One node: `oqb run` of configs/tiny.json inside salloc and inside
# sbatch -W completes with status ok; a SIGINT to oqb mid-run (what Ctrl-C
# sends it) and a killed step (SIGKILL of the server's srun, and scancel of
# the server's step) end the run with a message naming the server, and
# leave no job, no step and no process of the cluster behind.  Two nodes
# (two slurmd on this host): the server on n1 and the clients on n2, then
# one client per node; run.json's hosts.processes must show the node each
# process itself reported, and a negative control shows the check can fail;
# shm across node names is refused for a node Slurm does not place on
# this machine.
# Every daemon is stopped by PID, in the EXIT trap too.  Packages missing
# or a cluster that cannot start: skip (under CI=true, where make deps
# installed them, a cluster that cannot start is a failure).
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/slurm/cluster.sh"
trap 'slurm_cluster_stop; cleanup_' EXIT

OQB=$OQB_BIN/oqb
SHM0=$(shm_run_dirs)   # what was in the shared-memory folder before
TINY=$ROOT/configs/tiny.json
# rerun_disturbed 0: these tests count the processes each placement
# starts; a trial rerun because the test cluster's nodes share two CPUs
# would add its own (reruns are trust.sh's to test)
SLURM_SET=(--set 'hosts.launcher="slurm"' --set 'rerun_disturbed=0' --quiet)
# a single point that runs long enough to be interrupted
LONG_SET=(--set 'systems=["oq"]' --set 'arrival.loads_ops=[2000]' --set 'duration_s=30')

# children PID: the PIDs whose parent is PID (from /proc, no fork per PID).
children() {
	local f st
	for f in /proc/[0-9]*/stat; do
		read -r st 2>/dev/null <"$f" || continue
		st=${st##*) }   # "STATE PPID ..."
		st=${st#* }
		if [ "${st%% *}" = "$1" ]; then f=${f#/proc/}; echo "${f%/stat}"; fi
	done
}

# wait_steps JOB N: until job JOB runs at least N steps (at most 20 s).
wait_steps() {
	local i
	for i in $(seq 1 200); do
		[ "$(squeue -h -s -j "$1" -o '%i' 2>/dev/null | grep -c .)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# salloc_bg NAME ARGS...: `salloc -N1 oqb run tiny ARGS` in the background;
# sets SA_PID (salloc), OQB_PID (oqb, its child), JOB and seen (the
# cluster's processes), once the server and both clients run as steps.
salloc_bg() {
	local name=$1 i
	shift
	salloc -N1 -t 2 "$OQB" run "$TINY" "${SLURM_SET[@]}" "${LONG_SET[@]}" --out "$T/$name" "$@" \
		>"$T/$name.out" 2>&1 &
	SA_PID=$!
	track "$SA_PID"
	OQB_PID="" JOB=""
	for i in $(seq 1 200); do
		[ -z "$OQB_PID" ] && OQB_PID=$(children "$SA_PID" | head -1)
		[ -z "$JOB" ] && JOB=$(squeue -h -o '%i' 2>/dev/null | head -1)
		[ -n "$OQB_PID" ] && [ -n "$JOB" ] && break
		sleep 0.1
	done
	[ -n "$OQB_PID" ] && [ -n "$JOB" ] && wait_steps "$JOB" 3 || return 1
	# and until their tasks run the server and both clients
	for i in $(seq 1 100); do
		seen=$(slurm_cluster_procs)
		grep -q 'oqb-server' <<<"$seen" && [ "$(grep -c 'oqb-client' <<<"$seen")" -ge 2 ] && return 0
		sleep 0.1
	done
	return 1
}

# wait_exit PID: its exit status, once it has exited (at most 30 s).
wait_exit() {
	local i
	for i in $(seq 1 300); do
		slurm_pid_alive "$1" || break
		sleep 0.1
	done
	wait "$1"
}

# ---------------------------------------------------------------- one node
slurm_test_cluster one n1
ok slurm_cluster_one

# salloc
if salloc -N1 -t 2 "$OQB" run "$TINY" "${SLURM_SET[@]}" --out "$T/salloc" >"$T/salloc.out" 2>&1; then
	ok salloc_run
else
	notok salloc_run "$(tail -5 "$T/salloc.out")"
fi
jcheck salloc_status_ok "$T/salloc/run.json" '.status == "ok" and (.points | length) == 4'
jcheck salloc_nodes_n1 "$T/salloc/run.json" \
	'(.hosts.processes | length) == 12 and all(.hosts.processes[]; .node == "n1")'

# sbatch -W: the job's exit status is sbatch's
cat >"$T/job.sh" <<EOF
#!/bin/sh
exec "$OQB" run "$TINY" --set 'hosts.launcher="slurm"' --set 'rerun_disturbed=0' --set 'systems=["oq"]' --quiet --out "$T/sbatch"
EOF
if sbatch -W -N1 -t 2 -o "$T/sbatch.out" "$T/job.sh" >"$T/sbatch.submit" 2>&1; then
	ok sbatch_run
else
	notok sbatch_run "$(cat "$T/sbatch.submit"; tail -5 "$T/sbatch.out")"
fi
jcheck sbatch_status_ok "$T/sbatch/run.json" \
	'.status == "ok" and (.points | length) == 2 and all(.hosts.processes[]; .node == "n1")'

# Ctrl-C: SIGINT to oqb (the driver) while the point runs
if salloc_bg sigint; then
	# negative control for slurm_nothing_left: the scan sees a running run
	# (oqb, its srun steps and the oqb-server and oqb-client they run)
	if grep -q "^$OQB_PID " <<<"$seen" && grep -q 'srun' <<<"$seen"; then
		ok sigint_scan_sees_run
	else
		notok sigint_scan_sees_run "the process scan missed oqb (pid $OQB_PID) or its server and clients: ${seen//$'\n'/; }"
	fi
	kill -INT "$OQB_PID"
	wait_exit "$SA_PID"
	rc=$?
	if [ "$rc" -ne 0 ]; then ok sigint_exit_nonzero; else notok sigint_exit_nonzero "salloc exited 0"; fi
	jcheck sigint_interrupted "$T/sigint/run.json" '.status == "interrupted"'
else
	notok sigint_started "oqb did not start its 3 steps in 20 s: $(tail -5 "$T/sigint.out")"
fi
slurm_nothing_left sigint "$T/sigint" "$SHM0"

# killed_step NAME CMD...: a long run whose server step is ended by CMD
# (eval'd with $SRUN_PID, the server's srun, and $STEP, its Slurm step:
# the job's first) must fail with status 5 (error: a process failed) and an error naming the server
# (the driver sees srun's exit or the closed control connection first),
# and leave nothing behind.
killed_step() {
	local name=$1 rc SRUN_PID STEP
	shift
	if salloc_bg "$name"; then
		SRUN_PID=$(awk -F'\t' '$3 == "server" { print $6 }' "$T/$name/processes.tsv")
		STEP=$(squeue -h -s -j "$JOB" -o '%i' | sort -t. -k2,2n | head -1)
		eval "$*"
		wait_exit "$SA_PID"
		rc=$?
		if [ "$rc" -eq 5 ]; then ok "${name}_exit_5"; else notok "${name}_exit_5" "salloc exited $rc"; fi
		jcheck "${name}_error" "$T/$name/run.json" \
			'.status == "failed" and .error.role == "server" and (.error.message | test(":server:0\\] "))'
		jq -r --arg n "$name" '"  \($n): " + .error.message' "$T/$name/run.json" >&2
	else
		notok "${name}_started" "oqb did not start its 3 steps in 20 s: $(tail -5 "$T/$name.out")"
	fi
	slurm_nothing_left "$name" "$T/$name" "$SHM0"
}
killed_step srunkill 'kill -KILL "$SRUN_PID"'
killed_step scancel 'scancel "$STEP"'
slurm_cluster_stop

# ---------------------------------------------------------------- two nodes
slurm_test_cluster two n1 n2
ok slurm_cluster_two
TWO_SET=(--set 'hosts.ctl_addr="127.0.0.1"' --set 'systems=["oq"]' --set 'hosts.server="n1"')

# the server on n1, both clients on n2
if salloc -N2 -t 2 "$OQB" run "$TINY" "${SLURM_SET[@]}" "${TWO_SET[@]}" --set 'hosts.clients=["n2"]' \
	--out "$T/split" >"$T/split.out" 2>&1; then
	ok split_run
else
	notok split_run "$(tail -5 "$T/split.out")"
fi
SPLIT='(.hosts.processes | length) == 6 and
	all(.hosts.processes[] | select(.role == "server"); .node == "n1") and
	all(.hosts.processes[] | select(.role == "client"); .node == "n2")'
jcheck split_status_ok "$T/split/run.json" '.status == "ok"'
jcheck split_placement "$T/split/run.json" "$SPLIT"
for f in "$T"/split/p*/client-*.json; do
	jcheck "split_result_$(basename "$(dirname "$f")")_$(basename "$f" .json)" "$f" '.node == "n2"'
done
# negative control: the one-node run (everything on n1) fails the same check
if jq -e "$SPLIT" "$T/salloc/run.json" >/dev/null 2>&1; then
	notok split_placement_can_fail "the placement check passed on a run where every process ran on n1"
else
	ok split_placement_can_fail
fi

# shm across node names is accepted only for nodes Slurm puts on one
# machine: a node it does not know is refused before anything starts
salloc -N2 -t 2 "$OQB" run "$TINY" "${SLURM_SET[@]}" "${TWO_SET[@]}" --set 'hosts.clients=["n9"]' \
	--out "$T/n9" >"$T/n9.out" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'transport "shm" runs on one machine' "$T/n9.out"; then
	ok shm_unknown_node_refused
else
	notok shm_unknown_node_refused "exit $rc: $(tail -3 "$T/n9.out")"
fi

# one client per node: rank r runs on hosts.clients[r % 2]
if salloc -N2 -t 2 "$OQB" run "$TINY" "${SLURM_SET[@]}" "${TWO_SET[@]}" --set 'hosts.clients=["n1","n2"]' \
	--set 'arrival.loads_ops=[5000]' --out "$T/spread" >"$T/spread.out" 2>&1; then
	ok spread_run
else
	notok spread_run "$(tail -5 "$T/spread.out")"
fi
jcheck spread_placement "$T/spread/run.json" '.status == "ok" and (.hosts.processes | length) == 3 and
	all(.hosts.processes[] | select(.role == "client"); .node == (["n1", "n2"][.rank % 2])) and
	all(.hosts.processes[] | select(.role == "server"); .node == "n1")'
slurm_nothing_left two "$T/spread" "$SHM0"

slurm_cluster_stop
alive=""
for p in "${SLURM_PIDS_ALL[@]}"; do slurm_pid_alive "$p" && alive="$alive $p"; done
if [ -z "$alive" ]; then ok daemons_stopped; else notok daemons_stopped "still running:$alive"; fi
finish
