#!/usr/bin/env bash
# Runs `envbench run` on the host interleaved with a podman container:
# `--in host --in podman=PREFIX`, the container entered once (its resident
# launcher starts every round's worker inside it), as container.sh runs
# its own (runc, the cached Debian rootfs as an overlay, loopback only),
# with the envbench binary and the shared --dir bound at their host paths.
# The two result files go to OUT/result-host.json and
# OUT/result-podman.json. With IL_SIDES=aa, two containers instead
# (podman-a and podman-b): an A/A pair inside the layer.
#
#   interleaved-podman.sh ENVBENCH OUT CACHE -- RUN-ARGS...   (lib.sh: exit codes)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_podman
debian_rootfs
mkdir "$work/io"
cd "$work/io"
name=envbench-layers-$$-$RANDOM
if [ "${IL_SIDES:-}" = aa ]; then
  podman_prefix "$name-a" "$work/io"
  first=$podman
  podman_prefix "$name-b" "$work/io"
  layer_stop_hook="podman rm -f -t 0 $name-a $name-b"
  sides=(--in "podman-a=$first" --in "podman-b=$podman")
else
  podman_prefix "$name" "$work/io"
  sides=(--in host --in "podman=$podman")
fi
rc=0
run_layer "$envbench" run "${run_args[@]}" --dir "work=$work/io" "${sides[@]}" \
  -o "$out/result-{in}.json" || rc=1
# what envbench left of its containers, before this script removes any: none
podman ps -a --filter "name=$name" --format '{{.Names}}' >"$out/podman-left" 2>&1 || true
left_in_group "$out/pids-left"
no_scratch_left "$work/io"
exit $rc
