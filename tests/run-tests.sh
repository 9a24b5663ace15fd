#!/usr/bin/env bash
# Run oqbench's tests and print one summary line that CI can read:
#   "tests: N passed, N failed, N skipped"
#
# Usage: tests/run-tests.sh [GROUP...]   GROUP is unit, integration, verbs
# (default: those three; `make test`) or long (`make test-long`): the
# scripts listed in tests/long.list, which the other groups leave out.
# Set by the Makefile: OQB_BIN (binaries) and OQB_UNIT (unit-test
# binaries).  Every test prints "ok NAME", "not ok NAME"
# or "skip NAME: why"; a test that exits non-zero without saying which case
# failed counts as one failure, and so does a test that times out.
#
# Skips have a budget (issue 48).  Each skip is one of three kinds:
#   host busy   a timing case that failed while other tasks took the CPU,
#               on evidence from outside the processes it judged
#               (tests/lib.sh: skip_host; "skip NAME: host busy: ...");
#   allowed     on tests/skips-allowed.txt: what cannot run here at all
#               (RDMA hosts a config names, an eRPC checkout, the
#               sanitizer build's timings);
#   other       anything else (a missing package, a missing feature).
# A line before the summary counts them by kind.  Under CI=true an
# "other" skip fails the suite, and so do more than OQB_MAX_HOST_SKIPS (5)
# "host busy" skips: a run that judged almost nothing proved almost
# nothing.  OQB_STRICT_TIMING=1 turns every timing skip into a failure
# where it is made (a quiet stage, a pinned lab runner).
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
skips=$(mktemp)   # every skip line, "LABEL<TAB>line", kinds decided at the end

# nothing left behind (issue 39): two more lines after the last test
. tests/suite-leftovers.sh
leftovers_begin
trap 'rm -f "$log" "$skips"' EXIT

# run_one LABEL CMD...: a script may ask for a longer limit than
# OQB_TEST_TIMEOUT (900 s) with a line "# oqb-test-timeout: SECONDS" (a
# VM that runs several guest scripts in one boot); OQB_TEST_TIMEOUT set
# larger wins.
run_one() {
	local label=$1; shift
	local t0=$SECONDS rc p f s lim=$TIMEOUT own
	echo "== $label"
	case ${@: -1} in *.sh) own=$(sed -n 's/^# oqb-test-timeout: \([0-9]*\)$/\1/p' "${@: -1}" | head -1) ;; *) own= ;; esac
	[ -n "$own" ] && [ "$own" -gt "$lim" ] && lim=$own
	timeout -k 10 "$lim" "$@" >"$log" 2>&1 </dev/null
	rc=$?
	cat "$log"
	p=$(grep -c '^ok ' "$log"); f=$(grep -c '^not ok ' "$log"); s=$(grep -c '^skip ' "$log")
	grep '^skip ' "$log" | sed "s|^|$label\t|" >>"$skips"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			echo "not ok $label: timed out after ${lim}s"
		else
			echo "not ok $label: exited with status $rc"
		fi
		f=1
	fi
	pass=$((pass + p)); fail=$((fail + f)); skipn=$((skipn + s))
	[ "$f" -gt 0 ] && failed_names+=("$label")
	echo "   ($((SECONDS - t0)) s: $p ok, $f failed, $s skipped)"
}

# in_long SCRIPT: SCRIPT (tests/GROUP/NAME.sh) is on tests/long.list alone
# on its line (moved there); a line that adds settings runs it again there
in_long() { grep -qxF "$1" tests/long.list; }

for g in "${groups[@]}"; do
	case $g in
	long)
		while read -r s sets; do
			case $s in ''|'#'*) continue ;; esac
			[ -f "$s" ] || { echo "not ok long: tests/long.list names $s, which does not exist"; fail=$((fail + 1)); continue; }
			n=${s#tests/}
			# shellcheck disable=SC2086
			run_one "${n%.sh}${sets:+ ($sets)}" env $sets bash "$s"
		done <tests/long.list ;;
	unit)
		for b in "$OQB_UNIT"/test_*; do
			[ -x "$b" ] && run_one "unit/$(basename "$b")" "$b"
		done ;;
	integration)
		for s in tests/integration/*.sh; do
			[ -f "$s" ] && ! in_long "$s" && run_one "integration/$(basename "$s" .sh)" bash "$s"
		done ;;
	verbs)
		for s in tests/verbs/run-*.sh; do
			[ -f "$s" ] && ! in_long "$s" && run_one "verbs/$(basename "$s" .sh)" bash "$s"
		done ;;
	*)
		# a single test by path or name
		if [ -x "$OQB_UNIT/$g" ]; then run_one "unit/$g" "$OQB_UNIT/$g"
		elif [ -f "tests/integration/$g.sh" ]; then run_one "integration/$g" bash "tests/integration/$g.sh"
		elif [ -f "$g" ]; then run_one "$g" bash "$g"
		else echo "run-tests: no test group or test named '$g' (groups: unit integration verbs long)" >&2; exit 2
		fi ;;
	esac
done

echo "== suite: left behind?"
leftovers_end

# skip_kind LINE: host, allowed or other (see the top of this file)
allow=tests/skips-allowed.txt
skip_kind() {
	local line=$1 pat
	case $line in "skip "*": host busy: "*) echo host; return ;; esac
	while IFS=$'\t' read -r pat _; do
		case $pat in ''|'#'*) continue ;; esac
		[[ ${line#skip } =~ $pat ]] && { echo allowed; return; }
	done <"$allow"
	echo other
}
nh=0; na=0; no=0; others=()
while IFS=$'\t' read -r label line; do
	case $(skip_kind "$line") in
	host) nh=$((nh + 1)) ;;
	allowed) na=$((na + 1)) ;;
	*) no=$((no + 1)); others+=("$label: ${line#skip }") ;;
	esac
done <"$skips"
echo "skips by kind: $nh host busy (evidence from outside the processes judged), $na allowed ($allow), $no other"
MAX_HOST=${OQB_MAX_HOST_SKIPS:-5}
if [ "${CI:-}" = true ]; then
	if [ $no -gt 0 ]; then
		echo "not ok suite: skips that are neither allowed nor host-busy fail under CI=true:"
		printf '  %s\n' "${others[@]}"
		fail=$((fail + 1)); failed_names+=("suite/skips")
	fi
	if [ $nh -gt "$MAX_HOST" ]; then
		echo "not ok suite: $nh timing cases skipped on a busy host, more than OQB_MAX_HOST_SKIPS=$MAX_HOST: this run judged too little"
		fail=$((fail + 1)); failed_names+=("suite/host-skips")
	fi
fi

echo
if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "tests: $pass passed, $fail failed, $skipn skipped"
[ "$fail" -eq 0 ]
