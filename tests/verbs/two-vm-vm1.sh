# two-vm-vm1.sh - sourced by the VM 1 scripts of the two-VM tests
# (two-vm-driver.sh, netem-vm1.sh; run by tests/vm/rxe-vm -P DIR:1): what
# the driver-and-client host of a pair does the same in every test.
#
# Needs: me (the result prefix), SERVER and CLIENT (VM 2's and this VM's
# addresses), SHARE and SSH_PORT (two-vm-sshd.sh).  Sets fails (the count
# of "not ok" lines).
fails=0
result() {
	if [ "$2" = 0 ]; then echo "ok $me/$1"; else echo "not ok $me/$1"; fails=$((fails + 1)); fi
}
show() { local f; for f; do echo "--- vm1 $f" >&2; tail -n 25 "$f" >&2; done; }
. "$(dirname "${BASH_SOURCE[0]}")/two-vm-sshd.sh"

. "$(dirname "${BASH_SOURCE[0]}")/retry.sh"
tcp_open() { timeout 5 bash -c "exec 3<>/dev/tcp/$SERVER/$1" 2>/dev/null; }
# VM 2 waits on port 5003 to hear that the run is over
send_done() { timeout 5 bash -c "echo done >/dev/tcp/$SERVER/5003" 2>/dev/null; }

# vm1_up: this VM is the pair's first, its own sshd is up (the launcher
# logs in to this host too), the client key is in place (private to this
# guest: ssh refuses one others can read), and VM 2's sshd answers (its
# port 5002); a result line each.  1 when one failed: the caller exits.
vm1_up() {
	local r t0
	[ "$RXE_PAIR_N" = 1 ] && [ "$RXE_IP" = "$CLIENT" ] && [ "${RXE_PEER_IP:-}" = "$SERVER" ]
	result environment $?
	sshd_start
	r=$?; [ $r = 0 ] || show "$SSHD_LOG"
	result sshd-started $r
	[ $r = 0 ] || return 1
	cp "$SHARE/id" /tmp/two-vm-sshd/id && chmod 0600 /tmp/two-vm-sshd/id
	t0=$SECONDS
	retry 100 tcp_open 5002
	r=$?
	result peer-sshd-ready $r
	[ $r = 0 ] || return 1
	echo "# vm1: VM 2's sshd was ready after $((SECONDS - t0)) s" >&2
}
