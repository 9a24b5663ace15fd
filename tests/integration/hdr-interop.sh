#!/usr/bin/env bash
# hdr-interop.sh - lib/hdrenc against an independent implementation of
# HdrHistogram's V2 compressed encoding: the npm package hdr-histogram-js
# (installed into this test's temporary directory, never into the tree).
#   C -> JS: test_hdrenc --emit writes our encodings with what any reader
#            must find (total count, min, max, percentiles, count at value);
#            hdr-histogram-js decodes them and compares.
#   JS -> C: hdr-histogram-js encodes histograms of several kinds (typed
#            arrays, packed, WebAssembly, auto-resized, other ranges); our
#            decoder must give the counts it recorded, and refuse the layouts
#            we cannot read (2 digits, lowest 1000, values past 2^40 - 1)
#            with a message naming the reason.
# Without node, npm or the registry the cases are skipped, never passed.
. "$(dirname "$0")/../lib.sh"
cd "${OQB_ROOT:-.}"
U=$OQB_UNIT/test_hdrenc

if [ ! -x "$U" ]; then
	notok hdr-interop-binary "$U is missing; run make"
	finish
fi
for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		skip hdr-interop "$tool is not installed (Debian: apt-get install nodejs npm)"
		exit 0
	fi
done
if ! timeout 300 npm install --prefix "$T" --no-audit --no-fund hdr-histogram-js >"$T/npm.log" 2>&1 ||
   [ ! -d "$T/node_modules/hdr-histogram-js" ]; then
	why=$(grep -m 1 -E 'npm (error|ERR!) (code|FetchError|network)' "$T/npm.log" || tail -n 1 "$T/npm.log")
	skip hdr-interop "npm install hdr-histogram-js failed (no network or registry?): $why"
	exit 0
fi
ok hdr-interop-npm-install

cat >"$T/interop.js" <<'EOF'
// node interop.js decode C.json   : check our encodings with hdr-histogram-js
// node interop.js encode OUT.json : write hdr-histogram-js encodings for test_hdrenc --check-js
const fs = require("fs");
const hdr = require("hdr-histogram-js");
const [mode, file] = process.argv.slice(2);

if (mode === "decode") {
	let failed = 0;
	for (const c of JSON.parse(fs.readFileSync(file, "utf8"))) {
		const bad = [];
		let h;
		try {
			h = hdr.decodeFromCompressedBase64(c.b64, 64);   // Float64 counts: exact below 2^53
		} catch (e) {
			bad.push("decode threw " + e.message);
		}
		if (h) {
			const same = (what, got, want) => { if (got !== want) bad.push(`${what}: ${got}, want ${want}`); };
			same("totalCount", h.totalCount, c.n);
			if (c.max !== null) same("maxValue", h.maxValue, c.max);
			if (c.min_nonzero !== null) same("minNonZeroValue", h.minNonZeroValue, c.min_nonzero);
			for (const [p, v] of c.pct) same(`getValueAtPercentile(${p})`, h.getValueAtPercentile(p), v);
			for (const [v, n] of c.at) same(`getCountAtValue(${v})`, h.getCountAtValue(v), n);
		}
		if (bad.length) {
			failed++;
			console.log(`not ok hdr-interop-js-reads-c-${c.name}`);
			console.error("  " + bad.slice(0, 5).join("\n  "));
		} else {
			console.log(`ok hdr-interop-js-reads-c-${c.name}`);
		}
	}
	process.exit(failed ? 1 : 0);
}

// A deterministic lognormal-ish latency in ns (LCG + Box-Muller), as integers.
let seed = 12345;
const uniform = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return (seed + 0.5) / 2147483648; };
const latency = () => Math.round(20000 * Math.exp(0.9 * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform())));

const out = [];
function add(name, request, values, expectError) {
	const h = hdr.build(request);
	for (const [v, n] of values) h.recordValueWithCount(v, n);
	out.push({ name, b64: hdr.encodeIntoCompressedBase64(h), values: expectError ? [] : values,
		   expect_error: expectError || null });
}
const ns = { lowestDiscernibleValue: 1, numberOfSignificantValueDigits: 3 };
const spread = [[0, 2], [1, 1], [2047, 3], [2048, 1], [2049, 1], [2 ** 40 - 1, 1]];
for (let i = 0; i < 500; i++) spread.push([latency(), 1 + (i % 3)]);

add("int32", { ...ns, bitBucketSize: 32, highestTrackableValue: 3600e9 }, spread);
add("int16", { ...ns, bitBucketSize: 16, highestTrackableValue: 2 ** 40 - 1 }, spread.slice(0, 100));
add("packed", { ...ns, bitBucketSize: "packed", highestTrackableValue: 3600e9 }, spread);
add("float64-big-counts", { ...ns, bitBucketSize: 64, highestTrackableValue: 1e12 },
    [[77, 5], [1e6, 2 ** 40], [123456789, 2 ** 33 + 1]]);
add("auto-resized", {}, [[3, 1], [999, 2], [1e9, 4]]);   // build()'s defaults: highest 2, auto-resize
try {
	hdr.initWebAssemblySync();
	add("webassembly", { ...ns, useWebAssembly: true, highestTrackableValue: 3600e9 }, spread);
} catch (e) {
	console.error("hdr-histogram-js WebAssembly unavailable: " + e.message);
}
add("two-digits", { lowestDiscernibleValue: 1, numberOfSignificantValueDigits: 2, highestTrackableValue: 1e9 },
    [[5000, 1]], "2 significant value digits");
add("lowest-1000", { lowestDiscernibleValue: 1000, numberOfSignificantValueDigits: 3, highestTrackableValue: 1e12 },
    [[5000, 1]], "lowest discernible value 1000");
add("beyond-2-40", { ...ns, highestTrackableValue: 2 ** 45 }, [[5, 1], [2 ** 44, 1]], "past the last counter");
fs.writeFileSync(file, JSON.stringify(out));
EOF

# C -> JS
if "$U" --emit "$T/c.json" 2>"$T/emit.err"; then
	ok hdr-interop-emit
	node "$T/interop.js" decode "$T/c.json" || TEST_FAILED=1
else
	notok hdr-interop-emit "$(cat "$T/emit.err")"
fi

# JS -> C
if node "$T/interop.js" encode "$T/js.json" 2>"$T/js.err"; then
	ok hdr-interop-js-encode
	jcheck hdr-interop-js-cases "$T/js.json" 'length >= 8 and all(.[]; .b64 | startswith("HISTF"))'
	"$U" --check-js "$T/js.json" || TEST_FAILED=1
else
	notok hdr-interop-js-encode "$(cat "$T/js.err")"
fi
finish
