# tgap-cdf.gp - CDF across traces of the share of requests with T_gap in
# [0, 2 s] (the paper's Figure 2).
#
# Usage: gnuplot -c plot/tgap-cdf.gp DATA OUT.svg|OUT.png [LEGEND [XLABEL]]
# DATA holds "x y" lines as written by `oqb tgap --cdf`: x = percent of a
# trace's requests whose T_gap is within [0, 2 s], y = fraction of the
# traces at or below x, starting at "0 0" and ending at "100 1".
# OUT ending in .png gives a PNG; anything else an SVG.

if (ARGC < 2) {
	print "usage: gnuplot -c tgap-cdf.gp DATA OUT.svg|OUT.png [LEGEND]"
	exit status 2
}
data = ARG1
out = ARG2
legend = (ARGC >= 3 && strlen(ARG3) > 0) ? ARG3 : "traces"
xlab = (ARGC >= 4 && strlen(ARG4) > 0) ? ARG4 : "Requests with T_{gap} in [0, 2 s] (%)"

n = strlen(out)
if (n > 4 && out[n-3:n] eq ".png") {
	set terminal pngcairo size 800,500 enhanced font "sans,11"
} else {
	set terminal svg size 800,500 enhanced font "sans,11" background "white"
}
set output out

set title "T_{gap} of nilext requests (Figure 2)"
set xlabel xlab
set ylabel "Fraction of traces (CDF)"
set xrange [0:100]
set yrange [0:1.02]
set xtics 10
set ytics 0.2
set grid
set key bottom right box
# The paper's reference point: share of traces below 10 %.
set arrow from 10, graph 0 to 10, graph 1 nohead dashtype 2 lc rgb "gray40"

plot data using 1:2 with steps lw 2 lc rgb "#1f77b4" title "CDF over ".legend
