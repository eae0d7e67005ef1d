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
# and prints, scored by envbench __score (src/cmd/score.rs):
#   - interleaved L against the host: the verdicts on the compute cases
#     (cpu.*, mem.*), each run alone and the runs together; a compute case
#     called faster or slower is a false verdict (the layers run the same
#     code on the same CPU);
#   - A/A inside L: false verdicts (any headline case called faster or
#     slower) and the median half-width of the headline cases' 95 %
#     intervals, of all and of the compute cases and the rest apart;
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

# scored NAME EXPECT --base A... --other B...: compares, then prints the
# false verdicts and the score of envbench __score (src/cmd/score.rs).
scored() {
  local name=$1 expect=$2; shift 2
  rm -f "$work/c.json"
  "$envbench" compare "$@" --json "$work/c.json" >/dev/null
  "$envbench" __score --expect "$expect" --name "$name" "$work/c.json" | grep -E 'FALSE$|^SCORE'
}

# summary LAYER: LAYER's interleaved runs against the host (compute cases
# the same), its A/A runs (every case the same; the score splits the
# half-widths into cpu and mem and the rest, which a layer intercepting
# system calls widens most), and the time of each interleaved run against
# its two separate runs.
summary() {
  local L=$1 i d hosts=() layer=()
  echo "$L interleaved with the host, compute cases (cpu, mem) expected the same:"
  for i in $(seq 1 "$runs"); do
    d=$work/$L-il-$i
    hosts+=("$d/result-host.json"); layer+=("$d/result-$L.json")
    scored "$L run $i" compute --base "$d/result-host.json" --other "$d/result-$L.json"
  done
  if [ "$runs" -gt 1 ]; then
    scored "$L $runs runs" compute --base "${hosts[@]}" --other "${layer[@]}"
  fi
  echo "A/A inside $L (one run, two $L environments):"
  for i in $(seq 1 "$runs"); do
    d=$work/$L-aa-$i
    scored "$L A/A run $i" aa --base "$d/result-$L-a.json" --other "$d/result-$L-b.json"
  done
  paste "$work/$L-host.secs" "$work/$L-alone.secs" "$work/$L-il.secs" |
    awk -v L="$L" '{ r = r sprintf(" %.3f", $3 / ($1 + $2)); s = s sprintf(" %s (%s + %s)", $3, $1, $2) }
      END { print "time: interleaved against separate host + " L ", s:" s "; ratios:" r }'
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
  summary "$L"
done
