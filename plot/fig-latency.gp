# fig-latency.gp - four latency-vs-throughput panels in one figure, the
# layout of the paper's Figs 7/8 (one panel per Twitter cluster) and 9/10
# (one per YCSB put ratio).
#
# usage: gnuplot -c fig-latency.gp PARAMS
#
# PARAMS (written by `oqb figures`) is gnuplot text that sets: out (the
# .svg or .png to write), figtitle, col (2: median, 3: P99), ylabel, and
# for k = 1..4: data<k> (a data file as `oqb plot` writes it: one block
# per system, columns achieved_ops p50_ns p99_ns offered_ops flagged
# p50_min p50_max p99_min p99_max [p50_flagged p99_flagged]), ptitle<k>,
# names<k> (the systems in block order; empty: the panel says "not run")
# and peak<k> (the achieved throughput at the run's peak, drawn dashed;
# 0: none), and the panel's axes (harness/figures/ltscale.h) with the
# suffix k: ylo<k>, yhi<k>, ydhi<k>, ysat<k>, ytics<k>, xlog<k>, xs<k>,
# xunit<k>, xlo<k>, xhi<k>, xtics<k>.  The latency axis is logarithmic and
# its range comes from the points below saturation; a saturated point
# (column 12) above it is drawn as a cross in a band at the top, so it
# never squeezes the rest onto one line.  A point is hollow when a
# self-check warned about the panel's number; bars span the trials' range.

if (ARGC < 1) {
	print "usage: gnuplot -c fig-latency.gp PARAMS"
	exit status 2
}
load ARG1

ext = out[strlen(out)-2:strlen(out)]
if (ext eq "png") {
	set terminal pngcairo size 1300,950 enhanced font "Helvetica,11" background rgb "white"
} else {
	set terminal svg size 1300,950 fixed enhanced font "Helvetica,12" background rgb "white"
}
set output out

set style line 1 lc rgb "#d62728" lw 2 pt 7 ps 0.9
set style line 2 lc rgb "#1f77b4" lw 2 pt 5 ps 0.9
set style line 3 lc rgb "#2ca02c" lw 2 pt 9 ps 1.1
set style line 4 lc rgb "#9467bd" lw 2 pt 11 ps 1.1
set style line 5 lc rgb "#8c564b" lw 2 pt 13 ps 1.1
set style line 6 lc rgb "#e377c2" lw 2 pt 3 ps 1.1
set grid lc rgb "#dddddd"
set key top left noenhanced
open(i) = word("6 4 8 10 12 3", i) + 0
# the flag of the panel's number: column 10 (p50) or 11 (p99) where the
# data has them, else the point's (column 5); column 12: saturated
qflag(c) = valid(c) ? column(c) : column(5)
sat(x) = valid(12) ? column(12) : 0
below(y) = sat(0) > 0 ? NaN : y
filled(f, y) = (sat(0) > 0 || f > 0) ? NaN : y
hollow(f, y) = (sat(0) == 0 && f > 0) ? y : NaN
satpt(y, dhi, ys) = sat(0) > 0 ? ((ys > 0 && y > dhi) ? ys : y) : NaN
drawn(y, dhi, ys) = (sat(0) > 0 && ys > 0 && y > dhi) ? ys : y

set multiplot layout 2,2 title figtitle noenhanced font ",14"
do for [k = 1:4] {
	d = value(sprintf("data%d", k))
	nm = value(sprintf("names%d", k))
	pk = value(sprintf("peak%d", k))
	set title value(sprintf("ptitle%d", k)) noenhanced
	unset label 1
	unset arrow 1
	unset logscale y
	unset logscale x
	set format y "%g"
	set format x "%g"
	set xtics autofreq
	set ytics autofreq
	if (strlen(nm) == 0) {
		set label 1 "not run" at graph 0.5, 0.5 center font ",18" tc rgb "#888888"
		set xlabel "Achieved throughput"
		set ylabel ylabel
		set xrange [0:1]
		set yrange [0:1]
		plot NaN notitle
		unset label 1
	} else {
		nsys = words(nm)
		set autoscale
		xs = value(sprintf("xs%d", k))
		dhi = value(sprintf("ydhi%d", k))
		ys = value(sprintf("ysat%d", k))
		yt = value(sprintf("ytics%d", k))
		xt = value(sprintf("xtics%d", k))
		xl = value(sprintf("xlog%d", k))
		set xlabel sprintf("Achieved throughput (%s%s)", value(sprintf("xunit%d", k)), xl ? ", log scale" : "")
		set ylabel ylabel.", log scale"
		set logscale y 10
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
		unset arrow 2
		unset label 2
		if (ys > 0) {
			set arrow 2 from graph 0, first sqrt(dhi * ys) to graph 1, first sqrt(dhi * ys) nohead dt 3 lc rgb "#888888"
			set label 2 "saturated: latency off the scale" at graph 0.5, first ys * 1.12 center font ",9" tc rgb "#666666"
		}
		if (pk > 0) {
			set arrow 1 from pk / xs, graph 0 to pk / xs, graph 1 nohead dt 2 lc rgb "#555555"
		}
		plot for [i=1:nsys] d index (i-1) using ($1/xs):(drawn(column(col)/1000.0, dhi, ys)) with lines ls i lw 1 dt 2 notitle, \
		     for [i=1:nsys] d index (i-1) using ($1/xs):(below(column(col)/1000.0)) with lines ls i title word(nm, i), \
		     for [i=1:nsys] d index (i-1) using ($1/xs):(below(column(col)/1000.0)):(column(col == 2 ? 6 : 8)/1000.0):(column(col == 2 ? 7 : 9)/1000.0) with yerrorbars ls i pt 0 notitle, \
		     for [i=1:nsys] d index (i-1) using ($1/xs):(filled(qflag(col == 2 ? 10 : 11), column(col)/1000.0)) with points ls i notitle, \
		     for [i=1:nsys] d index (i-1) using ($1/xs):(hollow(qflag(col == 2 ? 10 : 11), column(col)/1000.0)) with points ls i pt open(i) notitle, \
		     for [i=1:nsys] d index (i-1) using ($1/xs):(satpt(column(col)/1000.0, dhi, ys)) with points ls i pt 2 ps 1.5 notitle, \
		     keyentry with points pt 2 ps 1.5 lc rgb "#555555" title "x: saturated"
	}
}
unset multiplot
set output
