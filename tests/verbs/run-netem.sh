#!/usr/bin/env bash
# run-netem.sh - oq on verbs while tc netem loses, delays or reorders the
# RoCEv2 packets between two Soft-RoCE VMs (issue 39, wire faults; make
# test, make test-netem).
#
# Soft-RoCE traffic crosses a netdev only between two machines (docs/
# verbs-vm.md, "Faults on the wire"), so this boots the two VMs of
# tests/vm/rxe-vm -P: VM 2 (tests/verbs/two-vm-server.sh) runs sshd, VM 1
# (tests/verbs/netem-vm1.sh) the driver, the clients and the checks; `oqb
# run configs/netem-two-vm.json` starts the server on VM 2 over ssh.  Per
# case: the history is linearizable, no commit is lost, and rxe
# retransmitted under loss and not without it (netem-vm1.sh says how).
#
# make test runs the reduced form: the baseline and 1 % loss in one boot
# (about 2-3 minutes under TCG).  OQB_NETEM_FULL=1 (make test-netem) runs
# the baseline, netem with nothing to do, 0.1 %, 1 % and 5 % loss,
# reordering and delay, then a client cut off the wire with and without
# the test-only fault commit-on-error; OQB_NETEM_CASES overrides the list.  Afterwards the
# latency against the loss rate is drawn with plot/netem-latency.sh, and
# with OQB_NETEM_OUT=DIR the runs (run.json, netem.json, histories,
# check.json), the data table and netem-latency.png are kept in DIR.
# Without a usable VM: "skip" here, "not ok" under CI=true.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
. tests/vm/vm-test-lib.sh
. tests/verbs/two-vm-lib.sh
ROOT=$PWD
SSH_PORT=2222
if [ "${OQB_NETEM_FULL:-0}" = 1 ]; then
	CASES=${OQB_NETEM_CASES:-base netem0 loss0.1 loss1 loss5 reorder delay}
	FAULT=${OQB_NETEM_FAULT:-1}
else
	CASES=${OQB_NETEM_CASES:-base loss1}
	FAULT=${OQB_NETEM_FAULT:-0}
fi
set -- $CASES
RUN_S=${OQB_NETEM_RUN_S:-180}   # one `oqb run` (two ssh logins, one 4-12 s point) under TCG
LIMIT=${OQB_NETEM_TIMEOUT:-$((120 + $# * RUN_S + FAULT * 240))}

vm_preflight netem sshd:openssh-server ssh:openssh-client ssh-keygen:openssh-client \
	jq:jq busybox:busybox-static timeout:coreutils tc:iproute2 od:coreutils || finish
PATH=$PATH:/usr/sbin
[ -x /usr/sbin/sshd ] || { vm_unavailable netem "/usr/sbin/sshd not found; install openssh-server (make deps)"; finish; }
two_vm_bins netem || finish

trap two_vm_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
two_vm_share netem "$SSH_PORT" || finish

t0=$SECONDS
TWO_VM_ENV=(-e OQB_TWO_VM_NAME=netem -e OQB_TWO_VM_RUN_S="$LIMIT" -e OQB_NETEM_CASES="$CASES"
	-e OQB_NETEM_FAULT="$FAULT" -e OQB_NETEM_RUN_S="$RUN_S")
two_vm_boot "$LIMIT" "$ROOT/tests/verbs/netem-vm1.sh" "$ROOT/tests/verbs/two-vm-server.sh" "$SSH_PORT"
echo "# netem test (both boots, sshd, cases: $CASES$([ "$FAULT" = 1 ] && echo ', cut-off client')): $((SECONDS - t0)) s" >&2
two_vm_results netem "$LIMIT" || finish

# The latency cost, drawn from the runs the guest left in the share.
runs=()
for c in $CASES; do [ -f "$S/runs/$c/run.json" ] && [ -f "$S/runs/$c/netem.json" ] && runs+=("$S/runs/$c"); done
out=${OQB_NETEM_OUT:-$T/netem-out}
mkdir -p "$out"
if [ ${#runs[@]} -eq 0 ]; then
	notok netem/plot "no run left a run.json and a netem.json to draw"
elif ! command -v gnuplot >/dev/null; then
	skip netem/plot "gnuplot not found; install gnuplot (make deps)"
elif plot/netem-latency.sh "$out/netem-latency.png" "${runs[@]}" >"$out/netem-latency.txt" 2>"$T/plot.err" &&
	[ "$(head -c 8 "$out/netem-latency.png" | od -A n -t x1 | tr -d ' ')" = 89504e470d0a1a0a ]; then
	ok netem/plot
	sed 's/^/# plot: /' "$out/netem-latency.txt" >&2
else
	notok netem/plot "plot/netem-latency.sh failed: $(cat "$T/plot.err")"
fi
if [ -n "${OQB_NETEM_OUT:-}" ]; then
	cp -r "$S/runs" "$out/" 2>/dev/null
	[ -d "$S/fault" ] && cp -r "$S/fault" "$out/" 2>/dev/null
	grep '^# netem \|^# cutoff ' "$T/err1" >"$out/summary.txt"
	echo "# kept in $out: runs/, fault/, netem-latency.png, netem-latency.txt, summary.txt" >&2
fi
finish
