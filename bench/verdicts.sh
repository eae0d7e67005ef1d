#!/usr/bin/env bash
# envbench verdicts: builds controlled pairs on this machine from the real
# CLI and scores compare's headline verdicts against what is known.
#   A/A   the same environment as "A" and "B", 3 + 3 runs alternated
#         (A B A B A B); also each A_i against B_i (1 + 1). Expected: no
#         headline metric faster or slower.
#   1cpu  "two" = plain runs, "one" = `taskset -c 0` runs, both with
#         --threads 1,2, 3 + 3 alternated and each pair 1 + 1. Expected:
#         "one" slower where the work is parallel (threads=2 of cpu.lu and
#         cpu.primes, os.multiprog, os.shell with 8 copies (standard and
#         full only since 2026-11-29: quick counts one effect fewer)); no verdict on
#         single-threaded CPU, memory-latency and syscall cases.
#   strace "plain" against "traced" runs under `strace -f` (every system
#         call stops in the tracer), 3 + 3 alternated and each pair 1 + 1.
#         Expected: traced slower in every os case but os.multiprog and
#         fork_cow with touched memory (no known effect); no verdict on cpu.int,
#         cpu.float, cpu.primes and mem.latency (user-space work).
#   quota  "plain" against "quota" runs in a cgroup (v1 cpu, or v2) given
#         one CPU's time per period: expected as 1cpu.
#   Interleaved pairs (`run --in`, one run measures both sides round by
#   round, so compare pairs their rounds), the same pairs as above:
#   iaa, i1cpu, istrace, iquota: 3 interleaved runs (scored 3 and each 1),
#   each run timed against one plain run of the suite made the same hour.
#   Give the separate and the interleaved pairs together to compare them
#   on the same hour: --pairs aa,iaa,1cpu,i1cpu.
# Prints every judged headline verdict with the expected one, and per
# comparison a score line: effects found, false verdicts, and the
# precision of the headline ratios whose truth is "the same": the median
# half-width of their 95 % intervals, and the share of them shown within
# ±5 % (both ends of the interval within 0.95..1.05). This is a
# benchmark, not a test; CI does not run it. Nothing else may measure on
# the machine meanwhile. --keep DIR copies every result file into DIR.
#   bench/verdicts.sh [--trials N] [--suite quick|standard] [--pairs aa,1cpu,strace,quota,iaa,...] [--runs N] [--only PATTERN] [--keep DIR]
# --runs N: runs per side (separate) and interleaved runs per pair (3).
# ENVBENCH_BIN=PATH measures that binary instead of building the working
# tree (to alternate two builds, run the script once with each); the first
# line printed says which build was measured.
set -euo pipefail

trials=1
runs=3
suite=quick
pairs="aa,1cpu"
only=()
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --trials) trials=$2; shift 2 ;;
    --suite) suite=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --only) only=(--only "$2"); shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
    *) echo "verdicts.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if ! command -v taskset >/dev/null; then
  echo "verdicts.sh: taskset (util-linux) is needed for the 1cpu pair" >&2
  pairs=${pairs//1cpu/}
fi
if [[ $pairs == *strace* ]] && ! command -v strace >/dev/null; then
  echo "verdicts.sh: strace is needed for the strace pair" >&2
  pairs=${pairs//strace/}
fi
. "$(dirname "$0")/common.sh"
workdir verdicts
# the quota pairs' cgroup, removed on every way out
cgroup=""
trap 'remove_cgroup; if [ -n "$keep" ]; then cp "$work"/*.json "$keep"/ 2>/dev/null || true; fi; rm -rf "$work"' EXIT
if [[ $pairs == *quota* ]]; then
  if quota_cgroup verdicts; then
    # a command prefix that enters the cgroup, then execs the rest
    printf '#!/bin/sh\necho $$ > "%s/cgroup.procs" && exec "$@"\n' "$cgroup" > "$work/in-quota"
    chmod +x "$work/in-quota"
  else
    echo "verdicts.sh: the quota pairs are left out" >&2
    pairs=${pairs//quota/}
  fi
fi
build_envbench
echo "BUILD $built_from"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) usable CPUs" >&2

# run LABEL FILE [taskset prefix...]: one quick run into FILE.
run() {
  local label=$1 out=$2; shift 2
  "$@" "$envbench" run --suite "$suite" --no-history --quiet --force --threads 1,2 \
    --label "$label" "${only[@]}" -o "$out" >/dev/null
}

# irun TAG NAME_A NAME_B PREFIX_B: one interleaved run of A (plain) and B
# (behind PREFIX_B, empty: plain) into $work/TAG-{A,B}.json; prints its seconds.
irun() {
  local tag=$1 a=$2 b=$3 prefix=$4 start end
  local in_b=(--in "$b")
  [ -n "$prefix" ] && in_b=(--in "$b=$prefix")
  start=$(date +%s.%N)
  "$envbench" run --suite "$suite" --no-history --quiet --force --threads 1,2 \
    --in "$a" "${in_b[@]}" "${only[@]}" -o "$work/$tag-{in}.json" >/dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", b - a }'
}

# timed LABEL FILE [prefix...]: run, printing its seconds.
timed() {
  local start end
  start=$(date +%s.%N)
  run "$@"
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", b - a }'
}

# interleaved NAME EXPECT A B PREFIX: $runs interleaved runs, each beside
# one plain run of the suite for its time; scored over all and each alone.
interleaved() {
  local name=$1 expect=$2 a=$3 b=$4 prefix=$5 i t_in t_one as=() bs=()
  for i in $(seq 1 "$runs"); do
    echo "trial $t: $name interleaved, run $i of $runs" >&2
    t_in=$(irun "$name$i" "$a" "$b" "$prefix")
    t_one=$(timed one "$work/$name-one$i.json")
    echo "TIME $name #$i: interleaved ${t_in} s, one plain run ${t_one} s, ratio $(awk -v a="$t_in" -v b="$t_one" 'BEGIN { printf "%.2f", a / b }')"
    as+=("$work/$name$i-$a.json"); bs+=("$work/$name$i-$b.json")
  done
  [ "$runs" -gt 1 ] && score "$name $runs interleaved" "$expect" "${as[@]}" -- "${bs[@]}"
  for i in $(seq 1 "$runs"); do
    score "$name 1 interleaved #$i" "$expect" "${as[$((i-1))]}" -- "${bs[$((i-1))]}"
  done
}

# separate NAME EXPECT A B [prefix...]: $runs runs per side alternated, scored
# together and pair by pair.
separate() {
  local name=$1 expect=$2 a=$3 b=$4 i; shift 4
  for i in $(seq 1 "$runs"); do
    echo "trial $t: $name, run $i of $runs per side" >&2
    run "$a" "$work/$name-$a$i.json"
    run "$b" "$work/$name-$b$i.json" "$@"
  done
  local as=() bs=()
  for i in $(seq 1 "$runs"); do as+=("$work/$name-$a$i.json"); bs+=("$work/$name-$b$i.json"); done
  [ "$runs" -gt 1 ] && score "$name $runs+$runs" "$expect" "${as[@]}" -- "${bs[@]}"
  for i in $(seq 1 "$runs"); do
    score "$name 1+1 #$i" "$expect" "${as[$((i-1))]}" -- "${bs[$((i-1))]}"
  done
}

# score NAME EXPECT A.json... -- B.json...: compares and prints the verdicts,
# scored by envbench __score against EXPECT (src/cmd/score.rs).
score() {
  local name=$1 expect=$2; shift 2
  local a=() b=()
  while [ "$1" != "--" ]; do a+=("$1"); shift; done
  shift
  b=("$@")
  rm -f "$work/c.json"
  "$envbench" compare --base "${a[@]}" --other "${b[@]}" --json "$work/c.json" >/dev/null
  "$envbench" __score --expect "$expect" --name "$name" "$work/c.json"
}

for t in $(seq 1 "$trials"); do
  for pair in ${pairs//,/ }; do
    case "$pair" in
      aa) separate aa aa A B ;;
      1cpu) separate 1cpu 1cpu two one taskset -c 0 ;;
      strace) separate strace strace plain traced strace -f -qq -o /dev/null ;;
      quota) separate quota 1cpu plain quota "$work/in-quota" ;;
      iaa) interleaved iaa aa A B "" ;;
      i1cpu) interleaved i1cpu 1cpu two one "taskset -c 0" ;;
      istrace) interleaved istrace strace plain traced "strace -f -qq -o /dev/null" ;;
      iquota) interleaved iquota 1cpu plain quota "$work/in-quota" ;;
      *) echo "verdicts.sh: unknown pair $pair" >&2; exit 2 ;;
    esac
  done
done
