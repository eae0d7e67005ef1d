#!/usr/bin/env bash
# Runs `envbench run` under QEMU's user-mode emulation (Debian's
# qemu-user, `qemu-x86_64`): every instruction of envbench and of its
# workers translated, system calls passed to the host's kernel. What
# Docker Desktop does with amd64 images on Apple silicon, here on the
# host's own architecture.
#
#   qemu-user.sh ENVBENCH OUT CACHE -- RUN-ARGS...   (lib.sh: exit codes)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v qemu-x86_64 >/dev/null || missing "no qemu-x86_64 (qemu-user)"
[ "$(uname -m)" = x86_64 ] || missing "qemu-user's test emulates x86_64 on an x86_64 host"
mkdir "$work/io"
cd "$work/io"
run_layer qemu-x86_64 "$envbench" run "${run_args[@]}" --dir "work=$work/io" -o "$out/result.json"
