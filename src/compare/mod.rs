//! Comparison of environments. Per case and metric: the ratio other/baseline
//! of each side's estimate with an effect-size interval from a hierarchical
//! bootstrap over runs, rounds and repetitions ([`crate::stats::levels`]),
//! the seeds' variation (base − other)/base × 100, and one of four outcomes
//! oriented by the metric's direction: faster or slower (the whole interval
//! beyond the threshold band), tie (the whole interval inside it: the
//! seeds' "technical tie") or unclear (it straddles a band edge).
//!
//! Multiple comparisons: the headline metric of each case (its first) is
//! what family counts, geometric means and recommendations rest on. Over
//! the headline metrics of each environment, Benjamini–Hochberg selects the
//! ones beyond the band (false discovery rate 5 %) and their intervals are
//! widened to the level 1 − R·q/m (Benjamini and Yekutieli's false coverage
//! rate, 2005); so are those of the unselected whose 95 % interval lies
//! beyond the band, which are unclear, so that every verdict has the
//! interval it rests on. Secondary metrics keep plain 95 % intervals and
//! are marked secondary.
//!
//! Suspect cases (a flag of the validity guardrails in any run of
//! either side) keep their verdicts but are marked, named in the notices
//! and counted in the geometric means unless `exclude_suspect`: a
//! family's mean is never blank.
//!
//! Environments are groups of runs (one label, or files given with
//! `--base`/`--other`). Reads only `results` types and returns facts:
//! verdicts, counts, bounds, notices and advice as typed values. Every
//! sentence about them is the report's (`report::comparison::conclude`,
//! `report::comparison::warning`, `report::words`).

mod advice;
pub mod attribute;
pub mod diagnose;
pub mod group;
mod notice;
pub mod pairing;
mod per_family;
mod per_metric;
mod verdict;

pub use advice::{Advice, MoreRuns, Unsettled, MOST_RUNS_ADVISED};
pub use notice::{
    IdleStates, MetricRef, Mismatch, NoJournal, Notice, Recorded, Setting, SingleRunSpread,
    SuspectFlag, SuspectTally,
};
pub use per_family::{Carrier, FamilySummary, Groups};
pub use verdict::Verdict;

use crate::results::ResultFile;
use crate::stats::levels::{Components, Level, RunSpread, UNMEASURED_RUN_SD};
use crate::units::{Direction, Unit};
use serde::Serialize;
use thiserror::Error;

/// Default threshold band: differences within ±2 % are a technical tie.
pub const DEFAULT_THRESHOLD: f64 = 0.02;
/// False discovery rate over the headline metrics of an environment.
pub const FDR: f64 = 0.05;
/// Confidence of the plain intervals: every interval's.
pub use crate::stats::bootstrap::CONFIDENCE;
/// Most runs per side the advice will suggest.
pub const MAX_ADVISED_RUNS: usize = 30;

/// The largest ratio a comparison reports, and its inverse the smallest:
/// beyond them a ratio, its inverse (a time ratio's speed-up) or its
/// percentage would be no number a report can show. 1e-320 is finite, but
/// its inverse is not: it printed "infx" in a family's line.
pub const MAX_RATIO: f64 = 1e300;

/// Whether `r` is a ratio a comparison can report: from 1 / [`MAX_RATIO`]
/// to [`MAX_RATIO`], so not 0, subnormal, infinite or NaN, and its
/// inverse and its percentage are finite too.
pub fn comparable(r: f64) -> bool {
    (1.0 / MAX_RATIO..=MAX_RATIO).contains(&r)
}

/// Why environments cannot be compared.
#[derive(Debug, Error)]
pub enum CompareError {
    /// No environment at all.
    #[error("need at least two environments to compare; none given")]
    NoEnvironment,
    /// Every run has the one label given.
    #[error(
        "need at least two environments to compare; every run is labelled '{0}'; label runs per environment (run --label) or use --base/--other"
    )]
    OneEnvironment(String),
    /// Nothing in common.
    #[error("no case is common to {0} and {1}: they ran different benchmarks")]
    NoCommonCases(String, String),
    /// An environment none of whose cases finished in any run.
    #[error(
        "{environment} has no case that finished ({}{}): nothing to compare; `envbench show` \
         gives each reason",
        if counts.is_empty() { "no case in its runs".to_string() } else { counts.join(", ") },
        if *interrupted { "; a run was interrupted" } else { "" }
    )]
    NothingFinished {
        /// Its label.
        environment: String,
        /// Its cases by status: "2 failed", "1 skipped".
        counts: Vec<String>,
        /// Whether a run of it was interrupted.
        interrupted: bool,
    },
}

/// [`CompareError::NothingFinished`] for `env` when none of its cases
/// finished: a failed or interrupted run is not "different benchmarks".
fn nothing_finished(env: &Environment) -> Option<CompareError> {
    use crate::results::{CaseStatus, RunStatus};
    if !per_metric::ok_keys(env).is_empty() {
        return None;
    }
    let cases: Vec<CaseStatus> = env
        .runs
        .iter()
        .flat_map(|r| &r.cases)
        .map(|c| c.status)
        .collect();
    let counts = [
        (CaseStatus::Failed, "failed"),
        (CaseStatus::Invalid, "invalid"),
        (CaseStatus::Skipped, "skipped"),
        (CaseStatus::Interrupted, "interrupted"),
    ]
    .into_iter()
    .filter_map(|(status, word)| {
        let n = cases.iter().filter(|&&c| c == status).count();
        (n > 0).then(|| format!("{n} {word}"))
    })
    .collect();
    Some(CompareError::NothingFinished {
        environment: env.label.clone(),
        counts,
        interrupted: env.runs.iter().any(|r| r.status == RunStatus::Interrupted),
    })
}

/// One environment: a label and its runs.
#[derive(Debug, Clone)]
pub struct Environment {
    /// Its name in reports.
    pub label: String,
    /// Its result files.
    pub runs: Vec<ResultFile>,
    /// Earlier runs on the same machine (the same fingerprint), from the
    /// history: evidence of how much runs differ when this environment has
    /// a single run. Empty when none are known.
    pub earlier: Vec<ResultFile>,
}

impl Environment {
    /// An environment of `runs`, with no earlier runs known.
    pub fn new(label: impl Into<String>, runs: Vec<ResultFile>) -> Environment {
        Environment {
            label: label.into(),
            runs,
            earlier: Vec::new(),
        }
    }
}

/// How the samples of one comparison are nested.
#[derive(Debug, Clone, Serialize)]
pub struct Basis {
    /// Runs of (base, other); where rounds were paired, the runs that
    /// paired any, on both.
    pub runs: (usize, usize),
    /// Rounds per run, mean, of (base, other); where rounds were paired,
    /// the rounds both sides ran, on both.
    pub rounds_per_run: (f64, f64),
    /// Repetitions per round, mean, of (base, other).
    pub reps_per_round: (f64, f64),
    /// The level each side's interval rests on.
    pub top: (Level, Level),
    /// Degrees of freedom of the interval (Welch–Satterthwaite, or both
    /// sides' where their spreads were pooled).
    pub df: f64,
    /// Whether a side with one run got the assumed between-run spread.
    pub assumed_run_spread: bool,
    /// Where each side's between-run spread came from, (base, other).
    pub run_spread: (RunSpread, RunSpread),
}

/// Variance shares of one metric, pooled over both sides.
#[derive(Debug, Clone, Serialize)]
pub struct Variance {
    /// Variance of ln(value) per level.
    pub components: Components,
    /// Share of the measured total between runs, rounds and repetitions.
    pub shares: Option<[Option<f64>; 3]>,
}

/// One metric of one case, one environment against the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct MetricComparison {
    /// The environment compared with the baseline.
    pub environment: String,
    /// Case key.
    pub key: String,
    /// Family (`cpu`, `mem`, `os` ...).
    pub family: String,
    /// Metric name.
    pub metric: String,
    /// Unit of the values.
    pub unit: Unit,
    /// Whether higher is better.
    pub direction: Direction,
    /// Whether this is the case's headline metric (counted in summaries
    /// and under multiple-comparison control); false: secondary.
    pub primary: bool,
    /// Baseline estimate: geometric mean over runs and rounds of the
    /// median of repetitions.
    pub base_value: f64,
    /// Other environment's estimate, the same way.
    pub other_value: f64,
    /// other / base, whatever the direction: the speed-up where higher is
    /// better, its inverse where lower is better. Reports show the
    /// speed-up ([`MetricComparison::speedup`]), never this.
    pub ratio: f64,
    /// 95 % interval of the ratio.
    pub ratio_ci: (f64, f64),
    /// The interval of the ratio (other / base, as `ratio_ci`) that the
    /// verdict rests on, at the false-coverage-adjusted level
    /// (`confidence_adjusted`), for headline metrics whose verdict the
    /// control for multiple comparisons decided: those selected as beyond
    /// the band, and those not selected (unclear) whose 95 % interval lies
    /// beyond it. None: the 95 % interval decided.
    pub ratio_ci_adjusted: Option<(f64, f64)>,
    /// Level of `ratio_ci_adjusted`.
    pub confidence_adjusted: Option<f64>,
    /// The largest difference the 95 % interval allows, as a fraction
    /// (0.041: "within ±4.1 %"): how far the speed-up's interval reaches
    /// from 1 on either side, on the log scale (a 0.96..1.04 interval allows
    /// 1/0.96, 4.2 %). What the studies reported as a "technical tie"
    /// needs it small; `--threshold` sets the band a tie must fall in.
    pub equivalence_bound: f64,
    /// (base − other) / base × 100, the seeds' convention: positive means a smaller value in OTHER.
    pub variation_pct: f64,
    /// Two-sided p-value of a minimum-effect test: small when the ratio
    /// lies beyond the band.
    pub p_value: f64,
    /// Benjamini–Hochberg adjusted p-value (headline metrics); equal to
    /// `p_value` for secondary ones.
    pub p_adjusted: f64,
    /// The outcome.
    pub verdict: Verdict,
    /// How the samples were nested.
    pub basis: Basis,
    /// Variance components, pooled over both sides.
    pub variance: Variance,
    /// For an unclear headline metric: runs per side that would resolve an
    /// effect of the threshold's size (None: between-run spread unmeasured
    /// or more than [`MAX_ADVISED_RUNS`] needed).
    pub runs_needed: Option<usize>,
    /// Why the case is suspect, each flag of each run of either side
    /// (empty: not suspect); a suspect case is left out of the geometric
    /// means with `--exclude-suspect`. Not serialised here: the JSON
    /// report writes each flag as its line.
    #[serde(skip)]
    pub suspect: Vec<SuspectFlag>,
}

impl MetricComparison {
    /// How many times faster OTHER is (ratio oriented so > 1 is better).
    pub(crate) fn speedup(&self) -> f64 {
        orient(self.direction, self.ratio)
    }

    /// How many times better or worse OTHER is, ≥ 1 (a 2x slowdown: 2).
    pub(crate) fn factor(&self) -> f64 {
        let s = self.speedup();
        if s >= 1.0 {
            s
        } else {
            1.0 / s
        }
    }

    /// The 95 % interval of [`MetricComparison::speedup`].
    pub(crate) fn speedup_ci(&self) -> (f64, f64) {
        orient_interval(self.direction, self.ratio_ci)
    }

    /// The interval of the speed-up that the verdict rests on: the one
    /// widened for multiple comparisons where that decided, else the 95 %
    /// one.
    pub(crate) fn verdict_ci(&self) -> (f64, f64) {
        self.ratio_ci_adjusted
            .map_or(self.speedup_ci(), |ci| orient_interval(self.direction, ci))
    }

    /// The largest difference the interval the verdict rests on allows
    /// ([`MetricComparison::verdict_ci`]), as [`MetricComparison::equivalence_bound`]
    /// is for the 95 % one: what a report prints as "within" beside the
    /// verdict, so that an unclear row decided by its widened interval
    /// shows that interval's reach, not the narrower one's.
    pub(crate) fn verdict_bound(&self) -> f64 {
        let (lo, hi) = self.verdict_ci();
        lo.ln().abs().max(hi.ln().abs()).exp_m1()
    }

    /// Whether the interval the verdict rests on holds 1: no difference
    /// shown.
    pub(crate) fn holds_one(&self) -> bool {
        let (lo, hi) = self.verdict_ci();
        lo <= 1.0 && 1.0 <= hi
    }

    /// The widened interval of the speed-up that the verdict rests on,
    /// where it is wider than the 95 % one (its level above 95 %: fewer
    /// than all of the environment's headline metrics were selected).
    pub(crate) fn widened_ci(&self) -> Option<(f64, f64)> {
        let level = self.confidence_adjusted?;
        (level > CONFIDENCE + 1e-9).then(|| self.verdict_ci())
    }
}

fn orient(direction: Direction, ratio: f64) -> f64 {
    match direction {
        Direction::HigherIsBetter => ratio,
        Direction::LowerIsBetter => 1.0 / ratio,
    }
}

fn orient_interval(direction: Direction, (lo, hi): (f64, f64)) -> (f64, f64) {
    match direction {
        Direction::HigherIsBetter => (lo, hi),
        Direction::LowerIsBetter => (1.0 / hi, 1.0 / lo),
    }
}

/// An environment as compared.
#[derive(Debug, Clone, Serialize)]
pub struct EnvSummary {
    /// Label.
    pub label: String,
    /// Run ids.
    pub runs: Vec<String>,
    /// Whether its runs were measured interleaved with the baseline's
    /// (`run --in`), and the rounds of at least one case were compared
    /// pair by pair.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interleaved: bool,
    /// Of its cases compared (headline metrics), those whose rounds were
    /// compared pair by pair; the rest had fewer than two rounds paired.
    #[serde(skip_serializing_if = "is_zero")]
    pub paired_cases: usize,
    /// Its cases compared (headline metrics), when some were paired; 0
    /// otherwise, and for the baseline.
    #[serde(skip_serializing_if = "is_zero")]
    pub compared_cases: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl EnvSummary {
    /// The summary of `env` after its `metrics` were compared.
    fn of(env: &Environment, metrics: &[MetricComparison]) -> EnvSummary {
        let mine = || {
            metrics
                .iter()
                .filter(|m| m.primary && m.environment == env.label)
        };
        let paired_cases = mine().filter(|m| m.basis.run_spread.0.is_paired()).count();
        EnvSummary {
            label: env.label.clone(),
            runs: env.runs.iter().map(|r| r.run_id.clone()).collect(),
            interleaved: paired_cases > 0,
            paired_cases,
            compared_cases: if paired_cases > 0 { mine().count() } else { 0 },
        }
    }
}

/// The whole comparison: what `compare` found, as facts for the report.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Baseline label.
    pub baseline: String,
    /// Every environment, baseline first.
    pub environments: Vec<EnvSummary>,
    /// Whether every environment has two or more runs, so that drift
    /// between runs is measured rather than assumed.
    pub between_run: bool,
    /// Between-run spread (sd of ln) assumed for a side with one run.
    pub assumed_run_sd: f64,
    /// Threshold band, a fraction: ±2 % by default.
    pub threshold: f64,
    /// False discovery rate over headline metrics.
    pub fdr: f64,
    /// Bootstrap seed.
    pub seed: u64,
    /// Every metric comparison.
    pub metrics: Vec<MetricComparison>,
    /// Per family and overall.
    pub families: Vec<FamilySummary>,
    /// (environment, case key) present on one side only.
    pub unmatched: Vec<(String, String)>,
    /// Metrics given no verdict: a method's assumption failed on a side.
    pub not_comparable: Vec<NotComparable>,
    /// What the reader must know, in order: other hardware, runs given
    /// twice or incomplete, anomalies, methods that differ, a single run,
    /// suspect cases and runs, metrics left out.
    pub notices: Vec<Notice>,
    /// The suspect flags of every case of every run, by kind.
    pub suspect_kinds: Vec<SuspectTally>,
    /// What to do about the unclear cases; None when none is unclear.
    pub advice: Option<Advice>,
    /// Whether suspect cases are left out of the geometric means (`--exclude-suspect`).
    pub exclude_suspect: bool,
    /// The likely mechanism behind each environment's differences, most
    /// likely first; none for an environment that does not differ.
    pub diagnoses: Vec<diagnose::Diagnosis>,
    /// Each app case's ratio beside what its operations' costs predict.
    pub attributions: Vec<attribute::Attribution>,
    /// Environments with one run whose earlier runs (the history) disagree
    /// among themselves far beyond their own intervals, with how many
    /// headline cases: one label given to two environments, most likely.
    /// Their spread was not taken as the spread between runs.
    pub split_history: Vec<(String, usize)>,
}

impl Comparison {
    /// The labels of the environments compared with the baseline, in order.
    pub(crate) fn other_labels(&self) -> Vec<&str> {
        self.environments[1..]
            .iter()
            .map(|e| e.label.as_str())
            .collect()
    }

    /// Whether every environment was measured interleaved with the
    /// baseline, so that the drift between runs cancels in each comparison.
    pub(crate) fn interleaved(&self) -> bool {
        self.environments[1..].iter().all(|e| e.interleaved)
    }
}

/// Options of a comparison.
#[derive(Debug, Clone)]
pub struct Options {
    /// Threshold band, a fraction (`--threshold`, [`DEFAULT_THRESHOLD`]
    /// unless given).
    pub threshold: f64,
    /// Bootstrap seed.
    pub seed: u64,
    /// Leave suspect cases out of the geometric means (`--exclude-suspect`).
    pub exclude_suspect: bool,
    /// What the micro benches price, for the attributions
    /// (`crate::bench::prices`); none: no attribution predicts.
    pub prices: &'static [crate::results::price::BenchPrice],
}

/// Compares every environment after the first with the first.
///
/// # Errors
/// [`CompareError`] with fewer than two environments or no common case.
pub fn compare(envs: &[Environment], opts: &Options) -> Result<Comparison, CompareError> {
    compare_with(envs, opts, false)
}

/// [`compare`] of the environments `compare --by-dir` makes, one per
/// directory: a run whose cases ran in several directories is in each of
/// them, with another directory's cases each time, which is the design
/// and not a run given twice; where its directories ran each case in
/// turns, its rounds are paired with themselves
/// ([`pairing::same_runs`]). A run twice in one environment is still
/// warned about.
///
/// # Errors
/// As [`compare`].
pub(crate) fn compare_dirs(
    envs: &[Environment],
    opts: &Options,
) -> Result<Comparison, CompareError> {
    compare_with(envs, opts, true)
}

fn compare_with(
    envs: &[Environment],
    opts: &Options,
    by_dir: bool,
) -> Result<Comparison, CompareError> {
    let [base, others @ ..] = envs else {
        return Err(CompareError::NoEnvironment);
    };
    if others.is_empty() {
        return Err(CompareError::OneEnvironment(base.label.clone()));
    }
    let threshold = opts.threshold;
    let base_keys = per_metric::ok_keys(base);
    let mut metrics = Vec::new();
    let mut unmatched = Vec::new();
    let mut skipped = per_metric::Skipped::default();
    let mut unpaired = Vec::new();
    for other in others {
        let other_keys = per_metric::ok_keys(other);
        let common: Vec<&String> = base_keys.intersection(&other_keys).collect();
        if common.is_empty() {
            if let Some(e) = nothing_finished(base).or_else(|| nothing_finished(other)) {
                return Err(e);
            }
            return Err(CompareError::NoCommonCases(
                base.label.clone(),
                other.label.clone(),
            ));
        }
        unmatched.extend(
            base_keys
                .difference(&other_keys)
                .map(|k| (base.label.clone(), k.clone())),
        );
        unmatched.extend(
            other_keys
                .difference(&base_keys)
                .map(|k| (other.label.clone(), k.clone())),
        );
        // compare --by-dir holds the same runs on both sides: each run
        // measured in turns is paired with itself, round by round
        let pairing = if by_dir {
            pairing::same_runs(base, other)
        } else {
            pairing::pair(base, other)
        };
        let pairs = (!pairing.pairs.is_empty()).then_some(pairing.pairs.as_slice());
        unpaired.extend(pairing.left_out.iter().map(|left| Notice::Unpaired {
            environment: other.label.clone(),
            baseline: base.label.clone(),
            left: left.clone(),
            apart: pairs.is_none(),
        }));
        metrics.extend(per_metric::compare_env(
            (base, other),
            &common,
            pairs,
            opts.seed,
            threshold,
            &mut skipped,
        ));
    }
    let split_history = envs
        .iter()
        .map(|e| (e.label.clone(), per_metric::split_history(e)))
        .filter(|(_, n)| *n > 0)
        .collect();
    let between_run = envs.iter().all(|e| e.runs.len() >= 2);
    let environments: Vec<EnvSummary> = envs.iter().map(|e| EnvSummary::of(e, &metrics)).collect();
    let all_interleaved = environments[1..].iter().all(|e| e.interleaved);
    let mut notices = notice::setup(envs, between_run || all_interleaved, by_dir);
    notices.extend(unpaired);
    notices.extend(notice::suspects(envs, &metrics));
    notice::drop_unjudged_differences(&mut notices, &base.label, &metrics);
    let not_comparable = std::mem::take(&mut skipped.assumption);
    if !not_comparable.is_empty() {
        notices.push(Notice::NotComparable);
    }
    notices.extend(skipped.notices());
    Ok(Comparison {
        baseline: base.label.clone(),
        environments,
        between_run,
        assumed_run_sd: UNMEASURED_RUN_SD,
        threshold,
        fdr: FDR,
        seed: opts.seed,
        families: per_family::summarize(&metrics, opts.exclude_suspect),
        advice: advice::advise(&metrics, envs, all_interleaved),
        suspect_kinds: notice::tallies(envs),
        notices,
        unmatched,
        not_comparable,
        exclude_suspect: opts.exclude_suspect,
        diagnoses: diagnose::diagnose(envs, &metrics),
        attributions: attribute::attribute(envs, &metrics, opts.prices, by_dir),
        split_history,
        metrics,
    })
}

/// A metric given no verdict because its method's assumption failed on
/// one side (a cold read that was not cold, O_DIRECT not honoured,
/// memory per task unreadable).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotComparable {
    /// The environment compared with the baseline.
    pub environment: String,
    /// Case key.
    pub key: String,
    /// Metric name.
    pub metric: String,
    /// Whether it is the case's headline metric.
    pub primary: bool,
    /// The label of the side where the assumption failed.
    pub side: String,
    /// Which assumption.
    pub assumption: crate::results::AssumptionKind,
    /// What was measured there.
    pub evidence: String,
}

#[cfg(test)]
pub(crate) mod tests;
