#!/usr/bin/env bash
# netem-vm1.sh SHARE SSH_PORT - VM 1 of tests/verbs/run-netem.sh (run by
# tests/vm/rxe-vm -P DIR:1): the driver and client host.  VM 2 runs
# tests/verbs/two-vm-server.sh (sshd on 198.18.2.2); this script reaches it
# over ssh, through one master connection, to set its netem and read its
# counters.
#
# Each case of OQB_NETEM_CASES (base, loss0.1, loss1, loss5, reorder,
# delay) puts netem on the RoCEv2 packets both VMs send (netem-lib.sh),
# reads rxe's counters and netem's own counts on both VMs, runs `oqb run
# configs/netem-two-vm.json` into SHARE/runs/CASE (server on VM 2, clients
# here, every point's history recorded and checked), reads the counters
# again and takes netem off.  Per case it requires:
#   - the run ended ok and every point's history is linearizable;
#   - no commit lost: the server executed at least as many nilext requests
#     as the histories hold commits by ACK, and at most that many plus the
#     requests left unanswered (a request runs once; a commit it never
#     executed would leave it short, a retransmission run twice over);
#   - a lossy case dropped packets (netem says) and rxe retransmitted; the
#     loss-free baseline retransmitted nothing.
# SHARE/runs/CASE/netem.json keeps the case, its netem words, the drops and
# the counter deltas of both VMs; plot/netem-latency.sh draws the runs.
#
# With OQB_NETEM_FAULT=1, the commit-on-error case (docs/verbs-vm.md): a
# client loses the wire (netem loss 100 % here) until its RC retries run
# out; without the fault its requests in flight end failed, not committed,
# and nothing is lost; with OQB_FAULT=commit-on-error the same failure is
# turned into commits, which the accounting and `oqb check` (after a
# read-back of every key) must catch.
#
# Whatever happens, VM 2 is told on port 5003 that the run is over.
# Prints "ok NAME" / "not ok NAME" lines; "# " lines on stderr are the
# numbers.
set -u
SHARE=$1 SSH_PORT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
me=netem/vm1
SERVER=198.18.2.2 CLIENT=198.18.2.1
CASES=${OQB_NETEM_CASES:-base loss1}
RUN_S=${OQB_NETEM_RUN_S:-150}   # the bound on one `oqb run`
. "$HERE/two-vm-vm1.sh"
. "$HERE/netem-lib.sh"

# VM 2 through one ssh master connection (an ssh login costs 10-15 s of
# emulated key exchange; later commands reuse it).
SSHO=(-T -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$SHARE/known_hosts"
	-i /tmp/two-vm-sshd/id -o IdentitiesOnly=yes -o ConnectTimeout=60
	-o ControlMaster=auto -o ControlPath=/tmp/netem-ssh-%C -o ControlPersist=1800 -p "$SSH_PORT" -l root)
on_server() { timeout 120 ssh "${SSHO[@]}" "$SERVER" "$@"; }
srv_lib() { on_server ". '$HERE/netem-lib.sh' && $*"; }

finish_vm() {
	netem_set
	srv_lib netem_set >/dev/null 2>&1
	ssh "${SSHO[@]}" -O exit "$SERVER" >/dev/null 2>&1
	retry 20 send_done || echo "vm1: could not tell VM 2 that the run is over" >&2
	sshd_stop
}
trap finish_vm EXIT

vm1_up || exit 1
t0=$SECONDS
on_server true 2>/tmp/ssh-master.err
r=$?; [ $r = 0 ] || show /tmp/ssh-master.err
result ssh-to-server $r
[ $r = 0 ] || exit 1
echo "# vm1: +$SECONDS s: ssh to VM 2 took $((SECONDS - t0)) s" >&2

# netem is there, and it reaches RoCEv2 only: set and clear it once on
# each VM before anything depends on it.
dev=$(netem_dev)
if ! netem_set loss 0% 2>/tmp/netem-try.err || ! srv_lib "netem_set loss 0% && netem_set" 2>>/tmp/netem-try.err; then
	netem_set
	echo "skip $me/netem: tc netem on ${dev:-the netdev of rxe0} failed: $(tr '\n' ' ' </tmp/netem-try.err) (the guest kernel needs sch_netem, sch_prio and cls_u32)"
	exit 0
fi
netem_set
result netem-available 0
echo "# vm1: +$SECONDS s: netem works on both VMs" >&2

# ---- the cases ----------------------------------------------------------
case_words() {   # tc-netem words of a case ("" for none)
	case $1 in
	base) echo "" ;;
	netem0) echo "loss 0%" ;;
	loss0.1) echo "loss 0.1%" ;;
	loss1) echo "loss 1%" ;;
	loss5) echo "loss 5%" ;;
	reorder) echo "delay 10ms reorder 25% 50%" ;;
	delay) echo "delay 20ms" ;;
	*) return 1 ;;
	esac
}
case_loss() {    # the loss rate in percent, or null
	case $1 in base) echo 0 ;; loss*) echo "${1#loss}" ;; *) echo null ;; esac
}
case_secs() {    # measured seconds: 0.1 % needs more packets to lose some
	case $1 in loss0.1) echo 12 ;; *) echo 4 ;; esac
}

# counters_now FILE [REMOTE-AFTER]: rxe's counters and netem's counts of
# both VMs, as {"client": {...}, "server": {...}, "netem": {"client":
# [passed, dropped], "server": [...]}}; REMOTE-AFTER (netem-lib.sh words)
# runs on VM 2 in the same ssh call, after its snapshot.  A reading
# independent of the harness's own (run.json's points[].rdma_counters),
# which each case checks against it.
counters_now() {
	local c s
	c=$(netem_snapshot)
	s=$(srv_lib "netem_snapshot${2:+ && $2}")
	[ -n "$s" ] || s='{"rxe":{},"netem":[0,0]}'
	jq -n --argjson c "$c" --argjson s "$s" \
		'{client: $c.rxe, server: $s.rxe, netem: {client: $c.netem, server: $s.netem}}' >"$1"
}

# netem_json CASE DIR BEFORE AFTER: DIR/netem.json.  The names under
# "derived" are the ones run.json's points[].rdma_counters will use.
netem_json() {
	jq -n --arg case "$1" --arg words "$(case_words "$1")" --argjson loss "$(case_loss "$1")" \
		--slurpfile b "$3" --slurpfile a "$4" '
		def delta(s): ($a[0][s]) as $x | ($b[0][s]) as $y | $x | with_entries(.value -= ($y[.key] // 0));
		def derive: { retransmissions: .completer_retry_err, duplicates: .duplicate_request,
			out_of_sequence: .out_of_seq_request, seq_naks_received: .rcvd_seq_err,
			rnr_naks_sent: .send_rnr_err, rnr_naks_received: .rcvd_rnr_err,
			retries_exhausted: .retry_exceeded_err, sent_pkts, rcvd_pkts };
		(delta("client")) as $c | (delta("server")) as $s |
		{ case: $case, netem: $words, loss_pct: $loss,
		  applied_to: "egress RoCEv2 packets (UDP port 4791) of the netdev rxe0 is bound to, on both hosts",
		  netem_dropped: { client: $a[0].netem.client[1], server: $a[0].netem.server[1] },
		  netem_passed: { client: $a[0].netem.client[0], server: $a[0].netem.server[0] },
		  rdma_counters: { client: $c, server: $s },
		  derived: { client: ($c | derive), server: ($s | derive),
			     total: ([$c, $s] | map(derive) | .[0] as $x | .[1] as $y |
				     $x | with_entries(.value += $y[.key])) } }' >"$2/netem.json"
}

# acked_in DIR: commits by ACK in the point directories' histories.
acked_in() {
	local n=0 p k
	for p in "$1"/*/history; do
		[ -d "$p" ] || continue
		k=$(acked_commits "$p")
		n=$((n + k))
	done
	echo "$n"
}

CFG=$ROOT/configs/netem-two-vm.json
mkdir -p "$SHARE/runs"
for c in $CASES; do
	words=$(case_words "$c") || { result "case-$c-known" 1; continue; }
	out=$SHARE/runs/$c
	if ! netem_set $words 2>/tmp/netem-$c.err || ! srv_lib netem_set $words 2>>/tmp/netem-$c.err; then
		show /tmp/netem-$c.err
		result "$c/netem-set" 1
		continue
	fi
	counters_now /tmp/before-$c.json
	echo "# vm1: +$SECONDS s: case $c: netem on, counters read" >&2
	t0=$SECONDS
	timeout -k 5 "$RUN_S" "$OQB_BIN/oqb" run "$CFG" --out "$out" --quiet \
		--set "hosts.bin_dir=\"$OQB_BIN\"" --set "hosts.ssh.identity=\"/tmp/two-vm-sshd/id\"" \
		--set "hosts.ssh.known_hosts=\"$SHARE/known_hosts\"" --set "duration_s=$(case_secs "$c")" \
		--set "description=\"netem $c: ${words:-none}\"" >/tmp/run-$c.out 2>&1
	r=$?
	secs=$((SECONDS - t0))
	echo "# vm1: +$SECONDS s: case $c: oqb run took $secs s (exit $r)" >&2
	counters_now /tmp/after-$c.json netem_set
	netem_set
	[ $r = 0 ] || show /tmp/run-$c.out
	result "$c/oqb-run" $r
	if [ ! -f "$out/run.json" ]; then
		result "$c/run-json" 1
		continue
	fi
	netem_json "$c" "$out" /tmp/before-$c.json /tmp/after-$c.json
	R=$out/run.json N=$out/netem.json
	acked=$(acked_in "$out")
	jq -e '.status == "ok" and (.points | length) > 0 and
		all(.points[]; .check.verdict == "ok" and .lat_ns.all.n > 0)' "$R" >/dev/null
	r=$?; [ $r = 0 ] || jq -c '{status, error, checks: [.points[] | {check, n: .lat_ns.all.n}]}' "$R" >&2
	result "$c/history-linearizable" $r
	# Every request runs at most once, and a nilext one the server ran
	# but the client never saw ACKed is still unanswered at the end; so
	# acked <= executed <= acked + unanswered, or a commit was lost (or a
	# retransmission executed twice).
	exec_nilext=$(jq '[.points[].server.per_worker[].nilext] | add // 0' "$R")
	unans=$(jq '[.points[].unanswered] | add // 0' "$R")
	[ "$acked" -gt 0 ] && [ "$exec_nilext" -ge "$acked" ] && [ "$exec_nilext" -le $((acked + unans)) ]
	r=$?; [ $r = 0 ] || echo "  $c: $acked commits by ACK in the histories, the server executed $exec_nilext nilext requests, $unans unanswered" >&2
	result "$c/no-commit-lost" $r
	# what rxe must have seen: nothing to repair without netem; a
	# retransmission for lost packets; a NAK for packets out of sequence
	case $c in
	base) what="no-retransmission"
		jq -e '.netem_passed.client + .netem_passed.server == 0 and .derived.total.retransmissions == 0' "$N" ;;
	loss*) what="retransmitted"
		jq -e '.netem_dropped.client + .netem_dropped.server > 0 and .derived.total.retransmissions > 0' "$N" ;;
	reorder) what="out-of-sequence-seen"
		jq -e '.netem_passed.client + .netem_passed.server > 0 and .derived.total.out_of_sequence > 0' "$N" ;;
	*) what="netem-passed"
		jq -e '.netem_passed.client + .netem_passed.server > 0' "$N" ;;
	esac >/dev/null
	r=$?; [ $r = 0 ] || jq -c '{netem_dropped, netem_passed, derived: .derived.total}' "$N" >&2
	result "$c/$what" $r
	# run.json's own counters (per point, both sides) agree with the
	# independent reading around the whole case: no more than it saw,
	# none without netem, some retransmissions under loss
	jq -e --slurpfile n "$N" '
		[.points[].rdma_counters | objects | .retransmissions // empty] as $r |
		($r | length) == (.points | length) and ($r | add) <= $n[0].derived.total.retransmissions and
		(if $n[0].case == "base" then ($r | add) == 0
		 elif ($n[0].case | startswith("loss")) then ($r | add) > 0 else true end)' "$R" >/dev/null
	r=$?; [ $r = 0 ] || jq -c --slurpfile n "$N" '{run_json: [.points[].rdma_counters | if type == "object" then
		{retransmissions, shared_device} else . end], device: $n[0].derived.total.retransmissions}' "$R" >&2
	result "$c/run-json-counters-agree" $r
	# 20 ms more each way: a set's ACK and a get's response come at
	# least 20 ms later than in the baseline of the same boot (their
	# medians; the added 40 ms round trip leaves room for TCG's noise)
	if [ "$c" = delay ] && [ -f "$SHARE/runs/base/run.json" ]; then
		jq -e --slurpfile b "$SHARE/runs/base/run.json" '
			.points[0].lat_ns.nilext.p50 > $b[0].points[0].lat_ns.nilext.p50 + 20000000 and
			.points[0].lat_ns.non_nilext.p50 > $b[0].points[0].lat_ns.non_nilext.p50 + 20000000' "$R" >/dev/null
		result "$c/latency-above-baseline" $?
	fi
	jq -r --arg c "$c" --arg secs "$secs" --arg acked "$acked" --arg ex "$exec_nilext" --slurpfile n "$N" '
		.points[0] as $p | $n[0] as $m |
		"# netem \($c) (\($m.netem | if . == "" then "none" else . end)): \($p.committed) committed, " +
		"\($acked) by ACK, \($ex) nilext executed, lost \(if ($ex | tonumber) >= ($acked | tonumber) then 0 else "SOME" end), " +
		"unanswered \($p.unanswered), unsent \($p.unsent); netem dropped \($m.netem_dropped.client)+\($m.netem_dropped.server); " +
		"retransmissions \($m.derived.client.retransmissions)+\($m.derived.server.retransmissions), " +
		"out of sequence \($m.derived.total.out_of_sequence), duplicates \($m.derived.total.duplicates); " +
		"nilext p50 \($p.lat_ns.nilext.p50 / 1000 | floor) us p99 \($p.lat_ns.nilext.p99 / 1000 | floor) us, " +
		"all p50 \($p.lat_ns.all.p50 / 1000 | floor) us p99 \($p.lat_ns.all.p99 / 1000 | floor) us; " +
		"check \($p.check.verdict); oqb run \($secs) s"' "$R" >&2
done

[ "${OQB_NETEM_FAULT:-0}" = 1 ] && . "$HERE/netem-fault.sh"
echo "# vm1: +$SECONDS s: done" >&2
[ $fails = 0 ]
