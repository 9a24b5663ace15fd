# tests/verbs/retry.sh - sourced by guest scripts of the two-VM tests
# (two-vm-vm1.sh, and run-two-vm-smoke.sh's guest, which sources a copy in
# its shared directory: a checkout under the host's /tmp is not visible in
# the guest).

# retry SECS CMD...: run CMD until it succeeds, for at most SECS seconds.
retry() {
	local end=$((SECONDS + $1)); shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 1
	done
}
