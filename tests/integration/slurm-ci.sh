#!/usr/bin/env bash
# slurm-ci.sh - hosts from the Slurm allocation and the CI job script
# (configs/ci/oqb-gate.sbatch), in the private test cluster of
# tests/slurm/cluster.sh (two slurmd, n1 and n2, on this host).
#
#  - hosts.from "slurm" inside `salloc -N2`: an shm run puts the server and
#    both clients on the allocation's first node (n1), and on n2 when
#    hosts.server names it: run.json's hosts.processes show the node each
#    process itself reported; a verbs plan (--dry-run) puts the server on
#    n1 and the clients on n2; outside an allocation, and with a malformed
#    SLURM_JOB_NODELIST, the run is refused naming the fix; `oqb doctor`
#    takes the same hosts.
#  - the job script as written, submitted with `sbatch -W -N2` (make
#    test-long, SLURM_CI_GATE=1; about 20 s): the shm
#    gate (A/A, shortened through OQB_AB_ARGS, its noise limit out of
#    reach) runs every process and the noise pre-check on n1 only, and
#    sbatch exits with the gate's status (ab.json's exit_status: same or
#    inconclusive), the summary written; the builds staged with sbcast
#    (OQB_STAGE) are the ones gated.
#  - the verbs gate: the noise pre-check runs on both tested nodes (a
#    stand-in oqb-floor records where it ran); n1's canary is steady and
#    n2's spreads x2, so the gate is too noisy to judge, naming n2, and
#    the job exits 4, the gate's status, with the summary listing each
#    node's canary; a NEW build whose oqb-client on n2 is another build is
#    refused before anything runs (exit 2, naming n2).
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/slurm/cluster.sh"
trap 'slurm_cluster_stop; cleanup_' EXIT

OQB=$OQB_BIN/oqb
SHM0=$(shm_run_dirs)
TINY=$ROOT/configs/tiny.json
SET=(--set 'hosts.from="slurm"' --set 'hosts.ctl_addr="127.0.0.1"' --set 'rerun_disturbed=0'
     --set 'systems=["oq"]' --set 'arrival.loads_ops=[5000]' --quiet)

# refused before any cluster: no allocation, a malformed list
env -u SLURM_JOB_NODELIST -u SLURM_JOB_ID "$OQB" run "$TINY" "${SET[@]}" --dry-run >"$T/noalloc.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q 'hosts.from is "slurm" but SLURM_JOB_NODELIST is not set: run oqb inside an allocation' "$T/noalloc.out"; then
	ok from_slurm_outside_allocation_refused
else
	notok from_slurm_outside_allocation_refused "exit $rc: $(tail -3 "$T/noalloc.out")"
fi
SLURM_JOB_NODELIST='n[1-2' "$OQB" run "$TINY" "${SET[@]}" --set 'hosts.launcher="ssh"' --dry-run >"$T/badlist.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q 'SLURM_JOB_NODELIST "n\[1-2": a .\[. without its .\]' "$T/badlist.out"; then
	ok from_slurm_malformed_list_refused
else
	notok from_slurm_malformed_list_refused "exit $rc: $(tail -3 "$T/badlist.out")"
fi

# sbatch --wait reads the job's exit status from slurmctld's record of
# it; cluster.sh's MinJobAge=2 can purge that record before sbatch's next
# poll (it then said 0 for a job that exited 5): keep records for 60 s,
# as a real cluster does (default 300)
SLURM_CONF_EXTRA="MinJobAge=60"
slurm_test_cluster ci n1 n2
ok slurm_cluster_ci
age=$(scontrol show config | awk '$1 == "MinJobAge" { print $3 }')
[ "$age" = 60 ] && ok slurm_min_job_age_60 || notok slurm_min_job_age_60 "scontrol says MinJobAge ${age:-?}"

# ---------------------------------------------------------------- placement
place() {   # place NAME ARGS...: oqb run tiny in salloc -N2; sets RC
	local name=$1
	shift
	salloc -N2 -t 2 "$OQB" run "$TINY" "${SET[@]}" --out "$T/$name" "$@" >"$T/$name.out" 2>&1
	RC=$?
}
place first
[ $RC -eq 0 ] && ok from_slurm_run || notok from_slurm_run "exit $RC: $(tail -5 "$T/first.out")"
jcheck from_slurm_shm_on_first_node "$T/first/run.json" '.status == "ok" and .hosts.server == "n1" and
	.hosts.clients == ["n1"] and (.hosts.processes | length) == 3 and all(.hosts.processes[]; .node == "n1")'
place named --set 'hosts.server="n2"'
jcheck from_slurm_server_named "$T/named/run.json" '.status == "ok" and (.hosts.processes | length) == 3 and
	all(.hosts.processes[]; .node == "n2")'
# negative control: the first run fails the second's check
if jq -e 'all(.hosts.processes[]; .node == "n2")' "$T/first/run.json" >/dev/null 2>&1; then
	notok from_slurm_check_can_fail "the n2 check passed on a run on n1"
else
	ok from_slurm_check_can_fail
fi
place vplan --set 'transport="verbs"' --set 'clients.processes=2' --dry-run
if [ $RC -eq 0 ] && grep -q '^  server 0 on n1: srun ' "$T/vplan.out" && grep -q '^  client 0 on n2: srun ' "$T/vplan.out" &&
	grep -q '^  client 1 on n2: ' "$T/vplan.out" && grep -q -- '--addr n1 ' "$T/vplan.out"; then
	ok from_slurm_verbs_clients_on_other_nodes
else
	notok from_slurm_verbs_clients_on_other_nodes "exit $RC: $(grep -E '^  (server|client)|oqb' "$T/vplan.out" | cut -c1-120 | head -5)"
fi
salloc -N2 -t 2 "$OQB" doctor "$TINY" "${SET[@]:0:4}" >"$T/doctor.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -qE '^n1 +reachable +PASS' "$T/doctor.out"; then
	ok doctor_from_slurm
else
	notok doctor_from_slurm "exit $rc: $(tail -8 "$T/doctor.out")"
fi
slurm_nothing_left place "$T/named" "$SHM0"

# ---------------------------------------------------------------- the job script
export OQB_CONFIGS=$ROOT/configs
# the A/B gate itself, A/A with this build on both sides, shortened and
# staged to node-local paths: about 20 s, so make test-long's
# (SLURM_CI_GATE=1, tests/long.list); the cheaper cases below run the
# same script in make test
if [ "${SLURM_CI_GATE:-0}" = 1 ]; then
	export OQB_BASE=$OQB_BIN OQB_NEW=$OQB_BIN OQB_GATES=shm OQB_OUT=$T/gate OQB_STAGE=$T/stage
	# (the noise limit is out of reach: this host's noise is not what is tested)
	export OQB_AB_ARGS='--trials 2 --max-trials 2 --noise-retries 0 --noise-limit 1e6 --set systems=["oq"] --set arrival.loads_ops=[5000] --set duration_s=0.3 --set warmup_s=0.1 --set rerun_disturbed=0 --set hosts.ctl_addr="127.0.0.1" --quiet'
	sbatch -W -N2 -t 5 -o "$T/gate.log" "$ROOT/configs/ci/oqb-gate.sbatch" >"$T/gate.submit" 2>&1
	rc=$?
	code=$(jq -r .exit_status "$T/gate/shm/ab.json" 2>/dev/null)
	if [ "$rc" = "$code" ] && { [ "$rc" = 0 ] || [ "$rc" = 3 ]; }; then
		ok "gate_job_exits_with_the_gate_status (exit $rc: $(jq -r .verdict "$T/gate/shm/ab.json"))"
	else
		notok gate_job_exits_with_the_gate_status "sbatch exit $rc, ab.json exit_status ${code:-none}: $(tail -5 "$T/gate.log")"
	fi
	jcheck gate_staged_builds "$T/gate/shm/ab.json" ".sides.new.bin == \"$T/stage/new\" and .sides.base.bin == \"$T/stage/base\""
	jcheck gate_noise_on_tested_node "$T/gate/shm/ab.json" '[.noise.before.hosts[].host] == ["n1"]'
	n=0 bad=""
	for f in "$T"/gate/shm/r*-*/run.json; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		jq -e 'all(.hosts.processes[]; .node == "n1") and .hosts.launcher == "slurm"' "$f" >/dev/null || bad="$bad $f"
	done
	if [ $n -ge 4 ] && [ -z "$bad" ] ; then ok "gate_shm_tied_to_one_node ($n runs)"
	else notok gate_shm_tied_to_one_node "$n runs; not all on n1:$bad"; fi
	if grep -q "^## oqb ab: shm gate .*, exit $rc" "$T/gate/summary.md" 2>/dev/null; then ok gate_summary_written
	else notok gate_summary_written "$(head -3 "$T/gate/summary.md" 2>&1)"; fi
	slurm_nothing_left gate "$T/gate/shm/r01-new" "$SHM0"
fi

# the verbs gate: a stand-in oqb-floor records the node it ran on, and
# reads a steady 100 ns on n1 but 100 and 200 ns in turn on n2: the
# server's node is calm, a client node is not, and the gate must say so
mkdir -p "$T/vbin"
for p in oqb oqb-server oqb-client oqb-vfloor; do ln -s "$OQB_BIN/$p" "$T/vbin/$p"; done
cat >"$T/vbin/oqb-floor" <<SH
#!/bin/sh
n=\$(cat "$T/floor-nodes" 2>/dev/null | wc -l)
echo "\${SLURMD_NODENAME:-none}" >>"$T/floor-nodes"
p50=100
[ "\${SLURMD_NODENAME:-}" = n2 ] && p50=\$((100 + 100 * (n % 2)))
echo "{\"rtt_ns\": {\"p50\": \$p50}, \"rounds\": 1000}"
SH
chmod +x "$T/vbin/oqb-floor"
export OQB_BASE=$T/vbin OQB_NEW=$T/vbin OQB_GATES=verbs OQB_OUT=$T/vgate OQB_AB_ARGS='--noise-retries 0'
unset OQB_STAGE
sbatch -W -N2 -t 5 -o "$T/vgate.log" "$ROOT/configs/ci/oqb-gate.sbatch" >"$T/vgate.submit" 2>&1
rc=$?
code=$(jq -r .exit_status "$T/vgate/verbs/ab.json" 2>/dev/null)
if [ $rc -eq 4 ] && [ "$code" = 4 ] && grep -q 'spread by x2.00 on n2 (limit x1.5)' "$T/vgate.log"; then
	ok "verbs_gate_noisy_client_node_exits_4"
else
	notok verbs_gate_noisy_client_node_exits_4 "sbatch exit $rc, ab.json ${code:-none}: $(grep -v '^ ' "$T/vgate.log" | tail -4)"
fi
nodes=$(sort "$T/floor-nodes" 2>/dev/null | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')
if [ "$nodes" = "n1:5 n2:5 " ]; then ok "verbs_gate_noise_on_both_tested_nodes ($nodes)"
else notok verbs_gate_noise_on_both_tested_nodes "oqb-floor ran on: ${nodes:-nowhere}"; fi
jcheck verbs_gate_noise_hosts_listed "$T/vgate/verbs/ab.json" '[.noise.before.hosts[].host] == ["n1", "n2"] and
	.noise.before.worst_spread == 2 and .noise.before.spread == 1'
if grep -q "^## oqb ab: verbs gate .*, exit 4" "$T/vgate/summary.md" 2>/dev/null &&
	grep -q "^Canary before, on each tested host: n1 100 ns (spread x1.00), n2 200 ns (spread x2.00)" "$T/vgate/summary.md"; then
	ok verbs_gate_summary_written
else notok verbs_gate_summary_written "$(head -8 "$T/vgate/summary.md" 2>&1)"; fi

# NEW whose oqb-client on n2 is another build: refused before anything runs
mkdir -p "$T/nbin"
for p in oqb oqb-server oqb-floor oqb-vfloor; do ln -s "$OQB_BIN/$p" "$T/nbin/$p"; done
cat >"$T/nbin/oqb-client" <<SH
#!/bin/sh
if [ "\$1" = --build-info ] && [ "\${SLURMD_NODENAME:-}" = n2 ]; then
	echo '{"build_id": "0000000000sta1e", "program": "oqb-client", "transports": {"shm": {}, "verbs": {}}}'
	exit 0
fi
exec "$OQB_BIN/oqb-client" "\$@"
SH
chmod +x "$T/nbin/oqb-client"
export OQB_BASE=$OQB_BIN OQB_NEW=$T/nbin OQB_OUT=$T/ngate
sbatch -W -N2 -t 5 -o "$T/ngate.log" "$ROOT/configs/ci/oqb-gate.sbatch" >"$T/ngate.submit" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -qF "oqb ab: --new ($T/nbin): the processes of this run do not share one build: oqb-server on n1" "$T/ngate.log" &&
	grep -q "oqb-client on n2 (bin_dir $T/nbin) is build 0000000000sta1e" "$T/ngate.log"; then
	ok gate_refuses_other_build_on_a_host
else
	notok gate_refuses_other_build_on_a_host "sbatch exit $rc: $(grep -v '^ ' "$T/ngate.log" | tail -3)"
fi
unset OQB_BASE OQB_NEW OQB_GATES OQB_OUT OQB_CONFIGS OQB_AB_ARGS

slurm_cluster_stop
finish
