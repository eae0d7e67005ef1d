//! `compare` from a shared store of 1 000 runs: how long it answers.
//!
//!     cargo bench --bench store -- RESULT.json [--rounds N] [--envbench PATH]
//!
//! RESULT.json: a path from the package's root (where cargo runs a
//! bench) or an absolute one; without one the bench says it is skipped.
//! Starts a PostgreSQL server of its own (tests/common/pg.rs: Debian's
//! initdb and pg_ctl in a temporary directory, as nobody when run as root,
//! on a Unix socket only), fills it and an SQLite file with 1 000 runs
//! made from one real result file (100 labels of 10 runs, each label spread
//! over 5 hosts), then times, in turns, each `--rounds` times (9):
//!
//!   files   envbench compare A.json... B.json...   (the same runs from files)
//!   store   envbench compare --db URL env0 env1     (the store answers by label)
//!   host    envbench compare --db URL env0 env1 --where host=h1
//!   sqlite  the same as `store` against the SQLite file
//!   list    envbench history --db URL --json        (all 1 000 entries)
//!
//! and prints each one's median with a 95 % interval of the median (order
//! statistics), and the ratio store/files round by round: what the store
//! adds to a comparison. Everything it makes is inside temporary
//! directories removed on every way out (Ctrl-C included), the server
//! stopped first. A benchmark, not a test: nothing else may measure
//! meanwhile.

mod common;

#[path = "../tests/common/pg.rs"]
#[allow(dead_code)]
mod pg;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

const RUNS: usize = 1000;

fn main() -> ExitCode {
    let usage = "usage: cargo bench --bench store -- RESULT.json [--rounds N] [--envbench PATH]";
    let (result, rounds, exe) = match parse_args() {
        Ok((Some(r), rounds, exe)) => (r, rounds, common::envbench(exe)),
        Ok((None, ..)) => {
            // `cargo bench` runs every bench: this one needs a result file
            println!("store: skipped: no result file given ({usage})");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("store: {e}\n{usage}");
            return ExitCode::from(2);
        }
    };
    common::run_main("store", |stop| {
        // the runs' directory goes when `tmp` drops, and before it
        // (declared after it) the server stops and its directory goes, on
        // every return
        let tmp = common::scratch("envbench-store-bench-")?;
        let server = pg::PgServer::start().map_err(|e| format!("cannot start PostgreSQL: {e}"))?;
        measure(&exe, &result, rounds, &server.url(), tmp.path(), stop)
    })
}

/// RESULT.json (None without), `--rounds N` (9 without) and `--envbench
/// PATH`; cargo's own `--bench` is passed on to a bench and left alone.
fn parse_args() -> Result<(Option<PathBuf>, usize, Option<String>), String> {
    let (mut result, mut rounds, mut exe) = (None, 9, None);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&n: &usize| n >= 6)
                    .ok_or("--rounds takes a count of at least 6 (for the median's interval)")?;
            }
            "--envbench" => exe = Some(args.next().ok_or("--envbench takes a path")?),
            "--bench" => {}
            _ if result.is_none() && !a.starts_with('-') => result = Some(PathBuf::from(a)),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok((result, rounds, exe))
}

/// Writes the runs, pushes them into both stores, times the commands and
/// reports them.
fn measure(
    exe: &str,
    result: &Path,
    rounds: usize,
    url: &str,
    tmp: &Path,
    stop: &AtomicBool,
) -> Result<(), String> {
    let text = std::fs::read_to_string(result).map_err(|e| format!("{}: {e}", result.display()))?;
    let labels = write_runs(&text, tmp, stop)?;
    let sqlite = tmp.join("h.sqlite3").display().to_string();
    for (db, name) in [(url, "PostgreSQL"), (sqlite.as_str(), "SQLite")] {
        let t0 = Instant::now();
        for chunk in labels.chunks(10) {
            let mut args = vec!["store".to_string(), "push".into(), "--db".into(), db.into()];
            args.extend(chunk.iter().flatten().cloned());
            common::timed(exe, &args, &tmp.join("xdg"), stop)?;
        }
        println!(
            "pushed {RUNS} runs ({} KiB each) into {name} in {:.1} s",
            text.len() / 1024,
            t0.elapsed().as_secs_f64()
        );
    }
    let commands = commands(&labels, url, &sqlite);
    let mut times = vec![Vec::new(); commands.len()];
    for _ in 0..rounds {
        for ((_, args), t) in commands.iter().zip(&mut times) {
            t.push(common::timed(exe, args, &tmp.join("xdg"), stop)?);
        }
    }
    let names: Vec<&str> = commands.iter().map(|(n, _)| *n).collect();
    report(&names, &times);
    Ok(())
}

/// The run of `text` written [`RUNS`] times into `tmp`, run `i` labelled
/// `env{i / 10}` on host `h{i % 5}`: each label's files.
fn write_runs(text: &str, tmp: &Path, stop: &AtomicBool) -> Result<Vec<Vec<String>>, String> {
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut labels: Vec<Vec<String>> = vec![Vec::new(); RUNS / 10];
    for i in 0..RUNS {
        common::heard(stop)?;
        let mut d = doc.clone();
        d["run_id"] = format!("bench-{i:04}").into();
        d["label"] = format!("env{}", i / 10).into();
        d["fingerprint"]["os"]["hostname"] = format!("h{}", i % 5).into();
        let path = tmp.join(format!("r{i:04}.json"));
        let bytes = serde_json::to_vec(&d).map_err(|e| e.to_string())?;
        let mut f =
            std::fs::File::create_new(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        std::io::Write::write_all(&mut f, &bytes).map_err(|e| e.to_string())?;
        labels[i / 10].push(path.display().to_string());
    }
    Ok(labels)
}

/// The commands timed, each with its name: `files` first, `store` second
/// (their ratio is reported).
fn commands(labels: &[Vec<String>], url: &str, sqlite: &str) -> Vec<(&'static str, Vec<String>)> {
    let words = |w: &[&str]| -> Vec<String> { w.iter().map(|s| s.to_string()).collect() };
    let mut files = words(&["compare"]);
    files.extend(labels[0].iter().chain(&labels[1]).cloned());
    vec![
        ("files", files),
        ("store", words(&["compare", "--db", url, "env0", "env1"])),
        (
            "host",
            words(&["compare", "--db", url, "env0", "env1", "--where", "host=h1"]),
        ),
        (
            "sqlite",
            words(&["compare", "--db", sqlite, "env0", "env1"]),
        ),
        ("list", words(&["history", "--db", url, "--json"])),
    ]
}

/// Each command's median seconds with its interval ([`median_ci`]), and
/// the ratio store/files round by round.
fn report(names: &[&str], times: &[Vec<f64>]) {
    println!(
        "{:8} {:>9}  95 % interval of the median",
        "command", "median s"
    );
    for (name, t) in names.iter().zip(times) {
        let (m, lo, hi) = median_ci(t);
        println!("{name:8} {m:9.3}  {lo:.3} .. {hi:.3}");
    }
    let ratios: Vec<f64> = times[1].iter().zip(&times[0]).map(|(s, f)| s / f).collect();
    let (m, lo, hi) = median_ci(&ratios);
    println!("store/files ratio (10 vs 10 runs, {RUNS} stored): {m:.3} ({lo:.3} .. {hi:.3})");
}

/// The median and a 95 % interval of it from order statistics (as
/// bench/store.py gave it; envbench's own statistics are the crate's
/// private module).
fn median_ci(xs: &[f64]) -> (f64, f64, f64) {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let m = if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    };
    let k = ((n as f64 / 2.0 - 1.96 * (n as f64).sqrt() / 2.0).max(0.0)) as usize;
    (m, s[k], s[n - 1 - k])
}
