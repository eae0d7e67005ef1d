//! What a comparison gives: per metric its ratio, interval, verdict and
//! how its samples were nested ([`MetricComparison`]), per environment a
//! summary, and the whole ([`Comparison`]).

use super::*;

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

pub(super) fn orient_interval(direction: Direction, (lo, hi): (f64, f64)) -> (f64, f64) {
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
    pub(super) fn of(env: &Environment, metrics: &[MetricComparison]) -> EnvSummary {
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
