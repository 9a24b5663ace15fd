#!/usr/bin/env bash
# guest-ci.sh - the verbs CI config (configs/ci-regression-verbs.json)
# inside the Soft-RoCE VM (tests/verbs/run-guests.sh starts it; make
# test-long: OQB_GUESTS includes ci; by hand on an RDMA host:
# RXE_IP=ADDR OQB_BIN=$PWD/bin bash tests/verbs/guest-ci.sh).
#
#  - `oqb run` of the config as committed (its three systems, 4 workers,
#    2 client processes x 4 threads, cache back end), but for what this VM
#    needs: the device's address (verbs.addr), one load a TCG guest can
#    carry (a verbs request here is ~100x slower than on a NIC; each point
#    costs about a minute here under load, so one load, not three), idle
#    threads that nap, generous timeouts: status ok, its 3 points over
#    verbs, each with requests answered (the canary each point has or
#    lacks is printed, not judged: guest-suite.sh tests oqb-vfloor);
#  - `oqb ab` A/A of the same config, 2 rounds of one system at one load:
#    a verdict (0 same or 3 inconclusive; 4 when the guest is too noisy),
#    never a failed run or bad input; the noise pre-check ran on the
#    tested host (ab.json) and both sides' builds were checked there.
# Nothing here judges a latency.
source "$(dirname "$0")/../lib.sh"
: "${RXE_IP:?set RXE_IP to the address of the RDMA device (run through tests/vm/rxe-vm)}"
cd "${OQB_ROOT:-$(dirname "$0")/../..}" || exit 1
B=$OQB_BIN
CFG=configs/ci-regression-verbs.json
PORT=${CI_VERBS_PORT:-7950}
VM_SET=(--set "verbs.addr=\"$RXE_IP\"" --set 'arrival.loads_ops=[400]' --set 'idle={"nap_us": 100}'
	--set timeouts.drain_s=20 --set timeouts.grace_s=60 --set timeouts.hello_s=90 --set rerun_disturbed=0)

t0=$SECONDS
timeout -k 5 600 "$B/oqb" run "$CFG" "${VM_SET[@]}" --set "verbs.port=$PORT" --out "$T/run" --quiet >"$T/run.out" 2>&1
rc=$?
echo "  ci-regression-verbs: oqb run exit $rc in $((SECONDS - t0)) s" >&2
if [ $rc -eq 0 ]; then ok "ci-regression-verbs over verbs: oqb run"
else notok "ci-regression-verbs over verbs: oqb run" "exit $rc: $(tail -n 6 "$T/run.out")"; fi
jcheck "ci-regression-verbs over verbs: 3 points, status ok, transport verbs, requests answered" "$T/run/run.json" \
	'.status == "ok" and .transport.name == "verbs" and (.points | length) == 3 and
	 ([.points[].system] | sort) == ["deferred", "oq", "rawrpc"] and all(.points[]; .lat_ns.all.n > 0)'
jq -r '.points[] | "  \(.system): canary \(.canary_ns // "none") ns \(.canary_note // "")"' "$T/run/run.json" >&2 2>/dev/null
grep -m1 "no canary beside" "$T/run.out" >&2

t0=$SECONDS
timeout -k 5 900 "$B/oqb" ab "$CFG" --base "$B" --new "$B" --trials 2 --max-trials 2 --noise-retries 1 --noise-wait-s 2 \
	"${VM_SET[@]}" --set "verbs.port=$((PORT + 1))" --set 'systems=["oq"]' --set 'arrival.loads_ops=[400]' \
	--out "$T/ab" --quiet >"$T/ab.out" 2>&1
rc=$?
echo "  ci-regression-verbs: oqb ab exit $rc in $((SECONDS - t0)) s" >&2
if [ $rc -eq 0 ] || [ $rc -eq 3 ] || [ $rc -eq 4 ]; then
	ok "ci-regression-verbs over verbs: oqb ab A/A gives a verdict (exit $rc)"
else
	notok "ci-regression-verbs over verbs: oqb ab A/A gives a verdict" "exit $rc: $(tail -n 6 "$T/ab.out")"
fi
jcheck "ci-regression-verbs over verbs: the gate's canary on the tested host, its status in ab.json" "$T/ab/ab.json" \
	"[.noise.before.hosts[].host] == [\"127.0.0.1\"] and .exit_status == $rc"
finish
