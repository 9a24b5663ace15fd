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
ROOT=$PWD
SSH_PORT=2222
RUN_S=${OQB_TWO_VM_RUN_S:-240}     # the bound on `oqb run` in VM 1 (with the canary it took 130 s under TCG, 173 s in the sanitizer build)
DOCTOR_S=${OQB_TWO_VM_DOCTOR_S:-150}  # oqb doctor's four checks before the run, over ssh under TCG
LIMIT=${OQB_TWO_VM_TIMEOUT:-$((RUN_S + DOCTOR_S + 70))}   # boots and sshd (~30 s), doctor, the run, and VM 2 hearing of its end

vm_preflight two-vm-driver sshd:openssh-server ssh:openssh-client ssh-keygen:openssh-client \
	jq:jq busybox:busybox-static timeout:coreutils || finish
PATH=$PATH:/usr/sbin
[ -x /usr/sbin/sshd ] || { vm_unavailable two-vm-driver "/usr/sbin/sshd not found; install openssh-server (make deps)"; finish; }
if [ ! -x "$OQB_BIN/oqb" ] || [ ! -x "$OQB_BIN/oqb-server" ] || [ ! -x "$OQB_BIN/oqb-client" ]; then
	notok two-vm-driver "oqb, oqb-server or oqb-client is not built in $OQB_BIN (run make)"
	finish
fi
"$OQB_BIN/oqb-server" --list-devices >/dev/null 2>&1
if [ $? -eq 2 ]; then
	vm_unavailable two-vm-driver "oqb-server was built without the verbs transport (install libibverbs-dev and librdmacm-dev, rebuild)"
	finish
fi

# Keys: the driver's client key and one host key per VM, all fresh.  The
# rendezvous directory lives inside the checkout, which both VMs mount
# read-write at its own path (-C), so the test works wherever the checkout
# is (a checkout under the host's /tmp is not visible through the guests'
# read-only view of / -- they mount their own /tmp).
mkdir -p "$ROOT/build" "$T/pair"
S=$(mktemp -d "$ROOT/build/two-vm.XXXXXX") || { notok two-vm-driver/share "cannot create a directory under $ROOT/build"; finish; }
ssh-keygen -q -t ed25519 -N '' -f "$S/id" -C oqb-two-vm-client >/dev/null &&
	ssh-keygen -q -t ed25519 -N '' -f "$S/hostkey1" -C oqb-two-vm-1 >/dev/null &&
	ssh-keygen -q -t ed25519 -N '' -f "$S/hostkey2" -C oqb-two-vm-2 >/dev/null ||
	{ notok two-vm-driver/keys "ssh-keygen failed"; finish; }
for n in 1 2; do
	k=$(cut -d' ' -f1,2 "$S/hostkey$n.pub")
	echo "[198.18.2.$n]:$SSH_PORT $k"
	echo "[rxe-vm$n]:$SSH_PORT $k"
done >"$S/known_hosts"

vm_pids=()
stop_vms() {
	local p
	for p in "${vm_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${vm_pids[@]}"; do wait "$p" 2>/dev/null; done
	# OQB_KEEP_TWO_VM=DIR keeps the share (run.json, every process's log) for a post-mortem
	[ -n "${OQB_KEEP_TWO_VM:-}" ] && cp -r "$S" "$OQB_KEEP_TWO_VM" 2>/dev/null
	rm -rf "$S"
	cleanup_
}
trap stop_vms EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

t0=$SECONDS
# vm_pids[0] is VM 1, vm_pids[1] VM 2.
"$VM_RUNNER" -P "$T/pair:1" -C "$ROOT" -t "$LIMIT" -e OQB_TWO_VM_RUN_S="$RUN_S" -e OQB_TWO_VM_DOCTOR_S="$DOCTOR_S" -- \
	bash "$ROOT/tests/verbs/two-vm-driver.sh" "$S" "$SSH_PORT" >"$T/out1" 2>"$T/err1" &
vm_pids+=($!)
"$VM_RUNNER" -P "$T/pair:2" -C "$ROOT" -t "$LIMIT" -e OQB_TWO_VM_RUN_S="$RUN_S" -e OQB_TWO_VM_DOCTOR_S="$DOCTOR_S" -- \
	bash "$ROOT/tests/verbs/two-vm-server.sh" "$S" "$SSH_PORT" >"$T/out2" 2>"$T/err2" &
vm_pids+=($!)
# VM 2 leaves when VM 1 says so; if VM 1 died without saying it, VM 2
# gets 30 s more and is then stopped (by its runner's PID).
wait "${vm_pids[0]}"
rc1=$?
for _ in $(seq 1 300); do
	kill -0 "${vm_pids[1]}" 2>/dev/null || break
	sleep 0.1
done
kill -TERM "${vm_pids[1]}" 2>/dev/null
wait "${vm_pids[1]}"
rcs=("$rc1" $?)
vm_pids=()
echo "# two-VM driver test (both boots, sshd, oqb run): $((SECONDS - t0)) s" >&2

# 125 with no result line: the runner or the VM failed before the guest ran.
nostart=
for n in 1 2; do
	if [ "${rcs[n - 1]}" = 125 ] && ! grep -Eq '^(not )?ok ' "$T/out$n"; then nostart=1; fi
done
if [ -n "$nostart" ]; then
	cat "$T/err1" "$T/err2" >&2
	vm_unavailable two-vm-driver "a VM did not start (rxe-vm exit ${rcs[*]}; console tail above)"
	finish
fi
for n in 1 2; do
	if ! vm_relay "$T/out$n"; then
		notok two-vm-driver/vm$n "the guest printed no result (rxe-vm exit ${rcs[n - 1]})"
		cat "$T/err$n" >&2
	elif grep -q '^not ok' "$T/out$n" || [ "${rcs[n - 1]}" != 0 ]; then cat "$T/err$n" >&2
	else grep '^# ' "$T/err$n" >&2
	fi
done
[ "${rcs[*]}" = "0 0" ] && ok two-vm-driver/exit-status ||
	notok two-vm-driver/exit-status "rxe-vm exit statuses ${rcs[*]} (124: the ${LIMIT} s limit)"

# The numbers, for the log: TCG latencies are only meaningful as ratios.
if [ -f "$S/run/run.json" ]; then
	jq -r '.points[] | "# \(.system): offered \(.offered_ops) ops/s, achieved \(.achieved_ops | floor), n \(.lat_ns.all.n), nilext p50 \(.lat_ns.nilext.p50 / 1000 | floor) us p99 \(.lat_ns.nilext.p99 / 1000 | floor) us, non-nilext p50 \(.lat_ns.non_nilext.p50 / 1000 | floor) us"' \
		"$S/run/run.json" >&2 2>/dev/null
fi
finish
