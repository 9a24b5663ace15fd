#!/usr/bin/env bash
# driver-badconfig.sh - `oqb run` refuses bad configs before it starts
# anything: the message names the file, the field and the fix (with a
# suggestion for a misspelt key), the exit status is 2, and no results
# directory or process appears.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BASE=$ROOT/configs/tiny.json


refused unknown_key '.server.wokers = 2' "$T/unknown_key.json" server.wokers 'did you mean "workers"'
refused unknown_top_key '.duraton_s = 2' duraton_s 'did you mean "duration_s"'
refused wrong_type '.duration_s = "long"' duration_s number string
refused bad_system '.systems = ["oq", "rawrpcc"]' 'systems[1]' rawrpcc 'did you mean "rawrpc"'
refused duplicate_system '.systems = ["oq", "oq"]' 'systems[1]' twice
refused write1_on_shm '.systems = ["oq", "write1"] | .transport = "shm"' 'systems[1]' 'runs only over transport verbs' 'set "transport": "verbs"'
refused empty_sweep '.arrival.loads_ops = []' loads_ops
refused load_not_number '.arrival.loads_ops = [1000, "fast"]' 'loads_ops[1]' fast
refused missing_required 'del(.workload)' workload
refused workload_key '.workload.put_ratoi = 0.5' put_ratoi 'did you mean "put_ratio"'
refused workload_kind '.workload.kind = "kvv"' kvv 'did you mean "kv"'
refused backend_mismatch '.server.backend.service_ns = 100' service_ns cache
refused shm_two_hosts '.hosts = {server: "127.0.0.1", clients: ["10.0.0.2"]}' 10.0.0.2 shm
refused local_remote_host '.transport = "verbs" | .hosts = {server: "10.0.0.1"}' 10.0.0.1 launcher
refused check_null_backend '.server.backend = {kind: "null"} | .history = true | .check = true' \
	check 'backend "null", which keeps no data' 'use kind "cache"'
refused ssh_no_hostkey_check '.hosts = {launcher: "ssh", ssh: {options: ["StrictHostKeyChecking=no"]}}' \
	StrictHostKeyChecking known_hosts
refused bad_name '.name = "a b"' name letters
refused drain_past_grace '.timeouts = {grace_s: 5, drain_s: 5}' timeouts.drain_s timeouts.grace_s 'raise grace_s'

# slurm outside an allocation
jq '.hosts = {launcher: "slurm"}' "$BASE" >"$T/slurm.json"
out=$(env -u SLURM_JOB_ID "$OQB_BIN/oqb" run "$T/slurm.json" --out "$T/out-slurm" 2>&1)
rc=$?
if [ $rc -eq 2 ] && [[ $out == *SLURM_JOB_ID* ]] && [[ $out == *salloc* ]]; then ok slurm_needs_allocation
else notok slurm_needs_allocation "rc=$rc: $out"; fi

# files that are not configs
out=$("$OQB_BIN/oqb" run "$T/no-such.json" 2>&1)
rc=$?
if [ $rc -eq 2 ] && [[ $out == *"$T/no-such.json"* ]] && [[ $out == *"No such file"* ]]; then ok missing_file
else notok missing_file "rc=$rc: $out"; fi
printf '{"name": "x",}\n' >"$T/comma.json"
out=$("$OQB_BIN/oqb" run "$T/comma.json" 2>&1)
rc=$?
if [ $rc -eq 2 ] && [[ $out == *"comma.json:1:"* ]]; then ok not_json
else notok not_json "rc=$rc: $out"; fi

# command line
out=$("$OQB_BIN/oqb" run --otu x 2>&1)
rc=$?
if [ $rc -eq 2 ] && [[ $out == *"--out"* ]]; then ok unknown_option; else notok unknown_option "rc=$rc: $out"; fi
out=$("$OQB_BIN/oqb" rn 2>&1)
rc=$?
if [ $rc -eq 2 ] && [[ $out == *'did you mean "run"'* ]]; then ok unknown_command; else notok unknown_command "rc=$rc: $out"; fi

# The good config passes --dry-run and starts nothing.
out=$("$OQB_BIN/oqb" run "$BASE" --dry-run 2>&1)
rc=$?
if [ $rc -eq 0 ] && [[ $out == *"oqb-server"* ]] && [[ $out == *"--rate"* ]]; then ok dry_run
else notok dry_run "rc=$rc: $out"; fi

finish
