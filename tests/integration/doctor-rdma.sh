#!/usr/bin/env bash
# doctor-rdma.sh - `oqb doctor`'s RDMA checks on both link layers, on a
# stand-in sysfs tree (docs/doctor.md, "The RDMA checks"): this machine
# need have no RDMA device.  OQB_SYSFS_ROOT points the probe at a tree
# built here; its bin/ip stands in for `ip -o addr show` and `ip -o route
# get` (a test-only hook: the addresses live in the kernel, not in sysfs).
#  - InfiniBand: mlx5_0 port 1, link layer InfiniBand, ACTIVE, GID 0 the
#    subnet prefix and port GUID, IPoIB ib0 holding verbs.addr: every RDMA
#    row passes, the device found through ib0's hardware address;
#  - each fault fails on its row with its fix: the port DOWN, the port
#    INIT (no subnet manager), the link layer not the interface's, the
#    address on no interface, the address on an interface without an RDMA
#    port, verbs.device naming another device; a small IPoIB MTU warns
#    with the fabric's fix;
#  - RoCE: rxe0 whose GID table names eth0 and holds ::ffff:ADDR (RoCE v2):
#    passes, with the GID's index; verbs.gid_index naming another index
#    fails with the one to set; a GID of type RoCE v1 only fails.
. "$(dirname "$0")/../lib.sh"
ROOT=${OQB_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
O=$OQB_BIN/oqb
CFG=$ROOT/configs/tiny.json
# a verbs shape small enough for any locked-memory limit
SHAPE=(--set transport=verbs --set 'systems=["oq"]' --set server.workers=1 --set server.ring_slots=64
	--set clients.processes=1 --set 'server.backend={"kind":"null"}')

# w FILE VALUE: writes one sysfs attribute of the stand-in tree.
w() { mkdir -p "$(dirname "$1")" && printf '%s\n' "$2" >"$1"; }

# ib_tree DIR: an InfiniBand HCA (mlx5_0, port 1) under IPoIB ib0 10.9.0.5.
ib_tree() {
	local S=$1 n=$1/sys/class/net p=$1/sys/class/infiniband/mlx5_0/ports/1
	w "$n/lo/type" 772; w "$n/lo/mtu" 65536; w "$n/lo/address" 00:00:00:00:00:00
	w "$n/ib0/type" 32; w "$n/ib0/mtu" 4092; w "$n/ib0/mode" datagram; w "$n/ib0/dev_port" 0
	w "$n/ib0/address" 80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:a1:b2:c3
	mkdir -p "$n/ib0/device/infiniband/mlx5_0"
	w "$S/sys/class/infiniband/mlx5_0/device/numa_node" 0
	w "$p/state" "4: ACTIVE"; w "$p/phys_state" "5: LinkUp"; w "$p/link_layer" InfiniBand
	w "$p/rate" "100 Gb/sec (4X EDR)"
	w "$p/gids/0" fe80:0000:0000:0000:0002:c903:00a1:b2c3
	w "$p/gids/1" 0000:0000:0000:0000:0000:0000:0000:0000
	mkdir -p "$S/bin"
	cat >"$S/bin/ip" <<'EOF'
#!/bin/sh
# stand-in for `ip -o addr show` / `ip -o route get ADDR` (test only)
case "$*" in
"-o addr show") printf '%s\n' \
	'1: lo    inet 127.0.0.1/8 scope host lo\       valid_lft forever preferred_lft forever' \
	'4: ib0    inet 10.9.0.5/24 brd 10.9.0.255 scope global ib0\       valid_lft forever preferred_lft forever' \
	'4: ib0    inet6 fe80::202:c903:a1:b2c3/64 scope link \       valid_lft forever preferred_lft forever' \
	'5: eth0    inet 10.9.1.5/24 brd 10.9.1.255 scope global eth0\       valid_lft forever preferred_lft forever' ;;
"-o route get "*) printf '%s dev ib0 src 10.9.0.5 uid 0 \\    cache\n' "$4" ;;
*) exit 1 ;;
esac
EOF
	chmod +x "$S/bin/ip"
}

# doctor NAME ROOT ARGS...: oqb doctor on the stand-in tree ROOT; sets RC.
doctor() {
	local name=$1 root=$2
	shift 2
	OQB_SYSFS_ROOT=$root "$O" doctor "$CFG" "${SHAPE[@]}" "$@" >"$T/$name.out" 2>"$T/$name.err"
	RC=$?
}
# The rows the stand-in tree answers.  The others (clock source, governor,
# smt, turbo) read this machine, and its kvm-clock warns on some VMs.
RDMA_ROWS='rdma device|port state|link layer|gid|rate|mtu|numa'
# row NAME CHECK RESULT [FOUND-ERE]: the 127.0.0.1 row of that check.
row() { grep -qE "^127\.0\.0\.1 +$2 +$3${4:+ +$4}" "$T/$1.out"; }
# fix NAME CHECK TEXT: the fix line under that check's row holds TEXT.
fix() { grep -A1 -E "^127\.0\.0\.1 +$2 +(FAIL|WARN)" "$T/$1.out" | grep -qE -- "fix: .*$3"; }
show() { echo "  exit $RC:"; sed 's/^/  | /' "$T/$1.out" "$T/$1.err"; }

# 1. InfiniBand, all well.
ib_tree "$T/ib"
doctor ib "$T/ib" --set 'verbs={"addr":"10.9.0.5"}'
if row ib "rdma device" PASS "mlx5_0 port 1 owns verbs.addr 10\.9\.0\.5 \(interface ib0\)" &&
	row ib "port state" PASS "mlx5_0 port 1 is ACTIVE" &&
	row ib "link layer" PASS "InfiniBand \(IPoIB interface over the HCA port\)" &&
	row ib gid PASS "index 0 is fe80::2:c903:a1:b2c3 \(subnet prefix fe80:0000:0000:0000, port GUID 0002:c903:00a1:b2c3\)" &&
	row ib rate PASS "100 Gb/sec \(4X EDR\)" && row ib mtu PASS "active MTU 4096 B" &&
	row ib numa PASS "mlx5_0 on node 0" && ! grep -qE "^127\.0\.0\.1 +($RDMA_ROWS) +(FAIL|WARN) " "$T/ib.out" &&
	[ $RC -eq 0 ]; then
	ok doctor_ib_passes
else
	notok doctor_ib_passes "$(show ib)"
fi

# 2. The port DOWN, then INIT (the link is up, no subnet manager).
cp -r "$T/ib" "$T/down" && w "$T/down/sys/class/infiniband/mlx5_0/ports/1/state" "1: DOWN"
w "$T/down/sys/class/infiniband/mlx5_0/ports/1/phys_state" "3: Disabled"
doctor down "$T/down" --set 'verbs={"addr":"10.9.0.5"}'
if [ $RC -eq 1 ] && row down "port state" FAIL "mlx5_0 port 1 is DOWN, physical 3: Disabled" &&
	fix down "port state" "bring the link up"; then
	ok doctor_ib_port_down
else
	notok doctor_ib_port_down "$(show down)"
fi
cp -r "$T/ib" "$T/init" && w "$T/init/sys/class/infiniband/mlx5_0/ports/1/state" "2: INIT"
doctor init "$T/init" --set 'verbs={"addr":"10.9.0.5"}'
if [ $RC -eq 1 ] && row init "port state" FAIL "mlx5_0 port 1 is INIT" && fix init "port state" "no subnet manager.*opensm"; then
	ok doctor_ib_no_subnet_manager
else
	notok doctor_ib_no_subnet_manager "$(show init)"
fi

# 3. The port's link layer is not the interface's (IPoIB on an Ethernet port).
cp -r "$T/ib" "$T/ll" && w "$T/ll/sys/class/infiniband/mlx5_0/ports/1/link_layer" Ethernet
doctor ll "$T/ll" --set 'verbs={"addr":"10.9.0.5"}'
if [ $RC -eq 1 ] && row ll "link layer" FAIL "mlx5_0 port 1's link layer is Ethernet, but interface ib0 is IPoIB" &&
	fix ll "link layer" "set verbs.addr to an address of the interface" && ! grep -qE ' gid | mtu ' "$T/ll.out"; then
	ok doctor_link_layer_mismatch
else
	notok doctor_link_layer_mismatch "$(show ll)"
fi

# 4. A small IPoIB MTU (2044: a 2048 B fabric) for 4096 B slots: a warning.
cp -r "$T/ib" "$T/mtu" && w "$T/mtu/sys/class/net/ib0/mtu" 2044
doctor mtu "$T/mtu" --set 'verbs={"addr":"10.9.0.5"}' --set server.slot_size=4096
if row mtu mtu WARN "active MTU 2048 B \(from ib0's MTU 2044, IPoIB datagram mode\)" &&
	fix mtu mtu "raise the fabric's MTU to 4096"; then
	ok doctor_ib_mtu_small
else
	notok doctor_ib_mtu_small "$(show mtu)"
fi

# 5. The address on no interface, and on one with no RDMA port.
doctor noif "$T/ib" --set 'verbs={"addr":"10.9.0.77"}'
if [ $RC -eq 1 ] && row noif "rdma device" FAIL "verbs.addr 10\.9\.0\.77 is on no RDMA interface: no interface" &&
	fix noif "rdma device" "set verbs.addr to an address of an RDMA interface"; then
	ok doctor_addr_on_no_interface
else
	notok doctor_addr_on_no_interface "$(show noif)"
fi
doctor lo "$T/ib" --set 'verbs={"addr":"127.0.0.1"}'
if [ $RC -eq 1 ] && row lo "rdma device" FAIL "verbs.addr 127\.0\.0\.1 is on no RDMA interface: the interface that holds it, lo," &&
	fix lo "rdma device" "set verbs.addr to an address of an RDMA interface \(RDMA ports here: mlx5_0 port 1 \(ib0\)\)"; then
	ok doctor_addr_on_non_rdma_interface
else
	notok doctor_addr_on_non_rdma_interface "$(show lo)"
fi

# 6. verbs.device names a device that does not carry the address.
doctor dev "$T/ib" --set 'verbs={"addr":"10.9.0.5","device":"mlx5_1"}'
if [ $RC -eq 1 ] && row dev "rdma device" FAIL "the config names mlx5_1 port 1, but ib0 holds" &&
	fix dev "rdma device" "set verbs.device to mlx5_0"; then
	ok doctor_device_not_the_address
else
	notok doctor_device_not_the_address "$(show dev)"
fi

# 7. RoCE (rxe over eth0): the GID table names the interface.
R=$T/roce
ib_tree "$R"
rm -rf "$R/sys/class/infiniband/mlx5_0" "$R/sys/class/net/ib0/device"
p=$R/sys/class/infiniband/rxe0/ports/1
w "$R/sys/class/net/eth0/type" 1; w "$R/sys/class/net/eth0/mtu" 1500
w "$R/sys/class/net/eth0/address" 52:54:00:12:34:56
w "$p/state" "4: ACTIVE"; w "$p/link_layer" Ethernet; w "$p/rate" "10 Gb/sec (1X QDR)"
w "$p/gids/0" fe80:0000:0000:0000:5054:00ff:fe12:3456
w "$p/gid_attrs/ndevs/0" eth0; w "$p/gid_attrs/types/0" "IB/RoCE v1"
w "$p/gids/1" fe80:0000:0000:0000:5054:00ff:fe12:3456
w "$p/gid_attrs/ndevs/1" eth0; w "$p/gid_attrs/types/1" "RoCE v2"
w "$p/gids/2" 0000:0000:0000:0000:0000:ffff:0a09:0105
w "$p/gid_attrs/ndevs/2" eth0; w "$p/gid_attrs/types/2" "IB/RoCE v1"
w "$p/gids/3" 0000:0000:0000:0000:0000:ffff:0a09:0105
w "$p/gid_attrs/ndevs/3" eth0; w "$p/gid_attrs/types/3" "RoCE v2"
doctor roce "$R" --set 'verbs={"addr":"10.9.1.5"}'
if row roce "rdma device" PASS "rxe0 port 1 owns verbs.addr 10\.9\.1\.5 \(interface eth0\)" &&
	row roce "link layer" PASS "Ethernet \(RoCE\)" && row roce gid PASS "index 3 is ::ffff:10\.9\.1\.5, RoCE v2, netdev eth0" &&
	row roce mtu WARN "active MTU 1024 B \(from eth0's MTU 1500, RoCE headers 96 B\)" &&
	fix roce mtu "ip link set eth0 mtu 4200" && row roce numa PASS "rxe0 has no NUMA node" &&
	! grep -qE ' FAIL ' "$T/roce.out" && [ $RC -eq 0 ]; then
	ok doctor_roce_passes
else
	notok doctor_roce_passes "$(show roce)"
fi
doctor gidx "$R" --set 'verbs={"addr":"10.9.1.5","gid_index":1}'
if [ $RC -eq 1 ] && row gidx gid FAIL "verbs.gid_index is 1, but ::ffff:10\.9\.1\.5 \(RoCE v2\) is index 3" &&
	fix gidx gid "set verbs.gid_index to 3"; then
	ok doctor_roce_gid_index
else
	notok doctor_roce_gid_index "$(show gidx)"
fi
rm "$p/gids/3"
doctor v1 "$R" --set 'verbs={"addr":"10.9.1.5"}'
if [ $RC -eq 1 ] && row v1 gid FAIL "the GID of 10\.9\.1\.5 is index 2, type IB/RoCE v1: not RoCE v2" &&
	fix v1 gid "enable RoCE v2"; then
	ok doctor_roce_v1_only
else
	notok doctor_roce_v1_only "$(show v1)"
fi
exit $TEST_FAILED
