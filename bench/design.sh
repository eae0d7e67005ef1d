#!/usr/bin/env bash
# envbench design: which of two builds gives the narrower A/A intervals on
# this machine, measured in the same hour. The host's own noise moves the
# A/A half-width of one pair by a third from one hour to the next, so two
# designs are judged by runs interleaved in time (before, after, before,
# after, ...), each build's first six runs split every way into 3 + 3
# (the 10 distinct splits; more runs feed only the components) and
# compared with one build's compare, so only how the runs were measured
# differs.
#   bench/design.sh --before BIN --after BIN [--runs N] [--suite quick|standard] [--keep DIR]
#   bench/design.sh --after BIN --from DIR   (scores the runs a --keep DIR kept)
# Prints per build: the run times, the median over splits of the median
# 95 % half-width of the headline ratios and of the share within ±5 %
# (envbench __score --splits), and envbench __spread's variance components. A benchmark, not a test;
# nothing else may measure on the machine meanwhile.
set -euo pipefail

before="" after="" runs=6 suite=quick keep="" from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --before) before=$2; shift 2 ;;
    --after) after=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --suite) suite=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --from) from=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "design.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -n "$from" ] && [ -n "$keep" ]; then
  echo "design.sh: --from scores kept runs; --keep has nothing new to keep" >&2
  exit 2
fi
if [ -n "$from" ]; then
  before=$after
  runs=$(ls "$from"/before-*.json 2>/dev/null | wc -l)
  if [ "$(ls "$from"/after-*.json 2>/dev/null | wc -l)" != "$runs" ]; then
    echo "design.sh: --from $from: give as many after-N.json as before-N.json runs" >&2
    exit 2
  fi
fi
if [ ! -x "$before" ] || [ ! -x "$after" ]; then
  echo "design.sh: give two envbench binaries with --before and --after" >&2
  exit 2
fi
if [ "$runs" -lt 6 ]; then
  echo "design.sh: --runs must be at least 6 (3 + 3 per split)" >&2
  exit 2
fi
. "$(dirname "$0")/common.sh"
workdir design
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) usable CPUs" >&2

if [ -n "$from" ]; then
  cp "$from"/before-*.json "$from"/after-*.json "$work"/
fi
for i in $(seq 1 "$runs"); do
  [ -n "$from" ] && break
  for side in before after; do
    bin=$before
    [ "$side" = after ] && bin=$after
    echo "run $i of $runs: $side" >&2
    "$bin" run --suite "$suite" --no-history --quiet --force --threads 1,2 \
      --label "$side" -o "$work/$side-$i.json" >/dev/null
  done
done

# per build: its runs' split scores (envbench __score --splits,
# src/cmd/score.rs, by the after build's compare), and the components
for side in before after; do
  files=()
  for i in $(seq 1 "$runs"); do files+=("$work/$side-$i.json"); done
  "$after" __score --expect aa --splits --name "$side" "${files[@]}"
  "$after" __spread "${files[@]}" || true
done
