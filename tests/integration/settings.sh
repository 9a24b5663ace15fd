#!/usr/bin/env bash
# settings.sh - each setting is one row (lib/settings/), and what comes
# from the rows agrees: docs/config.md's settings table is exactly
# `oqb-server --list-settings` (a row missing from the docs, or a stale
# docs line, fails here); every row's flag is in the --help of the binary
# that takes it, with the row's default; a value beyond a binary's real
# bound or rule (workers 100, ring_slots 1000, slot_size 100) is refused
# by `oqb run --dry-run` and `oqb doctor` (and `oqb crashtest`, whose
# config takes workers, ring_slots and pool_mb by the server's rows)
# before anything starts, naming
# the key, the bound and a valid value.  (That the flags `oqb run` emits
# from the rows reach the server: rocksdb.sh's write_buffer_mb in the
# server's echo, test_runconf's server_flag.)  A flag that takes a row's
# value under another name (oqb-client's --expect-workers, oqb-vfloor's
# --connect-timeout-s) shows and keeps the row's default and bounds.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
DOC=$ROOT/docs/config.md

# docs/config.md between its markers, against the rows
sed -n '/^<!-- settings: begin/,/^<!-- settings: end/p' "$DOC" | sed '1d;$d' >"$T/docs.md"
"$OQB_BIN/oqb-server" --list-settings >"$T/rows.md"
if [ -s "$T/rows.md" ] && diff -u "$T/docs.md" "$T/rows.md" >"$T/diff"; then
	ok docs_list_every_row
else
	notok docs_list_every_row "docs/config.md's settings table differs from the rows; paste bin/oqb-server --list-settings between its markers: $(head -20 "$T/diff")"
fi
rows=$(grep -c '^| `' "$T/rows.md")
[ "$rows" -ge 25 ] && ok "rows_listed ($rows)" || notok rows_listed "only $rows rows"

# every row's flag and default in its binary's --help
"$OQB_BIN/oqb-server" --help >"$T/srv-help"
"$OQB_BIN/oqb-client" --help >"$T/cli-help"
bad=
while IFS='|' read -r _ key _ def _ _ _ bin flag _; do
	flag=$(echo "$flag" | tr -d ' `')
	def=$(echo "$def" | tr -d ' `')
	for b in oqb-server oqb-client; do
		case $bin in *"$b"*) ;; *) continue ;; esac
		h=$T/srv-help; [ $b = oqb-client ] && h=$T/cli-help
		line=$(grep -E -- "^  $flag( |$)" "$h")
		[ -n "$line" ] || bad="$bad $b:$flag(missing)"
		case $def in ''|true|false) ;; *) [[ $line == *"default: $def"* ]] || bad="$bad $b:$flag(default $def)" ;; esac
	done
done < <(grep '^| `' "$T/rows.md")
[ -z "$bad" ] && ok help_from_rows || notok help_from_rows "$bad"

# a flag that takes a row's value under another name has the row's default
# and bounds, not a copy: oqb-client's --expect-workers and
# --expect-slot-size (the server's workers and slot_size), oqb-vfloor's
# --connect-timeout-s (timeouts.connect_s); one past the row's max is
# refused by that binary too
"$OQB_BIN/oqb-vfloor" --help >"$T/vf-help" 2>&1
bad=
for a in "server.workers oqb-client expect-workers" "server.slot_size oqb-client expect-slot-size" \
	"timeouts.connect_s oqb-vfloor connect-timeout-s"; do
	set -- $a
	IFS='|' read -r _ _ _ def bounds _ < <(grep -F "| \`$1\` |" "$T/rows.md")
	def=$(echo "$def" | tr -d ' `'); bounds=$(echo "$bounds" | tr -d ' '); bounds=${bounds%%,*}
	h=$T/cli-help; [ $2 = oqb-vfloor ] && h=$T/vf-help
	line=$(grep -E -- "^  --$3( |$)" "$h")
	[[ -n $def && -n $bounds && $line == *"default: $def; range $bounds"* ]] || bad="$bad $2:--$3($line; row $def $bounds)"
	over=$(awk -v b="$bounds" 'BEGIN { split(b, m, "\\.\\."); print m[2] + 1 }')
	out=$("$OQB_BIN/$2" --$3 "$over" 2>&1); rc=$?
	[ $rc = 2 ] && [[ $out == *"--$3"*"$over"* ]] || bad="$bad $2:--$3 $over(exit $rc: $out)"
done
[ -z "$bad" ] && ok aliases_take_rows || notok aliases_take_rows "$bad"

# beyond the binary's real bound or rule: refused before anything starts
refused() {  # name jq-filter needle...
	local name=$1 f=$2; shift 2
	jq "$f" "$ROOT/configs/tiny.json" >"$T/$name.json"
	for cmd in "run $T/$name.json --dry-run --out $T/out-$name" "doctor $T/$name.json"; do
		out=$("$OQB_BIN/oqb" $cmd 2>&1)
		rc=$?
		miss=
		for n in "$@"; do [[ $out == *"$n"* ]] || miss="$miss [$n]"; done
		if [ $rc -eq 2 ] && [ -z "$miss" ] && [ ! -e "$T/out-$name" ]; then
			ok "${name}_${cmd%% *}"
		else
			notok "${name}_${cmd%% *}" "exit $rc, missing$miss: $out"
		fi
	done
}
refused workers_100 '.server.workers = 100' server.workers 100 '1 to 64'
refused ring_slots_1000 '.server.ring_slots = 1000' server.ring_slots 'power of two' 'e.g. 1024'
refused slot_size_100 '.server.slot_size = 100' server.slot_size 'multiple of 64' 'e.g. 128'
refused other_kinds_key '.server.backend.write_buffer_mb = 8' write_buffer_mb 'not used by kind "cache"' rocksdb

# the crash tester's config takes the server's keys by the same rows
for c in 'workers 100 1 to 64' 'ring_slots 1000 power of two'; do
	set -- $c
	echo "{\"name\": \"rows\", \"crashes\": 1, \"$1\": $2}" >"$T/ct-$1.json"
	out=$("$OQB_BIN/oqb" crashtest "$T/ct-$1.json" 2>&1); rc=$?
	shift 2
	[ $rc -eq 2 ] && [[ $out == *"ct-"*": "*"$*"* ]] && ok "crashtest_${c%% *}_from_row" ||
		notok "crashtest_${c%% *}_from_row" "exit $rc: $out"
done

# the binary refuses the same by its rows
out=$("$OQB_BIN/oqb-server" --ring-slots 1000 2>&1); rc=$?
[ $rc -eq 2 ] && [[ $out == *"--ring-slots 1000"*"power of two"*"e.g. 1024"* ]] && ok server_rule_from_row ||
	notok server_rule_from_row "exit $rc: $out"

finish
