#!/usr/bin/env bash
# run-onesided-lat.sh - make bench-onesided's benchmark (bench/onesided-lat.sh:
# the nilext commit latency of oq, seqwrite and write1, 5 interleaved runs
# each, with ib_write_lat, ib_atomic_lat and ib_send_lat) in one boot of the Soft-RoCE
# VM, for make test-long (tests/long.list), so CI runs it and its log keeps
# the numbers.  A benchmark, not a timed test: the case is "ok" when every
# measurement was taken and the ratios printed; whether the targets were
# met is printed beside it, never judged here.  Without a usable VM:
# "skip" ("not ok" under CI=true).
# oqb-test-timeout: 1500
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
. tests/vm/vm-test-lib.sh
: "${OQB_BIN:?run through tests/run-tests.sh (make test-long)}"

vm_preflight onesided-lat ib_write_lat:perftest ib_atomic_lat:perftest ib_send_lat:perftest jq:jq || finish
t0=$SECONDS
"$VM_RUNNER" -t "${OQB_ONESIDED_LAT_VM_TIMEOUT:-1400}" -e OQB_BIN -- bash bench/onesided-lat.sh \
	>"$T/lat.out" 2>"$T/lat.err"
rc=$?
sed 's/^/  /' "$T/lat.out" >&2
echo "  (the VM, boot included: $((SECONDS - t0)) s)" >&2
if [ $rc = 125 ]; then
	vm_unavailable onesided-lat "the VM failed to start: $(tail -1 "$T/lat.err")"
elif [ $rc = 0 ] && [ "$(grep -c ' / oq .*(target .*: \(met\|missed\))' "$T/lat.out")" = 2 ]; then
	ok "onesided-lat: every measurement taken: $(grep ' / oq ' "$T/lat.out" | sed 's/  */ /g' | tr '\n' ';')"
else
	notok "onesided-lat: bench/onesided-lat.sh exited $rc" "$(tail -n 15 "$T/lat.out" "$T/lat.err")"
fi
finish
