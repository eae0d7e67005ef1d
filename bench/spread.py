#!/usr/bin/env python3
"""Where an interleaved A/A run's spread comes from (issue 83).

Reads the result files of interleaved runs of one environment against
itself (`envbench run --in A --in B -o 'r1-{in}.json'`, twice or more) and
says, for each case's headline metric, on the log scale:
  within    the spread of repetitions inside a round (SD, %);
  between   the spread of the rounds' medians (SD, %), and its share of
            the variance;
  paired    the spread of the A/B difference of the same pass (SD, %):
            what interleaving by round leaves; corr is the correlation of
            A's and B's round medians (1: the drift cancels);
and then, pooled over cases, which of what the guest reads around each
repetition predicts a round's deviation from its case's median: other
runnable tasks, steal, involuntary switches, the canary read nearest in
time, the CPU's ticks per repetition, the time into the run.

A reading of files, not a measurement: it runs nothing.
  bench/spread.py A1.json B1.json [A2.json B2.json ...]
"""
import json, math, statistics as st, sys


def headline(case):
    m = case["metrics"][0]
    return m["name"], [math.log(v) for v in m["samples"] if v and v > 0]


def rounds(case):
    """{round: (median log value, covariates, mean time)} of a case."""
    name, logs = headline(case)
    tel = case.get("telemetry") or {}
    by = {}
    rs = case.get("sample_rounds") or [0] * len(logs)
    ts = case.get("sample_times_secs") or [0.0] * len(logs)
    if len(rs) != len(logs):
        return {}
    for i, (r, v) in enumerate(zip(rs, logs)):
        by.setdefault(r, []).append((i, v))
    out = {}
    for r, xs in by.items():
        idx = [i for i, _ in xs]
        cov = {}
        for k, how in (("runnable_others", st.mean), ("steal_share", max), ("nivcsw", st.mean),
                       ("cpu_ticks", st.mean)):
            vals = tel.get(k)
            if vals and len(vals) == len(logs):
                got = [vals[i] for i in idx if vals[i] is not None]
                if got:
                    cov[k] = how(got)
        out[r] = (st.median([v for _, v in xs]), cov, st.mean(ts[i] for i in idx),
                  [v for _, v in xs])
    return out


def canary_at(run, t):
    c = run.get("canary") or {}
    times, mops = c.get("times_secs") or [], c.get("cpu_mops") or []
    if not times:
        return None
    j = min(range(len(times)), key=lambda k: abs(times[k] - t))
    return math.log(mops[j])


def spearman(x, y):
    if len(x) < 4 or len(set(x)) < 2 or len(set(y)) < 2:
        return None
    def rank(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        for k, i in enumerate(order):
            r[i] = k
        return r
    rx, ry = rank(x), rank(y)
    mx, my = st.mean(rx), st.mean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return num / den if den else None


def pct(sd):
    return 100.0 * (math.exp(sd) - 1.0)


def main(paths):
    if len(paths) < 2 or len(paths) % 2:
        sys.exit(__doc__)
    runs = [(json.load(open(a)), json.load(open(b))) for a, b in zip(paths[::2], paths[1::2])]
    keys = [c["key"] for c in runs[0][0]["cases"] if c.get("status") == "ok"]
    pooled = {}
    print("case\twithin %\tbetween %\tbetween share\tpaired %\tcorr")
    shares = []
    for key in keys:
        within, meds_a, diffs, pa, pb = [], [], [], [], []
        for ra, rb in runs:
            ca = next((c for c in ra["cases"] if c["key"] == key and c.get("status") == "ok"), None)
            cb = next((c for c in rb["cases"] if c["key"] == key and c.get("status") == "ok"), None)
            if not ca or not cb:
                continue
            a, b = rounds(ca), rounds(cb)
            for side, run, rr in ((ca, ra, a), (cb, rb, b)):
                if not rr:
                    continue
                med = st.median(m for m, _, _, _ in rr.values())
                for m, cov, t, vals in rr.values():
                    if len(vals) > 1:
                        within.append(st.pvariance(vals))
                    dev = m - med
                    c = canary_at(run, t)
                    if c is not None:
                        cov = dict(cov, canary=c)
                    cov["time"] = t
                    for k, v in cov.items():
                        pooled.setdefault(k, []).append((v, dev, key))
            meds_a += [m for m, _, _, _ in a.values()]
            for r in sorted(set(a) & set(b)):
                diffs.append(a[r][0] - b[r][0])
                pa.append(a[r][0]); pb.append(b[r][0])
        if len(meds_a) < 3 or len(diffs) < 3:
            continue
        w = math.sqrt(st.mean(within)) if within else 0.0
        btw = st.stdev(meds_a)
        share = btw ** 2 / (btw ** 2 + w ** 2) if btw + w > 0 else 0.0
        shares.append(share)
        corr = spearman(pa, pb)
        print("%s\t%.1f\t%.1f\t%.2f\t%.1f\t%s" % (key[:60], pct(w), pct(btw), share,
              pct(st.stdev(diffs) / math.sqrt(2)), "-" if corr is None else "%.2f" % corr))
    if shares:
        print("median share of variance between rounds: %.2f over %d metrics" % (st.median(shares), len(shares)))
    print("\ncovariate\trounds\tspearman with the round's deviation (pooled; |dev| where it is on/off)")
    for k, xs in sorted(pooled.items()):
        rho = spearman([x for x, _, _ in xs], [d for _, d, _ in xs])
        rho_abs = spearman([x for x, _, _ in xs], [abs(d) for _, d, _ in xs])
        line = "%s\t%d\trho %s\trho(|dev|) %s" % (
            k, len(xs), "-" if rho is None else "%.2f" % rho,
            "-" if rho_abs is None else "%.2f" % rho_abs)
        if k in ("runnable_others", "steal_share", "nivcsw"):
            on = [abs(d) for x, d, _ in xs if x > 0]
            off = [abs(d) for x, d, _ in xs if x == 0]
            if on and off:
                line += "\ton %d: median |dev| %.1f %%\toff %d: %.1f %%" % (
                    len(on), pct(st.median(on)), len(off), pct(st.median(off)))
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
