#!/usr/bin/env bash
# figures-lab.sh - every figure config at lab scale, as docs/figures.md's
# "Scale each config" step says (transport verbs, 16 server workers or 18
# for Figs 6, 9 and 10, 8 client processes x 24 threads with delegation,
# slot_ring receive, ssh to 8 client hosts, a DAX directory for the durable
# ones, 10 s points, 5 trials), must pass `oqb run --dry-run`, and the
# plan must say so: the launcher, 8 x 24 clients, and a server command
# line on the server host with --transport verbs and its workers.  Nothing
# runs: the hosts are placeholders (RFC 2606 names, an RFC 5737 address).
. "$(dirname "$0")/../lib.sh"

hosts='{"server":"server.lab.example","clients":["c1.lab.example","c2.lab.example","c3.lab.example","c4.lab.example","c5.lab.example","c6.lab.example","c7.lab.example","c8.lab.example"],"launcher":"ssh","bin_dir":"/opt/oqbench/bin"}'
n=0
for cfg in "$OQB_ROOT"/configs/fig*.json; do
	name=$(basename "$cfg" .json)
	[ "$(jq -r .transport "$cfg")" = verbs ] && continue   # configs.sh dry-runs the lab configs as they are
	case $name in fig6* | fig9-10*) workers=18 ;; *) workers=16 ;; esac
	args=(--set transport=verbs --set "server.workers=$workers" --set clients.processes=8
	      --set clients.threads=24 --set clients.delegation=true
	      --set 'verbs={"addr":"192.0.2.10","recv_mode":"slot_ring"}' --set "hosts=$hosts"
	      --set duration_s=10 --set repeat=5)
	if jq -e '.durable // false | if type == "array" then length > 0 else . end' "$cfg" >/dev/null ||
		[ "$(jq -r .server.backend.kind "$cfg")" = pmkv ]; then
		args+=(--set 'server.recv_pmem_path="/mnt/pmem0/oqb"')
		[ "$(jq -r .server.backend.kind "$cfg")" = pmkv ] && args+=(--set 'server.backend.pmem_path="/mnt/pmem0/oqb"')
	fi
	if [ "$(jq -r '.arrival.loads_ops.auto? // false' "$cfg" 2>/dev/null)" = true ]; then
		args+=(--set "arrival.loads_ops=$(jq -c '.arrival.loads_ops | .search.start_ops = 500000' "$cfg")")
	fi
	n=$((n + 1))
	if ! "$OQB_BIN/oqb" run "$cfg" "${args[@]}" --dry-run >"$T/$name.dry" 2>&1; then
		notok "$name: lab-scale dry run" "$(tail -3 "$T/$name.dry")"
		continue
	fi
	if head -1 "$T/$name.dry" | grep -q 'launcher ssh, 8 client process(es) x 24 thread(s)' &&
		grep -q "server 0 on server.lab.example: .*oqb-server .*--transport verbs .*--workers $workers " "$T/$name.dry" &&
		grep -q 'client 7 on c8.lab.example: .*--threads 24 .*--delegation' "$T/$name.dry"; then
		ok "$name: lab-scale dry run"
	else
		notok "$name: lab-scale plan" "$(head -1 "$T/$name.dry"; grep -m2 'server 0 on\|client 7 on' "$T/$name.dry")"
	fi
done
[ "$n" -ge 10 ] && ok "figure configs checked: $n" || notok "figure configs checked" "only $n found"
finish
