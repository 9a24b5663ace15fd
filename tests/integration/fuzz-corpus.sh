#!/usr/bin/env bash
# fuzz-corpus.sh - every fuzz target's committed corpus and crash
# reproducers, replayed without a fuzzer (tests/fuzz/README.md).
#
# For each tests/fuzz/fuzz_NAME.c, $OQB_UNIT/fuzz-replay-NAME (built by
# make with this compiler and flags; under ASan in the sanitizer build)
# runs the target over tests/fuzz/corpus/NAME/ and the reproducers
# tests/fuzz/regress/NAME-*.bin: "ok fuzz-NAME" when every input passes
# and the count matches the files there, "not ok" naming the input that
# crashed or broke a property.  Negative controls: the replay must refuse
# an empty corpus and a missing one, so a wrong path cannot pass as "no
# crash".
. "$(dirname "$0")/../lib.sh"
cd "${OQB_ROOT:-.}"
: "${OQB_UNIT:?run through tests/run-tests.sh (make test)}"

names=()
for src in tests/fuzz/fuzz_*.c; do
	n=${src#tests/fuzz/fuzz_}
	names+=("${n%.c}")
done
if [ ${#names[@]} -eq 0 ]; then
	notok fuzz-targets "no tests/fuzz/fuzz_*.c"
	finish
fi

for n in "${names[@]}"; do
	bin=$OQB_UNIT/fuzz-replay-$n
	if [ ! -x "$bin" ]; then
		notok "fuzz-$n" "$bin is missing; run make"
		continue
	fi
	inputs=("tests/fuzz/corpus/$n")
	want=$(find "tests/fuzz/corpus/$n" -maxdepth 1 -type f ! -name '.*' 2>/dev/null | wc -l)
	for f in tests/fuzz/regress/"$n"-*.bin; do
		[ -f "$f" ] && { inputs+=("$f"); want=$((want + 1)); }
	done
	out=$(timeout -k 5 300 "$bin" "${inputs[@]}" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [[ $out == *"ok fuzz-$n: $want inputs"* ]]; then
		ok "fuzz-$n ($want inputs)"
	else
		notok "fuzz-$n" "exit $rc, expected $want inputs: $(printf '%s' "$out" | tail -n 5)"
	fi
done

# Negative controls, on the first target.
bin=$OQB_UNIT/fuzz-replay-${names[0]}
if [ -x "$bin" ]; then
	mkdir -p "$T/empty"
	out=$("$bin" "$T/empty" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [[ $out == *"tests nothing"* ]]; then ok fuzz-replay-refuses-empty-corpus
	else notok fuzz-replay-refuses-empty-corpus "exit $rc: $out"; fi
	out=$("$bin" "$T/no-such-dir" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [[ $out == *"no-such-dir"* ]]; then ok fuzz-replay-refuses-missing-corpus
	else notok fuzz-replay-refuses-missing-corpus "exit $rc: $out"; fi
fi
finish
