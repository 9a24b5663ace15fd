# history.gp - one metric of one point over the runs of a performance
# history, with the change points `oqb history detect` finds marked and
# the mean of every segment between them drawn as a step line.
#
# usage: gnuplot -c history.gp DATA OUT.svg|OUT.png [TITLE [YLABEL [SCALE]]]
#
# DATA (written by `oqb history plot`): one row per run, in history order;
# columns: run value ci_lo ci_hi commit change segment_mean.  ci_lo/ci_hi
# are the within-run 95 % CI of a percentile, or the trials' lowest and
# highest value of a throughput; change is 1 on the first run after a
# change point.  Every value is divided by SCALE (1000: ns to us).  The
# x axis is the run's place in the series, labelled with commits.

if (ARGC < 2) {
	print "usage: gnuplot -c history.gp DATA OUT.svg|OUT.png [TITLE [YLABEL [SCALE]]]"
	exit status 2
}
data = ARG1
out = ARG2
title = (ARGC >= 3) ? ARG3 : ""
ylabel = (ARGC >= 4) ? ARG4 : "value"
scale = (ARGC >= 5) ? real(ARG5) : 1.0

stats data using 1 nooutput name "R"
nruns = R_max + 1
every = (nruns > 24) ? int(nruns / 12) : 1

ext = out[strlen(out)-2:strlen(out)]
if (ext eq "svg") {
	set terminal svg size 900,480 dynamic enhanced font "Helvetica,12" background rgb "white"
} else {
	set terminal pngcairo size 900,480 enhanced font "Helvetica,10" background rgb "white"
}
set output out

set title title noenhanced
set xlabel "run (commit)"
set ylabel ylabel
set grid ytics lc rgb "#dddddd"
set key top left opaque
set xrange [-0.5:nruns - 0.5]
set xtics rotate by 45 right font ",9"
set style line 1 lc rgb "#1f77b4" lw 1 pt 7 ps 0.6
set style line 2 lc rgb "#888888" lw 2
set style line 3 lc rgb "#d62728" lw 1.5 dt 2

# Change points: dashed vertical lines half a run before the first run of
# each new level.
do for [i = 0:int(nruns) - 1] {
	stats data every ::i::i using 6 nooutput name "C"
	if (C_max > 0) {
		set arrow from i - 0.5, graph 0 to i - 0.5, graph 1 nohead ls 3
	}
}

plot data using 1:($2/scale):($3/scale):($4/scale) with yerrorbars ls 1 title "run (95% CI or trial range)", \
     ''   using 1:($7/scale) with steps ls 2 title "segment mean", \
     ''   using 1:($6 > 0 ? $2/scale : 1/0):xtic(int($1) % every == 0 ? strcol(5) : "") with points lc rgb "#d62728" pt 9 ps 1.6 title "change point"
