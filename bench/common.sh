# Sourced by bench/verdicts.sh and bench/design.sh.
# workdir NAME: sets $repo and $work, a new temporary directory removed on
# every way out (Ctrl-C included), its result files first copied into
# $keep when that is set (a directory that must not exist yet).
workdir() {
  if [ -n "$keep" ]; then
    mkdir "$keep" || { echo "$1.sh: --keep $keep: give a new directory" >&2; exit 2; }
  fi
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  work=$(mktemp -d "${TMPDIR:-/tmp}/envbench-$1.XXXXXX")
  trap 'if [ -n "$keep" ]; then cp "$work"/*.json "$keep"/ 2>/dev/null || true; fi; rm -rf "$work"' EXIT
  trap 'exit 130' INT TERM
}
