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
//! mechanism named first against the one known to be there.

use crate::error::UsageError;
use anyhow::Context as _;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A controlled pair's known effect, which gives each case the verdict
/// it should get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    /// The same environment on both sides (`aa`): every case the same.
    Nothing,
    /// One CPU of two (`1cpu`, a quota or a cpuset of one): the parallel
    /// cases slower; the single-threaded compute, memory-latency and
    /// system-call cases the same.
    OneCpu,
    /// Every system call stopped in a tracer (`strace -f`): the os cases
    /// slower but the two without a known effect; user-space work the
    /// same.
    Traced,
    /// A layer that runs the same code on the same CPU (gVisor, a
    /// container; `compute`): the compute cases (cpu, mem) the same.
    Compute,
}

impl Known {
    /// The names `--expect` takes, with what each stands for.
    pub const NAMES: [(&'static str, Known); 4] = [
        ("aa", Known::Nothing),
        ("1cpu", Known::OneCpu),
        ("strace", Known::Traced),
        ("compute", Known::Compute),
    ];

    /// The known effect named `s`.
    ///
    /// # Errors
    /// A name not in [`Known::NAMES`].
    pub fn parse(s: &str) -> Result<Known, String> {
        Known::NAMES
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, k)| *k)
            .ok_or_else(|| {
                let names: Vec<&str> = Known::NAMES.iter().map(|(n, _)| *n).collect();
                format!("{s:?} is none of {}", names.join(", "))
            })
    }

    /// The verdict the effect gives the case `key` of `family`: "slower",
    /// "same", or None where nothing is known (not scored).
    fn expects(self, key: &str, family: &str) -> Option<&'static str> {
        let (bench, params) = split_key(key);
        let param = |k: &str| params.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        let threads = param(crate::results::params::key::THREADS);
        let user = matches!(
            bench,
            "cpu.int" | "cpu.float" | "cpu.primes" | "mem.latency"
        );
        match self {
            Known::Nothing => Some("same"),
            Known::Compute => matches!(family, "cpu" | "mem").then_some("same"),
            Known::Traced => {
                // os.multiprog's processes compute on a handful of system
                // calls, and fork_cow with touched memory is dominated by
                // copying pages: no known effect of tracing on either
                if bench == "os.multiprog" || param("parent_memory") == Some("touched") {
                    None
                } else if bench.starts_with("os.") {
                    Some("slower")
                } else {
                    user.then_some("same")
                }
            }
            Known::OneCpu => {
                let split = matches!(bench, "cpu.lu" | "cpu.primes");
                if (split && threads == Some("2"))
                    || bench == "os.multiprog"
                    || (bench == "os.shell" && param("copies") == Some("8"))
                {
                    Some("slower")
                } else if (split && threads == Some("1"))
                    || matches!(
                        bench,
                        "cpu.int" | "cpu.float" | "mem.latency" | "os.syscall"
                    )
                {
                    Some("same")
                } else {
                    None
                }
            }
        }
    }
}

/// A case key's bench and its `name=value` parameters.
fn split_key(key: &str) -> (&str, Vec<(&str, &str)>) {
    let Some((bench, rest)) = key.split_once('[') else {
        return (key, Vec::new());
    };
    let params = rest
        .trim_end_matches(']')
        .split(',')
        .filter_map(|p| p.split_once('='))
        .collect();
    (bench, params)
}

/// What `envbench __score` scores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scoring {
    /// The headline verdicts, against a known effect.
    Verdicts(Known),
    /// The mechanism named first, against this one (`none`: nothing).
    First(String),
}

/// What `envbench __score` was asked.
#[derive(Debug, Clone)]
pub struct ScoreSettings {
    /// What is scored.
    pub scoring: Scoring,
    /// The comparison's name in the lines printed.
    pub name: String,
    /// The file `envbench compare --json` wrote.
    pub file: PathBuf,
    /// Verdicts: one tab-separated line of the counts instead of text.
    pub tsv: bool,
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

/// The lines scoring compare's JSON `c` against `known`.
fn score_verdicts(c: &Value, known: Known, name: &str, tsv: bool) -> Result<Vec<String>, String> {
    let metrics = c["metrics"]
        .as_array()
        .ok_or("no \"metrics\": is it what `envbench compare --json` wrote?")?;
    let scored: Vec<Scored> = metrics
        .iter()
        .filter(|m| m["primary"].as_bool() == Some(true))
        .map(|m| score_metric(m, known, name))
        .collect::<Result<_, _>>()?;
    let count = |f: fn(&Scored) -> bool| scored.iter().filter(|s| f(s)).count();
    let (hits, misses, falses) = (count(|s| s.hit), count(|s| s.miss), count(|s| s.false_call));
    let same: Vec<&Scored> = scored.iter().filter(|s| s.same.is_some()).collect();
    let width = |pick: &dyn Fn(&Scored) -> bool| {
        median(
            same.iter()
                .filter(|s| pick(s))
                .filter_map(|s| s.same.map(|(w, _)| w))
                .collect(),
        )
    };
    let all = width(&|_| true);
    let within = same
        .iter()
        .filter(|s| s.same.is_some_and(|(_, w)| w))
        .count();
    if tsv {
        let w = all.map_or("NaN".to_string(), |w| format!("{w:.3}"));
        return Ok(vec![format!(
            "{name}\t{hits}\t{}\t{falses}\t{}\t{w}\t{within}",
            hits + misses,
            same.len()
        )]);
    }
    let mut lines: Vec<String> = scored.iter().map(|s| s.line.clone()).collect();
    let mut score = format!(
        "SCORE {name}: effects found {hits}/{}; false verdicts {falses}/{}",
        hits + misses,
        same.len()
    );
    if !same.is_empty() {
        score += &format!(" ({:.1} %)", 100.0 * falses as f64 / same.len() as f64);
    }
    if let Some(w) = all {
        score += &format!(
            "; same-truth intervals: median half-width ±{w:.1} %, within ±5 % {within}/{}",
            same.len()
        );
        // a layer that intercepts system calls widens the rest most
        if let (Some(cw), Some(rw)) = (width(&|s| s.compute), width(&|s| !s.compute)) {
            score += &format!(" (cpu and mem ±{cw:.1} %, the rest ±{rw:.1} %)");
        }
    }
    lines.push(score);
    Ok(lines)
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

/// The lines `envbench __score` prints for the comparison at `path`.
fn lines(s: &ScoreSettings, path: &Path) -> anyhow::Result<Vec<String>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let c: Value = serde_json::from_slice(&bytes)
        .map_err(|e| UsageError(format!("{}: not JSON ({e})", path.display())))?;
    let scored = match &s.scoring {
        Scoring::Verdicts(k) => score_verdicts(&c, *k, &s.name, s.tsv),
        Scoring::First(m) => score_first(&c, m, &s.name),
    };
    Ok(scored.map_err(|e| UsageError(format!("{}: {e}", path.display())))?)
}

/// Runs `envbench __score`.
///
/// # Errors
/// The file cannot be read, or is not what `envbench compare --json`
/// writes.
pub fn run(s: &ScoreSettings) -> anyhow::Result<ExitCode> {
    for line in lines(s, &s.file)? {
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
        let lines = score_verdicts(&c, Known::OneCpu, "t", false).unwrap();
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
        let tsv = score_verdicts(&c, Known::OneCpu, "t", true).unwrap();
        assert_eq!(tsv, [format!("t\t1\t2\t1\t3\t{:.3}\t1", w(0.8, 0.9))]);
        // nothing same-truth: no precision, NaN in the TSV
        let none = json!({"metrics": [metric("io.meta", "io", "slower", (0.5, 0.6))]});
        let s = score_verdicts(&none, Known::OneCpu, "n", false).unwrap();
        assert_eq!(s[1], "SCORE n: effects found 0/0; false verdicts 0/0");
        assert_eq!(
            score_verdicts(&none, Known::OneCpu, "n", true).unwrap(),
            ["n\t0\t0\t0\t0\tNaN\t0"]
        );
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
        assert!(score_verdicts(&not, Known::Nothing, "x", false)
            .unwrap_err()
            .contains("envbench compare --json"));
        assert!(score_first(&not, "none", "x").is_err());
        let bad = json!({"metrics": [{"key": "cpu.int", "family": "cpu", "verdict": "tie",
                                       "primary": true, "ratio": 1.0, "ratio_ci": [1.0]}]});
        assert!(score_verdicts(&bad, Known::Nothing, "x", false)
            .unwrap_err()
            .contains("cpu.int: no \"ratio_ci\""));
    }
}
