#!/usr/bin/env python3
"""compare from a shared store of 1 000 runs: how long it answers.

Starts a PostgreSQL server of its own (Debian's initdb and pg_ctl, in a
temporary directory, as nobody when run as root, on a Unix socket only),
fills it with 1 000 runs made from one real result file (100 labels of 10
runs, each label spread over 5 hosts), then times, alternately:

  files   envbench compare A.json... B.json...      (the same runs from files)
  store   envbench compare --db URL envA envB        (the store answers by label)
  host    envbench compare --db URL envA envB --where host=h1
  sqlite  the same as `store` against an SQLite file holding the same 1 000 runs
  list    envbench history --db URL --json           (all 1 000 entries)

and prints each one's median with a 95 % interval of the median (order
statistics), and the ratio store/files: what the store adds to a comparison.
Everything it makes is inside one temporary directory, removed on every
path (Ctrl-C included); the server is stopped by its data directory.

usage: bench/store.py RESULT.json [--rounds N] [--bin target/release/envbench]
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def pg_bin():
    base = "/usr/lib/postgresql"
    for v in sorted(os.listdir(base), reverse=True) if os.path.isdir(base) else []:
        d = os.path.join(base, v, "bin")
        if os.path.exists(os.path.join(d, "initdb")):
            return d
    sys.exit("bench/store.py: PostgreSQL's initdb not found (apt-get install postgresql)")


def as_server_user(cmd):
    return ["runuser", "-u", "nobody", "--"] + cmd if os.geteuid() == 0 else cmd


def median_ci(xs):
    """Median and a 95 % interval of it from order statistics (n >= 6)."""
    s = sorted(xs)
    n = len(s)
    k = max(0, int(n / 2 - 1.96 * (n ** 0.5) / 2))
    return statistics.median(s), s[k], s[n - 1 - k]


def timed(cmd, env=None):
    t = time.perf_counter()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    dt = time.perf_counter() - t
    if out.returncode != 0:
        sys.exit(f"bench/store.py: {' '.join(cmd)} failed: {out.stderr.decode()[-400:]}")
    return dt, out.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("result", help="a result file written by envbench run")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--bin", default="target/release/envbench")
    a = ap.parse_args()
    exe = os.path.abspath(a.bin)
    doc = json.load(open(a.result))
    tmp = tempfile.mkdtemp(prefix="envbench-store-bench-")
    data = os.path.join(tmp, "data")
    started = False

    def stop(*_):
        if started:
            subprocess.run(as_server_user([os.path.join(pg_bin(), "pg_ctl"), "-D", data,
                                           "-m", "immediate", "-w", "stop"]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(tmp, ignore_errors=True)

    signal.signal(signal.SIGINT, lambda *_: (stop(), sys.exit(130)))
    signal.signal(signal.SIGTERM, lambda *_: (stop(), sys.exit(143)))
    try:
        if os.geteuid() == 0:
            shutil.chown(tmp, "nobody")
        b = pg_bin()
        subprocess.run(as_server_user([os.path.join(b, "initdb"), "-D", data, "-A", "trust",
                                       "-U", "envbench", "--no-sync"]),
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run(as_server_user([os.path.join(b, "pg_ctl"), "-D", data, "-w", "-l",
                                       os.path.join(tmp, "log"), "-o",
                                       f"-k {tmp} -c listen_addresses=''", "start"]),
                       check=True, stdout=subprocess.DEVNULL)
        started = True
        url = "postgresql://envbench@" + tmp.replace("/", "%2F") + "/postgres"
        files = os.path.join(tmp, "runs")
        os.mkdir(files)
        paths = {}
        for i in range(1000):
            d = dict(doc)
            d["run_id"] = f"bench-{i:04d}"
            d["label"] = f"env{i // 10}"
            fp = json.loads(json.dumps(doc["fingerprint"]))
            fp["os"]["hostname"] = f"h{i % 5}"
            d["fingerprint"] = fp
            p = os.path.join(files, f"r{i:04d}.json")
            with open(p, "w") as f:
                json.dump(d, f)
            paths.setdefault(d["label"], []).append(p)
        sqlite = os.path.join(tmp, "h.sqlite3")
        for db in (url, sqlite):
            t0 = time.perf_counter()
            for k in range(0, 1000, 100):
                chunk = [paths[f"env{j}"] for j in range(k // 10, k // 10 + 10)]
                subprocess.run([exe, "store", "push", "--db", db] + sum(chunk, []),
                               check=True, stdout=subprocess.DEVNULL)
            print(f"pushed 1000 runs ({os.path.getsize(a.result) // 1024} KiB each) "
                  f"into {'PostgreSQL' if db == url else 'SQLite'} in {time.perf_counter() - t0:.1f} s")
        cmds = {
            "files": [exe, "compare"] + paths["env0"] + paths["env1"],
            "store": [exe, "compare", "--db", url, "env0", "env1"],
            "host": [exe, "compare", "--db", url, "env0", "env1", "--where", "host=h1"],
            "sqlite": [exe, "compare", "--db", sqlite, "env0", "env1"],
            "list": [exe, "history", "--db", url, "--json"],
        }
        times = {k: [] for k in cmds}
        for _ in range(a.rounds):
            for k, c in cmds.items():
                times[k].append(timed(c)[0])
        print(f"{'command':8} {'median s':>9}  95 % interval of the median")
        for k, xs in times.items():
            m, lo, hi = median_ci(xs)
            print(f"{k:8} {m:9.3f}  {lo:.3f} .. {hi:.3f}")
        ratios = [s / f for s, f in zip(times["store"], times["files"])]
        m, lo, hi = median_ci(ratios)
        print(f"store/files ratio (10 vs 10 runs, 1000 stored): {m:.3f} ({lo:.3f} .. {hi:.3f})")
    finally:
        stop()


if __name__ == "__main__":
    main()
