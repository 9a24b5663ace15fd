# fig-faithful.gp - the faithfulness figure of `oqb figures`: the cache
# against memcached on Twitter clusters 12 and 31, two rows of three
# panels (median latency, P99 latency, median service time per request,
# each against achieved throughput).
#
# usage: gnuplot -c fig-faithful.gp PARAMS
#
# PARAMS (written by `oqb figures`, harness/figures/figfaith.c) is gnuplot
# text that sets: out (the .svg or .png to write), figtitle, and for
# k = 1..6: data<k> (one block per series, columns x_kops y_us flagged
# y_lo y_hi), ptitle<k>, names<k> (the series in block order; empty: the
# panel says "not run"), styles<k> (per series its line style: 1-5 solid,
# the cache, 11-15 dashed, memcached; the last digit is the system's
# colour), ylabel<k>.  The key is in each row's first panel.  A point is hollow when flagged; bars
# span [y_lo, y_hi].  A y axis turns logarithmic when it spans more
# than 10x.

if (ARGC < 1) {
	print "usage: gnuplot -c fig-faithful.gp PARAMS"
	exit status 2
}
load ARG1

ext = out[strlen(out)-2:strlen(out)]
if (ext eq "png") {
	set terminal pngcairo size 1500,950 enhanced font "Helvetica,11" background rgb "white"
} else {
	set terminal svg size 1500,950 fixed enhanced font "Helvetica,12" background rgb "white"
}
set output out

set style line 1 lc rgb "#d62728" lw 2 pt 7 ps 0.9
set style line 2 lc rgb "#1f77b4" lw 2 pt 5 ps 0.9
set style line 3 lc rgb "#2ca02c" lw 2 pt 9 ps 1.1
set style line 4 lc rgb "#9467bd" lw 2 pt 11 ps 1.1
set style line 5 lc rgb "#8c564b" lw 2 pt 13 ps 1.1
set style line 11 lc rgb "#d62728" lw 2 dt 2 pt 7 ps 0.9
set style line 12 lc rgb "#1f77b4" lw 2 dt 2 pt 5 ps 0.9
set style line 13 lc rgb "#2ca02c" lw 2 dt 2 pt 9 ps 1.1
set style line 14 lc rgb "#9467bd" lw 2 dt 2 pt 11 ps 1.1
set style line 15 lc rgb "#8c564b" lw 2 dt 2 pt 13 ps 1.1
set grid lc rgb "#dddddd"
set key top left noenhanced font ",10"
open(s) = word("6 4 8 10 12", s % 10) + 0
filled(f, y) = f > 0 ? NaN : y
hollow(f, y) = f > 0 ? y : NaN

set multiplot layout 2,3 title figtitle noenhanced font ",14"
do for [k = 1:6] {
	d = value(sprintf("data%d", k))
	nm = value(sprintf("names%d", k))
	st = value(sprintf("styles%d", k))
	set title value(sprintf("ptitle%d", k)) noenhanced font ",10"
	set xlabel "Achieved throughput (Kops/s)"
	set ylabel value(sprintf("ylabel%d", k))
	unset label 1
	unset logscale y
	set format y "%g"
	if (strlen(nm) == 0) {
		set label 1 "not run" at graph 0.5, 0.5 center font ",18" tc rgb "#888888"
		set xrange [0:1]
		set yrange [0:1]
		plot NaN notitle
		unset label 1
	} else {
		nser = words(nm)
		# one key per row, in its first panel
		if (k % 3 == 1) { set key top left noenhanced font ",10" } else { unset key }
		set autoscale
		stats d using 2 nooutput name "Y"
		set xrange [0:*]
		if (Y_min > 0 && Y_max > 10 * Y_min) {
			set logscale y 10
			set yrange [*:*]
		} else {
			set yrange [0:*]
		}
		plot for [i=1:nser] d index (i-1) using 1:2 with lines ls (word(st, i) + 0) title word(nm, i), \
		     for [i=1:nser] d index (i-1) using 1:2:4:5 with yerrorbars ls (word(st, i) + 0) pt 0 notitle, \
		     for [i=1:nser] d index (i-1) using 1:(filled($3, $2)) with points ls (word(st, i) + 0) notitle, \
		     for [i=1:nser] d index (i-1) using 1:(hollow($3, $2)) with points ls (word(st, i) + 0) pt open(word(st, i) + 0) notitle
	}
}
unset multiplot
set output
