# tests/vm/vm-test-lib.sh - helpers for tests that run commands in the
# Soft-RoCE VM (tests/vm/rxe-vm).  Source it after tests/lib.sh, from the
# top of the checkout.
#
# Policy: when no VM can be started here (missing package, no kernel, qemu
# failing), a test reports "skip NAME: why" on a developer machine and
# "not ok NAME" under CI (CI=true), where `make deps` must have made it work.

VM_RUNNER=${OQB_RXE_VM:-$PWD/tests/vm/rxe-vm}

vm_in_ci() { case ${CI:-} in true|1|yes) return 0 ;; esac; return 1; }

# vm_unavailable NAME REASON: report that NAME cannot run because no VM (or
# a tool it needs) is available.
vm_unavailable() {
	if vm_in_ci; then notok "$1" "no Soft-RoCE VM under CI: $2"
	else skip "$1" "$2"
	fi
}

# vm_preflight NAME [TOOL:PACKAGE]...: 0 when a VM can start and every TOOL
# is in the host root (the guest runs the host's binaries); otherwise reports
# NAME through vm_unavailable and returns 1.
vm_preflight() {
	local name=$1 why t; shift
	if ! why=$("$VM_RUNNER" -c 2>&1); then
		vm_unavailable "$name" "${why#rxe-vm: }"
		return 1
	fi
	for t in "$@"; do
		if ! command -v "${t%%:*}" >/dev/null 2>&1; then
			vm_unavailable "$name" "${t%%:*} not found; install the Debian package ${t#*:} (make deps)"
			return 1
		fi
	done
	return 0
}

# vm_relay FILE: pass on the "ok"/"not ok"/"skip" lines a guest printed, so
# that they count here; other lines are ignored.  A "timing-fail NAME ::
# DETAIL" line (a shape case that failed in a guest run with
# OQB_TIMING_RELAY=1: tests/lib.sh, shape_check) is decided here, where
# the host can be seen: skipped when VM_HOST_EVIDENCE (vm_host_mark before
# the VM, vm_host_busy after it) says other tasks on the host took the CPU
# over the VM's run, a failure otherwise.  Returns 1 if FILE has no result
# line at all.
vm_host_mark() { host_mark; VM_HOST_EVIDENCE=; }
vm_host_busy() { host_busy && VM_HOST_EVIDENCE="on the host over the VM's run, $HOST_EVIDENCE"; }
vm_relay() {
	local line n=0
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok }"; n=$((n + 1)) ;;
		"not ok "*) notok "${line#not ok }"; n=$((n + 1)) ;;
		"timing-fail "*)
			line=${line#timing-fail }
			if [ -n "${VM_HOST_EVIDENCE:-}" ]; then skip_host "${line%% :: *}" "$VM_HOST_EVIDENCE" "${line#* :: }"
			else notok "${line%% :: *}" "${line#* :: } (the host was calm over the VM's run)"; fi
			n=$((n + 1)) ;;
		"skip "*) echo "$line"; n=$((n + 1)) ;;
		esac
	done <"$1"
	[ "$n" -gt 0 ]
}

# vm_report NAME RC LIMIT OUT ERR: after `rxe-vm -t LIMIT ... >OUT 2>ERR`
# exited with RC, relay the guest's result lines and say what went wrong:
# the VM did not start (skip, or not ok under CI), the guest printed
# nothing, the time limit was hit, or it failed without saying which case.
vm_report() {
	local name=$1 rc=$2 lim=$3 out=$4 err=$5
	if ! vm_relay "$out"; then
		if [ "$rc" -eq 125 ]; then
			vm_unavailable "$name" "the VM failed to start: $(tail -1 "$err")"
		else
			notok "$name: the guest printed no result (rxe-vm exit $rc)" "$(tail -20 "$err")"
		fi
	elif [ "$rc" -eq 124 ]; then
		notok "$name: the VM hit its time limit ($lim s)"
	elif [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$out"; then
		notok "$name: the guest exited with status $rc" "$(tail -20 "$err")"
	elif grep -q '^not ok ' "$out"; then
		# the details of a failed case went to the guest's stderr
		echo "  guest stderr (last 40 lines):" >&2
		tail -40 "$err" | sed 's/^/  /' >&2
	fi
}

# vm_leftovers DIR: print the run directories and processes that a runner
# with TMPDIR=DIR left behind (nothing when it cleaned up).
vm_leftovers() {
	local d=$1 p
	compgen -G "$d/rxe-vm.*"
	for p in /proc/[0-9]*; do
		[ "$p" = "/proc/$$" ] && continue
		tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -F -q -- "$d/rxe-vm." && echo "process ${p#/proc/} still running"
	done
	return 0
}
