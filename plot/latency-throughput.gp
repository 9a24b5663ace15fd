# latency-throughput.gp - median and P99 latency vs achieved throughput,
# one line per system, side by side (the shape of the paper's Figs 7/8).
#
# usage: gnuplot -c latency-throughput.gp DATA OUT.svg|OUT.png "SYS1 SYS2 ..." [TITLE [AXES]]
#
# DATA holds one block per system, in the order of the names, blocks
# separated by two blank lines; columns: achieved_ops p50_ns p99_ns
# [offered_ops [flagged p50_min p50_max p99_min p99_max [p50_flagged
# p99_flagged [saturated [sys_p99_ns sys_p99_flagged]]]]].  The P99
# panel draws both tails: the raw P99 (every request, what the paper
# reports) as a solid line, and the system's P99 (the requests no host
# stall touched, docs/trust.md "Host stalls, attributed") as a dotted line
# with crosses, hollow squares where a check warned about it; "?" marks a
# point without it.  A point is drawn hollow in a panel when a
# self-check warned about that panel's number (docs/trust.md: a P99 whose
# trials disagree leaves a median they agree on solid; without columns
# 10-11, any warning makes it hollow in both); with repeated trials a bar
# spans the trials' lowest to highest value.  `oqb plot RUN_DIR` writes
# DATA and AXES from run.json.  The output format follows the file
# extension.
#
# AXES (gnuplot text, harness/figures/ltscale.h) sets each panel's axes,
# suffix 50 for the median and 99 for P99: the latency axis is
# logarithmic, so a 0.3 us median and a 60 ms saturated one both read, and
# its range comes from the points below saturation; a saturated point
# (column 12) above that range is drawn as a cross in a band at the top,
# above a dotted line, and never sets the scale for the rest.  The
# throughput axis is logarithmic when the loads span more than 20x.
# Without AXES: log latency autoscaled, linear throughput.

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
if (ARGC >= 5) {
	load ARG5
} else {
	# the axes without oqb plot's AXES file: log latency, autoscaled
	xs = (X_max >= 1e6) ? 1e6 : 1e3
	xunit = (X_max >= 1e6) ? "Mops/s" : "Kops/s"
	ylo50 = 0; yhi50 = 0; ydhi50 = 1e300; ysat50 = 0; ytics50 = ""; xlog50 = 0
	ylo99 = 0; yhi99 = 0; ydhi99 = 1e300; ysat99 = 0; ytics99 = ""; xlog99 = 0
	xs50 = xs; xs99 = xs; xunit50 = xunit; xunit99 = xunit; xtics50 = ""; xtics99 = ""
}

ext = out[strlen(out)-2:strlen(out)]
if (ext eq "svg") {
	set terminal svg size 1100,480 dynamic enhanced font "Helvetica,13" background rgb "white"
} else {
	set terminal pngcairo size 1100,480 enhanced font "Helvetica,11" background rgb "white"
}
set output out

set style line 1 lc rgb "#d62728" lw 2 pt 7 ps 1.0
set style line 2 lc rgb "#1f77b4" lw 2 pt 5 ps 1.0
set style line 3 lc rgb "#2ca02c" lw 2 pt 9 ps 1.2
set style line 4 lc rgb "#9467bd" lw 2 pt 11 ps 1.2
set style line 5 lc rgb "#8c564b" lw 2 pt 13 ps 1.2
set style line 6 lc rgb "#e377c2" lw 2 pt 3 ps 1.2
set style line 7 lc rgb "#7f7f7f" lw 2 pt 1 ps 1.2
set style line 8 lc rgb "#bcbd22" lw 2 pt 4 ps 1.2
set grid lc rgb "#dddddd"
set key outside below center horizontal

set datafile missing "?"
# hollow counterparts of the filled point types above
open(i) = word("6 4 8 10 12 3 1 4", i) + 0
# columns 5-12 are optional (older data files): unflagged, no bars, not saturated
has_flags = 0
has_sat = 0
has_sys = 0
stats data using 0 nooutput name "C"
if (C_records > 0) {
	stats data using (valid(5) ? 1 : 0) nooutput name "F"; has_flags = (F_max > 0)
	stats data using (valid(12) ? 1 : 0) nooutput name "S"; has_sat = (S_max > 0)
	stats data using (valid(13) ? 1 : 0) nooutput name "Y"; has_sys = (Y_max > 0)
}
# the system's P99 (column 13) in the P99 panel, below saturation; its
# flag in column 14
sysv(q) = (q eq "99" && has_sys && valid(13) && sat(0) == 0) ? column(13) / 1000.0 : NaN
sysok(q) = (valid(14) && column(14) == 0) ? sysv(q) : NaN
sysbad(q) = (valid(14) && column(14) > 0) ? sysv(q) : NaN
# the flag of the panel's number (column c), else the point's (column 5)
flag(c) = has_flags ? (valid(c) ? column(c) : column(5)) : 0
sat(x) = has_sat ? column(12) : 0
lo(c, v) = has_flags ? column(c) : v
# below saturation: filled, hollow (a check warned), the bar; saturated:
# drawn at its value, or at ysat when it is above the range
below(y) = sat(0) > 0 ? NaN : y
filled(y, c) = (sat(0) > 0 || flag(c) > 0) ? NaN : y
hollow(y, c) = (sat(0) == 0 && flag(c) > 0) ? y : NaN
satpt(y, dhi, ys) = sat(0) > 0 ? ((ys > 0 && y > dhi) ? ys : y) : NaN
drawn(y, dhi, ys) = (sat(0) > 0 && ys > 0 && y > dhi) ? ys : y

set multiplot layout 1,2 title title font ",14"

do for [q in "50 99"] {
	c = (q eq "50") ? 2 : 3
	clo = (q eq "50") ? 6 : 8
	chi = (q eq "50") ? 7 : 9
	cf = (q eq "50") ? 10 : 11
	pxs = value("xs".q)
	dhi = value("ydhi".q)
	ys = value("ysat".q)
	set title ((q eq "50") ? "Median latency" : "P99 latency")
	set ylabel ((q eq "50") ? "Median latency (µs, log scale)" : "P99 latency (µs, log scale)")
	set xlabel sprintf("Achieved throughput (%s%s)", value("xunit".q), value("xlog".q) ? ", log scale" : "")
	set logscale y 10
	set format y "%g"
	if (value("yhi".q) > 0) { set yrange [value("ylo".q):value("yhi".q)] } else { set yrange [*:*] }
	if (strlen(value("ytics".q)) > 0) { eval "set ytics ".value("ytics".q) } else { set ytics autofreq }
	set mytics default
	if (value("xlog".q)) {
		set logscale x 10
		set xrange [value("xlo".q):value("xhi".q)]
		set format x "%g"
		if (strlen(value("xtics".q)) > 0) { eval "set xtics ".value("xtics".q) } else { set xtics autofreq }
	} else {
		unset logscale x
		set xrange [0:*]
		set xtics autofreq
	}
	unset arrow 1
	unset label 1
	if (ys > 0) {
		set arrow 1 from graph 0, first sqrt(dhi * ys) to graph 1, first sqrt(dhi * ys) nohead dt 3 lc rgb "#888888"
		set label 1 "saturated: latency off the scale" at graph 0.02, first ys * 1.12 left font ",9" tc rgb "#666666"
	}
	plot for [i=1:nsys] data index (i-1) using ($1/pxs):(drawn(column(c)/1000.0, dhi, ys)) with lines ls i lw 1 dt 2 notitle, \
	     for [i=1:nsys] data index (i-1) using ($1/pxs):(below(column(c)/1000.0)) with lines ls i title word(systems, i) noenhanced, \
	     for [i=1:nsys] data index (i-1) using ($1/pxs):(below(column(c)/1000.0)):(lo(clo, column(c))/1000.0):(lo(chi, column(c))/1000.0) with yerrorbars ls i pt 0 notitle, \
	     for [i=1:nsys] data index (i-1) using ($1/pxs):(filled(column(c)/1000.0, cf)) with points ls i notitle, \
	     for [i=1:nsys] data index (i-1) using ($1/pxs):(hollow(column(c)/1000.0, cf)) with points ls i pt open(i) notitle, \
	     for [i=1:nsys] data index (i-1) using ($1/pxs):(satpt(column(c)/1000.0, dhi, ys)) with points ls i pt 2 ps 1.6 notitle, \
	     for [i=1:nsys] data index (i-1) using ($1/pxs):(sysv(q)) with lines ls i lw 1.5 dt 3 notitle, \
	     for [i=1:nsys] data index (i-1) using ($1/pxs):(sysok(q)) with points ls i pt 1 ps 1.2 notitle, \
	     for [i=1:nsys] data index (i-1) using ($1/pxs):(sysbad(q)) with points ls i pt 4 ps 1.0 notitle, \
	     keyentry with points pt 6 lc rgb "#555555" title "hollow: a self-check warned about this number", \
	     keyentry with linespoints dt 3 pt 1 lc rgb "#555555" title (q eq "99" && has_sys ? "dotted, +: system P99 (no host stall touched)" : ""), \
	     keyentry with points pt 2 ps 1.6 lc rgb "#555555" title "x: saturated"
}

unset multiplot
set output
