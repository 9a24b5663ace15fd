#!/usr/bin/env bash
# figures-onesided.sh - the one-sided section of `oqb figures` (issue 52;
# harness/figures/figonesided.c) on a recorded run of
# configs/onesided-verbs.json (tests/figures/onesided/, trimmed by
# tests/figures/make-fixtures.sh from a make figures-onesided run in the
# Soft-RoCE VM) and on variants of it made here:
#  - each system's line in onesided.svg is titled with the checker's
#    verdict over its points ("linearizable" / "N violations found"),
#    N computed here from run.json's checks;
#  - the claim rows (report and claims.json) hold the ratio of each
#    system's nilext commit median to oq's at the run's lowest load, and
#    judge it and the verdict against docs/paper-claims.json's
#    onesided_claims, all recomputed here with jq;
#  - the figure and the caption say "Soft-RoCE" for a run on an rxe device;
#  - a write1 whose histories check, a seqwrite at 1.1x oq, and a write1
#    not checked turn their rows to "no" / "not measured";
#  - without a one-sided run the section says "Not run" and draws nothing.
. "$(dirname "$0")/../lib.sh"
FIX=$OQB_ROOT/tests/figures/onesided
CLAIMS=$OQB_ROOT/docs/paper-claims.json
RUN=$FIX/recorded/run.json

# report DIR OUT: oqb figures over DIR into OUT; 1 when it fails
report() {
	"$OQB_BIN/oqb" figures --runs "$1" --out "$2" >"$2.out" 2>&1 ||
		{ notok "onesided: oqb figures --runs $1" "$(tail -3 "$2.out")"; return 1; }
}

# expected titles, from run.json alone
want_titles() {
	jq -r '[.points[] | select((.sweep.index // 0) == 0)] | group_by(.system)[] |
	  (map(.check.keys_violation // 0) | add) as $v |
	  "\(.[0].system): " + (if $v > 0 then "\($v) violation" + (if $v == 1 then "" else "s" end) + " found"
	    elif all(.[]; .check.verdict == "ok") then "linearizable" else "other" end)' "$1" | sort
}

report "$FIX" "$T/rep" || finish
got=$(grep '^title[0-9]* = ' "$T/rep/onesided.gp-params" | sed "s/^title[0-9]* = '//; s/'$//" | sort)
want=$(want_titles "$RUN")
if [ -n "$want" ] && [ "$got" = "$want" ] && grep -q 'violations found' <<<"$got" && grep -q 'oq: linearizable' <<<"$got"; then
	ok "onesided: each line titled with its checker's verdict: $(tr '\n' ';' <<<"$got")"
else notok "onesided: line titles" "got: $got; want: $want"; fi
miss=
while IFS= read -r t; do grep -qF "$t" "$T/rep/onesided.svg" || miss="$miss [$t]"; done <<<"$want"
[ -z "$miss" ] && grep -q '<svg' "$T/rep/onesided.svg" && ok "onesided: onesided.svg drawn, its legend has every verdict" ||
	notok "onesided: onesided.svg lacks" "$miss"
grep -q 'Soft-RoCE' "$T/rep/onesided.svg" && grep -q '<b>Measured on Soft-RoCE</b>' "$T/rep/index.html" &&
	ok "onesided: the figure and its caption say Soft-RoCE" || notok "onesided: no Soft-RoCE label"

# the claim rows, recomputed: ratio at the lowest load, ranges and verdicts from the claims file
judge='def load: .offered_ops // .outstanding;
  [.points[] | select((.sweep.index // 0) == 0)] as $p | ($p | map(load) | min) as $lo |
  def nil($s): $p | map(select(.system == $s and load == $lo))[0].lat_ns.nilext.p50;
  def viol($s): $p | map(select(.system == $s) | .check.keys_violation // 0) | add;
  def allok($s): $p | all(.[] | select(.system == $s); .check.verdict == "ok");
  [$claims[0].onesided_claims[] | . as $c | (nil($c.system) / nil("oq")) as $r |
   { id, ratio: $r,
     ratio_holds: (if $r >= $c.ratio[0] - 1e-9 and $r <= $c.ratio[1] + 1e-9 then "yes" else "no" end),
     verdict_holds: (if $c.linearizable then (if allok($c.system) then "yes" else "no" end)
                     else (if viol($c.system) > 0 then "yes" else "no" end) end) }]'
expect() { jq --slurpfile claims "$CLAIMS" "$judge" "$1"; }
# check_rows NAME RUN REPORT_DIR: claims.json's rows against expect
check_rows() {
	local w g
	w=$(expect "$2" | jq -c 'map({id, r: (.ratio * 1000 | round), ratio_holds, verdict_holds,
	  holds: (if .ratio_holds == "yes" and .verdict_holds == "yes" then "yes" else "no" end)})')
	g=$(jq -c '.onesided | map({id, r: (.ratio * 1000 | round), ratio_holds, verdict_holds, holds})' "$3/claims.json" 2>&1)
	if [ "$g" = "$w" ] && [ "$(jq length <<<"$g")" = 3 ]; then ok "onesided: $1: $g"
	else notok "onesided: $1" "claims.json: $g; recomputed: $w"; fi
}
check_rows "claim rows of the recorded run match the recomputed ratios and verdicts" "$RUN" "$T/rep"
rows=$(grep -c '<tr><td>.*<span class=load>(§' <<<"$(sed -n '/<table id=onesided>/,/<\/table>/p' "$T/rep/index.html")")
[ "$rows" = 3 ] && ok "onesided: the report's claim table has 3 rows" || notok "onesided: claim table rows: $rows"

# variants: write1's histories check; seqwrite at 1.1x oq at the lowest load
mkdir -p "$T/fixed/r" "$T/fast/r" "$T/nocheck/r"
jq '(.points[] | select(.system == "write1") | .check) |= (.verdict = "ok" | .keys_violation = 0)' "$RUN" >"$T/fixed/r/run.json"
jq 'def load: .offered_ops // .outstanding; ([.points[] | load] | min) as $lo |
  ([.points[] | select(.system == "oq" and load == $lo)][0].lat_ns.nilext.p50) as $oq |
  (.points[] | select(.system == "seqwrite" and load == $lo) | .lat_ns.nilext.p50) = ($oq * 1.1)' "$RUN" >"$T/fast/r/run.json"
jq '(.points[] | select(.system == "write1")) |= del(.check)' "$RUN" >"$T/nocheck/r/run.json"
report "$T/fixed" "$T/fixed/rep" && report "$T/fast" "$T/fast/rep" && report "$T/nocheck" "$T/nocheck/rep" || finish
check_rows "write1 without violations: its row does not hold" "$T/fixed/r/run.json" "$T/fixed/rep"
jcheck "onesided: write1 without violations is titled linearizable and fails its claim" "$T/fixed/rep/claims.json" \
	'.onesided[] | select(.system == "write1") | .verdict == "linearizable" and .holds == "no"'
grep -q "^title[0-9]* = 'write1: linearizable'" "$T/fixed/rep/onesided.gp-params" &&
	ok "onesided: the legend follows the verdict (write1: linearizable)" ||
	notok "onesided: legend of the fixed write1" "$(grep title "$T/fixed/rep/onesided.gp-params")"
check_rows "seqwrite at 1.1x oq: its ratio does not hold" "$T/fast/r/run.json" "$T/fast/rep"
grep -q '<td>seqwrite</td>.*<span class=no>no</span><span class=caveat>the ratio</span></td></tr>' "$T/fast/rep/index.html" &&
	grep -q '<td>write1</td>.*<span class=no>no</span><span class=caveat>the verdict</span></td></tr>' "$T/fixed/rep/index.html" &&
	ok "onesided: a row that does not hold names the part that failed" ||
	notok "onesided: the failed part of a row" "$(grep -o '<td>seqwrite</td>.*' "$T/fast/rep/index.html" | head -1)"
jcheck "onesided: seqwrite at 1.1x oq is judged not two round trips" "$T/fast/rep/claims.json" \
	'.onesided[] | select(.system == "seqwrite") | (.ratio * 100 | round) == 110 and .ratio_holds == "no" and .holds == "no"'
jcheck "onesided: write1 with no history checked is not measured, never linearizable" "$T/nocheck/rep/claims.json" \
	'.onesided[] | select(.system == "write1") | .verdict == "not checked (no history)" and .verdict_holds == "not measured" and .holds != "yes"'

# no one-sided run: the section says so and draws nothing
report "$OQB_ROOT/tests/figures/holds" "$T/none" || finish
grep -q '<p id=onesided>Not run: no run with seqwrite or write1' "$T/none/index.html" && [ ! -e "$T/none/onesided.svg" ] &&
	jq -e 'has("onesided") | not' "$T/none/claims.json" >/dev/null &&
	ok "onesided: without a one-sided run the section says not run" ||
	notok "onesided: no one-sided run" "$(grep -o '<h2 id=onesided-h>.*' "$T/none/index.html" | head -2)"
# a claims file without onesided_claims: the table says so
jq 'del(.onesided_claims)' "$CLAIMS" >"$T/claims-old.json"
"$OQB_BIN/oqb" figures --runs "$FIX" --out "$T/old" --claims "$T/claims-old.json" >/dev/null 2>&1
grep -q 'the claims file has no onesided_claims' "$T/old/index.html" && ok "onesided: a claims file without onesided_claims is named" ||
	notok "onesided: claims file without onesided_claims"
finish
