#!/usr/bin/env python3
"""Large inputs answer in seconds, and their time grows linearly.

    bench/scale.py [--envbench PATH] [--scale 1.0]

Generates, in a temporary directory removed on every path (Ctrl-C too),
the three inputs that once took over a minute each, at a quarter, a half
and the whole of their size:

- a dd log of 150 000 summaries, each its own case (`import --from dd`);
- a result file of 100 000 cases in 30 000 families (`show`);
- a result file of one case with 20 metrics of 100 000 samples (`show`,
  whose summaries and intervals are recomputed when the file is read).

For each it times envbench (wall clock, one try per size: these are
seconds, not the microseconds the suites measure) and prints the seconds
and the exponent of the growth (the slope of log time on log size over the
three sizes: 1 is linear, 2 quadratic). It exits 1 when an exponent
exceeds 1.4 or the whole input takes more than 10 s.
`tests/bad_input.rs` reads the same shapes at a tenth of the size and
checks the results; only this script looks at time.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LIMIT_SECS = 10.0
# n log n reads about 1.1 here, a quadratic loop 2; writing a 220 MB
# output adds page faults and reallocation that read 1.2-1.35
LINEAR_UP_TO = 1.4


def dd_log(path, n):
    with open(path, "x") as f:
        for i in range(n):
            b = 512 * (i + 1)
            secs = 0.001 + (i % 97) * 1e-5
            f.write(f"{b // 512}+0 records in\n{b // 512}+0 records out\n")
            f.write(f"{b} bytes copied, {secs:.6f} s, {b / secs / 1e6:.3g} MB/s\n")


def case(bench, params, metrics):
    key = bench
    if params:
        key += "[" + ",".join(f"{k}={v}" for k, v in sorted(params.items())) + "]"
    return {
        "key": key, "bench": bench, "params": params, "status": "ok", "reason": None,
        "warmup_reps": 0, "stop_reason": "max_reps", "started_utc": "2026-01-01T00:00:00Z",
        "duration_secs": 1.0, "anomalies": [],
        "metrics": [
            {"name": name, "unit": "ms", "direction": "lower_is_better", "samples": s}
            for name, s in metrics
        ],
    }


def result_file(path, cases):
    with open(os.path.join(HERE, "..", "tests", "fixtures", "results", "valid.json")) as f:
        doc = json.load(f)
    doc["cases"] = cases
    doc["derived"] = []
    with open(path, "x") as f:
        json.dump(doc, f)


def many_cases(path, n):
    result_file(path, [
        case(f"f{i % 30000}.b", {"i": i}, [("t", [1.0 + (i % 7) / 10, 1.1, 1.2])])
        for i in range(n)
    ])


def many_samples(path, n):
    result_file(path, [case("os.big", {}, [
        (f"m{j}", [1.0 + ((i * 7919 + j) % 1000) / 1000 for i in range(n)])
        for j in range(20)
    ])])


def timed(cmd):
    t0 = time.monotonic()
    out = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    secs = time.monotonic() - t0
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()[:500]}")
    return secs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--envbench", default=os.path.join(HERE, "..", "target", "release", "envbench"))
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every size (0.1: a quick look)")
    a = ap.parse_args()
    exe = a.envbench
    rows = [
        ("import --from dd", 150_000, dd_log, lambda p, d: [exe, "import", "--from", "dd", p, "-o", os.path.join(d, "out.json")]),
        ("show, many cases", 100_000, many_cases, lambda p, d: [exe, "show", p]),
        ("show, 20 x many samples", 100_000, many_samples, lambda p, d: [exe, "show", p, "--all-metrics"]),
    ]
    failed = False
    print(f"{'input':<26}{'size':>9}{'secs':>8}{'size/4':>9}{'secs':>8}  exponent")
    with tempfile.TemporaryDirectory(prefix="envbench-scale-") as tmp:
        for name, full, make, cmd in rows:
            full = max(8, int(full * a.scale))
            secs = {}
            for n in (full // 4, full // 2, full):
                d = tempfile.mkdtemp(dir=tmp)
                p = os.path.join(d, "input")
                make(p, n)
                secs[n] = timed(cmd(p, d))
            t_q, t_w = secs[full // 4], secs[full]
            # least-squares slope of log time on log size over the three sizes
            xs = [math.log(n) for n in secs]
            ys = [math.log(max(t, 1e-3)) for t in secs.values()]
            mx, my = sum(xs) / 3, sum(ys) / 3
            exponent = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
            bad = exponent > LINEAR_UP_TO or t_w > LIMIT_SECS
            failed |= bad
            print(f"{name:<26}{full:>9}{t_w:>8.2f}{full // 4:>9}{t_q:>8.2f}  {exponent:.2f}{'  NOT LINEAR OR SLOW' if bad else ''}")
    print(f"linear (exponent at most {LINEAR_UP_TO}) and under {LIMIT_SECS:.0f} s: {'no' if failed else 'yes'}")
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
