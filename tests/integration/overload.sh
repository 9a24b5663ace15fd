#!/usr/bin/env bash
# An overloaded machine (issue 39.6): two CPU hogs, one per core of a
# 2-core machine, beside
#   - the durable shm crash test (pmkv; OVERLOAD_CRASHES kill -9s, 20 here,
#     `make test-faults` runs 1,000 on rocksdb): every crash survived, 0
#     committed writes lost, and no check gave up on a stalled server;
#   - a checked `oqb run` (oq and rawrpc, history recorded): it finishes,
#     the self-checks flag the disturbance (interference or another check
#     warns on some point), nothing is unanswered, and every point's
#     history is linearizable.
# Slower is allowed; a hang, a loss or a wrong answer is not.  The hogs
# are this test's own processes, ended by PID.
source "$(dirname "$0")/../lib.sh"
export OQB_BIN

CRASHES=${OVERLOAD_CRASHES:-20}
hogs=()
for _ in 1 2; do
	( while :; do :; done ) &
	hogs+=($!)
	track $!
done
stop_hogs() { kill "${hogs[@]}" 2>/dev/null; wait "${hogs[@]}" 2>/dev/null; }

# --- the crash test -------------------------------------------------------
jq --arg d "$T/pm" --argjson n "$CRASHES" '. + {dir: $d, crashes: $n}' \
	"$OQB_ROOT/configs/crashtest-quick.json" >"$T/crash.cfg.json"
start=$SECONDS
timeout 600 "$OQB_BIN/oqb-crashtest" "$T/crash.cfg.json" --out "$T/crash.json" >/dev/null 2>"$T/crash.err"
rc=$?
echo "# crash test under two hogs: $CRASHES crashes in $((SECONDS - start)) s, exit $rc" >&2
jcheck "overload: $CRASHES crashes under two CPU hogs survived, 0 commits lost" "$T/crash.json" \
	".crashes_survived == $CRASHES and .commits_lost == 0 and .keys_with_loss == 0 and .commits > 0"
if grep -q 'stayed full\|no response\|final check' "$T/crash.err"; then
	notok "overload: no check gave up on the server" "$(grep -m3 'final check\|stayed full' "$T/crash.err")"
else
	ok "overload: no check gave up on the server"
fi

# --- a checked run --------------------------------------------------------
jq '.name = "overload" | .history = true | .check = true | .rerun_disturbed = 0 | .repeat = 2
    | .workload.keys = 50 | .arrival.loads_ops = [2000, 4000]' \
	"$OQB_ROOT/configs/tiny.json" >"$T/run.cfg.json"
start=$SECONDS
timeout 600 "$OQB_BIN/oqb" run "$T/run.cfg.json" --out "$T/run" >/dev/null 2>"$T/run.err"
rc=$?
stop_hogs
echo "# checked run under two hogs: $((SECONDS - start)) s, exit $rc" >&2
if [ $rc -eq 0 ] && [ -f "$T/run/run.json" ]; then
	ok "overload: oqb run finished under two CPU hogs"
else
	notok "overload: oqb run finished under two CPU hogs" "exit $rc: $(tail -3 "$T/run.err")"
fi
jcheck "overload: the self-checks flag the disturbance" "$T/run/run.json" \
	'[.points[].checks[] | select(.status == "warn")] | length > 0'
jcheck "overload: nothing unanswered, no errors" "$T/run/run.json" \
	'all(.points[]; .committed > 0 and .unanswered == 0 and .errors == 0)'
jcheck "overload: every point's history checked linearizable" "$T/run/run.json" \
	'(.points | length) > 0 and all(.points[]; .check.verdict == "ok" and .check.ops > 0)'
jq -r '"# flagged: " + ([.points[].checks[] | select(.status == "warn") | .name] | group_by(.) |
	map("\(.[0]) \(length)") | join(", "))' "$T/run/run.json" >&2 2>/dev/null
finish
