#!/usr/bin/env bash
# run-crash.sh - the crash test on the verbs path (make test; the full
# counts with make test-faults-verbs): boots one Soft-RoCE VM
# (tests/vm/rxe-vm) and runs tests/verbs/guest-crash.sh in it, which kills
# a durable verbs server under load (oq and deferred, delegation off and
# on), checks every committed put after every restart, and runs the
# negative control (recovery skipped must lose commits).  Its "ok" /
# "not ok" lines are relayed, its figures (crashes, commits, key checks,
# losses, seconds) printed.  Without a usable VM: "skip" ("not ok" under
# CI=true), never "ok" without having run.
#
# make test runs a few crashes per combination (CRASH_VERBS_N, default 2);
# make test-faults-verbs sets CRASH_VERBS_N=200 CRASH_VERBS_ROCKSDB=200
# CRASH_VERBS_NEG=20, a VM limit to match (OQB_CRASH_VM_TIMEOUT) and
# CRASH_VERBS_OUT for the reports.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
. tests/vm/vm-test-lib.sh
: "${OQB_BIN:?run through tests/run-tests.sh (make test)}"

# Bad configs are refused on the host, before any VM: exit 2 and a message
# naming the key and the fix.
bad() {   # bad NAME JSON PATTERN
	echo "$2" >"$T/bad.json"
	"$OQB_BIN/oqb-crashtest" "$T/bad.json" --out "$T/bad-out.json" >/dev/null 2>"$T/bad.err"
	local rc=$?
	if [ $rc -eq 2 ] && grep -Eq -e "$3" "$T/bad.err"; then
		ok "verbs-crash config: $1"
	else
		notok "verbs-crash config: $1 (exit $rc)" "$(cat "$T/bad.err")"
	fi
}
bad "transport verbs without an address names verbs.addr" '{"transport": "verbs"}' \
	'transport "verbs" needs verbs.addr'
bad "delegation on shm is refused" '{"delegation": true}' 'delegation is for transport "verbs"'
bad "an unknown system is named with the choices" '{"system": "rawrpc", "transport": "verbs"}' \
	'system: "rawrpc" is not one of: oq, deferred'
bad "an unknown verbs key gets a suggestion" '{"transport": "verbs", "verbs": {"adr": "1.2.3.4"}}' \
	'verbs.adr: unknown key; did you mean "addr"'
bad "a bad recv_mode is named" '{"transport": "verbs", "verbs": {"addr": "1.2.3.4", "recv_mode": "mp"}}' \
	'recv_mode: "mp" is not one of: srq, slot_ring'
bad "stall_ms with min > max is refused" '{"stall_ms": [9, 2]}' 'stall_ms must be \[min, max\]'

vm_preflight verbs-crash jq:jq || finish
"$OQB_BIN/oqb-server" --list-devices >/dev/null 2>&1
if [ $? -eq 2 ]; then
	vm_unavailable verbs-crash "oqb-server was built without the verbs transport (install libibverbs-dev and librdmacm-dev, rebuild)"
	finish
fi

# The guest keeps its reports in CRASH_VERBS_OUT (a directory in the
# checkout, which the VM shares read-write); make test uses a scratch one,
# to check that each kept report names only files that exist (issue 39).
scratch_out=
if [ -z "${CRASH_VERBS_OUT:-}" ]; then
	scratch_out=$PWD/build/crash-verbs-test.$$
	CRASH_VERBS_OUT=$scratch_out
fi
t0=$SECONDS
lim=${OQB_CRASH_VM_TIMEOUT:-600}
envs=(-e OQB_BIN)
for v in CRASH_VERBS_N CRASH_VERBS_NEG CRASH_VERBS_ROCKSDB CRASH_VERBS_COMBOS CRASH_VERBS_OUT; do
	[ -n "${!v+x}" ] && envs+=(-e "$v=${!v}")
done
"$VM_RUNNER" -t "$lim" "${envs[@]}" -- bash tests/verbs/guest-crash.sh >"$T/guest.out" 2>"$T/guest.err"
rc=$?
grep -E '^  ' "$T/guest.err" >&2   # each crash test's figures and time
echo "  (the VM, boot included: $((SECONDS - t0)) s)" >&2
vm_report verbs-crash $rc "$lim" "$T/guest.out" "$T/guest.err"
if [ "$rc" != 125 ]; then
	bad_refs=
	n_reports=0
	for f in "$CRASH_VERBS_OUT"/*.json; do
		[ -f "$f" ] || continue
		n_reports=$((n_reports + 1))
		l=$(jq -r '.server_log // "null"' "$f")
		[ "$l" = null ] || [ -f "$l" ] || bad_refs+=" $(basename "$f"): $l;"
	done
	if [ "$n_reports" -gt 0 ] && [ -z "$bad_refs" ]; then
		ok "verbs-crash: the $n_reports kept reports name only server logs that exist"
	else
		notok "verbs-crash: kept reports name only server logs that exist" \
			"${bad_refs:-no report kept in $CRASH_VERBS_OUT}"
	fi
fi
[ -n "$scratch_out" ] && rm -rf "$scratch_out"
finish
