# tests/verbs/netem-lib.sh - wire faults for Soft-RoCE, sourced inside a
# Soft-RoCE guest (tests/vm/rxe-vm) as root: by tests/verbs/netem-vm1.sh on
# its own VM, and through ssh on the server's VM
# (`bash -c '. netem-lib.sh; netem_set "loss 1%"'`).
#
# Where the faults act.  rxe sends every RoCEv2 packet (requests, ACKs and
# NAKs, the connection manager's MADs) as UDP to port 4791 through the IP
# stack and out of the netdev it is bound to, so a qdisc on that netdev
# sees them -- but only when the peer is another machine.  Between two QPs
# of one rxe device (every single-VM test) rxe hands the packet back to
# itself before any qdisc (its loopback, taken when the destination is its
# own address), so netem there changes nothing.  netem acts on egress
# only: each VM shapes what it sends.
#
# netem_set puts netem on RoCEv2 alone (UDP destination port 4791): a prio
# qdisc sends all traffic to its second band, except what a u32 filter
# picks for the third, where netem sits.  ssh, the driver's control
# channel and the clients' results stay clean, so a run's timing and its
# failures come from the RDMA path only.

# netem_dev: the netdev rxe0 is bound to (eth0 in two-VM mode).
netem_dev() {
	local d
	d=$(rdma link show "${RXE_DEV:-rxe0}/${RXE_IBPORT:-1}" 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
	[ -n "$d" ] || return 1
	echo "$d"
}

# netem_set [SPEC...]: netem SPEC (tc-netem(8) words: "loss 1%",
# "delay 10ms reorder 25% 50%") on the RoCEv2 packets this VM sends; no
# SPEC removes it.  0, or 1 with tc's complaint on stderr.
netem_set() {
	local d
	d=$(netem_dev) || { echo "netem: no netdev for ${RXE_DEV:-rxe0}" >&2; return 1; }
	tc qdisc del dev "$d" root 2>/dev/null
	[ $# -eq 0 ] || [ -z "$*" ] && return 0
	# shellcheck disable=SC2068 # the spec's words are tc's arguments
	tc qdisc add dev "$d" root handle 1: prio bands 3 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 &&
		tc qdisc add dev "$d" parent 1:3 handle 30: netem $@ &&
		tc filter add dev "$d" parent 1: protocol ip prio 1 u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:3
}

# netem_stats: "SENT DROPPED" of the netem qdisc (packets it passed on and
# packets it dropped since netem_set); "0 0" without one.
netem_stats() {
	local d
	d=$(netem_dev) || { echo "0 0"; return 0; }
	tc -s qdisc show dev "$d" | awk '
		/^qdisc netem/ { on = 1; next }
		/^qdisc/ { on = 0 }
		on && /Sent/ { for (i = 1; i < NF; i++) { if ($(i + 1) == "pkt") s = $i; if ($i == "(dropped") d = $(i + 1) }
			sub(",", "", d); print s + 0, d + 0; found = 1; exit }
		END { if (!found) print "0 0" }'
}

# rxe_counters: rxe0 port 1's counters as one JSON object (name: value),
# from /sys/class/infiniband/DEV/ports/PORT/hw_counters (one awk, not one
# cat per file: every exec costs in an emulated guest).
rxe_counters() {
	local dir=/sys/class/infiniband/${RXE_DEV:-rxe0}/ports/${RXE_IBPORT:-1}/hw_counters
	[ -d "$dir" ] || { echo '{}'; return 1; }
	awk 'FNR == 1 { n = FILENAME; sub(".*/", "", n); if (n == "lifespan") next
		printf "%s\"%s\":%s", (k++ ? "," : "{"), n, $1 } END { print (k ? "}" : "{}") }' "$dir"/*
}

# netem_snapshot: this VM's counters and netem's counts as one JSON object,
# {"rxe": {...}, "netem": [passed, dropped]}: one call per VM and moment.
netem_snapshot() {
	local st
	st=$(netem_stats)
	printf '{"rxe":%s,"netem":[%s,%s]}\n' "$(rxe_counters)" "${st% *}" "${st#* }"
}

# acked_commits DIR: how many operations of the histories DIR/*.bin
# committed on a delivery or ACK (status HISTORY_ST_UNSEEN, 0xfe, at byte
# 37 of each 96-byte record after the 128-byte header: lib/history.h);
# under oq these are the sets and deletes.
acked_commits() {
	local f n=0 k
	for f in "$1"/*.bin; do
		[ -f "$f" ] || continue
		k=$(od -A n -t u1 -v -w96 -j 128 "$f" | awk '$38 == 254 { n++ } END { print n + 0 }')
		n=$((n + k))
	done
	echo "$n"
}
