#!/usr/bin/env bash
# Soft-RoCE smoke test in one VM (tests/vm/rxe-vm).
#
# One boot checks the runner's contract (exit status, separate stdout and
# stderr, environment, writes to the shared directory) and the stock verbs
# tools on rxe0: ibv_devinfo shows an ACTIVE port, ib_send_lat over rdma_cm
# (-R) to $RXE_IP completes, ibv_srq_pingpong runs.  Short extra runs check
# that a timeout, SIGINT and SIGTERM leave no qemu and no run directory.
# Without a usable VM: "skip" here, "not ok" under CI=true.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
. tests/vm/vm-test-lib.sh

vm_preflight vm-smoke ibv_devinfo:ibverbs-utils ibv_srq_pingpong:ibverbs-utils \
	ib_send_lat:perftest rdma:iproute2 ss:iproute2 stdbuf:coreutils || finish

# Runs inside the guest, as root, in the shared directory.  Prints one result
# line per case; diagnostics go to stderr.
guest=$(cat <<'EOF'
set -u
result() { if [ "$2" = 0 ]; then echo "ok $1"; else echo "not ok $1"; fi; }
show() { local f; for f; do echo "--- $f" >&2; tail -n 15 "$f" >&2; done; }
# wait_for SECS CMD...: poll CMD until it succeeds (a readiness check).
wait_for() {
	local end=$((SECONDS + $1)); shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}
cm_listening() { rdma resource show cm_id | grep -q "state LISTEN .*:$1 "; }
tcp_listening() { ss -Hltn "sport = :$1" | grep -q .; }
# pair NAME READY-CHECK SERVER-LOG CLIENT-LOG CMD...: a server (CMD) and a
# client (CMD plus $PAIR_TARGET, if set).  The server restarts after a failed
# run and the client gets three tries once the server listens: under a
# loaded TCG guest an rdma_cm handshake can time out half-way, which leaves
# a one-shot server waiting for ever.  Retries are reported on stderr.
pair() {
	local name=$1 ready=$2 slog=$3 clog=$4 srv try r=1; shift 4
	serve 180 "$slog" "$@" &
	srv=$!
	for try in 1 2 3; do
		if ! wait_for 75 $ready; then
			echo "$name: the server is not listening ($ready)" >&2
			break
		fi
		if timeout 60 "$@" ${PAIR_TARGET:+"$PAIR_TARGET"} >"$clog" 2>&1; then
			r=0
			break
		fi
		echo "$name: client try $try failed" >&2
		sleep 1
	done
	if [ $r = 0 ]; then
		wait $srv || r=1
	else
		kill $srv 2>/dev/null
	fi
	[ $r = 0 ] || show "$slog" "$clog"
	return $r
}
serve() {
	local end=$((SECONDS + $1)) log=$2; shift 2
	until timeout 60 stdbuf -oL "$@" >"$log" 2>&1; do
		[ $SECONDS -ge $end ] && return 1
		sleep 1
	done
}

echo hello-stdout
echo hello-stderr >&2
echo from-guest >guest-wrote
[ "${RXE_VM:-}" = 1 ] && [ "${OQB_SMOKE_X:-}" = "a b'c" ] && [ -n "${PATH:-}" ] &&
	[ "$RXE_DEV" = rxe0 ] && [ "$RXE_IBPORT" = 1 ] && [ "$RXE_IP" = 198.18.0.1 ] &&
	[ -n "$RXE_GID_INDEX" ]
result rxe-vm/environment $?

ibv_devinfo -d "$RXE_DEV" >/tmp/devinfo 2>&1 && grep -q PORT_ACTIVE /tmp/devinfo
r=$?; [ $r = 0 ] || show /tmp/devinfo
result vm-smoke/ibv_devinfo-port-active $r

PAIR_TARGET=$RXE_IP pair ib_send_lat "cm_listening 18515" /tmp/lat-srv /tmp/lat-cli \
	ib_send_lat -R -d "$RXE_DEV" -n 200 &&
	grep -Eq '^ *2 +200 +[0-9.]+' /tmp/lat-cli
result vm-smoke/ib_send_lat-rdma_cm $?

PAIR_TARGET=127.0.0.1 pair ibv_srq_pingpong "tcp_listening 18600" /tmp/srq-srv /tmp/srq-cli \
	ibv_srq_pingpong -d "$RXE_DEV" -i "$RXE_IBPORT" -g "$RXE_GID_INDEX" -q 16 -n 100 -p 18600 &&
	grep -q 'iters in' /tmp/srq-cli
result vm-smoke/ibv_srq_pingpong $?
exit 7
EOF
)

mkdir -p "$T/share" "$T/tmp"
t0=$SECONDS
TMPDIR=$T/tmp "$VM_RUNNER" -C "$T/share" -t 600 -e "OQB_SMOKE_X=a b'c" -- bash -c "$guest" \
	>"$T/out" 2>"$T/err"
rc=$?
echo "# one-VM smoke boot and tests: $((SECONDS - t0)) s" >&2
if [ $rc = 125 ]; then
	cat "$T/err" >&2
	vm_unavailable vm-smoke "the VM did not start (rxe-vm exit 125; console tail above)"
	finish
fi
[ $rc = 7 ] && ok rxe-vm/exit-status || notok rxe-vm/exit-status "expected the guest's exit status 7, got $rc"
vm_relay "$T/out" || notok vm-smoke "the guest printed no result (rxe-vm exit $rc)"
grep -qx hello-stdout "$T/out" && ! grep -q hello-stderr "$T/out" && grep -qx hello-stderr "$T/err"
if [ $? = 0 ]; then ok rxe-vm/separate-stdout-stderr
else notok rxe-vm/separate-stdout-stderr "stdout: $(head -c 300 "$T/out"); stderr: $(head -c 300 "$T/err")"
fi
if grep -q '^not ok' "$T/out"; then cat "$T/err" >&2; fi
[ "$(cat "$T/share/guest-wrote" 2>/dev/null)" = from-guest ] && ok rxe-vm/share-write-back ||
	notok rxe-vm/share-write-back "the guest's write to the shared directory did not reach the host"
left=$(vm_leftovers "$T/tmp")
[ -z "$left" ] && ok rxe-vm/cleanup-after-exit || notok rxe-vm/cleanup-after-exit "$left"

# A timeout and two signals, each during boot: nothing may be left behind.
# (A background job of this script would ignore SIGINT, so timeout(1)
# delivers the signals.)
mkdir -p "$T/tmp2"
TMPDIR=$T/tmp2 "$VM_RUNNER" -C "$T/share" -t 2 sleep 100 >/dev/null 2>"$T/err2"
rc=$?
left=$(vm_leftovers "$T/tmp2")
[ $rc = 124 ] && [ -z "$left" ] && ok rxe-vm/timeout-124-and-cleanup ||
	notok rxe-vm/timeout-124-and-cleanup "exit $rc (want 124); left: $left"
for sig in INT TERM; do
	want=130; [ $sig = TERM ] && want=143
	mkdir -p "$T/tmp-$sig"
	TMPDIR=$T/tmp-$sig timeout --preserve-status -s $sig 3 "$VM_RUNNER" -C "$T/share" sleep 100 \
		>/dev/null 2>"$T/err-$sig"
	rc=$?
	left=$(vm_leftovers "$T/tmp-$sig")
	[ $rc = $want ] && [ -z "$left" ] && ok rxe-vm/sig$sig-cleanup ||
		notok rxe-vm/sig$sig-cleanup "exit $rc (want $want); left: $left; $(tail -n 3 "$T/err-$sig")"
done
finish
