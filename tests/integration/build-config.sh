#!/usr/bin/env bash
# build-config.sh - the build records its configuration and rebuilds when
# it changes (the Makefile's $(O)/config.stamp): which optional parts it
# has depends on the headers installed, and `make demo` installs fewer
# than `make test`, so a build made without the verbs headers must not be
# reused once they are there.  In a build tree of its own (one object, a
# few seconds): the stamp names the optional parts; the object is up to
# date for the same configuration and for -Werror alone; without the verbs
# headers (VERBS_INC pointing at an empty directory, as on a machine with
# the demo's packages only) and with another CFLAGS it is not, and it is
# rebuilt; back with the headers it is out of date again.  Then
# install-deps.sh's package sets: the demo's holds what demo.sh runs and
# no test tool, and make deps' holds every set.
. "$(dirname "$0")/../lib.sh"

B=$T/b
mk() { make --no-print-directory -C "$OQB_ROOT" O="$B" BIN="$B/bin" "$@" "$B/lib/hist.o"; }
uptodate() { mk -q "$@" >/dev/null 2>&1; }
mkdir -p "$T/noverbs"

if mk >"$T/build.out" 2>&1 && [ -s "$B/lib/hist.o" ] && grep -qx 'HAVE_VERBS=1' "$B/config.stamp" &&
	grep -q '^CFLAGS_ALL=.*-DOQB_HAVE_VERBS=1' "$B/config.stamp" && grep -q '^HAVE_ROCKSDB=' "$B/config.stamp"; then
	ok "the stamp records the optional parts (verbs headers here: make test installs them)"
else
	notok "the stamp records the optional parts" "$(tail -3 "$T/build.out"; cat "$B/config.stamp" 2>/dev/null | cut -c1-120)"
fi
if uptodate && uptodate WERROR=1; then ok "same configuration (and -Werror alone): nothing to rebuild"
else notok "same configuration (and -Werror alone): nothing to rebuild" "make -q says out of date"; fi

# A slim build: no verbs headers.
if ! uptodate VERBS_INC="$T/noverbs" && grep -qx 'HAVE_VERBS=0' "$B/config.stamp"; then
	ok "without the verbs headers the object is out of date"
else notok "without the verbs headers the object is out of date" "$(head -3 "$B/config.stamp")"; fi
touch -d '2000-01-01' "$B/lib/hist.o"
before=$(stat -c %Y "$B/lib/hist.o")
mk VERBS_INC="$T/noverbs" >"$T/slim.out" 2>&1
if [ "$(stat -c %Y "$B/lib/hist.o")" != "$before" ] && uptodate VERBS_INC="$T/noverbs"; then
	ok "the slim configuration rebuilds, then is up to date"
else notok "the slim configuration rebuilds, then is up to date" "$(tail -3 "$T/slim.out")"; fi
# Headers installed since (make test after make demo): rebuilt, not reused.
if ! uptodate && grep -qx 'HAVE_VERBS=1' "$B/config.stamp"; then
	ok "with the verbs headers back the slim build is not reused"
else notok "with the verbs headers back the slim build is not reused" "make -q says up to date"; fi
mk >/dev/null 2>&1
if uptodate && ! uptodate CFLAGS=-DOQB_TEST_CONFIG_CHANGE=1; then ok "another CFLAGS is another configuration"
else notok "another CFLAGS is another configuration" "make -q did not tell the change"; fi

# The package sets.
demo=$("$OQB_ROOT/harness/install-deps.sh" --list demo)
all=$("$OQB_ROOT/harness/install-deps.sh" --list)
unit=$("$OQB_ROOT/harness/install-deps.sh" --list unit)
miss=""
for p in libjansson-dev libpmem-dev libzstd-dev zlib1g-dev jq gnuplot-nox bsdextrautils; do
	grep -qx "$p" <<<"$demo" || miss="$miss $p"
done
extra=$(grep -xE 'chromium|qemu-system-x86|linux-image-amd64|slurmctld|munge|memcached|librocksdb-dev|valgrind|libibverbs-dev' <<<"$demo" | tr '\n' ' ')
if [ -z "$miss" ] && [ -z "$extra" ]; then ok "the demo's packages: what demo.sh runs, no test tool"
else notok "the demo's packages: what demo.sh runs, no test tool" "missing:$miss; not the demo's: $extra"; fi
if [ -z "$(comm -23 <(printf '%s\n%s\n' "$demo" "$unit" | sort -u) <(sort <<<"$all"))" ] &&
	grep -qx qemu-system-x86 <<<"$all" && grep -qx chromium <<<"$all" && grep -qx libibverbs-dev <<<"$unit" &&
	! grep -qx chromium <<<"$unit"; then
	ok "make deps holds every set; unit is the whole build without the test tools"
else notok "make deps holds every set; unit is the whole build without the test tools" "$(comm -23 <(printf '%s\n%s\n' "$demo" "$unit" | sort -u) <(sort <<<"$all") | tr '\n' ' ')"; fi
# the names demo.sh runs are in the demo's set: jq, column (bsdextrautils), gnuplot (oqb plot)
if grep -q '\bjq\b' "$OQB_ROOT/harness/demo.sh" && grep -q 'column -t' "$OQB_ROOT/harness/demo.sh"; then
	ok "demo.sh runs jq and column, both in the demo's set"
else notok "demo.sh runs jq and column, both in the demo's set" "demo.sh changed: check install-deps.sh's DEMO"; fi
finish
