# Sourced by bench/pairs.sh and bench/design.sh.
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

# build_envbench: the binary measured, copied into $work as $envbench (a
# build while the benchmark runs replaces target/'s binary, and a run
# whose binary was replaced cannot start its workers): $ENVBENCH_BIN when
# set (another build, to alternate two), else built from the working tree.
# Says, on stderr and in $built_from, which commit it was built from and
# whether the tree held uncommitted changes then: an edit made while a
# script builds is measured with it (2026-11-28, the pace's check).
build_envbench() {
  envbench="$work/envbench"
  if [ -n "${ENVBENCH_BIN:-}" ]; then
    cp "$ENVBENCH_BIN" "$envbench"
    built_from="ENVBENCH_BIN=$ENVBENCH_BIN"
  else
    echo "building envbench (release)" >&2
    (cd "$repo" && cargo build --release --quiet)
    cp "$repo/target/release/envbench" "$envbench"
    built_from="commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no -- src Cargo.toml Cargo.lock build.rs 2>/dev/null)" ]; then
      built_from="$built_from with uncommitted changes to its sources"
    fi
  fi
  echo "envbench: $built_from" >&2
}
