#!/usr/bin/env bash
# run-verbs.sh - the verbs transport's tests (make test, make test-verbs).
#
# Boots ONE Soft-RoCE VM with tests/vm/rxe-vm and runs
# tests/verbs/guest-suite.sh inside it; the guest's "ok" / "not ok" lines
# come back on stdout as they are printed.  When no VM can start here the
# result is "skip verbs: <reason>" -- except under CI=true, where it is
# "not ok": CI must run these.  Never "ok" without having run them.
#
# The C checks (tests/verbs/vtest.c) are compiled here on the host, against
# the same liboqb.a as the binaries, for baseline x86-64 (the guest's
# emulated CPU has no AVX-512).
set -u
cd "$(dirname "$0")/../.."
: "${OQB_BIN:?run through tests/run-tests.sh (make test)}"
: "${OQB_UNIT:?run through tests/run-tests.sh (make test)}"

unavailable() {   # unavailable REASON: skip, or fail under CI
	if case ${CI:-} in true|1|yes) true ;; *) false ;; esac; then
		echo "not ok verbs: $1"
		exit 1
	fi
	echo "skip verbs: $1"
	exit 0
}

[ -x tests/vm/rxe-vm ] || unavailable "tests/vm/rxe-vm is missing"
"$OQB_BIN/oqb-server" --list-devices >/dev/null 2>&1
[ $? -eq 2 ] && unavailable "oqb-server was built without the verbs transport (install libibverbs-dev and librdmacm-dev, rebuild)"
if ! why=$(tests/vm/rxe-vm -c 2>&1); then
	unavailable "no Soft-RoCE VM can start here: $(echo "$why" | tail -1)"
fi

# Build the C checks next to the unit tests.
liba=$(dirname "$OQB_UNIT")/liboqb.a
vt=$OQB_UNIT/verbs-vtest
san=()
incs=$(make -s --no-print-directory print-includes)
[ "${OQB_SANITIZE:-}" = 1 ] && san=(-fsanitize=address,undefined -fno-omit-frame-pointer)
if ! ${CC:-cc} -std=gnu11 -g -O2 -pthread -D_GNU_SOURCE -DOQB_HAVE_VERBS=1 -DOQB_HAVE_VERBS_TRANSPORT=1 \
	-Wall -Wextra -Wno-unused-parameter "${san[@]}" $incs \
	-o "$vt" tests/verbs/vtest.c "$liba" -ljansson -lpmem -lzstd -lm -lpthread -lrdmacm -libverbs \
	2>"$OQB_UNIT/verbs-vtest.log"; then
	echo "not ok verbs: cannot build tests/verbs/vtest.c:"
	sed 's/^/  /' "$OQB_UNIT/verbs-vtest.log"
	vt=
fi

# One VM for everything: ~10 minutes at most under TCG.  The output is
# relayed line by line and kept, to tell "the VM never started" from "it
# died in the middle".
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tests/vm/rxe-vm -t "${OQB_VERBS_VM_TIMEOUT:-720}" -e OQB_VTEST="$vt" -e OQB_VERBS_BENCH="${OQB_VERBS_BENCH:-0}" -- bash tests/verbs/guest-suite.sh |
	tee "$out"
rc=${PIPESTATUS[0]}
ran=$(grep -cE '^(ok|not ok) ' "$out")
case $rc in
0) ;;
124) echo "not ok verbs: the VM hit its time limit (${OQB_VERBS_VM_TIMEOUT:-720} s) after $ran case(s)" ;;
125) [ "$ran" -eq 0 ] && unavailable "the VM failed to start (see the console tail above)"
     echo "not ok verbs: the VM died after $ran case(s) (see the console tail above)" ;;
*) grep -q '^not ok ' "$out" || echo "not ok verbs: the guest suite exited with status $rc" ;;
esac
[ -n "$vt" ] || exit 1
exit $rc
