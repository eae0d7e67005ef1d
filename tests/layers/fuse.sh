#!/usr/bin/env bash
# Runs `envbench run` on a --dir that is a FUSE mount (bindfs of a
# directory of this script's) and changes that mount under the run, once
# the run has saved FUSE_AFTER_ROUNDS case rounds (default 1):
# FUSE_ACTION=unmount unmounts it
# lazily (fusermount -uz: the path then shows the file system below it),
# stop stops its daemon (SIGSTOP: the file system no longer answers),
# readonly remounts it read-only (nothing made there can be removed).
#
#   fuse.sh ENVBENCH OUT CACHE -- RUN-ARGS...  (lib.sh: exit codes)
#
# The change lands between two case rounds whatever the machine's speed:
# the run is held (SIGSTOP) while no worker of its runs and none of its
# threads awaits the file system (a request the daemon took and was
# stopped before answering could never be given up: its thread, in the
# kernel, would outlive SIGKILL), the mount is changed, and the run goes
# on (SIGCONT). OUT gets result.json, exit-code,
# the run's stderr (envbench.err), the seconds from the change to the
# run's end (after-secs) and what was left running in this script's
# process group once the run ended, bindfs aside (left).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v bindfs >/dev/null || missing "no bindfs"
fusermount=$(command -v fusermount3 || command -v fusermount) \
  || missing "no fusermount (fuse3)"
[ -c /dev/fuse ] || missing "no /dev/fuse"
action=${FUSE_ACTION:?FUSE_ACTION is unmount, stop or readonly}
if [ "$action" = readonly ] && [ "$(id -u)" != 0 ]; then
  missing "remounting read-only needs root"
fi
mkdir "$work/below" "$work/mnt"
bindfs_pid=

# stop_fuse: the daemon goes on (if stopped) and ends; the mount goes
# (lazily: a run still holding it cannot keep it)
stop_fuse() {
  [ -n "$bindfs_pid" ] || return 0
  kill -CONT "$bindfs_pid" 2>/dev/null || true
  "$fusermount" -u -z "$work/mnt" 2>/dev/null || true
  kill "$bindfs_pid" 2>/dev/null || true
  wait "$bindfs_pid" 2>/dev/null || true
  bindfs_pid=
}
# the daemon answers again (a request it took before it was stopped holds
# its caller past SIGKILL), the run stops, the mount goes, then lib.sh's
# removal of $work
on_exit() {
  trap '' INT TERM
  # a daemon whose mount went lazily has ended by itself
  [ -z "$bindfs_pid" ] || kill -CONT "$bindfs_pid" 2>/dev/null || true
  stop_layer
  stop_fuse
  cleanup
}
trap on_exit EXIT

# in the foreground (-f), so that its PID is the daemon's
bindfs -f "$work/below" "$work/mnt" </dev/null &
bindfs_pid=$!
mounted() { grep -q " $work/mnt " /proc/self/mountinfo; }
for _ in $(seq 100); do mounted && break; sleep 0.1; done
mounted || { echo "$me: bindfs did not mount $work/mnt" >&2; exit 1; }

"$envbench" run "${run_args[@]}" --dir "fuse=$work/mnt" -o "$out/result.json" \
  </dev/null 2>"$out/envbench.err" &
layer_pid=$!
# FUSE_AFTER_ROUNDS case rounds saved (each names its worker): rounds
# are saved in the order they ran
after=${FUSE_AFTER_ROUNDS:-1}
saved() { grep -o '"worker_pid"' "$out/result.json" 2>/dev/null | wc -l; }
deadline=$((SECONDS + LAYER_TIMEOUT_S))
until [ "$(saved)" -ge "$after" ]; do
  kill -0 "$layer_pid" 2>/dev/null || { echo "$me: the run ended first" >&2; exit 1; }
  [ $SECONDS -lt $deadline ] || { echo "$me: no round within ${LAYER_TIMEOUT_S}s" >&2; exit 1; }
  sleep 0.05
done
# busy: a worker of the run's alive (a zombie once it ended), or a thread
# of the run waiting for the file system's answer
busy() {
  ps -o stat=,args= --ppid "$layer_pid" | grep -v '^Z' | grep -q __case \
    || grep -qs -e fuse -e request_wait /proc/"$layer_pid"/task/*/wchan
}
# hold the run between two rounds: its worker of the moment gets a second
# to finish its round; one that waits for its job (the run held just after
# starting it) cannot, and the run goes on a moment before it is held again
held=
for _ in $(seq 100); do
  kill -STOP "$layer_pid"
  for _ in $(seq 20); do
    busy || { held=1; break 2; }
    sleep 0.05
  done
  kill -CONT "$layer_pid"
  sleep 0.0$((RANDOM % 10))
done
[ -n "$held" ] || { echo "$me: the run was never between two rounds" >&2; exit 1; }
case $action in
  unmount) "$fusermount" -u -z "$work/mnt" ;;
  stop)
    kill -STOP "$bindfs_pid"
    # every thread of it stopped before the run goes on: one woken to stop
    # could still take the run's next request, never to answer it
    for _ in $(seq 100); do
      awk '$3 != "T" { busy = 1 } END { exit busy }' /proc/"$bindfs_pid"/task/*/stat && break
      sleep 0.02
    done
    ;;
  readonly) mount -o remount,bind,ro "$work/mnt" ;;
  *) echo "$me: FUSE_ACTION=$action: not unmount, stop or readonly" >&2; exit 1 ;;
esac
changed=$SECONDS
kill -CONT "$layer_pid"
rc=0
while kill -0 "$layer_pid" 2>/dev/null; do
  if [ $SECONDS -ge $deadline ]; then
    echo "$me: still running after ${LAYER_TIMEOUT_S}s; stopped; its threads:" >&2
    # where each thread of the run and of its children waits
    for t in /proc/"$layer_pid"/task/* $(ps -o pid= --ppid "$layer_pid" | sed 's|^ *|/proc/|'); do
      echo "$t $(cat "$t/comm" 2>/dev/null) $(cat "$t/wchan" 2>/dev/null)" >&2
      head -5 "$t/stack" 2>/dev/null >&2 || true
    done
    exit 1
  fi
  sleep 0.1
done
wait "$layer_pid" || rc=$?
layer_pid=
echo "$rc" >"$out/exit-code"
echo $((SECONDS - changed)) >"$out/after-secs"
left_in_group "$out/left" "$bindfs_pid"
