//! Per family (and `overall`), one environment against the baseline: the
//! geometric mean speed-up of the headline metrics, their outcome counts,
//! and the groups a conclusion names: the cases slower and faster with
//! their factors, those shown the same within a bound, the unclear rest.

use super::{MetricComparison, Verdict};
use serde::Serialize;
use std::collections::BTreeSet;

/// A case with no difference shown is said to be the same "within ±X %"
/// only up to this bound; wider intervals say nothing and count as unclear.
pub const MOST_SAME_BOUND: f64 = 0.5;

/// Per family (and `overall`), one environment: geometric mean speed-up of
/// headline metrics and outcome counts.
#[derive(Debug, Clone, Serialize)]
pub struct FamilySummary {
    /// Family or `overall`.
    pub family: String,
    /// Environment against the baseline.
    pub environment: String,
    /// Geometric mean of speed-ups (> 1: OTHER faster).
    pub geomean_speedup: f64,
    /// Headline metrics judged faster.
    pub faster: usize,
    /// ... slower.
    pub slower: usize,
    /// ... tie (shown equal within the band).
    pub tie: usize,
    /// ... unclear (not enough data to tell).
    pub unclear: usize,
    /// Headline metrics of suspect cases (counted above; left out of
    /// `geomean_speedup` unless the comparison includes suspect cases).
    #[serde(skip_serializing_if = "is_zero")]
    pub suspect: usize,
    /// Headline metrics whose verdict's interval holds 1 (no difference
    /// shown).
    pub no_difference: usize,
    /// The largest [`MetricComparison::verdict_bound`] among them:
    /// "no difference beyond ±X % in N of M cases"; None when there are none.
    pub within: Option<f64>,
    /// The headline metrics as a conclusion groups them (not in the JSON,
    /// whose `metrics` hold each).
    #[serde(skip)]
    pub groups: Groups,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl FamilySummary {
    /// Headline metrics counted.
    pub(crate) fn total(&self) -> usize {
        self.faster + self.slower + self.tie + self.unclear
    }
}

/// A family's headline metrics as its conclusion names them, each group in
/// the metrics' order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Groups {
    /// Those judged slower, with how many times.
    pub slower: Vec<Carrier>,
    /// Those judged faster, with how many times.
    pub faster: Vec<Carrier>,
    /// Those shown the same: a tie, or no difference shown, with a bound
    /// no wider than [`MOST_SAME_BOUND`].
    pub same: usize,
    /// The largest bound among them (0 when none).
    pub same_bound: f64,
    /// The rest: nothing said.
    pub unclear: usize,
}

/// A case that carries a difference, and how many times better or worse
/// it is (≥ 1).
#[derive(Debug, Clone, PartialEq)]
pub struct Carrier {
    /// Case key.
    pub key: String,
    /// The factor, ≥ 1.
    pub factor: f64,
}

/// The groups of `mine`, one family's headline metrics.
fn groups(mine: &[&MetricComparison]) -> Groups {
    let carriers = |v: Verdict| -> Vec<Carrier> {
        mine.iter()
            .filter(|m| m.verdict == v)
            .map(|m| Carrier {
                key: m.key.clone(),
                factor: m.factor(),
            })
            .collect()
    };
    let (slower, faster) = (carriers(Verdict::Slower), carriers(Verdict::Faster));
    let same: Vec<f64> = mine
        .iter()
        .filter(|m| !matches!(m.verdict, Verdict::Faster | Verdict::Slower))
        // a tie may lie wholly on one side of 1 (a difference shown, but
        // within the band): it is the same within its bound all the same
        .filter(|m| m.verdict == Verdict::Tie || m.holds_one())
        .map(|m| m.verdict_bound())
        .filter(|b| *b <= MOST_SAME_BOUND)
        .collect();
    Groups {
        unclear: mine.len() - slower.len() - faster.len() - same.len(),
        slower,
        faster,
        same: same.len(),
        same_bound: same.iter().copied().fold(0.0, f64::max),
    }
}

/// One summary per environment and family, then per environment overall.
pub(super) fn summarize(metrics: &[MetricComparison], exclude_suspect: bool) -> Vec<FamilySummary> {
    let mut found: Vec<(String, String)> = metrics
        .iter()
        .map(|m| (m.environment.clone(), m.family.clone()))
        .collect();
    found.sort();
    found.dedup();
    let envs: BTreeSet<String> = metrics.iter().map(|m| m.environment.clone()).collect();
    found.extend(envs.into_iter().map(|e| (e, "overall".to_string())));
    found
        .into_iter()
        .map(|(env, family)| {
            let chosen: Vec<&MetricComparison> = metrics
                .iter()
                .filter(|m| {
                    m.primary && m.environment == env && (family == "overall" || m.family == family)
                })
                .collect();
            let logs: Vec<f64> = chosen
                .iter()
                .filter(|m| !exclude_suspect || m.suspect.is_empty())
                .map(|m| m.speedup())
                .filter(|s| super::comparable(*s))
                .map(f64::ln)
                .collect();
            let count = |v: Verdict| chosen.iter().filter(|m| m.verdict == v).count();
            let same: Vec<f64> = chosen
                .iter()
                .filter(|m| m.holds_one())
                .map(|m| m.verdict_bound())
                .collect();
            FamilySummary {
                geomean_speedup: if logs.is_empty() {
                    f64::NAN
                } else {
                    (logs.iter().sum::<f64>() / logs.len() as f64).exp()
                },
                faster: count(Verdict::Faster),
                slower: count(Verdict::Slower),
                tie: count(Verdict::Tie),
                unclear: count(Verdict::Unclear),
                suspect: chosen.iter().filter(|m| !m.suspect.is_empty()).count(),
                no_difference: same.len(),
                within: same.iter().copied().reduce(f64::max),
                groups: groups(&chosen),
                family,
                environment: env,
            }
        })
        .collect()
}
