//! Sides measured interleaved (`run --in`): the differences of their
//! paired rounds, the log-ratio from them, and the cookbook counted in
//! interleaved runs; and runs of one label that are two environments.

use super::{mean_of, median, variance, Components, Levels, LogRatio, RunSpread};
use super::{percentile_of_sorted, t_quantile, Rng, PAIRED_POOL_TEST_LEVEL};

/// How far apart two runs of one label must lie, in their own 95 %
/// half-widths summed, to be two environments rather than drift (3), and
/// at least [`SPLIT_FACTOR`] apart: runs under `strace` recorded with the
/// label of plain ones differ by 100x and more, with intervals of a few
/// percent; drift on this project's VMs moved runs by 20-30 %.
pub const SPLIT_GAP: f64 = 3.0;

/// The smallest factor between two runs of one label that can make them
/// two environments (2x): drift between runs stays well below it.
pub const SPLIT_FACTOR: f64 = 2.0;

impl Levels {
    /// The differences of rounds measured side by side (an interleaved
    /// run, `run --in`): `runs[run][round]` holds (base's repetitions,
    /// other's repetitions) of one round both sides measured, and each
    /// becomes one value, ln(median of other's) − ln(median of base's).
    /// Rounds with a side empty and runs with no round are dropped. None
    /// when nothing is left or a value cannot be logged.
    pub(crate) fn paired(runs: &[Vec<(Vec<f64>, Vec<f64>)>]) -> Option<Levels> {
        let log_median = |xs: &[f64]| {
            xs.iter()
                .all(|v| v.is_finite() && *v > 0.0)
                .then(|| median(xs).ln())
        };
        let mut out = Vec::new();
        for run in runs {
            let mut rounds = Vec::new();
            for (base, other) in run.iter().filter(|(b, o)| !b.is_empty() && !o.is_empty()) {
                rounds.push(vec![log_median(other)? - log_median(base)?]);
            }
            if !rounds.is_empty() {
                out.push(rounds);
            }
        }
        (!out.is_empty()).then_some(Levels { runs: out })
    }

    /// Each run's estimate with the half-width of its 95 % interval from
    /// its rounds (t with r − 1 degrees of freedom); None when a run has
    /// fewer than two rounds.
    fn run_intervals(&self) -> Option<Vec<(f64, f64)>> {
        self.runs
            .iter()
            .map(|run| {
                let medians: Vec<f64> = run.iter().map(|r| median(r)).collect();
                let v = variance(&medians)?;
                let n = medians.len() as f64;
                Some((
                    mean_of(medians.iter().copied()),
                    t_quantile(0.975, n - 1.0) * (v / n).sqrt(),
                ))
            })
            .collect()
    }

    /// Whether the runs fall into groups that disagree far beyond their own
    /// intervals: sorted by estimate, two neighbours more than
    /// [`SPLIT_GAP`] times their half-widths summed and [`SPLIT_FACTOR`]
    /// apart. Such runs measured two environments under one label, and
    /// their spread is no evidence of how much runs of one differ. False
    /// when a run has fewer than two rounds (its interval is unknown).
    pub(crate) fn runs_split(&self) -> bool {
        let Some(mut runs) = self.run_intervals() else {
            return false;
        };
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        runs.windows(2).any(|w| {
            let gap = w[1].0 - w[0].0;
            gap > SPLIT_GAP * (w[0].1 + w[1].1) && gap > SPLIT_FACTOR.ln()
        })
    }
}

/// The log-ratio other/base of sides measured interleaved, from the
/// differences of their paired rounds ([`Levels::paired`]): the mean
/// difference, its variance from the level that shows the most of it
/// ([`Levels::variance_pooling_runs`]: the rounds of one run, or the runs,
/// pooled with their rounds where those explain them, by a test at
/// [`PAIRED_POOL_TEST_LEVEL`]), the bootstrap's
/// shape scaled to it, and its degrees of freedom. Nothing is added for
/// the spread between runs: what runs do to both sides alike cancels in
/// the differences, and with several runs their spread is measured. (On
/// this project's AMD EPYC VM, 264 one-run A/A intervals of six
/// interleaved quick runs held 1 in 93.6 % of cases, about as 95 %
/// intervals should: what runs add beyond their paired rounds hardly showed.)
pub fn paired_log_ratio(diffs: &Levels, seed: u64, resamples: usize) -> LogRatio {
    paired_log_ratio_at(diffs, seed, resamples, PAIRED_POOL_TEST_LEVEL)
}

/// [`paired_log_ratio`] with the runs pooled with their rounds by a test
/// at `level`.
pub(crate) fn paired_log_ratio_at(
    diffs: &Levels,
    seed: u64,
    resamples: usize,
    level: f64,
) -> LogRatio {
    let mut rng = Rng::new(seed);
    let ((var, df), pooled) = diffs.variance_pooling_runs(level);
    let mut devs = diffs.deviations(var, &mut rng, resamples.max(2));
    devs.sort_by(f64::total_cmp);
    LogRatio {
        point: diffs.estimate(),
        low_dev: (-percentile_of_sorted(&devs, 0.025)).max(0.0),
        high_dev: percentile_of_sorted(&devs, 0.975).max(0.0),
        df: df.max(1.0),
        top: (diffs.top(), diffs.top()),
        spread: (RunSpread::Paired, RunSpread::Paired),
        runs_differ: diffs.top() == super::Level::Runs && !pooled,
    }
}

impl Components {
    /// [`Components::runs_needed`] for sides measured interleaved, these
    /// being the components of the paired rounds' differences
    /// ([`Levels::paired`]): the fewest interleaved runs of `rounds` rounds
    /// whose interval's half-width ([`Components::interleaved_half_width`])
    /// falls within `margin`. `runs_differ` says whether the interval now
    /// shown took the runs' degrees of freedom ([`LogRatio::runs_differ`]):
    /// the plan decides as the interval did. None when nothing varies or
    /// more than `max_runs` are needed.
    pub(crate) fn interleaved_runs_needed(
        &self,
        rounds: f64,
        margin: f64,
        max_runs: usize,
        runs_differ: bool,
    ) -> Option<usize> {
        if self.runs.is_none() && self.rounds.is_none() {
            return None;
        }
        (1..=max_runs).find(|&n| {
            self.interleaved_half_width(n, rounds, runs_differ)
                .is_some_and(|h| h <= margin)
        })
    }

    /// The half-width on the log scale of the 95 % interval that `n`
    /// interleaved runs of `rounds` rounds would give, as
    /// [`paired_log_ratio`] computes it, with these components for the
    /// true ones. With one run's mean difference varying by
    /// V₁ = σ²runs + σ²rounds/r: where the runs differ (`runs_differ`),
    /// t(n − 1) · √(V₁/n), so that one run, which cannot see them
    /// differ, plans nothing; else the runs pooled with their rounds, their
    /// variances weighted by their degrees of freedom,
    /// V = ((n − 1) V₁/n + n (r − 1) σ²rounds/(n r)) / (n r − 1), with
    /// t(n r − 1) (one run: its rounds, t(r − 1) · √(σ²rounds/r)). None
    /// where no degree of freedom is left.
    pub(crate) fn interleaved_half_width(
        &self,
        n: usize,
        rounds: f64,
        runs_differ: bool,
    ) -> Option<f64> {
        let (n, r) = (n as f64, rounds.max(1.0));
        let rounds_var = self.rounds.unwrap_or(0.0);
        let per_run = self.runs.unwrap_or(0.0) + rounds_var / r;
        let (var, df) = if runs_differ || r <= 1.0 {
            (per_run / n, n - 1.0)
        } else {
            let df = n * r - 1.0;
            let within = n * (r - 1.0) * rounds_var / (n * r);
            (((n - 1.0) * per_run / n + within) / df, df)
        };
        (df >= 1.0).then(|| t_quantile(0.975, df) * var.sqrt())
    }
}
