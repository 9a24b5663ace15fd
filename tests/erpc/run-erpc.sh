#!/usr/bin/env bash
# run-erpc.sh - the eRPC suite (make test-erpc; make test with ERPC_DIR):
# the no-device error here on the host when it has no RDMA device, then the
# adapter end to end in ONE Soft-RoCE VM (tests/erpc/guest-erpc.sh), whose
# ok/not ok lines come back on stdout.  Without ERPC_DIR (the Makefile
# passes it as OQB_ERPC_DIR) one skip line says why.
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
if [ -z "${OQB_ERPC_DIR:-}" ]; then
	skip erpc "ERPC_DIR not set (docs/erpc.md)"
	finish
fi
if ! ls /sys/class/infiniband/* >/dev/null 2>&1; then
	out=$(timeout -k 5 30 "$OQB_BIN/oqb-server" --system erpc --transport erpc --addr 127.0.0.1 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [[ $out == *"no RDMA device"* ]] && [[ $out == *rdma_rxe* ]]; then
		ok "error: no RDMA device on the host"
	else
		notok "error: no RDMA device" "rc=$rc: $out"
	fi
	# oqb run fails the same way, and its partial run.json names the
	# eRPC build (the commit the Makefile found, not "unknown").
	jq '.systems = ["erpc"] | .transport = "verbs" | .verbs = {"addr": "127.0.0.1"} | .canary = false' \
		configs/tiny.json >"$T/erpc.json"
	out=$(timeout -k 5 60 "$OQB_BIN/oqb" run "$T/erpc.json" --out "$T/run" --quiet 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [[ $out == *"no RDMA device"* ]]; then
		want=$(git -C "$OQB_ERPC_DIR" rev-parse HEAD 2>/dev/null || echo none)
		jcheck "oqb run without a device: refused, run.json names the eRPC build" "$T/run/run.json" \
			".transport.erpc_build.commit == \"$want\" and .transport.erpc_build.transport == \"infiniband\""
	else
		notok "oqb run without a device" "rc=$rc: $(tail -3 <<<"$out")"
	fi
fi
. tests/vm/vm-test-lib.sh
vm_preflight erpc || finish
out=$T/guest.out
# Under the sanitizers, eRPC's own leaks are suppressed (lsan-erpc.supp).
san=()
[ "${OQB_SANITIZE:-0}" = 1 ] && san=(-e LSAN_OPTIONS="suppressions=$PWD/tests/erpc/lsan-erpc.supp")
tests/vm/rxe-vm -t "${OQB_ERPC_VM_TIMEOUT:-1200}" -e OQB_BIN="$OQB_BIN" -e OQB_ERPC_BENCH="${OQB_ERPC_BENCH:-1}" \
	"${san[@]}" -- bash tests/erpc/guest-erpc.sh | tee "$out"
rc=${PIPESTATUS[0]}
case $rc in
0) ;;
124) notok "erpc: the VM hit its time limit after $(grep -cE '^(ok|not ok) ' "$out") case(s)" ;;
*) grep -q '^not ok ' "$out" || notok "erpc: the VM or guest suite failed (status $rc)" ;;
esac
[ $rc -ne 0 ] && TEST_FAILED=1
finish
