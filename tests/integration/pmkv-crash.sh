#!/usr/bin/env bash
# pmkv across a server SIGKILL: a server on the pmkv backend is killed with
# -9 under a put load; a new server reopens the same pool files (no manual
# step), finds them unclean but intact, and serves; bin/oqb-pmkv check
# agrees offline.  Also: a second server on a pool in use is refused with a
# message naming the file.
source "$(dirname "$0")/../lib.sh"

SRV=(--system rawrpc --backend pmkv --pmem-path "$T/pool" --pool-mb 4 --workers 2 --run-dir "$T")
WL='{"kind":"kv","put_ratio":0.9,"key_size":16,"value_size":91,"keys":300}'

# start_server NAME: starts oqb-server, waits for its endpoint (EP, SRV_PID).
start_server() { launch_server "$1" 200 "$OQB_BIN/oqb-server" "${SRV[@]}"; }

# 1. load, then kill -9 while puts are in flight
if ! start_server first; then
	notok "pmkv: first server start"; finish
fi
"$OQB_BIN/oqb-client" --system rawrpc --server "$EP" --threads 2 --arrival closed --outstanding 4 \
	--duration-s 3 --warmup-s 0 --drain-s 0.5 --workload "$WL" \
	--out "$T/load.json" >/dev/null 2>"$T/load.err" &
CLI_PID=$!
track "$CLI_PID"
sleep 1.0
kill -KILL "$SRV_PID"
wait "$SRV_PID" 2>/dev/null
wait "$CLI_PID" 2>/dev/null
[ -f "$T/pool/pmkv.w0" ] && [ -f "$T/pool/pmkv.w1" ] && ok "pmkv: one pool file per worker" \
	|| notok "pmkv: pool files missing" "$(ls "$T")"

# 2. a new server reopens the pools as they are
if ! start_server second; then
	notok "pmkv: restart after kill -9" "$(cat "$T/second.srv.err")"; finish
fi
ok "pmkv: restart after kill -9"
# a second server on the same pools is refused, naming the file
if "$OQB_BIN/oqb-server" "${SRV[@]}" >"$T/third.out" 2>"$T/third.err"; then
	notok "pmkv: second server on a pool in use was not refused"
else
	grep -q "pmkv.w0.*in use" "$T/third.err" && ok "pmkv: pool in use is refused" \
		|| notok "pmkv: refusal message" "$(cat "$T/third.err")"
fi
"$OQB_BIN/oqb-client" --system rawrpc --server "$EP" --threads 1 --arrival closed --duration-s 0.3 \
	--warmup-s 0 --workload "$WL" --out "$T/after.json" >/dev/null 2>"$T/after.err"
rc=$?
kill -TERM "$SRV_PID"
wait "$SRV_PID"
[ $rc -eq 0 ] && ok "pmkv: serves after recovery" || notok "pmkv: client after recovery" "$(cat "$T/after.err")"
jcheck "pmkv: recovery found unclean, intact pools" <(sed -n '/^{/,$p' "$T/second.srv.out") '
	.backend == "pmkv" and (.per_worker | length) == 2 and
	all(.per_worker[].backend; .was_clean == false and .created == false and .opens == 2 and
	    .dropped_at_open == 0 and .keys > 0 and .keys <= 300 and .persist_errors == 0 and
	    (.used_bytes + .free_bytes) == .heap_bytes)'

# 3. offline check after the orderly stop
for w in 0 1; do
	if "$OQB_BIN/oqb-pmkv" check "$T/pool/pmkv.w$w" >"$T/check$w.json" 2>"$T/check$w.err"; then
		jcheck "pmkv: offline check of worker $w" "$T/check$w.json" \
			'.was_clean == true and .dropped_at_open == 0 and .keys > 0 and .opens == 3'
	else
		notok "pmkv: offline check of worker $w" "$(cat "$T/check$w.err")"
	fi
done
finish
