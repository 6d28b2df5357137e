#!/usr/bin/env bash
# A two-node SLURM cluster on this machine, for the tests and for trying `morphtok-launch --executor slurm`.
#
#   sudo scripts/slurm_cluster.sh up       # munged, slurmctld, `slurmd -N n1`, `slurmd -N n2`; waits until idle
#   export SLURM_CONF=/tmp/morphtok-slurm/slurm.conf    # what `up` prints: sbatch, squeue, ... use this cluster
#   sudo scripts/slurm_cluster.sh status   # daemons and nodes
#   sudo scripts/slurm_cluster.sh down     # cancels its jobs, stops the daemons, restores /etc/hosts
#
# Needs root and Debian's `slurm-wlm` and `munge` packages (`apt-get install slurm-wlm munge`; `make install`
# does it as root).  Everything lives in one state directory, MORPHTOK_SLURM_DIR (default /tmp/morphtok-slurm):
# the munge key (1,024 random bytes, owned by munge) and socket, slurm.conf, the controller's state, each node's
# spool, pid and log files.  Nothing under /etc/slurm or /etc/munge is touched and no system service is started;
# the one change outside the state directory is an /etc/hosts line `127.0.0.1 n1 n2` (submitit hands the first
# node's name to torchrun as the rendezvous address, so node names must resolve), removed again by `down`.
# Both nodes are this host (NodeHostname=$(hostname -s)), each with half its cores; slurmctld listens on port
# MORPHTOK_SLURM_PORT (default 17000), the nodes' slurmd on the next two ports.  `up` and `down` are idempotent.
set -euo pipefail

STATE=${MORPHTOK_SLURM_DIR:-/tmp/morphtok-slurm}
PORT=${MORPHTOK_SLURM_PORT:-17000}
NODES=(n1 n2)
HOSTS_MARK="# morphtok slurm_cluster.sh $STATE"
CONF=$STATE/slurm.conf
export SLURM_CONF=$CONF

die() { echo "slurm_cluster.sh: error: $*" >&2; exit 2; }
say() { echo "[slurm_cluster] $*" >&2; }

alive() {  # alive PIDFILE: the daemon of that pid file is running
    [[ -s "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null
}

stop_pidfile() {  # stop_pidfile PIDFILE NAME: TERM, wait up to 20 s, then KILL; removes the pid file
    local pidfile="$1" name="$2" pid i
    if alive "$pidfile"; then
        pid=$(cat "$pidfile")
        kill "$pid" 2>/dev/null || true
        for i in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        if kill -0 "$pid" 2>/dev/null; then
            say "$name (pid $pid) did not stop on TERM: KILL"
            kill -9 "$pid" 2>/dev/null || true
        fi
        say "stopped $name (pid $pid)"
    fi
    rm -f "$pidfile"
}

check_tools() {
    [[ $(id -u) -eq 0 ]] || die "needs root (it starts munged as the munge user and slurmd as root)"
    local tool missing=()
    for tool in munged slurmctld slurmd sbatch sinfo scontrol; do
        command -v "$tool" >/dev/null || [[ -x /usr/sbin/$tool ]] || missing+=("$tool")
    done
    [[ ${#missing[@]} -eq 0 ]] || die "missing ${missing[*]}: apt-get install slurm-wlm munge"
    id munge >/dev/null 2>&1 || die "no munge user: apt-get install munge"
}

write_config() {
    local host cores per mem
    host=$(hostname -s)
    cores=$(nproc --all)
    per=$(( cores / 2 )); [[ $per -ge 1 ]] || per=1
    mem=$(( $(awk '/^MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
    cat > "$CONF.tmp" <<EOF
# written by scripts/slurm_cluster.sh up (removed by down)
ClusterName=morphtok
SlurmctldHost=$host
SlurmctldPort=$PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$STATE/munge/munge.socket
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool-%n
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd-%n.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd-%n.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
MpiDefault=none
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=10
MinJobAge=600
SlurmctldTimeout=120
SlurmdTimeout=300
NodeName=${NODES[0]} NodeHostname=$host Port=$((PORT + 1)) CPUs=$per RealMemory=$mem State=UNKNOWN
NodeName=${NODES[1]} NodeHostname=$host Port=$((PORT + 2)) CPUs=$per RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=${NODES[0]},${NODES[1]} Default=YES MaxTime=INFINITE State=UP
EOF
    mv "$CONF.tmp" "$CONF"
}

hosts_add() {
    grep -qF "$HOSTS_MARK" /etc/hosts && return 0
    # written in place (not replaced): /etc/hosts is often a bind mount in containers
    printf '127.0.0.1 %s %s\n' "${NODES[*]}" "$HOSTS_MARK" >> /etc/hosts
    say "added '127.0.0.1 ${NODES[*]}' to /etc/hosts"
}

hosts_remove() {
    grep -qF "$HOSTS_MARK" /etc/hosts || return 0
    local kept
    kept=$(grep -vF "$HOSTS_MARK" /etc/hosts || true)
    printf '%s\n' "$kept" > /etc/hosts
    say "removed the ${NODES[*]} line from /etc/hosts"
}

start_munge() {
    local dir=$STATE/munge
    alive "$dir/munged.pid" && return 0
    install -d -m 0755 -o munge -g munge "$dir"
    if [[ ! -s "$dir/munge.key" ]]; then
        (umask 077; head -c 1024 /dev/urandom > "$dir/munge.key")
        chown munge:munge "$dir/munge.key"
    fi
    runuser -u munge -- /usr/sbin/munged --key-file="$dir/munge.key" --socket="$dir/munge.socket" \
        --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" ||
        die "munged did not start (log: $dir/munged.log)"
    local i
    for i in $(seq 1 40); do [[ -S "$dir/munge.socket" ]] && break; sleep 0.25; done
    [[ -S "$dir/munge.socket" ]] || die "munged did not open its socket (log: $dir/munged.log)"
    say "munged (pid $(cat "$dir/munged.pid"))"
}

nodes_idle() {  # every node in a usable state
    local states
    states=$(sinfo -h -N -o '%N %t' 2>/dev/null) || return 1
    [[ -n "$states" ]] || return 1
    ! grep -qvE ' (idle|alloc|mix|comp)$' <<< "$states"
}

up() {
    check_tools
    mkdir -p "$STATE/ctld"
    chmod 0755 "$STATE"
    local node
    for node in "${NODES[@]}"; do mkdir -p "$STATE/spool-$node"; done
    hosts_add
    start_munge
    [[ -f "$CONF" ]] || write_config
    if ! alive "$STATE/slurmctld.pid"; then
        /usr/sbin/slurmctld -f "$CONF" || die "slurmctld did not start (log: $STATE/slurmctld.log)"
        say "slurmctld started (log: $STATE/slurmctld.log)"
    fi
    for node in "${NODES[@]}"; do
        if ! alive "$STATE/slurmd-$node.pid"; then
            /usr/sbin/slurmd -f "$CONF" -N "$node" || die "slurmd -N $node did not start (log: $STATE/slurmd-$node.log)"
            say "slurmd -N $node started (log: $STATE/slurmd-$node.log)"
        fi
    done
    local i
    for i in $(seq 1 120); do
        nodes_idle && break
        # a node that registered while the controller still had it as down: bring it back
        if [[ $((i % 10)) -eq 0 ]]; then
            scontrol update NodeName="$(IFS=,; echo "${NODES[*]}")" State=RESUME 2>/dev/null || true
        fi
        sleep 1
    done
    nodes_idle || { sinfo -N >&2 || true; die "the nodes did not come up within 2 minutes (logs in $STATE)"; }
    say "up: $(sinfo -h -N -o '%N:%t' | tr '\n' ' ')"
    echo "export SLURM_CONF=$CONF"
}

down() {
    if [[ -f "$CONF" ]] && alive "$STATE/slurmctld.pid"; then
        local jobs i
        jobs=$(squeue -h -o %A 2>/dev/null || true)
        if [[ -n "$jobs" ]]; then
            say "cancelling job(s): $(echo $jobs)"
            scancel $jobs 2>/dev/null || true
            for i in $(seq 1 60); do [[ -z "$(squeue -h -o %A 2>/dev/null)" ]] && break; sleep 1; done
        fi
    fi
    local node
    for node in "${NODES[@]}"; do stop_pidfile "$STATE/slurmd-$node.pid" "slurmd -N $node"; done
    stop_pidfile "$STATE/slurmctld.pid" slurmctld
    stop_pidfile "$STATE/munge/munged.pid" munged
    hosts_remove
    if [[ -d "$STATE" ]]; then
        rm -rf "$STATE"
        say "removed $STATE"
    fi
}

status() {
    local pf name rc=0
    for pf in "$STATE/munge/munged.pid" "$STATE/slurmctld.pid" "$STATE"/slurmd-*.pid; do
        name=$(basename "$pf" .pid)
        if alive "$pf"; then echo "$name: running (pid $(cat "$pf"))"; else echo "$name: not running"; rc=1; fi
    done
    if grep -qF "$HOSTS_MARK" /etc/hosts 2>/dev/null; then echo "/etc/hosts: ${NODES[*]} -> 127.0.0.1"; fi
    if [[ -f "$CONF" ]]; then
        echo "SLURM_CONF=$CONF"
        sinfo -N 2>&1 || rc=1
    fi
    return $rc
}

case "${1:-}" in
    up) up ;;
    down) down ;;
    status) status ;;
    *) echo "usage: $0 up|down|status   (state directory: $STATE)" >&2; exit 2 ;;
esac
