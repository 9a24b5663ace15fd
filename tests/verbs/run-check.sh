#!/usr/bin/env bash
# run-check.sh - `oqb check` on the verbs transport (make test TESTS=verbs):
# boots one Soft-RoCE VM (tests/vm/rxe-vm) and runs
# tests/verbs/guest-check.sh in it, which records multi-client verbs runs
# (delegation off and on) and the verbs-applicable faults of bench/fault.h,
# and requires `oqb check` to pass the correct runs and catch every fault.
# Its "ok" / "not ok" lines are relayed.  Without a usable VM: "skip"
# ("not ok" under CI=true), never "ok" without having run.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
. tests/vm/vm-test-lib.sh
: "${OQB_BIN:?run through tests/run-tests.sh (make test)}"

vm_preflight verbs-check jq:jq || finish
"$OQB_BIN/oqb-server" --list-devices >/dev/null 2>&1
if [ $? -eq 2 ]; then
	vm_unavailable verbs-check "oqb-server was built without the verbs transport (install libibverbs-dev and librdmacm-dev, rebuild)"
	finish
fi

lim=${OQB_CHECK_VM_TIMEOUT:-720}   # ~6 minutes under TCG on 2 busy cores
"$VM_RUNNER" -t "$lim" -e OQB_BIN -e CHECK_VERBS_SEEDS="${CHECK_VERBS_SEEDS:-1}" \
	${CHECK_VERBS_FAULTS+-e CHECK_VERBS_FAULTS} ${CHECK_VERBS_DELEG+-e CHECK_VERBS_DELEG} -- bash tests/verbs/guest-check.sh \
	>"$T/guest.out" 2>"$T/guest.err"
rc=$?
grep -E '^  ' "$T/guest.err" >&2   # the tables and checker figures
vm_report verbs-check $rc "$lim" "$T/guest.out" "$T/guest.err"
finish
