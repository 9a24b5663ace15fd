#!/usr/bin/env bash
# run-erpc.sh - the eRPC suite: the adapter end to end in the Soft-RoCE VM
# (tests/erpc/guest-erpc.sh).  Needs a build made with ERPC_DIR (the
# Makefile passes it as OQB_ERPC_DIR); without it, one skip line says why.
. "$(dirname "$0")/../lib.sh"
if [ -z "${OQB_ERPC_DIR:-}" ]; then
	skip erpc "ERPC_DIR not set (docs/erpc.md)"
	finish
fi
. "$(dirname "$0")/../vm/vm-test-lib.sh"
vm_preflight erpc
guest="OQB_BIN='$OQB_BIN' bash tests/erpc/guest-erpc.sh"
vm_relay "$VM_RUNNER" -C "$OQB_ROOT" -t "${OQB_ERPC_VM_TIMEOUT:-700}" -- bash -c "$guest"
finish
