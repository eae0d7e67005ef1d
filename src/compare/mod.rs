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
mod outcome;
pub mod pairing;
mod per_family;
mod per_metric;
mod verdict;

pub use advice::{Advice, MoreRuns, Unsettled, MOST_RUNS_ADVISED};
pub use notice::{
    IdleStates, MetricRef, Mismatch, NoJournal, Notice, Recorded, Setting, SingleRunSpread,
    SuspectFlag, SuspectTally,
};
use outcome::orient_interval;
pub use outcome::{Basis, Comparison, EnvSummary, MetricComparison, Variance};
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
    compare_as(envs, opts, false)
}

/// [`compare`], or with `by_dir` of the environments `compare --by-dir`
/// makes, one per directory: a run whose cases ran in several directories
/// is in each of them, with another directory's cases each time, which is
/// the design and not a run given twice; where its directories ran each
/// case in turns, its rounds are paired with themselves
/// ([`pairing::same_runs`]). A run twice in one environment is still
/// warned about.
///
/// # Errors
/// As [`compare`].
pub(crate) fn compare_as(
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
        for (side, keys, against) in [
            (base, &base_keys, &other_keys),
            (other, &other_keys, &base_keys),
        ] {
            unmatched.extend(
                keys.difference(against)
                    .map(|k| (side.label.clone(), k.clone())),
            );
        }
        let pairing = pairing::pairing(base, other, by_dir);
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
    // what the metrics left out say, in the order the notices keep
    let not_comparable = std::mem::take(&mut skipped.assumption);
    let left_out = skipped.notices();
    let mut notices = notice::setup(envs, between_run || all_interleaved, by_dir);
    notices.extend(unpaired);
    notices.extend(notice::suspects(envs, &metrics));
    notice::drop_unjudged_differences(&mut notices, &base.label, &metrics);
    if !not_comparable.is_empty() {
        notices.push(Notice::NotComparable);
    }
    notices.extend(left_out);
    let suspect_kinds = notice::tallies(envs);
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
        suspect_kinds,
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
