#!/usr/bin/env bash
# Crash injection on the durable oq path (shm + pmkv): 50 SIGKILLs of the
# server under a write-heavy load, every committed put checked after every
# crash.  A negative control runs the same test with recovery switched off
# (a test-only fault) and must find lost commits, so this test can fail.
source "$(dirname "$0")/../lib.sh"
export OQB_BIN
# the committed config, with its rings and pools under this test's directory
cfg=$T/crash.cfg.json
jq --arg d "$T/pm" '. + {dir: $d}' "$OQB_ROOT/configs/crashtest-quick.json" >"$cfg"

if "$OQB_BIN/oqb-crashtest" "$cfg" --out "$T/crash.json" >"$T/out" 2>"$T/err"; then
	ok "crashtest: exit 0"
else
	notok "crashtest: exit status" "$(tail -5 "$T/err")"
fi
# The commits made between restart and kill depend on the host's speed
# (over 1,000 on a quiet one; fewer under ASan beside a fresh-clone CI run,
# 2026-11-29): the bound asks only that the crashes hit writes, about 10
# per crash; the negative control below shows the check has teeth.
jcheck "crashtest: 50 crashes survived, 0 commits lost" "$T/crash.json" \
	'.crashes_survived == 50 and .crashes_requested == 50 and .commits_lost == 0 and
	 .keys_with_loss == 0 and .commits >= 500 and .keys_checked > 0 and .crashes_after_stall > 0' ||
	jq -c '{crashes_survived, commits, commits_lost, keys_checked, crashes_after_stall}' "$T/crash.json" >&2
tail -1 "$T/err" | sed 's/^/  /'

# negative control: the checker must see losses when recovery is skipped
jq --arg d "$T/pm-neg" '. + {dir: $d}' "$cfg" >"$T/neg.cfg.json"
OQB_FAULT=skip-recovery "$OQB_BIN/oqb-crashtest" "$T/neg.cfg.json" --crashes 8 --out "$T/neg.json" >/dev/null 2>"$T/neg.err"
rc=$?
if [ $rc -ne 0 ] && jq -e '.commits_lost > 0' "$T/neg.json" >/dev/null 2>&1; then
	ok "crashtest: detects lost commits when recovery is skipped ($(jq .commits_lost "$T/neg.json") lost)"
else
	notok "crashtest: negative control found no loss (exit $rc)" "$(tail -3 "$T/neg.err")"
fi

# Writers stalled across restarts (issue 39.1): every 64th put sleeps
# 2.8 s between its claim and its write (OQB_FAULT=claim-stall-ms), the
# tester restarts the server without waiting for it (pause_wait_ms 5), and
# the server sits stopped for 1-1.5 s before half of the kills, so a stale
# writer wakes while the next server's ring holds committed, unexecuted
# puts.  Before the fix (shm/shm_recover.c: shm_fresh_ring_file) its bytes landed on
# them: 2 lost in 30 crashes, 3 in 50.  Now nothing may be lost, and the
# stall must have spanned a restart, or the case proved nothing.
n=${CRASH_STALL_N:-20}
jq --arg d "$T/pm-stall" '. + {dir: $d}' "$OQB_ROOT/configs/crashtest-stalled-writers.json" >"$T/stall.cfg.json"
OQB_FAULT=claim-stall-ms:2800 "$OQB_BIN/oqb-crashtest" "$T/stall.cfg.json" --crashes "$n" --out "$T/stall.json" \
	>/dev/null 2>"$T/stall.err"
rc=$?
spanned=$(sed -n 's/^OQB_FAULT fired: .*claim-stall-ms=\([0-9]*\).*/\1/p' "$T/stall.err")
jcheck "crashtest: $n crashes with writers stalled across the restarts, 0 commits lost (exit $rc)" "$T/stall.json" \
	".crashes_survived == $n and .commits_lost == 0 and .keys_with_loss == 0 and .commits > 0 and
	 .restarts_with_writers_busy > 0"
jq -r '"  (\(.crashes_survived) crashes, \(.commits) commits, \(.keys_checked) key checks, \(.commits_lost) lost, \(.restarts_with_writers_busy) restarts with a writer busy, \(.seconds | floor) s)"' "$T/stall.json" >&2 2>/dev/null
if [ "${spanned:-0}" -gt 0 ]; then
	ok "crashtest: $spanned stalled writes woke after a restart, into the old ring"
else
	notok "crashtest: no stalled write spanned a restart (the case proved nothing)" "$(grep -v '^\[' "$T/stall.err" | tail -4)"
fi

# bad config: unknown key gets a suggestion
echo '{"crashes": 3, "kill_after_mss": [1, 2]}' >"$T/bad.json"
"$OQB_BIN/oqb-crashtest" "$T/bad.json" >/dev/null 2>"$T/bad.err"
if [ $? -eq 2 ] && grep -q 'kill_after_mss' "$T/bad.err" && grep -q 'kill_after_ms' "$T/bad.err"; then
	ok "crashtest: unknown config key named with a suggestion"
else
	notok "crashtest: bad config message" "$(cat "$T/bad.err")"
fi
finish
