#!/usr/bin/env bash
# hosts-cloudlab.sh - hosts from a CloudLab manifest (hosts.from
# "cloudlab"; docs/config.md), with the sample tests/data/cloudlab-manifest.xml
# (node0-2 on LAN link-0, 10.10.1.1-3).  Every node name is reached through
# a private sshd on 127.0.0.1 (ssh's HostName option maps the manifest's
# names there; host keys stay checked), so the driver starts each process
# by the name the manifest gives its node:
#  - an shm run: the server and its clients all on node0 (the first
#    node), then all on node1 when hosts.server names it; run.json's
#    hosts.processes say by which name each was launched;
#  - a verbs plan (--dry-run): the server on node0 bound to its LAN
#    address, the clients on node1 and node2 in turn;
#  - oqb doctor takes the same hosts and reaches node0 through ssh;
#  - a manifest without its LAN is refused naming the fix (exit 2).
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
M=$ROOT/tests/data/cloudlab-manifest.xml

ssh_test_keys hosts_cloudlab
port=""
for _ in 1 2 3 4 5 6 7 8; do
	p=$((20000 + RANDOM % 40000))
	ssh_test_config "$p" 127.0.0.1 sshd >"$T/sshd_config"
	"$SSHD" -D -e -f "$T/sshd_config" 2>"$T/sshd.log" &
	sp=$!
	track $sp
	for _ in $(seq 1 50); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
		kill -0 $sp 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$port" ] && break
	kill $sp 2>/dev/null
	wait $sp 2>/dev/null
done
if [ -z "$port" ]; then
	notok sshd_started "sshd did not start: $(tail -5 "$T/sshd.log")"
	finish
fi
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$T/host_key.pub")" >"$T/known_hosts"

hosts() {   # hosts [JQ-EXTRA]: the hosts object, from the manifest, ssh to 127.0.0.1
	jq -cn --arg m "$M" --arg kh "$T/known_hosts" --arg id "$T/id" --arg user "$user" --argjson port "$port" \
		--arg bin "$OQB_BIN" '{from: "cloudlab", manifest: $m, bin_dir: $bin, ctl_addr: "127.0.0.1",
		ssh: {user: $user, port: $port, identity: $id, known_hosts: $kh,
		      options: ["HostName=127.0.0.1", "ConnectTimeout=10"]}}'"${1:-}"
}
SET=(--set 'systems=["oq"]' --set 'arrival.loads_ops=[5000]' --set rerun_disturbed=0 --set 'clients.processes=2' --quiet)
N0=node0.oqbci.oqbench.example.cloudlab.us
N1=node1.oqbci.oqbench.example.cloudlab.us

TMPDIR=$T "$OQB_BIN/oqb" run "$ROOT/configs/tiny.json" "${SET[@]}" --set "hosts=$(hosts)" --out "$T/first" >"$T/first.out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok cloudlab_shm_run || notok cloudlab_shm_run "exit $rc: $(tail -5 "$T/first.out")"
jcheck cloudlab_shm_on_first_node "$T/first/run.json" ".status == \"ok\" and .hosts.launcher == \"ssh\" and
	.hosts.server == \"$N0\" and .hosts.clients == [\"$N0\"] and (.hosts.processes | length) == 3 and
	all(.hosts.processes[]; .launched_on == \"$N0\" and .pid != .local_pid)"
TMPDIR=$T "$OQB_BIN/oqb" run "$ROOT/configs/tiny.json" "${SET[@]}" --set "hosts=$(hosts '+ {server: "node1"}')" \
	--out "$T/named" >"$T/named.out" 2>&1
jcheck cloudlab_shm_server_named "$T/named/run.json" ".status == \"ok\" and (.hosts.processes | length) == 3 and
	all(.hosts.processes[]; .launched_on == \"$N1\")"
if jq -e "all(.hosts.processes[]; .launched_on == \"$N1\")" "$T/first/run.json" >/dev/null 2>&1; then
	notok cloudlab_check_can_fail "the node1 check passed on the node0 run"
else
	ok cloudlab_check_can_fail
fi
if grep -q "Accepted publickey" "$T/sshd.log"; then ok cloudlab_went_through_sshd
else notok cloudlab_went_through_sshd "sshd log shows no login"; fi

"$OQB_BIN/oqb" run "$ROOT/configs/tiny.json" "${SET[@]}" --set 'transport="verbs"' --set 'clients.processes=3' \
	--set "hosts=$(hosts)" --dry-run >"$T/vplan.out" 2>&1
rc=$?
srv=$(grep -c "^  server 0 on $N0: ssh .* -- $N0 .*--addr 10\.10\.1\.1 " "$T/vplan.out")
c1=$(grep -c "^  client [02] on $N1: ssh " "$T/vplan.out")
c2=$(grep -c "^  client 1 on node2\.oqbci\.oqbench\.example\.cloudlab\.us: ssh " "$T/vplan.out")
if [ $rc -eq 0 ] && [ "$srv" -ge 1 ] && [ "$c1" -ge 2 ] && [ "$c2" -ge 1 ]; then
	ok cloudlab_verbs_plan_nodes_and_lan_address
else
	notok cloudlab_verbs_plan_nodes_and_lan_address "exit $rc, server $srv, node1 $c1, node2 $c2: $(grep -E '^  (server|client)' "$T/vplan.out" | cut -c1-100 | head -4)"
fi

TMPDIR=$T "$OQB_BIN/oqb" doctor "$ROOT/configs/tiny.json" --set "hosts=$(hosts)" >"$T/doctor.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -qE "^$N0 +reachable +PASS" "$T/doctor.out"; then ok cloudlab_doctor
else notok cloudlab_doctor "exit $rc: $(tail -6 "$T/doctor.out")"; fi

sed '/<link /,/<\/link>/d' "$M" >"$T/nolan.xml"
"$OQB_BIN/oqb" run "$ROOT/configs/tiny.json" --set "hosts=$(hosts | jq -c --arg m "$T/nolan.xml" '.manifest = $m')" \
	--dry-run >"$T/nolan.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "hosts.manifest: $T/nolan.xml: the manifest has no experiment LAN (no <link>).*add a LAN" "$T/nolan.out"; then
	ok cloudlab_manifest_without_lan_refused
else
	notok cloudlab_manifest_without_lan_refused "exit $rc: $(tail -3 "$T/nolan.out")"
fi
kill "$sp" 2>/dev/null
wait "$sp" 2>/dev/null
finish
