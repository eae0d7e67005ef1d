#!/usr/bin/env bash
# Runs `envbench run` under bubblewrap, the runtime-less container:
# every namespace bwrap can unshare (--unshare-all: user, pid, net with
# its loopback up, ipc, uts, cgroup), the host's / bound read-write, a
# fresh /proc and /tmp (with this script's directory and OUT bound back
# in, should they lie under /tmp), and killed with this script.
#
#   bwrap.sh ENVBENCH OUT CACHE -- RUN-ARGS...       (lib.sh: exit codes)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v bwrap >/dev/null || missing "no bwrap (bubblewrap)"
mkdir "$work/io"
cd "$work/io"
# the binary is bound again after the tmpfs over /tmp, which would hide
# it where the clone lives under /tmp
run_layer bwrap --dev-bind / / --unshare-all --die-with-parent --proc /proc --tmpfs /tmp \
  --ro-bind "$envbench" "$envbench" \
  --bind "$work" "$work" --bind "$out" "$out" --chdir "$work/io" \
  "$envbench" run "${run_args[@]}" --dir "work=$work/io" -o "$out/result.json"
