#!/usr/bin/env bash
# docs-match.sh - the docs name only what the code has.  Every config key
# the docs mention (a backticked dotted path under a top-level config key,
# and every row of docs/config.md's key table) is one `oqb config-keys`
# lists, or lies below a key whose owner checks its contents (workload,
# arrival.loads_ops: such keys list no children); every `oqb COMMAND` the
# README names is a command of `oqb --help` and has a section (a heading
# naming `oqb COMMAND`) in docs/; every doc in docs/ is in the README's
# documentation table.  Nothing runs but bin/oqb's own listings.
. "$(dirname "$0")/../lib.sh"

D=$OQB_ROOT/docs
"$OQB_BIN/oqb" config-keys | awk '{print $1}' >"$T/keys"
[ "$(wc -l <"$T/keys")" -ge 50 ] || notok "oqb config-keys lists the keys" "$(head -3 "$T/keys")"
tops=$(grep -v '\.' "$T/keys" | paste -sd'|')

# run.json's fields that share a first part with a config key (the result
# file's, docs/driver.md), not config keys.
result_fields='^(hosts\.processes|server\.service_ns|server\.per_worker|idle\.mode)$'
known() {   # KEY: listed, or below a listed key that lists no children (free-form)
	local k=$1 p
	grep -qxF "$k" "$T/keys" && return 0
	p=$k
	while [[ $p == *.* ]]; do
		p=${p%.*}
		if grep -qxF "$p" "$T/keys"; then
			grep -q "^${p//./\\.}\." "$T/keys" && return 1
			return 0
		fi
	done
	return 1
}
bad=""
n=0
while IFS=: read -r file key; do
	key=${key//\`/}
	key=$(sed 's/\[[0-9]*\]//g' <<<"$key")
	[[ $key =~ \.(c|h|cc|def|md|json|sh|gp|py)$ ]] && continue   # a file name
	[[ $key =~ $result_fields ]] && continue
	n=$((n + 1))
	known "$key" || bad="$bad ${file#"$OQB_ROOT"/}:$key"
done < <(grep -oE '`('"$tops"')(\.[a-z_0-9]+|\[[0-9]+\])+`' "$D"/*.md "$OQB_ROOT/README.md" | sort -u)
if [ -z "$bad" ] && [ "$n" -ge 40 ]; then ok "every config key the docs mention exists ($n mentions)"
else notok "every config key the docs mention exists" "not a config key (oqb config-keys):$bad; $n mentions"; fi

bad=""
for key in $(awk '/^## Keys/{f=1} /^### /{if(f)exit} f' "$D/config.md" | grep -o '^| `[^`]*`' | tr -d '|` '); do
	grep -qxF "$key" "$T/keys" || bad="$bad $key"
done
if [ -z "$bad" ]; then ok "docs/config.md's key table: every row a config key"
else notok "docs/config.md's key table: every row a config key" "not in oqb config-keys:$bad"; fi

# The commands the README names.
"$OQB_BIN/oqb" --help 2>&1 | sed -n 's/^  oqb \([a-z-]*\).*/\1/p' | sort -u >"$T/cmds"
bad="" n=0
for c in $(grep -oE '\boqb [a-z][a-z-]*' "$OQB_ROOT/README.md" | awk '{print $2}' | sort -u); do
	n=$((n + 1))
	if ! grep -qx "$c" "$T/cmds"; then bad="$bad $c(not a command)"; continue; fi
	grep -qE "^#.*oqb $c\b" "$D"/*.md || bad="$bad $c(no section)"
done
if [ -z "$bad" ] && [ "$n" -ge 5 ]; then ok "every oqb command the README names has a doc section ($n)"
else notok "every oqb command the README names has a doc section" "$bad"; fi

bad=""
for f in "$D"/*.md; do
	grep -q "](docs/$(basename "$f"))" "$OQB_ROOT/README.md" || bad="$bad $(basename "$f")"
done
if [ -z "$bad" ]; then ok "the README's documentation table lists every doc"
else notok "the README's documentation table lists every doc" "missing:$bad"; fi
finish
