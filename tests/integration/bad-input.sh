#!/usr/bin/env bash
# bad-input.sh - the bad-input catalogue (tests/bad-input/README.md): every
# malformed file there is fed to the real binary or entry point, which must
# exit with its documented error status (never a signal, never a hang) and
# print the expected text.
#
# A case is tests/bad-input/KIND/NAME.EXT with NAME.expect beside it: each
# non-empty line of .expect must appear in the output (stdout and stderr),
# "@FILE@" standing for the case's path; a line "status: N" replaces the
# kind's error status (the good cases, the negative controls, expect 0).
#   KIND       command                                   error status
#   config     oqb run FILE --dry-run                    2
#   trace      oqb-tgap --quiet FILE                     2
#   wire-req   bad-input-probe wire-req FILE             1
#   wire-resp  bad-input-probe wire-resp FILE            1
#   ctl        bad-input-probe ctl FILE                  1
#   runjson    oqb compare FILE FILE, then oqb plot FILE  2, then 2 (plot
#              only when an error is expected: it needs gnuplot otherwise)
#   history    oqb check FILE                            2
# (the oqb commands' statuses are the one table's, docs/driver.md "Exit
# codes": 2 is bad input; the probe's 1 is its own)
. "$(dirname "$0")/../lib.sh"
cd "${OQB_ROOT:-.}"
: "${OQB_UNIT:?run through tests/run-tests.sh (make test)}"
PROBE=$OQB_UNIT/bad-input-probe
LIMIT=${OQB_BAD_INPUT_TIMEOUT:-30}

# run_case LABEL WANT_STATUS EXPECT_FILE CASE CMD...
run_case() {
	local label=$1 want=$2 exp=$3 file=$4 out rc line miss=""
	shift 4
	out=$(timeout -k 5 "$LIMIT" "$@" </dev/null 2>&1)
	rc=$?
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in ''|status:*) continue ;; esac
		line=${line//@FILE@/$file}
		[[ $out == *"$line"* ]] || miss="$miss [$line]"
	done <"$exp"
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		notok "$label" "hung: no exit within ${LIMIT}s"
	elif [ $rc -gt 128 ]; then
		notok "$label" "killed by signal $((rc - 128)): $(printf '%s' "$out" | tail -n 3)"
	elif [ $rc -ne "$want" ]; then
		notok "$label" "exit status $rc, expected $want: $(printf '%s' "$out" | tail -n 3)"
	elif [ -n "$miss" ]; then
		notok "$label" "output lacks$miss: $(printf '%s' "$out" | tail -n 3)"
	else
		ok "$label"
	fi
}

n=0
for exp in tests/bad-input/*/*.expect; do
	kind=$(basename "$(dirname "$exp")")
	base=${exp%.expect}
	name=$(basename "$base")
	file=$(ls "$base".* 2>/dev/null | grep -v '\.expect$' | head -n 1)
	if [ -z "$file" ]; then
		notok "bad-input/$kind/$name" "no input file beside $exp"
		continue
	fi
	want=$(sed -n 's/^status: *//p' "$exp" | head -n 1)
	n=$((n + 1))
	case $kind in
	config)    run_case "bad-input/$kind/$name" "${want:-2}" "$exp" "$file" \
			"$OQB_BIN/oqb" run "$file" --dry-run ;;
	trace)     run_case "bad-input/$kind/$name" "${want:-2}" "$exp" "$file" \
			"$OQB_BIN/oqb-tgap" --quiet "$file" ;;
	wire-req|wire-resp|ctl)
		   run_case "bad-input/$kind/$name" "${want:-1}" "$exp" "$file" "$PROBE" "$kind" "$file" ;;
	runjson)
		run_case "bad-input/$kind/$name" "${want:-2}" "$exp" "$file" \
			"$OQB_BIN/oqb" compare "$file" "$file"
		if [ -z "$want" ]; then
			run_case "bad-input/$kind/$name-plot" 2 "$exp" "$file" \
				"$OQB_BIN/oqb" plot "$file" --out "$T"
		fi ;;
	history)   run_case "bad-input/$kind/$name" "${want:-2}" "$exp" "$file" \
			"$OQB_BIN/oqb" check "$file" ;;
	*)	   notok "bad-input/$kind/$name" "unknown kind $kind (tests/bad-input/README.md lists them)" ;;
	esac
done
if [ "$n" -lt 30 ]; then
	notok bad-input-catalogue "only $n cases; the catalogue should hold 30 or more"
fi

# Negative control: a case whose expected text is wrong must fail here.
printf 'this text appears in no message\n' >"$T/wrong.expect"
out=$(run_case control "1" "$T/wrong.expect" tests/bad-input/ctl/array.txt \
	"$PROBE" ctl tests/bad-input/ctl/array.txt 2>&1)
if [[ $out == "not ok control"* ]]; then ok bad-input-runner-catches-wrong-text
else notok bad-input-runner-catches-wrong-text "a wrong expectation passed: $out"; fi
finish
