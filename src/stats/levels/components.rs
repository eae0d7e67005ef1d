//! Variance components of one side's samples (runs, rounds, repetitions)
//! and the cookbook that turns them into the runs a comparison needs.

use super::t_quantile;
use serde::Serialize;

/// Variance of ln(value) between runs, between rounds of a run and between
/// repetitions of a round (None: not measurable from these data).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Components {
    /// Between runs.
    pub runs: Option<f64>,
    /// Between rounds within a run.
    pub rounds: Option<f64>,
    /// Between repetitions within a round.
    pub repetitions: Option<f64>,
}

impl Components {
    /// The mean of two sides' components (each level from the sides that measured it).
    pub(crate) fn pool(a: &Components, b: &Components) -> Components {
        let avg = |x: Option<f64>, y: Option<f64>| match (x, y) {
            (Some(x), Some(y)) => Some((x + y) / 2.0),
            (x, y) => x.or(y),
        };
        Components {
            runs: avg(a.runs, b.runs),
            rounds: avg(a.rounds, b.rounds),
            repetitions: avg(a.repetitions, b.repetitions),
        }
    }

    /// Each measured level's share of their sum, in the order runs, rounds,
    /// repetitions; None when nothing varies.
    pub(crate) fn shares(&self) -> Option<[Option<f64>; 3]> {
        let parts = [self.runs, self.rounds, self.repetitions];
        let total: f64 = parts.iter().flatten().sum();
        (total > 0.0).then(|| parts.map(|p| p.map(|v| v / total)))
    }

    /// The cookbook (Kalibera and Jones): the fewest runs per side, with
    /// `rounds` rounds of `reps` repetitions each, for which the interval's
    /// half-width t(2n−2) · √(2 V(n)) on the log scale falls within
    /// `margin`: for an unclear comparison, the distance from its estimate
    /// to the nearest edge of the band, so that the interval then lies on
    /// one side of that edge. V(n) = (σ²runs + σ²rounds/r + σ²reps/(r k)) / n.
    /// None when the between-run variance is unmeasured or more than
    /// `max_runs` are needed.
    pub(crate) fn runs_needed(
        &self,
        rounds: f64,
        reps: f64,
        margin: f64,
        max_runs: usize,
    ) -> Option<usize> {
        let (r, k) = (rounds.max(1.0), reps.max(1.0));
        let per_run =
            self.runs? + self.rounds.unwrap_or(0.0) / r + self.repetitions.unwrap_or(0.0) / (r * k);
        (2..=max_runs).find(|&n| {
            let half = t_quantile(0.975, (2 * n - 2) as f64) * (2.0 * per_run / n as f64).sqrt();
            half <= margin
        })
    }
}
