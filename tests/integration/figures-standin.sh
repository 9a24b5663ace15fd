#!/usr/bin/env bash
# figures-standin.sh - a claim about a mechanism the run did not use is a
# stand-in (docs/figures.md, "Stand-ins"): the MP SRQ claims on a Fig 6
# run that swept verbs.recv_mode srq vs slot_ring are shown as "stand-in:
# trend only", are never counted as measured or holding (the summary and
# claims.json count them apart), and every measured row says which
# mechanism it ran; the same sweep with mp is the paper's mechanism and is
# counted.  A claim with an XRC mechanism (a claims file of the test's
# own) is a stand-in on shm and on verbs without XRC, and counted on
# verbs with XRC.  Fixed result files, nothing runs.
. "$(dirname "$0")/../lib.sh"

# fig6 RECV_MODE_ON > run.json: oq over verbs, a recv_mode sweep srq vs
# RECV_MODE_ON at 64 and 1024 B, volatile (so the two volatile MP claims,
# Fig 6(a) and 6(b), are measured); the "on" mode is 1.4x faster.
fig6() {
	jq -n --arg on "$1" '{ schema: "oqbench.run/1", name: "fig6-echo", created_utc: "2026-01-01T00:00:00Z",
	  transport: { name: "verbs" }, hosts: { driver: "fixture-host" }, environment: { cpu_model: "Fixture CPU", cpus_online: 2 },
	  config: { name: "fig6-echo", transport: "verbs", workload: { kind: "echo" }, verbs: { addr: "192.0.2.10" },
	            clients: { processes: 8, threads: 24, delegation: true },
	            sweep: { key: "verbs.recv_mode", values: ["srq", $on] } },
	  points: [ ["srq", $on] | to_entries[] | .key as $w | .value as $v | [64, 1024] | .[] as $sz | [1, 2, 4] | .[] as $o |
	    { system: "oq", outstanding: $o, achieved_ops: (1000000 * $o * (if $w == 1 then 1.4 else 1 end)), durable: false,
	      flagged: false, sweep: { key: "verbs.recv_mode", value: $v, index: $w }, workload: { kind: "echo", value_size: $sz },
	      lat_ns: { all: { n: 1000, p50: 5000, p99: 9000 } } } ] }'
}

mkdir -p "$T/ring/echo" "$T/mp/echo"
fig6 slot_ring >"$T/ring/echo/run.json"
fig6 mp >"$T/mp/echo/run.json"
"$OQB_BIN/oqb" figures --runs "$T/ring" --out "$T/ring/rep" >"$T/ring.out" 2>&1 || notok "report on slot_ring" "$(tail -3 "$T/ring.out")"
"$OQB_BIN/oqb" figures --runs "$T/mp" --out "$T/mp/rep" >"$T/mp.out" 2>&1 || notok "report on mp" "$(tail -3 "$T/mp.out")"

row=$(grep 'MP SRQ raises 64 B throughput' "$T/ring/rep/index.html")
if grep -q '<tr class="standin">' <<<"$row" &&
	grep -q 'stand-in: trend only (ran verbs.recv_mode &quot;slot_ring&quot;, not the paper&#39;s multi-packet SRQ)\|stand-in: trend only (ran verbs.recv_mode "slot_ring", not the paper' <<<"$row" &&
	grep -q '+40.0 %' <<<"$row" && grep -q 'ran: verbs.recv_mode "slot_ring" vs "srq"\|ran: verbs.recv_mode &quot;slot_ring&quot; vs &quot;srq&quot;' <<<"$row" &&
	! grep -q '<span class=yes>' <<<"$row"; then
	ok "MP claim on slot_ring: stand-in, trend only, the mechanism named"
else notok "MP claim on slot_ring: stand-in, trend only, the mechanism named" "$row"; fi
jcheck "claims.json: the MP claims on slot_ring are stand-ins, not counted" "$T/ring/rep/claims.json" '
  ([.claims[] | select(.id | test("-mp$")) | select(.measured)] | length) as $mp |
  $mp == 2 and
  ([.claims[] | select(.id | test("-mp$")) | select(.stand_in != null and (.stand_in | startswith("stand-in: trend only")))] | length) == $mp and
  .summary.stand_in == 2 and .summary.measured == ([.claims[] | select(.measured and .stand_in == null)] | length) and
  .summary.hold_at_peak <= .summary.measured'
if grep -q '2 measured on a stand-in for the paper' "$T/ring/rep/index.html"; then ok "summary counts the stand-ins apart"
else notok "summary counts the stand-ins apart" "$(grep -o '<p id=claims-summary>[^<]*' "$T/ring/rep/index.html")"; fi

jcheck "claims.json: the MP claims on mp are the paper's mechanism and counted" "$T/mp/rep/claims.json" '
  ([.claims[] | select(.id | test("-mp$")) | select(.measured and .stand_in == null and .at_peak.holds == "yes")] | length) == 2 and
  (.summary.stand_in == 0) and .summary.measured == 2'
row=$(grep 'MP SRQ raises 64 B throughput' "$T/mp/rep/index.html")
if grep -q '<tr class="holds">' <<<"$row" && grep -q '<span class=yes>yes</span>' <<<"$row"; then ok "MP claim on mp: holds"
else notok "MP claim on mp: holds" "$row"; fi

# XRC: a claims file of the test's own, on cluster 12's fixture (shm), then on verbs with and without XRC.
jq '{claims: [.claims[] | select(.id == "c12-p50-rawrpc") | .id = "c12-xrc" |
  .mechanism = {key: "verbs.xrc", value: true, name: "XRC"}]}' "$OQB_ROOT/docs/paper-claims.json" >"$T/xrc-claims.json"
mkdir -p "$T/shm/c12" "$T/rc/c12" "$T/xrc/c12"
cp "$OQB_ROOT/tests/figures/holds/c12/run.json" "$T/shm/c12/"
jq '.transport.name = "verbs" | .config.transport = "verbs" | .config.verbs = {addr: "192.0.2.10"}' \
	"$OQB_ROOT/tests/figures/holds/c12/run.json" >"$T/rc/c12/run.json"
jq '.config.verbs.xrc = true' "$T/rc/c12/run.json" >"$T/xrc/c12/run.json"
for d in shm rc xrc; do
	"$OQB_BIN/oqb" figures --runs "$T/$d" --out "$T/$d/rep" --claims "$T/xrc-claims.json" >/dev/null 2>&1
done
jcheck "XRC claim on shm: stand-in" "$T/shm/rep/claims.json" '.claims[0].stand_in == "stand-in: trend only (ran verbs.xrc absent on shm, not the paper'"'"'s XRC)" and .summary.measured == 0 and (.claims[0].mechanism_ran | startswith("shm"))'
jcheck "XRC claim on plain RC: stand-in" "$T/rc/rep/claims.json" '(.claims[0].stand_in | startswith("stand-in: trend only (ran verbs.xrc at its default")) and .summary.measured == 0 and .claims[0].mechanism_ran == "verbs, recv_mode srq, XRC off, delegation off"'
jcheck "XRC claim on XRC: counted" "$T/xrc/rep/claims.json" '.claims[0].stand_in == null and .summary.measured == 1 and .summary.hold_at_peak == 1 and .claims[0].mechanism_ran == "verbs, recv_mode srq, XRC on, delegation off"'
finish
