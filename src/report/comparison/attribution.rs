//! The sentence under the conclusions for each app case found faster or
//! slower: its ratio beside what its operations' costs predict ("tree
//! status on work: 8.0x slower [7.1, 9.0]; 7.0x predicted [6.6, 7.5] from
//! its stats (the small-file bench that priced them), 12 % slower beyond
//! it, unexplained"): every figure in a speed-up's words.

use crate::compare::attribute::Attribution;
use crate::compare::{Comparison, Verdict};
use crate::report::words::describe_speedup;
use std::collections::BTreeMap;

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
    let measured_ci = interval(a.measured, a.measured_ci);
    let why = match (a.predicted, a.unexplained) {
        (Some(p), Some(u)) if !a.parts.is_empty() => {
            let rest = if a.explained() == Some(true) {
                "explained".to_string()
            } else if u > 1.0 {
                // said as the measured figure is: a speed-up's words
                format!("{} beyond it, unexplained", describe_speedup(1.0 / u))
            } else {
                format!("{} than predicted", describe_speedup(1.0 / u))
            };
            let spread = a.predicted_ci.map(|ci| interval(p, ci)).unwrap_or_default();
            format!(
                "{}{spread} predicted from {}; {rest}",
                describe_speedup(1.0 / p),
                sources(a)
            )
        }
        _ => a
            .missing
            .clone()
            .unwrap_or_else(|| "no operation of it priced".to_string()),
    };
    format!("{who}{label}: {measured}{measured_ci}; {why}")
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
        // 99.97 is said as 100, not 100.0
        if x >= 99.95 {
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
    if let Some(p) = &a.parallel {
        text.push_str(&format!(
            ", {} of its operations priced as shared by {:.1} threads",
            thousands(p.counts.file_operations()),
            p.threads
        ));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::attribute::Part;
    use crate::results::counts::OpCounts;

    /// A command 8x slower [7.1, 9.0], predicted `p` with interval `ci`
    /// from its 2 000 stats.
    fn slower(p: f64, ci: Option<(f64, f64)>) -> Attribution {
        Attribution {
            environment: "share".into(),
            key: "x.y[name=status]".into(),
            bench: "x.y".into(),
            dir: Some("repo".into()),
            measured: 8.0,
            measured_ci: (7.1, 9.0),
            predicted: Some(p),
            predicted_ci: ci,
            unexplained: Some(8.0 / p),
            counts: OpCounts::default(),
            parts: vec![Part {
                operation: "stats",
                count: 2000,
                priced_by: "micro.stat[dir=repo] per_sec".into(),
                base_ms: 2.0,
                other_ms: 2.0 * p,
                other_ms_ci: ci.map(|(lo, hi)| (2.0 * lo, 2.0 * hi)),
                terms: Vec::new(),
            }],
            rest_base_ms: 0.0,
            same_elsewhere: None,
            parallel: None,
            rest_scale: 1.0,
            rest_priced_by: None,
            command: Some("git status".into()),
            missing: None,
        }
    }

    #[test]
    fn a_prediction_is_said_with_its_interval_and_explains_what_lies_in_it() {
        let line = |a: &Attribution| line(a, "`git status` on repo", false);
        // 8x measured, 6.0x predicted [5.0, 7.4]: farther apart than the two
        // intervals together reach (0.29 in logs against 0.23)
        assert_eq!(
            line(&slower(6.0, Some((5.0, 7.4)))),
            "`git status` on repo: 8.0x slower [7.1, 9.0]; 6.0x slower [5.0, 7.4] predicted from its \
             2 000 stats (micro.stat); 25 % slower beyond it, unexplained"
        );
        // with [5.0, 8.5] the two intervals together reach 8: explained
        assert_eq!(
            line(&slower(6.0, Some((5.0, 8.5)))),
            "`git status` on repo: 8.0x slower [7.1, 9.0]; 6.0x slower [5.0, 8.5] predicted from its \
             2 000 stats (micro.stat); explained"
        );
        // no interval (a price without ends): the figure alone
        assert_eq!(
            line(&slower(6.0, None)),
            "`git status` on repo: 8.0x slower [7.1, 9.0]; 6.0x slower predicted from its 2 000 \
             stats (micro.stat); 25 % slower beyond it, unexplained"
        );
        // operations on threads alive together: said with the sources
        let mut a = slower(8.0, None);
        a.parallel = Some(crate::compare::attribute::Parallel {
            counts: OpCounts {
                stats: 1500,
                ..OpCounts::default()
            },
            threads: 2.0,
        });
        assert_eq!(
            line(&a),
            "`git status` on repo: 8.0x slower [7.1, 9.0]; 8.0x slower predicted from its 2 000 \
             stats (micro.stat), 1 500 of its operations priced as shared by 2.0 threads; explained"
        );
    }
}
