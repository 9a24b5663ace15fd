#!/usr/bin/env bash
# configs.sh - every configs/*.json end to end, shortened with `oqb run
# --set` (crashtest-*.json are crashtest.sh's): 0.3 s measured after 0.1 s
# of warm-up, one trial without canary or reruns, one low Poisson load or the first two closed-loop depths, the
# first two sweep values, small YCSB record counts.  Asserts on run.json:
# schema and status, points = systems x sweep values x loads, samples in
# every point that is not saturated, sweep and durable fields per point,
# the overrides recorded; no private pmem or run directory left behind.
# Configs for transport verbs need their RDMA hosts: they are checked with
# --dry-run only.  Then `oqb plot` on a swept run draws throughput vs the
# swept value, --set mistakes get clear errors, and `oqb crashtest` is
# reachable through oqb.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}

# Servers' run directories and per-point pmem directories go here, so the
# test can see that none is left over; tmpfs when there is one, since
# pmkv's msync on a disk costs milliseconds per put.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	SCR=$(mktemp -d /dev/shm/oqbcfg.XXXXXX)
else
	SCR=$T/scratch
	mkdir -p "$SCR"
fi
trap 'rm -rf "$SCR"; cleanup_' EXIT

SWEPT=""
for cfg in "$ROOT"/configs/*.json; do
	name=$(basename "$cfg" .json)
	case $name in crashtest-*) continue ;; esac
	# a functional test: one trial, no canary, no reruns (it judges none)
	args=(--set duration_s=0.3 --set warmup_s=0.1 --set timeouts.start_delay_ms=100
	      --set "hosts.scratch_dir=$SCR" --set repeat=1 --set canary=false --set rerun_disturbed=0)
	if [ "$(jq -r .arrival.kind "$cfg")" = closed ]; then
		args+=(--set "arrival.outstanding=$(jq -c '[.arrival.outstanding] | flatten | .[:2]' "$cfg")")
	else
		args+=(--set 'arrival.loads_ops=[2000]')
	fi
	if jq -e '.sweep' "$cfg" >/dev/null; then
		args+=(--set "sweep.values=$(jq -c '.sweep.values[:2]' "$cfg")")
		SWEPT=${SWEPT:-$name}
	fi
	[ "$(jq -r .workload.kind "$cfg")" = ycsb ] && args+=(--set workload.record_count=1000)
	# a plugin config names the default build's .so; this build's is
	# beside its unit tests (make check builds into build/san)
	[ "$(jq -r .server.backend.kind "$cfg")" = plugin ] &&
		args+=(--set "server.backend.path=\"$(cd "$OQB_UNIT/../plugins" 2>/dev/null && pwd)/$(basename "$(jq -r .server.backend.path "$cfg")")\"")

	if [ "$(jq -r .transport "$cfg")" = verbs ]; then
		if "$OQB_BIN/oqb" run "$cfg" --dry-run >"$T/$name.dry" 2>&1; then
			ok "$name: checks and plans (dry run)"
		else
			notok "$name: dry run" "$(tail -3 "$T/$name.dry")"
		fi
		skip "$name: run" "transport verbs needs the RDMA hosts the config names"
		continue
	fi

	out=$T/$name
	shape_begin; shape_mark
	t0=$SECONDS
	if ! "$OQB_BIN/oqb" run "$cfg" "${args[@]}" --quiet --out "$out" >"$T/$name.out" 2>&1; then
		notok "$name: run" "$(tail -5 "$T/$name.out")"
		continue
	fi
	shape_done
	ok "$name: run"
	echo "  ($name: $((SECONDS - t0)) s)"
	R=$out/run.json
	overrides=$(printf '%s\n' "${args[@]}" | grep -v '^--set$' | jq -R . | jq -cs .)
	jcheck "$name: schema, status, overrides recorded" "$R" \
		".schema == \"oqbench.run/5\" and .status == \"ok\" and .error == null
		 and .overrides == $overrides and (.config.description | length > 0)
		 and ((.config.name | startswith(\"fig\") | not) or (.config.description | test(\"Figs? ?[0-9]\")))"
	jcheck "$name: points = systems x sweep values x loads" "$R" \
		'(.config.systems | length) * ((.config.sweep.values // [0]) | length)
		 * ([.config.arrival.loads_ops // .config.arrival.outstanding] | flatten | length) == (.points | length)'
	# every point ran and counted (a count, every run) ...
	jcheck "$name: every point ran" "$R" 'all(.points[]; (.trials | length) >= 1 and (.lat_ns.all.n | type) == "number")'
	# ... and answered inside its 0.3 s window: a point whose processes got
	# no CPU for the whole window has none (beside a load of 20 a
	# closed-loop fig6 point did), so this is a timing shape
	SHAPE=("$name: samples in every point that is not saturated"
		'all(.points[]; .saturated == true or (.lat_ns.all.n > 0 and .achieved_ops > 0))')
	shape_check "$R" "${SHAPE[@]}"
	jcheck "$name: durable per point as configured" "$R" \
		'.config.durable as $d | all(.points[]; .system as $s | .durable ==
		 (if $d == true then true elif ($d | type) == "array" then ($d | index([$s]) != null) else false end))'
	if jq -e '.config.sweep' "$R" >/dev/null; then
		jcheck "$name: every point names its sweep value" "$R" \
			'.config.sweep as $s | all(.points[]; .sweep.key == $s.key and .sweep.value == $s.values[.sweep.index])
			 and ([.points[].sweep.index] | unique) == [range($s.values | length)]
			 and all(.points[]; .dir | test("-" + ($s.key | split(".") | last) + "-"))'
	else
		jcheck "$name: no sweep fields without a sweep" "$R" 'all(.points[]; has("sweep") | not)'
	fi
done

# The per-point pmem directories and the servers' run directories are gone.
left=$(find "$SCR" -mindepth 1 -maxdepth 1 | head -5)
if [ -z "$left" ]; then ok "no pmem or run directory left behind"; else notok "leftover directories" "$left"; fi

# oqb plot on a swept run: latency lines per (system, value), and peak
# throughput vs the swept value with one row per value.
if [ -n "$SWEPT" ] && [ -f "$T/$SWEPT/run.json" ] && command -v gnuplot >/dev/null; then
	D=$T/$SWEPT
	if "$OQB_BIN/oqb" plot "$D" >"$T/plot.out" 2>&1 && grep -q '<svg' "$D/throughput-vs-param.svg" &&
		[ -s "$D/throughput-vs-param.png" ] && [ -s "$D/latency-throughput.svg" ]; then
		ok "$SWEPT: oqb plot writes throughput-vs-param.{svg,png}"
	else
		notok "$SWEPT: oqb plot" "$(cat "$T/plot.out")"
	fi
	nsys=$(jq '.config.systems | length' "$D/run.json")
	nval=$(jq '.config.sweep.values | length' "$D/run.json")
	blocks=$(grep -c '^# system ' "$D/throughput-vs-param.dat")
	rows=$(grep -vc '^#\|^$' "$D/throughput-vs-param.dat")
	lblocks=$(grep -c '^# system .*/' "$D/latency-throughput.dat")
	if [ "$blocks" -eq "$nsys" ] && [ "$rows" -eq $((nsys * nval)) ] && [ "$lblocks" -eq $((nsys * nval)) ]; then
		ok "$SWEPT: one throughput line per system, one latency line per (system, value)"
	else
		notok "$SWEPT: plot data" "$blocks blocks, $rows rows, $lblocks latency blocks for $nsys systems x $nval values"
	fi
else
	skip "plot of a swept run" "no swept config ran, or gnuplot is missing"
fi

# --set mistakes: exit 2 before anything starts, with the key and the fix.
tiny=$ROOT/configs/tiny.json
expect_err() {   # expect_err NAME PATTERN ARGS...
	local tname=$1 pat=$2 rc
	shift 2
	"$OQB_BIN/oqb" run "$tiny" --dry-run "$@" >"$T/err.out" 2>&1
	rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$pat" "$T/err.out"; then ok "$tname"; else notok "$tname" "rc=$rc: $(cat "$T/err.out")"; fi
}
expect_err "--set unknown key suggests the nearest" \
	'--set durabel=true: unknown key "durabel"; did you mean "durable"?' --set durabel=true
expect_err "--set unknown nested key suggests the nearest" \
	'did you mean "arrival.loads_ops"?' --set 'arrival.load_ops=[1000]'
expect_err "--set bad JSON is named" 'not valid JSON' --set 'arrival.loads_ops=[1000,'
expect_err "--set without =" 'expected KEY=VALUE' --set duration_s
expect_err "--set value the config check refuses" 'duration_s: -1 is out of range' --set duration_s=-1
expect_err "verbs keys need transport verbs" 'only used with transport "verbs"' --set verbs.recv_mode=slot_ring
expect_err "sweep of an unsweepable key" 'cannot be swept' --set 'sweep={"key":"systems","values":[1]}'

# oqb crashtest through oqb.
if "$OQB_BIN/oqb" crashtest --help >"$T/ct.out" 2>&1 && grep -q 'usage: oqb crashtest' "$T/ct.out" &&
	"$OQB_BIN/oqb" help | grep -q crashtest; then
	ok "oqb crashtest --help, and oqb help lists it"
else
	notok "oqb crashtest --help" "$(cat "$T/ct.out")"
fi
finish
