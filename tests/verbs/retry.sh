# tests/verbs/retry.sh - sourced by guest scripts of the two-VM tests
# (two-vm-vm1.sh, and run-two-vm-smoke.sh's guest, which sources it through
# the guest's read-only view of the checkout).

# retry SECS CMD...: run CMD until it succeeds, for at most SECS seconds.
retry() {
	local end=$((SECONDS + $1)); shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 1
	done
}
