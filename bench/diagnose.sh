#!/usr/bin/env bash
# envbench diagnose: builds pairs of real layers and stand-ins on this
# machine from the real CLI, compares them, and scores the mechanism the
# diagnosis names first against the one known to be there.
#   aa         plain against plain: nothing to name
#   namespaces plain against `unshare --pid --net --mount ...` (tests/layers/namespaces.sh): nothing
#   bwrap      plain against bubblewrap --unshare-all: nothing
#   container  plain against podman + runc, Debian minbase, podman's default
#              seccomp profile, scratch on a bind mount: seccomp_filter
#   containeropen  the same with `--security-opt seccomp=unconfined`: nothing
#   overlay    seccomp off, scratch on the container's overlay: overlay_filesystem
#   qemuuser   plain against `qemu-x86_64 envbench` (user-mode emulation):
#              cpu_emulation
#   gvisor     plain against `runsc do` (ptrace platform): syscall_interception
#   strace     plain against `strace -f`: syscall_interception
#   1cpu       plain against `taskset -c 0`: fewer_cpus
#   quota      plain against a cgroup (v1 cpu or v2) quota of one CPU: cpu_quota
#   bindfs     a directory against a bindfs FUSE mount of it: remote_filesystem
#   qemu       in a QEMU guest, its ext4 disk against its 9p share
#              (compare --by-dir): remote_filesystem
# The resource controls and a competitor (issue 79), each on B only, in a
# cgroup v1 made for the pair:
#   throttle   blkio.throttle of 50 MiB/s and 400 IOPS each way on the
#              disk behind the scratch directory: io_throttle
#   memlimit   memory.limit_in_bytes 64 MiB: memory_limit
#   weight     cpu.shares 102 (a tenth), while one busy loop on CPU 1 runs
#              through both sides: cpu_weight
#   cpuset     cpuset.cpus 0: fewer_cpus
#   busy       one busy loop on CPU 1 during B's runs only: competitors
# Each pair: RUNS runs per side alternated (A B A B ...), compared as
# RUNS + RUNS and as each 1 + 1; one line per comparison with what was
# named.
# Interleaved pairs (`run --in A --in B=PREFIX`: one run measures both
# sides round by round) are compared as RUNS interleaved runs together and
# each alone; the same expectations as their separate pair:
#   iaa, inamespaces (unshare as a prefix, the loopback brought up),
#   ibwrap, igvisor (tests/layers/interleaved.sh: host against `runsc do`),
#   istrace, i1cpu, iquota, and the controls entered as B's prefix (a
#   script that joins the pair's cgroup, then runs the launcher):
#   ithrottle, imemlimit, iweight (the busy loop through both sides),
#   icpuset
# This is a benchmark, not a test; CI does not run it. Nothing else may
# measure on the machine meanwhile.
#   bench/diagnose.sh [--runs N] [--pairs a,b,...] [--budget SECONDS] [--keep DIR] [--cache DIR]
#                     [--file-size SIZE] (run's --file-size on both sides: a
#                     file larger than the memlimit pair's 64 MiB)
#   bench/diagnose.sh --rescore DIR [--runs N] [--pairs ...]: compares and
#     scores the files an earlier --keep DIR kept, measuring nothing (to
#     score a changed diagnosis on the same runs)
set -euo pipefail

runs=3
pairs="aa,namespaces,bwrap,container,containeropen,overlay,gvisor,strace,1cpu,quota,bindfs,\
qemu,qemuuser,iaa,inamespaces,ibwrap,igvisor,istrace,i1cpu,iquota,throttle,memlimit,weight,cpuset,busy,\
ithrottle,imemlimit,iweight,icpuset"
budget=0.3
keep=""
cache=""
rescore=""
file_size=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --file-size) file_size=$2; shift 2 ;;
    --rescore) rescore=$(realpath "$2"); shift 2 ;;
    -h|--help) sed -n '2,49p' "$0"; exit 0 ;;
    *) echo "diagnose.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
. "$(dirname "$0")/common.sh"
workdir diagnose
layers_setup
subset="cpu.int,cpu.float,cpu.primes,cpu.lu,os.syscall,os.fork,os.thread,os.spawn,os.pipe,\
os.multiprog,mem.stream,mem.latency,net.tcp_echo,io.dd,io.meta,app"
args=(--suite quick --threads 1,2 --no-history --quiet --force --budget "$budget" --only "$subset")
if [ -n "$file_size" ]; then args+=(--file-size "$file_size"); fi
export LAYER_TIMEOUT_S=${LAYER_TIMEOUT_S:-600}

# cleanup of what the stand-ins set up: a bindfs mount, a cgroup, a busy loop
mounted="" cgroup="" busy=""
undo() {
  if [ -n "$mounted" ]; then fusermount -u "$mounted" 2>/dev/null || umount "$mounted" 2>/dev/null || true; fi
  busy_off
  remove_cgroup
}

# busy_on: one busy loop on CPU 1, its PID in $busy; busy_off stops it.
busy_on() {
  taskset -c 1 sh -c 'while :; do :; done' &
  busy=$!
}
busy_off() {
  if [ -n "$busy" ]; then kill "$busy" 2>/dev/null || true; wait "$busy" 2>/dev/null || true; fi
  busy=""
}

# control_setup PAIR: the v1 cgroup of PAIR's control in $cgroup (and the
# weight pair's busy loop); fails, saying so, where it cannot be made.
control_setup() {
  local controller
  case $1 in
    throttle) controller=blkio ;;
    memlimit) controller=memory ;;
    weight) controller=cpu ;;
    cpuset) controller=cpuset ;;
  esac
  if ! [ -w "/sys/fs/cgroup/$controller" ]; then
    echo "diagnose.sh: no writable cgroup v1 $controller controller for the $1 pair" >&2
    return 1
  fi
  cgroup=$(mktemp -d "/sys/fs/cgroup/$controller/envbench-$1.XXXXXX")
  case $1 in
    throttle)
      local disk dev
      disk=$(findmnt -no SOURCE -T "$work" | sed 's/[0-9]*$//; s/p$//')
      dev=$(lsblk -dno MAJ:MIN "$disk" | tr -d ' ')
      for f in read_bps_device write_bps_device; do echo "$dev 52428800" > "$cgroup/blkio.throttle.$f"; done
      for f in read_iops_device write_iops_device; do echo "$dev 400" > "$cgroup/blkio.throttle.$f"; done ;;
    memlimit) echo $((64 << 20)) > "$cgroup/memory.limit_in_bytes" ;;
    weight) echo 102 > "$cgroup/cpu.shares"; busy_on ;;
    cpuset)
      cat /sys/fs/cgroup/cpuset/cpuset.mems > "$cgroup/cpuset.mems"
      echo 0 > "$cgroup/cpuset.cpus" ;;
  esac
}
trap 'undo; if [ -n "$keep" ]; then cp "$work"/*.json "$keep"/ 2>/dev/null || true; fi; rm -rf --one-file-system "$work"' EXIT

# plain LABEL OUT [PREFIX...]: one run on the host, in a directory named work.
plain() {
  local label=$1 out=$2; shift 2
  local dir; dir=$(mktemp -d "$work/io.XXXXXX")
  "$@" "$envbench" run "${args[@]}" --label "$label" --dir "work=$dir" -o "$out" >/dev/null
  rm -rf "$dir"
}

# layer SCRIPT LABEL OUT [ENV=VALUE...]: one run inside a layer of tests/layers.
layer() {
  local script=$1 label=$2 out=$3; shift 3
  local o; o=$(mktemp -d "$work/out.XXXXXX")
  chmod 0777 "$o"
  env "$@" bash "$repo/tests/layers/$script" "$envbench" "$o" "$cache" -- "${args[@]}" --label "$label" >/dev/null
  cp "$o/result.json" "$out"
  rm -rf "$o"
}

# quota_setup: a cgroup of one CPU's time in $cgroup (bench/common.sh).
quota_setup() {
  quota_cgroup diagnose
}

# one SIDE LABEL OUT: the run of SIDE (a or b) of the current pair.
one() {
  local side=$1 label=$2 out=$3
  case "$pair/$side" in
    */a) plain "$label" "$out" ;;
    aa/b) plain "$label" "$out" ;;
    namespaces/b) layer namespaces.sh "$label" "$out" ;;
    bwrap/b) layer bwrap.sh "$label" "$out" ;;
    container/b) layer container.sh "$label" "$out" ;;
    containeropen/b) layer container.sh "$label" "$out" CONTAINER_SECCOMP=unconfined ;;
    overlay/b) layer container.sh "$label" "$out" CONTAINER_SECCOMP=unconfined CONTAINER_SCRATCH=overlay ;;
    qemuuser/b) layer qemu-user.sh "$label" "$out" ;;
    gvisor/b) layer gvisor.sh "$label" "$out" ;;
    strace/b) plain "$label" "$out" strace -f -qq -o /dev/null ;;
    1cpu/b) plain "$label" "$out" taskset -c 0 ;;
    quota/b) plain "$label" "$out" sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cgroup" ;;
    throttle/b|memlimit/b|weight/b|cpuset/b)
      plain "$label" "$out" sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cgroup" ;;
    busy/b) busy_on; plain "$label" "$out"; busy_off ;;
    bindfs/b) "$envbench" run "${args[@]}" --label "$label" --dir "work=$mounted" -o "$out" >/dev/null ;;
  esac
}

# score NAME EXPECT JSON: the mechanisms named, the first one judged
# (envbench __score, src/cmd/score.rs).
score() {
  "$envbench" __score --first "$2" --name "$1" "$3"
}

compare_and_score() {
  local name=$1 expect=$2; shift 2
  rm -f "$work/c.json"
  "$envbench" compare "$@" --json "$work/c.json" >/dev/null
  score "$name" "$expect" "$work/c.json"
}

expected() {
  case $1 in
    aa|namespaces|bwrap|containeropen|iaa|inamespaces|ibwrap) echo none ;;
    container) echo seccomp_filter ;;
    overlay) echo overlay_filesystem ;;
    qemuuser) echo cpu_emulation ;;
    gvisor|strace|igvisor|istrace) echo syscall_interception ;;
    1cpu|i1cpu) echo fewer_cpus ;;
    quota|iquota) echo cpu_quota ;;
    bindfs|qemu) echo remote_filesystem ;;
    throttle|ithrottle) echo io_throttle ;;
    memlimit|imemlimit) echo memory_limit ;;
    weight|iweight) echo cpu_weight ;;
    cpuset|icpuset) echo fewer_cpus ;;
    busy) echo competitors ;;
  esac
}

# prefix PAIR: the command prefix of an interleaved pair's B side (empty:
# plain), wrapper scripts written into $work.
prefix() {
  case $1 in
    iaa) ;;
    inamespaces)
      printf '#!/bin/sh\nexec unshare --pid --net --mount --uts --ipc --fork --mount-proc --kill-child sh -c %s sh "$@"\n' \
        "'ip link set lo up && exec \"\$@\"'" > "$work/in-namespaces"
      chmod +x "$work/in-namespaces"
      echo "$work/in-namespaces" ;;
    ibwrap) echo "bwrap --dev-bind / / --unshare-all --die-with-parent --proc /proc" ;;
    istrace) echo "strace -f -qq -o /dev/null" ;;
    i1cpu) echo "taskset -c 0" ;;
    iquota|ithrottle|imemlimit|iweight|icpuset)
      printf '#!/bin/sh\necho $$ > "%s/cgroup.procs" && exec "$@"\n' "$cgroup" > "$work/in-cgroup"
      chmod +x "$work/in-cgroup"
      echo "$work/in-cgroup" ;;
  esac
}

# interleaved PAIR EXPECT: $runs interleaved runs of A (plain) and B,
# scored together and each alone.
interleaved() {
  local pair=$1 want=$2 i p dir o
  for i in $(seq 1 "$runs"); do
    echo "$pair: interleaved run $i of $runs" >&2
    if [ "$pair" = igvisor ]; then
      o=$(mktemp -d "$work/out.XXXXXX")
      chmod 0777 "$o"
      bash "$repo/tests/layers/interleaved.sh" "$envbench" "$o" "$cache" -- "${args[@]}" >/dev/null
      cp "$o/result-host.json" "$work/$pair$i-A.json"
      cp "$o/result-gvisor.json" "$work/$pair$i-B.json"
      rm -rf "$o"
    else
      p=$(prefix "$pair")
      dir=$(mktemp -d "$work/io.XXXXXX")
      "$envbench" run "${args[@]}" --dir "work=$dir" --in A --in "B${p:+=$p}" \
        -o "$work/$pair$i-{in}.json" >/dev/null
      rm -rf "$dir"
    fi
  done
  score_interleaved "$pair" "$want" "$work"
}

# score_interleaved PAIR EXPECT DIR: DIR's interleaved runs of PAIR scored
# together and each alone.
score_interleaved() {
  local pair=$1 want=$2 dir=$3 i a=() b=()
  for i in $(seq 1 "$runs"); do
    a+=("$dir/$pair$i-A.json"); b+=("$dir/$pair$i-B.json")
  done
  if [ "$runs" -gt 1 ]; then
    compare_and_score "$pair $runs interleaved" "$want" --base "${a[@]}" --other "${b[@]}"
  fi
  for i in $(seq 1 "$runs"); do
    compare_and_score "$pair 1 interleaved #$i" "$want" --base "${a[$((i - 1))]}" --other "${b[$((i - 1))]}"
  done
}

# score_qemu EXPECT DIR: DIR's guest runs compared --by-dir, together and each.
score_qemu() {
  local want=$1 dir=$2 i
  compare_and_score "qemu $runs runs --by-dir" "$want" --by-dir "$dir"/qemu-*.json
  for i in $(seq 1 "$runs"); do
    compare_and_score "qemu 1 run --by-dir #$i" "$want" --by-dir "$dir/qemu-$i.json"
  done
}

# score_separate PAIR EXPECT DIR: DIR's runs of PAIR, RUNS + RUNS and each 1 + 1.
score_separate() {
  local pair=$1 want=$2 dir=$3 i a=() b=()
  for i in $(seq 1 "$runs"); do a+=("$dir/$pair-a$i.json"); b+=("$dir/$pair-b$i.json"); done
  compare_and_score "$pair $runs+$runs" "$want" --base "${a[@]}" --other "${b[@]}"
  for i in $(seq 1 "$runs"); do
    compare_and_score "$pair 1+1 #$i" "$want" --base "${a[$((i - 1))]}" --other "${b[$((i - 1))]}"
  done
}

IFS=, read -r -a wanted <<<"$pairs"
for pair in "${wanted[@]}"; do
  want=$(expected "$pair")
  [ -n "$want" ] || { echo "diagnose.sh: unknown pair $pair" >&2; exit 2; }
  start=$SECONDS
  if [ -n "$rescore" ]; then
    case $pair in
      qemu) score_qemu "$want" "$rescore" ;;
      i*) score_interleaved "$pair" "$want" "$rescore" ;;
      *) score_separate "$pair" "$want" "$rescore" ;;
    esac
    continue
  fi
  if [[ $pair == i* ]]; then
    if [ "$pair" = iquota ]; then quota_setup || continue; fi
    case $pair in ithrottle|imemlimit|iweight|icpuset) control_setup "${pair#i}" || continue ;; esac
    interleaved "$pair" "$want"
    undo
    cgroup=""
    echo "$pair: $((SECONDS - start)) s" >&2
    continue
  fi
  if [ "$pair" = qemu ]; then
    for i in $(seq 1 "$runs"); do
      echo "$pair: guest run $i of $runs" >&2
      o=$(mktemp -d "$work/out.XXXXXX")
      bash "$repo/tests/layers/qemu.sh" "$envbench" "$o" "$cache" -- \
        "${args[@]/$subset/io.dd,io.meta,os.syscall,cpu.int}" --label guest >/dev/null
      cp "$o/result.json" "$work/qemu-$i.json"
    done
    score_qemu "$want" "$work"
    echo "$pair: $((SECONDS - start)) s" >&2
    continue
  fi
  if [ "$pair" = quota ]; then quota_setup || continue; fi
  case $pair in throttle|memlimit|weight|cpuset) control_setup "$pair" || continue ;; esac
  if [ "$pair" = bindfs ]; then
    command -v bindfs >/dev/null || { echo "diagnose.sh: no bindfs" >&2; continue; }
    mkdir "$work/bind-src" "$work/bind"
    bindfs "$work/bind-src" "$work/bind"
    mounted=$work/bind
  fi
  for i in $(seq 1 "$runs"); do
    echo "$pair: run $i of $runs per side" >&2
    one a A "$work/$pair-a$i.json"
    one b B "$work/$pair-b$i.json"
  done
  score_separate "$pair" "$want" "$work"
  undo
  mounted="" cgroup=""
  echo "$pair: $((SECONDS - start)) s" >&2
done
