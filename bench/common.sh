# Sourced by bench/verdicts.sh, bench/design.sh, bench/diagnose.sh and
# bench/interleaved.sh.
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

# quota_cgroup NAME: a new cgroup (v1 cpu, else v2) given one CPU's time
# per 100 ms period, its path in $cgroup; fails, saying so, when no cpu
# controller is writable.
quota_cgroup() {
  if [ -d /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/cpu ]; then
    cgroup=$(mktemp -d "/sys/fs/cgroup/cpu/envbench-$1.XXXXXX")
    echo 100000 > "$cgroup/cpu.cfs_period_us"
    echo 100000 > "$cgroup/cpu.cfs_quota_us"
  elif [ -f /sys/fs/cgroup/cgroup.controllers ] && [ -w /sys/fs/cgroup ]; then
    cgroup=$(mktemp -d "/sys/fs/cgroup/envbench-$1.XXXXXX")
    echo "100000 100000" > "$cgroup/cpu.max"
  else
    echo "$1.sh: no writable cgroup cpu controller for the quota pair" >&2
    return 1
  fi
}

# remove_cgroup: removes $cgroup when set (a run stopped by Ctrl-C may
# take a moment to leave it).
remove_cgroup() {
  if [ -n "${cgroup:-}" ]; then
    for _ in $(seq 1 50); do rmdir "$cgroup" 2>/dev/null && break; sleep 0.1; done
  fi
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

# layers_setup: for the scripts that run tests/layers: $cache (the layers'
# cache, unless given), an empty history in $work (a one-run side takes no
# spread from earlier runs), envbench (build_envbench), the CPU said.
layers_setup() {
  cache=${cache:-$repo/target/tmp/layers-cache}
  export XDG_DATA_HOME=$work/xdg
  mkdir -p "$cache"
  build_envbench
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) usable CPUs" >&2
}
