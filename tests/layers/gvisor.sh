#!/usr/bin/env bash
# Runs `envbench run` under gVisor: `runsc --network=none do
# -force-overlay=false`, runsc's default platform (ptrace), loopback only.
# The sandbox sees the host's root file system and writes through to it
# (no overlay), so envbench measures in a directory of this script's and
# writes its result file straight into OUT, a host directory.
#
#   gvisor.sh ENVBENCH OUT CACHE -- RUN-ARGS...     (lib.sh: exit codes)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v runsc >/dev/null || missing "no runsc (Debian's runsc)"
mkdir "$work/io" "$work/tmp"
# the sandbox runs as nobody and reads its bundle there
chmod 0755 "$work" "$work/tmp"
cd "$work/io"
# runsc do keeps its bundle under TMPDIR: inside $work, removed with it
# runsc's state in our directory, not /var/run/runsc: a killed sandbox
# leaves nothing behind there
mkdir "$work/runsc"
TMPDIR=$work/tmp run_layer runsc --root "$work/runsc" --network=none do -force-overlay=false -- \
  "$envbench" run "${run_args[@]}" --dir "work=$work/io" -o "$out/result.json"
