//! Samples at three levels — runs (separate `envbench run`s), rounds (passes
//! over the case list inside a run, each case prepared afresh) and
//! repetitions — and the ratio of two environments with an effect-size
//! interval from a hierarchical bootstrap (Kalibera and Jones, "Rigorous
//! Benchmarking in Reasonable Time", ISMM 2013, and "Quantifying Performance
//! Changes with Effect Size Confidence Intervals", 2020).
//!
//! Everything is on the log scale, so a ratio is a difference and a 2x
//! effect is as far from 1 as 0.5x. A side's estimate is the mean over runs
//! of the mean over rounds of the median of repetitions (the median keeps a
//! descheduled repetition from moving a round).
//!
//! The bootstrap resamples with replacement at every level that has two or
//! more units, which gives the shape of each side's spread. Its scale is
//! off at the sizes envbench makes: resampling 3 runs shows (n−1)/n of
//! their variance, and resampling the repetitions inside each resampled run
//! counts the lower levels a second time (3 runs of 2 rounds made the
//! spread 1.6x too wide). So each side's replicates are scaled to the
//! unbiased variance of its estimate, var(top-level units)/n, and the
//! interval's half-widths by t(df)/z with df from Welch–Satterthwaite over
//! the top-level units (or both sides' degrees of freedom where their
//! spreads agree: [`pool_sides`]): with 3 runs per side the spread follows
//! a t distribution with about 4 degrees of freedom, not the normal (the
//! "expanded percentile" idea; T. Hesterberg, "What Teachers Should Know
//! About the Bootstrap", 2015).
//!
//! The variance of a side's estimate comes from the level that shows the
//! most of it. With two or more runs that is the spread between runs
//! (var(run estimates)/n, n − 1 degrees of freedom: Kalibera and Jones), or
//! the spread between the rounds of each run when it is larger
//! (σ²rounds·Σ(1/rᵢ)/n², with Σ(rᵢ − 1) degrees of freedom): rounds measured
//! in fresh processes at interleaved moments carry what makes runs differ,
//! and when the runs agree more closely than their rounds do, a handful of
//! runs would otherwise throw away the many rounds' degrees of freedom.
//! Runs that differ more than their rounds keep the between-run spread and
//! its few degrees of freedom.
//!
//! A side measured in one run cannot show how much runs differ by itself
//! ([`RunSpread`]): when its rounds ran in fresh worker processes, the
//! spread between them stands for the spread between runs; when earlier
//! runs on the same machine are known, their between-run variance is added
//! with its own degrees of freedom; otherwise an assumed spread
//! ([`UNMEASURED_RUN_SD`]) is added to every replicate. The comparison says
//! which.
//!
//! Sides measured interleaved (`run --in`) are compared by the differences
//! of their paired rounds instead ([`paired_log_ratio`]): the drift the
//! rounds shared cancels, and nothing is added for the spread between runs.
//!
//! Pure functions, seeded randomness.

use super::bootstrap::Ranked;
use super::dist::{f_quantile, normal_quantile, t_cdf, t_quantile};
use super::percentile_of_sorted;
use super::rng::Rng;
use serde::Serialize;

mod components;
mod paired;
mod ratio;
pub use components::Components;
pub use paired::paired_log_ratio;
pub(crate) use paired::PairedRound;
pub(crate) use ratio::log_ratio;
#[cfg(test)]
use ratio::log_ratio_pooling;
pub use ratio::LogRatio;

/// Standard deviation of ln(value) between runs assumed for a side measured
/// in a single run (10 %): A/A runs of the quick suite on shared 2-vCPU VMs
/// moved single metrics by 20-30 % between runs (a 1.29x drift is about
/// 1.8 such deviations of the difference), and a 1.5x effect still lies
/// beyond a ±2 % band with one run per side.
pub const UNMEASURED_RUN_SD: f64 = 0.10;

/// Standard deviation of ln(value) between runs beyond the spread between
/// their rounds' worker processes, for a side with one run and no earlier
/// runs to tell (4.5 %): on this project's 2-vCPU AMD EPYC VM, 30 one-run
/// A/A pairs of the quick suite (12 rounds in workers; 1 350 headline
/// comparisons) called 12.9 % of them beyond a ±2 % band with nothing
/// added, 7.1 % with 3 %, 3.3 % with 5 % (half-widths ±8.2, ±11.8 and
/// ±16.9 %): the host's slow changes (a case at 55 µs for one minute, 85 µs
/// the next) outlast a run. Earlier runs on the machine replace it.
pub const WORKER_RESIDUAL_SD: f64 = 0.045;

/// The level of [`POOL_TEST_LEVEL`]'s test for the differences of paired
/// rounds (`run --in`, `compare --by-dir`), 5 %: what runs do to both
/// sides alike cancels in the differences, so runs that differ beyond
/// their rounds are rarer there, and a one-run comparison already assumes
/// they do not. At 25 %, one pair in four of two runs that did not differ
/// got the runs' single degree of freedom (t = 12.7): on seeded quick
/// runs (12 rounds of 2, drifting or quiet, 400 seeds) two interleaved
/// runs found a 1.15x effect 0.75 and 0.74 of the time where one run found
/// it 0.95 and 1.00; at 5 %, 0.94 and 0.94, with A/A still called 0.5 and
/// 0.3 %; where each run adds ±4 % of its own to one side only, two runs
/// called A/A 6.2 and 7.7 % of the time against one run's 11.3 and 16.8 %
/// (`two_interleaved_runs_find_nearly_what_one_finds`). The price: runs
/// that do differ and escape the test are pooled, understating the
/// variance by up to the test's point of F (about 4.3 at two runs of 12
/// rounds, against 1.4 at 25 %).
pub const PAIRED_POOL_TEST_LEVEL: f64 = 0.05;

/// The level of the preliminary test that decides whether a side's runs
/// differ by more than their rounds explain: below the upper 25 % point
/// of F they are pooled with the rounds (Bancroft's "sometimes pool"; a
/// high level, so that runs that do differ are rarely pooled: undetected,
/// they understate the variance by at most that point of F).
pub const POOL_TEST_LEVEL: f64 = 0.25;

/// The level of the two-sided F test that decides whether two sides'
/// per-run variances are pooled ([`pool_sides`]): 25 %, as for runs and
/// rounds ([`POOL_TEST_LEVEL`]).
pub const SIDES_POOL_TEST_LEVEL: f64 = 0.25;

/// Where a side's between-run spread comes from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "source")]
pub enum RunSpread {
    /// Two or more runs measured it.
    Measured,
    /// One run whose rounds ran in separate worker processes: the spread
    /// between them stands for the spread between runs, with `residual`
    /// (sd of ln) added for what runs show beyond their workers' spread
    /// (slow changes of a shared host that outlast a run).
    Workers {
        /// The spread added beyond the workers'.
        residual: f64,
    },
    /// Earlier runs on the same machine: their between-run variance of
    /// ln(value), from `runs` runs.
    History {
        /// The variance between runs beyond what their rounds explain.
        var: f64,
        /// How many runs it comes from.
        runs: usize,
    },
    /// Nothing measured it: the assumed standard deviation of ln(value).
    Assumed {
        /// The spread added.
        sd: f64,
    },
    /// The sides were measured interleaved (`run --in`): each round of one
    /// is compared with the round of the other measured beside it, so the
    /// drift they shared cancels, and the spread of those differences
    /// (between rounds, and between runs where there are several) is the
    /// interval's ([`paired_log_ratio`]); nothing is added.
    Paired,
}

impl RunSpread {
    /// Whether the sides were compared round by round ([`RunSpread::Paired`]).
    pub(crate) fn is_paired(self) -> bool {
        self == RunSpread::Paired
    }

    /// The variance added to a one-run side's estimate, and its degrees
    /// of freedom (∞ for the assumed spread, which counts as known).
    fn added(self) -> (f64, f64) {
        match self {
            RunSpread::Measured | RunSpread::Paired => (0.0, f64::INFINITY),
            RunSpread::Workers { residual } => (residual * residual, f64::INFINITY),
            RunSpread::History { var, runs } => {
                (var.max(0.0), runs.saturating_sub(1).max(1) as f64)
            }
            RunSpread::Assumed { sd } => (sd * sd, f64::INFINITY),
        }
    }
}

/// The level a side's top-level units come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Two or more runs.
    Runs,
    /// One run, two or more rounds.
    Rounds,
    /// One run, one round, two or more repetitions.
    Repetitions,
    /// A single value.
    Single,
}

/// One side's samples: `runs[run][round][rep]`, natural logs of positive
/// values; no level is empty.
#[derive(Debug, Clone, PartialEq)]
pub struct Levels {
    runs: Vec<Vec<Vec<f64>>>,
    /// Whether the rounds gave a degree of freedom to the place in the
    /// round, taken out of paired differences ([`Levels::paired_in_turns`]).
    placed: bool,
}

impl Levels {
    /// Takes raw values (all finite and > 0) and logs them; empty rounds and
    /// runs are dropped. None when nothing is left or a value cannot be
    /// logged (zero, negative, not finite).
    pub(crate) fn from_raw(runs: &[Vec<Vec<f64>>]) -> Option<Levels> {
        let mut out = Vec::new();
        for run in runs {
            let mut rounds = Vec::new();
            for round in run.iter().filter(|r| !r.is_empty()) {
                if round.iter().any(|v| !v.is_finite() || *v <= 0.0) {
                    return None;
                }
                rounds.push(round.iter().map(|v| v.ln()).collect());
            }
            if !rounds.is_empty() {
                out.push(rounds);
            }
        }
        (!out.is_empty()).then_some(Levels {
            runs: out,
            placed: false,
        })
    }

    /// Whether the place in the round was taken out of these rounds.
    pub(crate) fn placed(&self) -> bool {
        self.placed
    }

    /// Number of runs.
    pub(crate) fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Rounds per run (mean, for the cookbook).
    pub(crate) fn rounds_per_run(&self) -> f64 {
        self.runs.iter().map(Vec::len).sum::<usize>() as f64 / self.runs.len() as f64
    }

    /// Repetitions per round (mean).
    pub(crate) fn reps_per_round(&self) -> f64 {
        let rounds: Vec<&Vec<f64>> = self.runs.iter().flatten().collect();
        rounds.iter().map(|r| r.len()).sum::<usize>() as f64 / rounds.len() as f64
    }

    /// The first level with two or more units.
    pub(crate) fn top(&self) -> Level {
        match (self.runs.len(), self.runs[0].len(), self.runs[0][0].len()) {
            (r, _, _) if r >= 2 => Level::Runs,
            (_, r, _) if r >= 2 => Level::Rounds,
            (_, _, r) if r >= 2 => Level::Repetitions,
            _ => Level::Single,
        }
    }

    /// The top level's units as values (each unit's nested estimate).
    pub(crate) fn top_units(&self) -> Vec<f64> {
        match self.top() {
            Level::Runs => self.run_estimates(),
            Level::Rounds => self.runs[0].iter().map(|r| median(r)).collect(),
            Level::Repetitions | Level::Single => self.runs[0][0].clone(),
        }
    }

    /// Each run's estimate of ln(value): the mean over its rounds of their
    /// medians.
    pub(crate) fn run_estimates(&self) -> Vec<f64> {
        self.runs.iter().map(|r| run_estimate(r)).collect()
    }

    /// The side's estimate of ln(value).
    pub(crate) fn estimate(&self) -> f64 {
        mean_of(self.runs.iter().map(|r| run_estimate(r)))
    }

    /// One bootstrap replicate of [`Levels::estimate`]: resample runs, then
    /// the rounds of each chosen run, then the repetitions of each chosen
    /// round, wherever a level has two or more units.
    /// `ranked` holds each round ranked once ([`Levels::ranked`]).
    fn resample(&self, ranked: &[Vec<Ranked>], rng: &mut Rng, counts: &mut Vec<u32>) -> f64 {
        let mut total = 0.0;
        for _ in 0..ranked.len() {
            let run = pick(ranked, rng);
            let mut run_sum = 0.0;
            for _ in 0..run.len() {
                let round = pick(run, rng);
                // as `pick` draws: nothing drawn from a round of one
                run_sum +=
                    round.resampled_median(counts, |n| if n == 1 { 0 } else { rng.below(n) });
            }
            total += run_sum / run.len() as f64;
        }
        total / self.runs.len() as f64
    }

    /// The variance of the side's estimate and its degrees of freedom
    /// (see the module's documentation): var(top-level units)/n with n − 1
    /// degrees of freedom; with two or more runs whose spread their rounds
    /// explain (an F test at [`POOL_TEST_LEVEL`]), the runs and the rounds
    /// within them pooled, with both levels' degrees of freedom. (0, ∞)
    /// for a single value.
    pub(crate) fn estimate_variance(&self) -> (f64, f64) {
        self.variance_pooling_runs(POOL_TEST_LEVEL).0
    }

    /// [`Levels::estimate_variance`] with the runs pooled by a test at
    /// `level`, and whether it pooled them with their rounds: false where the variance rests on two or more
    /// runs alone (they differ beyond what their rounds explain, no run
    /// has two rounds, or the rounds within runs do not vary) and where
    /// there are fewer than two runs.
    fn variance_pooling_runs(&self, level: f64) -> ((f64, f64), bool) {
        let units = self.top_units();
        let n = units.len() as f64;
        let top = variance(&units).map_or((0.0, f64::INFINITY), |v| (v / n, n - 1.0));
        if self.top() != Level::Runs {
            // one run's rounds: one degree of freedom less where the place
            // in the round was taken out of them
            let spent = f64::from(u8::from(self.top() == Level::Rounds && self.placed));
            return ((top.0, top.1 - spent), false);
        }
        let rounds: Vec<Vec<f64>> = self
            .runs
            .iter()
            .map(|run| run.iter().map(|r| median(r)).collect())
            .collect();
        let dof = rounds
            .iter()
            .map(|r| r.len().saturating_sub(1))
            .sum::<usize>()
            .saturating_sub(usize::from(self.placed)) as f64;
        let Some(within) = pooled(rounds.iter().map(Vec::as_slice)) else {
            return (top, false);
        };
        // the variance of the estimate if the runs differed only as their rounds do
        let inv: f64 = rounds.iter().map(|r| 1.0 / r.len() as f64).sum();
        let by_rounds = within * inv / (n * n);
        if by_rounds <= 0.0 || top.0 > by_rounds * f_quantile(1.0 - level, top.1, dof) {
            return (top, false);
        }
        let df = top.1 + dof;
        (((top.1 * top.0 + dof * by_rounds) / df, df), true)
    }

    /// Every round ranked for resampling its median.
    fn ranked(&self) -> Vec<Vec<Ranked>> {
        self.runs
            .iter()
            .map(|run| run.iter().map(|round| Ranked::new(round)).collect())
            .collect()
    }

    /// The side's bootstrap deviations from its estimate, scaled so that
    /// their mean square is `target`, the variance of the estimate.
    fn deviations(&self, target: f64, rng: &mut Rng, resamples: usize) -> Vec<f64> {
        let estimate = self.estimate();
        let ranked = self.ranked();
        let mut counts = Vec::new();
        let mut devs: Vec<f64> = (0..resamples)
            .map(|_| self.resample(&ranked, rng, &mut counts) - estimate)
            .collect();
        // centred on the replicates' mean: resampling the repetitions of a
        // round biases its median (from {a, b, outlier} it never falls
        // below b), and a biased cloud would read as a one-sided certainty
        let centre = devs.iter().sum::<f64>() / resamples as f64;
        devs.iter_mut().for_each(|d| *d -= centre);
        let boot = devs.iter().map(|d| d * d).sum::<f64>() / resamples as f64;
        let k = if boot > 0.0 {
            (target / boot).sqrt()
        } else {
            0.0
        };
        devs.iter_mut().for_each(|d| *d *= k);
        devs
    }

    /// Variance of ln(value) at each level, by the method of moments
    /// (each level's spread less what the level below explains); None
    /// where a level has fewer than two units anywhere.
    pub(crate) fn components(&self) -> Components {
        let rounds: Vec<&Vec<f64>> = self.runs.iter().flatten().collect();
        let reps = pooled(rounds.iter().map(|r| r.as_slice()));
        let k = self.reps_per_round();
        let round_means: Vec<Vec<f64>> = self
            .runs
            .iter()
            .map(|run| run.iter().map(|r| mean_of(r.iter().copied())).collect())
            .collect();
        let rounds_var = pooled(round_means.iter().map(Vec::as_slice))
            .map(|v| (v - reps.unwrap_or(0.0) / k).max(0.0));
        let run_means: Vec<f64> = round_means
            .iter()
            .map(|r| mean_of(r.iter().copied()))
            .collect();
        let r = self.rounds_per_run();
        let runs_var = variance(&run_means)
            .map(|v| (v - rounds_var.unwrap_or(0.0) / r - reps.unwrap_or(0.0) / (r * k)).max(0.0));
        Components {
            runs: runs_var,
            rounds: rounds_var,
            repetitions: reps,
        }
    }
}

fn pick<'a, T>(xs: &'a [T], rng: &mut Rng) -> &'a T {
    if xs.len() == 1 {
        &xs[0]
    } else {
        &xs[rng.below(xs.len())]
    }
}

/// A standard normal draw (Box–Muller).
pub(crate) fn normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.unit_f64(); // (0, 1]
    let u2 = rng.unit_f64();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn run_estimate(rounds: &[Vec<f64>]) -> f64 {
    mean_of(rounds.iter().map(|r| median(r)))
}

pub(crate) fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    super::median_of_sorted(&v)
}

pub(super) fn mean_of(xs: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    sum / n as f64
}

/// Sample variance (n − 1); None below two values.
pub(super) fn variance(xs: &[f64]) -> Option<f64> {
    (xs.len() >= 2).then(|| {
        let m = mean_of(xs.iter().copied());
        xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64
    })
}

/// Variance pooled over groups (each group's squares about its own mean,
/// over the summed degrees of freedom); None when no group has two values.
fn pooled<'a>(groups: impl Iterator<Item = &'a [f64]>) -> Option<f64> {
    let (mut ss, mut dof) = (0.0, 0usize);
    for g in groups.filter(|g| g.len() >= 2) {
        let m = mean_of(g.iter().copied());
        ss += g.iter().map(|x| (x - m).powi(2)).sum::<f64>();
        dof += g.len() - 1;
    }
    (dof > 0).then(|| ss / dof as f64)
}

#[cfg(test)]
pub(crate) mod tests;
