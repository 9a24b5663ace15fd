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
trap 'rm -f "$log"' EXIT

# ---- nothing left behind (issue 39) ----
# Every process the suite starts carries OQB_SUITE_TAG in its environment
# (what it starts in turn inherits it: memcached, Slurm daemons); those
# that run from this build's binaries are the suite's too (over ssh the
# environment does not travel).  After the suite none may still run, and
# the shared-memory folder may hold no oqb-* entry that was not there
# before, except one whose owner.lock (lib/rundir.h) a live process holds
# or names another program than this build's as its maker: on a shared
# machine those are another user's.  An entry without owner.lock (an
# older build's run directory, the driver's pmem directories) cannot say
# whose it is and counts.  Each is its own ok/not ok line.
export OQB_SUITE_TAG="oqb-suite-$$-$RANDOM$RANDOM"
SHM=/dev/shm
# as the kernel names a process's executable: without symbolic links
BIN_REAL=$(cd "$OQB_BIN" 2>/dev/null && pwd -P) || BIN_REAL=$OQB_BIN
UNIT_REAL=$(cd "$OQB_UNIT" 2>/dev/null && pwd -P) || UNIT_REAL=$OQB_UNIT
# this shell and the subshells between it and the caller (they carry the
# tag, and one lives across both samples)
self_chain() {
	local p=$BASHPID
	while [ -n "$p" ] && [ "$p" -gt 1 ]; do
		echo "$p"
		[ "$p" = $$ ] && break
		p=$(sed -n 's/^PPid:[[:space:]]*//p' /proc/"$p"/status 2>/dev/null)
	done
}
suite_procs_once() {
	{
		grep -lzx "OQB_SUITE_TAG=$OQB_SUITE_TAG" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
		find /proc -mindepth 2 -maxdepth 2 -name exe \( -lname "$BIN_REAL/*" -o -lname "$UNIT_REAL/*" \) \
			2>/dev/null | cut -d/ -f3
	} | sort -u | grep -vxF -f <(self_chain)
}
# the suite's processes now: in two samples 0.5 s apart (this check's
# own short-lived helpers are in one only)
suite_procs() {
	local a b
	a=$(suite_procs_once); sleep 0.5; b=$(suite_procs_once)
	comm -12 <(echo "$a") <(echo "$b") | grep .
}
shm_names() { ls -d "$SHM"/oqb-* 2>/dev/null | sort; }
procs_before=$(suite_procs)
shm_before=$(shm_names)

leftover_check() {
	local p left="" waited d new=""
	# processes that are on their way out get 10 s
	for waited in $(seq 1 10); do
		left=$(comm -13 <(echo "$procs_before") <(suite_procs))
		[ -z "$left" ] && break
		sleep 1
	done
	if [ -z "$left" ]; then
		echo "ok suite: no process it started is still running"
		pass=$((pass + 1))
	else
		echo "not ok suite: processes it started are still running (now ended by PID):"
		for p in $left; do
			echo "  pid $p: $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | cut -c1-300)"
		done
		for p in $left; do kill -TERM "$p" 2>/dev/null; done
		sleep 2
		for p in $left; do kill -KILL "$p" 2>/dev/null; done
		fail=$((fail + 1)); failed_names+=("suite-processes")
	fi
	for d in $(comm -13 <(echo "$shm_before") <(shm_names)); do
		if [ -e "$d/owner.lock" ]; then
			# a live process's: in use, not left behind
			flock -n -x "$d/owner.lock" true 2>/dev/null || continue
			case $(sed -n 's/^exe //p' "$d/owner.lock" 2>/dev/null) in
			"$BIN_REAL"/*|"$UNIT_REAL"/*) ;;
			*) echo "  (not this suite's: $d, made by $(sed -n 's/^exe //p' "$d/owner.lock"))"; continue ;;
			esac
		fi
		new="$new $d"
	done
	if [ -z "$new" ]; then
		echo "ok suite: no new oqb-* entry in $SHM"
		pass=$((pass + 1))
	else
		echo "not ok suite: left in $SHM (nothing there holds them; oqb-[KIND-]PID-* names the PID that made it):"
		for d in $new; do echo "  $d: $(ls -A "$d" 2>/dev/null | head -n 8 | tr '\n' ' ')"; done
		fail=$((fail + 1)); failed_names+=("suite-shm")
	fi
}

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
leftover_check

echo
if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "tests: $pass passed, $fail failed, $skipn skipped"
[ "$fail" -eq 0 ]
