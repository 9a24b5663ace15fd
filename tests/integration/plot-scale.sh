#!/usr/bin/env bash
# plot-scale.sh - the scale `oqb plot` draws latency on (harness/figures/
# ltscale.h), on a fixed run.json shaped like the quickstart's: medians of
# 0.3, 0.8 and 1.3 us below saturation, and 60 ms at the saturated load.
# The axes file says log y, with a range set by the points below
# saturation (the saturated ones are drawn in a band above it), log x for
# the 80x load sweep, and the data file marks the saturated points.  The
# figure itself is rendered when gnuplot is installed (OQB_PLOT_SCALE_KEEP=DIR
# keeps the run and its figure in DIR, to look at).
. "$(dirname "$0")/../lib.sh"

D=${OQB_PLOT_SCALE_KEEP:-$T/run}
mkdir -p "$D"
# system, p50 at the lightest load (ns); medians grow 10 % per load step,
# the trials' range is +-15 %, P99 is 8x the median; every system
# saturates at 1.6 Mops/s with a 60 ms median
jq -n '
  def pt($s; $base; $i; $load):
    ($load >= 1600000) as $sat |
    (if $sat then 60000000 else ($base * pow(1.1; $i) | floor) end) as $p50 |
    {system: $s, offered_ops: $load, achieved_ops: (if $sat then 900000 else $load * 0.999 end),
     saturated: $sat, flagged: $sat,
     flagged_by: {p50: [], p99: [], p999: [], achieved_ops: (if $sat then ["saturation"] else [] end)},
     lat_ns: {all: {n: 100000, p50: $p50, p99: ($p50 * 8)}},
     spread: {all: {p50: {min: ($p50 * 0.85 | floor), max: ($p50 * 1.15 | floor)},
                    p99: {min: ($p50 * 6 | floor), max: ($p50 * 10 | floor)}}}};
  [20000, 50000, 100000, 200000, 400000, 800000, 1600000] as $loads |
  {schema: "oqbench.run/1", name: "plot-scale", status: "ok", created_utc: "2026-01-01T00:00:00Z",
   transport: {name: "shm"},
   points: [ (["oq", 300], ["rawrpc", 1300], ["deferred", 800]) as [$s, $b] |
             range($loads | length) as $i | pt($s; $b; $i; $loads[$i]) ]}' >"$D/run.json"

if ! command -v gnuplot >/dev/null; then
	skip plot_scale "gnuplot not installed"
	finish
fi
if ! "$OQB_BIN/oqb" plot "$D" >"$T/plot.out" 2>&1; then
	notok plot_runs "$(cat "$T/plot.out")"
	finish
fi
ok plot_runs
check plot_png_written test -s "$D/latency-throughput.png"
A=$D/latency-throughput.scale
val() { sed -n "s/^$1 = //p" "$A" | tr -d "'"; }

# both panels on a log latency axis
if [ "$(val ylog50)" = 1 ] && [ "$(val ylog99)" = 1 ]; then ok latency_axes_log; else notok latency_axes_log "$(cat "$A")"; fi
# the median panel's range holds every median below saturation (0.3 to
# 1.3 x 1.1^5 us, with the trials' range) and stops far below the 60 ms of
# the saturated points, which go to a band above it
lo=$(val ylo50) hi=$(val yhi50) dhi=$(val ydhi50) ys=$(val ysat50)
if awk -v lo="$lo" -v hi="$hi" -v dhi="$dhi" -v ys="$ys" 'BEGIN {
	exit !(lo > 0 && lo <= 0.3 * 0.85 && lo >= 0.1 && dhi >= 1.3 * 1.1^5 * 1.15 && dhi <= 5 &&
	       ys > dhi && hi > ys && hi <= 50) }'; then
	ok median_range_from_unsaturated
else
	notok median_range_from_unsaturated "ylo50=$lo ydhi50=$dhi ysat50=$ys yhi50=$hi (us)"
fi
# the P99 panel likewise (its values are 8x the medians)
lo=$(val ylo99) dhi=$(val ydhi99) ys=$(val ysat99)
if awk -v lo="$lo" -v dhi="$dhi" -v ys="$ys" 'BEGIN { exit !(lo <= 0.3 * 6 && dhi >= 1.3 * 1.1^5 * 10 && dhi <= 50 && ys > dhi) }'; then
	ok p99_range_from_unsaturated
else
	notok p99_range_from_unsaturated "ylo99=$lo ydhi99=$dhi ysat99=$ys (us)"
fi
# tick labels at 1-2-5 steps, so 0.3 and 1.3 us can be told apart
if val ytics50 | grep -q '"0.2" 0.2, "0.5" 0.5, "1" 1, "2" 2'; then ok median_ticks_125; else notok median_ticks_125 "ytics50=$(val ytics50)"; fi
# the comment says where the range came from: 18 points below saturation, 3 saturated above it
check axes_comment grep -q 'axis50: log y from 18 point(s) below saturation .*; 3 saturated, 3 of them above the range' "$A"
# a load sweep of 80x: log throughput axis
if [ "$(val xlog50)" = 1 ] && [ "$(val xunit50)" = "Kops/s" ]; then ok throughput_axis_log; else notok throughput_axis_log "xlog50=$(val xlog50) xunit50=$(val xunit50)"; fi
# the data file marks the saturated points in column 12
nsat=$(awk '!/^#/ && NF >= 12 && $12 == 1' "$D/latency-throughput.dat" | wc -l)
if [ "$nsat" -eq 3 ]; then ok data_marks_saturated; else notok data_marks_saturated "$nsat rows with saturated = 1, expected 3"; fi
finish
