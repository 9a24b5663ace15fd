#!/usr/bin/env bash
# run-guests.sh - the single-VM guest scripts over verbs, in ONE boot of the
# Soft-RoCE VM (make test, make test-verbs): tests/verbs/guest-group.sh runs
# them in turn (OQB_GUESTS, names separated by spaces or commas, default
# "check onesided"; make test-long runs "engines,rnr,onesided" with
# ONESIDED_FULL=1 (the killed writer and the four-system sweep), and make
# test-faults-rnr "rnr" at the config's loads):
#  - guest-check.sh: `oqb check` on verbs runs, delegation off and on, and
#    the verbs-applicable faults of bench/fault.h caught (CHECK_VERBS_SEEDS,
#    CHECK_VERBS_FAULTS, CHECK_VERBS_DELEG);
#  - guest-engines.sh: memcached, RocksDB and a plugin engine over verbs,
#    histories checked;
#  - guest-rnr.sh: receiver not ready driven past capacity (RNR_LOADS,
#    RNR_DURATION_S; make test-faults-rnr: RNR_LOADS=config);
#  - guest-onesided.sh: system write1 (per-client WRITE rings) beside oq,
#    8 threads on 2 hosts checked, and the scripted pair whose violations
#    `oqb check` counts (about 2 min of the guest under KVM).
# One boot for several: a boot and the guest's set-up cost about as
# much as a short script under TCG.  Their lines are relayed; a shape case
# of guest-rnr.sh that fails in the guest is decided here on the host's
# evidence over the VM's run (OQB_TIMING_RELAY, tests/vm/vm-test-lib.sh).
# Without a usable VM: "skip" ("not ok" under CI=true), never "ok" without
# having run.
# oqb-test-timeout: 2100
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
. tests/vm/vm-test-lib.sh
: "${OQB_BIN:?run through tests/run-tests.sh (make test)}"
GUESTS=${OQB_GUESTS:-check onesided}
GUESTS=${GUESTS//,/ }

vm_preflight verbs-guests jq:jq || finish
"$OQB_BIN/oqb-server" --list-devices >/dev/null 2>&1
if [ $? -eq 2 ]; then
	vm_unavailable verbs-guests "oqb-server was built without the verbs transport (install libibverbs-dev and librdmacm-dev, rebuild)"
	finish
fi
env=(-e OQB_BIN)
for v in CHECK_VERBS_SEEDS CHECK_VERBS_FAULTS CHECK_VERBS_DELEG RNR_LOADS RNR_DURATION_S ONESIDED_FULL; do
	[ -n "${!v+x}" ] && env+=(-e "$v")
done
t0=$SECONDS
# Under TCG on 2 shared cores, at a load of 10-20: check 3-6 min, engines
# 1.5-4.5 min, rnr 2-3 min; the limit leaves room below the runner's.
lim=${OQB_GUESTS_VM_TIMEOUT:-1980}
export OQB_TIMING_RELAY=1
vm_host_mark
# shellcheck disable=SC2086
"$VM_RUNNER" -t "$lim" "${env[@]}" -- bash tests/verbs/guest-group.sh $GUESTS >"$T/guest.out" 2>"$T/guest.err"
rc=$?
vm_host_busy
grep -E '^  ' "$T/guest.err" >&2   # each script's tables, figures and time
echo "  (the VM, boot included: $((SECONDS - t0)) s)" >&2
vm_report verbs-guests $rc "$lim" "$T/guest.out" "$T/guest.err"
finish
