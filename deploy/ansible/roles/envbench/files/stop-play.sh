#!/bin/sh
# stop-play.sh DIR [TIMEOUT] [--keep]: on a fleet host, stop every process
# of the play whose directory is DIR and remove DIR (with --keep, leave DIR
# so that its result files can be fetched first).
#
# A process belongs to the play when its executable is DIR/envbench (a run
# or one of its workers) or its environment holds ENVBENCH_FLEET_DIR=DIR
# (what the play started around and below envbench: Ansible's module
# process, envbench's helpers). envbench gets SIGTERM first and up to
# TIMEOUT seconds to wind down (it writes its file marked interrupted and
# removes its scratch); whatever is left then gets SIGKILL. Only this
# user's processes are visible here, and only this play's are touched.
set -u
dir=${1:?usage: stop-play.sh DIR [TIMEOUT]}
timeout=${2:-30}
keep=${3:-}
case $dir in
  /*/envbench-fleet-*) ;;
  *) echo "stop-play.sh: $dir is not a fleet play's directory" >&2; exit 2 ;;
esac
bin=$dir/envbench

# Prints the PIDs of the play's processes: its envbench ones, or (with
# "all") every one.
play_pids() {
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [ "$pid" = "$$" ] && continue
    if [ "$p/exe" -ef "$bin" ]; then
      echo "$pid"
    elif [ "$1" = all ] && grep -qszxF "ENVBENCH_FLEET_DIR=$dir" "$p/environ"; then
      echo "$pid"
    fi
  done
}

# Sends signal $1 to the processes of kind $2 and waits up to $3 seconds
# for them to go; prints how many were signalled.
stop() {
  pids=$(play_pids "$2")
  n=0
  for pid in $pids; do kill "-$1" "$pid" 2>/dev/null && n=$((n + 1)); done
  waited=0
  while [ "$n" -gt 0 ] && [ -n "$(play_pids "$2")" ] && [ "$waited" -lt "$(($3 * 10))" ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  echo "$n"
}

termed=$(stop TERM envbench "$timeout")
killed=$(stop KILL all 5)
[ "$termed" -gt 0 ] && echo "stopped $termed envbench process(es) with SIGTERM"
if [ "$killed" -gt 0 ]; then
  echo "killed $killed process(es) of the play"
  left=$(play_pids all)
  if [ -n "$left" ]; then
    echo "stop-play.sh: processes of the play still running:" $left >&2
    exit 1
  fi
fi
if [ "$keep" != --keep ] && [ -e "$dir" ]; then
  rm -rf -- "$dir" && echo "removed $dir"
fi
