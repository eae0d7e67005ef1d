#!/usr/bin/env bash
# Runs `envbench run` on the host, interleaved with gVisor: `--in host --in
# gvisor='runsc ... do'`, the sandbox entered once (its resident launcher
# starts every round's worker inside it), started as gvisor.sh starts its
# one (runsc's default platform, ptrace; loopback only;
# -force-overlay=false, so the sandbox writes through to the host and the
# scratch directories in the shared --dir are the host's). runsc keeps its
# bundle under TMPDIR and its state under --root, both inside $work, which
# is removed with everything in it; `env` sets TMPDIR in the prefix itself
# (no shell runs a prefix). The two result files go to
# OUT/result-host.json and OUT/result-gvisor.json. With IL_SIDES=aa, two
# sandboxes instead (gvisor-a and gvisor-b): an A/A pair inside the layer.
# OUT/runsc-root names runsc's --root, for `runsc list` after the run.
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
echo "$work/runsc" >"$out/runsc-root"
if [ "${IL_SIDES:-}" = aa ]; then
  sides=(--in "gvisor-a=$gvisor" --in "gvisor-b=$gvisor")
else
  sides=(--in host --in "gvisor=$gvisor")
fi
rc=0
run_layer "$envbench" run "${run_args[@]}" --dir "work=$work/io" "${sides[@]}" \
  -o "$out/result-{in}.json" || rc=1
# what envbench left of gVisor, before this script stops anything: none
runsc --root "$work/runsc" list -quiet >"$out/runsc-left" 2>/dev/null || true
left_in_group "$out/pids-left"
no_scratch_left "$work/io"
exit $rc
