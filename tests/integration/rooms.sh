#!/usr/bin/env bash
# rooms.sh - the build enforces the rooms (docs/architecture.md, "Rooms"):
#  - no harness/ file outside harness/crash/ includes a header of
#    bench/transports/ or bench/backends/, and one that tries does not
#    compile with the harness layer's include path (make print-layer-includes);
#  - bin/oqb links no transport or back-end code: none of the global
#    symbols that liboqb-bench.a defines is in it (nm), it calls no
#    ibv_/rdma_ function, and it needs neither libibverbs nor libstdc++;
#  - oqb-server and oqb-client print their build (--build-info: id,
#    transports, backends, compiler, flags);
#  - a run whose bin_dir holds two builds (a copy of bin/ whose oqb-client
#    has its embedded id patched) is refused before anything starts, the
#    message naming both ids and the bin_dir; a binary replaced by another
#    build during a run fails its next point at HELLO, naming both ids;
#  - `oqb ab` with such a NEW refuses it, naming both ids, and ab.json
#    records each side's build id.
# Only loopback is used; only PIDs started here are ended.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
O=$OQB_BIN/oqb
cd "$ROOT" || exit 1

# 1. includes: by grep, then by the compiler with the layer's flags
bad=$(grep -rnE '#include "[^"]*"' harness --include='*.[ch]' | grep -v '^harness/crash/' |
	while IFS= read -r line; do
		h=$(sed -n 's/.*#include "\([^"]*\)".*/\1/p' <<<"$line")
		if [ -n "$(find bench/transports bench/backends -name "$h" 2>/dev/null)" ]; then echo "$line"; fi
	done)
[ -z "$bad" ] && ok rooms_harness_includes || notok rooms_harness_includes "harness/ includes transport or backend headers: $bad"
inc=$(make -s --no-print-directory print-layer-includes LAYER=harness)
printf '#include "transport.h"\nint x;\n' >"$T/probe.c"
if [ -n "$inc" ] && ! cc $inc -fsyntax-only "$T/probe.c" 2>"$T/probe.err" && grep -q 'transport.h' "$T/probe.err"; then
	ok rooms_harness_cannot_include_transport
else
	notok rooms_harness_cannot_include_transport "a harness file including transport.h compiled with: $inc"
fi
printf '#include "runconf.h"\nint x;\n' >"$T/probe2.c"   # the control: its own headers do compile
cc $inc -fsyntax-only "$T/probe2.c" 2>"$T/probe2.err" && ok rooms_harness_includes_own ||
	notok rooms_harness_includes_own "$(cat "$T/probe2.err")"

# 1b. harness/'s folders include each other one way: the edges "FROM TO"
# (a file of FROM includes a header that lives in TO) sort topologically
# (tsort refuses a loop); the control is a made-up loop
harness_edges() {
	for f in harness/*/*.[ch]; do
		from=$(basename "$(dirname "$f")")
		sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while IFS= read -r h; do
			for to in harness/*/; do
				to=$(basename "$to")
				[ "$to" != "$from" ] && [ -f "harness/$to/$h" ] && echo "$from $to"
			done
		done
	done | sort -u
}
harness_edges >"$T/edges"
if [ -s "$T/edges" ] && tsort "$T/edges" >/dev/null 2>"$T/tsort.err" &&
   grep -q '^run result$' "$T/edges" && grep -q '^verdict run$' "$T/edges"; then
	ok rooms_harness_no_circle
else
	notok rooms_harness_no_circle "harness/ folders include each other in a circle: $(cat "$T/tsort.err") (edges: $(tr '\n' ',' <"$T/edges"))"
fi
{ cat "$T/edges"; echo "result verdict"; } | tsort >/dev/null 2>&1 &&
	notok rooms_harness_circle_control "tsort accepted a loop (result -> verdict -> run -> result)" ||
	ok rooms_harness_circle_control

# 2. bin/oqb's symbols and libraries
LIBB=$(dirname "$OQB_UNIT")/liboqb-bench.a
if [ ! -f "$LIBB" ]; then
	notok rooms_oqb_symbols "no $LIBB"
else
	nm -g --defined-only "$LIBB" 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDBR]/ {print $3}' | sort -u >"$T/bench.syms"
	nm --defined-only "$O" | awk '{print $3}' | sort -u >"$T/oqb.syms"
	both=$(comm -12 "$T/bench.syms" "$T/oqb.syms" | head -20)
	ibv=$(nm -u "$O" | grep -E ' (ibv_|rdma_|erpc|_Z)' | head)
	if [ "$(wc -l <"$T/bench.syms")" -gt 50 ] && [ -z "$both" ] && [ -z "$ibv" ] &&
	   grep -q '^transport_find$' "$T/bench.syms"; then
		ok rooms_oqb_symbols
	else
		notok rooms_oqb_symbols "bin/oqb defines bench symbols [$both] or calls [$ibv] ($(wc -l <"$T/bench.syms") bench symbols)"
	fi
fi
# its own NEEDED entries (ldd would add the sanitizer runtime's libstdc++)
libs=$(readelf -d "$O" | grep NEEDED | grep -E 'libibverbs|librdmacm|libstdc\+\+|librocksdb|libnuma')
[ -z "$libs" ] && ok rooms_oqb_libraries || notok rooms_oqb_libraries "bin/oqb needs: $libs"

# 3. --build-info
mine=$("$OQB_BIN/oqb-server" --build-id)
for p in server client; do
	if "$OQB_BIN/oqb-$p" --build-info | jq -e --arg id "$mine" --arg p "oqb-$p" \
		'.build_id == $id and .program == $p and (.transports | has("shm")) and (.backends | index("null")) and
		 (.compiler | length > 0) and (.flags | test("-std=gnu11"))' >/dev/null; then ok "rooms_build_info_$p"
	else notok "rooms_build_info_$p" "$("$OQB_BIN/oqb-$p" --build-info 2>&1)"; fi
done

# 4. a bin_dir holding two builds
mkdir -p "$T/other"
cp "$OQB_BIN"/oqb-server "$OQB_BIN"/oqb-client "$OQB_BIN"/oqb-floor "$T/other/"
fake=0123456789abcdef
[ "$mine" = "$fake" ] && fake=fedcba9876543210
cp "$T/other/oqb-client" "$T/client-other"
LC_ALL=C sed -i "s/oqb-build-id:$mine/oqb-build-id:$fake/" "$T/client-other"
if [ "$("$T/client-other" --build-id)" != "$fake" ]; then
	notok rooms_patched_copy "could not make a copy with another build id"
fi
CFG=configs/tiny.json
ONE=(--set duration_s=0.3 --set warmup_s=0.1 --set 'systems=["oq"]' --set canary=false --set rerun_disturbed=0)
cp "$T/client-other" "$T/other/oqb-client"
"$O" run "$CFG" "${ONE[@]}" --set "hosts={\"bin_dir\":\"$T/other\"}" --quiet --out "$T/mixed" >"$T/mixed.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "oqb-server on 127.0.0.1 (bin_dir $T/other) is build $mine" "$T/mixed.out" &&
   grep -q "oqb-client on 127.0.0.1 (bin_dir $T/other) is build $fake" "$T/mixed.out" && [ ! -e "$T/mixed" ]; then
	ok rooms_run_refuses_two_builds
else
	notok rooms_run_refuses_two_builds "rc=$rc: $(cat "$T/mixed.out")"
fi

# the same, with the other build put in place after the run's first point
cp "$OQB_BIN/oqb-client" "$T/other/oqb-client"
"$O" run "$CFG" "${ONE[@]}" --set 'arrival.loads_ops=[3000,4000,5000,6000]' --set "hosts={\"bin_dir\":\"$T/other\"}" \
	--quiet --out "$T/swap" >"$T/swap.out" 2>&1 &
pid=$!
for _ in $(seq 600); do
	[ -s "$T/swap/processes.tsv" ] && [ "$(wc -l <"$T/swap/processes.tsv")" -ge 2 ] && break
	sleep 0.05
done
cp "$T/client-other" "$T/other/.c" && mv -f "$T/other/.c" "$T/other/oqb-client"
wait $pid
rc=$?
if [ $rc -eq 5 ] && grep -q "is build $fake, but this run's is $mine (oqb-server in bin_dir $T/other" "$T/swap.out" &&
   jq -e '.status == "failed" and (.error.message | test("is build"))' "$T/swap/run.json" >/dev/null; then
	ok rooms_hello_other_build
else
	notok rooms_hello_other_build "rc=$rc: $(cat "$T/swap.out")"
fi

# 5. oqb ab: NEW whose client is another build; BASE and NEW record theirs
cat >"$T/ab.json" <<CFGEOF
{ "name": "rooms-ab", "transport": "shm", "systems": ["oq"],
  "server": { "workers": 1, "backend": { "kind": "null" } },
  "clients": { "processes": 1, "threads": 1 },
  "workload": { "kind": "kv", "put_ratio": 0.5, "key_size": 16, "value_size": 64, "keys": 100 },
  "arrival": { "kind": "poisson", "loads_ops": [2000] },
  "warmup_s": 0.1, "duration_s": 0.2, "seed": 3 }
CFGEOF
"$O" ab "$T/ab.json" --quiet --base "$OQB_BIN" --new "$T/other" --trials 2 --out "$T/ab1" >"$T/ab1.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "is build $fake" "$T/ab1.out" && grep -q "$mine" "$T/ab1.out"; then
	ok rooms_ab_side_two_builds
else
	notok rooms_ab_side_two_builds "rc=$rc: $(cat "$T/ab1.out")"
fi
finish
