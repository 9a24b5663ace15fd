#!/usr/bin/env bash
# config.sh - system erpc without (or with) eRPC in the build: always runs.
#
# `erpc` is a known system name everywhere (a misspelling suggests it), and
# a build made without ERPC_DIR refuses it before anything starts: `oqb run`
# exits 2 with a message that names the field, ERPC_DIR and docs/erpc.md,
# and creates no results directory; oqb-server and oqb-client refuse
# `--transport erpc` the same way.  With eRPC in the build (OQB_ERPC=1) the
# config is refused only where it cannot work (transport shm).
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BASE=$ROOT/configs/tiny.json

# refuse NAME JQ-EDIT WORD...: oqb run exits 2, no results directory, every WORD in the message.
refuse() {
	local name=$1 edit=$2 out rc w miss=""
	shift 2
	jq "$edit" "$BASE" >"$T/$name.json" || { notok "$name" "jq edit failed"; return; }
	out=$("$OQB_BIN/oqb" run "$T/$name.json" --out "$T/out-$name" 2>&1)
	rc=$?
	for w in "$@"; do
		case $out in *"$w"*) ;; *) miss="$miss [$w]" ;; esac
	done
	if [ $rc -ne 2 ]; then notok "$name" "exit status $rc, expected 2: $out"
	elif [ -n "$miss" ]; then notok "$name" "message lacks$miss: $out"
	elif [ -e "$T/out-$name" ]; then notok "$name" "a results directory was created"
	else ok "$name"; fi
}

# A misspelt name is answered with erpc: the name is known.
refuse erpc_known_name '.systems = ["oq", "erpcc"]' 'systems[1]' 'did you mean "erpc"'
if [ "${OQB_ERPC:-0}" != 1 ]; then
	refuse erpc_not_built '.transport = "verbs" | .systems = ["oq", "erpc"]' \
		'systems[1]' 'not in this build' ERPC_DIR docs/erpc.md
	for p in server client; do
		extra=(); [ $p = client ] && extra=(--server x)
		out=$("$OQB_BIN/oqb-$p" --system erpc --transport erpc "${extra[@]}" 2>&1)
		rc=$?
		if [ $rc -ne 0 ] && [[ $out == *"not built into this binary"* ]] && [[ $out == *ERPC_DIR* ]] &&
		   [[ $out == *docs/erpc.md* ]]; then ok "erpc_${p}_not_built"
		else notok "erpc_${p}_not_built" "rc=$rc: $out"; fi
	done
else
	# shm has no RDMA address for eRPC.
	refuse erpc_needs_verbs '.systems = ["oq", "erpc"]' 'systems[1]' erpc '"transport": "verbs"'
fi
finish
