# two-vm-sshd.sh - sourced by two-vm-server.sh and two-vm-vm1.sh (VM 1's
# scripts) inside a two-VM Soft-RoCE guest: starts a private sshd on this
# VM's address, with the host key and authorized key that run-two-vm-driver.sh made in the
# shared directory.  Root logs in by key only.  guest-scale.sh uses its
# sshd_write_config for the logical hosts' sshd.
#
# Needs: $RXE_IP and $RXE_PAIR_N (from tests/vm/rxe-vm -P), $SHARE (the
# shared directory), $SSH_PORT.  Sets SSHD_PID and SSHD_LOG.  Every helper
# returns 0 on success, 1 otherwise; nothing here exits.

# sshd_write_config DIR PORT ADDR...: an sshd_config on stdout for a private
# sshd listening on PORT at every ADDR, its host key, authorized keys and
# PID file in DIR; root by key only.  A login may take minutes in a TCG
# guest on a busy host (ssh's key exchange is emulated): LoginGraceTime is
# 600 s, not 60 (a run's hello_s bounds the wait for each process anyway).
sshd_write_config() {
	local d=$1 port=$2 a
	shift 2
	echo "Port $port"
	for a; do echo "ListenAddress $a"; done
	cat <<EOF
HostKey $d/host_key
AuthorizedKeysFile $d/authorized_keys
PidFile $d/sshd.pid
UsePAM no
StrictModes no
UseDNS no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
AllowUsers root
MaxSessions 64
MaxStartups 64
LoginGraceTime 600
LogLevel VERBOSE
EOF
}

# sshd_clean_home: give root an empty home in this guest.  sshd runs every
# command through root's login shell, and bash reads ~/.bashrc for a
# command that arrives over ssh: the host's /root, seen read-only through
# the guest's root file system, may start pyenv and the like (measured on
# this project's development VM: 181 execs per ssh command, 60-110 s per
# launch under TCG, 10-15 s with an empty home).  The guest's root file
# system is a throw-away overlay, so the host's files are untouched; only
# inside a VM (RXE_VM=1).
sshd_clean_home() {
	[ "${RXE_VM:-}" = 1 ] || return 0
	mount -t tmpfs -o mode=0700 tmpfs /root
}

# sshd_start: copy the keys to the guest's tmpfs (sshd refuses a private
# key that others can read, and the share's modes are the host's), write a
# config, start sshd in the foreground in the background and wait up to
# 60 s until it accepts TCP connections.
sshd_start() {
	local d=/tmp/two-vm-sshd i
	mkdir -p "$d" /run/sshd && chmod 0700 "$d" && chmod 0755 /run/sshd || return 1
	sshd_clean_home || return 1
	cp "$SHARE/hostkey$RXE_PAIR_N" "$d/host_key" &&
		cp "$SHARE/id.pub" "$d/authorized_keys" || return 1
	chmod 0600 "$d/host_key" "$d/authorized_keys"
	sshd_write_config "$d" "$SSH_PORT" "$RXE_IP" >"$d/sshd_config"
	SSHD_LOG=$d/sshd.log
	/usr/sbin/sshd -D -e -f "$d/sshd_config" 2>"$SSHD_LOG" &
	SSHD_PID=$!
	for i in $(seq 1 600); do
		(exec 3<>"/dev/tcp/$RXE_IP/$SSH_PORT") 2>/dev/null && return 0
		kill -0 "$SSHD_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# sshd_stop: end the sshd started above, by its PID.
sshd_stop() {
	[ -n "${SSHD_PID:-}" ] || return 0
	kill -TERM "$SSHD_PID" 2>/dev/null
	wait "$SSHD_PID" 2>/dev/null
	SSHD_PID=
	return 0
}
