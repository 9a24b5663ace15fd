#!/usr/bin/env bash
# plugin.sh - the `plugin` back end end to end (docs/plugins.md): the
# example plugin (plugins/example-kv, built by make) behind oq, rawrpc and
# deferred on shm, histories recorded and found linearizable by `oqb
# check`, with kv and with a set/incr/get trace; the same source built out
# of the tree with the documented cc line (plain, so under make check it is
# a plugin without ASan in an ASan server); and the refusals, each before
# anything starts (exit 2, no results directory) and again by the server
# itself: a plugin built for another ABI version, one without the entry
# symbol, one with a NULL required function, a missing path, durable mode
# and incr on engines that lack them.  Options the engine rejects reach it
# and its message is the driver's error.
. "$(dirname "$0")/../lib.sh"
cd "${OQB_ROOT:-.}"

PLUGIN=$(cd "$OQB_UNIT/../plugins" 2>/dev/null && pwd)/example-kv.so
if [ ! -f "$PLUGIN" ]; then
	notok "example plugin built" "no $PLUGIN: make builds it from plugins/example-kv"
	finish
fi
BASE=$T/base.json
jq --arg p "$PLUGIN" '.server.backend.path = $p' configs/plugin-tiny.json >"$BASE"

# 1. oq, rawrpc, deferred with histories checked
out=$T/run
"$OQB_BIN/oqb" run "$BASE" --out "$out" --quiet >"$T/run.out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "plugin run (oq, rawrpc, deferred)" ||
	notok "plugin run (oq, rawrpc, deferred)" "oqb run exited $rc: $(tail -n 5 "$T/run.out")"
for sys in oq rawrpc deferred; do
	jcheck "$sys on the example plugin: history linearizable" "$out/run.json" \
		"[.points[] | select(.system == \"$sys\")][0] | .check.verdict == \"ok\" and .check.ops > 1000"
	jcheck "$sys on the example plugin: every request reached the engine, none failed" "$out/run.json" \
		"[.points[] | select(.system == \"$sys\")][0].server.per_worker | map(.backend) |
		 all(.backend == \"plugin\" and .plugin == \"example-kv\" and .abi == 1 and .caps == \"incr\" and
		     .status.error == 0 and .status.nospace == 0 and .plugin_faults == 0) and
		 (map(.ops.set) | add) > 500 and (map(.ops.get) | add) > 300 and
		 (map(.engine.sets) | add) == (map(.ops.set) | add)"
	# docs/plugins.md: every call on the worker's own thread, open included
	jcheck "$sys on the example plugin: each instance opened and served on its worker's own thread" "$out/run.json" \
		"[.points[] | select(.system == \"$sys\")][0].server.per_worker |
		 all(.tid > 0 and .backend.engine.open_tid == .tid and .backend.engine.calls_off_open_thread == 0) and
		 (map(.tid) | unique | length) == length"
done

# 2. incr through the plugin: a set/incr/get trace on 3 keys, numeric
# history, one request in flight (so the checker's search stays small)
awk 'BEGIN { srand(11); for (i = 0; i < 4000; i++) { r = rand(); k = int(rand() * 3);
	op = r < 0.2 ? "set" : r < 0.7 ? "incr" : "get";
	printf "%d,key%d,4,%d,1,%s,0\n", i, k, op == "set" ? 8 : 0, op } }' >"$T/incr.csv"
jq --arg t "$T/incr.csv" '.systems = ["oq", "rawrpc"] | .workload = {"kind": "trace", "path": $t} |
	.history = {"numeric": true} | .arrival = {"kind": "closed", "outstanding": 1}' "$BASE" >"$T/incr.json"
"$OQB_BIN/oqb" run "$T/incr.json" --out "$T/incr" --quiet >"$T/incr.out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "incr trace on the plugin" || notok "incr trace on the plugin" "exit $rc: $(tail -n 5 "$T/incr.out")"
jcheck "incr on the plugin: histories linearizable" "$T/incr/run.json" \
	'[.points[].check.verdict] == ["ok", "ok"]'
# the engine counted incrs at both points: a count of the plugin's own, not
# a rate (one request in flight beside a load of 20 answered fewer than 100)
jcheck "incr on the plugin: executed by the engine" "$T/incr/run.json" \
	'[.points[] | (.server.per_worker | map(.backend.engine.incrs) | add) > 0] == [true, true]'

# 3. built out of the tree with the documented line, without sanitizers
if cc -std=c11 -O2 -fPIC -shared -I include -o "$T/plain.so" plugins/example-kv/example_kv.c -ljansson 2>"$T/cc.err"; then
	ok "out-of-tree build: cc -std=c11 -O2 -fPIC -shared -I include"
else
	notok "out-of-tree build: cc -std=c11 -O2 -fPIC -shared -I include" "$(cat "$T/cc.err")"
fi
if launch_server plain 200 "$OQB_BIN/oqb-server" --system rawrpc --backend plugin --plugin-path "$T/plain.so" \
	--plugin-options '{"buckets": 64}' --cpus none; then
	"$OQB_BIN/oqb-client" --system rawrpc --server "$EP" --rate 2000 --duration-s 0.5 --threads 1 --cpus none \
		--workload '{"kind":"kv","put_ratio":0.5,"key_size":16,"value_size":64,"keys":50}' \
		>"$T/plain.client.json" 2>"$T/plain.client.err"
	kill -TERM "$SRV_PID"
	wait "$SRV_PID"
	sed '/^ready: /d' "$T/plain.srv.out" >"$T/plain.stats.json"
	jcheck "plain-built plugin serves a client" "$T/plain.client.json" '.summary_ns.all.n > 500'
	jcheck "plain-built plugin: its table and options in the server's counters" "$T/plain.stats.json" \
		'.per_worker[0].backend | .plugin == "example-kv" and .engine.buckets == 64 and .engine.sets > 200'
	jcheck "plain-built plugin: opened, served and asked for stats on the worker's thread" "$T/plain.stats.json" \
		'.per_worker[0] | .backend.engine.open_tid == .tid and .backend.engine.calls_off_open_thread == 0'
	if grep -q "close on thread" "$T/plain.srv.err"; then
		notok "plain-built plugin: closed on the thread that opened it" "$(grep "close on thread" "$T/plain.srv.err")"
	else
		ok "plain-built plugin: closed on the thread that opened it"
	fi
else
	notok "plain-built plugin serves a client" "$(cat "$T/plain.srv.err")"
fi

# server_refuses NAME WORD... -- SERVER ARGS: oqb-server exits non-zero
# before it is ready, with every WORD in its error.
server_refuses() {
	local name=$1 words=() w miss=""
	shift
	while [ "$1" != -- ]; do words+=("$1"); shift; done
	shift
	"$OQB_BIN/oqb-server" --system oq --cpus none "$@" >"$T/$name.out" 2>"$T/$name.err"
	local rc=$?
	for w in "${words[@]}"; do grep -qF -- "$w" "$T/$name.err" || miss="$miss [$w]"; done
	if [ $rc -eq 0 ] || grep -q '^ready' "$T/$name.out"; then notok "$name" "server started (rc $rc)"
	elif [ -n "$miss" ]; then notok "$name" "message lacks$miss: $(cat "$T/$name.err")"
	else ok "$name"; fi
}

# 4. a plugin built against another ABI version of the header
mkdir -p "$T/inc99"
sed 's/^#define OQB_PLUGIN_ABI_VERSION 1$/#define OQB_PLUGIN_ABI_VERSION 99/' include/oqb_plugin.h >"$T/inc99/oqb_plugin.h"
grep -q 'ABI_VERSION 99' "$T/inc99/oqb_plugin.h" || notok "header copy with ABI 99" "sed did not apply"
cc -std=c11 -fPIC -shared -I "$T/inc99" -o "$T/abi99.so" plugins/example-kv/example_kv.c -ljansson
refused "ABI 99 plugin refused by the driver" ".server.backend.path = \"$T/abi99.so\"" \
	"plugin abi99.so was built for oqbench plugin ABI 99; this server speaks 1" "rebuild it against include/oqb_plugin.h"
server_refuses "ABI 99 plugin refused by the server" "abi99.so was built for oqbench plugin ABI 99; this server speaks 1" \
	-- --backend plugin --plugin-path "$T/abi99.so"

# 5. no entry symbol; a NULL required function; no incr
echo 'int not_a_plugin(void) { return 1; }' >"$T/noentry.c"
cc -fPIC -shared -o "$T/noentry.so" "$T/noentry.c"
refused "plugin without the entry symbol refused" ".server.backend.path = \"$T/noentry.so\"" \
	"noentry.so has no oqb_plugin_entry()" "export const struct oqb_plugin *oqb_plugin_entry(void)"
server_refuses "plugin without the entry symbol refused by the server" "has no oqb_plugin_entry()" \
	-- --backend plugin --plugin-path "$T/noentry.so"
cat >"$T/stub.c" <<'EOF'
#include "oqb_plugin.h"
static int st;
static void *op(const struct oqb_plugin_conf *c, char *e, size_t n) { (void)c; (void)e; (void)n; return &st; }
static void cl(void *i) { (void)i; }
static int gt(void *i, const uint8_t *k, uint32_t kl, uint8_t *v, uint32_t cap, uint32_t *vl)
{ (void)i; (void)k; (void)kl; (void)v; (void)cap; (void)vl; return OQB_NOT_FOUND; }
static int st_(void *i, const uint8_t *k, uint32_t kl, const uint8_t *v, uint32_t vl)
{ (void)i; (void)k; (void)kl; (void)v; (void)vl; return OQB_OK; }
static int dl(void *i, const uint8_t *k, uint32_t kl) { (void)i; (void)k; (void)kl; return OQB_OK; }
static const struct oqb_plugin t = { OQB_PLUGIN_ABI_VERSION, sizeof t, "stub", "0", 0, 0, 0,
	op, cl, STUB_GET, st_, dl, 0, 0 };
const struct oqb_plugin *oqb_plugin_entry(void) { return &t; }
EOF
cc -std=c11 -fPIC -shared -I include -DSTUB_GET=gt -o "$T/stub.so" "$T/stub.c"
cc -std=c11 -fPIC -shared -I include -DSTUB_GET=0 -o "$T/noget.so" "$T/stub.c"
refused "plugin with a NULL get refused" ".server.backend.path = \"$T/noget.so\"" \
	"noget.so (engine stub): .get is NULL" "open, close, get, set and del"
refused "incr workload on a plugin without incr refused" \
	".server.backend.path = \"$T/stub.so\" | .workload = {\"kind\": \"trace\", \"path\": \"$T/incr.csv\"}" \
	"it sends incr, but plugin stub.so (engine stub) does not declare OQB_CAP_INCR"

# 6. a missing path; durable mode on an engine that is not durable
refused "missing plugin path refused" ".server.backend.path = \"$T/nonexistent.so\"" \
	"plugin $T/nonexistent.so: No such file or directory" "backend.path"
refused "no path at all refused" "del(.server.backend.path)" "server.backend.path: missing"
refused "durable oq on a non-durable plugin refused" ".durable = [\"oq\"]" \
	"plugin example-kv.so (engine example-kv) does not declare OQB_CAP_DURABLE" "set durable to false"
server_refuses "durable server on a non-durable plugin refused" "does not declare OQB_CAP_DURABLE" \
	-- --backend plugin --plugin-path "$PLUGIN" --durable --pmem-path "$T/pmem"
refused "pmkv's key on a plugin refused" ".server.backend.pool_mb = 4" "pool_mb: not used by kind \"plugin\""

# 7. options the engine rejects: its own message is the driver's error
jq '.server.backend.options = {"buckets": 1000} | .systems = ["oq"]' "$BASE" >"$T/badopt.json"
"$OQB_BIN/oqb" run "$T/badopt.json" --out "$T/badopt" --quiet >"$T/badopt.out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -qF "example-kv: option buckets: 1000 is not a power of two" "$T/badopt.out"; then
	ok "options the engine rejects: its message in the driver's error"
else
	notok "options the engine rejects: its message in the driver's error" "rc $rc: $(tail -n 5 "$T/badopt.out")"
fi
left=$(procs_alive "$T/badopt/processes.tsv" 2>/dev/null)
[ -z "$left" ] && ok "nothing left running after the refused options" || notok "nothing left running after the refused options" "$left"
server_refuses "unknown option refused by the engine" 'example-kv: unknown option "bukets"' \
	-- --backend plugin --plugin-path "$PLUGIN" --plugin-options '{"bukets": 64}'
finish
