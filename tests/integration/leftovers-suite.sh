#!/usr/bin/env bash
# leftovers-suite.sh - the suite's own leftover check (tests/suite-leftovers.sh)
# on planted entries, in folders of this test's own that stand for
# /dev/shm, $TMPDIR and the checkout (never the machine's): a stale entry
# of this suite is reported and removed; a live one (its owner.lock held,
# or in use by a process), another build's or suite's, one that was there
# before, and one that another live test run could have made are left
# alone; and another run's processes are told from this suite's by the
# tag in their environment.
. "$(dirname "$0")/../lib.sh"
mkdir -p "$T/shm" "$T/tmp" "$T/checkout/build" "$T/checkout/results"

# hold LOCKFILE: a process that holds LOCKFILE's lock (flock) for 120 s
# (its PID in $T/pids, ended by this test); HOLDER is its PID, once the
# lock is taken
hold() {
	(exec 9>>"$1" && flock -x 9 && exec sleep 120) &
	HOLDER=$!
	echo "$HOLDER" >>"$T/pids"
	for _ in $(seq 1 100); do
		flock -n -x "$1" true 2>/dev/null || return 0
		sleep 0.05
	done
}
# said FILE...: the check's output, quoted (its "not ok" lines are not
# this test's)
said() { cat "$@" 2>/dev/null | sed 's/^/    | /'; }
# check_entry NAME gone|kept PATH: how a planted entry came out
check_entry() {
	local name=$1 want=$2 path=$3
	if { [ "$want" = gone ] && [ ! -e "$path" ]; } || { [ "$want" = kept ] && [ -e "$path" ]; }; then ok "$name"
	else notok "$name" "$path should be $want; the check said:
$(said "$T/out" "$T/out2")"; fi
}

(
	. "$OQB_ROOT/tests/suite-leftovers.sh"
	LO_SHM_DIR=$T/shm LO_TMP_DIRS=("$T/tmp") LO_ROOT=$T/checkout
	pass=0 fail=0 failed_names=()
	mkdir -p "$T/tmp/oqbtest.before"
	leftovers_begin
	# this suite's run directory, its maker dead: its lock is free
	d=$T/shm/oqb-999999999-Stale1
	mkdir -p "$d" && printf 'pid 999999999\nexe %s/oqb-server\n' "$LO_BIN" >"$d/owner.lock" && : >"$d/ring-0"
	# one a live server holds
	d=$T/shm/oqb-999999998-Live01
	mkdir -p "$d" && printf 'pid 999999998\nexe %s/oqb-server\n' "$LO_BIN" >"$d/owner.lock"
	hold "$d/owner.lock"
	# another build's, dead
	d=$T/shm/oqb-999999997-Other1
	mkdir -p "$d" && printf 'pid 999999997\nexe /elsewhere/bin/oqb-server\n' >"$d/owner.lock"
	# a driver's pmem directory (no lock), and a test's scratch directory
	mkdir -p "$T/shm/oqb-names-p01" "$T/tmp/oqbtest.Stale2" "$T/checkout/results/run-1"
	# a test directory whose test holds its lock, naming this suite
	d=$T/tmp/oqbtest.Live02
	mkdir -p "$d" && echo "suite $OQB_SUITE_TAG" >"$d/owner.lock"
	hold "$d/owner.lock"
	# one without a lock that a process works in
	mkdir -p "$T/tmp/oqbtest.InUse3"
	(cd "$T/tmp/oqbtest.InUse3" && exec sleep 120) &
	echo "$!" >>"$T/pids"
	# another suite's, dead
	d=$T/tmp/oqbtest.Other2
	mkdir -p "$d" && echo "suite oqb-suite-elsewhere" >"$d/owner.lock"

	lo_others() { :; }   # no other test run (the real one is tested below)
	lo_end_entries >"$T/out"
	echo "pass=$pass fail=$fail names=${failed_names[*]}" >>"$T/out"

	# again, while another run is live: what only it could have made stays
	mkdir -p "$T/tmp/oqbtest.Maybe4" "$T/checkout/results/run-2"
	pass=0 fail=0 failed_names=()
	lo_others() { echo "$HOLDER"; }   # a process outside the checkout
	lo_end_entries >"$T/out2"
	echo "pass=$pass fail=$fail names=${failed_names[*]}" >>"$T/out2"

	# the detection: a process with another suite's tag is another run's,
	# one with this suite's is not
	OQB_SUITE_TAG=oqb-suite-elsewhere sleep 120 &
	echo "$!" | tee -a "$T/pids" >"$T/other.pid"
	sleep 120 &
	echo "$!" | tee -a "$T/pids" >"$T/mine.pid"
	sleep 0.2
	unset -f lo_others
	. "$OQB_ROOT/tests/suite-leftovers.sh"
	lo_others >"$T/others"
)
# the processes the subshell started: ended on exit (lib.sh's cleanup_)
for p in $(cat "$T/pids" 2>/dev/null); do track "$p"; done

out=$(cat "$T/out")
case $out in
*"not ok suite: nothing left in $T/shm"*) ok "suite check: this suite's stale run directory is reported" ;;
*) notok "suite check: this suite's stale run directory is reported" "$(said "$T/out")" ;;
esac
case $out in
*"not ok suite: no temporary file or directory left"*"$T/checkout/results/run-1"*"$T/tmp/oqbtest.Stale2"*)
	ok "suite check: its stale test directory and results directory are reported" ;;
*) notok "suite check: its stale test directory and results directory are reported" "$(said "$T/out")" ;;
esac
check_entry "suite check: the stale run directory is removed" gone "$T/shm/oqb-999999999-Stale1"
check_entry "suite check: the driver's stale pmem directory is removed" gone "$T/shm/oqb-names-p01"
check_entry "suite check: the stale test directory is removed" gone "$T/tmp/oqbtest.Stale2"
check_entry "suite check: the stale results directory is removed" gone "$T/checkout/results/run-1"
check_entry "suite check: a run directory whose lock is held is left alone" kept "$T/shm/oqb-999999998-Live01"
check_entry "suite check: a test directory whose lock is held is left alone" kept "$T/tmp/oqbtest.Live02"
check_entry "suite check: a directory a process works in is left alone" kept "$T/tmp/oqbtest.InUse3"
check_entry "suite check: another build's run directory is left alone" kept "$T/shm/oqb-999999997-Other1"
check_entry "suite check: another suite's test directory is left alone" kept "$T/tmp/oqbtest.Other2"
check_entry "suite check: what was there before the suite is left alone" kept "$T/tmp/oqbtest.before"
if grep -qF "(not this suite's: $T/shm/oqb-999999997-Other1: made by /elsewhere/bin/oqb-server)" "$T/out" &&
	grep -qF "(not this suite's: $T/tmp/oqbtest.Other2: suite oqb-suite-elsewhere's)" "$T/out" &&
	! grep -q "Live0\|InUse3\|before" "$T/out" && grep -q "pass=0 fail=2 names=suite-shm suite-tmp" "$T/out"; then
	ok "suite check: it names what is not its own, says nothing of what is in use, and counts two failures"
else
	notok "suite check: what it says" "$(said "$T/out")"
fi
check_entry "suite check: while another run is live, a test directory that could be its is left alone" kept "$T/tmp/oqbtest.Maybe4"
check_entry "suite check: while another run is live outside the checkout, a results directory is removed" gone "$T/checkout/results/run-2"
if grep -qF "(left alone: $T/tmp/oqbtest.Maybe4: another test run is live (PIDs " "$T/out2"; then
	ok "suite check: it says why it left that one"
else
	notok "suite check: it says why it left that one" "$(said "$T/out2")"
fi
if grep -qx "$(cat "$T/other.pid")" "$T/others" && ! grep -qx "$(cat "$T/mine.pid")" "$T/others"; then
	ok "suite check: a process with another suite's tag is another run's, one with its own is not"
else
	notok "suite check: another run's processes" "other $(cat "$T/other.pid"), mine $(cat "$T/mine.pid"), found: $(tr '\n' ' ' <"$T/others")"
fi
finish
