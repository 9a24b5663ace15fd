#!/usr/bin/env bash
# trust.sh - the means to judge a number (docs/trust.md): placement, the
# canary, repeated trials in shuffled rounds, the self-checks, --strict.
# The checks must fire when they should and only then: a CPU hog started
# on the server worker's CPU in the middle of a point is flagged by the
# interference and stationarity checks while the same run without it is
# not; a client offered far more than one thread can send is flagged by
# the schedule-lag check.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
ncpu=$(nproc)

# One server worker and one client thread: on two CPUs each gets its own.
base() {   # base NAME SYSTEMS LOADS DURATION REPEAT
	cat <<EOF
{ "name": "$1", "transport": "shm", "systems": $2,
  "server": { "workers": 1, "backend": { "kind": "null" } },
  "clients": { "processes": 1, "threads": 1 },
  "workload": { "kind": "kv", "put_ratio": 0.5, "key_size": 16, "value_size": 64, "keys": 1000 },
  "arrival": { "kind": "poisson", "loads_ops": $3 },
  "warmup_s": 0.3, "duration_s": $4, "repeat": $5, "seed": 3 }
EOF
}

# --- repeated trials: rounds, shuffled, merged bin-wise -----------------
base rep '["oq", "rawrpc"]' '[2000, 4000]' 0.3 3 >"$T/rep.json"
if "$OQB_BIN/oqb" run "$T/rep.json" --out "$T/rep" >"$T/rep.out" 2>"$T/rep.err"; then
	ok trials_run
	R=$T/rep/run.json
	jcheck trials_three_per_point "$R" '(.points | length) == 4 and all(.points[]; (.trials | length) == 3 and .repeat == 3)'
	# every round runs every point once
	jcheck trials_rounds "$R" '.trial_order.order as $o | all(range(3) as $t | [$o[] | select(.[1] == $t) | .[0]] | sort; . == [0,1,2,3])
		and (.trial_order.order | length) == 12'
	# the shuffle is not the plan's order in every round (4! orders; seed 3)
	jcheck trials_shuffled "$R" '[.trial_order.order[] | .[0]] != [0,1,2,3,0,1,2,3,0,1,2,3]'
	jcheck trials_merged_bins "$R" 'all(.points[]; .lat_ns.all.n == ([.trials[].lat_ns.all.n] | add))'
	jcheck trials_spread "$R" 'all(.points[]; .spread.all.p50.min <= .spread.all.p50.median and
		.spread.all.p50.median <= .spread.all.p50.max and (.spread.all.p50.values | length) == ([.trials[] | select(.lat_ns.all.n > 0)] | length))'
	jcheck trials_dirs_distinct "$R" '[.points[].trials[].dir] | length == (unique | length)'
	# arrival_fit tests the schedule (the gaps between intended send
	# times, at least 50 of them), which a host's stalls do not thin
	jcheck checks_present "$R" 'all(.points[]; [.checks[].name] | contains(["schedule_lag", "arrival_fit",
		"ci_p99", "ci_p999", "trial_agreement", "interference", "stalls", "placement", "saturation", "unanswered", "unsent", "errors"]))
		and all(.points[]; . as $p | all(.trials[].checks[]; . as $r | has("value") and (.status == "pass" or .status == "warn")
			and (has("threshold") or any($p.checks[]; .name == $r.name and has("threshold")))))'
	# each histogram once, as HdrHistogram text that another decoder
	# (tests/hdr-decode.py) reads back to the n and percentiles printed
	jcheck readable_histograms "$R" 'all(.points[].trials[].lat_ns.nilext; (.hdr | type == "string" and startswith("HISTF")) and
		(has("bins") or has("ranges_ns") | not)) and all(.points[].lat_ns[]; has("hdr") or has("bins") | not)'
	python3 tests/hdr-decode.py "$R" | jq -s . >"$T/rep-hdr.json"
	jcheck histograms_decode_to_printed "$T/rep-hdr.json" 'length > 0 and
		all(.[]; .total == .n and [.p50, .p99, .p999] == .printed)'
	jcheck environment_recorded "$R" '.environment | (.cpus_online >= 1) and (.cpu_model | length > 0) and
		(.loadavg_1_5_15 | length == 3) and has("governor") and has("smt")'
	if [ "$ncpu" -ge 2 ]; then
		jcheck placement_distinct_cpus "$R" 'all(.points[].trials[].placement; .server.cpus[0] != .clients[0].placement.cpus[0]
			and .server.shared == false)'
		jcheck canary_beside_every_trial "$R" 'all(.points[].trials[]; .canary_ns > 0)'
	else
		skip placement_distinct_cpus "one CPU"
		skip canary_beside_every_trial "one CPU"
	fi
	# one line per trial kept when it ran: the 12 kept, and each one set
	# aside later (its point's later trials showed another canary floor:
	# "set aside: ...; running it again"); a trial disturbed as it ran is
	# run again before any line is printed (harness/run/run.c)
	n=$(grep -c 'trial [0-9]/3' "$T/rep.err")
	want=$((12 + $(grep -c 'set aside: .*; running it again$' "$T/rep.err")))
	[ "$n" -eq "$want" ] && ok progress_per_trial ||
		notok progress_per_trial "$n progress lines with a trial for $want trials kept as they ran (12 kept at the end)"
else
	notok trials_run "$(tail -5 "$T/rep.err")"
fi

# --- schedule lag: far more than one client thread can send (one thread
# keeps up with about 5 Mops/s on oq/null here; 50 is ten times that) ---
base lag '["rawrpc"]' '[50000000]' 0.5 1 >"$T/lag.json"
if "$OQB_BIN/oqb" run "$T/lag.json" --out "$T/lag" >"$T/lag.out" 2>"$T/lag.err"; then
	jcheck schedule_lag_fires "$T/lag/run.json" '.points[0].checks[] | select(.name == "schedule_lag") | .status == "warn" and .value > 0.5'
	grep -q 'CHECK: .*schedule_lag' "$T/lag.err" && ok check_on_progress_line || notok check_on_progress_line "$(cat "$T/lag.err")"
	# --strict turns the same warning into a failed run
	"$OQB_BIN/oqb" run "$T/lag.json" --out "$T/lag-strict" --strict >/dev/null 2>"$T/strict.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q -- '--strict: .*schedule_lag' "$T/strict.err" &&
		jq -e '.status == "failed-checks"' "$T/lag-strict/run.json" >/dev/null; then
		ok strict_fails_run
	else
		notok strict_fails_run "rc=$rc $(tail -3 "$T/strict.err")"
	fi
else
	notok schedule_lag_fires "$(tail -5 "$T/lag.err")"
fi

# --- interference and stationarity: a hog on the worker's CPU ----------
if [ "$ncpu" -ge 2 ] && command -v taskset >/dev/null; then
	# (rerun_disturbed 0: this tests that the hog is seen, not that the
	# trial it disturbed is run again)
	base hog '["rawrpc"]' '[20000]' 3 1 | jq '.rerun_disturbed = 0' >"$T/hog.json"
	status() { jq -r --arg n "$2" '.points[0].checks[] | select(.name == $n) | .status' "$1/run.json" 2>/dev/null; }
	# the control: the same point, nothing else on the worker's CPU.  A
	# shared VM's host can stall a calm run too, and the check is right to
	# flag it: one stall of ~4 ms in a half moves its p99 past the 10x
	# limit (seen in CI, three attempts in a row, each with the stalls
	# check warning that a spinning thread stood still ~1 % of the window).
	# And stalls just under the stalls check's limit move the tail too
	# (seen in make check: stalls passed at attempt 2, yet its first half's
	# p99 read 271 us against 16 us); and the quickstart's calm 0.6-s
	# trials here stand still 0.26-0.69 % of their windows (10th-90th
	# percentile, 210 trials), so that value cannot vet a window either.
	# So the control is the first of up to six attempts whose
	# interference and stationarity checks both pass.  When
	# none does, the checks fail the test unless other tasks took the CPU
	# in every attempt (tests/lib.sh: host_busy, the kernel's accounting
	# less this test's processes; the run's own stalls check comes from the
	# code under test and is no such evidence): then there was no calm
	# window to compare with, and the two hog tests skip and say why.  A check that
	# flags calm runs fails it six times in a row; one the host fools now
	# and then does not.
	calm_ok=0 all_busy=1 busy_why=""
	for attempt in 1 2 3 4 5 6; do
		rm -rf "$T/calm"
		host_mark
		"$OQB_BIN/oqb" run "$T/hog.json" --out "$T/calm" >/dev/null 2>"$T/calm.err"
		if host_busy; then busy_why="$busy_why${busy_why:+; }attempt $attempt: $HOST_EVIDENCE"; else all_busy=0; fi
		st="$(status "$T/calm" interference),$(status "$T/calm" stationarity)"
		stalls=$(status "$T/calm" stalls)
		if [ "$st" = pass,pass ]; then
			calm_ok=1
			[ "$attempt" -gt 1 ] && echo "# calm control: attempt $attempt decides"
			break
		fi
		echo "# calm control attempt $attempt: interference and stationarity '$st', stalls '$stalls': $(jq -c '[.points[0].checks[] | select(.status == "warn") | .detail]' "$T/calm/run.json" 2>/dev/null) $(tail -1 "$T/calm.err")"
	done
	cpu=$(jq '.points[0].trials[0].placement.server.cpus[0]' "$T/calm/run.json" 2>/dev/null)
	# the hog: started in the middle of the window (start about 0.5 s
	# after launch, warm-up 0.3 s, 3 s window), on the worker's CPU
	"$OQB_BIN/oqb" run "$T/hog.json" --out "$T/hog" >/dev/null 2>"$T/hog.err" &
	run_pid=$!
	track "$run_pid"
	sleep 2.4
	taskset -c "${cpu:-0}" sh -c 'while :; do :; done' &
	hog=$!
	track "$hog"
	sleep 2
	kill "$hog" 2>/dev/null
	wait "$hog" 2>/dev/null
	wait "$run_pid"
	for c in interference stationarity; do
		calm=$(status "$T/calm" $c); hogged=$(status "$T/hog" $c)
		if [ $calm_ok = 0 ] && [ $all_busy = 1 ]; then
			skip_host "hog_flagged_by_$c" "$busy_why" "no calm control in 6 attempts to compare with"
		elif [ "$hogged" = warn ] && [ "$calm" = pass ]; then
			ok "hog_flagged_by_$c"
		else
			notok "hog_flagged_by_$c" "with the hog: $hogged, without: $calm; $(jq -c --arg n $c \
				'[.points[0].checks[] | select(.name == $n) | .detail]' "$T/hog/run.json" "$T/calm/run.json")"
		fi
	done
	# a point's warning shows the value, threshold and detail of one
	# warning trial, all three from the same trial (a trial's row leaves
	# out a threshold that is the point's row's: harness/result/)
	jcheck point_warning_from_one_trial "$T/hog/run.json" '.points[0] as $p |
		[$p.checks[] | select(.trials_warned > 0)] as $w | ($w | length) > 0 and all($w[]; . as $c |
		any($p.trials[].checks[]; .name == $c.name and .status == "warn" and .value == $c.value and
			(if has("threshold") then .threshold == $c.threshold else true end) and .detail == $c.detail))'
	# disturbed trials are run again: with a CPU-share limit no thread can
	# reach, every trial is disturbed, so each runs 1 + rerun_disturbed
	# times, the last is kept, the others are set aside with why, each in
	# its own directory; rerun_disturbed 0 keeps the first
	base rerun '["oq"]' '[5000]' 0.2 2 | jq '.checks = {"cpu_share": 1.0} | .rerun_disturbed = 1' >"$T/rerun.json"
	"$OQB_BIN/oqb" run "$T/rerun.json" --out "$T/rerun" >/dev/null 2>"$T/rerun.err"
	jcheck rerun_disturbed_trials "$T/rerun/run.json" '.points[0] | (.trials | length) == 2 and
		(.discarded_trials | length) == 2 and all(.discarded_trials[]; .discarded | test("CPU")) and
		([.trials[].dir, .discarded_trials[].dir] | unique | length) == 4 and all(.trials[]; .dir | test("-r1$")) and
		all(.discarded_trials[]; (.lat_ns.nilext.p50 | type == "number") and ([.. | objects | select(has("hdr"))] | length == 0))'
	if grep -q 'disturbed: .*running it again (1/1)' "$T/rerun.err"; then
		ok rerun_says_why
	else
		notok rerun_says_why "$(tail -3 "$T/rerun.err")"
	fi
	# a disturbance that never passes: after three trials in a row still
	# disturbed after their reruns, reruns stop (the fourth is not rerun)
	base rerunstop '["oq"]' '[5000]' 0.2 4 | jq '.checks = {"cpu_share": 1.0} | .rerun_disturbed = 1' >"$T/rerunstop.json"
	"$OQB_BIN/oqb" run "$T/rerunstop.json" --out "$T/rerunstop" >/dev/null 2>"$T/rerunstop.err"
	jcheck reruns_stop_when_futile "$T/rerunstop/run.json" '(.points[0].trials | length) == 4 and
		(.points[0].discarded_trials | length) == 3 and .reruns_stopped.after_trial == 2 and
		(.reruns_stopped.last_reason | test("CPU"))'
	# rerun_budget bounds the reruns of the whole run: 0.25 of 4 trials is
	# one rerun; after it every disturbed trial is kept, flagged, and the
	# run says why it stopped rerunning
	base rerunbudget '["oq"]' '[5000]' 0.2 4 | jq '.checks = {"cpu_share": 1.0} | .rerun_disturbed = 2 |
		.rerun_budget = 0.25' >"$T/rerunbudget.json"
	"$OQB_BIN/oqb" run "$T/rerunbudget.json" --out "$T/rerunbudget" >/dev/null 2>"$T/rerunbudget.err"
	jcheck rerun_budget_bounds_reruns "$T/rerunbudget/run.json" '(.points[0].trials | length) == 4 and
		(.points[0].discarded_trials | length) == 1 and .reruns_stopped.cause == "budget" and
		.reruns_stopped.after_trial == 0 and .points[0].flagged'
	if grep -q 'rerun budget is spent (1 rerun(s): rerun_budget 0.25 of 4 trials)' "$T/rerunbudget.err" &&
		! grep -q 'three trials in a row' "$T/rerunbudget.err"; then
		ok rerun_budget_says_so
	else
		notok rerun_budget_says_so "$(grep warning "$T/rerunbudget.err" | tail -3)"
	fi
	jq '.rerun_disturbed = 0' "$T/rerun.json" >"$T/rerun0.json"
	"$OQB_BIN/oqb" run "$T/rerun0.json" --out "$T/rerun0" >/dev/null 2>&1
	jcheck rerun_off_keeps_first "$T/rerun0/run.json" '.points[0] | (.trials | length) == 2 and
		(has("discarded_trials") | not) and .flagged'
else
	skip hog_flagged_by_interference "needs two CPUs and taskset"
	skip hog_flagged_by_stationarity "needs two CPUs and taskset"
fi

# --- duration_s "auto": chunks until the P99 CI is narrow, or a cap ----
base conv '["oq"]' '[5000]' '"auto"' 1 | jq '.convergence = {"ci_p99": 0.001, "chunk_s": 0.2, "max_s": 0.6}' >"$T/conv.json"
if "$OQB_BIN/oqb" run "$T/conv.json" --out "$T/conv" >/dev/null 2>"$T/conv.err"; then
	jcheck convergence_capped "$T/conv/run.json" '.points[0].trials[0].convergence | .stopped_by == "max_s reached"
		and .chunks == 3 and (.measured_s - 0.6 | fabs) < 1e-6'
	jcheck convergence_merges_chunks "$T/conv/run.json" '.points[0].lat_ns.all.n > 0'
else
	notok convergence_capped "$(tail -3 "$T/conv.err")"
fi
jq '.convergence = {"ci_p99": 10, "chunk_s": 0.2, "max_s": 2}' "$T/conv.json" >"$T/conv2.json"
if "$OQB_BIN/oqb" run "$T/conv2.json" --out "$T/conv2" >/dev/null 2>"$T/conv2.err"; then
	jcheck convergence_reached "$T/conv2/run.json" '.points[0].trials[0].convergence | .stopped_by == "ci_p99 reached"
		and .chunks < 10 and .ci_p99 <= 10'
else
	notok convergence_reached "$(tail -3 "$T/conv2.err")"
fi
jq 'del(.convergence) | .duration_s = 1 | .convergence = {"max_s": 3}' "$T/conv.json" >"$T/conv3.json"
"$OQB_BIN/oqb" run "$T/conv3.json" --dry-run >/dev/null 2>"$T/conv3.err"
[ $? -eq 2 ] && grep -q 'convergence: only used with' "$T/conv3.err" && ok convergence_needs_auto ||
	notok convergence_needs_auto "$(cat "$T/conv3.err")"

# --- bad placement specs are refused before anything starts ------------
base bad '["oq"]' '[1000]' 0.1 1 | jq '.server.cpus = "0-x"' >"$T/bad.json"
"$OQB_BIN/oqb" run "$T/bad.json" --dry-run >/dev/null 2>"$T/bad.err"
rc=$?
if [ $rc -eq 2 ] && grep -q 'server.cpus: CPU list "0-x" is malformed' "$T/bad.err"; then
	ok bad_cpus_refused
else
	notok bad_cpus_refused "rc=$rc $(cat "$T/bad.err")"
fi
finish
