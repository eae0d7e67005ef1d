#!/usr/bin/env python3
"""envbench's `run --cmd` against hyperfine, on the pairs people feel.

Five commands (git status in a 1 000-file repository, grep -r over it,
tar -xzf then rm -r of its tarball, make of a small C project, python3
importing twelve modules from the end of a 30-directory sys.path; and
status1, git status without its preload threads, and db and dbwal,
Debian's sqlite3 on app.db's work: --only), each timed on a pair of environments by
hyperfine (`-N`) and by envbench (`run --cmd`, both sides in one run) in
turns, ROUNDS times; each round's pair of slowdowns is judged by
`envbench __band` against 0.9..1.1, as `envbench fidelity` judges a row.
Prints one row a command, with envbench's prediction and the app case that
stands for the command. The method: docs/diagnosis.md, "A person's
command against hyperfine". The pairs:
  fuse    a local ext4 directory against a bindfs mount of a copy of it;
  gvisor  this host against `runsc do` (the same directory);
  dirs    any two directories (--dirs A,B), a copy of the fixture in each;
  guest   a QEMU guest's own ext4 disk against its 9p share of a host
          directory (--guest CACHE: tests/layers/qemu.sh boots it, its
          kernel kept in CACHE, and this script runs inside it as `--pair
          dirs`; TCG where KVM cannot boot, so only the slowdowns
          between the guest's two directories are read).
A benchmark, not a test: nothing else may measure on the machine meanwhile.
  bench/commands.py [--pair fuse|gvisor|dirs|guest] [--dirs A,B] [--guest CACHE]
                    [--rounds N] [--runs N] [--only NAME,...] [--keep DIR]
                    [--envbench PATH]
"""
import argparse, json, math, os, shlex, shutil, subprocess, sys, tempfile

RUNSC = ["runsc", "--network=none", "do", "-force-overlay=false", "--"]
PY = ("import sys; sys.path[:0]=['p%02d' % i for i in range(30)]; "
      "import " + ",".join("m%d" % i for i in range(12)))
# the app case that stands for each command: its bench, and a parameter
# its key must hold where the bench has several cases
APP = {"status": ("app.status", None), "grep": ("app.search", None),
       "untar": ("app.unpack", None), "make": ("app.build", None),
       "imports": ("app.imports", None), "status1": ("app.status", None),
       "db": ("app.db", "journal=delete"), "dbwal": ("app.db", "journal=wal")}
# sqlite3's leftovers, removed before each run
DB = ["rm", "-f", "t.db", "t.db-journal", "t.db-wal", "t.db-shm"]
# name: (command words, prepare words or None)
COMMANDS = {
    "status": (["git", "status", "--porcelain"], None),
    "grep": (["grep", "-r", "-c", "--exclude-dir=.git", "needle", "tree"], None),
    "untar": (["sh", "-c", "tar -xzmf tree.tgz -C x && rm -r x/tree"], None),
    "make": (["make", "-s"], ["make", "-s", "clean"]),
    "imports": (["python3", "-c", PY], None),
    # git status without its preload threads (core.preloadIndex): its
    # lstats one at a time, as envbench's prediction adds them up
    "status1": (["git", "-c", "core.preloadIndex=false", "status", "--porcelain"], None),
    # Debian's sqlite3 on app.db's quick work (20 transactions of 8 rows,
    # synchronous=FULL) into a fresh database, with a rollback journal or
    # a write-ahead log
    "db": (["sqlite3", "t.db", ".read db-delete.sql"], DB),
    "dbwal": (["sqlite3", "t.db", ".read db-wal.sql"], DB),
}


def fixture(root):
    """The tree and its git repository, its tarball, a C project, modules."""
    tree = os.path.join(root, "tree")
    for d in range(25):
        os.makedirs(os.path.join(tree, "d%02d" % d))
        for f in range(40):
            words = " ".join("w%d" % ((d * 40 + f) * 7 % 97 + k) for k in range(600))
            text = words + ("\nneedle\n" if f % 10 == 0 else "\n")
            with open(os.path.join(tree, "d%02d" % d, "f%02d.txt" % f), "w") as fh:
                fh.write(text)
    # files older than the index, so that git finds none of them racily
    # clean (it would read each one on every status)
    for base, _, names in os.walk(tree):
        for n in names:
            os.utime(os.path.join(base, n), (1577836800, 1577836800))
    run(["tar", "-czf", "tree.tgz", "tree"], root)
    os.makedirs(os.path.join(root, "x"))
    git = ["git", "-c", "user.name=e", "-c", "user.email=e@e"]
    run(["git", "init", "-q"], root)
    run(git + ["add", "tree"], root)
    run(git + ["commit", "-qm", "tree"], root)
    srcs = []
    for i in range(8):
        with open(os.path.join(root, "s%d.c" % i), "w") as fh:
            fh.write("int f%d(int x) { int s = x; for (int k = 0; k < %d; k++) s = s * 31 + k; return s; }\n" % (i, 100 + i))
        srcs.append("s%d.o" % i)
    with open(os.path.join(root, "main.c"), "w") as fh:
        fh.write("".join("int f%d(int);\n" % i for i in range(8)) +
                 "int main(void) { return (" + " + ".join("f%d(1)" % i for i in range(8)) + ") == 7; }\n")
    with open(os.path.join(root, "Makefile"), "w") as fh:
        fh.write("OBJS = %s main.o\nprog: $(OBJS)\n\tcc -o prog $(OBJS)\n%%.o: %%.c\n\tcc -O1 -c $< -o $@\n"
                 "clean:\n\trm -f prog $(OBJS)\n" % " ".join(srcs))
    for mode in ("delete", "wal"):
        lines = ["PRAGMA journal_mode=%s;" % mode, "PRAGMA synchronous=FULL;",
                 "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v TEXT NOT NULL);",
                 "CREATE INDEX t_k ON t(k);"]
        for i in range(20):
            lines.append("BEGIN;")
            lines += ["INSERT INTO t(k, v) VALUES (%d, '%0100d');" % (n * 7919 % 100003, n)
                      for n in range(i * 8, i * 8 + 8)]
            lines.append("COMMIT;")
        with open(os.path.join(root, "db-%s.sql" % mode), "w") as fh:
            fh.write("\n".join(lines) + "\n")
    for i in range(30):
        os.makedirs(os.path.join(root, "p%02d" % i))
    for m in range(12):
        with open(os.path.join(root, "p29", "m%d.py" % m), "w") as fh:
            fh.write("VALUE = %d\n" % m)


def run(argv, cwd, capture=False):
    return subprocess.run(argv, cwd=cwd, check=True, text=True,
                          stdout=subprocess.PIPE if capture else subprocess.DEVNULL)


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2


def hyperfine(side, cmd, prepare, runs, out):
    """Median seconds of one hyperfine block on `side` (dir, prefix)."""
    cwd, prefix = side
    argv = prefix + ["hyperfine", "-N", "--warmup", "3", "--runs", str(runs),
                     "--export-json", out, "--style", "none"]
    if prepare:
        argv += ["--prepare", shlex.join(prepare)]
    run(argv + [shlex.join(cmd)], cwd)
    with open(out) as fh:
        return median(json.load(fh)["results"][0]["times"])


def reference(sides, cmd, prepare, r, runs, tmp):
    """hyperfine's ratio in round `r`, the sides alternated (A B, B A, ...)."""
    order = [0, 1] if r % 2 == 0 else [1, 0]
    got = {}
    for k in order:
        got[k] = hyperfine(sides[k], cmd, prepare, runs, os.path.join(tmp, "hf.json"))
    return got[1] / got[0]


def envbench_run(exe, pair, root, name, cmd, prepare, tmp, r):
    """envbench's run `r` of the command on both sides, with the app case
    that stands for it; its files, kept as NAME-*-R.json in `tmp`."""
    args = [exe, "run", "--quiet", "--no-history", "--force", "--cmd", "%s=%s" % (name, shlex.join(cmd)),
            "--only", APP[name][0]]
    if prepare:
        args += ["--cmd-prepare", shlex.join(prepare)]
    if pair != "gvisor":
        files = [os.path.join(tmp, "%s-run-%d.json" % (name, r))]
        args += ["--dir", "base=" + root["base"], "--dir", "other=" + root["other"],
                 "-o", files[0]]
    else:
        args += ["--in", "host", "--in", "gvisor=" + " ".join(RUNSC[:-1]) + " --",
                 "--dir", "work=" + root["base"], "-o", os.path.join(tmp, "%s-{in}-%d.json" % (name, r))]
        files = [os.path.join(tmp, "%s-%s-%d.json" % (name, side, r)) for side in ("host", "gvisor")]
    run(args, tmp)
    return files


def compared(exe, pair, files, tmp):
    """`envbench compare` of the runs `files` (by directory, but in
    gVisor): its JSON and the command's headline metric in it."""
    out = os.path.join(tmp, "cmp.json")
    flags = ["--by-dir", "--baseline", "base"] if pair != "gvisor" else []
    run([exe, "compare"] + flags + files + ["--json", out, "--force"], tmp)
    with open(out) as fh:
        doc = json.load(fh)
    return doc, next(m for m in doc["metrics"] if m["key"].startswith("cmd.run") and m["primary"])


def joint(exe, pairs):
    """envbench/hyperfine over rounds, judged by `envbench __band` against
    0.9..1.1 as `envbench fidelity` judges a row: the ratio, its 95 %
    interval (None with one round) and the verdict in words."""
    out = run([exe, "__band", "--band", "0.9..1.1"] + ["%r,%r" % p for p in pairs], ".",
              capture=True).stdout.strip().split("\t")
    interval = None if out[1] == "-" else (float(out[1]), float(out[2]))
    return float(out[0]), interval, out[3]


def envbench_ratio(exe, pair, name, files, tmp):
    """envbench's ratio, interval and prediction for the command over the
    runs `files`, and the ratio and interval of the app case that stands
    for it."""
    doc, m = compared(exe, pair, files, tmp)
    a = next((a for a in doc.get("attributions", []) if a["key"] == m["key"]), {})
    bench, param = APP[name]
    app = next((x for x in doc["metrics"] if x["key"].startswith(bench + "[") and x["primary"]
                and (param is None or param in x["key"])), None)
    app_ratio = (app["ratio"], app["ratio_ci"]) if app else (float("nan"), [float("nan")] * 2)
    pred = a.get("predicted")
    if pred and a.get("predicted_ci"):
        pred = "%.2f [%.2f, %.2f]" % (pred, *a["predicted_ci"])
    elif pred:
        pred = "%.2f" % pred
    return m["ratio"], m["ratio_ci"], pred, a.get("missing"), app_ratio


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pair", default="fuse", choices=["fuse", "gvisor", "dirs", "guest"])
    p.add_argument("--dirs", help="A,B: the two directories of --pair dirs")
    p.add_argument("--guest", metavar="CACHE", help="the kernel cache of --pair guest")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--only", default=",".join(c for c in COMMANDS if c != "status1"))
    p.add_argument("--keep")
    p.add_argument("--envbench", default=os.path.join(os.path.dirname(__file__), "..",
                                                        "target", "release", "envbench"))
    a = p.parse_args()
    exe = os.path.abspath(a.envbench)
    if a.pair == "guest":
        return in_guest(a, exe)
    if (a.pair == "dirs") != bool(a.dirs) or (a.dirs and len(a.dirs.split(",")) != 2):
        p.error("--dirs A,B (two directories) goes with --pair dirs, and only with it")
    made, mounted, tmp, root = [], False, None, {}
    # everything made from here on is removed on every path, Ctrl-C included
    try:
        tmp = a.keep or tempfile.mkdtemp(prefix="envbench-commands-")
        # a history of its own, new each time, and no shared store:
        # compare takes a person's earlier runs as evidence for a side of
        # one run (envbench reads XDG_DATA_HOME only when it is absolute)
        os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="xdg-", dir=os.path.abspath(tmp))
        os.environ.pop("ENVBENCH_DB", None)
        if a.pair == "dirs":
            # a fresh directory in each
            for d in a.dirs.split(","):
                made.append(tempfile.mkdtemp(prefix="envbench-commands-", dir=d))
            root["base"] = made[0]
        else:
            root["base"] = os.path.join(tmp, "local")
        os.makedirs(root["base"], exist_ok=True)
        if not os.path.exists(os.path.join(root["base"], "tree.tgz")):
            fixture(root["base"])
        if a.pair in ("fuse", "dirs"):
            if a.pair == "fuse":
                under, root["other"] = os.path.join(tmp, "under"), os.path.join(tmp, "fuse")
            else:
                under = root["other"] = os.path.join(made[1], "copy")
            if not os.path.exists(under):
                shutil.copytree(root["base"], under, symlinks=True)
            if a.pair == "fuse":
                os.makedirs(root["other"], exist_ok=True)
                run(["bindfs", under, root["other"]], tmp)
                mounted = True
            sides = [(root["base"], []), (root["other"], [])]
        else:
            sides = [(root["base"], []), (root["base"], RUNSC)]
        print("command\thyperfine\t(range)\tenvbench\t[95 %]\tpredicted [95 %]"
              "\tenvbench/hyperfine [95 %]\tverdict\tapp case\t[95 %]\tapp/hyperfine")
        for name in a.only.split(","):
            cmd, prepare = COMMANDS[name]
            if not shutil.which(cmd[0]):
                print("%s: no %s here; its row is left out" % (name, cmd[0]), file=sys.stderr)
                continue
            ratios, files, pairs = [], [], []
            # the tools in turns, so that the host's drift falls on both
            # (each first in every other turn, so that neither always
            # meets the caches the other just warmed)
            for r in range(a.rounds):
                if r % 2 == 1:
                    mine = envbench_run(exe, a.pair, root, name, cmd, prepare, tmp, r)
                ratios.append(reference(sides, cmd, prepare, r, a.runs, tmp))
                if r % 2 == 0:
                    mine = envbench_run(exe, a.pair, root, name, cmd, prepare, tmp, r)
                files += mine
                pairs.append((compared(exe, a.pair, mine, tmp)[1]["ratio"], ratios[-1]))
            hf = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            eb, ci, pred, why, (ar, aci) = envbench_ratio(exe, a.pair, name, files, tmp)
            j, interval, verdict = joint(exe, pairs)
            shown = "[%.3f, %.3f]" % interval if interval else "[-]"
            print("%s\t%.2f\t(%.2f..%.2f)\t%.2f\t[%.2f, %.2f]\t%s\t%.3f %s\t%s"
                  "\t%s %.2f\t[%.2f, %.2f]\t%.3f" % (
                      name, hf, min(ratios), max(ratios), eb, ci[0], ci[1],
                      pred or why or "-", j, shown, verdict, APP[name][0], ar, aci[0], aci[1],
                      ar / hf), flush=True)
    finally:
        if mounted:
            subprocess.run(["fusermount", "-u", root["other"]])
        for d in made:
            shutil.rmtree(d, ignore_errors=True)
        if tmp and not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def in_guest(a, exe):
    """This script, run as `--pair dirs` on a QEMU guest's disk and share
    (tests/layers/qemu.sh with QEMU_GUEST_RUN); prints what it printed."""
    if not a.guest:
        sys.exit("commands.py: --pair guest needs --guest CACHE (the guest kernel's cache)")
    repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    tmp = tempfile.mkdtemp(prefix="envbench-commands-guest-")
    try:
        with open(os.path.abspath(__file__)) as fh:
            me = fh.read()
        inner = ["python3", "/tmp/commands.py", "--pair", "dirs", "--dirs", "/mnt/disk,/mnt/share",
                 "--envbench", "/mnt/share/envbench", "--rounds", str(a.rounds),
                 "--runs", str(a.runs), "--only", a.only]
        if a.keep:
            # the result files, written to the share and copied out after
            inner += ["--keep", "/mnt/share/kept"]
        script = os.path.join(tmp, "guest.sh")
        with open(script, "w") as fh:
            fh.write("export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin\n"
                     "cat > /tmp/commands.py <<'ENVBENCH_SCRIPT_END'\n" + me +
                     "ENVBENCH_SCRIPT_END\nmkdir -p /mnt/share/kept\n" + shlex.join(inner) +
                     " > /mnt/share/guest-out.txt 2>&1\n")
        out = os.path.join(tmp, "out")
        os.makedirs(out)
        env = dict(os.environ, QEMU_GUEST_RUN=script,
                   TIMEOUT_S=os.environ.get("TIMEOUT_S", "3000"))
        got = subprocess.run(["bash", os.path.join(repo, "tests", "layers", "qemu.sh"), exe, out,
                              a.guest, "--"], env=env)
        for name in ("accel", "exit-code"):
            path = os.path.join(out, name)
            if os.path.exists(path):
                print("guest %s: %s" % (name, open(path).read().strip()), file=sys.stderr)
        if a.keep and os.path.isdir(os.path.join(out, "kept")):
            shutil.copytree(os.path.join(out, "kept"), a.keep, dirs_exist_ok=True)
        path = os.path.join(out, "guest-out.txt")
        if os.path.exists(path):
            sys.stdout.write(open(path).read())
        elif got.returncode != 0:
            log = os.path.join(out, "serial.log")
            tail = open(log).read()[-3000:] if os.path.exists(log) else ""
            sys.exit("commands.py: the guest failed; its console ended:\n" + tail)
        return got.returncode
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
