# tests/slurm/cluster.sh - a private Slurm cluster on this host, for tests
# (sourced by tests/integration/slurm.sh and slurm-scale.sh; bash).
#
# Owns: one munged (private key and socket, run in the foreground as the
# munge user), one slurmctld and one slurmd per node name (several slurmd
# on one host, each `-N NAME` on its own port), all under setsid, all
# configured through one generated slurm.conf that every command reads
# through SLURM_CONF.  Nothing in /etc is used or changed.
#
# Guarantees: every daemon's PID is the daemon itself (none of them forks:
# -F / -D), is recorded in SLURM_PIDS, and is ended by slurm_cluster_stop
# by that PID only (SIGTERM, then a wait on the state field of
# /proc/PID/stat, where a zombie counts as exited because PID 1 may reap
# late; SIGKILL after 5 s).  Every wait is a bounded poll.  Ports are
# chosen free (not in `ss -ltn`) and a daemon that still fails to bind is
# reported through its log.
#
# Usage:
#   slurm_cluster_start DIR NODE...   0 when every node is idle; else 1 and
#                                     SLURM_WHY says what failed; lines in
#                                     SLURM_CONF_EXTRA go into slurm.conf
#   slurm_cluster_stop                ends every daemon started, by PID
#   slurm_cluster_logs                the tail of every daemon log (stderr)

SLURM_PIDS=()
SLURM_PIDS_ALL=()   # every daemon ever started here, for a final check
SLURM_WHY=""
SLURM_DIR=""

# slurm_free_port: prints a TCP port nobody listens on (and that no other
# call here has handed out).
SLURM_PORTS_TAKEN=" "
slurm_free_port() {
	local p i
	for i in $(seq 1 50); do
		p=$((20000 + RANDOM % 40000))
		case $SLURM_PORTS_TAKEN in *" $p "*) continue ;; esac
		if ! ss -Htln "sport = :$p" 2>/dev/null | grep -q .; then
			SLURM_PORTS_TAKEN="$SLURM_PORTS_TAKEN$p "
			echo "$p"
			return 0
		fi
	done
	return 1
}

# slurm_pid_alive PID: running, and not a zombie waiting to be reaped.
slurm_pid_alive() {
	local st
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# slurm_poll TRIES CMD...: runs CMD every 0.1 s until it succeeds, at most
# TRIES times.
slurm_poll() {
	local n=$1 i
	shift
	for i in $(seq 1 "$n"); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

slurm_munge_ok() {
	munge -S "$SLURM_DIR/munge/sock" -n | unmunge -S "$SLURM_DIR/munge/sock"
}

slurm_nodes_idle() {
	local want=$1 got
	got=$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 == "idle" { n++ } END { print n + 0 }')
	[ "$got" -eq "$want" ]
}

slurm_cluster_start() {
	local dir=$1 me cpus mem cores n port pid i ctlport
	shift
	local nodes=("$@")
	SLURM_DIR=$dir
	for c in munged munge unmunge slurmctld slurmd srun salloc sbatch squeue sinfo scontrol setpriv ss; do
		if ! command -v "$c" >/dev/null 2>&1; then
			SLURM_WHY="$c is not installed (make deps installs slurmctld slurmd slurm-client munge)"
			return 1
		fi
	done
	if ! id munge >/dev/null 2>&1 || [ "$(id -u)" -ne 0 ]; then
		SLURM_WHY="needs root and the munge user (munge package)"
		return 1
	fi
	# munged wants every directory above its socket enterable by all.
	chmod 0755 "$dir"
	if ! setpriv --reuid=munge --regid=munge --init-groups test -x "$dir"; then
		SLURM_WHY="the munge user cannot enter $dir: make every directory above it 0755"
		return 1
	fi
	mkdir -p "$dir/munge" "$dir/state" "$dir/log"
	for n in "${nodes[@]}"; do mkdir -p "$dir/spool/$n"; done
	chown munge:munge "$dir/munge"
	chmod 0755 "$dir/munge"
	head -c 1024 /dev/urandom >"$dir/munge/key"
	chown munge:munge "$dir/munge/key"
	chmod 0400 "$dir/munge/key"

	setsid setpriv --reuid=munge --regid=munge --init-groups munged -F \
		--key-file="$dir/munge/key" --socket="$dir/munge/sock" \
		--pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/seed" \
		--log-file="$dir/munge/munged.log" </dev/null >"$dir/log/munged.out" 2>&1 &
	SLURM_PIDS+=($!)
	if ! slurm_poll 50 slurm_munge_ok; then
		SLURM_WHY="munged did not answer on its socket within 5 s: $(tail -3 "$dir/log/munged.out" "$dir/munge/munged.log" 2>/dev/null | tr '\n' ' ')"
		return 1
	fi

	me=$(hostname -s)
	cpus=$(nproc)
	mem=$(free -m | awk '/^Mem:/ { print int($2 / 4) }')
	ctlport=$(slurm_free_port) || { SLURM_WHY="no free port"; return 1; }
	cat >"$dir/slurm.conf" <<EOF
ClusterName=oqbtest
SlurmctldHost=$me(127.0.0.1)
SlurmctldPort=$ctlport
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/sock
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MinJobAge=2
KillWait=2
EOF
	for n in "${nodes[@]}"; do
		port=$(slurm_free_port) || { SLURM_WHY="no free port"; return 1; }
		echo "NodeName=$n NodeHostName=$me NodeAddr=127.0.0.1 Port=$port CPUs=$cpus Sockets=1 CoresPerSocket=$cpus ThreadsPerCore=1 RealMemory=$mem State=UNKNOWN" >>"$dir/slurm.conf"
	done
	echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES" >>"$dir/slurm.conf"
	# a test's own settings, one per line (dead-host-slurm.sh: SlurmdTimeout)
	[ -n "${SLURM_CONF_EXTRA:-}" ] && echo "$SLURM_CONF_EXTRA" >>"$dir/slurm.conf"
	export SLURM_CONF=$dir/slurm.conf

	setsid slurmctld -D -f "$SLURM_CONF" </dev/null >"$dir/log/slurmctld.out" 2>&1 &
	SLURM_PIDS+=($!)
	for n in "${nodes[@]}"; do
		setsid slurmd -D -N "$n" -f "$SLURM_CONF" </dev/null >"$dir/log/slurmd-$n.out" 2>&1 &
		SLURM_PIDS+=($!)
	done
	# 1.5 s on a quiet host; a slurmd at load 40 took more than 20 s
	if ! slurm_poll 600 slurm_nodes_idle "${#nodes[@]}"; then
		SLURM_WHY="the nodes were not idle within 60 s: $(sinfo -h -N -o '%N %t' 2>&1 | tr '\n' ' ')"
		return 1
	fi
	# each recorded PID is the daemon itself (nothing forked away from it)
	for pid in "${SLURM_PIDS[@]}"; do
		read -r n 2>/dev/null <"/proc/$pid/comm"
		if ! slurm_pid_alive "$pid" || { [ "$n" != munged ] && [ "$n" != slurmctld ] && [ "$n" != slurmd ]; }; then
			SLURM_WHY="daemon pid $pid is not running or is not a daemon (${n:-gone})"
			return 1
		fi
	done
	return 0
}

slurm_cluster_logs() {
	local f
	for f in "$SLURM_DIR"/log/* "$SLURM_DIR/munge/munged.log"; do
		[ -s "$f" ] || continue
		echo "--- $f" >&2
		tail -8 "$f" >&2
	done
}

# Stops the slurmd first, then slurmctld, then munged (the reverse of the
# start), each by its PID, and waits for each to be gone.
slurm_cluster_stop() {
	local i pid t
	for ((i = ${#SLURM_PIDS[@]} - 1; i >= 0; i--)); do
		pid=${SLURM_PIDS[$i]}
		slurm_pid_alive "$pid" || continue
		kill -TERM "$pid" 2>/dev/null
		for t in $(seq 1 50); do
			slurm_pid_alive "$pid" || break
			sleep 0.1
		done
		if slurm_pid_alive "$pid"; then
			echo "slurm cluster: pid $pid ignored SIGTERM for 5 s; SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null
		fi
	done
	for pid in "${SLURM_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	SLURM_PIDS_ALL+=("${SLURM_PIDS[@]}")
	SLURM_PIDS=()
}

# ---------------------------------------------------------------- for tests
# What the tests that run oqb under this cluster share (slurm.sh,
# slurm-scale.sh).  They need tests/lib.sh sourced first ($T, ok, notok,
# skip, finish, shm_left_since).

# slurm_test_cluster NAME NODE...: a fresh cluster in $T/NAME.  One that
# cannot start ends the test: a skip (packages missing, not root), or
# under CI=true, where make deps installed the packages, a failure.
slurm_test_cluster() {
	local name=$1
	shift
	mkdir -p "$T/$name"
	chmod 0755 "$T"   # munged (as munge) must reach its socket below it
	slurm_cluster_start "$T/$name" "$@" && return 0
	if [ "${CI:-}" = true ]; then
		notok "slurm_cluster_$name" "the cluster did not start: $SLURM_WHY"
		slurm_cluster_logs
	else
		skip "$(basename "$0" .sh)" "$SLURM_WHY"
		slurm_cluster_logs 2>/dev/null
	fi
	finish
}

# slurm_cluster_procs: processes that carry this cluster's SLURM_CONF in
# their environment (srun, slurmstepd, oqb, oqb-server, oqb-client...),
# except the daemons, slurmctld's helper and this shell.  Built-ins only,
# so the scan sees no helper.
slurm_cluster_procs() {
	local d pid v skip p st ctld=${SLURM_PIDS[1]}
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		[ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ] && continue
		skip=0
		for p in "${SLURM_PIDS[@]}"; do [ "$p" = "$pid" ] && skip=1; done
		[ $skip = 1 ] && continue
		read -r st 2>/dev/null <"$d/stat" || continue
		st=${st##*) }
		st=${st#* }
		[ "${st%% *}" = "$ctld" ] && continue   # slurmctld's slurmscriptd
		while IFS= read -r -d '' v; do
			if [ "$v" = "SLURM_CONF=$SLURM_CONF" ]; then
				echo "$pid $(tr '\0' ' ' <"$d/cmdline" 2>/dev/null | cut -c1-80)"
				break
			fi
		done 2>/dev/null <"$d/environ"
	done
}

# slurm_nothing_left NAME RUN_DIR SHM_BEFORE [TRIES]: no job, no step, no
# process of the run or the cluster is left (bounded poll of TRIES x 0.1 s,
# default 100: Slurm ends a step's processes within KillWait, and the job
# of a lost node once it marks the node down), none of the PIDs the run recorded
# (processes.tsv: srun; run.json: the processes themselves) is alive, and
# nothing is in the shared-memory folder that was not in SHM_BEFORE (an
# earlier shm_run_dirs).
slurm_nothing_left() {
	local name=$1 dir=$2 shm0=$3 tries=${4:-100} i jobs procs pids p alive left
	pids=$(cut -f6 "$dir/processes.tsv" 2>/dev/null | tail -n +2; jq -r '.hosts.processes[].pid' "$dir/run.json" 2>/dev/null)
	for i in $(seq 1 "$tries"); do
		jobs=$(squeue -h -o '%i %T' 2>&1; squeue -h -s -o '%i %j' 2>&1)
		procs=$(slurm_cluster_procs)
		alive=""
		for p in $pids; do slurm_pid_alive "$p" && alive="$alive $p"; done
		[ -z "$jobs$procs$alive" ] && break
		sleep 0.1
	done
	if [ -n "$jobs" ]; then notok "${name}_no_job_left" "squeue after $((tries / 10)) s: $jobs"; else ok "${name}_no_job_left"; fi
	if [ -n "$procs$alive" ]; then
		notok "${name}_no_process_left" "still there after $((tries / 10)) s: ${procs//$'\n'/; } recorded PIDs alive:$alive"
	else
		ok "${name}_no_process_left"
	fi
	[ -n "$pids" ] || notok "${name}_pids_recorded" "no PIDs in $dir/processes.tsv or run.json"
	# a killed server cannot remove its shm run directory: the driver must
	left=$(shm_left_since "$shm0")
	if [ -n "$left" ]; then notok "${name}_no_shm_left" "left in the shared-memory folder: $left"
	else ok "${name}_no_shm_left"; fi
}
