#!/usr/bin/env bash
# Runs `envbench run` on the host, interleaved with gVisor: `--in host --in
# gvisor='runsc ... do'`, each gVisor worker a sandbox of its own, started
# as gvisor.sh starts its one (runsc's default platform, ptrace; loopback
# only; -force-overlay=false, so the sandbox writes through to the host
# and the scratch directories in the shared --dir are the host's). runsc
# keeps its bundle under TMPDIR and its state under --root, both inside
# $work, which is removed with everything in it; `env` sets TMPDIR in the
# prefix itself (no shell runs a prefix). The two result files go to
# OUT/result-host.json and OUT/result-gvisor.json.
#
#   interleaved.sh ENVBENCH OUT CACHE -- RUN-ARGS...   (lib.sh: exit codes)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v runsc >/dev/null || missing "no runsc (Debian's runsc)"
mkdir "$work/io" "$work/tmp" "$work/runsc"
# the sandbox runs as nobody and reads its bundle there
chmod 0755 "$work" "$work/tmp"
cd "$work/io"
gvisor="env TMPDIR=$work/tmp runsc --root $work/runsc --network=none do -force-overlay=false --"
run_layer "$envbench" run "${run_args[@]}" --dir "work=$work/io" \
  --in host --in "gvisor=$gvisor" -o "$out/result-{in}.json"
# every scratch directory was removed, by the host's workers and gVisor's
left=$(find "$work/io" -mindepth 1 -maxdepth 1 | head -5)
if [ -n "$left" ]; then
  echo "$me: left in the shared --dir: $left" >&2
  exit 1
fi
