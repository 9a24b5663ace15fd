#!/usr/bin/env bash
# perftest-compare.sh - how close the verbs transport comes to the wire,
# measured against perftest on the same device in the same run.
#
# Usage: bench/perftest-compare.sh [ADDR]
#   ADDR         IP address of the RDMA device to use (default: $RXE_IP)
#   env DEV      device name for perftest (default: $RXE_DEV, else the one
#                oqb-server --list-devices shows with ADDR's GID)
#   env ITERS    perftest iterations (default 2000)
#   env DURATION_S  oqbench measured seconds per system (default 3)
#   env ROUNDS   rounds (default 1); each runs all four steps in turn, so
#                perftest and oqbench alternate in one boot and share its
#                noise: each ratio's two steps run back to back, and every
#                second round runs backwards; with ROUNDS > 1 the summary
#                is each ratio's median over the rounds with its spread
#                (min-max)
#   env OQB_BIN  directory of oqb-server and oqb-client (default: ./bin)
#   env OQB_BIN_BASE  a second build's bin directory (e.g. the previous
#                commit's, built in a git worktree): each round then also
#                runs both systems with it, in alternating order, and the
#                summary gives this build's p50 over the base build's, per
#                round and as a median.  Builds compared in one boot share
#                its speed, which perftest ratios across boots do not.
#                Inside the VM the directory must be outside /tmp (the
#                guest's /tmp is its own).
# In the Soft-RoCE VM (docs/verbs-vm.md):
#   tests/vm/rxe-vm -t 900 -e ROUNDS=7 -- bash bench/perftest-compare.sh
#
# Steps, all at 64 B and one request in flight:
#   ib_send_lat -R and ib_write_lat -R (rdma_cm), t_typical = half an RTT;
#   oqbench rawrpc (SEND, server executes on the null backend, SEND back):
#     its p50 over 2 x ib_send_lat typical -- target <= 1.15;
#   oqbench oq nilext (SEND, commit on the RC hardware ACK): its p50 over
#     2 x ib_write_lat typical -- target <= 1.10 (the paper's claim: a nilext
#     request costs what a one-sided WRITE costs).
# The ratios of a round use that round's perftest numbers only.
# A benchmark: it prints the numbers and ratios and never fails on them.
# Under TCG (the Soft-RoCE VM) the absolute numbers mean little; the
# ratios still compare like with like.
set -u
ADDR=${1:-${RXE_IP:-}}
B=${OQB_BIN:-$PWD/bin}
ITERS=${ITERS:-2000}
DUR=${DURATION_S:-3}
ROUNDS=${ROUNDS:-1}
case $ROUNDS in ([1-9]|[1-9][0-9]) ;; (*) echo "perftest-compare: ROUNDS=$ROUNDS: give a number of rounds from 1 to 99" >&2; exit 2 ;; esac
PORT=${PORT:-18600}
if [ -z "$ADDR" ]; then
	echo "perftest-compare: give the RDMA device's IP address (bench/perftest-compare.sh ADDR)" >&2
	exit 2
fi
for t in ib_send_lat ib_write_lat jq; do
	command -v "$t" >/dev/null || { echo "perftest-compare: $t not found; install perftest and jq (make deps)" >&2; exit 2; }
done
[ -x "$B/oqb-server" ] || { echo "perftest-compare: $B/oqb-server not found; run make, or set OQB_BIN" >&2; exit 2; }
BASE=${OQB_BIN_BASE:-}
if [ -n "$BASE" ] && { [ ! -x "$BASE/oqb-server" ] || [ ! -x "$BASE/oqb-client" ]; }; then
	echo "perftest-compare: OQB_BIN_BASE=$BASE has no oqb-server and oqb-client; give the bin directory of a" \
		"built checkout (inside the VM, one outside /tmp)" >&2
	exit 2
fi
DEV=${DEV:-${RXE_DEV:-}}
if [ -z "$DEV" ]; then
	DEV=$("$B/oqb-server" --list-devices 2>/dev/null | awk -v ip="::ffff:$ADDR" '
		/^[^ ]/ { d = $1 } $0 ~ ip { print d; exit }')
	[ -n "$DEV" ] || { echo "perftest-compare: no RDMA device has address $ADDR; set DEV" >&2; exit 2; }
fi
T=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT

# Every step has a time bound (STEP_S, default 90 s) and says what went
# wrong, so one stuck tool costs one step, not the whole run's budget.
STEP_S=${STEP_S:-90}

# perftest_typical TOOL: t_typical (us) of TOOL -s 64 over rdma_cm.
perftest_typical() {
	local tool=$1 i ok=0 t0=$SECONDS
	PORT=$((PORT + 1))
	timeout -k 2 "$STEP_S" "$tool" -d "$DEV" -s 64 -n "$ITERS" -R -F -p "$PORT" >"$T/$tool.srv" 2>&1 &
	local sp=$!
	pids+=("$sp")
	# The server listens once it has set up; the client retries until then.
	while [ $((SECONDS - t0)) -lt "$STEP_S" ]; do
		if timeout -k 2 $((STEP_S - (SECONDS - t0) + 1)) "$tool" -d "$DEV" -s 64 -n "$ITERS" -R -F -p "$PORT" \
			"$ADDR" >"$T/$tool.cli" 2>&1; then
			ok=1
			break
		fi
		kill -0 "$sp" 2>/dev/null || break
		sleep 0.2
	done
	kill -TERM "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	if [ $ok = 0 ]; then
		echo "perftest-compare: $tool gave no result within ${STEP_S} s; its last output: " \
			"$(tail -n 2 "$T/$tool.cli" 2>/dev/null | tr '\n' ' ')" >&2
		return 1
	fi
	awk '$1 == 64 && NF >= 5 { print $5; exit }' "$T/$tool.cli"
}

# oqb_p50 SYSTEM [BIN]: nilext p50 (ns) of 64-byte SETs, closed loop, 1 in
# flight, with the build in BIN (default $B).
oqb_p50() {
	local sys=$1 B=${2:-$B} ep= i
	PORT=$((PORT + 1))
	"$B/oqb-server" --transport verbs --addr "$ADDR" --port "$PORT" --system "$sys" --backend null \
		--workers 1 --ring-slots 256 >"$T/$sys.srv" 2>"$T/$sys.srv.err" &
	local sp=$!
	pids+=("$sp")
	for i in $(seq 1 600); do
		ep=$(sed -n 's/^ready: endpoint //p' "$T/$sys.srv")
		[ -n "$ep" ] && break
		kill -0 "$sp" 2>/dev/null || break
		sleep 0.05
	done
	if [ -z "$ep" ]; then
		echo "perftest-compare: oqb-server ($sys) did not start: $(cat "$T/$sys.srv.err")" >&2
		return 1
	fi
	timeout -k 2 "$STEP_S" "$B/oqb-client" --transport verbs --server "$ep" --system "$sys" --arrival closed \
		--outstanding 1 --threads 1 --duration-s "$DUR" --warmup-s 0.5 \
		--workload '{"kind":"kv","put_ratio":1.0,"key_size":16,"value_size":0,"keys":1000}' \
		--out "$T/$sys.json" 2>"$T/$sys.cli.err"
	local rc=$?
	[ $rc = 0 ] || echo "perftest-compare: oqb-client ($sys) exited with $rc$([ $rc = 124 ] && echo " (no result within ${STEP_S} s)"): " \
		"$(tail -n 2 "$T/$sys.cli.err" | tr '\n' ' ')" >&2
	kill -TERM "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	jq -r '.summary_ns.nilext.p50 // empty' "$T/$sys.json" 2>/dev/null
}

# The steps of a round, each printing its number as soon as it is known.
# m_perftest TOOL VAR: VAR gets TOOL's t_typical (us).
m_perftest() {
	printf -v "$2" '%s' "$(perftest_typical "$1")"
	printf '  %-34s %s\n' "$1 t_typical (us)" "${!2:-failed}"
}
# m_oqb SYSTEM WHAT VAR BASEVAR THIS_FIRST: VAR gets this build's p50 (ns)
# of SYSTEM and, with a base build, BASEVAR the base's, this build first
# when THIS_FIRST is 1.
m_oqb() {
	local v= b=
	if [ -n "$BASE" ] && [ "$5" = 0 ]; then
		b=$(oqb_p50 "$1" "$BASE"); v=$(oqb_p50 "$1")
	else
		v=$(oqb_p50 "$1"); [ -n "$BASE" ] && b=$(oqb_p50 "$1" "$BASE")
	fi
	printf -v "$3" '%s' "$v"
	printf -v "$4" '%s' "$b"
	printf '  %-34s %s\n' "oqbench $1 $2 p50 (us)" "$(us "$v")"
	[ -z "$BASE" ] || printf '  %-34s %s\n' "base build $1 $2 p50 (us)" "$(us "$b")"
}

# Each number is printed as soon as it is known.
echo "device $DEV, address $ADDR, 64 B, 1 outstanding, $ROUNDS round(s)"
ratio() {   # ratio NAME P50_NS TYPICAL_US TARGET: prints the ratio, or n/a
	if [ -n "$2" ] && [ -n "$3" ]; then
		awk -v n="$1" -v p="$2" -v t="$3" -v g="$4" 'BEGIN { r = (p / 1000) / (2 * t);
			printf "  %-44s %.3f  (target <= %s: %s)\n", n, r, g, r <= g ? "met" : "missed" }'
	else
		printf '  %-44s n/a (a measurement failed)\n' "$1"
	fi
}
: >"$T/ratios"
us() { [ -n "$1" ] && awk -v v="$1" 'BEGIN{printf "%.2f", v/1000}' || echo failed; }   # ns -> us
for r in $(seq 1 "$ROUNDS"); do
	[ "$ROUNDS" -gt 1 ] && echo "round $r of $ROUNDS"
	# Each ratio's two steps back to back (the host's speed changes from
	# one run to the next); even rounds backwards, so a drift over the
	# round falls on both sides of a ratio.  With a base build, odd rounds
	# run this build first, even rounds the base.
	if [ $((r % 2)) = 1 ]; then
		m_perftest ib_send_lat send
		m_oqb rawrpc echo raw braw 1
		m_oqb oq "nilext commit" oq boq 1
		m_perftest ib_write_lat write
	else
		m_perftest ib_write_lat write
		m_oqb oq "nilext commit" oq boq 0
		m_oqb rawrpc echo raw braw 0
		m_perftest ib_send_lat send
	fi
	if [ -n "$BASE" ]; then
		for x in "raw rawrpc $raw $braw" "oq oq $oq $boq"; do
			read -r key name a b <<<"$x"
			if [ -n "$b" ]; then
				v=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", a / b }')
				printf '  %-44s %.3f\n' "$name p50, this build / base build" "$v"
				echo "b$key $v" >>"$T/ratios"
			else
				printf '  %-44s n/a (a measurement failed)\n' "$name p50, this build / base build"
			fi
		done
	fi
	line=$(ratio "rawrpc p50 / (2 x ib_send_lat typical)" "$raw" "$send" 1.15)
	echo "$line"
	case $line in (*n/a*) ;; (*) echo "raw $(echo "$line" | awk '{ print $(NF-4) }')" >>"$T/ratios" ;; esac
	line=$(ratio "oq p50 / (2 x ib_write_lat typical)" "$oq" "$write" 1.10)
	echo "$line"
	case $line in (*n/a*) ;; (*) echo "oq $(echo "$line" | awk '{ print $(NF-4) }')" >>"$T/ratios" ;; esac
done
# summary NAME KEY TARGET: median (min-max) of a ratio over the rounds
summary() {
	sort -k2,2g "$T/ratios" | awk -v k="$2" -v n="$1" -v g="$3" '$1 == k { v[c++] = $2 }
		END { if (!c) { printf "  %-44s n/a (every round failed)\n", n; exit }
			m = c % 2 ? v[(c - 1) / 2] : (v[c / 2 - 1] + v[c / 2]) / 2
			if (g == "") {
				for (i = 0; i < c; i++) below += v[i] < 1
				printf "  %-44s %.3f  (%.3f-%.3f over %d rounds; below 1 in %d)\n",
					n, m, v[0], v[c - 1], c, below
				exit
			}
			printf "  %-44s %.3f  (%.3f-%.3f over %d rounds; target <= %s: %s)\n",
				n, m, v[0], v[c - 1], c, g, m <= g ? "met" : "missed" }'
}
if [ "$ROUNDS" -gt 1 ]; then
	echo "median over the rounds (min-max)"
	summary "rawrpc p50 / (2 x ib_send_lat typical)" raw 1.15
	summary "oq p50 / (2 x ib_write_lat typical)" oq 1.10
	if [ -n "$BASE" ]; then
		summary "rawrpc p50, this build / base build" braw ""
		summary "oq p50, this build / base build" boq ""
	fi
fi
exit 0
