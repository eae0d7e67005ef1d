#!/usr/bin/env bash
# envbench apptools: the app family against the real tools it stands for,
# on a pair of directories of this machine: a local directory against a
# bindfs FUSE mount of another (the default pair), or any two given; or on
# one kind of directory in two environments, this machine as it is against
# one entered by a command prefix (--in, e.g. gVisor's `runsc do`); or
# inside a QEMU guest, its own ext4 disk against its 9p share of a host
# directory (--guest CACHE: tests/layers/qemu.sh boots it, its kernel kept
# in CACHE; TCG where KVM cannot boot, so every figure there is emulated
# and only the slowdowns between the guest's two directories are read).
# For the same generated tree (the app family's layout: 40 files to a
# directory, 1-7 KiB of source-like text), ROUNDS times, the two sides
# alternated (the order flipped every round):
#   git status   `git status --porcelain` in a committed clone of the tree
#   grep -r      `grep -r -c --exclude-dir=.git envbench_needle .` over the
#                tree (the clone's .git holds as many files again, which
#                app.search's tree does not)
#   git status, one thread
#                the same with `-c core.preloadIndex=false`: git's index
#                refresh lstats on up to 20 threads at once by default,
#                app.status (and this row) one at a time
#   tar          `tar -xzmf --no-same-owner --no-same-permissions` of the
#                tree's tarball into a fresh directory, then `rm -r` of it
#                (as root, tar would also fchown and fchmod every file: two
#                calls a user's tar does not make and app.unpack does not
#                count)
#   sqlite3      the sqlite3 command-line tool on a script of app.db's quick
#                work: 20 transactions of 8 rows with synchronous=FULL into
#                a fresh database, with a rollback journal and (a row apart)
#                with a write-ahead log (Debian's SQLite, not the one built
#                into envbench)
# and envbench's app.status, app.search, app.unpack and app.db on the same
# two directories (one `run --only app,io,cpu.int,os.syscall` with both
# --dirs, compared with `compare --by-dir`; with --in, one interleaved run
# `--in host --in in=PREFIX` of the same cases, compared with `compare`).
# Prints, per tool, its slowdown (second side against the first) as a
# geometric mean with a 95 % interval over the rounds, beside its app
# case's slowdown and interval.
# Each timing is taken inside its side: a small Python program there runs
# the tool once untimed, then once timed, and prints the seconds, so an
# environment's own start (a sandbox's, entered anew for every timing) is
# in no figure, as it is in none of envbench's.
# This is a benchmark, not a test; CI does not run it. Nothing else may
# measure on the machine meanwhile.
#   bench/apptools.sh [--rounds N] [--files N] [--dirs A,B | --in PREFIX | --guest CACHE]
#                     [--keep DIR] [--tsv FILE]
# --tsv FILE also writes the rows to FILE (new; not with --guest), one a
# line, tab-separated: tool, its slowdown, its 95 % interval's low and
# high, the app case, its slowdown, its interval's low and high.
set -euo pipefail

rounds=7
files=1000
dirs=""
prefix=""
guest=""
keep=""
tsv=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --dirs) dirs=$2; shift 2 ;;
    --in) prefix=$2; shift 2 ;;
    --guest) guest=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --tsv) tsv=$2; shift 2 ;;
    -h|--help) sed -n '2,49p' "$0"; exit 0 ;;
    *) echo "apptools.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
modes=0
for m in "$dirs" "$prefix" "$guest"; do [ -z "$m" ] || modes=$((modes + 1)); done
[ "$modes" -le 1 ] || { echo "apptools.sh: give one of --dirs, --in and --guest" >&2; exit 2; }
if [ -n "$guest" ] && [ -n "$tsv" ]; then
  echo "apptools.sh: --tsv is not written from a guest" >&2; exit 2
fi
if [ -n "$tsv" ] && [ -e "$tsv" ]; then
  echo "apptools.sh: $tsv exists; --tsv writes a new file" >&2; exit 2
fi
if [ -n "$guest" ] && [ -n "$keep" ]; then
  echo "apptools.sh: --keep is not kept from a guest (its files stay in the guest's memory)" >&2; exit 2
fi
. "$(dirname "$0")/common.sh"
workdir apptools
mounted=""
# the mount goes before the directory under it is removed
trap 'if [ -n "$mounted" ]; then fusermount -u "$mounted" 2>/dev/null || umount "$mounted" 2>/dev/null || true; fi; if [ -n "$keep" ]; then cp "$work"/*.json "$keep"/ 2>/dev/null || true; fi; rm -rf "$work"' EXIT
build_envbench
if [ -n "$guest" ]; then
  # the guest runs this script on its two directories; its / is the
  # host's, but /tmp and /mnt are its own, so the script goes in whole
  {
    echo 'mkdir -p /tmp/bench'
    for f in common.sh apptools.sh; do
      printf "cat > /tmp/bench/%s <<'ENVBENCH_SCRIPT_END'\n" "$f"
      cat "$repo/bench/$f"
      echo 'ENVBENCH_SCRIPT_END'
    done
    printf 'ENVBENCH_BIN=/mnt/share/envbench bash /tmp/bench/apptools.sh --rounds %q --files %q --dirs /mnt/disk,/mnt/share > /mnt/share/guest-out.txt 2>&1\n' "$rounds" "$files"
  } > "$work/guest.sh"
  mkdir "$work/guest"
  echo "apptools.sh: running in a QEMU guest (tests/layers/qemu.sh); its output follows when it ends" >&2
  QEMU_GUEST_RUN="$work/guest.sh" TIMEOUT_S=${TIMEOUT_S:-2400} \
    "$repo/tests/layers/qemu.sh" "$envbench" "$work/guest" "$guest" -- \
    || { echo "apptools.sh: the guest failed; the end of its console:" >&2; tail -n 40 "$work/guest/serial.log" >&2 || true; exit 1; }
  echo "apptools.sh: guest accelerator $(cat "$work/guest/accel"), exit code $(cat "$work/guest/exit-code")" >&2
  cat "$work/guest/guest-out.txt" 2>/dev/null || echo "apptools.sh: the guest wrote no output" >&2
  exit "$(cat "$work/guest/exit-code")"
fi
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) usable CPUs" >&2

if [ -n "$prefix" ]; then
  # both sides in local directories of the same file system; the second
  # is worked in through the prefix
  mkdir "$work/host" "$work/in"
  a="$work/host"; b="$work/in"
elif [ -z "$dirs" ]; then
  command -v bindfs >/dev/null || { echo "apptools.sh: no bindfs (apt-get install bindfs), or give --dirs A,B" >&2; exit 2; }
  mkdir "$work/local" "$work/backing" "$work/fuse"
  bindfs --no-allow-other "$work/backing" "$work/fuse"
  mounted="$work/fuse"
  a="$work/local"; b="$work/fuse"; names="local,fuse"
else
  IFS=, read -r a b <<<"$dirs"
  a=$(mktemp -d "$a/envbench-apptools.XXXXXX"); b=$(mktemp -d "$b/envbench-apptools.XXXXXX")
  names="a,b"
  trap 'if [ -n "$keep" ]; then cp "$work"/*.json "$keep"/ 2>/dev/null || true; fi; rm -rf "$work" "$a" "$b"' EXIT
fi
command -v git >/dev/null || { echo "apptools.sh: no git" >&2; exit 2; }

# the tools, run in one side's directory by a program started there: it
# runs TOOL once untimed (the warm-up), then once timed, and prints the
# seconds
cat > "$work/harness.py" <<'PY'
import os, shutil, subprocess, sys, time
side, name, work = sys.argv[1], sys.argv[2], sys.argv[3]
tgz = os.path.join(work, "tree.tgz")
git_env = dict(os.environ, GIT_AUTHOR_NAME="e", GIT_AUTHOR_EMAIL="e@e", GIT_COMMITTER_NAME="e",
               GIT_COMMITTER_EMAIL="e@e", GIT_CONFIG_NOSYSTEM="1", HOME=work)
repo = os.path.join(side, "repo")

def run(cmd, **kw):
    # a tool that fails here says why in its own words, and no figure is printed
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode != 0 and not (cmd[0] == "grep" and r.returncode == 1):
        last = (r.stderr.strip().splitlines() or [""])[-1]
        sys.exit(f"{cmd[0]} exited with {r.returncode}: {last}")

def git_status():
    run(["git", "status", "--porcelain"], cwd=repo, env=git_env)
def git_status_one():
    run(["git", "-c", "core.preloadIndex=false", "status", "--porcelain"], cwd=repo, env=git_env)
def grep_r():
    run(["grep", "-r", "-c", "--exclude-dir=.git", "envbench_needle", "."], cwd=repo, env=git_env)
def tar_x():
    dest = os.path.join(side, "x")
    os.mkdir(dest)
    try:
        run(["tar", "-xzmf", tgz, "--no-same-owner", "--no-same-permissions", "-C", dest], cwd=side)
    finally:
        shutil.rmtree(dest)
def sql_script(mode):
    lines = [f"PRAGMA journal_mode={mode};", "PRAGMA synchronous=FULL;",
             "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v TEXT NOT NULL);",
             "CREATE INDEX t_k ON t(k);"]
    for i in range(20):
        lines.append("BEGIN;")
        for j in range(8):
            n = i * 8 + j
            lines.append(f"INSERT INTO t(k, v) VALUES ({n * 7919 % 100003}, '{n:0100d}');")
        lines.append("COMMIT;")
    return "\n".join(lines) + "\n"
def sqlite3(mode):
    script = sql_script(mode)
    def once():
        db = os.path.join(side, f"{mode}.db")
        try:
            run(["sqlite3", db], input=script)
        finally:
            for leftover in (db, db + "-journal", db + "-wal", db + "-shm"):
                if os.path.exists(leftover):
                    os.remove(leftover)
    return once

tools = {"git status": git_status, "git status, one thread": git_status_one, "grep -r": grep_r,
         "tar -xzmf, rm -r": tar_x, "sqlite3, rollback journal": sqlite3("delete"),
         "sqlite3, WAL": sqlite3("wal")}
fn = tools[name]
fn()
t = time.perf_counter()
fn()
print(time.perf_counter() - t)
PY

python3 - "$work" "$a" "$b" "$files" "$rounds" "$prefix" <<'PY'
import math, os, random, shlex, shutil, statistics, subprocess, sys, tarfile
work, a, b, files, rounds, prefix = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
words = "fn let mut return if else for while match struct impl pub self value count index buffer result error state node parse write read".split()

def tree(root):
    rng = random.Random(1)
    for i in range(files):
        d = os.path.join(root, f"mod{i // 40:04d}")
        os.makedirs(d, exist_ok=True)
        n = rng.randint(1024, 7168)
        text, placed = [], i % 3 != 0
        size = 0
        while size < n:
            line = " ".join(rng.choice(words) for _ in range(rng.randint(3, 10))) + ";"
            text.append(line); size += len(line) + 1
            if not placed and size >= n // 2:
                text.append(f"call(envbench_needle_{rng.randint(0, 999)});"); placed = True
        with open(os.path.join(d, f"file{i:05d}.rs"), "x") as f:
            f.write("\n".join(text)[:n - 1] + "\n")

git_env = dict(os.environ, GIT_AUTHOR_NAME="e", GIT_AUTHOR_EMAIL="e@e", GIT_COMMITTER_NAME="e",
               GIT_COMMITTER_EMAIL="e@e", GIT_CONFIG_NOSYSTEM="1", HOME=work)
src = os.path.join(work, "tree")
tree(src)
with tarfile.open(os.path.join(work, "tree.tgz"), "w:gz") as t:
    t.add(src, arcname="tree")
for side in (a, b):
    shutil.copytree(src, os.path.join(side, "repo"))
    for c in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "tree"]):
        subprocess.run(c, cwd=os.path.join(side, "repo"), check=True, env=git_env,
                       stdout=subprocess.DEVNULL)

# the second side's tools run through the prefix, the program's timing inside it
enter = {a: [], b: shlex.split(prefix)}
class Failed(Exception):
    pass
def timed(side, name):
    r = subprocess.run([*enter[side], sys.executable, os.path.join(work, "harness.py"), side, name, work],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        return float(r.stdout.split()[-1])
    except (IndexError, ValueError):
        err = (r.stderr.strip().splitlines() or [f"exit code {r.returncode}"])[-1]
        raise Failed(f"{name} failed in {side}: {err}")

tools = ["git status", "git status, one thread", "grep -r", "tar -xzmf, rm -r"]
if shutil.which("sqlite3"):
    tools += ["sqlite3, rollback journal", "sqlite3, WAL"]
else:
    print("apptools.sh: no sqlite3 (apt-get install sqlite3): its two rows are left out", file=sys.stderr)
ratios = {t: [] for t in tools}
for r in range(rounds):
    for name in list(tools):
        order = (a, b) if r % 2 == 0 else (b, a)
        try:
            t = {side: timed(side, name) for side in order}
        except Failed as e:
            # the real tool cannot work there (SQLite's WAL on a 9p share): said, and its row left out
            print(f"apptools.sh: {e}; its row is left out", file=sys.stderr)
            tools.remove(name)
            del ratios[name]
            continue
        ratios[name].append(t[b] / t[a])
with open(os.path.join(work, "tools.txt"), "w") as f:
    for name, rs in ratios.items():
        ls = [math.log(x) for x in rs]
        m, s = statistics.mean(ls), statistics.stdev(ls)
        tq = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}.get(len(ls), 2.2)
        h = tq * s / math.sqrt(len(ls))
        f.write(f"{name}\t{math.exp(m):.6g}\t{math.exp(m - h):.6g}\t{math.exp(m + h):.6g}\n")
PY

if [ -n "$prefix" ]; then
  # one interleaved run of both environments in one directory each side sees
  "$envbench" run --suite quick --only app,io,cpu.int,os.syscall,os.spawn --no-history --quiet --force \
    --dir "dir=$a" --in host --in "in=$prefix" -o "$work/app-{in}.json" >/dev/null
  "$envbench" compare "$work/app-host.json" "$work/app-in.json" --json "$work/c.json" >/dev/null
else
  "$envbench" run --suite quick --only app,io,cpu.int,os.syscall --no-history --quiet --force \
    --dir "${names%,*}=$a" --dir "${names#*,}=$b" -o "$work/app.json" >/dev/null
  "$envbench" compare --by-dir "$work/app.json" --baseline "${names%,*}" --json "$work/c.json" >/dev/null
fi
python3 - "$work" "$tsv" <<'PY'
import json, os, sys
work, tsv = sys.argv[1], sys.argv[2]
rows = []
c = json.load(open(os.path.join(work, "c.json")))
# app.db's two cases apart, by their journal
app = {a["bench"] + ("/wal" if "journal=wal" in a["key"] else ""): a for a in c.get("attributions", [])}
pairs = {"git status": "app.status", "git status, one thread": "app.status", "grep -r": "app.search",
         "tar -xzmf, rm -r": "app.unpack", "sqlite3, rollback journal": "app.db",
         "sqlite3, WAL": "app.db/wal"}
print(f"{'tool':24} {'tool slowdown':>22} {'app case':>11} {'app slowdown':>22} {'predicted':>9}  tool/app")
for line in open(os.path.join(work, "tools.txt")):
    name, g, lo, hi = line.rstrip("\n").split("\t")
    a = app.get(pairs[name])
    if a is None:
        print(f"{name:24} {g:>6} [{lo}, {hi}]  {pairs[name]}: not compared"); continue
    alo, ahi = a["measured_ci"]
    pred = f"{a['predicted']:.2f}" if a.get("predicted") else "-"
    print(f"{name:24} {float(g):6.2f} [{float(lo):.2f}, {float(hi):.2f}]  {pairs[name]:>11} "
          f"{a['measured']:6.2f} [{alo:.2f}, {ahi:.2f}] {pred:>9}  {float(g) / a['measured']:.2f}")
    rows.append((name, g, lo, hi, pairs[name], a["measured"], alo, ahi))
if tsv:
    with open(tsv, "x") as f:
        f.writelines("\t".join(str(x) for x in r) + "\n" for r in rows)
PY
