# fig-onesided.gp - the one-sided designs beside OQ (issue 52): median and
# P99 latency against achieved throughput, side by side, one line per
# system, each titled with the checker's verdict over its points.
#
# usage: gnuplot -c fig-onesided.gp PARAMS
#
# PARAMS (written by `oqb figures`, harness/figures/figonesided.c) is
# gnuplot text that sets: out (.svg or .png), data (one block per system,
# the columns of fig-latency.gp's data), figtitle, nsys, title<i> for
# i = 1..nsys ("write1: 12 violations found"), and the axes of panel 1
# (median) and 2 (P99) with those suffixes (harness/figures/ltscale.h).
# As in fig-latency.gp: log latency whose range the points below
# saturation set, saturated points as crosses in a band at the top,
# hollow where a self-check warned about the number drawn.

if (ARGC < 1) {
	print "usage: gnuplot -c fig-onesided.gp PARAMS"
	exit status 2
}
load ARG1

ext = out[strlen(out)-2:strlen(out)]
if (ext eq "png") {
	set terminal pngcairo size 1300,620 enhanced font "Helvetica,11" background rgb "white"
} else {
	set terminal svg size 1300,620 fixed enhanced font "Helvetica,12" background rgb "white"
}
set output out

set style line 1 lc rgb "#d62728" lw 2 pt 7 ps 0.9
set style line 2 lc rgb "#1f77b4" lw 2 pt 5 ps 0.9
set style line 3 lc rgb "#2ca02c" lw 2 pt 9 ps 1.1
set style line 4 lc rgb "#9467bd" lw 2 pt 11 ps 1.1
set style line 5 lc rgb "#8c564b" lw 2 pt 13 ps 1.1
set style line 6 lc rgb "#e377c2" lw 2 pt 3 ps 1.1
set grid lc rgb "#dddddd"
set key below noenhanced
open(i) = word("6 4 8 10 12 3", i) + 0
qflag(c) = valid(c) ? column(c) : column(5)
sat(x) = valid(12) ? column(12) : 0
below(y) = sat(0) > 0 ? NaN : y
filled(f, y) = (sat(0) > 0 || f > 0) ? NaN : y
hollow(f, y) = (sat(0) == 0 && f > 0) ? y : NaN
satpt(y, dhi, ys) = sat(0) > 0 ? ((ys > 0 && y > dhi) ? ys : y) : NaN
drawn(y, dhi, ys) = (sat(0) > 0 && ys > 0 && y > dhi) ? ys : y

set multiplot layout 1,2 title figtitle noenhanced font ",13"
do for [k = 1:2] {
	col = k + 1
	set title (k == 1 ? "(a) median latency, all requests" : "(b) P99 latency, all requests") noenhanced
	unset arrow 2
	unset label 2
	xs = value(sprintf("xs%d", k))
	dhi = value(sprintf("ydhi%d", k))
	ys = value(sprintf("ysat%d", k))
	yt = value(sprintf("ytics%d", k))
	xt = value(sprintf("xtics%d", k))
	xl = value(sprintf("xlog%d", k))
	set xlabel sprintf("Achieved throughput (%s%s)", value(sprintf("xunit%d", k)), xl ? ", log scale" : "")
	set ylabel (k == 1 ? "Median" : "P99")." latency (µs), log scale"
	set logscale y 10
	set format y "%g"
	set yrange [value(sprintf("ylo%d", k)):value(sprintf("yhi%d", k))]
	if (strlen(yt) > 0) { eval "set ytics ".yt } else { set ytics autofreq }
	if (xl) {
		set logscale x 10
		set xrange [value(sprintf("xlo%d", k)):value(sprintf("xhi%d", k))]
		if (strlen(xt) > 0) { eval "set xtics ".xt } else { set xtics autofreq }
	} else {
		unset logscale x
		set xrange [0:*]
		set xtics autofreq
	}
	if (ys > 0) {
		set arrow 2 from graph 0, first sqrt(dhi * ys) to graph 1, first sqrt(dhi * ys) nohead dt 3 lc rgb "#888888"
		set label 2 "saturated: latency off the scale" at graph 0.5, first ys * 1.12 center font ",9" tc rgb "#666666"
	}
	plot for [i=1:nsys] data index (i-1) using ($1/xs):(drawn(column(col)/1000.0, dhi, ys)) with lines ls i lw 1 dt 2 notitle, \
	     for [i=1:nsys] data index (i-1) using ($1/xs):(below(column(col)/1000.0)) with lines ls i title value(sprintf("title%d", i)), \
	     for [i=1:nsys] data index (i-1) using ($1/xs):(filled(qflag(col == 2 ? 10 : 11), column(col)/1000.0)) with points ls i notitle, \
	     for [i=1:nsys] data index (i-1) using ($1/xs):(hollow(qflag(col == 2 ? 10 : 11), column(col)/1000.0)) with points ls i pt open(i) notitle, \
	     for [i=1:nsys] data index (i-1) using ($1/xs):(satpt(column(col)/1000.0, dhi, ys)) with points ls i pt 2 ps 1.5 notitle, \
	     keyentry with points pt 2 ps 1.5 lc rgb "#555555" title "x: saturated"
}
unset multiplot
set output
