#!/usr/bin/env python3
"""Where a case's spread comes from, per family, over A/A result files.

    bench/components.py RUN.json RUN.json RUN.json ...

Give three or more result files of one environment (A/A runs: nothing
changed between them). For each case's headline metric, on the log scale,
the variance is split by the method of moments into its levels, as
`compare` does: between runs, between rounds of a run (with worker
processes, a round is a process), and between repetitions of a round.
Per family the script prints the median of each level's standard deviation
(in %), the median spread of a run's estimate (the mean over its rounds of
the median of repetitions) between runs, and the 95 % half-width a
comparison of 3 runs per side would get from that spread:
t(0.975, 4) * sqrt(2 * var / 3). The spread of the estimate is what
decides the interval; the levels say which lever narrows it (more rounds
shrink the rounds' share by 1/rounds, worker processes turn a per-process
component into a rounds' one).

The last column, the floor, is the 3 + 3 half-width from the between-run
level alone: what a run with infinitely many rounds would still get, since
no design inside a run averages what moves from one run to the next (the
host's slow drift). A target below the floor needs more runs per side or a
quieter host; between the floor and the half-width, more rounds help.
"""
import json
import math
import statistics as st
import sys

T975_DF4 = 2.776


def nested(run, key):
    for c in run["cases"]:
        if c["key"] == key and c["status"] == "ok" and c["metrics"]:
            m = c["metrics"][0]
            rounds = c.get("sample_rounds") or [0] * len(m["samples"])
            by = {}
            for r, v in zip(rounds, m["samples"]):
                if v > 0:
                    by.setdefault(r, []).append(math.log(v))
            return [v for _, v in sorted(by.items()) if v]
    return None


def pooled(groups):
    ss = dof = 0.0
    for g in groups:
        if len(g) >= 2:
            m = st.mean(g)
            ss += sum((x - m) ** 2 for x in g)
            dof += len(g) - 1
    return ss / dof if dof else None


def components(runs):
    rounds = [r for run in runs for r in run]
    reps = pooled(rounds)
    k = st.mean(len(r) for r in rounds)
    round_means = [[st.mean(r) for r in run] for run in runs]
    rv = pooled(round_means)
    rounds_var = None if rv is None else max(rv - (reps or 0) / k, 0.0)
    r = st.mean(len(run) for run in runs)
    run_means = [st.mean(rm) for rm in round_means]
    runs_var = None
    if len(run_means) >= 2:
        runs_var = max(st.variance(run_means) - (rounds_var or 0) / r - (reps or 0) / (r * k), 0.0)
    estimates = [st.mean(st.median(rd) for rd in run) for run in runs]
    est_var = st.variance(estimates) if len(estimates) >= 2 else None
    return runs_var, rounds_var, reps, est_var, r, k


def half_width(var):
    """The 95 % half-width (in %) of 3 + 3 runs whose estimates vary by `var`."""
    return 100 * math.expm1(T975_DF4 * math.sqrt(2 * var / 3))


def pct(var):
    return "-" if var is None else f"{100 * math.sqrt(var):.1f}"


def main(paths):
    if len(paths) < 3:
        sys.exit("give three or more result files of one environment")
    files = [json.load(open(p)) for p in paths]
    keys = []
    for f in files:
        for c in f["cases"]:
            if c["key"] not in keys:
                keys.append(c["key"])
    fams = {}
    for key in keys:
        runs = [n for n in (nested(f, key) for f in files) if n]
        if len(runs) < 3:
            continue
        fams.setdefault(key.split(".")[0], []).append((key, components(runs)))
    print(f"{'family':<7} {'cases':>5} {'runs sd %':>9} {'rounds sd %':>11} {'reps sd %':>9} "
          f"{'estimate sd %':>13} {'3+3 half-width %':>16} {'rounds':>6} {'reps/round':>10} {'floor %':>7}")
    allw = []
    allf = []
    for fam, rows in fams.items():
        med = lambda i: st.median([r[1][i] for r in rows if r[1][i] is not None]) if any(r[1][i] is not None for r in rows) else None
        widths = [half_width(r[1][3]) for r in rows if r[1][3] is not None]
        floors = [half_width(r[1][0]) for r in rows if r[1][0] is not None]
        allw += widths
        allf += floors
        floor = f"{st.median(floors):.1f}" if floors else "-"
        print(f"{fam:<7} {len(rows):>5} {pct(med(0)):>9} {pct(med(1)):>11} {pct(med(2)):>9} "
              f"{pct(med(3)):>13} {st.median(widths):>16.1f} {med(4):>6.1f} {med(5):>10.1f} {floor:>7}")
    if "-v" in sys.argv:
        for fam, rows in fams.items():
            for key, c in rows:
                print(f"  {key:60} runs {pct(c[0]):>5} rounds {pct(c[1]):>5} reps {pct(c[2]):>5} est {pct(c[3]):>5}")
    print(f"all     median 3+3 half-width from the estimates' spread: ±{st.median(allw):.1f} %; "
          f"floor (between runs alone): ±{st.median(allf):.1f} %")


if __name__ == "__main__":
    main([a for a in sys.argv[1:] if a != "-v"])
