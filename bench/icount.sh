#!/usr/bin/env bash
# bench/icount.sh - the harness's own cost per request in instructions,
# counted by callgrind: the project's performance regression check.
#
# What it owns: running bin/oqb-icount (one thread, a real shm server and
# client in lock step, see bench/oqb_icount_main.c) under
# `valgrind --tool=callgrind --collect-atstart=no`, with collection switched
# on only around the measured region, and dividing the count by the
# requests.  Cases:
#   client_oq      client send + receive path, oq, kv (half sets, half gets)
#   worker_oq      worker poll-execute-reply path, oq, null backend
#   client_rawrpc  the same for rawrpc, echo (64 B values)
#   worker_rawrpc
#   hist           one hist_record
# Why instructions: they do not move with the machine's noise.  The same
# binary gives the same counts (the only variable inputs are clock values,
# a few instructions in millions; tests/integration/icount.sh checks two
# runs agree to 0.1 %).  Counts do depend on the compiler and its flags,
# so a baseline is only compared with a build of the same compiler.
#
# Usage: bench/icount.sh [--json FILE] [--check BASELINE [--margin PCT]]
#   --check  compares each count with BASELINE's "gate" (results/baselines/
#            icount.json) and exits 1 if one grew more than PCT % (default:
#            the baseline's margin_pct, else 5); exits 3 (nothing compared)
#            if BASELINE was counted with another compiler or flags.
# Env: OQB_BIN (default bin), OQB_ICOUNT_REQUESTS (default 20000).
set -u
cd "$(dirname "$0")/.."
B=${OQB_BIN:-bin}
N=${OQB_ICOUNT_REQUESTS:-20000}
json= base= margin=
while [ $# -gt 0 ]; do
	case $1 in
	--json) json=$2; shift 2 ;;
	--check) base=$2; shift 2 ;;
	--margin) margin=$2; shift 2 ;;
	*) echo "icount.sh: unknown argument '$1'; usage: bench/icount.sh [--json FILE] [--check BASELINE [--margin PCT]]" >&2
	   exit 2 ;;
	esac
done
if ! command -v valgrind >/dev/null; then
	echo "icount.sh: valgrind is not installed (make deps installs it)" >&2
	exit 3
fi
if [ ! -x "$B/oqb-icount" ]; then
	echo "icount.sh: $B/oqb-icount not found; run make first (or set OQB_BIN)" >&2
	exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP PIPE

ECHO='{"kind":"echo","value_size":64,"key_size":8,"keys":1024}'
cases=(client_oq worker_oq client_rawrpc worker_rawrpc hist)
args_of() {
	case $1 in
	client_oq) echo "--measure client --system oq" ;;
	worker_oq) echo "--measure worker --system oq" ;;
	client_rawrpc) echo "--measure client --system rawrpc" ;;
	worker_rawrpc) echo "--measure worker --system rawrpc" ;;
	hist) echo "--measure hist" ;;
	esac
}
wl_of() { case $1 in *_rawrpc) echo "$ECHO" ;; *) echo "" ;; esac; }

per='{}'
for c in "${cases[@]}"; do
	wl=$(wl_of "$c")
	# shellcheck disable=SC2046
	if ! valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$tmp/$c.cg" \
		"$B/oqb-icount" $(args_of "$c") --requests "$N" ${wl:+--workload "$wl"} \
		>"$tmp/$c.out" 2>"$tmp/$c.err"; then
		echo "icount.sh: $c: oqb-icount failed under valgrind:" >&2
		tail -5 "$tmp/$c.err" >&2
		exit 1
	fi
	tot=$(sed -n 's/^totals: *//p' "$tmp/$c.cg")
	if [ -z "$tot" ] || ! jq -e '.requests' "$tmp/$c.out" >/dev/null 2>&1; then
		echo "icount.sh: $c: no count in $tmp/$c.cg or no result line" >&2
		exit 1
	fi
	per=$(jq -c --arg c "$c" --argjson t "$tot" --argjson n "$N" \
		'. + {($c): (($t / $n) * 100 | round / 100)}' <<<"$per")
done
build=$(jq -c '.build' "$tmp/hist.out")
vg=$(valgrind --version)
res=$(jq -n --argjson per "$per" --argjson build "$build" --arg vg "$vg" --argjson n "$N" \
	--arg echo "$ECHO" --arg kv "$(jq -r '.workload // empty' "$tmp/client_oq.out")" \
	'{schema: "oqbench.icount/1", tool: ("callgrind, " + $vg), requests: $n, seed: 1,
	  batch: 16, build: $build, per_request: $per,
	  workloads: {oq: "kv: put_ratio 0.5, key 16 B, value 64 B, 1000 keys, zipf 0.99",
		      rawrpc: ("echo " + $echo)}}')
[ -n "$json" ] && printf '%s\n' "$res" >"$json"

echo "instructions per request (callgrind, $N requests, $(jq -r '.build.compiler' <<<"$res"))"
if [ -z "$base" ]; then
	for c in "${cases[@]}"; do
		printf '  %-14s %10.2f\n' "$c" "$(jq -r --arg c "$c" '.per_request[$c]' <<<"$res")"
	done
	exit 0
fi
if ! jq -e '.gate.per_request' "$base" >/dev/null 2>&1; then
	echo "icount.sh: $base: no gate.per_request object; is it an icount baseline?" >&2
	exit 2
fi
if ! jq -e --argjson b "$build" --argjson n "$N" '.gate.build == $b and .gate.requests == $n' "$base" >/dev/null; then
	echo "icount.sh: $base was counted with build $(jq -c '.gate.build' "$base"), $(jq '.gate.requests' "$base") requests;" \
	     "this is $build, $N requests: counts are not comparable (record a baseline for this compiler)" >&2
	exit 3
fi
[ -z "$margin" ] && margin=$(jq '.margin_pct // 5' "$base")
fail=0
for c in "${cases[@]}"; do
	now=$(jq -r --arg c "$c" '.per_request[$c]' <<<"$res")
	ref=$(jq -r --arg c "$c" '.gate.per_request[$c] // empty' "$base")
	if [ -z "$ref" ]; then
		printf '  %-14s %10.2f   (no baseline)\n' "$c" "$now"
		continue
	fi
	v=$(awk -v a="$now" -v b="$ref" -v m="$margin" 'BEGIN {
		d = (a - b) / b * 100; printf "%+6.1f %%  %s", d, (a > b * (1 + m / 100)) ? "GREW" : "ok" }')
	printf '  %-14s %10.2f   baseline %10.2f  %s\n' "$c" "$now" "$ref" "$v"
	case $v in *GREW) fail=1 ;; esac
done
if [ $fail = 1 ]; then
	echo "icount: a count grew more than $margin % over $base (find the cause, or if intended, record a new gate)"
	exit 1
fi
echo "icount: every count within $margin % of $base"
