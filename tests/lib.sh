# tests/lib.sh - sourced by integration tests (bash).
#
# Each script reports cases as "ok NAME", "not ok NAME" or "skip NAME: why"
# (what tests/run-tests.sh counts), keeps its files under $T (removed on
# exit), and ends only processes it started itself, by PID.
set -u
: "${OQB_BIN:?run through tests/run-tests.sh (make test)}"
T=$(mktemp -d "${TMPDIR:-/tmp}/oqbtest.XXXXXX")
# held while the test lives, naming its suite: the suite's leftover check
# (tests/suite-leftovers.sh) tells a live test's directory, or another
# suite's, from one a killed test left behind
exec {T_LOCK}>"$T/owner.lock" && flock -n "$T_LOCK" && echo "suite ${OQB_SUITE_TAG:-none}" >&"$T_LOCK"
TEST_FAILED=0
TEST_PIDS=()
TEST_DIRS=()   # endpoints of servers started by launch_server

# run_dir_free DIR: DIR (a run directory, lib/rundir.h) has no live owner:
# no owner.lock (an older build's), or one whose lock can be taken.
run_dir_free() {
	[ ! -e "$1/owner.lock" ] || flock -n -x "$1/owner.lock" true 2>/dev/null
}

# Ends what the test started and leaves nothing: SIGTERM first (a server
# or driver ended so removes its own files), SIGKILL after 3 s; then the
# run directories that a killed server could not remove, by their known
# names (its endpoint, and oqb-[mc-|rdb-]PID-* for its PID), each only
# when no live process holds it.
cleanup_() {
	local p d i alive
	for p in "${TEST_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for i in $(seq 1 60); do
		alive=0
		for p in "${TEST_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive -eq 0 ] && break
		sleep 0.05
	done
	for p in "${TEST_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for p in "${TEST_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	for d in "${TEST_DIRS[@]}"; do
		case ${d##*/} in oqb-[0-9]*-??????) [ -d "$d" ] && run_dir_free "$d" && rm -rf -- "$d" ;; esac
	done
	for p in "${TEST_PIDS[@]}"; do
		for d in /dev/shm/oqb-"$p"-?????? /dev/shm/oqb-mc-"$p"-?????? /dev/shm/oqb-rdb-"$p"-??????; do
			[ -d "$d" ] && run_dir_free "$d" && rm -rf -- "$d"
		done
	done
	rm -rf "$T"
}
trap cleanup_ EXIT
# a test stopped by a signal (run-tests.sh's timeout) still cleans up
trap 'exit 143' TERM HUP
trap 'exit 130' INT

# track PID: remember a background process so it is ended on exit.
track() { TEST_PIDS+=("$1"); }

ok()     { echo "ok $1"; }
notok()  { echo "not ok $1"; TEST_FAILED=1; shift; [ $# -gt 0 ] && echo "  $*" >&2; }
skip()   { echo "skip $1: $2"; }

# check NAME CMD...: run CMD, report NAME as ok if it exits 0.
check() {
	local name=$1; shift
	if "$@"; then ok "$name"; else notok "$name" "command failed: $*"; fi
}

# jcheck NAME FILE JQ-EXPR: ok if the jq expression is true on FILE;
# returns 1 when it is not, so a caller can show more (`jcheck ... || ...`).
jcheck() {
	local name=$1 file=$2 expr=$3 out
	out=$(jq -e "$expr" "$file" 2>&1)
	if [ $? -eq 0 ]; then ok "$name"; else notok "$name" "jq '$expr' on $file gave: $out"; return 1; fi
}

# launch_server NAME TRIES CMD...: runs CMD (an oqb-server started by hand)
# in the background, tracked, and waits up to TRIES x 50 ms for the
# "ready: endpoint EP" line on its stdout ($T/NAME.srv.out; stderr in
# $T/NAME.srv.err).  Sets SRV_PID and EP; returns 1, showing its stderr, if
# the server exited or never got ready.
launch_server() {
	local name=$1 tries=$2 i
	shift 2
	"$@" >"$T/$name.srv.out" 2>"$T/$name.srv.err" &
	SRV_PID=$!
	track "$SRV_PID"
	for i in $(seq 1 "$tries"); do
		EP=$(sed -n 's/^ready: endpoint //p' "$T/$name.srv.out")
		[ -n "$EP" ] && { TEST_DIRS+=("$EP"); return 0; }
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "server $name did not become ready:" >&2
	cat "$T/$name.srv.err" >&2
	return 1
}

finish() { exit "$TEST_FAILED"; }

# ssh_test_keys NAME: for a test that runs an sshd of its own.  Without
# OpenSSH: NAME is skipped and the test ends.  Else: sshd's privilege
# separation directory when root (sshd refuses to start without it), a
# host key ($T/host_key), a client key ($T/id) in $T/authorized_keys, and
# SSHD (the daemon's path) and user set.
ssh_test_keys() {
	SSHD=$(command -v sshd || echo /usr/sbin/sshd)
	if [ ! -x "$SSHD" ] || ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
		skip "$1" "OpenSSH server and client are not installed (make deps)"
		finish
	fi
	if [ "$(id -u)" -eq 0 ] && [ ! -d /run/sshd ]; then
		mkdir -p /run/sshd && chmod 0755 /run/sshd
	fi
	ssh-keygen -q -t ed25519 -N '' -f "$T/host_key" -C oqb-test-host >/dev/null
	ssh-keygen -q -t ed25519 -N '' -f "$T/id" -C oqb-test-client >/dev/null
	cp "$T/id.pub" "$T/authorized_keys"
	chmod 600 "$T/authorized_keys"
	user=$(id -un)
}

# ssh_test_config PORT ADDR NAME [LINE...]: on stdout, the sshd_config of
# such a test's sshd on ADDR:PORT (keys from ssh_test_keys, its PID file
# $T/NAME.pid, $user by key only), then each LINE.
ssh_test_config() {
	local port=$1 addr=$2 name=$3
	shift 3
	cat <<EOF
Port $port
ListenAddress $addr
HostKey $T/host_key
AuthorizedKeysFile $T/authorized_keys
PidFile $T/$name.pid
UsePAM no
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
AllowUsers $user
MaxSessions 64
MaxStartups 64
LogLevel VERBOSE
EOF
	[ $# -gt 0 ] && printf '%s\n' "$@"
	return 0
}

# progress_shows NAME RUN_JSON STDERR JQ REGEX: ok NAME when the progress
# lines in STDERR (grep -o REGEX) are, point by point, what JQ makes of
# RUN_JSON (jq -r), and say both otherwise.
progress_shows() {
	local want got
	want=$(jq -r "$4" "$2")
	got=$(grep -o "$5" "$3")
	if [ -n "$want" ] && [ "$want" = "$got" ]; then ok "$1"; else notok "$1" "want: $want; got: $got"; fi
}

# shape_holds RUN_JSON NAME JQ [NAME JQ]...: 0 when every JQ holds on
# RUN_JSON (nothing said): a shape check that decides whether to measure
# again.  shape_check: the same cases as jcheck results, called after the
# last run.  A shape depends on the host's calm (a spinning server worker
# that shares its CPU fills its queue at any load), so a case that fails
# is skipped when, and only when, other tasks took the CPU in every run
# measured (shape_begin before the first, shape_mark and shape_done around
# each: host_busy, evidence from outside the processes judged); a failure
# after any calm run is a failure.  In the Soft-RoCE guest the guest's own
# accounting cannot see the host, so with OQB_TIMING_RELAY=1 a failing
# case prints "timing-fail NAME :: DETAIL" and the host's runner decides
# (tests/vm/vm-test-lib.sh: vm_relay, with the host's evidence over the
# VM's run).  Counts and causal bounds never belong in a shape: they are
# jcheck cases that judge every run.
shape_begin() { SHAPE_EVIDENCE=; SHAPE_CALM=0; SHAPE_N=0; }
shape_mark() { host_mark; }
shape_done() {
	SHAPE_N=$((SHAPE_N + 1))
	if host_busy; then SHAPE_EVIDENCE="${SHAPE_EVIDENCE:+$SHAPE_EVIDENCE; }run $SHAPE_N: $HOST_EVIDENCE"
	else SHAPE_CALM=$((SHAPE_CALM + 1)); fi
}
shape_holds() {
	local r=$1 i
	shift
	local c=("$@")
	for ((i = 0; i < ${#c[@]}; i += 2)); do
		jq -e "${c[i + 1]}" "$r" >/dev/null 2>&1 || return 1
	done
}
shape_check() {
	local r=$1 i why
	shift
	local c=("$@")
	for ((i = 0; i < ${#c[@]}; i += 2)); do
		if jq -e "${c[i + 1]}" "$r" >/dev/null 2>&1; then
			ok "${c[i]}"
			continue
		fi
		why="jq '$(echo "${c[i + 1]}" | tr -s ' \t\n' ' ')' does not hold on the last of ${SHAPE_N:-1} run(s)"
		if [ "${OQB_TIMING_RELAY:-0}" = 1 ]; then
			echo "timing-fail ${c[i]} :: $why"
		elif [ "${SHAPE_N:-0}" -gt 0 ] && [ "${SHAPE_CALM:-1}" = 0 ]; then
			skip_host "${c[i]}" "$SHAPE_EVIDENCE" "$why"
		else
			notok "${c[i]}" "$why (${SHAPE_CALM:-?} of ${SHAPE_N:-?} run(s) on a calm host)"
		fi
	done
}

# ---- evidence of a busy host that the code under test cannot produce ----
# A timing case may skip only on evidence from outside the processes it
# judges (issue 48).  host_mark before an attempt and host_busy after it
# (both called in the test's own shell, never inside $(...): bash's `times`
# must see this shell's children) compare the CPU time the kernel charged
# on this machine (/proc/stat: user, nice, system, irq, softirq, steal)
# with the CPU time of this test's own process tree.  What is left was
# taken by other tasks (another job, a hog, the hypervisor's steal).  The
# code under test can only change its own CPU time, which is subtracted,
# and a thread that blocks or slows in its own code adds nothing, so a
# regression cannot make this evidence.  host_busy sets HOST_EVIDENCE (a
# sentence with the share, empty on a calm host) and returns 0 when other
# tasks took OQB_HOST_BUSY_PCT (10) % of a CPU or more over the attempt.
# host_cpu_ticks: CPU time (clock ticks) the kernel charged on all CPUs:
# user, nice, system, irq, softirq and steal (/proc/stat's first line).
host_cpu_ticks() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }
# own_cpu_ticks: sets OWN_TICKS, the CPU time (clock ticks) of this test's
# process tree: the shell and its reaped children (bash's `times`, which
# must run in this shell, not in a $(...)) plus every live descendant with
# its reaped children (/proc/PID/stat).
own_cpu_ticks() {
	local live tf=${T:-/tmp}/.own-times.$$
	times >"$tf"
	live=$(ps -e -o pid=,ppid= | awk -v root=$$ '{ p[$1] = $2 }
		END { for (x in p) { y = x; n = 0; while ((y in p) && y != root && n++ < 64) y = p[y]; if (y == root && x != root) print x } }')
	OWN_TICKS=$({ cat "$tf"; for x in $live; do
		sed 's/^.*) //' /proc/$x/stat 2>/dev/null | awk '{ print "T", $12 + $13 + $14 + $15 }'
	done; } | awk -v hz="$(getconf CLK_TCK)" '
		$1 == "T" { t += $2; next }
		{ for (i = 1; i <= NF; i++) { split($i, a, "m"); sub("s", "", a[2]); t += (a[1] * 60 + a[2]) * hz } }
		END { printf "%d\n", t }')
	rm -f "$tf"
}
host_mark() { own_cpu_ticks; HOST_MARK="$(date +%s%N) $(host_cpu_ticks) $OWN_TICKS"; }
host_busy() {
	local min=${1:-${OQB_HOST_BUSY_PCT:-10}} now all
	now=$(date +%s%N); all=$(host_cpu_ticks); own_cpu_ticks
	HOST_EVIDENCE=$(awk -v m="$HOST_MARK" -v now="$now" -v all="$all" -v own="$OWN_TICKS" -v hz="$(getconf CLK_TCK)" -v min="$min" '
		BEGIN { split(m, a, " "); s = (now - a[1]) / 1e9; if (s <= 0) exit
			other = ((all - a[2]) - (own - a[3])) / hz; pct = 100 * other / s
			if (pct >= min)
				printf "other tasks took %.0f %% of a CPU over %.1f s (/proc/stat less this test'"'"'s processes)\n", pct, s }')
	[ -n "$HOST_EVIDENCE" ]
}

# skip_host NAME EVIDENCE DETAIL: a timing case that failed while other
# tasks took the CPU (EVIDENCE: host_busy's, of every attempt judged).
# run-tests.sh counts these apart ("host busy"); OQB_STRICT_TIMING=1 (a
# quiet stage, a pinned lab runner) makes them failures.
skip_host() {
	if [ "${OQB_STRICT_TIMING:-0}" = 1 ]; then
		notok "$1" "OQB_STRICT_TIMING=1: $3 (host busy: $2)"
	else
		echo "skip $1: host busy: $2; $3"
	fi
}

# median_rise RATIO: the jq test of Fig 10's shape on a run.json: its last
# point's median is RATIO times its first's or more, or none of the last
# point's requests was answered within the run.
median_rise() {
	echo ".points[0].lat_ns.all.n > 0 and ((.points[-1].lat_ns.all.n == 0 and .points[-1].unsent > 0) or
	 .points[-1].lat_ns.all.p50 >= $1 * .points[0].lat_ns.all.p50)"
}

# procs_alive TSV: the PIDs listed in an `oqb run` processes.tsv that are
# still running, each after a space ("" when all have exited).
procs_alive() {
	local pid alive=""
	while IFS=$'\t' read -r _ _ _ _ _ pid _; do
		[ "$pid" = pid ] && continue
		kill -0 "$pid" 2>/dev/null && alive="$alive $pid"
	done <"$1"
	echo "$alive"
}

# shm_run_dirs: the oqb run directories in the shared-memory folder now;
# shm_left_since LIST: those not in LIST (an earlier shm_run_dirs), each
# followed by a space ("" when nothing was left).  A directory whose
# owner.lock is held (lib/rundir.h) belongs to a process still running --
# another run on this machine, not one this test ended -- and is not
# counted; one that vanished meanwhile is not either.
shm_run_dirs() { ls -d /dev/shm/oqb-* 2>/dev/null | sort; }
shm_left_since() {
	local d
	for d in $(comm -13 <(echo "$1") <(shm_run_dirs)); do
		[ -d "$d" ] || continue
		if [ -e "$d/owner.lock" ] && ! flock -n -x "$d/owner.lock" true 2>/dev/null; then
			continue
		fi
		printf '%s ' "$d"
	done
}

# floor_stand_in DIR V1 V2 ...: a bin directory whose oqb-server and
# oqb-client are $OQB_BIN's and whose oqb-floor (the canary) reads V1, V2,
# ... ns in turn, the last one from then on (tests of the canary rules
# that must not depend on this host's floor)
floor_stand_in() {
	local d=$1; shift
	mkdir -p "$d"
	ln -s "$OQB_BIN/oqb-server" "$OQB_BIN/oqb-client" "$d/"
	cat >"$d/oqb-floor" <<SH
#!/bin/sh
f=\$(dirname "\$0")/.n; n=\$(cat "\$f" 2>/dev/null || echo 0); echo \$((n + 1)) >"\$f"
set -- $*
shift \$(( n < \$# ? n : \$# - 1 ))
echo "{\"rtt_ns\":{\"p50\":\$1,\"p99\":1000,\"min\":90},\"rounds\":20000,\"cpus\":[0,1]}"
SH
	chmod +x "$d/oqb-floor"
}

# refused NAME JQ-EDIT WORD...: the config $BASE with JQ-EDIT applied makes
# `oqb run` exit 2 before it starts anything (no results directory), with
# every WORD in its message.
refused() {
	local name=$1 edit=$2 out rc w miss=""
	shift 2
	jq "$edit" "$BASE" >"$T/$name.json" || { notok "$name" "jq edit failed"; return; }
	out=$("$OQB_BIN/oqb" run "$T/$name.json" --out "$T/out-$name" 2>&1)
	rc=$?
	for w in "$@"; do
		case $out in *"$w"*) ;; *) miss="$miss [$w]" ;; esac
	done
	if [ $rc -ne 2 ]; then notok "$name" "exit status $rc, expected 2: $out"
	elif [ -n "$miss" ]; then notok "$name" "message lacks$miss: $out"
	elif [ -e "$T/out-$name" ]; then notok "$name" "a results directory was created for a bad config"
	else ok "$name"; fi
}
