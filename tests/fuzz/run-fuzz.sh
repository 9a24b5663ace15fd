#!/usr/bin/env bash
# run-fuzz.sh - `make fuzz`: runs each libFuzzer target on its corpus.
#
# Usage: tests/fuzz/run-fuzz.sh BUILD_DIR SECONDS NAME...
# For each NAME: BUILD_DIR/fuzz-NAME runs SECONDS (wall clock) with
# tests/fuzz/corpus/NAME/ and the NAME's crash reproducers
# (tests/fuzz/regress/NAME-*.bin) as seeds.  New inputs go to
# BUILD_DIR/scratch/NAME/, crashes to BUILD_DIR/crash/NAME-*, the log to
# BUILD_DIR/log/NAME.log; the repository is never written.  The working
# directory is an empty scratch folder under BUILD_DIR, so a config naming a relative
# file finds nothing.  tests/fuzz/NAME.dict, if there, is the target's
# dictionary (keys and words of its format).  One line per target: executions per second, the
# final corpus (inputs/bytes), the new inputs, and any crash.
#
# To keep new inputs deliberately, merge them into the committed corpus
# (only those that add coverage are copied):
#   BUILD_DIR/fuzz-NAME -merge=1 tests/fuzz/corpus/NAME BUILD_DIR/scratch/NAME
# A crash: minimise it (BUILD_DIR/fuzz-NAME -minimize_crash=1 -runs=10000
# CRASH), fix the parser, and commit the minimised input as
# tests/fuzz/regress/NAME-SHORT.bin (make test replays it).
set -u
cd "$(dirname "$0")/../.."
build=${1:?usage: run-fuzz.sh BUILD_DIR SECONDS NAME...}
secs=${2:?seconds}
shift 2
root=$PWD
mkdir -p "$build/scratch" "$build/crash" "$build/log" "$build/work"
bad=0
for name in "$@"; do
	bin=$root/$build/fuzz-$name
	scratch=$root/$build/scratch/$name
	log=$root/$build/log/$name.log
	mkdir -p "$scratch"
	dict=()
	[ -f "tests/fuzz/$name.dict" ] && dict=(-dict="$root/tests/fuzz/$name.dict")
	for f in tests/fuzz/regress/"$name"-*.bin; do
		[ -f "$f" ] && cp "$f" "$scratch/"
	done
	(cd "$build/work" && timeout -k 10 $((secs + 120)) "$bin" -max_total_time="$secs" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
		-artifact_prefix="$root/$build/crash/$name-" "$scratch" "$root/tests/fuzz/corpus/$name" \
		</dev/null >"$log" 2>&1)
	rc=$?
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	newu=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -n 1)
	corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -n 1)
	if [ "$rc" -ne 0 ]; then
		bad=1
		echo "fuzz-$name: FAILED (exit $rc) after ${runs:-?} runs; see $build/log/$name.log" \
			"and $build/crash/$name-*"
		grep -m 3 -E '^(==[0-9]+==ERROR|SUMMARY|fuzz: )' "$log" | sed 's/^/  /'
	else
		echo "fuzz-$name: ${secs}s, ${runs:-?} runs, ${eps:-?} exec/s, ${corp:-corp: ?}, ${newu:-?} new inputs"
	fi
done
exit "$bad"
