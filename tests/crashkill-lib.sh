# tests/crashkill-lib.sh - sourced (after lib.sh) by the tests that kill a
# crash tester (`oqb crashtest`) with SIGKILL and look for what of it is
# left: tests/integration/leftovers.sh and crashtest-killed.sh.
#
# A tester's server gets the parent-death signal (SIGKILL), so it must end
# with the tester.  A tester's processes are told apart by their command
# line, never by a parent PID: once the tester is dead they belong to init.
# ck_start runs the tester from a directory of its own whose oqb-crashtest
# and oqb-server are links to $OQB_BIN's, so every process of that tester
# -- the tester, a child between fork and exec (a copy of the tester), each
# server -- has its first argument in that directory.  A process that has
# died but is not yet reaped (a zombie: init reaps orphans when it gets to
# them, seconds later on some hosts) has no command line, so it is not one:
# it is dead, and `kill -0` would have counted it.

# ck_start DIR CONFIG ARG...: makes DIR and runs DIR/oqb-crashtest CONFIG
# ARG... in the background with OQB_BIN=DIR (stderr in DIR/stderr); the
# caller's environment goes with it.  CK_PID is the tester; tracked.
ck_start() {
	local dir=$1
	shift
	mkdir -p "$dir"
	ln -sf "$OQB_BIN/oqb-crashtest" "$OQB_BIN/oqb-server" "$dir/"
	OQB_BIN=$dir "$dir/oqb-crashtest" "$@" >/dev/null 2>"$dir/stderr" &
	CK_PID=$!
	track "$CK_PID"
}

# ck_procs DIR [NAME]: the live processes (PIDs, space-separated) whose
# first argument is DIR/NAME (NAME: oqb-server, oqb-crashtest; without it
# either); "" when none.
ck_procs() {
	local f a0 out=""
	for f in /proc/[0-9]*/cmdline; do
		a0=""
		IFS= read -r -d '' a0 2>/dev/null <"$f"
		case $a0 in "$1/${2:-oqb-}"*) f=${f#/proc/}; out="$out ${f%/cmdline}" ;; esac
	done
	echo "${out# }"
}

# ck_left DIR SECONDS: 0 when no process of DIR's tester is alive, waiting
# up to SECONDS for the dying; else 1, with CK_LEFT the survivors as
# `ps -o pid,ppid,stat,etime,cmd` shows them.
ck_left() {
	local p end=$((SECONDS + $2))
	CK_LEFT=""
	while :; do
		p=$(ck_procs "$1")
		[ -z "$p" ] && return 0
		[ $SECONDS -ge $end ] && break
		sleep 0.05
	done
	CK_LEFT=$(ps -o pid,ppid,stat,etime,cmd -p "${p// /,}" 2>&1 | cut -c1-300)
	return 1
}

# ck_end DIR PID: removes the run directory the tester PID left in the
# shared-memory folder (a killed tester cannot; a later one would), when
# nothing holds it, and DIR.
ck_end() {
	local d
	for d in /dev/shm/oqb-crash-"$2"-??????; do
		[ -d "$d" ] && run_dir_free "$d" && rm -rf -- "$d"
	done
	rm -rf -- "$1"
}
