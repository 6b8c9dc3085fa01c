#!/usr/bin/env bash
# A real Slurm on this machine, for the Slurm tests and for trying --launcher=slurm:
# munged, slurmctld and slurmd on localhost, one node with this machine's CPUs.
#
#   tools/local_slurm.sh start    # installs Debian's slurmctld, slurmd, slurm-client and munge when absent (root)
#   eval "$(tools/local_slurm.sh env)"   # SLURM_CONF for sbatch, srun, squeue, scancel
#   tools/local_slurm.sh stop
#
# Everything lives in $LOCAL_SLURM_DIR (default /tmp/bert-local-slurm): its own
# slurm.conf, munge key and socket, state, spool and logs, ports $LOCAL_SLURM_PORT
# (slurmctld, default 16817) and the next one (slurmd), so it leaves any system
# Slurm or munge alone. `start` waits until the node takes jobs; it exits with 3,
# saying why, where it cannot run (not root, packages not installable).
set -euo pipefail
DIR="${LOCAL_SLURM_DIR:-/tmp/bert-local-slurm}"
PORT="${LOCAL_SLURM_PORT:-16817}"
CONF="$DIR/slurm.conf"
SOCKET="$DIR/munge/munge.socket"

cannot() { echo "local_slurm.sh: cannot run a local Slurm here: $*" >&2; exit 3; }

install_packages() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null \
    && command -v munged >/dev/null && return 0
  [ "$(id -u)" = 0 ] || cannot "slurmctld, slurmd, sbatch or munged is missing, and installing them needs root"
  command -v apt-get >/dev/null || cannot "slurmctld, slurmd, sbatch or munged is missing, and there is no apt-get"
  echo "local_slurm.sh: installing slurmctld, slurmd, slurm-client and munge (apt-get)" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge; } \
    >"${TMPDIR:-/tmp}/local_slurm_apt.log" 2>&1 \
    || cannot "apt-get install failed (${TMPDIR:-/tmp}/local_slurm_apt.log)"
}

write_config() {
  local host cpus memory
  host="$(hostname -s)"
  cpus="$(nproc)"
  memory="$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)"
  mkdir -p "$DIR/munge" "$DIR/state" "$DIR/spool" "$DIR/log"
  chmod 700 "$DIR/munge"
  [ -s "$DIR/munge/munge.key" ] || { dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 2>/dev/null; }
  chmod 400 "$DIR/munge/munge.key"
  cat > "$CONF" <<CONF
# Written by tools/local_slurm.sh: one node, this machine, for tests.
ClusterName=local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$SOCKET
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
# No cgroups in a container: processes tracked by their parents, tasks not bound.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
# CPUs are the consumable: jobs of one CPU each share the node.
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# A cancelled or finished job's processes get this long to exit.
KillWait=5
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
}

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
  install_packages
  [ "$(id -u)" = 0 ] || cannot "slurmd must run as root to start jobs as their users"
  write_config
  running "$DIR/munged.pid" || munged --force --socket="$SOCKET" --key-file="$DIR/munge/munge.key" \
    --pid-file="$DIR/munged.pid" --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed"
  export SLURM_CONF="$CONF"
  running "$DIR/slurmctld.pid" || slurmctld -f "$CONF"
  running "$DIR/slurmd.pid" || slurmd -f "$CONF"
  local waited=0
  until sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; do
    if [ $waited -ge 60 ]; then
      echo "local_slurm.sh: the node is not idle after 60 s; logs in $DIR/log:" >&2
      tail -n 5 "$DIR"/log/*.log >&2
      exit 1
    fi
    # A node left "down" by an earlier run is taken back.
    scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1 || true
    sleep 1
    waited=$((waited + 1))
  done
  echo "local_slurm.sh: Slurm is up ($CONF); eval \"\$($0 env)\" to use it" >&2
}

stop() {
  for daemon in slurmd slurmctld; do
    running "$DIR/$daemon.pid" && kill "$(cat "$DIR/$daemon.pid")"
  done
  local waited=0
  while running "$DIR/slurmd.pid" || running "$DIR/slurmctld.pid"; do
    [ $waited -ge 20 ] && break
    sleep 0.5
    waited=$((waited + 1))
  done
  running "$DIR/munged.pid" && munged --stop --socket="$SOCKET" >/dev/null 2>&1 || true
  echo "local_slurm.sh: stopped" >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) echo "export SLURM_CONF=$(printf %q "$CONF")" ;;
  status) SLURM_CONF="$CONF" sinfo ;;
  *) echo "usage: $0 start|stop|env|status" >&2; exit 2 ;;
esac
