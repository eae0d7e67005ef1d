//! Sides measured interleaved (`run --in`): the differences of their
//! paired rounds, the log-ratio from them, and the cookbook counted in
//! interleaved runs; and runs of one label that are two environments.

use super::{f_quantile, percentile_of_sorted, t_quantile, Rng, PAIRED_POOL_TEST_LEVEL};
use super::{mean_of, median, variance, Components, Levels, LogRatio, RunSpread};

/// How far apart two runs of one label must lie, in their own 95 %
/// half-widths summed, to be two environments rather than drift (3), and
/// at least [`SPLIT_FACTOR`] apart: runs under `strace` recorded with the
/// label of plain ones differ by 100x and more, with intervals of a few
/// percent; drift on this project's VMs moved runs by 20-30 %.
pub const SPLIT_GAP: f64 = 3.0;

/// The smallest factor between two runs of one label that can make them
/// two environments (2x): drift between runs stays well below it.
pub const SPLIT_FACTOR: f64 = 2.0;

/// The fewest rounds the runs must have in each place (measured first,
/// and measured second) for the place in the round to be taken out (3):
/// with fewer, the degree of freedom it costs weighs more than the spread
/// it can remove.
pub const PLACE_MIN_ROUNDS: usize = 3;

/// The level of the F test that decides whether the place in the round
/// is taken out (25 %, as [`super::POOL_TEST_LEVEL`]'s): where the place
/// does not matter, taking it out costs a degree of freedom, and left in,
/// it widens the interval (never narrows it, the places alternating).
pub const PLACE_TEST_LEVEL: f64 = 0.25;

/// The runs' paired differences (`runs[run][round]`) with the place in
/// the round taken out (`base_first`, the same shape: whether base went
/// first), as [`Levels::paired_in_turns`] says; None where it is not.
///
/// One place effect for all runs, as a crossover trial's period effect:
/// each run's differences about their mean regressed on the place (±½),
/// the slope g the gap between going first and second. It is taken out
/// where its F test (1 and N − runs − 1 degrees of freedom, N rounds in
/// all) passes [`PLACE_TEST_LEVEL`]: each difference less g times its
/// place, and each run's deviations from its mean scaled by
/// √((N − runs)/(N − runs − 1)), so that the rounds' pooled variance is
/// the residual variance over its degrees of freedom.
fn without_place(runs: &[Vec<f64>], base_first: &[Vec<bool>]) -> Option<Vec<Vec<f64>>> {
    let told = |f: bool| base_first.iter().flatten().filter(|&&b| b == f).count();
    if told(true) < PLACE_MIN_ROUNDS || told(false) < PLACE_MIN_ROUNDS {
        return None;
    }
    let place = |f: bool| if f { 0.5 } else { -0.5 };
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (d, f) in runs.iter().zip(base_first) {
        let (md, mx) = (
            mean_of(d.iter().copied()),
            mean_of(f.iter().map(|&f| place(f))),
        );
        for (y, &f) in d.iter().zip(f) {
            let (x, y) = (place(f) - mx, y - md);
            sxy += x * y;
            sxx += x * x;
            syy += y * y;
        }
    }
    let n: usize = runs.iter().map(Vec::len).sum();
    let df = n.checked_sub(runs.len() + 1).filter(|&df| df >= 1)? as f64;
    if sxx <= 0.0 {
        return None;
    }
    let explained = sxy * sxy / sxx;
    let residual = (syy - explained) / df;
    if residual <= 0.0 || explained / residual <= f_quantile(1.0 - PLACE_TEST_LEVEL, 1.0, df) {
        return None;
    }
    let g = sxy / sxx;
    let k = ((df + 1.0) / df).sqrt();
    Some(
        runs.iter()
            .zip(base_first)
            .map(|(d, f)| {
                let out: Vec<f64> = d.iter().zip(f).map(|(y, &f)| y - g * place(f)).collect();
                let m = mean_of(out.iter().copied());
                out.iter().map(|y| m + (y - m) * k).collect()
            })
            .collect(),
    )
}

/// One round two sides measured side by side: (base's repetitions,
/// other's repetitions).
pub(crate) type PairedRound = (Vec<f64>, Vec<f64>);

impl Levels {
    /// The differences of rounds measured side by side (an interleaved
    /// run, `run --in`): `runs[run][round]` holds (base's repetitions,
    /// other's repetitions) of one round both sides measured, and each
    /// becomes one value, ln(median of other's) − ln(median of base's).
    /// Rounds with a side empty and runs with no round are dropped. None
    /// when nothing is left or a value cannot be logged.
    pub(crate) fn paired(runs: &[Vec<PairedRound>]) -> Option<Levels> {
        Levels::paired_in_turns(runs, &[])
    }

    /// [`Levels::paired`] with the place in the round taken out where it
    /// shows: `base_first[run][round]` says whether base measured that
    /// round before other (the environments take turns going first).
    /// Where every round is told, with [`PLACE_MIN_ROUNDS`] or more in
    /// each place, and going first differs from going second by an F test
    /// at [`PLACE_TEST_LEVEL`], the difference is taken out of every round
    /// as a crossover trial takes out its periods ([`without_place`]), and
    /// the rounds give one degree of freedom less; unless runs that their
    /// rounds explained with the place in (the test at
    /// [`PAIRED_POOL_TEST_LEVEL`]) would no longer be explained with it
    /// out: there the place does not fit the runs, and stays in.
    pub(crate) fn paired_in_turns(
        runs: &[Vec<PairedRound>],
        base_first: &[Vec<bool>],
    ) -> Option<Levels> {
        let log_median = |xs: &[f64]| {
            xs.iter()
                .all(|v| v.is_finite() && *v > 0.0)
                .then(|| median(xs).ln())
        };
        let (mut out, mut places) = (Vec::new(), Vec::new());
        for (i, run) in runs.iter().enumerate() {
            let firsts = base_first.get(i).filter(|f| f.len() == run.len());
            let (mut rounds, mut told) = (Vec::new(), Vec::new());
            for (j, (base, other)) in run.iter().enumerate() {
                if base.is_empty() || other.is_empty() {
                    continue;
                }
                rounds.push(log_median(other)? - log_median(base)?);
                told.push(firsts.map(|f| f[j]));
            }
            if !rounds.is_empty() {
                out.push(rounds);
                places.push(told);
            }
        }
        let told: Option<Vec<Vec<bool>>> = places
            .into_iter()
            .map(|run| run.into_iter().collect())
            .collect();
        let levels = |runs: Vec<Vec<f64>>, placed| {
            let runs: Vec<Vec<Vec<f64>>> = runs
                .into_iter()
                .map(|run| run.into_iter().map(|d| vec![d]).collect())
                .collect();
            Levels { runs, placed }
        };
        if out.is_empty() {
            return None;
        }
        let adjusted = told.and_then(|t| without_place(&out, &t));
        let left = levels(out, false);
        // taken out, the rounds spread less, and runs they explained may
        // no longer be explained: where the place does not fit the runs
        // (a run's rounds uneven between the places, each run's mean moved
        // the other way), left in it is
        let pooled = |l: &Levels| l.variance_pooling_runs(PAIRED_POOL_TEST_LEVEL).1;
        Some(match adjusted.map(|a| levels(a, true)) {
            Some(a) if !pooled(&left) || pooled(&a) => a,
            _ => left,
        })
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
        placed: diffs.placed(),
    }
}

impl Components {
    /// [`Components::runs_needed`] for sides measured interleaved, these
    /// being the components of the paired rounds' differences
    /// ([`Levels::paired`]): the fewest interleaved runs of `rounds` rounds
    /// whose interval's half-width ([`Components::interleaved_half_width`])
    /// falls within `margin`. `runs_differ` says whether the interval now
    /// shown took the runs' degrees of freedom ([`LogRatio::runs_differ`]),
    /// `placed` whether its rounds spent one on the place in the round
    /// ([`LogRatio::placed`]): the plan decides as the interval did. None
    /// when nothing varies or more than `max_runs` are needed.
    pub(crate) fn interleaved_runs_needed(
        &self,
        rounds: f64,
        margin: f64,
        max_runs: usize,
        (runs_differ, placed): (bool, bool),
    ) -> Option<usize> {
        if self.runs.is_none() && self.rounds.is_none() {
            return None;
        }
        (1..=max_runs).find(|&n| {
            self.interleaved_half_width(n, rounds, (runs_differ, placed))
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
    /// V = ((n − 1) V₁/n + (n (r − 1) − p) σ²rounds/(n r)) / (n r − 1 − p),
    /// with t(n r − 1 − p), where p is 1 if the place in the round is taken
    /// out (`placed`) and 0 if not (one run: its rounds,
    /// t(r − 1 − p) · √(σ²rounds/r)). None where no degree of freedom is
    /// left.
    pub(crate) fn interleaved_half_width(
        &self,
        n: usize,
        rounds: f64,
        (runs_differ, placed): (bool, bool),
    ) -> Option<f64> {
        let (n, r) = (n as f64, rounds.max(1.0));
        let p = f64::from(u8::from(placed));
        let rounds_var = self.rounds.unwrap_or(0.0);
        let per_run = self.runs.unwrap_or(0.0) + rounds_var / r;
        let (var, df) = if runs_differ || r <= 1.0 {
            (per_run / n, n - 1.0)
        } else {
            let df = n * r - 1.0 - p;
            let within = (n * (r - 1.0) - p) * rounds_var / (n * r);
            (((n - 1.0) * per_run / n + within) / df, df)
        };
        (df >= 1.0).then(|| t_quantile(0.975, df) * var.sqrt())
    }
}
