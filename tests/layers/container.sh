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
# CONTAINER_SECCOMP=unconfined runs it without podman's default seccomp
# profile; CONTAINER_SCRATCH=overlay puts the work directory on the
# container's own overlay root (/var/tmp/io) instead of a bind mount of a
# directory of the host.
#
#   container.sh ENVBENCH OUT CACHE -- RUN-ARGS...   (lib.sh: exit codes)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_podman
debian_rootfs

name=envbench-layers-$$-$RANDOM
layer_stop_hook="podman rm -f -t 0 $name"
mkdir "$work/io"
extra=()
[ "${CONTAINER_SECCOMP:-}" != unconfined ] || extra+=(--security-opt seccomp=unconfined)
# the command in the container: envbench on the bound /io, or a shell that
# makes /var/tmp/io in the overlay and runs envbench there
cmd=(envbench run "${run_args[@]}" --dir work=/io -o /out/result.json)
if [ "${CONTAINER_SCRATCH:-}" = overlay ]; then
  cmd=(sh -c 'mkdir -p /var/tmp/io && cd /var/tmp/io && exec envbench run "$@"' sh
    "${run_args[@]}" --dir work=/var/tmp/io -o /out/result.json)
fi
run_layer podman --runtime /usr/sbin/runc run --rm --name "$name" --network=none \
  --ulimit nofile=1024:4096 --ulimit nproc=1024:4096 "${extra[@]}" \
  -v "$envbench:/usr/local/bin/envbench:ro" -v "$out:/out" -v "$work/io:/io" -w /io \
  --rootfs "$rootfs:O" "${cmd[@]}"
