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
//! rate, 2005). Secondary metrics keep plain 95 % intervals and are marked
//! secondary.
//!
//! Suspect cases (a flag of the validity guardrails in any run of
//! either side) keep their verdicts but are marked, named in the warnings
//! and counted in the geometric means unless `exclude_suspect`: a
//! family's mean is never blank.
//!
//! Environments are groups of runs (one label, or files given with
//! `--base`/`--other`). Reads only `results` types; rendering is in
//! `report::compare`.

mod conclude;
pub mod diagnose;
mod verdict;
mod words;

pub use conclude::{bound_text, factor_text};
pub use verdict::Verdict;
pub use words::describe_speedup;

use crate::results::{CaseResult, CaseStatus, ResultFile};
use crate::stats::levels::{self, Components, Level, Levels, RunSpread, UNMEASURED_RUN_SD};
use crate::units::{Direction, Unit};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use thiserror::Error;

/// Default threshold band: differences within ±2 % are a technical tie.
pub const DEFAULT_THRESHOLD: f64 = 0.02;
/// False discovery rate over the headline metrics of an environment.
pub const FDR: f64 = 0.05;
/// Confidence of the plain intervals.
pub const CONFIDENCE: f64 = 0.95;
/// Bootstrap resamples for a ratio's interval.
const RESAMPLES: usize = 2000;
/// Most runs per side the advice will suggest.
pub const MAX_ADVISED_RUNS: usize = 30;

/// Why environments cannot be compared.
#[derive(Debug, Error)]
pub enum CompareError {
    /// Fewer than two environments.
    #[error("need at least two environments to compare; {0}")]
    OneEnvironment(String),
    /// Nothing in common.
    #[error("no case is common to {0} and {1}: they ran different benchmarks")]
    NoCommonCases(String, String),
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
    /// Runs of (base, other).
    pub runs: (usize, usize),
    /// Rounds per run, mean, of (base, other).
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

impl Basis {
    /// "3 vs 3 runs" or "1 vs 1 run (12 vs 12 rounds; between-run spread
    /// from worker processes)".
    pub fn describe(&self) -> String {
        let (a, b) = self.runs;
        let mut s = format!("{a} vs {b} run{}", if a.max(b) == 1 { "" } else { "s" });
        if self.top.0 != Level::Runs || self.top.1 != Level::Runs {
            s += &format!(
                " ({:.0} vs {:.0} rounds",
                self.rounds_per_run.0, self.rounds_per_run.1
            );
            let one = [self.run_spread.0, self.run_spread.1];
            if let Some(source) = one.iter().map(|s| spread_words(*s)).find(|w| !w.is_empty()) {
                s += &format!("; between-run spread {source}");
            }
            s += ")";
        }
        s
    }
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
    /// other / base.
    pub ratio: f64,
    /// 95 % interval of the ratio.
    pub ratio_ci: (f64, f64),
    /// For headline metrics selected as beyond the band: the interval at
    /// the false-coverage-adjusted level (`confidence_adjusted`) that the
    /// verdict rests on.
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
    /// Why the case is suspect, one line per flag and run (empty: not
    /// suspect); a suspect case is left out of the geometric means unless
    /// `--exclude-suspect`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suspect: Vec<String>,
}

impl MetricComparison {
    /// How many times faster OTHER is (ratio oriented so > 1 is better).
    pub fn speedup(&self) -> f64 {
        orient(self.direction, self.ratio)
    }

    /// The 95 % interval of [`MetricComparison::speedup`].
    pub fn speedup_ci(&self) -> (f64, f64) {
        orient_interval(self.direction, self.ratio_ci)
    }
}

/// How a one-run side's between-run spread was found, in words ("" when
/// measured from runs).
pub fn spread_words(s: RunSpread) -> String {
    match s {
        RunSpread::Measured => String::new(),
        RunSpread::Workers { residual } => format!(
            "from worker processes, {:.1} % added beyond them",
            residual * 100.0
        ),
        RunSpread::History { runs, .. } => format!("from {runs} earlier runs"),
        RunSpread::Assumed { sd } => format!("assumed {:.0} %", sd * 100.0),
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
    /// Headline metrics whose interval holds 1 (no difference shown).
    pub no_difference: usize,
    /// The largest [`MetricComparison::equivalence_bound`] among them:
    /// "no difference beyond ±X % in N of M cases"; None when there are none.
    pub within: Option<f64>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl FamilySummary {
    /// Headline metrics counted.
    pub fn total(&self) -> usize {
        self.faster + self.slower + self.tie + self.unclear
    }
}

/// An environment as compared.
#[derive(Debug, Clone, Serialize)]
pub struct EnvSummary {
    /// Label.
    pub label: String,
    /// Run ids.
    pub runs: Vec<String>,
}

/// A fingerprint field across environments.
#[derive(Debug, Clone, Serialize)]
pub struct FingerprintRow {
    /// Field name.
    pub field: String,
    /// Value per environment (first run's), baseline first.
    pub values: Vec<String>,
    /// Whether any differs from the baseline's.
    pub differs: bool,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
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
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_comparable: Vec<NotComparable>,
    /// Fingerprints side by side.
    pub fingerprint: Vec<FingerprintRow>,
    /// What the reader must know, one line per kind (suspect flags
    /// counted per environment, anomalies, other hardware, a single run).
    pub warning_lines: Vec<String>,
    /// Each warning in full (different hardware, anomalies, each suspect
    /// case with its reasons, too few runs).
    pub warnings: Vec<String>,
    /// What the comparison concludes, one sentence per family and
    /// environment, then overall, in the studies' manner.
    pub conclusions: Vec<String>,
    /// What to do next: a few more runs where they would settle the
    /// unclear cases, else what limits them and what would help.
    pub advice: Vec<String>,
    /// Whether suspect cases are left out of the geometric means (`--exclude-suspect`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exclude_suspect: bool,
    /// The likely mechanism behind each environment's differences, most
    /// likely first; none for an environment that does not differ.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnoses: Vec<diagnose::Diagnosis>,
}

/// Options of a comparison.
#[derive(Debug, Clone)]
pub struct Options {
    /// Threshold band; None is [`DEFAULT_THRESHOLD`].
    pub threshold: Option<f64>,
    /// Bootstrap seed.
    pub seed: u64,
    /// Leave suspect cases out of the geometric means (`--exclude-suspect`).
    pub exclude_suspect: bool,
    /// Each bench's topic in a few words (`os.syscall` → `system calls`),
    /// for the conclusions; a bench without one is named by its id.
    pub topics: BTreeMap<String, String>,
}

/// FNV-1a of the strings: a per-comparison bootstrap seed that does not
/// depend on the order of comparisons.
fn seed_for(seed: u64, parts: &[&str]) -> u64 {
    use crate::stats::rng::{fnv1a, FNV_OFFSET};
    parts.iter().fold(FNV_OFFSET ^ seed, |h, p| {
        fnv1a(fnv1a(h, p.as_bytes()), &[0])
    })
}

/// The first failed assumption that voids `metric` of `key` in a run of
/// either side, base first.
fn failed_assumption(
    (base, other): (&Environment, &Environment),
    key: &str,
    metric: &str,
    primary: bool,
) -> Option<NotComparable> {
    [base, other].into_iter().find_map(|env| {
        let a = env
            .runs
            .iter()
            .filter_map(|r| ok_case(r, key))
            .flat_map(|c| &c.assumptions)
            .find(|a| a.voids(metric))?;
        Some(NotComparable {
            environment: other.label.clone(),
            key: key.to_string(),
            metric: metric.to_string(),
            primary,
            side: env.label.clone(),
            assumption: a.kind,
            evidence: a.evidence.clone(),
        })
    })
}

fn ok_case<'a>(run: &'a ResultFile, key: &str) -> Option<&'a CaseResult> {
    run.cases
        .iter()
        .find(|c| c.key == key && c.status == CaseStatus::Ok)
}

fn ok_keys(env: &Environment) -> BTreeSet<String> {
    env.runs
        .iter()
        .flat_map(|r| {
            r.cases
                .iter()
                .filter(|c| c.status == CaseStatus::Ok)
                .map(|c| c.key.clone())
        })
        .collect()
}

/// The samples of `metric` of `key` in `runs`, nested runs → rounds →
/// reps; None when a value cannot be compared as a ratio (zero or negative).
fn nested(runs: &[ResultFile], key: &str, metric: &str) -> Option<Levels> {
    let runs: Vec<Vec<Vec<f64>>> = runs
        .iter()
        .filter_map(|r| ok_case(r, key))
        .filter_map(|c| c.samples_by_round(metric))
        .collect();
    Levels::from_raw(&runs)
}

/// The units and directions `metric` of `key` has in `runs`, with their
/// symbols for a message.
fn units_of(runs: &[ResultFile], key: &str, metric: &str) -> BTreeSet<(String, String)> {
    runs.iter()
        .filter_map(|r| ok_case(r, key))
        .flat_map(|c| c.metrics.iter().filter(|m| m.name == metric))
        .map(|m| (m.unit.symbol().to_string(), format!("{:?}", m.direction)))
        .collect()
}

/// What a side of `env` with a single run knows about the spread between
/// runs of `metric` of `key`: earlier runs on the same machine (two or
/// more with the case), else its rounds' worker processes, else nothing
/// (the assumed spread).
fn run_spread(env: &Environment, key: &str, metric: &str) -> RunSpread {
    if env.runs.len() >= 2 {
        return RunSpread::Measured;
    }
    if let Some(var) = nested(&env.earlier, key, metric)
        .filter(|l| l.runs() >= 2)
        .and_then(|l| l.components().runs.map(|v| (v, l.runs())))
    {
        return RunSpread::History {
            var: var.0,
            runs: var.1,
        };
    }
    if env.runs.iter().all(|r| r.config.workers) {
        return RunSpread::Workers {
            residual: levels::WORKER_RESIDUAL_SD,
        };
    }
    RunSpread::Assumed {
        sd: UNMEASURED_RUN_SD,
    }
}

/// Compares every environment after the first with the first.
///
/// # Errors
/// [`CompareError`] with fewer than two environments or no common case.
pub fn compare(envs: &[Environment], opts: &Options) -> Result<Comparison, CompareError> {
    compare_with(envs, opts, false)
}

/// [`compare`] of the environments `compare --dirs` makes, one per
/// directory: a run whose cases ran in several directories is in each of
/// them, with another directory's cases each time, which is the design
/// and no run compared with itself. A run twice in one environment is
/// still warned about.
///
/// # Errors
/// As [`compare`].
pub fn compare_dirs(envs: &[Environment], opts: &Options) -> Result<Comparison, CompareError> {
    compare_with(envs, opts, true)
}

fn compare_with(
    envs: &[Environment],
    opts: &Options,
    by_dir: bool,
) -> Result<Comparison, CompareError> {
    let [base, others @ ..] = envs else {
        return Err(CompareError::OneEnvironment("none given".into()));
    };
    if others.is_empty() {
        return Err(CompareError::OneEnvironment(format!(
            "every run is labelled '{}'; label runs per environment (run --label) or use --base/--other",
            base.label
        )));
    }
    let threshold = opts.threshold.unwrap_or(DEFAULT_THRESHOLD);
    let base_keys = ok_keys(base);
    let mut metrics = Vec::new();
    let mut unmatched = Vec::new();
    let mut skipped = Skipped::default();
    for other in others {
        let other_keys = ok_keys(other);
        let common: Vec<&String> = base_keys.intersection(&other_keys).collect();
        if common.is_empty() {
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
        metrics.extend(compare_env(
            (base, other),
            &common,
            opts.seed,
            threshold,
            &mut skipped,
        ));
    }
    let between_run = envs.iter().all(|e| e.runs.len() >= 2);
    let families = summarize_families(&metrics, opts.exclude_suspect);
    let mut warnings = words::warnings(envs, between_run, by_dir);
    warnings.extend(words::suspect_warnings(
        envs,
        &metrics,
        opts.exclude_suspect,
    ));
    let not_comparable = skipped.assumption.clone();
    warnings.extend(skipped.warnings());
    let mut cmp = Comparison {
        baseline: base.label.clone(),
        environments: envs
            .iter()
            .map(|e| EnvSummary {
                label: e.label.clone(),
                runs: e.runs.iter().map(|r| r.run_id.clone()).collect(),
            })
            .collect(),
        between_run,
        assumed_run_sd: UNMEASURED_RUN_SD,
        threshold,
        fdr: FDR,
        seed: opts.seed,
        conclusions: Vec::new(),
        warning_lines: Vec::new(),
        advice: Vec::new(),
        fingerprint: words::fingerprint_rows(envs),
        warnings,
        metrics,
        families,
        unmatched,
        not_comparable,
        exclude_suspect: opts.exclude_suspect,
        diagnoses: Vec::new(),
    };
    cmp.diagnoses = diagnose::diagnose(envs, &cmp.metrics);
    cmp.conclusions = conclude::conclusions(&cmp, &opts.topics);
    cmp.warning_lines = conclude::warning_lines(&cmp, envs, &cmp.warnings);
    cmp.advice = conclude::advice(&cmp, envs);
    Ok(cmp)
}

/// A metric given no verdict because its method's assumption failed on
/// one side (a cold read that was not cold, O_DIRECT not honoured,
/// memory per task unreadable).
#[derive(Debug, Clone, Serialize)]
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

/// Metrics left out of a comparison, named for the warnings.
#[derive(Default)]
struct Skipped {
    /// A method's assumption failed on a side.
    assumption: Vec<NotComparable>,
    /// Unit or direction not the same in every run: "key metric (units)".
    mismatched: Vec<String>,
    /// Values so far apart that no double holds the ratio.
    beyond: Vec<String>,
    /// Headline metrics with zero or negative values.
    not_comparable: Vec<String>,
}

impl Skipped {
    /// Appends `more`'s names after these.
    fn extend(&mut self, more: Skipped) {
        self.assumption.extend(more.assumption);
        self.mismatched.extend(more.mismatched);
        self.beyond.extend(more.beyond);
        self.not_comparable.extend(more.not_comparable);
    }

    /// One warning per kind of metric left out, none when none were.
    fn warnings(mut self) -> Vec<String> {
        let mut warnings = Vec::new();
        if !self.assumption.is_empty() {
            let each: Vec<String> = self
                .assumption
                .iter()
                .map(|n| {
                    format!(
                        "{} {} ({} in {}: {})",
                        n.key,
                        n.metric,
                        n.assumption.words(),
                        n.side,
                        n.evidence
                    )
                })
                .collect();
            warnings.push(format!(
                "not comparable, {} metric(s) whose method's assumption failed where they ran: {}",
                each.len(),
                each.join("; ")
            ));
        }
        self.mismatched.dedup();
        if !self.mismatched.is_empty() {
            warnings.push(format!(
                "not compared, {} metric(s) whose unit or direction differs between runs: {}",
                self.mismatched.len(),
                self.mismatched.join(", ")
            ));
        }
        if !self.beyond.is_empty() {
            warnings.push(format!(
                "no ratio for {} metric(s) whose values differ beyond what a number holds: {}",
                self.beyond.len(),
                self.beyond.join(", ")
            ));
        }
        if !self.not_comparable.is_empty() {
            warnings.push(format!(
                "no ratio for {} headline metric(s) with zero or negative values: {}",
                self.not_comparable.len(),
                self.not_comparable.join(", ")
            ));
        }
        warnings
    }
}

/// Every metric of the `common` cases, other against base, judged together:
/// the false discovery rate is held over the environment's headline metrics.
fn compare_env(
    (base, other): (&Environment, &Environment),
    common: &[&String],
    seed: u64,
    threshold: f64,
    skipped: &mut Skipped,
) -> Vec<MetricComparison> {
    let mut mine = Vec::new();
    for (case, case_skipped) in compare_cases((base, other), common, seed, threshold) {
        mine.extend(case);
        skipped.extend(case_skipped);
    }
    verdict::judge_all(&mut mine, threshold, FDR);
    advise_runs(&mut mine, threshold);
    mine.into_iter().map(|(m, _)| m).collect()
}

/// [`compare_case`] for every key, in the keys' order, on the machine's
/// cores: each metric's bootstrap has a seed of its own, so the result is
/// the same on any number of threads.
fn compare_cases(
    envs: (&Environment, &Environment),
    keys: &[&String],
    seed: u64,
    threshold: f64,
) -> Vec<(Vec<(MetricComparison, levels::LogRatio)>, Skipped)> {
    crate::stats::par::map(keys, |key| {
        let mut skipped = Skipped::default();
        let case = compare_case(envs, key, seed, threshold, &mut skipped);
        (case, skipped)
    })
}

/// Every metric of case `key`, other against base, with provisional
/// verdicts; a metric that cannot be compared is named in `skipped`.
fn compare_case(
    (base, other): (&Environment, &Environment),
    key: &str,
    seed: u64,
    threshold: f64,
    skipped: &mut Skipped,
) -> Vec<(MetricComparison, levels::LogRatio)> {
    let Some(case) = base.runs.iter().find_map(|r| ok_case(r, key)) else {
        return Vec::new();
    };
    let suspect = words::suspect_lines(&[base, other], key);
    let mut mine = Vec::new();
    for (i, m) in case.metrics.iter().enumerate() {
        // seconds against nanoseconds would make a billion-fold
        // "difference": a metric whose unit or direction is not the
        // same in every run is not compared
        let mut units = units_of(&base.runs, key, &m.name);
        units.extend(units_of(&other.runs, key, &m.name));
        if units.len() > 1 {
            let shown: Vec<String> = units.iter().map(|(u, d)| format!("{u} ({d})")).collect();
            skipped
                .mismatched
                .push(format!("{key} {} ({})", m.name, shown.join(" against ")));
            continue;
        }
        if let Some(nc) = failed_assumption((base, other), key, &m.name, i == 0) {
            skipped.assumption.push(nc);
            continue;
        }
        let (Some(b), Some(o)) = (
            nested(&base.runs, key, &m.name),
            nested(&other.runs, key, &m.name),
        ) else {
            if i == 0 {
                skipped.not_comparable.push(format!("{key} {}", m.name));
            }
            continue;
        };
        let seed = seed_for(seed, &[&other.label, key, &m.name]);
        let subject = Subject {
            environment: &other.label,
            key,
            family: case.bench.split('.').next().unwrap_or(""),
            metric: m,
            primary: i == 0,
        };
        let spread = (
            run_spread(base, key, &m.name),
            run_spread(other, key, &m.name),
        );
        let (mut mc, lr) = measure((&b, spread.0), (&o, spread.1), seed, &subject, threshold);
        let (lo, hi) = mc.ratio_ci;
        if ![mc.ratio, lo, hi].iter().all(|r| r.is_finite() && *r > 0.0) {
            // 1e-300 against 1e300: no double holds the ratio
            skipped.beyond.push(format!("{key} {}", m.name));
            continue;
        }
        mc.suspect = suspect.clone();
        mine.push((mc, lr));
    }
    mine
}

/// For each unclear headline metric with two or more runs a side: the runs
/// per side that would resolve an effect of the threshold's size.
fn advise_runs(mine: &mut [(MetricComparison, levels::LogRatio)], threshold: f64) {
    for (m, lr) in mine.iter_mut() {
        if m.primary && m.verdict == Verdict::Unclear && m.basis.runs.0.min(m.basis.runs.1) >= 2 {
            let b = &m.basis;
            let margin = (lr.point.abs() - (1.0 + threshold).ln()).abs();
            m.runs_needed = m.variance.components.runs_needed(
                b.rounds_per_run.0.min(b.rounds_per_run.1),
                b.reps_per_round.0.min(b.reps_per_round.1),
                margin,
                MAX_ADVISED_RUNS,
            );
        }
    }
}

/// What one comparison is about: which metric of which case, against which environment.
struct Subject<'a> {
    environment: &'a str,
    key: &'a str,
    family: &'a str,
    metric: &'a crate::results::MetricResult,
    primary: bool,
}

/// The estimates, interval and p-value of one metric; its verdict is
/// provisional until [`verdict::judge_all`] has seen the whole environment.
fn measure(
    (b, bs): (&Levels, RunSpread),
    (o, os): (&Levels, RunSpread),
    seed: u64,
    s: &Subject,
    threshold: f64,
) -> (MetricComparison, levels::LogRatio) {
    let lr = levels::log_ratio((b, bs), (o, os), seed, RESAMPLES);
    let (lo, hi) = lr.interval(CONFIDENCE);
    let (down, up) = verdict::band(s.metric.direction, threshold);
    let p_value = lr.p_beyond(down, up);
    let ratio = lr.point.exp();
    let components = Components::pool(&b.components(), &o.components());
    let m = MetricComparison {
        environment: s.environment.to_string(),
        key: s.key.to_string(),
        family: s.family.to_string(),
        metric: s.metric.name.clone(),
        unit: s.metric.unit,
        direction: s.metric.direction,
        primary: s.primary,
        base_value: b.estimate().exp(),
        other_value: o.estimate().exp(),
        ratio,
        ratio_ci: (lo.exp(), hi.exp()),
        ratio_ci_adjusted: None,
        confidence_adjusted: None,
        equivalence_bound: lo.abs().max(hi.abs()).exp_m1(),
        variation_pct: (1.0 - ratio) * 100.0,
        p_value,
        p_adjusted: p_value,
        verdict: Verdict::Unclear,
        basis: Basis {
            runs: (b.runs(), o.runs()),
            rounds_per_run: (b.rounds_per_run(), o.rounds_per_run()),
            reps_per_round: (b.reps_per_round(), o.reps_per_round()),
            top: (b.top(), o.top()),
            df: lr.df,
            assumed_run_spread: lr.assumed_run_spread(),
            run_spread: lr.spread,
        },
        variance: Variance {
            shares: components.shares(),
            components,
        },
        runs_needed: None,
        suspect: Vec::new(),
    };
    (m, lr)
}

fn summarize_families(metrics: &[MetricComparison], exclude_suspect: bool) -> Vec<FamilySummary> {
    let mut groups: Vec<(String, String)> = metrics
        .iter()
        .map(|m| (m.environment.clone(), m.family.clone()))
        .collect();
    groups.sort();
    groups.dedup();
    let envs: BTreeSet<String> = metrics.iter().map(|m| m.environment.clone()).collect();
    groups.extend(envs.into_iter().map(|e| (e, "overall".to_string())));
    groups
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
                .filter(|s| *s > 0.0 && s.is_finite())
                .map(f64::ln)
                .collect();
            let count = |v: Verdict| chosen.iter().filter(|m| m.verdict == v).count();
            let same: Vec<f64> = chosen
                .iter()
                .filter(|m| m.ratio_ci.0 <= 1.0 && 1.0 <= m.ratio_ci.1)
                .map(|m| m.equivalence_bound)
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
                family,
                environment: env,
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
