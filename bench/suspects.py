#!/usr/bin/env python3
"""Whether envbench's suspect flags tell strays from the rest.

    bench/suspects.py RUN.json RUN.json RUN.json ...

Give three or more result files of the same suite on the same machine
(A/A runs: nothing changed between them). For each case run, the stray is
|ln(median / the case's median over the runs)| of its first metric. The
script prints, per suspect kind (and "none" for unflagged case runs), how
many case runs carry it, their mean and median stray, and the share that
strayed more than 10 %. A rule whose flagged cases stray no more than the
unflagged ones is noise shown as a warning: envbench shows a kind as
"suspect" only when its flagged case runs strayed at least 1.5 times as
far as the unflagged on average ("vs none", with its interval) and
further than their own cases usually stray ("vs own case" above 1); the others stay in the
result file as telemetry ("signals"), and this script scores both. It
reads the flags recorded in the files, so run it on files written by the
envbench whose rules you judge.
"""
import json
import math
import random
import statistics as st
import sys


def main(paths):
    if len(paths) < 3:
        sys.exit("give three or more result files of the same suite and machine")
    runs = [json.load(open(p)) for p in paths]
    medians = {}
    for r in runs:
        for c in r["cases"]:
            m = c["metrics"][0].get("summary") if c["status"] == "ok" and c["metrics"] else None
            if m and m["median"] > 0:
                medians.setdefault(c["key"], []).append(m["median"])
    # a case's own typical stray, so that a kind is not credited with the
    # noisiness of the cases it happens to fire on
    typical = {}
    for key, v in medians.items():
        if len(v) >= 3:
            mid = st.median(v)
            typical[key] = st.mean(abs(math.log(x / mid)) for x in v) or float("nan")
    by_kind = {}
    for r in runs:
        for c in r["cases"]:
            if len(medians.get(c["key"], [])) < 3 or c["status"] != "ok":
                continue
            stray = abs(math.log(c["metrics"][0]["summary"]["median"] / st.median(medians[c["key"]])))
            rel = stray / typical[c["key"]] if typical[c["key"]] > 0 else float("nan")
            flags = c.get("suspect", []) + c.get("signals", [])
            for kind in {s["kind"] for s in flags} or {"none"}:
                by_kind.setdefault(kind, []).append((stray, rel))
    none = by_kind.get("none", [])
    base = st.mean(x for x, _ in none) if none else float("nan")
    rng = random.Random(1)

    def ratio_interval(v):
        """95 % bootstrap interval of mean(v strays) / mean(unflagged strays)."""
        if not none or len(v) < 2:
            return float("nan"), float("nan")
        out = []
        for _ in range(2000):
            a = [rng.choice(v)[0] for _ in v]
            b = [rng.choice(none)[0] for _ in none]
            mb = st.mean(b)
            out.append(st.mean(a) / mb if mb > 0 else float("nan"))
        out.sort()
        return out[int(0.025 * len(out))], out[int(0.975 * len(out)) - 1]

    print(f"{'flag':<10} {'case runs':>9} {'mean stray':>11} {'median':>8} {'>10 %':>7} "
          f"{'vs none':>8} {'95 % interval':>15} {'vs own case':>12}")
    for kind, v in sorted(by_kind.items()):
        strays = [x for x, _ in v]
        rels = [r for _, r in v if r == r]
        share = sum(x > 0.1 for x in strays) / len(strays)
        lo, hi = ratio_interval(v)
        own = st.mean(rels) if rels else float("nan")
        print(f"{kind:<10} {len(v):>9} {st.mean(strays):>11.3f} {st.median(strays):>8.3f} {share:>7.1%} "
              f"{st.mean(strays) / base:>7.2f}x {lo:>6.2f}..{hi:<6.2f}x {own:>11.2f}x")
    print("vs none: the kind's mean stray over the unflagged case runs' (with a 95 % bootstrap "
          "interval); vs own case: its strays over each case's typical stray (1.00x: no worse "
          "than the case usually strays)")


if __name__ == "__main__":
    main(sys.argv[1:])
