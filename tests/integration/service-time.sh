#!/usr/bin/env bash
# service-time.sh - the server's per-request service time (bench/server.h,
# "Service time"; run.json's server.service_ns), against its definition:
#   - a null backend that busy-waits 20 us per request (its service_ns)
#     shows no service time below 20 us, and a median near it;
#   - a delay injected outside the backend call (OQB_FAULT server-delay-ns,
#     spent before the clock starts) is in the clients' latency and not in
#     the service time;
#   - only the measured window counts: with every request timed
#     (service_sample 1) the server's count matches the clients' measured
#     requests, though the clients' load phase (5,000 sets before GO) and
#     their warm-up ran through the same server;
#   - three trials merge bin-wise: n is the trials' sum, the median lies
#     between the trials' medians, the classes add up;
#   - the default samples about one request in 16; service_sample 0 times
#     none; a server run by hand (no driver) records over its whole life.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}

jq '.name = "service-time" | .systems = ["oq", "rawrpc"] | .clients = {processes: 1, threads: 1}
	| .server.backend = {kind: "null", service_ns: 20000} | .server.service_sample = 1
	| .workload = {kind: "kv", put_ratio: 0.5, key_size: 16, value_size: 64, keys: 5000, zipf: 0.99}
	| .arrival.loads_ops = [2000] | .warmup_s = 0.2 | .duration_s = 0.5 | .repeat = 3
	| .canary = false | .rerun_disturbed = 0' "$ROOT/configs/tiny.json" >"$T/base.json"

# 1. a backend that takes 20 us per request, three trials
shape_begin; shape_mark
if ! "$OQB_BIN/oqb" run "$T/base.json" --out "$T/r1" >"$T/r1.out" 2>&1; then
	notok service-run "oqb run failed: $(tail -5 "$T/r1.out")"
	finish
fi
R=$T/r1/run.json
jcheck service-present "$R" '[.points[] | .server.service_ns | .all.n > 0 and .sample_every == 1
	and (.window | test("measured window"))] | length == 2 and all'
jcheck service-at-least-the-backends-time "$R" '[.points[].server.service_ns.all | .min >= 20000
	and .p50 >= 20000 and .p50 < 60000] | all'
shape_done
# none of the load phase's 5,000 sets is timed (a count, every run): the
# server's count is at most the clients' measured one, give or take the
# requests at the window's edges (about 1,000 a trial against 5,000)
jcheck service-window-only "$R" '[.points[] | (.server.service_ns.all.n / .lat_ns.all.n) < 1.25] | all'
# every request of the window timed: a worker that keeps up executes them
# inside the window; one starved of its CPU runs the last ones after it
# closes, so this bound is a timing shape (a load of 20 gave under 0.8)
SHAPE=(service-window-all '[.points[] | (.server.service_ns.all.n / .lat_ns.all.n) > 0.8] | all')
shape_check "$R" "${SHAPE[@]}"
jcheck service-merged-over-trials "$R" '[.points[] | .server.service_ns as $s
	| $s.trials == 3 and ($s.all.n == ([.trials[].service_ns.all.n] | add))
	and ($s.all.n == $s.nilext.n + $s.non_nilext.n)
	and ($s.all.trials_p50 | length == 3)
	and $s.all.p50 >= ($s.all.trials_p50 | min) and $s.all.p50 <= ($s.all.trials_p50 | max)
	and ($s.all.p50_ci | length == 2) and ($s.all | has("hdr") | not)
	and ($s.nilext.hdr | type == "string") and ($s.non_nilext.hdr | type == "string")
	and all(.trials[]; (.service_ns.nilext.n | type == "number") and (.service_ns.nilext | has("hdr") | not))] | all'
if grep -q 'service p50=' "$T/r1.out"; then ok service-in-progress-line
else notok service-in-progress-line "no 'service p50=' in: $(tail -2 "$T/r1.out")"; fi

# 2. a delay before the backend call: in the latency, not in the service time
jq '.systems = ["rawrpc"] | .server.backend = {kind: "null"} | .arrival.loads_ops = [1000] | .repeat = 1' \
	"$T/base.json" >"$T/delay.json"
if OQB_FAULT=server-delay-ns:200000 "$OQB_BIN/oqb" run "$T/delay.json" --out "$T/r2" >"$T/r2.out" 2>&1; then
	# a percentile reads its histogram bin's lower edge, up to a few per
	# cent below the value (a 200-205 us median read 196,544 ns)
	jcheck service-excludes-delay-outside-backend "$T/r2/run.json" '.points[0] | .lat_ns.all.p50 >= 190000
		and .server.service_ns.all.n > 0 and .server.service_ns.all.p50 < 20000' ||
		jq -c '.points[0] | {lat_p50: .lat_ns.all.p50, lat_n: .lat_ns.all.n, service: .server.service_ns,
			trials: [.trials[]? | {trial, lat_p50: .lat_ns.all.p50}]}' "$T/r2/run.json" >&2
else
	notok service-excludes-delay-outside-backend "oqb run failed: $(tail -5 "$T/r2.out")"
fi

# 3. the default (one in 16 at random gaps) and none
jq '.systems = ["rawrpc"] | del(.server.service_sample) | .repeat = 1' "$T/base.json" >"$T/def.json"
jq '.server.service_sample = 0' "$T/def.json" >"$T/off.json"
if "$OQB_BIN/oqb" run "$T/def.json" --out "$T/r3" >"$T/r3.out" 2>&1 &&
	"$OQB_BIN/oqb" run "$T/off.json" --out "$T/r4" >"$T/r4.out" 2>&1; then
	jcheck service-default-samples-1-in-16 "$T/r3/run.json" '.points[0] | .server.service_ns.sample_every == 16
		and (.lat_ns.all.n / .server.service_ns.all.n) as $r | $r > 8 and $r < 32'
	jcheck service-sample-0-times-none "$T/r4/run.json" '.points[0].server.service_ns
		| .sample_every == 0 and (has("all") | not)'
	if grep -q 'service p50=' "$T/r4.out"; then notok service-none-not-shown "the progress line shows a service time"
	else ok service-none-not-shown; fi
else
	notok service-default-samples-1-in-16 "oqb run failed: $(tail -3 "$T/r3.out" "$T/r4.out")"
fi

# 4. by hand: no window, the server's life
if launch_server hand 200 "$OQB_BIN/oqb-server" --system rawrpc --backend null --service-ns 5000 --service-sample 1; then
	"$OQB_BIN/oqb-client" --system rawrpc --server "$EP" --rate 2000 --duration-s 0.3 --warmup-s 0 \
		--workload '{"kind":"kv","put_ratio":0.5,"key_size":16,"value_size":64,"keys":100}' >"$T/hand.cli" 2>&1
	kill -INT "$SRV_PID"
	wait "$SRV_PID" 2>/dev/null
	sed -n '/^{/,$p' "$T/hand.srv.out" >"$T/hand.json"
	jcheck service-by-hand-whole-life "$T/hand.json" '.service_ns | (.window | test("life"))
		and .all.n > 0 and .all.min >= 5000 and .all.n == .nilext.n + .non_nilext.n'
else
	notok service-by-hand-whole-life "the server did not start"
fi
finish
