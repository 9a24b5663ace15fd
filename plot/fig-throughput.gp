# fig-throughput.gp - throughput panels in one figure: the paper's Fig 6
# (throughput vs client machines, here requests in flight, four panels)
# and Fig 11 (throughput vs value size, one panel).
#
# usage: gnuplot -c fig-throughput.gp PARAMS
#
# PARAMS (written by `oqb figures`) is gnuplot text that sets: out (the
# .svg or .png), figtitle, rows, cols, npanel, and for k = 1..npanel:
# data<k> (one block per series, columns x y flagged), ptitle<k>,
# names<k> (the series in block order; empty: the panel says "not run"),
# xlabel<k>, ylabel<k> and logx<k> (1: a base-2 x axis when x spans more
# than 10x).  Flagged points are hollow.

if (ARGC < 1) {
	print "usage: gnuplot -c fig-throughput.gp PARAMS"
	exit status 2
}
load ARG1

ext = out[strlen(out)-2:strlen(out)]
w = (cols > 1) ? 1300 : 800
h = (rows > 1) ? 950 : 520
if (ext eq "png") {
	set terminal pngcairo size w,h enhanced font "Helvetica,11" background rgb "white"
} else {
	set terminal svg size w,h fixed enhanced font "Helvetica,12" background rgb "white"
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

set multiplot layout rows,cols title figtitle noenhanced font ",14"
do for [k = 1:npanel] {
	d = value(sprintf("data%d", k))
	nm = value(sprintf("names%d", k))
	set title value(sprintf("ptitle%d", k)) noenhanced
	set xlabel value(sprintf("xlabel%d", k))
	set ylabel value(sprintf("ylabel%d", k))
	unset label 1
	unset logscale x
	if (strlen(nm) == 0) {
		set label 1 "not run" at graph 0.5, 0.5 center font ",18" tc rgb "#888888"
		set xrange [0:1]
		set yrange [0:1]
		plot NaN notitle
		unset label 1
	} else {
		nser = words(nm)
		set autoscale
		stats d using 1 nooutput name "X"
		if (value(sprintf("logx%d", k)) && X_min > 0 && X_max > 10 * X_min) {
			set logscale x 2
			set xrange [X_min / 1.3 : X_max * 1.3]
		} else {
			pad = (X_max > X_min) ? (X_max - X_min) * 0.08 : 1
			set xrange [X_min - pad : X_max + pad]
		}
		set yrange [0:*]
		plot for [i=1:nser] d index (i-1) using 1:2 with lines ls i title word(nm, i), \
		     for [i=1:nser] d index (i-1) using 1:(filled($3, $2)) with points ls i notitle, \
		     for [i=1:nser] d index (i-1) using 1:(hollow($3, $2)) with points ls i pt open(i) notitle
	}
}
unset multiplot
set output
