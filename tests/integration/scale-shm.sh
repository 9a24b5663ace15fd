#!/usr/bin/env bash
# scale-shm.sh - the paper's testbed shape on shm, on this machine: one
# server with 18 workers and 8 client processes x 24 threads (192 client
# threads; with the workers, 210 polling threads on this machine's CPUs),
# configs/fig6-echo.json's closed loop with one request in flight per
# thread, idle threads napping (lib/idle.h).  docs/scale.md says what such
# a run can mean: every client thread connects to every worker's ring,
# every request is committed or accounted for, and the run ends cleanly,
# with nothing left running and no file left in the shared-memory folder.
# No latency of it means anything, and nothing here reads one.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
OUT=$T/run
P=8 TH=24 W=18

shm_before=$(shm_run_dirs)
t0=$SECONDS
if ! "$OQB_BIN/oqb" run "$ROOT/configs/fig6-echo.json" --out "$OUT" --quiet \
	--set server.workers=$W --set clients.processes=$P --set clients.threads=$TH \
	--set 'arrival.outstanding=[1]' --set sweep=null --set workload.value_size=64 \
	--set duration_s=1 --set warmup_s=0.3 --set rerun_disturbed=0 --set canary=false \
	--set 'idle={"nap_us":500,"spin_us":200}' --set 'timeouts={"hello_s":120,"grace_s":60}' \
	>"$T/out" 2>&1; then
	notok scale_shm_run "oqb run at $P x $TH x $W on shm failed after $((SECONDS - t0)) s: $(tail -5 "$T/out")"
	finish
fi
ok scale_shm_run
echo "# shm at $P processes x $TH threads x $W workers: $((SECONDS - t0)) s"
R=$OUT/run.json
jcheck scale_shm_every_thread_connected "$R" 'all(.points[]; (.clients | length) == '$P' and
	([.clients[].threads] | add) == '$((P * TH))' and .server.workers == '$W')'
jcheck scale_shm_nothing_lost "$R" 'all(.points[]; .committed > 0 and .unanswered == 0 and .errors == 0 and
	.server.rejected == 0 and .server.executed >= .committed)' ||
	{ jq -c '.points[] | {committed, sent, unsent, unanswered, errors, rejected: .server.rejected,
		executed: .server.executed}' "$R" >&2
	  grep -iE 'unanswered|error|lost' "$T/out" | head -5 >&2; }
jcheck scale_shm_idle_recorded "$R" 'all(.points[]; .server.idle.mode == "nap")'
alive=$(procs_alive "$OUT/processes.tsv")
if [ -z "$alive" ]; then ok scale_shm_no_process_left; else notok scale_shm_no_process_left "still running:$alive"; fi
new=$(shm_left_since "$shm_before")
if [ -z "$new" ]; then ok scale_shm_no_file_left; else notok scale_shm_no_file_left "left in /dev/shm: $new"; fi
jq -r '.points[] | "# driver_s \(.driver_s | tostring); committed \(.committed)"' "$R"
finish
