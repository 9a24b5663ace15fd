# tests/dead-host-lib.sh - what the dead-host tests share (sourced by
# tests/integration/dead-host-ssh.sh and dead-host-slurm.sh, after
# tests/lib.sh; bash).
#
# A "host" here is a logical one on this machine: its sshd (ssh) or its
# slurmd (Slurm) and every process that hangs below it.  Killing a host
# means SIGKILL to all of them at once, as a power cut would end them:
# each is stopped first (SIGSTOP), so nothing can fork or react between
# the list and the kill, then all get SIGKILL.  Only PIDs found below a
# daemon this test started are signalled.
#
# The run they kill: configs/fig6-echo.json (null backend, closed loop,
# one request in flight per client thread) with two points, swept over
# duration_s: 0.5 s, which finishes, then 60 s, in whose middle the host is
# killed.  So run.json must keep one point, and the driver must stop long
# before the second would have ended.  Every process of the second point
# must have said HELLO before the kill (run.json's hosts.processes), so
# the kill came after GO, not during the start.

# tree_of PID...: PID and every descendant, one per line.
tree_of() {
	ps -eo pid=,ppid= | awk -v roots="$*" '
		BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) want[r[i]] = 1 }
		{ par[$1] = $2; pids[NR] = $1 }
		END {
			do {
				grew = 0
				for (i = 1; i in pids; i++) { p = pids[i]; if (!(p in want) && (par[p] in want)) { want[p] = 1; grew = 1 } }
			} while (grew)
			for (p in want) if (p != "") print p
		}'
}

# roots_with_oqb PID...: how many of the PIDs have an oqb-* process below
# them (one ps snapshot: cheap enough to poll on a loaded machine)
roots_with_oqb() {
	ps -eo pid=,ppid=,comm= | awk -v roots="$*" '
		BEGIN { n = split(roots, r, " ") }
		{ par[$1] = $2; if ($3 ~ /^oqb-/) oqb[$1] = 1 }
		END {
			for (p in oqb) {
				for (q = p; q in par && q != 0; q = par[q])
					for (i = 1; i <= n; i++) if (q == r[i]) hit[i] = 1
			}
			c = 0; for (i in hit) c++; print c
		}'
}

# kill_all PID...: SIGSTOP to each, then SIGKILL to each (a frozen set
# cannot fork a new member between the list and the kill).
kill_all() {
	local p
	# a daemon this shell started is one of its jobs: without disown, bash
	# would report its death ("Killed") in the test's output
	for p in "$@"; do disown "$p" 2>/dev/null; done
	for p in "$@"; do kill -STOP "$p" 2>/dev/null; done
	for p in "$@"; do kill -KILL "$p" 2>/dev/null; done
}

# alive_of PID...: those of the PIDs still running (not zombies), each
# after a space.
alive_of() {
	local p st out=""
	for p in "$@"; do
		st=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1)
		[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] && out="$out $p"
	done
	echo "$out"
}

# now: seconds since the epoch, with microseconds (bash's EPOCHREALTIME)
now() { echo "$EPOCHREALTIME"; }
# secs A B: B - A, to 0.01 s
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# dead_run_config OUT.json: configs/fig6-echo.json for the dead-host runs,
# at DEAD_P client processes x DEAD_TH threads x DEAD_W workers, the two
# points above, idle threads napping (a small machine holds the paper's
# shape that way, docs/scale.md).
dead_run_config() {
	jq --argjson p "$DEAD_P" --argjson th "$DEAD_TH" --argjson w "$DEAD_W" '
		.name = "dead-host" | .server.workers = $w | .clients.processes = $p | .clients.threads = $th |
		.arrival.outstanding = [1] | .workload.value_size = 64 |
		.sweep = { key: "duration_s", values: [0.5, 60] } | .warmup_s = 0.3 |
		.rerun_disturbed = 0 | .canary = false | .idle = { nap_us: 500, spin_us: 200 } |
		.timeouts = { hello_s: 120, grace_s: 60 }' "$OQB_ROOT/configs/fig6-echo.json" >"$1"
}

# run_driver OUT CMD...: `CMD --out OUT` (an oqb run, or salloc ... oqb
# run) in the background, its stderr lines stamped with the time they
# came (OUT.err: "TIME LINE"); sets DRV (its PID).
run_driver() {
	local out=$1
	shift
	"$@" --out "$out" >"$out.stdout" \
		2> >(while IFS= read -r l; do echo "$EPOCHREALTIME $l"; done >"$out.err") &
	DRV=$!
	track "$DRV"
}

# wait_point2 DIR NPROCS TRIES: processes.tsv lists NPROCS processes of
# point 2 (the long one); 1 when not within TRIES x 0.1 s.
wait_point2() {
	local dir=$1 want=$2 n i
	for i in $(seq 1 "$3"); do
		n=$(awk -F'\t' '$1 == 2' "$dir/processes.tsv" 2>/dev/null | wc -l)
		[ "$n" -ge "$want" ] && return 0
		kill -0 "$DRV" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# wait_driver TRIES: waits for the driver to exit (TRIES x 0.1 s); sets
# DRV_RC (its status, or "running") and T_EXIT.
wait_driver() {
	local i
	for i in $(seq 1 "$1"); do
		kill -0 "$DRV" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$DRV" 2>/dev/null; then
		DRV_RC=running
		return 1
	fi
	T_EXIT=$(now)
	wait "$DRV"
	DRV_RC=$?
	return 0
}

# check_dead_run NAME DIR HOST ROLE RANK T_KILL BOUND: what every dead-host
# run must show.  The driver exited 1 within BOUND s of the kill; its one
# error message names HOST as the config does, ROLE:RANK and that the host
# is lost; run.json says so and keeps the first point; every process the
# run started is gone (the local launcher PIDs of processes.tsv and the
# remote PIDs of run.json); prints the times kill -> message -> exit.
check_dead_run() {
	local name=$1 dir=$2 host=$3 role=$4 rank=$5 tk=$6 bound=$7 msg nmsg tmsg took alive
	if [ "$DRV_RC" = 5 ]; then ok "${name}_exits_5"; else notok "${name}_exits_5" "exit status $DRV_RC: $(tail -5 "$dir.err")"; fi
	took=$(secs "$tk" "$T_EXIT")
	if awk -v t="$took" -v b="$bound" 'BEGIN { exit !(t < b) }'; then ok "${name}_stops_within_${bound}s"
	else notok "${name}_stops_within_${bound}s" "the driver exited $took s after the kill"; fi
	nmsg=$(grep -c ' oqb run: point ' "$dir.err")
	msg=$(grep ' oqb run: point ' "$dir.err" | head -1)
	tmsg=$(echo "$msg" | cut -d' ' -f1)
	if [ "$nmsg" -eq 1 ] && [[ $msg == *"[$host:$role:$rank] lost with its host: $host no longer answers"* ]]; then
		ok "${name}_one_message_names_the_host"
	else
		notok "${name}_one_message_names_the_host" "$nmsg error lines; stderr: $(cut -d' ' -f2- "$dir.err")"
	fi
	jcheck "${name}_run_json_error" "$dir/run.json" '.status == "failed" and .error.host == "'"$host"'" and
		.error.role == "'"$role"'" and .error.rank == '"$rank"' and .error.host_lost == true and .error.point == 1'
	jcheck "${name}_run_json_keeps_the_finished_point" "$dir/run.json" '(.points | length) == 1 and
		.points[0].index == 0 and .points[0].committed > 0 and .points[0].unanswered == 0'
	jcheck "${name}_killed_after_every_hello" "$dir/run.json" \
		'[.hosts.processes[] | select(.point == 1)] | length == '"$((DEAD_P + 1))"
	alive=$(procs_alive "$dir/processes.tsv")
	alive="$alive$(alive_of $(jq -r '.hosts.processes[].pid' "$dir/run.json" 2>/dev/null))"
	if [ -z "$alive" ]; then ok "${name}_no_process_of_the_run_left"; else notok "${name}_no_process_of_the_run_left" "still running:$alive"; fi
	echo "# $name: kill -> message $(secs "$tk" "${tmsg:-$tk}") s -> exit $took s; the message: $(echo "$msg" | cut -d' ' -f2- | cut -c1-400)"
	jq -r '"# '"$name"': the finished point: driver_s \(.points[0].driver_s | tostring), committed \(.points[0].committed)"' "$dir/run.json" 2>/dev/null
	grep -v -e ' oqb run: ' -e '^[0-9.]*     | ' "$dir.err" | cut -d' ' -f2- | sed 's/^/# other stderr: /' | head -5
}

# kill_mid_point NAME OUT HOST ROLE RANK WHERE CMD...: lets point 2 run
# DEAD_KILL_AFTER_S (1.5) s, then kills the processes CMD lists (the
# host's daemon and all below it; WHERE says "host" or "node"), and checks
# that the driver stops, its one message and run.json (check_dead_run),
# and that nothing of the killed host is left.  1 when the run ended
# before the kill or the driver did not stop (said as not ok).  t0 is the
# caller's start (SECONDS).
kill_mid_point() {
	local name=$1 out=$2 host=$3 role=$4 rank=$5 where=$6 victims what tk left
	shift 6
	sleep "${DEAD_KILL_AFTER_S:-1.5}"
	if ! kill -0 "$DRV" 2>/dev/null; then
		notok "${name}_killed_mid_point" "the run ended before the kill: $(tail -5 "$out.err")"
		return 1
	fi
	mapfile -t victims < <("$@")
	what=$(ps -o comm= -p "$(IFS=,; echo "${victims[*]}")" 2>/dev/null | sort | uniq -c | tr -s ' \n' ' ')
	tk=$(now)
	kill_all "${victims[@]}"
	ok "${name}_killed_mid_point"
	echo "# $name: killed $((SECONDS - t0)) s after the run's start"
	echo "# $name: killed $where $host: ${#victims[@]} processes ($what)"
	wait_driver 900 || { notok "${name}_driver_stops" "still running 90 s after the kill"; return 1; }
	check_dead_run "$name" "$out" "$host" "$role" "$rank" "$tk" "$BOUND"
	left="$(alive_of "${victims[@]}")"
	if [ -z "$left" ]; then ok "${name}_killed_${where}_has_nothing_left"
	else notok "${name}_killed_${where}_has_nothing_left" "$left"; fi
}
