//! `envbench __score`: a comparison built from a controlled pair, scored
//! against what is known to be there, for the scripts of bench/ that build
//! such pairs from the real CLI (pairs.sh, design.sh), so that no scoring
//! lives in shell.
//!
//! It reads what `envbench compare --json` wrote. With `--expect` it
//! scores the headline verdicts: each metric's verdict against the one the
//! pair's known effect gives its case ([`Known::expects`]), the effects
//! found, the false verdicts, and the precision of the metrics whose truth
//! is "the same" (the median half-width of their 95 % intervals, and how
//! many lie within ±5 %). With `--first` it scores the diagnosis: the
//! mechanism named first against the one known to be there. `--pair`
//! scores both for one of bench/pairs.sh's pairs, whose known effects
//! are declared here ([`PAIRS`], listed by `--pairs`), not in shell.
//! `--splits` scores design.sh's A/A runs: six runs of one build split
//! every way into 3 + 3, each split compared here and scored.

use crate::error::UsageError;
use crate::results::ResultFile;
use anyhow::Context as _;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod pairs;
pub use pairs::{Known, Pair, PAIRS};

/// What `envbench __score` scores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scoring {
    /// The headline verdicts, against a known effect.
    Verdicts(Known),
    /// The mechanism named first, against this one (`none`: nothing).
    First(String),
    /// A pair of bench/pairs.sh: its verdicts where its effect is known,
    /// then the mechanism named first.
    Pair(&'static Pair),
    /// Six or more runs of one environment against itself, the first six
    /// split every way into 3 + 3 ([`splits`]), each split compared and
    /// its verdicts scored against a known effect.
    Splits(Known),
    /// The table of pairs, nothing scored.
    Pairs,
}

/// What `envbench __score` was asked.
#[derive(Debug, Clone)]
pub struct ScoreSettings {
    /// What is scored.
    pub scoring: Scoring,
    /// The comparison's name in the lines printed.
    pub name: String,
    /// The file `envbench compare --json` wrote; with
    /// [`Scoring::Splits`], the result files of the runs; none with
    /// [`Scoring::Pairs`].
    pub files: Vec<PathBuf>,
}

/// One headline metric as scored.
struct Scored {
    line: String,
    /// The half-width of a same-truth metric's interval, % (None: not
    /// same-truth), and whether its interval lies within ±5 %.
    same: Option<(f64, bool)>,
    /// Whether the metric is a compute case (cpu, mem).
    compute: bool,
    /// A false verdict, an effect found, an effect missed.
    false_call: bool,
    hit: bool,
    miss: bool,
}

/// The half-width of the interval `(lo, hi)` on the log scale, %.
fn half_width((lo, hi): (f64, f64)) -> f64 {
    ((hi.ln() - lo.ln()) / 2.0).exp_m1() * 100.0
}

/// The median of `v`; None when it is empty.
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| crate::stats::median_of_sorted(&v))
}

/// `m`, one headline metric of compare's JSON, scored against `known`.
fn score_metric(m: &Value, known: Known, name: &str) -> Result<Scored, String> {
    let text = |k: &str| {
        m[k].as_str()
            .ok_or_else(|| format!("a metric without {k:?}"))
    };
    let (key, family, verdict) = (text("key")?, text("family")?, text("verdict")?);
    let ratio = m["ratio"].as_f64().ok_or("a metric without \"ratio\"")?;
    let ci = match m["ratio_ci"].as_array().map(Vec::as_slice) {
        Some([lo, hi]) => (
            lo.as_f64().ok_or("a bad \"ratio_ci\"")?,
            hi.as_f64().ok_or("a bad \"ratio_ci\"")?,
        ),
        _ => return Err(format!("{key}: no \"ratio_ci\" of two numbers")),
    };
    let want = known.expects(key, family);
    let called = matches!(verdict, "faster" | "slower");
    let mut s = Scored {
        line: String::new(),
        same: None,
        compute: matches!(family, "cpu" | "mem"),
        false_call: false,
        hit: false,
        miss: false,
    };
    let mark = match want {
        None => ".",
        Some("same") => {
            s.same = Some((half_width(ci), 0.95 <= ci.0 && ci.1 <= 1.05));
            s.false_call = called;
            if called {
                "FALSE"
            } else {
                "ok"
            }
        }
        Some(w) => {
            s.hit = verdict == w;
            s.miss = !s.hit;
            if s.hit {
                "ok"
            } else {
                "MISSED"
            }
        }
    };
    s.line = format!(
        "  {name:14} {key:48} ratio {ratio:9.4} [{:.4}, {:.4}] {verdict:8} expected {:6} {mark}",
        ci.0,
        ci.1,
        want.unwrap_or("-")
    );
    Ok(s)
}

/// The counts of one comparison's headline verdicts scored.
#[derive(Debug, Clone, PartialEq)]
struct Tally {
    /// Effects found, and the metrics with an effect known.
    hits: usize,
    effects: usize,
    /// False verdicts, and the metrics whose truth is "the same".
    falses: usize,
    same: usize,
    /// The median half-width of the same-truth intervals, %, and how many
    /// lie within ±5 %.
    width: Option<f64>,
    within: usize,
}

/// The lines scoring compare's JSON `c` against `known`, and their counts.
fn score_verdicts(c: &Value, known: Known, name: &str) -> Result<(Vec<String>, Tally), String> {
    let metrics = c["metrics"]
        .as_array()
        .ok_or("no \"metrics\": is it what `envbench compare --json` wrote?")?;
    let scored: Vec<Scored> = metrics
        .iter()
        .filter(|m| m["primary"].as_bool() == Some(true))
        .map(|m| score_metric(m, known, name))
        .collect::<Result<_, _>>()?;
    let count = |f: fn(&Scored) -> bool| scored.iter().filter(|s| f(s)).count();
    let same: Vec<&Scored> = scored.iter().filter(|s| s.same.is_some()).collect();
    let width = |pick: &dyn Fn(&Scored) -> bool| {
        median(
            same.iter()
                .filter(|s| pick(s))
                .filter_map(|s| s.same.map(|(w, _)| w))
                .collect(),
        )
    };
    let t = Tally {
        hits: count(|s| s.hit),
        effects: count(|s| s.hit || s.miss),
        falses: count(|s| s.false_call),
        same: same.len(),
        width: width(&|_| true),
        within: same
            .iter()
            .filter(|s| s.same.is_some_and(|(_, w)| w))
            .count(),
    };
    let mut lines: Vec<String> = scored.iter().map(|s| s.line.clone()).collect();
    let mut score = format!(
        "SCORE {name}: effects found {}/{}; false verdicts {}/{}",
        t.hits, t.effects, t.falses, t.same
    );
    if t.same > 0 {
        score += &format!(" ({:.1} %)", 100.0 * t.falses as f64 / t.same as f64);
    }
    if let Some(w) = t.width {
        score += &format!(
            "; same-truth intervals: median half-width ±{w:.1} %, within ±5 % {}/{}",
            t.within, t.same
        );
        // a layer that intercepts system calls widens the rest most
        if let (Some(cw), Some(rw)) = (width(&|s| s.compute), width(&|s| !s.compute)) {
            score += &format!(" (cpu and mem ±{cw:.1} %, the rest ±{rw:.1} %)");
        }
    }
    lines.push(score);
    Ok((lines, t))
}

/// The 3 + 3 splits of six runs that hold the first run in the base: the
/// ten ways to halve them, each as its base's and its other's indices.
fn splits() -> Vec<([usize; 3], [usize; 3])> {
    let mut out = Vec::new();
    for j in 1..6 {
        for k in j + 1..6 {
            let rest: Vec<usize> = (1..6).filter(|&r| r != j && r != k).collect();
            out.push(([0, j, k], [rest[0], rest[1], rest[2]]));
        }
    }
    out
}

/// What `envbench compare --json` would write for `base` against `other`,
/// with compare's defaults and no history.
fn compared(base: &[&ResultFile], other: &[&ResultFile]) -> anyhow::Result<Value> {
    use crate::compare::{group, Options, DEFAULT_THRESHOLD};
    let owned = |runs: &[&ResultFile]| runs.iter().map(|r| (*r).clone()).collect();
    let envs = group::environments(
        group::Given::BaseOther(owned(base), owned(other)),
        false,
        false,
        None,
    )
    .map_err(UsageError)?;
    let opts = Options {
        threshold: DEFAULT_THRESHOLD,
        seed: crate::config::DEFAULT_SEED,
        exclude_suspect: false,
        prices: crate::bench::prices(),
    };
    let cmp = crate::compare::compare(&envs, &opts)?;
    let (views, topics) = (crate::bench::views(), crate::bench::topics());
    let report = crate::report::comparison::Report {
        comparison: &cmp,
        environments: &envs,
        views: &views,
        topics: &topics,
        all_metrics: false,
        verbose: false,
        color: false,
    };
    let text = crate::report::comparison::export::json::document(&report);
    serde_json::from_str(&text).context("compare's own JSON")
}

/// A run's wall seconds, from its start and end (None: not ended, or a
/// time not written as envbench writes it).
fn wall_secs(r: &ResultFile) -> Option<f64> {
    let start = crate::timestamp::unix_secs(&r.started_utc)?;
    Some(crate::timestamp::unix_secs(r.ended_utc.as_deref()?)? - start)
}

/// The line scoring `runs`' A/A splits ([`splits`]) against `known`:
/// the runs' wall seconds, the median over splits of each split's median
/// same-truth half-width with their range, and of how many lie within
/// ±5 %, as bench/design.sh prints it per build.
fn score_splits(runs: &[ResultFile], known: Known, name: &str) -> anyhow::Result<String> {
    if runs.len() < 6 {
        return Err(UsageError(format!(
            "--splits: give six or more runs (3 + 3 a split), not {}",
            runs.len()
        ))
        .into());
    }
    let mut tallies = Vec::new();
    for (base, other) in splits() {
        let c = compared(&base.map(|i| &runs[i]), &other.map(|i| &runs[i])).with_context(|| {
            format!("--splits: the runs {base:?} against {other:?} (counted from 0)")
        })?;
        tallies.push(score_verdicts(&c, known, name).map_err(UsageError)?.1);
    }
    let secs: Vec<f64> = runs.iter().filter_map(wall_secs).collect();
    Ok(splits_line(name, &tallies, &secs))
}

/// The smallest and largest of `v`; None when it is empty.
fn span(v: &[f64]) -> Option<(f64, f64)> {
    let lo = v.iter().copied().reduce(f64::min)?;
    Some((lo, v.iter().copied().reduce(f64::max)?))
}

/// design.sh's line for the splits' `tallies` of runs that took `secs`
/// (wall seconds each).
fn splits_line(name: &str, tallies: &[Tally], secs: &[f64]) -> String {
    let times = span(secs).map_or("runs of unknown length".to_string(), |(lo, hi)| {
        format!("runs of {lo:.0}-{hi:.0} s")
    });
    let widths: Vec<f64> = tallies.iter().filter_map(|t| t.width).collect();
    let (Some(w), Some((wlo, whi))) = (median(widths.clone()), span(&widths)) else {
        return format!("{name}: {times}; no metric whose truth is \"the same\"");
    };
    let within = median(tallies.iter().map(|t| t.within as f64).collect());
    let same = tallies.iter().map(|t| t.same).min().unwrap_or(0);
    let falses: usize = tallies.iter().map(|t| t.falses).sum();
    format!(
        "{name}: {times}; A/A 3 + 3 over {} splits: median half-width ±{w:.1} % (splits \
         {wlo:.1}..{whi:.1}), within ±5 % {:.0} of {same}; false verdicts {falses} of {}",
        tallies.len(),
        within.unwrap_or(0.0),
        tallies.iter().map(|t| t.same).sum::<usize>()
    )
}

/// The lines scoring the diagnosis of compare's JSON `c`: the mechanism
/// named first against `expect`.
fn score_first(c: &Value, expect: &str, name: &str) -> Result<Vec<String>, String> {
    if !c["metrics"].is_array() {
        return Err("no \"metrics\": is it what `envbench compare --json` wrote?".into());
    }
    let named: Vec<&str> = c["diagnoses"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|d| d["findings"].as_array().into_iter().flatten())
        .filter_map(|f| f["mechanism"].as_str())
        .collect();
    let first = named.first().copied().unwrap_or("none");
    let ok = first == expect;
    let list = if named.is_empty() {
        "nothing".to_string()
    } else {
        named.join(", ")
    };
    Ok(vec![
        format!(
            "  {name:24} named {list:60} expected {expect:20} {}",
            if ok { "ok" } else { "WRONG" }
        ),
        format!("SCORE {name}: {}", if ok { "ok" } else { "wrong" }),
    ])
}

/// compare's JSON at `path`.
fn read_comparison(path: &Path) -> anyhow::Result<Value> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(serde_json::from_slice(&bytes)
        .map_err(|e| UsageError(format!("{}: not JSON ({e})", path.display())))?)
}

/// The lines `envbench __score` prints.
fn lines(s: &ScoreSettings) -> anyhow::Result<Vec<String>> {
    let one = || match s.files.as_slice() {
        [f] => Ok(f),
        _ => Err(UsageError(
            "give one file, what `envbench compare --json` wrote".into(),
        )),
    };
    let scored = match &s.scoring {
        Scoring::Pairs => {
            return Ok(PAIRS
                .iter()
                .map(|p| {
                    let known = Known::NAMES
                        .iter()
                        .find(|(_, k)| Some(*k) == p.known)
                        .map_or("-", |(n, _)| n);
                    format!("{:14} {known:8} {:21} {}", p.name, p.first_name(), p.side_b)
                })
                .collect())
        }
        Scoring::Splits(k) => {
            let runs: Vec<ResultFile> = s
                .files
                .iter()
                .map(|f| crate::store::load(f))
                .collect::<Result<_, _>>()?;
            return Ok(vec![score_splits(&runs, *k, &s.name)?]);
        }
        Scoring::Verdicts(k) => score_verdicts(&read_comparison(one()?)?, *k, &s.name).map(|l| l.0),
        Scoring::First(m) => score_first(&read_comparison(one()?)?, m, &s.name),
        Scoring::Pair(p) => {
            let c = read_comparison(one()?)?;
            p.known
                .map_or(Ok(Vec::new()), |k| {
                    score_verdicts(&c, k, &s.name).map(|l| l.0)
                })
                .and_then(|mut lines| {
                    lines.extend(score_first(&c, &p.first_name(), &s.name)?);
                    Ok(lines)
                })
        }
    };
    Ok(scored.map_err(|e| UsageError(format!("{}: {e}", s.files[0].display())))?)
}

/// Runs `envbench __score`.
///
/// # Errors
/// A file cannot be read, or is not what `envbench compare --json`
/// writes (a result file, with `--splits`).
pub fn run(s: &ScoreSettings) -> anyhow::Result<ExitCode> {
    for line in lines(s)? {
        println!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn metric(key: &str, family: &str, verdict: &str, ci: (f64, f64)) -> Value {
        json!({"key": key, "family": family, "verdict": verdict, "primary": true,
               "ratio": (ci.0 * ci.1).sqrt(), "ratio_ci": [ci.0, ci.1]})
    }

    #[test]
    fn each_known_effect_expects_what_the_scripts_expected() {
        let cases = [
            (
                "cpu.lu[n=1000,threads=2]",
                "cpu",
                [Some("same"), Some("slower"), None, Some("same")],
            ),
            (
                "cpu.lu[n=1000,threads=1]",
                "cpu",
                [Some("same"), Some("same"), None, Some("same")],
            ),
            (
                "cpu.int",
                "cpu",
                [Some("same"), Some("same"), Some("same"), Some("same")],
            ),
            (
                "mem.latency[size_kib=256]",
                "mem",
                [Some("same"), Some("same"), Some("same"), Some("same")],
            ),
            (
                "mem.stream[threads=1]",
                "mem",
                [Some("same"), None, None, Some("same")],
            ),
            (
                "os.syscall[call=getppid]",
                "os",
                [Some("same"), Some("same"), Some("slower"), None],
            ),
            (
                "os.multiprog[processes=2]",
                "os",
                [Some("same"), Some("slower"), None, None],
            ),
            (
                "os.shell[copies=8]",
                "os",
                [Some("same"), Some("slower"), Some("slower"), None],
            ),
            (
                "os.shell[copies=1]",
                "os",
                [Some("same"), None, Some("slower"), None],
            ),
            (
                "os.fork[parent_memory=touched]",
                "os",
                [Some("same"), None, None, None],
            ),
            ("io.meta[dir=work]", "io", [Some("same"), None, None, None]),
        ];
        for (key, family, want) in cases {
            let got: Vec<_> = [Known::Nothing, Known::OneCpu, Known::Traced, Known::Compute]
                .iter()
                .map(|k| k.expects(key, family))
                .collect();
            assert_eq!(got, want, "{key}");
        }
        assert_eq!(Known::parse("1cpu"), Ok(Known::OneCpu));
        assert!(Known::parse("2cpu")
            .unwrap_err()
            .contains("aa, 1cpu, strace, compute"));
    }

    #[test]
    fn verdicts_are_counted_and_same_truth_widths_taken() {
        let c = json!({"metrics": [
            metric("cpu.lu[threads=2]", "cpu", "slower", (0.45, 0.55)),
            metric("os.multiprog[processes=2]", "os", "unclear", (0.4, 1.1)),
            metric("cpu.int", "cpu", "tie", (0.98, 1.02)),
            metric("os.syscall[call=getppid]", "os", "slower", (0.8, 0.9)),
            metric("mem.latency[size_kib=256]", "mem", "unclear", (0.9, 1.1)),
            metric("io.meta", "io", "faster", (1.5, 2.0)),
            {"key": "cpu.int", "family": "cpu", "verdict": "slower", "primary": false,
             "ratio": 0.5, "ratio_ci": [0.4, 0.6]},
        ]});
        let (lines, tally) = score_verdicts(&c, Known::OneCpu, "t").unwrap();
        assert_eq!(lines.len(), 7, "{lines:#?}");
        assert!(
            lines[0].ends_with("slower   expected slower ok"),
            "{}",
            lines[0]
        );
        assert!(lines[1].ends_with("MISSED"), "{}", lines[1]);
        assert!(lines[3].ends_with("FALSE"), "{}", lines[3]);
        assert!(lines[5].ends_with("expected -      ."), "{}", lines[5]);
        // same-truth: cpu.int ±2.0 %, os.syscall ±5.9 %, mem.latency ±10.0 %
        let w = |lo: f64, hi: f64| half_width((lo, hi));
        assert!((w(0.98, 1.02) - 2.02).abs() < 0.01);
        assert_eq!(
            lines[6],
            format!(
                "SCORE t: effects found 1/2; false verdicts 1/3 (33.3 %); same-truth intervals: \
                 median half-width ±{:.1} %, within ±5 % 1/3 (cpu and mem ±{:.1} %, the rest ±{:.1} %)",
                w(0.8, 0.9),
                (w(0.98, 1.02) + w(0.9, 1.1)) / 2.0,
                w(0.8, 0.9)
            )
        );
        assert_eq!(
            tally,
            Tally {
                hits: 1,
                effects: 2,
                falses: 1,
                same: 3,
                width: Some(w(0.8, 0.9)),
                within: 1
            }
        );
        // nothing same-truth: no precision
        let none = json!({"metrics": [metric("io.meta", "io", "slower", (0.5, 0.6))]});
        let (s, t) = score_verdicts(&none, Known::OneCpu, "n").unwrap();
        assert_eq!(s[1], "SCORE n: effects found 0/0; false verdicts 0/0");
        assert_eq!((t.same, t.width), (0, None));
    }

    #[test]
    fn each_pair_is_named_once_and_its_mechanism_as_the_diagnosis_names_it() {
        let names: std::collections::BTreeSet<&str> = PAIRS.iter().map(|p| p.name).collect();
        assert!(PAIRS.iter().all(|p| !p.side_b.is_empty()));
        assert_eq!(names.len(), PAIRS.len());
        let gvisor = Pair::parse("igvisor").unwrap();
        assert_eq!(gvisor.known, Some(Known::Compute));
        assert_eq!(gvisor.first_name(), "syscall_interception");
        assert_eq!(Pair::parse("iaa").unwrap().first_name(), "none");
        assert!(Pair::parse("ifoo").unwrap_err().contains("__score --pairs"));
        // an interleaved pair is known as its separate one (ipodman as
        // container)
        for p in PAIRS.iter().filter(|p| p.name.starts_with('i')) {
            let sep = if p.name == "ipodman" {
                "container"
            } else {
                &p.name[1..]
            };
            if let Ok(sep) = Pair::parse(sep) {
                assert_eq!((p.known, p.first), (sep.known, sep.first), "{}", p.name);
            }
        }
    }

    #[test]
    fn the_splits_line_takes_medians_ranges_and_sums() {
        let t = |width: Option<f64>, within, falses, same| Tally {
            hits: 0,
            effects: 0,
            falses,
            same,
            width,
            within,
        };
        let tallies = [
            t(Some(4.0), 3, 1, 10),
            t(Some(6.0), 5, 0, 12),
            t(Some(5.0), 4, 2, 11),
        ];
        assert_eq!(
            splits_line("b", &tallies, &[46.2, 49.7, 45.0]),
            "b: runs of 45-50 s; A/A 3 + 3 over 3 splits: median half-width ±5.0 % (splits \
             4.0..6.0), within ±5 % 4 of 10; false verdicts 3 of 33"
        );
        assert_eq!(
            splits_line("b", &[t(None, 0, 0, 0)], &[]),
            "b: runs of unknown length; no metric whose truth is \"the same\""
        );
    }

    #[test]
    fn six_runs_split_ten_ways_into_halves_holding_the_first_in_the_base() {
        let all = splits();
        assert_eq!(all.len(), 10);
        let mut seen = std::collections::BTreeSet::new();
        for (base, other) in &all {
            assert_eq!(base[0], 0);
            let mut each: Vec<usize> = base.iter().chain(other).copied().collect();
            each.sort_unstable();
            assert_eq!(each, [0, 1, 2, 3, 4, 5]);
            assert!(seen.insert(*base), "{base:?} twice");
        }
    }

    #[test]
    fn the_first_mechanism_named_is_scored() {
        let c = json!({"metrics": [], "diagnoses": [
            {"findings": [{"mechanism": "seccomp_filter"}, {"mechanism": "overlay_filesystem"}]}]});
        let ok = score_first(&c, "seccomp_filter", "container").unwrap();
        assert!(
            ok[0].contains("named seccomp_filter, overlay_filesystem"),
            "{}",
            ok[0]
        );
        assert_eq!(ok[1], "SCORE container: ok");
        assert_eq!(score_first(&c, "none", "x").unwrap()[1], "SCORE x: wrong");
        let nothing = json!({"metrics": [], "diagnoses": []});
        assert_eq!(
            score_first(&nothing, "none", "aa").unwrap()[1],
            "SCORE aa: ok"
        );
    }

    #[test]
    fn what_compare_did_not_write_is_refused_with_the_reason() {
        let not = json!({"rows": []});
        assert!(score_verdicts(&not, Known::Nothing, "x")
            .unwrap_err()
            .contains("envbench compare --json"));
        assert!(score_first(&not, "none", "x").is_err());
        let bad = json!({"metrics": [{"key": "cpu.int", "family": "cpu", "verdict": "tie",
                                       "primary": true, "ratio": 1.0, "ratio_ci": [1.0]}]});
        assert!(score_verdicts(&bad, Known::Nothing, "x")
            .unwrap_err()
            .contains("cpu.int: no \"ratio_ci\""));
    }
}
