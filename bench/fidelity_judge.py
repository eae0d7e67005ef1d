#!/usr/bin/env python3
"""How bench/fidelity.sh judges a row, on seeded synthetic rounds.

Takes the judging code out of fidelity.sh's `summarize` (or out of another
revision's, with --rev) and runs it on rounds of known ratio: envbench and
its reference measured side by side, each with its own noise (3 %
log-normal), and a host that is either steady or switches between two
states from round to round (40 and 70 GB/s, as STREAM at 2 threads on a
Zen 5 VM did), or switches every few seconds, so that in a fifth of the
rounds the two sides ran in different states (47 and 80 GB/s, as STREAM
at 2 threads on that VM did on 2026-11-30); there the rows are judged as
fidelity.sh judges STREAM at 2 threads, setting such rounds aside
(FIDELITY_SET_ASIDE=1.3), and as they were before, keeping them. Prints, at 4 and 12 rounds, how often the interval holds
the true ratio, how often an A/A row (true 1.0) is within or outside a
±10 % band, how often a true 1.15 is found outside, and the A/A
interval's median half-width.

usage: bench/fidelity_judge.py [--sims N] [--rev GIT_REVISION]
"""
import argparse, math, os, random, re, shutil, statistics as st, subprocess, sys, tempfile

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser()
ap.add_argument("--sims", type=int, default=100)
ap.add_argument("--rev", help="judge with fidelity.sh as it was at this revision")
a = ap.parse_args()
exe = os.path.join(repo, "target", "release", "envbench")
if not os.access(exe, os.X_OK):
    sys.exit("no target/release/envbench: cargo build --release first")
script = (subprocess.run(["git", "-C", repo, "show", f"{a.rev}:bench/fidelity.sh"], capture_output=True,
                         text=True, check=True).stdout if a.rev else open(os.path.join(repo, "bench", "fidelity.sh")).read())
body = script[script.index("summarize() {"):]
judge = body[body.index("<<'PY'") + len("<<'PY'"):body.index("\nPY\n")].split("\n", 1)[1]
work = tempfile.mkdtemp(prefix="fidelity-judge.")
try:
    code = os.path.join(work, "judge.py")
    with open(code, "x") as f:
        f.write(judge)

    def row(n, true, states, seed, mixed=0.0, aside=""):
        rng = random.Random(seed)
        e, r = [], []
        for _ in range(n):
            state = rng.choice(states)
            # in a share `mixed` of the rounds the reference ran in the other state
            other = [x for x in states if x != state] if rng.random() < mixed else [state]
            e.append(state * true * math.exp(rng.gauss(0, 0.03)))
            r.append(rng.choice(other) * math.exp(rng.gauss(0, 0.03)))
        # a directory of its own: the judge keeps a row's earlier rounds in its work directory
        own = tempfile.mkdtemp(dir=work)
        out = subprocess.run(["python3", code, exe, os.path.join(repo, "tests/fixtures/results/valid.json"), own,
                              "io.sim", "MB/s", f"reference {seed}", " ".join(map(repr, e)), " ".join(map(repr, r))],
                             capture_output=True, text=True,
                             env=dict(os.environ, FIDELITY_SECTION="sim", FIDELITY_SET_ASIDE=aside))
        shutil.rmtree(own)
        m = re.search(r"ratio (\S+) \[(\S+)\.\.(\S+)\].*: (within|OUTSIDE|unclear|no band)", out.stdout)
        if not m:
            # no interval: one round left after setting rounds aside
            # (unclear), or information on one round
            if re.search(r"one round: no interval", out.stdout):
                return None, None, "unclear"
            if "no band" in out.stdout:
                return None, None, "no band"
            sys.exit(f"no judgement: {out.stdout}{out.stderr}")
        return float(m[2]), float(m[3]), m[4]

    hosts = (("steady host", [55000], 0.0, ""), ("host switching 40/70 GB/s", [40000, 70000], 0.0, ""),
             ("a fifth mixed 47/80 GB/s, kept", [47000, 80000], 0.2, ""),
             ("a fifth mixed 47/80 GB/s, set aside", [47000, 80000], 0.2, "1.3"))
    for host, states, mixed, aside in hosts:
        for n in (4, 12):
            for true in (1.0, 1.15):
                res = [row(n, true, states, s, mixed, aside) for s in range(a.sims)]
                # the interval's figures over the rows that have one
                with_ci = [(lo, hi) for lo, hi, _ in res if lo is not None]
                cover = sum(lo <= true <= hi for lo, hi in with_ci) / len(with_ci)
                share = {k: sum(v == k for _, _, v in res) / len(res) for k in ("within", "OUTSIDE", "no band")}
                half = st.median((math.log(hi) - math.log(lo)) / 2 for lo, hi in with_ci)
                print(f"{host}, {n:2} rounds, true {true:.2f}: holds it {cover:.2f}; within ±10 % {share['within']:.2f}, "
                      f"outside {share['OUTSIDE']:.2f}, information {share['no band']:.2f}; half-width ±{100 * (math.exp(half) - 1):.1f} %")
finally:
    shutil.rmtree(work)
