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
# 0: none).  A point is hollow when a self-check warned about the panel's
# number; bars span the trials' range.  A latency axis turns
# logarithmic when it spans more than 10x.

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
filled(f, y) = f > 0 ? NaN : y
hollow(f, y) = f > 0 ? y : NaN
# the flag of the panel's number: column 10 (p50) or 11 (p99) where the
# data has them, else the point's (column 5)
qflag(c) = valid(c) ? column(c) : column(5)

set multiplot layout 2,2 title figtitle noenhanced font ",14"
do for [k = 1:4] {
	d = value(sprintf("data%d", k))
	nm = value(sprintf("names%d", k))
	pk = value(sprintf("peak%d", k))
	set title value(sprintf("ptitle%d", k)) noenhanced
	unset label 1
	unset arrow 1
	unset logscale y
	set format y "%g"
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
		stats d using 1 nooutput name "X"
		stats d using (column(col) / 1000.0) nooutput name "Y"
		if (X_max >= 1e6) { xs = 1e6; xunit = "Mops/s" } else { xs = 1e3; xunit = "Kops/s" }
		set xlabel sprintf("Achieved throughput (%s)", xunit)
		set ylabel ylabel
		set xrange [0:*]
		if (Y_min > 0 && Y_max > 10 * Y_min) {
			set logscale y 10
			set format y "10^{%L}"
			set yrange [*:*]
		} else {
			set yrange [0:*]
		}
		if (pk > 0) {
			set arrow 1 from pk / xs, graph 0 to pk / xs, graph 1 nohead dt 2 lc rgb "#555555"
		}
		plot for [i=1:nsys] d index (i-1) using ($1/xs):(column(col)/1000.0) with lines ls i title word(nm, i), \
		     for [i=1:nsys] d index (i-1) using ($1/xs):(column(col)/1000.0):(column(col == 2 ? 6 : 8)/1000.0):(column(col == 2 ? 7 : 9)/1000.0) with yerrorbars ls i pt 0 notitle, \
		     for [i=1:nsys] d index (i-1) using ($1/xs):(filled(qflag(col == 2 ? 10 : 11), column(col)/1000.0)) with points ls i notitle, \
		     for [i=1:nsys] d index (i-1) using ($1/xs):(hollow(qflag(col == 2 ? 10 : 11), column(col)/1000.0)) with points ls i pt open(i) notitle
	}
}
unset multiplot
set output
