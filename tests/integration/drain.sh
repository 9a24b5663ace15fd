#!/usr/bin/env bash
# drain.sh - timeouts.drain_s: an overloaded point ends with a queue, and
# the clients wait drain_s for the answers still due before they count the
# rest unanswered.  The server is slowed to 2 ms a request (a test-only
# fault) and offered 2,000 ops/s, four times what it can do: a short
# drain leaves requests unanswered and warns in the point's checks; a drain
# long enough for the queue answers every one.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}

jq '.name = "drain" | .systems = ["rawrpc"] | .clients = {processes: 1, threads: 1}
	| .arrival.loads_ops = [2000] | .warmup_s = 0.1 | .duration_s = 0.4 | .rerun_disturbed = 0' "$ROOT/configs/tiny.json" >"$T/base.json"

# drain_s D: runs the point, prints "rc unanswered sent"
drain_run() {
	jq --argjson d "$1" '.timeouts = {drain_s: $d, grace_s: ($d + 20)}' "$T/base.json" >"$T/d$1.json"
	OQB_FAULT=server-delay-ns:2000000 "$OQB_BIN/oqb" run "$T/d$1.json" --out "$T/out$1" >"$T/d$1.out" 2>&1
	echo "$? $(jq -r '.points[0] | "\(.unanswered) \(.sent)"' "$T/out$1/run.json" 2>/dev/null)"
}

read -r rc un sent <<<"$(drain_run 0.1)"
# a failed check is not a failed run: the exit status stays 0
if [ "$rc" = 0 ] && [ "${un:-0}" -gt 100 ] &&
	jq -e '[.points[0].checks[] | select(.name == "unanswered" and .status == "warn" and (.detail | test("drain_s")))] | length == 1' \
		"$T/out0.1/run.json" >/dev/null; then
	ok "drain_short_leaves_unanswered ($un of $sent)"
else
	notok drain_short_leaves_unanswered "rc=$rc unanswered=$un sent=$sent: $(tail -5 "$T/d0.1.out")"
fi

read -r rc un sent <<<"$(drain_run 60)"
if [ "$rc" = 0 ] && [ "$un" = 0 ] && [ "${sent:-0}" -gt 500 ]; then
	ok "drain_long_answers_all ($sent sent)"
else
	notok drain_long_answers_all "rc=$rc unanswered=$un sent=$sent: $(tail -5 "$T/d8.out")"
fi
finish
