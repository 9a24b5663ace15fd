#!/usr/bin/env bash
# A spinning thread does not block: what the kernel says the threads did,
# read by this test from /proc, never from a run's own report (issue 48).
#
# A server worker (oqb-w0) and a client thread (oqb-c0) in spin mode (the
# default idle mode: poll, and sched_yield now and then), shm transport,
# no history recording, each pinned to a CPU of its own (--cpus auto), at
# a Poisson 20 Kops/s, on the null and on the cache backend.  The test
# finds both threads by the names the binaries give them
# (/proc/PID/task/TID/comm) and reads voluntary_ctxt_switches (and, for
# information, nonvoluntary_ctxt_switches and the time on a CPU) of each
# from /proc/PID/task/TID/status itself, at the start and at the end of a
# 1 s window that it times itself, inside the client's measured period
# (see window below).
#
# The kernel counts a switch as voluntary only when the thread leaves the
# CPU blocked (a sleep, a futex wait, a lock, I/O that waits): sched_yield
# and preemption by another task count as nonvoluntary.  So a busy host, a
# CPU hog beside the run, raises only the nonvoluntary count, and this
# case never skips: a thread that blocks (a nap, a lock shared with
# another thread, a system call that sleeps) is a change in the code.
#
# K = 3 voluntary switches per thread in the window.  Measured on the
# project's 2-core machine while other sessions' full test suites and
# builds ran beside it (load average 4 to 18), 20 runs of the test, each
# with one count per thread per backend (oqb-w0 and oqb-c0; null, cache):
#   calm:             all 80 counts 0; nonvoluntary median 14317 (worker)
#                     and 5448 (client) a second; on a CPU 3 to 99 %
#   beside a CPU hog: all 80 counts 0 (`sh -c 'while :; do :; done' &`);
#                     nonvoluntary median 519 and 3381; on a CPU 1 to 97 %
#                     (median 5 % for the worker)
# and in the negative control's runs, the spinning client: all 40 counts
# 0.  Earlier runs while this test was written, about 400 thread windows
# more, calm and beside a hog, with the history recorded or the cache
# not prefaulted too (by hand): never a voluntary switch.  A spinning
# thread's loop makes no system call that sleeps (the worker's one lock,
# shared with the main thread, is taken for stats after the run; the
# cache backend is prefaulted; history records go to memory and then in
# 1 MiB writes to the page cache).  K leaves room for a rare blocking
# event (a page fault that waits on the mmap lock held by another thread
# of the process, a write that the kernel throttles) without hiding a
# thread that blocks as a habit, which blocks thousands of times.
#
# A thread asleep throughout the window would make no voluntary switch
# either, so the state at the window's start is read too: a thread asleep
# then that ran under 1 ms in the window fails.  One runnable at the start
# that made no voluntary switch never slept, however little CPU it got:
# beside the hog, a spinning thread in state R at both ends was seen to get
# 0 % of its CPU for over a second (its frequent sched_yield gives its
# turns to the hog).  Such a window is taken again, up to three times, and
# the last one is judged as it is.
#
# The negative control proves that the check can fail: a server worker
# that naps when idle (--idle-nap-us 100 --idle-spin-us 0) at 2 Kops/s
# blocked 5403 to 11166 times in the window in those 40 runs, and must be
# seen blocking more than 20 K times.
source "$(dirname "$0")/../lib.sh"

K=3
WIN_NS=1000000000
KV='{"kind":"kv","put_ratio":0.5,"key_size":16,"value_size":64,"keys":10000}'

# tids PID RE: the TIDs of PID's threads whose name matches RE, in order
tids() {
	local t
	for t in /proc/"$1"/task/*; do
		grep -qE "^($2)\$" "$t/comm" 2>/dev/null && echo "${t##*/}"
	done
}
# sample PID TID: "VOLUNTARY NONVOLUNTARY ONCPU_NS STATE", the thread's
# context switches as the kernel counts them, the time it has run
# (schedstat; stat's clock ticks where the kernel keeps no schedstat) and
# its state (R running or runnable, S asleep, ...); fails when the thread
# is gone.  Each file is read at once: bash's read builtin seeks back in a
# file, and /proc makes the text anew at each seek, so lines read one at a
# time can come from two versions of it.
sample() {
	local d=/proc/$1/task/$2 st cpu f
	local re=$'\nvoluntary_ctxt_switches:[[:space:]]*([0-9]+)\nnonvoluntary_ctxt_switches:[[:space:]]*([0-9]+)'
	local sre=$'\nState:[[:space:]]*([A-Za-z])'
	{ st=$(<"$d/status"); } 2>/dev/null || return 1
	[[ $st =~ $sre ]] || return 1
	local state=${BASH_REMATCH[1]}
	[[ $st =~ $re ]] || return 1
	if { cpu=$(<"$d/schedstat"); } 2>/dev/null; then
		cpu=${cpu%% *}
	else
		{ f=$(<"$d/stat"); } 2>/dev/null || return 1
		f=(${f##*) })   # fields from the 3rd on: utime and stime are the 12th and 13th here
		cpu=$(((f[11] + f[12]) * 1000000000 / TICK))
	fi
	echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} $cpu $state"
}
TICK=$(getconf CLK_TCK)
# where PID TID: what the kernel says the thread is doing: its state, the
# kernel function it sleeps in and its system call, and its last CPU
where() {
	local d=/proc/$1/task/$2 st w="" sc="" f
	{ st=$(<"$d/status"); } 2>/dev/null || { echo "gone"; return; }
	[[ $st =~ State:[[:space:]]*([^$'\n']*) ]] && st=${BASH_REMATCH[1]}
	{ w=$(<"$d/wchan"); sc=$(<"$d/syscall"); f=$(<"$d/stat"); } 2>/dev/null
	f=(${f##*) })
	echo "state $st, wchan ${w:-?}, syscall ${sc%% *}, CPU ${f[36]:-?}"
}
now_ns() { date +%s%N; }
sleep_until() {   # sleep_until NS (date +%s%N)
	local left=$(( $1 - $(now_ns) ))
	[ "$left" -gt 0 ] && sleep "$(awk -v n="$left" 'BEGIN { printf "%.3f", n / 1e9 }')"
	return 0
}

# joined PID: the client's main thread waits in a futex, as it does in
# pthread_join on its threads, which it calls right after opening their
# gate (bench/client.c, client_run); before that it polls their start-up
# with usleep.  The kernel's wchan names the futex wait; the syscall number
# says it where wchan does not.
ARCH=$(uname -m)
joined() {
	local w="" s=""
	read -r w <"/proc/$1/task/$1/wchan" 2>/dev/null
	read -r s _ <"/proc/$1/task/$1/syscall" 2>/dev/null
	case $w in *futex*) return 0 ;; esac
	case $ARCH:$s in x86_64:202 | aarch64:98) return 0 ;; esac
	return 1
}

# window NAME RATE SERVER-ARGS... -- CLIENT-ARGS...: one run at RATE
# ops/s; sets COUNTS to "THREAD VOLUNTARY NONVOLUNTARY ONCPU_NS STATE"
# lines, the window's differences (the workers' first) and the state at its
# start, WHERE to where the threads were at its end, and WIN_S to the
# window's length in seconds; returns 1 with WHY set when the run was not
# measured.
#
# The window is timed from the moment the client opened its threads' gate,
# which lies between the test's last look at the client's main thread that
# did not see it joined (g0) and the first that did (g1): the run starts
# 10 ms after the gate opens (oqb-client by hand), its warm-up ends 0.3 s
# later and its measured 3 s after that.  So the window from g1 + 0.4 s to
# 1 s later lies inside the measured period when it ends by g0 + 3.3 s; a
# window that ends later (the test was held up) is not used.
window() {
	local name=$1 rate=$2 sargs=() cp tw tc t p g0 g1 a b i s e rc lines="" first=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	COUNTS="" WIN_S="" WHY="" WHERE=""
	if ! launch_server "$name" 200 "$OQB_BIN/oqb-server" --system oq --workers 1 "${sargs[@]}"; then
		WHY="server did not start: $(tail -3 "$T/$name.srv.err")"
		return 1
	fi
	g0=$(now_ns)
	"$OQB_BIN/oqb-client" --system oq --server "$EP" --threads 1 --rate "$rate" \
		--duration-s 3 --warmup-s 0.3 --drain-s 0.5 --workload "$KV" \
		--out "$T/$name.json" "$@" 2>"$T/$name.cli.err" &
	cp=$!
	track "$cp"
	tw=$(tids "$SRV_PID" 'oqb-w[0-9]+')
	tc="" g1=""
	for i in $(seq 1 1000); do   # up to ~20 s to connect, load and open the gate
		kill -0 "$cp" 2>/dev/null || break
		a=$(now_ns)
		[ -z "$tc" ] && tc=$(tids "$cp" 'oqb-c[0-9]+')
		if [ -n "$tc" ] && joined "$cp"; then g1=$(now_ns); break; fi
		g0=$a   # the gate was not open when looked at after this
		sleep 0.01
	done
	if [ -z "$tw" ] || [ -z "$tc" ] || [ -z "$g1" ]; then
		WHY="run not seen starting (workers: '$tw', client threads: '$tc', gate seen open: ${g1:+yes}; client: $(tail -3 "$T/$name.cli.err"))"
	else
		sleep_until $((g1 + 400000000))
		a=$(now_ns)
		for t in $tw; do first+=("$(sample "$SRV_PID" "$t")"); done
		for t in $tc; do first+=("$(sample "$cp" "$t")"); done
		sleep_until $((a + WIN_NS))
		i=0
		for t in $tw $tc; do
			p=$SRV_PID
			[[ " $tc " == *" $t "* ]] && p=$cp
			s=(${first[i]}); i=$((i + 1))
			e=($(sample "$p" "$t")) && [ ${#s[@]} = 4 ] && [ ${#e[@]} = 4 ] ||
				{ WHY="thread $t not read at the window's start or end (the test was held up?)"; break; }
			lines+="$(<"/proc/$p/task/$t/comm") $((e[0] - s[0])) $((e[1] - s[1])) $((e[2] - s[2])) ${s[3]}"$'\n'
			WHERE+="$(<"/proc/$p/task/$t/comm"): $(where "$p" "$t"); "
		done
		b=$(now_ns)
		COUNTS=${lines%$'\n'}
		WIN_S=$(awk -v n=$((b - a)) 'BEGIN { printf "%.2f", n / 1e9 }')
		if [ -z "$WHY" ] && [ "$b" -gt $((g0 + 3300000000)) ]; then
			WHY="the window ended $(((b - g0) / 1000000)) ms after the gate could have opened, past the run's 3300 (the test was held up)"
		fi
	fi
	wait "$cp"
	rc=$?
	kill -TERM "$SRV_PID" 2>/dev/null
	wait "$SRV_PID"
	[ -z "$WHY" ] && [ $rc -ne 0 ] && WHY="client exit $rc: $(tail -3 "$T/$name.cli.err")"
	[ -z "$WHY" ]
}

# measure NAME RATE SERVER-ARGS... -- CLIENT-ARGS...: window, tried up to
# three times when a run could not be measured (never when it could)
measure() {
	local i
	for i in 1 2 3; do
		window "$@" && return 0
		echo "# $1: attempt $i not measured: $WHY" >&2
	done
	COUNTS="" WIN_S="" WHERE=""
	return 1
}
# keep, kept: keep the last measured window; take it back (empty if none)
keep() { K_COUNTS=$COUNTS K_WIN_S=$WIN_S K_WHERE=$WHERE; }
kept() { COUNTS=$K_COUNTS WIN_S=$K_WIN_S WHERE=$K_WHERE; K_COUNTS="" K_WIN_S="" K_WHERE=""; }
K_COUNTS="" K_WIN_S="" K_WHERE=""

# show COUNTS: "oqb-w0 voluntary V (nonvoluntary N, on CPU P %), ..."
show() {
	awk -v w="$WIN_S" '{ printf "%s%s voluntary %d (nonvoluntary %d, on CPU %.0f %%)",
		(NR > 1 ? ", " : ""), $1, $2, $3, $4 / (w * 1e7) }' <<<"$1"
}
# pick COUNTS RE AWK-TEST: the names of the threads matching RE for which
# AWK-TEST ($2 voluntary, $3 nonvoluntary, $4 ns on CPU, $5 state at the
# start) holds
pick() { awk -v k=$K "\$1 ~ /^($2)\$/ && ($3) { print \$1 }" <<<"$1" | paste -sd ' ' -; }

# judge_spin NAME: the spinning threads of the last window block at most K
# times.  A thread asleep at the window's start that ran under 1 ms may
# have slept through it unseen (one that sleeps throughout makes no
# voluntary switch), and fails; one that was runnable at the start and
# made no voluntary switch never slept, however little CPU the host gave
# it.
judge_spin() {
	local over slept
	over=$(pick "$COUNTS" "$SPIN" '$2 > k')
	slept=$(pick "$COUNTS" "$SPIN" '$5 != "R" && $4 < 1000000')
	if [ -z "$over" ] && [ -z "$slept" ]; then
		ok "$1: spinning threads block at most $K times in ${WIN_S} s: $(show "$COUNTS")"
	else
		notok "$1: spinning threads block at most $K times in ${WIN_S} s" \
			"${over:+over $K: $over; }${slept:+asleep at the start and hardly ran: $slept; }$(show "$COUNTS"); at the window's end: $WHERE"
	fi
}

# Spinning server worker and client thread, on each backend.  A window in
# which the host left a thread under 1 ms of CPU says little about it.
SPIN='oqb-w[0-9]+|oqb-c[0-9]+'
for be in null cache; do
	for i in 1 2 3; do
		measure "spin-$be" 20000 --backend "$be" -- || break
		keep
		starved=$(pick "$COUNTS" "$SPIN" '$4 < 1000000')
		[ -z "$starved" ] && break
		echo "# $be: attempt $i: $starved on a CPU under 1 ms in the window: $(show "$COUNTS")" >&2
	done
	kept
	if [ -z "$COUNTS" ]; then
		notok "$be: spinning threads measured" "$WHY"
		continue
	fi
	judge_spin "$be"
done

# Negative control: the napping worker (nanosleep, never sched_yield,
# with --idle-spin-us 0) must be seen blocking; the spinning client of the
# same run is judged as above.  A worker that the host starves of CPU naps
# less: such a window is taken again, up to three times.
for i in 1 2 3; do
	measure "nap" 2000 --backend null --idle-nap-us 100 --idle-spin-us 0 -- || break
	keep
	low=$(pick "$COUNTS" 'oqb-w[0-9]+' "\$2 <= 20 * k")
	[ -z "$low" ] && break
	echo "# nap: attempt $i: $low not seen blocking: $(show "$COUNTS")" >&2
done
kept
low=$(pick "$COUNTS" 'oqb-w[0-9]+' "\$2 <= 20 * k")
if [ -z "$COUNTS" ]; then
	notok "negative control: measured" "$WHY"
else
	if [ -z "$low" ]; then
		ok "negative control: a napping worker blocks more than $((20 * K)) times in ${WIN_S} s: $(show "$COUNTS")"
	else
		notok "negative control: a napping worker blocks more than $((20 * K)) times in ${WIN_S} s" \
			"not seen blocking: $low; $(show "$COUNTS")"
	fi
	SPIN='oqb-c[0-9]+'
	judge_spin "negative control's run, the client"
fi

finish
