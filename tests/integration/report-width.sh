#!/usr/bin/env bash
# report-width.sh - the figures report fits a 1,400-pixel-wide window.
# Debian's chromium, headless at --window-size=1400,900, loads a copy of
# index.html with a probe script appended that writes into the DOM the
# claims table's scrollWidth, the width of the box it sits in, the page's
# scrollWidth and the window's innerWidth; the page is dumped with
# --dump-dom and the numbers read back.  The runs are the fixtures of
# tests/figures/holds/ turned into a small host's (the long cells of
# `make figures` on a 2-core VM): every point at and above the knee
# saturated, every point from 70 % of it flagged by several checks, oq
# flagged by schedule_lag at every load of cluster 31 (its clean-load cell
# says why there is none), every point of the YCSB run saturated.
# Negative control: the same page with the table's old layout forced back
# (automatic width, no wrapping inside cells) must be caught as too wide.
# Nothing is installed here: chromium comes from harness/install-deps.sh
# (make deps); without it the test skips.
. "$(dirname "$0")/../lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	skip report-width "no chromium (make deps installs Debian's chromium)"
	finish
fi
FIX=$OQB_ROOT/tests/figures

# a small host's runs, from the fixtures
mkdir -p "$T/runs"
cp -r "$FIX/holds/." "$T/runs/"
small='(.points[] | select(.offered_ops >= 100000)) |= (.saturated = true | .flagged = true)
  | (.points[] | select(.offered_ops >= 70000 and .offered_ops < 100000)) |= (.flagged = true | .flagged_by =
      {"p50": (if .system == "oq" then ["schedule_lag", "arrival_fit", "placement", "interference"]
               else ["trial_agreement", "placement", "interference"] end),
       "p99": ["ci_width", "schedule_lag", "stationarity"], "p999": [], "achieved_ops": []})'
jq "$small" "$FIX/holds/c12/run.json" >"$T/runs/c12/run.json"
jq "$small"' | (.points[] | select(.system == "oq")) |= (.flagged = true
      | .flagged_by.p50 = ((.flagged_by.p50 // []) + ["schedule_lag"] | unique)
      | .flagged_by.p99 = ((.flagged_by.p99 // []) + ["schedule_lag"] | unique))' \
	"$FIX/holds/c31/run.json" >"$T/runs/c31/run.json"
jq '.points[] |= (.saturated = true | .flagged = true)' "$FIX/holds/put50/run.json" >"$T/runs/put50/run.json"
if ! "$OQB_BIN/oqb" figures --runs "$T/runs" --out "$T/rep" >"$T/rep.out" 2>&1; then
	notok report-built "$(cat "$T/rep.out")"
	finish
fi
ok report-built

PROBE='<script>window.addEventListener("load", function () {
	var t = document.querySelector("table#claims"), p = document.createElement("pre");
	p.id = "oqb-width";
	p.textContent = "WIDTH table=" + (t ? t.scrollWidth : -1) + " box=" + (t ? t.parentElement.clientWidth : -1) +
		" page=" + document.documentElement.scrollWidth + " window=" + window.innerWidth;
	document.body.appendChild(p);
});</script>'

# measure NAME [EXTRA]: loads $T/rep/NAME.html (index.html with EXTRA and
# the probe before </body>) at 1400 x 900; prints the probe's line
measure() {
	local name=$1 extra=${2:-} html
	html=$(cat "$T/rep/index.html")
	printf '%s%s%s</body>%s\n' "${html%</body>*}" "$extra" "$PROBE" "${html##*</body>}" >"$T/rep/$name.html"
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --window-size=1400,900 \
		--user-data-dir="$T/profile-$name" --virtual-time-budget=10000 --dump-dom \
		"file://$T/rep/$name.html" >"$T/$name.dom" 2>"$T/$name.log"
	sed -n 's/.*<pre id="oqb-width">\([^<]*\)<.*/\1/p' "$T/$name.dom" | head -1
}

# fits LINE: the table no wider than its box, the page no wider than the window of 1400
fits() {
	local t b p w
	read -r t b p w < <(sed -n 's/^WIDTH table=\(-\{0,1\}[0-9]*\) box=\([0-9]*\) page=\([0-9]*\) window=\([0-9]*\)$/\1 \2 \3 \4/p' <<<"$1")
	[ -n "${w:-}" ] && [ "$w" -eq 1400 ] && [ "$t" -gt 0 ] && [ "$t" -le "$b" ] && [ "$p" -le "$w" ]
}

line=$(measure fit)
if fits "$line"; then ok report-fits-1400px
else notok report-fits-1400px "probe: '${line:-none}' (chromium log: $(tail -3 "$T/fit.log"))"; fi

# the long cells are there to be wrapped: both kinds of caveat, and a
# clean-load cell that says why there is none
H=$T/rep/index.html
if grep -q '<span class=checks>oq: schedule_lag, arrival_fit, placement, interference; rawrpc: trial_agreement' "$H" &&
	grep -q '<td class=noclean>none<span class=why>no load where both are clean (of 9 loads): oq saturated at 3 loads and flagged by [a-z_, ]*schedule_lag[a-z_, ]* at the other 6' "$H" &&
	grep -q 'both saturated at every load' "$H"; then ok report-width-long-cells
else notok report-width-long-cells "the fixture's long cells are missing from index.html"; fi

# negative control: the old layout (automatic width, nothing wraps in a cell)
line=$(measure wide '<style>#claims{table-layout:auto!important;width:auto!important}
#claims td,#claims td span{white-space:nowrap!important}</style>')
if [ -n "$line" ] && ! fits "$line"; then ok negative-control-wide-table
else notok negative-control-wide-table "a table forced wide was not caught: '${line:-no probe line}'"; fi
finish
