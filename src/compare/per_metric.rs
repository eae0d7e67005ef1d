//! One environment against the baseline, metric by metric: the samples
//! nested runs → rounds → repetitions, the ratio's interval from the
//! hierarchical bootstrap, provisional verdicts judged together over the
//! environment, and the metrics that cannot be compared, kept as facts
//! for the notices.

use super::notice::{self, MetricRef, Mismatch, Notice};
use super::{
    comparable, verdict, Basis, Environment, MetricComparison, NotComparable, Variance, Verdict,
    CONFIDENCE,
};
use crate::results::{CaseResult, CaseStatus, ResultFile};
use crate::stats::levels::{self, Components, Level, Levels, RunSpread, UNMEASURED_RUN_SD};
use crate::units::{Direction, Unit};
use std::collections::BTreeSet;

use crate::stats::bootstrap::DEFAULT_RESAMPLES as RESAMPLES;
use crate::stats::rng::seed_for;

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
            .find_map(|c| c.failed_assumption(metric))?;
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

pub(super) fn ok_keys(env: &Environment) -> BTreeSet<String> {
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

/// The differences of `metric` of `key` between the rounds the two sides
/// measured side by side in each pair of interleaved runs (round r of
/// the case in one file beside round r in the other); None when fewer
/// than two rounds pair, which cannot show their spread.
///
/// Two directories of one run (`compare --by-dir`: each pair is a run
/// with itself) pair on the rounds that ran the case in both, where there
/// are [`DIR_PAIRED_ROUNDS`] or more; a round that ran it in one
/// directory only is left out. A dear case runs in fewer passes, not
/// always the same ones in both directories. On seeded hosts
/// (`compare::tests::by_dir`, 1 to 3 runs) four or more common rounds gave
/// narrower intervals than apart and found as much; in a draft without a
/// move between runs, three at one run (t with 2 degrees of freedom)
/// found a 1.25x effect less often than apart on a quiet host.
fn nested_paired(
    (base, other): (&Environment, &Environment),
    pairs: &[(usize, usize)],
    key: &str,
    metric: &str,
) -> Option<Levels> {
    let by_dir = pairs
        .iter()
        .all(|&(bi, oi)| base.runs[bi].run_id == other.runs[oi].run_id);
    let dirs = by_dir.then_some((base.label.as_str(), other.label.as_str()));
    let (runs, firsts): (Vec<_>, Vec<_>) = pairs
        .iter()
        .filter_map(|&(bi, oi)| {
            let (bf, of) = (&base.runs[bi], &other.runs[oi]);
            let b = ok_case(bf, key)?.samples_by_round_number(metric)?;
            let mut o = ok_case(of, key)?.samples_by_round_number(metric)?;
            let places = super::pairing::base_first((bf, of), key, dirs);
            let (rounds, told): (Vec<_>, Vec<_>) = b
                .into_iter()
                .filter_map(|(round, b)| Some(((b, o.remove(&round)?), places.get(&round))))
                .unzip();
            // a round whose places are not told leaves the place in, in every run
            let told: Vec<bool> = told
                .into_iter()
                .map(|t| t.copied())
                .collect::<Option<_>>()
                .unwrap_or_default();
            Some((rounds, told))
        })
        .unzip();
    if by_dir && runs.iter().map(Vec::len).sum::<usize>() < DIR_PAIRED_ROUNDS {
        return None;
    }
    Levels::paired_in_turns(&runs, &firsts)
        .filter(|d| matches!(d.top(), Level::Runs | Level::Rounds))
}

/// The least rounds two directories of one run must both have run a case
/// in to be compared round by round ([`nested_paired`]).
const DIR_PAIRED_ROUNDS: usize = 4;

/// The units and directions `metric` of `key` has in `runs`, each once,
/// ordered by unit symbol (higher is better first).
fn units_of<'a>(
    runs: impl Iterator<Item = &'a ResultFile>,
    key: &str,
    metric: &str,
) -> Vec<(Unit, Direction)> {
    let mut units: Vec<(Unit, Direction)> = Vec::new();
    for m in runs
        .filter_map(|r| ok_case(r, key))
        .flat_map(|c| c.metrics.iter().filter(|m| m.name == metric))
    {
        if !units.contains(&(m.unit, m.direction)) {
            units.push((m.unit, m.direction));
        }
    }
    units.sort_by_key(|(u, d)| (u.symbol(), *d == Direction::LowerIsBetter));
    units
}

/// The earlier runs of `env` (the history) with `metric` of `key`, when
/// there are two or more.
fn earlier_runs(env: &Environment, key: &str, metric: &str) -> Option<Levels> {
    nested(&env.earlier, key, metric).filter(|l| l.runs() >= 2)
}

/// How many headline metrics of `env` (a single run with earlier runs)
/// have earlier runs that disagree among themselves far beyond their own
/// intervals, so that their spread was not taken as the spread between runs.
pub(super) fn split_history(env: &Environment) -> usize {
    if env.runs.len() != 1 {
        return 0;
    }
    env.runs[0]
        .cases
        .iter()
        .filter(|c| c.status == CaseStatus::Ok)
        .filter(|c| {
            c.metrics
                .first()
                .is_some_and(|m| earlier_runs(env, &c.key, &m.name).is_some_and(|l| l.runs_split()))
        })
        .count()
}

/// What a side of `env` with a single run knows about the spread between
/// runs of `metric` of `key`: earlier runs on the same machine (two or
/// more with the case, agreeing within reason: [`Levels::runs_split`]),
/// else its rounds' worker processes, else nothing (the assumed spread).
fn run_spread(env: &Environment, key: &str, metric: &str) -> RunSpread {
    if env.runs.len() >= 2 {
        return RunSpread::Measured;
    }
    if let Some(var) = earlier_runs(env, key, metric)
        .filter(|l| !l.runs_split())
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

/// Metrics left out of a comparison, kept for the notices.
#[derive(Default)]
pub(super) struct Skipped {
    /// A method's assumption failed on a side.
    pub(super) assumption: Vec<NotComparable>,
    /// Unit or direction not the same in every run.
    mismatched: Vec<Mismatch>,
    /// Values so far apart that no double holds the ratio.
    beyond: Vec<MetricRef>,
    /// Headline metrics with zero or negative values.
    non_positive: Vec<MetricRef>,
}

impl Skipped {
    /// Appends `more`'s metrics after these.
    fn add(&mut self, more: Skipped) {
        self.assumption.extend(more.assumption);
        self.mismatched.extend(more.mismatched);
        self.beyond.extend(more.beyond);
        self.non_positive.extend(more.non_positive);
    }

    /// One notice per kind of metric left out, none when none were;
    /// those whose assumption failed are taken out before
    /// (`assumption`), and their notice is the comparison's.
    pub(super) fn notices(mut self) -> Vec<Notice> {
        let mut out = Vec::new();
        self.mismatched.dedup();
        if !self.mismatched.is_empty() {
            out.push(Notice::Mismatched(self.mismatched));
        }
        if !self.beyond.is_empty() {
            out.push(Notice::BeyondDouble(self.beyond));
        }
        if !self.non_positive.is_empty() {
            out.push(Notice::NonPositive(self.non_positive));
        }
        out
    }
}

/// Every metric of the `common` cases, other against base, judged together:
/// the false discovery rate is held over the environment's headline metrics.
/// With `pairs` (runs measured interleaved, [`super::pairing`]) each
/// metric is compared round by round where two or more rounds pair.
pub(super) fn compare_env(
    (base, other): (&Environment, &Environment),
    common: &[&String],
    pairs: Option<&[(usize, usize)]>,
    seed: u64,
    threshold: f64,
    skipped: &mut Skipped,
) -> Vec<MetricComparison> {
    let mut mine = Vec::new();
    for (case, case_skipped) in compare_cases((base, other), common, pairs, seed, threshold) {
        mine.extend(case);
        skipped.add(case_skipped);
    }
    verdict::settle(&mut mine, threshold);
    mine.into_iter().map(|(m, _)| m).collect()
}

/// [`compare_case`] for every key, in the keys' order, on the machine's
/// cores: each metric's bootstrap has a seed of its own, so the result is
/// the same on any number of threads.
fn compare_cases(
    envs: (&Environment, &Environment),
    keys: &[&String],
    pairs: Option<&[(usize, usize)]>,
    seed: u64,
    threshold: f64,
) -> Vec<(Vec<(MetricComparison, levels::LogRatio)>, Skipped)> {
    crate::stats::par::map(keys, |key| {
        let mut skipped = Skipped::default();
        let case = compare_case(envs, key, pairs, seed, threshold, &mut skipped);
        (case, skipped)
    })
}

/// Every metric of case `key`, other against base, with provisional
/// verdicts; a metric that cannot be compared is named in `skipped`.
fn compare_case(
    (base, other): (&Environment, &Environment),
    key: &str,
    pairs: Option<&[(usize, usize)]>,
    seed: u64,
    threshold: f64,
    skipped: &mut Skipped,
) -> Vec<(MetricComparison, levels::LogRatio)> {
    let Some(case) = base.runs.iter().find_map(|r| ok_case(r, key)) else {
        return Vec::new();
    };
    let suspect = notice::case_flags(&[base, other], key);
    let mut mine = Vec::new();
    for (i, m) in case.metrics.iter().enumerate() {
        // seconds against nanoseconds would make a billion-fold
        // "difference": a metric whose unit or direction is not the
        // same in every run is not compared
        let units = units_of(base.runs.iter().chain(&other.runs), key, &m.name);
        if units.len() > 1 {
            skipped.mismatched.push(Mismatch {
                key: key.to_string(),
                metric: m.name.clone(),
                units,
            });
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
                skipped.non_positive.push(metric_ref(key, &m.name));
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
        // paired: the runs and rounds both sides ran, which the basis and
        // the advice count (a dear directory's case runs in fewer passes)
        let (lr, components, paired) =
            match pairs.and_then(|p| nested_paired((base, other), p, key, &m.name)) {
                Some(d) => (
                    levels::paired_log_ratio(&d, seed, RESAMPLES),
                    d.components(),
                    Some((d.runs(), d.rounds_per_run())),
                ),
                None => {
                    let spread = (
                        run_spread(base, key, &m.name),
                        run_spread(other, key, &m.name),
                    );
                    let lr = levels::log_ratio((&b, spread.0), (&o, spread.1), seed, RESAMPLES);
                    (lr, Components::pool(&b.components(), &o.components()), None)
                }
            };
        let mut mc = measure(&lr, (&b, &o), components, &subject, threshold);
        if let Some((n, r)) = paired {
            mc.basis.runs = (n, n);
            mc.basis.rounds_per_run = (r, r);
        }
        let (lo, hi) = mc.ratio_ci;
        if ![mc.ratio, lo, hi].into_iter().all(comparable) {
            // 1e-300 against 1e300: no double holds the ratio; 1e-320
            // against 1: none holds its inverse
            skipped.beyond.push(metric_ref(key, &m.name));
            continue;
        }
        mc.suspect = suspect.clone();
        mine.push((mc, lr));
    }
    mine
}

fn metric_ref(key: &str, metric: &str) -> MetricRef {
    MetricRef {
        key: key.to_string(),
        metric: metric.to_string(),
    }
}

/// The band on the log-ratio (other/base) inside which a metric of this
/// direction is a tie: speed-ups within [1 − t, 1 + t].
fn band(direction: Direction, threshold: f64) -> (f64, f64) {
    let (slow, fast) = ((1.0 - threshold).ln(), (1.0 + threshold).ln());
    match direction {
        Direction::HigherIsBetter => (slow, fast),
        Direction::LowerIsBetter => (-fast, -slow),
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

/// The estimates, interval and p-value of one metric, from its ratio `lr`
/// and the sides' samples; its verdict is provisional until
/// [`verdict::settle`] has seen the whole environment.
fn measure(
    lr: &levels::LogRatio,
    (b, o): (&Levels, &Levels),
    components: Components,
    s: &Subject,
    threshold: f64,
) -> MetricComparison {
    let (lo, hi) = lr.interval(CONFIDENCE);
    let (down, up) = band(s.metric.direction, threshold);
    let p_value = lr.p_beyond(down, up);
    let ratio = lr.point.exp();
    MetricComparison {
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
    }
}
