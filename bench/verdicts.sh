#!/usr/bin/env bash
# envbench verdicts: builds controlled pairs on this machine from the real
# CLI and scores compare's headline verdicts against what is known.
#   A/A   the same environment as "A" and "B", 3 + 3 runs alternated
#         (A B A B A B); also each A_i against B_i (1 + 1). Expected: no
#         headline metric faster or slower.
#   1cpu  "two" = plain runs, "one" = `taskset -c 0` runs, both with
#         --threads 1,2, 3 + 3 alternated and each pair 1 + 1. Expected:
#         "one" slower where the work is parallel (threads=2 of cpu.lu and
#         cpu.primes, os.multiprog, os.shell with 8 copies); no verdict on
#         single-threaded CPU, memory-latency and syscall cases.
#   strace "plain" against "traced" runs under `strace -f` (every system
#         call stops in the tracer), 3 + 3 alternated and each pair 1 + 1.
#         Expected: traced slower in every os case but os.multiprog and
#         fork_cow with touched memory (no known effect); no verdict on cpu.int,
#         cpu.float, cpu.primes and mem.latency (user-space work).
# Prints every judged headline verdict with the expected one, and per
# comparison a score line: effects found, false verdicts, and the
# precision of the headline ratios whose truth is "the same": the median
# half-width of their 95 % intervals, and the share of them shown within
# ±5 % (both ends of the interval within 0.95..1.05). This is a
# benchmark, not a test; CI does not run it. Nothing else may measure on
# the machine meanwhile. --keep DIR copies every result file into DIR.
#   bench/verdicts.sh [--trials N] [--suite quick|standard] [--pairs aa,1cpu,strace] [--only PATTERN] [--keep DIR]
set -euo pipefail

trials=1
suite=quick
pairs="aa,1cpu"
only=()
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --trials) trials=$2; shift 2 ;;
    --suite) suite=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --only) only=(--only "$2"); shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
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
echo "building envbench (release)" >&2
(cd "$repo" && cargo build --release --quiet)
envbench="$repo/target/release/envbench"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) usable CPUs" >&2

# run LABEL FILE [taskset prefix...]: one quick run into FILE.
run() {
  local label=$1 out=$2; shift 2
  "$@" "$envbench" run --suite "$suite" --no-history --quiet --force --threads 1,2 \
    --label "$label" "${only[@]}" -o "$out" >/dev/null
}

# score NAME EXPECT A.json... -- B.json...: compares and prints the verdicts.
score() {
  local name=$1 expect=$2; shift 2
  local a=() b=()
  while [ "$1" != "--" ]; do a+=("$1"); shift; done
  shift
  b=("$@")
  rm -f "$work/c.json"
  "$envbench" compare --base "${a[@]}" --other "${b[@]}" --json "$work/c.json" >/dev/null
  python3 - "$work/c.json" "$name" "$expect" <<'PY'
import json, math, re, statistics, sys
c = json.load(open(sys.argv[1])); name, expect = sys.argv[2], sys.argv[3]
def expected(key):
    if expect == "aa":
        return "same"
    if expect == "strace":
        # os.multiprog's processes compute for 0.2 s on a handful of system
        # calls, and fork_cow with touched memory is dominated by copying
        # pages: no known effect of tracing on either
        if key.startswith("os.multiprog") or "parent_memory=touched" in key:
            return None
        if key.startswith("os."):
            return "slower"
        user = key in ("cpu.int", "cpu.float") or key.startswith("cpu.primes") \
            or key.startswith("mem.latency")
        return "same" if user else None
    parallel = re.match(r"(cpu\.lu|cpu\.primes)\[.*threads=2", key) or key.startswith("os.multiprog") \
        or key == "os.shell[copies=8]"
    single = re.match(r"(cpu\.lu|cpu\.primes)\[.*threads=1", key) or key in ("cpu.int", "cpu.float") \
        or key.startswith("mem.latency") or key.startswith("os.syscall")
    return "slower" if parallel else "same" if single else None
hits = misses = false_calls = same_total = 0
half_widths = []
within5 = 0
for m in c["metrics"]:
    if not m["primary"]:
        continue
    want = expected(m["key"])
    v = m["verdict"]
    if want is None:
        mark = "."
    elif want == "same":
        same_total += 1
        lo_, hi_ = m["ratio_ci"]
        half_widths.append(math.expm1((math.log(hi_) - math.log(lo_)) / 2) * 100)
        within5 += 0.95 <= lo_ and hi_ <= 1.05
        bad = v in ("faster", "slower")
        false_calls += bad
        mark = "FALSE" if bad else "ok"
    else:
        good = v == want
        hits += good; misses += not good
        mark = "ok" if good else "MISSED"
    lo, hi = m["ratio_ci"]
    print(f"  {name:14} {m['key']:48} ratio {m['ratio']:9.4g} [{lo:.4g}, {hi:.4g}] {v:8} expected {want or '-':6} {mark}")
effects = hits + misses
precision = ""
if half_widths:
    precision = (f"; same-truth intervals: median half-width ±{statistics.median(half_widths):.1f} %,"
                 f" within ±5 % {within5}/{same_total}")
print(f"SCORE {name}: effects found {hits}/{effects}; false verdicts {false_calls}/{same_total}"
      + (f" ({100.0 * false_calls / same_total:.1f} %)" if same_total else "") + precision)
PY
}

for t in $(seq 1 "$trials"); do
  if [[ $pairs == *aa* ]]; then
    for i in 1 2 3; do
      echo "trial $t: A/A run $i of 3 per side" >&2
      run A "$work/aa-A$i.json"
      run B "$work/aa-B$i.json"
    done
    score "A/A 3+3" aa "$work"/aa-A{1,2,3}.json -- "$work"/aa-B{1,2,3}.json
    for i in 1 2 3; do
      score "A/A 1+1 #$i" aa "$work/aa-A$i.json" -- "$work/aa-B$i.json"
    done
  fi
  if [[ $pairs == *1cpu* ]]; then
    for i in 1 2 3; do
      echo "trial $t: one CPU against two, run $i of 3 per side" >&2
      run two "$work/cpu-two$i.json"
      run one "$work/cpu-one$i.json" taskset -c 0
    done
    score "1cpu 3+3" 1cpu "$work"/cpu-two{1,2,3}.json -- "$work"/cpu-one{1,2,3}.json
    for i in 1 2 3; do
      score "1cpu 1+1 #$i" 1cpu "$work/cpu-two$i.json" -- "$work/cpu-one$i.json"
    done
  fi
  if [[ $pairs == *strace* ]]; then
    for i in 1 2 3; do
      echo "trial $t: plain against strace, run $i of 3 per side" >&2
      run plain "$work/st-plain$i.json"
      run traced "$work/st-traced$i.json" strace -f -qq -o /dev/null
    done
    score "strace 3+3" strace "$work"/st-plain{1,2,3}.json -- "$work"/st-traced{1,2,3}.json
    for i in 1 2 3; do
      score "strace 1+1 #$i" strace "$work/st-plain$i.json" -- "$work/st-traced$i.json"
    done
  fi
done
