#!/usr/bin/env bash
# perfhist.sh - `oqb history` (docs/history.md) on real run.json files of
# short tiny runs and on synthetic histories made from them with jq: add
# refuses duplicates; runs of one config and testbed form one group and an
# edited environment makes another; detect names a +10 % step at run 60
# (+-1) and nothing on flat noise or a single spike; a step that only
# exists between two testbeds is never found; the acknowledgement file
# mutes a known change; export-otava writes Otava's JSON; plot draws; a
# malformed line is named by its line number.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
OQB=$OQB_BIN/oqb
H=$T/h.jsonl

# --- two real runs -------------------------------------------------------
quick=(--set duration_s=0.2 --set warmup_s=0.1 --set repeat=1 --quiet)
if "$OQB" run "$ROOT/configs/tiny.json" "${quick[@]}" --out "$T/r1" >"$T/r1.out" 2>&1 &&
   "$OQB" run "$ROOT/configs/tiny.json" "${quick[@]}" --set seed=9 --out "$T/r2" >"$T/r2.out" 2>&1; then
	ok runs_made
else
	notok runs_made "$(tail -5 "$T/r1.out" "$T/r2.out")"
	finish
fi

"$OQB" history add "$T/r1" --file "$H" >"$T/add.out" 2>&1 && grep -q "added run r1 .* 4 points" "$T/add.out" &&
	ok add_dir || notok add_dir "$(cat "$T/add.out")"
"$OQB" history add "$T/r2/run.json" --file "$H" --commit 1234567abcdef >"$T/add.out" 2>&1 &&
	ok add_json || notok add_json "$(cat "$T/add.out")"
"$OQB" history add "$T/r1" --file "$H" >/dev/null 2>"$T/dup.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "already in .* at line 1" "$T/dup.err" && [ "$(wc -l <"$H")" -eq 2 ]; then
	ok add_duplicate_refused
else
	notok add_duplicate_refused "rc $rc, $(cat "$T/dup.err"), $(wc -l <"$H") lines"
fi
jcheck line_fields <(head -1 "$H") '.schema == "oqbench.history/1" and (.config_fp | test("^[0-9a-f]{16}$"))
	and (.testbed_fp | test("^[0-9a-f]{16}$")) and (.points | length) == 4
	and all(.points[]; (.key | test("^(oq|rawrpc)@(5000|10000)$")) and .p50 > 0 and .p99 >= .p50
		and (.p99_ci | length) == 2 and .achieved_ops > 0 and (.flagged | type) == "boolean"
		and (.spread.p50 | length) == 3)
	and .testbed.transport.name == "shm" and (.testbed.kernel | length) > 0'
# A different seed is the same experiment; --commit is recorded.
jcheck same_group <(jq -s . "$H") '.[0].config_fp == .[1].config_fp and .[0].testbed_fp == .[1].testbed_fp
	and .[1].git_commit == "1234567abcdef"'

# A copy of the run on "another machine": only environment edited.
mkdir -p "$T/r3"
jq '.environment.cpu_model = "Other CPU" | .run_id = "r3"' "$T/r1/run.json" >"$T/r3/run.json"
"$OQB" history add "$T/r3" --file "$H" >/dev/null
jcheck other_testbed <(jq -s . "$H") '.[2].config_fp == .[0].config_fp and .[2].testbed_fp != .[0].testbed_fp'
# A changed load is another experiment.
mkdir -p "$T/r4"
jq '.config.arrival.loads_ops = [5000, 20000] | .run_id = "r4"' "$T/r1/run.json" >"$T/r4/run.json"
"$OQB" history add "$T/r4" --file "$H" >/dev/null
jcheck other_config <(jq -s . "$H") '.[3].config_fp != .[0].config_fp'
"$OQB" history show --file "$H" >"$T/show.out" 2>&1
if [ "$(grep -c '^  config' "$T/show.out")" -eq 3 ] && grep -q "2 runs of tiny" "$T/show.out"; then
	ok show_groups
else
	notok show_groups "$(cat "$T/show.out")"
fi

# --- synthetic histories of 100 runs from the first real line -------------
# noise: lognormal sigma 0.04 from awk's seeded generator, one per run and point
awk 'BEGIN { srand(11); printf "["; for (i = 0; i < 400; i++) { u = rand(); v = rand();
	printf "%s%.6f", i ? "," : "", exp(0.04 * sqrt(-2 * log(1 - u)) * cos(6.283185307 * v)) } print "]" }' >"$T/noise.json"
# synth AT STEP [SPIKE_AT SPIKE]: p99 of every point times noise, times STEP from run AT on
synth() {
	head -1 "$H" | jq -c --slurpfile f "$T/noise.json" --argjson at "$1" --argjson step "$2" \
		--argjson sat "${3:--1}" --argjson sf "${4:-1}" '
		. as $b | range(0; 100) as $i | $b
		| .run_id = "syn-\($i)" | .git_commit = ("c" + ("00\($i)" | .[-3:]) + "0000000000000000000000000000000000000")
		| .created_utc = (1767225600 + 60 * $i | todate)
		| .points |= [to_entries[] | .key as $k | .value
			| .p99 = .p99 * $f[0][4 * $i + $k] * (if $i >= $at then $step else 1 end) * (if $i == $sat then $sf else 1 end)
			| .p50 = .p50 * $f[0][(4 * $i + $k + 200) % 400]]'
}
synth 60 1.10 >"$T/step.jsonl"
"$OQB" history detect --file "$T/step.jsonl" --json >"$T/step.json" 2>"$T/step.err"
rc=$?
jcheck detect_step_at_60 "$T/step.json" '(.changes | length) == 4
	and all(.changes[]; .metric == "p99" and .index >= 59 and .index <= 61 and .verdict == "regression"
		and .change_pct > 5 and .change_pct < 15 and .p < 0.0001 and .runs == 100)'
[ $rc -eq 1 ] && ok detect_exit_1_on_regression || notok detect_exit_1_on_regression "rc $rc"
"$OQB" history detect --file "$T/step.jsonl" --metric p99 --point oq@5000 >"$T/step.txt"
if grep -q "^regression  *oq@5000 p99 at run 6[01] of 100 .*commit c06[01]" "$T/step.txt" &&
   [ "$(grep -c '^regression' "$T/step.txt")" -eq 1 ]; then
	ok detect_text
else
	notok detect_text "$(cat "$T/step.txt")"
fi

# negative controls: flat noise and a single 3x spike name nothing
synth 100 1 >"$T/flat.jsonl"
synth 100 1 50 3 >"$T/spike.jsonl"
for k in flat spike; do
	"$OQB" history detect --file "$T/$k.jsonl" --json >"$T/$k.json" 2>/dev/null
	rc=$?
	jcheck "detect_${k}_none" "$T/$k.json" '(.changes | length) == 0 and .summary.series == 12'
	[ $rc -eq 0 ] || notok "detect_${k}_exit" "rc $rc"
done

# a level that differs only between two testbeds is never a change
{ head -60 "$T/flat.jsonl"; tail -40 "$T/step.jsonl" | jq -c '.testbed_fp = "00000000000000ff" | .testbed.cpu_model = "Other"'; } >"$T/tb.jsonl"
"$OQB" history detect --file "$T/tb.jsonl" --json >"$T/tb.json" 2>/dev/null
jcheck testbeds_never_compared "$T/tb.json" '(.changes | length) == 0 and .groups == 2'
# control: the same lines with one testbed show the step
{ head -60 "$T/flat.jsonl"; tail -40 "$T/step.jsonl"; } >"$T/tb1.jsonl"
"$OQB" history detect --file "$T/tb1.jsonl" --json >"$T/tb1.json" 2>/dev/null
jcheck one_testbed_control "$T/tb1.json" '(.changes | length) >= 1 and .groups == 1'

# --- acknowledgements ------------------------------------------------------
jq '[.changes[] | {commit: .commit[0:10], point, metric, reason: "known: test step"}]' "$T/step.json" >"$T/ack.json"
"$OQB" history detect --file "$T/step.jsonl" --ack "$T/ack.json" --json >"$T/acked.json" 2>/dev/null
rc=$?
jcheck ack_mutes "$T/acked.json" '.summary.acknowledged == 4 and .summary.regressions == 0
	and all(.changes[]; .acknowledged == "known: test step")'
[ $rc -eq 0 ] && ok ack_exit_0 || notok ack_exit_0 "rc $rc"
echo '[{"commit": "deadbeef", "reason": "another change"}]' >"$T/ack2.json"
"$OQB" history detect --file "$T/step.jsonl" --ack "$T/ack2.json" >/dev/null 2>&1
[ $? -eq 1 ] && ok ack_other_commit_still_fails || notok ack_other_commit_still_fails
echo '[{"reason": "no commit"}]' >"$T/ack3.json"
"$OQB" history detect --file "$T/step.jsonl" --ack "$T/ack3.json" >/dev/null 2>"$T/ack3.err"
[ $? -eq 2 ] && grep -q "entry 0: needs \"commit\"" "$T/ack3.err" && ok ack_bad_file || notok ack_bad_file "$(cat "$T/ack3.err")"

# --- export to Otava -------------------------------------------------------
"$OQB" history export-otava --file "$T/step.jsonl" >"$T/otava.json" 2>"$T/otava.err"
jcheck otava_format "$T/otava.json" 'length == 100 and all(.[]; (.timestamp | type) == "number"
		and (.metrics | length) == 12 and all(.metrics[]; (.name | type) == "string" and (.value | type) == "number")
		and (.attributes | .branch == "main" and (.commit | startswith("c"))))
	and ([.[].timestamp] | . == (sort | unique))
	and (.[60].metrics[] | select(.name == "oq@5000.p99") | .value) > 0'
"$OQB" history export-otava --file "$H" >/dev/null 2>"$T/otava2.err"
[ $? -eq 2 ] && grep -q -- "--config .* --testbed" "$T/otava2.err" && ok otava_refuses_mixing || notok otava_refuses_mixing "$(cat "$T/otava2.err")"
if "$OQB" history export-otava --file "$H" --out "$T/otava" >/dev/null 2>&1 &&
   [ "$(ls "$T"/otava/*.json | wc -l)" -eq 3 ] && [ "$(grep -c 'type: json' "$T/otava/otava.yaml")" -eq 3 ]; then
	ok otava_out_dir
else
	notok otava_out_dir "$(ls "$T/otava" 2>&1)"
fi

# --- plot -------------------------------------------------------------------
if command -v gnuplot >/dev/null; then
	if OQB_PLOT_DIR=$ROOT/plot "$OQB" history plot --file "$T/step.jsonl" --metric p99 --point oq@5000 \
		--out "$T/h.svg" >"$T/plot.out" 2>&1 && grep -q "<svg" "$T/h.svg" &&
	   [ "$(awk '$6 == 1' "$T/h.dat" | wc -l)" -eq 1 ] && grep -q "1 change point" "$T/plot.out"; then
		ok plot_svg
	else
		notok plot_svg "$(cat "$T/plot.out")"
	fi
	OQB_PLOT_DIR=$ROOT/plot "$OQB" history plot --file "$T/step.jsonl" --metric p99 --point oq@5000 \
		--out "$T/h.png" >/dev/null 2>&1 && [ -s "$T/h.png" ] && ok plot_png || notok plot_png
	OQB_PLOT_DIR=$ROOT/plot "$OQB" history plot --file "$T/step.jsonl" --metric p99 --out "$T/x.svg" >/dev/null 2>"$T/plot3.err"
	[ $? -eq 2 ] && grep -q "oq@10000" "$T/plot3.err" && ok plot_names_points || notok plot_names_points "$(cat "$T/plot3.err")"
else
	skip plot_svg "no gnuplot (make deps)"
fi

# --- bad input ----------------------------------------------------------------
{ head -5 "$T/step.jsonl"; echo '{"schema": "oqbench.history/1", "points": [}'; } >"$T/bad.jsonl"
"$OQB" history detect --file "$T/bad.jsonl" >/dev/null 2>"$T/bad.err"
[ $? -eq 2 ] && grep -q "bad.jsonl:6: not valid JSON" "$T/bad.err" && ok bad_line_named || notok bad_line_named "$(cat "$T/bad.err")"
{ head -2 "$T/step.jsonl"; head -1 "$T/step.jsonl" | jq -c 'del(.config_fp)'; } >"$T/bad2.jsonl"
"$OQB" history show --file "$T/bad2.jsonl" >/dev/null 2>"$T/bad2.err"
[ $? -eq 2 ] && grep -q "bad2.jsonl:3: config_fp: missing" "$T/bad2.err" && ok bad_field_named || notok bad_field_named "$(cat "$T/bad2.err")"
printf '%s' "$(head -1 "$T/step.jsonl")" >"$T/cut.jsonl"
"$OQB" history add "$T/r1" --file "$T/cut.jsonl" >/dev/null 2>"$T/cut.err"
[ $? -eq 2 ] && grep -q "cut.jsonl:1: the last line is incomplete" "$T/cut.err" && ok cut_line_refused || notok cut_line_refused "$(cat "$T/cut.err")"
"$OQB" history detect --file "$T/nope.jsonl" >/dev/null 2>"$T/nope.err"
[ $? -eq 2 ] && grep -q "nope.jsonl" "$T/nope.err" && ok missing_file || notok missing_file
"$OQB" history detect --file "$T/step.jsonl" --pvalue 2 >/dev/null 2>&1
[ $? -eq 2 ] && ok bad_option || notok bad_option
finish
