#!/usr/bin/env bash
# tgap.sh - `oqb-tgap` on the committed sample traces: JSON schema and
# numbers (the hand-worked example's answer), the CDF, the SVG/PNG plot,
# error messages, and bin/oqb-tracegen's output format.
. "$(dirname "$0")/../lib.sh"
cd "${OQB_ROOT:-.}"
TG=$OQB_BIN/oqb-tgap
GEN=$OQB_BIN/oqb-tracegen

if [ ! -x "$TG" ]; then
	notok tgap-binary "$TG is missing; run make"
	finish
fi

# The hand-worked example (tests/unit/test_tgap.c explains the numbers).
if "$TG" --quiet --json "$T/ex.json" traces/tgap-example.csv; then ok tgap-runs; else notok tgap-runs "exit $?"; fi
jcheck tgap-schema "$T/ex.json" '.schema == "oqbench.tgap/1"'
jcheck tgap-hand-numbers "$T/ex.json" '.traces[0] | .requests == 15 and .nilext == 7 and .non_nilext == 8 and .gaps == 6 and .within == 4 and .nilext_without_next == 1 and .clients == 5'
jcheck tgap-fractions "$T/ex.json" '.traces[0] | (.fraction_of_all - 4/15 | fabs) < 1e-9 and (.fraction_of_nilext - 4/7 | fabs) < 1e-9 and (.percent - 400/15 | fabs) < 1e-6'
jcheck tgap-definition "$T/ex.json" '.definition.max_gap_s == 2 and .definition.nilext_ops == ["set","delete"] and .definition.percent_of == "all requests"'

# The four cluster samples, with the plot (when gnuplot is installed).
samples=(traces/cluster12-sample.csv.zst traces/cluster19-sample.csv.zst traces/cluster27-sample.csv.zst traces/cluster31-sample.csv.zst)
plot=(--plot "$T/cdf.svg")
command -v gnuplot >/dev/null || plot=()
if "$TG" --quiet --json "$T/s.json" --cdf "$T/cdf.dat" "${plot[@]}" "${samples[@]}"; then
	ok tgap-samples
else
	notok tgap-samples "exit $?"
fi
jcheck tgap-samples-json "$T/s.json" '(.traces | length) == 4 and all(.traces[]; .requests > 5000 and .within <= .gaps and .gaps <= .nilext and .nilext + .non_nilext == .requests)'
jcheck tgap-cdf-monotone "$T/s.json" '(.cdf | length) == 4 and ([.cdf[].percent] == ([.cdf[].percent] | sort)) and .cdf[-1].fraction_of_traces == 1'
jcheck tgap-cluster12-set-heavy "$T/s.json" '(.traces[] | select(.name == "cluster12-sample.csv.zst") | .nilext / .requests) > 0.75'
if [ ${#plot[@]} -eq 0 ]; then skip tgap-svg "gnuplot not installed (make deps)"
elif [ -s "$T/cdf.svg" ] && grep -q "<svg" "$T/cdf.svg"; then ok tgap-svg
else notok tgap-svg "$T/cdf.svg missing or not SVG"; fi
if [ "$(head -n 2 "$T/cdf.dat" | tail -n 1)" = "0 0" ] && [ "$(tail -n 1 "$T/cdf.dat")" = "100 1" ]; then
	ok tgap-cdf-data
else
	notok tgap-cdf-data "unexpected $T/cdf.dat"
fi
if [ ${#plot[@]} -eq 0 ]; then
	skip tgap-png "gnuplot not installed (make deps)"
elif "$TG" --quiet --plot "$T/cdf.png" traces/tgap-example.csv && head -c 8 "$T/cdf.png" | grep -q PNG; then
	ok tgap-png
else
	notok tgap-png "no PNG written"
fi

# Errors name the thing and the fix.
out=$(printf '0,a,1,1,1,get,0\nnot,a,trace\n' > "$T/bad.csv"; "$TG" --quiet "$T/bad.csv" 2>&1)
if [ $? -ne 0 ] && [[ $out == *"bad.csv:2:"* ]] && [[ $out == *"--skip-malformed"* ]]; then
	ok tgap-malformed-error
else
	notok tgap-malformed-error "got: $out"
fi
if "$TG" --quiet --skip-malformed --json "$T/b.json" "$T/bad.csv" >/dev/null 2>&1; then
	jcheck tgap-skip-malformed "$T/b.json" '.traces[0].skipped_malformed == 1 and .traces[0].requests == 1'
else
	notok tgap-skip-malformed "exit $?"
fi
out=$("$TG" --max-gapp 3 traces/tgap-example.csv 2>&1)
if [ $? -ne 0 ] && [[ $out == *"max-gap"* ]]; then ok tgap-option-suggestion; else notok tgap-option-suggestion "got: $out"; fi

# tracegen: the public format, deterministic for a seed.
if "$GEN" --cluster 27 --clients 4 --seconds 5 --rate 200 --seed 3 -o "$T/a.csv" 2>/dev/null &&
   "$GEN" --cluster 27 --clients 4 --seconds 5 --rate 200 --seed 3 -o "$T/b.csv.zst" 2>/dev/null; then
	ok tracegen-runs
else
	notok tracegen-runs "exit $?"
fi
if zstd -dcq "$T/b.csv.zst" | cmp -s - "$T/a.csv"; then ok tracegen-zstd-same; else notok tracegen-zstd-same "zstd output differs from plain"; fi
bad=$(awk -F, 'NF != 7 || length($2) != $3 || $3 != 66 || $4 != 8 || $1 < 0 || $1 >= 5 || $5 >= 4 || !($6 == "get" && $7 == 0 || $6 == "set" && $7 == 3600)' "$T/a.csv" | head -n 3)
if [ -z "$bad" ] && [ "$(wc -l < "$T/a.csv")" -gt 800 ]; then ok tracegen-format; else notok tracegen-format "bad lines: $bad"; fi
finish
