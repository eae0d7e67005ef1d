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
far as the unflagged on average (the last column); the others stay in the
result file as telemetry ("signals"), and this script scores both. It
reads the flags recorded in the files, so run it on files written by the
envbench whose rules you judge.
"""
import json
import math
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
    by_kind = {}
    for r in runs:
        for c in r["cases"]:
            if len(medians.get(c["key"], [])) < 3 or c["status"] != "ok":
                continue
            stray = abs(math.log(c["metrics"][0]["summary"]["median"] / st.median(medians[c["key"]])))
            flags = c.get("suspect", []) + c.get("signals", [])
            for kind in {s["kind"] for s in flags} or {"none"}:
                by_kind.setdefault(kind, []).append(stray)
    base = st.mean(by_kind["none"]) if by_kind.get("none") else float("nan")
    print(f"{'flag':<10} {'case runs':>9} {'mean stray':>11} {'median':>8} {'>10 %':>7} {'vs none':>8}")
    for kind, v in sorted(by_kind.items()):
        share = sum(x > 0.1 for x in v) / len(v)
        print(f"{kind:<10} {len(v):>9} {st.mean(v):>11.3f} {st.median(v):>8.3f} {share:>7.1%} "
              f"{st.mean(v) / base:>7.2f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
