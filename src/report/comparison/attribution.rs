//! The sentence under the conclusions for each app case found faster or
//! slower: its ratio beside what its operations' costs predict ("tree
//! status on work: 8.0x slower; 7.0x predicted from its stats
//! (the small-file bench that priced them), 12 % slower beyond it,
//! unexplained"): every figure in a speed-up's words.

use crate::compare::attribute::Attribution;
use crate::compare::{Comparison, Verdict};
use crate::report::words::describe_speedup;
use std::collections::BTreeMap;

/// Within this factor of its prediction, a ratio is called explained.
const EXPLAINED_WITHIN: f64 = 1.10;

/// One line per app case with a verdict of faster or slower.
pub(crate) fn lines(c: &Comparison, topics: &BTreeMap<String, String>) -> Vec<String> {
    let named = c.environments.len() > 2;
    c.attributions
        .iter()
        .filter(|a| {
            c.metrics.iter().any(|m| {
                m.primary
                    && m.environment == a.environment
                    && m.key == a.key
                    && matches!(m.verdict, Verdict::Faster | Verdict::Slower)
            })
        })
        .map(|a| {
            // two cases that read alike (the databases' two journals on one
            // directory) are named by their keys
            let name = label(a, topics);
            let alike = c
                .attributions
                .iter()
                .filter(|b| b.environment == a.environment && label(b, topics) == name)
                .count();
            line(a, if alike > 1 { &a.key } else { &name }, named)
        })
        .collect()
}

/// What a case is called in its sentence: the command's words, or the
/// bench's topic and the directory ("databases on dir1").
fn label(a: &Attribution, topics: &BTreeMap<String, String>) -> String {
    let topic = match &a.command {
        Some(words) => format!("`{words}`"),
        None => topics
            .get(&a.bench)
            .map_or(a.bench.as_str(), String::as_str)
            .to_string(),
    };
    let place = a
        .dir
        .as_ref()
        .map(|d| format!(" on {d}"))
        .unwrap_or_default();
    format!("{topic}{place}")
}

/// The sentence for `a`, called `label` ([`label`]); `named`: the
/// environment is said first.
fn line(a: &Attribution, label: &str, named: bool) -> String {
    let who = if named {
        format!("{} ", a.environment)
    } else {
        String::new()
    };
    // a time ratio: other / base, so its speed-up is the inverse
    let measured = describe_speedup(1.0 / a.measured);
    let interval = interval(a.measured, a.measured_ci);
    let why = match (a.predicted, a.unexplained) {
        (Some(p), Some(u)) if !a.parts.is_empty() => {
            let rest = if (1.0 / EXPLAINED_WITHIN..=EXPLAINED_WITHIN).contains(&u) {
                "explained".to_string()
            } else if u > 1.0 {
                // said as the measured figure is: a speed-up's words
                format!("{} beyond it, unexplained", describe_speedup(1.0 / u))
            } else {
                format!("{} than predicted", describe_speedup(1.0 / u))
            };
            format!(
                "{} predicted from {}; {rest}",
                describe_speedup(1.0 / p),
                sources(a)
            )
        }
        _ => a
            .missing
            .clone()
            .unwrap_or_else(|| "no operation of it priced".to_string()),
    };
    format!("{who}{label}: {measured}{interval}; {why}")
}

/// The measured ratio's interval as factors the same way round as the
/// ratio is said: ` [13.9, 16.7]` for a slowdown (time ratios), the
/// inverse for a speed-up; nothing within 1.5x of 1, said as a percentage.
fn interval(ratio: f64, (lo, hi): (f64, f64)) -> String {
    let (a, b) = if ratio >= 1.0 {
        (lo, hi)
    } else {
        (1.0 / hi, 1.0 / lo)
    };
    let speedup = 1.0 / ratio;
    let said_as_factor = !(1.0 / 1.5..1.5).contains(&speedup);
    if !(said_as_factor && a.is_finite() && b.is_finite() && a > 0.0) {
        return String::new();
    }
    let f = |x: f64| {
        if x >= 100.0 {
            format!("{x:.0}")
        } else {
            format!("{x:.1}")
        }
    };
    format!(" [{}, {}]", f(a), f(b))
}

/// What the prediction comes from: the two parts that cost most on the
/// other side, with their counts and the bench that priced them, and the
/// computation where its price scaled the rest ("its 3 412 stats and
/// misses and 1 004 reads (the small-file bench) and its computation (the
/// integer bench)").
fn sources(a: &Attribution) -> String {
    let mut parts: Vec<_> = a.parts.iter().collect();
    parts.sort_by(|x, y| y.other_ms.total_cmp(&x.other_ms));
    let bench = |by: &str| {
        by.split('[')
            .next()
            .unwrap_or(by)
            .split(' ')
            .next()
            .unwrap_or(by)
            .to_string()
    };
    let mut said: Vec<String> = Vec::new();
    let mut benches: Vec<String> = Vec::new();
    for p in parts.iter().take(2) {
        said.push(format!("{} {}", thousands(p.count), p.operation));
        let b = bench(&p.priced_by);
        if !benches.contains(&b) {
            benches.push(b);
        }
    }
    let mut text = format!("its {} ({})", said.join(" and "), benches.join(", "));
    if let Some(by) = &a.rest_priced_by {
        text.push_str(&format!(" and its computation ({})", bench(by)));
    }
    if let Some(same) = &a.same_elsewhere {
        text.push_str(&format!(
            ", its {} operations outside the directory the same in both",
            thousands(same.file_operations())
        ));
    }
    text
}

/// `n` with a thin space between thousands: `3 412`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}
