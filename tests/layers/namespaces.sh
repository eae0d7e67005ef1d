#!/usr/bin/env bash
# Runs `envbench run` in fresh namespaces and nothing else: `unshare --pid
# --net --mount --uts --ipc --fork --mount-proc`, the layer every
# container runtime starts from. A new network namespace has its loopback
# down; it is brought up first, as a runtime would.
#
#   namespaces.sh ENVBENCH OUT CACHE -- RUN-ARGS...  (lib.sh: exit codes)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v unshare >/dev/null || missing "no unshare (util-linux)"
command -v ip >/dev/null || missing "no ip (iproute2) to bring the loopback up"
mkdir "$work/io"
cd "$work/io"
# --kill-child: killing unshare (it ignores TERM while it waits) ends the
# namespace's first process and with it the whole PID namespace
run_layer unshare --pid --net --mount --uts --ipc --fork --mount-proc --kill-child \
  sh -c 'ip link set lo up && exec "$@"' sh \
  "$envbench" run "${run_args[@]}" --dir "work=$work/io" -o "$out/result.json"
