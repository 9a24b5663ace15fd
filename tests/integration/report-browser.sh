#!/usr/bin/env bash
# report-browser.sh - the report of `oqb figures` in a real browser:
# Debian's chromium, headless, loads index.html from the file system (no
# server, no network) and a small script injected into a copy of the page
# writes into the DOM how many images it has, which of them did not
# render (naturalWidth 0) and how many rows the claims table has; the
# page is dumped with --dump-dom and chromium's console log (--enable-logging
# --v=0, one "CONSOLE" line per message) must be empty.  Negative controls:
# the same report with one figure's file missing is caught by the image
# check, and a script error on it by the console check (headless chromium
# logs no console line for a missing file:// image).  Nothing is installed here: chromium comes
# from harness/install-deps.sh (make deps); without it the test skips.
. "$(dirname "$0")/../lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	skip report-browser "no chromium (make deps installs Debian's chromium)"
	finish
fi

# The probe: after the page loaded, write what it found into the DOM.
PROBE='<script>window.addEventListener("load", function () {
	var im = document.images, bad = [];
	for (var i = 0; i < im.length; i++)
		if (!(im[i].complete && im[i].naturalWidth > 0))
			bad.push(im[i].getAttribute("src"));
	var t = document.querySelector("table#claims tbody");
	var p = document.createElement("pre");
	p.id = "oqb-probe";
	p.textContent = "PROBE images=" + im.length + " broken=" + bad.length + " [" + bad.join(",") +
		"] claimrows=" + (t ? t.rows.length : 0);
	document.body.appendChild(p);
});</script>'

# load DIR NAME [EXTRA]: dumps DIR/check.html (DIR/index.html with the
# probe, and EXTRA before it) into $T/NAME.dom, chromium's log in $T/NAME.log
load() {
	local dir=$1 name=$2 extra=${3:-} html
	html=$(cat "$dir/index.html")
	printf '%s%s%s</body>%s\n' "${html%</body>*}" "$extra" "$PROBE" "${html##*</body>}" >"$dir/check.html"
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$T/profile-$name" --enable-logging=stderr --v=0 \
		--virtual-time-budget=10000 --dump-dom "file://$dir/check.html" >"$T/$name.dom" 2>"$T/$name.log"
}

probe() { sed -n 's/.*<pre id="oqb-probe">\([^<]*\)<.*/\1/p' "$T/$1.dom" | head -1; }
console() { grep -c ':CONSOLE' "$T/$1.log"; }

if ! "$OQB_BIN/oqb" figures --runs "$OQB_ROOT/tests/figures/holds" --out "$T/good" >"$T/good.out" 2>&1; then
	notok report-built "$(cat "$T/good.out")"
	finish
fi
ok report-built
load "$T/good" good
pr=$(probe good)
case $pr in
"PROBE images=8 broken=0 "*) ok report-images-render ;;
*) notok report-images-render "probe: '${pr:-none}' (chromium log: $(tail -3 "$T/good.log"))" ;;
esac
rows=$(sed -n 's/.*claimrows=\([0-9]*\).*/\1/p' <<<"$pr")
if [ "${rows:-0}" -ge 30 ]; then ok report-claims-table; else notok report-claims-table "claims rows: '${rows:-none}'"; fi
n=$(console good)
if [ "$n" -eq 0 ]; then ok report-console-clean
else notok report-console-clean "$(grep ':CONSOLE' "$T/good.log" | head -3)"; fi
if grep -q 'Fixture CPU &lt;&amp;&gt; &quot;quoted&quot;' "$T/good/index.html" &&
	! grep -q 'Fixture CPU <&>' "$T/good/index.html"; then ok report-escapes-text
else notok report-escapes-text "the fixture's CPU model '<&>' is not escaped in index.html"; fi
if grep -qiE '(src|href)="(https?:)?//' "$T/good/index.html"; then notok report-no-network "index.html refers to the network"
else ok report-no-network; fi

# negative controls: a figure's file missing, and a script error on the page
cp -r "$T/good" "$T/bad" && rm -f "$T/bad/fig8.svg" "$T/bad/check.html"
load "$T/bad" bad '<script>no_such_function();</script>'
pr=$(probe bad)
case $pr in
*"broken=1 [fig8.svg]"*) ok negative-control-broken-image ;;
*) notok negative-control-broken-image "a missing fig8.svg went unnoticed: '${pr:-none}'" ;;
esac
if [ "$(console bad)" -gt 0 ]; then ok negative-control-console
else notok negative-control-console "a script error reached no console line: $(tail -3 "$T/bad.log")"; fi
finish
