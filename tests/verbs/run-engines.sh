#!/usr/bin/env bash
# run-engines.sh - the real storage engines over verbs (make test, make
# test-verbs): boots one Soft-RoCE VM (tests/vm/rxe-vm) and runs
# tests/verbs/guest-engines.sh in it, which runs memcached-tiny,
# rocksdb-tiny and plugin-tiny with transport verbs (oq, rawrpc, deferred)
# and durable oq on rocksdb, histories recorded and checked by `oqb check`.
# Its "ok" / "not ok" / "skip" lines are relayed.  Without a usable VM:
# "skip" ("not ok" under CI=true), never "ok" without having run.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
. tests/vm/vm-test-lib.sh
: "${OQB_BIN:?run through tests/run-tests.sh (make test)}"

vm_preflight verbs-engines jq:jq || finish
"$OQB_BIN/oqb-server" --list-devices >/dev/null 2>&1
if [ $? -eq 2 ]; then
	vm_unavailable verbs-engines "oqb-server was built without the verbs transport (install libibverbs-dev and librdmacm-dev, rebuild)"
	finish
fi

t0=$SECONDS
# 95 s under TCG on 2 shared cores at load 10, 224 s at load 20; the
# sanitizer build, at load 20, finished its cases at 570 s of the guest's
# uptime.  Below run-tests.sh's 900 s, so a hang still says which case.
lim=${OQB_ENGINES_VM_TIMEOUT:-840}
"$VM_RUNNER" -t "$lim" -e OQB_BIN -- bash tests/verbs/guest-engines.sh >"$T/guest.out" 2>"$T/guest.err"
rc=$?
grep -E '^  ' "$T/guest.err" >&2   # each run's time and figures
echo "  (the VM, boot included: $((SECONDS - t0)) s)" >&2
vm_report verbs-engines $rc "$lim" "$T/guest.out" "$T/guest.err"
finish
