#!/usr/bin/env bash
# Runs `envbench run` in a container: podman, with runc as its runtime,
# running a Debian root file system built by `mmdebstrap --variant=minbase
# bookworm` (about 30 s) and kept in CACHE under ROOTFS_KEY, so a second
# run reuses it (change the key when the recipe changes). The rootfs is
# mounted as an overlay (`--rootfs DIR:O`), so containers never write to
# the cached copy and no image is left in podman's storage. The envbench
# binary (dynamically linked against bookworm's glibc) is bind-mounted
# read-only, OUT is bound at /out; no network but loopback.
#
# Why runc and explicit rlimits: on these machines crun fails both ways,
# without --ulimit ("setrlimit RLIMIT_NOFILE: Operation not permitted":
# podman asks for more than the hard limit and CAP_SYS_RESOURCE is not
# ours) and with it ("cgroups in hybrid mode not supported": cgroup v2 is
# mounted beside v1 with a controller in it); runc handles both.
#
#   container.sh ENVBENCH OUT CACHE -- RUN-ARGS...   (lib.sh: exit codes)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
ROOTFS_KEY=bookworm-minbase-1
command -v podman >/dev/null || missing "no podman"
[ -x /usr/sbin/runc ] || missing "no /usr/sbin/runc (Debian's runc; crun cannot set rlimits here)"
[ "$(id -u)" = 0 ] || missing "podman with a --rootfs overlay needs root here"
command -v mmdebstrap >/dev/null || missing "no mmdebstrap"

rootfs=$cache/rootfs-$ROOTFS_KEY
if ! [ -e "$rootfs/done" ]; then
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
fi

name=envbench-layers-$$-$RANDOM
layer_stop_hook="podman rm -f -t 0 $name"
mkdir "$work/io"
run_layer podman --runtime /usr/sbin/runc run --rm --name "$name" --network=none \
  --ulimit nofile=1024:4096 --ulimit nproc=1024:4096 \
  -v "$envbench:/usr/local/bin/envbench:ro" -v "$out:/out" -v "$work/io:/io" -w /io \
  --rootfs "$rootfs:O" \
  envbench run "${run_args[@]}" --dir work=/io -o /out/result.json
