//! Large inputs answer in seconds, and their time grows linearly.
//!
//!     cargo bench --bench scale [-- --scale 0.1] [--envbench PATH]
//!
//! The three inputs that once took over a minute each (tests/common/
//! large.rs): a dd log of 100 000 summaries in 15 000 cases for `import
//! --from dd`, a result file of 100 000 cases in 30 000 families for
//! `show`, and one case with 20 metrics of 100 000 samples for `show
//! --all-metrics`, whose summaries and intervals are recomputed when the
//! file is read. Each at a quarter, a half and the whole of its size, in a
//! temporary directory removed on every way out (Ctrl-C too), timed once
//! (wall clock: seconds, not the microseconds the suites measure), with
//! the exponent of the growth: the slope of log time on log size over the
//! three sizes, 1 linear, 2 quadratic. Exits 1 when an exponent exceeds
//! 1.4 or a whole input takes more than 10 s. tests/bad_input.rs reads
//! inputs of the same shapes, smaller, and checks the results; only this
//! bench looks at time. A benchmark, not a test: nothing else may measure
//! meanwhile.

mod common;

#[path = "../tests/common/large.rs"]
mod large;

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

/// The most a whole input may take.
const LIMIT_SECS: f64 = 10.0;
/// n log n reads about 1.1 here, a quadratic loop 2; writing a 220 MB
/// output adds page faults and reallocation that read 1.2-1.35.
const LINEAR_UP_TO: f64 = 1.4;

/// The dd log's summaries at its whole size: one import takes at most
/// 100 000 summaries and makes at most 20 000 cases (bench/scale.py's log
/// of 150 000 different byte counts had been refused since those limits
/// came in). Its summaries fall in cases of about 6.7 each at every size
/// (15 000 at the whole), so that the size alone grows: a case's interval
/// costs a bootstrap that one sample does not.
const DD_SUMMARIES: u64 = 100_000;

/// An input: its name, its whole size, how it is written into a
/// directory (returning the file) and the envbench arguments that read it.
struct Input {
    name: &'static str,
    full: u64,
    make: fn(&Path, u64) -> String,
    args: fn(&str) -> Vec<String>,
}

fn main() -> ExitCode {
    let (scale, exe) = match parse_args() {
        Ok((s, exe)) => (s, common::envbench(exe)),
        Err(e) => {
            eprintln!("scale: {e}");
            return ExitCode::from(2);
        }
    };
    common::run_main("scale", |stop| {
        // the temporary directory goes when `tmp` drops, on every return
        let tmp = common::scratch("envbench-scale-")?;
        let grown = measure(&exe, tmp.path(), scale, stop)?;
        if report(&grown) {
            Ok(())
        } else {
            Err("an input grew faster than linearly or took too long (above)".into())
        }
    })
}

/// `--scale F` (every size multiplied, at most 1: the dd log's whole size
/// is an import's limit; 0.1 for a quick look), 1 without, and
/// `--envbench PATH`; cargo's own `--bench` is passed on to a bench and
/// left alone.
fn parse_args() -> Result<(f64, Option<String>), String> {
    let mut args = std::env::args().skip(1);
    let (mut scale, mut exe) = (1.0, None);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--scale" => {
                scale = args
                    .next()
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|v| *v > 0.0 && *v <= 1.0)
                    .ok_or("--scale takes a number above 0 and at most 1 (0.1: a quick look)")?;
            }
            "--envbench" => exe = Some(args.next().ok_or("--envbench takes a path")?),
            "--bench" => {}
            other => {
                return Err(format!(
                    "unknown argument {other} (--scale F, --envbench PATH)"
                ))
            }
        }
    }
    Ok((scale, exe))
}

/// An input's seconds at a quarter, a half and the whole of its size.
struct Grown {
    name: &'static str,
    /// Its whole size (summaries, cases or samples).
    full: u64,
    /// (size, seconds) at the three sizes, smallest first.
    secs: Vec<(f64, f64)>,
}

/// Times every input at its three sizes.
fn measure(exe: &str, tmp: &Path, scale: f64, stop: &AtomicBool) -> Result<Vec<Grown>, String> {
    let inputs = [
        Input {
            name: "import --from dd",
            full: DD_SUMMARIES,
            make: |d, n| write(d, "dd.txt", large::dd_log(n, n * 3 / 20).as_bytes()),
            args: |p| words(&["import", "--from", "dd", p, "-o", &format!("{p}.json")]),
        },
        Input {
            name: "show, many cases",
            full: 100_000,
            make: |d, n| json(d, large::many_cases(n)),
            args: |p| words(&["show", p]),
        },
        Input {
            name: "show, 20 x many samples",
            full: 100_000,
            make: |d, n| json(d, vec![large::many_samples(n)]),
            args: |p| words(&["show", p, "--all-metrics"]),
        },
    ];
    let mut grown = Vec::new();
    for (k, input) in inputs.iter().enumerate() {
        let full = ((input.full as f64 * scale) as u64).max(8);
        let mut secs = Vec::new();
        for n in [full / 4, full / 2, full] {
            let dir = tmp.join(format!("{k}-{n}"));
            std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            common::heard(stop)?;
            let path = (input.make)(&dir, n);
            let t = common::timed(exe, &(input.args)(&path), &tmp.join("xdg"), stop)?;
            secs.push((n as f64, t));
        }
        grown.push(Grown {
            name: input.name,
            full,
            secs,
        });
    }
    Ok(grown)
}

/// Prints a row an input, with the exponent of its growth ([`slope`]);
/// whether every one grew linearly within the limit.
fn report(grown: &[Grown]) -> bool {
    let mut linear = true;
    println!(
        "{:<26}{:>9}{:>8}{:>9}{:>8}  exponent",
        "input", "size", "secs", "size/4", "secs"
    );
    for g in grown {
        let exponent = slope(&g.secs);
        let (quarter, whole) = (g.secs[0].1, g.secs[2].1);
        let bad = exponent > LINEAR_UP_TO || whole > LIMIT_SECS;
        linear &= !bad;
        println!(
            "{:<26}{:>9}{whole:>8.2}{:>9}{quarter:>8.2}  {exponent:.2}{}",
            g.name,
            g.full,
            g.full / 4,
            if bad { "  NOT LINEAR OR SLOW" } else { "" }
        );
    }
    println!(
        "linear (exponent at most {LINEAR_UP_TO}) and under {LIMIT_SECS:.0} s: {}",
        if linear { "yes" } else { "no" }
    );
    linear
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// Writes `bytes` to a new file `name` in `dir`; its path.
fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    let mut f = std::fs::File::create_new(&path).expect("a new file in the bench's directory");
    std::io::Write::write_all(&mut f, bytes).expect("the input written");
    path.display().to_string()
}

/// A result file of `cases` in `dir`; its path.
fn json(dir: &Path, cases: Vec<serde_json::Value>) -> String {
    let path = dir.join("result.json");
    large::result_file(&path, cases);
    path.display().to_string()
}

/// The least-squares slope of log time on log size.
fn slope(points: &[(f64, f64)]) -> f64 {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .map(|&(n, t)| (n.ln(), t.max(1e-3).ln()))
        .collect();
    let k = logs.len() as f64;
    let (mx, my) = (
        logs.iter().map(|p| p.0).sum::<f64>() / k,
        logs.iter().map(|p| p.1).sum::<f64>() / k,
    );
    let num: f64 = logs.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let den: f64 = logs.iter().map(|(x, _)| (x - mx).powi(2)).sum();
    num / den
}
