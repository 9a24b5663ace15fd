#!/usr/bin/env bash
# ab.sh - `oqb ab`, the A/B gate: exit statuses, outputs, RMIT order, and
# that it catches a real slowdown (a test-only server delay on NEW), one
# that saturates NEW too, while the same binaries on both sides are never
# called a regression; a noisy canary (a stand-in oqb-floor whose readings
# jump) gives up with 3.
. "$(dirname "$0")/../lib.sh"

# 100 keys: the client loads them through the server before it reports
# ready, so through NEW's delayed server too (1,000 keys at 300 us took
# 0.3-9 s of a round beside other suites, and past the 30 s HELLO timeout
# the run failed).
cat >"$T/cfg.json" <<CFG
{ "name": "abt", "transport": "shm", "systems": ["rawrpc"],
  "server": { "workers": 1, "backend": { "kind": "null" } },
  "clients": { "processes": 1, "threads": 1 },
  "workload": { "kind": "kv", "put_ratio": 0.5, "key_size": 16, "value_size": 64, "keys": 100 },
  "arrival": { "kind": "poisson", "loads_ops": [2000, 4000] },
  "warmup_s": 0.1, "duration_s": 0.25, "seed": 3 }
CFG
ab() { "$OQB_BIN/oqb" ab "$T/cfg.json" --quiet "$@"; }

# usage and input errors: 2 (bad input, lib/exitcodes.h), with the reason
ab --new "$OQB_BIN" --out "$T/u1" >"$T/u1.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q -- '--base DIR is required' "$T/u1.out" && ok ab_usage_missing_base ||
	notok ab_usage_missing_base "rc=$rc $(cat "$T/u1.out")"
mkdir -p "$T/empty"
ab --base "$T/empty" --new "$OQB_BIN" --out "$T/u2" >"$T/u2.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'no executable oqb-server there' "$T/u2.out" && ok ab_bad_bindir ||
	notok ab_bad_bindir "rc=$rc $(cat "$T/u2.out")"

# A/B: NEW's server waits 100 us per request: p50 grows about a
# hundredfold (100 us is 40 % of one worker at the 4,000 ops/s point).
# The real canary runs here, and on a loaded CI machine two sides of a
# round read it apart often enough to leave rounds out; that pairing is
# tested with fixed canaries in driver-e2e.sh and below, so this case
# turns it off (--canary-drift) as it turns off the pre-check.  A gate
# that answers "inconclusive" is run again with more rounds (beside one
# CPU hog it said 8-17 trials per side would decide it).  If that is
# inconclusive too and in every attempt other tasks took CPU from this
# test (host_busy: the kernel's accounting, less this test's own
# processes; never the gate's own words or the runs' own checks, which a
# regression can produce), the case is skipped with that evidence:
# inconclusive is then the right answer, and only a "same" or an
# "improvement" would be wrong (issue 39: a busy neighbour must not fail
# CI, and the gate must not be loosened to pass).  On a calm host it fails.

# detect OUT ARGS...: `ab ARGS` into OUT (its output in OUT.out), with 6-12
# rounds and, if inconclusive, once more with 8-16 (DETECT_ROUNDS: those
# two MIN:MAX).  Six rounds a side is the fewest whose rank test can pass
# the gate's first look (2 points x 4 metrics, Holm, the look's share of
# alpha 0.05: 0.0039 at 6 of 12, and 2/C(12, 6) = 0.0022; docs/ci.md).
# Sets rc, and detect_busy to the host's evidence of every
# attempt when each had some (empty when an attempt ran on a calm host).
# OUT.n, a stand-in canary's call count, starts again with each attempt.
detect() {
	local out=$1 spec ev= calm=0
	shift
	for spec in ${DETECT_ROUNDS:-6:12 8:16}; do
		rm -rf "$out" "$out.n"
		host_mark
		ab "$@" --trials "${spec%:*}" --max-trials "${spec#*:}" --out "$out" >"$out.out" 2>&1
		rc=$?
		if host_busy; then
			ev="$ev${ev:+; }at most ${spec#*:} rounds: $HOST_EVIDENCE"
		else
			calm=1
		fi
		[ $rc -eq 3 ] || break
		echo "  ab detection (${out##*/}, at most ${spec#*:} rounds): inconclusive${HOST_EVIDENCE:+; $HOST_EVIDENCE}" >&2
	done
	detect_busy=
	[ $calm -eq 0 ] && detect_busy=$ev
}

# judge_detect NAME OUT JQ: NAME is ok when detect's gate in OUT exited 1
# (regression) and JQ holds on its ab.json; an inconclusive gate is
# skipped when the host was busy in every attempt; else not ok.
judge_detect() {
	if [ $rc -eq 1 ] && jq -e "$3" "$2/ab.json" >/dev/null 2>&1; then
		ok "$1"
	elif [ $rc -eq 3 ] && [ -n "$detect_busy" ]; then
		skip_host "$1" "$detect_busy" "the gate said inconclusive, as it may beside a busy neighbour"
	else
		notok "$1" "rc=$rc $(tail -5 "$2.out")"
	fi
}

detect "$T/ab" --base "$OQB_BIN" --new "$OQB_BIN" --new-env OQB_FAULT=server-delay-ns:100000 \
	--noise-limit 1e9 --canary-drift 1000
judge_detect ab_catches_server_delay "$T/ab" '[.comparison.points[] | select(.p50.verdict == "regression")] | length >= 1'
# the sequential design's bookkeeping: every gated metric of every point
# says whether it was decided and after how many rounds (one of the
# looks'), the looks never spent more than --alpha, and the output lists
# the rounds per metric
jcheck ab_rounds_per_metric "$T/ab/ab.json" '(.comparison.summary.sequential.looks | map(.rounds)) as $looks |
	($looks | length) >= 1 and ([.comparison.summary.sequential.looks[].alpha] | add) <= 0.05 + 1e-12 and
	all(.comparison.points[]; . as $p | all("p50", "p99", "achieved_ops";
		($p[.].decided == true and ($p[.].rounds_needed as $r | $looks | index([$r]) != null)) or
		($p[.].decided == false and $p[.].rounds_needed == null)))'
if grep -q '^ab: rounds needed: rawrpc 4000: p50 ' "$T/ab.out"; then ok ab_rounds_per_metric_printed
else notok ab_rounds_per_metric_printed "$(tail -5 "$T/ab.out")"; fi
# What follows is the gate's bookkeeping, true whatever it decided: these
# cases are judged on every run (a verdict they report is the one it exited with).
jcheck ab_json "$T/ab/ab.json" '.schema == "oqbench.ab/1" and .exit_status == '"$rc"' and
	.verdict == ({"0": "no regression", "1": "REGRESSION", "3": "inconclusive"}["'"$rc"'"] // "?") and
	.rounds >= 6 and (.order | length) == 2 * .rounds and .sides.new.env == ["OQB_FAULT=server-delay-ns:100000"]
	and (.noise.before.p50_ns | length) == 5 and (.comparison.summary.regressions >= 1) == ('"$rc"' == 1)
	and .noise.moved == false and .sides.base.build_id == "'"$("$OQB_BIN/oqb-server" --build-id)"'"
	and .sides.new.build_id == .sides.base.build_id'
# compare pairs the two sides' trials by round (a round whose canaries
# differ is left out on both sides)
# (a trial the host starved into saturation is left out of the test, so
# the trials used are at most the rounds paired; a metric decided at an
# earlier look keeps that look's test, on at most the rounds it had then:
# its rounds_needed)
jcheck ab_rounds_paired "$T/ab/ab.json" 'all(.comparison.points[]; .p50.trials_base <=
	(if .p50.decided then .p50.rounds_needed else .rounds.paired - .rounds.left_out end)
	and (.rounds.used | length) == .rounds.paired - .rounds.left_out and .rounds.paired >= 6)
	and .comparison.summary.rounds_left_out == 0'
# RMIT: each round runs both sides (which first is drawn per round, seeded)
jcheck ab_rounds_both_sides "$T/ab/ab.json" '.rounds >= 6 and
	([.order | group_by(.[0])[] | map(.[1]) | sort] | all(. == ["base","new"]))'
check ab_runs_kept test -f "$T/ab/r01-base/run.json" -a -f "$T/ab/r01-new/run.json"
# junit.xml fails the suite exactly on a regression; summary.md heads with the verdict
word=$(jq -r .verdict "$T/ab/ab.json" 2>/dev/null)
if grep -q '<testsuite name="oqb ab' "$T/ab/junit.xml" && grep -q "^### oqb ab: $word" "$T/ab/summary.md" &&
	grep -q '| rawrpc | 2000 |' "$T/ab/summary.md" &&
	{ grep -q '<failure message="REGRESSION' "$T/ab/junit.xml"; [ $? -eq $((rc != 1)) ]; }; then
	ok ab_junit_and_markdown
else
	notok ab_junit_and_markdown "rc=$rc verdict=$word: $(cat "$T/ab/junit.xml" "$T/ab/summary.md" 2>&1)"
fi

# A/B where NEW saturates: 300 us per request is 120 % of the one worker
# at 4,000 ops/s, so NEW's requests queue and go unsent in every round,
# and its spinning threads look disturbed (interference, stalls).  NEW
# did not keep up and BASE did, so compare calls NEW the worse side: a
# regression, not "disturbed by the host" (an inconclusive here would let
# any change that overloads the server through the gate).  More rounds
# would not help a second attempt: a round in which the host overloads
# BASE too rightly holds the verdict back, so it runs 6-8 rounds again.
DETECT_ROUNDS="6:8 6:8" detect "$T/sat" --base "$OQB_BIN" --new "$OQB_BIN" --new-env OQB_FAULT=server-delay-ns:300000 \
	--noise-limit 1e9 --canary-drift 1000
judge_detect ab_catches_saturating_delay "$T/sat" '.comparison.points[] | select(.load == "4000") | .verdict == "regression"'

# A/A: the same binaries on both sides are never a regression
ab --base "$OQB_BIN" --new "$OQB_BIN" --trials 4 --max-trials 5 --noise-limit 1e9 --out "$T/aa" >"$T/aa.out" 2>&1
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 3 ]; then ok "ab_aa_no_regression (exit $rc)"
else notok ab_aa_no_regression "rc=$rc $(tail -5 "$T/aa.out")"; fi

# stand_in DIR NOISY: a bin directory whose oqb-floor is a stand-in: its
# first NOISY readings jump between 100 and 900 ns, later ones read 300 ns
stand_in() {
	mkdir -p "$1"
	ln -s "$OQB_BIN/oqb-server" "$OQB_BIN/oqb-client" "$1/"
	cat >"$1/oqb-floor" <<SH
#!/bin/sh
f=\$(dirname "\$0")/.n; n=\$(cat "\$f" 2>/dev/null || echo 0); echo \$((n + 1)) >"\$f"
if [ "\$n" -lt $2 ]; then p=\$(( n % 2 ? 900 : 100 )); else p=300; fi
echo "{\"rtt_ns\":{\"p50\":\$p,\"p99\":1000,\"min\":90},\"rounds\":20000,\"cpus\":[0,1]}"
SH
	chmod +x "$1/oqb-floor"
}

# the machine changes during the gate: the canary reads 100 ns before it
# and 500 ns in every round (both sides) and after it.  Every round's two
# sides agree, so the verdict stands on them: the delay is a regression,
# and the move is noted, not a reason to give up.
mkdir -p "$T/moved"
ln -s "$OQB_BIN/oqb-server" "$OQB_BIN/oqb-client" "$T/moved/"
cat >"$T/moved/oqb-floor" <<SH
#!/bin/sh
f=$T/moved-ab.n; n=\$(cat "\$f" 2>/dev/null || echo 0); echo \$((n + 1)) >"\$f"
if [ "\$n" -lt 5 ]; then p=100; else p=500; fi
echo "{\"rtt_ns\":{\"p50\":\$p,\"p99\":1000,\"min\":90},\"rounds\":20000,\"cpus\":[0,1]}"
SH
chmod +x "$T/moved/oqb-floor"
detect "$T/moved-ab" --base "$T/moved" --new "$T/moved" --new-env OQB_FAULT=server-delay-ns:100000
judge_detect ab_machine_moved_regression "$T/moved-ab" '.verdict == "REGRESSION"'
# the move is noted whatever the verdict (bookkeeping: judged on every run)
if grep -q 'the canary moved by x5.00 between before and after the gate' "$T/moved-ab.out" &&
	jq -e '.noise.moved == true and .comparison.summary.rounds_left_out == 0' "$T/moved-ab/ab.json" >/dev/null &&
	grep -q '<system-out>the canary moved' "$T/moved-ab/junit.xml"; then
	ok ab_machine_moved_noted
else
	notok ab_machine_moved_noted "rc=$rc $(tail -3 "$T/moved-ab.out")"
fi

# too noisy: a canary that never settles
stand_in "$T/noisy" 1000000
ab --base "$T/noisy" --new "$OQB_BIN" --noise-wait-s 0.2 --out "$T/noise" >"$T/noise.out" 2>&1
rc=$?
if [ $rc -eq 4 ] && grep -q 'too noisy to judge' "$T/noise.out" && [ ! -d "$T/noise/r01-base" ]; then
	ok ab_too_noisy_gives_up
else
	notok ab_too_noisy_gives_up "rc=$rc $(cat "$T/noise.out")"
fi
# it measured three times (two retries by default) before giving up
jcheck ab_too_noisy_json "$T/noise/ab.json" '.exit_status == 4 and .rounds == 0 and .noise.before.spread == 9
	and (.noise.before_attempts | length) == 3 and all(.noise.before_attempts[]; .spread == 9)'

# a canary that is noisy for one attempt (5 readings) and then steady:
# the retry lets the gate run (the base side's stand-in reads 300 ns and
# the new side's real canary what this host reads, so the regime rule,
# tested in ab-regime.sh, is off here)
stand_in "$T/settles" 5
ab --base "$T/settles" --new "$OQB_BIN" --noise-wait-s 0.2 --trials 2 --max-trials 2 --regime-reruns 0 --out "$T/settles-ab" \
	>"$T/settles.out" 2>&1
rc=$?
jcheck ab_canary_retry_then_runs "$T/settles-ab/ab.json" '.rounds == 2 and (.noise.before_attempts | length) == 2
	and .noise.before_attempts[0].spread == 9 and .noise.before.spread == 1 and .exit_status != 4'
finish
