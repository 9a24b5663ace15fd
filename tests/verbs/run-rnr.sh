#!/usr/bin/env bash
# run-rnr.sh - receiver not ready, driven, over verbs (make test, make
# test-verbs; make test-faults-rnr at full count): boots one Soft-RoCE VM
# (tests/vm/rxe-vm) and runs tests/verbs/guest-rnr.sh in it:
# configs/rnr-verbs.json with two loads, one below the server's capacity
# and one past it (RNR_LOADS=config: the config's six loads, 1.5 s each).
# Its own VM rather than guest-suite.sh's, whose one boot already holds
# up to ten minutes of cases under TCG against a 720 s limit.  Its "ok" / "not ok" / "skip" lines are relayed, its
# per-point table (RNR NAKs, latencies, checks) goes to stderr.  Without a
# usable VM: "skip" ("not ok" under CI=true), never "ok" without having run.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
. tests/vm/vm-test-lib.sh
: "${OQB_BIN:?run through tests/run-tests.sh (make test)}"

vm_preflight verbs-rnr jq:jq || finish
"$OQB_BIN/oqb-server" --list-devices >/dev/null 2>&1
if [ $? -eq 2 ]; then
	vm_unavailable verbs-rnr "oqb-server was built without the verbs transport (install libibverbs-dev and librdmacm-dev, rebuild)"
	finish
fi
env=(-e OQB_BIN)
[ -n "${RNR_LOADS:-}" ] && env+=(-e RNR_LOADS)
[ -n "${RNR_DURATION_S:-}" ] && env+=(-e RNR_DURATION_S)
t0=$SECONDS
lim=${OQB_RNR_VM_TIMEOUT:-600}
# the guest's shape cases are decided here, on the host's evidence
export OQB_TIMING_RELAY=1
vm_host_mark
"$VM_RUNNER" -t "$lim" "${env[@]}" -- bash tests/verbs/guest-rnr.sh >"$T/guest.out" 2>"$T/guest.err"
rc=$?
vm_host_busy
grep -E '^  ' "$T/guest.err" >&2
echo "  (the VM, boot included: $((SECONDS - t0)) s)" >&2
vm_report verbs-rnr $rc "$lim" "$T/guest.out" "$T/guest.err"
finish
