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
# controller died, or for hosts that kept their directory because their
# result files were nowhere else yet. ANSIBLE_PLAYBOOK names the
# ansible-playbook to use.
#
# Exit codes: 0 every host ran and its results are safe (fetched or in the
# store); 1 a host failed (its messages above), and a host that kept its
# play directory is named at the end; 2 usage: no inventory, one that does
# not parse, no host matched, a malformed PLAY_ID, or ansible-playbook's own
# option errors; 130 interrupted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
playbooks=$here/ansible
playbook_cmd=${ANSIBLE_PLAYBOOK:-ansible-playbook}

usage() {
  echo "envbench fleet: $1" >&2
  echo "usage: $0 -i INVENTORY [ansible-playbook options]" >&2
  echo "       $0 --cleanup PLAY_ID -i INVENTORY [ansible-playbook options]" >&2
  exit 2
}

if [[ ${1:-} == --cleanup ]]; then
  [[ $# -ge 2 ]] || usage "--cleanup needs the PLAY_ID the play printed"
  play_id=$2
  shift 2
  mode=cleanup
  # The id becomes part of a path on every host (and of an -e key=value):
  # the form this script prints, letters, digits, . _ - only.
  [[ $play_id =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] ||
    usage "--cleanup $(printf %q "$play_id"): not a play id (such as 20260101T120000Z-0123abcd, printed when the play started)"
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
# An inventory that is missing or does not parse is an error, not a
# warning followed by a play on no host.
export ANSIBLE_INVENTORY_UNPARSED_FAILED=True
export ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED=True
# The hosts that keep their play's directory (result files nowhere else)
# leave a line each here; they are listed at the end.
export ENVBENCH_FLEET_KEPT=$ctl/kept
mkdir "$ENVBENCH_FLEET_KEPT"

# ansible-playbook's exit code as this script's: its parser and option
# errors (4, 5) are usage errors, any other failure is 1.
status() {
  case $1 in
    0) echo 0 ;;
    4 | 5) echo 2 ;;
    *) echo 1 ;;
  esac
}

# Names the hosts that kept their play's directory.
kept() {
  local f
  for f in "$ENVBENCH_FLEET_KEPT"/*; do
    [[ -f $f ]] && cat -- "$f" >&2
  done
  return 0
}

# Runs the playbook with --list-hosts first: no inventory, an inventory
# that does not parse, or no host matched (an empty inventory, a --limit
# that matches nothing) stop here with exit code 2, before anything runs.
check_hosts() {
  local out n
  if ! out=$("$playbook_cmd" "$1" --list-hosts -e "envbench_play_id=$play_id" "${@:2}" 2>&1); then
    printf '%s\n' "$out" >&2
    usage "the inventory or the options cannot be used (above); nothing was run"
  fi
  n=$(printf '%s\n' "$out" | sed -n 's/^ *hosts (\([0-9]*\)):.*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
  if [[ $n == 0 ]]; then
    printf '%s\n' "$out" >&2
    usage "no host of the inventory matched (above): give -i with an inventory that lists hosts; nothing was run"
  fi
}

cleanup() {
  echo "envbench fleet: cleaning up play $play_id on the hosts" >&2
  "$playbook_cmd" "$playbooks/cleanup.yml" -e "envbench_play_id=$play_id" "$@"
}

if [[ $mode == cleanup ]]; then
  check_hosts "$playbooks/cleanup.yml" "$@"
  rc=0
  cleanup "$@" || rc=$?
  kept
  exit "$(status "$rc")"
fi

check_hosts "$playbooks/fleet.yml" "$@"

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
  # the cleanup decides again for every host
  rm -f -- "$ENVBENCH_FLEET_KEPT"/*
  cleanup "$@" || rc=$?
  kept
  echo "envbench fleet: play $play_id interrupted by SIG$signalled$([[ $rc == 0 ]] && echo ', hosts cleaned up' || echo ", cleanup failed: run $0 --cleanup $play_id with the same options")" >&2
  exit 130
fi
kept
exit "$(status "$rc")"
