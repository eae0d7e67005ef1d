//! The sentence under the conclusions for each app case found faster or
//! slower: its ratio beside what its operations' costs predict ("tree
//! status on work: 8.0x slower; 7.0x predicted from its stats and misses
//! (the small-file bench that priced them), 14 % beyond it unexplained").

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
        .map(|a| line(a, topics, named))
        .collect()
}

/// The sentence for `a`; `named`: the environment is said first.
pub(crate) fn line(a: &Attribution, topics: &BTreeMap<String, String>, named: bool) -> String {
    let who = if named {
        format!("{} ", a.environment)
    } else {
        String::new()
    };
    let topic = topics
        .get(&a.bench)
        .map_or(a.bench.as_str(), String::as_str);
    let place = a
        .dir
        .as_ref()
        .map(|d| format!(" on {d}"))
        .unwrap_or_default();
    // a time ratio: other / base, so its speed-up is the inverse
    let measured = describe_speedup(1.0 / a.measured);
    let why = match (a.predicted, a.unexplained, a.main_part()) {
        (Some(p), Some(u), Some(part)) => {
            let source = part.priced_by.split('[').next().unwrap_or(&part.priced_by);
            let rest = if (1.0 / EXPLAINED_WITHIN..=EXPLAINED_WITHIN).contains(&u) {
                "explained".to_string()
            } else if u > 1.0 {
                format!("{:.0} % beyond it unexplained", (u - 1.0) * 100.0)
            } else {
                format!("{:.0} % less than predicted", (1.0 - u) * 100.0)
            };
            format!(
                "{} predicted from its {} ({source}), {rest}",
                describe_speedup(1.0 / p),
                part.operation
            )
        }
        _ => a
            .missing
            .clone()
            .unwrap_or_else(|| "no operation of it priced".to_string()),
    };
    format!("{who}{topic}{place}: {measured}; {why}")
}
