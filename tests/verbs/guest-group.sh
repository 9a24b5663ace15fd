#!/usr/bin/env bash
# guest-group.sh - inside the Soft-RoCE VM, the guest scripts named on its
# command line, one after another in one boot (tests/verbs/run-guests.sh
# starts it): `guest-group.sh check engines rnr` runs guest-check.sh,
# guest-engines.sh and guest-rnr.sh.  Each keeps its own files, ports and
# cleanup; their "ok" / "not ok" / "skip" / "timing-fail" lines pass
# through as they are printed, and a line on stderr marks where each
# starts and how long it took.  Exits non-zero when any of them did.
cd "$(dirname "$0")/../.." || exit 1
rc=0
for g in "$@"; do
	s=tests/verbs/guest-$g.sh
	if [ ! -f "$s" ]; then
		echo "not ok guest-group: no $s"
		rc=1
		continue
	fi
	t0=$SECONDS
	echo "  == guest-$g" >&2
	bash "$s" </dev/null || rc=1
	echo "  == guest-$g: $((SECONDS - t0)) s" >&2
done
exit $rc
