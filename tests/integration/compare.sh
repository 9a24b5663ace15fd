#!/usr/bin/env bash
# compare.sh - `oqb compare` on a real run with host_tags (docs/trust.md,
# "Verdicts: the system's tail, like with like, and a rate that holds"):
# the percentile it shows for a side is its trials' histograms merged bin
# by bin, so against a run's own point summaries (the same merge, made by
# oqb run) it must agree exactly, for the system tail (host_tags'
# sys_lat_ns) and the raw one; an A/A pair made of one run's trials split
# in two reports no regression and no improvement, and states its
# family-wise rate.  The judgement itself on planted changes is
# tests/unit/test_verdict.c's (it builds the histograms it needs).
. "$(dirname "$0")/../lib.sh"

cat >"$T/cfg.json" <<CFG
{ "name": "cmpt", "transport": "shm", "systems": ["oq", "rawrpc"],
  "server": { "workers": 1, "backend": { "kind": "null" } },
  "clients": { "processes": 1, "threads": 1 },
  "workload": { "kind": "kv", "put_ratio": 0.5, "key_size": 16, "value_size": 64, "keys": 100 },
  "arrival": { "kind": "poisson", "loads_ops": [5000] },
  "warmup_s": 0.05, "duration_s": 0.15, "repeat": 8, "seed": 5 }
CFG
"$OQB_BIN/oqb" run "$T/cfg.json" --quiet --out "$T/r" >"$T/run.out" 2>&1
rc=$?
R=$T/r/run.json
if [ $rc -ne 0 ] && [ $rc -ne 1 ] || [ ! -f "$R" ]; then
	notok compare_real_run "oqb run exited $rc: $(tail -3 "$T/run.out")"
	finish
fi
ok compare_real_run
jcheck compare_real_run_has_tags "$R" 'all(.points[]; all(.trials[]; .host_tags | type == "object"))'

# A run against itself: each side's number is the merge of the trials the
# test used; with no trial left out (no canary regime split: the drift
# allowed is huge) that is the point's own summary, exactly, for either
# tail.
"$OQB_BIN/oqb" compare "$R" "$R" --json --canary-drift 1000 >"$T/sys.json" 2>"$T/sys.err"
rc=$?
"$OQB_BIN/oqb" compare "$R" "$R" --json --tail raw --canary-drift 1000 >"$T/raw.json" 2>"$T/raw.err"
rc2=$?
if [ $rc -ne 1 ] && [ $rc2 -ne 1 ] && jq -e --slurpfile run "$R" '.summary.tail == "system" and
	.summary.regressions == 0 and .summary.improvements == 0 and
	.summary.points_system_tail == ($run[0].points | length) and
	all(.points[]; .tail == "system" and .p50.tail == "system" and (.p50 | has("raw_base")))' \
	"$T/sys.json" >/dev/null; then
	ok compare_self_system_tail
else
	notok compare_self_system_tail "rc=$rc/$rc2: $(cat "$T/sys.err") $(jq -c '.summary' "$T/sys.json" 2>&1 | head -c 600)"
fi
# same_as_point COMPARE_JSON sys|raw: every point that left no trial out
# and has a number shows its run's own merged p50 and p99 (at least one)
same_as_point() {
	jq -e --slurpfile run "$R" --arg f "$2" '[.points | to_entries[] | .key as $i | .value |
		select(has("regime") | not) | select(.p50.base > 0) |
		(.p50.base == ($run[0].points[$i] | if $f == "sys" then .host_tags.sys_lat_ns.all.p50 else .lat_ns.all.p50 end)) and
		(.p99.base == ($run[0].points[$i] | if $f == "sys" then .host_tags.sys_lat_ns.all.p99 else .lat_ns.all.p99 end))]
		| length > 0 and all' "$1" >/dev/null
}
if same_as_point "$T/sys.json" sys && same_as_point "$T/raw.json" raw &&
	jq -e '.summary.tail == "raw" and all(.points[]; .tail == "raw" and (.p50 | has("raw_base") | not))' "$T/raw.json" >/dev/null; then
	ok compare_shows_merged_bins
else
	notok compare_shows_merged_bins "$(jq -c '[.points[] | {p50: .p50.base, p99: .p99.base, regime}]' "$T/sys.json" "$T/raw.json") $(jq -c '[.points[] | {raw: [.lat_ns.all.p50, .lat_ns.all.p99], sys: [.host_tags.sys_lat_ns.all.p50, .host_tags.sys_lat_ns.all.p99]}]' "$R")"
fi

# A/A from one recorded run: its trials split in two runs of four
jq '.points |= map(.trials |= .[0:4])' "$R" >"$T/a.json"
jq '.points |= map(.trials |= .[4:8])' "$R" >"$T/b.json"
"$OQB_BIN/oqb" compare "$T/a.json" "$T/b.json" >"$T/aa.out" 2>&1
rc=$?
if { [ $rc -eq 0 ] || [ $rc -eq 3 ]; } && tail -1 "$T/aa.out" | grep -q ', 0 regressions, 0 improvements, .*after Holm' &&
	grep -q 'family-wise false-verdict rate at most 1 %' "$T/aa.out"; then
	ok "compare_aa_split_no_change (exit $rc)"
else
	notok compare_aa_split_no_change "rc=$rc: $(tail -4 "$T/aa.out")"
fi

# a run's directory stands for its run.json, with the same verdict; a
# directory without one is refused, saying so (it read as "file is empty")
"$OQB_BIN/oqb" compare "$T/r" "$T/r" --json --canary-drift 1000 >"$T/dir.json" 2>"$T/dir.err"
rc=$?
if [ $rc -ne 2 ] && jq -e --slurpfile f "$T/sys.json" '.summary == $f[0].summary' "$T/dir.json" >/dev/null; then
	ok "compare_run_directory_reads_its_run_json (exit $rc)"
else
	notok compare_run_directory_reads_its_run_json "rc=$rc: $(tail -2 "$T/dir.err")"
fi
mkdir -p "$T/empty-run"
"$OQB_BIN/oqb" compare "$T/empty-run" "$R" >"$T/nodir.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q 'a directory without run.json' "$T/nodir.out"; then
	ok compare_directory_without_run_json_refused
else
	notok compare_directory_without_run_json_refused "rc=$rc: $(cat "$T/nodir.out")"
fi

# bad input: an unknown tail is refused, naming the choices
"$OQB_BIN/oqb" compare "$R" "$R" --tail host >"$T/bad.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q 'system' "$T/bad.out" && grep -q 'raw' "$T/bad.out"; then
	ok compare_bad_tail_refused
else
	notok compare_bad_tail_refused "rc=$rc: $(cat "$T/bad.out")"
fi
finish
