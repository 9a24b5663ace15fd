#!/usr/bin/env bash
# figures-lab.sh - every figure config's lab form: the config with
# configs/lab/testbed.json (the paper's testbed: verbs, 8 client hosts x 24
# threads with delegation, slot_ring, a DAX directory) and its figure's
# overlay (configs/lab/fig7-8.json ... fig11.json: workers, knee search,
# 10 s points) must pass `oqb run --dry-run`, and the plan must say so:
# the launcher, 8 x 24 clients, a server command line on the server host
# with --transport verbs and the figure's workers, and for a knee search
# the one documented start (500000 ops/s).  A figure config without an
# overlay fails (a new figure needs its lab form).  The shipped
# fig7-8-cluster12-verbs.json must plan exactly what cluster 12's lab
# form plans, so the two cannot drift.  Then --set's paths: a leaf inside
# loads_ops' search object, an array element, and the refused forms, each
# naming the path and the fix, and oqb doctor's overlays.  Nothing runs:
# the hosts are placeholders (RFC 2606 names, an RFC 5737 address).
. "$(dirname "$0")/../lib.sh"

lab=$OQB_ROOT/configs/lab
n=0
for cfg in "$OQB_ROOT"/configs/fig*.json; do
	name=$(basename "$cfg" .json)
	[ "$(jq -r .transport "$cfg")" = verbs ] && continue   # checked against its shm form below
	case $name in
	fig7-8-*) overlay=fig7-8 workers=16 ;;
	fig9-10-*) overlay=fig9-10 workers=18 ;;
	fig6-*) overlay=fig6 workers=18 ;;
	fig11-*) overlay=fig11 workers=18 ;;
	*) notok "$name: lab overlay" "no configs/lab/ overlay for it: add one and a case here"; continue ;;
	esac
	n=$((n + 1))
	if ! "$OQB_BIN/oqb" run "$cfg" --set-file "$lab/testbed.json" --set-file "$lab/$overlay.json" \
		--dry-run >"$T/$name.dry" 2>&1; then
		notok "$name: lab dry run" "$(tail -3 "$T/$name.dry")"
		continue
	fi
	good=1
	head -1 "$T/$name.dry" | grep -q 'launcher ssh, 8 client process(es) x 24 thread(s)' || good=0
	grep -q "server 0 on server.lab.example: .*oqb-server .*--transport verbs .*--workers $workers " "$T/$name.dry" || good=0
	grep -q 'client 7 on client8.lab.example: .*--threads 24 .*--delegation' "$T/$name.dry" || good=0
	grep -q -- '--recv-mode slot_ring' "$T/$name.dry" || good=0
	if [ "$(jq -r '.arrival.loads_ops.auto? // false' "$cfg" 2>/dev/null)" = true ]; then
		grep -q 'knee search .*probes of 1 s after 1 s of warm-up.*ramp from 500000 ops/s' "$T/$name.dry" || good=0
	fi
	if jq -e '(.durable // false | if type == "array" then length > 0 else . end) or .server.backend.kind == "pmkv"' \
		"$cfg" >/dev/null; then
		grep -q -- '--pmem-path /mnt/pmem0/oqb' "$T/$name.dry" || good=0
	fi
	if [ $good = 1 ]; then
		ok "$name: lab dry run"
	else
		notok "$name: lab plan" "$(head -1 "$T/$name.dry"; grep -m3 'knee search\|server 0 on\|client 7 on' "$T/$name.dry" | cut -c1-300)"
	fi
done
[ "$n" -ge 15 ] && ok "figure configs with a lab form: $n" || notok "figure configs with a lab form" "only $n found"

# The shipped lab config is cluster 12's lab form, process for process.
plan() { grep -v '^overrides:' "$1" | sed -e 's/ControlPath=[^ ]*/ControlPath=X/g' -e 's/fig7-8-cluster12-verbs/NAME/g' -e 's/fig7-8-cluster12/NAME/g'; }
if "$OQB_BIN/oqb" run "$OQB_ROOT/configs/fig7-8-cluster12-verbs.json" --dry-run >"$T/verbs.dry" 2>&1 &&
	[ -s "$T/fig7-8-cluster12.dry" ] && diff <(plan "$T/verbs.dry") <(plan "$T/fig7-8-cluster12.dry") >"$T/plan.diff"; then
	ok "fig7-8-cluster12-verbs.json plans what cluster 12 + configs/lab/ plans"
else
	notok "fig7-8-cluster12-verbs.json plans what cluster 12 + configs/lab/ plans" "$(head -6 "$T/plan.diff" 2>/dev/null | cut -c1-300; tail -2 "$T/verbs.dry")"
fi

# --set reaches any leaf: inside the knee search's object, an array element.
c=$OQB_ROOT/configs/fig7-8-cluster19.json
if "$OQB_BIN/oqb" run "$c" --set-file "$lab/testbed.json" --set arrival.loads_ops.search.start_ops=123000 \
	--set 'hosts.clients[1]=cnode2' --dry-run >"$T/set.dry" 2>&1 &&
	grep -q 'ramp from 123000 ops/s' "$T/set.dry" && grep -q 'client 1 on cnode2:' "$T/set.dry" &&
	grep -q '"arrival.loads_ops.search.start_ops=123000"' "$T/set.dry"; then
	ok "--set arrival.loads_ops.search.start_ops and hosts.clients[1]"
else
	notok "--set arrival.loads_ops.search.start_ops and hosts.clients[1]" "$(head -3 "$T/set.dry"; grep -m2 'knee search\|client 1 on' "$T/set.dry" | cut -c1-200)"
fi
# Refused paths name the path and the fix; the config is never half-changed.
refused() {   # NAME EXPECTED-REGEX ARGS...
	local name=$1 want=$2
	shift 2
	if "$OQB_BIN/oqb" run "$c" "$@" --dry-run >"$T/r.out" 2>&1; then
		notok "$name: refused" "it passed"
	elif grep -q -- "$want" "$T/r.out"; then
		ok "$name: refused naming the fix"
	else
		notok "$name: refused naming the fix" "$(head -2 "$T/r.out")"
	fi
}
refused "index past the end" '"systems" has 3 elements, so there is no \[7\]; to make it longer give the whole array' --set 'systems[7]=oq'
refused "index on a number" '"clients.threads" is a number in the config, not an array' --set 'clients.threads[0]=2'
refused "key below an array" '"arrival.loads_ops" is an array in the config, not an object, so it has no key "search"; give "arrival.loads_ops" whole' \
	--set 'arrival.loads_ops=[1000]' --set arrival.loads_ops.search.start_ops=5
refused "misspelt key below loads_ops" 'arrival.loads_ops.serch: unknown key; did you mean "search"' --set arrival.loads_ops.serch.start_ops=5
refused "malformed path" '"a..b" is not a key path' --set a..b=1
printf '{"about": "x", "set": {"server": {"wokers": 4}}}\n' >"$T/typo.json"
refused "overlay with a misspelt key" "--set-file $T/typo.json: unknown key \"server.wokers\"; did you mean \"server.workers\"" --set-file "$T/typo.json"
printf '{"server": {"workers": 4}}\n' >"$T/bare.json"
refused "overlay without about/set" 'an overlay has "about" (text) and "set"' --set-file "$T/bare.json"
# oqb doctor takes the same overlays: a typo fails naming the file, before any host is asked.
out=$("$OQB_BIN/oqb" doctor "$OQB_ROOT/configs/tiny.json" --set-file "$T/typo.json" 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q -- "--set-file $T/typo.json: unknown key \"server.wokers\"" <<<"$out"; then
	ok "oqb doctor --set-file: a typo names the file and the key"
else notok "oqb doctor --set-file: a typo names the file and the key" "exit $rc: $out"; fi
out=$("$OQB_BIN/oqb" run "$c" --set-file "$T/none.json" --dry-run 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q -- "--set-file: $T/none.json: cannot open" <<<"$out"; then ok "a missing overlay is named"
else notok "a missing overlay is named" "exit $rc: $out"; fi
finish
