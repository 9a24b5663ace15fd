# tests/suite-leftovers.sh - sourced by tests/run-tests.sh: the suite
# leaves nothing behind (issues 39, 48; docs/driver.md, "Nothing left
# behind").
#
# leftovers_begin, before the first test: exports OQB_SUITE_TAG (every
# process the suite starts carries it in its environment, and what those
# start inherit it: memcached, Slurm daemons, the VM), and notes what runs
# and which entries the check judges exist already.
# leftovers_end, after the last: three lines of its own, counted like a
# test's,
#   ok|not ok suite: no process it started is still running
#   ok|not ok suite: nothing left in /dev/shm
#   ok|not ok suite: no temporary file or directory left
# Each thing found is named, then ended (a process, by its PID) or removed.
#
# Processes: the suite's carry the tag or run from this build's binaries
# (over ssh the environment does not travel).
#
# Entries: those the suite and the binaries make (lo_entries): in /dev/shm
# every oqb* (run directories, the driver's pmem directories, unit tests'
# pools, configs.sh's scratch); in $TMPDIR and /tmp tests/lib.sh's
# oqbtest.*, the binaries' oqb-* (ssh control sockets, the doctor's
# probes, run directories where /dev/shm is not writable), the unit
# tests' oqb_*, oqbtrace-*, test_r*-* and the VM runner's rxe-vm.*; in the
# checkout build/two-vm.*, build/crash-verbs-test.* and results/*.  Only
# one that was not there at leftovers_begin and is still there is judged,
# and on a shared machine other runs make such entries too, so it counts
# only when it is this suite's (lo_judge):
#   - an owner.lock whose lock is held: in use, not left behind.  Every
#     oqb-[KIND-]PID-XXXXXX this build makes holds one from its first
#     moment (lib/rundir.h), naming its maker ("exe PATH"); a directory
#     may also name the suite that made it ("suite TAG").  A free lock
#     that names this build or this suite: this suite's; another program
#     or suite: theirs.  An oqb-[KIND-]PID-XXXXXX without one: another
#     (older) build's.
#   - other entries cannot say whose they are.  One that a live process
#     uses (its working directory, an open or mapped file, a path in its
#     command line) is in use.  Else it is this suite's unless another test
#     run is live (a process with another OQB_SUITE_TAG, or with OQB_BIN
#     and no tag): then it could be that run's, and is named and left.
#   - an entry another user owns is never this suite's.
LO_SHM_DIR=/dev/shm
LO_ROOT=${OQB_ROOT:-$PWD}
# where temporary entries go: $TMPDIR, and /tmp (P_tmpdir) too
LO_TMP_DIRS=("${TMPDIR:-/tmp}")
[ "${TMPDIR:-/tmp}" != /tmp ] && LO_TMP_DIRS+=(/tmp)
# as the kernel names a process's executable: without symbolic links
LO_BIN=$(cd "$OQB_BIN" 2>/dev/null && pwd -P) || LO_BIN=$OQB_BIN
LO_UNIT=$(cd "$OQB_UNIT" 2>/dev/null && pwd -P) || LO_UNIT=$OQB_UNIT

# lo_self: this shell and the subshells between it and the caller (they
# carry the tag; one lives across both samples of lo_procs)
lo_self() {
	local p=$BASHPID
	while [ -n "$p" ] && [ "$p" -gt 1 ]; do
		echo "$p"
		[ "$p" = $$ ] && break
		p=$(sed -n 's/^PPid:[[:space:]]*//p' /proc/"$p"/status 2>/dev/null)
	done
}
lo_procs_once() {
	{
		grep -lzx "OQB_SUITE_TAG=$OQB_SUITE_TAG" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
		find /proc -mindepth 2 -maxdepth 2 -name exe \( -lname "$LO_BIN/*" -o -lname "$LO_UNIT/*" \) \
			2>/dev/null | cut -d/ -f3
	} | sort -u | grep -vxF -f <(lo_self)
}
# lo_procs: the suite's processes, in two samples 0.5 s apart (this
# check's own short-lived helpers are in one only)
lo_procs() {
	local a b
	a=$(lo_procs_once); sleep 0.5; b=$(lo_procs_once)
	comm -12 <(echo "$a") <(echo "$b") | grep .
}

# lo_entries: the entries the check judges that exist now, one a line
lo_entries() {
	local d
	{
		ls -d "$LO_SHM_DIR"/oqb* 2>/dev/null
		for d in "${LO_TMP_DIRS[@]}"; do
			ls -d "$d"/oqbtest.* "$d"/oqb-* "$d"/oqb_* "$d"/oqbtrace-* "$d"/test_rdmactr-* \
				"$d"/test_rocksdb-* "$d"/test_rundir-* "$d"/rxe-vm.* 2>/dev/null
		done
		ls -d "$LO_ROOT"/build/two-vm.* "$LO_ROOT"/build/crash-verbs-test.* "$LO_ROOT"/results/* 2>/dev/null
	} | sort -u
}

# lo_refs: the paths live processes use now, one a line: working
# directories, open and mapped files, and command-line arguments
lo_refs() {
	{
		find /proc/[0-9]*/cwd /proc/[0-9]*/fd -maxdepth 1 -printf '%l\n' 2>/dev/null
		cat /proc/[0-9]*/maps 2>/dev/null | awk '$6 ~ /^\// { print $6 }'
		cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n'
	} | grep '/' | sort -u
}

# lo_above: the processes this suite runs under (the shell or make that
# started it may have OQB_BIN: it is not another run)
lo_above() {
	local p=$$
	while [ -n "$p" ] && [ "$p" -gt 1 ]; do
		echo "$p"
		p=$(sed -n 's/^PPid:[[:space:]]*//p' /proc/"$p"/status 2>/dev/null)
	done
}
# lo_others: the PIDs of live processes of another test run: another
# OQB_SUITE_TAG in their environment, or OQB_BIN (tests/lib.sh's) and no tag
lo_others() {
	comm -23 <(grep -lz -e '^OQB_SUITE_TAG=' -e '^OQB_BIN=' /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | sort -u) \
		<(grep -lzx "OQB_SUITE_TAG=$OQB_SUITE_TAG" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | sort -u) |
		grep -vxF -f <(lo_self; lo_above)
}

# lo_here PID...: those whose working directory is in the checkout
lo_here() {
	local p root
	root=$(cd "$LO_ROOT" 2>/dev/null && pwd -P) || root=$LO_ROOT
	for p in "$@"; do
		case $(find /proc/"$p"/cwd -maxdepth 0 -printf '%l' 2>/dev/null) in
		"$root"|"$root"/*) echo "$p" ;;
		esac
	done | tr '\n' ' '
}

leftovers_begin() {
	export OQB_SUITE_TAG="oqb-suite-$$-$RANDOM$RANDOM"
	LO_PROCS0=$(lo_procs)
	LO_ENTRIES0=$(lo_entries)
}

# lo_judge PATH: prints "mine", "live" (in use), "theirs: WHY" (not this
# suite's) or "theirs? WHY" (it cannot tell); the caller sets LO_REFS
# (lo_refs, two samples), LO_OTHERS (lo_others) and LO_OTHERS_HERE.
lo_judge() {
	local d=$1 maker suite others name=${1##*/}
	if [ -n "$(find "$d" -maxdepth 0 ! -user "$(id -u)" 2>/dev/null)" ]; then
		echo "theirs: another user's"; return
	fi
	if [ -f "$d/owner.lock" ]; then
		flock -n -x "$d/owner.lock" true 2>/dev/null || { echo live; return; }
		maker=$(sed -n 's/^exe //p' "$d/owner.lock" 2>/dev/null)
		suite=$(sed -n 's/^suite //p' "$d/owner.lock" 2>/dev/null)
		case $maker in
		"$LO_BIN"/*|"$LO_UNIT"/*) echo mine; return ;;
		?*) echo "theirs: made by $maker"; return ;;
		esac
		if [ -n "$suite" ]; then
			[ "$suite" = "$OQB_SUITE_TAG" ] && echo mine || echo "theirs: suite $suite's"
			return
		fi
	elif echo "$name" | grep -qE '^oqb-([a-z]+-)?[0-9]{1,10}-[A-Za-z0-9]{6}$'; then
		# every one this build makes holds one from its first moment
		echo "theirs: no owner.lock, so another build made it"; return
	fi
	if grep -qF -- "$d" <<<"$LO_REFS"; then echo live; return; fi
	# in the checkout only a run from this checkout could have made it
	case $d in "$LO_ROOT"/*) others=$LO_OTHERS_HERE ;; *) others=$LO_OTHERS ;; esac
	if [ -n "$others" ]; then
		echo "theirs? another test run is live (PIDs $(echo $others | cut -c1-60)), so it may be that run's"
		return
	fi
	echo mine
}

# lo_end_entries: the two lines on entries; adds to pass, fail and
# failed_names
lo_end_entries() {
	local d v shm="" tmp="" notes=""
	LO_REFS=$(lo_refs; sleep 0.5; lo_refs)
	LO_OTHERS=$(lo_others | tr '\n' ' ')
	LO_OTHERS_HERE=$(lo_here $LO_OTHERS)
	while IFS= read -r d; do
		[ -e "$d" ] || continue
		v=$(lo_judge "$d")
		case $v in
		live) ;;
		mine) case $d in "$LO_SHM_DIR"/*) shm="$shm$d"$'\n' ;; *) tmp="$tmp$d"$'\n' ;; esac ;;
		theirs:*) notes="$notes  (not this suite's: $d: ${v#theirs: })"$'\n' ;;
		*) notes="$notes  (left alone: $d: ${v#theirs\? })"$'\n' ;;
		esac
	done < <(comm -13 <(echo "$LO_ENTRIES0") <(lo_entries))
	# (a busy shared machine can make many: the first ten)
	printf '%s' "$notes" | head -n 10
	[ "$(printf '%s' "$notes" | wc -l)" -gt 10 ] && echo "  (and $(($(printf '%s' "$notes" | wc -l) - 10)) more not this suite's)"
	lo_verdict "nothing left in $LO_SHM_DIR" suite-shm "$shm"
	lo_verdict "no temporary file or directory left (${LO_TMP_DIRS[*]}, build/, results/)" suite-tmp "$tmp"
}

# lo_verdict NAME LABEL LIST: ok NAME, or not ok naming each path of LIST
# (one a line) and what it holds, which is then removed
lo_verdict() {
	local d
	if [ -z "$3" ]; then
		echo "ok suite: $1"
		pass=$((pass + 1))
		return
	fi
	echo "not ok suite: $1: these were left (now removed; oqb-[KIND-]PID-* names the PID that made it):"
	while IFS= read -r d; do
		[ -n "$d" ] || continue
		echo "  $d: $(ls -A "$d" 2>/dev/null | head -n 8 | tr '\n' ' ')"
		rm -rf -- "$d"
	done <<<"$3"
	fail=$((fail + 1)); failed_names+=("$2")
}

# lo_end_procs: the line on processes; adds to pass, fail and failed_names
lo_end_procs() {
	local p left=""
	# processes that are on their way out get 10 s
	for _ in $(seq 1 10); do
		left=$(comm -13 <(echo "$LO_PROCS0") <(lo_procs))
		[ -z "$left" ] && break
		sleep 1
	done
	if [ -z "$left" ]; then
		echo "ok suite: no process it started is still running"
		pass=$((pass + 1))
		return
	fi
	echo "not ok suite: processes it started are still running (now ended by PID):"
	for p in $left; do
		echo "  pid $p: $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | cut -c1-300)"
	done
	for p in $left; do kill -TERM "$p" 2>/dev/null; done
	sleep 2
	for p in $left; do kill -KILL "$p" 2>/dev/null; done
	fail=$((fail + 1)); failed_names+=("suite-processes")
}

# leftovers_end: the three lines; adds to pass, fail and failed_names
leftovers_end() {
	lo_end_procs
	lo_end_entries
}
