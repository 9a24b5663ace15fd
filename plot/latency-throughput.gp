# latency-throughput.gp - median and P99 latency vs achieved throughput,
# one line per system, side by side (the shape of the paper's Figs 7/8).
#
# usage: gnuplot -c latency-throughput.gp DATA OUT.svg|OUT.png "SYS1 SYS2 ..." [TITLE]
#
# DATA holds one block per system, in the order of the names, blocks
# separated by two blank lines; columns: achieved_ops p50_ns p99_ns
# [offered_ops [flagged p50_min p50_max p99_min p99_max [p50_flagged
# p99_flagged]]].  A point is drawn hollow in a panel when a self-check
# warned about that panel's number (docs/trust.md: a P99 whose trials
# disagree leaves a median they agree on solid; without the last two
# columns, any warning makes it hollow in both); with repeated trials
# a bar spans the trials' lowest to highest value.  `oqb plot RUN_DIR` writes it from run.json.  The output
# format follows the file extension.  A latency axis turns logarithmic when
# its values span more than 10x, so the knee at saturation and the flat
# part before it are both readable.

if (ARGC < 3) {
	print "usage: gnuplot -c latency-throughput.gp DATA OUT.svg|OUT.png \"SYS1 SYS2 ...\" [TITLE]"
	exit status 2
}
data = ARG1
out = ARG2
systems = ARG3
title = (ARGC >= 4) ? ARG4 : ""
nsys = words(systems)

stats data using 1 nooutput name "X"
stats data using ($2/1000.0) nooutput name "P50"
stats data using ($3/1000.0) nooutput name "P99"

# Throughput in Kops/s or Mops/s, whichever reads better.
if (X_max >= 1e6) { xs = 1e6; xunit = "Mops/s" } else { xs = 1e3; xunit = "Kops/s" }

ext = out[strlen(out)-2:strlen(out)]
if (ext eq "svg") {
	set terminal svg size 1100,460 dynamic enhanced font "Helvetica,13" background rgb "white"
} else {
	set terminal pngcairo size 1100,460 enhanced font "Helvetica,11" background rgb "white"
}
set output out

set style line 1 lc rgb "#d62728" lw 2 pt 7 ps 1.0
set style line 2 lc rgb "#1f77b4" lw 2 pt 5 ps 1.0
set style line 3 lc rgb "#2ca02c" lw 2 pt 9 ps 1.2
set style line 4 lc rgb "#9467bd" lw 2 pt 11 ps 1.2
set style line 5 lc rgb "#8c564b" lw 2 pt 13 ps 1.2
set style line 6 lc rgb "#e377c2" lw 2 pt 3 ps 1.2
set style line 7 lc rgb "#7f7f7f" lw 2 pt 1 ps 1.2
set style line 8 lc rgb "#bcbd22" lw 2 pt 2 ps 1.2
set grid lc rgb "#dddddd"
set key outside below center horizontal
set xrange [0:*]
set xlabel sprintf("Achieved throughput (%s)", xunit)

# hollow counterparts of the filled point types above
open(i) = word("6 4 8 10 12 3 1 2", i) + 0
# columns 5-9 are optional (older data files): unflagged, no bars
has_flags = 0
stats data using 0 nooutput name "C"
if (C_records > 0) { stats data using (valid(5) ? 1 : 0) nooutput name "F"; has_flags = (F_max > 0) }
# the flag of the panel's number (column c), else the point's (column 5)
flag(c) = has_flags ? (valid(c) ? column(c) : column(5)) : 0
lo(c, v) = has_flags ? column(c) : v
filled(y, c) = flag(c) > 0 ? NaN : y
hollow(y, c) = flag(c) > 0 ? y : NaN

set multiplot layout 1,2 title title font ",14"

set title "Median latency"
set ylabel "Median latency (µs)"
if (P50_min > 0 && P50_max > 10 * P50_min) { set logscale y 10; set format y "10^{%L}"; set yrange [*:*] } else { unset logscale y; set format y "%g"; set yrange [0:*] }
plot for [i=1:nsys] data index (i-1) using ($1/xs):($2/1000.0) with lines ls i title word(systems, i) noenhanced, \
     for [i=1:nsys] data index (i-1) using ($1/xs):($2/1000.0):(lo(6, $2)/1000.0):(lo(7, $2)/1000.0) with yerrorbars ls i pt 0 notitle, \
     for [i=1:nsys] data index (i-1) using ($1/xs):(filled($2/1000.0, 10)) with points ls i notitle, \
     for [i=1:nsys] data index (i-1) using ($1/xs):(hollow($2/1000.0, 10)) with points ls i pt open(i) notitle, \
     keyentry with points pt 6 lc rgb "#555555" title "hollow: a self-check warned about this number"

set title "P99 latency"
set ylabel "P99 latency (µs)"
if (P99_min > 0 && P99_max > 10 * P99_min) { set logscale y 10; set format y "10^{%L}"; set yrange [*:*] } else { unset logscale y; set format y "%g"; set yrange [0:*] }
plot for [i=1:nsys] data index (i-1) using ($1/xs):($3/1000.0) with lines ls i title word(systems, i) noenhanced, \
     for [i=1:nsys] data index (i-1) using ($1/xs):($3/1000.0):(lo(8, $3)/1000.0):(lo(9, $3)/1000.0) with yerrorbars ls i pt 0 notitle, \
     for [i=1:nsys] data index (i-1) using ($1/xs):(filled($3/1000.0, 11)) with points ls i notitle, \
     for [i=1:nsys] data index (i-1) using ($1/xs):(hollow($3/1000.0, 11)) with points ls i pt open(i) notitle, \
     keyentry with points pt 6 lc rgb "#555555" title "hollow: a self-check warned about this number"

unset multiplot
set output
