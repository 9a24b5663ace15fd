#!/usr/bin/env bash
# icount.sh - the per-request instruction counts (bench/icount.sh) as a
# regression check: the counts of this build stay within the margin of
# results/baselines/icount.json's gate; two runs agree (callgrind counts do
# not depend on the machine's load); and the check can fail: the same
# counts against a gate lowered by 10 % are reported as grown, naming the
# case.  Skips when valgrind is absent or the build is not the one the
# gate was counted with (another compiler, a sanitizer build).
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BASE=$ROOT/results/baselines/icount.json
IC=$ROOT/bench/icount.sh

if ! command -v valgrind >/dev/null; then
	skip icount "valgrind is not installed (make deps installs it)"
	finish
fi
if [ "${OQB_SANITIZE:-0}" = 1 ]; then
	skip icount "sanitizer build: its instruction counts are not the gate's"
	finish
fi
OQB_BIN=$OQB_BIN "$IC" --json "$T/a.json" --check "$BASE" >"$T/a.out" 2>"$T/a.err"
rc=$?
if [ $rc = 3 ]; then
	skip icount "$(cat "$T/a.err")"
	finish
fi
cat "$T/a.out"
[ $rc = 0 ] && ok icount_within_margin || notok icount_within_margin "$(cat "$T/a.out" "$T/a.err")"
jcheck icount_all_cases "$T/a.json" \
	'[.per_request[]] | length == 5 and all(. > 0)'

# Deterministic: a second run agrees to 0.1 % on every case.
OQB_BIN=$OQB_BIN "$IC" --json "$T/b.json" >/dev/null 2>"$T/b.err" || notok icount_second_run "$(cat "$T/b.err")"
jq -e -n --slurpfile a "$T/a.json" --slurpfile b "$T/b.json" \
	'[$a[0].per_request | to_entries[] | .value as $x | ($b[0].per_request[.key] - $x) | fabs <= $x * 0.001] | all' \
	>/dev/null && ok icount_repeatable ||
	notok icount_repeatable "$(jq -c .per_request "$T/a.json") vs $(jq -c .per_request "$T/b.json")"

# Negative control: a gate 10 % below today's counts must be reported.
jq '.gate.per_request |= map_values(. * 0.9)' "$BASE" >"$T/low.json"
OQB_BIN=$OQB_BIN "$IC" --check "$T/low.json" >"$T/low.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "client_oq .*GREW" "$T/low.out" && grep -q "grew more than 5 %" "$T/low.out" &&
	ok icount_detects_growth || notok icount_detects_growth "rc $rc: $(cat "$T/low.out")"
# ... and a gate 2 % below them is not (the margin is a margin).
jq '.gate.per_request |= map_values(. * 0.98)' "$BASE" >"$T/near.json"
OQB_BIN=$OQB_BIN "$IC" --check "$T/near.json" >"$T/near.out" 2>&1 &&
	ok icount_margin_holds || notok icount_margin_holds "$(cat "$T/near.out")"
finish
