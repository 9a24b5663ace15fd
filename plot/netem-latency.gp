# netem-latency.gp - the latency cost of packet loss on the wire: median
# and P99 latency of oq's sets (committed on the RC ACK) and gets
# (committed on the response) against the share of RoCEv2 packets netem
# dropped (tests/verbs/run-netem.sh, docs/verbs-vm.md).
#
# usage: gnuplot -c netem-latency.gp DATA OUT.png|OUT.svg [TITLE]
#
# DATA (plot/netem-latency.sh writes it from the runs' run.json and
# netem.json): one line per run, sorted by loss; columns: loss_pct
# set_p50_us set_p99_us get_p50_us get_p99_us.  The loss rates are drawn
# evenly spaced and labelled (0, 0.1, 1, 5 are not a scale a log axis
# can show with 0); the latency axis is logarithmic.

if (ARGC < 2) {
	print "usage: gnuplot -c netem-latency.gp DATA OUT.png|OUT.svg [TITLE]"
	exit status 2
}
data = ARG1
out = ARG2
title = (ARGC >= 3) ? ARG3 : "oq on Soft-RoCE between two VMs: latency under packet loss"

ext = out[strlen(out)-2:strlen(out)]
if (ext eq "svg") {
	set terminal svg size 720,460 dynamic enhanced font "Helvetica,12" background rgb "white"
} else {
	set terminal pngcairo size 720,460 enhanced font "Helvetica,11" background rgb "white"
}
set output out
set title title
set xlabel "RoCEv2 packets dropped by netem, each direction (%)"
set ylabel "latency (us)"
set logscale y
set format y "10^{%L}"
set grid ytics mytics lc rgb "#dddddd"
set key top left
set offsets 0.3, 0.3, 0, 0
set style line 1 lc rgb "#d62728" lw 2 pt 7 ps 1.0
set style line 2 lc rgb "#d62728" lw 2 dt 2 pt 6 ps 1.0
set style line 3 lc rgb "#1f77b4" lw 2 pt 5 ps 1.0
set style line 4 lc rgb "#1f77b4" lw 2 dt 2 pt 4 ps 1.0
plot data using 0:2:xtic(1) with linespoints ls 1 title "set (ACK) p50", \
     data using 0:3 with linespoints ls 2 title "set (ACK) p99", \
     data using 0:4 with linespoints ls 3 title "get (response) p50", \
     data using 0:5 with linespoints ls 4 title "get (response) p99"
