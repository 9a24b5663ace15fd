#!/usr/bin/env bash
# make-fixtures.sh - writes the fixed result files of tests/figures/ (run
# from anywhere; the outputs are committed, this script says how they were
# made).  Each run.json holds only what `oqb figures` reads: the config's
# workload, the transport, the environment, the knee, and per point the
# system, offered and achieved load, p50/p99 of all requests, flagged and
# saturated.  Latencies are made up to a known shape:
#   holds/  clusters 12 and 31 where every qualitative claim of
#           `oqb figures --check` holds (oq flat at 4-6 us, deferred and
#           rawrpc growing with load, rawrpc > 2x oq), plus a durable
#           YCSB 50 % put run, a Fig 6 echo run and a Fig 11 sweep;
#   fails/  the same, except that on cluster 31 deferred's median at 80 %
#           of peak is below oq's: the order claim fails there, and only there;
#           and no memcached runs (holds/ has clusters 12 and 31 on memcached
#           too, for the faithfulness figure).
set -eu
cd "$(dirname "$0")"
loads='[10000,30000,50000,70000,80000,90000,100000,110000,125000]'

# lt NAME KIND KEY VALUE DURABLE DEFERRED_AT_80 [BACKEND SVC_NS SCALE OQ_ADD] > run.json
# BACKEND (default cache) is config.server.backend.kind; every point has a
# server.service_ns with median SVC_NS (default 400; rawrpc on memcached
# 4 x, as its sets wait for memcached's answer); deferred's and rawrpc's
# medians are SCALE (default 1) times the shape above, oq's OQ_ADD ns more.
lt() {
	jq -n --arg name "$1" --arg kind "$2" --arg key "$3" --argjson val "$4" --argjson dur "$5" \
	   --argjson d80 "$6" --arg be "${7:-cache}" --argjson svc "${8:-400}" --argjson sc "${9:-1}" \
	   --argjson oqa "${10:-0}" --argjson loads "$loads" '
	def svc($sys):
	  ($svc * (if $sys == "rawrpc" and $be == "memcached" then 4 else 1 end)) as $s |
	  { sample_every: 16, trials: 1, all: { n: 5000, p50: $s, p99: ($s * 4), p50_ci: [($s * 0.98), ($s * 1.02)] },
	    nilext: { n: 4000, p50: ($s * 0.9) }, non_nilext: { n: 1000, p50: ($s * 2) } };
	def pt($sys; $l; $i; $p50):
	  { system: $sys, offered_ops: $l, achieved_ops: (if $i >= 7 then $l * 0.85 else $l * 0.99 end),
	    durable: ($dur and $sys == "oq"), flagged: ($i >= 7), saturated: ($i >= 7),
	    lat_ns: { all: { n: 10000, p50: $p50, p99: ($p50 * 6) } }, server: { service_ns: svc($sys) } };
	{ schema: "oqbench.run/1", name: $name, created_utc: "2026-01-01T00:00:00Z", status: "ok",
	  git_commit: "0123456789abcdef", transport: { name: "shm" },
	  hosts: { driver: "fixture-host" },
	  environment: { cpu_model: "Fixture CPU <&> \"quoted\"", cpus_online: 2 },
	  config: { name: $name, transport: "shm", workload: ({ kind: $kind } + { ($key): $val }),
	            server: { backend: { kind: $be } } },
	  knee: { found_by: "search", ops: 100000, slowest_system: "rawrpc" },
	  points: [ $loads | to_entries[] | .key as $i | .value as $l |
	    pt("oq"; $l; $i; 4000 + 200 * ($i % 3) + $oqa),
	    pt("deferred"; $l; $i; (if $i == 4 and $d80 > 0 then $d80 else (10000 + 3000 * $i) * $sc end)),
	    pt("rawrpc"; $l; $i; (20000 + 9000 * $i) * $sc) ] }'
}

for set in holds fails; do
	mkdir -p "$set/c12" "$set/c31" "$set/put50" "$set/echo" "$set/vsize"
	lt fig7-8-cluster12 twitter cluster 12 false 0 >"$set/c12/run.json"
	lt fig9-10-ycsb-put50-durable ycsb put_ratio 0.5 true 0 >"$set/put50/run.json"
done
lt fig7-8-cluster31 twitter cluster 31 false 0 >holds/c31/run.json
lt fig7-8-cluster31 twitter cluster 31 false 3000 >fails/c31/run.json
# holds/ also has clusters 12 and 31 on memcached (the faithfulness
# figure); fails/ has none, so its faithfulness rows say "not run"
mkdir -p holds/c12mc holds/c31mc
lt fig7-8-cluster12 twitter cluster 12 false 0 memcached 2000 1.5 1000 >holds/c12mc/run.json
lt fig7-8-cluster31 twitter cluster 31 false 0 memcached 1500 1.2 500 >holds/c31mc/run.json

for set in holds fails; do
	jq -n '{ schema: "oqbench.run/1", name: "fig6-echo", created_utc: "2026-01-01T00:00:00Z",
	  transport: { name: "shm" }, hosts: { driver: "fixture-host" }, environment: { cpu_model: "Fixture CPU", cpus_online: 2 },
	  config: { name: "fig6-echo", transport: "shm", workload: { kind: "echo" },
	            clients: { processes: 1, threads: 1 }, sweep: { key: "workload.value_size", values: [64, 1024] } },
	  points: [ [64, 1024] | to_entries[] | .key as $w | .value as $v | [1, 2, 4, 8] | .[] as $o |
	    { system: "oq", outstanding: $o, achieved_ops: (100000 * $o / (1 + $w)), durable: false, flagged: ($o == 8),
	      sweep: { key: "workload.value_size", value: $v, index: $w }, workload: { kind: "echo", value_size: $v },
	      lat_ns: { all: { n: 1000, p50: 5000, p99: 9000 } } } ] }' >"$set/echo/run.json"
	jq -n '{ schema: "oqbench.run/1", name: "fig11-value-size", created_utc: "2026-01-01T00:00:00Z",
	  transport: { name: "shm" }, hosts: { driver: "fixture-host" }, environment: { cpu_model: "Fixture CPU", cpus_online: 2 },
	  config: { name: "fig11-value-size", transport: "shm", workload: { kind: "kv" },
	            sweep: { key: "workload.value_size", values: [100, 800, 3200] } },
	  points: [ [100, 800, 3200] | to_entries[] | .key as $w | .value as $v | ("rawrpc", "oq") as $s |
	    { system: $s, outstanding: 16, achieved_ops: ((if $s == "oq" then 900000 - 150000 * $w else 930000 - 50000 * $w end)),
	      durable: ($s == "oq"), flagged: false, sweep: { key: "workload.value_size", value: $v, index: $w },
	      lat_ns: { all: { n: 1000, p50: 5000, p99: 9000 } } } ] }' >"$set/vsize/run.json"
	printf '# x = %% of requests with T_gap in [0, max gap], y = fraction of traces <= x\n0 0\n5 0.25\n8 0.5\n12 0.75\n40 1\n100 1\n' >"$set/tgap-cdf.dat"
done

# onesided/recorded/run.json: a real `make figures-onesided` run
# (configs/onesided-verbs.json in the Soft-RoCE VM, under TCG on a busy
# 2-core host), trimmed to what `oqb figures` reads; it is rewritten only
# from a new run: ONESIDED_RUN=RESULTS/onesided-STAMP/runs/onesided-verbs/run.json
# tests/figures/make-fixtures.sh.  tests/integration/figures-onesided.sh
# makes its variants from it.
if [ -n "${ONESIDED_RUN:-}" ]; then
	mkdir -p onesided/recorded
	jq '{ schema, name, created_utc, status, git_commit, transport: { name: .transport.name },
	  hosts: { driver: .hosts.driver }, environment: (.environment | { cpu_model, cpus_online }),
	  config: (.config | { name, transport, systems, clients, idle, workload, arrival,
	                       server: { workers: .server.workers, backend: .server.backend } }),
	  points: [ .points[] | { system, outstanding, offered_ops, achieved_ops, flagged, saturated, flagged_by, repeat,
	    lat_ns: (.lat_ns | { all: (.all | { n, p50, p99 }), nilext: (.nilext | { n, p50, p99 }) }),
	    server: { transport: { device: .server.transport.device } },
	    check: (.check | { verdict, ops, keys, keys_ok, keys_violation }) } | with_entries(select(.value != null)) ] }' \
		"$ONESIDED_RUN" >onesided/recorded/run.json
fi
