#!/usr/bin/env bash
# envbench pairs: controlled pairs of environments built on this machine
# from the real CLI, compared, and scored by `envbench __score --pair`
# against what is known to be there (src/cmd/score/pairs.rs declares it;
# `envbench __score --pairs` lists each pair's known effect, the mechanism
# the diagnosis should name first, and its side B). Separate pairs: RUNS
# runs a side alternated (A B A B ...), compared as RUNS + RUNS and as
# each 1 + 1; interleaved pairs (i and a
# separate pair's name): RUNS runs of `run --in A --in B=PREFIX`, compared
# together and each alone. The default --pairs: every pair, in that
# order. --timed: beside each interleaved run, one separate run of each
# side (not the layers' A/A); prints the interleaved run's time against
# their sum. This is a benchmark, not a test; CI does not run it.
# Nothing else may measure on the machine meanwhile.
#   bench/pairs.sh [--pairs a,b,...] [--runs N] [--suite quick|standard]
#                  [--only PATTERN] [--budget SECONDS] [--file-size SIZE]
#                  [--timed] [--keep DIR] [--cache DIR]
#   bench/pairs.sh --rescore DIR [--runs N] [--pairs ...]: scores the
#     files an earlier --keep DIR kept, measuring nothing
# --only diagnosis: the 16 benches the diagnosis is scored on, at --budget
# 0.3 unless one is given (bench/diagnose.sh's runs until 2026-12-06).
# --file-size: run's, on both sides (the memlimit pair: a file over 64 MiB).
# qemu measures io.dd, io.meta, os.syscall and cpu.int, at --budget 0.3
# unless one is given.
# ENVBENCH_BIN=PATH measures that build instead of the working tree's.
set -euo pipefail

runs=3 suite=quick budget="" keep="" cache="" rescore="" file_size="" timed="" pairs=""
only=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --suite) suite=$2; shift 2 ;;
    --only) only=(--only "$2"); shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --file-size) file_size=$2; shift 2 ;;
    --timed) timed=1; shift ;;
    --keep) keep=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --rescore) rescore=$(realpath "$2"); shift 2 ;;
    -h|--help) sed -n '2,/^set -e/{/^#/p}' "$0"; exit 0 ;;
    *) echo "pairs.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ "${only[1]:-}" = diagnosis ]; then
  only=(--only "cpu.int,cpu.float,cpu.primes,cpu.lu,os.syscall,os.fork,os.thread,os.spawn,os.pipe,\
os.multiprog,mem.stream,mem.latency,net.tcp_echo,io.dd,io.meta,app")
  budget=${budget:-0.3}
fi
args=(--suite "$suite" --threads 1,2 --no-history --quiet --force)
[ -z "$budget" ] || args+=(--budget "$budget")
[ -z "$file_size" ] || args+=(--file-size "$file_size")
. "$(dirname "$0")/common.sh"
export LAYER_TIMEOUT_S=${LAYER_TIMEOUT_S:-900}

# score NAME PAIR COMPARE-ARGS...: compares, then scores the verdicts and
# the mechanism named first by what is known of PAIR (envbench __score
# --pairs lists it).
score() {
  local name=$1 pair=$2
  shift 2
  rm -f "$work/c.json"
  "$envbench" compare "$@" --json "$work/c.json" >/dev/null
  "$envbench" __score --pair "$pair" --name "$name" "$work/c.json"
}

# score_pair PAIR DIR: DIR's runs of PAIR, all together and each alone.
score_pair() {
  local pair=$1 dir=$2 i a=() b=()
  if [ "$pair" = qemu ]; then
    [ "$runs" -lt 2 ] || score "qemu $runs runs --by-dir" qemu --by-dir "$dir"/qemu-*.json
    for i in $(seq 1 "$runs"); do score "qemu 1 run --by-dir #$i" qemu --by-dir "$dir/qemu-$i.json"; done
    return
  fi
  local how="$runs+$runs" each="1+1"
  for i in $(seq 1 "$runs"); do a+=("$dir/$pair-a$i.json"); b+=("$dir/$pair-b$i.json"); done
  if [[ $pair == i* ]]; then
    how="$runs interleaved" each="1 interleaved"
    a=() b=()
    for i in $(seq 1 "$runs"); do a+=("$dir/$pair$i-A.json"); b+=("$dir/$pair$i-B.json"); done
  fi
  [ "$runs" -lt 2 ] || score "$pair $how" "$pair" --base "${a[@]}" --other "${b[@]}"
  for i in $(seq 1 "$runs"); do
    score "$pair $each #$i" "$pair" --base "${a[$((i - 1))]}" --other "${b[$((i - 1))]}"
  done
}

workdir pairs
# a history of its own, re-scoring too, and no shared store: compare
# takes a person's earlier runs as evidence for a side of one run
export XDG_DATA_HOME=$work/xdg
unset ENVBENCH_DB
build_envbench
echo "BUILD $built_from"
known=$("$envbench" __score --pairs | cut -d' ' -f1 | paste -sd,)
IFS=, read -r -a wanted <<<"${pairs:-$known}"
for pair in "${wanted[@]}"; do
  [[ ,$known, == *,"$pair",* ]] || { echo "pairs.sh: unknown pair $pair (envbench __score --pairs)" >&2; exit 2; }
done
if [ -n "$rescore" ]; then
  for pair in "${wanted[@]}"; do
    case $pair in
      qemu) kept=$rescore/qemu-1.json ;;
      i*) kept=$rescore/${pair}1-A.json ;;
      *) kept=$rescore/$pair-a1.json ;;
    esac
    [ -e "$kept" ] || { echo "pairs.sh: $pair: not in $rescore" >&2; continue; }
    score_pair "$pair" "$rescore"
  done
  exit 0
fi

cache=${cache:-$repo/target/tmp/layers-cache}
mkdir -p "$cache"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) usable CPUs" >&2

# what the pairs set up, undone on every way out: a bindfs mount, a
# cgroup, a busy loop
mounted="" cgroup="" busy="" on=""
undo() {
  if [ -n "$mounted" ]; then fusermount -u "$mounted" 2>/dev/null || umount "$mounted" 2>/dev/null || true; fi
  busy_off
  if [ -n "$cgroup" ]; then
    # a run stopped by Ctrl-C may take a moment to leave it
    for _ in $(seq 1 50); do rmdir "$cgroup" 2>/dev/null && break; sleep 0.1; done
  fi
  mounted="" cgroup=""
}
trap 'undo; if [ -n "$keep" ]; then cp "$work"/*.json "$keep"/ 2>/dev/null || true; fi; rm -rf --one-file-system "$work"' EXIT

busy_on() {
  taskset -c 1 sh -c 'while :; do :; done' &
  busy=$!
}
busy_off() {
  if [ -n "$busy" ]; then kill "$busy" 2>/dev/null || true; wait "$busy" 2>/dev/null || true; fi
  busy=""
}

# setup PAIR: what PAIR's side B needs (a tool, a cgroup in $cgroup, a
# busy loop, a bindfs mount in $mounted); fails, saying so, where any of
# it cannot be had (setup runs under ||, so without set -e: each step
# says when it failed).
setup() {
  local controller="" p=${1#i} tool=""
  case $p in
    strace) tool=strace ;;
    1cpu|busy|weight) tool=taskset ;;
    bindfs) tool=bindfs ;;
  esac
  if [ -n "$tool" ] && ! command -v "$tool" >/dev/null; then
    echo "pairs.sh: no $tool for the $1 pair" >&2
    return 1
  fi
  case $p in
    quota)
      if [ -d /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/cpu ]; then
        cgroup=$(mktemp -d /sys/fs/cgroup/cpu/envbench-quota.XXXXXX) &&
          echo 100000 >"$cgroup/cpu.cfs_period_us" &&
          echo 100000 >"$cgroup/cpu.cfs_quota_us" || return 1
      elif [ -f /sys/fs/cgroup/cgroup.controllers ] && [ -w /sys/fs/cgroup ]; then
        cgroup=$(mktemp -d /sys/fs/cgroup/envbench-quota.XXXXXX) &&
          echo "100000 100000" >"$cgroup/cpu.max" || return 1
      else
        echo "pairs.sh: no writable cgroup cpu controller for the $1 pair" >&2
        return 1
      fi ;;
    throttle) controller=blkio ;;
    memlimit) controller=memory ;;
    weight) controller=cpu ;;
    cpuset) controller=cpuset ;;
    bindfs)
      mkdir -p "$work/bind-src" "$work/bind" || return 1
      # set first: a Ctrl-C while it mounts still unmounts it
      mounted=$work/bind
      bindfs "$work/bind-src" "$work/bind" || return 1 ;;
  esac
  [ -n "$controller" ] || return 0
  if ! [ -w "/sys/fs/cgroup/$controller" ]; then
    echo "pairs.sh: no writable cgroup v1 $controller controller for the $1 pair" >&2
    return 1
  fi
  cgroup=$(mktemp -d "/sys/fs/cgroup/$controller/envbench-$p.XXXXXX") || return 1
  case $p in
    throttle)
      local disk dev f
      disk=$(findmnt -no SOURCE -T "$work" | sed 's/[0-9]*$//; s/p$//')
      dev=$(lsblk -dno MAJ:MIN "$disk" | tr -d ' ') && [ -n "$dev" ] || return 1
      for f in read_bps_device write_bps_device; do
        echo "$dev 52428800" >"$cgroup/blkio.throttle.$f" || return 1
      done
      for f in read_iops_device write_iops_device; do
        echo "$dev 400" >"$cgroup/blkio.throttle.$f" || return 1
      done ;;
    memlimit) echo $((64 << 20)) >"$cgroup/memory.limit_in_bytes" || return 1 ;;
    weight) echo 102 >"$cgroup/cpu.shares" || return 1; busy_on ;;
    cpuset)
      cat /sys/fs/cgroup/cpuset/cpuset.mems >"$cgroup/cpuset.mems" &&
        echo 0 >"$cgroup/cpuset.cpus" || return 1 ;;
  esac
}

# plain LABEL OUT [PREFIX...]: one run on this machine, in a new directory
# named work (in $on where set: the bindfs mount).
plain() {
  local label=$1 out=$2 dir; shift 2
  dir=$(mktemp -d "${on:-$work}/io.XXXXXX")
  "$@" "$envbench" run "${args[@]}" "${only[@]}" --label "$label" --dir "work=$dir" -o "$out" >/dev/null
  rm -rf "$dir"
}

# layer SCRIPT BASE [ENV=VALUE...] [-- RUN-ARGS...]: a script of
# tests/layers; its result.json copied to BASE.json, result-X.json to
# BASE-X.json.
layer() {
  local script=$1 out=$2 o f; shift 2
  local envs=() extra=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  [ $# -eq 0 ] || { shift; extra=("$@"); }
  o=$(mktemp -d "$work/out.XXXXXX")
  chmod 0777 "$o"
  env "${envs[@]}" bash "$repo/tests/layers/$script" "$envbench" "$o" "$cache" -- "${args[@]}" "${extra[@]}" >/dev/null
  for f in "$o"/result*.json; do cp "$f" "$out$(basename "$f" .json | sed 's/^result//').json"; done
  rm -rf "$o"
}

# in_cgroup: a prefix that enters $cgroup, then execs the rest.
in_cgroup() {
  printf '#!/bin/sh\necho $$ > "%s/cgroup.procs" && exec "$@"\n' "$cgroup" >"$work/in-cgroup"
  chmod +x "$work/in-cgroup"
  echo "$work/in-cgroup"
}

# side PAIR SIDE OUT: the run of SIDE (a or b) of the separate pair PAIR.
side() {
  local pair=$1 out=$3 base=${3%.json}
  local b=(--label B "${only[@]}")
  case "$pair/$2" in
    */a|aa/b) plain "${2^^}" "$out" ;;
    bindfs/b) on=$mounted plain B "$out" ;;
    namespaces/b) layer namespaces.sh "$base" -- "${b[@]}" ;;
    bwrap/b) layer bwrap.sh "$base" -- "${b[@]}" ;;
    container/b) layer container.sh "$base" -- "${b[@]}" ;;
    containeropen/b) layer container.sh "$base" CONTAINER_SECCOMP=unconfined -- "${b[@]}" ;;
    overlay/b) layer container.sh "$base" CONTAINER_SECCOMP=unconfined CONTAINER_SCRATCH=overlay -- "${b[@]}" ;;
    qemuuser/b) layer qemu-user.sh "$base" -- "${b[@]}" ;;
    gvisor/b) layer gvisor.sh "$base" -- "${b[@]}" ;;
    strace/b) plain B "$out" strace -f -qq -o /dev/null ;;
    1cpu/b) plain B "$out" taskset -c 0 ;;
    quota/b|throttle/b|memlimit/b|weight/b|cpuset/b) plain B "$out" "$(in_cgroup)" ;;
    busy/b) busy_on; plain B "$out"; busy_off ;;
  esac
}

# prefix PAIR: the command prefix of an interleaved pair's side B (empty:
# plain).
prefix() {
  case $1 in
    inamespaces)
      printf '#!/bin/sh\nexec unshare --pid --net --mount --uts --ipc --fork --mount-proc --kill-child sh -c %s sh "$@"\n' \
        "'ip link set lo up && exec \"\$@\"'" >"$work/in-namespaces"
      chmod +x "$work/in-namespaces"
      echo "$work/in-namespaces" ;;
    ibwrap) echo "bwrap --dev-bind / / --unshare-all --die-with-parent --proc /proc" ;;
    istrace) echo "strace -f -qq -o /dev/null" ;;
    i1cpu) echo "taskset -c 0" ;;
    iquota|ithrottle|imemlimit|iweight|icpuset) in_cgroup ;;
  esac
}

# interleaved PAIR I: interleaved run I of PAIR into $work/PAIRI-{A,B}.json.
interleaved() {
  local pair=$1 i=$2 p dir
  case $pair in
    igvisor|ipodman|igvisoraa|ipodmanaa)
      local s=interleaved.sh name=gvisor
      [[ $pair != ipodman* ]] || s=interleaved-podman.sh name=podman
      if [[ $pair == *aa ]]; then
        layer "$s" "$work/$pair$i" IL_SIDES=aa -- "${only[@]}"
        mv "$work/$pair$i-$name-a.json" "$work/$pair$i-A.json"
        mv "$work/$pair$i-$name-b.json" "$work/$pair$i-B.json"
      else
        layer "$s" "$work/$pair$i" -- "${only[@]}"
        mv "$work/$pair$i-host.json" "$work/$pair$i-A.json"
        mv "$work/$pair$i-$name.json" "$work/$pair$i-B.json"
      fi ;;
    *)
      p=$(prefix "$pair")
      dir=$(mktemp -d "$work/io.XXXXXX")
      "$envbench" run "${args[@]}" "${only[@]}" --dir "work=$dir" --in A --in "B${p:+=$p}" \
        -o "$work/$pair$i-{in}.json" >/dev/null
      rm -rf "$dir" ;;
  esac
}

# secs CMD...: runs CMD, its wall seconds in $took.
secs() {
  local t0; t0=$(date +%s.%N)
  "$@"
  took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
}

for pair in "${wanted[@]}"; do
  start=$SECONDS
  setup "$pair" || { undo; continue; }
  for i in $(seq 1 "$runs"); do
    echo "$pair: run $i of $runs" >&2
    if [ "$pair" = qemu ]; then
      # args holds --budget where one was given; TCG needs the short one
      guest=(--only io.dd,io.meta,os.syscall,cpu.int --label guest)
      [ -n "$budget" ] || guest+=(--budget 0.3)
      layer qemu.sh "$work/qemu-$i" "TIMEOUT_S=${TIMEOUT_S:-$LAYER_TIMEOUT_S}" -- "${guest[@]}"
    elif [[ $pair == i* ]]; then
      secs interleaved "$pair" "$i"
      if [ -n "$timed" ] && [ "$pair" != igvisoraa ] && [ "$pair" != ipodmanaa ]; then
        sep=${pair#i}
        [ "$sep" != podman ] || sep=container
        t_in=$took
        secs side "$sep" a "$work/$pair$i-sepA.json"; t_a=$took
        secs side "$sep" b "$work/$pair$i-sepB.json"; t_b=$took
        echo "TIME $pair #$i: interleaved $t_in s, separate $t_a + $t_b s, ratio \
$(awk -v i="$t_in" -v a="$t_a" -v b="$t_b" 'BEGIN { printf "%.3f", i / (a + b) }')"
      fi
    else
      side "$pair" a "$work/$pair-a$i.json"
      side "$pair" b "$work/$pair-b$i.json"
    fi
  done
  score_pair "$pair" "$work"
  undo
  echo "$pair: $((SECONDS - start)) s" >&2
done
