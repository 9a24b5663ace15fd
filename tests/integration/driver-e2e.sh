#!/usr/bin/env bash
# driver-e2e.sh - `oqb run` end to end on configs/tiny.json with the real
# oqb-server and oqb-client, then `oqb plot` and `oqb compare` on the
# result.  Asserts on run.json with jq: schema, points, samples, merged
# histograms equal to the sum of the clients', percentiles in order, no
# process left behind.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
CFG=$ROOT/configs/tiny.json
OUT=$T/run

if ! "$OQB_BIN/oqb" run "$CFG" --out "$OUT" >"$T/stdout" 2>"$T/stderr"; then
	notok driver_run "oqb run failed: $(tail -5 "$T/stderr")"
	finish
fi
ok driver_run
R=$OUT/run.json
check driver_prints_run_json grep -qx "$OUT/run.json" "$T/stdout"

npoints=$(jq '(.config.systems | length) * (.config.arrival.loads_ops | length)' "$R")
jcheck run_json_schema "$R" '.schema == "oqbench.run/5" and .status == "ok" and .error == null'
jcheck run_json_points_count "$R" ".points | length == $npoints"
jcheck run_json_metadata "$R" '. as $r | (.git_commit | type == "string") and (.git_dirty | type == "boolean" or (. == null and ($r.git_dirty_note | length > 0)))
	and (.versions.compiler | length > 0) and (.versions.kernel | length > 0)
	and .transport.name == "shm" and .config.name == "tiny" and .hosts.launcher == "local"'
jcheck points_have_samples "$R" 'all(.points[]; .lat_ns.all.n > 0 and .achieved_ops > 0)'
jcheck percentiles_ordered "$R" 'all(.points[]; .lat_ns.all | .min <= .p50 and .p50 <= .p99 and .p99 <= .p999 and .p999 <= .max)'
jcheck p99_ci_brackets "$R" 'all(.points[]; .lat_ns.all | .p99_ci[0] <= .p99 and .p99 <= .p99_ci[1])'
# Merging: the point's n is the sum of the clients' n, per op class, and
# each histogram's encoding (decoded apart from lib/hdrenc.c) holds
# exactly n samples.
jcheck merged_n_is_sum "$R" 'all(.points[]; . as $p | all(["all","nilext","non_nilext"][];
	. as $c | ($p.lat_ns[$c].n == ([$p.clients[].n[$c]] | add))))'
python3 tests/hdr-decode.py "$R" | jq -s . >"$T/e2e-hdr.json"
jcheck hdr_holds_n "$T/e2e-hdr.json" 'map(select(.path | test("^points\\[[0-9]+\\]\\.lat_ns\\."))) |
	length == 3 * '"$npoints"' and all(.[]; .total == .n)'
jcheck classes_add_up "$R" 'all(.points[]; .lat_ns.all.n == .lat_ns.nilext.n + .lat_ns.non_nilext.n)'
jcheck achieved_is_sum "$R" 'all(.points[]; (.achieved_ops - ([.clients[].achieved_ops] | add) | fabs) < 1)'
jcheck client_count "$R" '. as $r | all(.points[]; (.clients | length) == $r.config.clients.processes)'
jcheck server_stats "$R" 'all(.points[]; .server | type == "object")'
# flagged_by: per number, the point's warning checks that concern it; a
# point is flagged exactly when some number has one, and every warning
# concerns some number
jcheck flagged_by_matches_checks "$R" 'all(.points[]; . as $p |
	(.flagged_by | keys) == ["achieved_ops", "p50", "p99", "p999", "sys_p99"] and
	.flagged == ([.flagged_by[][]] | length > 0) and
	all(.checks[]; .concerns | length > 0) and
	all(.flagged_by | to_entries[]; .key as $q | .value == [$p.checks[] | select(.status == "warn" and
		(.concerns | index($q))) | .name]))'

# Per-process files and logs are in the run directory.
first=$(jq -r '.points[0].dir' "$R")
check per_process_files test -s "$OUT/$first/server-0.json" -a -s "$OUT/$first/client-0.json" \
	-a -f "$OUT/$first/client-0.log" -a -f "$OUT/$first/server-0.log"
jcheck client_json_schema "$OUT/$first/client-0.json" '.schema == "oqbench.client/1"'

# Every process the driver started has exited.
alive=$(procs_alive "$OUT/processes.tsv")
if [ -z "$alive" ]; then ok no_stray_processes; else notok no_stray_processes "still running:$alive"; fi

# One progress line per point.
n=$(grep -c '^\[[0-9]*/[0-9]*\] system=' "$T/stderr")
if [ "$n" -eq "$npoints" ]; then ok progress_lines; else notok progress_lines "$n lines for $npoints points"; fi

# Plots.
if command -v gnuplot >/dev/null; then
	if "$OQB_BIN/oqb" plot "$OUT" >"$T/plot.out" 2>&1 && [ -s "$OUT/latency-throughput.svg" ] &&
		[ -s "$OUT/latency-throughput.png" ] && grep -q '<svg' "$OUT/latency-throughput.svg"; then
		ok plot_svg_png
	else
		notok plot_svg_png "$(cat "$T/plot.out")"
	fi
else
	skip plot_svg_png "gnuplot not installed"
fi

# compare: a run against itself passes.
"$OQB_BIN/oqb" compare "$R" "$R" >"$T/same.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && tail -1 "$T/same.out" | grep -q "^compare: $npoints points, 0 regressions, 0 improvements, 0 inconclusive, tolerance 5%"; then
	ok compare_identical_passes
else
	notok compare_identical_passes "rc=$rc: $(tail -3 "$T/same.out")"
fi
# One trial per point: a p99 ten times worse is not called a regression,
# because one run cannot tell run-to-run noise from a change; it is
# inconclusive (exit 3) and the output says why.
jq '.points[0].lat_ns.all |= (.p99_ci[1] as $hi | .p99 = $hi * 10 | .p99_ci = [$hi * 5, $hi * 20]) |
	.points[0].trials[0].lat_ns.all.p99 *= 10' "$R" >"$T/worse.json"
"$OQB_BIN/oqb" compare "$R" "$T/worse.json" --tail raw >"$T/worse.out" 2>&1
rc=$?
if [ $rc -eq 3 ] && tail -1 "$T/worse.out" | grep -q "^compare: $npoints points, 0 regressions, 0 improvements, 1 inconclusive" &&
	grep -q 'cannot be told from a change' "$T/worse.out" && grep -q 'set repeat' "$T/worse.out"; then
	ok compare_single_trial_inconclusive
else
	notok compare_single_trial_inconclusive "rc=$rc: $(cat "$T/worse.out")"
fi
# Trials: six per point, p50 values spread by 1 %.  NEW +30 % on the first
# point is a regression (significant after Benjamini-Hochberg and beyond
# the tolerance); the reverse is an improvement; a median 7 % higher with
# trials spread over the base's is inconclusive; a halved throughput is a
# regression.  The points' checks are cleared: they come from this real
# run on a shared host, and a warned one would (rightly) hold a verdict back.
# Six trials a side cannot pass the default Holm correction at 1 % over
# 12 tests (the smallest rank-test p is 0.0022); these cases test the
# rules that hold a verdict back, not the rate (tests/unit/test_verdict.c
# does), so they judge at the former 5 % false discovery rate.
cmp6() { "$OQB_BIN/oqb" compare "$@" --correction bh --alpha 0.05; }
trials() {   # trials P50_FACTOR SPREAD_NS OPS_FACTOR: jq program for point 0
	echo ".points |= [.[] | .checks = [] | .trials = [range(6) as \$i | {lat_ns: {all: {n: 1000,
		p50: (10000 + \$i * 100), p99: (50000 + \$i * 500)}}, achieved_ops: (8000 + \$i)}]] |
	.points[0].trials |= [.[] | .lat_ns.all.p50 *= $1 | .lat_ns.all.p50 += ((.achieved_ops - 8000) * $2) |
		.achieved_ops *= $3]"
}
jq "$(trials 1 0 1)" "$R" >"$T/tb.json"
jq "$(trials 1.3 0 1)" "$R" >"$T/tw.json"
jq "$(trials 1 0 1)"' | .points[0].trials = [(9000, 13000, 9500, 12500, 10000, 14000) as $v |
	{lat_ns: {all: {n: 1000, p50: $v, p99: 50000}}, achieved_ops: 8000}]' "$R" >"$T/tn.json"
jq "$(trials 1 0 0.5)" "$R" >"$T/ts.json"
cmp6 "$T/tb.json" "$T/tw.json" >"$T/tw.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && tail -1 "$T/tw.out" | grep -q "^compare: $npoints points, 1 regressions, 0 improvements, 0 inconclusive" &&
	grep -q 'REGRESSION: p50 worse' "$T/tw.out"; then
	ok compare_trials_regression
else
	notok compare_trials_regression "rc=$rc: $(cat "$T/tw.out")"
fi
cmp6 "$T/tw.json" "$T/tb.json" >"$T/tbt.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && tail -1 "$T/tbt.out" | grep -q ", 0 regressions, 1 improvements"; then
	ok compare_trials_improvement
else
	notok compare_trials_improvement "rc=$rc: $(cat "$T/tbt.out")"
fi
cmp6 "$T/tb.json" "$T/tn.json" >"$T/tn.out" 2>&1
rc=$?
if [ $rc -eq 3 ] && grep -q 'inconclusive: p50' "$T/tn.out" &&
	grep -Eq 'trials per side would decide it|more trials would hardly decide it' "$T/tn.out"; then
	ok compare_trials_inconclusive
else
	notok compare_trials_inconclusive "rc=$rc: $(cat "$T/tn.out")"
fi
cmp6 "$T/tb.json" "$T/ts.json" >"$T/ts.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q 'achieved_ops worse' "$T/ts.out"; then
	ok compare_flags_throughput
else
	notok compare_flags_throughput "rc=$rc: $(cat "$T/ts.out")"
fi
# p99 has its own tolerance (25 % by default): a significant +20 % p99 is
# the same, +40 % is a regression, and +20 % is one with --tolerance-p99 10.
jq "$(trials 1 0 1)"' | .points[0].trials |= [.[] | .lat_ns.all.p99 *= 1.2]' "$R" >"$T/t99a.json"
jq "$(trials 1 0 1)"' | .points[0].trials |= [.[] | .lat_ns.all.p99 *= 1.4]' "$R" >"$T/t99b.json"
cmp6 "$T/tb.json" "$T/t99a.json" >"$T/t99a.out" 2>&1
rc1=$?
cmp6 "$T/tb.json" "$T/t99b.json" >"$T/t99b.out" 2>&1
rc2=$?
cmp6 "$T/tb.json" "$T/t99a.json" --tolerance-p99 10 >"$T/t99c.out" 2>&1
rc3=$?
if [ $rc1 -eq 0 ] && tail -1 "$T/t99a.out" | grep -q ", 0 regressions, 0 improvements, 0 inconclusive, tolerance 5% (p99 25%)" &&
	[ $rc2 -eq 1 ] && grep -q 'REGRESSION: p99 worse' "$T/t99b.out" &&
	[ $rc3 -eq 1 ] && grep -q 'REGRESSION: p99 worse' "$T/t99c.out"; then
	ok compare_p99_tolerance
else
	notok compare_p99_tolerance "rc=$rc1/$rc2/$rc3: $(tail -2 "$T/t99a.out") | $(tail -2 "$T/t99b.out") | $(tail -2 "$T/t99c.out")"
fi
cmp6 "$T/tb.json" "$T/tw.json" --json >"$T/cmp.json" 2>/dev/null
jcheck compare_json "$T/cmp.json" '.summary.regressions == 1 and (.points | length) == '"$npoints"' and
	.summary.correction == "bh" and .points[0].p50.verdict == "regression" and .points[0].p50.mwu_p < 0.01 and
	.points[0].p50.trials_base == 6 and (.points[1].p50.verdict == "same")'
# the canary: runs on machines that differ by more than x1.5 are not compared
jq '.points |= map(.canary_ns = 100)' "$T/tb.json" >"$T/tbc.json"
jq '.points |= map(.canary_ns = 400)' "$T/tw.json" >"$T/twc.json"
cmp6 "$T/tbc.json" "$T/twc.json" >"$T/env.out" 2>&1
rc=$?
if [ $rc -eq 3 ] && grep -q 'canaries differ' "$T/env.out"; then
	ok compare_canary_drift_inconclusive
else
	notok compare_canary_drift_inconclusive "rc=$rc: $(cat "$T/env.out")"
fi
# Trials paired by round (as `oqb ab` writes them): a round whose two sides'
# canaries differ by more than x1.5 is left out on both sides, and the
# runs' median canaries no longer veto.  NEW's point-level canary reads 400
# against 100 (the run-level rule alone would call everything inconclusive);
# its seventh round ran on a 5x slower floor and is left out; the six
# matched rounds still show the +30 % regression.
pairs() {   # pairs NEW_CANARY7: jq program: rounds 1-7, canaries 100 but round 7's
	echo ".points |= map(.trials |= [to_entries[] | .value + {round: (.key + 1), canary_ns: 100}]) |
		.points[0].trials += [.points[0].trials[0] + {round: 7, canary_ns: $1}]"
}
jq "$(pairs 100)" "$T/tbc.json" >"$T/tbp.json"
jq "$(pairs 500)" "$T/twc.json" >"$T/twp.json"
cmp6 "$T/tbp.json" "$T/twp.json" --json >"$T/pair.json" 2>"$T/pair.err"
rc=$?
if [ $rc -eq 1 ] && jq -e '.points[0].p50.verdict == "regression" and .points[0].rounds == {paired: 7, left_out: 1, used: [1,2,3,4,5,6]}
	and .points[0].p50.trials_new == 6 and .summary.rounds_left_out == 1 and .points[1].rounds.left_out == 0' \
	"$T/pair.json" >/dev/null && grep -q 'paired by round: 1 point-round' "$T/pair.err" &&
	! grep -q 'canaries differ (' "$T/pair.err"; then
	ok compare_pairs_rounds
else
	notok compare_pairs_rounds "rc=$rc: $(cat "$T/pair.err")"
fi
# every round's sides on different floors: nothing can testify
jq '.points |= map(.trials |= map(.canary_ns = 500))' "$T/twp.json" >"$T/twp5.json"
cmp6 "$T/tbp.json" "$T/twp5.json" >"$T/pair5.out" 2>&1
rc=$?
if [ $rc -eq 3 ] && grep -q 'no round compares like with like' "$T/pair5.out" &&
	tail -1 "$T/pair5.out" | grep -q ', 0 regressions, 0 improvements'; then
	ok compare_pairs_all_unmatched_inconclusive
else
	notok compare_pairs_all_unmatched_inconclusive "rc=$rc: $(cat "$T/pair5.out")"
fi
# Paired rounds on two floors: rounds 1-4 ran at a 100 ns canary, 5-8 at
# 500 ns and five times slower.  NEW is +30 % in every round of point 0.
# Pooled, the trials overlap (the slow floor's base above the fast
# floor's new), but each round against its own floor shows the change:
# the stratified test calls it a regression, with two strata.
floors() {   # floors P50_FACTOR
	echo ".points |= [.[] | .checks = [] | .trials = [range(8) as \$i | {round: (\$i + 1),
		canary_ns: (if \$i < 4 then 100 else 500 end), achieved_ops: 8000,
		lat_ns: {all: {n: 1000, p50: ((if \$i < 4 then 10000 else 50000 end) + \$i * 100),
			p99: ((if \$i < 4 then 50000 else 250000 end) + \$i * 100)}}}]] |
	.points[0].trials |= [.[] | .lat_ns.all.p50 *= $1]"
}
jq "$(floors 1)" "$R" >"$T/fb.json"
jq "$(floors 1.3)" "$R" >"$T/fn.json"
cmp6 "$T/fb.json" "$T/fn.json" --json >"$T/floors.json" 2>"$T/floors.err"
rc=$?
if [ $rc -eq 1 ] && jq -e '.points[0].p50.verdict == "regression" and .points[0].p50.strata == 2 and
	(.points[0].p50.test | test("van Elteren")) and (.points[0].p50.change_pct | . > 29 and . < 31) and
	.points[0].p50.mwu_p < 0.001 and .points[1].p50.verdict == "same"' "$T/floors.json" >/dev/null; then
	ok compare_paired_floors_stratified
else
	notok compare_paired_floors_stratified "rc=$rc: $(jq -c '.points[0].p50' "$T/floors.json" 2>/dev/null) $(cat "$T/floors.err")"
fi
# A point whose own checks say the host disturbed it cannot testify that
# it is the worse side: a significant +40 % p99 on a point whose stalls
# check warned is inconclusive, whichever run it is in; on the better
# side the warning changes nothing; and stalls do not excuse a p50 move,
# which only interference (CPU taken from a spinning thread) does.
warn() {   # warn CHECK: jq program that adds a warned CHECK to point 0
	echo ".points[0].checks = [{name: \"$1\", value: 0.02, threshold: 0.008, status: \"warn\"}]"
}
jq "$(warn stalls)" "$T/t99b.json" >"$T/t99bs.json"
jq "$(warn stalls)" "$T/tb.json" >"$T/tbs.json"
jq "$(warn stalls)" "$T/tw.json" >"$T/tws.json"
jq "$(warn interference)" "$T/tw.json" >"$T/twi.json"
cmp6 "$T/tb.json" "$T/t99bs.json" >"$T/d1.out" 2>&1
rc1=$?
cmp6 "$T/t99bs.json" "$T/tb.json" >"$T/d2.out" 2>&1
rc2=$?
cmp6 "$T/tbs.json" "$T/t99b.json" >"$T/d3.out" 2>&1
rc3=$?
cmp6 "$T/tb.json" "$T/tws.json" >"$T/d4.out" 2>&1
rc4=$?
cmp6 "$T/tb.json" "$T/twi.json" >"$T/d5.out" 2>&1
rc5=$?
if [ $rc1 -eq 3 ] && grep -q "inconclusive: p99 (worse by 40% (p [0-9.e-]*), but the new run's point, the slower one, was disturbed by the host (its checks warned: stalls)" "$T/d1.out" &&
	[ $rc2 -eq 3 ] && grep -q "inconclusive: p99 (better by .*the base run's point, the slower one, was disturbed" "$T/d2.out" &&
	! grep -q 'improved' "$T/d2.out" &&
	[ $rc3 -eq 1 ] && grep -q 'REGRESSION: p99 worse' "$T/d3.out" &&
	[ $rc4 -eq 1 ] && grep -q 'REGRESSION: p50 worse' "$T/d4.out" &&
	[ $rc5 -eq 3 ] && grep -q "inconclusive: p50 (worse by .*its checks warned: interference" "$T/d5.out"; then
	ok compare_disturbed_side_inconclusive
else
	notok compare_disturbed_side_inconclusive "rc=$rc1/$rc2/$rc3/$rc4/$rc5: $(grep -h '^[a-z]* *[0-9]' "$T"/d[1-5].out | head -5)"
fi
# ...except that a side which did not keep up with its load in most of
# its trials (saturated, or over 5 % of its requests left unsent or
# unanswered) and the other side in none is the worse one: a server too
# slow for the load makes its own spinning threads look disturbed.  One
# request the client sent late on the other side does not count.
# Overload on both sides, or on only a few of one side's trials, holds
# the verdict back as before.
sat() {   # sat N [UNSENT]: jq program: the first N trials of point 0 saturated, or with UNSENT of 1000 unsent
	echo ".points[0].trials |= [to_entries[] | .value + (if .key >= $1 then {saturated: false}
		elif \"${2:-}\" == \"\" then {saturated: true} else {saturated: false, sent: (1000 - (${2:-0})),
		unsent: (${2:-0}), unanswered: 0} end)]"
}
jq "$(sat 6)" "$T/twi.json" >"$T/twi6.json"
jq "$(sat 5 60)" "$T/twi.json" >"$T/twiu.json"
jq "$(sat 3)" "$T/twi.json" >"$T/twi3.json"
jq "$(sat 1)" "$T/tb.json" >"$T/tb1.json"
jq "$(sat 6 1)" "$T/tb.json" >"$T/tbu1.json"
cmp6 "$T/tb.json" "$T/twi6.json" --json >"$T/o1.json" 2>/dev/null
rc1=$?
cmp6 "$T/tbu1.json" "$T/twiu.json" >"$T/o2.out" 2>&1
rc2=$?
cmp6 "$T/twi6.json" "$T/tb.json" >"$T/o3.out" 2>&1
rc3=$?
cmp6 "$T/tb1.json" "$T/twi6.json" >"$T/o4.out" 2>&1
rc4=$?
cmp6 "$T/tb.json" "$T/twi3.json" >"$T/o5.out" 2>&1
rc5=$?
if [ $rc1 -eq 1 ] && jq -e '.points[0].verdict == "regression" and (.points[0].detail |
	test("^REGRESSION: p50 worse.* \\(NEW saturated \\(or left over 5% of its requests unsent or unanswered\\) in 6 of 6 trials, BASE in none\\)$"))
	and (.points[0].p50.why | test("its own overload, not the host, made its checks warn \\(interference\\)"))' \
	"$T/o1.json" >/dev/null &&
	[ $rc2 -eq 1 ] && grep -q 'REGRESSION: p50 worse.*in 5 of 6 trials, BASE in none' "$T/o2.out" &&
	[ $rc3 -eq 0 ] && grep -q 'improved: p50 better.*(BASE saturated .* in 6 of 6 trials, NEW in none)' "$T/o3.out" &&
	[ $rc4 -eq 3 ] && grep -q 'inconclusive: p50 (worse by .*disturbed by the host' "$T/o4.out" &&
	[ $rc5 -eq 3 ] && grep -q 'inconclusive: p50 (worse by .*disturbed by the host' "$T/o5.out"; then
	ok compare_own_overload_is_worse
else
	notok compare_own_overload_is_worse "rc=$rc1/$rc2/$rc3/$rc4/$rc5: $(jq -r '.points[0].detail' "$T/o1.json" 2>&1) | $(grep -h '^[a-z]* *[0-9]' "$T"/o[2-5].out | head -4)"
fi

# Provenance is bounded: a git that hangs (a checkout on 9p or NFS, where
# git status took 221 s) costs OQB_GIT_TIMEOUT_S once, not the run; run.json
# says the dirty state is unknown and why, and the hung git is ended.
mkdir -p "$T/slowgit"
cat >"$T/slowgit/git" <<EOF
#!/bin/sh
for a in "\$@"; do [ "\$a" = status ] && { echo \$\$ >"$T/slowgit.pid"; exec sleep 60; }; done
exec $(command -v git) "\$@"
EOF
chmod +x "$T/slowgit/git"
t0=$SECONDS
if PATH="$T/slowgit:$PATH" OQB_GIT_TIMEOUT_S=1 "$OQB_BIN/oqb" run "$CFG" --out "$T/slowgit-run" --quiet \
	--set 'systems=["oq"]' --set 'arrival.loads_ops=[5000]' --set duration_s=0.2 --set warmup_s=0.1 \
	>"$T/slowgit.out" 2>&1; then
	took=$((SECONDS - t0))
	jcheck git_status_bounded "$T/slowgit-run/run.json" ".git_dirty == null and (.git_dirty_note | test(\"did not finish within OQB_GIT_TIMEOUT_S\")) and .status == \"ok\" and $took < 20"
	gp=$(cat "$T/slowgit.pid" 2>/dev/null)
	if [ -n "$gp" ] && ! kill -0 "$gp" 2>/dev/null; then ok hung_git_ended; else notok hung_git_ended "pid ${gp:-?} of the hung git status is still there"; fi
else
	notok git_status_bounded "oqb run with a hanging git failed: $(tail -3 "$T/slowgit.out")"
fi

# A client whose history never reaches POINT/history/ (as on a host that
# does not share the results directory): the point fails naming the
# client, rather than checking a history with its operations missing.
mkdir -p "$T/nohist"
ln -s "$OQB_BIN/oqb-server" "$T/nohist/oqb-server"
cat >"$T/nohist/oqb-client" <<EOF
#!/bin/bash
args=()
while [ \$# -gt 0 ]; do
	case \$1 in --history-numeric) shift ;; --history|--history-*) shift 2 ;; *) args+=("\$1"); shift ;; esac
done
exec "$OQB_BIN/oqb-client" "\${args[@]}"
EOF
chmod +x "$T/nohist/oqb-client"
"$OQB_BIN/oqb" run "$CFG" --out "$T/nohist-run" --quiet --set 'systems=["oq"]' --set 'arrival.loads_ops=[5000]' \
	--set duration_s=0.2 --set warmup_s=0.1 --set history=true --set check=true \
	--set "hosts={\"bin_dir\":\"$T/nohist\"}" >"$T/nohist.out" 2>&1
rc=$?
if [ $rc -eq 5 ] && grep -q "client:0\].*recorded 0 of its 1 threads' histories" "$T/nohist.out"; then
	ok missing_history_fails_point
else
	notok missing_history_fails_point "rc=$rc: $(tail -5 "$T/nohist.out")"
fi

finish
