#!/usr/bin/env bash
# regime.sh - one machine condition per point (docs/trust.md, "Canary
# regimes"): a trial whose canary reads another floor of the machine than
# its point's other trials is run again within the rerun budget and set
# aside with its reason, so the kept trials share one regime; when the
# reruns run out the trials are kept and run.json says the regimes mix.
# The canary is a stand-in oqb-floor (hosts.bin_dir) that reads a fixed
# list by call order, one call per trial and rerun, so nothing here
# depends on the host's own floors.  The disturbance checks are turned
# off (thresholds that never warn) so that only the canary decides reruns.
. "$(dirname "$0")/../lib.sh"


cfg() {   # cfg NAME BINDIR REPEAT RERUNS
	cat <<CFG
{ "name": "$1", "transport": "shm", "systems": ["oq"],
  "server": { "workers": 1, "backend": { "kind": "null" } },
  "clients": { "processes": 1, "threads": 1 },
  "workload": { "kind": "kv", "put_ratio": 0.5, "key_size": 16, "value_size": 64, "keys": 1000 },
  "arrival": { "kind": "poisson", "loads_ops": [2000] },
  "warmup_s": 0.05, "duration_s": 0.1, "repeat": $3, "rerun_disturbed": $4, "seed": 3,
  "checks": { "cpu_share": 0, "steal": 1, "stall_share": 1 },
  "hosts": { "bin_dir": "$2" } }
CFG
}

# csv_regimes CSV WANT NAME: summary.csv's last three columns (regimes,
# regime_p50_ns, regime_sys_p99_ns) of its one point are WANT
csv_regimes() {
	local got
	got=$(tr -d '\r' <"$1" | awk -F, 'NR == 1 { h = $(NF-2) "," $(NF-1) "," $NF } NR == 2 { print h; print $(NF-2) "," $(NF-1) "," $NF }')
	[ "$got" = "regimes,regime_p50_ns,regime_sys_p99_ns
$2" ] && ok "$3" || notok "$3" "got: $got, want: $2"
}

if [ "$(nproc)" -lt 2 ]; then
	skip regime_rerun "one CPU: the canary needs two (placement)"
	finish
fi

# 1. trial 3 of 4 reads the slow floor; its rerun is back on the fast one
floor_stand_in "$T/b1" 100 104 520 98 101
cfg one "$T/b1" 4 2 >"$T/one.json"
if "$OQB_BIN/oqb" run "$T/one.json" --out "$T/one" >"$T/one.out" 2>&1; then
	R=$T/one/run.json
	jcheck regime_trial_rerun "$R" '.points[0] | (.trials | length) == 4 and ([.trials[].canary_ns] | sort) == [98,100,101,104]'
	jcheck regime_set_aside_with_reason "$R" '.points[0].discarded_trials | length == 1 and .[0].reason == "canary_regime"
		and .[0].canary_ns == 520 and (.[0].discarded | test("canary regime: its canary read 520 ns against 102 ns"))
		and .[0].trial == 2'
	jcheck regime_point_one_regime "$R" '.points[0].canary_regime | .mixed == false and .trials == 4 and .of == 4
		and .set_aside == 1 and .median_ns == 100.5 and .factor == 2 and .other == []'
	jcheck regime_run_summary "$R" '.canary_regimes | .points == 1 and .points_mixed == 0 and .trials_set_aside == 1'
	# one regime: no per-regime numbers (nothing added to the common case)
	jcheck regime_unmixed_no_regimes "$R" '.points[0].canary_regime | has("regimes") | not'
	csv_regimes "$T/one/summary.csv" "1,," regime_unmixed_csv
	grep -q 'set aside: canary regime' "$T/one.out" && ok regime_said || notok regime_said "$(cat "$T/one.out")"
else
	notok regime_trial_rerun "$(tail -5 "$T/one.out")"
fi

# 2. the slow floor lasts longer than the reruns (one allowed): the trial
#    is kept, and run.json says the point's trials mix two regimes
floor_stand_in "$T/b2" 100 104 520 515 99
cfg two "$T/b2" 4 1 >"$T/two.json"
if "$OQB_BIN/oqb" run "$T/two.json" --out "$T/two" >"$T/two.out" 2>&1; then
	R=$T/two/run.json
	jcheck regime_mixed_when_reruns_run_out "$R" '.points[0].canary_regime | .mixed == true and .trials == 3 and .of == 4
		and .set_aside == 1 and .other == [{"trial": 2, "canary_ns": 515}] and (.note | test("ran in another canary regime"))'
	jcheck regime_mixed_summary "$R" '.canary_regimes.points_mixed == 1'
	# each regime's own numbers: its trials (the point's regime first),
	# their canaries' median, and its histograms merged from its trials
	jcheck regime_mixed_regimes "$R" '.points[0].canary_regime.regimes | length == 2
		and .[0].trials == [0,1,3] and .[0].canary_ns == 100 and .[1].trials == [2] and .[1].canary_ns == 515'
	jcheck regime_numbers_merged "$R" '.points[0] as $p | $p.canary_regime.regimes as $r | ($p.trials | map({(.trial | tostring): .}) | add) as $t |
		all(["all","nilext","non_nilext"][]; . as $c |
		    $r[0].lat_ns[$c].n == ([$t["0","1","3"].lat_ns[$c].n] | add) and $r[1].lat_ns[$c].n == $t["2"].lat_ns[$c].n
		    and $r[1].lat_ns[$c].p50 == $t["2"].lat_ns[$c].p50 and $r[1].lat_ns[$c].p99 == $t["2"].lat_ns[$c].p99
		    and ($r[0].lat_ns[$c].p99_ci | length) == 2
		    and $r[1].host_tags.sys_lat_ns[$c].p99 == $t["2"].host_tags.sys_lat_ns[$c].p99
		    and $r[0].host_tags.sys_lat_ns[$c].n == ([$t["0","1","3"].host_tags.sys_lat_ns[$c].n] | add))
		and $r[1].achieved_ops == $t["2"].achieved_ops
		and (($r[0].achieved_ops - ([$t["0","1","3"].achieved_ops] | add) / 3) | fabs) < 1e-6'
	# the 3-trial regime judges its own trials' agreement; 1 trial cannot
	jcheck regime_own_agreement "$R" '.points[0].canary_regime.regimes | (.[0].trial_agreement | .name == "trial_agreement"
		and (.status == "pass" or .status == "warn") and (.concerns | length) > 0 and (.detail | test("3 trials resampled")))
		and (.[1] | has("trial_agreement") | not)'
	want=$(jq -r '.points[0].canary_regime.regimes[0] | "2,\(.lat_ns.all.p50),\(.host_tags.sys_lat_ns.all.p99)"' "$R")
	csv_regimes "$T/two/summary.csv" "$want" regime_mixed_csv
	grep -q '^  p01 oq load=2000 ops/s: regimes 100 ns (3 trials) p50 .* sysP99 .* | 515 ns (1) p50 ' "$T/two.out" &&
		ok regime_mixed_said || notok regime_mixed_said "$(tail -4 "$T/two.out")"
	# make demo's last lines say it too (demo.sh --report on this run)
	if "$(dirname "$0")/../../harness/demo.sh" --report "$T/two" >"$T/demo.out" 2>"$T/demo.err" &&
		grep -q '^  p01 oq 2000: regimes 100 ns (3 trials) p50 [0-9.]* us sysP99 .* | 515 ns (1) p50 ' "$T/demo.out"; then
		ok regime_mixed_in_demo
	else
		notok regime_mixed_in_demo "$(tail -8 "$T/demo.out") $(tail -3 "$T/demo.err")"
	fi
	# the demo's like-with-like count judges a mixed point on its own
	# floor's row and the point's other checks: the point made to read
	# below saturation, its floor's trials agreeing (1 of 1 clean) and not
	# (0 of 1), and another check warning about the median (0 of 1)
	ll() {   # ll NAME JQ-EDIT WANT
		rm -rf "$T/ll-$1"
		mkdir -p "$T/ll-$1"
		jq ".points[0].saturated = false | $2" "$R" >"$T/ll-$1/run.json"
		"$(dirname "$0")/../../harness/demo.sh" --report "$T/ll-$1" >"$T/ll-$1.out" 2>&1
		grep -q "^like with like (the 1 point(s) on two floors judged on their own floor.s trials, 3 or more): $3 of 1\$" "$T/ll-$1.out" &&
			ok "regime_like_with_like_$1" || notok "regime_like_with_like_$1" "$(grep 'like with like' "$T/ll-$1.out") $(tail -3 "$T/ll-$1.out")"
	}
	ll agree '.points[0].flagged_by = {"p50": ["trial_agreement"], "sys_p99": ["trial_agreement"]} |
		.points[0].canary_regime.regimes[0].trial_agreement.status = "pass"' "p50 clean at 1, system P99 at 1, both at 1"
	ll disagree '.points[0].flagged_by = {"p50": ["trial_agreement"], "sys_p99": []} |
		.points[0].canary_regime.regimes[0].trial_agreement |= (.status = "warn" | .concerns = ["p50"])' \
		"p50 clean at 0, system P99 at 1, both at 0"
	ll other '.points[0].flagged_by = {"p50": ["trial_agreement", "arrival_fit"], "sys_p99": ["trial_agreement"]} |
		.points[0].canary_regime.regimes[0].trial_agreement.status = "pass"' "p50 clean at 0, system P99 at 1, both at 0"
else
	notok regime_mixed_when_reruns_run_out "$(tail -5 "$T/two.out")"
fi

# 2b. the run's first trial is on the slow floor, before the run has 3
#     canaries to judge it by: kept at first, then, once the point's
#     next trials show their floor, set aside and run again
floor_stand_in "$T/b2b" 520 100 104 98 101
cfg first "$T/b2b" 4 2 >"$T/first.json"
if "$OQB_BIN/oqb" run "$T/first.json" --out "$T/first" >"$T/first.out" 2>&1; then
	R=$T/first/run.json
	jcheck regime_first_trial_set_aside "$R" '.points[0] | ([.trials[].canary_ns] | sort) == [98,100,101,104]
		and (.discarded_trials | length == 1 and .[0].reason == "canary_regime" and .[0].canary_ns == 520
		and .[0].trial == 0 and (.[0].discarded | test("against 102 ns, the point.s later trials")))'
	jcheck regime_first_trial_one_regime "$R" '.points[0].canary_regime | .mixed == false and .trials == 4
		and .set_aside == 1 and .other == []'
	jcheck regime_first_trial_rerun_marked "$R" '[.points[0].trials[] | select(.regime_rerun)] | length == 1
		and .[0].trial == 0 and .[0].canary_ns == 98'
else
	notok regime_first_trial_set_aside "$(tail -5 "$T/first.out")"
fi

# 3. the rule off (canary_regime_factor 0): nothing is set aside
floor_stand_in "$T/b3" 100 104 520 98 101
cfg off "$T/b3" 4 2 | jq '. + {canary_regime_factor: 0}' >"$T/off.json"
if "$OQB_BIN/oqb" run "$T/off.json" --out "$T/off" >"$T/off.out" 2>&1; then
	jcheck regime_off "$T/off/run.json" '(.points[0] | has("discarded_trials") | not) and (.points[0] | has("canary_regime") | not)
		and ([.points[0].trials[].canary_ns] | sort) == [98,100,104,520]'
else
	notok regime_off "$(tail -5 "$T/off.out")"
fi

# 4. a factor that would split one floor is refused, with the way out
cfg bad "$T/b3" 1 0 | jq '. + {canary_regime_factor: 1.05}' >"$T/bad.json"
"$OQB_BIN/oqb" run "$T/bad.json" --out "$T/bad" >"$T/bad.out" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q 'canary_regime_factor: 1.05 would split' "$T/bad.out" && ok regime_factor_checked ||
	notok regime_factor_checked "rc=$rc $(cat "$T/bad.out")"
finish
