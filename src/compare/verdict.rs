//! Verdicts: the four outcomes from an interval and the threshold band, and
//! multiple-comparison control over the headline metrics of one
//! environment (Benjamini–Hochberg selection, Benjamini–Yekutieli
//! false-coverage-adjusted intervals for the selected); then, for each
//! headline metric left unclear, the runs that would resolve it
//! ([`settle`]). The band itself is drawn where each metric is measured
//! (`per_metric`).

use super::{orient_interval, MetricComparison, FDR, MAX_ADVISED_RUNS};
use crate::stats::levels::LogRatio;
use serde::Serialize;

/// Outcome of one comparison, oriented by the metric's direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The whole interval of the speed-up lies above the band.
    Faster,
    /// The whole interval lies below the band.
    Slower,
    /// The whole interval lies inside the band: shown equal (a technical tie).
    Tie,
    /// Not enough data to tell: the interval straddles an edge of the band,
    /// or lies beyond it only before the control for multiple comparisons.
    Unclear,
}

impl Verdict {
    /// The word used in every report.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Tie => "tie",
            Verdict::Unclear => "unclear",
        }
    }
}

/// The outcome of a speed-up interval against the band.
pub(super) fn classify(speedup: (f64, f64), threshold: f64) -> Verdict {
    let (lo, hi) = speedup;
    if lo > 1.0 + threshold {
        Verdict::Faster
    } else if hi < 1.0 - threshold {
        Verdict::Slower
    } else if lo >= 1.0 - threshold && hi <= 1.0 + threshold {
        Verdict::Tie
    } else {
        Verdict::Unclear
    }
}

fn exp_interval((lo, hi): (f64, f64)) -> (f64, f64) {
    (lo.exp(), hi.exp())
}

/// Judges the metrics of one environment ([`judge_all`] at the false
/// discovery rate [`FDR`]), then advises the runs that would resolve each
/// unclear headline metric ([`advise_runs`]).
pub(super) fn settle(metrics: &mut [(MetricComparison, LogRatio)], threshold: f64) {
    judge_all(metrics, threshold);
    advise_runs(metrics, threshold);
}

/// Judges the metrics of one environment. Secondary metrics: the plain
/// 95 % interval decides. Headline metrics: Benjamini–Hochberg at `fdr` ([`FDR`])
/// over their p-values selects R of m as beyond the band; a selected one is
/// faster or slower by its interval at level 1 − R·fdr/m (which lies beyond
/// the band exactly when it was selected); the others are tie when their
/// 95 % interval lies inside the band and unclear otherwise.
///
/// The interval a verdict rests on is kept beside the plain one
/// (`ratio_ci_adjusted`) for every headline metric whose verdict the
/// control decided: the selected, and those not selected whose 95 %
/// interval lies beyond the band. For these the level is 1 − max(R, 1)·fdr/m,
/// the same as the selected's: a metric not selected has p ≥ max(R, 1)·fdr/m
/// (step-up), so its interval at that level reaches into the band, and
/// "unclear" agrees with the interval printed.
fn judge_all(metrics: &mut [(MetricComparison, LogRatio)], threshold: f64) {
    let fdr = FDR;
    let headline: Vec<usize> = (0..metrics.len())
        .filter(|&i| metrics[i].0.primary)
        .collect();
    let p: Vec<f64> = headline.iter().map(|&i| metrics[i].0.p_value).collect();
    let adjusted = crate::stats::hypothesis::benjamini_hochberg(&p);
    let m = headline.len().max(1) as f64;
    let selected = adjusted.iter().filter(|&&q| q < fdr).count();
    let level = 1.0 - selected.max(1) as f64 * fdr / m;
    for (k, &i) in headline.iter().enumerate() {
        let (mc, lr) = &mut metrics[i];
        mc.p_adjusted = adjusted[k];
        let plain = classify(orient_interval(mc.direction, mc.ratio_ci), threshold);
        let chosen = adjusted[k] < fdr;
        if chosen || matches!(plain, Verdict::Faster | Verdict::Slower) {
            let wide = exp_interval(lr.interval(level));
            mc.ratio_ci_adjusted = Some(wide);
            mc.confidence_adjusted = Some(level);
        }
        mc.verdict = match (chosen, mc.ratio_ci_adjusted) {
            (true, Some(wide)) => classify(orient_interval(mc.direction, wide), threshold),
            _ if plain == Verdict::Tie => Verdict::Tie,
            _ => Verdict::Unclear,
        };
    }
    for (mc, _) in metrics.iter_mut().filter(|(mc, _)| !mc.primary) {
        mc.verdict = classify(orient_interval(mc.direction, mc.ratio_ci), threshold);
    }
}

/// For each unclear headline metric with two or more runs a side, or
/// measured interleaved: the runs per side (interleaved runs) that would
/// resolve an effect of the threshold's size.
fn advise_runs(mine: &mut [(MetricComparison, LogRatio)], threshold: f64) {
    for (m, lr) in mine.iter_mut() {
        if !m.primary || m.verdict != Verdict::Unclear {
            continue;
        }
        let b = &m.basis;
        let margin = (lr.point.abs() - (1.0 + threshold).ln()).abs();
        let rounds = b.rounds_per_run.0.min(b.rounds_per_run.1);
        let c = &m.variance.components;
        m.runs_needed = if lr.spread.0.is_paired() {
            // planned as the interval was made: on the runs alone where
            // they differ beyond their rounds, else pooled with them
            c.interleaved_runs_needed(
                rounds,
                margin,
                MAX_ADVISED_RUNS,
                (lr.runs_differ, lr.placed),
            )
        } else if b.runs.0.min(b.runs.1) >= 2 {
            let reps = b.reps_per_round.0.min(b.reps_per_round.1);
            c.runs_needed(rounds, reps, margin, MAX_ADVISED_RUNS)
        } else {
            None
        };
    }
}
