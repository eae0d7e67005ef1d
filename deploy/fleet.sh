#!/usr/bin/env bash
# Runs envbench on the hosts of an Ansible inventory (deploy/ansible/):
#
#   deploy/fleet.sh -i INVENTORY [ansible-playbook options, e.g. -e envbench_runs=5]
#   deploy/fleet.sh --cleanup PLAY_ID -i INVENTORY [options]
#
# The first form prints the play's id and runs deploy/ansible/fleet.yml
# with it. Interrupted (Ctrl-C, SIGTERM, SIGHUP), it stops the playbook and
# runs deploy/ansible/cleanup.yml, which stops envbench on the hosts and
# removes the play's directories there: Ansible runs no `always:` on
# Ctrl-C. The second form does that cleanup by hand, for a play whose
# controller died. ANSIBLE_PLAYBOOK names the ansible-playbook to use.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
playbooks=$here/ansible
playbook_cmd=${ANSIBLE_PLAYBOOK:-ansible-playbook}

if [[ ${1:-} == --cleanup ]]; then
  play_id=${2:?usage: fleet.sh --cleanup PLAY_ID -i INVENTORY [options]}
  shift 2
  mode=cleanup
else
  play_id=$(date -u +%Y%m%dT%H%M%SZ)-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
  mode=run
fi

# Ansible's controller-side files (its local temp, SSH control sockets) go
# into a directory of this invocation. One SSH connection per host serves
# every task (a master that outlives the playbook); at the end each master
# is told to exit, which also ends its session on the host, and the
# directory goes.
ctl=$(mktemp -d "${TMPDIR:-/tmp}/envbench-fleet-ctl.XXXXXX")
finish() {
  local s
  for s in "$ctl"/cp/*; do
    [[ -S $s ]] && ssh -o ControlPath="$s" -O exit fleet-host >/dev/null 2>&1 || true
  done
  rm -rf -- "$ctl"
}
trap finish EXIT
export ANSIBLE_CONFIG=${ANSIBLE_CONFIG:-$playbooks/ansible.cfg}
export ANSIBLE_LOCAL_TEMP=$ctl/tmp
export ANSIBLE_SSH_CONTROL_PATH_DIR=$ctl/cp
export ANSIBLE_SSH_ARGS=${ANSIBLE_SSH_ARGS:--o ControlMaster=auto -o ControlPersist=600 -o ServerAliveInterval=15 -o ServerAliveCountMax=4}
export ANSIBLE_RETRY_FILES_ENABLED=False

cleanup() {
  echo "envbench fleet: cleaning up play $play_id on the hosts" >&2
  "$playbook_cmd" "$playbooks/cleanup.yml" -e "envbench_play_id=$play_id" "$@"
}

if [[ $mode == cleanup ]]; then
  cleanup "$@"
  exit
fi

echo "envbench fleet: play $play_id (after a crash of this controller: $0 --cleanup $play_id ...)" >&2
# The playbook runs in the background so that a signal reaches the trap at
# once; it ignores SIGINT there (as any background job of a script), so a
# Ctrl-C reaches it only through the trap below.
"$playbook_cmd" "$playbooks/fleet.yml" -e "envbench_play_id=$play_id" "$@" <&0 &
pid=$!
signalled=

# The playbook's process and its descendants (its workers, their ssh).
tree() {
  local p=$1 c
  echo "$p"
  for c in $(ps -o pid= --ppid "$p" 2>/dev/null); do tree "$c"; done
}

on_signal() {
  signalled=$1
  trap '' INT TERM HUP
  echo "envbench fleet: $1: stopping the playbook" >&2
  local pids
  pids=$(tree "$pid")
  kill -TERM $pids 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL $pids 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'on_signal HUP' HUP

rc=0
wait "$pid" || rc=$?
if [[ -n $signalled ]]; then
  rc=0
  cleanup "$@" || rc=$?
  echo "envbench fleet: play $play_id interrupted by SIG$signalled$([[ $rc == 0 ]] && echo ', hosts cleaned up' || echo ", cleanup failed: run $0 --cleanup $play_id with the same options")" >&2
  exit 130
fi
exit "$rc"
