#!/usr/bin/env bash
# run-two-vm-driver.sh - two hosts for real: `oqb run` in one Soft-RoCE VM,
# its server in another, started through the ssh launcher and reached over
# rdma_cm (make test, make test-verbs).
#
# Host side: makes an ed25519 client key, one host key per VM and their
# known_hosts lines in a shared directory, then boots both VMs of
# tests/vm/rxe-vm's two-VM mode at once.  VM 2 (tests/verbs/two-vm-server.sh)
# runs sshd on 198.18.2.2; VM 1 (tests/verbs/two-vm-driver.sh) runs sshd on
# 198.18.2.1 too (the launcher logs in to the client host as well), the
# driver and the checks.  The guests' result lines are relayed here, and
# the run's numbers are printed (never checked: only oq against rawrpc).
# Without a usable VM: "skip" here, "not ok" under CI=true.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
. tests/vm/vm-test-lib.sh
. tests/verbs/two-vm-lib.sh
ROOT=$PWD
SSH_PORT=2222
RUN_S=${OQB_TWO_VM_RUN_S:-240}     # the bound on `oqb run` in VM 1 (with the canary it took 130 s under TCG, 173 s in the sanitizer build)
DOCTOR_S=${OQB_TWO_VM_DOCTOR_S:-150}  # oqb doctor's four checks before the run, over ssh under TCG
LIMIT=${OQB_TWO_VM_TIMEOUT:-$((RUN_S + DOCTOR_S + 70))}   # boots and sshd (~30 s), doctor, the run, and VM 2 hearing of its end

vm_preflight two-vm-driver sshd:openssh-server ssh:openssh-client ssh-keygen:openssh-client \
	jq:jq busybox:busybox-static timeout:coreutils || finish
PATH=$PATH:/usr/sbin
[ -x /usr/sbin/sshd ] || { vm_unavailable two-vm-driver "/usr/sbin/sshd not found; install openssh-server (make deps)"; finish; }
two_vm_bins two-vm-driver || finish

# Keys: the driver's client key and one host key per VM, all fresh, in the
# shared directory $S (tests/verbs/two-vm-lib.sh).
trap two_vm_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
two_vm_share two-vm-driver "$SSH_PORT" || finish

t0=$SECONDS
TWO_VM_ENV=(-e OQB_TWO_VM_RUN_S="$RUN_S" -e OQB_TWO_VM_DOCTOR_S="$DOCTOR_S")
two_vm_boot "$LIMIT" "$ROOT/tests/verbs/two-vm-driver.sh" "$ROOT/tests/verbs/two-vm-server.sh" "$SSH_PORT"
echo "# two-VM driver test (both boots, sshd, oqb run): $((SECONDS - t0)) s" >&2
two_vm_results two-vm-driver "$LIMIT" || finish

# The numbers, for the log: TCG latencies are only meaningful as ratios.
if [ -f "$S/run/run.json" ]; then
	jq -r '.points[] | "# \(.system): offered \(.offered_ops) ops/s, achieved \(.achieved_ops | floor), n \(.lat_ns.all.n), nilext p50 \(.lat_ns.nilext.p50 / 1000 | floor) us p99 \(.lat_ns.nilext.p99 / 1000 | floor) us, non-nilext p50 \(.lat_ns.non_nilext.p50 / 1000 | floor) us"' \
		"$S/run/run.json" >&2 2>/dev/null
fi
finish
