# Sourced by the layer scripts in this folder (bash): argument parsing, a
# temporary directory removed on every path, and a layer command run in
# the background under a hard timeout, so that a trapped INT or TERM
# (Ctrl-C, or tests/layers.rs giving up) stops it at once.
#
#   SCRIPT ENVBENCH OUT CACHE -- RUN-ARGS...
#
# envbench runs inside the layer with RUN-ARGS and writes OUT/result.json;
# CACHE keeps what a second run can reuse. Exit codes: 0 envbench ran and
# exited 0, 1 failure (envbench's own exit code is in OUT/exit-code when it
# ran), 3 a tool is missing (the last stderr line names it).

LAYER_TIMEOUT_S=${LAYER_TIMEOUT_S:-150}
# What stop_layer runs before signalling, e.g. `podman rm -f NAME`.
layer_stop_hook=
# Paths removed on exit after the layer stopped (rm --one-file-system).
remove_on_exit=()
layer_pid=
work=

me=$(basename "$0")
if [ $# -lt 4 ] || [ "$4" != -- ]; then
  echo "usage: $me ENVBENCH OUT CACHE -- RUN-ARGS..." >&2
  exit 1
fi
envbench=$(realpath "$1") out=$(realpath "$2") cache=$3
shift 4
run_args=("$@")

missing() { echo "$me: $1" >&2; exit 3; }
command -v ps >/dev/null || missing "no ps (procps), which finds the layer's processes to stop"

# descendants PID: every process below PID (children first walked), by PID
descendants() {
  local kid
  for kid in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    echo "$kid"
    descendants "$kid"
  done
}

# stop_layer: TERM (envbench then marks its file interrupted and stops the
# case), TERM again (it exits at once, killing its workers), then KILL for
# whatever is left of the layer command and everything it started.
stop_layer() {
  [ -n "$layer_pid" ] || return 0
  [ -z "$layer_stop_hook" ] || eval "$layer_stop_hook" >/dev/null 2>&1 || true
  # every PID seen below the layer command: those orphaned when it ends
  # are still ours to kill
  local seen="" sig i
  for sig in TERM TERM KILL; do
    seen="$seen $(descendants "$layer_pid")"
    # shellcheck disable=SC2086
    kill -s "$sig" "$layer_pid" $seen 2>/dev/null || true
    for i in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 "$layer_pid" 2>/dev/null || break 2
      sleep 0.3
    done
  done
  # shellcheck disable=SC2086
  kill -s KILL $seen 2>/dev/null || true
  wait "$layer_pid" 2>/dev/null || true
  layer_pid=
  # again: what the hook stops (a container whose monitor daemonized, out
  # of reach of the kills above) may have started after its first call
  [ -z "$layer_stop_hook" ] || eval "$layer_stop_hook" >/dev/null 2>&1 || true
}

cleanup() {
  trap '' INT TERM # a second Ctrl-C does not cut the cleanup short
  stop_layer
  local p
  for p in "${remove_on_exit[@]}" "$work"; do
    [ -z "$p" ] || rm -rf --one-file-system "$p"
  done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
work=$(mktemp -d "${TMPDIR:-/tmp}/envbench-$me.XXXXXX")
mkdir -p "$cache"
cache=$(realpath "$cache")

# run_layer CMD...: runs CMD (in the background, stdin from /dev/null) and
# waits for it at most LAYER_TIMEOUT_S seconds; its exit code goes to
# OUT/exit-code. Returns 0 when CMD exited 0, else 1 (never 3, which
# says a tool is missing: CMD's own 3, envbench's "not idle", is no such thing).
run_layer() {
  "$@" </dev/null &
  layer_pid=$!
  local deadline=$((SECONDS + LAYER_TIMEOUT_S)) rc=0
  while kill -0 "$layer_pid" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then
      echo "$me: still running after ${LAYER_TIMEOUT_S}s; stopped" >&2
      stop_layer
      return 1
    fi
    sleep 0.2
  done
  wait "$layer_pid" || rc=$?
  layer_pid=
  echo "$rc" >"$out/exit-code"
  [ "$rc" -eq 0 ]
}

# debian_rootfs: sets $rootfs to a Debian root file system built by
# `mmdebstrap --variant=minbase bookworm` (about 30 s) and kept in CACHE
# under ROOTFS_KEY, so a later run reuses it (change the key when the
# recipe changes). Containers mount it as an overlay (`--rootfs DIR:O`),
# so they never write to the cached copy.
ROOTFS_KEY=bookworm-minbase-1
debian_rootfs() {
  command -v mmdebstrap >/dev/null || missing "no mmdebstrap"
  rootfs=$cache/rootfs-$ROOTFS_KEY
  [ -e "$rootfs/done" ] && return 0
  # two layers' tests run at once: one builds, the other waits for it
  exec {rootfs_lock}<>"$cache/rootfs-$ROOTFS_KEY.lock"
  flock "$rootfs_lock"
  if [ -e "$rootfs/done" ]; then exec {rootfs_lock}>&-; return 0; fi
  echo "$me: building $rootfs with mmdebstrap" >&2
  rm -rf --one-file-system "$rootfs" "$rootfs.tmp"
  # under run_layer too, so Ctrl-C stops it, and in a mount namespace of
  # its own, so whatever it mounts in the tree goes when it does; the
  # partial tree is removed on every path
  remove_on_exit+=("$rootfs.tmp")
  run_layer unshare --mount --propagation private --fork --kill-child \
    mmdebstrap --quiet --mode=root --variant=minbase bookworm "$rootfs.tmp" \
    || { echo "$me: mmdebstrap failed" >&2; exit 1; }
  rm -f "$out/exit-code"
  touch "$rootfs.tmp/done"
  mv "$rootfs.tmp" "$rootfs"
  exec {rootfs_lock}>&-
}

# podman_prefix NAME DIR: sets $podman to the words that run a command in a
# container named NAME (podman with runc, the rootfs as an overlay, no
# network but loopback, the envbench binary bind-mounted read-only at its
# host path, DIR bound at the same path and the working directory), with
# stdin open (-i) for a resident launcher; the stop hook removes it.
podman_prefix() {
  podman="podman --runtime /usr/sbin/runc run --rm -i --name $1 --network=none"
  podman+=" --ulimit nofile=1024:4096 --ulimit nproc=1024:4096"
  podman+=" -v $envbench:$envbench:ro -v $2:$2 -w $2 --rootfs $rootfs:O"
  layer_stop_hook="podman rm -f -t 0 $1"
}

# left_in_group FILE [PID...]: writes to FILE every process of this
# script's process group still running but the script itself and the
# PIDs given (the script's own helpers, stopped after): after envbench
# ended, whatever it started should be gone. A process that has ended and
# waits to be reaped (state Z or X) is not running: an orphan's reaper
# here (PID 1) can take seconds to collect it, as tests/common/group.rs's
# running_in_group also allows. Those still running get 5 s to end.
# pgrep runs alone (a pipeline's other commands share the group and could
# be listed) and never lists itself; the filter runs after it.
left_in_group() {
  local file=$1 pgid pid state line
  shift
  pgid=$(ps -o pgid= -p $$ | tr -d ' ')
  for _ in $(seq 50); do
    pgrep -a -g "$pgid" >"$file.all" || true
    : >"$file"
    while read -r line; do
      pid=${line%% *}
      [ "$pid" != $$ ] || continue
      case " $* " in *" $pid "*) continue ;; esac
      state=$(sed -n 's/^.*) \(.\).*$/\1/p' /proc/"$pid"/stat 2>/dev/null) || true
      case $state in Z | X | '') continue ;; esac
      echo "$line" >>"$file"
    done <"$file.all"
    [ -s "$file" ] || break
    sleep 0.1
  done
  rm -f "$file.all"
}

# need_podman: podman with Debian's runc, as root (exit 3 otherwise). Why
# runc: on these machines crun fails both ways, without --ulimit
# ("setrlimit RLIMIT_NOFILE: Operation not permitted") and with it
# ("cgroups in hybrid mode not supported").
need_podman() {
  command -v podman >/dev/null || missing "no podman"
  [ -x /usr/sbin/runc ] || missing "no /usr/sbin/runc (Debian's runc; crun cannot set rlimits here)"
  [ "$(id -u)" = 0 ] || missing "podman with a --rootfs overlay needs root here"
}

# no_scratch_left DIR: fails when DIR (a shared --dir) still holds
# anything: every scratch directory was removed, on either side.
no_scratch_left() {
  local left
  left=$(find "$1" -mindepth 1 -maxdepth 1 | head -5)
  if [ -n "$left" ]; then
    echo "$me: left in the shared --dir: $left" >&2
    exit 1
  fi
}
