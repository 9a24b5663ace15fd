#!/usr/bin/env bash
# skip-budget.sh - the suite's own rule on skips (tests/run-tests.sh, issue
# 48): under CI=true a skip that is neither on tests/skips-allowed.txt nor a
# timing skip with outside evidence fails the suite, and so do more than
# OQB_MAX_HOST_SKIPS host-busy skips; the summary counts skips by kind;
# OQB_STRICT_TIMING=1 makes skip_host a failure.  Runs the real runner on
# stand-in test scripts.
source "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-.}

# suite NAME CI LINES...: the runner on one script printing LINES; its
# output in $T/NAME.out, its status in rc
suite() {
	local name=$1 ci=$2
	shift 2
	printf 'echo "%s"\n' "$@" >"$T/$name.sh"
	CI=$ci OQB_SUITE_TAG= "$ROOT/tests/run-tests.sh" "$T/$name.sh" >"$T/$name.out" 2>&1
	rc=$?
}
expect() {   # expect NAME WANT-RC REGEX...
	local name=$1 want=$2 r miss=""
	shift 2
	for r in "$@"; do grep -qE -- "$r" "$T/$name.out" || miss="$miss [$r]"; done
	if [ "$rc" = "$want" ] && [ -z "$miss" ]; then ok "skip budget: $name"
	else notok "skip budget: $name" "status $rc (want $want), missing$miss: $(tail -6 "$T/$name.out")"; fi
}

busy="skip t: host busy: other tasks took 99 % of a CPU over 1.0 s; detail"
allowed="skip fig-x-verbs: run: transport verbs needs the RDMA hosts the config names"
other="skip gnuplot: gnuplot not installed"

suite other_ci true "ok a" "$other"
expect other_ci 1 '^not ok suite: skips that are neither allowed nor host-busy' 'gnuplot: gnuplot not installed' \
	'^skips by kind: 0 host busy .*, 0 allowed .*, 1 other$' '^tests: [0-9]+ passed, 1 failed, 1 skipped$'
suite other_dev false "ok a" "$other"
expect other_dev 0 '^skips by kind: 0 host busy .*, 0 allowed .*, 1 other$' '^tests: [0-9]+ passed, 0 failed, 1 skipped$'
suite allowed_ci true "ok a" "$allowed" "$busy"
expect allowed_ci 0 '^skips by kind: 1 host busy .*, 1 allowed .*, 0 other$' '^tests: [0-9]+ passed, 0 failed, 2 skipped$'
suite many_busy true "ok a" "$busy" "$busy" "$busy" "$busy" "$busy" "$busy"
expect many_busy 1 '^not ok suite: 6 timing cases skipped on a busy host, more than OQB_MAX_HOST_SKIPS=5' \
	'^skips by kind: 6 host busy'
suite five_busy true "ok a" "$busy" "$busy" "$busy" "$busy" "$busy"
expect five_busy 0 '^tests: [0-9]+ passed, 0 failed, 5 skipped$'
# a skip that merely says "host busy" in its reason, not in skip_host's form, is other
suite fake_busy true "ok a" "skip t: the host busy, probably"
expect fake_busy 1 '1 other$'

# skip_host: a skip with its evidence, or a failure under OQB_STRICT_TIMING=1
out=$(skip_host "case one" "other tasks took 50 %" "p50 too high")
[ "$out" = "skip case one: host busy: other tasks took 50 %; p50 too high" ] && ok "skip_host: the skip line" ||
	notok "skip_host: the skip line" "$out"
out=$(OQB_STRICT_TIMING=1 skip_host "case one" "other tasks took 50 %" "p50 too high" 2>&1)
[[ $out == "not ok case one"*"OQB_STRICT_TIMING=1: p50 too high"* ]] && ok "skip_host: a failure under OQB_STRICT_TIMING=1" ||
	notok "skip_host: a failure under OQB_STRICT_TIMING=1" "$out"

# own_cpu_ticks counts this test's processes, reaped and live, so their
# CPU is subtracted from the machine's and is never evidence; a process
# outside the test's tree is evidence.
own_cpu_ticks; a=$OWN_TICKS
timeout 1 sh -c 'while :; do :; done'
own_cpu_ticks; reaped=$((OWN_TICKS - a))
sh -c 'while :; do :; done' &
spin=$!
sleep 1
own_cpu_ticks; b=$OWN_TICKS
kill $spin; wait $spin 2>/dev/null
live=$((b - a - reaped))
[ $reaped -ge 10 ] && [ $live -ge 10 ] && ok "own_cpu_ticks: a reaped child ($reaped ticks) and a live one ($live ticks) are the test's" ||
	notok "own_cpu_ticks: a reaped child and a live one are the test's" "reaped $reaped, live $live ticks"
# a process outside the tree: started through setsid, whose child the
# test's shell does not wait for (it is reaped by init's subreaper)
( setsid sh -c 'timeout 1.5 sh -c "while :; do :; done"' </dev/null >/dev/null 2>&1 & )
host_mark; sleep 1; host_busy 50; got=$?; ev=$HOST_EVIDENCE
[ $got = 0 ] && ok "host_busy: a process outside the test's tree is evidence ($ev)" ||
	notok "host_busy: a process outside the test's tree is evidence" "nothing found"
finish
