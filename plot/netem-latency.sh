#!/usr/bin/env bash
# netem-latency.sh OUT.png|OUT.svg RUN_DIR... - draws median and P99
# latency against the netem loss rate from runs of tests/verbs/run-netem.sh
# (each RUN_DIR holds run.json and the netem.json the test wrote beside
# it; runs whose case is not a loss rate -- reorder, delay -- are left
# out).  Prints the data table on stdout; exit 2 on bad input, naming the
# file.  Needs jq and gnuplot.
set -u
if [ $# -lt 2 ]; then
	echo "usage: plot/netem-latency.sh OUT.png|OUT.svg RUN_DIR..." >&2
	exit 2
fi
out=$1
shift
for t in jq gnuplot; do
	command -v $t >/dev/null || { echo "netem-latency.sh: $t not found; install the Debian package $t" >&2; exit 2; }
done
data=$(mktemp)
trap 'rm -f "$data"' EXIT
for d; do
	for f in "$d/run.json" "$d/netem.json"; do
		jq -e . "$f" >/dev/null 2>&1 ||
			{ echo "netem-latency.sh: $f: missing or not JSON (a run of tests/verbs/run-netem.sh has both)" >&2; exit 2; }
	done
	jq -r --slurpfile n "$d/netem.json" '
		select($n[0].loss_pct != null) | .points[0].lat_ns as $l |
		"\($n[0].loss_pct) \($l.nilext.p50 / 1000) \($l.nilext.p99 / 1000) " +
		"\($l.non_nilext.p50 / 1000) \($l.non_nilext.p99 / 1000)"' "$d/run.json" ||
		{ echo "netem-latency.sh: $d/run.json: no point with nilext and non_nilext latencies" >&2; exit 2; }
done | sort -g >"$data"
if [ ! -s "$data" ]; then
	echo "netem-latency.sh: none of the runs is a loss-rate case" >&2
	exit 2
fi
echo "# loss_pct set_p50_us set_p99_us get_p50_us get_p99_us"
cat "$data"
gnuplot -c "$(dirname "$0")/netem-latency.gp" "$data" "$out"
