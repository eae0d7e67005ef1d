#!/usr/bin/env bash
# envbench fidelity: runs envbench and a reference tool alternately (A B A B)
# on this machine with the same parameters and prints, per case, both
# figures and the ratio envbench/reference with its spread over rounds.
# These machines drift 10-65 % in absolute terms within half an hour, while
# alternated ratios hold within a few percent: read the ratio, not the figures.
#
# This is a benchmark, not a test; CI does not run it.
#   bench/fidelity.sh [--rounds N] [--sections syscall,...] [--no-install]
# Sections: syscall (more arrive with each benchmark family).
set -euo pipefail

rounds=5
sections="syscall"
install=1
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --sections) sections=$2; shift 2 ;;
    --no-install) install=0; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "fidelity.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/envbench-fidelity.XXXXXX")
trap 'rm -rf "$work"' EXIT
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
  "$envbench" run --suite quick --quiet --force --only "$1" -o "$work/e.json" >/dev/null
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

# alternate LABEL UNIT ENVBENCH_FN REFERENCE_FN REFERENCE_NAME
# Each FN prints one number; they run alternately for $rounds rounds.
alternate() {
  local label=$1 unit=$2 efn=$3 rfn=$4 rname=$5 e r
  local es=() rs=()
  for ((i = 0; i < rounds; i++)); do
    e=$($efn) || { echo "$label: envbench failed" >&2; return 0; }
    r=$($rfn) || { echo "$label: $rname failed" >&2; return 0; }
    es+=("$e"); rs+=("$r")
  done
  python3 - "$label" "$unit" "$rname" "${es[*]}" "${rs[*]}" <<'PY'
import statistics as st, sys
label, unit, rname = sys.argv[1:4]
e = [float(x) for x in sys.argv[4].split()]
r = [float(x) for x in sys.argv[5].split()]
ratios = [a / b for a, b in zip(e, r)]
print(f"{label:<34} envbench {st.median(e):>12.4g} {unit:<6} {rname:<22} {st.median(r):>12.4g} {unit:<6} "
      f"ratio {st.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}, {len(ratios)} rounds)")
PY
}

# ---------------------------------------------------------------- os.syscall
# Reference: perf bench syscall basic (getppid) where perf runs, else a C
# loop of raw getppid; and a C loop of UnixBench's syscall mix.
section_syscall() {
  need_pkgs linux-perf >/dev/null 2>&1 || true
  cat > "$work/syscall.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
  long n = atol(argv[2]);
  int fd = open("/dev/null", O_RDONLY);
  double t0 = now();
  if (strcmp(argv[1], "getppid") == 0) {
    for (long i = 0; i < n; i++) syscall(SYS_getppid);
  } else {
    for (long i = 0; i < n; i++) { close(dup(fd)); syscall(SYS_getpid); getuid(); umask(022); }
  }
  printf("%.4f\n", (now() - t0) * 1e9 / n);
  return 0;
}
C
  gcc -O2 -o "$work/syscall" "$work/syscall.c"
  local ref_name="perf bench syscall"
  if ! perf bench syscall basic -l 1000 >/dev/null 2>&1; then
    ref_name="C getppid loop"
    echo "perf bench syscall cannot run here; using a C getppid loop" >&2
  fi
  e_getppid() { envbench_run os.syscall && envbench_median "os.syscall[call=getppid]" latency; }
  r_getppid() {
    if [ "$ref_name" = "C getppid loop" ]; then "$work/syscall" getppid 2000000
    else perf bench syscall basic -l 2000000 2>/dev/null | awk '/usecs\/op/ { print $1 * 1000 }'; fi
  }
  e_mix() { envbench_run os.syscall && envbench_median "os.syscall[call=mix]" latency; }
  r_mix() { "$work/syscall" mix 500000; }
  alternate "os.syscall[call=getppid] latency" ns e_getppid r_getppid "$ref_name"
  alternate "os.syscall[call=mix] latency" ns e_mix r_mix "C UnixBench-mix loop"
}

echo "fidelity: $rounds alternated rounds per case on $(nproc) CPU(s); ratio = envbench / reference" >&2
for s in ${sections//,/ }; do
  if declare -F "section_$s" >/dev/null; then "section_$s"; else echo "unknown section $s" >&2; exit 2; fi
done
