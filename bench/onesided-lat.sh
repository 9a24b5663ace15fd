#!/usr/bin/env bash
# onesided-lat.sh - the commit latency of the one-sided designs against
# oq's (issue 52; docs/systems.md, "Measured"), with perftest's WRITE and
# atomic latency on the same device for scale.  A benchmark: it prints the
# numbers and whether each target was met, and fails only when a
# measurement could not be taken.
#
# Usage: bench/onesided-lat.sh [ADDR]     (make bench-onesided runs it in
#        the Soft-RoCE VM: tests/vm/rxe-vm -- bash bench/onesided-lat.sh)
#   ADDR          IP address of the RDMA device (default: $RXE_IP)
#   env DEV       device name for perftest (default: $RXE_DEV, else the one
#                 oqb-server --list-devices shows with ADDR's GID)
#   env RUNS      runs per system (default 5)
#   env DURATION_S  measured seconds per run (default 2, after 0.5 s warm-up)
#   env ITERS     perftest iterations (default 2000)
#   env OQB_BIN   directory of oqb-server and oqb-client (default ./bin)
#
# What it measures: one client thread, one server worker, closed loop with
# one request in flight, 64 B sets (value_size 64, 16 B keys) on the cache
# backend: each run's nilext commit p50 (oqb-client's summary_ns.nilext).
# The systems run interleaved, oq seqwrite write1 in each round and the
# order reversed every second round, so a drift of the host's speed over
# the boot falls on all three.  The summary is each system's median of its
# runs and the ratios of the medians to oq's, against the targets:
#   seqwrite / oq  in [1.6, 2.5]  (a sequencer costs an extra round trip)
#   write1 / oq    <= 1.2         (one round trip, as oq's)
# ib_write_lat, ib_atomic_lat and ib_send_lat (64 B, 8 B, 64 B; t_typical,
# one way) run before and after the rounds: a round trip is about twice
# t_typical.  From their medians it prints the device's own bound for
# seqwrite / oq: (atomic + write) / send, and 2 atomic / send (seqwrite's
# second round trip ends with an atomic too); and each system's p99.  On
# Soft-RoCE RDMA, atomics included, runs in the kernel's software, and
# under TCG every number is slow: the ratios compare like with like.
set -u
ADDR=${1:-${RXE_IP:-}}
B=${OQB_BIN:-$PWD/bin}
RUNS=${RUNS:-5}
DUR=${DURATION_S:-2}
ITERS=${ITERS:-2000}
PORT=${PORT:-18700}
STEP_S=${STEP_S:-90}
case $RUNS in ([1-9]|[1-9][0-9]) ;; (*) echo "onesided-lat: RUNS=$RUNS: give a number of runs from 1 to 99" >&2; exit 2 ;; esac
if [ -z "$ADDR" ]; then
	echo "onesided-lat: give the RDMA device's IP address (bench/onesided-lat.sh ADDR), or run it through make bench-onesided" >&2
	exit 2
fi
for t in ib_write_lat ib_atomic_lat ib_send_lat jq; do
	command -v "$t" >/dev/null || { echo "onesided-lat: $t not found; install perftest and jq (make deps)" >&2; exit 2; }
done
[ -x "$B/oqb-server" ] && [ -x "$B/oqb-client" ] ||
	{ echo "onesided-lat: $B/oqb-server or oqb-client not found; run make, or set OQB_BIN" >&2; exit 2; }
DEV=${DEV:-${RXE_DEV:-}}
if [ -z "$DEV" ]; then
	DEV=$("$B/oqb-server" --list-devices 2>/dev/null | awk -v ip="::ffff:$ADDR" '
		/^[^ ]/ { d = $1 } $0 ~ ip { print d; exit }')
	[ -n "$DEV" ] || { echo "onesided-lat: no RDMA device has address $ADDR; set DEV" >&2; exit 2; }
fi
T=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT

# perftest TOOL SIZE: t_typical (us) of TOOL over rdma_cm; the client
# retries until the server listens (each step bounded by STEP_S).
perftest() {
	local tool=$1 size=$2 ok=0 t0=$SECONDS sp
	PORT=$((PORT + 1))
	timeout -k 2 "$STEP_S" "$tool" -d "$DEV" -s "$size" -n "$ITERS" -R -F -p "$PORT" >"$T/$tool.srv" 2>&1 &
	sp=$!
	pids+=("$sp")
	while [ $((SECONDS - t0)) -lt "$STEP_S" ]; do
		if timeout -k 2 $((STEP_S - (SECONDS - t0) + 1)) "$tool" -d "$DEV" -s "$size" -n "$ITERS" -R -F \
			-p "$PORT" "$ADDR" >"$T/$tool.cli" 2>&1; then
			ok=1
			break
		fi
		kill -0 "$sp" 2>/dev/null || break
		sleep 0.2
	done
	kill -TERM "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	[ $ok = 1 ] && awk -v s="$size" '$1 == s && NF >= 5 { print $5; exit }' "$T/$tool.cli"
}

# commit SYSTEM: the nilext commit p50 (ns) of one run.
commit() {
	local sys=$1 ep= i sp rc
	PORT=$((PORT + 1))
	"$B/oqb-server" --transport verbs --addr "$ADDR" --port "$PORT" --system "$sys" --backend cache \
		--memory-mb 16 --workers 1 --ring-slots 256 >"$T/$sys.srv" 2>"$T/$sys.srv.err" &
	sp=$!
	pids+=("$sp")
	for i in $(seq 1 600); do
		ep=$(sed -n 's/^ready: endpoint //p' "$T/$sys.srv")
		[ -n "$ep" ] && break
		kill -0 "$sp" 2>/dev/null || break
		sleep 0.05
	done
	if [ -z "$ep" ]; then
		echo "onesided-lat: oqb-server ($sys) did not start: $(tail -2 "$T/$sys.srv.err")" >&2
		return 1
	fi
	timeout -k 2 "$STEP_S" "$B/oqb-client" --transport verbs --server "$ep" --system "$sys" --arrival closed \
		--outstanding 1 --threads 1 --duration-s "$DUR" --warmup-s 0.5 \
		--workload '{"kind":"kv","put_ratio":1.0,"key_size":16,"value_size":64,"keys":1000}' \
		--out "$T/$sys.json" 2>"$T/$sys.cli.err"
	rc=$?
	kill -TERM "$sp" 2>/dev/null
	wait "$sp" 2>/dev/null
	if [ $rc != 0 ]; then
		echo "onesided-lat: oqb-client ($sys) exited $rc: $(tail -2 "$T/$sys.cli.err" | tr '\n' ' ')" >&2
		return 1
	fi
	jq -r '.summary_ns.nilext | select(.p50 != null) | "\(.p50) \(.p99 // "")"' "$T/$sys.json"
}

us() { awk -v v="$1" 'BEGIN { printf "%.1f", v / 1000 }'; }
median() { sort -g | awk '{ v[n++] = $1 } END { if (n) print n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2 }'; }

echo "device $DEV, address $ADDR; closed loop, 1 in flight, 64 B sets, $RUNS runs of ${DUR} s per system"
fail=0
# m_perftest TOOL SIZE WHEN: prints t_typical; a second try when the
# first gives nothing (once the first tool of a boot failed to connect)
m_perftest() {
	local v
	v=$(perftest "$1" "$2") || v=$(perftest "$1" "$2") || v=
	[ -n "$v" ] && echo "$v" >>"$T/$1.typ" || fail=1
	printf '  %-28s %s\n' "$1 ($2 B) t_typical" "${v:-failed} us ($3)"
}
m_perftest ib_write_lat 64 before
m_perftest ib_atomic_lat 8 before
m_perftest ib_send_lat 64 before
order=(oq seqwrite write1)
for r in $(seq 1 "$RUNS"); do
	[ $((r % 2)) = 0 ] && order=(write1 seqwrite oq) || order=(oq seqwrite write1)
	line="  run $r:"
	for sys in "${order[@]}"; do
		if v=$(commit "$sys") && [ -n "$v" ]; then
			echo "${v%% *}" >>"$T/$sys.p50"
			[ -n "${v#* }" ] && echo "${v#* }" >>"$T/$sys.p99"
			v=${v%% *}
			line="$line $sys $(us "$v")"
		else
			fail=1
			line="$line $sys failed"
		fi
	done
	echo "$line us"
done
m_perftest ib_write_lat 64 after
m_perftest ib_atomic_lat 8 after
m_perftest ib_send_lat 64 after
declare -A med
for sys in oq seqwrite write1; do
	med[$sys]=$( [ -s "$T/$sys.p50" ] && median <"$T/$sys.p50")
	printf '  %-28s %s\n' "$sys nilext commit p50" \
		"$([ -n "${med[$sys]}" ] && us "${med[$sys]}" || echo n/a) us (median of $(wc -l <"$T/$sys.p50" 2>/dev/null || echo 0): $(tr '\n' ' ' <"$T/$sys.p50" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) printf("%s%.1f", (i > 1 ? " " : ""), $i / 1000) }'))"
done
# ratio SYS LO HI: the median's ratio to oq's against [LO, HI]
ratio() {
	if [ -n "${med[$1]}" ] && [ -n "${med[oq]}" ]; then
		awk -v a="${med[$1]}" -v b="${med[oq]}" -v n="$1" -v lo="$2" -v hi="$3" 'BEGIN { r = a / b
			printf("  %-28s %.2f  (target %s: %s)\n", n " / oq", r, (lo > 0 ? lo "-" hi : "<= " hi),
				((r >= lo && r <= hi) ? "met" : "missed")) }'
	else
		printf '  %-28s n/a (a measurement failed)\n' "$1 / oq"
	fi
}
ratio seqwrite 1.6 2.5
ratio write1 0 1.2
for sys in oq seqwrite write1; do
	[ -s "$T/$sys.p99" ] && printf '  %-28s %s us\n' "$sys nilext commit p99" "$(us "$(median <"$T/$sys.p99")")"
done
# The device's own bound for the ratio: seqwrite's commit is an atomic's
# round trip, then a WRITE's with an atomic behind it on the same QP; oq's
# one SEND's.  From the medians of perftest's t_typical (one way, so the
# ratios of round trips): (atomic + write) / send and 2 atomic / send.
typ() { [ -s "$T/$1.typ" ] && median <"$T/$1.typ"; }
a=$(typ ib_atomic_lat) w=$(typ ib_write_lat) s=$(typ ib_send_lat)
if [ -n "$a" ] && [ -n "$w" ] && [ -n "$s" ]; then
	awk -v a="$a" -v w="$w" -v s="$s" 'BEGIN {
		printf("  %-28s %.2f  ((%.1f + %.1f) / %.1f us)\n", "device: (atomic+write)/send", (a + w) / s, a, w, s)
		printf("  %-28s %.2f\n", "device: 2 atomic/send", 2 * a / s) }'
else
	echo "  device bound: n/a (a perftest measurement failed)"
fi
exit $fail
