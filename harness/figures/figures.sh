#!/usr/bin/env bash
# figures.sh - `make figures`: every paper figure's config (configs/fig*.json)
# at a quick scale on this machine, the T_gap CDF of the sample traces, then
# `oqb figures`, which draws Figs 2 and 6-11 and writes the report.  The
# last line printed is the path of the report's index.html.
#
# Usage: harness/figures/figures.sh   (make figures builds first)
# Environment: OQB_BIN (default bin), FIGURES_OUT (default
# results/figures-UTCSTAMP), FIGURES_SET (overrides for every config,
# default the quick scale below), FIGURES_FRACTIONS (the fractions of the
# knee swept by configs whose loads are the automatic form), FIGURES_ONLY
# (a pattern of config names), FIGURES_BUDGET_S (default 1020: the
# last reference, about 100 s, then ends inside 20 minutes; the runs before
# it took 871-949 s here once the cache backend prefaulted its memory).
#
# Faithfulness: clusters 12 and 31 (fig7-8-cluster12/31) run a second time
# on Debian's memcached (--set server.backend, the cache's memory_mb), as
# fig7-8-clusterN-memcached, after the other configs and only within
# FIGURES_BUDGET_S, like the volatile references; `oqb figures` draws them
# against the cache's runs (harness/figures/figfaith.c).
#
# Quick scale: 0.5 s measured per point after 0.2 s of warm-up, one trial,
# and 7 fractions of the knee instead of the configs' 9 (0.1, 0.5, 0.8,
# 0.9, 1, 1.1, 1.25: 80 % of the knee, the knee and two loads past it stay).
# The configs that need hosts and an RDMA NIC (transport verbs) are checked
# with --dry-run only.  The volatile YCSB configs (fig9-10-ycsb-putN, the
# references of the -durable ones that Figs 9/10 draw) run last, and only
# while the runs so far took less than FIGURES_BUDGET_S seconds, so a busy
# machine still finishes in about 20 minutes; the report lists what ran.
# The full scale is for a lab cluster: docs/figures.md.  The one-sided
# figure is not run here (it needs the Soft-RoCE VM): the newest
# results/onesided-*/runs/onesided-verbs (make figures-onesided) is linked
# into the runs and drawn.
set -u
cd "$(dirname "$0")/../.."
bin=${OQB_BIN:-bin}
out=${FIGURES_OUT:-results/figures-$(date -u +%Y%m%dT%H%M%SZ)}
read -r -a quick <<<"${FIGURES_SET:---set duration_s=0.5 --set warmup_s=0.2}"
only=${FIGURES_ONLY:-*}
budget=${FIGURES_BUDGET_S:-1020}
fractions=${FIGURES_FRACTIONS:-[0.1,0.5,0.8,0.9,1,1.1,1.25]}

if [ ! -x "$bin/oqb" ]; then
	echo "figures: $bin/oqb is missing; run make first" >&2
	exit 1
fi
mkdir -p "$out/runs" || exit 1
start=$SECONDS
configs=() refs=()
for c in configs/fig*.json; do
	case $(basename "$c" .json) in
	fig9-10-ycsb-put*-durable) configs+=("$c") ;;
	fig9-10-ycsb-put*) refs+=("$c") ;;
	*) configs+=("$c") ;;
	esac
done
# the faithfulness runs: "memcached:" before a config runs it on memcached
faith=(memcached:configs/fig7-8-cluster12.json memcached:configs/fig7-8-cluster31.json)
configs+=("${faith[@]}" "${refs[@]}")
n=${#configs[@]} i=0 failed=0
for c in "${configs[@]}"; do
	i=$((i + 1))
	backend=()
	case $c in
	memcached:*)
		c=${c#memcached:}
		name=$(basename "$c" .json)-memcached
		backend=(--set "server.backend=$(jq -c '{kind: "memcached"} + (.server.backend | {memory_mb} | with_entries(select(.value != null)))' "$c")") ;;
	*) name=$(basename "$c" .json) ;;
	esac
	# shellcheck disable=SC2254
	case $name in $only) ;; *) continue ;; esac
	t0=$SECONDS
	case " ${refs[*]} " in
	*" $c "*)
		if [ $((SECONDS - start)) -ge "$budget" ]; then
			echo "figures: [$i/$n] $name: skipped, the runs so far took $((SECONDS - start)) s (FIGURES_BUDGET_S=$budget); it is the volatile reference of $name-durable" >&2
			continue
		fi ;;
	esac
	if [ ${#backend[@]} -gt 0 ]; then
		if [ $((SECONDS - start)) -ge "$budget" ]; then
			echo "figures: [$i/$n] $name: skipped, the runs so far took $((SECONDS - start)) s (FIGURES_BUDGET_S=$budget); the faithfulness figure says not run" >&2
			continue
		fi
		if ! command -v memcached >/dev/null; then
			echo "figures: [$i/$n] $name: skipped, no memcached on PATH (make deps installs Debian's); the faithfulness figure says not run" >&2
			continue
		fi
	fi
	if [ "$(jq -r .transport "$c")" = verbs ]; then
		if "$bin/oqb" run "$c" --dry-run >"$out/runs/$name.dry-run.txt" 2>&1; then
			echo "figures: [$i/$n] $name: transport verbs, --dry-run only (lab hosts): ok" >&2
		else
			echo "figures: [$i/$n] $name: --dry-run failed, see $out/runs/$name.dry-run.txt" >&2
			failed=$((failed + 1))
		fi
		continue
	fi
	extra=()
	if [ "$(jq -r '.arrival.loads_ops.auto? // false' "$c" 2>/dev/null)" = true ]; then
		extra=(--set "arrival.loads_ops=$(jq -c --argjson f "$fractions" '.arrival.loads_ops + {fractions: $f}' "$c")")
	fi
	if "$bin/oqb" run "$c" "${quick[@]}" "${extra[@]}" "${backend[@]}" --quiet --out "$out/runs/$name" \
		>"$out/runs/$name.log" 2>&1; then
		echo "figures: [$i/$n] $name: $((SECONDS - t0)) s" >&2
	else
		echo "figures: [$i/$n] $name failed after $((SECONDS - t0)) s ($out/runs/$name.log); its panel draws what it measured before, or says not run" >&2
		failed=$((failed + 1))
	fi
done
# the one-sided figure (issue 52) needs the Soft-RoCE VM: make
# figures-onesided runs it; the newest such run is drawn here too
os=$(ls -d results/onesided-*/runs/onesided-verbs 2>/dev/null | sort | tail -1)
if [ -n "$os" ] && [ -f "$os/run.json" ]; then
	ln -sfn "$PWD/$os" "$out/runs/onesided-verbs"
	echo "figures: the one-sided figure draws $os (make figures-onesided)" >&2
else
	echo "figures: no one-sided run under results/ (make figures-onesided runs it in the Soft-RoCE VM); its section says not run" >&2
fi
"$bin/oqb" tgap --quiet --cdf "$out/runs/tgap-cdf.dat" traces/cluster*-sample.csv.zst >/dev/null ||
	echo "figures: oqb tgap failed; Fig 2 says not run" >&2
"$bin/oqb" figures --runs "$out/runs" --check >"$out/check.txt" 2>&1
echo "figures: fidelity check (exit $?): $(tail -1 "$out/check.txt") ($out/check.txt)" >&2
echo "figures: $failed config(s) failed; $((SECONDS - start)) s in all" >&2
"$bin/oqb" figures --runs "$out/runs" --out "$out/report" || exit 1
