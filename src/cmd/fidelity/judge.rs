//! `envbench __judge`: a row's rounds judged as `envbench fidelity` judges
//! its own ([`crate::stats::band::judge`]), for the sections still in
//! bench/fidelity.sh (io and net), so that no judging lives in shell.
//! The pairs (envbench's figure, the reference's) come on stdin, one
//! round a line; one tab-separated line answers:
//! `verdict ratio low high rounds wanted envbench_median reference_median words`.

use super::rows::{medians, words};
use crate::stats::band::{judge, Band, Verdict};
use anyhow::Context as _;
use std::io::Read as _;
use std::process::ExitCode;

/// What `envbench __judge` was asked.
#[derive(Debug, Clone)]
pub struct JudgeSettings {
    /// The band the ratio must lie within; None: information.
    pub band: Option<Band>,
    /// The row's name, which seeds its bootstrap.
    pub label: String,
}

/// A band as `LO..HI`, or `LO..` for at least LO.
///
/// # Errors
/// Not two numbers around `..`, or not 0 < LO < HI.
pub fn parse_band(s: &str) -> Result<Band, String> {
    let (lo, hi) = s
        .split_once("..")
        .ok_or_else(|| format!("{s:?} is not LO..HI or LO.."))?;
    let num = |t: &str| {
        t.trim()
            .parse::<f64>()
            .map_err(|_| format!("{t:?} in {s:?} is not a number"))
    };
    let low = num(lo)?;
    let high = if hi.trim().is_empty() {
        f64::INFINITY
    } else {
        num(hi)?
    };
    if low > 0.0 && low < high && low.is_finite() {
        Ok(Band::new(low, high))
    } else {
        Err(format!("{s:?}: a band needs 0 < LO < HI"))
    }
}

/// The rounds' pairs in `text`: two numbers a line; blank lines skipped.
///
/// # Errors
/// A line that is not two numbers.
fn pairs(text: &str) -> Result<Vec<(f64, f64)>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: Vec<f64> = l
                .split_whitespace()
                .map(str::parse::<f64>)
                .collect::<Result<_, _>>()
                .map_err(|_| format!("line {}: {l:?} is not two numbers", i + 1))?;
            match v[..] {
                [e, r] => Ok((e, r)),
                _ => Err(format!("line {}: {l:?} is not two numbers", i + 1)),
            }
        })
        .collect()
}

/// The answer's line for `pairs` against `band`.
fn answer(pairs: &[(f64, f64)], band: Option<Band>, label: &str) -> Option<String> {
    let seed = crate::stats::rng::seed_for(1, &[label]);
    let j = judge(pairs, band, seed)?;
    let (key, wanted) = match j.verdict {
        Verdict::Within => ("within", 0),
        Verdict::Outside => ("outside", 0),
        Verdict::NoBand => ("no_band", 0),
        // none at the band's edge
        Verdict::Unclear(m) => ("unclear", m.wanted()),
    };
    let (lo, hi) = j.interval.unwrap_or((f64::NAN, f64::NAN));
    let (e_median, r_median) = medians(pairs)?;
    let shown = band.map_or("none".into(), |b| b.shown());
    Some(format!(
        "{key}\t{:.6}\t{lo:.6}\t{hi:.6}\t{}\t{wanted}\t{}\t{}\t{}",
        j.ratio,
        j.rounds,
        e_median,
        r_median,
        words(j.verdict, &shown)
    ))
}

/// Runs `envbench __judge`.
///
/// # Errors
/// stdin cannot be read, or holds no round with two positive figures.
pub fn run(s: &JudgeSettings) -> anyhow::Result<ExitCode> {
    let mut text = String::new();
    std::io::stdin()
        .take(16 << 20)
        .read_to_string(&mut text)
        .context("cannot read the rounds from stdin")?;
    let pairs = pairs(&text).map_err(|e| crate::error::UsageError(format!("stdin: {e}")))?;
    let line = answer(&pairs, s.band, &s.label)
        .ok_or_else(|| anyhow::anyhow!("no round with two positive figures to judge"))?;
    println!("{line}");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_are_read_with_or_without_an_upper_edge() {
        assert_eq!(parse_band("0.9..1.1").unwrap(), Band::new(0.9, 1.1));
        assert_eq!(parse_band("0.8..").unwrap(), Band::new(0.8, f64::INFINITY));
        for bad in ["0.9", "1.1..0.9", "0..1", "x..1", "0.9..y"] {
            assert!(parse_band(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rounds_are_judged_as_fidelitys_own_rows() {
        // steady rounds at 1.0: within; at 1.3: outside; one round: unclear
        let steady = |r: f64| -> Vec<(f64, f64)> {
            (0..6)
                .map(|i| (r * (1.0 + 0.002 * (i % 3) as f64), 1.0))
                .collect()
        };
        let band = Some(Band::new(0.9, 1.1));
        let within = answer(&steady(1.0), band, "a").unwrap();
        let f: Vec<&str> = within.split('\t').collect();
        assert_eq!(f.len(), 9, "{within}");
        assert_eq!((f[0], f[4], f[5]), ("within", "6", "0"), "{within}");
        assert!(f[8].starts_with("within 0.9..1.1"), "{within}");
        let seed = crate::stats::rng::seed_for(1, &["a"]);
        let same = judge(&steady(1.0), band, seed).unwrap();
        assert_eq!(
            f[1].parse::<f64>().unwrap(),
            (same.ratio * 1e6).round() / 1e6
        );
        assert!(answer(&steady(1.3), band, "a")
            .unwrap()
            .starts_with("outside\t"));
        let one = answer(&[(1.0, 1.0)], band, "a").unwrap();
        assert!(
            one.starts_with("unclear\t1.000000\tNaN\tNaN\t1\t1\t"),
            "{one}"
        );
        let info = answer(&steady(1.3), None, "a").unwrap();
        assert!(info.starts_with("no_band\t"), "{info}");
        assert!(answer(&[(0.0, 1.0)], band, "a").is_none());
    }

    #[test]
    fn the_rounds_are_two_numbers_a_line() {
        assert_eq!(
            pairs("1 2\n\n3.5 4e1\n").unwrap(),
            [(1.0, 2.0), (3.5, 40.0)]
        );
        assert!(pairs("1 2 3\n").unwrap_err().contains("line 1"));
        assert!(pairs("1\n").is_err());
        assert!(pairs("1 x\n").is_err());
    }
}
