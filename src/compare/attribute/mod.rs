//! Each workload's difference explained by its operations: an application
//! case counted what it did (stats, misses, reads, creates, unlinks and
//! their bytes: [`OpCounts`]), the micro benches measured what each costs
//! in the same runs and on the same directory, and the prediction is
//! Saavedra and Smith's (1996): time = Σ operations × cost per operation.
//!
//! Which micro case prices which operation is the benches' own word
//! ([`crate::results::price`], declared beside each bench and handed in by
//! the command): nothing here names a bench, a metric or a parameter.
//!
//! For each case with counts and each environment:
//! - each counted quantity ([`OpCounts::priced`]) at its operation's price
//!   on both sides, from the first declared price whose case ran on the
//!   workload's directory (or anywhere, for a price not tied to one) in
//!   the same comparison; a system call or a program without a price stays
//!   in the rest (a `--by-dir` comparison has none per directory);
//! - where a person's command counted the names its paths walked and the
//!   runs price a name (io.meta's re-stat against its near stat), each
//!   name at that price, and each operation's price less the names its
//!   pricing case's paths walked;
//! - in a `--by-dir` comparison, a person's command's operations on files
//!   outside its directory (a compiler's headers, the standard library
//!   of an interpreter) are the same work on both sides: they stay in the
//!   rest, unpriced; between environments they are priced at the
//!   directory's costs with the others, as nothing in the runs prices the
//!   file system they lie on;
//! - the rest of the baseline's time (directory listings, directories
//!   made and removed, the computation) is taken as the same work in the
//!   other environment, scaled by the computation's price ratio where both
//!   sides ran its case (an emulator slows it) and kept as it is otherwise;
//! - predicted = (other's priced operations + the rest) / (baseline's
//!   priced operations + the rest), set beside the measured ratio;
//!   `unexplained` is measured / predicted. Where the priced operations
//!   alone cost more than the baseline's whole time, the rest is taken as
//!   none, and the prediction is still the ratio of the two sides' priced
//!   times: the same prices on both sides predict 1, however far the
//!   prices overshoot the workload's own time;
//! - the prediction's 95 % interval: each price is kept as the measured
//!   metrics it is made of (a name: the re-stat less the near stat; a sync
//!   priced from io.random less its transfers moves with io.random's
//!   fsyncs, its transfers' prices held), each metric's weight netted over
//!   every price it enters, and the metrics moved to the ends of their own
//!   95 % intervals: those that add to the prediction together, those that
//!   subtract together, the two groups as independent ([`shifts`]).
//!   Metrics that add are taken as moving together, which no narrower
//!   interval can assume where one case (io.meta) prices several
//!   operations from the same repetitions; none is taken as moving against
//!   another.
//!
//! A case whose costs are not all in the runs (no io.meta on its
//! directory), or whose prediction no number holds (rates of 1e-310 a
//! second), gets no prediction, and says why.

use super::{comparable, Environment, MetricComparison};
use crate::results::counts::OpCounts;
use crate::results::price::{BenchPrice, Cost, Op};
use crate::results::CaseResult;
use serde::Serialize;
use std::collections::BTreeMap;

mod market;
use market::Market;

/// Bytes in a MiB, in MB: a [`Cost::LessTransfers`] case's transfers are
/// in MiB per second, byte prices per byte.
const MIB_BYTES: f64 = 1_048_576.0;

/// The least share of the prediction its interval's low end keeps where
/// metrics pulling opposite ways would take it to nothing or below: a
/// finite, very wide interval, not none.
const LEAST_LOW: f64 = 1e-3;

/// The least share of its time a [`Cost::LessTransfers`] case must leave
/// to its own operation once its transfers are priced: below it the two
/// cannot be told apart.
const LEAST_LEFT: f64 = 0.1;

/// One priced operation of a workload on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Part {
    /// `stats`, `misses`, `reads`, `creates`, `unlinks`, `renames`,
    /// `attribute changes`, `listings`, `bytes read`, `bytes written`, `opens`, `page bytes
    /// read`, `page bytes written`, `syncs`, `file system calls`,
    /// `programs started`, `names walked` ([`OpCounts::priced`]).
    pub operation: &'static str,
    /// How many the case did per repetition.
    pub count: u64,
    /// The micro case and metric that priced it: `io.meta[dir=work,files=500]
    /// stats_per_sec`.
    pub priced_by: String,
    /// Their time in the baseline, ms (those made by threads alive
    /// together each at 1 / [`Parallel::threads`] of its price).
    pub base_ms: f64,
    /// Their time in the other environment, ms, likewise.
    pub other_ms: f64,
    /// `other_ms` with each metric its price is made of at the end of its
    /// own 95 % interval that lowers it, then raises it, where every one
    /// has two ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_ms_ci: Option<(f64, f64)>,
    /// `other_ms` as the metrics it is made of, ms each, for the
    /// prediction's interval.
    #[serde(skip)]
    pub(crate) terms: Vec<Term>,
}

/// The factors (low, high) that take a metric's other value to the ends
/// of its 95 % interval between the sides; None where an end is no rate.
type Ends = Option<(f64, f64)>;

/// One measured metric's share of a price on the other side: its id
/// (case key and metric), what it adds (seconds or ms, below 0 where the
/// price subtracts it) and the ends of its interval.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Term {
    id: String,
    other: f64,
    ends: Ends,
}

impl Term {
    /// `by` times it.
    fn scaled(&self, by: f64) -> Term {
        Term {
            other: self.other * by,
            ..self.clone()
        }
    }
}

/// How far the sum of `terms` moves down and up (≤ 0, ≥ 0) with the
/// metrics at the ends of their own 95 % intervals; None where a metric's
/// interval has no ends. The terms of one metric are netted first (a name
/// is the re-stat less the near stat; a stat less its names subtracts
/// them again). Metrics measured in the same runs are taken as moving the
/// same way or independently, never against each other (a slow host makes
/// every operation slower): those that add to the sum move together, their
/// shifts added; those that subtract from it likewise; and the two groups'
/// shifts are combined as independent ones (the root of their squares),
/// the widest interval that assumption allows. Where every metric adds,
/// as for a command whose operations walk 1 to 3 names, that is every
/// metric at the same end at once.
fn shifts(terms: &[Term]) -> Option<(f64, f64)> {
    // each metric's netted share and the ends of its interval
    let mut net: BTreeMap<&str, (f64, Ends, f64)> = BTreeMap::new();
    for t in terms {
        let e = net.entry(t.id.as_str()).or_insert((0.0, t.ends, 0.0));
        e.0 += t.other;
        e.2 += t.other.abs();
    }
    // (down, up) of the metrics that add, then of those that subtract
    let mut groups = [(0.0, 0.0); 2];
    // a metric that nets to nothing (within rounding of its shares) moves
    // nothing, ends or none
    for (other, ends, _) in net
        .values()
        .filter(|(other, _, shares)| other.abs() > 1e-12 * shares)
    {
        let (lo, hi) = (*ends)?;
        let (a, b) = (other * (lo - 1.0), other * (hi - 1.0));
        let g = &mut groups[usize::from(*other < 0.0)];
        g.0 += a.min(b).min(0.0);
        g.1 += a.max(b).max(0.0);
    }
    let [(d1, u1), (d2, u2)] = groups;
    Some((-d1.hypot(d2), u1.hypot(u2)))
}

/// One app case's ratio in one environment, against its prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attribution {
    /// The environment compared with the baseline.
    pub environment: String,
    /// The app case's key.
    pub key: String,
    /// Its bench (`app.status`).
    pub bench: String,
    /// Its directory's name, if it names one.
    pub dir: Option<String>,
    /// other / base of the case's time (2.0: twice as long).
    pub measured: f64,
    /// The 95 % interval of `measured`.
    pub measured_ci: (f64, f64),
    /// The ratio the operations' costs predict; None where a cost is missing.
    pub predicted: Option<f64>,
    /// Its 95 % interval: the metrics the prices are made of at the ends
    /// of their own intervals ([`shifts`]); None where one has no ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_ci: Option<(f64, f64)>,
    /// measured / predicted: above 1, slower than its operations explain.
    pub unexplained: Option<f64>,
    /// The case's operations per repetition.
    pub counts: OpCounts,
    /// Each priced operation.
    pub parts: Vec<Part>,
    /// The baseline's time not priced (listings, directories, computation), ms.
    pub rest_base_ms: f64,
    /// A command's operations on files outside its directory that a
    /// `--by-dir` comparison took as the same on both sides, in the rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_elsewhere: Option<OpCounts>,
    /// What the rest was scaled by in the other environment: cpu.int's
    /// time ratio, or 1 without it.
    pub rest_scale: f64,
    /// The case and metric that priced the computation, where one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rest_priced_by: Option<String>,
    /// A person's command's operations in its directory made by threads
    /// alive together, priced as taking 1 / `threads` of their time each.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel: Option<Parallel>,
    /// A person's command's words, where the case is one (`git status`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Why there is no prediction, where there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<String>,
}

/// A command's operations made by threads alive together.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Parallel {
    /// The operations.
    pub counts: OpCounts,
    /// How many threads were alive together, on average.
    pub threads: f64,
}

/// Within this factor of its prediction, a ratio is called explained.
const EXPLAINED_WITHIN: f64 = 1.10;

impl Attribution {
    /// Whether the measured ratio is what the prediction says: within
    /// [`EXPLAINED_WITHIN`] of it, or nearer it than the two 95 %
    /// intervals together allow (the log distance against the root of the
    /// sum of their squared log half-widths, as for a difference of two
    /// independent estimates); None without a prediction.
    pub fn explained(&self) -> Option<bool> {
        let p = self.predicted?;
        let apart = (self.measured / p).ln().abs();
        let half = |(lo, hi): (f64, f64)| (hi / lo).ln() / 2.0;
        let together = match self.predicted_ci {
            Some(ci) => half(self.measured_ci).hypot(half(ci)),
            None => 0.0,
        };
        Some(apart <= EXPLAINED_WITHIN.ln() || apart <= together)
    }

    /// The micro bench whose costs carry most of the other side's priced
    /// time, for "predicted from small-file stats (io.meta)".
    pub fn main_part(&self) -> Option<&Part> {
        self.parts
            .iter()
            .max_by(|a, b| a.other_ms.total_cmp(&b.other_ms))
    }
}

/// Every attribution of a workload that counted its operations, for each
/// environment, priced as `prices` declare; `by_dir`: the environments are
/// directories of the same runs (`compare --by-dir`).
pub fn attribute(
    envs: &[Environment],
    metrics: &[MetricComparison],
    prices: &[BenchPrice],
    by_dir: bool,
) -> Vec<Attribution> {
    let Some(base) = envs.first() else {
        return Vec::new();
    };
    let mut cases: BTreeMap<&str, &CaseResult> = BTreeMap::new();
    for c in base.runs.iter().flat_map(|r| &r.cases) {
        cases.entry(c.key.as_str()).or_insert(c);
    }
    metrics
        .iter()
        .filter(|m| m.primary)
        .filter_map(|m| {
            let case = *cases.get(m.key.as_str())?;
            let Some(counts) = OpCounts::of(case.details.as_ref()) else {
                // a person's command timed but not counted: said, not lost
                let why = OpCounts::not_counted_of(case.details.as_ref())?;
                return Some(uncounted(m, case, &base.label, why));
            };
            let same = OpCounts::elsewhere_of(case.details.as_ref())
                .filter(|e| by_dir && *e != OpCounts::default());
            let parallel = OpCounts::parallel_of(case.details.as_ref())
                .map(|(counts, threads)| Parallel { counts, threads });
            let market = Market {
                cases: &cases,
                metrics,
                prices,
                env: &m.environment,
                dir: case.dir_param(),
            };
            Some(one(m, case, (counts, same, parallel), &market))
        })
        .collect()
}

/// The attribution of workload `m` (its case `case`) that says nothing yet:
/// its measured ratio, no operation and no prediction.
fn bare(m: &MetricComparison, case: &CaseResult) -> Attribution {
    Attribution {
        environment: m.environment.clone(),
        key: m.key.clone(),
        bench: case.bench.clone(),
        dir: case.dir_param().map(str::to_string),
        measured: m.ratio,
        measured_ci: m.ratio_ci,
        predicted: None,
        predicted_ci: None,
        unexplained: None,
        counts: OpCounts::default(),
        parts: Vec::new(),
        rest_base_ms: 0.0,
        same_elsewhere: None,
        rest_scale: 1.0,
        rest_priced_by: None,
        parallel: None,
        command: case.command_text().map(str::to_string),
        missing: None,
    }
}

/// The attribution of workload `m` (its case `case`), whose operations
/// could not be counted in the baseline `base` (where they are read):
/// its measured ratio, no prediction, and `why`.
fn uncounted(m: &MetricComparison, case: &CaseResult, base: &str, why: &str) -> Attribution {
    Attribution {
        missing: Some(format!("its operations were not counted in {base}: {why}")),
        ..bare(m, case)
    }
}

/// The attribution of workload `m` (its case `case`), which counted
/// `counts`, of which `same` are taken as the same on both sides and
/// `parallel` were made by threads alive together.
fn one(
    m: &MetricComparison,
    case: &CaseResult,
    (counts, same, parallel): (OpCounts, Option<OpCounts>, Option<Parallel>),
    market: &Market,
) -> Attribution {
    let mut parts = Vec::new();
    let mut missing = Vec::new();
    let priced = same.map_or(counts, |s| counts.less(&s));
    // a name's price, where the workload counted the names it walked
    let name = (priced.names > 0).then(|| market.price(Op::Name)).flatten();
    let together = parallel
        .as_ref()
        .map_or([0; 17], |p| p.counts.priced().map(|c| c.count));
    for (counted, together) in priced.priced().into_iter().zip(together) {
        if counted.count == 0 {
            continue;
        }
        // those made by threads alive together take 1 / threads of their
        // time each
        let each = parallel.as_ref().map_or(1.0, |p| 1.0 / p.threads);
        let together = together.min(counted.count);
        let effective = (counted.count - together) as f64 + together as f64 * each;
        let price = match counted.op {
            Op::Name => name.clone(),
            op => market.price(op).map(|p| p.less_names(name.as_ref())),
        };
        match price {
            Some(p) => {
                let other_ms = effective * p.other * 1e3;
                let terms: Vec<Term> = p.terms.iter().map(|t| t.scaled(effective * 1e3)).collect();
                parts.push(Part {
                    operation: counted.words,
                    count: counted.count,
                    priced_by: p.by(),
                    base_ms: effective * p.base * 1e3,
                    other_ms,
                    other_ms_ci: shifts(&terms)
                        .map(|(d, u)| ((other_ms + d).max(0.0), other_ms + u)),
                    terms,
                });
            }
            None if counted.op.may_stay_in_rest() => {}
            None => missing.push(counted),
        }
    }
    let compute = market.price(Op::Compute);
    let rest_scale = compute.as_ref().map_or(1.0, |c| c.other / c.base);
    let priced_base: f64 = parts.iter().map(|p| p.base_ms).sum();
    let rest_base_ms = (m.base_value - priced_base).max(0.0);
    // the rest moves with the computation's metrics, where one priced it
    let rest_terms: Vec<Term> = compute.as_ref().map_or(Vec::new(), |c| {
        c.terms
            .iter()
            .map(|t| t.scaled(rest_base_ms / c.base))
            .collect()
    });
    let prediction = if missing.is_empty() {
        predict(m, &parts, rest_base_ms, (rest_scale, &rest_terms))
    } else {
        let ops: Vec<Op> = missing.iter().map(|c| c.op).collect();
        let words: Vec<&str> = missing.iter().map(|c| c.words).collect();
        Err(format!(
            "no cost measured for its {} on this directory ({})",
            words.join(", "),
            market.who_prices(&ops)
        ))
    };
    let predicted = prediction.as_ref().ok().map(|p| p.0);
    Attribution {
        predicted,
        predicted_ci: prediction.as_ref().ok().and_then(|p| p.1),
        unexplained: predicted.map(|p| m.ratio / p),
        counts,
        parts,
        rest_base_ms,
        same_elsewhere: same,
        rest_scale,
        rest_priced_by: compute.map(|c| c.by()),
        parallel,
        missing: prediction.err(),
        ..bare(m, case)
    }
}

/// The ratio that `parts` and the baseline's rest (`rest_base_ms`, taken
/// by the other side times `scale`, made of the metrics `rest_terms`)
/// predict for app case `m`, and its 95 % interval: every metric the
/// prices are made of moved alone to the end of its own interval that
/// lowers the prediction, the shifts added, then to the end that raises it
/// ([`shifts`]), where every one has ends, its low end at least the
/// rest's share (no priced operation costs less than nothing); an error
/// where no number holds
/// the prediction or its distance from the measured ratio: a rate of
/// 1e-310 stats a second prices each stat at 1e310 s.
fn predict(
    m: &MetricComparison,
    parts: &[Part],
    rest_base_ms: f64,
    (scale, rest_terms): (f64, &[Term]),
) -> Result<(f64, Option<(f64, f64)>), String> {
    let base: f64 = parts.iter().map(|p| p.base_ms).sum::<f64>() + rest_base_ms;
    let other: f64 = parts.iter().map(|p| p.other_ms).sum::<f64>() + rest_base_ms * scale;
    let predicted = other / base;
    if !(comparable(predicted) && comparable(m.ratio / predicted)) {
        return Err("no prediction: its operations' costs are beyond what a number holds".into());
    }
    let terms: Vec<Term> = parts
        .iter()
        .flat_map(|p| p.terms.iter().cloned())
        .chain(rest_terms.iter().cloned())
        .collect();
    // no priced operation costs less than nothing: the low end keeps the
    // rest at its own low end, and a thousandth of the prediction at
    // least, where metrics pulling opposite ways would take it below
    let floor =
        (rest_base_ms * scale + shifts(rest_terms).map_or(0.0, |(d, _)| d)).max(other * LEAST_LOW);
    let ci = shifts(&terms).and_then(|(down, up)| {
        let ci = ((other + down).max(floor) / base, (other + up) / base);
        (comparable(ci.0) && comparable(ci.1)).then_some(ci)
    });
    Ok((predicted, ci))
}

/// The factors (low, high) that take the other side's cost `other`
/// (seconds, from `m`'s other value at `cost`) to its cost at the two
/// ends of `m`'s 95 % interval of the ratio between the sides; None where
/// an end is no rate. The interval is taken about `m.ratio`, which an
/// interleaved comparison draws from its paired rounds, not from the two
/// values, and it always holds the price itself (factor 1).
fn spread(cost: Cost, m: &MetricComparison, other: f64) -> Option<(f64, f64)> {
    let at = |end: f64| {
        cost.seconds(m.other_value * end / m.ratio)
            .map(|s| s / other)
    };
    let (a, b) = (at(m.ratio_ci.0)?, at(m.ratio_ci.1)?);
    Some((a.min(b).min(1.0), a.max(b).max(1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::run;
    use crate::compare::{compare, Options, DEFAULT_THRESHOLD};
    use crate::units::Direction::{HigherIsBetter as Up, LowerIsBetter as Down};

    /// Five repetitions near `v`.
    fn rep(v: f64) -> Vec<f64> {
        vec![v, v * 1.001, v * 0.999, v * 1.002, v * 0.998]
    }

    /// A run of io.meta on `work` at the given rates (creates, stats,
    /// reads, deletes per second, one value per metric and repetition) and
    /// app.status at `status_ms`, with its counts.
    fn side(
        label: &str,
        id: &str,
        rates: [f64; 4],
        status_ms: f64,
        counts: OpCounts,
    ) -> crate::results::ResultFile {
        let mut r = run(
            label,
            id,
            &[
                (
                    "io.meta[dir=work,files=500]",
                    "creates_per_sec",
                    Up,
                    rep(rates[0]),
                ),
                (
                    "app.status[dir=work,files=2000]",
                    "ms",
                    Down,
                    rep(status_ms),
                ),
            ],
        );
        // io.meta's other phases as secondary metrics of the same case
        for (name, v) in ["stats_per_sec", "reads_per_sec", "deletes_per_sec"]
            .iter()
            .zip(&rates[1..])
        {
            add_phase(&mut r.cases[0], name, *v);
        }
        r.cases[1].details = Some(serde_json::json!({ "counts": counts }));
        r
    }

    #[test]
    fn prices_beyond_the_workload_s_time_predict_the_ratio_of_the_priced_times_worked_by_hand() {
        // 2 000 stats at 1 µs price 2 ms of a 1 ms pass: no rest. The same
        // prices on both sides predict 1 (2 ms / 1 ms said 2x before), and
        // stats at 2 µs predict 4 ms / 2 ms = 2x (4x before)
        let counts = OpCounts {
            stats: 2000,
            ..OpCounts::default()
        };
        let rates = |stat: f64| [50_000.0, stat, 100_000.0, 80_000.0];
        for (stat, status_ms, want) in [(1e6, 1.0, 1.0), (5e5, 2.0, 2.0)] {
            let envs = [
                Environment::new("a", vec![side("a", "b1", rates(1e6), 1.0, counts)]),
                Environment::new("b", vec![side("b", "o1", rates(stat), status_ms, counts)]),
            ];
            let (c, a) = compared(&envs, 1, false);
            let a = &a[0];
            assert_eq!(a.rest_base_ms, 0.0, "{a:?}");
            assert!((a.predicted.unwrap() - want).abs() < 0.01, "{a:?}");
            // its interval: the stat rate's, turned into a time ratio
            let m = c
                .metrics
                .iter()
                .find(|m| m.metric == "stats_per_sec")
                .unwrap();
            let (lo, hi) = a.predicted_ci.unwrap();
            let p = a.predicted.unwrap();
            assert!(
                (lo - p * m.ratio / m.ratio_ci.1).abs() < 1e-9,
                "{a:?} {m:?}"
            );
            assert!(
                (hi - p * m.ratio / m.ratio_ci.0).abs() < 1e-9,
                "{a:?} {m:?}"
            );
            assert!(lo < p && p < hi, "{a:?}");
        }
    }

    #[test]
    fn a_slowdown_made_of_stats_is_predicted_from_the_stat_rate_worked_by_hand() {
        // 2 000 stats at 1 µs in the baseline: 2 ms of a 3 ms pass (1 ms
        // the rest); 10 µs in the other: 20 ms + 1 ms = 21 ms, 7x predicted
        let counts = OpCounts {
            stats: 2000,
            readdirs: 51,
            ..OpCounts::default()
        };
        let base = side(
            "local",
            "b1",
            [50_000.0, 1e6, 100_000.0, 80_000.0],
            3.0,
            counts,
        );
        let other = side(
            "share",
            "o1",
            [5_000.0, 1e5, 20_000.0, 8_000.0],
            24.0,
            counts,
        );
        let a = attribute_pair(("local", base), ("share", other));
        assert_eq!(a.len(), 1);
        let a = &a[0];
        assert_eq!(a.dir.as_deref(), Some("work"));
        assert_eq!(a.parts.len(), 1);
        assert_eq!(a.parts[0].operation, "stats");
        assert!((a.parts[0].base_ms - 2.0).abs() < 0.01, "{a:?}");
        assert!((a.parts[0].other_ms - 20.0).abs() < 0.1, "{a:?}");
        assert!((a.rest_base_ms - 1.0).abs() < 0.01, "{a:?}");
        assert_eq!(a.rest_scale, 1.0);
        assert!((a.predicted.unwrap() - 7.0).abs() < 0.05, "{a:?}");
        assert!((a.measured - 8.0).abs() < 0.05, "{a:?}");
        assert!((a.unexplained.unwrap() - 8.0 / 7.0).abs() < 0.02, "{a:?}");
        assert_eq!(
            a.main_part().unwrap().priced_by,
            "io.meta[dir=work,files=500] stats_per_sec"
        );
    }

    #[test]
    fn a_command_s_operations_outside_its_directory_are_the_same_in_a_comparison_of_directories() {
        // as above, but 1 000 of the 2 000 stats were outside the
        // directory: between directories they stay in the rest, the same
        // on both sides: 1 000 at 1 µs (1 ms) against 10 µs (10 ms), the
        // rest 3 - 1 = 2 ms on both, (10 + 2) / 3 = 4x predicted
        let counts = OpCounts {
            stats: 2000,
            ..OpCounts::default()
        };
        let elsewhere = OpCounts {
            stats: 1000,
            ..OpCounts::default()
        };
        let with_elsewhere = |mut r: crate::results::ResultFile| {
            let d = r.cases[1].details.as_mut().unwrap();
            d[crate::results::counts::ELSEWHERE_KEY] = serde_json::json!(elsewhere);
            r
        };
        let rates = |f: f64| [50_000.0 / f, 1e6 / f, 100_000.0 / f, 80_000.0 / f];
        let base = with_elsewhere(side("local", "b1", rates(1.0), 3.0, counts));
        let other = with_elsewhere(side("share", "o1", rates(10.0), 24.0, counts));
        let pair = (("local", base), ("share", other));
        let by_dir = attribute_pair_as(pair.0.clone(), pair.1.clone(), true).remove(0);
        assert_eq!(by_dir.parts[0].count, 1000);
        assert!((by_dir.rest_base_ms - 2.0).abs() < 0.01, "{by_dir:?}");
        assert!((by_dir.predicted.unwrap() - 4.0).abs() < 0.05, "{by_dir:?}");
        assert_eq!(by_dir.same_elsewhere, Some(elsewhere));
        assert_eq!(by_dir.counts, counts);
        // between environments all 2 000 are priced at the directory's costs
        let apart = attribute_pair_as(pair.0, pair.1, false).remove(0);
        assert!((apart.predicted.unwrap() - 7.0).abs() < 0.05, "{apart:?}");
        assert_eq!(apart.same_elsewhere, None);
    }

    /// `side`'s file with io.meta's second stat and second miss measured
    /// too, at `restats` and `misses` per second.
    fn side_with_lookups(
        label: &str,
        id: &str,
        rates: [f64; 4],
        (restats, misses): (f64, f64),
        status_ms: f64,
        counts: OpCounts,
    ) -> crate::results::ResultFile {
        let mut r = side(label, id, rates, status_ms, counts);
        for (name, v) in [("restats_per_sec", restats), ("misses_per_sec", misses)] {
            add_phase(&mut r.cases[0], name, v);
        }
        r
    }

    /// Metric `name` added to io.meta's case `meta` at `value`: its first
    /// metric's samples scaled to it.
    fn add_phase(meta: &mut CaseResult, name: &str, value: f64) {
        let mut extra = meta.metrics[0].clone();
        extra.name = name.into();
        let first = meta.metrics[0].samples[0];
        for s in extra.samples.iter_mut() {
            *s *= value / first;
        }
        meta.metrics.push(extra);
    }

    #[test]
    fn runs_without_the_second_stat_and_miss_price_both_at_the_first_stat() {
        // io.meta as measured before: 1 000 stats and 200 misses at 1 µs
        // (1.2 ms of a 2 ms pass) and at 100 µs (120 ms + 0.8 ms): 60.4x
        let counts = OpCounts {
            stats: 1000,
            misses: 200,
            ..OpCounts::default()
        };
        let base = side("local", "b1", [5e4, 1e6, 1e5, 8e4], 2.0, counts);
        let other = side("fuse", "o1", [5e3, 1e4, 1e4, 8e3], 16.0, counts);
        let a = &attribute_pair(("local", base), ("fuse", other))[0];
        let by: Vec<&str> = a.parts.iter().map(|p| p.priced_by.as_str()).collect();
        assert_eq!(by, ["io.meta[dir=work,files=500] stats_per_sec"; 2]);
        assert!((a.predicted.unwrap() - 60.4).abs() < 0.01, "{a:?}");
    }

    #[test]
    fn found_names_take_the_second_stat_s_price_and_missing_ones_the_second_miss_s() {
        // 1 000 stats and 200 misses. Baseline: a re-stat 1 µs (1 ms), a
        // miss 2 µs (0.4 ms), of a 2 ms pass: 0.6 ms the rest. Other: a
        // re-stat 4 µs (4 ms, where the first stat's 100 µs would say
        // 100 ms), a miss 50 µs (10 ms): 4 + 10 + 0.6 = 14.6 ms, 7.3x.
        let counts = OpCounts {
            stats: 1000,
            misses: 200,
            ..OpCounts::default()
        };
        let rates = |stat: f64| [50_000.0, stat, 100_000.0, 80_000.0];
        let base = side_with_lookups("local", "b1", rates(1e6), (1e6, 5e5), 2.0, counts);
        let other = side_with_lookups("fuse", "o1", rates(1e4), (2.5e5, 2e4), 16.0, counts);
        let a = &attribute_pair(("local", base), ("fuse", other))[0];
        let parts: Vec<(&str, &str)> = a
            .parts
            .iter()
            .map(|p| (p.operation, p.priced_by.as_str()))
            .collect();
        assert_eq!(
            parts,
            [
                ("stats", "io.meta[dir=work,files=500] restats_per_sec"),
                ("misses", "io.meta[dir=work,files=500] misses_per_sec"),
            ]
        );
        assert!((a.parts[0].other_ms - 4.0).abs() < 0.01, "{a:?}");
        assert!((a.parts[1].other_ms - 10.0).abs() < 0.01, "{a:?}");
        assert!((a.rest_base_ms - 0.6).abs() < 0.01, "{a:?}");
        assert!((a.predicted.unwrap() - 7.3).abs() < 0.01, "{a:?}");
        assert!((a.unexplained.unwrap() - 8.0 / 7.3).abs() < 0.01, "{a:?}");
    }

    #[test]
    fn names_walked_are_priced_apart_where_counted_worked_by_hand() {
        // 1 000 stats and 200 misses walking 1 500 names. Baseline: a
        // re-stat 1 µs at io.meta's 3 names, 0.5 µs at 1 (its near stat):
        // a name 0.25 µs, a stat less its names 0.25 µs, a miss (2 µs)
        // 1.25 µs: 0.25 + 0.25 + 0.375 = 0.875 ms of a 2 ms pass, 1.125 ms
        // the rest. Other: 10 µs and 4 µs, a name 3 µs, a stat and a miss
        // (10 µs) 1 µs each: 1 + 0.2 + 4.5 + 1.125 = 6.825 ms, 3.4125x
        let counts = OpCounts {
            stats: 1000,
            misses: 200,
            names: 1500,
            ..OpCounts::default()
        };
        let rates = [50_000.0, 1e6, 100_000.0, 80_000.0];
        let with_near = |mut r: crate::results::ResultFile, near: f64| {
            add_phase(&mut r.cases[0], "near_restats_per_sec", near);
            r
        };
        let base = side_with_lookups("local", "b1", rates, (1e6, 5e5), 2.0, counts);
        let other = side_with_lookups("share", "o1", rates, (1e5, 1e5), 16.0, counts);
        let pair = (
            ("local", with_near(base.clone(), 2e6)),
            ("share", with_near(other.clone(), 2.5e5)),
        );
        let a = &attribute_pair(pair.0, pair.1)[0];
        let parts: Vec<(&str, &str, f64, f64)> = a
            .parts
            .iter()
            .map(|p| (p.operation, p.priced_by.as_str(), p.base_ms, p.other_ms))
            .collect();
        let meta = "io.meta[dir=work,files=500]";
        let want = [
            ("stats", "restats_per_sec, less its 3 names", 0.25, 1.0),
            ("misses", "misses_per_sec, less its 3 names", 0.25, 0.2),
            (
                "names walked",
                "restats_per_sec less near_restats_per_sec, over 2 names",
                0.375,
                4.5,
            ),
        ];
        assert_eq!(parts.len(), want.len(), "{a:?}");
        for (got, want) in parts.iter().zip(want) {
            assert_eq!(
                (got.0, got.1),
                (want.0, format!("{meta} {}", want.1).as_str())
            );
            assert!((got.2 - want.2).abs() < 1e-6, "{got:?}");
            assert!((got.3 - want.3).abs() < 1e-6, "{got:?}");
        }
        assert!((a.rest_base_ms - 1.125).abs() < 1e-6, "{a:?}");
        assert!((a.predicted.unwrap() - 3.4125).abs() < 1e-6, "{a:?}");
        let (lo, hi) = a.predicted_ci.unwrap();
        assert!(lo < 3.4125 && 3.4125 < hi, "{a:?}");
        // the same names not counted (an app case), or no near stat in the
        // runs: each operation at io.meta's 3 names, as before: 1 000 x
        // 10 µs + 200 x 10 µs + 0.6 ms over 1 + 0.4 + 0.6 ms, 6.3x
        let uncounted = OpCounts { names: 0, ..counts };
        let no_names = [
            attribute_pair(
                (
                    "local",
                    side_with_lookups("local", "b1", rates, (1e6, 5e5), 2.0, uncounted),
                ),
                (
                    "share",
                    side_with_lookups("share", "o1", rates, (1e5, 1e5), 16.0, uncounted),
                ),
            ),
            attribute_pair(("local", base), ("share", other)),
        ];
        for a in no_names {
            assert_eq!(a[0].parts.len(), 2, "{:?}", a[0]);
            assert!((a[0].predicted.unwrap() - 6.3).abs() < 1e-6, "{:?}", a[0]);
        }
    }

    #[test]
    fn operations_on_threads_alive_together_take_their_share_of_the_time_worked_by_hand() {
        // 2 000 stats, 1 600 of them on 2 threads at once: 400 + 800 = 1 200
        // stats' time on each side. At 1 µs and 10 µs with a 3 ms pass
        // (1.8 ms the rest): (12 + 1.8) / 3 = 4.6x, where all 2 000 one at
        // a time would say (20 + 1) / 3 = 7x
        let counts = OpCounts {
            stats: 2000,
            ..OpCounts::default()
        };
        let together = OpCounts {
            stats: 1600,
            ..OpCounts::default()
        };
        let with_threads = |mut r: crate::results::ResultFile| {
            let d = r.cases[1].details.as_mut().unwrap();
            d[crate::results::counts::PARALLEL_KEY] = serde_json::json!(together);
            d[crate::results::counts::THREADS_KEY] = serde_json::json!(2.0);
            r
        };
        let rates = |f: f64| [50_000.0 / f, 1e6 / f, 100_000.0 / f, 80_000.0 / f];
        let base = with_threads(side("local", "b1", rates(1.0), 3.0, counts));
        let other = with_threads(side("share", "o1", rates(10.0), 24.0, counts));
        let a = attribute_pair(("local", base), ("share", other)).remove(0);
        assert_eq!(a.parts[0].count, 2000);
        assert!((a.parts[0].base_ms - 1.2).abs() < 1e-9, "{a:?}");
        assert!((a.parts[0].other_ms - 12.0).abs() < 1e-9, "{a:?}");
        assert!((a.predicted.unwrap() - 4.6).abs() < 1e-9, "{a:?}");
        assert_eq!(a.parallel.as_ref().map(|p| p.threads), Some(2.0));
        // one thread on average is no parallel share
        let one = |mut r: crate::results::ResultFile| {
            let d = r.cases[1].details.as_mut().unwrap();
            d[crate::results::counts::PARALLEL_KEY] = serde_json::json!(together);
            d[crate::results::counts::THREADS_KEY] = serde_json::json!(1.0);
            r
        };
        let a = attribute_pair(
            ("local", one(side("local", "b1", rates(1.0), 3.0, counts))),
            ("share", one(side("share", "o1", rates(10.0), 24.0, counts))),
        )
        .remove(0);
        assert!((a.predicted.unwrap() - 7.0).abs() < 1e-9, "{a:?}");
        assert_eq!(a.parallel, None);
    }

    #[test]
    fn a_name_s_price_is_never_below_0_nor_an_operation_s_less_its_names() {
        // the near stat slower than the re-stat (noise on a local disk): a
        // name costs nothing and each operation keeps its whole price; a
        // name dearer than a third of the re-stat leaves the stat nothing
        let counts = OpCounts {
            stats: 1000,
            names: 1000,
            ..OpCounts::default()
        };
        let rates = [50_000.0, 1e6, 100_000.0, 80_000.0];
        let file = |label: &str, id: &str, restat: f64, near: f64| {
            let mut r = side_with_lookups(label, id, rates, (restat, 1e6), 2.0, counts);
            add_phase(&mut r.cases[0], "near_restats_per_sec", near);
            r
        };
        let a = &attribute_pair(
            ("local", file("local", "b1", 1e6, 0.9e6)),
            ("share", file("share", "o1", 1e5, 1e6)),
        )[0];
        let ms = |op: &str| {
            let p = a.parts.iter().find(|p| p.operation == op).unwrap();
            (p.base_ms, p.other_ms)
        };
        // base: a name 0, a stat its whole 1 µs; other: a name (10 - 1) / 2
        // = 4.5 µs, a stat 10 - 13.5 µs, so 0
        assert_eq!(ms("names walked").0, 0.0);
        assert!((ms("stats").0 - 1.0).abs() < 1e-9, "{a:?}");
        assert!((ms("names walked").1 - 4.5).abs() < 1e-9, "{a:?}");
        assert_eq!(ms("stats").1, 0.0);
    }

    #[test]
    fn a_cost_not_measured_leaves_no_prediction_and_says_which() {
        let counts = OpCounts {
            creates: 10,
            write_bytes: 10 * 4096 + 1_000_000,
            ..OpCounts::default()
        };
        let base = side("a", "b1", [50_000.0, 1e6, 1e5, 8e4], 3.0, counts);
        let other = side("b", "o1", [50_000.0, 1e6, 1e5, 8e4], 3.0, counts);
        let a = &attribute_pair(("a", base), ("b", other))[0];
        assert_eq!(a.predicted, None);
        assert!(
            a.missing.as_deref().unwrap().contains("bytes written"),
            "{a:?}"
        );
    }

    #[test]
    fn costs_beyond_what_a_number_holds_leave_no_prediction_and_say_so() {
        // 2e-310 and 1e-310 stats a second: a ratio of 0.5, but each stat
        // priced at 5e309 s, which no number holds
        let counts = OpCounts {
            stats: 2000,
            ..OpCounts::default()
        };
        let base = side("a", "b1", [50_000.0, 2e-310, 1e5, 8e4], 3.0, counts);
        let other = side("b", "o1", [5_000.0, 1e-310, 2e4, 8e3], 24.0, counts);
        let a = &attribute_pair(("a", base), ("b", other))[0];
        assert_eq!((a.predicted, a.unexplained), (None, None), "{a:?}");
        assert!(
            a.missing
                .as_deref()
                .unwrap()
                .contains("beyond what a number holds"),
            "{a:?}"
        );
    }

    /// A side of seeded synthetic runs (`runs` × `rounds` × `reps`): io.meta
    /// stats `10 µs × k` each, app.status doing 2 000 of them and 5 ms
    /// more, `extra` times that (a cost no price knows), each with
    /// log-normal noise of 5 % between runs, 3 % between rounds and 1 %
    /// between repetitions, as `compare`'s rate tests use.
    fn stat_side(
        rng: &mut crate::stats::rng::Rng,
        label: &str,
        (runs, rounds, reps): (usize, usize, usize),
        (k, extra): (f64, f64),
    ) -> Environment {
        use crate::compare::tests::run_rounds;
        use crate::stats::levels::tests::synth;
        let noise = (0.05, 0.03, 0.01);
        let rate = synth(rng, 1e5 / k, (runs, rounds, reps), noise);
        let ms = synth(rng, (20.0 * k + 5.0) * extra, (runs, rounds, reps), noise);
        let files = (0..runs)
            .map(|r| {
                let mut f = run_rounds(
                    label,
                    &format!("{label}{r}"),
                    &[
                        ("io.meta[dir=work,files=500]".into(), Up, rate[r].clone()),
                        (
                            "app.status[dir=work,files=2000]".into(),
                            Down,
                            ms[r].clone(),
                        ),
                    ],
                );
                f.cases[0].metrics[0].name = "stats_per_sec".into();
                f.cases[1].metrics[0].name = "ms".into();
                f.cases[1].details = Some(serde_json::json!({
                    "counts": OpCounts { stats: 2000, ..OpCounts::default() }
                }));
                f
            })
            .collect();
        Environment::new(label, files)
    }

    #[test]
    fn the_prediction_s_interval_holds_the_truth_and_tells_a_slower_price_at_envbench_sizes() {
        // the three error rates of the prediction's interval, with stats at
        // the same price (A/A), 1.5x and 3x dearer (true predictions 1.4x
        // and 2.6x: (20 k + 5) / 25): in A/A it leaves out 1 (a slowdown
        // predicted where none is); dearer, it still holds 1 (none
        // predicted where one is) or leaves out the truth; its A/A width;
        // how often the measured ratio is called unexplained, and how often
        // a command 2x slower than its prices say is called explained
        for (runs, rounds, reps) in [(1, 4, 3), (3, 4, 3), (1, 8, 5), (3, 8, 5)] {
            let mut widths = Vec::new();
            let (mut false_calls, mut missed, mut off_truth, mut unexplained) = (0, [0; 2], 0, 0);
            let mut missed_beyond = 0;
            for seed in 0..200 {
                for (j, k) in [1.0, 1.5, 3.0].into_iter().enumerate() {
                    let mut rng = crate::stats::rng::Rng::new(seed);
                    let envs = [
                        stat_side(&mut rng, "a", (runs, rounds, reps), (1.0, 1.0)),
                        stat_side(&mut rng, "b", (runs, rounds, reps), (k, 1.0)),
                    ];
                    let a = &compared(&envs, seed, false).1[0];
                    let (lo, hi) = a.predicted_ci.unwrap();
                    assert!(lo <= a.predicted.unwrap() && a.predicted.unwrap() <= hi);
                    let truth = (20.0 * k + 5.0) / 25.0;
                    off_truth += usize::from(!(lo..=hi).contains(&truth));
                    unexplained += usize::from(a.explained() == Some(false));
                    if j == 0 {
                        // the same prices, the command 2x slower: unexplained
                        let mut rng = crate::stats::rng::Rng::new(seed);
                        let envs = [
                            stat_side(&mut rng, "a", (runs, rounds, reps), (1.0, 1.0)),
                            stat_side(&mut rng, "b", (runs, rounds, reps), (1.0, 2.0)),
                        ];
                        let a = &compared(&envs, seed, false).1[0];
                        missed_beyond += usize::from(a.explained() == Some(true));
                        widths.push((hi / lo).sqrt() - 1.0);
                        false_calls += usize::from(!(lo..=hi).contains(&1.0));
                    } else {
                        missed[j - 1] += usize::from((lo..=hi).contains(&1.0));
                    }
                }
            }
            widths.sort_by(f64::total_cmp);
            let width = widths[widths.len() / 2];
            eprintln!(
                "{runs} run(s) x {rounds} rounds x {reps}: A/A outside 1 {false_calls}/200; \
                 holding 1 at 1.5x {}/200, at 3x {}/200; outside the truth {off_truth}/600; \
                 called unexplained {unexplained}/600, 2x beyond it called explained \
                 {missed_beyond}/200; A/A half-width {:.1} %",
                missed[0],
                missed[1],
                width * 100.0
            );
            assert!(false_calls <= 15, "{runs}x{rounds}: {false_calls} of 200");
            assert!(off_truth <= 45, "{runs}x{rounds}: {off_truth} of 600");
            assert!(unexplained <= 30, "{runs}x{rounds}: {unexplained} of 600");
            assert!(missed[0] <= 10, "{runs}x{rounds}: {missed:?}");
            assert_eq!(missed[1], 0, "{runs}x{rounds}");
            assert!(
                missed_beyond <= 10,
                "{runs}x{rounds}: {missed_beyond} of 200"
            );
            // one run a side carries the assumed spread between runs
            let most = if runs == 1 { 0.30 } else { 0.12 };
            assert!(width < most, "{runs}x{rounds}: A/A half-width {width}");
        }
    }

    /// A side of seeded synthetic runs (`runs` × `rounds` × `reps`) on a
    /// share whose names are dear: io.meta's re-stat walks 3 names and its
    /// near stat 1, a stat beside its names 5 µs and a name `5 µs × k`; a
    /// command makes 2 000 stats a name each, `together` of them on 2
    /// threads alive together (half their time each), and 5 ms more, all
    /// `extra` times that (a cost no price knows). Each metric draws its
    /// own log-normal noise (5 % between runs, 3 % between rounds, 1 %
    /// between repetitions), the two io.meta rates apart, as a noisy host
    /// would move them. Its true slowdown over k = 1 is [`named_truth`].
    fn named_side(
        rng: &mut crate::stats::rng::Rng,
        label: &str,
        (runs, rounds, reps): (usize, usize, usize),
        (k, extra, together, per): (f64, f64, u64, f64),
    ) -> Environment {
        use crate::compare::tests::run_rounds;
        use crate::stats::levels::tests::synth;
        let noise = (0.05, 0.03, 0.01);
        let shape = (runs, rounds, reps);
        let restat = synth(rng, 1e6 / (5.0 + 15.0 * k), shape, noise);
        let near = synth(rng, 1e6 / (5.0 + 5.0 * k), shape, noise);
        let ms = synth(rng, named_ms(k, together, per) * extra, shape, noise);
        let names = |stats: u64| (stats as f64 * per).round() as u64;
        let counts = OpCounts {
            stats: 2000,
            names: names(2000),
            ..OpCounts::default()
        };
        let shared = OpCounts {
            stats: together,
            names: names(together),
            ..OpCounts::default()
        };
        let files = (0..runs)
            .map(|r| {
                let mut f = run_rounds(
                    label,
                    &format!("{label}{r}"),
                    &[
                        ("io.meta[dir=work,files=500]".into(), Up, restat[r].clone()),
                        (
                            "app.status[dir=work,files=2000]".into(),
                            Down,
                            ms[r].clone(),
                        ),
                    ],
                );
                f.cases[0].metrics[0].name = "restats_per_sec".into();
                let mut second = f.cases[0].metrics[0].clone();
                second.name = "near_restats_per_sec".into();
                second.samples = near[r].concat();
                f.cases[0].metrics.push(second);
                f.cases[1].metrics[0].name = "ms".into();
                let mut details = serde_json::json!({ "counts": counts });
                if together > 0 {
                    details[crate::results::counts::PARALLEL_KEY] = serde_json::json!(shared);
                    details[crate::results::counts::THREADS_KEY] = serde_json::json!(2.0);
                }
                f.cases[1].details = Some(details);
                f
            })
            .collect();
        Environment::new(label, files)
    }

    /// [`named_side`]'s command time, ms: its stats' effective count (those
    /// on threads together at half), each a stat and `per` names.
    fn named_ms(k: f64, together: u64, per: f64) -> f64 {
        let effective = (2000 - together) as f64 + together as f64 / 2.0;
        effective * (5.0 + 5.0 * k * per) / 1e3 + 5.0
    }

    /// The true slowdown of [`named_side`] at `k` over `k = 1`.
    fn named_truth(k: f64, together: u64, per: f64) -> f64 {
        named_ms(k, together, per) / named_ms(1.0, together, per)
    }

    #[test]
    fn names_priced_apart_hold_the_truth_at_envbench_sizes() {
        names_priced_apart_hold_the_truth(0);
    }

    #[test]
    fn names_priced_apart_with_threads_sharing_hold_the_truth_at_envbench_sizes() {
        names_priced_apart_hold_the_truth(1000);
    }

    /// The error rates of [`named_side`]'s prediction with `together` of
    /// its 2 000 stats on two threads at once (two tests, one per value,
    /// so that the suite runs them side by side: as one they took the lib
    /// tests' longest minute).
    fn names_priced_apart_hold_the_truth(together: u64) {
        // the three error rates of a prediction that prices each name apart
        // from its stat (a name's price the re-stat less the near stat over
        // 2, its interval the two at the same end of theirs), with names
        // as dear (A/A), 1.5x and 3x dearer (true slowdowns 1.2x and 1.8x;
        // 1.33x and 2.33x at io.meta's whole re-stat), the stats one at a
        // time and half of them on two threads together; as for the
        // prediction's own interval: A/A leaving out 1, 1.5x and 3x still
        // holding it, the truth left out, the measured ratio called
        // unexplained, a command 2x beyond its prices called explained,
        // and the A/A half-width
        for (runs, rounds, reps) in [(1, 4, 3), (3, 4, 3), (1, 8, 5), (3, 8, 5)] {
            let mut widths = Vec::new();
            let (mut false_calls, mut missed, mut off_truth, mut unexplained) = (0, [0; 2], 0, 0);
            let mut missed_beyond = 0;
            for seed in 0..200 {
                let pair = |k: f64, extra: f64| {
                    let mut rng = crate::stats::rng::Rng::new(seed);
                    let shape = (runs, rounds, reps);
                    let envs = [
                        named_side(&mut rng, "a", shape, (1.0, 1.0, together, 1.0)),
                        named_side(&mut rng, "b", shape, (k, extra, together, 1.0)),
                    ];
                    compared(&envs, seed, false).1.remove(0)
                };
                for (j, k) in [1.0, 1.5, 3.0].into_iter().enumerate() {
                    let a = pair(k, 1.0);
                    assert_eq!(
                        a.parts.iter().map(|p| p.operation).collect::<Vec<_>>(),
                        ["stats", "names walked"],
                        "{a:?}"
                    );
                    assert_eq!(a.parallel.is_some(), together > 0);
                    let (lo, hi) = a.predicted_ci.unwrap();
                    assert!(lo <= a.predicted.unwrap() && a.predicted.unwrap() <= hi);
                    off_truth += usize::from(!(lo..=hi).contains(&named_truth(k, together, 1.0)));
                    unexplained += usize::from(a.explained() == Some(false));
                    if j == 0 {
                        widths.push((hi / lo).sqrt() - 1.0);
                        false_calls += usize::from(!(lo..=hi).contains(&1.0));
                        missed_beyond += usize::from(pair(1.0, 2.0).explained() == Some(true));
                    } else {
                        missed[j - 1] += usize::from((lo..=hi).contains(&1.0));
                    }
                }
            }
            widths.sort_by(f64::total_cmp);
            let width = widths[widths.len() / 2];
            eprintln!(
                "{runs} run(s) x {rounds} rounds x {reps}, {together} of 2 000 together: \
                 A/A outside 1 {false_calls}/200; holding 1 at 1.5x {}/200, at 3x {}/200; \
                 outside the truth {off_truth}/600; called unexplained {unexplained}/600, \
                 2x beyond it called explained {missed_beyond}/200; A/A half-width {:.1} %",
                missed[0],
                missed[1],
                width * 100.0
            );
            let at = format!("{runs}x{rounds}, {together} together");
            assert!(false_calls <= 20, "{at}: {false_calls} of 200");
            assert!(off_truth <= 50, "{at}: {off_truth} of 600");
            assert!(unexplained <= 30, "{at}: {unexplained} of 600");
            // 1.2x is within one run's assumed spread; at three runs
            // it is mostly seen, and 1.8x always
            assert!(runs == 1 || missed[0] <= 30, "{at}: {missed:?}");
            assert_eq!(missed[1], 0, "{at}");
            assert!(missed_beyond <= 10, "{at}: {missed_beyond} of 200");
            let most = if runs == 1 { 0.30 } else { 0.12 };
            assert!(width < most, "{at}: A/A half-width {width}");
        }
    }

    #[test]
    fn names_per_stat_below_one_or_beyond_three_hold_the_truth_at_envbench_sizes() {
        // a command whose stats walk other than the 1 to 3 names io.meta's
        // two stats walk: each of its stats costs the re-stat times
        // (per - 1) / 2 plus the near stat times (3 - per) / 2, so at 0.5
        // names a stat (-0.25 and 1.25) and at 4.75, as make walked here
        // (1.875 and -0.875), the two pull the prediction opposite ways;
        // names as dear (A/A), 1.5x and 3x dearer (true slowdowns 1.13x and
        // 1.5x at 0.5, 1.38x and 2.52x at 4.75, the 5 ms rest included): the truth left out, A/A leaving out
        // 1, 3x dearer still holding 1, and the A/A half-width. Measured
        // when written, at 3 runs a side (4 x 3 and 8 x 5): with both
        // metrics at the same end (as built before), A/A left out 1 in
        // 38-41 of 200 and the truth in 94-121 of 600 (half-widths 8.6-11 %);
        // with the metrics that add and those that subtract each moving
        // together and the two groups as independent ([`shifts`]), 5-9 of
        // 200 and 14-23 of 600 (half-widths 15-17 %), 3x dearer holding 1
        // in 18-24 of 200 at 0.5 and never at 4.75. One run a side: the
        // truth never left out, half-widths 42-48 %.
        let mut failed = Vec::new();
        for (runs, rounds, reps) in [(1, 4, 3), (3, 4, 3), (3, 8, 5)] {
            for per in [0.5, 4.75] {
                let (mut false_calls, mut missed, mut off_truth) = (0, 0, 0);
                let mut widths = Vec::new();
                for seed in 0..200 {
                    for k in [1.0, 1.5, 3.0] {
                        let mut rng = crate::stats::rng::Rng::new(seed);
                        let shape = (runs, rounds, reps);
                        let envs = [
                            named_side(&mut rng, "a", shape, (1.0, 1.0, 0, per)),
                            named_side(&mut rng, "b", shape, (k, 1.0, 0, per)),
                        ];
                        let a = compared(&envs, seed, false).1.remove(0);
                        let (lo, hi) = a.predicted_ci.unwrap();
                        let p = a.predicted.unwrap();
                        assert!(lo > 0.0 && lo <= p && p <= hi, "{lo} {p} {hi}");
                        off_truth += usize::from(!(lo..=hi).contains(&named_truth(k, 0, per)));
                        if k == 1.0 {
                            widths.push((hi / lo).sqrt() - 1.0);
                            false_calls += usize::from(!(lo..=hi).contains(&1.0));
                        } else if k == 3.0 {
                            missed += usize::from((lo..=hi).contains(&1.0));
                        }
                    }
                }
                widths.sort_by(f64::total_cmp);
                let width = widths[widths.len() / 2];
                eprintln!(
                    "{runs} run(s) x {rounds} rounds x {reps}, {per} names a stat: A/A outside 1 \
                     {false_calls}/200; holding 1 at 3x {missed}/200; outside the truth \
                     {off_truth}/600; A/A half-width {:.1} %",
                    width * 100.0
                );
                // one run a side carries the assumed spread between runs:
                // 1.5x (0.5 a stat) and 2.52x (4.75) are inside it there
                let most_missed = match (runs, per < 1.0) {
                    (1, _) => 200,
                    (_, true) => 30,
                    (_, false) => 0,
                };
                let widest = if runs == 1 { 0.6 } else { 0.25 };
                if false_calls > 15 || off_truth > 45 || missed > most_missed || width > widest {
                    failed.push(format!(
                        "{runs}x{rounds}, {per} a stat: {false_calls} {off_truth} {missed}"
                    ));
                }
            }
        }
        assert!(failed.is_empty(), "{failed:#?}");
    }

    /// The attributions of `base` against `other`, each a label and a run.
    fn attribute_pair(
        base: (&str, crate::results::ResultFile),
        other: (&str, crate::results::ResultFile),
    ) -> Vec<Attribution> {
        attribute_pair_as(base, other, false)
    }

    /// [`attribute_pair`], the sides directories (`by_dir`) or not.
    fn attribute_pair_as(
        base: (&str, crate::results::ResultFile),
        other: (&str, crate::results::ResultFile),
        by_dir: bool,
    ) -> Vec<Attribution> {
        let envs = [
            Environment::new(base.0, vec![base.1]),
            Environment::new(other.0, vec![other.1]),
        ];
        compared(&envs, 1, by_dir).1
    }

    /// `envs` compared with `seed`, and their attributions (`by_dir`: the
    /// environments are directories).
    fn compared(
        envs: &[Environment],
        seed: u64,
        by_dir: bool,
    ) -> (crate::compare::Comparison, Vec<Attribution>) {
        let opts = Options {
            threshold: DEFAULT_THRESHOLD,
            seed,
            exclude_suspect: false,
            prices: crate::bench::prices(),
        };
        let c = compare(envs, &opts).unwrap();
        let a = attribute(envs, &c.metrics, crate::bench::prices(), by_dir);
        (c, a)
    }

    /// The attribution of app.db between two sides alike: io.random's
    /// `random` (fsyncs/s, MiB/s read and written), io.seq at 1 000 MB/s,
    /// app.db at 12 ms with `counts`.
    fn alike(random: [f64; 3], counts: OpCounts) -> Attribution {
        let side = |l: &str, id: &str| db_side(l, id, random, [1000.0, 1000.0], 12.0, counts);
        attribute_pair(("a", side("a", "b1")), ("b", side("b", "o1"))).remove(0)
    }

    /// A run of io.random and io.seq on `work` and app.db at `db_ms`:
    /// io.random's fsyncs/s and MiB/s read and written, io.seq's one-thread
    /// MB/s read and written.
    fn db_side(
        label: &str,
        id: &str,
        random: [f64; 3],
        seq: [f64; 2],
        db_ms: f64,
        counts: OpCounts,
    ) -> crate::results::ResultFile {
        let mut r = run(
            label,
            id,
            &[
                (
                    "io.random[block=16KiB,dir=work,duration_ms=200,total_size=64MiB]",
                    "fsyncs_per_sec",
                    Up,
                    rep(random[0]),
                ),
                (
                    "io.seq[dir=work,file_size=16MiB,record=1MiB,threads=1]",
                    "read",
                    Up,
                    rep(seq[0]),
                ),
                ("app.db[dir=work,transactions=20]", "ms", Down, rep(db_ms)),
            ],
        );
        let also = |case: &mut crate::results::CaseResult, name: &str, v: f64| {
            let mut extra = case.metrics[0].clone();
            extra.name = name.into();
            let first = extra.samples[0];
            for s in extra.samples.iter_mut() {
                *s *= v / first;
            }
            case.metrics.push(extra);
        };
        also(&mut r.cases[0], "read_throughput", random[1]);
        also(&mut r.cases[0], "written_throughput", random[2]);
        also(&mut r.cases[1], "write", seq[1]);
        r.cases[2].details = Some(serde_json::json!({ "counts": counts }));
        r
    }

    #[test]
    fn syncs_are_priced_from_io_random_less_its_reads_and_writes_worked_by_hand() {
        // baseline: 1 000 fsyncs/s with 10 MiB/s read and written at
        // 1 000 MB/s: 1 - 2 x 10.49/1000 = 0.979 of each second is fsyncs,
        // 0.979 ms each; other: 100/s with 1 MiB/s each way, 9.979 ms each.
        // 10 syncs: 9.79 ms of a 12 ms baseline (2.21 ms the rest), 99.79 ms
        // in the other: (99.79 + 2.21) / 12 = 8.5x predicted
        let counts = OpCounts {
            syncs: 10,
            ..OpCounts::default()
        };
        let base = db_side(
            "local",
            "b1",
            [1000.0, 10.0, 10.0],
            [1000.0, 1000.0],
            12.0,
            counts,
        );
        let other = db_side(
            "share",
            "o1",
            [100.0, 1.0, 1.0],
            [1000.0, 1000.0],
            102.0,
            counts,
        );
        let a = &attribute_pair(("local", base), ("share", other))[0];
        assert_eq!(a.bench, "app.db");
        assert_eq!(a.parts.len(), 1, "{a:?}");
        let p = &a.parts[0];
        assert_eq!((p.operation, p.count), ("syncs", 10));
        assert!((p.base_ms - 9.790).abs() < 0.02, "{a:?}");
        assert!((p.other_ms - 99.79).abs() < 0.2, "{a:?}");
        assert!((a.rest_base_ms - 2.21).abs() < 0.02, "{a:?}");
        assert!((a.predicted.unwrap() - 8.5).abs() < 0.03, "{a:?}");
        assert!(
            p.priced_by.starts_with("io.random[") && p.priced_by.contains("io.seq["),
            "{p:?}"
        );
    }

    #[test]
    fn syncs_are_not_priced_where_io_random_s_time_is_its_reads_and_writes() {
        // 950 MiB/s each way at 1 000 MB/s: nothing left for the fsyncs
        let counts = OpCounts {
            syncs: 10,
            ..OpCounts::default()
        };
        let a = &alike([1000.0, 950.0, 950.0], counts);
        assert_eq!(a.predicted, None);
        assert!(a.missing.as_deref().unwrap().contains("syncs"), "{a:?}");
    }

    #[test]
    fn a_database_s_calls_are_priced_at_the_null_system_call_worked_by_hand() {
        // 1 000 calls (400 reads, 500 writes, 100 locks) at 100 ns: 0.1 ms
        // of a 1.1 ms baseline (1 ms the rest); at 10 us: 10 ms + 1 ms
        let counts = OpCounts {
            preads: 400,
            pwrites: 500,
            calls: 100,
            ..OpCounts::default()
        };
        let side = |label: &str, id: &str, ns: f64, ms: f64| {
            let mut r = run(
                label,
                id,
                &[
                    ("os.syscall[call=getppid]", "latency", Down, rep(ns)),
                    ("os.syscall[call=mix]", "latency", Down, rep(ns * 50.0)),
                    ("app.db[dir=work,transactions=20]", "ms", Down, rep(ms)),
                ],
            );
            r.cases[2].details = Some(serde_json::json!({ "counts": counts }));
            r
        };
        let a = &attribute_pair(
            ("host", side("host", "b1", 100.0, 1.1)),
            ("sandbox", side("sandbox", "o1", 10_000.0, 11.0)),
        )[0];
        assert_eq!(a.parts.len(), 1, "{a:?}");
        let p = &a.parts[0];
        assert_eq!((p.operation, p.count), ("file system calls", 1000));
        assert_eq!(p.priced_by, "os.syscall[call=getppid] latency");
        assert!(
            (p.base_ms - 0.1).abs() < 0.001 && (p.other_ms - 10.0).abs() < 0.05,
            "{a:?}"
        );
        assert!((a.predicted.unwrap() - 10.0).abs() < 0.05, "{a:?}");
    }

    #[test]
    fn a_compiler_s_programs_are_priced_at_os_spawn_worked_by_hand() {
        // 50 programs at 1 000 spawns/s: 50 ms of a 250 ms build (200 ms
        // the rest); at 100 spawns/s, 500 ms, and cpu.int twice as slow
        // doubles the rest: (500 + 400) / 250 = 3.6
        let counts = OpCounts {
            spawns: 50,
            mkdirs: 1,
            ..OpCounts::default()
        };
        let side = |label: &str, id: &str, per_sec: f64, loops: f64, ms: f64| {
            let mut r = run(
                label,
                id,
                &[
                    (
                        "os.spawn[method=fork_exec]",
                        "spawns_per_sec",
                        Up,
                        rep(per_sec),
                    ),
                    (
                        "os.spawn[method=posix_spawn]",
                        "spawns_per_sec",
                        Up,
                        rep(per_sec * 9.0),
                    ),
                    ("cpu.int", "loops_per_sec", Up, rep(loops)),
                    ("app.cc[dir=work,sources=16]", "ms", Down, rep(ms)),
                ],
            );
            r.cases[3].details = Some(serde_json::json!({ "counts": counts }));
            r
        };
        let a = &attribute_pair(
            ("host", side("host", "b1", 1000.0, 2e8, 250.0)),
            ("emulated", side("emulated", "o1", 100.0, 1e8, 900.0)),
        )[0];
        assert_eq!(a.parts.len(), 1, "{a:?}");
        let p = &a.parts[0];
        assert_eq!((p.operation, p.count), ("programs started", 50));
        assert_eq!(p.priced_by, "os.spawn[method=fork_exec] spawns_per_sec");
        assert!(
            (p.base_ms - 50.0).abs() < 0.1 && (p.other_ms - 500.0).abs() < 1.0,
            "{a:?}"
        );
        assert!((a.rest_base_ms - 200.0).abs() < 0.5, "{a:?}");
        assert!((a.rest_scale - 2.0).abs() < 0.01, "{a:?}");
        assert!((a.predicted.unwrap() - 3.6).abs() < 0.02, "{a:?}");
        // without os.spawn the programs stay in the rest: no part, a prediction
        let bare = |label: &str, id: &str, ms: f64| {
            let mut r = run(
                label,
                id,
                &[("app.cc[dir=work,sources=16]", "ms", Down, rep(ms))],
            );
            r.cases[0].details = Some(serde_json::json!({ "counts": counts }));
            r
        };
        let a = &attribute_pair(
            ("host", bare("host", "b2", 250.0)),
            ("other", bare("other", "o2", 900.0)),
        )[0];
        assert!(a.parts.is_empty() && a.missing.is_none(), "{a:?}");
        assert!((a.predicted.unwrap() - 1.0).abs() < 1e-9, "{a:?}");
    }

    #[test]
    fn a_command_not_counted_is_attributed_with_why_and_no_prediction() {
        let side = |label: &str, id: &str, ms: f64, details: serde_json::Value| {
            let mut r = run(
                label,
                id,
                &[("cmd.run[dir=work,name=status]", "ms", Down, rep(ms))],
            );
            r.cases[0].details = Some(details);
            r
        };
        let why = serde_json::json!({ crate::results::counts::NOT_COUNTED_KEY: "no ptrace here" });
        let a = &attribute_pair(
            ("host", side("host", "b1", 100.0, why.clone())),
            ("gvisor", side("gvisor", "o1", 3000.0, why)),
        );
        assert_eq!(a.len(), 1, "{a:?}");
        let a = &a[0];
        assert_eq!(
            a.missing.as_deref(),
            Some("its operations were not counted in host: no ptrace here")
        );
        assert!(a.predicted.is_none() && a.parts.is_empty(), "{a:?}");
        assert!((a.measured - 30.0).abs() < 1e-6, "{a:?}");
        // details that say nothing of counting: no attribution at all
        let a = attribute_pair(
            ("host", side("host", "b2", 100.0, serde_json::json!({}))),
            (
                "gvisor",
                side("gvisor", "o2", 3000.0, serde_json::json!({})),
            ),
        );
        assert!(a.is_empty(), "{a:?}");
    }

    #[test]
    fn without_os_syscall_a_database_s_calls_stay_in_the_rest() {
        let counts = OpCounts {
            preads: 400,
            syncs: 10,
            ..OpCounts::default()
        };
        let a = &alike([1000.0, 10.0, 10.0], counts);
        assert!(a.missing.is_none() && a.predicted.is_some(), "{a:?}");
        assert_eq!(a.parts.len(), 1, "{a:?}");
        assert_eq!(a.parts[0].operation, "syncs");
    }
}
