#!/usr/bin/env bash
# crashtest-killed.sh - a crash tester (`oqb crashtest`) killed with SIGKILL
# at any point of its cycle leaves no server (issue 48): CRASH_KILLS
# testers (100 in make test, about 20 s on a quiet host; 200 in make
# test-faults and make test-long), each
# killed once, and then no process of any of them may be alive
# within 5 s (tests/crashkill-lib.sh: found by command line, so a server
# re-parented to init counts and a dead, unreaped one does not).  One kill
# in four lands, held there by the tester's test hook OQB_CRASHTEST_HOLD,
# at a server start: in the new child before its parent-death signal is
# set (it must see the tester gone and exit), after it is set but before
# exec (the signal must end it), or in the tester right after fork; the
# start is the first, second or third, so restarts are among them.  The
# rest land at random instants 0-400 ms after the tester started: its
# start-up, the server's start and load, kill, stall and restart, and the
# check of every key.  A tester and its server spin, so on a crowded host
# the kills come more slowly but the test asks the same.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../crashkill-lib.sh"
N=${CRASH_KILLS:-100}
if [ ! -d /dev/shm ] || [ ! -w /dev/shm ]; then
	skip crashtest-killed "no writable /dev/shm here (the tester's directory goes there)"
	finish
fi

# a cheap cycle: one worker and one writer, a few keys, 1 MiB pools, short
# loads and stalls, idle server workers nap
cat >"$T/ct.json" <<'EOF'
{"name": "killed", "crashes": 100000, "workers": 1, "threads": 1, "keys_per_thread": 8,
 "value_size": 24, "ring_slots": 16, "pool_mb": 1, "kill_after_ms": [1, 20], "stall_ms": [0.1, 1],
 "server_idle_nap_us": 200}
EOF
spots=(child:1 armed:1 parent:1 child:2 armed:2 parent:2 child:3 armed:3 parent:3)
bad=0 held=0 rand=0 busy=0 nohook=0 first=""
t0=$SECONDS
for n in $(seq 1 "$N"); do
	d=$T/k$n hold=""
	if [ $((n % 4)) -eq 0 ]; then
		hold=${spots[$(((n / 4) % ${#spots[@]}))]}
		OQB_CRASHTEST_HOLD=$hold ck_start "$d" "$T/ct.json" --out "$d/crash.json"
		for _ in $(seq 1 400); do
			grep -q "held at" "$d/stderr" 2>/dev/null && break
			kill -0 "$CK_PID" 2>/dev/null || break
			sleep 0.025
		done
		if grep -q "held at" "$d/stderr" 2>/dev/null; then
			held=$((held + 1))
		else
			nohook=$((nohook + 1))
			[ -z "$first" ] && first="kill $n: the tester never reached $hold: $(tail -n 2 "$d/stderr")"
		fi
	else
		ck_start "$d" "$T/ct.json" --out "$d/crash.json"
		sleep "0.$(printf %03d $((RANDOM % 400)))"
		rand=$((rand + 1))
	fi
	# its children at the kill: a server, or a child before exec
	kids=$(cat /proc/"$CK_PID"/task/"$CK_PID"/children 2>/dev/null)
	[ -n "${kids// /}" ] && busy=$((busy + 1))
	kill -KILL "$CK_PID" 2>/dev/null
	wait "$CK_PID" 2>/dev/null
	if ! ck_left "$d" 5; then
		bad=$((bad + 1))
		[ -z "$first" ] && first="kill $n (${hold:-after a random delay}) left, 5 s later:
$CK_LEFT"
		kill -KILL $(ck_procs "$d") 2>/dev/null
	fi
	ck_end "$d" "$CK_PID"
done
what="$N testers killed in $((SECONDS - t0)) s ($held held at a server start: ${spots[*]}; $rand at random instants; $busy with a server or a child between fork and exec alive at the kill)"
if [ $bad -eq 0 ] && [ $nohook -eq 0 ] && [ $busy -gt 0 ]; then
	ok "crash tester killed anywhere in its cycle: no process of it is left ($what)"
else
	notok "crash tester killed anywhere in its cycle: no process of it is left" \
		"$bad left a process; $nohook never reached the hook's spot; $what; first: $first"
fi
finish
