#!/usr/bin/env bash
# ab.sh - `oqb ab`, the A/B gate: exit statuses, outputs, RMIT order, and
# that it catches a real slowdown (a test-only server delay on NEW) while
# the same binaries on both sides are never called a regression; a noisy
# canary (a stand-in oqb-floor whose readings jump) gives up with 3.
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

# usage and input errors: 4, with the reason
ab --new "$OQB_BIN" --out "$T/u1" >"$T/u1.out" 2>&1
rc=$?
[ $rc -eq 4 ] && grep -q -- '--base DIR is required' "$T/u1.out" && ok ab_usage_missing_base ||
	notok ab_usage_missing_base "rc=$rc $(cat "$T/u1.out")"
mkdir -p "$T/empty"
ab --base "$T/empty" --new "$OQB_BIN" --out "$T/u2" >"$T/u2.out" 2>&1
rc=$?
[ $rc -eq 4 ] && grep -q 'no executable oqb-server there' "$T/u2.out" && ok ab_bad_bindir ||
	notok ab_bad_bindir "rc=$rc $(cat "$T/u2.out")"

# A/B: NEW's server waits 100 us per request: p50 grows about a
# hundredfold (100 us is 40 % of one worker at the 4,000 ops/s point; 300
# us was 120 %, so NEW saturated, and its own checks then called it
# disturbed).  The real canary runs here, and on a loaded CI machine two
# sides of a round read it apart often enough to leave rounds out; that
# pairing is tested with fixed canaries in driver-e2e.sh and below, so
# this case turns it off (--canary-drift) as it turns off the pre-check.
# A gate that answers "inconclusive" is run again with more rounds (beside
# one CPU hog it said 8-17 trials per side would decide it).  If that is
# inconclusive too and the host was seen taking CPU from the gate -- a side
# disturbed by the host (compare says so in the point's detail), a
# 1-minute load above 3 per CPU, or the rounds' own interference or stalls
# checks warning -- the cases are skipped with the reason: inconclusive is
# then the right answer, and only a "same" or an "improvement" would be
# wrong (issue 39: a busy neighbour must not fail CI, and the gate must not
# be loosened to pass).  On a calm host it fails.

# host_took_cpu OUT: why the host, not the binaries, may have decided the
# gate in OUT (empty when nothing says so).
host_took_cpu() {
	local f
	if grep -q 'disturbed by the host' "$1/ab.json" 2>/dev/null; then
		jq -r '[.comparison.points[] | .. | strings | select(test("disturbed by the host"))][0] | .[0:200]' "$1/ab.json"
	elif awk -v n="$(nproc)" '{ exit !($1 > 3 * n) }' /proc/loadavg; then
		echo "load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
	else
		f=$(host_flags "$1"/r*-*/run.json)
		[ -n "$f" ] && echo "the rounds' checks: $f"
	fi
}

# detect OUT ARGS...: `ab ARGS` into OUT (its output in OUT.out), with 4-6
# rounds and, if inconclusive, once more with 6-16; sets rc and
# detect_skip (the reason to skip, or empty).  OUT.n, a stand-in canary's
# call count, starts again with each attempt.
detect() {
	local out=$1 spec why
	shift
	detect_skip=
	for spec in 4:6 6:16; do
		rm -rf "$out" "$out.n"
		ab "$@" --trials "${spec%:*}" --max-trials "${spec#*:}" --out "$out" >"$out.out" 2>&1
		rc=$?
		[ $rc -eq 2 ] || { detect_skip=; return; }
		why=$(host_took_cpu "$out")
		echo "  ab detection (${out##*/}, at most ${spec#*:} rounds): inconclusive${why:+; $why}" >&2
		detect_skip=${why:+"the host took CPU from the gate in both attempts ($why); the gate said inconclusive, as it should"}
	done
}
detect "$T/ab" --base "$OQB_BIN" --new "$OQB_BIN" --new-env OQB_FAULT=server-delay-ns:100000 \
	--noise-limit 1e9 --canary-drift 1000
if [ -n "$detect_skip" ]; then
	for c in ab_catches_server_delay ab_json ab_rounds_paired ab_rounds_both_sides ab_runs_kept ab_junit_and_markdown; do
		skip "$c" "$detect_skip"
	done
else
if [ $rc -eq 1 ] && jq -e '[.comparison.points[] | select(.p50.verdict == "regression")] | length >= 1' "$T/ab/ab.json" >/dev/null
then ok ab_catches_server_delay
else notok ab_catches_server_delay "rc=$rc $(tail -5 "$T/ab.out")"; fi
jcheck ab_json "$T/ab/ab.json" '.schema == "oqbench.ab/1" and .exit_status == 1 and .verdict == "REGRESSION" and
	.rounds >= 4 and (.order | length) == 2 * .rounds and .sides.new.env == ["OQB_FAULT=server-delay-ns:100000"]
	and (.noise.before.p50_ns | length) == 5 and (.comparison.summary.regressions >= 1) and .noise.moved == false'
# compare pairs the two sides' trials by round (a round whose canaries
# differ is left out on both sides)
# (a trial the host starved into saturation is left out of the test, so
# the trials used are at most the rounds paired)
jcheck ab_rounds_paired "$T/ab/ab.json" 'all(.comparison.points[]; .p50.trials_base <= .rounds.paired - .rounds.left_out
	and (.rounds.used | length) == .rounds.paired - .rounds.left_out and .rounds.paired >= 4)
	and .comparison.summary.rounds_left_out == 0'
# RMIT: each round runs both sides (which first is drawn per round, seeded)
jcheck ab_rounds_both_sides "$T/ab/ab.json" '[.order | group_by(.[0])[] | map(.[1]) | sort] | all(. == ["base","new"])'
check ab_runs_kept test -f "$T/ab/r01-base/run.json" -a -f "$T/ab/r01-new/run.json"
if grep -q '<testsuite name="oqb ab' "$T/ab/junit.xml" && grep -q '<failure message="REGRESSION' "$T/ab/junit.xml" &&
	grep -q '^### oqb ab: REGRESSION' "$T/ab/summary.md" && grep -q '| rawrpc | 2000 |' "$T/ab/summary.md"; then
	ok ab_junit_and_markdown
else
	notok ab_junit_and_markdown "$(cat "$T/ab/junit.xml" "$T/ab/summary.md")"
fi
fi

# A/A: the same binaries on both sides are never a regression
ab --base "$OQB_BIN" --new "$OQB_BIN" --trials 4 --max-trials 5 --noise-limit 1e9 --out "$T/aa" >"$T/aa.out" 2>&1
rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 2 ]; then ok "ab_aa_no_regression (exit $rc)"
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
if [ -n "$detect_skip" ]; then
	skip ab_machine_moved_noted "$detect_skip"
elif [ $rc -eq 1 ] && grep -q 'the canary moved by x5.00 between before and after the gate' "$T/moved-ab.out" &&
	jq -e '.noise.moved == true and .verdict == "REGRESSION" and .comparison.summary.rounds_left_out == 0' \
		"$T/moved-ab/ab.json" >/dev/null && grep -q '<system-out>the canary moved' "$T/moved-ab/junit.xml"; then
	ok ab_machine_moved_noted
else
	notok ab_machine_moved_noted "rc=$rc $(tail -3 "$T/moved-ab.out")"
fi

# too noisy: a canary that never settles
stand_in "$T/noisy" 1000000
ab --base "$T/noisy" --new "$OQB_BIN" --noise-wait-s 0.2 --out "$T/noise" >"$T/noise.out" 2>&1
rc=$?
if [ $rc -eq 3 ] && grep -q 'too noisy to judge' "$T/noise.out" && [ ! -d "$T/noise/r01-base" ]; then
	ok ab_too_noisy_gives_up
else
	notok ab_too_noisy_gives_up "rc=$rc $(cat "$T/noise.out")"
fi
# it measured three times (two retries by default) before giving up
jcheck ab_too_noisy_json "$T/noise/ab.json" '.exit_status == 3 and .rounds == 0 and .noise.before.spread == 9
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
	and .noise.before_attempts[0].spread == 9 and .noise.before.spread == 1 and .exit_status != 3'
finish
