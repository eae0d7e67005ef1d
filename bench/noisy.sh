#!/usr/bin/env bash
# A noisy host to test on (issue 83): runs COMMAND while one busy loop on
# CPU N switches on and off at random, each state lasting 0.5 to 3 s (a
# seeded sequence, the same for the same --seed), as another tenant on the
# sibling thread or a build beside the run does; --ms 20-200 makes a host
# that changes faster than a case round. The loop is stopped and
# continued (SIGSTOP/SIGCONT), killed by its PID when COMMAND ends, on
# every path, Ctrl-C included. Prints, on stderr, the share of the time
# it was on. Exits with COMMAND's status.
#   bench/noisy.sh [--cpu N] [--seed S] [--on-share F] [--ms MIN-MAX] -- COMMAND [ARGS...]
#     --cpu       the CPU the loop is pinned to (default: 1)
#     --seed      the sequence's seed (default: 1)
#     --on-share  the chance a new state is "on" (default: 0.5)
#     --ms        how long a state lasts, milliseconds (default: 500-3000)
set -euo pipefail
cpu=1 seed=1 share=0.5 least=500 most=3000
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) cpu=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --on-share) share=$2; shift 2 ;;
    --ms)
      case "$2" in
        *-*) least=${2%-*} most=${2#*-} ;;
        *) echo "noisy.sh: --ms takes MIN-MAX in milliseconds, as 20-200" >&2; exit 2 ;;
      esac
      [[ "$least$most" =~ ^[0-9]+$ ]] && [ "$least" -ge 1 ] && [ "$most" -ge "$least" ] ||
        { echo "noisy.sh: --ms $2: two whole milliseconds, MIN at least 1 and at most MAX" >&2; exit 2; }
      shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "noisy.sh: unknown argument $1 (a command follows --)" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "noisy.sh: no command (bench/noisy.sh -- COMMAND ...)" >&2; exit 2; }

taskset -c "$cpu" sh -c 'while :; do :; done' &
loop=$!
kill -STOP "$loop"
switcher=""
stop() {
  if [ -n "$switcher" ]; then kill "$switcher" 2>/dev/null || true; wait "$switcher" 2>/dev/null || true; fi
  kill -CONT "$loop" 2>/dev/null || true
  kill "$loop" 2>/dev/null || true
  wait "$loop" 2>/dev/null || true
}
trap stop EXIT
trap 'exit 130' INT TERM

# the switcher: a seeded sequence of states; it reports the time on
(
  nap=""
  trap 'if [ -n "$nap" ]; then kill "$nap" 2>/dev/null; fi; echo "noisy.sh: the loop on CPU '"$cpu"' was switched on for ${on_ms} of the ${all_ms} ms of states begun" >&2; exit 0' TERM
  RANDOM=$seed on_ms=0 all_ms=0
  while :; do
    ms=$((least + RANDOM % (most - least + 1)))
    if [ $((RANDOM % 1000)) -lt "$(awk -v s="$share" 'BEGIN { printf "%d", s * 1000 }')" ]; then
      kill -CONT "$loop"; on_ms=$((on_ms + ms))
    else
      kill -STOP "$loop"
    fi
    all_ms=$((all_ms + ms))
    sleep "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')" &
    nap=$!
    wait "$nap"
    nap=""
  done
) &
switcher=$!

status=0
"$@" || status=$?
exit "$status"
