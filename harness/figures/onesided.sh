#!/usr/bin/env bash
# onesided.sh - `make figures-onesided`: configs/onesided-verbs.json (oq,
# seqwrite, write1 and rawrpc on one config, every point's history
# checked) in the Soft-RoCE VM, then `oqb figures` over it.  The last line
# printed is the path of the report's index.html; its "One-sided writes"
# section has the figure, each line labelled with the checker's verdict,
# and the claim row judged from this run (docs/figures.md).
#
# Usage: harness/figures/onesided.sh   (make figures-onesided builds first)
# Environment: OQB_BIN (default bin), ONESIDED_OUT (default
# results/onesided-UTCSTAMP; the run lands in OUT/runs/onesided-verbs,
# the report in OUT/runs/report), ONESIDED_SET (more --set overrides for
# the run), ONESIDED_VM_TIMEOUT (the VM's limit, boot included; 1800 s).
# `make figures` draws the newest results/onesided-*/runs/onesided-verbs
# beside the paper's figures (figures.sh).
#
# Inside the VM (by hand on an RDMA host: RXE_IP=ADDR harness/figures/
# onesided.sh --guest OUT) it runs the config with the device's address
# and no canary (the verbs canary is a second ping-pong per trial, which
# doubles a point's time under TCG and is not what this figure compares).
set -u
cd "$(dirname "$0")/../.." || exit 1
bin=${OQB_BIN:-bin}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
cfg=configs/onesided-verbs.json

if [ ! -x "$bin/oqb" ] || [ ! -x "$bin/oqb-server" ]; then
	echo "figures-onesided: $bin/oqb or oqb-server is missing; run make first" >&2
	exit 1
fi

if [ "${1:-}" = --guest ]; then
	out=${2:?usage: onesided.sh --guest OUT}
	: "${RXE_IP:?figures-onesided: RXE_IP is not set; run through make figures-onesided (the Soft-RoCE VM)}"
	read -r -a extra <<<"${ONESIDED_SET:-}"
	exec "$bin/oqb" run "$cfg" --set "verbs.addr=\"$RXE_IP\"" --set canary=false "${extra[@]}" \
		--out "$out/runs/onesided-verbs"
fi

out=${ONESIDED_OUT:-results/onesided-$(date -u +%Y%m%dT%H%M%SZ)}
case $out in /*) ;; *) out=$PWD/$out ;; esac
mkdir -p "$out/runs" || exit 1
if ! why=$(tests/vm/rxe-vm -c 2>&1); then
	echo "figures-onesided: no Soft-RoCE VM here: ${why#rxe-vm: } (make deps; tests/vm/README.md)" >&2
	exit 1
fi
t0=$SECONDS
tests/vm/rxe-vm -t "${ONESIDED_VM_TIMEOUT:-1800}" -e OQB_BIN="$bin" -e ONESIDED_SET="${ONESIDED_SET:-}" -- \
	bash harness/figures/onesided.sh --guest "$out"
rc=$?
echo "figures-onesided: the VM, boot included, took $((SECONDS - t0)) s (exit $rc)" >&2
if [ ! -f "$out/runs/onesided-verbs/run.json" ]; then
	echo "figures-onesided: the run wrote no run.json (exit $rc); see the output above" >&2
	exit 1
fi
[ $rc = 0 ] || echo "figures-onesided: oqb run exited $rc; drawing the points it has" >&2
"$bin/oqb" figures --runs "$out/runs"
