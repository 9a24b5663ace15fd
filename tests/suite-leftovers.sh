# tests/suite-leftovers.sh - sourced by tests/run-tests.sh: the suite
# leaves nothing behind (issue 39; docs/driver.md, "Nothing left behind").
#
# leftovers_begin, before the first test: exports OQB_SUITE_TAG (every
# process the suite starts carries it in its environment, and what those
# start inherit it: memcached, Slurm daemons, the VM), and notes what runs
# and what is in the shared-memory folder.
# leftovers_end, after the last: two lines of its own, counted like a
# test's,
#   ok|not ok suite: no process it started is still running
#   ok|not ok suite: no new oqb-* entry in /dev/shm
# A process is the suite's if it carries the tag or runs from this build's
# binaries (over ssh the environment does not travel); one still running
# is named and then ended by its PID.  An oqb-* entry is left behind if it
# was not there before the suite and is still there, unless it is in use
# or another's: on a shared machine other runs make entries too.  Every
# oqb-[KIND-]PID-XXXXXX this build makes holds an owner.lock from its
# first moment (lib/rundir.h), held by its maker while it lives and
# naming its executable; so one whose lock is held is in use, one whose
# lock names another program is another build's, and one without a lock
# is another (older) build's.  Any other oqb-* entry (the driver's pmem
# directories oqb-RUNID-pNN, a file) cannot say whose it is and counts.
SHM=/dev/shm
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
# lo_is_suite PID: PID is one of the suite's processes
lo_is_suite() {
	grep -qzx "OQB_SUITE_TAG=$OQB_SUITE_TAG" /proc/"$1"/environ 2>/dev/null && return 0
	case $(readlink /proc/"$1"/exe 2>/dev/null) in "$LO_BIN"/*|"$LO_UNIT"/*) return 0 ;; esac
	return 1
}
lo_names() { ls -d "$SHM"/oqb-* 2>/dev/null | sort; }

leftovers_begin() {
	export OQB_SUITE_TAG="oqb-suite-$$-$RANDOM$RANDOM"
	LO_PROCS0=$(lo_procs)
	LO_SHM0=$(lo_names)
}

# leftovers_end: the two lines; adds to pass, fail and failed_names
leftovers_end() {
	local p left="" d new="" maker
	# processes that are on their way out get 10 s
	for _ in $(seq 1 10); do
		left=$(comm -13 <(echo "$LO_PROCS0") <(lo_procs))
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
	for d in $(comm -13 <(echo "$LO_SHM0") <(lo_names)); do
		if [ ! -e "$d/owner.lock" ] &&
			echo "${d##*/}" | grep -qE '^oqb-([a-z]+-)?[0-9]{1,10}-[A-Za-z0-9]{6}$'; then
			# every oqb-[KIND-]PID-XXXXXX this build makes holds one
			# from its first moment (lib/rundir.h): another build's
			echo "  (not this suite's: $d has no owner.lock, so another build made it)"
			continue
		fi
		if [ -e "$d/owner.lock" ]; then
			# a live process's: in use, not left behind
			flock -n -x "$d/owner.lock" true 2>/dev/null || continue
			maker=$(sed -n 's/^exe //p' "$d/owner.lock" 2>/dev/null)
			case $maker in
			"$LO_BIN"/*|"$LO_UNIT"/*) ;;
			*) echo "  (not this suite's: $d, made by $maker)"; continue ;;
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
