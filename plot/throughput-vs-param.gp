# throughput-vs-param.gp - peak achieved throughput against a swept config
# value, one line per system (the shape of the paper's Fig 11, throughput
# vs value size).
#
# usage: gnuplot -c throughput-vs-param.gp DATA OUT.svg|OUT.png "SYS1 SYS2 ..." [TITLE [KEY [NUMERIC]]]
#
# DATA holds one block per system, in the order of the names, blocks
# separated by two blank lines; columns: x peak_achieved_ops label.  x is
# the swept value when NUMERIC is 1 (then the axis turns logarithmic, base
# 2, when the values span more than 10x, as value sizes that double do),
# else the value's index with the label as its tick.  KEY names the swept
# config key for the x axis.  `oqb plot RUN_DIR` writes DATA from run.json
# for runs with a "sweep".  The output format follows the file extension.

if (ARGC < 3) {
	print "usage: gnuplot -c throughput-vs-param.gp DATA OUT.svg|OUT.png \"SYS1 SYS2 ...\" [TITLE [KEY [NUMERIC]]]"
	exit status 2
}
data = ARG1
out = ARG2
systems = ARG3
title = (ARGC >= 4) ? ARG4 : ""
key = (ARGC >= 5) ? ARG5 : "swept value"
numeric = (ARGC >= 6) ? (ARG6 eq "1") : 1
nsys = words(systems)

stats data using 1 nooutput name "X"
stats data using 2 nooutput name "Y"

if (Y_max >= 1e6) { ys = 1e6; yunit = "Mops/s" } else { ys = 1e3; yunit = "Kops/s" }

ext = out[strlen(out)-2:strlen(out)]
if (ext eq "svg") {
	set terminal svg size 760,480 dynamic enhanced font "Helvetica,13" background rgb "white"
} else {
	set terminal pngcairo size 760,480 enhanced font "Helvetica,11" background rgb "white"
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
set key outside below center horizontal noenhanced
set title title noenhanced font ",14"
set xlabel key noenhanced
set ylabel sprintf("Peak achieved throughput (%s)", yunit)
set yrange [0:*]

# Ticks at the swept values, labelled with them.
if (numeric && X_min > 0 && X_max > 10 * X_min) {
	set logscale x 2
	set xrange [X_min / 1.3 : X_max * 1.3]
} else {
	unset logscale x
	if (X_max > X_min) {
		pad = (X_max - X_min) * 0.08
	} else {
		pad = 1
	}
	set xrange [X_min - pad : X_max + pad]
}

plot for [i=1:nsys] data index (i-1) using 1:($2/ys):xtic(3) with linespoints ls i title word(systems, i)

set output
