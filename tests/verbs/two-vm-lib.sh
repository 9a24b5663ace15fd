# tests/verbs/two-vm-lib.sh - the host side of the tests that run `oqb run`
# across two Soft-RoCE VMs over the ssh launcher (run-two-vm-driver.sh,
# run-netem.sh).  Source it after tests/lib.sh and tests/vm/vm-test-lib.sh,
# from the top of the checkout.
#
#   two_vm_bins NAME          the oqb binaries are built, with verbs
#   two_vm_share NAME PORT    a fresh shared directory S with ssh keys
#   two_vm_boot LIMIT SCRIPT1 SCRIPT2
#                             both VMs at once, SCRIPTn SHARE PORT in VM n
#   two_vm_results NAME LABEL relay both guests' result lines
#   two_vm_cleanup            (the EXIT trap) stop the VMs, remove S
#
# The shared directory lives inside the checkout, which both VMs mount
# read-write at its own path (rxe-vm -C), so it works wherever the checkout
# is (a directory under the host's /tmp is not visible through the guests'
# read-only view of /: they mount their own /tmp).  Every helper returns 0
# on success and 1 (after reporting) otherwise; none exits.

TWO_VM_ENV=()    # more "-e VAR=VAL" arguments for both VMs
vm_pids=()
S=

# two_vm_bins NAME: 0 when oqb, oqb-server and oqb-client are built in
# $OQB_BIN with the verbs transport; else reports NAME (not ok, or
# unavailable without verbs) and returns 1.
two_vm_bins() {
	if [ ! -x "$OQB_BIN/oqb" ] || [ ! -x "$OQB_BIN/oqb-server" ] || [ ! -x "$OQB_BIN/oqb-client" ]; then
		notok "$1" "oqb, oqb-server or oqb-client is not built in $OQB_BIN (run make)"
		return 1
	fi
	"$OQB_BIN/oqb-server" --list-devices >/dev/null 2>&1
	if [ $? -eq 2 ]; then
		vm_unavailable "$1" "oqb-server was built without the verbs transport (install libibverbs-dev and librdmacm-dev, rebuild)"
		return 1
	fi
	return 0
}

# two_vm_share NAME PORT: makes the shared directory S under build/ with the
# driver's ed25519 client key (id), one host key per VM (hostkeyN) and
# their known_hosts lines for [198.18.2.N]:PORT and [rxe-vmN]:PORT.
two_vm_share() {
	local name=$1 port=$2 n k
	mkdir -p "$PWD/build" || { notok "$name/share" "cannot create $PWD/build"; return 1; }
	S=$(mktemp -d "$PWD/build/two-vm.XXXXXX") || { notok "$name/share" "cannot create a directory under $PWD/build"; return 1; }
	ssh-keygen -q -t ed25519 -N '' -f "$S/id" -C oqb-two-vm-client >/dev/null &&
		ssh-keygen -q -t ed25519 -N '' -f "$S/hostkey1" -C oqb-two-vm-1 >/dev/null &&
		ssh-keygen -q -t ed25519 -N '' -f "$S/hostkey2" -C oqb-two-vm-2 >/dev/null ||
		{ notok "$name/keys" "ssh-keygen failed"; return 1; }
	for n in 1 2; do
		k=$(cut -d' ' -f1,2 "$S/hostkey$n.pub")
		echo "[198.18.2.$n]:$port $k"
		echo "[rxe-vm$n]:$port $k"
	done >"$S/known_hosts"
}

# two_vm_cleanup: stops the VMs still running (by their runners' PIDs) and
# removes S; OQB_KEEP_TWO_VM=DIR keeps a copy of S (run.json, every
# process's log) for a post-mortem.  Ends with tests/lib.sh's cleanup_.
two_vm_cleanup() {
	local p
	for p in "${vm_pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${vm_pids[@]}"; do wait "$p" 2>/dev/null; done
	[ -n "${OQB_KEEP_TWO_VM:-}" ] && [ -n "$S" ] && cp -r "$S" "$OQB_KEEP_TWO_VM" 2>/dev/null
	[ -n "$S" ] && rm -rf "$S"
	cleanup_
}

# two_vm_boot LIMIT SCRIPT1 SCRIPT2 PORT: boots VM 1 (bash SCRIPT1 S PORT)
# and VM 2 (bash SCRIPT2 S PORT) at once, each bounded by LIMIT s, their
# output in $T/out1, $T/err1, $T/out2, $T/err2.  VM 2 leaves when VM 1
# says so; if VM 1 died without saying it, VM 2 gets 30 s more and is then
# stopped (by its runner's PID).  Sets TWO_VM_RCS (both exit statuses).
two_vm_boot() {
	local lim=$1 s1=$2 s2=$3 port=$4 rc1
	mkdir -p "$T/pair"
	"$VM_RUNNER" -P "$T/pair:1" -C "$PWD" -t "$lim" "${TWO_VM_ENV[@]}" -- \
		bash "$s1" "$S" "$port" >"$T/out1" 2>"$T/err1" &
	vm_pids+=($!)
	"$VM_RUNNER" -P "$T/pair:2" -C "$PWD" -t "$lim" "${TWO_VM_ENV[@]}" -- \
		bash "$s2" "$S" "$port" >"$T/out2" 2>"$T/err2" &
	vm_pids+=($!)
	wait "${vm_pids[0]}"
	rc1=$?
	for _ in $(seq 1 300); do
		kill -0 "${vm_pids[1]}" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "${vm_pids[1]}" 2>/dev/null
	wait "${vm_pids[1]}"
	TWO_VM_RCS=("$rc1" $?)
	vm_pids=()
}

# two_vm_results NAME LIMIT: after two_vm_boot, relays the guests' result
# lines and the exit statuses (NAME/vmN, NAME/exit-status).  Returns 1
# when a VM did not start at all (reported as unavailable: skip, or not
# ok under CI).
two_vm_results() {
	local name=$1 lim=$2 n nostart=
	for n in 1 2; do
		if [ "${TWO_VM_RCS[n - 1]}" = 125 ] && ! grep -Eq '^(not )?ok ' "$T/out$n"; then nostart=1; fi
	done
	if [ -n "$nostart" ]; then
		cat "$T/err1" "$T/err2" >&2
		vm_unavailable "$name" "a VM did not start (rxe-vm exit ${TWO_VM_RCS[*]}; console tail above)"
		return 1
	fi
	for n in 1 2; do
		if ! vm_relay "$T/out$n"; then
			notok "$name/vm$n" "the guest printed no result (rxe-vm exit ${TWO_VM_RCS[n - 1]})"
			cat "$T/err$n" >&2
		elif grep -q '^not ok' "$T/out$n" || [ "${TWO_VM_RCS[n - 1]}" != 0 ]; then cat "$T/err$n" >&2
		else grep '^# ' "$T/err$n" >&2
		fi
	done
	[ "${TWO_VM_RCS[*]}" = "0 0" ] && ok "$name/exit-status" ||
		notok "$name/exit-status" "rxe-vm exit statuses ${TWO_VM_RCS[*]} (124: the ${lim} s limit)"
	return 0
}
