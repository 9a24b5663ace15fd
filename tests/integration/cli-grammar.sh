#!/usr/bin/env bash
# cli-grammar.sh - one command-line grammar and one exit-code table for
# every `oqb` command (lib/opts.h, lib/exitcodes.h, docs/driver.md "Exit
# codes"):
#  - each command's --help exits 0, names its positional arguments in the
#    usage line, lists the options this file expects of it (written here,
#    not read from the code) and ends with its exit codes, which equal the
#    docs' "which command returns which" row and `oqb --help`'s line;
#  - an unknown option, a missing positional and a stray positional are
#    exit 2 with a message naming them;
#  - `oqb ab --help` lists --set; --set repeats (oqb run --dry-run shows
#    every one);
#  - `oqb --version` prints the build id the binaries report;
#  - the docs' exit-code table equals `oqb exit-codes` row for row.
. "$(dirname "$0")/../lib.sh"
cd "${OQB_ROOT:-.}"
OQB=$OQB_BIN/oqb
DOC=docs/driver.md

# Options each command must list (a subset: new ones may come).
declare -A OPTS=(
	[run]="--out --set --dry-run --quiet --strict"
	[doctor]="--set --json --timeout-s"
	[plot]="--out"
	[figures]="--runs --out --claims --tgap --check"
	[compare]="--tolerance --tolerance-p99 --alpha --correction --canary-drift --json"
	[ab]="--base --new --out --trials --max-trials --tolerance --set --base-env --new-env --seed --quiet"
	[crashtest]="--out --crashes"
	[check]="--time-budget-s --mem-budget-mb --threads --out --quiet"
	[tgap]="--json --plot --cdf --max-gap --limit --nilext --per --skip-malformed --quiet"
	[history add]="--file --commit"
	[history show]="--file --config --testbed"
	[history detect]="--file --metric --window --pvalue --ack --json"
	[history export-otava]="--file --out --branch"
	[history plot]="--file --metric --point --out"
)
# Each command's usage line after "[options]" (its positional arguments).
declare -A POS=(
	[run]="CONFIG" [doctor]="CONFIG" [plot]="RUN_DIR" [figures]="" [compare]="BASE NEW"
	[ab]="CONFIG" [crashtest]="CONFIG" [check]="INPUT..." [tgap]="TRACE..."
	[history add]="RUN_DIR" [history show]="" [history detect]="" [history export-otava]=""
	[history plot]=""
)

# codes_of_help FILE: the codes under "exit status:", space-separated.
codes_of_help() { awk '/^exit status:/ { on = 1; next } on && /^  [0-9]  / { printf "%s%s", n++ ? " " : "", $1 }' "$1"; }

# The docs' "which command returns which" table: `cmd` -> its codes (the
# numbers outside parentheses).
declare -A DOC_CODES
while IFS='|' read -r _ cmds codes _; do
	codes=$(sed 's/([^)]*)//g' <<<"$codes" | grep -o '[0-9]' | tr '\n' ' ' | sed 's/ $//')
	for c in $(grep -o '`[a-z-]*`' <<<"$cmds" | tr -d '`'); do DOC_CODES[$c]=$codes; done
done < <(awk '/^## Exit codes/ { on = 1 } on && /^\| `/' "$DOC")
[ ${#DOC_CODES[@]} -ge 10 ] && ok "docs: the per-command exit-code table has ${#DOC_CODES[@]} commands" ||
	notok "docs: the per-command exit-code table" "found ${#DOC_CODES[@]} rows in $DOC"

"$OQB" --help >"$T/top.out" 2>&1 && ok "oqb --help exits 0" || notok "oqb --help exits 0" "$(cat "$T/top.out")"

for cmd in "${!OPTS[@]}"; do
	read -ra words <<<"$cmd"
	name=${cmd// /-}
	"$OQB" "${words[@]}" --help >"$T/$name.help" 2>"$T/$name.err"
	rc=$?
	miss=
	for o in ${OPTS[$cmd]}; do grep -qE -- "^  $o( |$)" "$T/$name.help" || miss="$miss $o"; done
	usage="usage: oqb $cmd [options]${POS[$cmd]:+ ${POS[$cmd]}}"
	if [ $rc -eq 0 ] && [ -z "$miss" ] && [ "$(head -n 1 "$T/$name.help")" = "$usage" ]; then
		ok "oqb $cmd --help: exit 0, \"$usage\", every option"
	else
		notok "oqb $cmd --help" "exit $rc, missing:$miss; first line: $(head -n 1 "$T/$name.help")"
	fi
	# its exit codes: as the docs list them, and as oqb --help (history's own help for its commands)
	got=$(codes_of_help "$T/$name.help")
	want=${DOC_CODES[${words[0]}]:-none}
	if [ "${words[0]}" = history ]; then
		top=$(grep -A2 "^  oqb $cmd " <(awk '/^usage: oqb history/,0' < <("$OQB" history --help)) |
			grep -o 'exit [0-9/]*$' | head -n 1)
		# a history command's codes are within the docs' history row
		within=1
		for c in $got; do [[ " $want " == *" $c "* ]] || within=0; done
		if [ -n "$got" ] && [ $within = 1 ] && [ "$top" = "exit ${got// //}" ]; then
			ok "oqb $cmd: exit codes $got, within the docs' history row, as oqb history --help says"
		else
			notok "oqb $cmd: exit codes" "--help: '$got'; docs: '$want'; oqb history --help: '$top'"
		fi
		continue
	fi
	top=$(awk -v c="  oqb $cmd " 'index($0, c) == 1 { on = 1; next } on && /^      exit / { print $2; exit }' "$T/top.out")
	if [ -n "$got" ] && [ "$got" = "$want" ] && [ "$top" = "${got// //}" ]; then
		ok "oqb $cmd: exit codes $got in its --help, the docs and oqb --help"
	else
		notok "oqb $cmd: exit codes" "--help: '$got'; docs: '$want'; oqb --help: '$top'"
	fi
done

# history's own --help is generated like the others: its commands and codes
"$OQB" history --help >"$T/history.help" 2>&1
hc=$(codes_of_help "$T/history.help")
if [ "$hc" = "${DOC_CODES[history]}" ] && grep -q '^  oqb history add \[options\] RUN_DIR$' "$T/history.help"; then
	ok "oqb history --help: every command's usage and the codes $hc the docs list"
else
	notok "oqb history --help" "codes '$hc', docs '${DOC_CODES[history]}': $(cat "$T/history.help")"
fi

# Bad input: an unknown option, a missing positional, a stray positional: 2, named.
# expect_usage NAME PATTERN ARGS...: `oqb ARGS` exits 2 and its stderr has
# PATTERN and the usage line (expect_bad: a bad value found after parsing,
# PATTERN only)
expect_usage() { USAGE_LINE=1 expect_bad "$@"; }
expect_bad() {
	local name=$1 pat=$2
	shift 2
	"$OQB" "$@" >"$T/u.out" 2>"$T/u.err"
	local rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$pat" "$T/u.err" &&
		{ [ -z "${USAGE_LINE:-}" ] || grep -q '^usage: oqb ' "$T/u.err"; }; then
		ok "$name"
	else
		notok "$name" "exit $rc, want 2 and '$pat': $(cat "$T/u.err")"
	fi
}
for cmd in "${!OPTS[@]}"; do
	read -ra words <<<"$cmd"
	expect_usage "oqb $cmd --no-such-option: exit 2, named" "unknown option --no-such-option" \
		"${words[@]}" --no-such-option
done
expect_usage "oqb run without CONFIG: exit 2, named" "missing CONFIG" run --dry-run
expect_usage "oqb doctor without CONFIG: exit 2, named" "missing CONFIG" doctor --json
expect_usage "oqb plot without RUN_DIR: exit 2, named" "missing RUN_DIR" plot
expect_usage "oqb compare with BASE only: exit 2, NEW named" "missing NEW" compare a.json
expect_usage "oqb ab without CONFIG: exit 2, named" "missing CONFIG" ab --base bin --new bin
expect_usage "oqb crashtest without CONFIG: exit 2, named" "missing CONFIG" crashtest
expect_usage "oqb check without INPUT: exit 2, named" "missing INPUT..." check --quiet
expect_usage "oqb tgap without TRACE: exit 2, named" "missing TRACE..." tgap --quiet
expect_usage "oqb history add without RUN_DIR: exit 2, named" "missing RUN_DIR" history add
expect_usage "oqb compare with three runs: exit 2, the third named" 'unexpected argument "c.json"' \
	compare a.json b.json c.json
expect_usage "oqb figures with a positional: exit 2, named" 'unexpected argument "stray"' figures stray
expect_usage "oqb run --set without a value: exit 2" "--set: missing value" run x.json --set
expect_bad "oqb ab --new-env not NAME=VALUE: exit 2" "--new-env NOEQUALS: expected NAME=VALUE" \
	ab x.json --base bin --new bin --new-env NOEQUALS
"$OQB" config-keys stray >/dev/null 2>"$T/ck.err"
rc=$?
[ $rc -eq 2 ] && grep -q 'unexpected argument "stray"' "$T/ck.err" && ok "oqb config-keys with an argument: exit 2" ||
	notok "oqb config-keys with an argument" "exit $rc: $(cat "$T/ck.err")"

# --set in oqb ab's help, and --set repeats: every one reaches the config
grep -qE '^  --set KEY=JSON .*\(repeatable\)' "$T/ab.help" && ok "oqb ab --help lists --set KEY=JSON, repeatable" ||
	notok "oqb ab --help lists --set" "$(cat "$T/ab.help")"
"$OQB" run configs/quickstart.json --dry-run --set duration_s=0.3 --set=warmup_s=0.2 --set repeat=2 >"$T/dry.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -qF 'overrides: ["duration_s=0.3","warmup_s=0.2","repeat=2"]' "$T/dry.out" &&
	grep -q 'x 2 trials' "$T/dry.out"; then
	ok "oqb run --set, three times (one --set=): every override applied"
else
	notok "oqb run --set repeated" "exit $rc: $(head -5 "$T/dry.out")"
fi

# --version: the build id, the same as the binaries'
id=$("$OQB_BIN/oqb-server" --build-id 2>/dev/null | head -n 1)
v1=$("$OQB" --version 2>&1); rc1=$?
v2=$("$OQB" version 2>&1); rc2=$?
if [ -n "$id" ] && [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [[ $v1 == *"build $id"* ]] && [ "$v1" = "$v2" ]; then
	ok "oqb --version and oqb version: build $id, as oqb-server --build-id"
else
	notok "oqb --version" "exit $rc1/$rc2, server's id '$id': $v1 / $v2"
fi

# The docs' table of codes equals the header's, row for row (through oqb exit-codes).
awk '/^## Exit codes/ { on = 1 } on && /^\| [0-9] \|/' "$DOC" |
	sed -E 's/^\| ([0-9]) \| ([^|]*[^ ]) \| (.*[^ ]) \|$/\1\t\2\t\3/' >"$T/doc-codes"
"$OQB" exit-codes >"$T/bin-codes"
if [ -s "$T/bin-codes" ] && [ "$(wc -l <"$T/bin-codes")" -ge 4 ] && cmp -s "$T/doc-codes" "$T/bin-codes"; then
	ok "docs/driver.md's exit-code table equals oqb exit-codes ($(wc -l <"$T/bin-codes") rows)"
else
	notok "docs' exit-code table equals oqb exit-codes" "$(diff "$T/doc-codes" "$T/bin-codes")"
fi
# and oqb --help ends with the same rows
awk '/^exit statuses, the same for every command/ { on = 1; next } on && /^  [0-9]  / {
	sub(/^  /, ""); c = $1; sub(/^[0-9]  /, ""); i = index($0, ": ");
	print c "\t" substr($0, 1, i - 1) "\t" substr($0, i + 2) }' "$T/top.out" >"$T/top-codes"
cmp -s "$T/top-codes" "$T/bin-codes" && ok "oqb --help's exit statuses are the table's" ||
	notok "oqb --help's exit statuses" "$(diff "$T/top-codes" "$T/bin-codes")"
finish
