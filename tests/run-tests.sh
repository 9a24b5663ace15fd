#!/usr/bin/env bash
# Run oqbench's tests and print one summary line that CI can read:
#   "tests: N passed, N failed, N skipped"
#
# Usage: tests/run-tests.sh [GROUP...]   GROUP is unit, integration or verbs
# (default: all three).  Set by the Makefile: OQB_BIN (binaries) and
# OQB_UNIT (unit-test binaries).  Every test prints "ok NAME", "not ok NAME"
# or "skip NAME: why"; a test that exits non-zero without saying which case
# failed counts as one failure, and so does a test that times out.
set -u
cd "$(dirname "$0")/.."
: "${OQB_BIN:?set OQB_BIN (use make test)}"
: "${OQB_UNIT:?set OQB_UNIT (use make test)}"
export OQB_BIN OQB_UNIT
export OQB_ROOT=$PWD

groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(unit integration verbs)
TIMEOUT=${OQB_TEST_TIMEOUT:-900}

pass=0; fail=0; skipn=0
failed_names=()
log=$(mktemp)

# nothing left behind (issue 39): two more lines after the last test
. tests/suite-leftovers.sh
leftovers_begin
trap 'rm -f "$log"' EXIT

run_one() {   # run_one LABEL CMD...
	local label=$1; shift
	local t0=$SECONDS rc p f s
	echo "== $label"
	timeout -k 10 "$TIMEOUT" "$@" >"$log" 2>&1 </dev/null
	rc=$?
	cat "$log"
	p=$(grep -c '^ok ' "$log"); f=$(grep -c '^not ok ' "$log"); s=$(grep -c '^skip ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			echo "not ok $label: timed out after ${TIMEOUT}s"
		else
			echo "not ok $label: exited with status $rc"
		fi
		f=1
	fi
	pass=$((pass + p)); fail=$((fail + f)); skipn=$((skipn + s))
	[ "$f" -gt 0 ] && failed_names+=("$label")
	echo "   ($((SECONDS - t0)) s: $p ok, $f failed, $s skipped)"
}

for g in "${groups[@]}"; do
	case $g in
	unit)
		for b in "$OQB_UNIT"/test_*; do
			[ -x "$b" ] && run_one "unit/$(basename "$b")" "$b"
		done ;;
	integration)
		for s in tests/integration/*.sh; do
			[ -f "$s" ] && run_one "integration/$(basename "$s" .sh)" bash "$s"
		done ;;
	verbs)
		for s in tests/verbs/run-*.sh; do
			[ -f "$s" ] && run_one "verbs/$(basename "$s" .sh)" bash "$s"
		done ;;
	*)
		# a single test by path or name
		if [ -x "$OQB_UNIT/$g" ]; then run_one "unit/$g" "$OQB_UNIT/$g"
		elif [ -f "tests/integration/$g.sh" ]; then run_one "integration/$g" bash "tests/integration/$g.sh"
		elif [ -f "$g" ]; then run_one "$g" bash "$g"
		else echo "run-tests: no test group or test named '$g' (groups: unit integration verbs)" >&2; exit 2
		fi ;;
	esac
done

echo "== suite: left behind?"
leftovers_end

echo
if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "tests: $pass passed, $fail failed, $skipn skipped"
[ "$fail" -eq 0 ]
