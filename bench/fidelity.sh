#!/usr/bin/env bash
# envbench fidelity: runs envbench and a reference tool alternately (A B B A)
# on this machine with the same parameters and prints, per case, both
# figures and the ratio envbench/reference with its spread over rounds.
# These machines drift 10-65 % in absolute terms within half an hour, while
# alternated ratios hold within a few percent: read the ratio, not the figures.
#
# This is a benchmark, not a test; CI does not run it.
#   bench/fidelity.sh [--rounds N] [--budget SECONDS] [--sections io,net]
#                     [--no-install] [--io-dir DIR] [--io-size SIZE] [--io-secs N]
#                     [--information]
# Sequential rounds: each section first runs --rounds alternated rounds
# (default 5; io at least 8). Then, while a banded row is
# unclear and its interval says how many more rounds would settle it, the
# section whose row the fewest rounds would settle (times what a round of
# it costs) runs again for that many more, measuring only the rows (or the
# groups that measure them together) still unclear; the rows keep every
# round's figures. It stops when every banded row is within or outside its
# band, or when the run's budget (--budget, default 600 s, for each
# section) is spent; each pass says what it adds and what has been spent.
# The last line counts the rows within, outside, unclear at the budget,
# and without a band.
# The os family (os.syscall, os.fork, os.pipe, os.spawn), cpu.primes
# against sysbench, cpu.lu against hpcc's HPL and mem.stream against C
# STREAM are `envbench fidelity --sections os,cpu,mem`, a tested command;
# this script keeps the rest.
# Sections: io, net (the app family against the real tools it
# stands for is bench/commands.py's last columns). io works in a fresh directory under --io-dir (default: the
# temporary directory) with files of --io-size (default 256M) and random I/O
# runs of --io-secs (default 1, the length of envbench's standard io.random
# repetition: both then end with the same fsync of every file in the same time).
# --information adds the dear rows kept for information only, without a band
# (net.tcp_stream against one iperf3 with two streams): left out, their time goes to the
# rows a band judges. Cheaper rows without a band run in every first
# pass: io.dd's O_DIRECT write against fio (its scramble rewrites about
# twice the lines envbench's stamp does) and dd (it refills its whole
# buffer before each write; a C writer is the reference for both) and,
# under BBR, the HTTP client at 100 KiB on nginx's CPU (two rates).
set -euo pipefail
# numbers are read and printed with a decimal point (bash's printf follows
# LC_NUMERIC)
export LC_ALL=C

rounds=5
budget=600
sections="io,net"
install=1
io_dir=""
io_size=256M
io_secs=1
information=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --sections) sections=$2; shift 2 ;;
    --no-install) install=0; shift ;;
    --io-dir) io_dir=$2; shift 2 ;;
    --io-size) io_size=$2; shift 2 ;;
    --io-secs) io_secs=$2; shift 2 ;;
    --information) information=1; shift ;;
    -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
    *) echo "fidelity.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/envbench-fidelity.XXXXXX")
io_scratch=""  # the io section's directory, under --io-dir
# servers a section started (nginx, sockperf, iperf3, envbench's HTTP
# helper), stopped by PID on every way out
started=()
stop_started() {
  local p
  for p in "${started[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${started[@]}"; do wait "$p" 2>/dev/null || true; done
  started=()
}
trap 'stop_started; rm -rf "$work" ${io_scratch:+"$io_scratch"}' EXIT
trap 'exit 130' INT TERM

# Installs Debian packages the sections need, when root and allowed.
need_pkgs() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$install" = 1 ] && [ "$(id -u)" = 0 ]; then
    echo "installing ${missing[*]}" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "missing packages: ${missing[*]} (run as root without --no-install to install them)" >&2
    return 1
  fi
}

need_pkgs python3 gcc >/dev/null || true
echo "building envbench (release)" >&2
(cd "$repo" && cargo build --release --quiet)
envbench="$repo/target/release/envbench"

# Runs `envbench run` for PATTERN into $work/e.json.
envbench_run() {
  "$envbench" run --no-history --suite quick --quiet --force --only "$1" -o "$work/e.json" >/dev/null
}

# Prints the median of METRIC of CASE from $work/e.json.
envbench_median() {
  python3 - "$work/e.json" "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["cases"]:
    if c["key"] == sys.argv[2]:
        if c["status"] != "ok":
            sys.exit(f"{c['key']}: {c['status']}: {c.get('reason')}")
        for m in c["metrics"]:
            if m["name"] == sys.argv[3]:
                print(m["summary"]["median"]); sys.exit(0)
sys.exit(f"{sys.argv[2]} {sys.argv[3]} not in the result file")
PY
}

# band_of LABEL REFERENCE_NAME: the band a row is held to
# (docs/fidelity.md), as envbench __judge takes it; nothing for a
# reference kept for information:
# - "both allowed both CPUs": the scheduler may put both on one CPU, a
#   bound; the pinned C row is the reference;
# - iperf3 -P 2: one iperf3 thread for both streams; two clients are;
# - dd bs=1M oflag=direct refills its whole buffer from /dev/zero before
#   each write, and fio's scramble_buffers rewrites about twice the lines
#   envbench stamps: the C writer is the reference for both;
# - BBR's two rates: the host's state flips within a run, and no round
#   controls the mix.
band_of() {
  case "$2" in
    *"both allowed both CPUs"* | "iperf3 -P 2" | "dd bs=1M oflag=direct"* | "fio bs=1M direct=1 psync"* | *"(BBR: two rates, information)"*) return 0 ;;
  esac
  case "$1" in
    io.*) echo 0.90..1.10 ;;
    "net.http server"*) echo 0.80.. ;;
    net.*) echo 0.85..1.15 ;;
  esac
}

# summarize LABEL UNIT REFERENCE_NAME "ENVBENCH VALUES" "REFERENCE VALUES"
# Judges the row as `envbench fidelity` judges its own (`envbench __judge`,
# the rule in src/stats/band.rs): the rounds' paired figures give the ratio
# envbench/reference with its 95 % interval, and the row is within its band
# (the interval inside it), outside it (wholly beyond), or unclear
# (straddling: with the rounds that would settle it, none at the band's
# edge). Rows without a band (a reference kept for information, or one the
# section found unable to measure what envbench does: FIDELITY_INFORMATION
# says why) print the interval only. A row keeps every round's figures
# across the section's passes ($work/rows/SECTION/), and its latest
# judgement is $work/verdicts/SECTION/ROW, for the passes and the last line.
summarize() {
  # a later pass that did not measure this row (still_open) keeps its verdict
  if [ -z "$4$5" ] && [ "${pass:-1}" -gt 1 ]; then return 0; fi
  local label=$1 unit=$2 rname=$3 why=${FIDELITY_INFORMATION:-}
  local -a e r
  read -ra e <<<"$4"
  read -ra r <<<"$5"
  if [ ${#e[@]} = 0 ] || [ ${#e[@]} != ${#r[@]} ]; then
    echo "$label vs $rname: not judged (no paired values)" >&2
    return 0
  fi
  local rows=$work/rows/$FIDELITY_SECTION verdicts=$work/verdicts/$FIDELITY_SECTION row
  row=$(printf '%s vs %s' "$label" "$rname" | sha1sum | cut -c1-16)
  mkdir -p "$rows" "$verdicts"
  { cat "$rows/$row" 2>/dev/null || true; paste -d' ' <(printf '%s\n' "${e[@]}") <(printf '%s\n' "${r[@]}"); } >"$rows/$row.new"
  mv -f "$rows/$row.new" "$rows/$row"
  local band judged ratio lo hi n wanted em rm words out
  band=$(band_of "$label" "$rname")
  [ -z "$why" ] || band=""
  out=$("$envbench" __judge ${band:+--band "$band"} --label "$label vs $rname" <"$rows/$row") \
    || { echo "$label vs $rname: not judged" >&2; return 0; }
  IFS=$'\t' read -r judged ratio lo hi n wanted em rm words <<<"$out"
  [ "$judged" != no_band ] || words="no band (information${why:+: $why})"
  local interval="" s=s
  [ "$lo" = NaN ] || interval=$(printf ' [%.3f..%.3f]' "$lo" "$hi")
  [ "$n" != 1 ] || s=""
  printf '%-46s envbench %11.4g %-6s %-26s %11.4g %-6s ratio %.3f%s over %d round%s: %s\n' \
    "$label" "$em" "$unit" "$rname" "$rm" "$unit" "$ratio" "$interval" "$n" "$s" "$words"
  printf '%s\t%s vs %s\t%s\t%s\t%s\t%s\t%s\n' "$judged" "$label" "$rname" "$ratio" "$lo" "$hi" "$n" "$wanted" >"$verdicts/$row.new"
  mv -f "$verdicts/$row.new" "$verdicts/$row"
}

# still_open PREFIX...: true on a section's first pass; on a later one,
# true while a row of this section whose "LABEL vs REFERENCE" starts with
# one of the prefixes is unclear and more rounds would settle it. A later
# pass measures only such rows (or the group that measures them together),
# so that its rounds go where a verdict is still wanted.
still_open() {
  [ "${pass:-1}" -gt 1 ] || return 0
  local p
  for p in "$@"; do
    cat "$work/verdicts/$FIDELITY_SECTION"/* 2>/dev/null |
      awk -F'\t' -v p="$p" '$1 == "unclear" && $7 > 0 && index($2, p) == 1 { f = 1 } END { exit !f }' && return 0
  done
  return 1
}

# ordered E R: runs the functions E and R in round $i's order (E first in
# even rounds, R first in odd ones)
ordered() { if ((i % 2 == 0)); then "$1"; "$2"; else "$2"; "$1"; fi; }

# alternate LABEL UNIT ENVBENCH_FN REFERENCE_FN REFERENCE_NAME
# Each FN prints one number; they run alternately for $rounds rounds.
alternate() {
  local label=$1 unit=$2 efn=$3 rfn=$4 rname=$5 e r
  still_open "$label vs $rname" || return 0
  local es=() rs=()
  for ((i = 0; i < rounds; i++)); do
    # envbench first in even rounds, the reference first in odd ones, so
    # that a drift within a round falls on both sides alike
    if ((i % 2 == 1)); then r=$($rfn) || { echo "$label: $rname failed" >&2; return 0; }; fi
    e=$($efn) || { echo "$label: envbench failed" >&2; return 0; }
    if ((i % 2 == 0)); then r=$($rfn) || { echo "$label: $rname failed" >&2; return 0; }; fi
    es+=("$e"); rs+=("$r")
  done
  summarize "$label" "$unit" "$rname" "${es[*]}" "${rs[*]}"
}

# ---------------------------------------------------------------- io
# All in one fresh directory under --io-dir, alternating on the same
# filesystem. io.random against sysbench fileio rndrw with the same file set
# (128 files, --io-size in all), 16 KiB blocks, 1.5 reads per write, fsync
# every 100 requests; envbench repeats 1 s runs (suite standard), sysbench
# runs --io-secs (1 s, as envbench, so that the final fsync of every file
# weighs the same in both; in the first measurement, with sysbench run for
# 5 s, envbench's 1 s runs read 0.88x as fast as sysbench). io.seq write and read against fio with one file of
# --io-size per job, 1 MiB blocks, fsync at the end of the write
# (end_fsync=1), no preallocation (fallocate=none, as IOzone's initial
# write), and invalidate=0 so that the read, like IOzone's, reads the files
# the write made (filename_format) from the page cache. io.dd against dd
# itself: bs=64K conv=fdatasync, bs=1M oflag=direct, and a read with bs=1M
# of a file just written.
section_io() {
  need_pkgs sysbench fio >/dev/null 2>&1 || true
  command -v sysbench >/dev/null && command -v fio >/dev/null || { echo "sysbench or fio missing; io section skipped" >&2; return 0; }
  io_scratch=$(mktemp -d "${io_dir:-$work}/envbench-fidelity-io.XXXXXX")
  local d=$io_scratch
  local bytes
  bytes=$(python3 -c "
import sys; s = sys.argv[1].upper(); m = {'K': 10, 'M': 20, 'G': 30}
print(int(s[:-1]) << m[s[-1]] if s[-1] in m else int(s))" "$io_size")
  local label
  label=$(python3 -c "
import sys; b = int(sys.argv[1])
for sh, u in ((30, 'GiB'), (20, 'MiB'), (10, 'KiB')):
    if b >= 1 << sh and b % (1 << sh) == 0: print(f'{b >> sh}{u}'); break
else: print(f'{b}B')" "$bytes")
  # Each row runs only the case it compares (`--only 'io.dd[op=...]'`),
  # and both sides measure alike: a warm-up, then the median of three
  # (envbench's --reps 3..3 with the standard suite's warm-up; the
  # reference run four times, the first dropped). The order alternates by
  # round (envbench first in even rounds, the reference first in odd ones)
  # so that what a write leaves behind (ext4 discards freed blocks, the
  # page cache writes back) falls on both sides alike. At three rounds of
  # one envbench run against one reference run, these rows moved 20-40 %
  # from one run of the script to the next; the io section therefore runs
  # at least 8 rounds.
  local iorounds=$((rounds < 8 && pass == 1 ? 8 : rounds))
  e_io() { "$envbench" run --no-history --suite standard --quiet --force --dir "io=$d" --file-size "$io_size" --io-total "$io_size" --reps 3..3 --rounds 1 "$@" -o "$work/e.json" >/dev/null; }
  med() { python3 -c "import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))" "$@"; }
  # warm3 CMD...: runs CMD (which prints one figure) four times and prints
  # the median of the last three
  warm3() {
    local k v=()
    for ((k = 0; k < 4; k++)); do v+=("$("$@")"); done
    med "${v[@]:1}"
  }
  local i

  # io.random against sysbench fileio rndrw: the files prepared once, then
  # 1 s runs, as envbench's case does
  local sb=(--file-num=128 --file-total-size="$bytes" --file-block-size=16384)
  local er=() rr=() ew=() rw=()
  local key_r="io.random[block=16KiB,dir=io,duration_ms=1000,total_size=$label]"
  e_random() {
    e_io --only io.random
    er+=("$(envbench_median "$key_r" reads_per_sec)")
    ew+=("$(envbench_median "$key_r" written_throughput)")
  }
  sb_run() { (cd "$d/sb" && sysbench fileio "${sb[@]}" --file-test-mode=rndrw --time="$io_secs" run); }
  r_random() {
    mkdir "$d/sb"
    (cd "$d/sb" && sysbench fileio "${sb[@]}" prepare >/dev/null)
    local k reads=() writes=() out
    for ((k = 0; k < 4; k++)); do
      out=$(sb_run)
      reads+=("$(awk '/reads\/s:/ { print $2 }' <<<"$out")")
      writes+=("$(awk '/written, MiB\/s:/ { print $3 }' <<<"$out")")
    done
    rm -rf "$d/sb"
    rr+=("$(med "${reads[@]:1}")")
    rw+=("$(med "${writes[@]:1}")")
  }
  if still_open "io.random"; then
    for ((i = 0; i < iorounds; i++)); do ordered e_random r_random; done
  fi
  summarize "io.random reads_per_sec" ops/s "sysbench fileio rndrw" "${er[*]}" "${rr[*]}"
  summarize "io.random written_throughput" MiB/s "sysbench fileio rndrw" "${ew[*]}" "${rw[*]}"

  # io.seq against fio, 1 and 2 threads
  fio_bw() { python3 -c "import json,sys; j = json.loads(sys.stdin.read())['jobs'][int(sys.argv[1])]; print(j[sys.argv[2]]['bw_bytes'] / 1e6)" "$@"; }
  # two invocations: with the read job in the same one, fio lays the files
  # out for it before the write job starts, and the "write" is then a
  # rewrite of allocated blocks (2.4-2.8 GB/s here, against 1.4-1.6 GB/s
  # for a write to a new file, as dd conv=fsync)
  # With two or more jobs, each runs on a CPU of its own, the first usable
  # ones, as envbench pins its io.seq threads (`thread_cpus` in its
  # details): unpinned, fio's two jobs wrote and read 0.90-0.92 as fast as
  # envbench's pinned threads on the Xeon VM (see docs/log/fidelity.md).
  fio_pin=()
  fio_pins() {
    local cpus
    cpus=$(python3 -c "
import os, sys; c = sorted(os.sched_getaffinity(0)); t = int(sys.argv[1])
print(','.join(map(str, c[:t])) if 1 < t <= len(c) else '')" "$1")
    fio_pin=()
    [ -z "$cpus" ] || fio_pin=(--cpus_allowed="$cpus" --cpus_allowed_policy=split)
  }
  # Every fio job's buffer is page-aligned (--iomem_align=4096), as
  # envbench's and IOzone's are: fio's default buffer comes from malloc,
  # 16 bytes past a page, and on a Zen 5 VM a cached read into a buffer so
  # placed ran about 15 % slower (a C reader: 24.7-25.7 GB/s at offset 16,
  # 27.7-30.5 at 0; fio by its own latencies 22.9-26.2 GB/s, aligned
  # 27.4-29.0).
  fio_write() {
    mkdir "$d/fio"
    fio "${fio_pin[@]}" --directory="$d/fio" --filename_format='seq.$jobnum' --name=seq --rw=write --bs=1M --size="$bytes" --numjobs="$t" \
      --iomem_align=4096 --end_fsync=1 --fallocate=none --group_reporting --output-format=json | fio_bw 0 write
    rm -rf "$d/fio"
  }
  # the read: a write and a read job in one invocation, as IOzone reads
  # right after writing (a read in an invocation of its own ran at 5.8-7.5
  # GB/s from the page cache against dd's 15-17 GB/s: fio's start-up
  # weighs on a 20 ms job). fio counts a job's time in whole milliseconds,
  # rounded up (backend.c, update_runtime): a cached read of 256 MiB takes
  # 9-10 ms on a Zen 5, so the read job reads its file --loops times, at
  # least 2 GiB in all, where a millisecond weighs under 1.5 %.
  local read_loops=$(((2147483648 + bytes - 1) / bytes))
  fio_read() {
    mkdir "$d/fio"
    fio "${fio_pin[@]}" --directory="$d/fio" --filename_format='seq.$jobnum' --name=seq --rw=write --bs=1M --size="$bytes" --numjobs="$t" \
      --iomem_align=4096 --end_fsync=1 --fallocate=none --group_reporting --output-format=json \
      --name=rd --stonewall --rw=read --bs=1M --size="$bytes" --numjobs="$t" --invalidate=0 \
      --iomem_align=4096 --loops="$read_loops" --group_reporting --unlink=1 | fio_bw 1 read
    rm -rf "$d/fio"
  }
  local t esw=() rsw=() esr=() rsr=()
  # one envbench run gives both rows; fio's write and read are run only
  # while their row is open
  local seq_w seq_r
  e_seq() {
    e_io --only io.seq --threads "$t"
    local key="io.seq[dir=io,file_size=$label,record=1MiB,threads=$t]"
    [ "$seq_w" = 0 ] || esw+=("$(envbench_median "$key" write)")
    [ "$seq_r" = 0 ] || esr+=("$(envbench_median "$key" read)")
  }
  r_seq() {
    [ "$seq_w" = 0 ] || rsw+=("$(warm3 fio_write)")
    [ "$seq_r" = 0 ] || rsr+=("$(warm3 fio_read)")
  }
  for t in 1 2; do
    esw=() rsw=() esr=() rsr=()
    seq_w=0 seq_r=0
    still_open "io.seq[threads=$t] write" && seq_w=1
    still_open "io.seq[threads=$t] read" && seq_r=1
    [ $((seq_w + seq_r)) -gt 0 ] || continue
    fio_pins "$t"
    local pinned=""
    [ ${#fio_pin[@]} = 0 ] || pinned=", each job on its own CPU"
    for ((i = 0; i < iorounds; i++)); do ordered e_seq r_seq; done
    summarize "io.seq[threads=$t] write" MB/s "fio write end_fsync=1$pinned" "${esw[*]}" "${rsw[*]}"
    summarize "io.seq[threads=$t] read" MB/s "fio read (cached, page-aligned buffer, $read_loops loops)$pinned" "${esr[*]}" "${rsr[*]}"
  done

  # io.dd against dd; dd prints bytes ... copied, SECONDS s, RATE. The
  # O_DIRECT write is set against three writers, all judged at the same
  # request size (below). What each does to its buffer between writes
  # differs, and on this Xeon VM's virtual disk, which reads the buffer
  # from another CPU, every cache line rewritten costs:
  # - envbench stamps 8 bytes at the start of each 512-byte sector: one
  #   line a sector;
  # - fio's scramble_buffers (on by default; io_u.c,
  #   small_content_scramble, fio 3.x) writes the offset into one of each
  #   sector's eight lines (drawn once a write) and the time into the end
  #   of its first: two lines a sector, in seven writes of eight. Over 24 alternated rounds fio without
  #   it wrote 1.161 [1.133..1.224] times as fast as with it, and envbench
  #   1.056 [1.008..1.105] times fio with it, about what the lines
  #   rewritten predict (1.07). fio's row is information, without a band;
  # - dd fills its whole buffer from /dev/zero before every block: a
  #   writer that read /dev/zero into its 1 MiB buffer before each direct
  #   write ran 1.07-1.37x slower (median of 8 about 1.18) than the same
  #   writer without, although /dev/zero alone reads at 44 GB/s, so
  #   envbench is expected above dd by what the refill costs the CPU at
  #   hand (1.19-1.27 on the Xeon VM, 1.08-1.16 on a Zen 5 VM, where the
  #   2-requests row sat at its band's edge): information, without a band;
  # - the C writer below does what envbench does and nothing more: it is
  #   the reference.
  # The request size: a 1 MiB write from 256 base pages reaches the device
  # as one request, probably only where enough of those pages happen to
  # lie next to each other in memory (this VM's disk takes at most 254 segments a
  # request; /sys/block/*/queue/max_segments); otherwise the kernel splits
  # it in two, and the write runs 8-16 % slower (about 12 % in most batches). Which happens is
  # drawn anew with each process's buffer (from 25 to 83 % split, by tool
  # and by hour), so the figures of either side are two populations. Each
  # process's requests a MiB are read from the device's counter of
  # completed writes (/sys/dev/block/MAJ:MIN/stat) around it, and a row
  # sets envbench's figure of a round against the median of the
  # reference's runs of that round with the same requests a MiB (each
  # reference runs five times a round, the first dropped); a round with no
  # such run adds nothing to the row. Where the directory has no block
  # device (tmpfs, an overlay), the rows are not split.
  # Since 2026-11-30 envbench's buffer asks for a huge page (a mapping
  # aligned to 2 MiB, madvise(MADV_HUGEPAGE)) where THP is not `never`:
  # one run of memory is one segment, and each write one request. On the
  # Zen 5 VM a C writer so made wrote one request a MiB in 30 runs of 30,
  # at 3 600 MB/s (cv 4 %), against 3 060 (17 runs) and 2 490 MB/s (13)
  # from base pages (cv 11 %). The rows are still split by request size,
  # for hosts where the buffer is of base pages.
  # The C writer: what envbench's write_direct does, and nothing more. A new
  # file (O_CREAT|O_EXCL|O_DIRECT), a 1 MiB buffer of random bytes on a
  # huge page as envbench's (4 KiB-aligned base pages where THP is `never`
  # or absent), and before each write 8 bytes at the start of each
  # 512-byte sector made new; timed from the open file's first write to
  # its close.
  cat > "$work/odirect.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: direct FILE BYTES\n"); return 2; }
  long long size = atoll(argv[2]), block = 1 << 20, done = 0;
  unsigned char *buf = NULL;
  const char *huge_env = getenv("ODIRECT_HUGE");
  if (huge_env && *huge_env) {
    size_t huge = 2 << 20;
    unsigned char *m = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) {
      buf = (unsigned char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
      if (madvise(buf, huge, MADV_HUGEPAGE)) buf = NULL;  /* base pages, as envbench then */
    }
  }
  if (!buf) {
    int rc = posix_memalign((void **)&buf, 4096, block);
    if (rc) { fprintf(stderr, "posix_memalign: %s\n", strerror(rc)); return 1; }
  }
  uint64_t x = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid(), serial = 0;
  for (long i = 0; i < block; i += 8) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; memcpy(buf + i, &x, 8); }
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL | O_DIRECT, 0644);
  if (fd < 0) { perror(argv[1]); return 1; }
  double t0 = now();
  while (done < size) {
    uint64_t base = x ^ (++serial << 24);
    for (long i = 0; i < block / 512; i++) { uint64_t v = base ^ (uint64_t)i; memcpy(buf + i * 512, &v, 8); }
    long long n = size - done < block ? size - done : block;
    ssize_t w = write(fd, buf, n);
    if (w != n) {
      if (w < 0) perror("write"); else fprintf(stderr, "write: %zd of %lld bytes\n", w, n);
      unlink(argv[1]);
      return 1;
    }
    done += n;
  }
  if (close(fd)) { perror("close"); unlink(argv[1]); return 1; }
  double t1 = now();
  unlink(argv[1]);
  printf("%.1f\n", done / (t1 - t0) / 1e6);
  return 0;
}
C
  gcc -O2 -o "$work/odirect" "$work/odirect.c"
  dd_rate() { awk '/copied/ { print $1 / $(NF-3) / 1e6 }'; }
  local ef=() rf=() ew2=() rw2=()
  local blocks64=$((bytes / 65536)) blocks1m=$((bytes / 1048576))
  local key_dd="io.dd[block=%s,dir=io,file_size=$label,op=%s]"
  # The counter of the disk that splits: a device-mapper volume (LVM,
  # dm-crypt) counts its writes before the disk below splits them, so its
  # one disk is read instead (a volume over several disks: none).
  local devstat="" majmin under
  majmin=$(stat -c '%Hd:%Ld' "$d" 2>/dev/null || true)
  [ -z "$majmin" ] || [ ! -r "/sys/dev/block/$majmin/stat" ] || devstat=/sys/dev/block/$majmin/stat
  if [ -n "$devstat" ] && [ -n "$(ls -A "/sys/dev/block/$majmin/slaves" 2>/dev/null)" ]; then
    under=$(ls "/sys/dev/block/$majmin/slaves")
    devstat=""
    [ "$(wc -w <<<"$under")" != 1 ] || [ ! -r "/sys/class/block/$under/stat" ] || devstat=/sys/class/block/$under/stat
  fi
  [ -n "$devstat" ] || [ "$pass" -gt 1 ] ||
    echo "io: no single block device under $d; the O_DIRECT rows are not split by request size" >&2
  dev_writes() { if [ -n "$devstat" ]; then awk '{ print $5 }' "$devstat"; else echo 0; fi; }
  # per_mib BEFORE AFTER MIBS: the device's writes a MiB, rounded ("any"
  # without a device)
  per_mib() {
    if [ -z "$devstat" ] || [ "$3" -le 0 ]; then echo any; else
      awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { k = int((b - a) / n + 0.5); print (k < 1 ? 1 : k) }'
    fi
  }
  dd_sync() { dd if=/dev/zero of="$d/ddfile" bs=64K count="$blocks64" conv=fdatasync 2>&1 | dd_rate; rm -f "$d/ddfile"; }
  dd_direct() { dd if=/dev/zero of="$d/ddfile" bs=1M count="$blocks1m" oflag=direct 2>&1 | dd_rate; rm -f "$d/ddfile"; }
  # huge pages as envbench asks for them: where THP is `always` or
  # `madvise` (envbench: any mode but `never`; the kernel knows no other)
  local c_huge=""
  grep -q '\[\(always\|madvise\)\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null && c_huge=1
  c_direct() { ODIRECT_HUGE=$c_huge "$work/odirect" "$d/cfile" "$bytes"; }
  fio_direct() {
    mkdir "$d/fio"
    fio --directory="$d/fio" --name=direct --rw=write --bs=1M --size="$bytes" --direct=1 --ioengine=psync \
      --fallocate=none --output-format=json | fio_bw 0 write
    rm -rf "$d/fio"
  }
  # tagged CMD...: runs CMD (which prints one figure) five times and prints
  # each figure but the first with its writes a MiB
  tagged() {
    local k w0 v
    for ((k = 0; k < 5; k++)); do
      w0=$(dev_writes)
      v=$("$@")
      [ "$k" = 0 ] || echo "$v $(per_mib "$w0" "$(dev_writes)" "$blocks1m")"
    done
  }
  dd_warm() { dd if="$d/ddfile" of=/dev/null bs=1M 2>&1 | dd_rate; }
  e_sync() {
    e_io --only 'io.dd[op=write_fdatasync]'
    # shellcheck disable=SC2059
    ef+=("$(envbench_median "$(printf "$key_dd" 64KiB write_fdatasync)" throughput)")
  }
  r_sync() { rf+=("$(warm3 dd_sync)"); }
  local e_direct_v="" e_direct_k="" r_direct_dd="" r_direct_fio="" r_direct_c=""
  e_direct() {
    local w0
    w0=$(dev_writes)
    e_io --only 'io.dd[op=write_direct]'
    # shellcheck disable=SC2059
    e_direct_v=$(envbench_median "$(printf "$key_dd" 1MiB write_direct)" throughput)
    # the file was written once a warm-up and once a repetition
    local writes
    writes=$(python3 -c "
import json, sys
c = [c for c in json.load(open(sys.argv[1]))['cases'] if c['key'] == sys.argv[2]][0]
print(c['warmup_reps'] + len(c['metrics'][0]['samples']))" "$work/e.json" "$(printf "$key_dd" 1MiB write_direct)")
    e_direct_k=$(per_mib "$w0" "$(dev_writes)" $((writes * blocks1m)))
  }
  # the references' rows share envbench's figures: each reference runs
  # while its row is open (fio's, information, on the first pass only)
  local direct_dd=0 direct_fio=0 direct_c=0
  still_open "io.dd[op=write_direct] throughput vs dd" && direct_dd=1
  [ "$pass" -gt 1 ] || direct_fio=1
  still_open "io.dd[op=write_direct] throughput vs C writer" && direct_c=1
  r_direct() {
    r_direct_dd="" r_direct_fio="" r_direct_c=""
    [ $direct_dd = 0 ] || r_direct_dd=$(tagged dd_direct)
    [ $direct_fio = 0 ] || r_direct_fio=$(tagged fio_direct)
    [ $direct_c = 0 ] || r_direct_c=$(tagged c_direct)
  }
  # pair_direct: files this round's envbench figure, against the median of
  # the reference's runs with the same writes a MiB, under that size
  local pair_only=""  # while set, the sizes pair_direct files
  pair_direct() {
    local ref runs v
    [ -z "$pair_only" ] || [[ " $pair_only " == *" $e_direct_k "* ]] || return 0
    for ref in dd fio c; do
      case $ref in dd) runs=$r_direct_dd ;; fio) runs=$r_direct_fio ;; c) runs=$r_direct_c ;; esac
      [ -n "$runs" ] || continue
      v=$(awk -v k="$e_direct_k" '$2 == k { print $1 }' <<<"$runs" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }')
      [ -z "$v" ] || echo "$e_direct_v $v" >>"$work/direct.$ref.$e_direct_k"
    done
  }
  e_warm() {
    e_io --only 'io.dd[op=read_warm]'
    # shellcheck disable=SC2059
    ew2+=("$(envbench_median "$(printf "$key_dd" 1MiB read_warm)" throughput)")
  }
  r_warm() {
    dd if=/dev/zero of="$d/ddfile" bs=1M count="$blocks1m" conv=fdatasync 2>/dev/null
    rw2+=("$(warm3 dd_warm)")
    rm -f "$d/ddfile"
  }
  local do_sync=0 do_direct=0 do_warm=0
  still_open "io.dd[op=write_fdatasync]" && do_sync=1
  [ $((direct_dd + direct_fio + direct_c)) = 0 ] || do_direct=1
  still_open "io.dd[op=read_warm]" && do_warm=1
  local drawn=""  # the requests a MiB envbench's runs drew this pass
  for ((i = 0; i < iorounds; i++)); do
    [ $do_sync = 0 ] || ordered e_sync r_sync
    if [ $do_direct = 1 ]; then ordered e_direct r_direct; pair_direct; drawn+=" $e_direct_k"; fi
    [ $do_warm = 0 ] || ordered e_warm r_warm
  done
  # A round of a C writer's row forms only when envbench's run and one of
  # the writer's drew the same requests a MiB: on the Zen 5 VM one request
  # formed in 1 round of 8 on a first pass and in 7 of 20 on a later one,
  # and a pass asked for one more round could form none. So the row's
  # rounds are drawn further, the C writer alone, until each size wanted
  # has this pass's rounds, at most max(rounds, 6) draws more. Wanted: on
  # a first pass each size envbench drew twice or more; later, each size
  # whose row is still open (in one run envbench's draws are of one
  # population, so an open size can come again; the cap bounds the draws
  # where it does not). Only those sizes' rounds are filed meanwhile, so
  # that the draws add nothing to a settled row.
  if [ $direct_c = 1 ] && [ -n "$devstat" ]; then
    local want k draws=0 cap=$((iorounds > 6 ? iorounds : 6))
    if [ "$pass" -gt 1 ]; then
      want=$(cat "$work/verdicts/$FIDELITY_SECTION"/* 2>/dev/null | awk -F'\t' '
        $1 == "unclear" && $7 > 0 && index($2, "io.dd[op=write_direct] throughput vs C writer") == 1 &&
          match($2, /, [0-9]+ requests? a MiB both/) { split(substr($2, RSTART + 2), a, " "); print a[1] }' || true)
      want=$(tr ' ' '\n' <<<"$want" | { grep -x '[0-9][0-9]*' || true; } | sort -un | xargs)
    else
      want=$(tr ' ' '\n' <<<"$drawn" | { grep -x '[0-9][0-9]*' || true; } | sort | uniq -d | sort -un | xargs)
    fi
    direct_dd=0 direct_fio=0
    short() {
      for k in $want; do
        [ "$(cat "$work/direct.c.$k" 2>/dev/null | wc -l)" -ge "$iorounds" ] || return 0
      done
      return 1
    }
    pair_only=$want
    while [ -n "$want" ] && [ "$draws" -lt "$cap" ] && short; do
      ordered e_direct r_direct; pair_direct
      draws=$((draws + 1)) i=$((i + 1))
    done
    pair_only=""
    [ "$draws" = 0 ] || echo "io: $draws more draws of the O_DIRECT write for the C writer's rows (sizes wanted: ${want:-none})" >&2
  fi
  summarize "io.dd[op=write_fdatasync] throughput" MB/s "dd bs=64K conv=fdatasync" "${ef[*]}" "${rf[*]}"
  local ref f k size rname
  for ref in c dd fio; do
    for f in "$work/direct.$ref".*; do
      [ -e "$f" ] || continue
      k=${f##*.} size=""
      [ "$k" = any ] || size=", $k request$([ "$k" = 1 ] || echo s) a MiB both"
      case $ref in
        c) rname="C writer, $([ -z "$c_huge" ] || echo "huge page and ")stamps as envbench$size" ;;
        dd) rname="dd bs=1M oflag=direct, refills its buffer (information)$size" ;;
        fio) rname="fio bs=1M direct=1 psync$size" ;;
      esac
      summarize "io.dd[op=write_direct] throughput" MB/s "$rname" "$(cut -d' ' -f1 "$f" | xargs)" "$(cut -d' ' -f2 "$f" | xargs)"
      rm -f "$f"
    done
  done
  summarize "io.dd[op=read_warm] throughput" MB/s "dd bs=1M (cached)" "${ew2[*]}" "${rw2[*]}"
  rm -rf "$d"
}

# ---------------------------------------------------------------- net
# Everything on 127.0.0.1, on ports the OS reports free. net.tcp_echo's
# median round trip on a kept connection against `sockperf ping-pong` (TCP,
# 64 bytes, back to back with --mps=max; sockperf prints half the round
# trip, so its median is doubled); net.tcp_stream against iperf3 with 1 and
# 2 streams (receiver's rate, first second omitted) and, for 2 connections,
# against two iperf3 clients at once (one iperf3 runs its streams on one
# thread, envbench has a sender thread per connection); net.http's client
# against wrk on the same nginx (started here with its own configuration:
# access log off, unlimited keep-alive requests) at 1 and 16 connections
# per page, wrk with as many threads as envbench's client (min(C, 2, the
# CPUs it may use): one, on the one CPU the clients are placed on); and
# envbench's built-in server (the hidden `__http_serve` helper) against
# that nginx under the same wrk load. Placed as net.http places its own
# server and client: each server (one nginx worker, one envbench worker)
# on the first CPU, the clients on the second (cpus=split) and, at one
# connection, on the first too (cpus=same). Unplaced, one connection's
# figure flips between the two (on a 2-vCPU VM, 43 000 and 3 000
# requests/s for 100 KiB pages). Targets: echo, stream and client within
# 15 % (ratio 0.85-1.15), server at least 0.8.
section_net() {
  need_pkgs sockperf iperf3 wrk nginx >/dev/null 2>&1 || true
  local tool
  for tool in sockperf iperf3 wrk nginx; do
    command -v "$tool" >/dev/null || { echo "$tool missing; net section skipped" >&2; return 0; }
  done
  # BBR paces the server's sends on what the client's reads let it see: on
  # the Xeon VM the 100 KiB client rows move with it (docs/log/fidelity.md)
  echo "net: TCP congestion control $(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null || echo unknown)"
  free_port() { python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
  wait_port() {
    local i
    for ((i = 0; i < 100; i++)); do
      (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
      sleep 0.05
    done
    echo "nothing listens on 127.0.0.1:$1" >&2; return 1
  }
  local secs=2 dir="$work/net"
  # nginx's workers run as nobody when started by root: the pages must be reachable
  chmod o+x "$work"
  mkdir -p "$dir/www" "$dir/tmp" && chmod -R o+rX "$dir"
  local page
  for page in 1 10 100; do
    python3 -c "import sys; sys.stdout.write(('x' * 63 + '\n') * (16 * int(sys.argv[1])))" "$page" > "$dir/www/${page}k.html"
  done

  local sp ip ip2 ng
  # sockperf's server on the first CPU; its client on the same CPU or the
  # next, as net.tcp_echo's cpus=same and cpus=split place theirs
  local cpu0 cpu1
  read -r cpu0 cpu1 _ < <(python3 -c "import os; print(*sorted(os.sched_getaffinity(0)))")
  sp=$(free_port); taskset -c "$cpu0" sockperf server --tcp -i 127.0.0.1 -p "$sp" >/dev/null 2>&1 & started+=($!)
  ip=$(free_port); iperf3 -s -B 127.0.0.1 -p "$ip" >/dev/null 2>&1 & started+=($!)
  # a second server: iperf3 (before 3.16) runs all its streams on one
  # thread, so two connections are measured as two client processes
  ip2=$(free_port); iperf3 -s -B 127.0.0.1 -p "$ip2" >/dev/null 2>&1 & started+=($!)
  ng=$(free_port)
  cat > "$dir/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $dir/tmp;
  proxy_temp_path $dir/tmp;
  fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp;
  scgi_temp_path $dir/tmp;
  types { text/html html; }
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 65;
  keepalive_requests 1000000000;
  server { listen 127.0.0.1:$ng; root $dir/www; }
}
NGINX
  taskset -c "$cpu0" nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" & started+=($!)
  taskset -c "$cpu0" "$envbench" __http_serve 3600 > "$dir/serve.url" & started+=($!)
  wait_port "$sp" && wait_port "$ip" && wait_port "$ip2" && wait_port "$ng" || return 0
  local i
  for ((i = 0; i < 100; i++)); do [ -s "$dir/serve.url" ] && break; sleep 0.05; done
  local own
  own=$(head -n 1 "$dir/serve.url")

  # echo: median round trip, us
  local place cpu
  for place in same split; do
    cpu=$cpu0; [ "$place" = split ] && cpu=${cpu1:-$cpu0}
    e_echo() { envbench_run "net.tcp_echo[connection=kept,cpus=$place]" && envbench_median "net.tcp_echo[connection=kept,cpus=$place,requests=2000]" round_trip_p50; }
    r_echo() {
      taskset -c "$cpu" sockperf ping-pong --tcp -i 127.0.0.1 -p "$sp" -m 64 -t "$secs" --mps=max 2>/dev/null |
        awk '/percentile 50.000/ { print $NF * 2 }'
    }
    alternate "net.tcp_echo[connection=kept,cpus=$place] round_trip_p50" us e_echo r_echo "sockperf ping-pong x2, client on CPU $cpu"
  done

  # stream: MB/s, 1 and 2 connections
  local n
  [ "$information" = 1 ] || [ "${pass:-1}" -gt 1 ] || echo "net.tcp_stream against iperf3 -P 2: information only, left out (--information runs it)" >&2
  for n in 1 2; do
    # iperf3 -P 2: information only (one iperf3 thread for both streams)
    [ "$n" = 1 ] || [ "$information" = 1 ] || continue
    e_stream() {
      "$envbench" run --no-history --suite standard --quiet --force --only net.tcp_stream --reps 5..5 -o "$work/e.json" >/dev/null &&
        envbench_median "net.tcp_stream[connections=$n]" throughput
    }
    r_stream() {
      iperf3 -c 127.0.0.1 -p "$ip" -t $((secs + 1)) -O 1 -P "$n" -J 2>/dev/null |
        python3 -c "import json, sys; print(json.load(sys.stdin)['end']['sum_received']['bits_per_second'] / 8e6)"
    }
    alternate "net.tcp_stream[connections=$n] throughput" MB/s e_stream r_stream "iperf3 -P $n"
  done
  # two connections as envbench makes them: two senders that run at once,
  # here two iperf3 clients (a process each) against two servers, summed
  r_stream2() {
    iperf3 -c 127.0.0.1 -p "$ip" -t $((secs + 1)) -O 1 -J > "$work/ip1.json" 2>/dev/null &
    local p1=$!
    iperf3 -c 127.0.0.1 -p "$ip2" -t $((secs + 1)) -O 1 -J > "$work/ip2.json" 2>/dev/null
    wait "$p1"
    python3 -c "
import json, sys
print(sum(json.load(open(f))['end']['sum_received']['bits_per_second'] for f in sys.argv[1:]) / 8e6)" "$work/ip1.json" "$work/ip2.json"
  }
  e_stream2() { local n=2; e_stream; }
  alternate "net.tcp_stream[connections=2] throughput" MB/s e_stream2 r_stream2 "2 iperf3 clients at once"

  # wrk_rate URL C CPUS [IDLE_FILE]: requests/s of wrk on CPUS (a comma
  # list) with as many threads as envbench's client takes there: min(C, 2,
  # the CPUs); with IDLE_FILE, the share of its run that the first of CPUS
  # was idle is added to that file
  cpu_ticks() { awk -v c="cpu$1" '$1 == c { print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
  wrk_rate() {
    local n t before after
    n=$(tr ',' '\n' <<<"$3" | wc -l)
    t=$(($2 < 2 ? $2 : 2)); t=$((t < n ? t : n))
    before=$(cpu_ticks "${3%%,*}")
    taskset -c "$3" wrk -t "$t" -c "$2" -d "${secs}s" "$1" | awk '/^Requests\/sec:/ { print $2 }'
    after=$(cpu_ticks "${3%%,*}")
    [ -z "${4:-}" ] || echo "$before $after" | awk '{ printf "%.3f\n", ($3 - $1) / ($4 - $2) }' >> "$4"
  }
  # at_limit IDLE_FILE: when the client's CPU was idle less than a tenth
  # of wrk's runs (the median of its draws so far), prints the reason the
  # row is information: wrk then measures its own ceiling, not the
  # server's. On the Zen 5 VM (2026-11-30, by hand, a second mid-load) wrk
  # -t1 -c16 on nginx's 100 KiB page left its CPU idle 0-5 % of the time,
  # at every other client row 11-94 %, envbench's client there 18-24 %;
  # over whole wrk runs, as here, the 100 KiB row read 5 and 8 % in two
  # whole runs of the script.
  # idle_stats IDLE_FILE: the median, count, least and most of its draws
  idle_stats() {
    sort -n "$1" | awk '{ v[NR] = $1 } END {
      print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), NR, v[1], v[NR] }'
  }
  at_limit() {
    [ -s "$1" ] || return 0
    idle_stats "$1" | awk '$1 < 0.10 { printf "its CPU idle %.0f %% of its runs, at its own limit", 100 * $1 }'
  }
  # idle_line IDLE_FILE: the idle shares under the 16-connection row, on
  # every row whether or not it is information, so the margin to the
  # tenth is seen (by hand, the 1 and 10 KiB rows left 11-23 %)
  idle_line() {
    [ -s "$1" ] || return 0
    idle_stats "$1" | awk '{ printf "    wrk -t1 -c16: its CPU idle %.0f %% of its runs (median of %d, %.0f-%.0f %%; information under 10 %%)\n", 100 * $1, $2, 100 * $3, 100 * $4 }'
  }
  # the clients' CPU for cpus=split; one CPU only: the first
  local ccpu=${cpu1:-$cpu0}
  for page in 1 10 100; do
    local url="http://127.0.0.1:$ng/${page}k.html"
    local e1=() e1s=() e16=() w1=() w1s=() w16=() o1=() o16=() n1=() n16=()
    # three groups, each measured while one of its rows is open: the
    # client on its own CPU (1 and 16 connections, one envbench run), the
    # client on nginx's CPU, and the two servers; a later pass for the
    # clients' rows does not run the servers again
    local g_split=0 g_same=0 g_server=0
    still_open "net.http client, nginx ${page}k, 1 conn, split" "net.http client, nginx ${page}k, 16 conns" && g_split=1
    still_open "net.http client, nginx ${page}k, 1 conn, same" && g_same=1
    still_open "net.http server under wrk -c1, ${page}k," "net.http server under wrk -c16, ${page}k," && g_server=1
    [ $((g_split + g_same + g_server)) -gt 0 ] || continue
    # envbench's client loads for as long as wrk does: net.http's
    # repetitions last 0.1 s (quick and standard), so $secs s is 10 x $secs
    # of them. With 5 (0.5 s) against wrk's 2 s, the 100 KiB page at 16
    # connections read 1.150 [0.985..1.367] on a Zen 5 VM: its rate moves
    # between 0.1 s windows (30 600-53 700 requests/s), and the median of
    # five fell anywhere in that; with 20, by hand, 0.93-1.01 of wrk's.
    local http_reps=$((secs * 10))
    e_split() {
      taskset -c "$ccpu" "$envbench" run --no-history --suite quick --quiet --force --only net.http --http-url "$url" --reps "$http_reps" -o "$work/e.json" >/dev/null
      e1+=("$(envbench_median "net.http[clients=1,url=$url]" requests_per_sec)")
      e16+=("$(envbench_median "net.http[clients=16,url=$url]" requests_per_sec)")
    }
    r_split() { w1+=("$(wrk_rate "$url" 1 "$ccpu")"); w16+=("$(wrk_rate "$url" 16 "$ccpu" "$dir/idle-${page}k-16")"); }
    e_same() {
      taskset -c "$cpu0" "$envbench" run --no-history --suite quick --quiet --force --only 'net.http[clients=1]' --http-url "$url" --reps "$http_reps" -o "$work/e.json" >/dev/null
      e1s+=("$(envbench_median "net.http[clients=1,url=$url]" requests_per_sec)")
    }
    r_same() { w1s+=("$(wrk_rate "$url" 1 "$cpu0")"); }
    o_http() { o1+=("$(wrk_rate "${own}${page}k.html" 1 "$ccpu")"); o16+=("$(wrk_rate "${own}${page}k.html" 16 "$ccpu")"); }
    n_http() { n1+=("$(wrk_rate "$url" 1 "$ccpu")"); n16+=("$(wrk_rate "$url" 16 "$ccpu")"); }
    for ((i = 0; i < rounds; i++)); do
      [ $g_split = 0 ] || ordered e_split r_split
      [ $g_same = 0 ] || ordered e_same r_same
      [ $g_server = 0 ] || ordered o_http n_http
    done
    summarize "net.http client, nginx ${page}k, 1 conn, split" req/s "wrk -t1 -c1" "${e1[*]}" "${w1[*]}"
    # Under BBR, the 100 KiB page on nginx's CPU runs at one of two rates
    # that flip within a connection (here 19-21 000 and 39-48 000
    # requests/s, from one repetition to the next; nginx's socket showed
    # BBR's start-up gain, 2.89, in the fast state and 1.25 in the slow
    # one): a run of either client is a mix whose share no round controls,
    # so the row is information there (docs/log/fidelity.md).
    local same_ref="wrk -t1 -c1"
    [ "$page" != 100 ] || [ "$(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null)" != bbr ] ||
      same_ref="wrk -t1 -c1 (BBR: two rates, information)"
    summarize "net.http client, nginx ${page}k, 1 conn, same" req/s "$same_ref" "${e1s[*]}" "${w1s[*]}"
    # wrk at its CPU's limit measures itself: the row is information
    # then, saying so (the reference's name stays, so the row keeps its
    # rounds whichever way a pass decides)
    FIDELITY_INFORMATION=$(at_limit "$dir/idle-${page}k-16") summarize "net.http client, nginx ${page}k, 16 conns, split" req/s "wrk -t1 -c16 (envbench's client threads)" "${e16[*]}" "${w16[*]}"
    idle_line "$dir/idle-${page}k-16"
    summarize "net.http server under wrk -c1, ${page}k, split" req/s "nginx (1 worker)" "${o1[*]}" "${n1[*]}"
    summarize "net.http server under wrk -c16, ${page}k, split" req/s "nginx (1 worker)" "${o16[*]}" "${n16[*]}"
  done
  stop_started
}

echo "fidelity: $rounds alternated rounds per case on $(nproc) CPU(s), $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), Linux $(uname -r); ratio = envbench / reference, [95 % interval] as envbench fidelity judges it (envbench __judge)" >&2
# still SECTION: "ROWS DONE LEAST": how many unclear rows of the section
# more rounds would settle, the most rounds a row of it has, and the
# fewest rounds such a row asks for
still() {
  cat "$work/verdicts/$1"/* 2>/dev/null | awk -F'\t' '
    $1 == "unclear" && $7 > 0 { rows++; if (least == 0 || $7 < least) least = $7 }
    { if ($6 > done) done = $6 }
    END { printf "%d %d %d\n", rows, done, least + 0 }'
}
first_rounds=$rounds
# the whole run's budget: --budget for each section
nsections=0
for s in ${sections//,/ }; do
  declare -F "section_$s" >/dev/null || { echo "unknown section $s" >&2; exit 2; }
  nsections=$((nsections + 1))
done
total=$((budget * nsections)) start_all=$SECONDS
# each section's passes so far, and its last pass's seconds and rounds (a
# later pass measures only the rows still open, so its rounds cost what
# the last pass's did, not the first's)
declare -A s_pass s_secs s_rounds s_stuck s_empty
for s in ${sections//,/ }; do
  export FIDELITY_SECTION=$s
  pass=1 rounds=$first_rounds start=$SECONDS
  echo "section $s: pass 1, $rounds rounds" >&2
  "section_$s"
  read -r _ done _ < <(still "$s")
  s_pass[$s]=1 s_secs[$s]=$((SECONDS - start)) s_rounds[$s]=$((done > 0 ? done : 1))
  echo "section $s: $((SECONDS - start)) s" >&2
done
# Then, pass by pass, the time left goes to the section whose unclear row
# the fewest rounds would settle, at what its rounds cost times the passes
# it has had: that many more rounds (at most 20) of the rows still open
# there. The passes count so that a section whose row keeps asking for a
# few more rounds does not take every pass: on the Zen 5 VM (2026-11-30)
# STREAM at two threads, on a host switching between 45 and 75 GB/s
# within rounds, took 9 passes of mem, and cpu.primes' row asking for
# about 30 rounds never had one.
while :; do
  left=$((total - (SECONDS - start_all)))
  best="" best_cost=0 best_add=0 best_per=0 unsettled=0
  for s in ${sections//,/ }; do
    [ -z "${s_stuck[$s]:-}" ] || continue
    read -r rows _ least < <(still "$s")
    [ "$rows" -gt 0 ] || continue
    unsettled=$((unsettled + rows))
    per=$(( (${s_secs[$s]} + ${s_rounds[$s]} - 1) / ${s_rounds[$s]} ))
    per=$(( per > 0 ? per : 1 ))
    [ "$per" -le "$left" ] || continue
    add=$(( least < 20 ? least : 20 ))
    add=$(( add * per <= left ? add : left / per ))
    cost=$((least * per * ${s_pass[$s]}))
    if [ -z "$best" ] || [ "$cost" -lt "$best_cost" ]; then
      best=$s best_cost=$cost best_add=$add best_per=$per
    fi
  done
  if [ -z "$best" ]; then
    [ "$unsettled" -eq 0 ] || echo "budget: $((SECONDS - start_all)) of $total s spent; $unsettled row(s) that more rounds would settle are left unclear" >&2
    break
  fi
  s=$best
  export FIDELITY_SECTION=$s
  pass=$((${s_pass[$s]} + 1)) rounds=$best_add start=$SECONDS
  s_pass[$s]=$pass
  echo "section $s: pass $pass, $best_add more rounds (about $best_per s each) for its unclear rows; $((SECONDS - start_all)) of $total s spent" >&2
  before=$(cat "$work/verdicts/$s"/* | md5sum)
  "section_$s"
  s_secs[$s]=$((SECONDS - start)) s_rounds[$s]=$best_add
  # a pass can measure nothing by chance (a row whose rounds form only
  # sometimes); two such passes in a row leave the section as it is
  if [ "$(cat "$work/verdicts/$s"/* | md5sum)" = "$before" ]; then
    s_empty[$s]=$((${s_empty[$s]:-0} + 1))
    if [ "${s_empty[$s]}" -ge 2 ]; then
      echo "section $s: two passes measured no unclear row; its rows stay as they are" >&2
      s_stuck[$s]=1
    fi
  else
    s_empty[$s]=0
  fi
done
echo "fidelity: $((SECONDS - start_all)) s in all" >&2
rounds=$first_rounds
# the last line: how the rows were judged, each by its latest pass
if compgen -G "$work/verdicts/*/*" >/dev/null; then
  # an unclear row asks for more rounds (the budget ran out) or for none
  # that would settle it (at a band's edge)
  cat "$work"/verdicts/*/* | awk -F'\t' '{ n[$1]++; t++; if ($1 == "unclear" && $7 == 0) edge++ } END {
    printf "fidelity: %d rows: %d within their band, %d outside, %d unclear at the budget, %d unclear at a band'"'"'s edge, %d without a band\n",
      t, n["within"], n["outside"], n["unclear"] - edge, edge + 0, n["no_band"] }'
fi
