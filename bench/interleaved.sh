#!/usr/bin/env bash
# envbench interleaved: runs through real layers entered once per run
# (`run --in host --in L=PREFIX`, each layer's resident launcher starting
# every round's worker inside it) against the separate runs they replace,
# on this machine, the quick suite. For each layer L (gvisor: `runsc do`,
# tests/layers/interleaved.sh; podman: runc and a Debian rootfs,
# tests/layers/interleaved-podman.sh), RUNS times, one after the other:
#   separate    the host alone, then L alone (gvisor.sh / container.sh), timed
#   interleaved the host and L in one run, timed
#   A/A         L against L in one run (two sandboxes or containers)
# and prints:
#   - interleaved L against the host: the verdicts on the compute cases
#     (cpu.*, mem.*), each run alone and the runs together; a compute case
#     called faster or slower is a false verdict (the layers run the same
#     code on the same CPU);
#   - A/A inside L: false verdicts (any headline case called faster or
#     slower) and the median 95 % half-width of the headline cases, of
#     all and of the compute cases and the rest apart;
#   - time: each interleaved run against the sum of the two separate runs
#     of the same round.
# This is a benchmark, not a test; CI does not run it. Nothing else may
# measure on the machine meanwhile.
#   bench/interleaved.sh [--runs N] [--layers gvisor,podman] [--keep DIR] [--cache DIR]
set -euo pipefail

runs=2
layers="gvisor,podman"
keep=""
cache=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --layers) layers=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "interleaved.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
. "$(dirname "$0")/common.sh"
workdir interleaved
layers_setup
args=(--suite quick --no-history --quiet --force)
export LAYER_TIMEOUT_S=${LAYER_TIMEOUT_S:-900}

# script LAYER SEPARATE|INTERLEAVED: the script of tests/layers for it.
script() {
  case "$1/$2" in
    gvisor/separate) echo gvisor.sh ;;
    gvisor/interleaved) echo interleaved.sh ;;
    podman/separate) echo container.sh ;;
    podman/interleaved) echo interleaved-podman.sh ;;
    *) echo "interleaved.sh: unknown layer $1" >&2; exit 2 ;;
  esac
}

# timed OUT CMD...: runs CMD, appends its wall seconds to OUT.
timed() {
  local out=$1; shift
  local t0; t0=$(date +%s.%N)
  "$@" >/dev/null
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }' >>"$out"
}

# in_layer SCRIPT OUTDIR [ENV=VALUE...]: a tests/layers script into OUTDIR.
in_layer() {
  local s=$1 o=$2; shift 2
  mkdir -p "$o"; chmod 0777 "$o"
  env "$@" bash "$repo/tests/layers/$s" "$envbench" "$o" "$cache" -- "${args[@]}"
}

# host OUT: the host alone, in a directory of its own.
host() {
  local dir; dir=$(mktemp -d "$work/io.XXXXXX")
  "$envbench" run "${args[@]}" --label host --dir "work=$dir" -o "$1"
  rm -rf "$dir"
}

IFS=, read -r -a wanted <<<"$layers"
for L in "${wanted[@]}"; do
  for i in $(seq 1 "$runs"); do
    echo "$L: round $i of $runs: the host alone, $L alone, both interleaved, $L A/A" >&2
    timed "$work/$L-host.secs" host "$work/$L-sep-host-$i.json"
    timed "$work/$L-alone.secs" in_layer "$(script "$L" separate)" "$work/$L-sep-$i"
    timed "$work/$L-il.secs" in_layer "$(script "$L" interleaved)" "$work/$L-il-$i"
    in_layer "$(script "$L" interleaved)" "$work/$L-aa-$i" IL_SIDES=aa
  done
  python3 - "$envbench" "$work" "$L" "$runs" <<'PY'
import json, os, statistics, subprocess, sys
envbench, work, L, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def compare(base, other):
    out = os.path.join(work, "c.json")
    if os.path.exists(out):
        os.remove(out)
    subprocess.run([envbench, "compare", "--base", *base, "--other", *other, "--json", out],
                   check=True, stdout=subprocess.DEVNULL)
    c = json.load(open(out))
    return [m for m in c["metrics"] if m["primary"]]

def verdicts(ms, families):
    picked = [m for m in ms if m["family"] in families]
    count = {}
    for m in picked:
        count[m["verdict"]] = count.get(m["verdict"], 0) + 1
    false = [(m["key"], m["verdict"], round(m["ratio"], 3)) for m in picked
             if m["verdict"] in ("faster", "slower")]
    return len(picked), count, false

def half_width(ms):
    return statistics.median(m["equivalence_bound"] for m in ms) * 100 if ms else float("nan")

def widths(ms):
    """The median half-width of all headline cases, then of the compute
    cases (cpu, mem) and of the rest apart: a layer that intercepts system
    calls widens the second group most (gVisor on the Xeon VM, 2026-11-29:
    cpu and mem ±9.5 %, the rest ±70 %)."""
    compute = [m for m in ms if m["family"] in ("cpu", "mem")]
    rest = [m for m in ms if m["family"] not in ("cpu", "mem")]
    return (f"median half-width ±{half_width(ms):.1f} % "
            f"(cpu and mem ±{half_width(compute):.1f} %, the rest ±{half_width(rest):.1f} %)")

il = [(os.path.join(work, f"{L}-il-{i}", "result-host.json"),
       os.path.join(work, f"{L}-il-{i}", f"result-{L}.json")) for i in range(1, runs + 1)]
print(f"{L} interleaved with the host, compute cases (cpu, mem):")
for i, (h, l) in enumerate(il, 1):
    n, count, false = verdicts(compare([h], [l]), ("cpu", "mem"))
    print(f"  run {i}: {n} cases {count}; false verdicts {len(false)} {false}")
if runs > 1:
    n, count, false = verdicts(compare([h for h, _ in il], [l for _, l in il]), ("cpu", "mem"))
    print(f"  {runs} runs together: {n} cases {count}; false verdicts {len(false)} {false}")
print(f"A/A inside {L} (one run, two {L} environments):")
for i in range(1, runs + 1):
    d = os.path.join(work, f"{L}-aa-{i}")
    ms = compare([os.path.join(d, f"result-{L}-a.json")], [os.path.join(d, f"result-{L}-b.json")])
    n, count, false = verdicts(ms, {m["family"] for m in ms})
    print(f"  run {i}: {n} cases {count}; false verdicts {len(false)} {false}; {widths(ms)}")
secs = lambda name: [float(x) for x in open(os.path.join(work, f"{L}-{name}.secs"))]
host, alone, inter = secs("host"), secs("alone"), secs("il")
ratios = [c / (a + b) for a, b, c in zip(host, alone, inter)]
print(f"time: interleaved {inter} s against separate host {host} + {L} {alone} s: "
      f"ratios {[round(r, 3) for r in ratios]}")
PY
done
