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


# A misspelt name is answered with erpc: the name is known.
refused erpc_known_name '.systems = ["oq", "erpcc"]' 'systems[1]' 'did you mean "erpc"'
if [ "${OQB_ERPC:-0}" != 1 ]; then
	refused erpc_not_built '.transport = "verbs" | .systems = ["oq", "erpc"]' \
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
	refused erpc_needs_verbs '.systems = ["oq", "erpc"]' 'systems[1]' erpc '"transport": "verbs"'
fi
finish
