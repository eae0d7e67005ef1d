//! envbench's `run --cmd` against hyperfine, on the pairs people feel:
//! what [`HELP`] says (`cargo bench --bench commands -- --help`). The
//! method: docs/diagnosis.md, "A person's command against hyperfine".

#[path = "../common/mod.rs"]
#[allow(dead_code)]
mod common;
mod fixture;
mod tools;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::AtomicBool;

use fixture::{commands, fixture, write_new};
use tools::{compared, envbench_run, on_path, quoted, reference, run, run_out, tail, Place, Timed};

const USAGE: &str = "usage: cargo bench --bench commands -- --pair fuse|gvisor|dirs|guest \
[--dirs A,B] [--guest CACHE] [--rounds N] [--runs N] [--only NAME,...] [--keep DIR] [--envbench PATH]";
const HELP: &str = "\
Commands (--only; all but status1 by default):
  status   git status in a 1 000-file repository
  status1  the same without its preload threads (its lstats one at a
           time, as envbench's prediction adds them up)
  grep     grep -r over the repository's tree
  untar    tar -xzf of its tarball, then rm -r
  make     make of a small C project (make clean before each run)
  imports  python3 importing twelve modules from the end of a
           30-directory sys.path
  db       Debian's sqlite3 on app.db's quick work (20 transactions of 8
           rows, synchronous=FULL), rollback journal; dbwal: write-ahead

Each is timed on a pair of environments by hyperfine (-N, 3 warm-ups,
--runs runs a side, 15) and by envbench (run --cmd, both sides in one
run) in turns, --rounds times (4); each round's pair of slowdowns is
judged by `envbench __band` against 0.9..1.1, as `envbench fidelity`
judges a row. Prints one row a command, tab-separated, with envbench's
prediction and the app case that stands for the command. The pairs:
  fuse    a local ext4 directory against a bindfs mount of a copy of it;
  gvisor  this host against `runsc do` (the same directory);
  dirs    any two directories (--dirs A,B), a copy of the fixture in each;
  guest   a QEMU guest's own ext4 disk against its 9p share of a host
          directory (--guest CACHE: tests/layers/qemu.sh boots it, its
          kernel kept in CACHE, and this bench runs inside it as --pair
          dirs; TCG where KVM cannot boot, so only the slowdowns between
          the guest's two directories are read).
Relative paths are read from the package's root, where cargo runs a
bench. Everything it makes is inside directories it makes (or --keep),
removed, the bindfs mount undone first, on every way out, Ctrl-C
included. A benchmark, not a test: nothing else may measure meanwhile.";
#[derive(Default)]
struct Args {
    pair: Option<String>,
    dirs: Option<(PathBuf, PathBuf)>,
    guest: Option<PathBuf>,
    rounds: usize,
    runs: usize,
    only: Vec<String>,
    keep: Option<PathBuf>,
    exe: Option<String>,
}

fn parse_args(words: impl Iterator<Item = String>) -> Result<Args, String> {
    let known: Vec<&str> = commands().iter().map(|c| c.name).collect();
    let mut a = Args {
        rounds: 4,
        runs: 15,
        ..Args::default()
    };
    let mut words = words.peekable();
    while let Some(w) = words.next() {
        let mut value = || words.next().ok_or(format!("{w} takes a value"));
        match w.as_str() {
            "--pair" => {
                let p = value()?;
                if !["fuse", "gvisor", "dirs", "guest"].contains(&p.as_str()) {
                    return Err(format!("unknown pair {p}"));
                }
                a.pair = Some(p);
            }
            "--dirs" => {
                let v = value()?;
                match v.split(',').collect::<Vec<_>>()[..] {
                    [x, y] if !x.is_empty() && !y.is_empty() => {
                        a.dirs = Some((PathBuf::from(x), PathBuf::from(y)))
                    }
                    _ => return Err("--dirs takes A,B: two directories".into()),
                }
            }
            "--guest" => a.guest = Some(PathBuf::from(value()?)),
            "--rounds" | "--runs" => {
                let n = value()?
                    .parse()
                    .ok()
                    // hyperfine times at least 2 runs
                    .filter(|&n: &usize| n >= if w == "--runs" { 2 } else { 1 })
                    .ok_or(format!(
                        "{w} takes a count of at least {}",
                        if w == "--runs" { 2 } else { 1 }
                    ))?;
                *(if w == "--rounds" {
                    &mut a.rounds
                } else {
                    &mut a.runs
                }) = n;
            }
            "--only" => {
                a.only = value()?.split(',').map(str::to_string).collect();
                if let Some(bad) = a.only.iter().find(|n| !known.contains(&n.as_str())) {
                    return Err(format!(
                        "unknown command {bad} (one of {})",
                        known.join(", ")
                    ));
                }
            }
            "--keep" => a.keep = Some(PathBuf::from(value()?)),
            "--envbench" => a.exe = Some(value()?),
            "-h" | "--help" => return Err("help".into()),
            // cargo's own, passed on to every bench
            "--bench" => {}
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if (a.pair.as_deref() == Some("dirs")) != a.dirs.is_some() {
        return Err("--dirs A,B (two directories) goes with --pair dirs, and only with it".into());
    }
    if a.pair.as_deref() == Some("guest") && a.guest.is_none() {
        return Err("--pair guest needs --guest CACHE (the guest kernel's cache)".into());
    }
    if a.only.is_empty() {
        a.only = known
            .iter()
            .filter(|&&n| n != "status1")
            .map(|n| n.to_string())
            .collect();
    }
    Ok(a)
}

fn main() -> ExitCode {
    let a = match parse_args(std::env::args().skip(1)) {
        Ok(a) if a.pair.is_none() => {
            // `cargo bench` runs every bench: this one needs a pair
            println!("commands: skipped: no --pair given ({USAGE})");
            return ExitCode::SUCCESS;
        }
        Ok(a) => a,
        Err(e) if e == "help" => {
            println!("{USAGE}\n\n{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("commands: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    common::run_main("commands", |stop| {
        let exe = fs::canonicalize(common::envbench(a.exe.clone()))
            .map_err(|e| format!("the envbench to time: {e}"))?;
        let exe = exe.display().to_string();
        if a.pair.as_deref() == Some("guest") {
            in_guest(&a, &exe)
        } else {
            measure(&a, &exe, stop)
        }
    })
}

/// A bindfs mount, undone when it drops (before the directories it is in):
/// lazily where it is busy, so that it is detached before they go.
struct Mount(Option<PathBuf>);

impl Drop for Mount {
    fn drop(&mut self) {
        if let Some(m) = &self.0 {
            let quiet = |args: &[&str]| {
                Command::new("fusermount")
                    .args(args)
                    .arg(m)
                    .stderr(Stdio::null())
                    .status()
            };
            if !quiet(&["-u"]).is_ok_and(|s| s.success())
                && !quiet(&["-u", "-z"]).is_ok_and(|s| s.success())
            {
                eprintln!("commands: cannot unmount {}", m.display());
            }
        }
    }
}

/// Side B's directory: a copy of the fixture in the second of `--dirs`, a
/// bindfs mount of a copy (`mount` set once it is mounted), or `base`.
fn other_side(
    pair: &str,
    base: &Path,
    second: Option<&tempfile::TempDir>,
    tmp: &Path,
    mount: &mut Mount,
) -> Result<PathBuf, String> {
    if pair != "fuse" && pair != "dirs" {
        return Ok(base.to_path_buf());
    }
    let (under, other) = match second {
        Some(d) => (d.path().join("copy"), d.path().join("copy")),
        None => (tmp.join("under"), tmp.join("fuse")),
    };
    let text = |p: &Path| p.display().to_string();
    if !under.exists() {
        // copied beside it, then renamed: a copy cut short is never reused
        let part = under.with_extension("part");
        if part.exists() {
            fs::remove_dir_all(&part).map_err(|e| format!("{}: {e}", part.display()))?;
        }
        run(&["cp", "-a", &text(base), &text(&part)], tmp, None)?;
        fs::rename(&part, &under).map_err(|e| e.to_string())?;
    }
    if pair == "fuse" {
        fs::create_dir_all(&other).map_err(|e| e.to_string())?;
        run(&["bindfs", &text(&under), &text(&other)], tmp, None)?;
        mount.0 = Some(other.clone());
    }
    Ok(other)
}

fn measure(a: &Args, exe: &str, stop: &AtomicBool) -> Result<(), String> {
    let pair = a.pair.as_deref().unwrap_or_default();
    // declared first, so dropped last: the mount is undone before them
    let scratch = match &a.keep {
        Some(k) => {
            fs::create_dir_all(k).map_err(|e| format!("{}: {e}", k.display()))?;
            None
        }
        None => Some(common::scratch("envbench-commands-")?),
    };
    let tmp = fs::canonicalize(
        scratch
            .as_ref()
            .map_or_else(|| a.keep.clone().unwrap_or_default(), |s| s.path().into()),
    )
    .map_err(|e| e.to_string())?;
    let made: Vec<tempfile::TempDir> = match &a.dirs {
        Some((x, y)) => [x, y]
            .iter()
            .map(|d| {
                tempfile::Builder::new()
                    .prefix("envbench-commands-")
                    .tempdir_in(d)
            })
            .collect::<Result<_, _>>()
            .map_err(|e| format!("--dirs: {e}"))?,
        None => Vec::new(),
    };
    // a history of its own, new each time: compare takes a person's
    // earlier runs as evidence for a side of one run
    let xdg = tempfile::Builder::new()
        .prefix("xdg-")
        .tempdir_in(&tmp)
        .map_err(|e| e.to_string())?;
    let base = made
        .first()
        .map_or_else(|| tmp.join("local"), |d| d.path().to_path_buf());
    // the fixture's last file: one cut short by Ctrl-C (under --keep) is
    // removed and made again
    if !base.join("p29/m11.py").exists() {
        if made.is_empty() && base.exists() {
            fs::remove_dir_all(&base).map_err(|e| format!("{}: {e}", base.display()))?;
        }
        fs::create_dir_all(&base).map_err(|e| e.to_string())?;
        fixture(&base, stop)?;
    }
    let mut mount = Mount(None);
    let other = other_side(pair, &base, made.get(1), &tmp, &mut mount)?;
    let place = Place {
        tmp: tmp.clone(),
        xdg: xdg.path().into(),
        base,
        other,
    };
    println!(
        "command\thyperfine\t(range)\tenvbench\t[95 %]\tpredicted [95 %]\
         \tenvbench/hyperfine [95 %]\tverdict\tapp case\t[95 %]\tapp/hyperfine"
    );
    let all = commands();
    for c in a
        .only
        .iter()
        .filter_map(|n| all.iter().find(|c| c.name == n))
    {
        if !on_path(&c.words[0]) {
            eprintln!("{}: no {} here; its row is left out", c.name, c.words[0]);
            continue;
        }
        let row = one(a, exe, pair, &place, c, stop)?;
        println!("{row}");
    }
    Ok(())
}

/// One command's row: the tools in turns, so that the host's drift falls
/// on both (each first in every other turn, so that neither always meets
/// the caches the other just warmed).
fn one(
    a: &Args,
    exe: &str,
    pair: &str,
    p: &Place,
    c: &Timed,
    stop: &AtomicBool,
) -> Result<String, String> {
    let (mut ratios, mut files, mut pairs) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..a.rounds {
        let mut mine = None;
        if r % 2 == 1 {
            mine = Some(envbench_run(exe, pair, p, c, r)?);
        }
        ratios.push(reference(pair, p, c, r, a.runs)?);
        common::heard(stop)?;
        let mine = match mine {
            Some(m) => m,
            None => envbench_run(exe, pair, p, c, r)?,
        };
        common::heard(stop)?;
        let ours = compared(exe, pair, &mine, p)?.1["ratio"]
            .as_f64()
            .ok_or(format!(
                "{}: round {}: compare gave no ratio",
                c.name,
                r + 1
            ))?;
        pairs.push(format!("{ours:?},{:?}", ratios[r]));
        files.extend(mine);
    }
    let hf = (ratios.iter().map(|r: &f64| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
    let (lo, hi) = ratios
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), &r| (l.min(r), h.max(r)));
    let (doc, m) = compared(exe, pair, &files, p)?;
    let key = m["key"].as_str().unwrap_or_default();
    let attr = doc["attributions"]
        .as_array()
        .and_then(|v| v.iter().find(|x| x["key"] == key));
    let pred = attr.map_or("-".to_string(), |x| {
        let ci = x["predicted_ci"]
            .as_array()
            .map(|v| v.iter().filter_map(|y| y.as_f64()).collect::<Vec<_>>());
        match (x["predicted"].as_f64(), ci.as_deref()) {
            (Some(v), Some([l, h])) => format!("{v:.2} [{l:.2}, {h:.2}]"),
            (Some(v), _) => format!("{v:.2}"),
            _ => x["missing"].as_str().unwrap_or("-").to_string(),
        }
    });
    let (bench, param) = c.app;
    let app = doc["metrics"].as_array().and_then(|ms| {
        ms.iter().find(|x| {
            let k = x["key"].as_str().unwrap_or_default();
            k.starts_with(&format!("{bench}["))
                && x["primary"] == true
                && param.is_none_or(|q| k.contains(q))
        })
    });
    let num = |v: &serde_json::Value, i: Option<usize>| {
        i.map_or(&v["ratio"], |i| &v["ratio_ci"][i])
            .as_f64()
            .unwrap_or(f64::NAN)
    };
    let ar = app.map_or([f64::NAN; 3], |x| {
        [num(x, None), num(x, Some(0)), num(x, Some(1))]
    });
    let mut band = vec!["__band".to_string(), "--band".into(), "0.9..1.1".into()];
    band.extend(pairs);
    let said = run_out(exe, &band, p)?;
    let j: Vec<&str> = said.trim().split('\t').collect();
    let shown = match j.get(1..3) {
        Some(["-", _]) | None => "[-]".to_string(),
        Some([l, h]) => format!(
            "[{:.3}, {:.3}]",
            l.parse::<f64>().unwrap_or(f64::NAN),
            h.parse::<f64>().unwrap_or(f64::NAN)
        ),
        Some(_) => "[-]".to_string(),
    };
    Ok(format!(
        "{}\t{hf:.2}\t({lo:.2}..{hi:.2})\t{:.2}\t[{:.2}, {:.2}]\t{pred}\t{:.3} {shown}\t{}\t{bench} {:.2}\t[{:.2}, {:.2}]\t{:.3}",
        c.name,
        num(&m, None),
        num(&m, Some(0)),
        num(&m, Some(1)),
        j[0].parse::<f64>().unwrap_or(f64::NAN),
        j.get(3).unwrap_or(&"?"),
        ar[0],
        ar[1],
        ar[2],
        ar[0] / hf
    ))
}

/// Where the guest's run writes its stderr, in the share's `kept/`.
const GUEST_STDERR: &str = "guest-stderr.txt";

/// This bench, run as `--pair dirs` on a QEMU guest's disk and share
/// (tests/layers/qemu.sh with QEMU_GUEST_RUN; the guest's root is the
/// host's, read-only, so the tools and this binary's libraries are
/// there); prints what it printed.
fn in_guest(a: &Args, exe: &str) -> Result<(), String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let tmp = common::scratch("envbench-commands-guest-")?;
    // the guest mounts tmpfs over /tmp and /mnt, which can hide this
    // binary: qemu.sh copies it into the share (QEMU_GUEST_BIN)
    let mut inner = vec!["/mnt/share/bench".to_string()];
    inner.extend(
        [
            "--pair",
            "dirs",
            "--dirs",
            "/mnt/disk,/mnt/share",
            "--envbench",
            "/mnt/share/envbench",
        ]
        .map(String::from),
    );
    inner.extend([
        "--rounds".into(),
        a.rounds.to_string(),
        "--runs".into(),
        a.runs.to_string(),
    ]);
    inner.extend(["--only".into(), a.only.join(",")]);
    if a.keep.is_some() {
        // the result files, written to the share and copied out after
        inner.extend(["--keep".into(), "/mnt/share/kept".into()]);
    }
    let script = tmp.path().join("guest.sh");
    write_new(
        &script,
        &format!(
            "export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin\nmkdir -p /mnt/share/kept\n\
             {} > /mnt/share/guest-out.txt 2> /mnt/share/kept/{GUEST_STDERR}\n",
            quoted(&inner)
        ),
        None,
    )?;
    let out = tmp.path().join("out");
    fs::create_dir(&out).map_err(|e| e.to_string())?;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new("bash")
        .arg(repo.join("tests/layers/qemu.sh"))
        .args([
            Path::new(exe),
            &out,
            a.guest.as_deref().unwrap_or(Path::new("")),
            Path::new("--"),
        ])
        .env("QEMU_GUEST_RUN", &script)
        .env("QEMU_GUEST_BIN", &me)
        .env(
            "TIMEOUT_S",
            std::env::var("TIMEOUT_S").unwrap_or("3000".into()),
        )
        .status()
        .map_err(|e| format!("cannot start qemu.sh: {e}"))?;
    for name in ["accel", "exit-code"] {
        if let Ok(s) = fs::read_to_string(out.join(name)) {
            eprintln!("guest {name}: {}", s.trim());
        }
    }
    if let (Some(k), true) = (&a.keep, out.join("kept").is_dir()) {
        fs::create_dir_all(k).map_err(|e| e.to_string())?;
        run(
            &[
                "cp",
                "-a",
                &format!("{}/.", out.join("kept").display()),
                &k.display().to_string(),
            ],
            tmp.path(),
            None,
        )?;
    }
    // the table alone on stdout, as on the host; the guest's warnings and
    // progress on stderr (qemu.sh copies the share's kept/ out, so that
    // is where they were written)
    if let Ok(said) = fs::read_to_string(out.join("kept").join(GUEST_STDERR)) {
        eprint!("{said}");
    }
    let inner = fs::read_to_string(out.join("exit-code")).unwrap_or_default();
    match fs::read_to_string(out.join("guest-out.txt")) {
        Ok(s) => print!("{s}"),
        Err(_) => {
            // qemu.sh failed or timed out (TIMEOUT_S) before copying it
            let log = fs::read_to_string(out.join("serial.log")).unwrap_or_default();
            return Err(format!(
                "qemu.sh: {status}; the guest's output never came back; its console ended:\n{}",
                tail(&log, 3000)
            ));
        }
    }
    if !status.success() || inner.trim() != "0" {
        return Err(format!(
            "the guest's run failed ({status}, its bench's exit code {})",
            inner.trim()
        ));
    }
    Ok(())
}
