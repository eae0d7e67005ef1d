#!/usr/bin/env bash
# envbench fidelity: runs envbench and a reference tool alternately (A B B A)
# on this machine with the same parameters and prints, per case, both
# figures and the ratio envbench/reference with its spread over rounds.
# These machines drift 10-65 % in absolute terms within half an hour, while
# alternated ratios hold within a few percent: read the ratio, not the figures.
#
# This is a benchmark, not a test; CI does not run it.
#   bench/fidelity.sh [--rounds N] [--budget SECONDS] [--no-install]
#                     [--information]
# The net family against sockperf, iperf3, wrk and nginx, servers this
# script starts on loopback: every other family's references are
# `envbench fidelity` (`--dir DIR` for the io family's), a tested command,
# which judges these rows too (`envbench __judge`). Sequential rounds:
# --rounds alternated rounds (default 5), then, while a banded row is
# unclear and its interval says how many more rounds would settle it, as
# many more as the fewest such row asks for (at most 20), of the rows
# still unclear, until every banded row settles or --budget (600 s) is
# spent. The last line counts the rows within, outside, unclear at the
# budget, and without a band.
# --information adds the dear rows kept for information only, without a
# band (net.tcp_stream against one iperf3 with two streams): left out,
# their time goes to the rows a band judges. The HTTP client at 100 KiB
# on nginx's CPU under BBR (two rates) runs in every first pass.
set -euo pipefail
# numbers are read and printed with a decimal point (bash's printf follows
# LC_NUMERIC)
export LC_ALL=C

rounds=5
budget=600
install=1
information=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --no-install) install=0; shift ;;
    --information) information=1; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "fidelity.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/envbench-fidelity.XXXXXX")
# servers a section started (nginx, sockperf, iperf3, envbench's HTTP
# helper), stopped by PID on every way out
started=()
stop_started() {
  local p
  for p in "${started[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${started[@]}"; do wait "$p" 2>/dev/null || true; done
  started=()
}
trap 'stop_started; rm -rf "$work"' EXIT
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
    *"both allowed both CPUs"* | "iperf3 -P 2" | *"(BBR: two rates, information)"*) return 0 ;;
  esac
  case "$1" in
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
# still: "ROWS LEAST": how many unclear rows more rounds would settle,
# and the fewest rounds such a row asks for
still() {
  cat "$work/verdicts/net"/* 2>/dev/null | awk -F'\t' '
    $1 == "unclear" && $7 > 0 { rows++; if (least == 0 || $7 < least) least = $7 }
    END { printf "%d %d\n", rows, least + 0 }'
}
export FIDELITY_SECTION=net
first_rounds=$rounds pass=1 start=$SECONDS
echo "pass 1: $rounds rounds" >&2
section_net
per=$(( (SECONDS - start + rounds - 1) / rounds ))
while :; do
  read -r rows least < <(still)
  left=$((budget - (SECONDS - start)))
  [ "$rows" -gt 0 ] || break
  add=$(( least < 20 ? least : 20 ))
  add=$(( add * per <= left ? add : left / per ))
  if [ "$add" -le 0 ]; then
    echo "budget: $((SECONDS - start)) of $budget s spent; $rows row(s) that more rounds would settle are left unclear" >&2
    break
  fi
  pass=$((pass + 1)) rounds=$add
  echo "pass $pass: $add more rounds (about $per s each) for the unclear rows; $((SECONDS - start)) of $budget s spent" >&2
  before=$(cat "$work/verdicts/net"/* | md5sum)
  section_net
  # a pass that measured no unclear row leaves them as they are
  [ "$(cat "$work/verdicts/net"/* | md5sum)" != "$before" ] || break
done
echo "fidelity: $((SECONDS - start)) s in all" >&2
rounds=$first_rounds
# the last line: how the rows were judged, each by its latest pass
if compgen -G "$work/verdicts/*/*" >/dev/null; then
  # an unclear row asks for more rounds (the budget ran out) or for none
  # that would settle it (at a band's edge)
  cat "$work"/verdicts/*/* | awk -F'\t' '{ n[$1]++; t++; if ($1 == "unclear" && $7 == 0) edge++ } END {
    printf "fidelity: %d rows: %d within their band, %d outside, %d unclear at the budget, %d unclear at a band'"'"'s edge, %d without a band\n",
      t, n["within"], n["outside"], n["unclear"] - edge, edge + 0, n["no_band"] }'
fi
